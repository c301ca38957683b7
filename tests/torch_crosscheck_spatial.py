#!/usr/bin/python3
"""Cross-check of PetNN's spatial (DMDA) layers against PyTorch in double precision, on 1 or more ranks.

    /usr/bin/python3 tests/torch_crosscheck_spatial.py <build>/examples/nnrun <build>/tests/crosscheck_spatial
                     [--nsize N] [--mpiexec "mpiexec --oversubscribe"] [--grid2 3x1] [--grid3 1x1x3]
                     [-v] [--keep] [--only prefix1,prefix2,...] [--rtol 1e-10] [--list] [--perturb 1e-8]

Layer cases: PyTorch builds a small network around the spatial layer under test (to_spatial ->
layer(s) -> spatial_flatten, global_avgpool (sequential already) or nothing) with deterministic random
weights (torch.manual_seed), writes its state_dict (conv weights [out, in/groups, kh, kw(, kd)]) and
a data set with h5py (float64), and PetNN runs the same network from that checkpoint with the helper
tests/crosscheck_spatial under `mpiexec -n N`, the samples distributed over a rank grid given to
to_spatial (-sp_da_processors_x/y/z: by default 3x1 / 1x1x3 on 3 ranks, 2x2 / 2x1x2 on 4 ranks, with
uneven ownership ranges). Output, loss, input gradient and every parameter gradient must agree with
PyTorch's forward and autograd to max|PetNN - PyTorch| / max|PyTorch| < rtol, quantity by quantity;
for batch norm in training mode also the running statistics after the passes. The helper's
decomposition report must show the requested rank grid, so a run that silently fell back to one
rank fails. Partial-batch cases run with a batch capacity above the number of samples: the padding
slots must change nothing.

Every case's weights and data come from a seed derived from its name, so a case is the same in
any --only selection. A network that ends on a spatial layer (no spatial_flatten) is trained with
the mean-squared error on the DMDA and its output is compared as (C,H,W) samples.

Training case: `nnrun -mode train` makes 3 full-batch Adam steps of a small CNN (conv, batch norm,
pooling, periodic conv, global average pooling) on the same rank grid; PyTorch makes the same
steps; parameters, running statistics and Adam's state must agree.

Self-test (--perturb EPS): PetNN gets the inputs scaled by 1 + EPS; every selected case must then
disagree (the harness runs this with EPS = 1e-8 on a few cases, proving the comparison can fail).

Prints one stable line per case (no varying numbers; -v adds the relative errors and the
decomposition) and exits 1 with the offending quantity and numbers if anything disagrees. Without
torch or h5py it prints "torch not available: cross-check skipped" and exits 0.
"""

import argparse
import collections
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import zlib

try:
    import h5py
    import numpy as np
    import torch
except ImportError as e:  # the harness's requires: torch normally skips the test before this
    print('torch not available: cross-check skipped')
    sys.stderr.write('(%s)\n' % e)
    sys.exit(0)

TINY = 1e-30
SP = 'sp'  # name of the to_spatial layer of every case: -sp_da_processors_x/y/z set the rank grid


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


class GlobalAvgPool(torch.nn.Module):
    """PetNN's global_avgpool: (C,[D,]H,W) -> (C), the mean over the pixels"""

    def forward(self, x):
        return x.mean(dim=tuple(range(2, x.dim())))


