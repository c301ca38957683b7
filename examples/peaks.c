static char help[] = "The Peaks classification problem, the standard benchmark of layer-parallel training: points of [-3,3]^2\n"
                     "labelled by which of 5 equal-width value bins of MATLAB's peaks function they fall into, learned by\n"
                     "  dense 2 -> 8 (open), a 32-step ODE block on [0,1] with per-step parameters and f = tanh(dense 8 -> 8)\n"
                     "  (a ResNet: forward Euler), dense 8 -> 5 (cls), softmax cross-entropy,\n"
                     "trained full-batch with TAO (L-BFGS: -tao_type lmvm). Layer-parallel: add -blk_parallel mgrit (MGRIT over\n"
                     "all ranks; -blk_mgrit_cf 2 -blk_mgrit_levels 2 are the defaults). See examples/peaks.opts.\n\n"
                     "  -ntrain <n>, -nval <n>   training and validation points (default 5000, 200)\n"
                     "  -data_seed <s>           seed of the points (default 1)\n"
                     "  -min_accuracy <a>        fail unless the validation accuracy reaches a (default 0: no check)\n"
                     "  -compare                 also train the layer-serial network from the same start and compare\n"
                     "  -compare_tol <r>         relative difference of the final parameters allowed by -compare (default 1e-6)\n"
                     "  -use_nntrain             train with NNTrain() and the network's optimizer (-opt_type adam, -nn_epochs,\n"
                     "                           -nn_batch_size) instead of TAO: the setting of one-shot MGRIT (-blk_mgrit_mode one_shot)\n"
                     "  -verbose                 print times and iteration counts (not stable across machines)\n\n";

#include <petnn.h>

/* f(x,y) = 3(1-x)^2 e^{-x^2-(y+1)^2} - 10(x/5 - x^3 - y^5) e^{-x^2-y^2} - (1/3) e^{-(x+1)^2-y^2} */
static PetscReal Peaks(PetscReal x, PetscReal y)
{
  return 3 * (1 - x) * (1 - x) * PetscExpReal(-x * x - (y + 1) * (y + 1)) - 10 * (x / 5 - x * x * x - PetscPowReal(y, 5)) * PetscExpReal(-x * x - y * y) - PetscExpReal(-(x + 1) * (x + 1) - y * y) / 3;
}

/* splitmix64: the same points on every machine */
static PetscReal Uniform(uint64_t *s)
{
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z          = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z          = z ^ (z >> 31);
  return (PetscReal)(z >> 11) * 0x1.0p-53;
}

static PetscErrorCode WriteSet(const char file[], PetscInt n, const PetscReal *xy, const PetscInt *label)
{
  Mat         X;
  Vec         T;
  PetscViewer viewer;

  PetscFunctionBegin;
  PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, n, 2, NULL, &X));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, n, &T));
  for (PetscInt i = 0; i < n; i++) {
    PetscCall(MatSetValue(X, i, 0, xy[2 * i], INSERT_VALUES));
    PetscCall(MatSetValue(X, i, 1, xy[2 * i + 1], INSERT_VALUES));
    PetscCall(VecSetValue(T, i, (PetscScalar)label[i], INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(X, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(X, MAT_FINAL_ASSEMBLY));
  PetscCall(VecAssemblyBegin(T));
  PetscCall(VecAssemblyEnd(T));
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_SELF, file, FILE_MODE_WRITE, &viewer));
  PetscCall(MatView(X, viewer));
  PetscCall(VecView(T, viewer));
  PetscCall(PetscViewerDestroy(&viewer));
  PetscCall(MatDestroy(&X));
  PetscCall(VecDestroy(&T));
  PetscFunctionReturn(0);
}

