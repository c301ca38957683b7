/*
   Private to the convolution layers: layers/conv/conv.c (the layer types), layers/conv/convopts.c (options,
   setters, getters, view), layers/conv/conv_transpose.c and conv_transpose_opts.c (the transposed convolutions), layers/conv/conv_run.c (threads), layers/conv/conv_im2col.c and
   layers/conv/conv_winograd.c (the two algorithms); on the device (-nn_device cuda) layers/conv/conv_device_cuda.c,
   conv_cuda.c (cuDNN) and conv_gemm_cuda.c (im2col kernels and cuBLAS GEMMs).
*/
#pragma once

#include <petnn/private/nnimpl.h>

#define NN_CONV_MAX_THREADS 64

typedef enum {
  NN_CONV_IM2COL,  /* im2col + GEMM of depth ntap*Cg on tiles of output pixels */
  NN_CONV_WINOGRAD, /* Winograd minimal filtering F(m, r) per axis: GEMMs of depth Cg per transformed position */
  NN_CONV_DIRECT    /* direct loops with the output channels in vector registers (single precision, conv_direct.c) */
} NNConvAlgorithm;

/* Winograd F(m,r) along each axis (x, y, z): output tiles of m, input tiles of n = m + r - 1 */
typedef struct {
  PetscInt     m[3], n[3], r[3];
  PetscInt     mt, nt, npos;         /* m_x m_y m_z, r_x r_y r_z, n_x n_y n_z */
  PetscInt     tc[3], ntiles;        /* tiles along each axis of the owned outputs, and their product */
  PetscScalar *AT[3], *A[3];         /* output transform m x n and its transpose n x m (row-major) */
  PetscScalar *G[3], *GT[3];         /* weight transform n x r and its transpose r x n */
  PetscScalar *BT[3], *B[3];         /* input transform n x n and its transpose */
  PetscInt     tiles;                /* tiles per block (of tiles x slots rows) */
  PetscInt     chunk;                /* entries of a pixel vector transformed at a time */
} NNConvWinograd;

/* geometry of one rank's part of a convolution, axes in x, y, z order (2-d: z has extent 1) */
typedef struct {
  PetscInt        os[3], om[3];             /* owned output corner and extent */
  PetscInt        gs[3], gm[3];             /* ghost corner and extent of the halo (local) input array */
  PetscInt        N[3];                     /* input grid */
  PetscInt        k[3], s[3], p[3], dil[3]; /* kernel, stride, padding, dilation */
  PetscBool       periodic;                 /* taps outside the grid read the periodic halo instead of zeros */
  PetscBool       transposed;               /* conv_transpose: tap t of output o reads input (o + p - t*dil)/s where that divides */
  PetscInt        nb;                       /* batch capacity: a pixel holds nb*Cin (input) or nb*Cout (output) values */
  PetscInt        ns;                       /* batch slots processed (the n of the pass) */
  PetscInt        Cin, Cout, G, Cg, Og;     /* channels, groups, channels per group */
  PetscInt        ntap, K;                  /* taps of the kernel, im2col GEMM depth ntap*Cg */
  PetscBool       bias;
  PetscInt        Ka;                       /* K + 1 with a bias: a column of ones in A carries it (a row of Wp) */
  PetscInt        npix;                     /* owned output pixels om[0]*om[1]*om[2] */
  PetscInt        rows;                     /* target rows (pixels or tiles times slots) of a GEMM block */
  NNConvAlgorithm alg;
  NNConvWinograd  w;                        /* alg == NN_CONV_WINOGRAD */
} NNConvGeom;

/* what one pass computes, in double (NNConvPass) or, for -nn_precision single, in float (NNConvPassSingle) */
#define NN_CONV_PASS_STRUCT(real) \
  struct { \
    const real *x;  /* ghosted input (forward and backward) */ \
    real       *y;  /* forward output (holds the bias or zeros on entry) */ \
    const real *dy; /* output gradient */ \
    real       *dx; /* ghosted input gradient, added into (NULL: not wanted) */ \
    const real *Wp; /* packed weights: group g is a Ka x Og row-major block, rows (tap, channel), then the bias */ \
    const real *U;  /* Winograd: transformed weights [pos][g][Cg][Og]; direct: per-tap transposed weights [tap][Cout][Cin] */ \
    real       *dW; /* weight (and bias) gradient accumulator, added into (NULL: not wanted): Wp's layout, or U's (Winograd) */ \
    real       *db; /* Winograd: bias gradient, added into (NULL: not wanted) */ \
  }
