/*
   Device passes of conv2d (-nn_device cuda) through cuDNN, on one rank (-<layer>device_algorithm cudnn in a PetNN built
   with cuDNN; the default is the GEMM passes of conv_gemm_cuda.c, faster on the networks measured: convopts.c).
   The DMDA layout [y][x][slot][c] is neither NCHW nor NHWC; cuDNN's legacy convolutions promise every algorithm only for packed NCHW/NHWC tensors, so the passes
   permute the first n slots into NCHW buffers owned by the layer (NNCUDASpatialPermute(), the to_spatial kernel) and
   back, rather than rely on strided descriptors. The weight [Cout][Cin/groups][kh][kw] is cuDNN's NCHW filter as is.
     forward   x -> xn, cudnnConvolutionForward(xn) -> yn, + bias (cudnnAddTensor), yn -> y (slots >= n zero)
     backward  x -> xn, dy -> yn, dW += BackwardFilter, db += BackwardBias, dx: BackwardData -> dn -> dx
   Algorithms: cudnnGet*Algorithm_v7() for each batch size n met (the last batch of an epoch is smaller), the first
   deterministic one that succeeds (reruns are bitwise identical, as on the CPU). Float uses FMA math only, or tensor
   cores (TF32) with -nn_cuda_tf32; double is double. The workspace is the layer's, grown to the largest need.
*/
#if defined(PETNN_HAVE_CUDNN)
  #include "conv.h"
  #include <petnn/private/cudnnimpl.h>

typedef struct {
  PetscInt                          n, nb;      /* the batch size the descriptors are for; the slots the buffers hold */
  NNPrecision                       prec;
  PetscBool                         tf32;
  cudnnTensorDescriptor_t           xd, yd, bd; /* NCHW input, output, bias (1, Cout, 1, 1) */
  cudnnFilterDescriptor_t           wd;
  cudnnConvolutionDescriptor_t      cd;
  cudnnConvolutionFwdAlgo_t         fwd;
  cudnnConvolutionBwdDataAlgo_t     bwdd;
  cudnnConvolutionBwdFilterAlgo_t   bwdf;
  void                             *xn, *yn, *dn, *work; /* NCHW input, output (or its gradient), input gradient; workspace */
  size_t                            nwork;
} NNConvCUDA;

PetscErrorCode NNConvResetDevice(NNLayer l)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;
  NNConvCUDA   *c = (NNConvCUDA *)d->cuda;

  PetscFunctionBegin;
  if (!c) PetscFunctionReturn(0);
  if (c->xd) NNCallCUDNN(cudnnDestroyTensorDescriptor(c->xd));
  if (c->yd) NNCallCUDNN(cudnnDestroyTensorDescriptor(c->yd));
  if (c->bd) NNCallCUDNN(cudnnDestroyTensorDescriptor(c->bd));
  if (c->wd) NNCallCUDNN(cudnnDestroyFilterDescriptor(c->wd));
  if (c->cd) NNCallCUDNN(cudnnDestroyConvolutionDescriptor(c->cd));
  PetscCall(NNCUDAFree(&c->xn));
  PetscCall(NNCUDAFree(&c->yn));
  PetscCall(NNCUDAFree(&c->dn));
  PetscCall(NNCUDAFree(&c->work));
  PetscCall(PetscFree(d->cuda));
  PetscFunctionReturn(0);
}

/* the descriptors and algorithms for a pass over n slots (set again when n or TF32 change: the last batch of an epoch is
   smaller); the NCHW buffers for the whole batch (made again when the batch capacity or the precision change) */
