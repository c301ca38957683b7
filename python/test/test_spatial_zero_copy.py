"""NN.predict on a simulation's own DMDA Vecs: with batch size 1 the network reads the state's array and
writes the prediction's array in place. Shown by pointer identity: Python probe layers (pointwise, so they
run on the DMDA activation) record the addresses of the arrays they are given."""
import numpy as np
from petsc4py import PETSc

from petnn4py import PetNN


class Probe:
    """Identity layer recording the addresses of its input and output arrays."""
    seen = {}

    def setUp(self, layer, inshape):
        return inshape

    def forward(self, layer, x, y, params):
        Probe.seen[layer.getName()] = (x.__array_interface__["data"][0], y.__array_interface__["data"][0])
        y[...] = x

    def backward(self, layer, x, y, dy, dx, params, grads):
        if dx is not None:
            dx[...] = dy


PetNN.registerLayer("py_probe", Probe)


def address(v):
    return v.getArray(readonly=True).__array_interface__["data"][0]


def test_predict_reads_and_writes_the_simulation_vecs(comm):
    da = PETSc.DMDA().create(dim=2, sizes=(12, 10), dof=1, stencil_width=1, comm=comm,
                             boundary_type=(PETSc.DM.BoundaryType.PERIODIC,) * 2, setup=False)
    da.setUp()
    net = PetNN.NN().create(comm)
    net.setInputDM(da)
    net.setBatchSize(1)
    net.addLayer("py_probe", "first")
    net.addLayer("conv2d", "conv", filters=1, kernel_size=3, periodic=True)
    net.addLayer("py_probe", "last")
    net.setLoss("mse")
    net.setUp()
    U, dU = da.createGlobalVec(), da.createGlobalVec()
    U.setArray(np.arange(U.getLocalSize(), dtype=float) * 0.01)
    net.predict(U, dU)
    assert Probe.seen["first"][0] == address(U)  # the network read the state's own array
    assert Probe.seen["last"][1] == address(dU)  # and wrote the prediction into dU's array
    # the same values as through a batch of two (the copying path)
    net2 = PetNN.NN().create(comm)
    net2.setInputDM(da)
    net2.setBatchSize(2)
    net2.addLayer("py_probe", "first")
    net2.addLayer("conv2d", "conv", filters=1, kernel_size=3, periodic=True)
    net2.addLayer("py_probe", "last")
    net2.setLoss("mse")
    net2.setUp()
    net2.getParameters().setArray(net.getParameters().getArray(readonly=True))
    dU2 = da.createGlobalVec()
    net2.predict(U, dU2)
    assert np.array_equal(dU.getArray(readonly=True), dU2.getArray(readonly=True))
    assert dU.norm() > 0
