static char help[] = "The built-in layer types (layers/register.c) are exactly the NNLAYER* names of include/petnn.h.\n\n"
                     "  -header <file>  the public header (default $PETNN_SOURCE_DIR/include/petnn.h)\n\n";

/*
   Reads every `#define NNLAYER<X> "<name>"` of the public header, requires each name to be
   registered, and requires as many registered types as the header names: a type added to one
   place and not the other fails here. Prints the names in header order (a stable list).
*/
#include <petnn.h>
#include <stdlib.h>

#define MAX_TYPES 128

/* the NNLAYER* type names of the header, in order */
static PetscErrorCode ReadHeaderTypes(const char file[], PetscInt *n, char names[][64])
{
  FILE *fp;
  char  line[1024];

  PetscFunctionBegin;
  fp = fopen(file, "r");
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot open the header %s (-header <file>)", file);
  *n = 0;
  while (fgets(line, sizeof(line), fp)) {
    char macro[128], name[64];
    if (sscanf(line, "#define %127s \"%63[^\"]\"", macro, name) != 2) continue;
    if (strncmp(macro, "NNLAYER", 7) || !strcmp(macro, "NNLAYER_CLASSID")) continue;
    PetscCheck(*n < MAX_TYPES, PETSC_COMM_SELF, PETSC_ERR_SUP, "More than %d layer types in %s", MAX_TYPES, file);
    PetscCall(PetscStrncpy(names[(*n)++], name, 64));
  }
  fclose(fp);
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  char        file[PETSC_MAX_PATH_LEN] = "", names[MAX_TYPES][64];
  const char *src = getenv("PETNN_SOURCE_DIR"), **registered;
  PetscInt    n;
  int         nreg;
  PetscBool   ok = PETSC_TRUE;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetNNInitializePackage());
  if (src) PetscCall(PetscSNPrintf(file, sizeof(file), "%s/include/petnn.h", src));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-header", file, sizeof(file), NULL));
  PetscCall(ReadHeaderTypes(file, &n, names));
  for (PetscInt i = 0; i < n; i++) {
    PetscErrorCode (*create)(NNLayer) = NULL;
    PetscCall(PetscFunctionListFind(NNLayerList, names[i], &create));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %s\n", names[i], create ? "registered" : "NOT REGISTERED"));
    if (!create) ok = PETSC_FALSE;
  }
  PetscCall(PetscFunctionListGet(NNLayerList, &registered, &nreg));
  while (nreg > 0 && !registered[nreg - 1]) nreg--; /* the array ends with a NULL that the count includes */
  for (int j = 0; j < nreg; j++) {
    PetscBool found = PETSC_FALSE;
    for (PetscInt i = 0; i < n && !found; i++) PetscCall(PetscStrcmp(registered[j], names[i], &found));
    if (!found) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: registered but not an NNLAYER* name of the header\n", registered[j]));
      ok = PETSC_FALSE;
    }
  }
  PetscCall(PetscFree(registered));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " header names, %d registered types: %s\n", n, nreg, ok ? "the same set" : "MISMATCH"));
  PetscCall(PetscFinalize());
  return ok ? 0 : 1;
}

/*TEST

   test:

TEST*/
