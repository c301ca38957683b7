#!/usr/bin/python3
"""PyTorch cross-check of PetNN graph networks (run with /usr/bin/python3: torch, h5py, numpy).

    graph_torch.py NET checkpoint.h5 gradients.h5 [--rtol 1e-10]

NET is one of the graph networks of tests/graph.c and tests/unet.c, written here as torch modules
whose submodules carry the PetNN layer names: "dense" (fan-out, split, add, concat), "unet" (a 2-d
U-Net whose skip connection is a concat) or "mix" (split, add, concat on images). The checkpoint
(NNCheckpointSave) must load with load_state_dict(strict=True); the output, loss, input gradient and
parameter gradients (NNSaveGradients) must agree with PyTorch's forward and autograd in double
precision. Prints one stable line per check; exit status 0 when everything agrees.
"""

import argparse
import sys

import h5py
import numpy as np
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


class Dense(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.d1 = torch.nn.Linear(5, 6)
        self.d2 = torch.nn.Linear(2, 4)
        self.d3 = torch.nn.Linear(5, 4)
        self.out = torch.nn.Linear(10, 3)

    def forward(self, x):
        t1 = torch.tanh(self.d1(x))
        s0, s1 = torch.split(t1, [2, 4], dim=1)
        g = torch.tanh(self.d2(s0) + s1 + self.d3(x))
        return self.out(torch.cat([g, t1], dim=1))


class UNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.e1 = torch.nn.Conv2d(2, 4, 3, padding=1)
        self.e2 = torch.nn.Conv2d(4, 4, 3, padding=1)
        self.d1 = torch.nn.Conv2d(8, 4, 3, padding=1)
        self.out = torch.nn.Conv2d(4, 2, 1)

    def forward(self, x):
        r1 = F.relu(self.e1(x))
        r2 = F.relu(self.e2(F.max_pool2d(r1, 2)))
        up = F.interpolate(r2, scale_factor=2, mode='nearest')
        return self.out(F.relu(self.d1(torch.cat([up, r1], dim=1))))


class Mix(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.e1 = torch.nn.Conv2d(2, 4, 3, padding=1)
        self.c3 = torch.nn.Conv2d(3, 1, 3, padding=1)
        self.out = torch.nn.Conv2d(4, 2, 1)

    def forward(self, x):
        s0, s1 = torch.split(self.e1(x), [1, 3], dim=1)
        r = F.relu(s0 + self.c3(s1))
        return self.out(torch.cat([r, s1], dim=1))


NETS = {'dense': Dense, 'unet': UNet, 'mix': Mix}


def close(name, ref, val, rtol):
    ref = np.asarray(ref, dtype=np.float64)
    val = np.asarray(val, dtype=np.float64).reshape(ref.shape)
    err = float(np.max(np.abs(ref - val))) if ref.size else 0.0
    scale = float(np.max(np.abs(ref))) if ref.size else 0.0
    ok = err <= rtol * max(scale, 1e-300)
    print('%s: %s (relative to the largest entry, <= %g)' % (name, 'match' if ok else 'MISMATCH %.3e' % (err / max(scale, 1e-300)), rtol))
    return ok


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('net', choices=sorted(NETS))
    p.add_argument('checkpoint')
    p.add_argument('gradients')
    p.add_argument('--rtol', type=float, default=1e-10)
    a = p.parse_args(argv)
    model = NETS[a.net]()
    with h5py.File(a.checkpoint, 'r') as f:
        state = {k: torch.from_numpy(np.array(f[k][()])) for k in f.keys() if isinstance(f[k], h5py.Dataset) and '.' in k}
    model.load_state_dict(state, strict=True)
    print('%s: load_state_dict(strict=True): %d tensors' % (a.net, len(state)))
    with h5py.File(a.gradients, 'r') as g:
        x = torch.from_numpy(np.array(g['input'][()])).requires_grad_(True)
        y = model(x)
        target = torch.from_numpy(np.array(g['target'][()])).reshape(y.shape)
        loss = F.mse_loss(y, target)
        loss.backward()
        ok = close('output', g['output'][()], y.detach().numpy(), a.rtol)
        ok &= close('loss', g['loss'][()], loss.item(), a.rtol)
        ok &= close('input_grad', g['input_grad'][()], x.grad.numpy(), a.rtol)
        for k, prm in model.named_parameters():
            ok &= close('grad/' + k, g['grad/' + k][()], prm.grad.numpy(), a.rtol)
    print('PyTorch agrees with PetNN' if ok else 'PyTorch DISAGREES with PetNN')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