/* ntrain + nval uniform points of [-3,3]^2; the 5 bins split [min f, max f] over all of them in equal widths */
static PetscErrorCode GeneratePeaks(PetscInt ntrain, PetscInt nval, uint64_t seed, PetscInt count[5])
{
  PetscInt   n = ntrain + nval, *label;
  PetscReal *xy, *f, lo = PETSC_MAX_REAL, hi = -PETSC_MAX_REAL;
  uint64_t   s = seed;

  PetscFunctionBegin;
  PetscCall(PetscMalloc3(2 * n, &xy, n, &f, n, &label));
  for (PetscInt i = 0; i < n; i++) {
    xy[2 * i]     = -3 + 6 * Uniform(&s);
    xy[2 * i + 1] = -3 + 6 * Uniform(&s);
    f[i]          = Peaks(xy[2 * i], xy[2 * i + 1]);
    lo            = PetscMin(lo, f[i]);
    hi            = PetscMax(hi, f[i]);
  }
  for (PetscInt c = 0; c < 5; c++) count[c] = 0;
  for (PetscInt i = 0; i < n; i++) {
    label[i] = PetscMin(4, (PetscInt)PetscFloorReal(5 * (f[i] - lo) / (hi - lo)));
    if (i < ntrain) count[label[i]]++;
  }
  PetscCall(WriteSet("peaks_train.bin", ntrain, xy, label));
  PetscCall(WriteSet("peaks_val.bin", nval, xy + 2 * ntrain, label + ntrain));
  PetscCall(PetscFree3(xy, f, label));
  PetscFunctionReturn(0);
}

static PetscErrorCode OpenSet(const char file[], const char prefix[], NNData *d)
{
  PetscFunctionBegin;
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, d));
  PetscCall(NNDataSetType(*d, NNDATABINARY));
  PetscCall(NNDataSetFileName(*d, file));
  PetscCall(NNDataSetOptionsPrefix(*d, prefix));
  PetscCall(NNDataSetFromOptions(*d));
  PetscFunctionReturn(0);
}

/* open (2 -> 8) -> blk (32 forward-Euler steps on [0,1], per-step f = tanh(dense 8 -> 8)) -> cls (8 -> 5);
   options (peaks.opts) may change every choice; parallel adds -<prefix>blk_parallel mgrit */
static PetscErrorCode BuildNet(const char prefix[], PetscBool parallel, PetscInt nbatch, NN *net, NNLayer *blk)
{
  NNLayer l;

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, net));
  if (prefix) PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetInputShape(*net, 1, (PetscInt[]){2}));
  PetscCall(NNSetBatchSize(*net, nbatch)); /* full batch: one pass over the training set per TAO evaluation */
  PetscCall(NNSetSeed(*net, 1));
  PetscCall(NNSetLoss(*net, NNLOSSCROSSENTROPY));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "open", &l));
  PetscCall(NNLayerDenseSetUnits(l, 8));
  PetscCall(NNAddLayer(*net, NNLAYERODE, "blk", blk));
  PetscCall(NNLayerODEAddLayer(*blk, NNLAYERDENSE, "f1", &l));
  PetscCall(NNLayerDenseSetUnits(l, 8));
  PetscCall(NNLayerODEAddLayer(*blk, NNLAYERTANH, "fa", NULL));
  PetscCall(NNLayerODESetTime(*blk, 1.0));
  PetscCall(NNLayerODESetSteps(*blk, 32));
  PetscCall(NNLayerODESetParameters(*blk, NNODE_PARAMETERS_PER_STEP));
  PetscCall(NNLayerODESetScheme(*blk, NNODE_SCHEME_DISCRETE)); /* forward Euler; -blk_scheme ts -blk_ts_rk_type 1fe gives the same numbers */
  if (parallel) PetscCall(NNLayerODESetParallel(*blk, NNODE_PARALLEL_MGRIT));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "cls", &l));
  PetscCall(NNLayerDenseSetUnits(l, 5));
  PetscCall(NNSetFromOptions(*net));
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

typedef struct {
  PetscInt       its, nfev;
  PetscReal      loss, trainacc, valacc;
  PetscLogDouble time;
  PetscInt       mgits[2]; /* last MGRIT iterations, forward and adjoint (-1: layer-serial) */
} Result;

