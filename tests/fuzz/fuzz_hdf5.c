/*
   Fuzz target: the HDF5 data reader (NNDATAHDF5).

   Input: byte 0 = options (bit 0: -data_max_samples 2, bit 1: read "features"/"targets" instead of
   x/y), then edits (fuzz_h5.h) of a valid reference file with x [5,3] and y [5] (doubles), which
   may delete, re-type, re-shape or refill x, y, features, targets or g/x.
*/
#define FUZZ_NAME hdf5
#include "fuzz.h"
#include "fuzz_h5.h"

static char fuzz_h5ref[PETSC_MAX_PATH_LEN] = "";

/* the reference file, written once per process */
static int FuzzH5Reference(void)
{
  hid_t   fid, space, dset;
  hsize_t dx[2] = {5, 3}, dy[1] = {5};
  double  x[15], y[5];

  if (fuzz_h5ref[0]) return 0;
  FuzzTempName(fuzz_h5ref, sizeof(fuzz_h5ref), "ref.h5");
  for (int i = 0; i < 15; i++) x[i] = 0.25 * i - 1;
  for (int i = 0; i < 5; i++) y[i] = i % 3;
  fid = H5Fcreate(fuzz_h5ref, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (fid < 0) return 1;
  space = H5Screate_simple(2, dx, NULL);
  dset  = H5Dcreate2(fid, "x", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x);
  H5Dclose(dset);
  H5Sclose(space);
  space = H5Screate_simple(1, dy, NULL);
  dset  = H5Dcreate2(fid, "y", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, y);
  H5Dclose(dset);
  H5Sclose(space);
  return H5Fclose(fid) < 0;
}

static int FuzzOne_hdf5(const uint8_t *data, size_t size)
{
  static const char *const names[] = {"x", "y", "features", "targets", "g/x"};
  char                     file[PETSC_MAX_PATH_LEN];

  if (size < 1 || FuzzH5Reference()) return 0;
  FuzzTempName(file, sizeof(file), "data.h5");
  if (FuzzH5Make(fuzz_h5ref, file, names, 5, NULL, 0, data + 1, size - 1)) return 0;
  FuzzBegin();
  (void)PetscOptionsSetValue(NULL, "-fz_data_file", file);
  if (data[0] & 1) (void)PetscOptionsSetValue(NULL, "-fz_data_max_samples", "2");
  if (data[0] & 2) {
    (void)PetscOptionsSetValue(NULL, "-fz_data_features", "features");
    (void)PetscOptionsSetValue(NULL, "-fz_data_targets", "targets");
  }
  FuzzDataSet("hdf5");
  FuzzEnd();
  unlink(file);
  return 0;
}