static PetscErrorCode NNConvCUDASetUp(NNLayer l, PetscInt n, NNConvCUDA **cc)
{
  NNLayer_Conv             *d   = (NNLayer_Conv *)l->data;
  NNConvCUDA               *c   = (NNConvCUDA *)d->cuda;
  const char               *pre = ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "";
  PetscInt                  Cin = l->inshape.dim[0], H = l->inshape.dim[1], W = l->inshape.dim[2];
  PetscInt                  Cout = d->filters, Ho = l->outshape.dim[1], Wo = l->outshape.dim[2];
  cudnnDataType_t           dt   = l->dev.prec == NN_PRECISION_SINGLE ? CUDNN_DATA_FLOAT : CUDNN_DATA_DOUBLE;
  size_t                    es   = l->dev.prec == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  cudnnHandle_t             h;
  int                       on, oc, oh, ow, cnt, k;
  size_t                    ws = 0, w1;
  cudnnConvolutionFwdAlgoPerf_t       pf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  cudnnConvolutionBwdDataAlgoPerf_t   pd[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  cudnnConvolutionBwdFilterAlgoPerf_t pw[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];

  PetscFunctionBegin;
  PetscCheck(d->nd == 2, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "Layer %s (%s): -%sdevice_algorithm cudnn is for conv2d only; use -%sdevice_algorithm gemm", ((PetscObject)l)->name, ((PetscObject)l)->type_name, pre, pre);
  PetscCheck(!d->periodic, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "Layer %s (%s): periodic padding (-%speriodic) does not run through cuDNN; use -%sdevice_algorithm gemm, -%speriodic false or -nn_device cpu", ((PetscObject)l)->name, ((PetscObject)l)->type_name, pre, pre, pre);
  if (c && c->n == n && c->nb == l->nbatch && c->prec == l->dev.prec && c->tf32 == l->dev.tf32) {
    *cc = c;
    PetscFunctionReturn(0);
  }
  if (c && (c->nb != l->nbatch || c->prec != l->dev.prec)) {
    PetscCall(NNConvResetDevice(l));
    c = NULL;
  }
  if (!c) {
    PetscCall(PetscNew(&c));
    d->cuda = c;
    c->nb   = l->nbatch;
    c->prec = l->dev.prec;
    NNCallCUDNN(cudnnCreateTensorDescriptor(&c->xd));
    NNCallCUDNN(cudnnCreateTensorDescriptor(&c->yd));
    NNCallCUDNN(cudnnCreateTensorDescriptor(&c->bd));
    NNCallCUDNN(cudnnCreateFilterDescriptor(&c->wd));
    NNCallCUDNN(cudnnCreateConvolutionDescriptor(&c->cd));
    PetscCall(NNCUDAMalloc((size_t)c->nb * Cin * H * W * es, &c->xn));
    PetscCall(NNCUDAMalloc((size_t)c->nb * Cin * H * W * es, &c->dn));
    PetscCall(NNCUDAMalloc((size_t)c->nb * Cout * Ho * Wo * es, &c->yn));
  }
  c->n = 0; /* until the descriptors are set: an error in between leaves the layer to set them again */
  PetscCall(NNCUDAGetDNN(&h));
  NNCallCUDNN(cudnnSetTensor4dDescriptor(c->xd, CUDNN_TENSOR_NCHW, dt, (int)n, (int)Cin, (int)H, (int)W));
  NNCallCUDNN(cudnnSetTensor4dDescriptor(c->bd, CUDNN_TENSOR_NCHW, dt, 1, (int)Cout, 1, 1));
  NNCallCUDNN(cudnnSetFilter4dDescriptor(c->wd, dt, CUDNN_TENSOR_NCHW, (int)Cout, (int)(Cin / d->groups), (int)d->k[1], (int)d->k[0]));
  /* axes of the layer are x (width), y (height): cuDNN takes height first */
  NNCallCUDNN(cudnnSetConvolution2dDescriptor(c->cd, (int)d->w.p[1], (int)d->w.p[0], (int)d->w.s[1], (int)d->w.s[0], (int)d->w.dil[1], (int)d->w.dil[0], CUDNN_CROSS_CORRELATION, dt));
  NNCallCUDNN(cudnnSetConvolutionGroupCount(c->cd, (int)d->groups));
  NNCallCUDNN(cudnnSetConvolutionMathType(c->cd, (c->prec == NN_PRECISION_SINGLE && l->dev.tf32) ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
  NNCallCUDNN(cudnnGetConvolution2dForwardOutputDim(c->cd, c->xd, c->wd, &on, &oc, &oh, &ow));
  PetscCheck(on == n && oc == Cout && oh == Ho && ow == Wo, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Layer %s: cuDNN's output %d x %d x %d x %d differs from the layer's %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT, ((PetscObject)l)->name, on, oc, oh, ow, n, Cout, Ho, Wo);
  NNCallCUDNN(cudnnSetTensor4dDescriptor(c->yd, CUDNN_TENSOR_NCHW, dt, (int)n, (int)Cout, (int)Ho, (int)Wo));

  /* the first deterministic algorithm cuDNN's heuristics rank that succeeds (else the first that succeeds) */
  NNCallCUDNN(cudnnGetConvolutionForwardAlgorithm_v7(h, c->xd, c->wd, c->cd, c->yd, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &cnt, pf));
  for (k = 0; k < cnt && !(pf[k].status == CUDNN_STATUS_SUCCESS && pf[k].determinism == CUDNN_DETERMINISTIC); k++) { }
  if (k == cnt)
    for (k = 0; k < cnt && pf[k].status != CUDNN_STATUS_SUCCESS; k++) { }
  PetscCheck(k < cnt, PETSC_COMM_SELF, PETSC_ERR_SUP, "Layer %s (%s): cuDNN has no forward convolution algorithm for this shape in %s", ((PetscObject)l)->name, ((PetscObject)l)->type_name, NNPrecisions[c->prec]);
  c->fwd = pf[k].algo;
  NNCallCUDNN(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, c->wd, c->yd, c->cd, c->xd, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &cnt, pd));
  for (k = 0; k < cnt && !(pd[k].status == CUDNN_STATUS_SUCCESS && pd[k].determinism == CUDNN_DETERMINISTIC); k++) { }
  if (k == cnt)
    for (k = 0; k < cnt && pd[k].status != CUDNN_STATUS_SUCCESS; k++) { }
  PetscCheck(k < cnt, PETSC_COMM_SELF, PETSC_ERR_SUP, "Layer %s (%s): cuDNN has no backward-data convolution algorithm for this shape in %s", ((PetscObject)l)->name, ((PetscObject)l)->type_name, NNPrecisions[c->prec]);
  c->bwdd = pd[k].algo;
  NNCallCUDNN(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, c->xd, c->yd, c->cd, c->wd, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &cnt, pw));
  for (k = 0; k < cnt && !(pw[k].status == CUDNN_STATUS_SUCCESS && pw[k].determinism == CUDNN_DETERMINISTIC); k++) { }
  if (k == cnt)
    for (k = 0; k < cnt && pw[k].status != CUDNN_STATUS_SUCCESS; k++) { }
  PetscCheck(k < cnt, PETSC_COMM_SELF, PETSC_ERR_SUP, "Layer %s (%s): cuDNN has no backward-filter convolution algorithm for this shape in %s", ((PetscObject)l)->name, ((PetscObject)l)->type_name, NNPrecisions[c->prec]);
  c->bwdf = pw[k].algo;
  NNCallCUDNN(cudnnGetConvolutionForwardWorkspaceSize(h, c->xd, c->wd, c->cd, c->yd, c->fwd, &w1));
  ws = PetscMax(ws, w1);
  NNCallCUDNN(cudnnGetConvolutionBackwardDataWorkspaceSize(h, c->wd, c->yd, c->cd, c->xd, c->bwdd, &w1));
  ws = PetscMax(ws, w1);
  NNCallCUDNN(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, c->xd, c->yd, c->cd, c->wd, c->bwdf, &w1));
  ws = PetscMax(ws, w1);
  if (ws > c->nwork) { /* grown only: the workspace of the largest need met */
    PetscCall(NNCUDAFree(&c->work));
    PetscCall(NNCUDAMalloc(ws, &c->work));
    c->nwork = ws;
  }
  c->n    = n;
  c->tf32 = l->dev.tf32;
  *cc     = c;
  PetscFunctionReturn(0);
}

