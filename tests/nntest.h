/* Helpers shared by PetNN's test programs (the .c files of tests/): comparisons, option strings, synthetic data. Header-only, static inline,
   so each test stays one program built from one source file. */
#pragma once
#include <petscmat.h>
#include <petnn.h>

/* ||a - b|| / ||a|| in the 2-norm: a is the reference (a zero reference gives the absolute difference / 1e-300) */
static inline PetscErrorCode NNTestRelDiff(Vec a, Vec b, PetscReal *d)
{
  Vec       w;
  PetscReal na, nd;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(a, &w));
  PetscCall(VecWAXPY(w, -1.0, b, a));
  PetscCall(VecNorm(w, NORM_2, &nd));
  PetscCall(VecNorm(a, NORM_2, &na));
  *d = nd / PetscMax(na, 1e-300);
  PetscCall(VecDestroy(&w));
  PetscFunctionReturn(0);
}

/* inserts opts into the options database with every option name prefixed ("-fc_type dense" with prefix "c1_" gives
   "-c1_fc_type dense"); a '-' that starts a number is a value, not an option */
static inline PetscErrorCode NNTestInsertPrefixed(const char prefix[], const char opts[])
{
  char   buf[4096], *p = buf;
  size_t len;

  PetscFunctionBegin;
  for (const char *s = opts; *s; s++) {
    if (*s == '-' && (s == opts || s[-1] == ' ') && !(s[1] >= '0' && s[1] <= '9') && s[1] != '.') {
      PetscCall(PetscSNPrintf(p, sizeof(buf) - (p - buf), "-%s", prefix));
      PetscCall(PetscStrlen(buf, &len));
      p = buf + len;
    } else *p++ = *s;
    PetscCheck(p < buf + sizeof(buf) - 64, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "options too long (at most about %d characters)", (int)sizeof(buf) - 64);
  }
  *p = 0;
  PetscCall(PetscOptionsInsertString(NULL, buf));
  PetscFunctionReturn(0);
}

/* removes the options NNTestInsertPrefixed(prefix, opts) inserted (the options database holds at most 512) */
static inline PetscErrorCode NNTestClearPrefixed(const char prefix[], const char opts[])
{
  char name[256];

  PetscFunctionBegin;
  for (const char *s = opts; *s; s++) {
    size_t k = 0;
    if (!(*s == '-' && (s == opts || s[-1] == ' ') && !(s[1] >= '0' && s[1] <= '9') && s[1] != '.')) continue;
    while (s[1 + k] && s[1 + k] != ' ' && k < sizeof(name) - 1) k++;
    PetscCall(PetscSNPrintf(name, sizeof(name), "-%s%.*s", prefix, (int)k, s + 1));
    PetscCall(PetscOptionsClearValue(NULL, name));
  }
  PetscFunctionReturn(0);
}

/* a synthetic classification set of n samples of nf features and nc classes, written to file as PETSc binary: a dense
   Mat (rows = samples; feature j of sample i is uniform in [0,1) plus 1 where j is its class i mod nc) and a Vec of
   the labels, as NNDATABINARY reads them. seed: PetscRandom's */
