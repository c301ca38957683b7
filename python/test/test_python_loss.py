"""Losses written in Python (numpy): registered by name, selected by option or call, checked against the C
losses they re-implement and against finite differences, and their errors reported."""
import numpy as np
import pytest
from petsc4py import PETSc

from petnn4py import PetNN


class MSE:
    """mean over all entries of (y - t)^2, as the C "mse"."""
    classification = False

    def eval(self, y, t, dy):
        d = y - t
        if dy is not None:
            dy[...] = 2 * d / d.size
        return float(np.sum(d * d) / d.size)


class SoftmaxCrossEntropy:
    """mean over the batch of -log softmax(y)[label], as the C "cross_entropy"."""
    classification = True

    def eval(self, y, t, dy):
        labels = t.astype(int)
        z = y - y.max(axis=1, keepdims=True)
        p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
        n = y.shape[0]
        if dy is not None:
            dy[...] = p / n
            dy[np.arange(n), labels] -= 1.0 / n
        return float(-np.log(p[np.arange(n), labels]).mean())


class Failing(MSE):
    def eval(self, y, t, dy):
        raise FloatingPointError("no loss today")


PetNN.registerLoss("py_mse", MSE())
PetNN.registerLoss("py_ce", SoftmaxCrossEntropy())
PetNN.registerLoss("py_failing", Failing())


def network(comm, loss, units=3):
    net = PetNN.NN().create(comm)
    net.setInputShape((4,))
    net.addLayer("dense", "fc1", units=5)
    net.addLayer("tanh", "t")
    net.addLayer("dense", "fc2", units=units)
    net.setLoss(loss)
    net.setBatchSize(6)
    net.setSeed(4)
    net.setUp()
    return net


def batch(net, classes=None):
    x, t = net.createBatchVecs()
    x.setArray(np.sin(np.arange(x.getSize()) * 0.37))
    if classes:
        t.setArray(np.arange(t.getSize()) % classes)
    else:
        t.setArray(np.cos(np.arange(t.getSize()) * 0.21))
    return x, t


@pytest.mark.parametrize("py,c,classes", [("py_mse", "mse", None), ("py_ce", "cross_entropy", 3)])
def test_same_as_the_c_loss(comm, py, c, classes):
    a, b = network(comm, py), network(comm, c)
    assert a.getLoss() == py
    xa, ta = batch(a, classes)
    la = a.lossGradient(6, xa, ta)
    lb = b.lossGradient(6, xa, ta)
    ga, gb = a.getGradient().getArray(readonly=True), b.getGradient().getArray(readonly=True)
    # the same formulas in another order of operations: a few roundings of the loss's own arithmetic
    assert abs(la - lb) <= 1e-14 * max(1, abs(lb))
    assert np.max(np.abs(ga - gb)) <= 1e-14 * max(1, np.max(np.abs(gb)))


def test_finite_differences(comm):
    net = network(comm, "py_ce")
    x, t = batch(net, 3)
    ep, ei = net.gradientCheck(6, x, t, 1e-6)
    assert ep < 1e-6 and ei < 1e-6


def test_selected_by_option(comm):
    opts = PETSc.Options()
    opts["py3_nn_loss"] = "py_mse"
    try:
        net = PetNN.NN().create(comm)
        net.setOptionsPrefix("py3_")
        net.setInputShape((2,))
        net.addLayer("dense", "fc", units=2)
        net.setFromOptions()
        net.setUp()
        assert net.getLoss() == "py_mse"
    finally:
        opts.delValue("py3_nn_loss")


def test_loss_exception_is_the_cause(comm):
    net = network(comm, "py_failing")
    x, t = batch(net)
    with pytest.raises(PETSc.Error) as e:
        net.lossGradient(6, x, t)
    assert isinstance(e.value.__cause__, FloatingPointError)
    assert "Python loss py_failing: eval() raised FloatingPointError: no loss today" in str(e.value)
