/*
   The normalization layers' CUDA kernels (-nn_device cuda; batch, group, instance and layer norm, the C side in
   layers/norm/norm_cuda.c). Every statistic is a sum over a group of entries (a box in (sample,
   channel, position) space) and every sum is in double, in both precisions, as the CPU passes compute them; the
   per-entry arithmetic is in double too and only the results are rounded to the pass's precision.

   Sums without races and without barriers (the CUDA emulation runs a kernel's threads one after the other, so no
   shared memory or __syncthreads()): a sum over the m entries of a bucket is two kernels, P threads per bucket
   writing one partial sum each over the entries j = p, p + P, ... (P grows with m up to 256), then one thread per
   bucket adding its P partials in order. The result does not depend on the launch: reruns are bitwise identical.

   Statistics: the corrected two-pass scheme of the CPU passes, the mean, then the sums of d = x - mean and d^2:
     mean += sum(d)/m,  var = max(sum(d^2)/m - (sum(d)/m)^2, 0),  rstd = 1/sqrt(var + eps).
   Backward, with xhat = (x - mean) rstd and the group sums S1 = sum w dy, S2 = sum w dy xhat:
     batch statistics  dx = rstd (w dy - S1/m - xhat S2/m)      fixed statistics  dx = rstd w dy
     parameters        dw[c] += sum_c dy xhat,  db[c] += sum_c dy  (over the channel's entries of all groups)
*/
#include <petnn/private/cudalaunch.h>

typedef NNCUDANormGeom NNNormG;

/* the entries of bucket r: samples [s0, s0 + ns), channels [c0, c0 + nc), positions [q0, q0 + nq) */
struct NNNormBox {
  size_t s0, ns, c0, nc, q0, nq;
};

__host__ __device__ inline size_t NNNormBuckets(const NNNormG &g, NNCUDANormKind k)
{
  switch (k) {
  case NN_CUDA_NORM_CHANNEL:
    return g.C;
  case NN_CUDA_NORM_GROUP:
    return g.n * (g.C / g.cg);
  default:
    return g.n * g.npos;
  }
}

__device__ inline NNNormBox NNNormBucket(const NNNormG &g, NNCUDANormKind k, size_t r)
{
  NNNormBox b;
  switch (k) {
  case NN_CUDA_NORM_CHANNEL:
    b.s0 = 0, b.ns = g.n, b.c0 = r, b.nc = 1, b.q0 = 0, b.nq = g.npos;
    break;
  case NN_CUDA_NORM_GROUP: {
    size_t G = g.C / g.cg;
    b.s0 = r / G, b.ns = 1, b.c0 = (r % G) * g.cg, b.nc = g.cg, b.q0 = 0, b.nq = g.npos;
  } break;
  default:
    b.s0 = r / g.npos, b.ns = 1, b.c0 = 0, b.nc = g.C, b.q0 = r % g.npos, b.nq = 1;
  }
  return b;
}

/* the statistic group of entry (s, c, q) */
__device__ inline size_t NNNormGroupOf(const NNNormG &g, size_t s, size_t c, size_t q)
{
  switch (g.kind) {
  case NN_CUDA_NORM_CHANNEL:
    return c;
  case NN_CUDA_NORM_GROUP:
    return s * (g.C / g.cg) + c / g.cg;
  default:
    return s * g.npos + q;
  }
}

__device__ inline size_t NNNormAddress(const NNNormG &g, size_t s, size_t c, size_t q)
{
  return g.spatial ? q * g.D + s * g.C + c : (s * g.C + c) * g.npos + q;
}

/* entry j of box b, in memory order: the contiguous index innermost */
__device__ inline void NNNormBoxEntry(const NNNormG &g, const NNNormBox &b, size_t j, size_t *s, size_t *c, size_t *q)
{
  if (g.spatial) {
    *c = b.c0 + j % b.nc;
    *s = b.s0 + (j / b.nc) % b.ns;
    *q = b.q0 + j / (b.nc * b.ns);
  } else {
    *q = b.q0 + j % b.nq;
    *c = b.c0 + (j / b.nq) % b.nc;
    *s = b.s0 + j / (b.nq * b.nc);
  }
}

