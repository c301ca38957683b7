static char help[] = "Scaling of layer-parallel training: the forward+backward time (NNLossGradient) of a deep ODE block\n"
                     "(a ResNet: forward Euler, per-step parameters, f = tanh(dense w -> w)) followed by a dense classifier,\n"
                     "layer-serial and layer-parallel (MGRIT over all ranks) in exact and one-shot mode, the MGRIT iteration\n"
                     "counts, the propagator calls per rank and level, and a work model that predicts the time on more ranks.\n\n"
                     "  -width <w>        state width (default 64)\n"
                     "  -steps <N>        steps of the block, T = 1 (default 256)\n"
                     "  -batch <n>        samples per batch (default 128)\n"
                     "  -reps <r>         timed forward+backward passes per mode, after one untimed one (default 3)\n"
                     "  -modes <list>     of serial, exact, one_shot (default all three)\n"
                     "  -one_shot_it <k>  MGRIT iterations per solve in one-shot mode (default 1)\n"
                     "  -predict <list>   rank counts the model predicts (default 1,2,16,64,256)\n"
                     "  -model_latency <s>, -model_bandwidth <B/s>   the network of the prediction (default 2e-6 s, 1e10 B/s:\n"
                     "                    an InfiniBand cluster; messages inside one node are cheaper)\n"
                     "The MGRIT options are those of the block: -blk_mgrit_cf, -blk_mgrit_levels, -blk_mgrit_relax, -blk_mgrit_rtol, ...\n"
                     "Timings are wall-clock maxima over the ranks; not a test (they depend on the machine and its load).\n\n";

#include <petnn.h>

#define MAXL 16

typedef struct {
  const char    *name;
  PetscReal      t, tf, ta;         /* seconds per forward+backward, and the block's forward and adjoint parts */
  PetscInt       itf, ita;          /* MGRIT iterations of the last call */
  PetscReal      cf[MAXL], ca[MAXL]; /* propagator calls per call on the busiest rank, per level, forward and adjoint */
  PetscInt       L;                 /* levels in use */
} Measure;

static PetscErrorCode BuildNet(PetscInt w, PetscInt N, PetscInt n, PetscBool parallel, NN *net, NNLayer *blk)
{
  NNLayer l;

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, net));
  PetscCall(NNSetInputShape(*net, 1, &w));
  PetscCall(NNSetBatchSize(*net, n));
  PetscCall(NNSetSeed(*net, 3));
  PetscCall(NNSetLoss(*net, NNLOSSCROSSENTROPY));
  PetscCall(NNAddLayer(*net, NNLAYERODE, "blk", blk));
  PetscCall(NNLayerODEAddLayer(*blk, NNLAYERDENSE, "f1", &l));
  PetscCall(NNLayerDenseSetUnits(l, w));
  PetscCall(NNLayerODEAddLayer(*blk, NNLAYERTANH, "fa", NULL));
  PetscCall(NNLayerODESetTime(*blk, 1.0));
  PetscCall(NNLayerODESetSteps(*blk, N));
  PetscCall(NNLayerODESetParameters(*blk, NNODE_PARAMETERS_PER_STEP));
  PetscCall(NNLayerODESetScheme(*blk, NNODE_SCHEME_DISCRETE));
  PetscCall(NNLayerODESetParallel(*blk, parallel ? NNODE_PARALLEL_MGRIT : NNODE_PARALLEL_NONE));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "cls", &l));
  PetscCall(NNLayerDenseSetUnits(l, 10));
  PetscCall(NNSetFromOptions(*net));
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

