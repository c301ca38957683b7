"""The classes: creation from calls and from options, views, errors, zero-copy Vecs and arrays, clean destruction."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from petsc4py import PETSc

from petnn4py import PetNN

from conftest import clean_env


def mlp(comm, prefix=None, batch=5):
    net = PetNN.NN().create(comm)
    if prefix:
        net.setOptionsPrefix(prefix)
    net.setInputShape((4,))
    net.addLayer("dense", "fc1", units=6)
    net.addLayer("tanh", "t1")
    net.addLayer("dense", "fc2", units=3, bias=False)
    net.setLoss("mse")
    net.setBatchSize(batch)
    net.setSeed(3)
    return net


def test_build_view_shapes(comm):
    net = mlp(comm)
    net.setUp()
    assert net.getOutputShape() == (3,)
    assert net.getNumParameters() == 4 * 6 + 6 + 6 * 3
    assert [l.getName() for l in net.getLayers()] == ["fc1", "t1", "fc2"]
    assert net.getLayer("fc2").getType() == "dense"
    assert isinstance(net, PETSc.Object) and net.getClassName() == "NN"
    net.view()
    net.destroy()


def test_options_reach_layers(comm):
    opts = PETSc.Options()
    opts["py1_nn_layers"] = "flat,fc1,act"
    opts["py1_flat_type"] = "flatten"
    opts["py1_fc1_type"] = "dense"
    opts["py1_fc1_units"] = 7
    opts["py1_act_type"] = "leaky_relu"
    opts["py1_nn_batch_size"] = 2
    opts["py1_nn_loss"] = "mse"
    try:
        net = PetNN.NN().create(comm)
        net.setOptionsPrefix("py1_")
        net.setInputShape((2, 3))
        net.setFromOptions()
        net.setUp()
        assert net.getOptionsPrefix() == "py1_"
        assert net.getOutputShape() == (7,)
        assert net.getLayer("fc1").getOptionsPrefix() == "py1_fc1_"
        assert net.getBatchSize() == 2
    finally:
        for k in ("nn_layers", "flat_type", "fc1_type", "fc1_units", "act_type", "nn_batch_size", "nn_loss"):
            opts.delValue("py1_" + k)


def test_errors_raise_petsc_error(comm):
    net = PetNN.NN().create(comm)
    with pytest.raises(PETSc.Error) as e:
        net.addLayer("no_such_type", "z")
    assert "Unknown layer type \"no_such_type\"" in str(e.value)
    assert "dense" in str(e.value)  # the valid types are listed
    data = PetNN.Data().create(comm)
    data.setType("hdf5")
    data.setFileName("/nonexistent/file.h5")
    with pytest.raises(PETSc.Error) as e:
        data.setUp()
    assert "/nonexistent/file.h5" in str(e.value)
    with pytest.raises(TypeError):
        mlp(comm).addLayer("dense", "fc9", no_such_option=3)


def test_vecs_and_views_without_copies(comm):
    net = mlp(comm)
    net.setUp()
    theta = net.getParameters()
    assert theta.handle == net.parameters.handle  # the network's own Vec, not a copy
    w = net.getLayerParameters("fc1")
    assert w.shape == (4 * 6 + 6,)
    assert np.shares_memory(w, net.getLayer("fc1").getParameters())
    before = theta.getArray(readonly=True)[0]
    w[0] = 42.0  # the view writes the network's parameters
    assert theta.getArray(readonly=True)[0] == 42.0
    w[0] = before
    x, t = net.createBatchVecs()
    x.setRandom()
    t.setRandom()
    loss = net.lossGradient(5, x, t)
    g = net.getLayerGradient("fc2")
    assert g.shape == (18,) and not g.flags.writeable
    assert np.array_equal(g, net.getGradient().getArray(readonly=True)[30:48])
    assert loss > 0


def test_predict_on_vecs_and_arrays(comm):
    net = mlp(comm)
    net.setUp()
    X = np.linspace(-1, 1, 7 * 4).reshape(7, 4)
    Y = net.predictArray(X)
    assert Y.shape == (7, 3)
    xv = PETSc.Vec().createWithArray(X.reshape(-1), comm=PETSc.COMM_SELF)
    yv = PETSc.Vec().createSeq(21, comm=PETSc.COMM_SELF)
    net.predict(xv, yv)
    assert np.array_equal(yv.getArray(readonly=True), Y.reshape(-1))
    with pytest.raises(TypeError):
        net.predictArray(X.astype(np.float32))


def test_train_from_arrays(comm):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 4))
    y = np.tanh(X @ rng.standard_normal((4, 3)))
    data = PetNN.Data.fromArrays(X, y, comm)
    assert data.getType() == "array"
    data.setUp()
    assert data.getNumSamples() == 40 and data.getSampleShape() == (4,) and data.getTargetSize() == 3
    net = mlp(comm, batch=8)
    net.setEpochs(30)
    net.getOpt().setType("adam")
    net.getOpt().setLearningRate(1e-2)
    losses = []
    net.getTrainer().monitorSet(lambda n, epoch, step, loss: losses.append(loss))
    l0, acc = net.evaluate(data)
    net.train(data)
    l1, _ = net.evaluate(data)
    assert acc == -1 and l1 < 0.5 * l0
    assert len(losses) == 30 * 5
    assert net.getTrainer().getProgress()[0] == 30
    assert net.getOpt().getNumSteps() == 150


def test_monitor_exception_is_the_cause(comm):
    X = np.ones((8, 4))
    data = PetNN.Data.fromArrays(X, np.zeros((8, 3)), comm)
    net = mlp(comm, batch=4)
    net.setEpochs(1)

    def monitor(n, epoch, step, loss):
        raise ValueError("stop here")

    net.getTrainer().monitorSet(monitor)
    with pytest.raises(PETSc.Error) as e:
        net.train(data)
    assert isinstance(e.value.__cause__, ValueError)
    assert "stop here" in str(e.value)


def test_checkpoint_roundtrip(comm):
    path = "petnn4py_ckpt.h5"  # in the runner's scratch folder, which every rank shares
    a = mlp(comm)
    a.setUp()
    a.saveCheckpoint(path)
    b = mlp(comm)
    b.setSeed(99)
    b.setUp()
    assert not np.array_equal(a.parameters.getArray(), b.parameters.getArray())
    b.loadCheckpoint(path)
    assert np.array_equal(a.parameters.getArray(), b.parameters.getArray())


def test_no_leaks_over_1000_cycles(comm):
    def cycle():
        net = mlp(comm)
        net.setUp()
        x, t = net.createBatchVecs()
        net.lossGradient(5, x, t)
        data = PetNN.Data.fromArrays(np.zeros((3, 4)), np.zeros(3), comm)
        data.setUp()
        for o in (x, t, data, net):
            o.destroy()

    for _ in range(5):
        cycle()
    m0 = PetNN.mallocUsage()
    for _ in range(1000):
        cycle()
    assert PetNN.mallocUsage() == m0


def test_malloc_dump_clean(serial, tmp_path):
    """A script that creates and drops objects leaves nothing for -malloc_dump at PetscFinalize."""
    script = tmp_path / "dump.py"
    script.write_text(textwrap.dedent("""
        import sys, numpy as np, petnn4py
        petnn4py.init([sys.argv[0], "-malloc_dump"])
        from petnn4py import PetNN
        net = PetNN.NN().create()
        net.setInputShape((3,)); net.addLayer("dense", "fc", units=2); net.setLoss("mse"); net.setBatchSize(2)
        data = PetNN.Data.fromArrays(np.ones((4, 3)), np.ones((4, 2)))
        net.setEpochs(1); net.train(data)
        del net, data
        print("done")
    """))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=clean_env())
    assert r.returncode == 0, r.stderr
    assert "done" in r.stdout
    assert "unfreed" not in (r.stdout + r.stderr).lower(), r.stdout + r.stderr


def test_view_from_options_and_log_events(tmp_path):
    """viewFromOptions (petsc4py's, through NNView) and PetNN's -log_view events, as for PETSc's objects."""
    net = PetNN.NN().create(PETSc.COMM_SELF)
    net.setInputShape((3,))
    net.addLayer("dense", "fc", units=2)
    net.setUp()
    path = str(tmp_path / "view.txt")
    opts = PETSc.Options()
    opts["petnn4py_test_view"] = "ascii:" + path
    try:
        net.viewFromOptions("-petnn4py_test_view")
    finally:
        opts.delValue("petnn4py_test_view")
    text = open(path).read()
    assert "fc: dense (3) -> (2), 8 parameters" in text
    PETSc.Log.begin()
    event = PETSc.Log.Event("NNForward")
    before = event.getPerfInfo()["count"]
    x, t = net.createBatchVecs()
    net.forward(1, x)
    assert event.getPerfInfo()["count"] == before + 1
    net.destroy()