/* partial sums per bucket thread, and the threads per bucket */
static inline size_t NNNormParts(size_t m)
{
  return m < 128 ? 1 : (m / 64 < 256 ? m / 64 : 256);
}

__host__ __device__ inline size_t NNNormBucketSize(const NNNormG &g, NNCUDANormKind k)
{
  switch (k) {
  case NN_CUDA_NORM_CHANNEL:
    return g.n * g.npos;
  case NN_CUDA_NORM_GROUP:
    return g.cg * g.npos;
  default:
    return g.C;
  }
}

typedef enum {
  NN_NORM_SUM,      /* x */
  NN_NORM_CENTERED, /* d = x - mean, d^2 */
  NN_NORM_GRAD      /* w dy, w dy xhat (w NULL: 1) */
} NNNormOp;

template <typename T>
__global__ void NNNormPartialKernel(NNNormG g, NNCUDANormKind bk, NNNormOp op, size_t P, const T *x, const T *dy, const double *stat, const T *w, double *part)
{
  const size_t  N = NNNormBuckets(g, bk) * P, G = NNNormBuckets(g, g.kind);
  const double *mean = stat, *rstd = stat + 2 * G;
  for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < N; t += (size_t)gridDim.x * blockDim.x) {
    const NNNormBox b  = NNNormBucket(g, bk, t / P);
    const size_t    m  = b.ns * b.nc * b.nq;
    double          a1 = 0, a2 = 0;
    for (size_t j = t % P; j < m; j += P) {
      size_t s, c, q, gi;
      NNNormBoxEntry(g, b, j, &s, &c, &q);
      const size_t e  = NNNormAddress(g, s, c, q);
      const double xv = (double)x[e];
      gi              = NNNormGroupOf(g, s, c, q);
      if (op == NN_NORM_SUM)
        a1 += xv;
      else if (op == NN_NORM_CENTERED) {
        const double d = xv - mean[gi];
        a1 += d;
        a2 += d * d;
      } else {
        const double gv = w ? (double)w[c] * (double)dy[e] : (double)dy[e];
        a1 += gv;
        a2 += gv * ((xv - mean[gi]) * rstd[gi]);
      }
    }
    part[2 * t]     = a1;
    part[2 * t + 1] = a2;
  }
}

typedef enum {
  NN_NORM_FINISH_MEAN, /* mean = s1/m */
  NN_NORM_FINISH_VAR,  /* mean += s1/m, var, rstd */
  NN_NORM_FINISH_SUMS  /* sums[r] = s1, sums[nb + r] = s2; dw (not NULL): dw[r] += s2, dw[C + r] += s1 */
} NNNormFinish;

template <typename T>
__global__ void NNNormFinishKernel(NNNormG g, NNCUDANormKind bk, NNNormFinish f, size_t P, size_t m, const double *part, double *stat, double *sums, T *dw)
{
  const size_t nb = NNNormBuckets(g, bk);
  for (size_t r = blockIdx.x * (size_t)blockDim.x + threadIdx.x; r < nb; r += (size_t)gridDim.x * blockDim.x) {
    double s1 = 0, s2 = 0;
    for (size_t p = 0; p < P; p++) {
      s1 += part[2 * (r * P + p)];
      s2 += part[2 * (r * P + p) + 1];
    }
    if (f == NN_NORM_FINISH_MEAN)
      stat[r] = s1 / (double)m;
    else if (f == NN_NORM_FINISH_VAR) {
      const double d = s1 / (double)m, v = s2 / (double)m - d * d, var = v > 0 ? v : 0.0;
      stat[r] += d;
      stat[nb + r]     = var;
      stat[2 * nb + r] = 1.0 / sqrt(var + g.eps);
    } else {
      sums[r]      = s1;
      sums[nb + r] = s2;
      if (dw) {
        dw[r]       = (T)((double)dw[r] + s2);
        dw[g.C + r] = (T)((double)dw[g.C + r] + s1);
      }
    }
  }
}

