/*
   Fuzz target: the PETSc binary data reader (NNDATABINARY).

   Input: byte 0 = how the data set is described (bits 0-1: nothing, -data_sample_size 3,
   -data_shape 1,2,3 or -data_shape 2,2; bit 2: the targets are a second file), bytes 1-2 = where
   the features file ends when bit 2 is set, then the file bytes (features, then targets).
*/
#define FUZZ_NAME binary
#include "fuzz.h"

static int FuzzOne_binary(const uint8_t *data, size_t size)
{
  char   file[PETSC_MAX_PATH_LEN], tfile[PETSC_MAX_PATH_LEN];
  size_t split, n;
  int    mode, two;

  if (size < 3) return 0;
  mode  = data[0] & 3;
  two   = (data[0] >> 2) & 1;
  n     = size - 3;
  split = two && n ? (size_t)(data[1] | (data[2] << 8)) % (n + 1) : n;
  FuzzTempName(file, sizeof(file), "features.dat");
  FuzzTempName(tfile, sizeof(tfile), "targets.dat");
  if (FuzzWriteFile(file, data + 3, split) || (two && FuzzWriteFile(tfile, data + 3 + split, n - split))) return 0;
  FuzzBegin();
  (void)PetscOptionsSetValue(NULL, "-fz_data_file", file);
  if (two) (void)PetscOptionsSetValue(NULL, "-fz_data_targets_file", tfile);
  if (mode == 1) (void)PetscOptionsSetValue(NULL, "-fz_data_sample_size", "3");
  if (mode == 2) (void)PetscOptionsSetValue(NULL, "-fz_data_shape", "1,2,3");
  if (mode == 3) (void)PetscOptionsSetValue(NULL, "-fz_data_shape", "2,2");
  FuzzDataSet("binary");
  FuzzEnd();
  unlink(file);
  if (two) unlink(tfile);
  return 0;
}