class L:
    """one layer: its PetNN options and its PyTorch module"""

    def __init__(self, name, typ, **kw):
        self.name, self.typ, self.kw = name, typ, kw

    def options(self):
        n, k, t = self.name, self.kw, self.typ
        o = ['-%s_type' % n, t]
        opt = lambda key, val: ['-%s_%s' % (n, key), str(val)]  # noqa: E731
        if t == 'dense':
            o += opt('units', k['units'])
        elif t in ('conv2d', 'conv3d'):
            o += opt('filters', k['filters']) + opt('kernel', k['kernel']) + opt('padding', k.get('padding', 0))
            for key, default in (('stride', 1), ('dilation', 1), ('groups', 1)):
                if k.get(key, default) != default:
                    o += opt(key, k[key])
            if not k.get('bias', True):
                o += opt('bias', 0)
            if k.get('periodic', False):
                o += opt('periodic', 1)
        elif t in ('maxpool2d', 'maxpool3d', 'avgpool2d', 'avgpool3d'):
            o += opt('kernel', k['kernel'])
            if 'stride' in k:
                o += opt('stride', k['stride'])
            if 'padding' in k:
                o += opt('padding', k['padding'])
        elif t == 'upsample':
            o += opt('scale', k['scale'])
        elif t in ('batchnorm2d', 'batchnorm3d'):
            o += opt('momentum', repr(k['momentum'])) + opt('epsilon', repr(k['eps']))
        elif t == 'leaky_relu':
            o += opt('slope', repr(k['slope']))
        elif t == 'residual':
            o += opt('layers', ','.join(c.name for c in k['layers']))
            for c in k['layers']:
                o += c.options()
        return o

    def module(self, shape):
        """(torch module, output shape) for a per-sample input shape"""
        t, k = self.typ, self.kw
        if t == 'to_spatial':
            assert len(shape) in (3, 4)
            return torch.nn.Identity(), shape
        if t == 'spatial_flatten':
            return torch.nn.Flatten(), (int(np.prod(shape)),)
        if t == 'dense':
            assert len(shape) == 1
            return torch.nn.Linear(shape[0], k['units']), (k['units'],)
        if t in ('conv2d', 'conv3d'):
            cls = torch.nn.Conv2d if t == 'conv2d' else torch.nn.Conv3d
            m = cls(shape[0], k['filters'], k['kernel'], stride=k.get('stride', 1), padding=k.get('padding', 0),
                    dilation=k.get('dilation', 1), groups=k.get('groups', 1), bias=k.get('bias', True),
                    padding_mode='circular' if k.get('periodic', False) else 'zeros')
        elif t in ('maxpool2d', 'maxpool3d', 'avgpool2d', 'avgpool3d'):
            cls = {'maxpool2d': torch.nn.MaxPool2d, 'maxpool3d': torch.nn.MaxPool3d,
                   'avgpool2d': torch.nn.AvgPool2d, 'avgpool3d': torch.nn.AvgPool3d}[t]
            m = cls(k['kernel'], stride=k.get('stride', k['kernel']), padding=k.get('padding', 0))
        elif t == 'global_avgpool':
            m = GlobalAvgPool()
        elif t == 'upsample':
            m = torch.nn.Upsample(scale_factor=k['scale'], mode='nearest')
        elif t in ('batchnorm2d', 'batchnorm3d'):
            cls = torch.nn.BatchNorm2d if t == 'batchnorm2d' else torch.nn.BatchNorm3d
            return cls(shape[0], eps=k['eps'], momentum=k['momentum']), shape
        elif t == 'relu':
            return torch.nn.ReLU(), shape
        elif t == 'leaky_relu':
            return torch.nn.LeakyReLU(k['slope']), shape
        elif t == 'tanh':
            return torch.nn.Tanh(), shape
        elif t == 'sigmoid':
            return torch.nn.Sigmoid(), shape
        elif t == 'gelu':
            return torch.nn.GELU(approximate='none'), shape
        elif t == 'residual':
            mods, s = [], shape
            for c in k['layers']:
                mm, s = c.module(s)
                mods.append((c.name, mm))
            assert s == shape, 'residual block must keep the shape'
            return Residual(mods), shape
        else:
            raise ValueError('unknown layer type ' + t)
        with torch.no_grad():  # stateless modules: the output shape from a dummy sample
            out = m(torch.zeros((1,) + tuple(shape)))
        return m, tuple(out.shape[1:])


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
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
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


def make_data(rng, inshape, outshape, loss, n):
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
        self.case, self.rtol, self.errs, self.bad, self.notes = case, rtol, collections.OrderedDict(), [], []

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


