static char help[] = "Dropout's masks: NNRandomMask() (branch-free, the generator's state in registers) against the loop\n"
                     "u = NNRandomUniform(); m = u >= p ? a : 0 it replaced, entry by entry and bit for bit, in float and\n"
                     "double, for rates that are and are not dyadic, the extremes and a rate next to a draw's spacing,\n"
                     "and the generators' states afterwards (the next draws of a run must not move).\n\n";

/* The generator is private to the library (hidden symbols): this program compiles its source. */
#include "../src/sys/random.c"
#include <string.h>

static PetscErrorCode Compare(PetscReal p, PetscBool single, PetscInt n, PetscInt *ndiff, PetscBool *sameState)
{
  NNRandom  r1, r2;
  double   *md, *ld;
  float    *mf, *lf;
  PetscReal a = 1.0 / (1.0 - p);

  PetscFunctionBegin;
  NNRandomSeed(&r1, 1234 + (uint64_t)(p * 1e6));
  r2 = r1;
  PetscCall(PetscMalloc4(n, &md, n, &ld, n, &mf, n, &lf));
  for (PetscInt i = 0; i < n; i++) { /* the loop of dropout's passes before NNRandomMask() */
    double u = NNRandomUniform(&r1) >= p ? a : 0.0;
    ld[i]    = u;
    lf[i]    = (float)u;
  }
  NNRandomMask(&r2, n, p, a, single, single ? (void *)mf : (void *)md);
  *ndiff = 0;
  for (PetscInt i = 0; i < n; i++) *ndiff += single ? (memcmp(&mf[i], &lf[i], sizeof(float)) != 0) : (memcmp(&md[i], &ld[i], sizeof(double)) != 0);
  *sameState = (PetscBool)!memcmp(&r1, &r2, sizeof(NNRandom));
  PetscCall(PetscFree4(md, ld, mf, lf));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  const PetscReal rates[] = {0.0, 0.1, 0.25, 0.3, 0.5, 0.7, 0.999, 0x1.0p-53, 0.5 + 0x1.0p-53, 1.0 - 0x1.0p-53};

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  for (size_t k = 0; k < sizeof(rates) / sizeof(rates[0]); k++)
    for (int s = 0; s < 2; s++) {
      PetscInt  nd;
      PetscBool same;

      PetscCall(Compare(rates[k], (PetscBool)s, 100003, &nd, &same));
      PetscCheck(nd == 0 && same, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "rate %.17g, %s: NNRandomMask() differs from the loop at %" PetscInt_FMT " of 100003 entries%s", (double)rates[k], s ? "float" : "double", nd, same ? "" : ", and the generator's state differs");
    }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "NNRandomMask() equals the loop over NNRandomUniform() bit for bit (10 rates, float and double, 100003 draws) and leaves the same state: PASSED\n"));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: 1

TEST*/