/* one sum over the buckets of kind bk: the partials, then their sums */
template <typename T>
static cudaError_t NNNormReduce(const NNNormG &g, NNCUDANormKind bk, NNNormOp op, NNNormFinish f, const T *x, const T *dy, double *stat, const T *w, double *part, double *sums, T *dw, cudaStream_t st)
{
  const size_t nb = NNNormBuckets(g, bk), m = NNNormBucketSize(g, bk), P = NNNormParts(m);
  cudaError_t  err;
  if (!nb) return cudaSuccess;
  err = NNCUDALaunch(NNNormPartialKernel<T>, NNCUDABlocks(nb * P), 256, st, g, bk, op, P, x, dy, (const double *)stat, w, part);
  if (err != cudaSuccess) return err;
  return NNCUDALaunch(NNNormFinishKernel<T>, NNCUDABlocks(nb), 256, st, g, bk, f, P, m, (const double *)part, stat, sums, dw);
}

/* the entries of the activation the passes write: n samples, or every slot of every pixel (spatial) */
__host__ __device__ inline size_t NNNormEntries(const NNNormG &g)
{
  return g.spatial ? g.npos * g.D : g.n * g.C * g.npos;
}

/* the channel and the statistic group of entry e; false for a slot s >= n */
__device__ inline bool NNNormEntry(const NNNormG &g, size_t e, size_t *c, size_t *gi)
{
  size_t s, q;
  if (g.spatial) {
    const size_t i = e % g.D;
    q              = e / g.D;
    s              = i / g.C;
    *c             = i % g.C;
    if (s >= g.n) return false;
  } else {
    q  = e % g.npos;
    *c = (e / g.npos) % g.C;
    s  = e / (g.npos * g.C);
  }
  *gi = NNNormGroupOf(g, s, *c, q);
  return true;
}

template <typename T>
__global__ void NNNormForwardKernel(NNNormG g, const T *x, const double *stat, const T *w, const T *b, T *y)
{
  const size_t  N = NNNormEntries(g), G = NNNormBuckets(g, g.kind);
  const double *mean = stat, *rstd = stat + 2 * G;
  for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < N; e += (size_t)gridDim.x * blockDim.x) {
    size_t c, gi;
    double v = 0;
    if (NNNormEntry(g, e, &c, &gi)) {
      v = ((double)x[e] - mean[gi]) * rstd[gi];
      if (w) v = v * (double)w[c] + (double)b[c];
    }
    y[e] = (T)v;
  }
}

/* weighted: the group sums S1, S2 hold w (the CPU's group norm and layer norm); else they are sums of dy and dy xhat
   over a group of one channel c (batch norm) and are multiplied by w[c] here */
template <typename T>
__global__ void NNNormBackwardKernel(NNNormG g, int batchstats, int weighted, const T *x, const T *dy, const double *stat, const double *sums, const T *w, T *dx)
{
  const size_t  N = NNNormEntries(g), G = NNNormBuckets(g, g.kind);
  const double  m    = g.mall > 0 ? g.mall : (double)NNNormBucketSize(g, g.kind);
  const double *mean = stat, *rstd = stat + 2 * G, *S1 = sums, *S2 = sums + G;
  for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < N; e += (size_t)gridDim.x * blockDim.x) {
    size_t c, gi;
    double v = 0;
    if (NNNormEntry(g, e, &c, &gi)) {
      const double wc = w ? (double)w[c] : 1.0, f = weighted ? 1.0 : wc;
      v = wc * (double)dy[e];
      if (batchstats) v = v - f * S1[gi] / m - ((double)x[e] - mean[gi]) * rstd[gi] * (f * S2[gi] / m);
      v *= rstd[gi];
    }
    dx[e] = (T)v;
  }
}

