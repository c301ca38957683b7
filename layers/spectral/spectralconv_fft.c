/*
   FFTW MPI plans and the mode products of the spectral_conv layers (layers/spectral/spectralconv.h).

   Four in-place plans over two slab buffers: r2c and c2r with howmany = nbatch*C_in on the input buffer
   and with howmany = nbatch*C_out on the output buffer (channels-last pixels are FFTW's interleaved
   howmany layout). The double plans (fftw_) are made at set-up; with -nn_precision single, float plans
   (FFTW's single-precision library, fftwf_, when PetNN found it: PETNN_HAVE_FFTWF) are made the same way
   on the first float pass. FFTW is unnormalized both ways; torch.fft.irfftn divides by N = prod(grid),
   which the forward mode product applies.

   The spectral path is y = (1/N) C2R(M(R2C(x))), linear in x. With the real inner product
   <a,b> = Re sum conj(a) b on half spectra:
     R2C^T = C2R diag(w),   C2R^T = diag(c) R2C,
   where along the last (halved) axis c = 1 on the column 0 and (even W) the Nyquist column, 2 on the
   interior columns, and w = 1/c (c2r counts an interior column twice, Re of column 0 and Nyquist once).
   So with G = R2C(dy) (raw), the input gradient is C2R((1/N) sum_o G conj(W)) (c w = 1) and the
   weight gradient is (c/N) sum_s G conj(X), X = R2C(x). The mode products are a precision template
   (spectralconv_modes_passes.h) compiled here in double and in float.
*/
#include "spectralconv.h"
#if defined(PETNN_HAVE_FFTW)
  #include <fftw3-mpi.h>

struct _n_NNSpectralFFT {
  NNSpectralGeom g;
  PetscBool      single; /* float plans (fftwf_) on float buffers */
  fftw_plan      plan[4];
  #if defined(PETNN_HAVE_FFTWF)
  fftwf_plan     splan[4];
  #endif
  void          *bin, *bout; /* padded slab buffers of nbatch*C_in and nbatch*C_out values (double or float) per position */
  PetscInt       flag;       /* 0 estimate, 1 measure */
  PetscMPIInt    size;
  PetscInt      *rows;       /* slab rows of every rank */
};

static PetscBool NNFFTWInitialized = PETSC_FALSE;

