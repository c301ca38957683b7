#!/usr/bin/python3
"""Cross-check of PetNN against PyTorch in double precision (run with /usr/bin/python3: torch, h5py, numpy).

    /usr/bin/python3 tests/torch_crosscheck.py <build>/examples/nnrun [<build>/tests/crosscheck] [-v] [--keep]
                                               [--only case1,case2,...] [--rtol 1e-10]

Layer cases: PyTorch builds a small model around the layer type under test with deterministic
random weights (torch.manual_seed), writes its state_dict and a data set with h5py (float64), and
PetNN runs the same network from that checkpoint (`nnrun -mode grad`, or the helper program
tests/crosscheck when evaluation mode or the buffers after the pass are needed). The output, the
loss, the input gradient and every parameter gradient ("grad/<tensor>" of the gradient file) must
agree with PyTorch's forward and autograd to max|PetNN - PyTorch| / max|PyTorch| < rtol, quantity by
quantity.

Optimizer cases: `nnrun -mode train` makes 5 full-batch steps (one per epoch, no shuffling) from
the same checkpoint and writes its final checkpoint; PyTorch makes the same 5 steps with
torch.optim.SGD/Adam/AdamW (and StepLR/CosineAnnealingLR stepped once per epoch). Parameters,
optimizer state and step counters must agree.

Prints one stable line per case (no varying numbers; -v adds the relative errors) and exits 1 with
the offending quantity and numbers if anything disagrees. Without torch or h5py it prints
"torch not available: cross-check skipped" and exits 0.
"""

import argparse
import collections
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import h5py
    import numpy as np
    import torch
except ImportError as e:  # the harness's requires: torch normally skips the test before this
    print('torch not available: cross-check skipped')
    sys.stderr.write('(%s)\n' % e)
    sys.exit(0)

TINY = 1e-30
N_SAMPLES = 8


# ----------------------------------------------------------------------------- layers
class Residual(torch.nn.Module):
    """y = x + block(x): PetNN's residual layer; the children carry the inner layers' names"""

    def __init__(self, children):
        super().__init__()
        for name, mod in children:
            self.add_module(name, mod)

    def forward(self, x):
        h = x
        for mod in self.children():
            h = mod(h)
        return x + h


class L:
    """one layer: its PetNN options and its PyTorch module"""

    def __init__(self, name, typ, **kw):
        self.name, self.typ, self.kw = name, typ, kw

    def options(self):
        n, k = self.name, self.kw
        o = ['-%s_type' % n, self.typ]
        if self.typ == 'dense':
            o += ['-%s_units' % n, str(k['units'])]
            if not k.get('bias', True):
                o += ['-%s_bias' % n, '0']
        elif self.typ == 'leaky_relu':
            o += ['-%s_slope' % n, repr(k['slope'])]
        elif self.typ == 'dropout':
            o += ['-%s_rate' % n, repr(k['rate'])]
        elif self.typ == 'batchnorm1d':
            o += ['-%s_momentum' % n, repr(k['momentum']), '-%s_epsilon' % n, repr(k['eps'])]
        elif self.typ == 'residual':
            o += ['-%s_layers' % n, ','.join(c.name for c in k['layers'])]
            for c in k['layers']:
                o += c.options()
        return o

    def module(self, shape):
        """(torch module, output shape) for a per-sample input shape"""
        t, k = self.typ, self.kw
        if t == 'dense':
            assert len(shape) == 1
            return torch.nn.Linear(shape[0], k['units'], bias=k.get('bias', True)), (k['units'],)
        if t == 'flatten':
            return torch.nn.Flatten(), (int(np.prod(shape)),)
        if t == 'relu':
            return torch.nn.ReLU(), shape
        if t == 'leaky_relu':
            return torch.nn.LeakyReLU(k['slope']), shape
        if t == 'tanh':
            return torch.nn.Tanh(), shape
        if t == 'sigmoid':
            return torch.nn.Sigmoid(), shape
        if t == 'gelu':
            return torch.nn.GELU(approximate='none'), shape
        if t == 'dropout':
            return torch.nn.Dropout(k['rate']), shape
        if t == 'batchnorm1d':
            return torch.nn.BatchNorm1d(shape[0], eps=k['eps'], momentum=k['momentum']), shape
        if t == 'residual':
            mods, s = [], shape
            for c in k['layers']:
                m, s = c.module(s)
                mods.append((c.name, m))
            assert s == shape, 'residual block must keep the shape'
            return Residual(mods), shape
        raise ValueError('unknown layer type ' + t)


