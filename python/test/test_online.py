"""Online training from Python: NN.trainStep on the caller's batches equals NN.train on the same batches bitwise,
and a replay buffer filled with Data.push trains through NN.trainStepBuffer."""
import numpy as np
from petsc4py import PETSc

from petnn4py import PetNN


def network(comm, batch):
    net = PetNN.NN().create(comm)
    net.setInputShape((4,))
    net.addLayer("dense", "fc1", units=8)
    net.addLayer("tanh", "t")
    net.addLayer("dense", "fc2", units=2)
    net.setLoss("mse")
    net.setBatchSize(batch)
    net.setSeed(11)
    net.getOpt().setType("adam")
    net.getTrainer().setShuffle(False)
    return net


def test_train_step_equals_train(comm):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 4))
    Y = np.stack([np.sin(X[:, 0]), X[:, 1] * X[:, 2]], axis=1)
    data = PetNN.Data.fromArrays(X, Y, comm)
    a = network(comm, 8)
    a.setEpochs(2)
    a.train(data)
    b = network(comm, 8)
    b.getTrainer().setStepsPerEpoch(5)
    b.setUp()
    x, t = b.createBatchVecs()
    for epoch in range(2):
        for s in range(5):
            data.getBatch(range(8 * s, 8 * s + 8), x, t)
            b.trainStep(x, t)
    assert np.array_equal(a.parameters.getArray(readonly=True), b.parameters.getArray(readonly=True))
    for o in (x, t, a, b, data):
        o.destroy()


def test_replay_buffer(comm):
    buf = PetNN.Data().create(PETSc.COMM_SELF)
    buf.setType("buffer")
    buf.setBufferCapacity(16)
    buf.setBufferSeed(5)
    net = network(PETSc.COMM_SELF, 4)
    net.setUp()
    net.setTrainBuffer(buf)
    x, y = PETSc.Vec().createSeq(4, comm=PETSc.COMM_SELF), PETSc.Vec().createSeq(2, comm=PETSc.COMM_SELF)
    for k in range(20):
        x.setArray(np.cos(np.arange(4) + k))
        y.setArray(np.sin(np.arange(2) + k))
        buf.push(x, y)
    assert buf.getBufferCapacity() == 16 and buf.getBufferCount() == (16, 20)
    losses = [net.trainStepBuffer() for _ in range(30)]
    assert all(np.isfinite(losses)) and losses[-1] < losses[0]
    for o in (x, y, net, buf):
        o.destroy()
