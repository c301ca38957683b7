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

/* the transforms are vector loops: let them use the machine's vector units (the build targets x86-64-v2) */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
  #define NN_CONV_SIMD __attribute__((target_clones("avx512f", "avx2", "default")))
#else
  #define NN_CONV_SIMD
#endif

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

#if defined(__GNUC__)
/* 8 doubles, any 8-byte aligned address (unaligned vector loads and stores) */
typedef PetscScalar NNConvVec8 __attribute__((vector_size(64), aligned(8), may_alias));
#endif

/* the nonzeros of a small transform matrix, row by row */
typedef struct {
  PetscInt    p, q, nz[NN_CONV_WINOGRAD_MAX_N], j[NN_CONV_WINOGRAD_MAX_N][NN_CONV_WINOGRAD_MAX_N];
  PetscScalar t[NN_CONV_WINOGRAD_MAX_N][NN_CONV_WINOGRAD_MAX_N];
} NNConvSparse;

static void NNConvSparseSet(const PetscScalar *T, PetscInt p, PetscInt q, NNConvSparse *S)
{
  S->p = p;
  S->q = q;
  for (PetscInt i = 0; i < p; i++) {
    S->nz[i] = 0;
    for (PetscInt j = 0; j < q; j++)
      if (T[i * q + j] != 0) {
        S->j[i][S->nz[i]]   = j;
        S->t[i][S->nz[i]++] = T[i * q + j];
      }
  }
}

/* out[l][i][ooff + e] (+)= sum_j T[i][j] in[l][j][ioff + e] for lines l < nl, e < len: vectors
   given by pointer tables; blocks of 64 (then 16) entries are accumulated in registers */
NN_CONV_SIMD static void NNConvWinogradPass(const NNConvSparse *S, PetscInt nl, const PetscScalar *const *in, PetscInt ioff, PetscScalar *const *out, PetscInt ooff, PetscInt len, PetscBool add)
{
  const PetscInt p = S->p, q = S->q;

  for (PetscInt l = 0; l < nl; l++) {
    const PetscScalar *const *src = in + l * q;
    PetscScalar *const       *dst = out + l * p;
    PetscInt                  e0  = 0;
#if defined(__GNUC__)
    /* eight independent accumulation chains hide the latency of the multiply-adds */
    for (; e0 + 64 <= len; e0 += 64)
      for (PetscInt i = 0; i < p; i++) {
        NNConvVec8 a[8] = {{0}}, *d = (NNConvVec8 *)(dst[i] + ooff + e0);
        for (PetscInt k = 0; k < S->nz[i]; k++) {
          const NNConvVec8 *sk = (const NNConvVec8 *)(src[S->j[i][k]] + ioff + e0);
          const PetscScalar t  = S->t[i][k];
          for (PetscInt v = 0; v < 8; v++) a[v] += t * sk[v];
        }
        if (add)
          for (PetscInt v = 0; v < 8; v++) d[v] += a[v];
        else
          for (PetscInt v = 0; v < 8; v++) d[v] = a[v];
      }
    for (; e0 + 16 <= len; e0 += 16)
      for (PetscInt i = 0; i < p; i++) {
        NNConvVec8 a0 = {0}, a1 = {0}, *d = (NNConvVec8 *)(dst[i] + ooff + e0);
        for (PetscInt k = 0; k < S->nz[i]; k++) {
          const NNConvVec8 *sk = (const NNConvVec8 *)(src[S->j[i][k]] + ioff + e0);
          a0 += S->t[i][k] * sk[0];
          a1 += S->t[i][k] * sk[1];
        }
        if (add) {
          d[0] += a0;
          d[1] += a1;
        } else {
          d[0] = a0;
          d[1] = a1;
        }
      }
#endif
    for (PetscInt i = 0; i < p && e0 < len; i++) {
      PetscScalar *d = dst[i] + ooff;
      for (PetscInt e = e0; e < len; e++) {
        PetscScalar acc = 0;
        for (PetscInt k = 0; k < S->nz[i]; k++) acc += S->t[i][k] * src[S->j[i][k]][ioff + e];
        if (add) d[e] += acc;
        else d[e] = acc;
      }
    }
  }
}

/* the line tables of the (at most three) passes of one block transform */
typedef struct {
  PetscInt           nact, act[3], nl[3];
  NNConvSparse       S[3];
  const PetscScalar *lin[3][NN_CONV_WINOGRAD_MAX_VECS];
  PetscScalar       *lout[3][NN_CONV_WINOGRAD_MAX_VECS];
} NNConvPlan;