extern "C" size_t NNCUDANormGroups(const NNCUDANormGeom *g)
{
  return NNNormBuckets(*g, g->kind);
}

extern "C" size_t NNCUDANormWorkSize(const NNCUDANormGeom *g)
{
  const size_t nc = g->C * NNNormParts(NNNormBucketSize(*g, NN_CUDA_NORM_CHANNEL));
  const size_t ng = NNNormBuckets(*g, g->kind) * NNNormParts(NNNormBucketSize(*g, g->kind));
  return 2 * (nc > ng ? nc : ng) + 2 * NNNormBuckets(*g, g->kind) + 2 * g->C;
}

template <typename T>
static cudaError_t NNNormStats(const NNNormG &g, const T *x, double *stat, double *work, cudaStream_t st)
{
  cudaError_t err = NNNormReduce<T>(g, g.kind, NN_NORM_SUM, NN_NORM_FINISH_MEAN, x, (const T *)NULL, stat, (const T *)NULL, work, (double *)NULL, (T *)NULL, st);
  if (err != cudaSuccess) return err;
  return NNNormReduce<T>(g, g.kind, NN_NORM_CENTERED, NN_NORM_FINISH_VAR, x, (const T *)NULL, stat, (const T *)NULL, work, (double *)NULL, (T *)NULL, st);
}

extern "C" cudaError_t NNCUDANormStats(int single, const NNCUDANormGeom *g, const void *x, double *stat, double *work, cudaStream_t st)
{
  if (single) return NNNormStats<float>(*g, (const float *)x, stat, work, st);
  return NNNormStats<double>(*g, (const double *)x, stat, work, st);
}

extern "C" cudaError_t NNCUDANormForward(int single, const NNCUDANormGeom *g, const void *x, const double *stat, const void *w, const void *b, void *y, cudaStream_t st)
{
  const size_t N = g->spatial ? g->npos * g->D : g->n * g->C * g->npos;
  if (!N) return cudaSuccess;
  if (single) return NNCUDALaunch(NNNormForwardKernel<float>, NNCUDABlocks(N), 256, st, *g, (const float *)x, stat, (const float *)w, (const float *)b, (float *)y);
  return NNCUDALaunch(NNNormForwardKernel<double>, NNCUDABlocks(N), 256, st, *g, (const double *)x, stat, (const double *)w, (const double *)b, (double *)y);
}

/* the parameter sums over the channels, the group sums for dx (one sum serves both when the groups are the channels),
   then dx */
template <typename T>
static cudaError_t NNNormBackward(const NNNormG &g, int batchstats, const T *x, const T *dy, const double *stat, const T *w, double *work, T *dw, T *dx, cudaStream_t st)
{
  const size_t G = NNNormBuckets(g, g.kind), N = g.spatial ? g.npos * g.D : g.n * g.C * g.npos;
  double      *gsums = work + NNCUDANormWorkSize(&g) - 2 * G - 2 * g.C, *csums = gsums + 2 * G;
  const int    weighted = g.kind != NN_CUDA_NORM_CHANNEL;
  cudaError_t  err      = cudaSuccess;
  double      *st_      = (double *)stat; /* read only: the finish of NN_NORM_FINISH_SUMS writes sums, not stat */

  if (dw) err = NNNormReduce<T>(g, NN_CUDA_NORM_CHANNEL, NN_NORM_GRAD, NN_NORM_FINISH_SUMS, x, dy, st_, (const T *)NULL, work, weighted ? csums : gsums, dw, st);
  if (err != cudaSuccess || !dx) return err;
  if (batchstats && (weighted || !dw)) err = NNNormReduce<T>(g, g.kind, NN_NORM_GRAD, NN_NORM_FINISH_SUMS, x, dy, st_, weighted ? w : (const T *)NULL, work, gsums, (T *)NULL, st);
  if (err != cudaSuccess || !N) return err;
  return NNCUDALaunch(NNNormBackwardKernel<T>, NNCUDABlocks(N), 256, st, g, batchstats, weighted, x, dy, stat, (const double *)gsums, w, dx);
}

