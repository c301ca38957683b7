#!/usr/bin/python3
"""PyTorch cross-check of ONNX import (run with /usr/bin/python3: torch, numpy; not the onnx package).

    onnx_torch.py path/to/tests/onnx [--count 8]

Builds random PyTorch MLPs (Linear with and without bias, ReLU, Tanh, Sigmoid, LeakyReLU, Dropout,
Identity, Flatten of image-shaped inputs), exports each with torch.onnx.export (opset 13 and 14, in
float64 and in float32), runs the model with PetNN (tests/onnx -nn_onnx model.onnx, double precision) and
compares with PyTorch's own output: <= 1e-12 for float64 models, <= 1e-5 for float32 models (PyTorch in
float32, PetNN in double with the float weights). LeakyReLU's slope is a float attribute in ONNX, so the
slopes drawn here are floats. Prints one stable line per model; exit status 0 when all agree.
"""

import argparse
import os
import subprocess
import sys

import numpy as np
import torch


def random_mlp(rng, k):
    image = k % 3 == 2
    shape = (int(rng.integers(1, 3)), int(rng.integers(2, 5)), int(rng.integers(2, 5))) if image else (int(rng.integers(2, 9)),)
    layers = [torch.nn.Flatten()] if image else []
    n = int(np.prod(shape))
    for d in range(int(rng.integers(1, 4))):
        m = int(rng.integers(2, 12))
        layers.append(torch.nn.Linear(n, m, bias=bool(k % 4 != 3 or d > 0)))
        act = int(rng.integers(0, 6))
        layers.append([torch.nn.ReLU(), torch.nn.Tanh(), torch.nn.Sigmoid(), torch.nn.LeakyReLU(float(np.float32(rng.uniform(0.01, 0.3)))),
                       torch.nn.Dropout(0.5), torch.nn.Identity()][act])
        n = m
    layers.append(torch.nn.Linear(n, int(rng.integers(1, 5))))
    return torch.nn.Sequential(*layers), shape


def main():
    p = argparse.ArgumentParser()
    p.add_argument("exe")
    p.add_argument("--count", type=int, default=8)
    a = p.parse_args()
    torch.manual_seed(0)
    rng = np.random.default_rng(1)
    worst = {torch.float64: 0.0, torch.float32: 0.0}
    ok = True
    for k in range(a.count):
        net, shape = random_mlp(rng, k)
        net.eval()
        for dtype, opset in ((torch.float64, 13 + k % 2), (torch.float32, 14 - k % 2)):
            model = net.to(dtype)
            nb = 5
            x = torch.randn((nb,) + shape, dtype=torch.float64)
            with torch.no_grad():
                ref = model(x.to(dtype)).double().numpy()
            f = "onnx_mlp%d_%s.onnx" % (k, "f64" if dtype == torch.float64 else "f32")
            torch.onnx.export(model, x[:1].to(dtype), f, opset_version=opset, input_names=["x"], output_names=["y"],
                              dynamic_axes={"x": {0: "N"}, "y": {0: "N"}})
            x.numpy().astype("<f8").tofile("onnx_x.bin")
            r = subprocess.run([a.exe, "-nn_onnx", f, "-input", "onnx_x.bin", "-n", str(nb), "-output", "onnx_y.bin"],
                               capture_output=True, text=True)
            if r.returncode:
                print("mlp %d %s opset %d: PetNN failed\n%s%s" % (k, f, opset, r.stdout, r.stderr))
                ok = False
                continue
            y = np.fromfile("onnx_y.bin", dtype="<f8").reshape(ref.shape)
            err = float(np.max(np.abs(y - ref)) / max(1.0, float(np.max(np.abs(ref)))))
            tol = 1e-12 if dtype == torch.float64 else 1e-5
            worst[dtype] = max(worst[dtype], err)
            good = err <= tol
            ok = ok and good
            print("mlp %d (%s, opset %d, %d layers): %s" % (k, "float64" if dtype == torch.float64 else "float32", opset,
                                                             len(model), "agrees with PyTorch" if good else "DIFFERS %.3e" % err))
    print("worst relative error: float64 %.3e (<= 1e-12), float32 %.3e (<= 1e-5)" % (worst[torch.float64], worst[torch.float32]))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