/* alpha = 1, beta = 0 or 1 in the type cuDNN wants for the data type */
static const void *NNConvScalar(NNLayer l, int v)
{
  static const double dv[2] = {0.0, 1.0};
  static const float  fv[2] = {0.0f, 1.0f};
  return l->dev.prec == NN_PRECISION_SINGLE ? (const void *)&fv[v] : (const void *)&dv[v];
}

static PetscLogDouble NNConvDeviceFlops(NNLayer l, PetscInt n)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;
  return 2.0 * n * d->filters * l->outshape.dim[1] * l->outshape.dim[2] * (l->inshape.dim[0] / d->groups) * d->k[0] * d->k[1];
}

PetscErrorCode NNConvForwardCUDNN(NNLayer l, PetscInt n, const void *x, void *y)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;
  NNConvCUDA   *c;
  cudnnHandle_t h;
  cudaStream_t  s;
  int           single = l->dev.prec == NN_PRECISION_SINGLE;
  size_t        es     = single ? sizeof(float) : sizeof(double);
  PetscInt      Cin = l->inshape.dim[0], Cout = d->filters;
  size_t        P = (size_t)l->inshape.dim[1] * l->inshape.dim[2], Po = (size_t)l->outshape.dim[1] * l->outshape.dim[2];

  PetscFunctionBegin;
  PetscCall(NNConvCUDASetUp(l, n, &c));
  PetscCall(NNCUDAGetDNN(&h));
  PetscCall(NNCUDAGetStream(&s));
  NNCallCUDA(NNCUDASpatialPermute(single, 0, P, l->nbatch, n, Cin, c->xn, (void *)x, s));
  NNCallCUDNN(cudnnConvolutionForward(h, NNConvScalar(l, 1), c->xd, c->xn, c->wd, l->dev.theta, c->cd, c->fwd, c->work, c->nwork, NNConvScalar(l, 0), c->yd, c->yn));
  if (d->bias) NNCallCUDNN(cudnnAddTensor(h, NNConvScalar(l, 1), c->bd, (const char *)l->dev.theta + (size_t)(l->nparam - Cout) * es, NNConvScalar(l, 1), c->yd, c->yn));
  NNCallCUDA(NNCUDASpatialPermute(single, 1, Po, l->nbatch, n, Cout, c->yn, y, s));
  PetscCall(PetscLogFlops(NNConvDeviceFlops(l, n)));
  PetscFunctionReturn(0);
}

