/*
   Shared scaffolding of the PetNN fuzz targets (libFuzzer, tests/fuzz/fuzz_*.c).

   Each target defines FUZZ_NAME, a function FuzzOne_<name>(data, size) that turns one input into
   files or options, runs the reader on them and destroys every object, and includes this header.
   PETSc is initialized once; PETSc errors return (PetscReturnErrorHandler) so a rejected input is
   a normal return. Allocations through PetscMalloc larger than FUZZ_MAX_ALLOC fail with
   PETSC_ERR_MEM, as they would on a machine without that memory, so header sizes of a few
   gigabytes test the error path instead of the fuzzer's memory limit.

   Built with -DPETNN_FUZZ_NO_ENTRY the file defines no libFuzzer entry points: tests/fuzzreplay.c
   includes all targets and replays the seed corpora and the crash reproducers in the test suite.
*/
#ifndef PETNN_FUZZ_H
#define PETNN_FUZZ_H
#include <petnn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#if defined(__has_feature)
  #if __has_feature(address_sanitizer)
    #define FUZZ_HAVE_LSAN 1
  #endif
#endif
#if !defined(FUZZ_HAVE_LSAN) && defined(__SANITIZE_ADDRESS__)
  #define FUZZ_HAVE_LSAN 1
#endif
#if defined(FUZZ_HAVE_LSAN)
  #include <sanitizer/lsan_interface.h>
#endif

#define FUZZ_MAX_ALLOC ((size_t)256 << 20)

static PetscErrorCode (*FuzzMallocNext)(size_t, PetscBool, int, const char[], const char[], void **);
static PetscErrorCode (*FuzzReallocNext)(size_t, int, const char[], const char[], void **);

static PetscErrorCode FuzzMalloc(size_t n, PetscBool clear, int line, const char fn[], const char file[], void **p)
{
  if (n > FUZZ_MAX_ALLOC) {
    *p = NULL;
    return PetscError(PETSC_COMM_SELF, line, fn, file, PETSC_ERR_MEM, PETSC_ERROR_INITIAL, "Fuzzing: refusing to allocate %zu bytes", n);
  }
  return FuzzMallocNext(n, clear, line, fn, file, p);
}

static PetscErrorCode FuzzRealloc(size_t n, int line, const char fn[], const char file[], void **p)
{
  if (n > FUZZ_MAX_ALLOC) return PetscError(PETSC_COMM_SELF, line, fn, file, PETSC_ERR_MEM, PETSC_ERROR_INITIAL, "Fuzzing: refusing to allocate %zu bytes", n);
  return FuzzReallocNext(n, line, fn, file, p);
}

/* writes size bytes to path; 0 on success */
static int FuzzWriteFile(const char path[], const uint8_t *data, size_t size)
{
  FILE  *f = fopen(path, "wb");
  size_t w;

  if (!f) return 1;
  w = size ? fwrite(data, 1, size, f) : 0;
  return (fclose(f) != 0 || w != size);
}

/* a per-process scratch file name "<dir>/petnn-fuzz-<pid>-<tag>" */
static void FuzzTempName(char path[], size_t len, const char tag[])
{
  const char *dir = getenv("TMPDIR");
  snprintf(path, len, "%s/petnn-fuzz-%d-%s", dir && dir[0] ? dir : "/tmp", (int)getpid(), tag);
}

static int fuzz_initialized = 0;

/* PETSc once per process: no signal handler (the sanitizers report crashes), errors return */
static int FuzzInitialize(int *argc, char ***argv)
{
  PetscErrorCode ierr;

  if (fuzz_initialized) return 0;
#if defined(FUZZ_HAVE_LSAN)
  __lsan_disable(); /* what MPI_Init allocates and never frees is not an input's leak */
#endif
  ierr = PetscInitialize(argc, argv, NULL, NULL);
#if defined(FUZZ_HAVE_LSAN)
  __lsan_enable();
#endif
  if (ierr) return 1;
  if (PetscPushErrorHandler(PetscReturnErrorHandler, NULL)) return 1;
  /* wraps whatever allocator PETSc chose (plain or -malloc_debug); frees need no wrapper */
  FuzzMallocNext  = PetscTrMalloc;
  FuzzReallocNext = PetscTrRealloc;
  PetscTrMalloc   = FuzzMalloc;
  PetscTrRealloc  = FuzzRealloc;
  fuzz_initialized = 1;
  return 0;
}

/* sets up a data set of the given type from the -fz_data_* options, fills a batch of its first and
   last samples and views it; objects are returned so that the caller destroys them after an error */
static PetscErrorCode FuzzDataSetUse(const char type[], NNData *d, Vec *x, Vec *t, PetscViewer *v)
{
  PetscInt n, sz, k, ids[2];
  NNShape  s;

  PetscFunctionBegin;
  PetscCall(NNDataCreate(PETSC_COMM_SELF, d));
  PetscCall(NNDataSetOptionsPrefix(*d, "fz_"));
  PetscCall(NNDataSetType(*d, type));
  PetscCall(NNDataSetFromOptions(*d));
  PetscCall(NNDataGetNumSamples(*d, &n));
  PetscCall(NNDataGetSampleShape(*d, &s));
  PetscCall(NNDataGetTargetSize(*d, &k));
  sz     = NNShapeSize(&s);
  ids[0] = 0;
  ids[1] = n - 1;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 2 * sz, x));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 2 * k, t));
  PetscCall(NNDataGetBatch(*d, 2, ids, *x, *t));
  PetscCall(PetscViewerASCIIOpen(PETSC_COMM_SELF, "/dev/null", v));
  PetscCall(NNDataView(*d, *v));
  PetscFunctionReturn(0);
}

static PetscOptions fuzz_options = NULL;

/* a fresh options database for one input (the target's -fz_* options), thrown away by FuzzEnd() */
static void FuzzBegin(void)
{
  if (!PetscOptionsCreate(&fuzz_options)) (void)PetscOptionsPush(fuzz_options);
}

static void FuzzEnd(void)
{
  if (!fuzz_options) return;
  (void)PetscOptionsPop();
  (void)PetscOptionsDestroy(&fuzz_options);
}

/* FuzzDataSetUse(), then destroys everything */
static void FuzzDataSet(const char type[])
{
  NNData      d = NULL;
  Vec         x = NULL, t = NULL;
  PetscViewer v = NULL;

  (void)FuzzDataSetUse(type, &d, &x, &t, &v);
  (void)PetscViewerDestroy(&v);
  (void)VecDestroy(&x);
  (void)VecDestroy(&t);
  (void)NNDataDestroy(&d);
}

#ifndef PETNN_FUZZ_NO_ENTRY
  #define FUZZ_CAT2(a, b) a##b
  #define FUZZ_CAT(a, b)  FUZZ_CAT2(a, b)
static int FUZZ_CAT(FuzzOne_, FUZZ_NAME)(const uint8_t *, size_t);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  /* libFuzzer's own flags are not PETSc options; PETSc's SIGSEGV handler would abort before the
     sanitizer reports the crash and libFuzzer saves the input */
  int   n      = 2;
  char *args[] = {(*argv)[0], (char *)"-no_signal_handler", NULL}, **a = args;

  (void)argc;
  return FuzzInitialize(&n, &a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  (void)FUZZ_CAT(FuzzOne_, FUZZ_NAME)(data, size);
  return 0;
}
#endif
#endif
