#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets: tests/fuzz/<target>/corpus/<name>.

Small valid inputs of each kind, so the fuzzer starts from files the readers accept.
The HDF5, checkpoint and options targets read a small description language (see their sources),
not HDF5 bytes. Run from anywhere: python3 tests/fuzz/make_seeds.py
"""
import gzip, os, struct

here = os.path.dirname(os.path.abspath(__file__))


def put(target, name, data):
    d = os.path.join(here, target, "corpus")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def idx_pair(n, h, w):
    images = struct.pack(">I", 0x803) + struct.pack(">III", n, h, w) + bytes((i * 37) % 256 for i in range(n * h * w))
    labels = struct.pack(">I", 0x801) + struct.pack(">I", n) + bytes(i % 10 for i in range(n))
    return images, labels


# idx: flags, split (little endian), images file, labels file
for n, h, w in [(3, 2, 2), (5, 4, 3), (1, 1, 1)]:
    im, lb = idx_pair(n, h, w)
    split = struct.pack("<H", len(im))
    put("idx", f"raw_{n}x{h}x{w}", b"\x00" + split + im + lb)
    put("idx", f"gz_{n}x{h}x{w}", b"\x03" + split + im + lb)
    # already compressed bytes: the reader sees a gzip stream written by gzip itself
    gim, glb = gzip.compress(im), gzip.compress(lb)
    put("idx", f"pregz_{n}x{h}x{w}", b"\x00" + struct.pack("<H", len(gim)) + gim + glb)

# binary: PETSc binary format (big endian int32 header, big endian doubles)
MAT, VEC = 1211216, 1211214


def vec(vals):
    return struct.pack(">ii", VEC, len(vals)) + struct.pack(f">{len(vals)}d", *vals)


def dense(rows, cols):
    vals = [0.5 * i - 1 for i in range(rows * cols)]
    return struct.pack(">iiii", MAT, rows, cols, -1) + struct.pack(f">{len(vals)}d", *vals)


def aij(rows, cols):
    lens, idx, vals = [], [], []
    for i in range(rows):
        c = [j for j in range(cols) if (i + j) % 2 == 0]
        lens.append(len(c))
        idx += c
        vals += [float(i + j) for j in c]
    return (struct.pack(">iiii", MAT, rows, cols, len(idx)) + struct.pack(f">{rows}i", *lens)
            + struct.pack(f">{len(idx)}i", *idx) + struct.pack(f">{len(vals)}d", *vals))


put("binary", "dense_labels", b"\x00\x00\x00" + dense(4, 3) + vec([0, 1, 2, 1]))
put("binary", "aij_targets", b"\x00\x00\x00" + aij(4, 5) + dense(4, 2))
put("binary", "vec_sample3", b"\x01\x00\x00" + vec([float(i) for i in range(12)]) + vec([1, 2, 3, 4]))
put("binary", "vec_shape123", b"\x02\x00\x00" + vec([float(i) for i in range(12)]) + vec([1, 0]))
feat = dense(3, 4)
put("binary", "two_files", b"\x07" + struct.pack("<H", len(feat)) + feat + vec([0, 1, 0]))

# hdf5: option byte, then edits of the reference file (x [5,3], y [5]): op count, then per op
# kind (0 delete, 1 re-create, 2 refill, 3 attribute, 4 group), name index, arguments
put("hdf5", "reference", b"\x00")
put("hdf5", "max_samples", b"\x01")
put("hdf5", "renamed", b"\x02\x02\x01\x02\x02\x00\x05\x03" + bytes(range(40)) + b"\x01\x03\x01\x00\x05")
put("hdf5", "y_float_2d", b"\x00\x01\x01\x01\x02\x01\x05\x02")
put("hdf5", "x_int_3d_nan", b"\x00\x02\x01\x00\x03\x02\x05\x01\x03\x02\x00" + bytes(30))
put("hdf5", "x_group", b"\x00\x01\x04\x00")

# checkpoint: edits of the reference checkpoint: op count, then kind, name index, arguments
put("checkpoint", "reference", b"\x00")
put("checkpoint", "delete_one", b"\x01\x00\x00")
put("checkpoint", "retype_one", b"\x01\x01\x01\x02\x01\x03\x02")
put("checkpoint", "refill_nan", b"\x01\x02\x00" + bytes(64))
put("checkpoint", "format_attr", b"\x01\x03\x00\x00\x05other")
put("checkpoint", "group", b"\x02\x04\x03\x01\x05\x01\x00\x02")
