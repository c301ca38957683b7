/*
   The restart cursor in a checkpoint: where training stands (epochs and steps done, the position
   in the current epoch, its partial sums) and the generator states, each entry stored under its
   own dataset name. One table lists them; saving writes every entry, loading reads the ones
   present and applies them by the rules in NNCheckpointApplyCursor().
*/
#include <petnn/private/trainerimpl.h>
#include <stddef.h>

typedef enum {
  NN_CURSOR_INT64, /* an int64 scalar */
  NN_CURSOR_RNG,   /* uint64[4]: a generator state */
  NN_CURSOR_REAL   /* a double scalar */
} NNCursorKind;

/* in the order checkpoints have always written them */
static const struct {
  const char  *name;
  NNCursorKind kind;
  size_t       offset;
} NNCursorTable[NN_CURSOR_NENTRIES] = {
  {"rng/state",              NN_CURSOR_RNG,   offsetof(NNCheckpointCursor, rng)          },
  {"rng/epoch_state",        NN_CURSOR_RNG,   offsetof(NNCheckpointCursor, rng_epoch)    },
  {"training/epoch",         NN_CURSOR_INT64, offsetof(NNCheckpointCursor, epoch)        },
  {"training/step",          NN_CURSOR_INT64, offsetof(NNCheckpointCursor, step)         },
  {"training/batch",         NN_CURSOR_INT64, offsetof(NNCheckpointCursor, batch)        },
  {"training/epoch_correct", NN_CURSOR_INT64, offsetof(NNCheckpointCursor, epoch_correct)},
  {"training/epoch_loss",    NN_CURSOR_REAL,  offsetof(NNCheckpointCursor, epoch_loss)   },
};

/* the entry of the cursor named name: the index into the table (and found[]) */
static PetscInt NNCursorIndex(const char name[])
{
  for (PetscInt i = 0; i < NN_CURSOR_NENTRIES; i++)
    if (!strcmp(NNCursorTable[i].name, name)) return i;
  return -1;
}

static PetscBool NNCursorFound(const NNCheckpointCursor *cur, const char name[])
{
  return cur->found[NNCursorIndex(name)];
}

/* writes every entry of the network's cursor */
PetscErrorCode NNCheckpointWriteCursor(NN net, int64_t fid)
{
  NNCheckpointCursor cur;
  NNTrainerCursor   *tc;

  PetscFunctionBegin;
  PetscCall(NNGetTrainerCursor(net, NULL, &tc));
  PetscCall(PetscMemzero(&cur, sizeof(cur)));
  PetscCall(PetscMemcpy(cur.rng, net->rng.s, sizeof(cur.rng)));
  PetscCall(PetscMemcpy(cur.rng_epoch, tc->rng_epoch.s, sizeof(cur.rng_epoch)));
  cur.epoch         = tc->epoch;
  cur.step          = tc->step;
  cur.batch         = tc->batch;
  cur.epoch_correct = tc->epoch_correct;
  cur.epoch_loss    = tc->epoch_loss;
  for (PetscInt i = 0; i < NN_CURSOR_NENTRIES; i++) {
    char *at = (char *)&cur + NNCursorTable[i].offset;
    switch (NNCursorTable[i].kind) {
    case NN_CURSOR_INT64:
      PetscCall(NNH5WriteInt64(fid, NNCursorTable[i].name, 0, NULL, (int64_t *)at));
      break;
    case NN_CURSOR_RNG:
      PetscCall(NNH5WriteUInt64(fid, NNCursorTable[i].name, 1, (PetscInt[]){4}, (uint64_t *)at));
      break;
    case NN_CURSOR_REAL: {
      PetscScalar v = *(PetscReal *)at;
      PetscCall(NNH5WriteArray(fid, NNCursorTable[i].name, 0, NULL, &v));
    } break;
    }
  }
  PetscFunctionReturn(0);
}

/* reads the entries present in the file (rank 0) */
PetscErrorCode NNCheckpointReadCursor(NN net, int64_t fid, const char file[], NNCheckpointCursor *cur)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < NN_CURSOR_NENTRIES; i++) {
    char     *at = (char *)cur + NNCursorTable[i].offset;
    PetscBool has;
    PetscCall(NNH5IsDataset(fid, NNCursorTable[i].name, &has));
    cur->found[i] = has;
    if (!has) continue;
    switch (NNCursorTable[i].kind) {
    case NN_CURSOR_INT64:
      PetscCall(NNH5ReadInt64(fid, NNCursorTable[i].name, 0, NULL, (int64_t *)at));
      PetscCheck(*(int64_t *)at >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Checkpoint %s has a negative %s", file, NNCursorTable[i].name);
      break;
    case NN_CURSOR_RNG:
      PetscCall(NNH5ReadUInt64(fid, NNCursorTable[i].name, 1, (PetscInt[]){4}, (uint64_t *)at));
      break;
    case NN_CURSOR_REAL: {
      PetscScalar v;
      PetscCall(NNH5ReadArray(fid, NNCursorTable[i].name, 0, NULL, &v));
      *(PetscReal *)at = PetscRealPart(v);
    } break;
    }
  }
  if (!NNCursorFound(cur, "rng/state")) PetscCall(PetscInfo(net, "Checkpoint %s has no rng/state: the generator keeps its state\n", file));
  if (!NNCursorFound(cur, "training/epoch") || !NNCursorFound(cur, "training/step")) PetscCall(PetscInfo(net, "Checkpoint %s has no training/epoch and training/step: training starts at epoch 0\n", file));
  PetscFunctionReturn(0);
}

/* the generator continues from the stored state; the counters when both epoch and step are stored;
   the position in an epoch (batch, the generator at the epoch's start, partial sums) when a
   checkpoint was written during one, else the start of the next epoch */
PetscErrorCode NNCheckpointApplyCursor(NN net, const NNCheckpointCursor *cur)
{
  PetscBool        counters = (PetscBool)(NNCursorFound(cur, "training/epoch") && NNCursorFound(cur, "training/step"));
  NNTrainerCursor *tc;

  PetscFunctionBegin;
  PetscCall(NNGetTrainerCursor(net, NULL, &tc));
  if (NNCursorFound(cur, "rng/state")) PetscCall(PetscMemcpy(net->rng.s, cur->rng, sizeof(net->rng.s)));
  if (counters) {
    tc->epoch = (PetscInt)cur->epoch;
    tc->step  = (PetscInt)cur->step;
  }
  tc->batch         = 0;
  tc->epoch_loss    = 0;
  tc->epoch_correct = 0;
  if (counters && NNCursorFound(cur, "training/batch") && NNCursorFound(cur, "rng/epoch_state")) { /* continue inside the epoch: its permutation comes from the state at its start */
    tc->batch = (PetscInt)cur->batch;
    if (NNCursorFound(cur, "training/epoch_correct")) tc->epoch_correct = (PetscInt)cur->epoch_correct;
    if (NNCursorFound(cur, "training/epoch_loss")) tc->epoch_loss = cur->epoch_loss;
    PetscCall(PetscMemcpy(tc->rng_epoch.s, cur->rng_epoch, sizeof(tc->rng_epoch.s)));
  }
  PetscFunctionReturn(0);
}