def read_h5(path):
    out = {}
    with h5py.File(path, 'r') as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                out[name] = np.array(obj[()])
        f.visititems(visit)
        out['@loss_function'] = f.attrs.get('loss_function')
    return out


def case_seed(name):
    """the same weights and data for a case whichever cases run with it"""
    return zlib.crc32(name.encode())


def grid_options(ctx, ndim):
    """to_spatial's rank grid for a (C,H,W) (ndim 3) or (C,D,H,W) (ndim 4) sample"""
    g = ctx.grid2 if ndim == 3 else ctx.grid3
    o = []
    for axis, r in zip('xyz', g):
        o += ['-%s_da_processors_%s' % (SP, axis), str(r)]
    return o


def run_petnn(ctx, cmd, workdir):
    """cmd under mpiexec -n nsize (plain on one rank)"""
    full = (shlex.split(ctx.mpiexec) + ['-n', str(ctx.nsize)] if ctx.nsize > 1 else []) + cmd
    env = dict(os.environ)
    if ctx.nsize > 1:
        env['OPENBLAS_NUM_THREADS'] = '1'
    p = subprocess.run(full, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                       universal_newlines=True, timeout=300)
    if p.returncode != 0:
        lines = p.stdout.strip().splitlines()
        err = []  # PETSc's message without the option table and the MPI abort notice
        for line in lines:
            if 'Option Table entries' in line or 'petsc.org/release/faq' in line:
                break
            if 'PETSC ERROR' in line and not any(w in line for w in ('Option left', 'option(s) set', '-----')):
                err.append(line)
        tail = '\n'.join(err[:12] if err else lines[-20:])
        raise CaseFailed('%s exited with %d:\n    %s\n%s' % (os.path.basename(cmd[0]), p.returncode,
                                                           ' '.join(shlex.quote(c) for c in full), tail))
    leaks = [l for l in p.stdout.splitlines() if 'Total space allocated' in l or re.match(r'\[\s*\d+\]\s*\d+ bytes ', l)]
    if leaks:  # -malloc_dump (set by the test harness) reports memory not freed
        raise CaseFailed('%s leaks memory (-malloc_dump):\n%s' % (os.path.basename(cmd[0]), '\n'.join(leaks[:10])))
    return p.stdout


def check_decomposition(ctx, chk, path, ndim):
    """the to_spatial layer's DMDA has the requested rank grid; returns True if its split is uneven"""
    want = ctx.grid2 if ndim == 3 else ctx.grid3
    rows = {}
    with open(path) as f:
        for line in f:
            w = line.split()
            rows[w[0]] = w
    for name, w in rows.items():
        chk.notes.append('%s: grid %sx%sx%s over ranks %sx%sx%s, ranges %s' % (name, w[2], w[3], w[4], w[6], w[7], w[8],
                                                                             ' '.join(w[9:])))
    if SP not in rows:
        chk.fail('no DMDA decomposition reported for layer %s' % SP)
        return False
    w = rows[SP]
    got = tuple(int(v) for v in w[6:6 + len(want)])
    if got != tuple(want):
        chk.fail('layer %s is distributed over a %s rank grid, expected %s' % (
            SP, 'x'.join(map(str, got)), 'x'.join(map(str, want))))
    uneven = False
    for part in w[9:]:
        sizes = [int(v) for v in part.split(':')[1].split(',')]
        uneven |= len(set(sizes)) > 1
    return uneven