def build(layers, inshape):
    mods, s = collections.OrderedDict(), tuple(inshape)
    for l in layers:
        mods[l.name], s = l.module(s)
    return torch.nn.Sequential(mods), s


def net_options(layers, loss):
    o = ['-nn_layers', ','.join(l.name for l in layers), '-nn_loss', loss]
    for l in layers:
        o += l.options()
    return o


def randomize(model):
    """non-trivial batch-norm parameters and statistics, so they are really checked"""
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            with torch.no_grad():
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
                m.num_batches_tracked.fill_(7)


def write_checkpoint(model, path):
    """a plain state_dict, as h5py writes it from PyTorch (num_batches_tracked: int64 scalar)"""
    with h5py.File(path, 'w') as f:
        for k, v in model.state_dict().items():
            f.create_dataset(k, data=v.detach().numpy())


def write_data(path, x, y):
    with h5py.File(path, 'w') as f:
        f['x'] = x
        f['y'] = y


def make_data(rng, inshape, outshape, loss, n=N_SAMPLES):
    x = rng.standard_normal((n,) + tuple(inshape))
    if loss == 'mse':
        y = rng.standard_normal((n,) + tuple(outshape))
    else:
        y = rng.integers(0, outshape[0], n).astype(np.int64)
    return x, y


def torch_loss(loss, out, y):
    if loss == 'mse':
        return torch.nn.functional.mse_loss(out, torch.from_numpy(y))
    return torch.nn.functional.cross_entropy(out, torch.from_numpy(y))


# ----------------------------------------------------------------------------- comparison
class CaseFailed(Exception):
    pass


class Checker:
    def __init__(self, case, rtol):
        self.case, self.rtol, self.errs, self.bad = case, rtol, collections.OrderedDict(), []

    def __call__(self, what, petnn, ref):
        a = np.asarray(petnn, dtype=np.float64)
        b = np.asarray(ref, dtype=np.float64)
        if a.shape != b.shape:
            self.bad.append('%s: shape %s from PetNN, %s from PyTorch' % (what, a.shape, b.shape))
            return
        diff = float(np.max(np.abs(a - b))) if a.size else 0.0
        scale = float(np.max(np.abs(b))) if b.size else 0.0
        rel = diff / max(scale, TINY)
        self.errs[what] = rel
        if not rel < self.rtol:  # also catches NaN
            self.bad.append('%s: rel. err. %.3e > %g (max |PetNN - PyTorch| %.3e, max |PyTorch| %.3e)'
                            % (what, rel, self.rtol, diff, scale))

    def fail(self, msg):
        self.bad.append(msg)

    def maxerr(self):
        return max(self.errs.values()) if self.errs else 0.0


def run_petnn(cmd, workdir):
    p = subprocess.run(cmd, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, timeout=120)
    if p.returncode != 0:
        tail = '\n'.join(p.stdout.strip().splitlines()[-15:])
        raise CaseFailed('%s exited with %d:\n    %s\n%s' % (os.path.basename(cmd[0]), p.returncode,
                                                           ' '.join(cmd), tail))
    return p.stdout


def read_h5(path):
    out = {}
    with h5py.File(path, 'r') as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                out[name] = np.array(obj[()])
        f.visititems(visit)
        out['@loss_function'] = f.attrs.get('loss_function')
    return out


