#!/usr/bin/python3
"""PetNN vs PyTorch on the Fashion-MNIST MLP (784-256-128-10, ReLU, Adam, batch 128, float64 or float32).

Runs both as child processes on this machine, one after the other, with the same thread count,
and reports seconds per training epoch (best of the epochs after the first), peak resident
memory of each process, the ratio PetNN/PyTorch, and PetNN's GFLOP/s as a fraction of OpenBLAS
dgemm (sgemm in single precision, 2048^3) measured in the same run.

--precision single runs PetNN with -nn_precision single against PyTorch in float32.

Usage: bench/mlp_bench.py [--build build] [--epochs 3] [--threads 2] [--precision double|single]
"""
import argparse, json, os, re, resource, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run_child(cmd, env):
    """Runs cmd, returns (stdout, peak RSS in MB of that child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stdout}\n{p.stderr}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of children is the max over all children so far: run the larger one last or compare
    return p.stdout, max(peak, before) / 1024.0, peak > before


def dgemm_gflops(threads, dtype="float64"):
    import numpy as np
    n = 2048
    a = np.random.rand(n, n).astype(dtype)
    b = np.random.rand(n, n).astype(dtype)
    a @ b
    t = time.perf_counter()
    reps = 3
    for _ in range(reps):
        a @ b
    return 2.0 * n ** 3 * reps / (time.perf_counter() - t) / 1e9


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--precision", choices=["double", "single"], default="double")
    a = p.parse_args()
    dtype = "float32" if a.precision == "single" else "float64"
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(a.threads), OMP_NUM_THREADS=str(a.threads))

    # PetNN first (smaller process), so the children's max RSS after it is PetNN's own peak
    out, petnn_rss, _ = run_child([os.path.join(a.build, "examples", "nnrun"), "-options_file",
                                   os.path.join(ROOT, "examples", "fashion_mlp.opts"),
                                   "-nn_epochs", str(a.epochs), "-test", "0", "-nn_precision", a.precision], env)
    times = [float(m) for m in re.findall(r"time ([0-9.]+) s", out)]
    petnn = min(times[1:]) if len(times) > 1 else times[0]

    out, torch_rss, grew = run_child(["/usr/bin/python3", os.path.join(HERE, "mlp_torch.py"), "--epochs", str(a.epochs),
                                      "--threads", str(a.threads), "--dtype", dtype], env)
    tj = json.loads(out.strip().splitlines()[-1])
    torch_t = tj["epoch_seconds"] if a.epochs == 1 else min(
        float(m) for m in re.findall(r"train time ([0-9.]+) s", out)[1:])
    torch_rss = tj["peak_rss_mb"]

    os.environ["OPENBLAS_NUM_THREADS"] = str(a.threads)
    peak = dgemm_gflops(a.threads, dtype)
    flops = 60000 * (2 * (784 * 256 + 256 * 128 + 128 * 10) * 2 + 2 * (256 * 128 + 128 * 10))
    gf = flops / petnn / 1e9
    res = {"precision": a.precision, "threads": a.threads, "petnn_epoch_s": round(petnn, 3), "pytorch_epoch_s": round(torch_t, 3),
           "time_ratio": round(petnn / torch_t, 3), "petnn_peak_rss_mb": round(petnn_rss, 1),
           "pytorch_peak_rss_mb": round(torch_rss, 1), "memory_ratio": round(petnn_rss / torch_rss, 3),
           "petnn_gflops": round(gf, 1), ("sgemm" if a.precision == "single" else "dgemm") + "_2048_gflops": round(peak, 1),
           "fraction_of_gemm": round(gf / peak, 3)}
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
