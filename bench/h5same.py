#!/usr/bin/python3
"""Exit 0 when two HDF5 files hold the same datasets with bitwise-identical contents, else print
the first difference and exit 1:  h5same.py a.h5 b.h5"""
import sys
import h5py
import numpy as np


def datasets(f):
    out = {}
    f.visititems(lambda name, obj: out.__setitem__(name, obj[()]) if isinstance(obj, h5py.Dataset) else None)
    return out


a, b = (datasets(h5py.File(p, "r")) for p in sys.argv[1:3])
if a.keys() != b.keys():
    print("different datasets:", sorted(set(a) ^ set(b)))
    sys.exit(1)
for k in sorted(a):
    x, y = np.asarray(a[k]), np.asarray(b[k])
    if x.shape != y.shape or x.dtype != y.dtype or x.tobytes() != y.tobytes():
        print("dataset differs:", k)
        sys.exit(1)
sys.exit(0)
