/*
   The truncated DFTs and mode products of the spectral_conv layers' device passes (layers/spectral/spectralconv_cuda.c;
   launchers declared in include/petnn/private/cudakernels.h), on the spatial layout of the rank's box.

   The spectral path y = (1/N) C2R(M(R2C(x))) only ever reads or writes the kept modes (two corners along every FFT
   axis but the last, the columns [0, m_last) of the half spectrum along the last), so no FFT is needed: the
   transforms are partial DFTs, axis by axis, straight from the DMDA layout [rows][W][slot][channel] (rows: H, or D x H,
   with W the last FFT axis) to a kept spectrum [corner rows][kw][slot][channel] of complex (re, im) pairs, and back.
   Twiddles come from per-axis tables cos(2 pi t/n), sin(2 pi t/n), t < n (made on the host in double), indexed by
   (k t) mod n. The inverse along the last axis has FFTW's c2r semantics: y = sum_kw c_kw Re(C_kw e^{2 pi i kw l/W}),
   c = 1 on the column 0 and (even W) the Nyquist column W/2, 2 on the others; the adjoints are in spectralconv_fft.c's
   header comment (the weight gradient carries c/N, the input gradient is C2R of (1/N) G conj(W)).

   Split over ranks, each axis' transform runs over the rank's box [off, off + len) of the grid n (twiddles by the global
   index): the forward transforms give the box's part of the kept spectrum, which the ranks sum; the inverse ones
   evaluate the whole kept spectrum on the box's pixels only.

   Every output entry is owned by one thread, which loops over its sum in a fixed order: no atomics, no shared memory,
   bitwise-identical reruns. The weight gradient is summed over the batch in double in both precisions.
*/
#include <petnn/private/cudalaunch.h>

/* the twiddle index (k t) mod n */
__device__ inline size_t NNSpectralTw(size_t k, size_t t, size_t n)
{
  return (k * t) % n;
}

/* the frequency of kept index j < 2m along an axis of n: the corners [0, m) and [n - m, n) */
__device__ inline size_t NNSpectralFreq(int j, int m, int n)
{
  return (size_t)(j < m ? j : n - 2 * m + j);
}

/* out[r][kw][k] = sum_l x[r][l - off][k] e^{-2 pi i kw l/L} over the box l in [off, off + len), kw < mL: one thread per
   complex output */
template <typename T> __global__ void NNSpectralR2CKernel(size_t R, int L, int off, int len, int mL, size_t K, const T *tw, const T *x, T *out)
{
  size_t N = R * mL * K;

  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) {
    size_t   k = i % K, kw = (i / K) % mL, r = i / (K * mL);
    const T *xr = x + r * len * K + k;
    T        re = 0, im = 0;
    for (int l = 0; l < len; l++) {
      size_t t = NNSpectralTw(kw, (size_t)(l + off), (size_t)L);
      T      v = xr[(size_t)l * K];
      re += v * tw[t];
      im -= v * tw[L + t];
    }
    out[2 * i]     = re;
    out[2 * i + 1] = im;
  }
}

/* y[r][l - off][k] = (add ? y : 0) + sum_kw c_kw Re(in[r][kw][k] e^{2 pi i kw l/L}) on the box l in [off, off + len),
   for the slots k/C < n, 0 in the others */
template <typename T> __global__ void NNSpectralC2RKernel(int add, size_t R, int L, int off, int len, int mL, size_t K, size_t C, size_t n, const T *tw, const T *in, T *y)
{
  size_t N = R * len * K;

  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) {
    size_t   k = i % K, l = (i / K) % len + off, r = i / (K * len);
    const T *c = in + 2 * (r * mL * K + k);
    T        s = 0;
    if (k / C >= n) {
      y[i] = 0;
      continue;
    }
    for (int kw = 0; kw < mL; kw++) {
      size_t t = NNSpectralTw((size_t)kw, l, (size_t)L);
      T      w = (kw == 0 || 2 * kw == L) ? (T)1 : (T)2;
      s += w * (c[2 * kw * K] * tw[t] - c[2 * kw * K + 1] * tw[L + t]);
    }
    y[i] = add ? y[i] + s : s;
  }
}

