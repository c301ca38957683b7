#!/usr/bin/python3
"""The reference Fourier neural operator (Li et al., neuraloperator's fourier_2d.py: SpectralConv2d,
FNO2d) trained with PyTorch on the Allen-Cahn state pairs that examples/reaction_diffusion_surrogate
writes with -write_data, and evaluated the way that example evaluates PetNN's surrogate.

    build/examples/reaction_diffusion_surrogate -options_file examples/allen_cahn_fno.opts \\
        -write_data ac.bin
    bench/fno_reference.py --data ac.bin [same sizes and training options as the .opts file]

The network is the reference one: a lift to --width channels, four Fourier layers (spectral
convolution on the lowest --modes modes plus a pointwise linear path, GELU after the first
three), a projection through 128 channels. Differences to fourier_2d.py, both because the problem
is periodic: no zero padding of the domain, and the grid coordinates are appended only with
--grid (PetNN's example feeds the state alone). Like the example, the network predicts the
increment u(t + K dt) - u(t) from u(t); the loss is the relative L2 loss of the reference
(mean over the batch of per-sample ||y - t|| / ||t||) or MSE (--loss mse).

Reported: training loss every 10 epochs, seconds per epoch, the held-out errors of one call
(relative L2 of the state u(t+K dt), aggregated and mean per sample, and of the increment), and
the time per call on one state (batch 1, --threads threads).
"""
import argparse
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def read_petsc_vecs(path):
    """all Vecs of a PETSc binary file (VecView: classid 1211214, n, n big-endian doubles)"""
    raw = open(path, "rb").read()
    vecs, pos = [], 0
    while pos < len(raw):
        cid, n = np.frombuffer(raw, ">i4", 2, pos)
        assert cid == 1211214, "not a PETSc Vec at byte %d" % pos
        pos += 8
        vecs.append(np.frombuffer(raw, ">f8", n, pos).astype(np.float64))
        pos += 8 * n
    return vecs


def pairs(states, ntraj, nsteps, horizon, M):
    """(u(s dt), u((s+K) dt)) for every trajectory and s = 0..nsteps-K, as the example orders them"""
    x, y = [], []
    for k in range(ntraj):
        traj = states[k * (nsteps + 1):(k + 1) * (nsteps + 1)]
        for s in range(nsteps - horizon + 1):
            x.append(traj[s].reshape(M, M))
            y.append(traj[s + horizon].reshape(M, M))
    return np.stack(x)[:, None], np.stack(y)[:, None]


class SpectralConv2d(nn.Module):
    def __init__(self, cin, cout, m1, m2, dtype):
        super().__init__()
        self.cout, self.m1, self.m2 = cout, m1, m2
        scale = 1 / (cin * cout)
        cdtype = torch.cdouble if dtype == torch.float64 else torch.cfloat
        self.weights1 = nn.Parameter(scale * torch.rand(cin, cout, m1, m2, dtype=cdtype))
        self.weights2 = nn.Parameter(scale * torch.rand(cin, cout, m1, m2, dtype=cdtype))

    def forward(self, x):
        b, H, W = x.shape[0], x.shape[-2], x.shape[-1]
        x_ft = torch.fft.rfft2(x)
        out_ft = torch.zeros(b, self.cout, H, W // 2 + 1, dtype=x_ft.dtype)
        out_ft[:, :, :self.m1, :self.m2] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, :self.m1, :self.m2], self.weights1)
        out_ft[:, :, -self.m1:, :self.m2] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, -self.m1:, :self.m2], self.weights2)
        return torch.fft.irfft2(out_ft, s=(H, W))


