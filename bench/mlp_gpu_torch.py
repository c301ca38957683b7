#!/usr/bin/env python3
"""PyTorch on a GPU for the MLP and CNN benchmarks of the CUDA device (bench/gpu_session.sh), and their data.

The GPU machine has no Fashion-MNIST, so the data are synthetic with its shapes: 60000 images 1x28x28 with values
in [0, 1) and labels 0..9 from a fixed seed (the times of an epoch do not depend on the values).

  mlp_gpu_torch.py --write DATA.h5                 write the data for PetNN (-train_data_type hdf5: datasets x, y)
  mlp_gpu_torch.py --data DATA.h5 --dtype float64  train the MLP 784-256-128-10 (ReLU, Adam 1e-3, batch 128) on the
                   [--epochs 3] [--resident]       GPU and print seconds per epoch (best after the first) as JSON
                   [--model cnn|odenet]            or the CNN of examples/fashion_cnn.opts, the ODE-Net of fashion_odenet.opts (bench/cnn_bench.py's models,
                                                   in training mode: dropout on)

Each batch is copied to the GPU from host memory, as PetNN uploads it (--resident: the whole set lives on the GPU,
PyTorch's best case). TF32 is off for GEMMs and cuDNN's convolutions (torch.backends.cuda.matmul.allow_tf32 and
torch.backends.cudnn.allow_tf32 = False; PyTorch's default lets cuDNN use TF32) unless --tf32, the counterpart of
PetNN's -nn_cuda_tf32. cuDNN's autotuner stays at PyTorch's default (off).
"""
import argparse, json, os, sys, time

import numpy as np


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--write")
    p.add_argument("--data")
    p.add_argument("--samples", type=int, default=60000)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--resident", action="store_true")
    p.add_argument("--tf32", action="store_true")
    p.add_argument("--model", default="mlp", choices=["mlp", "cnn", "odenet"])
    a = p.parse_args()
    import h5py
    if a.write:
        rng = np.random.default_rng(1)
        with h5py.File(a.write, "w") as f:
            f.create_dataset("x", data=rng.random((a.samples, 1, 28, 28), dtype=np.float32))
            f.create_dataset("y", data=rng.integers(0, 10, a.samples).astype(np.float64))
        return
    import torch
    torch.backends.cuda.matmul.allow_tf32 = a.tf32
    torch.backends.cudnn.allow_tf32 = a.tf32
    torch.manual_seed(1)
    dev = torch.device("cuda")
    dt = getattr(torch, a.dtype)
    with h5py.File(a.data, "r") as f:
        xtr = torch.tensor(np.asarray(f["x"]), dtype=dt).reshape((-1, 784) if a.model == "mlp" else (-1, 1, 28, 28))
        ytr = torch.tensor(np.asarray(f["y"]), dtype=torch.long)
    if a.resident:
        xtr, ytr = xtr.to(dev), ytr.to(dev)
    if a.model in ("cnn", "odenet"):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from cnn_bench import torch_model
        model = torch_model(torch, a.model).to(dev, dt)
    else:
        model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 128),
                                    torch.nn.ReLU(), torch.nn.Linear(128, 10)).to(dev, dt)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    lossf = torch.nn.CrossEntropyLoss()
    times = []
    for epoch in range(a.epochs):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        perm = torch.randperm(xtr.shape[0], device=xtr.device)
        for s in range(0, xtr.shape[0], a.batch):
            i = perm[s:s + a.batch]
            xb, yb = xtr[i].to(dev, non_blocking=False), ytr[i].to(dev)
            opt.zero_grad()
            loss = lossf(model(xb), yb)
            loss.backward()
            opt.step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        print(f"epoch {epoch + 1}: time {times[-1]:.3f} s, last loss {loss.item():.4f}", flush=True)
    best = min(times[1:]) if len(times) > 1 else times[0]
    print(json.dumps({"framework": "pytorch", "model": a.model, "device": torch.cuda.get_device_name(), "torch": torch.__version__, "dtype": a.dtype,
                      "resident": a.resident, "tf32": a.tf32, "epoch_seconds": best}))


if __name__ == "__main__":
    main()
