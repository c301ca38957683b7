/* The mode products of the spectral_conv layers, a precision template (include/petnn/private/nnrealdouble.h) that
   spectralconv_fft.c compiles in double and in float: the half spectra X, Z, G and the weights W, dW are NN_REAL
   (re, im) pairs, and every product and sum is in NN_REAL (complex float in single precision). */

/* Z = (1/N) X W on the kept modes of the rank's slab, zero elsewhere; X, Z complex (re, im pairs) half spectra */
PetscErrorCode PetscConcat(NNSpectralModesForward, NN_SUFFIX)(const NNSpectralGeom *g, const NN_REAL *W, const NN_REAL *X, NN_REAL *Z)
{
  PetscInt  npos = g->npos, q, mode, kw, wq = g->Cin * g->Cout * g->M * 2, nk = 0;
  PetscReal Nd = 1;
  NN_REAL   N;

  PetscFunctionBegin;
  for (PetscInt a = 0; a < g->nd; a++) Nd *= g->n[a];
  N = (NN_REAL)Nd;
  PetscCall(PetscArrayzero(Z, 2 * npos * g->nb * g->Cout));
  for (PetscInt p = 0; p < npos; p++) {
    if (!NNSpectralKept(g, p, &q, &mode, &kw)) continue;
    nk++;
    for (PetscInt s = 0; s < g->ns; s++) {
      const NN_REAL *x = X + 2 * (p * g->nb + s) * g->Cin;
      NN_REAL       *z = Z + 2 * (p * g->nb + s) * g->Cout;
      for (PetscInt o = 0; o < g->Cout; o++) {
        NN_REAL zr = 0, zi = 0;
        for (PetscInt i = 0; i < g->Cin; i++) {
          const NN_REAL *w = W + q * wq + 2 * ((i * g->Cout + o) * g->M + mode);
          zr += x[2 * i] * w[0] - x[2 * i + 1] * w[1];
          zi += x[2 * i] * w[1] + x[2 * i + 1] * w[0];
        }
        z[2 * o]     = zr / N;
        z[2 * o + 1] = zi / N;
      }
    }
  }
  PetscCall(PetscLogFlops(8.0 * g->ns * g->Cin * g->Cout * nk));
  PetscFunctionReturn(0);
}

/* dW += (c/N) sum_s G conj(X) on the kept modes; then, with dx, X <- (1/N) sum_o G conj(W) there and 0 elsewhere */
PetscErrorCode PetscConcat(NNSpectralModesBackward, NN_SUFFIX)(const NNSpectralGeom *g, const NN_REAL *W, const NN_REAL *G, NN_REAL *X, NN_REAL *dW, PetscBool dx)
{
  PetscInt  npos = g->npos, q, mode, kw, wq = g->Cin * g->Cout * g->M * 2, Wlast = g->n[g->nd - 1], nk = 0;
  PetscReal Nd = 1;
  NN_REAL   N;

  PetscFunctionBegin;
  for (PetscInt a = 0; a < g->nd; a++) Nd *= g->n[a];
  N = (NN_REAL)Nd;
  for (PetscInt p = 0; p < npos; p++) {
    NN_REAL c;
    if (!NNSpectralKept(g, p, &q, &mode, &kw)) continue;
    c = (kw == 0 || (Wlast % 2 == 0 && kw == Wlast / 2)) ? 1 : 2;
    nk++;
    for (PetscInt s = 0; s < g->ns; s++) {
      const NN_REAL *x  = X + 2 * (p * g->nb + s) * g->Cin;
      const NN_REAL *gy = G + 2 * (p * g->nb + s) * g->Cout;
      for (PetscInt i = 0; i < g->Cin; i++)
        for (PetscInt o = 0; o < g->Cout; o++) {
          NN_REAL *w = dW + q * wq + 2 * ((i * g->Cout + o) * g->M + mode);
          w[0] += c / N * (gy[2 * o] * x[2 * i] + gy[2 * o + 1] * x[2 * i + 1]);
          w[1] += c / N * (gy[2 * o + 1] * x[2 * i] - gy[2 * o] * x[2 * i + 1]);
        }
    }
  }
  PetscCall(PetscLogFlops((dx ? 16.0 : 8.0) * g->ns * g->Cin * g->Cout * nk));
  if (!dx) PetscFunctionReturn(0);
  PetscCall(PetscArrayzero(X, 2 * npos * g->nb * g->Cin));
  for (PetscInt p = 0; p < npos; p++) {
    if (!NNSpectralKept(g, p, &q, &mode, &kw)) continue;
    for (PetscInt s = 0; s < g->ns; s++) {
      NN_REAL       *x  = X + 2 * (p * g->nb + s) * g->Cin;
      const NN_REAL *gy = G + 2 * (p * g->nb + s) * g->Cout;
      for (PetscInt i = 0; i < g->Cin; i++) {
        NN_REAL xr = 0, xi = 0;
        for (PetscInt o = 0; o < g->Cout; o++) {
          const NN_REAL *w = W + q * wq + 2 * ((i * g->Cout + o) * g->M + mode);
          xr += gy[2 * o] * w[0] + gy[2 * o + 1] * w[1];
          xi += gy[2 * o + 1] * w[0] - gy[2 * o] * w[1];
        }
        x[2 * i]     = xr / N;
        x[2 * i + 1] = xi / N;
      }
    }
  }
  PetscFunctionReturn(0);
}
