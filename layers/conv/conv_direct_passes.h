/* The direct passes (conv_direct.c explains them), a precision template (include/petnn/private/nnrealdouble.h) that
   conv_direct.c compiles in double and in float. */
#define NN_CONV_PASS PetscConcat(NNConvPass, NN_SUFFIX)
#define NN_CONV_TASK PetscConcat(NNConvTask, NN_SUFFIX)
#define NN_VEC       PetscConcat(NNConvDirectVec, NN_SUFFIX)

/* 64 bytes of NN_REAL (16 floats or 8 doubles), at any address aligned to an entry */
typedef NN_REAL NN_VEC __attribute__((vector_size(64), aligned(sizeof(NN_REAL)), may_alias));

/* y[pixel q][slots r0..r0+R)[channels jV..jV+V) = bias + sum over taps and input channels, R rows in registers */
#define NN_DIRECT_FORWARD_ROWS(R) \
  do { \
    NN_VEC acc[R]; \
    for (PetscInt r = 0; r < (R); r++) acc[r] = bias; \
    for (PetscInt t = 0; t < g->ntap; t++) { \
      const NN_REAL *src, *wt; \
      if (off[t] < 0) continue; \
      src = ps->x + off[t] * pixin + r0 * Cin; \
      wt  = ps->Wp + t * Cin * Cout + jv; \
      for (PetscInt c = 0; c < Cin; c++) { \
        const NN_VEC wv = *(const NN_VEC *)(wt + c * Cout); \
        for (PetscInt r = 0; r < (R); r++) acc[r] += src[r * Cin + c] * wv; \
      } \
    } \
    for (PetscInt r = 0; r < (R); r++) *(NN_VEC *)(ps->y + (q * nb + r0 + r) * Cout + jv) = acc[r]; \
  } while (0)

/* the passes' bodies, inlined with the channel counts as arguments: the common counts become constants, and the
   rows' offsets immediate displacements */
static inline __attribute__((always_inline)) void PetscConcat(NNConvDirectForwardBody, NN_SUFFIX)(NN_CONV_TASK *w, const PetscInt Cin, const PetscInt Cout)
{
  const NNConvGeom   *g = w->g;
  const NN_CONV_PASS *ps = w->pass;
  const PetscInt      nb = g->nb, pixin = nb * Cin;
  PetscInt           *off = w->iwork;

  for (PetscInt q = w->q0; q < w->q1; q++) {
    NNConvTapOffsets(g, q, off);
    for (PetscInt jv = 0; jv < Cout; jv += NN_VLEN) {
      NN_VEC   bias = {0};
      PetscInt r0   = w->s0;
      if (g->bias) bias = *(const NN_VEC *)(ps->Wp + g->K * Cout + jv);
      for (; r0 + 12 <= w->s1; r0 += 12) NN_DIRECT_FORWARD_ROWS(12);
      for (; r0 + 4 <= w->s1; r0 += 4) NN_DIRECT_FORWARD_ROWS(4);
      for (; r0 < w->s1; r0++) NN_DIRECT_FORWARD_ROWS(1);
    }
  }
  w->flops += 2.0 * (w->q1 - w->q0) * (w->s1 - w->s0) * g->K * Cout;
}

/* dx[tap t of pixel q][slots r0..r0+R)[channels jV..) += sum_o dy[q][slot][o] W[t][channel][o], by the per-tap
   transposed weights WT[t][o][channel] (in the pass's U) */
#define NN_DIRECT_DX_ROWS(R) \
  do { \
    for (PetscInt t = 0; t < g->ntap; t++) { \
      NN_REAL       *dst; \
      const NN_REAL *wt; \
      NN_VEC         acc[R]; \
      if (off[t] < 0) continue; \
      dst = ps->dx + off[t] * pixin + r0 * Cin + jv; \
      wt  = ps->U + t * Cout * Cin + jv; \
      for (PetscInt r = 0; r < (R); r++) acc[r] = *(NN_VEC *)(dst + r * Cin); \
      for (PetscInt o = 0; o < Cout; o++) { \
        const NN_VEC wv = *(const NN_VEC *)(wt + o * Cin); \
        for (PetscInt r = 0; r < (R); r++) acc[r] += dyq[(r0 + r) * Cout + o] * wv; \
      } \
      for (PetscInt r = 0; r < (R); r++) *(NN_VEC *)(dst + r * Cin) = acc[r]; \
    } \
  } while (0)