typedef NN_CONV_PASS_STRUCT(PetscScalar) NNConvPass;
typedef NN_CONV_PASS_STRUCT(float) NNConvPassSingle;

/* one thread's share of a pass */
#define NN_CONV_TASK_STRUCT(real, passtype) \
  struct { \
    const NNConvGeom *g; \
    const passtype   *pass; \
    PetscInt          q0, q1;  /* output pixels (im2col) or tiles (Winograd) */ \
    PetscInt          s0, s1;  /* batch slots */ \
    real             *work;    /* the thread's workspace */ \
    PetscInt         *iwork; \
    real             *dW, *db; /* the thread's gradient accumulators (added into) */ \
    PetscLogDouble    flops; \
  }
typedef NN_CONV_TASK_STRUCT(PetscScalar, NNConvPass) NNConvTask;
typedef NN_CONV_TASK_STRUCT(float, NNConvPassSingle) NNConvTaskSingle;

/* packing for the im2col GEMMs, for either precision: Wp (group blocks of Ka x Og) from the PyTorch weight W [Cout][Cg][ntap]
   and bias b, Wp[grp][(t,c)][o] = W[grp*Og+o][c][t], then the row of biases; and the gradient back (dWp to dW, db; with
   unpackbias false the bias row is not read: Winograd sums its bias gradient elsewhere) */
#define NNConvPackWeights(g, W, b, Wp) \
  do { \
    for (PetscInt grp = 0; grp < (g)->G; grp++) \
      for (PetscInt o = 0; o < (g)->Og; o++) { \
        for (PetscInt c = 0; c < (g)->Cg; c++) \
          for (PetscInt t = 0; t < (g)->ntap; t++) (Wp)[(grp * (g)->Ka + t * (g)->Cg + c) * (g)->Og + o] = (W)[((grp * (g)->Og + o) * (g)->Cg + c) * (g)->ntap + t]; \
        if ((g)->bias) (Wp)[(grp * (g)->Ka + (g)->K) * (g)->Og + o] = (b)[grp * (g)->Og + o]; \
      } \
  } while (0)
#define NNConvUnpackGradient(g, dWp, dW, db, unpackbias) \
  do { \
    for (PetscInt grp = 0; grp < (g)->G; grp++) \
      for (PetscInt o = 0; o < (g)->Og; o++) { \
        for (PetscInt c = 0; c < (g)->Cg; c++) \
          for (PetscInt t = 0; t < (g)->ntap; t++) (dW)[((grp * (g)->Og + o) * (g)->Cg + c) * (g)->ntap + t] = (dWp)[(grp * (g)->Ka + t * (g)->Cg + c) * (g)->Og + o]; \
        if ((g)->bias && (unpackbias)) (db)[grp * (g)->Og + o] = (dWp)[(grp * (g)->Ka + (g)->K) * (g)->Og + o]; \
      } \
  } while (0)

/* the transposed convolutions' packing, for either precision: Wp[grp][(t,c)][o] = W[grp*Cg+c][o][t] from the PyTorch
   weight W [Cin][Og][ntap] and bias b, then the row of biases; and the gradient back */
#define NNConvTransposePackWeights(g, W, b, Wp) \
  do { \
    for (PetscInt grp = 0; grp < (g)->G; grp++) \
      for (PetscInt o = 0; o < (g)->Og; o++) { \
        for (PetscInt c = 0; c < (g)->Cg; c++) \
          for (PetscInt t = 0; t < (g)->ntap; t++) (Wp)[(grp * (g)->Ka + t * (g)->Cg + c) * (g)->Og + o] = (W)[((grp * (g)->Cg + c) * (g)->Og + o) * (g)->ntap + t]; \
        if ((g)->bias) (Wp)[(grp * (g)->Ka + (g)->K) * (g)->Og + o] = (b)[grp * (g)->Og + o]; \
      } \
  } while (0)
