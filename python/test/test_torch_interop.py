"""torch tensors and PETSc Vecs share memory through DLPack (petsc4py's Vec.toDLPack/__dlpack__ and
Vec.createWithDLPack): a network reads a tensor and writes another without a copy. PETSc's GitLab issue
#1435 reports torch.utils.dlpack.from_dlpack(vec) crashing after a Cython update; this runs that call."""
import numpy as np
import pytest
from petsc4py import PETSc

from petnn4py import PetNN

torch = pytest.importorskip("torch")
from torch.utils import dlpack  # noqa: E402


def test_parameters_as_a_tensor_without_copy(comm):
    net = PetNN.NN().create(comm)
    net.setInputShape((3,))
    net.addLayer("dense", "fc", units=2)
    net.setUp()
    theta = net.getParameters()
    t = dlpack.from_dlpack(theta)  # the call of issue #1435
    assert t.dtype == torch.float64 and t.numel() == theta.getLocalSize()
    assert t.data_ptr() == theta.getArray(readonly=True).__array_interface__["data"][0]
    t[0] = 5.0  # torch writes the network's parameters
    assert theta.getArray(readonly=True)[0] == 5.0


def test_predict_from_tensor_to_tensor(comm):
    net = PetNN.NN().create(PETSc.COMM_SELF)
    net.setInputShape((4,))
    net.addLayer("dense", "fc1", units=5)
    net.addLayer("tanh", "t")
    net.addLayer("dense", "fc2", units=2)
    net.setBatchSize(3)
    net.setUp()
    X = torch.linspace(-1, 1, 6 * 4, dtype=torch.float64).reshape(6, 4)
    Y = torch.empty(6, 2, dtype=torch.float64)
    # the tensors must outlive the Vecs made on them: createWithDLPack keeps no reference to its tensor
    xv = PETSc.Vec().createWithDLPack(dlpack.to_dlpack(X), comm=PETSc.COMM_SELF)
    yv = PETSc.Vec().createWithDLPack(dlpack.to_dlpack(Y), comm=PETSc.COMM_SELF)
    assert xv.getArray(readonly=True).__array_interface__["data"][0] == X.data_ptr()
    assert yv.getArray(readonly=True).__array_interface__["data"][0] == Y.data_ptr()
    net.predict(xv, yv)
    assert np.array_equal(Y.numpy(), net.predictArray(X.numpy()))
    xv.destroy()
    yv.destroy()
