/*
   Structure-aware HDF5 inputs for the HDF5 data-reader and checkpoint targets: instead of raw HDF5
   bytes (which would fuzz the HDF5 library's own parser), an input is a list of edits applied with
   the HDF5 API to a valid reference file: delete a dataset, re-create it with another type, rank
   or shape, overwrite its values (NaN, Inf, huge), replace it by a group, set a string attribute.
   The reader then opens the edited file.
*/
#ifndef PETNN_FUZZ_H5_H
#define PETNN_FUZZ_H5_H
#include <hdf5.h>
#include <math.h>

typedef struct {
  const uint8_t *p;
  size_t         n, i;
} FuzzBytes;

static unsigned FuzzByte(FuzzBytes *b)
{
  return b->i < b->n ? b->p[b->i++] : 0;
}

static double FuzzValue(FuzzBytes *b)
{
  unsigned k = FuzzByte(b);
  switch (k % 8) {
  case 0:
    return NAN;
  case 1:
    return INFINITY;
  case 2:
    return -1e300;
  case 3:
    return (double)(FuzzByte(b) | (FuzzByte(b) << 8) | ((unsigned)FuzzByte(b) << 16) | ((unsigned)FuzzByte(b) << 24)) - 2147483648.0;
  default:
    return (double)k / 16.0 - 4;
  }
}

/* a datatype chosen by one byte: doubles, floats, integers of several sizes, a fixed string */
static hid_t FuzzH5Type(unsigned k)
{
  switch (k % 8) {
  case 0:
    return H5Tcopy(H5T_NATIVE_DOUBLE);
  case 1:
    return H5Tcopy(H5T_NATIVE_FLOAT);
  case 2:
    return H5Tcopy(H5T_NATIVE_INT32);
  case 3:
    return H5Tcopy(H5T_NATIVE_INT64);
  case 4:
    return H5Tcopy(H5T_NATIVE_UINT8);
  case 5:
    return H5Tcopy(H5T_NATIVE_UINT64);
  case 6: {
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, 8);
    return t;
  }
  default:
    return H5Tcopy(H5T_STD_I16BE);
  }
}

