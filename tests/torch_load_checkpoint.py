#!/usr/bin/python3
"""PetNN <-> PyTorch checkpoint interchange check (run with /usr/bin/python3: torch, h5py, numpy).

A PetNN checkpoint (NNCheckpointSave, nnrun -nn_checkpoint) holds the network's tensors as
top-level HDF5 datasets named and shaped like PyTorch's state_dict ("fc1.weight" [out,in], ...).
This script builds a torch.nn.Sequential whose modules carry the PetNN layer names, so

    model.load_state_dict({k: torch.from_numpy(f[k][()]) ...}, strict=True)

must succeed, and compares PyTorch's forward and backward with what PetNN wrote.

Layers are given in PetNN's order as name:type[:arg], with PetNN type names:
    dense (arg: out features; default: inferred from <name>.weight), relu, leaky_relu[:slope],
    tanh, sigmoid, gelu, flatten, dropout[:p] (must be inactive: p = 0 or --eval), batchnorm1d

Commands
  make   --layers L --inputs N --checkpoint ckpt.h5 --data in.h5 [--classes K | --mse] [--seed S]
         PyTorch -> PetNN: initialize a torch model, write its state_dict with h5py as a plain
         state_dict (no PetNN metadata) and a data file in.h5 (x [N, inputs], y [N]).
  check  --layers L --checkpoint ckpt.h5 --gradients out.h5 [--rtol 1e-10]
         PetNN -> PyTorch: load the checkpoint with load_state_dict(strict=True), run the model on
         out.h5's "input" and compare "output", "loss", "input_grad" and "grad/<tensor>" (written by
         NNSaveGradients / nnrun -mode grad) with PyTorch's forward and autograd.

Example (both directions in one go):
  /usr/bin/python3 tests/torch_load_checkpoint.py make --layers fc1:dense:5,act:tanh,fc2:dense:3 \\
      --inputs 4 --checkpoint ckpt.h5 --data in.h5
  build/examples/nnrun -mode grad -nn_layers fc1,act,fc2 -fc1_type dense -fc1_units 5 -act_type tanh \\
      -fc2_type dense -fc2_units 3 -nn_loss cross_entropy -grad_data_file in.h5 -load ckpt.h5 \\
      -grad_output out.h5
  /usr/bin/python3 tests/torch_load_checkpoint.py check --layers fc1:dense:5,act:tanh,fc2:dense:3 \\
      --checkpoint ckpt.h5 --gradients out.h5

Exit status 0 when everything agrees; prints one stable line per check.
"""

import argparse
import collections
import sys

import h5py
import numpy as np
import torch


def parse_layers(spec):
    layers = []
    for item in spec.split(','):
        parts = item.strip().split(':')
        if len(parts) < 2:
            raise SystemExit('layer "%s": expected name:type[:arg]' % item)
        layers.append((parts[0], parts[1], parts[2] if len(parts) > 2 else None))
    return layers


def build_model(layers, state=None, inputs=None):
    """torch.nn.Sequential with modules named like the PetNN layers; sizes from state or arguments"""
    mods = collections.OrderedDict()
    width = inputs
    for name, typ, arg in layers:
        if typ == 'dense':
            w = None if state is None else state.get(name + '.weight')
            if w is not None:
                out, inp = w.shape
            else:
                if arg is None or width is None:
                    raise SystemExit('dense layer %s: give its units (%s:dense:<units>) and --inputs' % (name, name))
                out, inp = int(arg), width
            bias = state is None or (name + '.bias') in state
            mods[name] = torch.nn.Linear(inp, out, bias=bias, dtype=torch.float64)
            width = out
        elif typ == 'relu':
            mods[name] = torch.nn.ReLU()
        elif typ == 'leaky_relu':
            mods[name] = torch.nn.LeakyReLU(float(arg) if arg else 0.01)
        elif typ == 'tanh':
            mods[name] = torch.nn.Tanh()
        elif typ == 'sigmoid':
            mods[name] = torch.nn.Sigmoid()
        elif typ == 'gelu':
            mods[name] = torch.nn.GELU()
        elif typ == 'flatten':
            mods[name] = torch.nn.Flatten()
        elif typ == 'dropout':
            mods[name] = torch.nn.Dropout(float(arg) if arg else 0.5)
        elif typ == 'batchnorm1d':
            rm = None if state is None else state.get(name + '.running_mean')
            c = rm.shape[0] if rm is not None else width
            mods[name] = torch.nn.BatchNorm1d(c, dtype=torch.float64)
        else:
            raise SystemExit('layer %s: unknown type %s' % (name, typ))
    return torch.nn.Sequential(mods)


