#!/usr/bin/python3
"""A learned surrogate of a petsc4py simulation, driven from Python (petnn4py).

The simulation: the Allen-Cahn equation u_t = D lap(u) + u - u^3 on the periodic unit square, a petsc4py
DMDA and TS (backward Euler; Newton-Krylov, matrix-free), the right-hand side in numpy. It generates its own
training data from random smooth initial states. A fully convolutional PetNN network on the simulation's own
DMDA and decomposition learns the increment u(t+dt) - u(t); then it replaces the solver in the time loop,
called with NN.predict() on the TS's own Vecs: no copy on the way in or out (the -zero_copy_check option
counts PETSc's allocations and VecCopy calls across the calls and says so). The C twin of this program is
examples/reaction_diffusion_surrogate.c.

    python3 examples/allen_cahn_surrogate.py [-M 32] [-ntrain 12] [-nn_epochs 20] [-log_view]
    mpiexec -n 2 python3 examples/allen_cahn_surrogate.py -da_processors_x 2 -da_processors_y 1

Options: -M grid points per direction (32), -dt time step (0.5), -diffusion D (1e-3), -ntrain and -ntest
trajectories (12, 2), -nsteps steps per trajectory (8), -nn_epochs (20), -nn_batch_size (8), -filters (16),
-zero_copy_check (with -malloc_debug: PETSc's allocations and VecCopy count around NN.predict),
-check_error <tol> (exit with an error when the held-out one-step error is above tol: the CTest case).
"""
import sys
import time

import numpy as np

import petnn4py

petnn4py.init(sys.argv)
from petsc4py import PETSc  # noqa: E402

from petnn4py import PetNN  # noqa: E402

opts = PETSc.Options()
M = opts.getInt("M", 32)
dt = opts.getReal("dt", 0.5)
D = opts.getReal("diffusion", 1e-3)
ntrain, ntest, nsteps = opts.getInt("ntrain", 12), opts.getInt("ntest", 2), opts.getInt("nsteps", 8)
filters = opts.getInt("filters", 16)
comm = PETSc.COMM_WORLD

# ---------------------------------------------------------------- the simulation
da = PETSc.DMDA().create(dim=2, sizes=(M, M), dof=1, stencil_width=1, stencil_type=PETSc.DMDA.StencilType.STAR,
                         boundary_type=(PETSc.DM.BoundaryType.PERIODIC,) * 2, setup=False, comm=comm)
da.setFromOptions()
da.setUp()
(xs, xe), (ys, ye) = da.getRanges()
Uloc = da.createLocalVec()


def rhs(ts, t, U, F):
    """F = D lap(u) + u - u^3, the 5-point Laplacian on the periodic grid (numpy on the ghosted local array)."""
    da.globalToLocal(U, Uloc)
    u = da.getVecArray(Uloc)
    f = da.getVecArray(F)
    uc = u[xs:xe, ys:ye]
    lap = u[xs - 1:xe - 1, ys:ye] + u[xs + 1:xe + 1, ys:ye] + u[xs:xe, ys - 1:ye - 1] + u[xs:xe, ys + 1:ye + 1] - 4 * uc
    f[xs:xe, ys:ye] = D * M * M * lap + uc - uc**3


ts = PETSc.TS().create(comm)
ts.setDM(da)
ts.setProblemType(PETSc.TS.ProblemType.NONLINEAR)
ts.setType(PETSc.TS.Type.BEULER)
ts.setRHSFunction(rhs, da.createGlobalVec())
ts.setTimeStep(dt)
ts.setMaxSteps(10**9)
ts.setExactFinalTime(PETSc.TS.ExactFinalTime.STEPOVER)
ts.getSNES().setUseMF(True)
ts.setFromOptions()

rng = np.random.default_rng(2026)  # the same states on every rank


def initial_state():
    """Six Gaussian bumps of random sign, centre and width on the periodic square, clipped to [-1, 1]."""
    U = da.createGlobalVec()
    c = (np.arange(M) + 0.5) / M
    v = np.zeros((M, M))
    for cx, cy, a, w in rng.uniform(size=(6, 4)):
        dx, dy = np.abs(c - cx), np.abs(c - cy)
        dx, dy = np.minimum(dx, 1 - dx), np.minimum(dy, 1 - dy)
        s = 0.05 + 0.1 * w
        v += (2 * a - 1) * 1.5 * np.exp(-(dx[:, None] ** 2 + dy[None, :] ** 2) / (2 * s * s))
    da.getVecArray(U)[xs:xe, ys:ye] = np.clip(v, -1, 1)[xs:xe, ys:ye]
    return U