/* forward: out[p][j][q] = sum_t in[p][t - off][q] e^{-2 pi i k_j t/n} over the box t in [off, off + len), j < 2m (the
   corners); one thread per output */
template <typename T> __global__ void NNSpectralDFTForwardKernel(size_t P, int n, int off, int len, int m, size_t Q, const T *tw, const T *in, T *out)
{
  size_t N = P * 2 * m * Q;

  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) {
    size_t   q = i % Q, j = (i / Q) % (2 * m), p = i / (Q * 2 * m), k = NNSpectralFreq((int)j, m, n);
    const T *a  = in + 2 * (p * len * Q + q);
    T        re = 0, im = 0;
    for (int t = 0; t < len; t++) {
      size_t u  = NNSpectralTw(k, (size_t)(t + off), (size_t)n);
      T      ar = a[2 * t * Q], ai = a[2 * t * Q + 1], c = tw[u], s = tw[n + u];
      re += ar * c + ai * s;
      im += ai * c - ar * s;
    }
    out[2 * i]     = re;
    out[2 * i + 1] = im;
  }
}

/* inverse: out[p][t - off][q] = sum_j in[p][j][q] e^{2 pi i k_j t/n} over the 2m kept frequencies, on the box t in
   [off, off + len) */
template <typename T> __global__ void NNSpectralDFTInverseKernel(size_t P, int n, int off, int len, int m, size_t Q, const T *tw, const T *in, T *out)
{
  size_t N = P * len * Q;

  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) {
    size_t   q = i % Q, t = (i / Q) % len + off, p = i / (Q * len);
    const T *a  = in + 2 * (p * 2 * m * Q + q);
    T        re = 0, im = 0;
    for (int j = 0; j < 2 * m; j++) {
      size_t u  = NNSpectralTw(NNSpectralFreq(j, m, n), t, (size_t)n);
      T      ar = a[2 * j * Q], ai = a[2 * j * Q + 1], c = tw[u], s = tw[n + u];
      re += ar * c - ai * s;
      im += ai * c + ar * s;
    }
    out[2 * i]     = re;
    out[2 * i + 1] = im;
  }
}

/* the corner q and the weights' mode index of the kept spectrum's row kr and column kw */
__device__ inline void NNSpectralCorner(const NNCUDASpectralGeom &g, size_t kr, size_t kw, size_t *q, size_t *mode)
{
  int    last = g.nd - 1;
  size_t j0 = g.nd == 2 ? kr : kr / (2 * g.m[1]), hi0 = j0 >= (size_t)g.m[0], a = j0 - hi0 * g.m[0];
  if (g.nd == 2) {
    *q    = hi0;
    *mode = a * g.m[last] + kw;
  } else {
    size_t j1 = kr % (2 * g.m[1]), hi1 = j1 >= (size_t)g.m[1], b = j1 - hi1 * g.m[1];
    *q    = hi0 + 2 * hi1;
    *mode = (a * g.m[1] + b) * g.m[last] + kw;
  }
}

/* the kept rows (corner combinations over the axes but the last), the modes of one corner, 1/N */
static inline size_t NNSpectralKeptRows(const NNCUDASpectralGeom *g)
{
  return g->nd == 2 ? 2 * (size_t)g->m[0] : 4 * (size_t)g->m[0] * g->m[1];
}
static inline size_t NNSpectralModesPerCorner(const NNCUDASpectralGeom *g)
{
  size_t M = 1;
  for (int a = 0; a < g->nd; a++) M *= (size_t)g->m[a];
  return M;
}
static inline double NNSpectralInvN(const NNCUDASpectralGeom *g)
{
  double N = 1;
  for (int a = 0; a < g->nd; a++) N *= g->n[a];
  return 1.0 / N;
}

/* forward: out[kr][kw][s][o] = (1/N) sum_i in[kr][kw][s][i] W_q[i][o][mode] (Cin -> Cout); adjoint: out[..][s][i] =
   (1/N) sum_o in[..][s][o] conj(W_q[i][o][mode]) (Cout -> Cin); slots s >= ns are zero */