/*
   applies T[a] (p[a] x q[a]) along the axes x, y, z of a block of q_z x q_y x q_x vectors of length
   L (vin[(z q_y + y) q_x + x]) giving p_z x p_y x p_x vectors (vout[], added into if add), chunk
   entries at a time; the intermediate stages live in buf and buf + bufstride (vectors of chunk)
*/
static void NNConvWinogradApply(PetscScalar *const T[3], const PetscInt p[3], const PetscInt q[3], PetscInt L, PetscInt chunk, const PetscScalar *const *vin, PetscScalar *const *vout, PetscBool add, PetscScalar *buf, PetscInt bufstride, NNConvPlan *pl, PetscLogDouble *flops)
{
  PetscInt d[3] = {q[0], q[1], q[2]};

  pl->nact = 0;
  for (PetscInt a = 0; a < 3; a++)
    if (p[a] != 1 || q[a] != 1) pl->act[pl->nact++] = a; /* kernel 1 along an axis: the identity */
  for (PetscInt k = 0; k < pl->nact; k++) {
    PetscInt     a = pl->act[k], b = (a + 1) % 3, c = (a + 2) % 3, nd[3] = {d[0], d[1], d[2]}, nl = 0;
    PetscScalar *src = buf + ((k + 1) % 2) * bufstride, *dst = buf + (k % 2) * bufstride;
    nd[a] = p[a];
    NNConvSparseSet(T[a], p[a], q[a], &pl->S[k]);
    for (PetscInt u = 0; u < d[b]; u++)
      for (PetscInt v = 0; v < d[c]; v++, nl++) {
        PetscInt ci[3], co[3];
        ci[b] = co[b] = u;
        ci[c] = co[c] = v;
        for (PetscInt j = 0; j < q[a]; j++) {
          PetscInt idx;
          ci[a]                     = j;
          idx                       = (ci[2] * d[1] + ci[1]) * d[0] + ci[0];
          pl->lin[k][nl * q[a] + j] = k == 0 ? vin[idx] : src + idx * chunk;
        }
        for (PetscInt i = 0; i < p[a]; i++) {
          PetscInt idx;
          co[a]                      = i;
          idx                        = (co[2] * nd[1] + co[1]) * nd[0] + co[0];
          pl->lout[k][nl * p[a] + i] = k == pl->nact - 1 ? vout[idx] : dst + idx * chunk;
        }
      }
    pl->nl[k] = nl;
    for (PetscInt i = 0; i < p[a]; i++) *flops += 2.0 * pl->S[k].nz[i] * nl * L;
    d[a] = p[a];
  }
  for (PetscInt e0 = 0; e0 < L; e0 += chunk) {
    PetscInt len = PetscMin(chunk, L - e0);
    for (PetscInt k = 0; k < pl->nact; k++) NNConvWinogradPass(&pl->S[k], pl->nl[k], pl->lin[k], k == 0 ? e0 : 0, pl->lout[k], k == pl->nact - 1 ? e0 : 0, len, (PetscBool)(add && k == pl->nact - 1));
  }
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

/* the scratch of one thread's tile transforms */
typedef struct {
  PetscScalar       *buf;         /* two stage buffers of npos*chunk */
  PetscScalar       *zero, *junk; /* vectors of zeros (inputs outside the array) and for dropped outputs, of length nb*max(Cin, Cout) */
  PetscInt           q[NN_CONV_WINOGRAD_MAX_VECS];
  const PetscScalar *vin[NN_CONV_WINOGRAD_MAX_VECS];
  PetscScalar       *vout[NN_CONV_WINOGRAD_MAX_VECS];
  NNConvPlan         plan;
} NNConvWinogradScratch;

/* V[pos][row0 + (r, c)] = (B^T x B^T x B^T) d for tile t, slots [s0, s0+nr): pos stride vs */
static void NNConvWinogradInputTile(const NNConvGeom *g, const PetscScalar *x, PetscInt t, PetscInt s0, PetscInt nr, PetscScalar *V, PetscInt vs, NNConvWinogradScratch *sc, PetscLogDouble *flops)
{
  const NNConvWinograd *w = &g->w;
  const PetscInt        pix = g->nb * g->Cin;

  NNConvWinogradInputPixels(g, t, sc->q);
  for (PetscInt j = 0; j < w->npos; j++) {
    sc->vin[j]  = sc->q[j] < 0 ? sc->zero : x + sc->q[j] * pix + s0 * g->Cin;
    sc->vout[j] = V + j * vs;
  }
  NNConvWinogradApply(w->BT, w->n, w->n, nr * g->Cin, w->chunk, sc->vin, sc->vout, PETSC_FALSE, sc->buf, w->npos * w->chunk, &sc->plan, flops);
}

/* y[tile t, slots [s0, s0+nr)] += (A^T x A^T x A^T) M for the outputs of the tile that are owned */
static void NNConvWinogradOutputTile(const NNConvGeom *g, const PetscScalar *M, PetscInt ms, PetscInt t, PetscInt s0, PetscInt nr, PetscScalar *y, NNConvWinogradScratch *sc, PetscLogDouble *flops)
{
  const NNConvWinograd *w = &g->w;
  const PetscInt        pix = g->nb * g->Cout;

  NNConvWinogradOutputPixels(g, t, sc->q);
  for (PetscInt pos = 0; pos < w->npos; pos++) sc->vin[pos] = M + pos * ms;
  for (PetscInt j = 0; j < w->mt; j++) sc->vout[j] = sc->q[j] < 0 ? sc->junk : y + sc->q[j] * pix + s0 * g->Cout;
  NNConvWinogradApply(w->AT, w->m, w->n, nr * g->Cout, w->chunk, sc->vin, sc->vout, PETSC_TRUE, sc->buf, w->npos * w->chunk, &sc->plan, flops);
}

/* Z[pos][row0 + (r, o)] = (A x A x A) dy for tile t (outputs not owned count as zero); db += dy */
static void NNConvWinogradGradientTile(const NNConvGeom *g, const PetscScalar *dy, PetscInt t, PetscInt s0, PetscInt nr, PetscScalar *Z, PetscInt zs, PetscScalar *db, NNConvWinogradScratch *sc, PetscLogDouble *flops)
{
  const NNConvWinograd *w = &g->w;
  const PetscInt        pix = g->nb * g->Cout;

  NNConvWinogradOutputPixels(g, t, sc->q);
  if (db)
    for (PetscInt j = 0; j < w->mt; j++) {
      const PetscScalar *src = dy + sc->q[j] * pix + s0 * g->Cout;
      if (sc->q[j] < 0) continue;
      for (PetscInt r = 0; r < nr; r++)
        for (PetscInt o = 0; o < g->Cout; o++) db[o] += src[r * g->Cout + o];
    }
  for (PetscInt j = 0; j < w->mt; j++) sc->vin[j] = sc->q[j] < 0 ? sc->zero : dy + sc->q[j] * pix + s0 * g->Cout;
  for (PetscInt pos = 0; pos < w->npos; pos++) sc->vout[pos] = Z + pos * zs;
  NNConvWinogradApply(w->A, w->n, w->m, nr * g->Cout, w->chunk, sc->vin, sc->vout, PETSC_FALSE, sc->buf, w->npos * w->chunk, &sc->plan, flops);
}

/* dx[input tile of t, slots [s0, s0+nr)] += (B x B x B) dV, inside the ghosted array */
static void NNConvWinogradInputGradientTile(const NNConvGeom *g, const PetscScalar *dV, PetscInt vs, PetscInt t, PetscInt s0, PetscInt nr, PetscScalar *dx, NNConvWinogradScratch *sc, PetscLogDouble *flops)
{
  const NNConvWinograd *w = &g->w;
  const PetscInt        pix = g->nb * g->Cin;

  NNConvWinogradInputPixels(g, t, sc->q);
  for (PetscInt j = 0; j < w->npos; j++) {
    sc->vin[j]  = dV + j * vs;
    sc->vout[j] = sc->q[j] < 0 ? sc->junk : dx + sc->q[j] * pix + s0 * g->Cin;
  }
  NNConvWinogradApply(w->B, w->n, w->n, nr * g->Cin, w->chunk, sc->vin, sc->vout, PETSC_TRUE, sc->buf, w->npos * w->chunk, &sc->plan, flops);
}

void NNConvWinogradForward(NNConvTask *w)
{
  const NNConvGeom     *g = w->g;
  const NNConvPass     *ps = w->pass;
  const PetscInt        npos = g->w.npos, Cin = g->Cin, Cout = g->Cout, Cg = g->Cg, Og = g->Og, rmax = PetscMax(g->rows, 1);
  PetscScalar          *V = w->work, *M = V + npos * rmax * Cin;
  NNConvWinogradScratch sc;
  PetscInt              nrb, tb;

  sc.buf  = M + npos * rmax * Cout;
  sc.zero = sc.buf + 2 * npos * g->w.chunk;
  sc.junk = sc.zero + g->nb * PetscMax(Cin, Cout);
  memset(sc.zero, 0, sizeof(PetscScalar) * g->nb * PetscMax(Cin, Cout));
  NNConvWinogradBlock(g, w->s1 - w->s0, &nrb, &tb);
  for (PetscInt sb = w->s0; sb < w->s1; sb += nrb) {
    PetscInt nr = PetscMin(nrb, w->s1 - sb);
    for (PetscInt t0 = w->q0; t0 < w->q1; t0 += tb) {
      PetscInt nt = PetscMin(tb, w->q1 - t0), R = nt * nr;
      for (PetscInt b = 0; b < nt; b++) NNConvWinogradInputTile(g, ps->x, t0 + b, sb, nr, V + b * nr * Cin, R * Cin, &sc, &w->flops);
      for (PetscInt pos = 0; pos < npos; pos++)
        for (PetscInt grp = 0; grp < g->G; grp++)
          cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, R, Og, Cg, 1.0, V + pos * R * Cin + grp * Cg, Cin, ps->U + (pos * g->G + grp) * Cg * Og, Og, 0.0, M + pos * R * Cout + grp * Og, Cout);
      w->flops += 2.0 * npos * R * Cg * Cout;
      for (PetscInt b = 0; b < nt; b++) NNConvWinogradOutputTile(g, M + b * nr * Cout, R * Cout, t0 + b, sb, nr, ps->y, &sc, &w->flops);
    }
  }
}

