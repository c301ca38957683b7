/* Per-sample tensor shapes. */
#include <string.h>
#include <petnn/private/nnimpl.h>

/*@C
   NNShapeSize - number of entries of one sample of the given shape

   Level: beginner
@*/
PetscInt NNShapeSize(const NNShape *s)
{
  PetscInt n = 1;
  for (PetscInt i = 0; i < s->ndim; i++) n *= s->dim[i];
  return n;
}

/*@C
   NNShapeSet - sets a shape from its dimensions (PyTorch order, batch dimension excluded)

   Level: beginner
@*/
PetscErrorCode NNShapeSet(NNShape *s, PetscInt ndim, const PetscInt dim[])
{
  PetscFunctionBegin;
  PetscCheck(ndim >= 1 && ndim <= NN_MAX_DIM, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Shape has %" PetscInt_FMT " dimensions; valid: 1 to %d", ndim, NN_MAX_DIM);
  for (PetscInt i = 0; i < ndim; i++) PetscCheck(dim[i] > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Shape dimension %" PetscInt_FMT " is %" PetscInt_FMT "; sizes must be positive", i, dim[i]);
  { /* the size of a sample is a PetscInt */
    PetscInt n = 1;
    for (PetscInt i = 0; i < ndim; i++) { /* by division: with 64-bit PetscInt no wider type holds the product */
      PetscCheck(n <= PETSC_MAX_INT / dim[i], PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Shape with dimensions up to %" PetscInt_FMT " = %" PetscInt_FMT " has more than %" PetscInt_FMT " entries, the most a PetscInt counts (a PETSc configured --with-64-bit-indices holds more)", i, dim[i], (PetscInt)PETSC_MAX_INT);
      n *= dim[i];
    }
  }
  PetscCall(PetscMemzero(s, sizeof(*s)));
  s->ndim = ndim;
  for (PetscInt i = 0; i < ndim; i++) s->dim[i] = dim[i];
  PetscFunctionReturn(0);
}

/*@C
   NNShapeToString - writes a shape as "(a,b,c)"

   Level: beginner
@*/
PetscErrorCode NNShapeToString(const NNShape *s, size_t len, char str[])
{
  size_t used = 0;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(str, len, "("));
  for (PetscInt i = 0; i < s->ndim; i++) {
    PetscCall(PetscStrlen(str, &used));
    PetscCall(PetscSNPrintf(str + used, len - used, "%s%" PetscInt_FMT, i ? "," : "", s->dim[i]));
  }
  PetscCall(PetscStrlen(str, &used));
  PetscCall(PetscSNPrintf(str + used, len - used, ")"));
  PetscFunctionReturn(0);
}

static int NNCompareNames(const void *a, const void *b)
{
  const char *x = *(const char *const *)a, *y = *(const char *const *)b;
  return strcmp(x ? x : "", y ? y : "");
}

/* "a b c": the names registered in a type list in alphabetical order, for error messages that say what is valid
   (PETSc 3.18 keeps them in registration order, later releases in a hash table's order) */
PetscErrorCode NNTypeListString(PetscFunctionList list, size_t len, char str[])
{
  const char **names;
  int          n;

  PetscFunctionBegin;
  str[0] = 0;
  PetscCall(PetscFunctionListGet(list, &names, &n));
  qsort(names, (size_t)n, sizeof(*names), NNCompareNames);
  for (int i = 0; i < n; i++) {
    if (!names[i] || !names[i][0]) continue;
    if (str[0]) PetscCall(PetscStrlcat(str, " ", len));
    PetscCall(PetscStrlcat(str, names[i], len));
  }
  PetscCall(PetscFree(names));
  PetscFunctionReturn(0);
}