def read_state_dict(path):
    """top-level datasets of a PetNN checkpoint as a state_dict (groups optimizer/, rng/, training/ are not tensors)"""
    state = collections.OrderedDict()
    with h5py.File(path, 'r') as f:
        for k, v in f.items():
            if isinstance(v, h5py.Dataset):
                state[k] = torch.from_numpy(np.array(v[()]))
    return state


def cmd_make(a):
    torch.manual_seed(a.seed)
    layers = parse_layers(a.layers)
    model = build_model(layers, inputs=a.inputs)
    # non-trivial batch-norm statistics so that buffers are really checked
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            with torch.no_grad():
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
                m.num_batches_tracked.fill_(7)
    with h5py.File(a.checkpoint, 'w') as f:
        for k, v in model.state_dict().items():
            f.create_dataset(k, data=v.numpy())  # num_batches_tracked: int64, shape ()
    rng = np.random.default_rng(a.seed)
    x = rng.standard_normal((a.samples, a.inputs))
    out = [m for m in model.modules() if isinstance(m, torch.nn.Linear)][-1].out_features
    with h5py.File(a.data, 'w') as f:
        f['x'] = x
        if a.mse:
            f['y'] = rng.standard_normal((a.samples, out))
        else:
            f['y'] = rng.integers(0, a.classes or out, a.samples).astype(np.int64)
    print('wrote %s (%d tensors) and %s' % (a.checkpoint, len(model.state_dict()), a.data))
    return 0


def close(name, a, b, rtol, atol):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        print('%s: shape %s from PetNN, %s from PyTorch: MISMATCH' % (name, a.shape, b.shape))
        return False
    err = float(np.max(np.abs(a - b))) if a.size else 0.0
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    ok = err <= atol + rtol * scale
    print('%s: %s (max abs difference %.3e)' % (name, 'match' if ok else 'MISMATCH', err))
    return ok


def cmd_check(a):
    layers = parse_layers(a.layers)
    state = read_state_dict(a.checkpoint)
    model = build_model(layers, state=state)
    model.load_state_dict(state, strict=True)  # raises on missing/unexpected keys or wrong shapes
    print('load_state_dict(strict=True): %d tensors' % len(state))
    with h5py.File(a.gradients, 'r') as g:
        x = torch.from_numpy(np.array(g['input'][()])).requires_grad_(True)
        target = np.array(g['target'][()])
        lossname = g.attrs.get('loss_function', 'cross_entropy')
        if isinstance(lossname, bytes):
            lossname = lossname.decode()
        if a.eval:
            model.eval()
        else:
            model.train()
        y = model(x)
        if lossname == 'cross_entropy':
            loss = torch.nn.functional.cross_entropy(y, torch.from_numpy(target).long())
        else:
            loss = torch.nn.functional.mse_loss(y, torch.from_numpy(target).reshape(y.shape))
        loss.backward()
        ok = close('output', g['output'][()], y.detach().numpy(), a.rtol, a.atol)
        ok &= close('loss', g['loss'][()], loss.item(), a.rtol, a.atol)
        ok &= close('input_grad', g['input_grad'][()], x.grad.numpy(), a.rtol, a.atol)
        for k, p in model.named_parameters():
            if 'grad/' + k not in g:
                print('grad/%s: missing in %s' % (k, a.gradients))
                ok = False
                continue
            ok &= close('grad/' + k, g['grad/' + k][()], p.grad.numpy(), a.rtol, a.atol)
    print('PyTorch agrees with PetNN' if ok else 'PyTorch DISAGREES with PetNN')
    return 0 if ok else 1


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest='cmd', required=True)
    m = sub.add_parser('make', help='PyTorch -> PetNN: write a state_dict checkpoint and a data file')
    m.add_argument('--layers', required=True)
    m.add_argument('--inputs', type=int, required=True)
    m.add_argument('--samples', type=int, default=8)
    m.add_argument('--classes', type=int, default=0)
    m.add_argument('--mse', action='store_true')
    m.add_argument('--seed', type=int, default=0)
    m.add_argument('--checkpoint', required=True)
    m.add_argument('--data', required=True)
    c = sub.add_parser('check', help='PetNN -> PyTorch: load a checkpoint and compare with NNSaveGradients output')
    c.add_argument('--layers', required=True)
    c.add_argument('--checkpoint', required=True)
    c.add_argument('--gradients', required=True)
    c.add_argument('--rtol', type=float, default=1e-10)
    c.add_argument('--atol', type=float, default=1e-12)
    c.add_argument('--eval', action='store_true', help='PyTorch evaluation mode (running statistics); default: training mode, '
                   'which is the mode nnrun -mode grad runs in (use dropout rate 0 then)')
    a = p.parse_args(argv)
    torch.set_default_dtype(torch.float64)
    return cmd_make(a) if a.cmd == 'make' else cmd_check(a)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
