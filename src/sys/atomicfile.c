/*
   Atomic HDF5 files: written to "<file>.tmp.<pid>", flushed, closed, synced and renamed over <file>,
   so a crash or a failure leaves the previous file intact (checkpoints, gradient dumps).
*/
#include <petnn/private/nnimpl.h>
#include <hdf5.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
/* ---------------------------------------------------------------- atomic files */

/* creates "<file>.tmp.<pid>" for writing */
PetscErrorCode NNAtomicCreate(const char file[], const char what[], NNAtomicFile *a)
{
  char      dir[PETSC_MAX_PATH_LEN], msg[256], *slash;
  PetscBool isdir;

  PetscFunctionBegin;
  a->fid = -1;
  PetscCall(PetscSNPrintf(a->tmp, sizeof(a->tmp), "%s.tmp.%d", file, (int)getpid()));
  PetscCall(PetscStrncpy(dir, file, sizeof(dir)));
  PetscCall(PetscStrrchr(dir, '/', &slash));
  if (slash == dir) PetscCall(PetscStrncpy(dir, ".", sizeof(dir))); /* no slash */
  else if (slash == dir + 1) dir[1] = 0;                            /* "/file" */
  else slash[-1] = 0;
  PetscCall(PetscTestDirectory(dir, 'w', &isdir));
  PetscCheck(isdir, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot write %s %s: directory %s does not exist or is not writable", what, file, dir);
  PetscCall(NNH5SilenceErrors(PETSC_TRUE));
  a->fid = H5Fcreate(a->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  PetscCall(NNH5ErrorMessage(sizeof(msg), msg));
  PetscCall(NNH5SilenceErrors(PETSC_FALSE));
  PetscCheck(a->fid >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot write %s %s: cannot create the temporary file %s%s%s", what, file, a->tmp, msg[0] ? ": " : "", msg);
  PetscFunctionReturn(0);
}

/* closes and removes the temporary file; never fails (it runs on error paths) */
void NNAtomicAbort(NNAtomicFile *a)
{
  if (a->fid >= 0) {
    H5Fclose(a->fid);
    a->fid = -1;
  }
  if (a->tmp[0]) (void)unlink(a->tmp);
  a->tmp[0] = 0;
}

/* flushes, closes and syncs the temporary file, then renames it over file */
PetscErrorCode NNAtomicCommit(NNAtomicFile *a, const char file[], const char what[])
{
  char msg[256];
  int  fd, ok;

  PetscFunctionBegin;
  ok = H5Fflush(a->fid, H5F_SCOPE_GLOBAL) >= 0;
  ok = (H5Fclose(a->fid) >= 0) && ok;
  a->fid = -1;
  PetscCall(NNH5ErrorMessage(sizeof(msg), msg));
  PetscCheck(ok, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "Cannot write %s %s: flushing %s failed (disk full?)%s%s", what, file, a->tmp, msg[0] ? ": " : "", msg);
  fd = open(a->tmp, O_RDONLY);
  PetscCheck(fd >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "Cannot write %s %s: reopening %s failed: %s", what, file, a->tmp, strerror(errno));
  ok = fsync(fd) == 0;
  (void)close(fd);
  PetscCheck(ok, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "Cannot write %s %s: fsync of %s failed: %s", what, file, a->tmp, strerror(errno));
  PetscCheck(rename(a->tmp, file) == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "Cannot write %s %s: renaming %s failed: %s", what, file, a->tmp, strerror(errno));
  a->tmp[0] = 0;
  PetscFunctionReturn(0);
}

