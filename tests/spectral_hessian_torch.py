#!/usr/bin/python3
"""Loss-Hessian products of PetNN against PyTorch (run with /usr/bin/python3: torch, h5py, numpy).

    /usr/bin/python3 tests/spectral_hessian_torch.py <build>/tests/spectral_hessian [-v] [--keep] [--rtol 1e-8]

For small dense networks (tanh, sigmoid, GELU; cross-entropy and MSE losses) PyTorch writes the
weights (a state_dict in HDF5, PetNN's checkpoint format), a data set and a random direction v
(PETSc binary); the helper computes H v of the mean loss over all samples with its MATSHELL
(central differences of gradients, NNCreateHessianData()) and writes it back. PyTorch computes
the exact product with torch.autograd.functional.hvp in double precision (for ReLU, autograd's
derivative of the piecewise-linear map of the pattern at theta, which the Hessian's frozen kinks
reproduce); the two must agree to
max|PetNN - PyTorch| / max|PyTorch| < rtol. The finite-difference error is O(eps^2) truncation plus
O(macheps/eps) rounding with eps = cbrt(macheps)(1+|theta|)/|v|, about 1e-10 here.

Prints one stable line per case (-v adds the relative errors); exits 1 if any case disagrees.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import h5py
    import numpy as np
    import torch
except ImportError as e:
    print('torch not available: cross-check skipped')
    sys.stderr.write('(%s)\n' % e)
    sys.exit(0)

VEC_CLASSID = 1211214
ACT = {'tanh': torch.tanh, 'sigmoid': torch.sigmoid, 'relu': torch.relu,
       'gelu': lambda z: torch.nn.functional.gelu(z, approximate='none')}

# name, input features, [(units, activation after it or None)], loss, samples
CASES = [
    ('tanh mlp, cross_entropy', 5, [(8, 'tanh'), (6, 'tanh'), (3, None)], 'cross_entropy', 12),
    ('sigmoid mlp, mse', 4, [(7, 'sigmoid'), (2, None)], 'mse', 9),
    ('gelu mlp, cross_entropy', 6, [(5, 'gelu'), (4, None)], 'cross_entropy', 40),
    # 64000 ReLU inputs: unfrozen, some cross their kink within eps and H v is off by O(1)
    ('relu mlp (kinks frozen), cross_entropy', 6, [(16, 'relu'), (16, 'relu'), (3, None)], 'cross_entropy', 2000),
]


# a PETSc binary Vec's header (class id, length) holds PetscInts: 4 or 8 bytes (--with-64-bit-indices), as the test runner says
INT = '>i4' if os.environ.get('PETNN_PETSC_INDEX_BITS', '32') == '32' else '>i8'


def write_vec(path, v):
    with open(path, 'wb') as f:
        np.array([VEC_CLASSID, v.size], dtype=INT).tofile(f)
        np.asarray(v, dtype='>f8').tofile(f)


def read_vec(path):
    with open(path, 'rb') as f:
        head = np.fromfile(f, dtype=INT, count=2)
        assert head[0] == VEC_CLASSID, 'not a PETSc binary Vec: %s' % path
        return np.fromfile(f, dtype='>f8', count=int(head[1])).astype(np.float64)


def run_case(exe, work, k, case, rtol, verbose):
    name, nin, layers, loss, n = case
    d = os.path.join(work, 'case%d' % k)
    os.makedirs(d)
    rng = np.random.default_rng(100 + k)
    torch.manual_seed(100 + k)
    shapes, names, opts, prev = [], [], [], nin
    lnames = []
    for i, (units, act) in enumerate(layers):
        shapes += [(units, prev), (units,)]
        names += ['fc%d.weight' % i, 'fc%d.bias' % i]
        lnames.append('fc%d' % i)
        opts += ['-fc%d_type' % i, 'dense', '-fc%d_units' % i, str(units)]
        if act:
            lnames.append('act%d' % i)
            opts += ['-act%d_type' % i, act]
        prev = units
    params = [torch.randn(s, dtype=torch.float64) * (0.8 if len(s) == 2 else 0.3) for s in shapes]
    flat = torch.cat([p.reshape(-1) for p in params])
    x = rng.standard_normal((n, nin))
    y = rng.integers(0, prev, n).astype(np.int64) if loss == 'cross_entropy' else rng.standard_normal((n, prev))
    v = rng.standard_normal(flat.numel())
    with h5py.File(os.path.join(d, 'ckpt.h5'), 'w') as f:
        for nm, p in zip(names, params):
            f.create_dataset(nm, data=p.numpy())
    with h5py.File(os.path.join(d, 'data.h5'), 'w') as f:
        f['x'] = x
        f['y'] = y
    write_vec(os.path.join(d, 'v.bin'), v)

    cmd = [exe, '-nn_layers', ','.join(lnames), '-nn_loss', loss] + opts + [
        '-hvp_data_file', 'data.h5', '-load', 'ckpt.h5', '-hvp_v', 'v.bin', '-hvp_out', 'hv.bin']
    p = subprocess.run(cmd, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=120)
    if p.returncode != 0:
        print('%s: FAIL (%s exited with %d)\n%s' % (name, os.path.basename(exe), p.returncode, p.stdout[-3000:]))
        return False
    hv = read_vec(os.path.join(d, 'hv.bin'))

    xt = torch.from_numpy(x)
    yt = torch.from_numpy(y)

    def f(theta):
        z, o = xt, 0
        for (units, act), s in zip(layers, range(0, 2 * len(layers), 2)):
            W = theta[o:o + shapes[s][0] * shapes[s][1]].reshape(shapes[s])
            o += W.numel()
            b = theta[o:o + shapes[s + 1][0]]
            o += b.numel()
            z = z @ W.T + b
            if act:
                z = ACT[act](z)
        if loss == 'mse':
            return torch.nn.functional.mse_loss(z, yt)
        return torch.nn.functional.cross_entropy(z, yt)

    _, ref = torch.autograd.functional.hvp(f, flat, torch.from_numpy(v))
    ref = ref.numpy()
    if hv.shape != ref.shape:
        print('%s: FAIL (H v has %d entries, PyTorch %d)' % (name, hv.size, ref.size))
        return False
    rel = float(np.max(np.abs(hv - ref)) / np.max(np.abs(ref)))
    ok = rel < rtol
    print('%s: H v against torch.autograd.functional.hvp %s' % (name, 'pass' if ok else 'FAIL'))
    if verbose or not ok:
        print('  relative error %.3e (tolerance %g)' % (rel, rtol))
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('exe')
    ap.add_argument('-v', action='store_true')
    ap.add_argument('--keep', action='store_true')
    ap.add_argument('--rtol', type=float, default=1e-8)
    a = ap.parse_args()
    torch.set_default_dtype(torch.float64)
    work = tempfile.mkdtemp(prefix='petnn_hvp_')
    ok = True
    try:
        for k, case in enumerate(CASES):
            ok = run_case(os.path.abspath(a.exe), work, k, case, a.rtol, a.v) and ok
    finally:
        if a.keep:
            print('kept %s' % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
