/* Nearest-mode upsampling loops, a precision template (include/petnn/private/nnrealdouble.h) that upsample.c compiles
   in double and in float: copies, and sums of the s^d copies' gradients, on the rank's own box. */

/* y (the owned outputs) from x (the owned inputs): every output row is built once from x or copied from the row above */
static PetscErrorCode PetscConcat(NNUpsampleNearestForward, NN_SUFFIX)(const UpGeom *g, const NN_REAL *xa, NN_REAL *ya)
{
  PetscInt Om[3];

  PetscFunctionBegin;
  for (PetscInt a = 0; a < 3; a++) Om[a] = g->im[a] * g->s[a];
  for (PetscInt oz = 0; oz < Om[2]; oz++)
    for (PetscInt oy = 0; oy < Om[1]; oy++) {
      NN_REAL       *yrow = ya + (oz * Om[1] + oy) * Om[0] * g->D;
      const NN_REAL *xrow = xa + ((oz / g->s[2]) * g->im[1] + oy / g->s[1]) * g->im[0] * g->D;
      if (oy % g->s[1] || oz % g->s[2]) { /* a copy of the row written just before */
        PetscCall(PetscArraycpy(yrow, yrow - (oy % g->s[1] ? Om[0] * g->D : Om[1] * Om[0] * g->D), Om[0] * g->D));
        continue;
      }
      for (PetscInt ox = 0; ox < Om[0]; ox++) PetscCall(PetscArraycpy(yrow + ox * g->D, xrow + (ox / g->s[0]) * g->D, g->D));
    }
  PetscFunctionReturn(0);
}

/* dx (the owned inputs) = the sum of the gradients of each input's s^d copies, in the order of the copies */
static PetscErrorCode PetscConcat(NNUpsampleNearestBackward, NN_SUFFIX)(const UpGeom *g, const NN_REAL *dya, NN_REAL *dxa)
{
  PetscInt Om[3];

  PetscFunctionBegin;
  for (PetscInt a = 0; a < 3; a++) Om[a] = g->im[a] * g->s[a];
  for (PetscInt iz = 0; iz < g->im[2]; iz++)
    for (PetscInt iy = 0; iy < g->im[1]; iy++)
      for (PetscInt ix = 0; ix < g->im[0]; ix++) {
        NN_REAL *restrict xp = dxa + ((iz * g->im[1] + iy) * g->im[0] + ix) * g->D;
        PetscBool first      = PETSC_TRUE;
        for (PetscInt tz = 0; tz < g->s[2]; tz++)
          for (PetscInt ty = 0; ty < g->s[1]; ty++)
            for (PetscInt tx = 0; tx < g->s[0]; tx++) {
              const NN_REAL *restrict yp = dya + (((iz * g->s[2] + tz) * Om[1] + iy * g->s[1] + ty) * Om[0] + ix * g->s[0] + tx) * g->D;
              if (first) {
                for (PetscInt j = 0; j < g->D; j++) xp[j] = yp[j];
                first = PETSC_FALSE;
              } else
                for (PetscInt j = 0; j < g->D; j++) xp[j] += yp[j];
            }
      }
  PetscFunctionReturn(0);
}
