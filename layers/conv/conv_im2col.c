/*
   Convolution by im2col + GEMM on tiles of output pixels (any stride, padding, dilation, groups).

   A tile is a run of output pixels (in the owned block's z, y, x order) and the task's batch slots
   [s0, s1); its im2col matrix A has one row per (pixel, slot) and K = ntap*Cg columns ordered
   (tap, channel of the group), taps in PyTorch's (kz, ky, kx) order, plus a column of ones when
   the layer has a bias (Ka = K + 1 columns). Zero padding gives zero columns; periodic padding
   reads the periodic halo. With the weights of group g packed as the Ka x Og matrix
   B_g[(t,c)][o] = W[g*Og+o][c][t], whose last row is the group's bias:

     forward   Y[:, g]  = A B_g                               (weights and bias in one GEMM)
     backward  dB_g    += A^T dY[:, g]                        (weight and bias gradients)
               dA       = dY[:, g] B_g^T, dX += col2im(dA)    (input gradient, only when wanted)

   The transposed convolution (conv_transpose.c) uses the same passes with other tap offsets: its
   tap t of output o reads input (o + p - t*dil)/s where that is an integer in the grid, and zero
   columns elsewhere (stride s leaves (s-1)/s of the columns zero along each axis).

   Every GEMM has depth Ka (or the tile's rows for dB) instead of Cg for one GEMM per kernel tap.
   When the task's slots are the whole batch, the rows of a tile are contiguous rows of Y and dY
   and the GEMMs use them in place; otherwise they go through a compact copy.
*/
#include "conv.h"
#include <cblas.h>
#include <string.h>

/* pixels per tile for nr slots per pixel */
static PetscInt NNConvIm2colTilePixels(const NNConvGeom *g, PetscInt nr)
{
  return PetscMax(1, g->rows / nr);
}

/* the largest tile, NNConvIm2colTilePixels(g, nr) * nr for any nr <= nb */
static PetscInt NNConvIm2colMaxRows(const NNConvGeom *g)
{
  return PetscMax(g->rows, g->nb);
}

/* per thread: the im2col tile (rows x Ka) and a compact output tile (rows x Cout); tap offsets */
void NNConvIm2colWorkSize(const NNConvGeom *g, PetscInt *nscalar, PetscInt *nint)
{
  *nscalar = NNConvIm2colMaxRows(g) * (g->Ka + g->Cout);
  *nint    = g->ntap;
}

/* conv_transpose: input index of tap t of output o along one axis, -1 where no input lands there */
static inline PetscInt NNConvTransposeInput(PetscInt o, PetscInt t, PetscInt s, PetscInt p, PetscInt dil, PetscInt N)
{
  PetscInt num = o + p - t * dil;

  if (num < 0 || num % s) return -1;
  return num / s < N ? num / s : -1;
}

/* conv_transpose: output o sums the inputs i with o = i*s - p + t*dil (PyTorch's scatter, gathered) */
static void NNConvTransposeTapOffsets(const NNConvGeom *g, const PetscInt o[3], PetscInt *off)
{
  PetscInt t = 0;

  for (PetscInt tz = 0; tz < g->k[2]; tz++) {
    PetscInt iz = NNConvTransposeInput(o[2], tz, g->s[2], g->p[2], g->dil[2], g->N[2]);
    for (PetscInt ty = 0; ty < g->k[1]; ty++) {
      PetscInt iy = iz < 0 ? -1 : NNConvTransposeInput(o[1], ty, g->s[1], g->p[1], g->dil[1], g->N[1]);
      for (PetscInt tx = 0; tx < g->k[0]; tx++) {
        PetscInt ix = iy < 0 ? -1 : NNConvTransposeInput(o[0], tx, g->s[0], g->p[0], g->dil[0], g->N[0]);
        off[t++]    = ix < 0 ? -1 : ((iz - g->gs[2]) * g->gm[1] + (iy - g->gs[1])) * g->gm[0] + (ix - g->gs[0]);
      }
    }
  }
}

/* offsets (in pixels) of the taps of output pixel q in the ghosted input, -1 where zero padding */
void NNConvTapOffsets(const NNConvGeom *g, PetscInt q, PetscInt *off)
{
  PetscInt o[3], t = 0;

  o[0] = g->os[0] + q % g->om[0];
  o[1] = g->os[1] + (q / g->om[0]) % g->om[1];
  o[2] = g->os[2] + q / (g->om[0] * g->om[1]);
  if (g->transposed) {
    NNConvTransposeTapOffsets(g, o, off);
    return;
  }
  for (PetscInt tz = 0; tz < g->k[2]; tz++) {
    PetscInt  iz = o[2] * g->s[2] - g->p[2] + tz * g->dil[2];
    PetscBool vz = (PetscBool)(g->periodic || (iz >= 0 && iz < g->N[2]));
    for (PetscInt ty = 0; ty < g->k[1]; ty++) {
      PetscInt  iy = o[1] * g->s[1] - g->p[1] + ty * g->dil[1];
      PetscBool vy = (PetscBool)(vz && (g->periodic || (iy >= 0 && iy < g->N[1])));
      for (PetscInt tx = 0; tx < g->k[0]; tx++) {
        PetscInt ix = o[0] * g->s[0] - g->p[0] + tx * g->dil[0];
        if (vy && (g->periodic || (ix >= 0 && ix < g->N[0]))) off[t++] = ((iz - g->gs[2]) * g->gm[1] + (iy - g->gs[1])) * g->gm[0] + (ix - g->gs[0]);
        else off[t++] = -1;
      }
    }
  }
}

/* im2col rows of a GEMM block by default: at most 1024 and about 512 KiB of doubles (at least one pixel of the batch;
   OpenBLAS's small-matrix kernels take such GEMMs without packing) */
PetscInt NNConvIm2colDefaultRows(PetscInt Ka)
{
  return PetscMin(1024, PetscMax(1, 65536 / Ka));
}

#include <petnn/private/nnrealdouble.h>
#include "conv_im2col_passes.h"
#include <petnn/private/nnrealsingle.h>
#include "conv_im2col_passes.h"
#include <petnn/private/nnrealundef.h>
