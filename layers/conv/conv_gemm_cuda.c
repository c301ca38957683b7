/*
   Device passes of the convolutions (-nn_device cuda) by im2col + cuBLAS GEMMs on the spatial layout of one rank:
   conv2d and conv3d (-<layer>device_algorithm gemm, the default without cuDNN and for conv3d), conv_transpose2d and
   conv_transpose3d. The kernels (layers/conv/conv_kernels.cu) index the DMDA layout [z][y][x][slot][c] directly, so
   no NCHW copies are made; the column matrix (a row per (pixel, slot), a column per (channel, tap)) reads the PyTorch
   weights as they are. Per group g, column-major, M = pixels x slots of the column grid:
     conv             forward   Y_g^T  = W_g^T col_g^T            (col = im2col(x))
                      backward  dW_g  += col_g^T dY_g,  dcol_g^T = W_g dY_g^T,  dx = col2im(dcol)
     conv_transpose   forward   col_g^T = W_g^T x_g^T,  y = col2im(col)   (the conv's input gradient)
                      backward  col = im2col(dy),  dW_g += col_g^T x_g,  dx_g^T = W_g col_g^T
   with the conv's W_g the Cg*taps x Og block of [out][in/groups][taps] and the transposed one's the Og*taps x Cg block
   of [in][out/groups][taps]. The bias is a kernel forward and two GEMMs with ones backward (over the pass's n slots).
   The GEMMs run over all nb slots: im2col and col2im write zeros for the slots r >= n, so the outputs' and input
   gradients' other slots come out zero as on the CPU, and the weight gradients get exact zeros from them (the other
   factor, an activation or its gradient, is finite there). Parameter gradients are added into l->dev.dtheta (beta 1),
   as the other device passes do. The column matrix is the layer's, made for the batch capacity and precision.
*/
#include "conv.h"
#include <petnn/private/cudaimpl.h>

typedef struct {
  void       *col, *tmp;  /* the column matrix; the bias gradient's per-slot sums (n*Cout) */
  size_t      ncol, ntmp; /* their sizes in bytes */
  PetscInt    nb;
  NNPrecision prec;
} NNConvGemmCUDA;

/*
   NNConvGemmResetDevice - frees a convolution's GEMM workspace on the device (the layer's reset)
*/
PetscErrorCode NNConvGemmResetDevice(void **ws)
{
  NNConvGemmCUDA *c = (NNConvGemmCUDA *)*ws;

  PetscFunctionBegin;
  if (!c) PetscFunctionReturn(0);
  PetscCall(NNCUDAFree(&c->col));
  PetscCall(NNCUDAFree(&c->tmp));
  PetscCall(PetscFree(*ws));
  PetscFunctionReturn(0);
}

/* the workspace for ncol column entries and ntmp bias sums, made again when the capacity or the precision change */
static PetscErrorCode NNConvGemmWorkspace(NNLayer l, void **ws, size_t ncol, size_t ntmp, NNConvGemmCUDA **cc)
{
  NNConvGemmCUDA *c  = (NNConvGemmCUDA *)*ws;
  size_t          es = l->dev.prec == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double);

  PetscFunctionBegin;
  if (c && (c->nb != l->nbatch || c->prec != l->dev.prec || c->ncol < ncol * es || c->ntmp < ntmp * es)) PetscCall(NNConvGemmResetDevice(ws));
  if (!*ws) {
    PetscCall(PetscNew(&c));
    *ws     = c;
    c->nb   = l->nbatch;
    c->prec = l->dev.prec;
    c->ncol = PetscMax(ncol, 1) * es;
    c->ntmp = PetscMax(ntmp, 1) * es;
    PetscCall(NNCUDAMalloc(c->ncol, &c->col));
    PetscCall(NNCUDAMalloc(c->ntmp, &c->tmp));
  }
  *cc = (NNConvGemmCUDA *)*ws;
  PetscFunctionReturn(0);
}

