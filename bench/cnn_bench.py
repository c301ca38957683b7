#!/usr/bin/python3
"""PetNN vs PyTorch (float64 and float32) on the Fashion-MNIST CNN of examples/fashion_cnn.opts
(--model cnn, the default) or the ODE-Net of examples/fashion_odenet.opts (--model odenet).

    cnn:    conv 5x5x32 (pad 2) - relu - maxpool 2 - conv 5x5x64 (pad 2) - relu - maxpool 2 - dense 1024
            - relu - dropout 0.5 - dense 10
    odenet: conv 3x3x16 (pad 1) - relu - maxpool 2 - ODE block du/dt = conv(tanh(conv(u))) (3x3x16 each,
            RK4, 4 steps on [0,1], shared weights; PyTorch backpropagates through the RK4 stages)
            - dense 256 - relu - dense 10
    both:   cross entropy, Adam (cosine schedule), batch 128

PetNN runs examples/nnrun with the options file (float64, -log_view); PyTorch runs the same
network on the same data with the same batch size, optimizer and thread count, once in float64
and once in float32, each in its own process (this script started with --torch-child). All three
run one after the other on this machine. Reported: training seconds per epoch (the best epoch
after the first when --epochs > 1), the ratios PetNN/PyTorch-float64 and PetNN/PyTorch-float32
(targets: <= 0.5 and <= 1.5), peak resident memory, and PetNN's time per layer type from the
-log_view events NNFwd_<type>/NNBwd_<type> (plus the optimizer step and data loading).

--batches B times only the first B minibatches of every epoch and extrapolates to the 60000
samples of an epoch, so a quick run takes a minute instead of most of an hour:

    bench/cnn_bench.py --batches 20 --epochs 2          # quick
    bench/cnn_bench.py                                  # 2 full epochs of each (about 20 minutes)

Usage: bench/cnn_bench.py [--build build] [--epochs 2] [--threads 2] [--batches 0] [--ranks 1]
                          [--skip-float64] [--petnn-args "..."] [--json out.json]
"""
import argparse
import gzip
import json
import os
import re
import resource
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = "/usr/share/datasets/fashion-mnist"
NTRAIN = 60000
BATCH = 128
# nominal training flops per sample (direct convolution and GEMM counts; PetNN's fastest
# convolution algorithm may execute fewer, and -log_view counts what it executes):
# forward conv1 2*28*28*32*25, conv2 2*14*14*64*800, fc1 2*3136*1024, fc2 2*1024*10; backward
# twice the forward except conv1 (its input gradient is not needed)
CNN_FLOPS = {"conv2d": (2 * 28 * 28 * 32 * 25 + 2 * 14 * 14 * 64 * 800, 2 * 28 * 28 * 32 * 25 + 4 * 14 * 14 * 64 * 800),
         "dense": (2 * 3136 * 1024 + 2 * 1024 * 10, 4 * 3136 * 1024 + 4 * 1024 * 10)}
# ODE-Net: conv1 2*28*28*16*9; the block's 16 vector-field evaluations of two 16->16 3x3 convolutions at 14x14
# (the adjoint runs each stage's forward again and one backward of twice the forward); dense 3136-256-10
ODE_F = 16 * 2 * (2 * 14 * 14 * 16 * 144)
ODENET_FLOPS = {"conv2d": (2 * 28 * 28 * 16 * 9, 2 * 28 * 28 * 16 * 9), "ode": (ODE_F, 3 * ODE_F),
                "dense": (2 * 3136 * 256 + 2 * 256 * 10, 4 * 3136 * 256 + 4 * 256 * 10)}
MODELS = {"cnn": ("fashion_cnn.opts", CNN_FLOPS, 0.5), "odenet": ("fashion_odenet.opts", ODENET_FLOPS, 0.7)}