static PetscErrorCode Train(NN net, NNLayer blk, NNData train, NNData val, Result *r)
{
  Tao            tao;
  PetscLogDouble t0, t1;
  NNMGRIT        mg;
  const char    *prefix;
  PetscBool      nntrain = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-use_nntrain", &nntrain, NULL));
  if (nntrain) { /* minibatch training with the network's optimizer; r->its counts epochs */
    PetscCall(PetscTime(&t0));
    PetscCall(NNTrain(net, train, NULL));
    PetscCall(PetscTime(&t1));
    r->time = t1 - t0;
    PetscCall(NNGetEpochs(net, &r->its));
    r->nfev = -1;
  } else {
    PetscCall(TaoCreate(PETSC_COMM_SELF, &tao)); /* the parameters are replicated: every rank runs the same L-BFGS */
    PetscCall(PetscObjectGetOptionsPrefix((PetscObject)net, &prefix));
    if (prefix) PetscCall(TaoSetOptionsPrefix(tao, prefix));
    PetscCall(TaoSetType(tao, TAOLMVM));
    PetscCall(TaoSetMaximumIterations(tao, 1000));
    PetscCall(TaoSetTolerances(tao, 1e-7, 0, 0));
    PetscCall(TaoSetFromOptions(tao));
    PetscCall(PetscTime(&t0));
    PetscCall(NNTrainTao(net, train, tao));
    PetscCall(PetscTime(&t1));
    r->time = t1 - t0;
    PetscCall(TaoGetIterationNumber(tao, &r->its));
    PetscCall(TaoGetCurrentFunctionEvaluations(tao, &r->nfev));
    PetscCall(TaoDestroy(&tao));
  }
  PetscCall(NNEvaluate(net, train, &r->loss, &r->trainacc));
  PetscCall(NNEvaluate(net, val, NULL, &r->valacc));
  PetscCall(NNLayerODEGetMGRIT(blk, &mg));
  r->mgits[0] = r->mgits[1] = -1;
  if (mg) {
    PetscCall(NNMGRITGetIterationNumber(mg, PETSC_FALSE, &r->mgits[0]));
    PetscCall(NNMGRITGetIterationNumber(mg, PETSC_TRUE, &r->mgits[1]));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode Report(const char what[], const Result *r, PetscBool verbose, PetscReal minacc)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: training loss %.4f, training accuracy %.4f, validation accuracy %.4f\n", what, (double)r->loss, (double)r->trainacc, (double)r->valacc));
  if (verbose) {
    if (r->nfev < 0) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  [%d rank%s: %" PetscInt_FMT " epochs, %.2f s", size, size > 1 ? "s" : "", r->its, r->time));
    else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  [%d rank%s: %" PetscInt_FMT " TAO iterations, %" PetscInt_FMT " function/gradient evaluations, %.2f s", size, size > 1 ? "s" : "", r->its, r->nfev, r->time));
    if (r->mgits[0] >= 0) PetscCall(PetscPrintf(PETSC_COMM_WORLD, ", last MGRIT iterations %" PetscInt_FMT " forward + %" PetscInt_FMT " adjoint", r->mgits[0], r->mgits[1]));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "]\n"));
  }
  if (minacc > 0) {
    PetscCheck(r->valacc >= minacc, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "%s: validation accuracy %g is below -min_accuracy %g", what, (double)r->valacc, (double)minacc);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: validation accuracy at least %g: PASS\n", what, (double)minacc));
  }
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscInt    ntrain = 5000, nval = 200, seed = 1, count[5];
  PetscReal   minacc = 0, ctol = 1e-6;
  PetscBool   compare = PETSC_FALSE, verbose = PETSC_FALSE;
  PetscMPIInt rank;
  NNData      train, val;
  NN          net, ser = NULL;
  NNLayer     blk, sblk;
  Result      r, rs;
  NNMGRIT     mg;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-ntrain", &ntrain, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-nval", &nval, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-data_seed", &seed, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-min_accuracy", &minacc, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-compare", &compare, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-compare_tol", &ctol, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  PetscCheck(ntrain > 0 && nval > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-ntrain %" PetscInt_FMT " and -nval %" PetscInt_FMT " must be positive", ntrain, nval);

  /* the data: rank 0 writes both sets, every rank reads them */
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  if (!rank) PetscCall(GeneratePeaks(ntrain, nval, (uint64_t)seed, count));
  PetscCallMPI(MPI_Bcast(count, 5, MPIU_INT, 0, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Peaks: %" PetscInt_FMT " training points (class shares %.3f %.3f %.3f %.3f %.3f), %" PetscInt_FMT " validation points\n", ntrain, (double)count[0] / ntrain, (double)count[1] / ntrain, (double)count[2] / ntrain, (double)count[3] / ntrain, (double)count[4] / ntrain, nval));
  PetscCall(OpenSet("peaks_train.bin", "train_", &train));
  PetscCall(OpenSet("peaks_val.bin", "val_", &val));

  /* the network as configured (layer-parallel with -blk_parallel mgrit) */
  PetscCall(BuildNet(NULL, PETSC_FALSE, ntrain, &net, &blk));
  PetscCall(NNLayerODEGetMGRIT(blk, &mg));
  if (compare) { /* a layer-serial twin with the same initial parameters, configured by the same options */
    Vec th, ths;
    PetscCheck(mg, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-compare compares a layer-parallel network with a layer-serial one: give -blk_parallel mgrit");
    PetscCall(BuildNet(NULL, PETSC_FALSE, ntrain, &ser, &sblk));
    PetscCall(NNLayerODESetParallel(sblk, NNODE_PARALLEL_NONE));
    PetscCall(NNSetUp(ser));
    PetscCall(NNGetParameters(net, &th));
    PetscCall(NNGetParameters(ser, &ths));
    PetscCall(VecCopy(th, ths));
  }
  PetscCall(PetscObjectViewFromOptions((PetscObject)net, NULL, "-peaks_view"));
  PetscCall(Train(net, blk, train, val, &r));
  PetscCall(Report(mg ? "layer-parallel (MGRIT)" : "layer-serial", &r, verbose, minacc));
  if (compare) {
    Vec       th, ths, d;
    PetscReal nd, ns;
    PetscCall(Train(ser, sblk, train, val, &rs));
    PetscCall(Report("layer-serial", &rs, verbose, minacc));
    PetscCall(NNGetParameters(net, &th));
    PetscCall(NNGetParameters(ser, &ths));
    PetscCall(VecDuplicate(th, &d));
    PetscCall(VecWAXPY(d, -1.0, th, ths));
    PetscCall(VecNorm(d, NORM_2, &nd));
    PetscCall(VecNorm(ths, NORM_2, &ns));
    if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  [relative difference of the trained parameters %.2e; TAO iterations %" PetscInt_FMT " and %" PetscInt_FMT "]\n", (double)(nd / ns), r.its, rs.its));
    PetscCheck(nd <= ctol * ns && r.its == rs.its, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "layer-parallel and layer-serial training differ: relative parameter difference %g (-compare_tol %g), TAO iterations %" PetscInt_FMT " and %" PetscInt_FMT, (double)(nd / ns), (double)ctol, r.its, rs.its);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "layer-parallel and layer-serial training: the same iterations and parameters within %g: PASS\n", (double)ctol));
    PetscCall(VecDestroy(&d));
    PetscCall(NNDestroy(&ser));
  }
  PetscCall(NNDestroy(&net));
  PetscCall(NNDataDestroy(&train));
  PetscCall(NNDataDestroy(&val));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   testset:
     args: -ntrain 60 -nval 30 -tao_max_it 6 -blk_parallel mgrit -blk_mgrit_rtol 1e-12 -compare
     output_file: output/peaks_compare.out
     test:
       suffix: compare_1
       nsize: 1
     test:
       suffix: compare_2
       nsize: 2

   test:
     suffix: data_groups_adam
     nsize: 4
     args: -ntrain 60 -nval 30 -use_nntrain -nn_epochs 2 -nn_batch_size 50 -opt_type adam -opt_learning_rate 0.01 -nn_data_groups 2 -blk_parallel mgrit -blk_mgrit_rtol 1e-12 -compare

TEST*/