# ----------------------------------------------------------------------------- layer cases
def layer_case(ctx, name, layers, inshape, loss='mse', mode='train', passes=1, capacity=0, n=4):
    """forward/backward of a network in PyTorch and PetNN (on ctx.nsize ranks) from the same checkpoint"""
    chk = Checker(name, ctx.rtol)
    d = os.path.join(ctx.work, ''.join(c if c.isalnum() else '_' for c in name))
    os.makedirs(d, exist_ok=True)
    seed = case_seed(name)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    layers = [L(SP, 'to_spatial')] + layers
    model, outshape = build(layers, inshape)
    randomize(model)
    ckpt, data, gfile, after, dec = (os.path.join(d, f) for f in ('ckpt.h5', 'data.h5', 'grad.h5', 'after.h5', 'dec.txt'))
    write_checkpoint(model, ckpt)
    x, y = make_data(rng, inshape, outshape, loss, n)
    xp = x * (1 + ctx.perturb)  # what PetNN gets (x itself unless --perturb)
    write_data(data, xp, y)
    buffers = any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) for m in model.modules())

    cmd = [ctx.helper] + net_options(layers, loss) + grid_options(ctx, len(inshape)) + [
        '-grad_data_file', data, '-load', ckpt, '-grad_output', gfile, '-decomposition', dec,
        '-passes', str(passes)]
    if mode == 'eval':
        cmd += ['-eval']
    if capacity:
        cmd += ['-batch_capacity', str(capacity)]
    if buffers:
        cmd += ['-checkpoint_after', after]
    run_petnn(ctx, cmd, d)
    chk.uneven = check_decomposition(ctx, chk, dec, len(inshape))
    chk.buffers = buffers
    g = read_h5(gfile)

    lf = g['@loss_function']
    lf = lf.decode() if isinstance(lf, bytes) else lf
    if lf != loss:
        chk.fail('gradient file says loss_function %r, expected %r' % (lf, loss))
    chk('input', g['input'], xp)
    chk('target', g['target'], y)

    model.train(mode == 'train')
    xt = torch.from_numpy(x).requires_grad_(True)
    for p in range(passes):
        if xt.grad is not None:
            xt.grad = None
        model.zero_grad()
        out = model(xt)
        L_ = torch_loss(loss, out, y)
        L_.backward()
    chk('output', g['output'], out.detach().numpy())
    chk('loss', g['loss'], L_.item())
    chk('input_grad', g['input_grad'], xt.grad.numpy())
    params = collections.OrderedDict(model.named_parameters())
    grads = sorted(k[len('grad/'):] for k in g if k.startswith('grad/'))
    if grads != sorted(params):
        chk.fail('parameter gradients: PetNN wrote %s, PyTorch has %s' % (grads, sorted(params)))
    for k, prm in params.items():
        if 'grad/' + k in g:
            chk('grad/' + k, g['grad/' + k], prm.grad.numpy())
    if buffers:  # running statistics after the passes (unchanged in evaluation mode)
        a = read_h5(after)
        for k, v in model.state_dict().items():
            if k.endswith('num_batches_tracked'):
                if int(np.asarray(a[k]).reshape(-1)[0]) != int(v):
                    chk.fail('%s: %s from PetNN, %d from PyTorch' % (k, a[k], int(v)))
            elif k.endswith('running_mean') or k.endswith('running_var'):
                chk(k, a[k], v.numpy())
    return chk