extern "C" cudaError_t NNCUDANormBackward(int single, const NNCUDANormGeom *g, int batchstats, const void *x, const void *dy, const double *stat, const void *w, double *work, void *dw, void *dx, cudaStream_t st)
{
  if (single) return NNNormBackward<float>(*g, batchstats, (const float *)x, (const float *)dy, stat, (const float *)w, work, (float *)dw, (float *)dx, st);
  return NNNormBackward<double>(*g, batchstats, (const double *)x, (const double *)dy, stat, (const double *)w, work, (double *)dw, (double *)dx, st);
}

/* the parameter gradients from the channel sums (added over the ranks): dw[c] += sums[C + c], dw[C + c] += sums[c] */
template <typename T>
__global__ void NNNormAddSumsKernel(size_t C, const double *sums, T *dw)
{
  for (size_t c = blockIdx.x * (size_t)blockDim.x + threadIdx.x; c < C; c += (size_t)gridDim.x * blockDim.x) {
    dw[c]     = (T)((double)dw[c] + sums[C + c]);
    dw[C + c] = (T)((double)dw[C + c] + sums[c]);
  }
}

extern "C" cudaError_t NNCUDANormSums(int single, const NNCUDANormGeom *g, int channels, NNCUDANormSumOp op, const void *x, const void *dy, const double *stat, const void *w, double *work, double *sums, cudaStream_t st)
{
  const NNCUDANormKind bk = channels ? NN_CUDA_NORM_CHANNEL : g->kind;
  const NNNormOp       o  = op == NN_CUDA_NORM_SUM_X ? NN_NORM_SUM : (op == NN_CUDA_NORM_SUM_CENTERED ? NN_NORM_CENTERED : NN_NORM_GRAD);
  double              *s_ = (double *)stat; /* read only: NN_NORM_FINISH_SUMS writes sums */
  if (single) return NNNormReduce<float>(*g, bk, o, NN_NORM_FINISH_SUMS, (const float *)x, (const float *)dy, s_, (const float *)w, work, sums, (float *)NULL, st);
  return NNNormReduce<double>(*g, bk, o, NN_NORM_FINISH_SUMS, (const double *)x, (const double *)dy, s_, (const double *)w, work, sums, (double *)NULL, st);
}

extern "C" cudaError_t NNCUDANormAddParamSums(int single, size_t C, const double *sums, void *dw, cudaStream_t st)
{
  if (!C) return cudaSuccess;
  if (single) return NNCUDALaunch(NNNormAddSumsKernel<float>, NNCUDABlocks(C), 256, st, C, sums, (float *)dw);
  return NNCUDALaunch(NNNormAddSumsKernel<double>, NNCUDABlocks(C), 256, st, C, sums, (double *)dw);
}

extern "C" cudaError_t NNCUDANormBackwardFromSums(int single, const NNCUDANormGeom *g, int batchstats, const void *x, const void *dy, const double *stat, const double *sums, const void *w, void *dx, cudaStream_t st)
{
  const size_t N        = NNNormEntries(*g);
  const int    weighted = g->kind != NN_CUDA_NORM_CHANNEL;
  if (!N) return cudaSuccess;
  if (single) return NNCUDALaunch(NNNormBackwardKernel<float>, NNCUDABlocks(N), 256, st, *g, batchstats, weighted, (const float *)x, (const float *)dy, stat, sums, (const float *)w, (float *)dx);
  return NNCUDALaunch(NNNormBackwardKernel<double>, NNCUDABlocks(N), 256, st, *g, batchstats, weighted, (const double *)x, (const double *)dy, stat, sums, (const double *)w, (double *)dx);
}
