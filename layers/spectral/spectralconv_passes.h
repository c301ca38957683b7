/* The spectral_conv layers' passes on the arrays of the rank's DMDA block, a precision template
   (include/petnn/private/nnrealdouble.h): spectralconv.c compiles it in double (the Vec passes) and spectralconv_single.c
   in float (-nn_precision single). tr holds that precision's FFTW plans, slab buffers and repartition units, theta is the
   layer's parameter slice in that precision. The pointwise path's GEMMs run over rows (pixel, slot) of the first ns
   slots: one GEMM when every slot is used. */

static void PetscConcat(NNSpectralLinearForward, NN_SUFFIX)(const NNSpectralRows *r, const NN_REAL *Wl, const NN_REAL *b, const NN_REAL *x, NN_REAL *y)
{
  PetscInt nblk = r->ns == r->nb ? 1 : r->npix, rows = r->ns == r->nb ? r->npix * r->nb : r->ns;

  for (PetscInt p = 0; p < r->npix; p++)
    for (PetscInt s = 0; s < r->ns; s++) memcpy(y + (p * r->nb + s) * r->Cout, b, (size_t)r->Cout * sizeof(NN_REAL));
  for (PetscInt k = 0; k < nblk && rows > 0; k++) NN_GEMM_LAYER(CblasRowMajor, CblasNoTrans, CblasTrans, rows, r->Cout, r->Cin, 1.0, x + k * r->nb * r->Cin, r->Cin, Wl, r->Cin, 1.0, y + k * r->nb * r->Cout, r->Cout);
}

/* dWl += dy^T x, db += sum dy; with dx: dx = dy Wl (the slots used) */
static void PetscConcat(NNSpectralLinearBackward, NN_SUFFIX)(const NNSpectralRows *r, const NN_REAL *Wl, const NN_REAL *x, const NN_REAL *dy, NN_REAL *dWl, NN_REAL *db, NN_REAL *dx)
{
  PetscInt nblk = r->ns == r->nb ? 1 : r->npix, rows = r->ns == r->nb ? r->npix * r->nb : r->ns;

  for (PetscInt k = 0; k < nblk && rows > 0; k++) {
    NN_GEMM_LAYER(CblasRowMajor, CblasTrans, CblasNoTrans, r->Cout, r->Cin, rows, 1.0, dy + k * r->nb * r->Cout, r->Cout, x + k * r->nb * r->Cin, r->Cin, 1.0, dWl, r->Cin);
    if (dx) NN_GEMM_LAYER(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, r->Cin, r->Cout, 1.0, dy + k * r->nb * r->Cout, r->Cout, Wl, r->Cin, 0.0, dx + k * r->nb * r->Cin, r->Cin);
  }
  for (PetscInt p = 0; p < r->npix; p++)
    for (PetscInt s = 0; s < r->ns; s++)
      for (PetscInt o = 0; o < r->Cout; o++) db[o] += dy[(p * r->nb + s) * r->Cout + o];
}

/* zero the slots s >= ns of every pixel (C values per slot) */
static PetscErrorCode PetscConcat(NNSpectralZeroSlots, NN_SUFFIX)(const NNSpectralRows *r, PetscInt C, NN_REAL *a)
{
  PetscFunctionBegin;
  if (r->ns < r->nb)
    for (PetscInt p = 0; p < r->npix; p++) PetscCall(PetscArrayzero(a + (p * r->nb + r->ns) * C, (r->nb - r->ns) * C));
  PetscFunctionReturn(0);
}