#define NNConvTransposeUnpackGradient(g, dWp, dW, db) \
  do { \
    for (PetscInt grp = 0; grp < (g)->G; grp++) \
      for (PetscInt o = 0; o < (g)->Og; o++) { \
        for (PetscInt c = 0; c < (g)->Cg; c++) \
          for (PetscInt t = 0; t < (g)->ntap; t++) (dW)[((grp * (g)->Cg + c) * (g)->Og + o) * (g)->ntap + t] = (dWp)[(grp * (g)->Ka + t * (g)->Cg + c) * (g)->Og + o]; \
        if ((g)->bias) (db)[grp * (g)->Og + o] = (dWp)[(grp * (g)->Ka + (g)->K) * (g)->Og + o]; \
      } \
  } while (0)

/* conv_run.c */
PETSC_INTERN PetscErrorCode NNConvWorkspaceSize(const NNConvGeom *, PetscInt, PetscInt *, PetscInt *);
PETSC_INTERN PetscErrorCode NNConvRun(const NNConvGeom *, const NNConvPass *, PetscInt, PetscScalar *, PetscInt *, PetscLogDouble *);

PETSC_INTERN PetscErrorCode NNConvRunSingle(const NNConvGeom *, const NNConvPassSingle *, PetscInt, float *, PetscInt *, PetscLogDouble *);

/* conv_im2col.c */
PETSC_INTERN void     NNConvTapOffsets(const NNConvGeom *, PetscInt, PetscInt *);
PETSC_INTERN void     NNConvIm2colWorkSize(const NNConvGeom *, PetscInt *, PetscInt *);
PETSC_INTERN PetscInt NNConvIm2colDefaultRows(PetscInt);
PETSC_INTERN void     NNConvIm2colForward(NNConvTask *);
PETSC_INTERN void     NNConvIm2colBackward(NNConvTask *);
PETSC_INTERN void     NNConvIm2colForwardSingle(NNConvTaskSingle *);
PETSC_INTERN void     NNConvIm2colBackwardSingle(NNConvTaskSingle *);

/* conv_single.c: the conv2d/conv3d passes in single precision (-nn_precision single) */
PETSC_INTERN PetscErrorCode NNLayerForwardSingle_Conv(NNLayer, PetscInt, const float *, float *);
PETSC_INTERN PetscErrorCode NNLayerBackwardSingle_Conv(NNLayer, PetscInt, const float *, const float *, const float *, float *);
PETSC_INTERN PetscErrorCode NNConvSingleReset(NNLayer);

/* conv_direct.c */
PETSC_INTERN PetscBool NNConvDirectApplies(const NNConvGeom *);
PETSC_INTERN void      NNConvDirectWorkSize(const NNConvGeom *, PetscInt *, PetscInt *);
PETSC_INTERN void      NNConvDirectForward(NNConvTask *);
PETSC_INTERN void      NNConvDirectBackward(NNConvTask *);
PETSC_INTERN void      NNConvDirectForwardSingle(NNConvTaskSingle *);
PETSC_INTERN void      NNConvDirectBackwardSingle(NNConvTaskSingle *);

/* conv_winograd.c */
PETSC_INTERN PetscErrorCode NNConvWinogradSetUp(NNConvGeom *, const PetscInt[3]);
PETSC_INTERN PetscErrorCode NNConvWinogradDestroy(NNConvGeom *);
PETSC_INTERN void           NNConvWinogradWorkSize(const NNConvGeom *, PetscInt *, PetscInt *);
PETSC_INTERN PetscInt       NNConvWinogradTransformedSize(const NNConvGeom *);
PETSC_INTERN PetscErrorCode NNConvWinogradWeights(const NNConvGeom *, const PetscScalar *, PetscScalar *, PetscScalar *, PetscLogDouble *);
PETSC_INTERN PetscErrorCode NNConvWinogradWeightGradient(const NNConvGeom *, const PetscScalar *, PetscScalar *, PetscScalar *, PetscLogDouble *);
PETSC_INTERN void           NNConvWinogradForward(NNConvTask *);
PETSC_INTERN void           NNConvWinogradBackward(NNConvTask *);
PETSC_INTERN void           NNConvWinogradForwardSingle(NNConvTaskSingle *);
PETSC_INTERN void           NNConvWinogradBackwardSingle(NNConvTaskSingle *);

