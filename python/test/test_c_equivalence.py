"""A network built in Python by calls and the same network from an options file in C (examples/nnrun) give
bitwise the same loss, gradients and checkpoints: the same binary does the same arithmetic. Numpy arrays
(Data.fromArrays) and the HDF5 file they were written to train to the same bits too."""
import os
import subprocess

import numpy as np
import pytest

from petnn4py import PetNN

from conftest import clean_env

h5py = pytest.importorskip("h5py")

OPTIONS = """
-nn_layers fc1,relu1,fc2
-fc1_type dense
-fc1_units 16
-relu1_type relu
-fc2_type dense
-fc2_units 3
-nn_loss cross_entropy
-nn_batch_size 16
-nn_epochs 3
-nn_seed 5
-opt_type adam
-opt_learning_rate 1e-2
"""


def python_network(comm, batch=16):
    net = PetNN.NN().create(comm)
    net.setInputShape((8,))
    net.addLayer("dense", "fc1", units=16)
    net.addLayer("relu", "relu1")
    net.addLayer("dense", "fc2", units=3)
    net.setLoss("cross_entropy")
    net.setBatchSize(batch)
    net.setEpochs(3)
    net.setSeed(5)
    opt = net.getOpt()
    opt.setType("adam")
    opt.setLearningRate(1e-2)
    return net


def h5_equal(a, b):
    """Every dataset and attribute of two HDF5 files, bitwise; returns the names that differ."""
    differ = []
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        names = []
        fa.visit(names.append)
        namesb = []
        fb.visit(namesb.append)
        if sorted(names) != sorted(namesb):
            return ["the list of datasets"]
        for n in names:
            if isinstance(fa[n], h5py.Dataset):
                va, vb = np.asarray(fa[n][()]), np.asarray(fb[n][()])
                if va.shape != vb.shape or va.tobytes() != vb.tobytes():
                    differ.append(n)
        for k in fa.attrs:
            if str(fa.attrs[k]) != str(fb.attrs.get(k)):
                differ.append("attribute " + k)
    return differ


@pytest.fixture
def problem(serial, tmp_path):
    rng = np.random.default_rng(11)
    X = rng.standard_normal((48, 8))
    y = (X[:, 0] + X[:, 1] > 0).astype(float) + (X[:, 2] > 1)
    with h5py.File(tmp_path / "data.h5", "w") as f:
        f.create_dataset("x", data=X)
        f.create_dataset("y", data=y)
    (tmp_path / "net.opts").write_text(OPTIONS)
    return serial, tmp_path, X, y


def nnrun(build, tmp_path, *args):
    r = subprocess.run([os.path.join(build, "examples", "nnrun"), "-options_file", str(tmp_path / "net.opts"), *args],
                       cwd=tmp_path, env=clean_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def test_gradients_bitwise_equal_to_c(comm, problem):
    build, tmp, X, y = problem
    nnrun(build, tmp, "-mode", "grad", "-grad_data_file", str(tmp / "data.h5"), "-grad_output", str(tmp / "grad_c.h5"))
    net = python_network(comm, batch=48)
    net.setUp()
    data = PetNN.Data.fromArrays(X, y, comm)
    data.setUp()
    x, t = net.createBatchVecs()
    data.getBatch(range(48), x, t)
    net.saveGradients(str(tmp / "grad_py.h5"), 48, x, t)
    assert h5_equal(tmp / "grad_c.h5", tmp / "grad_py.h5") == []


def test_training_checkpoints_bitwise_equal_to_c(comm, problem):
    build, tmp, X, y = problem
    nnrun(build, tmp, "-train_data_type", "hdf5", "-train_data_file", str(tmp / "data.h5"), "-test", "0",
          "-nn_checkpoint", str(tmp / "ckpt_c.h5"))
    for name, data in (("file", None), ("arrays", PetNN.Data.fromArrays(X, y, comm))):
        if data is None:
            data = PetNN.Data().create(comm)
            data.setType("hdf5")
            data.setFileName(str(tmp / "data.h5"))
        net = python_network(comm)
        net.getTrainer().setCheckpoint(str(tmp / ("ckpt_%s.h5" % name)))
        net.train(data)
        assert h5_equal(tmp / "ckpt_c.h5", tmp / ("ckpt_%s.h5" % name)) == [], name


def test_fashion_mlp_script_bitwise_equal_to_nnrun(serial, tmp_path):
    """examples/fashion_mlp.py and nnrun on examples/fashion_mlp.opts: the same checkpoint, bit for bit."""
    import sys
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if not os.path.isdir("/usr/share/datasets/fashion-mnist"):
        pytest.skip("no Fashion-MNIST (Debian package dataset-fashion-mnist)")
    args = ["-options_file", os.path.join(src, "examples", "fashion_mlp.opts"), "-nn_epochs", "1",
            "-train_data_max_samples", "6000", "-test_data_max_samples", "1000"]
    outs = []
    for name, cmd in (("py", [sys.executable, os.path.join(src, "examples", "fashion_mlp.py")]),
                      ("c", [os.path.join(serial, "examples", "nnrun")])):
        r = subprocess.run(cmd + args + ["-nn_checkpoint", str(tmp_path / (name + ".h5"))], cwd=tmp_path,
                           env=clean_env(), capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        outs.append([line for line in r.stdout.splitlines() if line.startswith("Final test")])
    assert outs[0] == outs[1] and outs[0]
    assert h5_equal(tmp_path / "py.h5", tmp_path / "c.h5") == []
