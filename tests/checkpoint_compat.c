static char help[] = "Checkpoints of the build before the network object was split load bitwise and continue within round-off.\n\n"
                     "  -start <file>   checkpoint to continue from (after optimizer step 3)\n"
                     "  -expect <file>  checkpoint of the same run after step 11\n"
                     "  -v              print the largest relative differences to the old build's step 11\n\n";

/*
   tests/data/checkpoint_compat_step3.h5 and checkpoint_compat_step11.h5 were written by main
   0838809 (the generator tests/data/checkpoint_compat_gen.c, whose header has the commands):
   dense - batchnorm1d - relu - dropout - dense trained with Adam on 64 samples in batches of 8,
   saved mid-epoch after steps 3 and 11. The data sets are HDF5 files (*.h5 is in .gitignore; they
   are committed with git add -f).

   Two claims, checked differently:
   1. Loading is exact: this build loads step 3, saves it, and loads what it saved; every bit of the
      state (parameters, buffers, optimizer state, generators, counters) must come back. The same
      binary repeats the same operations, so this is a bitwise comparison.
   2. Training continues where the old build stopped: this build continues from step 3 to step 11 and
      compares with the old build's step 11. That file was made by another binary on another CPU,
      whose BLAS kernels sum in another order (or with FMA), so floating-point state is compared
      within a tolerance derived from the arithmetic, and the integer state (counters, generators,
      which decide the dropout masks and the batch order) bitwise.
      The largest difference is not ordinary round-off: fc1's bias feeds batch norm, which removes the
      batch mean, so its gradient is zero in exact arithmetic and only round-off, at most
      gamma_K G ~ K u G (K = 12 terms, the widest fan-in; u = 2^-53; G ~ 1 the size of the terms).
      Adam turns that noise into a step of lr m/(sqrt(v) + eps) ~ lr K u G / eps, since sqrt(v) << eps:
      over S = 8 steps at lr = 1e-2, eps = 1e-8 that is S lr K u / eps ~ 1.1e-8 (measured: 7.5e-11
      with OpenBLAS's Sandybridge kernels, 6.7e-12 with SkylakeX's, 0 with Haswell's, which wrote
      the file). Batch norm's running means inherit it; everything else (Adam's moments, the loss)
      differs by a few u. So every floating-point vector is compared as
      ||a - b||_inf <= S lr K u / eps * max(1, ||b||_inf).
*/
#include <petnn/private/trainerimpl.h>
#include <string.h>

typedef struct {
  NN        expect; /* the network loaded from the -expect checkpoint */
  PetscReal tol;    /* tolerance for floating-point state, derived above */
  PetscReal worst;  /* the largest relative difference seen */
  PetscBool verbose;
  PetscBool done;
} Ctx;

