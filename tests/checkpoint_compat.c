static char help[] = "Checkpoints of the build before the network object was split load and continue bitwise.\n\n"
                     "  -start <file>   checkpoint to continue from (after optimizer step 3)\n"
                     "  -expect <file>  checkpoint of the same run after step 11\n\n";

/*
   tests/data/checkpoint_compat_step3.h5 and checkpoint_compat_step11.h5 were written by main
   0838809 (the generator tests/data/checkpoint_compat_gen.c, whose header has the commands):
   dense - batchnorm1d - relu - dropout - dense trained with Adam on 64 samples in batches of 8,
   saved mid-epoch after steps 3 and 11. This build loads the first, continues training, and after
   step 11 compares the parameters, buffers, optimizer state, generator states and training
   counters bitwise with the second. The data sets are HDF5 files (*.h5 is in .gitignore; they are
   committed with git add -f).
*/
#include <petnn/private/trainerimpl.h>
#include <string.h>

typedef struct {
  NN        expect; /* the network loaded from the -expect checkpoint */
  PetscBool done;
} Ctx;

static PetscErrorCode VecSameBits(Vec a, Vec b, const char what[])
{
  const PetscScalar *x, *y;
  PetscInt           n, m;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(a, &n));
  PetscCall(VecGetLocalSize(b, &m));
  PetscCheck(n == m, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: %" PetscInt_FMT " vs %" PetscInt_FMT " entries", what, n, m);
  PetscCall(VecGetArrayRead(a, &x));
  PetscCall(VecGetArrayRead(b, &y));
  PetscCheck(!n || !memcmp(x, y, n * sizeof(PetscScalar)), PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s differs from the checkpoint written by the old build", what);
  PetscCall(VecRestoreArrayRead(b, &y));
  PetscCall(VecRestoreArrayRead(a, &x));
  PetscFunctionReturn(0);
}

/* after step 11 the continued run must hold exactly what the old build saved there */
static PetscErrorCode Compare(NN net, PetscInt epoch, PetscInt step, PetscReal loss, void *vctx)
{
  Ctx *c = (Ctx *)vctx;
  NN   e = c->expect;
  NNOpt o, oe;
  NNTrainer        ta, tb;
  NNTrainerCursor *a, *b;

  (void)epoch;
  (void)loss;
  PetscFunctionBegin;
  if (step != 11) PetscFunctionReturn(0);
  PetscCall(NNGetOpt(net, &o));
  PetscCall(NNGetOpt(e, &oe));
  PetscCall(VecSameBits(net->theta, e->theta, "parameters"));
  PetscCall(VecSameBits(net->buf, e->buf, "buffers (batch-norm running statistics)"));
  PetscCheck(o->nstate == oe->nstate, PETSC_COMM_SELF, PETSC_ERR_PLIB, "optimizer state count differs");
  for (PetscInt i = 0; i < o->nstate; i++) PetscCall(VecSameBits(o->state[i], oe->state[i], o->statename[i]));
  PetscCheck(o->nsteps == oe->nsteps, PETSC_COMM_SELF, PETSC_ERR_PLIB, "optimizer steps differ");
  PetscCall(NNGetTrainer(net, &ta));
  PetscCall(NNGetTrainer(e, &tb));
  a = &ta->cursor;
  b = &tb->cursor;
  PetscCheck(!memcmp(&net->rng, &e->rng, sizeof(net->rng)) && !memcmp(&a->rng_epoch, &b->rng_epoch, sizeof(a->rng_epoch)), PETSC_COMM_SELF, PETSC_ERR_PLIB, "generator states differ");
  PetscCheck(a->epoch == b->epoch && a->step == b->step && a->batch == b->batch && a->epoch_correct == b->epoch_correct, PETSC_COMM_SELF, PETSC_ERR_PLIB, "training counters differ");
  PetscCheck(!memcmp(&a->epoch_loss, &b->epoch_loss, sizeof(a->epoch_loss)), PETSC_COMM_SELF, PETSC_ERR_PLIB, "epoch loss sum differs");
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "continued from step 3 to step %" PetscInt_FMT " (epoch %" PetscInt_FMT ", batch %" PetscInt_FMT "): parameters, buffers, optimizer state, generators and counters bitwise equal to the old build's checkpoint\n", step, a->epoch + 1, a->batch));
  c->done = PETSC_TRUE;
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  NN     net;
  NNData train;
  Ctx    c = {NULL, PETSC_FALSE};
  char   start[PETSC_MAX_PATH_LEN] = "data/checkpoint_compat_step3.h5", expect[PETSC_MAX_PATH_LEN] = "data/checkpoint_compat_step11.h5";

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-start", start, sizeof(start), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-expect", expect, sizeof(expect), NULL));
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, &train));
  PetscCall(NNDataSetOptionsPrefix(train, "train_"));
  PetscCall(NNDataSetFromOptions(train));
  PetscCall(NNCreate(PETSC_COMM_WORLD, &c.expect));
  PetscCall(NNSetFromOptions(c.expect));
  PetscCall(NNSetInputShape(c.expect, 1, (PetscInt[]){12}));
  PetscCall(NNCheckpointLoad(c.expect, expect));
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetFromOptions(net));
  PetscCall(NNSetInputShape(net, 1, (PetscInt[]){12}));
  PetscCall(NNCheckpointLoad(net, start));
  PetscCall(NNTrainMonitorSet(net, Compare, &c, NULL));
  PetscCall(NNTrain(net, train, NULL));
  PetscCheck(c.done, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "training ended before step 11");
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
