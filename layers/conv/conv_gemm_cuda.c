/*
   Device passes of the convolutions (-nn_device cuda) by im2col + cuBLAS GEMMs on the spatial layout: conv2d and
   conv3d (-<layer>device_algorithm gemm, the default without cuDNN and for conv3d), also with the spatial activations
   split over ranks, and conv_transpose2d and conv_transpose3d, also split. The kernels (layers/conv/conv_kernels.cu)
   index the DMDA layout [z][y][x][slot][c] directly, so no NCHW copies are made; the column matrix (a row per (pixel, slot), a column per (channel, tap)) reads the PyTorch
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

   Split over ranks, conv2d/3d work as the CPU's do: the rows of the column matrix are the rank's owned outputs (the
   layer's output DMDA, "centred windows"), im2col reads the ghosted input that the halo exchange staged through
   page-locked host memory (src/layer/interface/spatialhalo_cuda.c), col2im writes the ghosted input gradient, summed
   back over the ranks' halos; the parameter gradient of the rank's outputs goes to a scratch array, is summed over the
   layer's ranks (MPI_Allreduce on a host copy, as the CPU's pass does) and added into l->dev.dtheta.
   conv_transpose2d/3d split over ranks gather as the CPU's do: the image is the rank's owned outputs, the column grid
   its ghosted inputs (all inputs its outputs gather); the backward's im2col of dy reads zeros for outputs of other
   ranks, so each (input, output) pair counts once, on the output's rank: the ghosted input gradient is summed back
   over the halos and the parameter gradient over the ranks.
*/
#include "conv.h"
#include <petnn/private/cudaimpl.h>
#include <petnn/private/spatialhalodevice.h>
#include <petnn/private/partitiondevice.h>

typedef struct {
  void       *col, *tmp, *dth; /* the column matrix; the bias gradient's per-slot sums (n*Cout); split: the pass's parameter gradient */
  void       *part, *part2;    /* partitioned (filters, channels): the rank's channels of the output or input, and of the input gradient */
  size_t      ncol, ntmp, npart; /* their sizes in bytes */
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
  PetscCall(NNCUDAFree(&c->dth));
  PetscCall(NNCUDAFree(&c->part));
  PetscCall(NNCUDAFree(&c->part2));
  PetscCall(PetscFree(*ws));
  PetscFunctionReturn(0);
}

/* the workspace for ncol column entries, ntmp bias sums and npart entries of the rank's channels (twice), made again
   when the capacity or the precision change */
