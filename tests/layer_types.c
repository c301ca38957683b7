static char help[] = "The built-in layer types (layers/register.c) are exactly the NNLAYER* names of include/petnn.h,\n"
                     "and the type-specific setters and getters round-trip (setters are no-ops on other types).\n\n"
                     "  -header <file>  the public header (default $PETNN_SOURCE_DIR/include/petnn.h)\n\n";

/*
   Reads every `#define NNLAYER<X> "<name>"` of the public header, requires each name to be
   registered, and requires as many registered types as the header names: a type added to one
   place and not the other fails here. Prints the names in header order (a stable list). Then sets
   each type-specific option through its setter and reads it back through its getter.
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

static PetscErrorCode NewLayer(NNLayerType type, NNLayer *l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerCreate(PETSC_COMM_WORLD, l));
  PetscCall(NNLayerSetType(*l, type));
  PetscFunctionReturn(0);
}

/* every Set has a Get that returns what was set; a setter of another type changes nothing */
static PetscErrorCode CheckSettersGetters(PetscBool *ok)
{
  NNLayer   dense, lrelu, conv, pool, up, bn;
  PetscInt  i[9];
  PetscReal r[3];
  PetscBool b;

  PetscFunctionBegin;
  PetscCall(NewLayer(NNLAYERDENSE, &dense));
  PetscCall(NewLayer(NNLAYERLEAKYRELU, &lrelu));
  PetscCall(NewLayer(NNLAYERCONV2D, &conv));
  PetscCall(NewLayer(NNLAYERAVGPOOL3D, &pool));
  PetscCall(NewLayer(NNLAYERUPSAMPLE, &up));
  PetscCall(NewLayer(NNLAYERBATCHNORM2D, &bn));
  PetscCall(NNLayerDenseSetUnits(dense, 7));
  PetscCall(NNLayerDenseSetBias(dense, PETSC_FALSE));
  PetscCall(NNLayerConvSetThreads(dense, 5)); /* no-op: dense has no threads */
  PetscCall(NNLayerLeakyReLUSetSlope(lrelu, 0.25));
  PetscCall(NNLayerConvSetThreads(conv, 3));
  PetscCall(NNLayerConvSetWinograd(conv, 0));
  PetscCall(NNLayerConvSetTileRows(conv, 64));
  PetscCall(NNLayerPoolSetKernelSize(pool, 3));
  PetscCall(NNLayerPoolSetStride(pool, 2));
  PetscCall(NNLayerPoolSetPadding(pool, 1));
  PetscCall(NNLayerUpsampleSetScale(up, 4));
  PetscCall(NNLayerBatchNormSetMomentum(bn, 0.3));
  PetscCall(NNLayerBatchNormSetEpsilon(bn, 1e-3));
  PetscCall(NNLayerDenseGetUnits(dense, &i[0]));
  PetscCall(NNLayerDenseGetBias(dense, &b));
  PetscCall(NNLayerLeakyReLUGetSlope(lrelu, &r[0]));
  PetscCall(NNLayerConvGetThreads(conv, &i[1]));
  PetscCall(NNLayerConvGetWinograd(conv, &i[2]));
  PetscCall(NNLayerConvGetTileRows(conv, &i[3]));
  PetscCall(NNLayerPoolGetKernelSize(pool, &i[4]));
  PetscCall(NNLayerPoolGetStride(pool, &i[5]));
  PetscCall(NNLayerPoolGetPadding(pool, &i[6]));
  PetscCall(NNLayerUpsampleGetScale(up, &i[7]));
  PetscCall(NNLayerBatchNormGetMomentum(bn, &r[1]));
  PetscCall(NNLayerBatchNormGetEpsilon(bn, &r[2]));
  *ok = (PetscBool)(i[0] == 7 && !b && r[0] == 0.25 && i[1] == 3 && i[2] == 0 && i[3] == 64 && i[4] == 3 && i[5] == 2 && i[6] == 1 && i[7] == 4 && r[1] == 0.3 && r[2] == 1e-3);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "setters and getters of dense, leaky_relu, conv2d, avgpool3d, upsample, batchnorm2d: %s\n", *ok ? "the values set" : "MISMATCH"));
  PetscCall(NNLayerDestroy(&dense));
  PetscCall(NNLayerDestroy(&lrelu));
  PetscCall(NNLayerDestroy(&conv));
  PetscCall(NNLayerDestroy(&pool));
  PetscCall(NNLayerDestroy(&up));
  PetscCall(NNLayerDestroy(&bn));
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
  {
    PetscBool okset;
    PetscCall(CheckSettersGetters(&okset));
    ok = (PetscBool)(ok && okset);
  }
  PetscCall(PetscFinalize());
  return ok ? 0 : 1;
}

/*TEST

   test:

TEST*/