static PetscErrorCode NNSpectralFFTFinalizePackage(void)
{
  PetscFunctionBegin;
  fftw_mpi_cleanup();
  #if defined(PETNN_HAVE_FFTWF)
  fftwf_mpi_cleanup();
  #endif
  NNFFTWInitialized = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* fftw_mpi_init() (and the float library's fftwf_mpi_init()) once, their cleanup from PetscFinalize() */
PetscErrorCode NNSpectralFFTInitializePackage(void)
{
  PetscFunctionBegin;
  if (NNFFTWInitialized) PetscFunctionReturn(0);
  NNFFTWInitialized = PETSC_TRUE;
  fftw_mpi_init();
  #if defined(PETNN_HAVE_FFTWF)
  fftwf_mpi_init();
  #endif
  PetscCall(PetscRegisterFinalize(NNSpectralFFTFinalizePackage));
  PetscFunctionReturn(0);
}

/* f's buffers and its four in-place plans with FFTW's API of prefix X (fftw: double, fftwf: float) on real type R */
  #define NNSpectralFFTPlans(X, R, plans) \
    do { \
      R *bin = X##_alloc_real(2 * (size_t)PetscMax(ain, 1)), *bout = X##_alloc_real(2 * (size_t)PetscMax(aout, 1)); \
      f->bin  = bin; \
      f->bout = bout; \
      PetscCheck(bin && bout, PETSC_COMM_SELF, PETSC_ERR_MEM, "FFTW could not allocate the slab buffers (%td and %td complex values)", ain, aout); \
      PetscCall(PetscArrayzero(bin, 2 * PetscMax(ain, 1))); \
      PetscCall(PetscArrayzero(bout, 2 * PetscMax(aout, 1))); \
      plans[NN_FFT_R2C_IN]  = X##_mpi_plan_many_dft_r2c(g->nd, n, hin, B, B, bin, (X##_complex *)bin, comm, fr2c); \
      plans[NN_FFT_C2R_IN]  = X##_mpi_plan_many_dft_c2r(g->nd, n, hin, B, B, (X##_complex *)bin, bin, comm, fc2r); \
      plans[NN_FFT_R2C_OUT] = X##_mpi_plan_many_dft_r2c(g->nd, n, hout, B, B, bout, (X##_complex *)bout, comm, fr2c); \
      plans[NN_FFT_C2R_OUT] = X##_mpi_plan_many_dft_c2r(g->nd, n, hout, B, B, (X##_complex *)bout, bout, comm, fc2r); \
      for (PetscInt k = 0; k < 4; k++) PetscCheck(plans[k], comm, PETSC_ERR_LIB, "FFTW MPI could not plan the %s transforms of the %" PetscInt_FMT "-d grid", single ? "float" : "double", g->nd); \
    } while (0)

/* plans and buffers, in float with single (fftwf_: PETNN_HAVE_FFTWF); sets g->r0 and g->nr, the rank's rows of the
   first FFT axis (and with g->trans, g->t0 and g->nt, its rows of the second axis of the transposed half spectrum), and
   g->npos: the same in both precisions (FFTW's distribution does not depend on the precision) */
PetscErrorCode NNSpectralFFTCreate(MPI_Comm comm, NNSpectralGeom *g, PetscInt flag, PetscBool single, NNSpectralFFT *fft)
{
  NNSpectralFFT f;
  ptrdiff_t     n[3], nc[3], ln0, l0s, ln1 = 0, l1s = 0, ain, aout, hin = (ptrdiff_t)g->nb * g->Cin, hout = (ptrdiff_t)g->nb * g->Cout, B = FFTW_MPI_DEFAULT_BLOCK;
  unsigned      flags = flag ? FFTW_MEASURE : FFTW_ESTIMATE, fr2c = flags, fc2r = flags;
  PetscInt      nr[2];

  PetscFunctionBegin;
  #if !defined(PETNN_HAVE_FFTWF)
  PetscCheck(!single, comm, PETSC_ERR_SUP, "PetNN was built without FFTW's single-precision library (libfftw3f, libfftw3f_mpi): no float transforms");
  #endif
  PetscCall(NNSpectralFFTInitializePackage());
  PetscCall(PetscNew(&f));
  f->single = single;
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
  #if defined(PETNN_HAVE_FFTWF)
  if (single) NNSpectralFFTPlans(fftwf, float, f->splan);
  else
  #endif
    NNSpectralFFTPlans(fftw, double, f->plan);
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
  #if defined(PETNN_HAVE_FFTWF)
  if (f->single) {
    for (PetscInt k = 0; k < 4; k++)
      if (f->splan[k]) fftwf_destroy_plan(f->splan[k]);
    fftwf_free(f->bin);
    fftwf_free(f->bout);
  }
  #endif
  for (PetscInt k = 0; k < 4; k++)
    if (f->plan[k]) fftw_destroy_plan(f->plan[k]);
  if (!f->single) {
    fftw_free(f->bin);
    fftw_free(f->bout);
  }
  PetscCall(PetscFree(f->rows));
  PetscCall(PetscFree(*fft));
  PetscFunctionReturn(0);
}

/* the input (nbatch*C_in) and output (nbatch*C_out) slab buffers, real padded or complex half-spectrum views */
PetscErrorCode NNSpectralFFTGetBuffers(NNSpectralFFT f, PetscScalar **bin, PetscScalar **bout)
{
  PetscFunctionBegin;
  PetscCheck(!f->single, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Double buffers asked of float FFT plans");
  if (bin) *bin = (PetscScalar *)f->bin;
  if (bout) *bout = (PetscScalar *)f->bout;
  PetscFunctionReturn(0);
}

/* the same of float plans */
PetscErrorCode NNSpectralFFTGetBuffersSingle(NNSpectralFFT f, float **bin, float **bout)
{
  PetscFunctionBegin;
  PetscCheck(f->single, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Float buffers asked of double FFT plans");
  if (bin) *bin = (float *)f->bin;
  if (bout) *bout = (float *)f->bout;
  PetscFunctionReturn(0);
}

PetscErrorCode NNSpectralFFTExecute(NNSpectralFFT f, PetscInt which)
{
  const NNSpectralGeom *g = &f->g;
  PetscReal             N = 1;

  PetscFunctionBegin;
  for (PetscInt a = 0; a < g->nd; a++) N *= g->n[a];
  PetscCall(PetscLogEventBegin(NN_SpectralFFT, 0, 0, 0, 0));
  #if defined(PETNN_HAVE_FFTWF)
  if (f->single) fftwf_execute(f->splan[which]);
  else
  #endif
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

#include <petnn/private/nnrealdouble.h>
#include "spectralconv_modes_passes.h"
#if defined(PETNN_HAVE_FFTWF)
  #include <petnn/private/nnrealsingle.h>
  #include "spectralconv_modes_passes.h"
#endif
#include <petnn/private/nnrealundef.h>
