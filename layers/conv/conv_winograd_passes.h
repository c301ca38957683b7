/* The Winograd tile transforms and GEMMs (conv_winograd.c explains them), a precision template
   (include/petnn/private/nnrealdouble.h) that conv_winograd.c compiles in double and in float; the transform matrices
   (g->w) are double and rounded once per plan. */
#define NN_CONV_PASS PetscConcat(NNConvPass, NN_SUFFIX)
#define NN_CONV_TASK PetscConcat(NNConvTask, NN_SUFFIX)
#define NN_VEC       PetscConcat(NNConvVec, NN_SUFFIX)
#define NN_SPARSE    PetscConcat(NNConvSparse, NN_SUFFIX)
#define NN_PLAN      PetscConcat(NNConvPlan, NN_SUFFIX)
#define NN_SCRATCH   PetscConcat(NNConvWinogradScratch, NN_SUFFIX)

#if defined(__GNUC__)
/* 64 bytes of NN_REAL (8 doubles or 16 floats), at any address aligned to an entry (unaligned vector loads and stores) */
typedef NN_REAL NN_VEC __attribute__((vector_size(64), aligned(sizeof(NN_REAL)), may_alias));
#endif

/* the nonzeros of a small transform matrix, row by row */
typedef struct {
  PetscInt p, q, nz[NN_CONV_WINOGRAD_MAX_N], j[NN_CONV_WINOGRAD_MAX_N][NN_CONV_WINOGRAD_MAX_N];
  NN_REAL  t[NN_CONV_WINOGRAD_MAX_N][NN_CONV_WINOGRAD_MAX_N];
} NN_SPARSE;

static void PetscConcat(NNConvSparseSet, NN_SUFFIX)(const PetscScalar *T, PetscInt p, PetscInt q, NN_SPARSE *S)
{
  S->p = p;
  S->q = q;
  for (PetscInt i = 0; i < p; i++) {
    S->nz[i] = 0;
    for (PetscInt j = 0; j < q; j++)
      if (T[i * q + j] != 0) {
        S->j[i][S->nz[i]]   = j;
        S->t[i][S->nz[i]++] = (NN_REAL)T[i * q + j];
      }
  }
}

/* out[l][i][ooff + e] (+)= sum_j T[i][j] in[l][j][ioff + e] for lines l < nl, e < len: vectors
   given by pointer tables; blocks of 64 (then 16) entries are accumulated in registers */
