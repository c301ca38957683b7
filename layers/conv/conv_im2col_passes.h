/* The im2col passes (conv_im2col.c explains them), a precision template (include/petnn/private/nnrealdouble.h) that
   conv_im2col.c compiles in double and in float. */
#define NN_CONV_PASS PetscConcat(NNConvPass, NN_SUFFIX)
#define NN_CONV_TASK PetscConcat(NNConvTask, NN_SUFFIX)

/* A[(p,r)][(t,c)] = x[tap t of pixel q0+p][slot s0+r][grp*Cg + c], A[(p,r)][K] = 1 with a bias */
static void PetscConcat(NNConvIm2col, NN_SUFFIX)(const NNConvGeom *g, const NN_REAL *x, PetscInt q0, PetscInt np, PetscInt s0, PetscInt nr, PetscInt grp, PetscInt *off, NN_REAL *A)
{
  const PetscInt K = g->K, Ka = g->Ka, Cg = g->Cg, Cin = g->Cin, pix = g->nb * g->Cin;

  for (PetscInt p = 0; p < np; p++) {
    NN_REAL *Ap = A + p * nr * Ka;
    NNConvTapOffsets(g, q0 + p, off);
    if (Cg == 1) { /* one value per tap: fill each row in turn */
      const NN_REAL *src = x + s0 * Cin + grp;
      for (PetscInt r = 0; r < nr; r++)
        for (PetscInt t = 0; t < g->ntap; t++) Ap[r * Ka + t] = off[t] < 0 ? 0 : src[off[t] * pix + r * Cin];
    } else {
      for (PetscInt t = 0; t < g->ntap; t++) {
        NN_REAL *dst = Ap + t * Cg;
        if (off[t] < 0) {
          for (PetscInt r = 0; r < nr; r++) memset(dst + r * Ka, 0, sizeof(NN_REAL) * Cg);
        } else {
          const NN_REAL *src = x + off[t] * pix + s0 * Cin + grp * Cg;
          for (PetscInt r = 0; r < nr; r++) memcpy(dst + r * Ka, src + r * Cin, sizeof(NN_REAL) * Cg);
        }
      }
    }
    if (Ka > K)
      for (PetscInt r = 0; r < nr; r++) Ap[r * Ka + K] = 1;
  }
}

/* the adjoint of NNConvIm2col: dx[tap t of pixel q0+p][slot s0+r][grp*Cg + c] += A[(p,r)][(t,c)] */
static void PetscConcat(NNConvCol2im, NN_SUFFIX)(const NNConvGeom *g, NN_REAL *dx, PetscInt q0, PetscInt np, PetscInt s0, PetscInt nr, PetscInt grp, PetscInt *off, const NN_REAL *A)
{
  const PetscInt Ka = g->Ka, Cg = g->Cg, Cin = g->Cin, pix = g->nb * g->Cin;

  for (PetscInt p = 0; p < np; p++) {
    const NN_REAL *Ap = A + p * nr * Ka;
    NNConvTapOffsets(g, q0 + p, off);
    if (Cg == 1) {
      NN_REAL *dst = dx + s0 * Cin + grp;
      for (PetscInt r = 0; r < nr; r++)
        for (PetscInt t = 0; t < g->ntap; t++)
          if (off[t] >= 0) dst[off[t] * pix + r * Cin] += Ap[r * Ka + t];
    } else {
      for (PetscInt t = 0; t < g->ntap; t++) {
        const NN_REAL *src = Ap + t * Cg;
        NN_REAL       *dst;
        if (off[t] < 0) continue;
        dst = dx + off[t] * pix + s0 * Cin + grp * Cg;
        for (PetscInt r = 0; r < nr; r++)
          for (PetscInt c = 0; c < Cg; c++) dst[r * Cin + c] += src[r * Ka + c];
      }
    }
  }
}

void PetscConcat(NNConvIm2colForward, NN_SUFFIX)(NN_CONV_TASK *w)
{
  const NNConvGeom *g = w->g;
  const NN_CONV_PASS *ps = w->pass;
  const PetscInt    nr = w->s1 - w->s0, Ka = g->Ka, Og = g->Og, Cout = g->Cout, tpix = NNConvIm2colTilePixels(g, nr);
  const PetscBool   inplace = (PetscBool)(nr == g->nb);
  NN_REAL      *A = w->work, *Yc = w->work + NNConvIm2colMaxRows(g) * Ka;

  for (PetscInt q0 = w->q0; q0 < w->q1; q0 += tpix) {
    PetscInt     np = PetscMin(tpix, w->q1 - q0), rows = np * nr;
    NN_REAL *Y  = inplace ? ps->y + q0 * g->nb * Cout : Yc;
    for (PetscInt grp = 0; grp < g->G; grp++) {
      PetscConcat(NNConvIm2col, NN_SUFFIX)(g, ps->x, q0, np, w->s0, nr, grp, w->iwork, A);
      NN_GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, Og, Ka, 1.0, A, Ka, ps->Wp + grp * Ka * Og, Og, 0.0, Y + grp * Og, Cout);
    }
    w->flops += 2.0 * rows * Ka * Cout;
    if (!inplace)
      for (PetscInt p = 0; p < np; p++) memcpy(ps->y + ((q0 + p) * g->nb + w->s0) * Cout, Yc + p * nr * Cout, sizeof(NN_REAL) * nr * Cout);
  }
}

void PetscConcat(NNConvIm2colBackward, NN_SUFFIX)(NN_CONV_TASK *w)
{
  const NNConvGeom *g = w->g;
  const NN_CONV_PASS *ps = w->pass;
  const PetscInt    nr = w->s1 - w->s0, K = g->K, Ka = g->Ka, Og = g->Og, Cout = g->Cout, tpix = NNConvIm2colTilePixels(g, nr);
  const PetscBool   inplace = (PetscBool)(nr == g->nb);
  NN_REAL      *A = w->work, *Yc = w->work + NNConvIm2colMaxRows(g) * Ka;

  for (PetscInt q0 = w->q0; q0 < w->q1; q0 += tpix) {
    PetscInt           np = PetscMin(tpix, w->q1 - q0), rows = np * nr;
    const NN_REAL *dY = inplace ? ps->dy + q0 * g->nb * Cout : Yc;
    if (!inplace)
      for (PetscInt p = 0; p < np; p++) memcpy(Yc + p * nr * Cout, ps->dy + ((q0 + p) * g->nb + w->s0) * Cout, sizeof(NN_REAL) * nr * Cout);
    for (PetscInt grp = 0; grp < g->G; grp++) {
      if (w->dW) {
        PetscConcat(NNConvIm2col, NN_SUFFIX)(g, ps->x, q0, np, w->s0, nr, grp, w->iwork, A);
        NN_GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, Ka, Og, rows, 1.0, A, Ka, dY + grp * Og, Cout, 1.0, w->dW + grp * Ka * Og, Og);
        w->flops += 2.0 * rows * Ka * Og;
      }
      if (ps->dx) {
        NN_GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, rows, K, Og, 1.0, dY + grp * Og, Cout, ps->Wp + grp * Ka * Og, Og, 0.0, A, Ka);
        PetscConcat(NNConvCol2im, NN_SUFFIX)(g, ps->dx, q0, np, w->s0, nr, grp, w->iwork, A);
        w->flops += 2.0 * rows * K * Og;
      }
    }
  }
}

#undef NN_CONV_PASS
#undef NN_CONV_TASK