/* ya = the layer applied to xa: the pointwise path on the block, the spectral path through the slabs added into it */
static PetscErrorCode PetscConcat(NNSpectralConvForwardArrays, NN_SUFFIX)(NNLayer l, const NNSpectralRows *r, NNSpectralTransforms *tr, const NN_REAL *theta, const NN_REAL *xa, NN_REAL *ya)
{
  NNLayer_SpectralConv *d  = (NNLayer_SpectralConv *)l->data;
  const NNTensor       *tw = &l->tensors[d->nd == 2 ? 2 : 4];
  NN_REAL              *bin, *bout;

  PetscFunctionBegin;
  PetscCall(PetscConcat(NNSpectralFFTGetBuffers, NN_SUFFIX)(tr->fft, &bin, &bout));
  if (d->linear) {
    PetscConcat(NNSpectralLinearForward, NN_SUFFIX)(r, theta + tw[0].offset, theta + tw[1].offset, xa, ya);
    PetscCall(PetscLogFlops(2.0 * r->npix * r->ns * r->Cin * r->Cout));
  } else PetscCall(PetscArrayzero(ya, r->npix * r->nb * r->Cout));
  PetscCall(PetscConcat(NNFFTRepartitionForward, NN_SUFFIX)(&d->rep, tr->unitin, xa, bin));
  PetscCall(NNSpectralFFTExecute(tr->fft, NN_FFT_R2C_IN));
  PetscCall(PetscConcat(NNSpectralModesForward, NN_SUFFIX)(&d->g, theta, bin, bout));
  PetscCall(NNSpectralFFTExecute(tr->fft, NN_FFT_C2R_OUT));
  PetscCall(PetscConcat(NNFFTRepartitionAdjoint, NN_SUFFIX)(&d->rep, tr->unitout, bout, ya));
  PetscCall(PetscConcat(NNSpectralZeroSlots, NN_SUFFIX)(r, r->Cout, ya));
  PetscFunctionReturn(0);
}

/* the rank's share of the parameter gradient ADDED into dW (the caller sums it over the ranks); with dxa the input
   gradient, overwritten */
static PetscErrorCode PetscConcat(NNSpectralConvBackwardArrays, NN_SUFFIX)(NNLayer l, const NNSpectralRows *r, NNSpectralTransforms *tr, const NN_REAL *theta, NN_REAL *dW, const NN_REAL *xa, const NN_REAL *dya, NN_REAL *dxa)
{
  NNLayer_SpectralConv *d  = (NNLayer_SpectralConv *)l->data;
  const NNTensor       *tw = &l->tensors[d->nd == 2 ? 2 : 4];
  NN_REAL              *bin, *bout;

  PetscFunctionBegin;
  PetscCall(PetscConcat(NNSpectralFFTGetBuffers, NN_SUFFIX)(tr->fft, &bin, &bout));
  /* X = R2C(x) again (keeping it from the forward pass would cost a slab per layer), G = R2C(dy) */
  PetscCall(PetscConcat(NNFFTRepartitionForward, NN_SUFFIX)(&d->rep, tr->unitin, xa, bin));
  PetscCall(NNSpectralFFTExecute(tr->fft, NN_FFT_R2C_IN));
  PetscCall(PetscConcat(NNFFTRepartitionForward, NN_SUFFIX)(&d->rep, tr->unitout, dya, bout));
  PetscCall(NNSpectralFFTExecute(tr->fft, NN_FFT_R2C_OUT));
  PetscCall(PetscConcat(NNSpectralModesBackward, NN_SUFFIX)(&d->g, theta, bout, bin, dW, dxa ? PETSC_TRUE : PETSC_FALSE));
  if (d->linear) {
    PetscConcat(NNSpectralLinearBackward, NN_SUFFIX)(r, theta + tw[0].offset, xa, dya, dW + tw[0].offset, dW + tw[1].offset, dxa);
    PetscCall(PetscLogFlops((dxa ? 4.0 : 2.0) * r->npix * r->ns * r->Cin * r->Cout));
  } else if (dxa) PetscCall(PetscArrayzero(dxa, r->npix * r->nb * r->Cin));
  if (dxa) {
    PetscCall(NNSpectralFFTExecute(tr->fft, NN_FFT_C2R_IN));
    PetscCall(PetscConcat(NNFFTRepartitionAdjoint, NN_SUFFIX)(&d->rep, tr->unitin, bin, dxa));
    PetscCall(PetscConcat(NNSpectralZeroSlots, NN_SUFFIX)(r, r->Cin, dxa));
  }
  PetscFunctionReturn(0);
}