/* the conv2d / conv3d layer */
typedef struct {
  PetscInt  nd;                          /* 2 or 3 */
  PetscInt  filters, groups;
  PetscInt  k[3], s[3], pad[3], dil[3]; /* per axis in x, y, z order; pad < 0: dilation*(kernel/2) */
  PetscBool bias, periodic;
  PetscInt  threads;                     /* 0: OpenBLAS's thread count */
  PetscInt  tilerows;                    /* rows of a GEMM block (0: automatic) */
  PetscInt  winograd;                    /* Winograd output tile (-1: automatic, 0: im2col) */
  char      badopt[32];                  /* a per-axis option given with a wrong number of values, */
  PetscInt  badcount;                    /* and that number (0: none) */

  NNSpatialWindow w;                     /* the window in use (padding resolved) */
  NNConvGeom      g;
  PetscInt        nthreads;
  NNSpatialHalo   h;                     /* halo and output DMDAs, the ghosted input and its gradient (lent per pass) */
  PetscScalar    *Wp, *dWp, *grad;      /* packed weights, their gradient, the layer's gradient */
  PetscScalar    *U, *dU, *wwork;       /* Winograd: transformed weights, their gradient, transform workspace */
  PetscScalar    *work;
  PetscInt       *iwork;

  /* model parallelism (-<layer>_partition filters|channels, layers/conv/conv_partition.c): this rank's
     filters or input channels [pstart, pstart + pcnt) of the partition communicator's split; pc splits the
     channels of every pixel and slot (rows): filters the output's, channels the ghosted input's */
  PetscInt      pstart, pcnt;
  NNPartColumns pc;
  PetscScalar  *pbuf, *pbuf2; /* filters: the rank's output (dy) channels; channels: its input and input gradient channels */
  float        *spbuf, *spbuf2; /* the same in the float passes */

  /* single precision (conv_single.c): the geometry (Winograd: tiles of its own), float packed weights and their gradient
     (im2col), float transformed weights and their gradient (Winograd: transformed in double), float workspace; made on
     the first single-precision pass */
  struct {
    NNConvGeom g;
    float    *Wp, *dWp, *U, *dU, *db, *work, *WT; /* WT: direct, the per-tap transposed weights */
    PetscInt *iwork;
  } single;
  PetscInt  devalg;  /* -device_algorithm: an NNConvDeviceAlgorithm, or -1: the default (NNConvGetDeviceAlgorithm()) */
  void    *cuda;   /* -nn_device cuda: cuDNN descriptors, algorithms, NCHW buffers and workspace (layers/conv/conv_cuda.c) */
  void    *gemm;   /* -nn_device cuda: the GEMM passes' column matrix (layers/conv/conv_gemm_cuda.c) */
} NNLayer_Conv;

/* the convolutions' device passes (-nn_device cuda): cuDNN (layers/conv/conv_cuda.c, conv2d in a PetNN built with
   cuDNN) or PetNN's im2col/col2im kernels and cuBLAS GEMMs (layers/conv/conv_gemm_cuda.c) */
typedef enum {
  NN_CONV_DEVICE_CUDNN,
  NN_CONV_DEVICE_GEMM
} NNConvDeviceAlgorithm;
PETSC_INTERN const char *const NNConvDeviceAlgorithms[];
PETSC_INTERN NNConvDeviceAlgorithm NNConvGetDeviceAlgorithm(NNLayer);

