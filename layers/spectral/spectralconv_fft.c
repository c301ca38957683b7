/*
   FFTW MPI plans and the mode products of the spectral_conv layers (layers/spectral/spectralconv.h).

   Four in-place plans over two slab buffers, made once at set-up: r2c and c2r with howmany =
   nbatch*C_in on the input buffer and with howmany = nbatch*C_out on the output buffer (channels-last
   pixels are FFTW's interleaved howmany layout). FFTW is unnormalized both ways; torch.fft.irfftn
   divides by N = prod(grid), which the forward mode product applies.

   The spectral path is y = (1/N) C2R(M(R2C(x))), linear in x. With the real inner product
   <a,b> = Re sum conj(a) b on half spectra:
     R2C^T = C2R diag(w),   C2R^T = diag(c) R2C,
   where along the last (halved) axis c = 1 on the column 0 and (even W) the Nyquist column, 2 on the
   interior columns, and w = 1/c (c2r counts an interior column twice, Re of column 0 and Nyquist once).
   So with G = R2C(dy) (raw), the input gradient is C2R((1/N) sum_o G conj(W)) (c w = 1) and the
   weight gradient is (c/N) sum_s G conj(X), X = R2C(x).
*/
#include "spectralconv.h"
#if defined(PETNN_HAVE_FFTW)
  #include <fftw3-mpi.h>

struct _n_NNSpectralFFT {
  NNSpectralGeom g;
  fftw_plan      plan[4];
  double        *bin, *bout; /* padded slab buffers of nbatch*C_in and nbatch*C_out values per position */
  PetscInt       flag;       /* 0 estimate, 1 measure */
  PetscMPIInt    size;
  PetscInt      *rows;       /* slab rows of every rank */
};

static PetscBool NNFFTWInitialized = PETSC_FALSE;