# ----------------------------------------------------------------------------- layer cases
def layer_case(ctx, name, layers, inshape, loss, mode='train', buffers=False, mask_from_petnn=False):
    """forward/backward of a network in PyTorch and PetNN from the same checkpoint and data"""
    chk = Checker(name, ctx.rtol)
    d = os.path.join(ctx.work, name.replace(' ', '_').replace('(', '').replace(')', '').replace(',', ''))
    os.makedirs(d, exist_ok=True)
    ctx.seed += 1
    torch.manual_seed(ctx.seed)
    rng = np.random.default_rng(ctx.seed)
    model, outshape = build(layers, inshape)
    randomize(model)
    ckpt, data, gfile, after = (os.path.join(d, f) for f in ('ckpt.h5', 'data.h5', 'grad.h5', 'after.h5'))
    write_checkpoint(model, ckpt)
    x, y = make_data(rng, inshape, outshape, loss)
    write_data(data, x, y)

    common = net_options(layers, loss) + ['-grad_data_file', data, '-load', ckpt, '-grad_output', gfile]
    if mode == 'eval' or buffers:
        if not ctx.helper:
            raise CaseFailed('needs the helper program tests/crosscheck (give its path as the second argument)')
        cmd = [ctx.helper] + common + (['-eval'] if mode == 'eval' else []) + (['-checkpoint_after', after] if buffers else [])
    else:
        cmd = [ctx.nnrun, '-mode', 'grad'] + common
    run_petnn(cmd, d)
    g = read_h5(gfile)

    lf = g['@loss_function']
    lf = lf.decode() if isinstance(lf, bytes) else lf
    if lf != loss:
        chk.fail('gradient file says loss_function %r, expected %r' % (lf, loss))
    chk('input', g['input'], x)
    chk('target', g['target'], y)

    model.train(mode == 'train')
    xt = torch.from_numpy(x).requires_grad_(True)
    if mask_from_petnn:
        # dropout as the last layer, in training mode: PetNN's generator differs from torch's, so
        # read the mask off PetNN's output, check that it is a dropout mask (entries either 0 or
        # x/(1-p)), and apply exactly that mask in PyTorch
        *body, drop = list(model.children())
        p = drop.p
        h = torch.nn.Sequential(*body)(xt)
        hv = h.detach().numpy()
        yp = g['output']
        keep = yp != 0
        frac = keep.mean()
        if not 0.1 < frac < 0.9:
            chk.fail('dropout kept %d of %d entries at rate %g' % (keep.sum(), keep.size, p))
        chk('output (kept entries vs x/(1-p))', yp[keep], hv[keep] / (1 - p))
        out = h * torch.from_numpy(keep.astype(np.float64) / (1 - p))
    else:
        out = model(xt)
    L = torch_loss(loss, out, y)
    L.backward()
    chk('output', g['output'], out.detach().numpy())
    chk('loss', g['loss'], L.item())
    chk('input_grad', g['input_grad'], xt.grad.numpy())
    params = collections.OrderedDict(model.named_parameters())
    grads = sorted(k[len('grad/'):] for k in g if k.startswith('grad/'))
    if grads != sorted(params):
        chk.fail('parameter gradients: PetNN wrote %s, PyTorch has %s' % (grads, sorted(params)))
    for k, prm in params.items():
        if 'grad/' + k in g:
            chk('grad/' + k, g['grad/' + k], prm.grad.numpy())
    if buffers:  # running statistics after one training forward pass
        a = read_h5(after)
        for k, v in model.state_dict().items():
            if k.endswith('num_batches_tracked'):
                if int(np.asarray(a[k]).reshape(-1)[0]) != int(v):
                    chk.fail('%s: %s from PetNN, %d from PyTorch' % (k, a[k], int(v)))
            elif k.endswith('running_mean') or k.endswith('running_var'):
                chk(k, a[k], v.numpy())
    return chk