/* writes values from the input into every element of dset (only small datasets are filled) */
static void FuzzH5Fill(hid_t dset, FuzzBytes *b)
{
  hid_t    space = H5Dget_space(dset), type = H5Dget_type(dset);
  hssize_t n     = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;

  if (n > 0 && n <= 4096 && type >= 0 && H5Tget_class(type) != H5T_STRING) {
    double *v = (double *)malloc((size_t)n * sizeof(double));
    if (v) {
      for (hssize_t i = 0; i < n; i++) v[i] = FuzzValue(b);
      (void)H5Dwrite(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
      free(v);
    }
  }
  if (type >= 0) H5Tclose(type);
  if (space >= 0) H5Sclose(space);
}

/* creates the groups on the way to path ("a/b/c" needs a and a/b) */
static void FuzzH5Parents(hid_t fid, const char path[])
{
  char buf[256];

  snprintf(buf, sizeof(buf), "%s", path);
  for (char *s = strchr(buf, '/'); s; s = strchr(s + 1, '/')) {
    *s = 0;
    if (buf[0] && H5Lexists(fid, buf, H5P_DEFAULT) <= 0) {
      hid_t g = H5Gcreate2(fid, buf, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      if (g >= 0) H5Gclose(g);
    }
    *s = '/';
  }
}

/* (re)creates path as a dataset of a type, rank and shape read from the input */
static void FuzzH5Create(hid_t fid, const char path[], FuzzBytes *b)
{
  hsize_t dims[6];
  int     rank = (int)(FuzzByte(b) % 6);
  hid_t   type = FuzzH5Type(FuzzByte(b)), space, dset;

  for (int i = 0; i < rank; i++) {
    unsigned k = FuzzByte(b);
    dims[i]    = k >= 0xF0 ? (hsize_t)(k - 0xEF) << 28 : k % 7; /* now and then a huge extent */
  }
  if (H5Lexists(fid, path, H5P_DEFAULT) > 0) (void)H5Ldelete(fid, path, H5P_DEFAULT);
  FuzzH5Parents(fid, path);
  space = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
  dset  = space >= 0 ? H5Dcreate2(fid, path, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : -1;
  if (dset >= 0) {
    FuzzH5Fill(dset, b);
    H5Dclose(dset);
  }
  if (space >= 0) H5Sclose(space);
  H5Tclose(type);
}

/* sets a string attribute of obj (created or replaced) to a string read from the input */
static void FuzzH5Attribute(hid_t fid, const char obj[], const char name[], FuzzBytes *b)
{
  char  s[32];
  int   len = (int)(FuzzByte(b) % sizeof(s));
  hid_t type, space, attr;

  for (int i = 0; i < len; i++) s[i] = (char)FuzzByte(b);
  if (H5Lexists(fid, obj, H5P_DEFAULT) <= 0 && strcmp(obj, "/")) return;
  if (H5Aexists_by_name(fid, obj, name, H5P_DEFAULT) > 0) (void)H5Adelete_by_name(fid, obj, name, H5P_DEFAULT);
  type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, len ? (size_t)len : 1);
  space = H5Screate(H5S_SCALAR);
  attr  = H5Acreate_by_name(fid, obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (attr >= 0) {
    (void)H5Awrite(attr, type, len ? s : "");
    H5Aclose(attr);
  }
  H5Sclose(space);
  H5Tclose(type);
}

/* applies the input's edits to the open file: names are the datasets it may touch, attrs pairs
   "object", "attribute" it may set */
static void FuzzH5Edit(hid_t fid, const char *const names[], int nnames, const char *const attrs[], int nattrs, FuzzBytes *b)
{
  int nops = (int)(FuzzByte(b) % 8);

  for (int op = 0; op < nops; op++) {
    unsigned    kind = FuzzByte(b) % 5;
    const char *name = names[FuzzByte(b) % (unsigned)nnames];
    switch (kind) {
    case 0:
      if (H5Lexists(fid, name, H5P_DEFAULT) > 0) (void)H5Ldelete(fid, name, H5P_DEFAULT);
      break;
    case 1:
      FuzzH5Create(fid, name, b);
      break;
    case 2:
      if (H5Lexists(fid, name, H5P_DEFAULT) > 0) {
        hid_t d = H5Dopen2(fid, name, H5P_DEFAULT); /* fails on a group */
        if (d >= 0) {
          FuzzH5Fill(d, b);
          H5Dclose(d);
        }
      }
      break;
    case 3:
      if (nattrs) {
        unsigned a = FuzzByte(b) % (unsigned)nattrs;
        FuzzH5Attribute(fid, attrs[2 * a], attrs[2 * a + 1], b);
      }
      break;
    default: /* a group where a dataset is expected */
      if (H5Lexists(fid, name, H5P_DEFAULT) > 0) (void)H5Ldelete(fid, name, H5P_DEFAULT);
      FuzzH5Parents(fid, name);
      {
        hid_t g = H5Gcreate2(fid, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (g >= 0) H5Gclose(g);
      }
    }
  }
}

/* copies the reference file ref to path and applies the input's edits; 0 on success */
static int FuzzH5Make(const char ref[], const char path[], const char *const names[], int nnames, const char *const attrs[], int nattrs, const uint8_t *data, size_t size)
{
  FuzzBytes b = {data, size, 0};
  hid_t     fid;
  FILE     *in = fopen(ref, "rb"), *out = fopen(path, "wb");
  char      buf[4096];
  size_t    n;

  if (!in || !out) {
    if (in) fclose(in);
    if (out) fclose(out);
    return 1;
  }
  while ((n = fread(buf, 1, sizeof(buf), in)) > 0) fwrite(buf, 1, n, out);
  fclose(in);
  if (fclose(out)) return 1;
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  fid = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  if (fid < 0) return 1;
  FuzzH5Edit(fid, names, nnames, attrs, nattrs, &b);
  return H5Fclose(fid) < 0;
}
#endif
