/* Helpers shared by PetNN's test programs (the .c files of tests/): comparisons and option strings. Header-only, static inline,
   so each test stays one program built from one source file. */
#pragma once
#include <petscvec.h>

/* ||a - b|| / ||a|| in the 2-norm: a is the reference (a zero reference gives the absolute difference / 1e-300) */
static inline PetscErrorCode NNTestRelDiff(Vec a, Vec b, PetscReal *d)
{
  Vec       w;
  PetscReal na, nd;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(a, &w));
  PetscCall(VecWAXPY(w, -1.0, b, a));
  PetscCall(VecNorm(w, NORM_2, &nd));
  PetscCall(VecNorm(a, NORM_2, &na));
  *d = nd / PetscMax(na, 1e-300);
  PetscCall(VecDestroy(&w));
  PetscFunctionReturn(0);
}

/* inserts opts into the options database with every option name prefixed ("-fc_type dense" with prefix "c1_" gives
   "-c1_fc_type dense"); a '-' that starts a number is a value, not an option */
static inline PetscErrorCode NNTestInsertPrefixed(const char prefix[], const char opts[])
{
  char   buf[4096], *p = buf;
  size_t len;

  PetscFunctionBegin;
  for (const char *s = opts; *s; s++) {
    if (*s == '-' && (s == opts || s[-1] == ' ') && !(s[1] >= '0' && s[1] <= '9') && s[1] != '.') {
      PetscCall(PetscSNPrintf(p, sizeof(buf) - (p - buf), "-%s", prefix));
      PetscCall(PetscStrlen(buf, &len));
      p = buf + len;
    } else *p++ = *s;
    PetscCheck(p < buf + sizeof(buf) - 64, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "options too long (at most about %d characters)", (int)sizeof(buf) - 64);
  }
  *p = 0;
  PetscCall(PetscOptionsInsertString(NULL, buf));
  PetscFunctionReturn(0);
}