# ----------------------------------------------------------------------------- optimizer cases
def optimizer_case(ctx, name, opts, make_opt, make_sched=None, epochs=5, n=10):
    """epochs full-batch steps of nnrun -mode train and of torch.optim from the same start"""
    chk = Checker(name, ctx.rtol)
    d = os.path.join(ctx.work, 'opt_' + name.split()[0])
    os.makedirs(d, exist_ok=True)
    ctx.seed += 1
    torch.manual_seed(ctx.seed)
    rng = np.random.default_rng(ctx.seed)
    layers = [L('fc1', 'dense', units=6), L('act1', 'tanh'), L('fc2', 'dense', units=3)]
    model, outshape = build(layers, (4,))
    ckpt, data, out = (os.path.join(d, f) for f in ('ckpt.h5', 'train.h5', 'out.h5'))
    write_checkpoint(model, ckpt)
    x, y = make_data(rng, (4,), outshape, 'cross_entropy', n)
    write_data(data, x, y)
    cmd = [ctx.nnrun, '-mode', 'train', '-test', '0', '-train_data_type', 'hdf5', '-train_data_file', data,
           '-nn_batch_size', str(n), '-nn_epochs', str(epochs), '-nn_shuffle', '0', '-nn_monitor', '0',
           '-load', ckpt, '-nn_checkpoint', out] + net_options(layers, 'cross_entropy') + opts
    run_petnn(cmd, d)
    c = read_h5(out)

    opt = make_opt(model.parameters())
    sched = make_sched(opt) if make_sched else None
    xt = torch.from_numpy(x)
    for _ in range(epochs):
        opt.zero_grad()
        torch_loss('cross_entropy', model(xt), y).backward()
        opt.step()
        if sched:
            sched.step()
    for k, v in model.state_dict().items():
        chk(k, c[k], v.numpy())
    states = 0
    for k, prm in model.named_parameters():
        for s, v in opt.state[prm].items():
            if s == 'step':
                continue
            key = 'optimizer/%s/%s' % (s, k)
            if key not in c:
                chk.fail('%s missing in the checkpoint' % key)
                continue
            chk(key, c[key], v.numpy())
            states += 1
    for key, want in (('optimizer/step', epochs), ('training/epoch', epochs), ('training/step', epochs)):
        if key not in c or int(c[key]) != want:
            chk.fail('%s: %s in the checkpoint, expected %d' % (key, c.get(key), want))
    chk.states = states
    return chk


# ----------------------------------------------------------------------------- the cases
def layer_cases():
    fc = lambda name, u, **kw: L(name, 'dense', units=u, **kw)  # noqa: E731
    res_block = [fc('fc3', 5), L('act3', 'tanh'), fc('fc4', 5)]
    return [
        # name, layers, input shape, loss, extra keyword arguments
        ('dense', [fc('fc1', 3)], (5,), 'mse', {}),
        ('dense without bias', [fc('fc1', 3, bias=False)], (5,), 'mse', {}),
        ('flatten', [L('flat', 'flatten'), fc('fc1', 5)], (2, 3, 4), 'mse', {}),
        ('relu', [fc('fc1', 6), L('act', 'relu')], (5,), 'mse', {}),
        ('leaky_relu', [fc('fc1', 6), L('act', 'leaky_relu', slope=0.2)], (5,), 'mse', {}),
        ('tanh', [fc('fc1', 6), L('act', 'tanh')], (5,), 'mse', {}),
        ('sigmoid', [fc('fc1', 6), L('act', 'sigmoid')], (5,), 'mse', {}),
        ('gelu', [fc('fc1', 6), L('act', 'gelu')], (5,), 'mse', {}),
        ('dropout (rate 0, training)', [fc('fc1', 6), L('drop', 'dropout', rate=0.0), fc('fc2', 3)], (5,), 'mse', {}),
        ('dropout (rate 0.5, training, PetNN mask)', [fc('fc1', 6), L('drop', 'dropout', rate=0.5)], (5,), 'mse',
         {'mask_from_petnn': True}),
        ('dropout (rate 0.5, evaluation)', [fc('fc1', 6), L('drop', 'dropout', rate=0.5), fc('fc2', 3)], (5,), 'mse',
         {'mode': 'eval'}),
        ('batchnorm1d (training)', [L('bn1', 'batchnorm1d', momentum=0.2, eps=1e-3), fc('fc1', 3)], (5,), 'mse',
         {'buffers': True}),
        ('batchnorm1d (evaluation)', [L('bn1', 'batchnorm1d', momentum=0.1, eps=1e-5), fc('fc1', 3)], (5,), 'mse',
         {'mode': 'eval'}),
        ('residual', [fc('fc1', 5), L('res1', 'residual', layers=res_block), fc('fc2', 3)], (4,), 'cross_entropy', {}),
        ('cross_entropy', [fc('fc1', 6), L('act1', 'tanh'), fc('fc2', 4)], (5,), 'cross_entropy', {}),
        ('mse', [fc('fc1', 6), L('act1', 'tanh'), fc('fc2', 4)], (5,), 'mse', {}),
    ]