NN_CONV_SIMD static void PetscConcat(NNConvWinogradPass, NN_SUFFIX)(const NN_SPARSE *S, PetscInt nl, const NN_REAL *const *in, PetscInt ioff, NN_REAL *const *out, PetscInt ooff, PetscInt len, PetscBool add)
{
  const PetscInt p = S->p, q = S->q;

  for (PetscInt l = 0; l < nl; l++) {
    const NN_REAL *const *src = in + l * q;
    NN_REAL *const       *dst = out + l * p;
    PetscInt                  e0  = 0;
#if defined(__GNUC__)
    /* eight independent accumulation chains hide the latency of the multiply-adds */
    for (; e0 + 8 * NN_VLEN <= len; e0 += 8 * NN_VLEN)
      for (PetscInt i = 0; i < p; i++) {
        NN_VEC a[8] = {{0}}, *d = (NN_VEC *)(dst[i] + ooff + e0);
        for (PetscInt k = 0; k < S->nz[i]; k++) {
          const NN_VEC *sk = (const NN_VEC *)(src[S->j[i][k]] + ioff + e0);
          const NN_REAL t  = S->t[i][k];
          for (PetscInt v = 0; v < 8; v++) a[v] += t * sk[v];
        }
        if (add)
          for (PetscInt v = 0; v < 8; v++) d[v] += a[v];
        else
          for (PetscInt v = 0; v < 8; v++) d[v] = a[v];
      }
    for (; e0 + 2 * NN_VLEN <= len; e0 += 2 * NN_VLEN)
      for (PetscInt i = 0; i < p; i++) {
        NN_VEC a0 = {0}, a1 = {0}, *d = (NN_VEC *)(dst[i] + ooff + e0);
        for (PetscInt k = 0; k < S->nz[i]; k++) {
          const NN_VEC *sk = (const NN_VEC *)(src[S->j[i][k]] + ioff + e0);
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
      NN_REAL *d = dst[i] + ooff;
      for (PetscInt e = e0; e < len; e++) {
        NN_REAL acc = 0;
        for (PetscInt k = 0; k < S->nz[i]; k++) acc += S->t[i][k] * src[S->j[i][k]][ioff + e];
        if (add) d[e] += acc;
        else d[e] = acc;
      }
    }
  }
}

/* the line tables of the (at most three) passes of one block transform */
typedef struct {
  PetscInt       nact, act[3], nl[3];
  NN_SPARSE      S[3];
  const NN_REAL *lin[3][NN_CONV_WINOGRAD_MAX_VECS];
  NN_REAL       *lout[3][NN_CONV_WINOGRAD_MAX_VECS];
} NN_PLAN;

/*
   applies T[a] (p[a] x q[a]) along the axes x, y, z of a block of q_z x q_y x q_x vectors of length
   L (vin[(z q_y + y) q_x + x]) giving p_z x p_y x p_x vectors (vout[], added into if add), chunk
   entries at a time; the intermediate stages live in buf and buf + bufstride (vectors of chunk)
*/
static void PetscConcat(NNConvWinogradApply, NN_SUFFIX)(PetscScalar *const T[3], const PetscInt p[3], const PetscInt q[3], PetscInt L, PetscInt chunk, const NN_REAL *const *vin, NN_REAL *const *vout, PetscBool add, NN_REAL *buf, PetscInt bufstride, NN_PLAN *pl, PetscLogDouble *flops)
{
  PetscInt d[3] = {q[0], q[1], q[2]};

  pl->nact = 0;
  for (PetscInt a = 0; a < 3; a++)
    if (p[a] != 1 || q[a] != 1) pl->act[pl->nact++] = a; /* kernel 1 along an axis: the identity */
  for (PetscInt k = 0; k < pl->nact; k++) {
    PetscInt     a = pl->act[k], b = (a + 1) % 3, c = (a + 2) % 3, nd[3] = {d[0], d[1], d[2]}, nl = 0;
    NN_REAL *src = buf + ((k + 1) % 2) * bufstride, *dst = buf + (k % 2) * bufstride;
    nd[a] = p[a];
    PetscConcat(NNConvSparseSet, NN_SUFFIX)(T[a], p[a], q[a], &pl->S[k]);
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
    for (PetscInt k = 0; k < pl->nact; k++) PetscConcat(NNConvWinogradPass, NN_SUFFIX)(&pl->S[k], pl->nl[k], pl->lin[k], k == 0 ? e0 : 0, pl->lout[k], k == pl->nact - 1 ? e0 : 0, len, (PetscBool)(add && k == pl->nact - 1));
  }
}

/* the scratch of one thread's tile transforms */
typedef struct {
  NN_REAL       *buf;         /* two stage buffers of npos*chunk */
  NN_REAL       *zero, *junk; /* vectors of zeros (inputs outside the array) and for dropped outputs, of length nb*max(Cin, Cout) */
  PetscInt           q[NN_CONV_WINOGRAD_MAX_VECS];
  const NN_REAL *vin[NN_CONV_WINOGRAD_MAX_VECS];
  NN_REAL       *vout[NN_CONV_WINOGRAD_MAX_VECS];
  NN_PLAN         plan;
} NN_SCRATCH;

/* V[pos][row0 + (r, c)] = (B^T x B^T x B^T) d for tile t, slots [s0, s0+nr): pos stride vs */
static void PetscConcat(NNConvWinogradInputTile, NN_SUFFIX)(const NNConvGeom *g, const NN_REAL *x, PetscInt t, PetscInt s0, PetscInt nr, NN_REAL *V, PetscInt vs, NN_SCRATCH *sc, PetscLogDouble *flops)
{
  const NNConvWinograd *w = &g->w;
  const PetscInt        pix = g->nb * g->Cin;

  NNConvWinogradInputPixels(g, t, sc->q);
  for (PetscInt j = 0; j < w->npos; j++) {
    sc->vin[j]  = sc->q[j] < 0 ? sc->zero : x + sc->q[j] * pix + s0 * g->Cin;
    sc->vout[j] = V + j * vs;
  }
  PetscConcat(NNConvWinogradApply, NN_SUFFIX)(w->BT, w->n, w->n, nr * g->Cin, w->chunk, sc->vin, sc->vout, PETSC_FALSE, sc->buf, w->npos * w->chunk, &sc->plan, flops);
}

/* y[tile t, slots [s0, s0+nr)] += (A^T x A^T x A^T) M for the outputs of the tile that are owned */
static void PetscConcat(NNConvWinogradOutputTile, NN_SUFFIX)(const NNConvGeom *g, const NN_REAL *M, PetscInt ms, PetscInt t, PetscInt s0, PetscInt nr, NN_REAL *y, NN_SCRATCH *sc, PetscLogDouble *flops)
{
  const NNConvWinograd *w = &g->w;
  const PetscInt        pix = g->nb * g->Cout;

  NNConvWinogradOutputPixels(g, t, sc->q);
  for (PetscInt pos = 0; pos < w->npos; pos++) sc->vin[pos] = M + pos * ms;
  for (PetscInt j = 0; j < w->mt; j++) sc->vout[j] = sc->q[j] < 0 ? sc->junk : y + sc->q[j] * pix + s0 * g->Cout;
  PetscConcat(NNConvWinogradApply, NN_SUFFIX)(w->AT, w->m, w->n, nr * g->Cout, w->chunk, sc->vin, sc->vout, PETSC_TRUE, sc->buf, w->npos * w->chunk, &sc->plan, flops);
}

/* Z[pos][row0 + (r, o)] = (A x A x A) dy for tile t (outputs not owned count as zero); db += dy */
static void PetscConcat(NNConvWinogradGradientTile, NN_SUFFIX)(const NNConvGeom *g, const NN_REAL *dy, PetscInt t, PetscInt s0, PetscInt nr, NN_REAL *Z, PetscInt zs, NN_REAL *db, NN_SCRATCH *sc, PetscLogDouble *flops)
{
  const NNConvWinograd *w = &g->w;
  const PetscInt        pix = g->nb * g->Cout;

  NNConvWinogradOutputPixels(g, t, sc->q);
  if (db)
    for (PetscInt j = 0; j < w->mt; j++) {
      const NN_REAL *src = dy + sc->q[j] * pix + s0 * g->Cout;
      if (sc->q[j] < 0) continue;
      for (PetscInt r = 0; r < nr; r++)
        for (PetscInt o = 0; o < g->Cout; o++) db[o] += src[r * g->Cout + o];
    }
  for (PetscInt j = 0; j < w->mt; j++) sc->vin[j] = sc->q[j] < 0 ? sc->zero : dy + sc->q[j] * pix + s0 * g->Cout;
  for (PetscInt pos = 0; pos < w->npos; pos++) sc->vout[pos] = Z + pos * zs;
  PetscConcat(NNConvWinogradApply, NN_SUFFIX)(w->A, w->n, w->m, nr * g->Cout, w->chunk, sc->vin, sc->vout, PETSC_FALSE, sc->buf, w->npos * w->chunk, &sc->plan, flops);
}

/* dx[input tile of t, slots [s0, s0+nr)] += (B x B x B) dV, inside the ghosted array */
static void PetscConcat(NNConvWinogradInputGradientTile, NN_SUFFIX)(const NNConvGeom *g, const NN_REAL *dV, PetscInt vs, PetscInt t, PetscInt s0, PetscInt nr, NN_REAL *dx, NN_SCRATCH *sc, PetscLogDouble *flops)
{
  const NNConvWinograd *w = &g->w;
  const PetscInt        pix = g->nb * g->Cin;

  NNConvWinogradInputPixels(g, t, sc->q);
  for (PetscInt j = 0; j < w->npos; j++) {
    sc->vin[j]  = dV + j * vs;
    sc->vout[j] = sc->q[j] < 0 ? sc->junk : dx + sc->q[j] * pix + s0 * g->Cin;
  }
  PetscConcat(NNConvWinogradApply, NN_SUFFIX)(w->B, w->n, w->n, nr * g->Cin, w->chunk, sc->vin, sc->vout, PETSC_TRUE, sc->buf, w->npos * w->chunk, &sc->plan, flops);
}

void PetscConcat(NNConvWinogradForward, NN_SUFFIX)(NN_CONV_TASK *w)
{
  const NNConvGeom     *g = w->g;
  const NN_CONV_PASS   *ps = w->pass;
  const PetscInt        npos = g->w.npos, Cin = g->Cin, Cout = g->Cout, Cg = g->Cg, Og = g->Og, rmax = PetscMax(g->rows, 1);
  NN_REAL          *V = w->work, *M = V + npos * rmax * Cin;
  NN_SCRATCH sc;
  PetscInt              nrb, tb;

  sc.buf  = M + npos * rmax * Cout;
  sc.zero = sc.buf + 2 * npos * g->w.chunk;
  sc.junk = sc.zero + g->nb * PetscMax(Cin, Cout);
  memset(sc.zero, 0, sizeof(NN_REAL) * g->nb * PetscMax(Cin, Cout));
  NNConvWinogradBlock(g, w->s1 - w->s0, &nrb, &tb);
  for (PetscInt sb = w->s0; sb < w->s1; sb += nrb) {
    PetscInt nr = PetscMin(nrb, w->s1 - sb);
    for (PetscInt t0 = w->q0; t0 < w->q1; t0 += tb) {
      PetscInt nt = PetscMin(tb, w->q1 - t0), R = nt * nr;
      for (PetscInt b = 0; b < nt; b++) PetscConcat(NNConvWinogradInputTile, NN_SUFFIX)(g, ps->x, t0 + b, sb, nr, V + b * nr * Cin, R * Cin, &sc, &w->flops);
      for (PetscInt pos = 0; pos < npos; pos++)
        for (PetscInt grp = 0; grp < g->G; grp++)
          NN_GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, R, Og, Cg, 1.0, V + pos * R * Cin + grp * Cg, Cin, ps->U + (pos * g->G + grp) * Cg * Og, Og, 0.0, M + pos * R * Cout + grp * Og, Cout);
      w->flops += 2.0 * npos * R * Cg * Cout;
      for (PetscInt b = 0; b < nt; b++) PetscConcat(NNConvWinogradOutputTile, NN_SUFFIX)(g, M + b * nr * Cout, R * Cout, t0 + b, sb, nr, ps->y, &sc, &w->flops);
    }
  }
}

