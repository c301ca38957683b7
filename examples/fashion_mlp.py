#!/usr/bin/python3
"""Train the Fashion-MNIST MLP from Python: the twin of `nnrun -options_file examples/fashion_mlp.opts`.

The same options file configures the network, the optimizer and the data; the script makes the calls
examples/nnrun.c makes, so both runs do the same arithmetic in the same library and print the same bits.

    python3 examples/fashion_mlp.py -options_file examples/fashion_mlp.opts [-nn_epochs 3]
    build/examples/nnrun -options_file examples/fashion_mlp.opts [-nn_epochs 3]      (the C run)

Extra option: -time (print the wall time of NN.train()).
"""
import sys
import time

import petnn4py

petnn4py.init(sys.argv)
from petsc4py import PETSc  # noqa: E402

from petnn4py import PetNN  # noqa: E402


def data_set(prefix, split=None):
    d = PetNN.Data().create()
    d.setOptionsPrefix(prefix)
    if split:  # held-out data: IDX's t10k split unless the options say otherwise, as nnrun does
        d.setType("idx")
        d.setSplit(split)
    d.setFromOptions()
    return d


net = PetNN.NN().create()
net.setFromOptions()
train = data_set("train_")
test = data_set("test_", "t10k")
if not net.getInputShape():
    net.setInputShape(train.getSampleShape())
net.setUp()
t0 = time.perf_counter()
net.train(train, test)
elapsed = time.perf_counter() - t0
loss, acc = net.evaluate(test)
PETSc.Sys.Print("Final test loss %.4f, test accuracy %.4f" % (loss, acc))
if PETSc.Options().getBool("time", False):
    PETSc.Sys.Print("NN.train() took %.3f s" % elapsed)