# ----------------------------------------------------------------------------- training case
def train_case(ctx, name, layers, inshape, steps=3, n=6, lr=0.01):
    """steps full-batch Adam steps of nnrun -mode train (on ctx.nsize ranks) and of torch.optim.Adam"""
    chk = Checker(name, ctx.rtol)
    d = os.path.join(ctx.work, 'train')
    os.makedirs(d, exist_ok=True)
    seed = case_seed(name)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    layers = [L(SP, 'to_spatial')] + layers
    model, outshape = build(layers, inshape)
    randomize(model)
    ckpt, data, out = (os.path.join(d, f) for f in ('ckpt.h5', 'train.h5', 'out.h5'))
    write_checkpoint(model, ckpt)
    x, y = make_data(rng, inshape, outshape, 'cross_entropy', n)
    write_data(data, x * (1 + ctx.perturb), y)
    cmd = [ctx.nnrun, '-mode', 'train', '-test', '0', '-train_data_type', 'hdf5', '-train_data_file', data,
           '-nn_batch_size', str(n), '-nn_epochs', str(steps), '-nn_shuffle', '0', '-nn_monitor', '0',
           '-load', ckpt, '-nn_checkpoint', out, '-opt_type', 'adam', '-opt_learning_rate', repr(lr)] + \
        net_options(layers, 'cross_entropy') + grid_options(ctx, len(inshape))
    run_petnn(ctx, cmd, d)
    c = read_h5(out)

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    xt = torch.from_numpy(x)
    for _ in range(steps):
        opt.zero_grad()
        torch_loss('cross_entropy', model(xt), y).backward()
        opt.step()
    for k, v in model.state_dict().items():
        if k not in c:
            chk.fail('%s missing in the checkpoint' % k)
        elif k.endswith('num_batches_tracked'):
            if int(np.asarray(c[k]).reshape(-1)[0]) != int(v):
                chk.fail('%s: %s from PetNN, %d from PyTorch' % (k, c[k], int(v)))
        else:
            chk(k, c[k], v.numpy())
    for k, prm in model.named_parameters():
        for s, v in opt.state[prm].items():
            if s == 'step':
                continue
            key = 'optimizer/%s/%s' % (s, k)
            if key not in c:
                chk.fail('%s missing in the checkpoint' % key)
                continue
            chk(key, c[key], v.numpy())
    for key in ('optimizer/step', 'training/step'):
        if key not in c or int(c[key]) != steps:
            chk.fail('%s: %s in the checkpoint, expected %d' % (key, c.get(key), steps))
    chk.uneven = None
    return chk


# ----------------------------------------------------------------------------- the cases
IN2 = (3, 9, 11)     # (C,H,W): 11 = 4+4+3 over 3 ranks, 6+5 and 9 = 5+4 over 2x2
IN2G = (4, 9, 11)    # grouped convolutions
IN3 = (2, 8, 5, 7)   # (C,D,H,W): 8 = 3+3+2 over 3 ranks along z, 7 = 4+3 and 8 = 4+4 over 2x1x2


def conv(name, f, k, **kw):
    return L(name, 'conv2d', filters=f, kernel=k, **kw)


def conv3(name, f, k, **kw):
    return L(name, 'conv3d', filters=f, kernel=k, **kw)


FLAT = L('flat', 'spatial_flatten')


