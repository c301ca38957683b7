/* Launchers of PetNN's own CUDA kernels (*.cu files), callable from C. No PETSc here: the kernels' files are compiled by
   nvcc without PETSc's headers; each launcher enqueues its kernel on the given stream and returns the launch's
   cudaError_t, which the C caller turns into a PETSc error (NNCallCUDA(), cudaimpl.h). Arrays hold doubles, or floats
   when single is nonzero. */
#pragma once
#include <stddef.h>
#include <cuda_runtime_api.h>

#if defined(__cplusplus)
extern "C" {
#endif

/* the pointwise activations with device passes (layers/activation/activation_kernels.cu) */
typedef enum {
  NN_CUDA_RELU,
  NN_CUDA_LEAKY_RELU,
  NN_CUDA_TANH,
  NN_CUDA_SIGMOID,
  NN_CUDA_GELU
} NNCUDAActivation;

/* y = f(x) on N entries; slope: the leaky ReLU's negative slope */
cudaError_t NNCUDAActivationForward(NNCUDAActivation, int single, double slope, size_t N, const void *x, void *y, cudaStream_t);
/* dx = f'(x) dy on N entries, f' from x and y */
cudaError_t NNCUDAActivationBackward(NNCUDAActivation, int single, double slope, size_t N, const void *x, const void *y, const void *dy, void *dx, cudaStream_t);
/* x[0..N) = value (src/sys/cuda/cudakernels.cu) */
cudaError_t NNCUDAFill(int single, size_t N, double value, void *x, cudaStream_t);

/* z[0..N) = x y entrywise (dropout's mask, src/sys/cuda/cudakernels.cu) */
cudaError_t NNCUDAMultiply(int single, size_t N, const void *x, const void *y, void *z, cudaStream_t);

/* between the sequential order [s][c][p] (PyTorch's NCHW: n samples of C channels of P pixels) and the spatial
   (DMDA, one rank) order [p][s][c] with nb >= n batch slots (layers/spatial/spatial_kernels.cu). tospatial: sp from
   seq, slots s >= n set to zero; else seq from sp (its first n slots) */
cudaError_t NNCUDASpatialPermute(int single, int tospatial, size_t P, size_t nb, size_t n, size_t C, void *seq, void *sp, cudaStream_t);
/* the same between all of seq (the grid N, x, y, z) and a rank's box [bs, bs + bm) of it in sp; seq from sp writes the
   box's entries of the first n samples only (the caller zeroes the rest) */
typedef struct {
  size_t N[3], bs[3], bm[3];
} NNCUDASpatialBox;
cudaError_t NNCUDASpatialPermuteBox(int single, int tospatial, const NNCUDASpatialBox *, size_t nb, size_t n, size_t C, void *seq, void *sp, cudaStream_t);

/* max or average pooling on the spatial layout (layers/pool/pool_kernels.cu): input grid N, of which the input array
   holds the box [gs, gs + gm), the output box [os, os + No), kernel k, stride s, padding p per axis (x, y, z), D = nb*C
   entries per pixel (one rank: gs, os 0, gm N, No the output grid). Max: padding is -inf, the first maximum in window
   order (z, y, x) wins, NaN propagates; average: divides by the full window (count_include_pad) */
typedef struct {
  int    max;
  int    N[3], No[3], k[3], s[3], p[3];
  int    gs[3], gm[3], os[3];
  size_t D;
} NNCUDAPoolGeom;
cudaError_t NNCUDAPoolForward(int single, const NNCUDAPoolGeom *, const void *x, void *y, cudaStream_t);
/* dx (written, every input entry) from dy; max pooling finds each window's maximum in x again */
cudaError_t NNCUDAPoolBackward(int single, const NNCUDAPoolGeom *, const void *x, const void *dy, void *dx, cudaStream_t);

/* dst[i ldd + j] = src[i lds + j] for i < rows, j < b: blocks of rows side by side (the graph layers' concat and
   split, src/sys/cuda/cudakernels.cu) */
cudaError_t NNCUDACopyBlocks(int single, size_t rows, size_t b, const void *src, size_t lds, void *dst, size_t ldd, cudaStream_t);
/* blocks of b entries by an index (the halo exchange's faces, src/layer/interface/spatialhalo_cuda.c): gather dst[i] =
   src[idx[i]] (zero where idx[i] < 0), scatter dst[idx[i]] = (add ? dst[idx[i]] : 0) + src[i] where idx[i] >= 0 (the
   idx[i] distinct), for i < n */
cudaError_t NNCUDAGatherBlocks(int single, size_t n, size_t b, const int *idx, const void *src, void *dst, cudaStream_t);
cudaError_t NNCUDAScatterBlocks(int single, int add, size_t n, size_t b, const int *idx, const void *src, void *dst, cudaStream_t);
/* x[0..N) *= alpha (src/sys/cuda/cudakernels.cu) */
cudaError_t NNCUDAScale(int single, size_t N, double alpha, void *x, cudaStream_t);

/* the losses with device evaluation (src/loss/interface/loss_kernels.cu) */
typedef enum {
  NN_CUDA_LOSS_NONE,
  NN_CUDA_LOSS_MSE,
  NN_CUDA_LOSS_L1,
  NN_CUDA_LOSS_HUBER, /* param: delta */
  NN_CUDA_LOSS_BCE_WITH_LOGITS,
  NN_CUDA_LOSS_CROSS_ENTROPY /* targets: one class index a sample */
} NNCUDALoss;
/* the doubles of work NNCUDALossEvaluate() needs; the mean loss is left in work[NNCUDALossWorkSize() - 1] */
size_t NNCUDALossWorkSize(void);
/* the mean loss of the first n samples of k outputs y[n][k] (double, or float when single) against the double targets
   t ([n][k], or [n] class indices), summed in double, and dy = dL/dy in y's precision (dy NULL: not needed) */
cudaError_t NNCUDALossEvaluate(NNCUDALoss, int single, double param, size_t n, size_t k, const void *y, const double *t, void *dy, double *work, cudaStream_t);

/* global average pooling (layers/pool/globalpool_kernels.cu): forward, the sums over the P pixels of D = nb*C entries
   of the rank's spatial layout divided by npix (the grid's pixels; 1: the sums) into the [s][C] output (entries
   j >= nC, the slots beyond the pass's samples, zero); backward, the output gradient divided by npix on every pixel */
cudaError_t NNCUDAGlobalAvgPool(int single, int forward, size_t P, size_t npix, size_t D, size_t nC, const void *in, void *out, cudaStream_t);

/* nearest-neighbour upsampling (layers/spatial/upsample_kernels.cu) of an input grid im (x, y, z) by s per axis, D
   entries per pixel: forward in = x, out = y; backward in = dy, out = dx */
typedef struct {
  int    im[3], s[3];
  size_t D;
} NNCUDAUpsampleGeom;
cudaError_t NNCUDAUpsampleNearest(int single, int forward, const NNCUDAUpsampleGeom *, const void *in, void *out, cudaStream_t);
/* bilinear / trilinear upsampling (same file) of an input grid im to the output grid om (x, y, z; z 1 in 2-d) with nc
   corners (4 in 2-d, 8 in 3-d), D entries per pixel, on the spatial layout of one rank. The per-axis tables share one
   index space in the index array idx and the weight array w (in the pass's precision). Forward (in = x, out = y):
   output q along axis a reads inputs idx[f[a] + 2q], idx[f[a] + 2q + 1] with weights w[f[a] + 2q], w[f[a] + 2q + 1].
   Backward (in = dy, out = dx), the transposed tables in CSR form: input p along axis a receives from the outputs
   idx[k] with weights w[k] for k in [idx[r[a] + p], idx[r[a] + p + 1]). */
typedef struct {
  int    im[3], om[3], nc, f[3], r[3];
  size_t D;
} NNCUDAUpsampleLinearGeom;
cudaError_t NNCUDAUpsampleLinear(int single, int forward, const NNCUDAUpsampleLinearGeom *, const int *idx, const void *w, const void *in, void *out, cudaStream_t);
/* the spectral_conv layers' truncated DFTs and mode products (layers/spectral/spectralconv_kernels.cu) on the spatial
   layout of one rank, [rows][L][K] real (L the last FFT axis, W; rows H or D x H; K = nb*C per pixel), and on kept
   spectra [kr][kw][slot][channel] of complex (re, im) pairs (kr: the corner rows, 2 m0 or 2 m0 x 2 m1; kw < m_last).
   tw: the axis' table cos(2 pi t/n) for t < n, then sin(2 pi t/n). Grid n and modes m slowest first (PyTorch order) */
typedef struct {
  int    nd, n[3], m[3];
  size_t nb, ns, Cin, Cout; /* batch slots, the pass's slots, channels */
} NNCUDASpectralGeom;
/* out[r][kw][k] = sum_l x[r][l - off][k] e^{-2 pi i kw l/L} for kw < mL over the rank's box l in [off, off + len) of
   the axis of L (R rows, K values per pixel; on one rank off 0, len L) */
cudaError_t NNCUDASpectralR2C(int single, size_t R, int L, int off, int len, int mL, size_t K, const void *tw, const void *x, void *out, cudaStream_t);
/* FFTW's c2r of the columns kw < mL: y[r][l - off][k] = (add ? y : 0) + sum_kw c_kw Re(in[r][kw][k] e^{2 pi i kw l/L}),
   c = 1 on the column 0 and the Nyquist column L/2, 2 on the others, for the slots k/C < n of K = nb*C (zero in the
   others), on the box l in [off, off + len) of the axis of L */
cudaError_t NNCUDASpectralC2R(int single, int add, size_t R, int L, int off, int len, int mL, size_t nb, size_t n, size_t C, const void *tw, const void *in, void *y, cudaStream_t);
/* complex partial DFT along the middle axis of [P][len][Q], the box [off, off + len) of an axis of n: forward to the
   corners [P][2m][Q] (e^{-i}, kept frequencies j < m and n - 2m + j; the box's part of the sum), inverse (e^{+i}) from
   the corners back to the box [P][len][Q] */
cudaError_t NNCUDASpectralDFT(int single, int inverse, size_t P, int n, int off, int len, int m, size_t Q, const void *tw, const void *in, void *out, cudaStream_t);
/* mode products with the weights W [corner][Cin][Cout][modes][2]: forward out = (1/N) in W (Cin -> Cout channels),
   adjoint out = (1/N) in conj(W) (Cout -> Cin); slots s >= ns are zero */
cudaError_t NNCUDASpectralModes(int single, int adjoint, const NNCUDASpectralGeom *, const void *W, const void *in, void *out, cudaStream_t);
/* dW += (c/N) sum_{s < ns} G conj(X) on the kept spectra X (Cin) and G (Cout), summed in double */
cudaError_t NNCUDASpectralWeightGradient(int single, const NNCUDASpectralGeom *, const void *X, const void *G, void *dW, cudaStream_t);
/* the normalization layers (layers/norm/norm_kernels.cu): statistics (mean, biased variance, 1/sqrt(var + eps)) of
   groups of entries, the normalization with them and its adjoint. The activation is sequential, [s][c][q] (n samples of
   C channels of npos positions), or spatial (the DMDA layout of one rank), [q][slot][c] with D = nb*C entries per pixel,
   of which slots s >= n are not counted and get zero output and input gradient. A group is a channel over the samples
   and positions (batch norm), a sample's group of cg consecutive channels over the positions (group norm) or a
   sample's position over the channels (layer norm). Sums are in double in both precisions; stat (device, double) holds
   mean, var and rstd of every group, [3][groups], work (device, double) NNCUDANormWorkSize() entries. */
typedef enum {
  NN_CUDA_NORM_CHANNEL,  /* groups c < C */
  NN_CUDA_NORM_GROUP,    /* groups s*(C/cg) + c/cg */
  NN_CUDA_NORM_POSITION  /* groups s*npos + q */
} NNCUDANormKind;
typedef struct {
  NNCUDANormKind kind;
  int            spatial;
  size_t         n, C, npos, D, cg;
  double         eps;
  double         mall; /* the values of a group over all ranks, when the activation is split over ranks (0: one rank) */
} NNCUDANormGeom;
/* the groups of the geometry, and the doubles work must hold for it */
size_t NNCUDANormGroups(const NNCUDANormGeom *);
size_t NNCUDANormWorkSize(const NNCUDANormGeom *);
/* stat of the groups of x (corrected two-pass: the mean, then the sums of x - mean and their squares) */
cudaError_t NNCUDANormStats(int single, const NNCUDANormGeom *, const void *x, double *stat, double *work, cudaStream_t);
/* y = (x - mean) rstd w[c] + b[c] (w, b NULL: 1, 0) on every entry, zero in slots s >= n */
cudaError_t NNCUDANormForward(int single, const NNCUDANormGeom *, const void *x, const double *stat, const void *w, const void *b, void *y, cudaStream_t);
/* the adjoint of NNCUDANormForward() with the statistics of the groups in stat: batchstats, the statistics are x's
   (dx = rstd (w dy - mean_group(w dy) - xhat mean_group(w dy xhat))), else fixed (dx = rstd w dy); dw (NULL: no
   parameters) gets the gradients of w and b ADDED, dw[c] += sum dy xhat, dw[C + c] += sum dy; dx may be NULL */
cudaError_t NNCUDANormBackward(int single, const NNCUDANormGeom *, int batchstats, const void *x, const void *dy, const double *stat, const void *w, double *work, void *dw, void *dx, cudaStream_t);
/* the passes on spatial activations split over ranks take their sums in steps, added over the ranks in between:
   NNCUDANormSums() writes a sum pair per bucket, sums[r] and sums[nb + r], of the rank's entries, over the statistic
   groups or (channels) over the channels: x, 0 (NN_CUDA_NORM_SUM_X); x - mean and its square (_CENTERED); w dy and
   w dy xhat (_GRAD, w NULL: 1). NNCUDANormAddParamSums() adds channel sums of _GRAD to the parameter gradients,
   dw[c] += sums[C + c], dw[C + c] += sums[c]; NNCUDANormBackwardFromSums() is dx with the group sums (batch norm: of
   dy, the other types: of w dy) and groups of mall values */
typedef enum {
  NN_CUDA_NORM_SUM_X,
  NN_CUDA_NORM_SUM_CENTERED,
  NN_CUDA_NORM_SUM_GRAD
} NNCUDANormSumOp;
cudaError_t NNCUDANormSums(int single, const NNCUDANormGeom *, int channels, NNCUDANormSumOp, const void *x, const void *dy, const double *stat, const void *w, double *work, double *sums, cudaStream_t);
cudaError_t NNCUDANormAddParamSums(int single, size_t C, const double *sums, void *dw, cudaStream_t);
cudaError_t NNCUDANormBackwardFromSums(int single, const NNCUDANormGeom *, int batchstats, const void *x, const void *dy, const double *stat, const double *sums, const void *w, void *dx, cudaStream_t);
/* im2col and col2im for the convolutions' GEMM passes on the spatial layout (layers/conv/conv_kernels.cu). The image:
   grid N, of which the array holds the box [gs, gs + gm) (one rank: gs 0, gm N; split over ranks: the ghosted box),
   nb batch slots of C channels per pixel; the column matrix: a row per (pixel of the box [os, os + No) of the column
   grid, slot), a column per (channel, tap), taps in PyTorch's (kz, ky, kx) order; tap t of column pixel q reads image
   pixel q*s - p + t*dil per axis (x, y, z), zero outside the grid, or periodic (stride 1): read in the box when it is
   there (a periodic halo), else wrapped. Slots r >= n are zero */
typedef struct {
  int    N[3], No[3], k[3], s[3], p[3], dil[3], periodic;
  int    gs[3], gm[3], os[3];
  size_t nb, n, C;
} NNCUDAConvGeom;
/* col (written, every entry) from the image x */
cudaError_t NNCUDAIm2col(int single, const NNCUDAConvGeom *, const void *x, void *col, cudaStream_t);
/* the image x (written, every entry): each entry the sum of the column entries that read it (the adjoint of im2col) */
cudaError_t NNCUDACol2im(int single, const NNCUDAConvGeom *, const void *col, void *x, cudaStream_t);
/* y[pixel][r][c] += b[c] on P pixels of nb slots of C channels, for the slots r < n */
cudaError_t NNCUDAConvBias(int single, size_t P, size_t nb, size_t n, size_t C, const void *b, void *y, cudaStream_t);

/* the dense layer's bias (src/sys/cuda/cudakernels.cu) with column-major m x n Y and dY: Y[i + m j] = b[i] (written, every
   entry); db[i] += sum_j dY[i + m j], summed in double by one thread a row in a fixed order (reruns are identical) */
cudaError_t NNCUDABiasBroadcast(int single, size_t m, size_t n, const void *b, void *y, cudaStream_t);
cudaError_t NNCUDABiasGradient(int single, size_t m, size_t n, const void *dy, void *db, cudaStream_t);

/* y[0..N) += alpha x[0..N) (the ODE blocks' stage sums, src/sys/cuda/cudakernels.cu) */
cudaError_t NNCUDAAxpy(int single, size_t N, double alpha, const void *x, void *y, cudaStream_t);

/* y[0..N) = (float)x[0..N) (the float working copy of the parameters, src/sys/cuda/cudakernels.cu) */
cudaError_t NNCUDADoubleToFloat(size_t N, const double *x, float *y, cudaStream_t);

/* the optimizers' steps (src/opt/impls/<type>/<type>_kernels.cu) on the double parameters x[0..n) with the gradient g
   in double or (single) float, writing the float working copy xf when it is not NULL; state arrays are double */
typedef struct {
  double b1, b2, eps, wd; /* betas, epsilon, weight decay (L2 when not decoupled) */
  double step, sbc2;      /* lr/(1 - b1^t), sqrt(1 - b2^t) */
  double shrink;          /* 1 - lr wd (AdamW) */
  int    decoupled;
} NNCUDAAdamCoefficients;
cudaError_t NNCUDAAdamStep(int single, size_t n, double *x, float *xf, const void *g, double *m, double *v, const NNCUDAAdamCoefficients *, cudaStream_t);
cudaError_t NNCUDASGDStep(int single, size_t n, double *x, float *xf, const void *g, double *b, double lr, double wd, double mu, int first, int nesterov, cudaStream_t);

#if defined(__cplusplus)
}
#endif