# ----------------------------------------------------------------------------- PyTorch (child process)
def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    import numpy as np
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def torch_odenet(torch):
    nn = torch.nn

    class ODEBlock(nn.Module):
        """du/dt = f(u) on [0, 1] by classical RK4 with 4 steps; autograd backpropagates through the stages"""
        def __init__(self, c, steps=4, T=1.0):
            super().__init__()
            self.f = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.Tanh(), nn.Conv2d(c, c, 3, padding=1))
            self.steps, self.h = steps, T / steps

        def forward(self, u):
            h = self.h
            for _ in range(self.steps):
                k1 = self.f(u)
                k2 = self.f(u + 0.5 * h * k1)
                k3 = self.f(u + 0.5 * h * k2)
                k4 = self.f(u + h * k3)
                u = u + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            return u

    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), ODEBlock(16),
                         nn.Flatten(), nn.Linear(3136, 256), nn.ReLU(), nn.Linear(256, 10))


def torch_model(torch, model="cnn"):
    nn = torch.nn
    if model == "odenet":
        return torch_odenet(torch)
    return nn.Sequential(nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(3136, 1024), nn.ReLU(), nn.Dropout(0.5), nn.Linear(1024, 10))


def torch_child(a):
    """one PyTorch run; prints one line per epoch and a JSON summary as the last line"""
    import torch
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    dt = getattr(torch, a.dtype)
    n = min(a.batches * BATCH, NTRAIN) if a.batches else NTRAIN
    xtr = (torch.tensor(idx(f"{DATA}/train-images-idx3-ubyte.gz")[:n], dtype=dt) / 255.0).reshape(-1, 1, 28, 28)
    ytr = torch.tensor(idx(f"{DATA}/train-labels-idx1-ubyte.gz")[:n], dtype=torch.long)
    model = torch_model(torch, a.model).to(dt)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=a.epochs)
    lossf = torch.nn.CrossEntropyLoss()
    times = []
    for epoch in range(a.epochs):
        model.train()
        perm = torch.randperm(n)
        t0 = time.perf_counter()
        for s in range(0, n, BATCH):
            i = perm[s:s + BATCH]
            opt.zero_grad()
            loss = lossf(model(xtr[i]), ytr[i])
            loss.backward()
            opt.step()
        t = time.perf_counter() - t0
        sched.step()
        times.append(t)
        msg = f"epoch {epoch + 1}: train time {t:.3f} s for {n} samples, last loss {loss.item():.4f}"
        if a.eval:
            xte = (torch.tensor(idx(f"{DATA}/t10k-images-idx3-ubyte.gz"), dtype=dt) / 255.0).reshape(-1, 1, 28, 28)
            yte = torch.tensor(idx(f"{DATA}/t10k-labels-idx1-ubyte.gz"), dtype=torch.long)
            model.eval()
            with torch.no_grad():
                acc = sum((model(xte[s:s + 1000]).argmax(1) == yte[s:s + 1000]).sum().item()
                          for s in range(0, 10000, 1000)) / 10000
            msg += f", test acc {acc:.4f}"
        print(msg, flush=True)
    print(json.dumps({"framework": "pytorch", "dtype": a.dtype, "threads": a.threads, "samples": n,
                      "epoch_times": times, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


# ----------------------------------------------------------------------------- driver
def run(cmd, env):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if p.returncode:
        sys.exit("%s failed (%d):\n%s" % (" ".join(shlex.quote(c) for c in cmd), p.returncode, p.stdout[-5000:]))
    return p.stdout


def best_epoch(times):
    """the best epoch after the first (the first pays for allocations and warm-up)"""
    return min(times[1:]) if len(times) > 1 else times[0]


def log_view_events(out):
    """{event: (count, max time in s, flop)} from the -log_view table"""
    ev = {}
    for line in out.splitlines():
        m = re.match(r"^(NN\w+)\s+(\d+)\s+[\d.]+\s+([\d.eE+-]+)\s+[\d.]+\s+([\d.eE+-]+)", line)
        if m:
            ev[m.group(1)] = (int(m.group(2)), float(m.group(3)), float(m.group(4)))
    return ev


def run_petnn(a, env, n):
    nnrun = os.path.join(a.build, "examples", "nnrun")
    if not os.access(nnrun, os.X_OK):
        sys.exit("cannot run %s: build PetNN first (or give --build)" % nnrun)
    cmd = [nnrun, "-options_file", os.path.join(ROOT, "examples", MODELS[a.model][0]), "-nn_epochs", str(a.epochs),
           "-test", "0", "-nn_monitor", "-log_view"]
    if a.batches:
        cmd += ["-train_data_max_samples", str(n)]
    if a.ranks > 1:
        cmd = shlex.split(a.mpiexec) + ["-n", str(a.ranks)] + cmd + ["-sp_da_processors_x", str(a.ranks),
                                                                   "-sp_da_processors_y", "1"]
    cmd += shlex.split(a.petnn_args)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out = run(cmd, env)
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    times = [float(t) for t in re.findall(r"time ([0-9.]+) s", out)]
    if len(times) != a.epochs:
        sys.exit("could not read %d epoch times from nnrun's output:\n%s" % (a.epochs, out[-3000:]))
    return {"epoch_times": times, "events": log_view_events(out),
            "peak_rss_mb": rss / 1024.0 if rss > before else None, "output": out}


def run_torch(a, env, dtype):
    cmd = ["/usr/bin/python3", os.path.abspath(__file__), "--torch-child", "--dtype", dtype, "--threads", str(a.threads),
           "--epochs", str(a.epochs), "--batches", str(a.batches), "--model", a.model]
    out = run(cmd, env)
    return json.loads(out.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=sorted(MODELS), default="cnn", help="the network (cnn or odenet)")
    p.add_argument("--build", default=os.path.join(ROOT, "build"), help="PetNN build directory (examples/nnrun)")
    p.add_argument("--epochs", type=int, default=2, help="epochs of each run (the best after the first counts)")
    p.add_argument("--threads", type=int, default=2, help="OpenBLAS / PyTorch threads (in total)")
    p.add_argument("--batches", type=int, default=0, help="time only this many minibatches per epoch (0: all)")
    p.add_argument("--ranks", type=int, default=1, help="MPI ranks for PetNN (spatial decomposition along x; "
                   "each gets threads/ranks BLAS threads)")
    p.add_argument("--mpiexec", default="mpiexec --oversubscribe")
    p.add_argument("--petnn-args", default="", help="extra options for nnrun")
    p.add_argument("--skip-float64", action="store_true", help="skip the (slow) PyTorch float64 run")
    p.add_argument("--json", help="also write the results to this file")
    # child mode
    p.add_argument("--torch-child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--dtype", default="float64", help=argparse.SUPPRESS)
    p.add_argument("--eval", action="store_true", help="(child) test accuracy after every epoch")
    a = p.parse_args()
    if a.torch_child:
        return torch_child(a)

    FLOPS = MODELS[a.model][1]
    n = min(a.batches * BATCH, NTRAIN) if a.batches else NTRAIN
    scale = NTRAIN / n  # seconds per epoch from seconds per n samples
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(max(1, a.threads // a.ranks)), OMP_NUM_THREADS=str(a.threads),
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    print(f"Fashion-MNIST {a.model}, batch {BATCH}, {a.threads} thread(s), {a.epochs} epoch(s) of "
          f"{n} samples{' (extrapolated to 60000)' if n < NTRAIN else ''}; PetNN on {a.ranks} rank(s)", flush=True)

    # PetNN first (the smallest process), so the children's peak RSS after it is its own
    pn = run_petnn(a, env, n)
    petnn = best_epoch(pn["epoch_times"]) * scale
    prec = "float32" if re.search(r"-nn_precision\s+single", a.petnn_args) else "float64"
    print(f"  PetNN {prec}:   {petnn:8.2f} s/epoch  ({petnn / (NTRAIN / BATCH):.4f} s/batch)", flush=True)
    res = {"threads": a.threads, "ranks": a.ranks, "epochs": a.epochs, "samples_timed": n,
           "petnn_epoch_s": round(petnn, 3), "petnn_peak_rss_mb": pn["peak_rss_mb"] and round(pn["peak_rss_mb"], 1)}
    for dtype in ("float64", "float32"):
        if dtype == "float64" and a.skip_float64:
            continue
        tj = run_torch(a, env, dtype)
        t = best_epoch(tj["epoch_times"]) * scale
        res[f"pytorch_{dtype}_epoch_s"] = round(t, 3)
        res[f"ratio_petnn_over_pytorch_{dtype}"] = round(petnn / t, 3)
        res[f"pytorch_{dtype}_peak_rss_mb"] = round(tj["peak_rss_mb"], 1)
        print(f"  PyTorch {dtype}: {t:8.2f} s/epoch  ({t / (NTRAIN / BATCH):.4f} s/batch)  "
              f"PetNN/PyTorch-{dtype} = {petnn / t:.3f}", flush=True)

    # where PetNN's time goes: -log_view events per layer type, per epoch
    ev = pn["events"]
    total = sum(pn["epoch_times"])
    types = sorted({k[6:] for k in ev if k.startswith(("NNFwd_", "NNBwd_"))},
                   key=lambda t: -(ev.get("NNFwd_" + t, (0, 0, 0))[1] + ev.get("NNBwd_" + t, (0, 0, 0))[1]))
    print("\nPetNN time per layer type (from -log_view, all epochs, max over ranks):")
    print(f"  {'layer type':<18} {'forward s':>10} {'backward s':>11} {'share':>7} {'GFLOP/s':>8} {'nominal':>8}")
    per = {}
    for t in types:
        f = ev.get("NNFwd_" + t, (0, 0.0, 0.0))
        b = ev.get("NNBwd_" + t, (0, 0.0, 0.0))
        secs = f[1] + b[1]
        gf = (f[2] + b[2]) / secs / 1e9 if secs > 0 and f[2] + b[2] > 0 else 0.0
        nom = sum(FLOPS[t]) * n * a.epochs / secs / 1e9 if t in FLOPS and secs > 0 else None
        per[t] = {"forward_s": f[1], "backward_s": b[1], "share": secs / total if total else 0.0,
                  "logged_gflops": gf, "nominal_gflops": nom}
        print(f"  {t:<18} {f[1]:10.3f} {b[1]:11.3f} {100 * secs / total:6.1f}% {gf:8.1f} "
              f"{'%8.1f' % nom if nom else '':>8}")
    for e, what in (("NNOptStep", "optimizer step"), ("NNLoss", "loss"), ("NNDataLoad", "data loading*")):
        if e in ev:
            per[what] = {"seconds": ev[e][1], "share": ev[e][1] / total if total else 0.0}
            print(f"  {what:<18} {ev[e][1]:10.3f} {'':>11} {100 * ev[e][1] / total:6.1f}%")
    print(f"  {'training total':<18} {total:10.3f}   (* includes reading the IDX files at set-up)")
    print("  GFLOP/s: the flops the layers log (what they execute); nominal: direct-convolution/GEMM flops")
    gflop = sum(sum(v) for v in FLOPS.values()) * NTRAIN / 1e9  # per epoch
    res["nominal_gflop_per_epoch"] = round(gflop, 1)
    res["petnn_nominal_gflops"] = round(gflop / petnn, 1)
    for dtype in ("float64", "float32"):
        if f"pytorch_{dtype}_epoch_s" in res:
            res[f"pytorch_{dtype}_nominal_gflops"] = round(gflop / res[f"pytorch_{dtype}_epoch_s"], 1)
    res["petnn_per_layer_type"] = per
    print("\n" + json.dumps({k: v for k, v in res.items() if k != "petnn_per_layer_type"}, indent=1))
    if "ratio_petnn_over_pytorch_float64" in res:
        bar = MODELS[a.model][2]
        print(f"target PetNN/PyTorch-float64 <= {bar}: {'met' if res['ratio_petnn_over_pytorch_float64'] <= bar else 'NOT met'}")
    if a.model == "cnn":
        print(f"target PetNN/PyTorch-float32 <= 1.5: {'met' if res['ratio_petnn_over_pytorch_float32'] <= 1.5 else 'NOT met'}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
