#!/usr/bin/python3
"""Cross-check of examples/custom_layer.c's swish layer against PyTorch autograd (double precision).

    /usr/bin/python3 examples/custom_layer_torch.py <build>/examples/custom_layer [-v]

Runs the example with -dump, which writes the reference problem (x, t, beta) and PetNN's output, MSE loss,
input gradient and beta gradient as text; recomputes them with torch: y = x * sigmoid(beta * x),
loss = mse_loss(y, t), backward(). Prints one stable line and exits 1 when a quantity differs by more
than 1e-13 relative. Without torch it prints that the check was skipped.
"""
import os
import subprocess
import sys
import tempfile

try:
    import torch
except ImportError:  # the harness's requires: torch normally skips the test before this
    print('torch not available: cross-check skipped')
    sys.exit(0)

RTOL = 1e-13


def main():
    exe, verbose = sys.argv[1], '-v' in sys.argv[2:]
    with tempfile.TemporaryDirectory() as d:
        dump = os.path.join(d, 'swish.txt')
        subprocess.run([exe, '-dump', dump], check=True, stdout=subprocess.DEVNULL)
        with open(dump) as f:
            lines = f.read().split('\n')
    rows = {}
    for i, line in enumerate(lines):
        w = line.split()
        if w and w[0] == 'shape':
            n, nf = (int(v) for v in lines[i + 1].split())
        elif w:
            rows[w[0]] = [float(v) for v in w[1:]]
    t64 = dict(dtype=torch.float64)
    x = torch.tensor(rows['x'], **t64).reshape(n, nf).requires_grad_(True)
    t = torch.tensor(rows['t'], **t64).reshape(n, nf)
    beta = torch.tensor(rows['beta'], **t64).requires_grad_(True)
    y = x * torch.sigmoid(beta * x)
    loss = torch.nn.functional.mse_loss(y, t)
    loss.backward()
    ok = True
    for name, ref in (('y', y.detach()), ('loss', loss.detach().reshape(1)), ('dx', x.grad), ('dbeta', beta.grad)):
        got = torch.tensor(rows[name], **t64).reshape(ref.shape)
        err = ((got - ref).abs().max() / ref.abs().max().clamp(min=1e-300)).item()
        if verbose:
            print('%-6s rel. error %.3g' % (name, err))
        if not err < RTOL:
            print('%s: PetNN and torch differ by %.3g relative (tolerance %g)' % (name, err, RTOL))
            ok = False
    print('swish layer vs torch autograd (output, loss, input gradient, beta gradient): %s' % ('PASSED' if ok else 'FAILED'))
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