template <typename T> __global__ void NNSpectralModesKernel(NNCUDASpectralGeom g, int adjoint, size_t KR, size_t M, double invN, const T *W, const T *in, T *out)
{
  size_t mL = (size_t)g.m[g.nd - 1], Ci = adjoint ? g.Cout : g.Cin, Co = adjoint ? g.Cin : g.Cout, N = KR * mL * g.nb * Co, wq = 2 * g.Cin * g.Cout * M;

  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) {
    size_t   o = i % Co, s = (i / Co) % g.nb, kw = (i / (Co * g.nb)) % mL, kr = i / (Co * g.nb * mL), q, mode;
    const T *a  = in + 2 * (((kr * mL + kw) * g.nb + s) * Ci);
    T        re = 0, im = 0;
    if (s >= g.ns) {
      out[2 * i] = out[2 * i + 1] = 0;
      continue;
    }
    NNSpectralCorner(g, kr, kw, &q, &mode);
    if (!adjoint)
      for (size_t c = 0; c < Ci; c++) {
        const T *w = W + q * wq + 2 * ((c * g.Cout + o) * M + mode);
        re += a[2 * c] * w[0] - a[2 * c + 1] * w[1];
        im += a[2 * c] * w[1] + a[2 * c + 1] * w[0];
      }
    else
      for (size_t c = 0; c < Ci; c++) {
        const T *w = W + q * wq + 2 * ((o * g.Cout + c) * M + mode);
        re += a[2 * c] * w[0] + a[2 * c + 1] * w[1];
        im += a[2 * c + 1] * w[0] - a[2 * c] * w[1];
      }
    out[2 * i]     = (T)(re * invN);
    out[2 * i + 1] = (T)(im * invN);
  }
}

/* dW_q[i][o][mode] += (c_kw/N) sum_{s < ns} G[kr][kw][s][o] conj(X[kr][kw][s][i]), summed in double; one thread per
   weight entry (its index is the (re, im) pair's) */
template <typename T> __global__ void NNSpectralWeightGradientKernel(NNCUDASpectralGeom g, size_t M, double invN, const T *X, const T *G, T *dW)
{
  size_t nq = g.nd == 2 ? 2 : 4, mL = (size_t)g.m[g.nd - 1], L = (size_t)g.n[g.nd - 1], N = nq * g.Cin * g.Cout * M;

  for (size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x; idx < N; idx += (size_t)gridDim.x * blockDim.x) {
    size_t mode = idx % M, o = (idx / M) % g.Cout, i = (idx / (M * g.Cout)) % g.Cin, q = idx / (M * g.Cout * g.Cin), kw = mode % mL, kr;
    size_t hi0 = q & 1, a = g.nd == 2 ? mode / mL : mode / (mL * g.m[1]), j0 = a + hi0 * g.m[0];
    double sr = 0, si = 0, c = (kw == 0 || 2 * kw == L) ? 1.0 : 2.0;
    if (g.nd == 2) kr = j0;
    else {
      size_t hi1 = q >> 1, b = (mode / mL) % g.m[1];
      kr = j0 * 2 * g.m[1] + b + hi1 * g.m[1];
    }
    for (size_t s = 0; s < g.ns; s++) {
      const T *x = X + 2 * (((kr * mL + kw) * g.nb + s) * g.Cin + i), *gy = G + 2 * (((kr * mL + kw) * g.nb + s) * g.Cout + o);
      sr += (double)gy[0] * x[0] + (double)gy[1] * x[1];
      si += (double)gy[1] * x[0] - (double)gy[0] * x[1];
    }
    dW[2 * idx] += (T)(c * invN * sr);
    dW[2 * idx + 1] += (T)(c * invN * si);
  }
}

