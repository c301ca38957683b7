"""A PyTorch MLP exported with torch.onnx.export runs in PetNN through NN.loadONNX and matches PyTorch's output."""
import numpy as np
import pytest
from petsc4py import PETSc

from petnn4py import PetNN

torch = pytest.importorskip("torch")


def test_torch_mlp_through_onnx(comm, tmp_path_factory):
    if comm.getSize() > 1:
        pytest.skip("one rank: every rank would write the file")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 3)).double().eval()
    path = str(tmp_path_factory.mktemp("onnx") / "mlp.onnx")
    torch.onnx.export(model, torch.zeros(1, 5, dtype=torch.float64), path, opset_version=14,
                      input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "n"}, "y": {0: "n"}})
    net = PetNN.NN().create(PETSc.COMM_SELF)
    try:
        net.loadONNX(path)
    except PETSc.Error as e:
        if "PETNN_WITH_ONNX" in str(e) or "without ONNX" in str(e):
            pytest.skip("PetNN built without ONNX")
        raise
    net.setBatchSize(4)
    net.setUp()
    X = np.linspace(-1, 1, 4 * 5).reshape(4, 5)
    Y = net.predictArray(X)
    ref = model(torch.from_numpy(X)).detach().numpy()
    assert np.max(np.abs(Y - ref)) <= 1e-14 * max(1, np.max(np.abs(ref)))
    net.destroy()