def layer_cases():
    bn2 = lambda name, **kw: L(name, 'batchnorm2d', **dict(dict(momentum=0.2, eps=1e-3), **kw))  # noqa: E731
    bn3 = lambda name, **kw: L(name, 'batchnorm3d', **dict(dict(momentum=0.2, eps=1e-3), **kw))  # noqa: E731
    # a convolution followed by batch norm has no bias: its gradient would be zero up to rounding
    res_block = [conv('rc1', 3, 3, padding=1, bias=False), bn2('rbn'), L('ract', 'relu'), conv('rc2', 3, 3, padding=1)]
    return [
        # name, layers between to_spatial and the end, input shape, keyword arguments
        ('to_spatial+spatial_flatten', [FLAT], IN2, {}),
        ('to_spatial+spatial_flatten 3-d', [FLAT], IN3, {}),
        ('conv2d k3 p1', [conv('conv', 4, 3, padding=1), FLAT], IN2, {}),
        ('conv2d k3 p0 no bias', [conv('conv', 4, 3, padding=0, bias=False), FLAT], IN2, {}),
        ('conv2d k5 p2', [conv('conv', 2, 5, padding=2), FLAT], IN2, {}),
        ('conv2d k2 p1 (even kernel)', [conv('conv', 3, 2, padding=1), FLAT], IN2, {}),
        ('conv2d k3 s2 p1', [conv('conv', 4, 3, stride=2, padding=1), FLAT], IN2, {}),
        ('conv2d k3 s3 p1', [conv('conv', 4, 3, stride=3, padding=1), FLAT], IN2, {}),
        ('conv2d k3 d2 p2', [conv('conv', 4, 3, dilation=2, padding=2), FLAT], IN2, {}),
        ('conv2d k3 s2 d2 p1', [conv('conv', 4, 3, stride=2, dilation=2, padding=1), FLAT], IN2, {}),
        ('conv2d groups 2', [conv('conv', 6, 3, groups=2, padding=1), FLAT], IN2G, {}),
        ('conv2d depthwise (groups 4)', [conv('conv', 8, 3, groups=4, padding=1, stride=2), FLAT], IN2G, {}),
        ('conv2d periodic k3', [conv('conv', 4, 3, padding=1, periodic=True), FLAT], IN2, {}),
        ('conv2d periodic k5', [conv('conv', 3, 5, padding=2, periodic=True), FLAT], IN2, {}),
        ('conv2d periodic k3 d2', [conv('conv', 3, 3, padding=2, dilation=2, periodic=True), FLAT], IN2, {}),
        ('conv2d with spatial output (mse on the DMDA)', [conv('conv', 2, 3, padding=1)], IN2, {}),
        ('conv2d partial batch', [conv('conv', 4, 3, padding=1), FLAT], IN2, {'capacity': 7}),
        ('conv3d k3 p1', [conv3('conv', 3, 3, padding=1), FLAT], IN3, {}),
        ('conv3d k3 p0 no bias', [conv3('conv', 3, 3, padding=0, bias=False), FLAT], IN3, {}),
        ('conv3d k3 s2 p1', [conv3('conv', 3, 3, stride=2, padding=1), FLAT], IN3, {}),
        ('conv3d k3 d2 p2 groups 2', [conv3('conv', 4, 3, dilation=2, padding=2, groups=2), FLAT], IN3, {}),
        ('conv3d periodic k3', [conv3('conv', 3, 3, padding=1, periodic=True), FLAT], IN3, {}),
        ('maxpool2d k2', [L('pool', 'maxpool2d', kernel=2), FLAT], IN2, {}),
        ('maxpool2d k3 s2 p1', [L('pool', 'maxpool2d', kernel=3, stride=2, padding=1), FLAT], IN2, {}),
        ('maxpool2d k3 s1', [L('pool', 'maxpool2d', kernel=3, stride=1), FLAT], IN2, {}),
        ('maxpool3d k2', [L('pool', 'maxpool3d', kernel=2), FLAT], IN3, {}),
        ('maxpool3d k3 s2 p1', [L('pool', 'maxpool3d', kernel=3, stride=2, padding=1), FLAT], IN3, {}),
        ('avgpool2d k2', [L('pool', 'avgpool2d', kernel=2), FLAT], IN2, {}),
        ('avgpool2d k3 s2 p1', [L('pool', 'avgpool2d', kernel=3, stride=2, padding=1), FLAT], IN2, {}),
        ('avgpool3d k2', [L('pool', 'avgpool3d', kernel=2), FLAT], IN3, {}),
        ('avgpool3d k3 s2 p1', [L('pool', 'avgpool3d', kernel=3, stride=2, padding=1), FLAT], IN3, {}),
        ('global_avgpool', [conv('conv', 4, 3, padding=1), L('gap', 'global_avgpool'), L('fc', 'dense', units=3)],
         IN2, {}),
        ('global_avgpool 3-d', [L('gap', 'global_avgpool')], IN3, {}),
        ('global_avgpool partial batch', [L('gap', 'global_avgpool')], IN2, {'capacity': 6}),
        ('upsample x2', [L('up', 'upsample', scale=2), FLAT], IN2, {}),
        ('upsample x3', [L('up', 'upsample', scale=3), FLAT], IN2, {}),
        ('upsample x2 3-d', [L('up', 'upsample', scale=2), FLAT], IN3, {}),
        ('batchnorm2d (training, 2 passes)', [bn2('bn'), FLAT], IN2, {'passes': 2}),
        ('batchnorm2d (training, partial batch)', [bn2('bn', momentum=0.1, eps=1e-5), FLAT], IN2, {'capacity': 7}),
        ('batchnorm2d (evaluation)', [bn2('bn'), FLAT], IN2, {'mode': 'eval'}),
        ('batchnorm3d (training, 2 passes)', [bn3('bn'), FLAT], IN3, {'passes': 2}),
        ('batchnorm3d (training, partial batch)', [bn3('bn'), FLAT], IN3, {'capacity': 5}),
        ('batchnorm3d (evaluation)', [bn3('bn'), FLAT], IN3, {'mode': 'eval'}),
        ('activations on spatial activations',
         [L('a1', 'relu'), conv('conv', 3, 3, padding=1), L('a2', 'tanh'), L('a3', 'leaky_relu', slope=0.1),
          L('a4', 'gelu'), L('a5', 'sigmoid'), FLAT], IN2, {}),
        ('residual over spatial layers', [L('res', 'residual', layers=res_block), FLAT], IN2, {}),
        ('cnn (cross_entropy)',
         [conv('c1', 4, 3, padding=1, bias=False), bn2('bn1'), L('r1', 'relu'), L('p1', 'maxpool2d', kernel=2),
          conv('c2', 6, 3, padding=1, stride=2), L('r2', 'relu'), L('up', 'upsample', scale=2),
          L('p2', 'avgpool2d', kernel=2), FLAT, L('fc', 'dense', units=5)], (2, 12, 16), {'loss': 'cross_entropy'}),
    ]