/* db += the sums of dy over its P pixels and first n slots (C channels each): per (slot, channel), then per channel */
static PetscErrorCode NNConvGemmBiasGradient(NNLayer l, NNConvGemmCUDA *c, size_t P, PetscInt n, PetscInt C, const void *dy, void *db)
{
  const void *ones;

  PetscFunctionBegin;
  PetscCall(NNCUDAGetOnes(l->dev.prec, PetscMax((PetscInt)P, n), &ones));
  PetscCall(NNCUDAGemm(l->dev.prec, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_N, n * C, 1, (PetscInt)P, 1.0, dy, l->nbatch * C, ones, (PetscInt)P, 0.0, c->tmp, n * C));
  PetscCall(NNCUDAGemm(l->dev.prec, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_N, C, 1, n, 1.0, c->tmp, C, ones, n, 1.0, db, C));
  PetscFunctionReturn(0);
}

static size_t NNConvGemmPixels(const int N[3])
{
  return (size_t)N[0] * N[1] * N[2];
}

/* conv2d / conv3d: the image is the input (grid N, Cin channels), the column grid the output's */
static void NNConvGemmGeom(NNLayer l, PetscInt n, NNCUDAConvGeom *g)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;

  g->periodic = (int)d->periodic;
  g->nb       = (size_t)l->nbatch;
  g->n        = (size_t)n;
  g->C        = (size_t)l->inshape.dim[0];
  for (PetscInt a = 0; a < 3; a++) {
    g->N[a]   = (int)d->w.N[a];
    g->No[a]  = a < d->nd ? (int)l->outshape.dim[d->nd - a] : 1;
    g->k[a]   = (int)d->w.k[a];
    g->s[a]   = (int)d->w.s[a];
    g->p[a]   = (int)d->w.p[a];
    g->dil[a] = (int)d->w.dil[a];
  }
}

/*
   NNConvForwardGemm - conv2d / conv3d forward pass on the device by im2col and a GEMM per group
*/
PetscErrorCode NNConvForwardGemm(NNLayer l, PetscInt n, const void *x, void *y)
{
  NNLayer_Conv   *d = (NNLayer_Conv *)l->data;
  NNConvGemmCUDA *c;
  NNCUDAConvGeom  g;
  cudaStream_t    s;
  int             single = l->dev.prec == NN_PRECISION_SINGLE;
  size_t          es     = single ? sizeof(float) : sizeof(double), Po;
  PetscInt        G = d->groups, Cout = d->filters, Og = Cout / G, Kg, M;

  PetscFunctionBegin;
  NNConvGemmGeom(l, n, &g);
  Po = NNConvGemmPixels(g.No);
  Kg = (PetscInt)(g.C / G) * g.k[0] * g.k[1] * g.k[2];
  M  = (PetscInt)(Po * g.nb);
  PetscCall(NNConvGemmWorkspace(l, &d->gemm, (size_t)M * G * Kg, (size_t)l->nbatch * Cout, &c));
  PetscCall(NNCUDAGetStream(&s));
  NNCallCUDA(NNCUDAIm2col(single, &g, x, c->col, s));
  for (PetscInt grp = 0; grp < G; grp++)
    PetscCall(NNCUDAGemm(l->dev.prec, l->dev.tf32, CUBLAS_OP_T, CUBLAS_OP_N, Og, M, Kg, 1.0, (const char *)l->dev.theta + (size_t)grp * Og * Kg * es, Kg, (const char *)c->col + (size_t)grp * Kg * es, G * Kg, 0.0, (char *)y + (size_t)grp * Og * es, Cout));
  if (d->bias) {
    NNCallCUDA(NNCUDAConvBias(single, Po, g.nb, g.n, (size_t)Cout, (const char *)l->dev.theta + (size_t)(l->nparam - Cout) * es, y, s));
    PetscCall(PetscLogFlops((PetscLogDouble)Po * n * Cout));
  }
  PetscFunctionReturn(0);
}

