"""A layer type written in Python (numpy): registered, built from options, checked against finite differences
and the closed form, run in single precision through PetNN's conversions, and its errors reported."""
import numpy as np
import pytest
from petsc4py import PETSc

from petnn4py import PetNN


class Swish:
    """y = x sigmoid(beta x) with a learnable beta per feature (examples/custom_layer.c, in numpy)."""

    def setUp(self, layer, inshape):
        layer.addParameter("beta", (inshape[0],))
        return inshape

    def initialize(self, layer, params):
        params["beta"][:] = 1.0

    def forward(self, layer, x, y, params):
        y[...] = x / (1 + np.exp(-params["beta"] * x))

    def backward(self, layer, x, y, dy, dx, params, grads):
        b = params["beta"]
        s = 1 / (1 + np.exp(-b * x))
        ds = s * (1 - s)
        if dx is not None:
            dx[...] = dy * (s + b * x * ds)
        grads["beta"] += (dy * x * x * ds).sum(axis=0)

    def describe(self):
        return "swish in numpy: y = x sigmoid(beta x)"


class Broken(Swish):
    def forward(self, layer, x, y, params):
        raise ArithmeticError("broken on purpose")


PetNN.registerLayer("py_swish", Swish)
PetNN.registerLayer("py_broken", Broken)


def network(comm, act="py_swish", precision="double"):
    net = PetNN.NN().create(comm)
    net.setInputShape((5,))
    net.addLayer("dense", "fc1", units=6)
    net.addLayer(act, "act")
    net.addLayer("dense", "fc2", units=2)
    net.setLoss("mse")
    net.setBatchSize(4)
    net.setSeed(7)
    net.setPrecision(precision)
    net.setUp()
    return net


def batch(net):
    x, t = net.createBatchVecs()
    x.setArray(np.sin(np.arange(x.getSize()) * 0.7))
    t.setArray(np.cos(np.arange(t.getSize()) * 0.3))
    return x, t


def test_forward_matches_closed_form(comm):
    net = network(comm)
    assert net.getLayer("act").getType() == "py_swish"
    assert net.getLayer("act").getNumParameters() == 6
    net.view()
    X = np.linspace(-2, 2, 3 * 5).reshape(3, 5)
    Y = net.predictArray(X)
    p = net.getParameters().getArray(readonly=True)
    W1, b1 = p[:30].reshape(6, 5), p[30:36]
    beta = p[36:42]
    W2, b2 = p[42:54].reshape(2, 6), p[54:56]
    assert np.array_equal(beta, np.ones(6))
    h = X @ W1.T + b1
    ref = (h / (1 + np.exp(-beta * h))) @ W2.T + b2
    assert np.max(np.abs(Y - ref)) <= 1e-14 * max(1, np.max(np.abs(ref)))


def test_gradients_against_finite_differences(comm):
    net = network(comm)
    net.getLayerParameters("act")[:] = np.linspace(0.5, 1.5, 6)
    x, t = batch(net)
    eparam, einput = net.gradientCheck(4, x, t, 1e-6)
    assert eparam < 1e-6 and einput < 1e-6


def test_single_precision_through_conversions(comm):
    """A type with double passes only runs in single precision through PetNN's boundary conversions."""
    d, s = network(comm), network(comm, precision="single")
    X = np.linspace(-2, 2, 4 * 5).reshape(4, 5)
    Yd, Ys = d.predictArray(X), s.predictArray(X)
    # float rounding of the activations and weights through two 5- and 6-term dot products
    assert np.max(np.abs(Yd - Ys)) <= 40 * 2.0**-24 * max(1, np.max(np.abs(Yd)))


def test_python_exception_becomes_petsc_error(comm):
    net = network(comm, act="py_broken")
    with pytest.raises(PETSc.Error) as e:
        net.predictArray(np.zeros((1, 5)))
    assert isinstance(e.value.__cause__, ArithmeticError)
    assert "Python layer act: forward() raised ArithmeticError: broken on purpose" in str(e.value)


def test_options_select_python_type(comm):
    opts = PETSc.Options()
    opts["py2_nn_layers"] = "fc,act"
    opts["py2_fc_type"] = "dense"
    opts["py2_fc_units"] = 3
    opts["py2_act_type"] = "py_swish"
    try:
        net = PetNN.NN().create(comm)
        net.setOptionsPrefix("py2_")
        net.setInputShape((2,))
        net.setFromOptions()
        net.setUp()
        assert net.getLayer("act").getType() == "py_swish"
        assert net.getOutputShape() == (3,)
    finally:
        for k in ("nn_layers", "fc_type", "fc_units", "act_type"):
            opts.delValue("py2_" + k)