PetscErrorCode NNConvBackwardCUDNN(NNLayer l, PetscInt n, const void *x, const void *dy, void *dx)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;
  NNConvCUDA   *c;
  cudnnHandle_t h;
  cudaStream_t  s;
  int           single = l->dev.prec == NN_PRECISION_SINGLE;
  size_t        es     = single ? sizeof(float) : sizeof(double);
  PetscInt      Cin = l->inshape.dim[0], Cout = d->filters;
  size_t        P = (size_t)l->inshape.dim[1] * l->inshape.dim[2], Po = (size_t)l->outshape.dim[1] * l->outshape.dim[2];

  PetscFunctionBegin;
  PetscCall(NNConvCUDASetUp(l, n, &c));
  PetscCall(NNCUDAGetDNN(&h));
  PetscCall(NNCUDAGetStream(&s));
  /* x again: another pass (another batch size, NNPredict()) may have used the buffer since this batch's forward pass */
  NNCallCUDA(NNCUDASpatialPermute(single, 0, P, l->nbatch, n, Cin, c->xn, (void *)x, s));
  NNCallCUDA(NNCUDASpatialPermute(single, 0, Po, l->nbatch, n, Cout, c->yn, (void *)dy, s));
  NNCallCUDNN(cudnnConvolutionBackwardFilter(h, NNConvScalar(l, 1), c->xd, c->xn, c->yd, c->yn, c->cd, c->bwdf, c->work, c->nwork, NNConvScalar(l, 1), c->wd, l->dev.dtheta));
  if (d->bias) NNCallCUDNN(cudnnConvolutionBackwardBias(h, NNConvScalar(l, 1), c->yd, c->yn, NNConvScalar(l, 1), c->bd, (char *)l->dev.dtheta + (size_t)(l->nparam - Cout) * es));
  if (dx) {
    NNCallCUDNN(cudnnConvolutionBackwardData(h, NNConvScalar(l, 1), c->wd, l->dev.theta, c->yd, c->yn, c->cd, c->bwdd, c->work, c->nwork, NNConvScalar(l, 0), c->xd, c->dn));
    NNCallCUDA(NNCUDASpatialPermute(single, 1, P, l->nbatch, n, Cin, c->dn, dx, s)); /* slots >= n: zero, as on the CPU */
  }
  PetscCall(PetscLogFlops((dx ? 2 : 1) * NNConvDeviceFlops(l, n)));
  PetscFunctionReturn(0);
}
#endif