static PetscErrorCode NNSpectralFFTFinalizePackage(void)
{
  PetscFunctionBegin;
  fftw_mpi_cleanup();
  NNFFTWInitialized = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* fftw_mpi_init() once, fftw_mpi_cleanup() from PetscFinalize() */
PetscErrorCode NNSpectralFFTInitializePackage(void)
{
  PetscFunctionBegin;
  if (NNFFTWInitialized) PetscFunctionReturn(0);
  NNFFTWInitialized = PETSC_TRUE;
  fftw_mpi_init();
  PetscCall(PetscRegisterFinalize(NNSpectralFFTFinalizePackage));
  PetscFunctionReturn(0);
}

/* plans and buffers; sets g->r0 and g->nr, the rank's rows of the first FFT axis (and with g->trans, g->t0 and
   g->nt, its rows of the second axis of the transposed half spectrum), and g->npos */
PetscErrorCode NNSpectralFFTCreate(MPI_Comm comm, NNSpectralGeom *g, PetscInt flag, NNSpectralFFT *fft)
{
  NNSpectralFFT f;
  ptrdiff_t     n[3], nc[3], ln0, l0s, ln1 = 0, l1s = 0, ain, aout, hin = (ptrdiff_t)g->nb * g->Cin, hout = (ptrdiff_t)g->nb * g->Cout, B = FFTW_MPI_DEFAULT_BLOCK;
  unsigned      flags = flag ? FFTW_MEASURE : FFTW_ESTIMATE, fr2c = flags, fc2r = flags;
  PetscInt      nr[2];

  PetscFunctionBegin;
  PetscCall(NNSpectralFFTInitializePackage());
  PetscCall(PetscNew(&f));
  for (PetscInt a = 0; a < g->nd; a++) n[a] = nc[a] = g->n[a];
  nc[g->nd - 1] = g->n[g->nd - 1] / 2 + 1;
  if (g->trans) {
    ain  = fftw_mpi_local_size_many_transposed(g->nd, nc, hin, B, B, comm, &ln0, &l0s, &ln1, &l1s);
    aout = fftw_mpi_local_size_many_transposed(g->nd, nc, hout, B, B, comm, &ln0, &l0s, &ln1, &l1s);
    fr2c |= FFTW_MPI_TRANSPOSED_OUT;
    fc2r |= FFTW_MPI_TRANSPOSED_IN;
  } else {
    ain  = fftw_mpi_local_size_many(g->nd, nc, hin, B, comm, &ln0, &l0s);
    aout = fftw_mpi_local_size_many(g->nd, nc, hout, B, comm, &ln0, &l0s);
  }
  g->r0 = (PetscInt)l0s;
  g->nr = (PetscInt)ln0;
  g->t0 = (PetscInt)l1s;
  g->nt = (PetscInt)ln1;
  /* transposed: [second axis rows][n0](...[W/2+1]); otherwise [n0 rows][middle axes][W/2+1] */
  if (g->trans) g->npos = g->nt * g->n[0] * (g->nd == 3 ? g->wc : 1);
  else g->npos = g->nr * g->inner * g->wc;
  f->bin  = fftw_alloc_real(2 * (size_t)PetscMax(ain, 1));
  f->bout = fftw_alloc_real(2 * (size_t)PetscMax(aout, 1));
  PetscCheck(f->bin && f->bout, PETSC_COMM_SELF, PETSC_ERR_MEM, "FFTW could not allocate the slab buffers (%td and %td complex values)", ain, aout);
  PetscCall(PetscArrayzero(f->bin, 2 * PetscMax(ain, 1)));
  PetscCall(PetscArrayzero(f->bout, 2 * PetscMax(aout, 1)));
  f->plan[NN_FFT_R2C_IN]  = fftw_mpi_plan_many_dft_r2c(g->nd, n, hin, B, B, f->bin, (fftw_complex *)f->bin, comm, fr2c);
  f->plan[NN_FFT_C2R_IN]  = fftw_mpi_plan_many_dft_c2r(g->nd, n, hin, B, B, (fftw_complex *)f->bin, f->bin, comm, fc2r);
  f->plan[NN_FFT_R2C_OUT] = fftw_mpi_plan_many_dft_r2c(g->nd, n, hout, B, B, f->bout, (fftw_complex *)f->bout, comm, fr2c);
  f->plan[NN_FFT_C2R_OUT] = fftw_mpi_plan_many_dft_c2r(g->nd, n, hout, B, B, (fftw_complex *)f->bout, f->bout, comm, fc2r);
  for (PetscInt k = 0; k < 4; k++) PetscCheck(f->plan[k], comm, PETSC_ERR_LIB, "FFTW MPI could not plan the transforms of the %" PetscInt_FMT "-d grid", g->nd);
  f->g    = *g;
  f->flag = flag;
  PetscCallMPI(MPI_Comm_size(comm, &f->size));
  PetscCall(PetscMalloc1(2 * f->size, &f->rows));
  nr[0] = g->nr;
  nr[1] = g->nt;
  PetscCallMPI(MPI_Allgather(nr, 2, MPIU_INT, f->rows, 2, MPIU_INT, comm));
  *fft = f;
  PetscFunctionReturn(0);
}

PetscErrorCode NNSpectralFFTDestroy(NNSpectralFFT *fft)
{
  NNSpectralFFT f = *fft;

  PetscFunctionBegin;
  if (!f) PetscFunctionReturn(0);
  for (PetscInt k = 0; k < 4; k++)
    if (f->plan[k]) fftw_destroy_plan(f->plan[k]);
  fftw_free(f->bin);
  fftw_free(f->bout);
  PetscCall(PetscFree(f->rows));
  PetscCall(PetscFree(*fft));
  PetscFunctionReturn(0);
}

/* the input (nbatch*C_in) and output (nbatch*C_out) slab buffers, real padded or complex half-spectrum views */
PetscErrorCode NNSpectralFFTGetBuffers(NNSpectralFFT f, PetscScalar **bin, PetscScalar **bout)
{
  PetscFunctionBegin;
  if (bin) *bin = f->bin;
  if (bout) *bout = f->bout;
  PetscFunctionReturn(0);
}

PetscErrorCode NNSpectralFFTExecute(NNSpectralFFT f, PetscInt which)
{
  const NNSpectralGeom *g = &f->g;
  PetscReal             N = 1;

  PetscFunctionBegin;
  for (PetscInt a = 0; a < g->nd; a++) N *= g->n[a];
  PetscCall(PetscLogEventBegin(NN_SpectralFFT, 0, 0, 0, 0));
  fftw_execute(f->plan[which]);
  /* about 2.5 N log2 N flops per real transform, times howmany, shared by the ranks */
  PetscCall(PetscLogFlops(2.5 * N * PetscLog2Real(N) * g->nb * (which == NN_FFT_R2C_IN || which == NN_FFT_C2R_IN ? g->Cin : g->Cout) / f->size));
  PetscCall(PetscLogEventEnd(NN_SpectralFFT, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* "3,3,2" for field k of the (nr, nt) pairs of every rank */
static PetscErrorCode NNSpectralRowsString(NNSpectralFFT f, PetscInt k, size_t len, char str[])
{
  size_t l;

  PetscFunctionBegin;
  str[0] = 0;
  for (PetscMPIInt r = 0; r < f->size; r++) {
    PetscCall(PetscStrlen(str, &l));
    if (l > len - 24) {
      PetscCall(PetscStrlcat(str, ",...", len));
      break;
    }
    PetscCall(PetscSNPrintf(str + l, len - l, r ? ",%" PetscInt_FMT : "%" PetscInt_FMT, f->rows[2 * r + k]));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NNSpectralFFTView(NNSpectralFFT f, PetscViewer v)
{
  const NNSpectralGeom *g = &f->g;
  char                  rows[256], trows[256];

  PetscFunctionBegin;
  PetscCall(NNSpectralRowsString(f, 0, sizeof(rows), rows));
  PetscCall(NNSpectralRowsString(f, 1, sizeof(trows), trows));
  if (g->nd == 2) PetscCall(PetscViewerASCIIPrintf(v, "FFT grid %" PetscInt_FMT " x %" PetscInt_FMT " (H x W, half spectrum %" PetscInt_FMT " x %" PetscInt_FMT "), FFTW MPI %s plans, howmany %" PetscInt_FMT " in / %" PetscInt_FMT " out\n", g->n[0], g->n[1], g->n[0], g->wc, f->flag ? "measure" : "estimate", g->nb * g->Cin, g->nb * g->Cout));
  else PetscCall(PetscViewerASCIIPrintf(v, "FFT grid %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT " (D x H x W, half spectrum %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT "), FFTW MPI %s plans, howmany %" PetscInt_FMT " in / %" PetscInt_FMT " out\n", g->n[0], g->n[1], g->n[2], g->n[0], g->n[1], g->wc, f->flag ? "measure" : "estimate", g->nb * g->Cin, g->nb * g->Cout));
  PetscCall(PetscViewerASCIIPrintf(v, "slab layout: rows of %s per rank %s (DMDA blocks <-> slabs by a PetscSF)\n", g->nd == 2 ? "H" : "D", rows));
  if (g->trans) PetscCall(PetscViewerASCIIPrintf(v, "spectrum kept transposed between r2c and c2r: rows of the half spectrum's %s per rank %s\n", g->nd == 2 ? "W/2+1" : "H", trows));
  else PetscCall(PetscViewerASCIIPrintf(v, "spectrum in the slab layout (transposed back by FFTW after every r2c)\n"));
  PetscFunctionReturn(0);
}
#endif

/* global frequency indices (k0 along n[0], h along the middle axis of 3-d grids, kw along the halved last axis) of the
   rank's half-spectrum position p */
static inline void NNSpectralDecode(const NNSpectralGeom *g, PetscInt p, PetscInt *k0, PetscInt *h, PetscInt *kw)
{
  if (!g->trans) {
    *kw = p % g->wc;
    *h  = (p / g->wc) % g->inner;
    *k0 = g->r0 + p / (g->wc * g->inner);
  } else if (g->nd == 2) { /* [kw rows][k0] */
    *kw = g->t0 + p / g->n[0];
    *h  = 0;
    *k0 = p % g->n[0];
  } else { /* [h rows][k0][kw] */
    *kw = p % g->wc;
    *k0 = (p / g->wc) % g->n[0];
    *h  = g->t0 + p / (g->wc * g->n[0]);
  }
}

/* the corner q and mode index of the frequency (k0, h, kw); PETSC_FALSE: not a kept mode */
static inline PetscBool NNSpectralKept(const NNSpectralGeom *g, PetscInt p, PetscInt *q, PetscInt *mode, PetscInt *kwp)
{
  PetscInt k0, h, kw, a, b = 0, hi0, hi1 = 0;

  NNSpectralDecode(g, p, &k0, &h, &kw);
  *kwp = kw;
  if (kw >= g->m[g->nd - 1]) return PETSC_FALSE;
  if (k0 < g->m[0]) a = k0, hi0 = 0;
  else if (k0 >= g->n[0] - g->m[0]) a = k0 - (g->n[0] - g->m[0]), hi0 = 1;
  else return PETSC_FALSE;
  if (g->nd == 3) {
    if (h < g->m[1]) b = h, hi1 = 0;
    else if (h >= g->n[1] - g->m[1]) b = h - (g->n[1] - g->m[1]), hi1 = 1;
    else return PETSC_FALSE;
    *mode = (a * g->m[1] + b) * g->m[2] + kw;
  } else *mode = a * g->m[1] + kw;
  *q = hi0 + 2 * hi1;
  return PETSC_TRUE;
}

/* Z = (1/N) X W on the kept modes of the rank's slab, zero elsewhere; X, Z complex (re, im pairs) half spectra */
PetscErrorCode NNSpectralModesForward(const NNSpectralGeom *g, const PetscScalar *W, const PetscScalar *X, PetscScalar *Z)
{
  PetscInt  npos = g->npos, q, mode, kw, wq = g->Cin * g->Cout * g->M * 2, nk = 0;
  PetscReal N = 1;

  PetscFunctionBegin;
  for (PetscInt a = 0; a < g->nd; a++) N *= g->n[a];
  PetscCall(PetscArrayzero(Z, 2 * npos * g->nb * g->Cout));
  for (PetscInt p = 0; p < npos; p++) {
    if (!NNSpectralKept(g, p, &q, &mode, &kw)) continue;
    nk++;
    for (PetscInt s = 0; s < g->ns; s++) {
      const PetscScalar *x = X + 2 * (p * g->nb + s) * g->Cin;
      PetscScalar       *z = Z + 2 * (p * g->nb + s) * g->Cout;
      for (PetscInt o = 0; o < g->Cout; o++) {
        PetscScalar zr = 0, zi = 0;
        for (PetscInt i = 0; i < g->Cin; i++) {
          const PetscScalar *w = W + q * wq + 2 * ((i * g->Cout + o) * g->M + mode);
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
PetscErrorCode NNSpectralModesBackward(const NNSpectralGeom *g, const PetscScalar *W, const PetscScalar *G, PetscScalar *X, PetscScalar *dW, PetscBool dx)
{
  PetscInt  npos = g->npos, q, mode, kw, wq = g->Cin * g->Cout * g->M * 2, Wlast = g->n[g->nd - 1], nk = 0;
  PetscReal N = 1;

  PetscFunctionBegin;
  for (PetscInt a = 0; a < g->nd; a++) N *= g->n[a];
  for (PetscInt p = 0; p < npos; p++) {
    PetscReal c;
    if (!NNSpectralKept(g, p, &q, &mode, &kw)) continue;
    c = (kw == 0 || (Wlast % 2 == 0 && kw == Wlast / 2)) ? 1.0 : 2.0;
    nk++;
    for (PetscInt s = 0; s < g->ns; s++) {
      const PetscScalar *x  = X + 2 * (p * g->nb + s) * g->Cin;
      const PetscScalar *gy = G + 2 * (p * g->nb + s) * g->Cout;
      for (PetscInt i = 0; i < g->Cin; i++)
        for (PetscInt o = 0; o < g->Cout; o++) {
          PetscScalar *w = dW + q * wq + 2 * ((i * g->Cout + o) * g->M + mode);
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
      PetscScalar       *x  = X + 2 * (p * g->nb + s) * g->Cin;
      const PetscScalar *gy = G + 2 * (p * g->nb + s) * g->Cout;
      for (PetscInt i = 0; i < g->Cin; i++) {
        PetscScalar xr = 0, xi = 0;
        for (PetscInt o = 0; o < g->Cout; o++) {
          const PetscScalar *w = W + q * wq + 2 * ((i * g->Cout + o) * g->M + mode);
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