extern "C" cudaError_t NNCUDASpectralR2C(int single, size_t R, int L, int off, int len, int mL, size_t K, const void *tw, const void *x, void *out, cudaStream_t s)
{
  size_t N = R * mL * K;
  if (!N) return cudaSuccess;
  if (single) return NNCUDALaunch(NNSpectralR2CKernel<float>, NNCUDABlocks(N), 256, s, R, L, off, len, mL, K, (const float *)tw, (const float *)x, (float *)out);
  return NNCUDALaunch(NNSpectralR2CKernel<double>, NNCUDABlocks(N), 256, s, R, L, off, len, mL, K, (const double *)tw, (const double *)x, (double *)out);
}

extern "C" cudaError_t NNCUDASpectralC2R(int single, int add, size_t R, int L, int off, int len, int mL, size_t nb, size_t n, size_t C, const void *tw, const void *in, void *y, cudaStream_t s)
{
  size_t K = nb * C, N = R * len * K;
  if (!N) return cudaSuccess;
  if (single) return NNCUDALaunch(NNSpectralC2RKernel<float>, NNCUDABlocks(N), 256, s, add, R, L, off, len, mL, K, C, n, (const float *)tw, (const float *)in, (float *)y);
  return NNCUDALaunch(NNSpectralC2RKernel<double>, NNCUDABlocks(N), 256, s, add, R, L, off, len, mL, K, C, n, (const double *)tw, (const double *)in, (double *)y);
}

extern "C" cudaError_t NNCUDASpectralDFT(int single, int inverse, size_t P, int n, int off, int len, int m, size_t Q, const void *tw, const void *in, void *out, cudaStream_t s)
{
  size_t N = P * Q * (inverse ? (size_t)len : 2 * (size_t)m);
  if (!N) return cudaSuccess;
  if (inverse) {
    if (single) return NNCUDALaunch(NNSpectralDFTInverseKernel<float>, NNCUDABlocks(N), 256, s, P, n, off, len, m, Q, (const float *)tw, (const float *)in, (float *)out);
    return NNCUDALaunch(NNSpectralDFTInverseKernel<double>, NNCUDABlocks(N), 256, s, P, n, off, len, m, Q, (const double *)tw, (const double *)in, (double *)out);
  }
  if (single) return NNCUDALaunch(NNSpectralDFTForwardKernel<float>, NNCUDABlocks(N), 256, s, P, n, off, len, m, Q, (const float *)tw, (const float *)in, (float *)out);
  return NNCUDALaunch(NNSpectralDFTForwardKernel<double>, NNCUDABlocks(N), 256, s, P, n, off, len, m, Q, (const double *)tw, (const double *)in, (double *)out);
}

extern "C" cudaError_t NNCUDASpectralModes(int single, int adjoint, const NNCUDASpectralGeom *g, const void *W, const void *in, void *out, cudaStream_t s)
{
  size_t KR = NNSpectralKeptRows(g), M = NNSpectralModesPerCorner(g), N = KR * g->m[g->nd - 1] * g->nb * (adjoint ? g->Cin : g->Cout);
  double invN = NNSpectralInvN(g);
  if (!N) return cudaSuccess;
  if (single) return NNCUDALaunch(NNSpectralModesKernel<float>, NNCUDABlocks(N), 256, s, *g, adjoint, KR, M, invN, (const float *)W, (const float *)in, (float *)out);
  return NNCUDALaunch(NNSpectralModesKernel<double>, NNCUDABlocks(N), 256, s, *g, adjoint, KR, M, invN, (const double *)W, (const double *)in, (double *)out);
}

extern "C" cudaError_t NNCUDASpectralWeightGradient(int single, const NNCUDASpectralGeom *g, const void *X, const void *G, void *dW, cudaStream_t s)
{
  size_t M = NNSpectralModesPerCorner(g), N = (g->nd == 2 ? 2 : 4) * g->Cin * g->Cout * M;
  double invN = NNSpectralInvN(g);
  if (!N) return cudaSuccess;
  if (single) return NNCUDALaunch(NNSpectralWeightGradientKernel<float>, NNCUDABlocks(N), 256, s, *g, M, invN, (const float *)X, (const float *)G, (float *)dW);
  return NNCUDALaunch(NNSpectralWeightGradientKernel<double>, NNCUDABlocks(N), 256, s, *g, M, invN, (const double *)X, (const double *)G, (double *)dW);
}