/* dW[t][channels c0..c0+CI)[outputs jV..) += sum over the block's rows of x[tap t][row][c] dy[row][o] */
#define NN_DIRECT_DW_CHANNELS(CI) \
  do { \
    NN_VEC   acc[CI]; \
    NN_REAL *dw = w->dW + (t * Cin + c0) * Cout + jv; \
    for (PetscInt c = 0; c < (CI); c++) acc[c] = *(NN_VEC *)(dw + c * Cout); \
    for (PetscInt r = rb; r < re; r++) { \
      const NN_VEC   dyv = *(const NN_VEC *)(dyq + r * Cout + jv); \
      const NN_REAL *xs  = src + r * Cin + c0; \
      for (PetscInt c = 0; c < (CI); c++) acc[c] += xs[c] * dyv; \
    } \
    for (PetscInt c = 0; c < (CI); c++) *(NN_VEC *)(dw + c * Cout) = acc[c]; \
  } while (0)

static inline __attribute__((always_inline)) void PetscConcat(NNConvDirectBackwardBody, NN_SUFFIX)(NN_CONV_TASK *w, const PetscInt Cin, const PetscInt Cout)
{
  const NNConvGeom   *g = w->g;
  const NN_CONV_PASS *ps = w->pass;
  const PetscInt      nb = g->nb, pixin = nb * Cin;
  PetscInt           *off = w->iwork;

  for (PetscInt q = w->q0; q < w->q1; q++) {
    const NN_REAL *dyq = ps->dy + q * nb * Cout;
    NNConvTapOffsets(g, q, off);
    if (ps->dx)
      for (PetscInt jv = 0; jv < Cin; jv += NN_VLEN) {
        PetscInt r0 = w->s0;
        for (; r0 + 12 <= w->s1; r0 += 12) NN_DIRECT_DX_ROWS(12);
        for (; r0 + 4 <= w->s1; r0 += 4) NN_DIRECT_DX_ROWS(4);
        for (; r0 < w->s1; r0++) NN_DIRECT_DX_ROWS(1);
      }
    if (!w->dW) continue;
    for (PetscInt rb = w->s0; rb < w->s1; rb += 32) { /* a block of rows, reused by every tap and channel */
      const PetscInt re = PetscMin(rb + 32, w->s1);
      for (PetscInt t = 0; t < g->ntap; t++) {
        const NN_REAL *src;
        if (off[t] < 0) continue;
        src = ps->x + off[t] * pixin;
        for (PetscInt jv = 0; jv < Cout; jv += NN_VLEN) {
          PetscInt c0 = 0;
          for (; c0 + 16 <= Cin; c0 += 16) NN_DIRECT_DW_CHANNELS(16);
          for (; c0 < Cin; c0 += 8) NN_DIRECT_DW_CHANNELS(8); /* Cin is a multiple of NN_VLEN >= 8 */
        }
      }
      if (g->bias) /* the bias row of dW */
        for (PetscInt jv = 0; jv < Cout; jv += NN_VLEN) {
          NN_VEC sum = {0};
          for (PetscInt r = rb; r < re; r++) sum += *(const NN_VEC *)(dyq + r * Cout + jv);
          *(NN_VEC *)(w->dW + g->K * Cout + jv) += sum;
        }
    }
  }
  w->flops += 2.0 * (w->q1 - w->q0) * (w->s1 - w->s0) * g->K * Cout * ((ps->dx ? 1 : 0) + (w->dW ? 1 : 0));
}

NN_SIMD void PetscConcat(NNConvDirectForward, NN_SUFFIX)(NN_CONV_TASK *w)
{
  const PetscInt Cin = w->g->Cin, Cout = w->g->Cout;

  if (Cin == 16 && Cout == 16) PetscConcat(NNConvDirectForwardBody, NN_SUFFIX)(w, 16, 16);
  else if (Cin == 32 && Cout == 64) PetscConcat(NNConvDirectForwardBody, NN_SUFFIX)(w, 32, 64);
  else PetscConcat(NNConvDirectForwardBody, NN_SUFFIX)(w, Cin, Cout);
}

NN_SIMD void PetscConcat(NNConvDirectBackward, NN_SUFFIX)(NN_CONV_TASK *w)
{
  const PetscInt Cin = w->g->Cin, Cout = w->g->Cout;

  if (Cin == 16 && Cout == 16) PetscConcat(NNConvDirectBackwardBody, NN_SUFFIX)(w, 16, 16);
  else if (Cin == 32 && Cout == 64) PetscConcat(NNConvDirectBackwardBody, NN_SUFFIX)(w, 32, 64);
  else PetscConcat(NNConvDirectBackwardBody, NN_SUFFIX)(w, Cin, Cout);
}

#undef NN_DIRECT_FORWARD_ROWS
#undef NN_DIRECT_DX_ROWS
#undef NN_DIRECT_DW_CHANNELS
#undef NN_CONV_PASS
#undef NN_CONV_TASK
#undef NN_VEC
