/*
   Atomic HDF5 files: built in memory, written to "<file>.tmp.<pid>", synced and renamed over <file>,
   so a crash or a failure (a full disk) leaves the previous file intact (checkpoints, gradient dumps).
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
  { /* the file is built in memory and written by NNAtomicCommit(): HDF5 1.10 crashes in H5Fclose()
       (and at exit) after a failed write, so a full disk must fail in our write(), not in HDF5's */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_fapl_core(fapl, (size_t)1 << 20, 0) >= 0) a->fid = H5Fcreate(a->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (fapl >= 0) H5Pclose(fapl);
  }
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

/* writes n bytes to fd; 0 or an errno */
static int NNWriteAll(int fd, const char *buf, size_t n)
{
  while (n > 0) {
    ssize_t w = write(fd, buf, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return w < 0 ? errno : ENOSPC;
    buf += w;
    n -= (size_t)w;
  }
  return 0;
}

/* writes the in-memory file to "<file>.tmp.<pid>", syncs it, then renames it over file */
PetscErrorCode NNAtomicCommit(NNAtomicFile *a, const char file[], const char what[])
{
  char    msg[256], *image = NULL;
  ssize_t size;
  int     fd, err = 0, ok;

  PetscFunctionBegin;
  ok   = H5Fflush(a->fid, H5F_SCOPE_GLOBAL) >= 0;
  size = ok ? H5Fget_file_image(a->fid, NULL, 0) : -1;
  PetscCall(NNH5ErrorMessage(sizeof(msg), msg));
  PetscCheck(size > 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "Cannot write %s %s: HDF5 cannot make the file image%s%s", what, file, msg[0] ? ": " : "", msg);
  PetscCall(PetscMalloc1((size_t)size, &image));
  ok = H5Fget_file_image(a->fid, image, (size_t)size) == size;
  ok = (H5Fclose(a->fid) >= 0) && ok;
  a->fid = -1;
  if (!ok) PetscCall(PetscFree(image));
  PetscCheck(ok, PETSC_COMM_SELF, PETSC_ERR_LIB, "Cannot write %s %s: HDF5 cannot make the file image", what, file);
  fd = open(a->tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) err = errno;
  else {
    err = NNWriteAll(fd, image, (size_t)size);
    if (!err && fsync(fd)) err = errno;
    if (close(fd) && !err) err = errno;
  }
  PetscCall(PetscFree(image));
  PetscCheck(fd >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot write %s %s: cannot create the temporary file %s: %s", what, file, a->tmp, strerror(err));
  PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "Cannot write %s %s: writing %s failed (disk full?): %s", what, file, a->tmp, strerror(err));
  PetscCheck(rename(a->tmp, file) == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "Cannot write %s %s: renaming %s failed: %s", what, file, a->tmp, strerror(errno));
  a->tmp[0] = 0;
  PetscFunctionReturn(0);
}
