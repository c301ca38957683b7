/* The pooling loops, a precision template (include/petnn/private/nnrealdouble.h) that pool.c compiles in double and in
   float. */
static PetscErrorCode PetscConcat(NNPoolForwardMax, NN_SUFFIX)(NNLayer_Pool *d, const PoolGeom *g, const NN_REAL *x, NN_REAL *y)
{
  const PetscInt D = g->D;
  PetscInt       o[3], lo[3], t0[3], t1[3];

  PetscFunctionBegin;
  for (o[2] = g->os[2]; o[2] < g->os[2] + g->om[2]; o[2]++)
    for (o[1] = g->os[1]; o[1] < g->os[1] + g->om[1]; o[1]++)
      for (o[0] = g->os[0]; o[0] < g->os[0] + g->om[0]; o[0]++) {
        PetscInt     opix = ((o[2] - g->os[2]) * g->om[1] + (o[1] - g->os[1])) * g->om[0] + (o[0] - g->os[0]);
        NN_REAL *yp   = y + opix * D;
        PetscInt    *ap   = d->arg + opix * D;

        PoolWindow(g, o, lo, t0, t1);
        if (t1[0] - t0[0] == 2 && t1[1] - t0[1] == 2 && t1[2] - t0[2] == 1) { /* 2 x 2 taps (2x2 windows, the common case): one pass, no reloads */
          const NN_REAL *restrict x0 = x + PoolPixel(g, lo, t0[0], t0[1], t0[2]) * D, *restrict x1 = x0 + D;
          const NN_REAL *restrict x2 = x + PoolPixel(g, lo, t0[0], t0[1] + 1, t0[2]) * D, *restrict x3 = x2 + D;
          const PetscInt              tb = (t0[2] * g->k[1] + t0[1]) * g->k[0] + t0[0], ta[4] = {tb, tb + 1, tb + g->k[0], tb + g->k[0] + 1};
          NN_REAL *restrict       m  = yp;
          PetscInt *restrict          a  = ap;
          for (PetscInt j = 0; j < D; j++) {
            NN_REAL mv = x0[j], v;
            PetscInt    av = ta[0];
            int         gt;
            v  = x1[j];
            gt = v > mv || v != v;
            mv = gt ? v : mv;
            av = gt ? ta[1] : av;
            v  = x2[j];
            gt = v > mv || v != v;
            mv = gt ? v : mv;
            av = gt ? ta[2] : av;
            v  = x3[j];
            gt = v > mv || v != v;
            mv = gt ? v : mv;
            av = gt ? ta[3] : av;
            m[j] = mv;
            a[j] = av;
          }
          continue;
        }
        for (PetscInt j0 = 0; j0 < D; j0 += NN_POOL_BLOCK) {
          PetscInt  jn    = PetscMin(NN_POOL_BLOCK, D - j0);
          PetscBool first = PETSC_TRUE;
          for (PetscInt tz = t0[2]; tz < t1[2]; tz++)
            for (PetscInt ty = t0[1]; ty < t1[1]; ty++)
              for (PetscInt tx = t0[0]; tx < t1[0]; tx++) {
                const NN_REAL *restrict xp = x + PoolPixel(g, lo, tx, ty, tz) * D + j0;
                NN_REAL *restrict       m  = yp + j0;
                PetscInt *restrict          a  = ap + j0;
                const PetscInt              t  = (tz * g->k[1] + ty) * g->k[0] + tx;
                if (first) {
                  for (PetscInt j = 0; j < jn; j++) {
                    m[j] = xp[j];
                    a[j] = t;
                  }
                  first = PETSC_FALSE;
                } else {
                  for (PetscInt j = 0; j < jn; j++) {
                    const NN_REAL v  = xp[j];
                    const int         gt = v > m[j] || v != v; /* the first maximum wins; NaN propagates */
                    m[j]                 = gt ? v : m[j];
                    a[j]                 = gt ? t : a[j];
                  }
                }
              }
        }
      }
  d->haveforward = PETSC_TRUE;
  PetscFunctionReturn(0);
}

static PetscErrorCode PetscConcat(NNPoolForwardAvg, NN_SUFFIX)(const PoolGeom *g, const NN_REAL *x, NN_REAL *y)
{
  const PetscInt    D   = g->D;
  const NN_REAL div = (NN_REAL)g->ntap; /* count_include_pad: the full window */
  PetscInt          o[3], lo[3], t0[3], t1[3];

  PetscFunctionBegin;
  for (o[2] = g->os[2]; o[2] < g->os[2] + g->om[2]; o[2]++)
    for (o[1] = g->os[1]; o[1] < g->os[1] + g->om[1]; o[1]++)
      for (o[0] = g->os[0]; o[0] < g->os[0] + g->om[0]; o[0]++) {
        PetscInt     opix = ((o[2] - g->os[2]) * g->om[1] + (o[1] - g->os[1])) * g->om[0] + (o[0] - g->os[0]);
        NN_REAL *yp   = y + opix * D;

        PoolWindow(g, o, lo, t0, t1);
        if (t1[0] - t0[0] == 2 && t1[1] - t0[1] == 2 && t1[2] - t0[2] == 1) { /* 2 x 2 taps: one pass */
          const NN_REAL *restrict x0 = x + PoolPixel(g, lo, t0[0], t0[1], t0[2]) * D, *restrict x1 = x0 + D;
          const NN_REAL *restrict x2 = x + PoolPixel(g, lo, t0[0], t0[1] + 1, t0[2]) * D, *restrict x3 = x2 + D;
          NN_REAL *restrict       m  = yp;
          for (PetscInt j = 0; j < D; j++) m[j] = (((x0[j] + x1[j]) + x2[j]) + x3[j]) / div;
          continue;
        }
        for (PetscInt j0 = 0; j0 < D; j0 += NN_POOL_BLOCK) {
          PetscInt           jn    = PetscMin(NN_POOL_BLOCK, D - j0);
          NN_REAL *restrict m  = yp + j0;
          PetscBool          first = PETSC_TRUE;
          for (PetscInt tz = t0[2]; tz < t1[2]; tz++)
            for (PetscInt ty = t0[1]; ty < t1[1]; ty++)
              for (PetscInt tx = t0[0]; tx < t1[0]; tx++) {
                const NN_REAL *restrict xp = x + PoolPixel(g, lo, tx, ty, tz) * D + j0;
                if (first) {
                  for (PetscInt j = 0; j < jn; j++) m[j] = xp[j];
                  first = PETSC_FALSE;
                } else
                  for (PetscInt j = 0; j < jn; j++) m[j] += xp[j];
              }
          for (PetscInt j = 0; j < jn; j++) m[j] /= div;
        }
      }
  PetscFunctionReturn(0);
}

