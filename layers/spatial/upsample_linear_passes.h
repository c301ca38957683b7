/* Bilinear/trilinear upsampling loops, a precision template (include/petnn/private/nnrealdouble.h) that
   upsample_linear.c compiles in double and in float. Each corner's weight, the product of the axes' double weights,
   is rounded once to the pass's precision; the D entries of a pixel are then done in that precision. */

/* y (the owned outputs) = the interpolation of xa (the ghosted inputs), D entries per pixel */
static PetscErrorCode PetscConcat(NNUpsampleLinearInterp, NN_SUFFIX)(const NNUpsampleLinear *u, PetscInt D, PetscInt nc, const NN_REAL *xa, NN_REAL *ya)
{
  PetscFunctionBegin;
  for (PetscInt oz = 0; oz < u->om[2]; oz++)
    for (PetscInt oy = 0; oy < u->om[1]; oy++)
      for (PetscInt ox = 0; ox < u->om[0]; ox++) {
        NN_REAL *restrict yp = ya + ((oz * u->om[1] + oy) * u->om[0] + ox) * D;
        for (PetscInt c = 0; c < nc; c++) { /* corner c: bit 0 x, bit 1 y, bit 2 z picks i1 */
          PetscInt iz = c & 4 ? u->i1[2][oz] : u->i0[2][oz], iy = c & 2 ? u->i1[1][oy] : u->i0[1][oy], ix = c & 1 ? u->i1[0][ox] : u->i0[0][ox];
          NN_REAL  w                 = (NN_REAL)((c & 4 ? u->w1[2][oz] : u->w0[2][oz]) * (c & 2 ? u->w1[1][oy] : u->w0[1][oy]) * (c & 1 ? u->w1[0][ox] : u->w0[0][ox]));
          const NN_REAL *restrict xp = xa + ((iz * u->gm[1] + iy) * u->gm[0] + ix) * D;
          if (!c)
            for (PetscInt j = 0; j < D; j++) yp[j] = w * xp[j];
          else
            for (PetscInt j = 0; j < D; j++) yp[j] += w * xp[j];
        }
      }
  PetscCall(PetscLogFlops(2.0 * nc * D * u->om[0] * u->om[1] * u->om[2]));
  PetscFunctionReturn(0);
}

/* dxa (the ghosted input gradient, zeroed by the caller) += the adjoint of the interpolation applied to dya */
static PetscErrorCode PetscConcat(NNUpsampleLinearInterpAdjoint, NN_SUFFIX)(const NNUpsampleLinear *u, PetscInt D, PetscInt nc, const NN_REAL *dya, NN_REAL *dxa)
{
  PetscFunctionBegin;
  for (PetscInt oz = 0; oz < u->om[2]; oz++)
    for (PetscInt oy = 0; oy < u->om[1]; oy++)
      for (PetscInt ox = 0; ox < u->om[0]; ox++) {
        const NN_REAL *restrict yp = dya + ((oz * u->om[1] + oy) * u->om[0] + ox) * D;
        for (PetscInt c = 0; c < nc; c++) {
          PetscInt iz = c & 4 ? u->i1[2][oz] : u->i0[2][oz], iy = c & 2 ? u->i1[1][oy] : u->i0[1][oy], ix = c & 1 ? u->i1[0][ox] : u->i0[0][ox];
          NN_REAL  w           = (NN_REAL)((c & 4 ? u->w1[2][oz] : u->w0[2][oz]) * (c & 2 ? u->w1[1][oy] : u->w0[1][oy]) * (c & 1 ? u->w1[0][ox] : u->w0[0][ox]));
          NN_REAL *restrict xp = dxa + ((iz * u->gm[1] + iy) * u->gm[0] + ix) * D;
          for (PetscInt j = 0; j < D; j++) xp[j] += w * yp[j];
        }
      }
  PetscCall(PetscLogFlops(2.0 * nc * D * u->om[0] * u->om[1] * u->om[2]));
  PetscFunctionReturn(0);
}
