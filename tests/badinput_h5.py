#!/usr/bin/env python3
"""Writes the HDF5 files of tests/badinput.c -h5 into <dir>: features of the wrong type (strings)
and rank (6), scalar targets, a group where the features dataset should be, and a checkpoint
of another format version.

    badinput_h5.py <dir>
"""
import os, sys
import h5py
import numpy as np

d = sys.argv[1]
y = np.arange(4) % 3
with h5py.File(os.path.join(d, "bi_string.h5"), "w") as f:
    f["x"] = np.array([b"one", b"two", b"three", b"four"], dtype="S8")
    f["y"] = y
with h5py.File(os.path.join(d, "bi_rank6.h5"), "w") as f:
    f["x"] = np.zeros((4, 1, 1, 1, 1, 4))
    f["y"] = y
with h5py.File(os.path.join(d, "bi_scalar.h5"), "w") as f:
    f["x"] = np.zeros((4, 4))
    f["y"] = 1.0
with h5py.File(os.path.join(d, "bi_format.h5"), "w") as f:   # a checkpoint of a future format
    f.attrs["format"] = "petnn-checkpoint-99"
    f["fc1.weight"] = np.zeros((3, 4))
with h5py.File(os.path.join(d, "bi_group.h5"), "w") as f:
    f.create_group("x")
    f["y"] = y