def train_cases():
    return [
        ('cnn training (3 Adam steps)',
         [conv('c1', 4, 3, padding=1, bias=False), L('bn1', 'batchnorm2d', momentum=0.1, eps=1e-5), L('r1', 'relu'),
          L('p1', 'maxpool2d', kernel=2), conv('c2', 4, 3, padding=1, periodic=True), L('r2', 'relu'),
          L('gap', 'global_avgpool'), L('fc', 'dense', units=3)], (2, 12, 16)),
    ]


def default_grids(nsize):
    """(2-d grid x,y; 3-d grid x,y,z) for nsize ranks"""
    return {1: ((1, 1), (1, 1, 1)), 2: ((2, 1), (2, 1, 1)), 3: ((3, 1), (1, 1, 3)),
            4: ((2, 2), (2, 1, 2))}.get(nsize, ((nsize, 1), (nsize, 1, 1)))


def parse_grid(s, nd):
    g = tuple(int(v) for v in s.lower().split('x'))
    if len(g) != nd:
        raise SystemExit('rank grid %s: need %d numbers' % (s, nd))
    return g


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('nnrun', help='path of examples/nnrun')
    ap.add_argument('helper', nargs='?', help='path of tests/crosscheck_spatial (default: next to nnrun in ../tests/)')
    ap.add_argument('--nsize', type=int, default=1, help='MPI ranks for PetNN')
    ap.add_argument('--mpiexec', default='mpiexec', help='MPI launcher (the runner adds -n N)')
    ap.add_argument('--grid2', help='rank grid of 2-d samples, XxY (default from --nsize)')
    ap.add_argument('--grid3', help='rank grid of 3-d samples, XxYxZ (default from --nsize)')
    ap.add_argument('--rtol', type=float, default=1e-10)
    ap.add_argument('--only', default='', help='comma-separated case-name prefixes to run')
    ap.add_argument('--list', action='store_true', help='list the cases and exit')
    ap.add_argument('--perturb', type=float, default=0.0,
                    help='self-test of the comparison: PetNN gets the inputs scaled by 1 + PERTURB (e.g. 1e-8), '
                    'so every case must disagree; exits 0 only if each one does')
    ap.add_argument('--keep', action='store_true', help='keep the work directory (its path is printed)')
    ap.add_argument('-v', '--verbose', action='store_true', help='print relative errors and decompositions')
    a = ap.parse_args(argv)
    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(1)

    if a.list:
        for c in layer_cases() + train_cases():
            print(c[0])
        return 0
    g2, g3 = default_grids(a.nsize)
    ctx = argparse.Namespace(nnrun=os.path.abspath(a.nnrun), rtol=a.rtol, nsize=a.nsize, mpiexec=a.mpiexec,
                             perturb=a.perturb,
                             grid2=parse_grid(a.grid2, 2) if a.grid2 else g2,
                             grid3=parse_grid(a.grid3, 3) if a.grid3 else g3)
    for g in (ctx.grid2, ctx.grid3):
        if int(np.prod(g)) != a.nsize:
            print('rank grid %s does not have --nsize %d ranks' % ('x'.join(map(str, g)), a.nsize))
            return 1
    helper = a.helper or os.path.join(os.path.dirname(ctx.nnrun), '..', 'tests', 'crosscheck_spatial')
    ctx.helper = os.path.abspath(helper)
    for exe in (ctx.nnrun, ctx.helper):
        if not os.access(exe, os.X_OK):
            print('cannot run %s: build PetNN first' % exe)
            return 1
    only = [s.strip() for s in a.only.split(',') if s.strip()]
    selected = lambda name: not only or any(name.startswith(o) for o in only)  # noqa: E731
    ctx.work = tempfile.mkdtemp(prefix='petnn_crosscheck_spatial_')
    tol = '%g' % a.rtol
    failed, uneven, ncases, undetected = [], 0, 0, []
    print('PetNN on %d rank(s): rank grid %s for 2-d samples, %s for 3-d samples' % (
        a.nsize, 'x'.join(map(str, ctx.grid2)), 'x'.join(map(str, ctx.grid3))))

    def report(name, chk, what):
        nonlocal uneven, ncases
        ncases += 1
        if getattr(chk, 'uneven', False):
            uneven += 1
        if a.verbose:
            for q, e in chk.errs.items():
                print('    %-44s rel. err. %.2e' % (q, e))
            for note in chk.notes:
                print('    ' + note)
        if a.perturb:  # self-test: every case must notice the perturbed inputs
            if chk.bad:
                print('%s: disagrees, as it must with inputs scaled by 1 + %g%s' % (
                    name, a.perturb, ' (%s)' % ', '.join(b.split(':')[0] for b in chk.bad) if a.verbose else ''))
            else:
                undetected.append(name)
                print('%s: NOT DETECTED: agrees although the inputs were scaled by 1 + %g' % (name, a.perturb))
        elif chk.bad:
            failed.append(name)
            print('%s: DISAGREES with PyTorch:' % name)
            for b in chk.bad:
                print('    ' + b)
        else:
            print('%s: %s agree (rel. err. < %s)%s' % (name, what, tol,
                                                       ' [max %.2e]' % chk.maxerr() if a.verbose else ''))

    try:
        for name, layers, inshape, kw in layer_cases():
            if not selected(name):
                continue
            try:
                chk = layer_case(ctx, name, layers, inshape, **kw)
            except CaseFailed as e:
                failed.append(name)
                print('%s: FAILED: %s' % (name, e))
                continue
            what = 'output, loss, input gradient, parameter gradients'
            if chk.buffers:
                what += ', running statistics'
            report(name, chk, what)
        for name, layers, inshape in train_cases():
            if not selected(name):
                continue
            try:
                chk = train_case(ctx, name, layers, inshape)
            except CaseFailed as e:
                failed.append(name)
                print('%s: FAILED: %s' % (name, e))
                continue
            report(name, chk, 'parameters, running statistics and Adam state')
    finally:
        if a.keep:
            print('work directory kept: %s' % ctx.work)
        else:
            shutil.rmtree(ctx.work, ignore_errors=True)
    if a.nsize > 1:
        print('%d of %d cases ran with uneven ownership ranges' % (uneven, ncases))
    if a.perturb:
        if failed or undetected:
            print('self-test FAILED: %d case(s) did not run, %d did not notice the perturbation' % (
                len(failed), len(undetected)))
            return 1
        print('self-test passed: every case notices inputs scaled by 1 + %g' % a.perturb)
        return 0
    if failed:
        print('PetNN DISAGREES with PyTorch in %d case(s): %s' % (len(failed), ', '.join(failed)))
        return 1
    print('PetNN agrees with PyTorch in every case')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