static inline PetscErrorCode NNTestWriteClassificationData(const char file[], PetscInt n, PetscInt nf, PetscInt nc, unsigned long seed)
{
  Mat         X;
  Vec         y;
  PetscViewer v;
  PetscRandom r;

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetSeed(r, seed));
  PetscCall(PetscRandomSeed(r));
  PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, n, nf, NULL, &X));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, n, &y));
  for (PetscInt i = 0; i < n; i++) {
    PetscInt cls = i % nc;
    for (PetscInt j = 0; j < nf; j++) {
      PetscReal u;
      PetscCall(PetscRandomGetValueReal(r, &u));
      PetscCall(MatSetValue(X, i, j, u + (j == cls ? 1.0 : 0.0), INSERT_VALUES));
    }
    PetscCall(VecSetValue(y, i, (PetscScalar)cls, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(X, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(X, MAT_FINAL_ASSEMBLY));
  PetscCall(VecAssemblyBegin(y));
  PetscCall(VecAssemblyEnd(y));
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_SELF, file, FILE_MODE_WRITE, &v));
  PetscCall(MatView(X, v));
  PetscCall(VecView(y, v));
  PetscCall(PetscViewerDestroy(&v));
  PetscCall(MatDestroy(&X));
  PetscCall(VecDestroy(&y));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

/* a pass's loss and copies of its output, input gradient and parameter gradient */
typedef struct {
  PetscReal L;
  Vec       y, dx, g;
} NNTestPass;

/* one NNLossGradient() over n samples of x with targets t on the device dev */
static inline PetscErrorCode NNTestPassRun(NN net, NNDevice dev, PetscInt n, Vec x, Vec t, NNTestPass *r)
{
  Vec        g;
  PetscInt   nact;
  const Vec *act, *dact;

  PetscFunctionBegin;
  PetscCall(NNSetDevice(net, dev));
  PetscCall(VecDuplicate(x, &r->dx));
  PetscCall(NNLossGradient(net, n, x, t, &r->L, r->dx));
  PetscCall(NNGetActivationVecs(net, &nact, &act, &dact));
  PetscCall(VecDuplicate(act[nact - 1], &r->y));
  PetscCall(VecCopy(act[nact - 1], r->y));
  PetscCall(NNGetGradient(net, &g));
  PetscCall(VecDuplicate(g, &r->g));
  PetscCall(VecCopy(g, r->g));
  PetscFunctionReturn(0);
}

static inline PetscErrorCode NNTestPassDestroy(NNTestPass *r)
{
  PetscFunctionBegin;
  PetscCall(VecDestroy(&r->y));
  PetscCall(VecDestroy(&r->dx));
  PetscCall(VecDestroy(&r->g));
  PetscFunctionReturn(0);
}

/* *same: a and b hold the same entries bitwise on every rank (collective on PETSC_COMM_WORLD) */
static inline PetscErrorCode NNTestVecsEqual(Vec a, Vec b, PetscBool *same)
{
  const PetscScalar *pa, *pb;
  PetscInt           n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(a, &n));
  PetscCall(VecGetArrayRead(a, &pa));
  PetscCall(VecGetArrayRead(b, &pb));
  *same = PETSC_TRUE;
  for (PetscInt i = 0; i < n; i++)
    if (pa[i] != pb[i]) *same = PETSC_FALSE;
  PetscCall(VecRestoreArrayRead(a, &pa));
  PetscCall(VecRestoreArrayRead(b, &pb));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, same, 1, NN_MPI_BOOL, MPI_LAND, PETSC_COMM_WORLD));
  PetscFunctionReturn(0);
}

/* the small classifier of the restart tests (tests/restart.c, tests/trainstep.c): dense 12, tanh, dropout 0.2, dense to
   nclasses, cross entropy, data parallel on every rank of comm, seed 9, learning rate 0.02 falling by 0.7 each epoch;
   the caller adds its own settings, then NNSetFromOptions() and NNSetUp() */
static inline PetscErrorCode NNTestCreateDropoutClassifier(MPI_Comm comm, PetscInt nfeat, PetscInt nclasses, PetscInt batch, PetscInt epochs, NN *net)
{
  NNLayer     l;
  NNOpt       opt;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(NNCreate(comm, net));
  PetscCall(NNSetProcessGrid(*net, 1, size)); /* data parallel on every rank */
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc1", &l));
  PetscCall(NNLayerDenseSetUnits(l, 12));
  PetscCall(NNAddLayer(*net, NNLAYERTANH, "act", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERDROPOUT, "drop", &l));
  PetscCall(NNLayerDropoutSetRate(l, 0.2));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc2", &l));
  PetscCall(NNLayerDenseSetUnits(l, nclasses));
  PetscCall(NNSetLoss(*net, NNLOSSCROSSENTROPY));
  PetscCall(NNSetBatchSize(*net, batch));
  PetscCall(NNSetEpochs(*net, epochs));
  PetscCall(NNSetSeed(*net, 9));
  PetscCall(NNSetInputShape(*net, 1, (PetscInt[]){nfeat}));
  PetscCall(NNGetOpt(*net, &opt));
  PetscCall(NNOptSetLearningRate(opt, 0.02));
  PetscCall(NNOptSetSchedule(opt, NNOPTSCHEDULESTEP, 1, 0.7));
  PetscFunctionReturn(0);
}