static PetscErrorCode NNConvGemmWorkspace(NNLayer l, void **ws, size_t ncol, size_t ntmp, size_t npart, NNConvGemmCUDA **cc)
{
  NNConvGemmCUDA *c  = (NNConvGemmCUDA *)*ws;
  size_t          es = l->dev.prec == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double);

  PetscFunctionBegin;
  if (c && (c->nb != l->nbatch || c->prec != l->dev.prec || c->ncol < ncol * es || c->ntmp < ntmp * es || c->npart < npart * es)) PetscCall(NNConvGemmResetDevice(ws));
  if (!*ws) {
    PetscCall(PetscNew(&c));
    *ws     = c;
    c->nb   = l->nbatch;
    c->prec = l->dev.prec;
    c->ncol = PetscMax(ncol, 1) * es;
    c->ntmp = PetscMax(ntmp, 1) * es;
    c->npart = npart * es;
    PetscCall(NNCUDAMalloc(c->ncol, &c->col));
    PetscCall(NNCUDAMalloc(c->ntmp, &c->tmp));
    PetscCall(NNCUDAMalloc(PetscMax(l->nparam, 1) * es, &c->dth));
    if (npart) {
      PetscCall(NNCUDAMalloc(c->npart, &c->part));
      PetscCall(NNCUDAMalloc(c->npart, &c->part2));
    }
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

/* what a pass needs: the geometry of im2col/col2im, the GEMMs' sizes, the workspace and the stream */
typedef struct {
  NNCUDAConvGeom  g;
  NNConvGemmCUDA *c;
  cudaStream_t    s;
  int             single;
  size_t          es;                  /* bytes of an entry */
  PetscInt        G, Cin, Cout, Kg, M; /* groups, channels, a group's columns (channels of the image / G times taps), rows */
  size_t          P;                   /* pixels of the image */
  PetscBool       split;               /* conv2d/3d with the spatial activations split over ranks */
  NNLayerPartition part;                /* conv2d/3d: filters (Cout the rank's), channels (Cin the rank's) or replicate */
} NNConvGemmPass;

/* conv2d / conv3d (the image is the input: grid N, Cin channels; the column grid the output's) or conv_transpose2d /
   3d (the image is the output: grid No, Cout channels; the column grid the input's; the axes a layer of 2 dimensions
   does not have are of extent 1 with a kernel, stride and dilation of 1) */
static PetscErrorCode NNConvGemmBegin(NNLayer l, PetscInt n, PetscBool transposed, NNConvGemmPass *p)
{
  NNCUDAConvGeom *g = &p->g;
  void          **ws;
  PetscInt        nd;

  PetscFunctionBegin;
  p->single = l->dev.prec == NN_PRECISION_SINGLE;
  p->es     = p->single ? sizeof(float) : sizeof(double);
  p->Cin    = l->inshape.dim[0];
  p->part   = NN_PARTITION_REPLICATE;
  g->nb     = (size_t)l->nbatch;
  g->n      = (size_t)n;
  if (!transposed) {
    NNLayer_Conv *d = (NNLayer_Conv *)l->data;
    nd              = d->nd;
    ws              = &d->gemm;
    p->G            = d->groups;
    p->Cout         = d->filters;
    g->periodic     = (int)d->periodic;
    g->C            = (size_t)p->Cin;
    for (PetscInt a = 0; a < 3; a++) {
      g->N[a]   = (int)d->w.N[a];
      g->No[a]  = a < nd ? (int)l->outshape.dim[nd - a] : 1;
      g->k[a]   = (int)d->w.k[a];
      g->s[a]   = (int)d->w.s[a];
      g->p[a]   = (int)d->w.p[a];
      g->dil[a] = (int)d->w.dil[a];
    }
    PetscCall(NNSpatialHaloDeviceSplit(&d->h, &p->split));
    PetscCall(NNSpatialHaloDeviceCorners(&d->h, nd, g->N, g->No, g->os, g->No, g->gs, g->gm)); /* the column grid: the owned outputs */
    p->part = l->part.type;                                                                    /* this rank's filters or input channels (conv_partition.c) */
    if (p->part == NN_PARTITION_FILTERS) p->Cout = d->pcnt;
    if (p->part == NN_PARTITION_CHANNELS) g->C = (size_t)d->pcnt;
  } else {
    NNLayer_ConvTranspose *d = (NNLayer_ConvTranspose *)l->data;
    int                    Nin[3];
    nd                       = d->nd;
    ws                       = &d->gemm;
    p->G                     = d->groups;
    p->Cout                  = d->filters;
    g->periodic              = 0;
    g->C                     = (size_t)p->Cout;
    for (PetscInt a = 0; a < 3; a++) {
      PetscBool on = (PetscBool)(a < nd);
      g->N[a]      = (int)d->No[a];
      Nin[a]       = on ? (int)l->inshape.dim[nd - a] : 1;
      g->k[a]      = on ? (int)d->k[a] : 1;
      g->s[a]      = on ? (int)d->s[a] : 1;
      g->p[a]      = on ? (int)d->pad[a] : 0;
      g->dil[a]    = on ? (int)d->dil[a] : 1;
    }
    /* the image box: the owned outputs; the column grid: the ghosted inputs (every input an owned output gathers) */
    PetscCall(NNSpatialHaloDeviceSplit(&d->h, &p->split));
    PetscCall(NNSpatialHaloDeviceCorners(&d->h, nd, Nin, g->N, g->gs, g->gm, g->os, g->No));
  }
  p->P  = NNConvGemmPixels(g->gm);
  p->Kg = (PetscInt)(g->C / p->G) * g->k[0] * g->k[1] * g->k[2];
  p->M  = (PetscInt)(NNConvGemmPixels(g->No) * g->nb);
  {
    NNLayer_Conv *d     = (NNLayer_Conv *)l->data;
    size_t        npart = p->part == NN_PARTITION_FILTERS ? (size_t)p->M * d->pcnt : p->part == NN_PARTITION_CHANNELS ? p->P * g->nb * d->pcnt : 0;
    PetscCall(NNConvGemmWorkspace(l, ws, (size_t)p->M * p->G * p->Kg, (size_t)l->nbatch * p->Cout, npart, &p->c));
  }
  PetscCall(NNCUDAGetStream(&p->s));
  PetscFunctionReturn(0);
}

/* the weight block of group grp (its first entry), the bias, a group's block of the column matrix, of an image */
#define NNConvGemmW(l, p, grp, rows)     ((const char *)(l)->dev.theta + (size_t)(grp) * (rows) * (p)->Kg * (p)->es)
#define NNConvGemmBias(l, p, theta)      ((char *)(theta) + (size_t)((l)->nparam - (p)->Cout) * (p)->es)
#define NNConvGemmCol(p, grp)            ((char *)(p)->c->col + (size_t)(grp) * (p)->Kg * (p)->es)
#define NNConvGemmAt(a, p, grp, perpix)  ((char *)(a) + (size_t)(grp) * (perpix) * (p)->es)

/*
   NNConvForwardGemm - conv2d / conv3d forward pass on the device by im2col and a GEMM per group
*/
PetscErrorCode NNConvForwardGemm(NNLayer l, PetscInt n, const void *x, void *y)
{
  NNLayer_Conv  *d = (NNLayer_Conv *)l->data;
  NNConvGemmPass p;
  PetscInt       Og;
  const void    *xg;
  void          *yp;

  PetscFunctionBegin;
  PetscCall(NNConvGemmBegin(l, n, PETSC_FALSE, &p));
  Og = p.Cout / p.G;
  PetscCall(NNSpatialHaloDeviceGetInput(&d->h, l->dev.prec, x, &xg));
  if (p.part == NN_PARTITION_CHANNELS) { /* this rank's channels of the ghosted input */
    PetscCall(NNDevicePartColumnsTake(&d->pc, l->dev.prec, (PetscInt)(p.P * p.g.nb), xg, p.Cin, p.c->part, d->pcnt));
    xg = p.c->part;
  }
  yp = p.part == NN_PARTITION_FILTERS ? p.c->part : y; /* filters: this rank's output channels, gathered below */
  NNCallCUDA(NNCUDAIm2col(p.single, &p.g, xg, p.c->col, p.s));
  for (PetscInt grp = 0; grp < p.G; grp++)
    PetscCall(NNCUDAGemm(l->dev.prec, l->dev.tf32, CUBLAS_OP_T, CUBLAS_OP_N, Og, p.M, p.Kg, 1.0, NNConvGemmW(l, &p, grp, Og), p.Kg, NNConvGemmCol(&p, grp), p.G * p.Kg, 0.0, NNConvGemmAt(yp, &p, grp, Og), p.Cout));
  /* the bias: of the rank's filters (filters), or the whole bias once after the sum of the partial outputs (channels) */
  if (d->bias && p.part != NN_PARTITION_CHANNELS) NNCallCUDA(NNCUDAConvBias(p.single, (size_t)p.M / p.g.nb, p.g.nb, p.g.n, (size_t)p.Cout, NNConvGemmBias(l, &p, l->dev.theta), yp, p.s));
  if (p.part == NN_PARTITION_FILTERS) PetscCall(NNDevicePartColumnsAllgather(&d->pc, l->dev.prec, p.M, yp, p.Cout, y, d->filters));
  if (p.part == NN_PARTITION_CHANNELS) {
    PetscCall(NNDeviceAllreduceSum(d->pc.comm, l->dev.prec, y, (size_t)p.M * p.Cout));
    if (d->bias) NNCallCUDA(NNCUDAConvBias(p.single, (size_t)p.M / p.g.nb, p.g.nb, p.g.n, (size_t)p.Cout, NNConvGemmBias(l, &p, l->dev.theta), y, p.s));
  }
  if (d->bias) PetscCall(PetscLogFlops((PetscLogDouble)p.M / p.g.nb * n * p.Cout));
  PetscFunctionReturn(0);
}

/*
   NNConvBackwardGemm - conv2d / conv3d backward pass on the device: weight and bias gradients added into
   l->dev.dtheta (split over ranks: summed over the layer's ranks first), the input gradient (when dx is not NULL) by
   a GEMM per group and col2im
*/
PetscErrorCode NNConvBackwardGemm(NNLayer l, PetscInt n, const void *x, const void *dy, void *dx)
{
  NNLayer_Conv  *d = (NNLayer_Conv *)l->data;
  NNConvGemmPass p;
  PetscInt       Og;
  const void    *xg;
  void          *dxg, *dth;

  PetscFunctionBegin;
  PetscCall(NNConvGemmBegin(l, n, PETSC_FALSE, &p));
  Og  = p.Cout / p.G;
  dth = p.split ? p.c->dth : l->dev.dtheta;
  if (p.split) NNCallCUDA(cudaMemsetAsync(dth, 0, l->nparam * p.es, p.s));
  /* x again: another pass (another batch size, NNPredict()) may have used the column matrix since this batch's forward pass */
  PetscCall(NNSpatialHaloDeviceGetInput(&d->h, l->dev.prec, x, &xg));
  if (p.part == NN_PARTITION_CHANNELS) { /* this rank's channels of the ghosted input */
    PetscCall(NNDevicePartColumnsTake(&d->pc, l->dev.prec, (PetscInt)(p.P * p.g.nb), xg, p.Cin, p.c->part, d->pcnt));
    xg = p.c->part;
  }
  if (p.part == NN_PARTITION_FILTERS) { /* this rank's filters' columns of dy */
    PetscCall(NNDevicePartColumnsTake(&d->pc, l->dev.prec, p.M, dy, d->filters, p.c->part, p.Cout));
    dy = p.c->part;
  }
  NNCallCUDA(NNCUDAIm2col(p.single, &p.g, xg, p.c->col, p.s));
  for (PetscInt grp = 0; grp < p.G; grp++) PetscCall(NNCUDAGemm(l->dev.prec, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_T, p.Kg, Og, p.M, 1.0, NNConvGemmCol(&p, grp), p.G * p.Kg, NNConvGemmAt(dy, &p, grp, Og), p.Cout, 1.0, NNConvGemmAt(dth, &p, grp, Og * p.Kg), p.Kg));
  if (d->bias) PetscCall(NNConvGemmBiasGradient(l, p.c, (size_t)p.M / p.g.nb, n, p.Cout, dy, NNConvGemmBias(l, &p, dth)));
  if (p.split) { /* the parameter gradient of every rank's outputs, as the CPU's pass sums it */
    PetscCall(NNDeviceAllreduceSum(PetscObjectComm((PetscObject)l), l->dev.prec, dth, (size_t)l->nparam));
    NNCallCUDA(NNCUDAAxpy(p.single, (size_t)l->nparam, 1.0, dth, l->dev.dtheta, p.s));
  }
  if (dx) {
    PetscCall(NNSpatialHaloDeviceGetInputGradient(&d->h, l->dev.prec, dx, &dxg));
    for (PetscInt grp = 0; grp < p.G; grp++) PetscCall(NNCUDAGemm(l->dev.prec, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_N, p.Kg, p.M, Og, 1.0, NNConvGemmW(l, &p, grp, Og), p.Kg, NNConvGemmAt(dy, &p, grp, Og), p.Cout, 0.0, NNConvGemmCol(&p, grp), p.G * p.Kg));
    if (p.part == NN_PARTITION_CHANNELS) { /* this rank's channels of the ghosted input gradient, gathered */
      NNCallCUDA(NNCUDACol2im(p.single, &p.g, p.c->col, p.c->part2, p.s));
      PetscCall(NNDevicePartColumnsAllgather(&d->pc, l->dev.prec, (PetscInt)(p.P * p.g.nb), p.c->part2, d->pcnt, dxg, p.Cin));
    } else NNCallCUDA(NNCUDACol2im(p.single, &p.g, p.c->col, dxg, p.s));
    PetscCall(NNSpatialHaloDeviceRestoreInputGradient(&d->h, l->dev.prec, dx));
    if (p.part == NN_PARTITION_FILTERS) { /* the partial input gradients summed over the model ranks */
      PetscInt xm, ym, zm, dof;
      PetscCall(DMDAGetCorners(d->h.dahalo, NULL, NULL, NULL, &xm, &ym, &zm));
      PetscCall(DMDAGetInfo(d->h.dahalo, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &dof, NULL, NULL, NULL, NULL, NULL));
      PetscCall(NNDeviceAllreduceSum(d->pc.comm, l->dev.prec, dx, (size_t)xm * ym * zm * dof));
    }
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerForwardDevice_ConvTranspose(NNLayer l, PetscInt n, const void *x, void *y)
{
  NNLayer_ConvTranspose *d = (NNLayer_ConvTranspose *)l->data;
  NNConvGemmPass         p;
  PetscInt               Cg;
  const void            *xg;

  PetscFunctionBegin;
  PetscCall(NNConvGemmBegin(l, n, PETSC_TRUE, &p));
  Cg = p.Cin / p.G;
  PetscCall(NNSpatialHaloDeviceGetInput(&d->h, l->dev.prec, x, &xg));
  for (PetscInt grp = 0; grp < p.G; grp++)
    PetscCall(NNCUDAGemm(l->dev.prec, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_N, p.Kg, p.M, Cg, 1.0, NNConvGemmW(l, &p, grp, Cg), p.Kg, NNConvGemmAt(xg, &p, grp, Cg), p.Cin, 0.0, NNConvGemmCol(&p, grp), p.G * p.Kg));
  NNCallCUDA(NNCUDACol2im(p.single, &p.g, p.c->col, y, p.s));
  if (d->bias) {
    NNCallCUDA(NNCUDAConvBias(p.single, p.P, p.g.nb, p.g.n, (size_t)p.Cout, NNConvGemmBias(l, &p, l->dev.theta), y, p.s));
    PetscCall(PetscLogFlops((PetscLogDouble)p.P * n * p.Cout));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardDevice_ConvTranspose(NNLayer l, PetscInt n, const void *x, const void *y PETSC_UNUSED, const void *dy, void *dx)
{
  NNLayer_ConvTranspose *d = (NNLayer_ConvTranspose *)l->data;
  NNConvGemmPass         p;
  PetscInt               Cg;
  const void            *xg;
  void                  *dxg, *dth;

  PetscFunctionBegin;
  PetscCall(NNConvGemmBegin(l, n, PETSC_TRUE, &p));
  Cg  = p.Cin / p.G;
  dth = p.split ? p.c->dth : l->dev.dtheta;
  if (p.split) NNCallCUDA(cudaMemsetAsync(dth, 0, l->nparam * p.es, p.s));
  PetscCall(NNSpatialHaloDeviceGetInput(&d->h, l->dev.prec, x, &xg));
  NNCallCUDA(NNCUDAIm2col(p.single, &p.g, dy, p.c->col, p.s)); /* split: the taps into outputs of other ranks read zeros */
  for (PetscInt grp = 0; grp < p.G; grp++)
    PetscCall(NNCUDAGemm(l->dev.prec, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_T, p.Kg, Cg, p.M, 1.0, NNConvGemmCol(&p, grp), p.G * p.Kg, NNConvGemmAt(xg, &p, grp, Cg), p.Cin, 1.0, NNConvGemmAt(dth, &p, grp, Cg * p.Kg), p.Kg));
  if (d->bias) PetscCall(NNConvGemmBiasGradient(l, p.c, p.P, n, p.Cout, dy, NNConvGemmBias(l, &p, dth)));
  if (p.split) { /* every (input, owned output) pair counted once, on the output's rank: summed over the ranks */
    PetscCall(NNDeviceAllreduceSum(PetscObjectComm((PetscObject)l), l->dev.prec, dth, (size_t)l->nparam));
    NNCallCUDA(NNCUDAAxpy(p.single, (size_t)l->nparam, 1.0, dth, l->dev.dtheta, p.s));
  }
  if (dx) {
    PetscCall(NNSpatialHaloDeviceGetInputGradient(&d->h, l->dev.prec, dx, &dxg));
    for (PetscInt grp = 0; grp < p.G; grp++)
      PetscCall(NNCUDAGemm(l->dev.prec, l->dev.tf32, CUBLAS_OP_T, CUBLAS_OP_N, Cg, p.M, p.Kg, 1.0, NNConvGemmW(l, &p, grp, Cg), p.Kg, NNConvGemmCol(&p, grp), p.G * p.Kg, 0.0, NNConvGemmAt(dxg, &p, grp, Cg), p.Cin));
    PetscCall(NNSpatialHaloDeviceRestoreInputGradient(&d->h, l->dev.prec, dx));
  }
  PetscFunctionReturn(0);
}
