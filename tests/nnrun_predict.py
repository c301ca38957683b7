#!/usr/bin/env python3
"""nnrun -mode predict: a dense network with known weights (a plain state_dict checkpoint written
here) on samples from an HDF5 file and from a PETSc binary Vec; the predictions nnrun writes (HDF5
dataset "predictions" [N, k], or a binary Vec) must equal W x + b to 1e-12.

    nnrun_predict.py <nnrun>
"""
import os, struct, subprocess, sys
import h5py
import numpy as np

nnrun = sys.argv[1]
rng = np.random.default_rng(7)
N, d, k = 5, 4, 3
x = rng.standard_normal((N, d))
W = rng.standard_normal((k, d))
b = rng.standard_normal(k)
with h5py.File("predict_ckpt.h5", "w") as f:   # a PyTorch-style state_dict: names layer.weight, layer.bias
    f["fc1.weight"] = W
    f["fc1.bias"] = b
with h5py.File("predict_input.h5", "w") as f:
    f["x"] = x
# PETSc's binary files hold PetscInts: 4 or 8 bytes (PETSc configured --with-64-bit-indices), as the test runner says
INT = ">i" if os.environ.get("PETNN_PETSC_INDEX_BITS", "32") == "32" else ">q"
with open("predict_input.dat", "wb") as f:      # a PETSc binary Vec: class id, length, big-endian doubles
    f.write(struct.pack(INT, 1211214) + struct.pack(INT, N * d) + struct.pack(f">{N * d}d", *x.ravel()))

net = ["-nn_input_shape", str(d), "-nn_layers", "fc1", "-fc1_type", "dense", "-fc1_units", str(k),
       "-nn_loss", "mse", "-load", "predict_ckpt.h5", "-mode", "predict"]
expect = x @ W.T + b
ok = True
for inp, out in [("predict_input.h5", "predictions.h5"), ("predict_input.dat", "predictions.dat")]:
    p = subprocess.run([nnrun] + net + ["-predict_input", inp, "-predict_output", out],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(p.stdout.strip())
    if p.returncode:
        print(f"nnrun failed with exit code {p.returncode}")
        sys.exit(1)
    if out.endswith(".h5"):
        with h5py.File(out, "r") as f:
            y = np.array(f["predictions"])
    else:
        raw = open(out, "rb").read()
        # PETSc's binary Vec: class id and length (PetscInts), the values
        isize = struct.calcsize(INT)
        (n,) = struct.unpack(INT, raw[isize:2 * isize])
        y = np.array(struct.unpack(f">{n}d", raw[2 * isize:2 * isize + 8 * n])).reshape(N, k)
    err = np.abs(y.reshape(N, k) - expect).max()
    shape = "x".join(str(s) for s in y.shape)
    good = y.size == N * k and err <= 1e-12
    ok &= good
    print(f"{inp} -> {out}: {N} samples, predictions of shape {shape}: {'equal W x + b' if good else 'WRONG (max error %g)' % err}")
# a file that is not a whole number of samples is refused with a clear error
with h5py.File("predict_bad.h5", "w") as f:
    f["x"] = rng.standard_normal(7)
p = subprocess.run([nnrun] + net + ["-predict_input", "predict_bad.h5"], stdout=subprocess.PIPE,
                   stderr=subprocess.STDOUT, text=True)
msg = [l for l in p.stdout.splitlines() if "not a whole number of samples" in l]
print("7 values for samples of 4:", "clear error" if p.returncode and msg else "NO ERROR")
ok &= bool(p.returncode and msg)
sys.exit(0 if ok else 1)