/* bitwise (c == NULL: this build against its own save) or ||a - b||_inf <= c->tol max(1, ||b||_inf) */
static PetscErrorCode VecCompare(Ctx *c, Vec a, Vec b, const char what[])
{
  const PetscScalar *x, *y;
  PetscInt           n, m;
  PetscReal          diff = 0, scale = 1, rel;
  PetscBool          same;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(a, &n));
  PetscCall(VecGetLocalSize(b, &m));
  PetscCheck(n == m, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: %" PetscInt_FMT " vs %" PetscInt_FMT " entries", what, n, m);
  PetscCall(VecGetArrayRead(a, &x));
  PetscCall(VecGetArrayRead(b, &y));
  same = (PetscBool)(!n || !memcmp(x, y, n * sizeof(PetscScalar)));
  for (PetscInt i = 0; i < n; i++) {
    diff  = PetscMax(diff, PetscAbsScalar(x[i] - y[i]));
    scale = PetscMax(scale, PetscAbsScalar(y[i]));
  }
  PetscCall(VecRestoreArrayRead(b, &y));
  PetscCall(VecRestoreArrayRead(a, &x));
  if (!c) {
    PetscCheck(same, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: saving and loading again changed bits", what);
    PetscFunctionReturn(0);
  }
  rel      = diff / scale;
  c->worst = PetscMax(c->worst, rel);
  if (c->verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: largest relative difference %.3e\n", what, (double)rel));
  PetscCheck(rel <= c->tol, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s differs from the old build's checkpoint by %g relative, more than the tolerance %g", what, (double)rel, (double)c->tol);
  PetscFunctionReturn(0);
}

/* the whole state of two networks: bitwise (c == NULL) or floating-point state within c->tol */
static PetscErrorCode CompareState(NN net, NN e, Ctx *c)
{
  NNOpt            o, oe;
  NNTrainer        ta, tb;
  NNTrainerCursor *a, *b;

  PetscFunctionBegin;
  PetscCall(NNGetOpt(net, &o));
  PetscCall(NNGetOpt(e, &oe));
  PetscCall(VecCompare(c, net->theta, e->theta, "parameters"));
  PetscCall(VecCompare(c, net->buf, e->buf, "buffers (batch-norm running statistics)"));
  PetscCheck(o->nstate == oe->nstate, PETSC_COMM_SELF, PETSC_ERR_PLIB, "optimizer state count differs");
  for (PetscInt i = 0; i < o->nstate; i++) PetscCall(VecCompare(c, o->state[i], oe->state[i], o->statename[i]));
  PetscCheck(o->nsteps == oe->nsteps, PETSC_COMM_SELF, PETSC_ERR_PLIB, "optimizer steps differ");
  PetscCall(NNGetTrainer(net, &ta));
  PetscCall(NNGetTrainer(e, &tb));
  a = &ta->cursor;
  b = &tb->cursor;
  PetscCheck(!memcmp(&net->rng, &e->rng, sizeof(net->rng)) && !memcmp(&a->rng_epoch, &b->rng_epoch, sizeof(a->rng_epoch)), PETSC_COMM_SELF, PETSC_ERR_PLIB, "generator states differ");
  PetscCheck(a->epoch == b->epoch && a->step == b->step && a->batch == b->batch, PETSC_COMM_SELF, PETSC_ERR_PLIB, "training counters differ");
  /* the count of correct predictions so far is an argmax of floating-point logits: against another build a near-tie may
     flip one sample (24 so far in this epoch); against this build's own save it is exact */
  PetscCheck(c ? PetscAbs(a->epoch_correct - b->epoch_correct) <= 1 : a->epoch_correct == b->epoch_correct, PETSC_COMM_SELF, PETSC_ERR_PLIB, "correct-prediction count %" PetscInt_FMT " vs %" PetscInt_FMT, (PetscInt)a->epoch_correct, (PetscInt)b->epoch_correct);
  if (c) {
    /* the epoch's loss sum so far (3 batches of step 11's epoch) */
    PetscReal rel = PetscAbsReal(a->epoch_loss - b->epoch_loss) / PetscMax(PetscAbsReal(b->epoch_loss), 1);
    if (c->verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  epoch loss sum: relative difference %.3e\n", (double)rel));
    PetscCheck(rel <= c->tol, PETSC_COMM_SELF, PETSC_ERR_PLIB, "epoch loss sum differs from the old build's by %g relative, more than the tolerance %g", (double)rel, (double)c->tol);
  } else PetscCheck(!memcmp(&a->epoch_loss, &b->epoch_loss, sizeof(a->epoch_loss)), PETSC_COMM_SELF, PETSC_ERR_PLIB, "epoch loss sum: saving and loading again changed bits");
  PetscFunctionReturn(0);
}

/* after step 11 the continued run must hold what the old build saved there, within round-off */
static PetscErrorCode Compare(NN net, PetscInt epoch, PetscInt step, PetscReal loss, void *vctx)
{
  Ctx *c = (Ctx *)vctx;

  (void)epoch;
  (void)loss;
  PetscFunctionBegin;
  if (step != 11) PetscFunctionReturn(0);
  PetscCall(CompareState(net, c->expect, c));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "continued from step 3 to step %" PetscInt_FMT ": counters and generators bitwise, parameters, buffers, optimizer state and loss sum within %g relative of the old build's checkpoint\n", step, (double)c->tol));
  c->done = PETSC_TRUE;
  PetscFunctionReturn(0);
}

static PetscErrorCode CreateNet(NN *net)
{
  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, net));
  PetscCall(NNSetFromOptions(*net));
  PetscCall(NNSetInputShape(*net, 1, (PetscInt[]){12}));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  NN     net, again;
  NNData train;
  Ctx    c = {NULL, 8 * 1e-2 * 12 * PETSC_MACHINE_EPSILON / 2 / 1e-8, 0, PETSC_FALSE, PETSC_FALSE}; /* S lr K u / eps */
  char   start[PETSC_MAX_PATH_LEN] = "data/checkpoint_compat_step3.h5", expect[PETSC_MAX_PATH_LEN] = "data/checkpoint_compat_step11.h5";

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-start", start, sizeof(start), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-expect", expect, sizeof(expect), NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-v", &c.verbose, NULL));
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, &train));
  PetscCall(NNDataSetOptionsPrefix(train, "train_"));
  PetscCall(NNDataSetFromOptions(train));
  PetscCall(CreateNet(&c.expect));
  PetscCall(NNCheckpointLoad(c.expect, expect));
  PetscCall(CreateNet(&net));
  PetscCall(NNCheckpointLoad(net, start));

  /* 1. load, save, load: bitwise */
  PetscCall(NNCheckpointSave(net, "checkpoint_compat_resaved.h5"));
  PetscCall(CreateNet(&again));
  PetscCall(NNCheckpointLoad(again, "checkpoint_compat_resaved.h5"));
  PetscCall(CompareState(again, net, NULL));
  PetscCall(NNDestroy(&again));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "old build's step 3 loaded, saved and loaded again: every bit of the state unchanged\n"));

  /* 2. continue to step 11: within the derived tolerance */
  PetscCall(NNTrainMonitorSet(net, Compare, &c, NULL));
  PetscCall(NNTrain(net, train, NULL));
  PetscCheck(c.done, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "training ended before step 11");
  if (c.verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "largest relative difference %.3e (tolerance %g)\n", (double)c.worst, (double)c.tol));
  PetscCall(NNDestroy(&c.expect));
  PetscCall(NNDestroy(&net));
  PetscCall(NNDataDestroy(&train));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      args: -options_file data/checkpoint_compat.opts -train_data_file data/checkpoint_compat_data.h5

TEST*/
