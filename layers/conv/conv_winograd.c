/*
   Convolution by Winograd minimal filtering (stride 1, dilation 1): F(m, r) along each axis.

   Along one axis an output tile of m pixels needs an input tile of n = m + r - 1 pixels, and
       y = A^T [ (G w) .* (B^T d) ]
   with the Toom-Cook matrices of n - 1 finite points and infinity: A^T = V_m^T (m x n),
   G = V_r (n x r) and B^T = V_n^{-T} (n x n), V_k[i][j] = a_i^j the evaluation of degree k-1
   polynomials (the last row, infinity, picks the leading coefficient). The points are
   0, 1, -1, 2, -2, 1/2, -1/2, ...; F(4,5) and F(6,3) in double are accurate to about 2e-14.
   In 2-d and 3-d the transforms act along every axis (separably); axes with kernel 1 have m = n = 1.

   Per transformed position (n_x n_y n_z of them) the channel mixing is a GEMM over the rows
   (tile, batch slot): with U = (G x G x G) W and V = (B^T x B^T x B^T) d,
     forward    M_pos = V_pos U_pos,                 y  = (A^T x A^T x A^T) M       (per tile)
     backward   Z = (A x A x A) dy,  dU_pos += V_pos^T Z_pos,  dV_pos = Z_pos U_pos^T,
                dx += (B x B x B) dV (scatter-added into the ghosted input gradient, like col2im),
                dW = (G^T x G^T x G^T) dU            (the adjoint of every step above)
   The GEMMs have depth Cin/groups instead of ntap*Cin/groups, and a tile of m^d outputs needs n^d
   products per channel pair instead of m^d r^d: F(4,5) in 2-d does 64 instead of 400.

   Tiles cover the rank's owned outputs (the last ones along an axis may stick out: their extra
   outputs are dropped, their extra inputs read as zeros, their output gradients are zero). Pixel
   vectors (the nb*C values of one pixel) are transformed in chunks that stay in cache.
*/
#include "conv.h"
#include <cblas.h>
#include <string.h>

#include <petnn/private/nnsimd.h>
/* the transforms are vector loops: let them use the machine's vector units */
#define NN_CONV_SIMD NN_SIMD

/* finite interpolation points, in the order they are used */
static const PetscReal NNConvWinogradPoints[] = {0, 1, -1, 2, -2, 0.5, -0.5, 3, -3, 1.0 / 3, -1.0 / 3, 4, -4};
#define NN_CONV_WINOGRAD_MAX_VECS 1024 /* vectors of a block (n_x n_y n_z, r_x r_y r_z) */
#define NN_CONV_WINOGRAD_MAX_N ((PetscInt)(sizeof(NNConvWinogradPoints) / sizeof(NNConvWinogradPoints[0])) + 1)

/* V (n x k): V[i][j] = a_i^j for the n-1 finite points, the last row e_{k-1} */
static void NNConvVandermonde(PetscInt n, PetscInt k, PetscScalar *V)
{
  for (PetscInt i = 0; i < n - 1; i++) {
    PetscScalar a = NNConvWinogradPoints[i], v = 1;
    for (PetscInt j = 0; j < k; j++, v *= a) V[i * k + j] = v;
  }
  for (PetscInt j = 0; j < k; j++) V[(n - 1) * k + j] = j == k - 1 ? 1 : 0;
}

