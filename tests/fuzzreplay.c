static char help[] = "Replays the fuzz targets' seed corpora and crash reproducers (tests/fuzz/<target>/{corpus,regressions})\n"
                     "through the readers they fuzz, in the ordinary build: every input must be handled (accepted\n"
                     "or refused with a PETSc error) without a crash, and, under make sanitize or valgrind, without\n"
                     "a leak or a memory error. The HDF5 and checkpoint targets need the HDF5 API to build their\n"
                     "files and are replayed by the fuzzing build (ctest --test-dir build-fuzz).\n\n";

#define PETNN_FUZZ_NO_ENTRY
#include "fuzz/fuzz_idx.c"
#undef FUZZ_NAME
#include "fuzz/fuzz_binary.c"
#undef FUZZ_NAME
#include "fuzz/fuzz_options.c"
#include <dirent.h>
#include <stdlib.h>

typedef int (*FuzzOneFn)(const uint8_t *, size_t);

static int FuzzCompare(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* runs fn on every file of dir (in name order); prints how many */
static PetscErrorCode Replay(const char target[], const char set[], FuzzOneFn fn)
{
  char           dir[PETSC_MAX_PATH_LEN], path[2 * PETSC_MAX_PATH_LEN], *names[4096];
  DIR           *d;
  struct dirent *e;
  int            n = 0;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(dir, sizeof(dir), "fuzz/%s/%s", target, set));
  d = opendir(dir);
  if (!d) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s/%s: none\n", target, set));
    PetscFunctionReturn(0);
  }
  while ((e = readdir(d)) && n < 4096)
    if (e->d_name[0] != '.') names[n++] = strdup(e->d_name);
  closedir(d);
  qsort(names, (size_t)n, sizeof(names[0]), FuzzCompare);
  for (int i = 0; i < n; i++) {
    FILE    *f;
    long     len;
    uint8_t *buf;
    PetscCall(PetscSNPrintf(path, sizeof(path), "%s/%s", dir, names[i]));
    f = fopen(path, "rb");
    PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot open %s", path);
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = (uint8_t *)malloc((size_t)len + 1);
    PetscCheck(buf && fread(buf, 1, (size_t)len, f) == (size_t)len, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "Cannot read %s", path);
    fclose(f);
    (void)fn(buf, (size_t)len);
    free(buf);
    free(names[i]);
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s/%s: %d inputs replayed\n", target, set, n));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscFunctionBeginUser;
  if (FuzzInitialize(&argc, &argv)) return 1;
  (void)help;
  PetscCall(Replay("idx", "corpus", FuzzOne_idx));
  PetscCall(Replay("idx", "regressions", FuzzOne_idx));
  PetscCall(Replay("binary", "corpus", FuzzOne_binary));
  PetscCall(Replay("binary", "regressions", FuzzOne_binary));
  PetscCall(Replay("options", "corpus", FuzzOne_options));
  PetscCall(Replay("options", "regressions", FuzzOne_options));
  PetscCall(PetscPopErrorHandler());
  /* objects abandoned by an error inside an options block are PETSc's (tests/fuzz/lsan.supp) */
  PetscCall(PetscOptionsSetValue(NULL, "-malloc_dump", "0"));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
     suffix: 1

TEST*/