def trajectory(U0, tsolve):
    """nsteps implicit steps from U0: the list of states; adds the time per step to tsolve."""
    states = [U0]
    U = U0.copy()
    for _ in range(nsteps):
        t0 = time.perf_counter()
        ts.setTime(0.0)  # one implicit step from the current state
        ts.setStepNumber(0)
        ts.setMaxSteps(1)
        ts.solve(U)
        tsolve.append(time.perf_counter() - t0)
        states.append(U.copy())
    return states


tsolve = []
train = [trajectory(initial_state(), tsolve) for _ in range(ntrain)]
test = [trajectory(initial_state(), tsolve) for _ in range(ntest)]
pairs = [(s[i], s[i + 1]) for s in train for i in range(nsteps)]

# ---------------------------------------------------------------- the surrogate on the simulation's DMDA
net = PetNN.NN().create(comm)
net.setInputDM(da)
net.setLoss("mse")
net.setBatchSize(8)
net.setEpochs(20)
for name, nf in (("c1", filters), ("c2", filters), ("c3", 1)):
    net.addLayer("conv2d", name, filters=nf, kernel_size=5, periodic=True)
    if name != "c3":
        net.addLayer("tanh", "a" + name[1])
opt = net.getOpt()
opt.setType("adam")
opt.setLearningRate(2e-3)
opt.setSchedule("cosine", 1, 1.0)
net.setFromOptions()
net.setUp()
nb, epochs = net.getBatchSize(), net.getEpochs()

x = net.createInputVec()  # channels-last with the batch in the dof: local [pixel][sample]
t = x.duplicate()
theta, grad = net.getParameters(), net.getGradient()
npix = (xe - xs) * (ye - ys)
perm_rng = np.random.default_rng(7)
for e in range(epochs):
    opt.setEpoch(e, epochs)
    perm = perm_rng.permutation(len(pairs))
    total = 0.0
    for s in range(0, len(pairs), nb):
        idx = perm[s:s + nb]
        xa = x.getArray().reshape(npix, nb)
        ta = t.getArray().reshape(npix, nb)
        xa[:] = 0
        ta[:] = 0
        for k, i in enumerate(idx):
            u0, u1 = pairs[i][0].getArray(readonly=True), pairs[i][1].getArray(readonly=True)
            xa[:, k] = u0
            ta[:, k] = u1 - u0
        loss = net.lossGradient(len(idx), x, t)
        opt.step(theta, grad)
        total += loss * len(idx)
    if e % 10 == 9 or e == epochs - 1:
        PETSc.Sys.Print("epoch %3d: training loss %.4e" % (e + 1, total / len(pairs)), comm=comm)

# ---------------------------------------------------------------- the surrogate in the time loop
net.setBatchSize(1)
net.setUp()
U, dU = da.createGlobalVec(), da.createGlobalVec()


def surrogate_step(U):
    net.predict(U, dU)  # the TS's own Vecs, read and written in place
    U.axpy(1.0, dU)


if opts.getBool("zero_copy_check", False):
    PETSc.Log.begin()  # event counts
    copy_event = PETSc.Log.Event("VecCopy")
    test[0][0].copy(U)
    surrogate_step(U)  # the first call sets up what later calls reuse
    m0, c0 = PetNN.mallocUsage(), copy_event.getPerfInfo()["count"]
    for _ in range(3):
        surrogate_step(U)
    m1, c1 = PetNN.mallocUsage(), copy_event.getPerfInfo()["count"]
    PETSc.Sys.Print("Zero-copy check: 3 calls of NN.predict on the TS's Vecs allocated %d bytes and made %d VecCopy calls"
                    % (m1 - m0, c1 - c0), comm=comm)

num = den = 0.0
for s in test:
    for i in range(nsteps):
        s[i].copy(U)
        surrogate_step(U)
        num += (U - s[i + 1]).norm() ** 2
        den += s[i + 1].norm() ** 2
one_step = np.sqrt(num / den)
PETSc.Sys.Print("Held-out one-step relative L2 error: %.3e" % one_step, comm=comm)
num = den = 0.0
tnet = []
for s in test:
    s[0].copy(U)
    for i in range(nsteps):
        t0 = time.perf_counter()
        surrogate_step(U)
        tnet.append(time.perf_counter() - t0)
    num += (U - s[nsteps]).norm() ** 2
    den += s[nsteps].norm() ** 2
PETSc.Sys.Print("Held-out %d-step rollout with the surrogate in the time loop: relative L2 error %.3e" % (nsteps, np.sqrt(num / den)), comm=comm)
PETSc.Sys.Print("Time per step: implicit solver (TS.solve) %.3e s, surrogate (NN.predict) %.3e s"
                % (np.median(tsolve), np.median(tnet)), comm=comm)
tol = opts.getReal("check_error", 0.0)
if tol > 0:
    PETSc.Sys.Print("One-step error below %g: %s" % (tol, "PASS" if one_step <= tol else "FAIL"), comm=comm)
    if one_step > tol:
        sys.exit(1)
