/* Layers created by name: the network's NNAddLayer() and the container layers (residual, ode) make their
   layers here, so every layer gets the same name check and options prefix "<base><name>_". */
#include <petnn/private/layerimpl.h>
#include <ctype.h>

/* creates a layer named name with options prefix "<base><name>_"; shared with container layers */
PetscErrorCode NNLayerCreateNamed(MPI_Comm comm, const char base[], NNLayerType type, const char name[], NNLayer *layer)
{
  char      prefix[256];
  PetscBool valid = PETSC_TRUE;
  size_t    len;

  PetscFunctionBegin;
  PetscCall(PetscStrlen(name, &len));
  for (size_t i = 0; i < len; i++) valid = (PetscBool)(valid && (isalnum((unsigned char)name[i]) || name[i] == '_'));
  PetscCheck(len > 0 && valid, comm, PETSC_ERR_ARG_WRONG, "Layer name \"%s\" is invalid: use letters, digits and underscores", name);
  if (!type && (!base || !base[0])) { /* configured from options without a prefix: PETSc objects read -<name>_type too (-sf_type, -ksp_type, ...) */
    static const char *reserved[] = {"sf", "ksp", "pc", "snes", "ts", "tao", "mat", "vec", "dm", "da", "is", "sub", "log", "malloc", "options", "info", "viewer", "draw", "random", "ao", "pf", "characteristic", "tssolve", "nn", "opt"};
    for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
      PetscBool clash;
      PetscCall(PetscStrcmp(name, reserved[i], &clash));
      PetscCheck(!clash, comm, PETSC_ERR_ARG_WRONG, "Layer name \"%s\" clashes with PETSc's own -%s_ options; choose another name (e.g. \"%s1\")", name, name, name);
    }
  }
  PetscCall(NNLayerCreate(comm, layer));
  PetscCall(PetscObjectSetName((PetscObject)*layer, name));
  PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "%s%s_", base ? base : "", name));
  PetscCall(NNLayerSetOptionsPrefix(*layer, prefix));
  if (type) {
    PetscErrorCode ierr = NNLayerSetType(*layer, type);
    if (ierr) (void)NNLayerDestroy(layer); /* an unknown type: nothing is left behind for a caller that goes on */
    PetscCall(ierr);
  }
  PetscFunctionReturn(0);
}