def optimizer_cases():
    O = torch.optim
    S = torch.optim.lr_scheduler
    return [
        ('sgd (momentum, weight decay)',
         ['-opt_type', 'sgd', '-opt_learning_rate', '0.1', '-opt_momentum', '0.9', '-opt_weight_decay', '0.01'],
         lambda p: O.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01), None),
        ('sgd_nesterov (Nesterov momentum, weight decay, step schedule)',
         ['-opt_type', 'sgd', '-opt_learning_rate', '0.1', '-opt_momentum', '0.9', '-opt_nesterov', '-opt_weight_decay', '0.01',
          '-opt_schedule', 'step', '-opt_step_size', '2', '-opt_gamma', '0.5'],
         lambda p: O.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
         lambda o: S.StepLR(o, step_size=2, gamma=0.5)),
        ('adam (L2 weight decay, step schedule)',
         ['-opt_type', 'adam', '-opt_learning_rate', '0.01', '-opt_weight_decay', '0.01',
          '-opt_schedule', 'step', '-opt_step_size', '1', '-opt_gamma', '0.7'],
         lambda p: O.Adam(p, lr=0.01, weight_decay=0.01),
         lambda o: S.StepLR(o, step_size=1, gamma=0.7)),
        ('adamw (decoupled weight decay, cosine schedule)',
         ['-opt_type', 'adamw', '-opt_learning_rate', '0.01', '-opt_weight_decay', '0.1', '-opt_schedule', 'cosine'],
         lambda p: O.AdamW(p, lr=0.01, weight_decay=0.1),
         lambda o: S.CosineAnnealingLR(o, T_max=5)),
    ]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('nnrun', help='path of examples/nnrun')
    ap.add_argument('helper', nargs='?', help='path of tests/crosscheck (default: next to nnrun in ../tests/)')
    ap.add_argument('--rtol', type=float, default=1e-10)
    ap.add_argument('--only', default='', help='comma-separated case names (first word) to run')
    ap.add_argument('--keep', action='store_true', help='keep the work directory (its path is printed)')
    ap.add_argument('-v', '--verbose', action='store_true', help='print the relative error of every quantity')
    a = ap.parse_args(argv)
    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(1)

    ctx = argparse.Namespace(nnrun=os.path.abspath(a.nnrun), rtol=a.rtol, seed=1000)
    helper = a.helper or os.path.join(os.path.dirname(ctx.nnrun), '..', 'tests', 'crosscheck')
    ctx.helper = os.path.abspath(helper) if os.path.isfile(helper) else None
    if not os.access(ctx.nnrun, os.X_OK):
        print('cannot run %s: build PetNN first' % ctx.nnrun)
        return 1
    only = {s.strip() for s in a.only.split(',') if s.strip()}
    ctx.work = tempfile.mkdtemp(prefix='petnn_crosscheck_')
    tol = '%g' % a.rtol
    failed = []

    def report(name, chk, what):
        if a.verbose:
            for q, e in chk.errs.items():
                print('    %-44s rel. err. %.2e' % (q, e))
        if chk.bad:
            failed.append(name)
            print('%s: DISAGREES with PyTorch:' % name)
            for b in chk.bad:
                print('    ' + b)
        else:
            print('%s: %s agree (rel. err. < %s)%s' % (name, what, tol,
                                                       ' [max %.2e]' % chk.maxerr() if a.verbose else ''))

    try:
        for name, layers, inshape, loss, kw in layer_cases():
            if only and name.split()[0] not in only:
                continue
            try:
                chk = layer_case(ctx, name, layers, inshape, loss, **kw)
            except CaseFailed as e:
                failed.append(name)
                print('%s: FAILED: %s' % (name, e))
                continue
            what = 'output, loss, input gradient, parameter gradients'
            if kw.get('buffers'):
                what += ', running statistics'
            report(name, chk, what)
        for name, opts, make_opt, make_sched in optimizer_cases():
            if only and name.split()[0] not in only:
                continue
            try:
                chk = optimizer_case(ctx, name, opts, make_opt, make_sched)
            except CaseFailed as e:
                failed.append(name)
                print('%s: FAILED: %s' % (name, e))
                continue
            report(name, chk, 'parameters and optimizer state after 5 steps')
    finally:
        if a.keep:
            print('work directory kept: %s' % ctx.work)
        else:
            shutil.rmtree(ctx.work, ignore_errors=True)
    if failed:
        print('PetNN DISAGREES with PyTorch in %d case(s): %s' % (len(failed), ', '.join(failed)))
        return 1
    print('PetNN agrees with PyTorch in every case')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