class FNO2d(nn.Module):
    def __init__(self, modes, width, cin, dtype):
        super().__init__()
        self.fc0 = nn.Linear(cin, width)
        self.convs = nn.ModuleList([SpectralConv2d(width, width, modes, modes, dtype) for _ in range(4)])
        self.ws = nn.ModuleList([nn.Conv2d(width, width, 1) for _ in range(4)])
        self.fc1 = nn.Linear(width, 128)
        self.fc2 = nn.Linear(128, 1)

    def forward(self, x):  # x: (b, c, H, W)
        x = self.fc0(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        for i, (conv, w) in enumerate(zip(self.convs, self.ws)):
            x = conv(x) + w(x)
            if i < 3:
                x = F.gelu(x)
        x = F.gelu(self.fc1(x.permute(0, 2, 3, 1)))
        return self.fc2(x).permute(0, 3, 1, 2)


def with_grid(x):
    b, _, H, W = x.shape
    gy, gx = torch.meshgrid((torch.arange(H, dtype=x.dtype) + 0.5) / H, (torch.arange(W, dtype=x.dtype) + 0.5) / W, indexing="ij")
    return torch.cat([x, gx.expand(b, 1, H, W), gy.expand(b, 1, H, W)], dim=1)


def rel_l2(y, t):
    return (torch.linalg.vector_norm((y - t).flatten(1), dim=1) / torch.linalg.vector_norm(t.flatten(1), dim=1)).mean()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True)
    p.add_argument("--M", type=int, default=64)
    p.add_argument("--ntrain", type=int, default=24)
    p.add_argument("--ntest", type=int, default=4)
    p.add_argument("--nsteps", type=int, default=10)
    p.add_argument("--horizon", type=int, default=1)
    p.add_argument("--width", type=int, default=16)
    p.add_argument("--modes", type=int, default=8)
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--loss", choices=["rel_l2", "mse"], default="rel_l2")
    p.add_argument("--schedule", choices=["cosine", "none"], default="cosine")
    p.add_argument("--grid", action="store_true", help="append the grid coordinates as input channels")
    p.add_argument("--double", action="store_true", help="train in float64 (default float32, as the reference)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    dtype = torch.float64 if a.double else torch.float32
    torch.set_default_dtype(dtype)

    states = read_petsc_vecs(a.data)
    ntr = a.ntrain * (a.nsteps + 1)
    assert len(states) == ntr + a.ntest * (a.nsteps + 1), "the file holds %d states, the sizes give %d" % (len(states), ntr + a.ntest * (a.nsteps + 1))
    xtr, ytr = pairs(states[:ntr], a.ntrain, a.nsteps, a.horizon, a.M)
    xte, yte = pairs(states[ntr:], a.ntest, a.nsteps, a.horizon, a.M)
    xtr, ytr, xte, yte = (torch.tensor(v, dtype=dtype) for v in (xtr, ytr, xte, yte))
    dtr, dte = ytr - xtr, yte - xte  # the increments the network predicts
    prep = with_grid if a.grid else (lambda v: v)

    net = FNO2d(a.modes, a.width, 3 if a.grid else 1, dtype)
    nparam = sum(q.numel() * (2 if q.is_complex() else 1) for q in net.parameters())
    opt = torch.optim.Adam(net.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, a.epochs) if a.schedule == "cosine" else None
    lossf = rel_l2 if a.loss == "rel_l2" else F.mse_loss
    print("Reference FNO2d (PyTorch %s, %s, %d threads): width %d, modes %d, %d parameters; %d training and %d held-out pairs of %dx%d states, horizon %d"
          % (torch.__version__, "float64" if a.double else "float32", a.threads, a.width, a.modes, nparam, len(xtr), len(xte), a.M, a.M, a.horizon))
    g = torch.Generator().manual_seed(a.seed)
    tepochs = []
    for e in range(a.epochs):
        t0, tot = time.perf_counter(), 0.0
        perm = torch.randperm(len(xtr), generator=g)
        for s in range(0, len(xtr), a.batch):
            idx = perm[s:s + a.batch]
            opt.zero_grad()
            L = lossf(net(prep(xtr[idx])), dtr[idx])
            L.backward()
            opt.step()
            tot += L.item() * len(idx)
        if sched:
            sched.step()
        tepochs.append(time.perf_counter() - t0)
        if e % 10 == 9 or e == a.epochs - 1:
            print("epoch %3d: training loss %.4e" % (e + 1, tot / len(xtr)))
    with torch.no_grad():
        pred = xte + net(prep(xte))
        num = ((pred - yte) ** 2).sum().item()
        den = (yte ** 2).sum().item()
        dnum = ((xte - yte) ** 2).sum().item()
        mean = rel_l2(pred, yte).item()
        one = prep(xte[:1])
        for _ in range(3):
            net(one)
        t0 = time.perf_counter()
        for _ in range(20):
            net(one)
        tcall = (time.perf_counter() - t0) / 20
    print("Held-out %d-step prediction u(t) -> u(t+%d dt): relative L2 error %.3e (of the state), %.3e (of the increment); mean over the %d held-out pairs of the per-sample relative L2 error %.3e"
          % (a.horizon, a.horizon, np.sqrt(num / den), np.sqrt(num / dnum), len(xte), mean))
    print("Seconds per epoch: %.3f (median of %d); time per call (batch 1): %.3e s" % (float(np.median(tepochs)), len(tepochs), tcall))


if __name__ == "__main__":
    main()
