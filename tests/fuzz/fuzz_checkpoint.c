/*
   Fuzz target: the checkpoint loader (NNCheckpointLoad).

   A small network (dense 4->3, tanh, dense 3->2, Adam) is built once and saves a reference
   checkpoint; an input is a list of edits (fuzz_h5.h) of that checkpoint (its datasets, a few that
   it lacks, and the format, loss and optimizer-type attributes), which the network then loads.
*/
#define FUZZ_NAME checkpoint
#include "fuzz.h"
#include "fuzz_h5.h"

#define FUZZ_MAX_NAMES 64

static NN    fuzz_net = NULL;
static char  fuzz_ckref[PETSC_MAX_PATH_LEN] = "";
static char *fuzz_names[FUZZ_MAX_NAMES];
static int   fuzz_nnames = 0;

static herr_t FuzzCollect(hid_t obj, const char *name, const H5O_info_t *info, void *ctx)
{
  (void)obj;
  (void)ctx;
  if (info->type == H5O_TYPE_DATASET && fuzz_nnames < FUZZ_MAX_NAMES - 4) fuzz_names[fuzz_nnames++] = strdup(name);
  return 0;
}

/* the network and its reference checkpoint, once per process */
static int FuzzCheckpointReference(void)
{
  hid_t fid;

  if (fuzz_net) return 0;
  FuzzTempName(fuzz_ckref, sizeof(fuzz_ckref), "ref-ckpt.h5");
  if (PetscOptionsInsertString(NULL, "-fz_nn_layers fc1,act,fc2 -fz_fc1_type dense -fz_fc1_units 3 -fz_act_type tanh -fz_fc2_type dense -fz_fc2_units 2 -fz_opt_type adam")) return 1;
  if (NNCreate(PETSC_COMM_SELF, &fuzz_net) || NNSetOptionsPrefix(fuzz_net, "fz_") || NNSetInputShape(fuzz_net, 1, (PetscInt[]){4}) || NNSetFromOptions(fuzz_net) || NNSetUp(fuzz_net)) return 1;
  if (NNCheckpointSave(fuzz_net, fuzz_ckref)) return 1;
  fid = H5Fopen(fuzz_ckref, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (fid < 0) return 1;
  (void)H5Ovisit2(fid, H5_INDEX_NAME, H5_ITER_INC, FuzzCollect, NULL, H5O_INFO_BASIC);
  H5Fclose(fid);
  /* and datasets a checkpoint of another network would have */
  fuzz_names[fuzz_nnames++] = strdup("fc3/weight");
  fuzz_names[fuzz_nnames++] = strdup("optimizer/exp_avg/fc3/weight");
  fuzz_names[fuzz_nnames++] = strdup("training/extra");
  fuzz_names[fuzz_nnames++] = strdup("bn1/running_mean");
  return 0;
}

static int FuzzOne_checkpoint(const uint8_t *data, size_t size)
{
  static const char *const attrs[] = {"/", "format", "/", "loss", "optimizer", "type"};
  char                     file[PETSC_MAX_PATH_LEN];

  if (FuzzCheckpointReference()) return 0;
  FuzzTempName(file, sizeof(file), "ckpt.h5");
  if (FuzzH5Make(fuzz_ckref, file, (const char *const *)fuzz_names, fuzz_nnames, attrs, 3, data, size)) return 0;
  (void)NNCheckpointLoad(fuzz_net, file);
  unlink(file);
  return 0;
}
