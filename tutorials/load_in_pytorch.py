#!/usr/bin/python3
"""Loads a PetNN checkpoint of the Fashion-MNIST MLP into PyTorch and evaluates it.

Usage: tutorials/load_in_pytorch.py mlp.h5
The checkpoint's datasets are named like PyTorch's state_dict (fc1.weight, fc1.bias, ...), so a
torch module whose attributes carry the PetNN layer names loads it with strict=True.
"""
import gzip, sys
import h5py, numpy as np, torch


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(784, 256)
        self.fc2 = torch.nn.Linear(256, 128)
        self.fc3 = torch.nn.Linear(128, 10)

    def forward(self, x):
        x = torch.relu(self.fc1(x.flatten(1)))
        return self.fc3(torch.relu(self.fc2(x)))


def idx(path):
    data = gzip.open(path).read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * ndim).reshape(dims)


with h5py.File(sys.argv[1], "r") as f:
    state = {k: torch.from_numpy(f[k][()]) for k in f if isinstance(f[k], h5py.Dataset)}
    print("checkpoint after epoch", int(f["training/epoch"][()]), "holds", ", ".join(sorted(state)))
model = MLP().double()
model.load_state_dict(state, strict=True)
d = "/usr/share/datasets/fashion-mnist"
x = torch.tensor(idx(f"{d}/t10k-images-idx3-ubyte.gz"), dtype=torch.float64) / 255.0
y = torch.tensor(idx(f"{d}/t10k-labels-idx1-ubyte.gz"), dtype=torch.long)
with torch.no_grad():
    acc = (model(x).argmax(1) == y).double().mean().item()
print(f"PyTorch test accuracy of the PetNN model: {acc:.4f}")
