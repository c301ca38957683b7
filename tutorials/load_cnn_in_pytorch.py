#!/usr/bin/python3
"""Loads a PetNN checkpoint of the Fashion-MNIST CNN (examples/fashion_cnn.opts) into PyTorch and evaluates it.

Usage: tutorials/load_cnn_in_pytorch.py cnn.h5 [--float32] [--save cnn.pt]

The checkpoint's datasets are named like PyTorch's state_dict (conv1.weight [32,1,5,5], conv1.bias
[32], conv2.weight [64,32,5,5], fc1.weight [1024,3136], fc2.weight [10,1024], ...). A
torch.nn.Sequential whose modules carry the PetNN layer names (the layers without parameters
included) loads it with strict=True: to_spatial is the identity, spatial_flatten flattens
(C,H,W) in PyTorch's order. --float32 evaluates the model converted to single precision, --save
writes an ordinary PyTorch state_dict file.
"""
import argparse
import collections
import gzip

import h5py
import numpy as np
import torch


def cnn():
    nn = torch.nn
    return nn.Sequential(collections.OrderedDict([
        ("sp", nn.Identity()),                          # to_spatial: (1,28,28) -> DMDA layout
        ("conv1", nn.Conv2d(1, 32, 5, padding=2)),
        ("relu1", nn.ReLU()),
        ("pool1", nn.MaxPool2d(2)),
        ("conv2", nn.Conv2d(32, 64, 5, padding=2)),
        ("relu2", nn.ReLU()),
        ("pool2", nn.MaxPool2d(2)),
        ("flat", nn.Flatten()),                         # spatial_flatten: (64,7,7) -> 3136
        ("fc1", nn.Linear(3136, 1024)),
        ("relu3", nn.ReLU()),
        ("drop", nn.Dropout(0.5)),
        ("fc2", nn.Linear(1024, 10)),
    ]))


def idx(path):
    data = gzip.open(path).read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoint")
    ap.add_argument("--float32", action="store_true", help="evaluate in single precision")
    ap.add_argument("--save", help="write the state_dict with torch.save")
    a = ap.parse_args()
    with h5py.File(a.checkpoint, "r") as f:
        # top-level datasets are the state_dict; optimizer/, rng/ and training/ are groups
        state = {k: torch.from_numpy(np.array(f[k][()])) for k in f if isinstance(f[k], h5py.Dataset)}
        epoch = int(f["training/epoch"][()]) if "training/epoch" in f else 0
    print("checkpoint after epoch", epoch, "holds", ", ".join(sorted(state)))
    dt = torch.float32 if a.float32 else torch.float64
    model = cnn().double()
    model.load_state_dict(state, strict=True)
    model = model.to(dt).eval()
    d = "/usr/share/datasets/fashion-mnist"
    x = (torch.tensor(idx(f"{d}/t10k-images-idx3-ubyte.gz"), dtype=dt) / 255.0).reshape(-1, 1, 28, 28)
    y = torch.tensor(idx(f"{d}/t10k-labels-idx1-ubyte.gz"), dtype=torch.long)
    with torch.no_grad():
        correct = sum((model(x[s:s + 1000]).argmax(1) == y[s:s + 1000]).sum().item() for s in range(0, len(y), 1000))
    print(f"PyTorch ({'float32' if a.float32 else 'float64'}) test accuracy of the PetNN model: {correct / len(y):.4f}")
    if a.save:
        torch.save(model.state_dict(), a.save)
        print("wrote", a.save)


if __name__ == "__main__":
    main()
