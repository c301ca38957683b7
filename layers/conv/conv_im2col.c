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
static void NNConvTapOffsets(const NNConvGeom *g, PetscInt q, PetscInt *off)
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

/* A[(p,r)][(t,c)] = x[tap t of pixel q0+p][slot s0+r][grp*Cg + c], A[(p,r)][K] = 1 with a bias */
static void NNConvIm2col(const NNConvGeom *g, const PetscScalar *x, PetscInt q0, PetscInt np, PetscInt s0, PetscInt nr, PetscInt grp, PetscInt *off, PetscScalar *A)
{
  const PetscInt K = g->K, Ka = g->Ka, Cg = g->Cg, Cin = g->Cin, pix = g->nb * g->Cin;

  for (PetscInt p = 0; p < np; p++) {
    PetscScalar *Ap = A + p * nr * Ka;
    NNConvTapOffsets(g, q0 + p, off);
    if (Cg == 1) { /* one value per tap: fill each row in turn */
      const PetscScalar *src = x + s0 * Cin + grp;
      for (PetscInt r = 0; r < nr; r++)
        for (PetscInt t = 0; t < g->ntap; t++) Ap[r * Ka + t] = off[t] < 0 ? 0 : src[off[t] * pix + r * Cin];
    } else {
      for (PetscInt t = 0; t < g->ntap; t++) {
        PetscScalar *dst = Ap + t * Cg;
        if (off[t] < 0) {
          for (PetscInt r = 0; r < nr; r++) memset(dst + r * Ka, 0, sizeof(PetscScalar) * Cg);
        } else {
          const PetscScalar *src = x + off[t] * pix + s0 * Cin + grp * Cg;
          for (PetscInt r = 0; r < nr; r++) memcpy(dst + r * Ka, src + r * Cin, sizeof(PetscScalar) * Cg);
        }
      }
    }
    if (Ka > K)
      for (PetscInt r = 0; r < nr; r++) Ap[r * Ka + K] = 1;
  }
}

/* the adjoint of NNConvIm2col: dx[tap t of pixel q0+p][slot s0+r][grp*Cg + c] += A[(p,r)][(t,c)] */
static void NNConvCol2im(const NNConvGeom *g, PetscScalar *dx, PetscInt q0, PetscInt np, PetscInt s0, PetscInt nr, PetscInt grp, PetscInt *off, const PetscScalar *A)
{
  const PetscInt Ka = g->Ka, Cg = g->Cg, Cin = g->Cin, pix = g->nb * g->Cin;

  for (PetscInt p = 0; p < np; p++) {
    const PetscScalar *Ap = A + p * nr * Ka;
    NNConvTapOffsets(g, q0 + p, off);
    if (Cg == 1) {
      PetscScalar *dst = dx + s0 * Cin + grp;
      for (PetscInt r = 0; r < nr; r++)
        for (PetscInt t = 0; t < g->ntap; t++)
          if (off[t] >= 0) dst[off[t] * pix + r * Cin] += Ap[r * Ka + t];
    } else {
      for (PetscInt t = 0; t < g->ntap; t++) {
        const PetscScalar *src = Ap + t * Cg;
        PetscScalar       *dst;
        if (off[t] < 0) continue;
        dst = dx + off[t] * pix + s0 * Cin + grp * Cg;
        for (PetscInt r = 0; r < nr; r++)
          for (PetscInt c = 0; c < Cg; c++) dst[r * Cin + c] += src[r * Ka + c];
      }
    }
  }
}

void NNConvIm2colForward(NNConvTask *w)
{
  const NNConvGeom *g = w->g;
  const NNConvPass *ps = w->pass;
  const PetscInt    nr = w->s1 - w->s0, Ka = g->Ka, Og = g->Og, Cout = g->Cout, tpix = NNConvIm2colTilePixels(g, nr);
  const PetscBool   inplace = (PetscBool)(nr == g->nb);
  PetscScalar      *A = w->work, *Yc = w->work + NNConvIm2colMaxRows(g) * Ka;

  for (PetscInt q0 = w->q0; q0 < w->q1; q0 += tpix) {
    PetscInt     np = PetscMin(tpix, w->q1 - q0), rows = np * nr;
    PetscScalar *Y  = inplace ? ps->y + q0 * g->nb * Cout : Yc;
    for (PetscInt grp = 0; grp < g->G; grp++) {
      NNConvIm2col(g, ps->x, q0, np, w->s0, nr, grp, w->iwork, A);
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, Og, Ka, 1.0, A, Ka, ps->Wp + grp * Ka * Og, Og, 0.0, Y + grp * Og, Cout);
    }
    w->flops += 2.0 * rows * Ka * Cout;
    if (!inplace)
      for (PetscInt p = 0; p < np; p++) memcpy(ps->y + ((q0 + p) * g->nb + w->s0) * Cout, Yc + p * nr * Cout, sizeof(PetscScalar) * nr * Cout);
  }
}

void NNConvIm2colBackward(NNConvTask *w)
{
  const NNConvGeom *g = w->g;
  const NNConvPass *ps = w->pass;
  const PetscInt    nr = w->s1 - w->s0, K = g->K, Ka = g->Ka, Og = g->Og, Cout = g->Cout, tpix = NNConvIm2colTilePixels(g, nr);
  const PetscBool   inplace = (PetscBool)(nr == g->nb);
  PetscScalar      *A = w->work, *Yc = w->work + NNConvIm2colMaxRows(g) * Ka;

  for (PetscInt q0 = w->q0; q0 < w->q1; q0 += tpix) {
    PetscInt           np = PetscMin(tpix, w->q1 - q0), rows = np * nr;
    const PetscScalar *dY = inplace ? ps->dy + q0 * g->nb * Cout : Yc;
    if (!inplace)
      for (PetscInt p = 0; p < np; p++) memcpy(Yc + p * nr * Cout, ps->dy + ((q0 + p) * g->nb + w->s0) * Cout, sizeof(PetscScalar) * nr * Cout);
    for (PetscInt grp = 0; grp < g->G; grp++) {
      if (w->dW) {
        NNConvIm2col(g, ps->x, q0, np, w->s0, nr, grp, w->iwork, A);
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, Ka, Og, rows, 1.0, A, Ka, dY + grp * Og, Cout, 1.0, w->dW + grp * Ka * Og, Og);
        w->flops += 2.0 * rows * Ka * Og;
      }
      if (ps->dx) {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, K, Og, 1.0, dY + grp * Og, Cout, ps->Wp + grp * Ka * Og, Og, 0.0, A, Ka);
        NNConvCol2im(g, ps->dx, q0, np, w->s0, nr, grp, w->iwork, A);
        w->flops += 2.0 * rows * K * Og;
      }
    }
  }
}