/*
   NNConvBackwardGemm - conv2d / conv3d backward pass on the device: weight and bias gradients added into
   l->dev.dtheta, the input gradient (when dx is not NULL) by a GEMM per group and col2im
*/
PetscErrorCode NNConvBackwardGemm(NNLayer l, PetscInt n, const void *x, const void *dy, void *dx)
{
  NNLayer_Conv   *d = (NNLayer_Conv *)l->data;
  NNConvGemmCUDA *c;
  NNCUDAConvGeom  g;
  cudaStream_t    s;
  int             single = l->dev.prec == NN_PRECISION_SINGLE;
  size_t          es     = single ? sizeof(float) : sizeof(double), Po;
  PetscInt        G = d->groups, Cout = d->filters, Og = Cout / G, Kg, M;

  PetscFunctionBegin;
  NNConvGemmGeom(l, n, &g);
  Po = NNConvGemmPixels(g.No);
  Kg = (PetscInt)(g.C / G) * g.k[0] * g.k[1] * g.k[2];
  M  = (PetscInt)(Po * g.nb);
  PetscCall(NNConvGemmWorkspace(l, &d->gemm, (size_t)M * G * Kg, (size_t)l->nbatch * Cout, &c));
  PetscCall(NNCUDAGetStream(&s));
  /* x again: another pass (another batch size, NNPredict()) may have used the column matrix since this batch's forward pass */
  NNCallCUDA(NNCUDAIm2col(single, &g, x, c->col, s));
  for (PetscInt grp = 0; grp < G; grp++)
    PetscCall(NNCUDAGemm(l->dev.prec, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_T, Kg, Og, M, 1.0, (const char *)c->col + (size_t)grp * Kg * es, G * Kg, (const char *)dy + (size_t)grp * Og * es, Cout, 1.0, (char *)l->dev.dtheta + (size_t)grp * Og * Kg * es, Kg));
  if (d->bias) PetscCall(NNConvGemmBiasGradient(l, c, Po, n, Cout, dy, (char *)l->dev.dtheta + (size_t)(l->nparam - Cout) * es));
  if (dx) {
    for (PetscInt grp = 0; grp < G; grp++)
      PetscCall(NNCUDAGemm(l->dev.prec, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_N, Kg, M, Og, 1.0, (const char *)l->dev.theta + (size_t)grp * Og * Kg * es, Kg, (const char *)dy + (size_t)grp * Og * es, Cout, 0.0, (char *)c->col + (size_t)grp * Kg * es, G * Kg));
    NNCallCUDA(NNCUDACol2im(single, &g, c->col, dx, s));
  }
  PetscFunctionReturn(0);
}

/* conv_transpose2d / 3d: the image is the output (grid No, Cout channels), the column grid the input's; the axes a
   layer of 2 dimensions does not have are of extent 1 with a kernel, stride and dilation of 1 */
static void NNConvTransposeGemmGeom(NNLayer l, PetscInt n, NNCUDAConvGeom *g)
{
  NNLayer_ConvTranspose *d = (NNLayer_ConvTranspose *)l->data;

  g->periodic = 0;
  g->nb       = (size_t)l->nbatch;
  g->n        = (size_t)n;
  g->C        = (size_t)d->filters;
  for (PetscInt a = 0; a < 3; a++) {
    PetscBool on = (PetscBool)(a < d->nd);
    g->N[a]      = (int)d->No[a];
    g->No[a]     = on ? (int)l->inshape.dim[d->nd - a] : 1;
    g->k[a]      = on ? (int)d->k[a] : 1;
    g->s[a]      = on ? (int)d->s[a] : 1;
    g->p[a]      = on ? (int)d->pad[a] : 0;
    g->dil[a]    = on ? (int)d->dil[a] : 1;
  }
}

