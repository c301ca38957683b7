#!/usr/bin/python3
"""Writes bad ONNX models for tests/onnx.c (run with /usr/bin/python3: the onnx package, python3-onnx).

    onnx_bad.py DIR

Each file must fail to load in PetNN with a clear error: corrupt and truncated files, an unsupported
operator, an unsupported opset, a NaN initializer, external data, a shape mismatch and a branching graph.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def mlp(nodes, inits, nin=4, opset=14, out="y"):
    x = helper.make_tensor_value_info("x", TensorProto.DOUBLE, ["N", nin])
    y = helper.make_tensor_value_info(out, TensorProto.DOUBLE, None)
    g = helper.make_graph(nodes, "g", [x], [y], initializer=inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def gemm(name, inp, out, w, b):
    return helper.make_node("Gemm", [inp, name + ".w", name + ".b"], [out], name=name, transB=1), [
        numpy_helper.from_array(w, name + ".w"), numpy_helper.from_array(b, name + ".b")]


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(0)
    w, b = rng.standard_normal((3, 4)), rng.standard_normal(3)
    n, i = gemm("/fc1/Gemm", "x", "y", w, b)
    good = mlp([n], i)
    raw = good.SerializeToString()
    with open(os.path.join(d, "truncated.onnx"), "wb") as f:
        f.write(raw[: len(raw) - 30])
    with open(os.path.join(d, "corrupt.onnx"), "wb") as f:
        f.write(b"\xff\xff\xff\xff not a protobuf at all" * 3)
    n, i = gemm("/fc1/Gemm", "x", "h", w, b)
    onnx.save(mlp([n, helper.make_node("Softplus", ["h"], ["y"], name="/act/Softplus")], i), os.path.join(d, "unsupported.onnx"))
    n, i = gemm("/fc1/Gemm", "x", "y", w, b)
    onnx.save(mlp([n], i, opset=99), os.path.join(d, "opset.onnx"))
    wn = w.copy()
    wn[1, 2] = np.nan
    n, i = gemm("/fc1/Gemm", "x", "y", wn, b)
    onnx.save(mlp([n], i), os.path.join(d, "nan.onnx"))
    n, i = gemm("/fc1/Gemm", "x", "y", w, b)
    m = mlp([n], i)
    t = m.graph.initializer[0]
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", "weights.bin"
    with open(os.path.join(d, "external.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    n, i = gemm("/fc1/Gemm", "x", "y", rng.standard_normal((3, 5)), b)
    onnx.save(mlp([n], i), os.path.join(d, "shape.onnx"))
    n1, i1 = gemm("/fc1/Gemm", "x", "h", w, b)
    n2, i2 = gemm("/fc2/Gemm", "h", "h2", rng.standard_normal((3, 3)), b)
    add = helper.make_node("Add", ["h", "h2"], ["y"], name="/add/Add")
    onnx.save(mlp([n1, n2, add], i1 + i2), os.path.join(d, "branch.onnx"))


if __name__ == "__main__":
    main()