#if defined(PETNN_HAVE_CUDNN)
PETSC_INTERN PetscErrorCode NNConvResetDevice(NNLayer);
PETSC_INTERN PetscErrorCode NNConvForwardCUDNN(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNConvBackwardCUDNN(NNLayer, PetscInt, const void *, const void *, void *);
#endif
#if defined(PETNN_HAVE_CUDA)
PETSC_INTERN PetscErrorCode NNConvGemmResetDevice(void **);
PETSC_INTERN PetscErrorCode NNConvForwardGemm(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNConvBackwardGemm(NNLayer, PetscInt, const void *, const void *, void *);
#endif

/* the conv_transpose2d / conv_transpose3d layer (layers/conv/conv_transpose.c, its options in conv_transpose_opts.c) */
typedef struct {
  PetscInt  nd;
  PetscInt  filters, groups;
  PetscInt  k[3], s[3], pad[3], opad[3], dil[3]; /* per axis in x, y, z order */
  PetscBool bias;
  PetscInt  threads;                             /* 0: OpenBLAS's thread count */
  char      badopt[32];                          /* a per-axis option given with a wrong number of values, */
  PetscInt  badcount;                            /* and that number (0: none) */

  PetscInt      No[3];                           /* output extents */
  NNConvGeom    g;
  PetscInt      nthreads;
  NNSpatialHalo h;
  PetscScalar  *Wp, *dWp, *grad, *work;
  PetscInt     *iwork;
  struct {
    float *Wp, *dWp, *work; /* -nn_precision single (conv_transpose_single.c): made on the first float pass */
  } single;
  void *gemm; /* -nn_device cuda: the GEMM passes' column matrix (layers/conv/conv_gemm_cuda.c) */
} NNLayer_ConvTranspose;

/* conv_transpose_single.c */
PETSC_INTERN PetscErrorCode NNLayerForwardSingle_ConvTranspose(NNLayer, PetscInt, const float *, float *);
PETSC_INTERN PetscErrorCode NNLayerBackwardSingle_ConvTranspose(NNLayer, PetscInt, const float *, const float *, const float *, float *);
PETSC_INTERN PetscErrorCode NNConvTransposeSingleReset(NNLayer);

/* convopts.c: per-axis options shared by conv and conv_transpose. A tuple option takes 1 or nd values in
   PyTorch order ((depth,) height, width) into v[] in x, y, z order; a wrong count is recorded in badopt and
   *badcount (reported by set-up: an error inside the options block would leak it) */
PETSC_INTERN PetscErrorCode NNConvOptionsTuple(NNLayer, NNOptionItems , PetscInt, const char[], const char[], const char[], PetscInt[3], char[32], PetscInt *);
PETSC_INTERN PetscErrorCode NNConvTupleString(PetscInt, const PetscInt[3], size_t, char[]);

PETSC_INTERN PetscErrorCode NNLayerSetFromOptions_ConvTranspose(NNLayer, NNOptionItems );
PETSC_INTERN PetscErrorCode NNLayerView_ConvTranspose(NNLayer, PetscViewer);
PETSC_INTERN PetscErrorCode NNConvTransposeComposeFunctions(NNLayer, PetscBool);

/* conv_partition.c */
PETSC_INTERN PetscErrorCode NNConvPartSetUp(NNLayer, const PetscInt[]);
PETSC_INTERN PetscErrorCode NNConvPartInitialize(NNLayer, PetscReal);
PETSC_INTERN PetscErrorCode NNConvPartGeometry(NNLayer);
PETSC_INTERN PetscErrorCode NNConvPartReset(NNLayer);
PETSC_INTERN PetscErrorCode NNConvPartInput(NNLayer, const PetscScalar *, const PetscScalar **);
PETSC_INTERN PetscErrorCode NNConvPartOutput(NNLayer, PetscInt, PetscScalar *);
PETSC_INTERN PetscErrorCode NNConvPartOutputGradient(NNLayer, PetscInt, const PetscScalar *, const PetscScalar **, PetscScalar *);
PETSC_INTERN PetscErrorCode NNConvPartInputGradient(NNLayer, PetscScalar *, PetscScalar **);
PETSC_INTERN PetscErrorCode NNConvPartGatherInputGradient(NNLayer, PetscScalar *);
PETSC_INTERN PetscErrorCode NNConvPartSumInputGradient(NNLayer, Vec);
/* the same steps in the float passes (conv_partition_passes.h); the parameter gradient stays double */
PETSC_INTERN PetscErrorCode NNConvPartInputSingle(NNLayer, const float *, const float **);
PETSC_INTERN PetscErrorCode NNConvPartOutputSingle(NNLayer, PetscInt, float *);
PETSC_INTERN PetscErrorCode NNConvPartOutputGradientSingle(NNLayer, PetscInt, const float *, const float **, PetscScalar *);
PETSC_INTERN PetscErrorCode NNConvPartInputGradientSingle(NNLayer, float *, float **);
PETSC_INTERN PetscErrorCode NNConvPartGatherInputGradientSingle(NNLayer, float *);
PETSC_INTERN PetscErrorCode NNConvPartView(NNLayer, PetscViewer);

/* convopts.c */
PETSC_INTERN PetscErrorCode NNLayerSetFromOptions_Conv(NNLayer, NNOptionItems );
PETSC_INTERN PetscErrorCode NNLayerView_Conv(NNLayer, PetscViewer);
PETSC_INTERN PetscErrorCode NNConvComposeFunctions(NNLayer, PetscBool); /* compose (PETSC_TRUE) or remove the type-specific setters and getters */