/* dx (the input box) from dy: written once per pixel for non-overlapping windows (dx zeroed by the
   caller unless the windows tile the box), accumulated for overlapping ones (dx zeroed) */
static PetscErrorCode PetscConcat(NNPoolBackwardMax, NN_SUFFIX)(NNLayer_Pool *d, const PoolGeom *g, const NN_REAL *dy, NN_REAL *dx)
{
  const PetscInt D       = g->D;
  const PetscBool overlap = (PetscBool)(g->s[0] < g->k[0] || g->s[1] < g->k[1] || g->s[2] < g->k[2]);
  PetscInt       o[3], lo[3], t0[3], t1[3];

  PetscFunctionBegin;
  for (o[2] = g->os[2]; o[2] < g->os[2] + g->om[2]; o[2]++)
    for (o[1] = g->os[1]; o[1] < g->os[1] + g->om[1]; o[1]++)
      for (o[0] = g->os[0]; o[0] < g->os[0] + g->om[0]; o[0]++) {
        PetscInt           opix = ((o[2] - g->os[2]) * g->om[1] + (o[1] - g->os[1])) * g->om[0] + (o[0] - g->os[0]);
        const NN_REAL *gp   = dy + opix * D;
        const PetscInt    *ap   = d->arg + opix * D;

        PoolWindow(g, o, lo, t0, t1);
        if (overlap) {
          const PetscInt base = PoolPixel(g, lo, 0, 0, 0); /* may lie outside the box: only valid taps are argmaxes */
          for (PetscInt j = 0; j < D; j++) dx[(base + d->toff[ap[j]]) * D + j] += gp[j];
        } else {
          for (PetscInt j0 = 0; j0 < D; j0 += NN_POOL_BLOCK) {
            const PetscInt                 jn = PetscMin(NN_POOL_BLOCK, D - j0);
            const PetscInt *restrict       a  = ap + j0;
            const NN_REAL *restrict    gg = gp + j0;
            for (PetscInt tz = t0[2]; tz < t1[2]; tz++)
              for (PetscInt ty = t0[1]; ty < t1[1]; ty++)
                for (PetscInt tx = t0[0]; tx < t1[0]; tx++) {
                  NN_REAL *restrict xp = dx + PoolPixel(g, lo, tx, ty, tz) * D + j0;
                  const PetscInt        t  = (tz * g->k[1] + ty) * g->k[0] + tx;
                  for (PetscInt j = 0; j < jn; j++) {
                    const NN_REAL v = gg[j]; /* loaded unconditionally so the select vectorizes */
                    xp[j]               = a[j] == t ? v : 0.0;
                  }
                }
          }
        }
      }
  PetscFunctionReturn(0);
}

static PetscErrorCode PetscConcat(NNPoolBackwardAvg, NN_SUFFIX)(const PoolGeom *g, const NN_REAL *dy, NN_REAL *dx)
{
  const PetscInt    D       = g->D;
  const NN_REAL div     = (NN_REAL)g->ntap;
  const PetscBool   overlap = (PetscBool)(g->s[0] < g->k[0] || g->s[1] < g->k[1] || g->s[2] < g->k[2]);
  PetscInt          o[3], lo[3], t0[3], t1[3];

  PetscFunctionBegin;
  for (o[2] = g->os[2]; o[2] < g->os[2] + g->om[2]; o[2]++)
    for (o[1] = g->os[1]; o[1] < g->os[1] + g->om[1]; o[1]++)
      for (o[0] = g->os[0]; o[0] < g->os[0] + g->om[0]; o[0]++) {
        PetscInt           opix = ((o[2] - g->os[2]) * g->om[1] + (o[1] - g->os[1])) * g->om[0] + (o[0] - g->os[0]);
        const NN_REAL *gp   = dy + opix * D;

        PoolWindow(g, o, lo, t0, t1);
        for (PetscInt tz = t0[2]; tz < t1[2]; tz++)
          for (PetscInt ty = t0[1]; ty < t1[1]; ty++)
            for (PetscInt tx = t0[0]; tx < t1[0]; tx++) {
              NN_REAL *restrict xp = dx + PoolPixel(g, lo, tx, ty, tz) * D;
              if (overlap)
                for (PetscInt j = 0; j < D; j++) xp[j] += gp[j] / div;
              else
                for (PetscInt j = 0; j < D; j++) xp[j] = gp[j] / div;
            }
      }
  PetscFunctionReturn(0);
}