PetscErrorCode NNLayerForwardDevice_ConvTranspose(NNLayer l, PetscInt n, const void *x, void *y)
{
  NNLayer_ConvTranspose *d = (NNLayer_ConvTranspose *)l->data;
  NNConvGemmCUDA        *c;
  NNCUDAConvGeom         g;
  cudaStream_t           s;
  int                    single = l->dev.prec == NN_PRECISION_SINGLE;
  size_t                 es     = single ? sizeof(float) : sizeof(double);
  PetscInt               G = d->groups, Cin = l->inshape.dim[0], Cg = Cin / G, Cout = d->filters, Kg, M;

  PetscFunctionBegin;
  NNConvTransposeGemmGeom(l, n, &g);
  Kg = (Cout / G) * g.k[0] * g.k[1] * g.k[2];
  M  = (PetscInt)(NNConvGemmPixels(g.No) * g.nb);
  PetscCall(NNConvGemmWorkspace(l, &d->gemm, (size_t)M * G * Kg, (size_t)l->nbatch * Cout, &c));
  PetscCall(NNCUDAGetStream(&s));
  for (PetscInt grp = 0; grp < G; grp++)
    PetscCall(NNCUDAGemm(l->dev.prec, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_N, Kg, M, Cg, 1.0, (const char *)l->dev.theta + (size_t)grp * Cg * Kg * es, Kg, (const char *)x + (size_t)grp * Cg * es, Cin, 0.0, (char *)c->col + (size_t)grp * Kg * es, G * Kg));
  NNCallCUDA(NNCUDACol2im(single, &g, c->col, y, s));
  if (d->bias) {
    NNCallCUDA(NNCUDAConvBias(single, NNConvGemmPixels(g.N), g.nb, g.n, (size_t)Cout, (const char *)l->dev.theta + (size_t)(l->nparam - Cout) * es, y, s));
    PetscCall(PetscLogFlops((PetscLogDouble)NNConvGemmPixels(g.N) * n * Cout));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardDevice_ConvTranspose(NNLayer l, PetscInt n, const void *x, const void *y PETSC_UNUSED, const void *dy, void *dx)
{
  NNLayer_ConvTranspose *d = (NNLayer_ConvTranspose *)l->data;
  NNConvGemmCUDA        *c;
  NNCUDAConvGeom         g;
  cudaStream_t           s;
  int                    single = l->dev.prec == NN_PRECISION_SINGLE;
  size_t                 es     = single ? sizeof(float) : sizeof(double);
  PetscInt               G = d->groups, Cin = l->inshape.dim[0], Cg = Cin / G, Cout = d->filters, Kg, M;

  PetscFunctionBegin;
  NNConvTransposeGemmGeom(l, n, &g);
  Kg = (Cout / G) * g.k[0] * g.k[1] * g.k[2];
  M  = (PetscInt)(NNConvGemmPixels(g.No) * g.nb);
  PetscCall(NNConvGemmWorkspace(l, &d->gemm, (size_t)M * G * Kg, (size_t)l->nbatch * Cout, &c));
  PetscCall(NNCUDAGetStream(&s));
  NNCallCUDA(NNCUDAIm2col(single, &g, dy, c->col, s));
  for (PetscInt grp = 0; grp < G; grp++)
    PetscCall(NNCUDAGemm(l->dev.prec, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_T, Kg, Cg, M, 1.0, (const char *)c->col + (size_t)grp * Kg * es, G * Kg, (const char *)x + (size_t)grp * Cg * es, Cin, 1.0, (char *)l->dev.dtheta + (size_t)grp * Cg * Kg * es, Kg));
  if (d->bias) PetscCall(NNConvGemmBiasGradient(l, c, NNConvGemmPixels(g.N), n, Cout, dy, (char *)l->dev.dtheta + (size_t)(l->nparam - Cout) * es));
  if (dx)
    for (PetscInt grp = 0; grp < G; grp++)
      PetscCall(NNCUDAGemm(l->dev.prec, l->dev.tf32, CUBLAS_OP_T, CUBLAS_OP_N, Cg, M, Kg, 1.0, (const char *)l->dev.theta + (size_t)grp * Cg * Kg * es, Kg, (const char *)c->col + (size_t)grp * Kg * es, G * Kg, 0.0, (char *)dx + (size_t)grp * Cg * es, Cin));
  PetscFunctionReturn(0);
}