void PetscConcat(NNConvWinogradBackward, NN_SUFFIX)(NN_CONV_TASK *w)
{
  const NNConvGeom     *g = w->g;
  const NN_CONV_PASS   *ps = w->pass;
  const PetscInt        npos = g->w.npos, Cin = g->Cin, Cout = g->Cout, Cg = g->Cg, Og = g->Og, rmax = PetscMax(g->rows, 1);
  NN_REAL          *V = w->work, *Z = V + npos * rmax * Cin;
  NN_SCRATCH sc;
  PetscInt              nrb, tb;

  sc.buf  = Z + npos * rmax * Cout;
  sc.zero = sc.buf + 2 * npos * g->w.chunk;
  sc.junk = sc.zero + g->nb * PetscMax(Cin, Cout);
  memset(sc.zero, 0, sizeof(NN_REAL) * g->nb * PetscMax(Cin, Cout));
  NNConvWinogradBlock(g, w->s1 - w->s0, &nrb, &tb);
  for (PetscInt sb = w->s0; sb < w->s1; sb += nrb) {
    PetscInt nr = PetscMin(nrb, w->s1 - sb);
    for (PetscInt t0 = w->q0; t0 < w->q1; t0 += tb) {
      PetscInt nt = PetscMin(tb, w->q1 - t0), R = nt * nr;
      for (PetscInt b = 0; b < nt; b++) PetscConcat(NNConvWinogradGradientTile, NN_SUFFIX)(g, ps->dy, t0 + b, sb, nr, Z + b * nr * Cout, R * Cout, w->db, &sc, &w->flops);
      if (w->dW) {
        for (PetscInt b = 0; b < nt; b++) PetscConcat(NNConvWinogradInputTile, NN_SUFFIX)(g, ps->x, t0 + b, sb, nr, V + b * nr * Cin, R * Cin, &sc, &w->flops);
        for (PetscInt pos = 0; pos < npos; pos++)
          for (PetscInt grp = 0; grp < g->G; grp++)
            NN_GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, Cg, Og, R, 1.0, V + pos * R * Cin + grp * Cg, Cin, Z + pos * R * Cout + grp * Og, Cout, 1.0, w->dW + (pos * g->G + grp) * Cg * Og, Og);
        w->flops += 2.0 * npos * R * Cg * Cout;
      }
      if (ps->dx) {
        for (PetscInt pos = 0; pos < npos; pos++)
          for (PetscInt grp = 0; grp < g->G; grp++)
            NN_GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, R, Cg, Og, 1.0, Z + pos * R * Cout + grp * Og, Cout, ps->U + (pos * g->G + grp) * Cg * Og, Og, 0.0, V + pos * R * Cin + grp * Cg, Cin);
        w->flops += 2.0 * npos * R * Cg * Cout;
        for (PetscInt b = 0; b < nt; b++) PetscConcat(NNConvWinogradInputGradientTile, NN_SUFFIX)(g, V + b * nr * Cin, R * Cin, t0 + b, sb, nr, ps->dx, &sc, &w->flops);
      }
    }
  }
}

#undef NN_CONV_PASS
#undef NN_CONV_TASK
#undef NN_VEC
#undef NN_SPARSE
#undef NN_PLAN
#undef NN_SCRATCH