/* the matrices of F(m, r) along one axis */
static PetscErrorCode NNConvWinogradAxis(PetscInt m, PetscInt r, PetscScalar **AT, PetscScalar **A, PetscScalar **G, PetscScalar **GT, PetscScalar **BT, PetscScalar **B)
{
  PetscInt     n = m + r - 1;
  PetscScalar *Vm, *Vn, *Inv;

  PetscFunctionBegin;
  PetscCall(PetscMalloc6(m * n, AT, n * m, A, n * r, G, r * n, GT, n * n, BT, n * n, B));
  PetscCall(PetscMalloc3(n * m, &Vm, n * n, &Vn, n * n, &Inv));
  NNConvVandermonde(n, m, Vm);
  NNConvVandermonde(n, r, *G);
  NNConvVandermonde(n, n, Vn);
  /* Inv = Vn^{-1} by Gauss-Jordan elimination with partial pivoting (n is small, the points exact) */
  for (PetscInt i = 0; i < n; i++)
    for (PetscInt j = 0; j < n; j++) Inv[i * n + j] = i == j ? 1 : 0;
  for (PetscInt c = 0; c < n; c++) {
    PetscInt    piv = c;
    PetscScalar f;
    for (PetscInt i = c + 1; i < n; i++)
      if (PetscAbsScalar(Vn[i * n + c]) > PetscAbsScalar(Vn[piv * n + c])) piv = i;
    PetscCheck(PetscAbsScalar(Vn[piv * n + c]) > 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Singular Winograd interpolation matrix");
    for (PetscInt j = 0; j < n; j++) {
      PetscScalar t = Vn[c * n + j];
      Vn[c * n + j] = Vn[piv * n + j];
      Vn[piv * n + j] = t;
      t = Inv[c * n + j];
      Inv[c * n + j] = Inv[piv * n + j];
      Inv[piv * n + j] = t;
    }
    f = 1 / Vn[c * n + c];
    for (PetscInt j = 0; j < n; j++) {
      Vn[c * n + j] *= f;
      Inv[c * n + j] *= f;
    }
    for (PetscInt i = 0; i < n; i++) {
      if (i == c || Vn[i * n + c] == 0) continue;
      f = Vn[i * n + c];
      for (PetscInt j = 0; j < n; j++) {
        Vn[i * n + j] -= f * Vn[c * n + j];
        Inv[i * n + j] -= f * Inv[c * n + j];
      }
    }
  }
  /* round to the nearest multiple of 2^-40: the exact entries are short binary fractions or
     small rationals, and the elimination's rounding should not make the transforms asymmetric */
  for (PetscInt i = 0; i < n * n; i++) {
    PetscScalar v = Inv[i] * 1099511627776.0;
    if (PetscAbsScalar(v - PetscFloorReal(v + 0.5)) < 1e-3) Inv[i] = PetscFloorReal(v + 0.5) / 1099511627776.0;
  }
  for (PetscInt i = 0; i < n; i++) {
    for (PetscInt j = 0; j < m; j++) (*AT)[j * n + i] = (*A)[i * m + j] = Vm[i * m + j];
    for (PetscInt j = 0; j < r; j++) (*GT)[j * n + i] = (*G)[i * r + j];
    for (PetscInt j = 0; j < n; j++) (*BT)[i * n + j] = (*B)[j * n + i] = Inv[j * n + i]; /* B^T = Vn^{-T} */
  }
  PetscCall(PetscFree3(Vm, Vn, Inv));
  PetscFunctionReturn(0);
}

/*
   NNConvWinogradSetUp - the transforms and the tiling for tile sizes m[] (x, y, z; ignored along
   axes with kernel 1); the geometry's owned outputs, kernel and slots must be set
*/
PetscErrorCode NNConvWinogradSetUp(NNConvGeom *g, const PetscInt m[3])
{
  NNConvWinograd *w = &g->w;

  PetscFunctionBegin;
  PetscCall(NNConvWinogradDestroy(g));
  w->mt = w->nt = w->npos = w->ntiles = 1;
  for (PetscInt a = 0; a < 3; a++) {
    w->r[a] = g->k[a];
    w->m[a] = g->k[a] == 1 ? 1 : m[a];
    w->n[a] = w->m[a] + w->r[a] - 1;
    PetscCheck(w->m[a] > 0 && w->n[a] <= NN_CONV_WINOGRAD_MAX_N, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Winograd tile %" PetscInt_FMT " with kernel %" PetscInt_FMT ": the tile plus kernel minus one must be at most %" PetscInt_FMT, w->m[a], w->r[a], NN_CONV_WINOGRAD_MAX_N);
    PetscCall(NNConvWinogradAxis(w->m[a], w->r[a], &w->AT[a], &w->A[a], &w->G[a], &w->GT[a], &w->BT[a], &w->B[a]));
    w->tc[a] = (g->om[a] + w->m[a] - 1) / w->m[a];
    w->mt *= w->m[a];
    w->nt *= w->r[a];
    w->npos *= w->n[a];
    w->ntiles *= w->tc[a];
  }
  PetscCheck(w->npos <= NN_CONV_WINOGRAD_MAX_VECS && g->ntap <= NN_CONV_WINOGRAD_MAX_VECS, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Winograd tiles of %" PetscInt_FMT " transformed positions: at most %d; use smaller tiles", w->npos, NN_CONV_WINOGRAD_MAX_VECS);
  w->chunk = PetscMax(16, (16384 / w->npos) / 16 * 16);
  PetscFunctionReturn(0);
}

PetscErrorCode NNConvWinogradDestroy(NNConvGeom *g)
{
  NNConvWinograd *w = &g->w;

  PetscFunctionBegin;
  for (PetscInt a = 0; a < 3; a++) PetscCall(PetscFree6(w->AT[a], w->A[a], w->G[a], w->GT[a], w->BT[a], w->B[a]));
  PetscFunctionReturn(0);
}

/* size of U (and of dU): npos x Cg x Cout */
PetscInt NNConvWinogradTransformedSize(const NNConvGeom *g)
{
  return g->w.npos * g->Cg * g->Cout;
}

/* rows of a block: slots per block and tiles per block for nr slots */
static void NNConvWinogradBlock(const NNConvGeom *g, PetscInt nr, PetscInt *nrb, PetscInt *tb)
{
  *nrb = PetscMax(1, PetscMin(nr, g->rows));
  *tb  = PetscMax(1, g->rows / *nrb);
}

/* per thread: V (npos x rows x Cin), M or Z (npos x rows x Cout), two stage buffers (npos x chunk),
   a pixel of zeros and one of scratch (nb x max(Cin, Cout)) */
void NNConvWinogradWorkSize(const NNConvGeom *g, PetscInt *nscalar, PetscInt *nint)
{
  PetscInt rows = PetscMax(g->rows, 1);

  *nscalar = g->w.npos * (rows * (g->Cin + g->Cout) + 2 * g->w.chunk) + 2 * g->nb * PetscMax(g->Cin, g->Cout);
  *nint    = 0;
}

/* corner of tile t: output origin o[] and input origin i[] (x, y, z) */
static void NNConvWinogradTileOrigin(const NNConvGeom *g, PetscInt t, PetscInt o[3], PetscInt i[3])
{
  const NNConvWinograd *w = &g->w;
  PetscInt              c[3];

  c[0] = t % w->tc[0];
  c[1] = (t / w->tc[0]) % w->tc[1];
  c[2] = t / (w->tc[0] * w->tc[1]);
  for (PetscInt a = 0; a < 3; a++) {
    o[a] = g->os[a] + c[a] * w->m[a];
    i[a] = o[a] - g->p[a];
  }
}

/* offsets (in pixels) of the n_z x n_y x n_x input pixels of tile t in the ghosted array, -1 outside it */
static void NNConvWinogradInputPixels(const NNConvGeom *g, PetscInt t, PetscInt *q)
{
  const NNConvWinograd *w = &g->w;
  PetscInt              o[3], i0[3], j = 0;

  NNConvWinogradTileOrigin(g, t, o, i0);
  for (PetscInt jz = 0; jz < w->n[2]; jz++)
    for (PetscInt jy = 0; jy < w->n[1]; jy++)
      for (PetscInt jx = 0; jx < w->n[0]; jx++, j++) {
        PetscInt i[3] = {i0[0] + jx, i0[1] + jy, i0[2] + jz};
        q[j]          = ((i[2] - g->gs[2]) * g->gm[1] + (i[1] - g->gs[1])) * g->gm[0] + (i[0] - g->gs[0]);
        for (PetscInt a = 0; a < 3; a++)
          if (i[a] < g->gs[a] || i[a] >= g->gs[a] + g->gm[a]) q[j] = -1;
      }
}

/* offsets (in pixels) of the m_z x m_y x m_x outputs of tile t in the owned block, -1 outside it */
static void NNConvWinogradOutputPixels(const NNConvGeom *g, PetscInt t, PetscInt *q)
{
  const NNConvWinograd *w = &g->w;
  PetscInt              o0[3], i0[3], j = 0;

  NNConvWinogradTileOrigin(g, t, o0, i0);
  for (PetscInt kz = 0; kz < w->m[2]; kz++)
    for (PetscInt ky = 0; ky < w->m[1]; ky++)
      for (PetscInt kx = 0; kx < w->m[0]; kx++, j++) {
        PetscInt o[3] = {o0[0] + kx, o0[1] + ky, o0[2] + kz};
        q[j]          = ((o[2] - g->os[2]) * g->om[1] + (o[1] - g->os[1])) * g->om[0] + (o[0] - g->os[0]);
        for (PetscInt a = 0; a < 3; a++)
          if (o[a] >= g->os[a] + g->om[a]) q[j] = -1;
      }
}

#include <petnn/private/nnrealdouble.h>
#include "conv_winograd_passes.h"
#include <petnn/private/nnrealsingle.h>
#include "conv_winograd_passes.h"
#include <petnn/private/nnrealundef.h>

/* vectors of length L laid out one after the other */
static void NNConvWinogradTable(PetscScalar *base, PetscInt nv, PetscInt L, PetscScalar **tab)
{
  for (PetscInt i = 0; i < nv; i++) tab[i] = base + i * L;
}

/*
   NNConvWinogradWeights - U[pos][g][c][o] = (G x G x G) W from the packed weights Wp[g][(t,c)][o]

   work holds 3 * max(npos, ntap) * Cg * Cout scalars
*/
PetscErrorCode NNConvWinogradWeights(const NNConvGeom *g, const PetscScalar *Wp, PetscScalar *U, PetscScalar *work, PetscLogDouble *flops)
{
  const NNConvWinograd *w = &g->w;
  const PetscInt        L = g->Cg * g->Cout, big = PetscMax(w->npos, g->ntap) * L;
  PetscScalar          *vin[NN_CONV_WINOGRAD_MAX_VECS] = {NULL}, *vout[NN_CONV_WINOGRAD_MAX_VECS] = {NULL};
  NNConvPlan           *pl;

  PetscFunctionBegin;
  PetscCall(PetscNew(&pl));
  for (PetscInt grp = 0; grp < g->G; grp++)
    for (PetscInt t = 0; t < g->ntap; t++)
      for (PetscInt c = 0; c < g->Cg; c++) PetscCall(PetscArraycpy(work + t * L + (grp * g->Cg + c) * g->Og, Wp + (grp * g->Ka + t * g->Cg + c) * g->Og, g->Og));
  NNConvWinogradTable(work, g->ntap, L, vin);
  NNConvWinogradTable(U, w->npos, L, vout);
  NNConvWinogradApply(w->G, w->n, w->r, L, L, (const PetscScalar *const *)vin, vout, PETSC_FALSE, work + big, big, pl, flops);
  PetscCall(PetscFree(pl));
  PetscFunctionReturn(0);
}

/*
   NNConvWinogradWeightGradient - dWp[g][(t,c)][o] += ((G^T x G^T x G^T) dU)[t][g][c][o]

   work holds 3 * max(npos, ntap) * Cg * Cout scalars
*/
PetscErrorCode NNConvWinogradWeightGradient(const NNConvGeom *g, const PetscScalar *dU, PetscScalar *dWp, PetscScalar *work, PetscLogDouble *flops)
{
  const NNConvWinograd *w = &g->w;
  const PetscInt        L = g->Cg * g->Cout, big = PetscMax(w->npos, g->ntap) * L;
  PetscScalar          *vin[NN_CONV_WINOGRAD_MAX_VECS] = {NULL}, *vout[NN_CONV_WINOGRAD_MAX_VECS] = {NULL};
  NNConvPlan           *pl;

  PetscFunctionBegin;
  PetscCall(PetscNew(&pl));
  NNConvWinogradTable((PetscScalar *)dU, w->npos, L, vin);
  NNConvWinogradTable(work, g->ntap, L, vout);
  NNConvWinogradApply(w->GT, w->r, w->n, L, L, (const PetscScalar *const *)vin, vout, PETSC_FALSE, work + big, big, pl, flops);
  PetscCall(PetscFree(pl));
  for (PetscInt grp = 0; grp < g->G; grp++)
    for (PetscInt t = 0; t < g->ntap; t++)
      for (PetscInt c = 0; c < g->Cg; c++)
        for (PetscInt o = 0; o < g->Og; o++) dWp[(grp * g->Ka + t * g->Cg + c) * g->Og + o] += work[t * L + (grp * g->Cg + c) * g->Og + o];
  PetscFunctionReturn(0);
}