void NNConvWinogradBackward(NNConvTask *w)
{
  const NNConvGeom     *g = w->g;
  const NNConvPass     *ps = w->pass;
  const PetscInt        npos = g->w.npos, Cin = g->Cin, Cout = g->Cout, Cg = g->Cg, Og = g->Og, rmax = PetscMax(g->rows, 1);
  PetscScalar          *V = w->work, *Z = V + npos * rmax * Cin;
  NNConvWinogradScratch sc;
  PetscInt              nrb, tb;

  sc.buf  = Z + npos * rmax * Cout;
  sc.zero = sc.buf + 2 * npos * g->w.chunk;
  sc.junk = sc.zero + g->nb * PetscMax(Cin, Cout);
  memset(sc.zero, 0, sizeof(PetscScalar) * g->nb * PetscMax(Cin, Cout));
  NNConvWinogradBlock(g, w->s1 - w->s0, &nrb, &tb);
  for (PetscInt sb = w->s0; sb < w->s1; sb += nrb) {
    PetscInt nr = PetscMin(nrb, w->s1 - sb);
    for (PetscInt t0 = w->q0; t0 < w->q1; t0 += tb) {
      PetscInt nt = PetscMin(tb, w->q1 - t0), R = nt * nr;
      for (PetscInt b = 0; b < nt; b++) NNConvWinogradGradientTile(g, ps->dy, t0 + b, sb, nr, Z + b * nr * Cout, R * Cout, w->db, &sc, &w->flops);
      if (w->dW) {
        for (PetscInt b = 0; b < nt; b++) NNConvWinogradInputTile(g, ps->x, t0 + b, sb, nr, V + b * nr * Cin, R * Cin, &sc, &w->flops);
        for (PetscInt pos = 0; pos < npos; pos++)
          for (PetscInt grp = 0; grp < g->G; grp++)
            cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, Cg, Og, R, 1.0, V + pos * R * Cin + grp * Cg, Cin, Z + pos * R * Cout + grp * Og, Cout, 1.0, w->dW + (pos * g->G + grp) * Cg * Og, Og);
        w->flops += 2.0 * npos * R * Cg * Cout;
      }
      if (ps->dx) {
        for (PetscInt pos = 0; pos < npos; pos++)
          for (PetscInt grp = 0; grp < g->G; grp++)
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, R, Cg, Og, 1.0, Z + pos * R * Cout + grp * Og, Cout, ps->U + (pos * g->G + grp) * Cg * Og, Og, 0.0, V + pos * R * Cin + grp * Cg, Cin);
        w->flops += 2.0 * npos * R * Cg * Cout;
        for (PetscInt b = 0; b < nt; b++) NNConvWinogradInputGradientTile(g, V + b * nr * Cin, R * Cin, t0 + b, sb, nr, ps->dx, &sc, &w->flops);
      }
    }
  }
}

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
