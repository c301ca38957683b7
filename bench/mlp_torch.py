#!/usr/bin/python3
"""PyTorch reference for the Fashion-MNIST MLP benchmark (784-256-128-10, ReLU, Adam, batch 128).

Prints one line per epoch and a final JSON summary: seconds per epoch, peak resident memory.
Usage: bench/mlp_torch.py [--epochs N] [--threads T] [--dtype float64|float32]
"""
import argparse, gzip, json, resource, time
import numpy as np
import torch

DIR = "/usr/share/datasets/fashion-mnist"


def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--dtype", default="float64")
    p.add_argument("--batch", type=int, default=128)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    dt = getattr(torch, a.dtype)
    xtr = torch.tensor(idx(f"{DIR}/train-images-idx3-ubyte.gz"), dtype=dt).reshape(-1, 784) / 255.0
    ytr = torch.tensor(idx(f"{DIR}/train-labels-idx1-ubyte.gz"), dtype=torch.long)
    xte = torch.tensor(idx(f"{DIR}/t10k-images-idx3-ubyte.gz"), dtype=dt).reshape(-1, 784) / 255.0
    yte = torch.tensor(idx(f"{DIR}/t10k-labels-idx1-ubyte.gz"), dtype=torch.long)
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 128),
                                torch.nn.ReLU(), torch.nn.Linear(128, 10)).to(dt)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    lossf = torch.nn.CrossEntropyLoss()
    times = []
    for epoch in range(a.epochs):
        t0 = time.perf_counter()
        model.train()
        perm = torch.randperm(xtr.shape[0])
        for s in range(0, xtr.shape[0], a.batch):
            i = perm[s:s + a.batch]
            opt.zero_grad()
            loss = lossf(model(xtr[i]), ytr[i])
            loss.backward()
            opt.step()
        train_t = time.perf_counter() - t0
        model.eval()
        with torch.no_grad():
            acc = sum((model(xte[s:s + 1000]).argmax(1) == yte[s:s + 1000]).sum().item() for s in range(0, 10000, 1000)) / 10000
        times.append(train_t)
        print(f"epoch {epoch + 1}: train time {train_t:.3f} s, test acc {acc:.4f}", flush=True)
    print(json.dumps({"framework": "pytorch", "dtype": a.dtype, "threads": a.threads,
                      "epoch_seconds": min(times), "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


if __name__ == "__main__":
    main()