static PetscErrorCode RunMode(const char mode[], PetscInt w, PetscInt N, PetscInt n, PetscInt reps, PetscInt osit, Measure *m)
{
  NN             net;
  NNLayer        blk;
  NNMGRIT        mg = NULL;
  Vec            x, t;
  PetscBool      serial, oneshot;
  PetscLogDouble f0, a0, f1, a1, t0, t1;
  PetscInt       c0[2][MAXL] = {{0}}, c1[2][MAXL] = {{0}};
  PetscReal      red[3];

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(mode, "serial", &serial));
  PetscCall(PetscStrcmp(mode, "one_shot", &oneshot));
  PetscCall(BuildNet(w, N, n, (PetscBool)!serial, &net, &blk));
  PetscCall(NNLayerODEGetMGRIT(blk, &mg));
  if (mg) PetscCall(NNMGRITSetMode(mg, oneshot ? NNMGRIT_ONE_SHOT : NNMGRIT_EXACT, osit));
  PetscCall(NNCreateBatchVecs(net, &x, &t));
  {
    PetscScalar *a;
    PetscInt     nx;
    PetscCall(VecGetLocalSize(x, &nx));
    PetscCall(VecGetArray(x, &a));
    for (PetscInt i = 0; i < nx; i++) a[i] = PetscSinReal(0.1 + 0.37 * i);
    PetscCall(VecRestoreArray(x, &a));
    PetscCall(VecGetArray(t, &a));
    for (PetscInt i = 0; i < n; i++) a[i] = (PetscScalar)(i % 10);
    PetscCall(VecRestoreArray(t, &a));
  }
  PetscCall(NNLossGradient(net, n, x, t, NULL, NULL)); /* untimed: set up, and the one-shot warm start */
  PetscCall(NNLayerODEGetTimes(blk, &f0, &a0, NULL));
  if (mg) {
    PetscCall(NNMGRITGetNumLevels(mg, &m->L));
    PetscCall(NNMGRITGetStepCounts(mg, PETSC_FALSE, MAXL, c0[0]));
    PetscCall(NNMGRITGetStepCounts(mg, PETSC_TRUE, MAXL, c0[1]));
  } else m->L = 0;
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(PetscTime(&t0));
  for (PetscInt r = 0; r < reps; r++) PetscCall(NNLossGradient(net, n, x, t, NULL, NULL));
  PetscCall(PetscTime(&t1));
  PetscCall(NNLayerODEGetTimes(blk, &f1, &a1, NULL));
  red[0] = (t1 - t0) / reps;
  red[1] = (f1 - f0) / reps;
  red[2] = (a1 - a0) / reps;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, red, 3, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
  m->name = mode;
  m->t    = red[0];
  m->tf   = red[1];
  m->ta   = red[2];
  m->itf = m->ita = 0;
  for (PetscInt l = 0; l < MAXL; l++) m->cf[l] = m->ca[l] = 0;
  if (mg) {
    PetscCall(NNMGRITGetIterationNumber(mg, PETSC_FALSE, &m->itf));
    PetscCall(NNMGRITGetIterationNumber(mg, PETSC_TRUE, &m->ita));
    PetscCall(NNMGRITGetStepCounts(mg, PETSC_FALSE, MAXL, c1[0]));
    PetscCall(NNMGRITGetStepCounts(mg, PETSC_TRUE, MAXL, c1[1]));
    for (PetscInt l = 0; l < m->L; l++) {
      m->cf[l] = (PetscReal)(c1[0][l] - c0[0][l]) / reps;
      m->ca[l] = (PetscReal)(c1[1][l] - c0[1][l]) / reps;
    }
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, m->cf, MAXL, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, m->ca, MAXL, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/*
   The work model of a layer-parallel forward+backward pass on P ranks. The counts come from the run on `size`
   ranks: level l (N_l = N/m^l points) was swept s_l = (calls on level l over all ranks) / N_l times. The costs
   come from the layer-serial run: a forward call costs cf (one f evaluation and an axpy), an adjoint call cb
   (f's backward pass) plus cf when f's activations are not cached (with the cache, f runs forward once per owned
   step and adjoint solve). On P ranks
     T(P) = cf * F(P) + cb * A(P) [+ cf * N/P with the cache, or cf * A(P) without]
            + messages * (latency + state bytes / bandwidth) + gradient all-gather + T_other,
     F(P) = sum_{l<L-1} s_l ceil(N_l/P) + s_c N_c   (A(P) the same with the adjoint's sweeps)
   The coarsest level (N_c points) is solved sequentially: s_c N_c calls on the critical path whatever P is.
   Messages on the critical path per iteration: one per relaxation sweep (F: 1, FCF: 2), one per restriction
   and one per post-correction F-sweep on the intermediate levels, plus min(P, N_c) - 1 hops of the pipelined
   coarsest sweep. T_other (the layers around the block, the loss) runs on every rank.
*/
typedef struct {
  PetscReal cf, cb, other, lat, bw, state, grad;
  PetscBool cache;
} Model;

static PetscReal Predict(const Measure *m, const Model *md, PetscInt N, PetscInt cfac, PetscBool fcf, PetscMPIInt size, PetscInt P)
{
  PetscInt  L = m->L, Nl = N;
  PetscReal F = 0, A = 0, its, msgs = 0, t;

  for (PetscInt l = 0; l < L; l++, Nl /= cfac) {
    PetscReal sf = m->cf[l] * size / PetscMax(Nl, 1), sa = m->ca[l] * size / PetscMax(Nl, 1); /* sweeps (even split) */
    if (l < L - 1) {
      F += sf * PetscCeilReal((PetscReal)Nl / P);
      A += sa * PetscCeilReal((PetscReal)Nl / P);
    } else {
      F += sf * Nl;
      A += sa * Nl;
      its  = sf + sa; /* coarsest solves: one per iteration */
      msgs = its * ((fcf ? 3 : 2) * (L - 1) + PetscMax(L - 2, 0) + PetscMin(P, Nl) - 1);
    }
  }
  t = md->cf * F + md->cb * A + md->cf * (md->cache ? PetscCeilReal((PetscReal)N / P) : A) + md->other;
  if (P > 1) t += msgs * (md->lat + md->state / md->bw) + md->grad * (P - 1) / P / md->bw + 2 * PetscLog2Real(P) * md->lat;
  return t;
}

int main(int argc, char **argv)
{
  PetscInt    w = 64, N = 256, n = 128, reps = 3, osit = 1, np = 8, predict[8] = {1, 2, 16, 64, 256}, nmodes = 3, cfac = 2;
  char       *modes[3];
  PetscBool   flg, fcf = PETSC_TRUE;
  PetscMPIInt size;
  Measure     meas[3], *ser = NULL;
  Model       md = {0, 0, 0, 2e-6, 1e10, 0, 0, PETSC_TRUE};
  char        relax[8] = "FCF";

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-width", &w, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-steps", &N, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-batch", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-reps", &reps, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-one_shot_it", &osit, NULL));
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-predict", predict, &np, &flg));
  if (!flg) np = 5;
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-model_latency", &md.lat, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-model_bandwidth", &md.bw, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-blk_mgrit_cf", &cfac, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-blk_mgrit_relax", relax, sizeof(relax), NULL));
  PetscCall(PetscStrcasecmp(relax, "FCF", &fcf));
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-modes", modes, &nmodes, &flg));
  if (!flg) {
    nmodes = 3;
    PetscCall(PetscStrallocpy("serial", &modes[0]));
    PetscCall(PetscStrallocpy("exact", &modes[1]));
    PetscCall(PetscStrallocpy("one_shot", &modes[2]));
  }
  PetscCheck(reps > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-reps %" PetscInt_FMT " must be positive", reps);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "deep ODE block: %" PetscInt_FMT " forward-Euler steps, width %" PetscInt_FMT ", batch %" PetscInt_FMT ", per-step parameters, f = tanh(dense); %d rank%s; mean of %" PetscInt_FMT " forward+backward passes\n", N, w, n, size, size > 1 ? "s" : "", reps));
  for (PetscInt i = 0; i < nmodes; i++) {
    PetscBool ok;
    PetscCall(PetscStrcmp(modes[i], "serial", &ok));
    if (!ok) PetscCall(PetscStrcmp(modes[i], "exact", &ok));
    if (!ok) PetscCall(PetscStrcmp(modes[i], "one_shot", &ok));
    PetscCheck(ok, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-modes %s: valid modes are serial, exact, one_shot", modes[i]);
    PetscCall(RunMode(modes[i], w, N, n, reps, osit, &meas[i]));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-9s %8.4f s per forward+backward (block: forward %.4f s, adjoint %.4f s)", modes[i], (double)meas[i].t, (double)meas[i].tf, (double)meas[i].ta));
    if (meas[i].L) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, ", MGRIT %" PetscInt_FMT " levels, iterations %" PetscInt_FMT " forward + %" PetscInt_FMT " adjoint; calls per level on the busiest rank, forward:", meas[i].L, meas[i].itf, meas[i].ita));
      for (PetscInt l = 0; l < meas[i].L; l++) PetscCall(PetscPrintf(PETSC_COMM_WORLD, " %g", (double)meas[i].cf[l]));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, ", adjoint:"));
      for (PetscInt l = 0; l < meas[i].L; l++) PetscCall(PetscPrintf(PETSC_COMM_WORLD, " %g", (double)meas[i].ca[l]));
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
    if (!meas[i].L) ser = &meas[i];
  }
  /* the model: per-call costs from the serial run (one forward step; one adjoint step), the rest is the dense
     classifier and the loss, which every rank computes */
  if (ser) {
    md.cf    = ser->tf / N;
    md.cb    = PetscMax(ser->ta / N - md.cf, 0.1 * md.cf); /* the serial adjoint step runs f forward again, then backward */
    md.other = PetscMax(ser->t - ser->tf - ser->ta, 0);
    md.cache = PETSC_TRUE;
    PetscCall(PetscOptionsGetBool(NULL, NULL, "-blk_store_activations", &md.cache, NULL));
    md.state = (PetscReal)n * w * sizeof(PetscScalar);
    md.grad  = (PetscReal)N * (w * w + w) * sizeof(PetscScalar);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "work model: forward call %.3g ms, f's backward pass %.3g ms, other layers %.3g ms; messages of %.3g kB at %.1f us + %.3g GB/s, gradient all-gather of %.3g MB\n", 1e3 * md.cf, 1e3 * md.cb, 1e3 * md.other, md.state / 1e3, 1e6 * md.lat, md.bw / 1e9, md.grad / 1e6));
    for (PetscInt i = 0; i < nmodes; i++) {
      if (!meas[i].L) continue;
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-9s measured %.4f s on %d rank%s, model %.4f s; predicted speedup over layer-serial:", meas[i].name, (double)meas[i].t, size, size > 1 ? "s" : "", (double)Predict(&meas[i], &md, N, cfac, fcf, size, size)));
      for (PetscInt j = 0; j < np; j++) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  P=%" PetscInt_FMT ": %.2f", predict[j], (double)(ser->t / Predict(&meas[i], &md, N, cfac, fcf, size, predict[j]))));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
    }
  }
  for (PetscInt i = 0; i < nmodes; i++) PetscCall(PetscFree(modes[i]));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
     suffix: tiny
     nsize: 2
     args: -width 4 -steps 16 -batch 3 -reps 1
     filter: sed -E "s/[0-9]+[.][0-9]*(e[-+]?[0-9]+)?/X/g"

TEST*/
