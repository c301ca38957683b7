/*
   A sequential network on a CUDA GPU (-nn_device cuda; the design is in nndevice.c): the device arrays, the passes over
   the layers' device passes, the transfers at the boundaries and the device-time log events. Built with PETNN_HAVE_CUDA.

   All work goes to the package's one stream (src/sys/cuda/device_cuda.c) in order. The host waits for it where it needs
   a result: the output (forward), each layer's parameter gradient (backward, before layerdone: data-parallel reducers
   read it), the input gradient, and the end of the backward pass. Uploads from page-locked staging reuse a buffer only
   after such a wait.
*/
#include <petnn/private/cudaimpl.h>
#include <petnn/private/partitiondevice.h>

/* ---------------------------------------------------------------- device-time log events */
#define NN_MAX_DEVICE_EVENTS 64
static struct {
  char          name[64];
  PetscLogEvent fwd, bwd;
} NNDeviceEvents[NN_MAX_DEVICE_EVENTS];
static int           NNDeviceNumEvents = 0;
static PetscLogEvent NN_DevUpload = 0, NN_DevDownload = 0;

/* NNDevUpload, NNDevDownload: registered when the first network sets up its device arrays */
static PetscErrorCode NNDeviceRegisterEvents(void)
{
  PetscFunctionBegin;
  if (!NN_DevUpload) {
    PetscCall(NNLogEventRegister("NNDevUpload", NN_CLASSID, &NN_DevUpload));
    PetscCall(NNLogEventRegister("NNDevDownload", NN_CLASSID, &NN_DevDownload));
  }
  PetscFunctionReturn(0);
}

/* NNDevFwd_<type>, NNDevBwd_<type>, registered on first use */
static PetscErrorCode NNLayerGetDeviceEvents(const char type[], PetscLogEvent *fwd, PetscLogEvent *bwd)
{
  PetscBool match;
  char      fname[128], bname[128];
  int       k;

  PetscFunctionBegin;
  for (int i = 0; i < NNDeviceNumEvents; i++) {
    PetscCall(PetscStrcmp(type, NNDeviceEvents[i].name, &match));
    if (match) {
      *fwd = NNDeviceEvents[i].fwd;
      *bwd = NNDeviceEvents[i].bwd;
      PetscFunctionReturn(0);
    }
  }
  PetscCheck(NNDeviceNumEvents < NN_MAX_DEVICE_EVENTS, PETSC_COMM_SELF, PETSC_ERR_SUP, "Too many layer types on the device (at most %d)", NN_MAX_DEVICE_EVENTS);
  k = NNDeviceNumEvents++;
  PetscCall(PetscStrncpy(NNDeviceEvents[k].name, type, sizeof(NNDeviceEvents[k].name)));
  PetscCall(PetscSNPrintf(fname, sizeof(fname), "NNDevFwd_%s", type));
  PetscCall(PetscSNPrintf(bname, sizeof(bname), "NNDevBwd_%s", type));
  PetscCall(NNLogEventRegister(fname, NNLAYER_CLASSID, &NNDeviceEvents[k].fwd));
  PetscCall(NNLogEventRegister(bname, NNLAYER_CLASSID, &NNDeviceEvents[k].bwd));
  *fwd = NNDeviceEvents[k].fwd;
  *bwd = NNDeviceEvents[k].bwd;
  PetscFunctionReturn(0);
}

/* whether -log_view (or another default log handler) is collecting: then the layers' CUDA events are recorded */
static PetscBool NNDeviceTiming(void)
{
#if defined(PETSC_USE_LOG) && PETSC_VERSION_LT(3, 20, 0)
  return (PetscBool)(PetscLogPLB && petsc_stageLog && petsc_stageLog->stageInfo[petsc_stageLog->curStage].perfInfo.active);
#elif defined(PETSC_USE_LOG) /* 3.20 replaced the stage log by log handlers */
  PetscLogHandler h = NULL;
  if (PetscLogGetDefaultHandler(&h)) return PETSC_FALSE;
  return (PetscBool)(h != NULL);
#else
  return PETSC_FALSE;
#endif
}

/* adds the CUDA-event time between a and b (both complete) to log event e of the current stage. The event was begun
   and ended around the launch of the kernels (its count, its flops and the host's enqueue time); this adds the time
   the GPU spent on them, so NNDevFwd_<type>'s time is enqueue plus device time and its Mflop/s the device rate. */
static PetscErrorCode NNDeviceLogTime(PetscLogEvent e, cudaEvent_t a, cudaEvent_t b)
{
  float ms = 0;

  PetscFunctionBegin;
#if defined(PETSC_USE_LOG) && PETSC_VERSION_LT(3, 20, 0)
  {
    PetscEventPerfLog log = petsc_stageLog->stageInfo[petsc_stageLog->curStage].eventLog;
    NNCallCUDA(cudaEventElapsedTime(&ms, a, b));
    if (e < log->numEvents && log->eventInfo[e].active) log->eventInfo[e].time += ms * 1e-3;
  }
#elif defined(PETSC_USE_LOG) /* the default log handler's record of event e in the current stage */
  {
    PetscLogHandler     h = NULL;
    PetscLogState       state;
    PetscLogStage       stage;
    PetscEventPerfInfo *info;
    PetscCall(PetscLogGetDefaultHandler(&h));
    if (h) {
      PetscCall(PetscLogGetState(&state));
      PetscCall(PetscLogStateGetCurrentStage(state, &stage));
      PetscCall(PetscLogHandlerGetEventPerfInfo(h, stage, e, &info));
      NNCallCUDA(cudaEventElapsedTime(&ms, a, b));
      if (info->active) info->time += ms * 1e-3;
    }
  }
#else
  (void)e, (void)a, (void)b, (void)ms;
#endif
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- device arrays */
PetscErrorCode NNDeviceReset_CUDA(NN net)
{
  NNDeviceCUDA *c = (NNDeviceCUDA *)net->dev.cuda;

  PetscFunctionBegin;
  if (!c) PetscFunctionReturn(0);
  PetscCall(NNDeviceSyncHost_CUDA(net)); /* parameters newer on the device are not lost */
  for (PetscInt i = 0; i < c->nact; i++) {
    if (c->act) PetscCall(NNCUDAFree(&c->act[i]));
    if (c->dact) PetscCall(NNCUDAFree(&c->dact[i]));
  }
  if ((void *)c->master != c->theta) PetscCall(NNCUDAFree((void **)&c->master));
  PetscCall(NNCUDAFree(&c->theta));
  PetscCall(NNCUDAFree(&c->dtheta));
  PetscCall(NNDeviceGraphReset_CUDA(c));
  PetscCall(NNCUDAFree((void **)&c->target));
  PetscCall(NNCUDAFree((void **)&c->lossw));
  PetscCall(NNCUDAFreeHost(&c->hx));
  PetscCall(NNCUDAFreeHost(&c->hy));
  PetscCall(NNCUDAFreeHost(&c->hg));
  for (PetscInt k = 0; k < 4 * c->nlayers && c->ev; k++)
    if (c->ev[k]) NNCallCUDA(cudaEventDestroy(c->ev[k]));
  PetscCall(PetscFree(c->ev));
  PetscCall(PetscFree4(c->len, c->act, c->dact, c->spatial));
  PetscCall(PetscFree(net->dev.cuda));
  PetscFunctionReturn(0);
}

/* after NNSetUp() made the activation Vecs: their device copies, the parameter copy and its gradient, staging, events */
PetscErrorCode NNDeviceSetUp_CUDA(NN net)
{
  NNDeviceCUDA *c;
  PetscInt      L = net->nlayers;

  PetscFunctionBegin;
  PetscCall(NNDeviceReset_CUDA(net));
  PetscCall(NNCUDAInitialize(PetscObjectComm((PetscObject)net)));
  PetscCall(NNDeviceRegisterEvents());
  PetscCall(PetscNew(&c));
  net->dev.cuda = c; /* from here on NNDeviceReset_CUDA() frees what was made, also after an error */
  c->prec       = net->prec.type;
  c->esize      = c->prec == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  c->nact       = net->nact;
  c->nlayers    = L;
  PetscCall(PetscCalloc4(c->nact, &c->len, c->nact, &c->act, c->nact, &c->dact, c->nact, &c->spatial));
  for (PetscInt i = 0; i < c->nact; i++) {
    DM dm;
    PetscCall(VecGetDM(net->act[i], &dm));
    c->spatial[i] = (PetscBool)!!dm;
    PetscCall(VecGetLocalSize(net->act[i], &c->len[i]));
    PetscCall(NNCUDAMalloc(c->len[i] * c->esize, &c->act[i]));
    PetscCall(NNCUDAMalloc(c->len[i] * c->esize, &c->dact[i]));
    c->bytes += 2 * c->len[i] * c->esize;
  }
  PetscCall(NNDeviceGraphSetUp_CUDA(net, c));
  PetscCall(VecGetLocalSize(net->theta, &c->np));
  PetscCall(NNCUDAMalloc(c->np * c->esize, &c->theta));
  PetscCall(NNCUDAMalloc(c->np * c->esize, &c->dtheta));
  c->bytes += 2 * c->np * c->esize;
  if (c->prec == NN_PRECISION_SINGLE) {
    PetscCall(NNCUDAMalloc(c->np * sizeof(double), (void **)&c->master));
    c->bytes += c->np * sizeof(double);
  } else c->master = (double *)c->theta;
  /* staging: float conversions of the input and the output's gradient; every precision stages the output (its download
     need not be waited for at once), the gradients (they are added into the host gradient) and the input gradient */
  if (c->prec == NN_PRECISION_SINGLE) PetscCall(NNCUDAMallocHost(c->len[0] * c->esize, "page-locked staging", &c->hx));
  PetscCall(NNCUDAMallocHost(c->len[L] * c->esize, "page-locked staging", &c->hy));
  PetscCall(NNCUDAMallocHost(PetscMax(c->np, c->len[0]) * c->esize, "page-locked staging", &c->hg));
  PetscCall(NNCUDAMalloc(c->len[L] * sizeof(double), (void **)&c->target)); /* class indices need fewer */
  PetscCall(NNCUDAMalloc(NNCUDALossWorkSize() * sizeof(double), (void **)&c->lossw));
  c->bytes += (c->len[L] + NNCUDALossWorkSize()) * sizeof(double);
  PetscCall(PetscCalloc1(4 * L, &c->ev));
  for (PetscInt k = 0; k < 4 * L; k++) NNCallCUDA(cudaEventCreate(&c->ev[k]));
  PetscFunctionReturn(0);
}

PetscErrorCode NNDeviceView_CUDA(NN net, PetscViewer v)
{
  NNDeviceCUDA *c = (NNDeviceCUDA *)net->dev.cuda;
  char          name[256];
  PetscBool     ondevice;

  PetscFunctionBegin;
  PetscCall(NNCUDAGetDeviceName(sizeof(name), name));
  PetscCall(NNDeviceLossIsOnDevice_CUDA(net, &ondevice));
  PetscCall(PetscViewerASCIIPrintf(v, "device: cuda (%s), precision %s: activations, their gradients and a parameter copy on the GPU; the parameter Vec (the master outside resident training), checkpoints and the buffers in double on the host; loss %s\n", name, NNPrecisions[net->prec.type], ondevice ? "on the GPU in double" : "on the host in double"));
  PetscCall(PetscViewerASCIIPushTab(v));
  if (net->prec.type == NN_PRECISION_SINGLE) PetscCall(PetscViewerASCIIPrintf(v, "float GEMMs: %s\n", net->dev.tf32 ? "TF32 tensor cores allowed (-nn_cuda_tf32)" : "full float products (-nn_cuda_tf32 false)"));
  if (c) PetscCall(PetscViewerASCIIPrintf(v, "device memory: %.3g MB\n", c->bytes / 1e6));
  PetscCall(PetscViewerASCIIPopTab(v));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- transfers */
/* m entries of the host array a into the device array d (float: converted in the page-locked stage first) */
static PetscErrorCode NNDeviceUpload(NNDeviceCUDA *c, PetscInt m, const PetscScalar *a, void *stage, void *d, cudaStream_t s)
{
  PetscFunctionBegin;
  if (!m) PetscFunctionReturn(0);
  PetscCall(PetscLogEventBegin(NN_DevUpload, 0, 0, 0, 0));
  if (c->prec == NN_PRECISION_SINGLE) {
    float *f = (float *)stage;
    for (PetscInt k = 0; k < m; k++) f[k] = (float)a[k];
    NNCallCUDA(cudaMemcpyAsync(d, f, m * sizeof(float), cudaMemcpyHostToDevice, s));
  } else NNCallCUDA(cudaMemcpyAsync(d, a, m * sizeof(double), cudaMemcpyHostToDevice, s)); /* pageable: returns once staged */
  PetscCall(PetscLogEventEnd(NN_DevUpload, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* m entries of the device array d into the host array a, written or (add) added. Under -log_view it waits for the
   stream first, outside the event, so that NNDevDownload times the copy alone; otherwise the one wait after the copy
   is all (a wait is a stall of the step: tests/device_step.c counts them) */
static PetscErrorCode NNDeviceDownload(NNDeviceCUDA *c, PetscInt m, const void *d, void *stage, PetscScalar *a, PetscBool add, cudaStream_t s)
{
  PetscFunctionBegin;
  if (!m) PetscFunctionReturn(0);
  if (NNDeviceTiming()) NNCallCUDA(cudaStreamSynchronize(s));
  PetscCall(PetscLogEventBegin(NN_DevDownload, 0, 0, 0, 0));
  if (c->prec == NN_PRECISION_SINGLE || add) {
    NNCallCUDA(cudaMemcpyAsync(stage, d, m * c->esize, cudaMemcpyDeviceToHost, s));
    NNCallCUDA(cudaStreamSynchronize(s));
    if (c->prec == NN_PRECISION_SINGLE) {
      const float *f = (const float *)stage;
      if (add)
        for (PetscInt k = 0; k < m; k++) a[k] += f[k];
      else
        for (PetscInt k = 0; k < m; k++) a[k] = f[k];
    } else {
      const double *g = (const double *)stage;
      for (PetscInt k = 0; k < m; k++) a[k] += g[k];
    }
  } else {
    NNCallCUDA(cudaMemcpyAsync(a, d, m * sizeof(double), cudaMemcpyDeviceToHost, s));
    NNCallCUDA(cudaStreamSynchronize(s));
  }
  PetscCall(PetscLogEventEnd(NN_DevDownload, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* the entries of activation i a pass over n samples uses: n samples of a sequential batch, the whole local array of a
   spatial one ([pixel][slot][channel]: the slots of the pass are spread over it) */
static PetscInt NNDeviceLength(NN net, NNDeviceCUDA *c, PetscInt i, PetscInt n)
{
  return c->spatial[i] ? c->len[i] : n * (c->len[i] / net->nbatch);
}

/* the layers' slices of the device parameter copy and gradient */
static PetscErrorCode NNDeviceSetLayerPointers(NN net, NNDeviceCUDA *c)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < net->nlayers; i++) {
    NNLayer l    = net->layers[i];
    l->dev.prec   = c->prec;
    l->dev.tf32   = net->dev.tf32;
    l->dev.theta  = c->theta ? (const char *)c->theta + l->poff * c->esize : NULL;
    l->dev.dtheta = c->dtheta ? (char *)c->dtheta + l->poff * c->esize : NULL;
  }
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- the parameters on the device */
/* the device parameters made current: uploaded (double, then converted to the float working copy on the device) when
   the parameter Vec changed on the host since they were last copied; an error when the device also holds newer ones */
static PetscErrorCode NNDeviceParametersCurrent(NN net, NNDeviceCUDA *c, cudaStream_t s)
{
  PetscObjectState   st;
  const PetscScalar *a;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)net->theta, &st));
  if (net->dev.resident && c->synced && st == c->hoststate) PetscFunctionReturn(0);
  PetscCheck(!c->newer, PetscObjectComm((PetscObject)net), PETSC_ERR_ORDER, "The network's parameter Vec was changed on the host while optimizer steps on the device made newer parameters there; copy those back first (NNTrain() does so at the end of every epoch and before checkpoints)");
  if (c->np) {
    PetscCall(PetscLogEventBegin(NN_DevUpload, 0, 0, 0, 0));
    PetscCall(VecGetArrayRead(net->theta, &a));
    NNCallCUDA(cudaMemcpyAsync(c->master, a, c->np * sizeof(double), cudaMemcpyHostToDevice, s)); /* pageable: returns once staged */
    PetscCall(VecRestoreArrayRead(net->theta, &a));
    if (c->prec == NN_PRECISION_SINGLE) NNCallCUDA(NNCUDADoubleToFloat((size_t)c->np, c->master, (float *)c->theta, s));
    PetscCall(PetscLogEventEnd(NN_DevUpload, 0, 0, 0, 0));
  }
  c->hoststate = st;
  c->synced    = PETSC_TRUE;
  PetscFunctionReturn(0);
}

PetscErrorCode NNDeviceGetParameters_CUDA(NN net, NNDeviceParameters *p)
{
  NNDeviceCUDA *c = (NNDeviceCUDA *)net->dev.cuda;
  cudaStream_t  s;

  PetscFunctionBegin;
  PetscCheck(c, PetscObjectComm((PetscObject)net), PETSC_ERR_ORDER, "The network's device arrays are not set up: call NNSetUp()");
  PetscCall(NNCUDAGetStream(&s));
  PetscCall(NNDeviceParametersCurrent(net, c, s));
  p->n      = c->np;
  p->single = (PetscBool)(c->prec == NN_PRECISION_SINGLE);
  p->master = c->master;
  p->work   = p->single ? (float *)c->theta : NULL;
  p->grad   = c->dtheta;
  PetscFunctionReturn(0);
}

/* newer device parameters (optimizer steps on the device) copied into the parameter Vec */
PetscErrorCode NNDeviceSyncHost_CUDA(NN net)
{
  NNDeviceCUDA *c = (NNDeviceCUDA *)net->dev.cuda;
  PetscScalar  *a;
  cudaStream_t  s;

  PetscFunctionBegin;
  if (!c || !c->newer) PetscFunctionReturn(0);
  PetscCall(NNCUDAGetStream(&s));
  NNCallCUDA(cudaStreamSynchronize(s));
  PetscCall(PetscLogEventBegin(NN_DevDownload, 0, 0, 0, 0));
  PetscCall(VecGetArrayWrite(net->theta, &a));
  NNCallCUDA(cudaMemcpyAsync(a, c->master, c->np * sizeof(double), cudaMemcpyDeviceToHost, s));
  NNCallCUDA(cudaStreamSynchronize(s));
  PetscCall(VecRestoreArrayWrite(net->theta, &a));
  PetscCall(PetscLogEventEnd(NN_DevDownload, 0, 0, 0, 0));
  PetscCall(PetscObjectStateGet((PetscObject)net->theta, &c->hoststate));
  c->newer = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- passes */
/*
   NNDeviceForwardLayers_CUDA - uploads the parameters and the input batch x0, runs every layer's forward device pass and
   downloads the output into act[nlayers] (double); without wait, the download to the page-locked stage is only
   enqueued and NNDeviceForwardLayersEnd_CUDA() completes it
*/
PetscErrorCode NNDeviceForwardLayers_CUDA(NN net, PetscInt n, Vec x0, PetscBool wait)
{
  NNDeviceCUDA      *c = (NNDeviceCUDA *)net->dev.cuda;
  PetscInt           L = net->nlayers;
  const PetscScalar *a;
  cudaStream_t       s;
  PetscBool          timing = NNDeviceTiming(), shard = (PetscBool)(net->training && (net->pass.rngshard[0] || net->pass.rngshard[1]));

  PetscFunctionBegin;
  PetscCheck(c, PetscObjectComm((PetscObject)net), PETSC_ERR_ORDER, "The network's device arrays are not set up: call NNSetUp()");
  PetscCall(NNCUDAGetStream(&s));
  PetscCall(NNDeviceParametersCurrent(net, c, s));
  PetscCall(NNDeviceSetLayerPointers(net, c));
  c->dyready = PETSC_FALSE;
  PetscCall(VecGetArrayRead(x0, &a));
  PetscCall(NNDeviceUpload(c, NNDeviceLength(net, c, 0, n), a, c->hx, c->act[0], s));
  PetscCall(VecRestoreArrayRead(x0, &a));
  for (PetscInt t = 0; t < L; t++) { /* graph networks: in their topological order */
    PetscInt      i     = net->graph.on ? net->graph.order[t] : t;
    NNLayer       l     = net->layers[i];
    PetscInt      draws = 0;
    PetscLogEvent fwd, bwd;
    PetscCall(NNLayerGetDeviceEvents(((PetscObject)l)->type_name, &fwd, &bwd));
    /* a data group's shard of a larger batch: the random numbers (dropout masks, drawn on the host) of the samples
       before and after it are skipped, as the CPU pass does, so the masks are those one rank would draw */
    if (shard) PetscCall(NNLayerGetRandomDraws(l, &draws));
    NNRandomSkip(&net->rng, (PetscInt64)net->pass.rngshard[0] * draws);
    if (timing) NNCallCUDA(cudaEventRecord(c->ev[4 * i], s));
    PetscCall(PetscLogEventBegin(fwd, l, 0, 0, 0));
    if (net->graph.on) PetscCall(NNDeviceGraphLayerForward_CUDA(net, c, i, n));
    else PetscCall(NNLayerForwardDevice(l, NNLayerDeviceSamples(l, c->spatial[i], n), c->act[i], c->act[i + 1]));
    PetscCall(PetscLogEventEnd(fwd, l, 0, 0, 0));
    if (timing) NNCallCUDA(cudaEventRecord(c->ev[4 * i + 1], s));
    NNRandomSkip(&net->rng, (PetscInt64)net->pass.rngshard[1] * draws);
  }
  /* the output down to the page-locked stage, in its precision; under -log_view at once, the copy timed alone */
  c->ypending = NNDeviceLength(net, c, L, n);
  c->ywaited  = PETSC_FALSE;
  if (c->ypending) {
    if (timing) NNCallCUDA(cudaStreamSynchronize(s));
    PetscCall(PetscLogEventBegin(NN_DevDownload, 0, 0, 0, 0));
    NNCallCUDA(cudaMemcpyAsync(c->hy, c->act[L], c->ypending * c->esize, cudaMemcpyDeviceToHost, s));
    if (timing) NNCallCUDA(cudaStreamSynchronize(s));
    c->ywaited = timing;
    PetscCall(PetscLogEventEnd(NN_DevDownload, 0, 0, 0, 0));
  }
  if (wait || timing) PetscCall(NNDeviceForwardLayersEnd_CUDA(net));
  PetscFunctionReturn(0);
}

/* the output's download started by NNDeviceForwardLayers_CUDA() waited for (unless a wait since did) and written into
   act[nlayers] in double; the layers' forward times logged under -log_view */
PetscErrorCode NNDeviceForwardLayersEnd_CUDA(NN net)
{
  NNDeviceCUDA *c = (NNDeviceCUDA *)net->dev.cuda;
  PetscInt      L = net->nlayers;
  PetscScalar  *y;
  cudaStream_t  s;

  PetscFunctionBegin;
  if (!c || !c->ypending) PetscFunctionReturn(0);
  PetscCall(NNCUDAGetStream(&s));
  if (!c->ywaited) NNCallCUDA(cudaStreamSynchronize(s));
  PetscCall(VecGetArrayWrite(net->act[L], &y));
  if (c->prec == NN_PRECISION_SINGLE) {
    const float *f = (const float *)c->hy;
    for (PetscInt k = 0; k < c->ypending; k++) y[k] = f[k];
  } else PetscCall(PetscArraycpy(y, (const PetscScalar *)c->hy, c->ypending));
  PetscCall(VecRestoreArrayWrite(net->act[L], &y));
  c->ypending = 0;
  c->ywaited  = PETSC_FALSE;
  if (NNDeviceTiming())
    for (PetscInt i = 0; i < L; i++) {
      PetscLogEvent fwd, bwd;
      PetscCall(NNLayerGetDeviceEvents(((PetscObject)net->layers[i])->type_name, &fwd, &bwd));
      PetscCall(NNDeviceLogTime(fwd, c->ev[4 * i], c->ev[4 * i + 1]));
    }
  PetscFunctionReturn(0);
}

/* after the backward device pass of layer i, when its gradient slice is final: the nccl reducer all-reduces it on the
   device (resident parameters); a host reducer gets it downloaded into dtheta (data parallel) */
static PetscErrorCode NNDeviceLayerDone(NN net, NNDeviceCUDA *c, PetscInt i, PetscScalar *dtheta, cudaStream_t s)
{
  NNBackwardCallbacks *cb = &net->pass.backward;
  NNLayer              l  = net->layers[i];

  PetscFunctionBegin;
  if (net->dev.resident && cb->layerdonedevice) PetscCall((*cb->layerdonedevice)(net, i, c->dtheta, cb->ctx));
  else if (cb->layerdone) { /* the layer's gradient into the Vec now, all-reduce the finished buckets */
    if (l->nparam) PetscCall(NNDeviceDownload(c, l->nparam, l->dev.dtheta, c->hg, dtheta + l->poff, PETSC_TRUE, s));
    PetscCall((*cb->layerdone)(net, i, dtheta, cb->ctx));
  }
  PetscFunctionReturn(0);
}

/*
   NNDeviceBackward_CUDA - after NNDeviceForwardLayers_CUDA() on the same batch (the device activations and parameter
   copy are still those): uploads the loss gradient dact[nlayers] (unless the loss on the device wrote it), runs the
   backward device passes from the last layer down and adds the parameter gradient into dtheta (host, double): layer
   by layer, each followed by layerdone, when there is a layerdone callback (data parallel), else all at once at the
   end, and not at all when the parameters are resident (NNDeviceSetResident(): a device optimizer step follows);
   downloads the input gradient into dx0 when need[0] and dx0. need[i]: a sequential network's layer i computes its
   input gradient; a graph network's node i needs a gradient (net->graph.need)
*/
PetscErrorCode NNDeviceBackward_CUDA(NN net, PetscInt n, Vec x0 PETSC_UNUSED, Vec dx0, PetscScalar *dtheta, PetscBool need[])
{
  NNDeviceCUDA        *c  = (NNDeviceCUDA *)net->dev.cuda;
  NNBackwardCallbacks *cb = &net->pass.backward;
  PetscInt             L  = net->nlayers;
  const PetscScalar   *a;
  cudaStream_t         s;
  PetscBool            timing = NNDeviceTiming();

  PetscFunctionBegin;
  PetscCheck(c, PetscObjectComm((PetscObject)net), PETSC_ERR_ORDER, "The network's device arrays are not set up: call NNSetUp()");
  PetscCall(NNCUDAGetStream(&s));
  PetscCall(NNDeviceSetLayerPointers(net, c));
  if (!c->dyready) { /* else the loss on the device wrote it */
    PetscCall(VecGetArrayRead(net->dact[L], &a));
    PetscCall(NNDeviceUpload(c, NNDeviceLength(net, c, L, n), a, c->hy, c->dact[L], s));
    PetscCall(VecRestoreArrayRead(net->dact[L], &a));
  }
  c->dyready = PETSC_FALSE;
  if (c->np) NNCallCUDA(cudaMemsetAsync(c->dtheta, 0, c->np * c->esize, s));
  if (net->graph.on)
    for (PetscInt i = 0; i < L; i++) net->graph.done[i] = PETSC_FALSE;
  for (PetscInt t = L - 1, low = L; t >= 0; t--) { /* graph networks: in reverse topological order */
    PetscInt      i = net->graph.on ? net->graph.order[t] : t;
    NNLayer       l = net->layers[i];
    PetscLogEvent fwd, bwd;
    PetscBool     run = (PetscBool)(!net->graph.on || need[i + 1]); /* graph: a layer whose output needs no gradient has no parameters and nothing before it needs one */
    PetscCall(NNLayerGetDeviceEvents(((PetscObject)l)->type_name, &fwd, &bwd));
    if (timing) NNCallCUDA(cudaEventRecord(c->ev[4 * i + 2], s));
    PetscCall(PetscLogEventBegin(bwd, l, 0, 0, 0));
    if (run && net->graph.on) PetscCall(NNDeviceGraphLayerBackward_CUDA(net, c, i, n, s));
    else if (run) PetscCall(NNLayerBackwardDevice(l, NNLayerDeviceSamples(l, c->spatial[i], n), c->act[i], c->act[i + 1], c->dact[i + 1], need[i] ? c->dact[i] : NULL));
    PetscCall(PetscLogEventEnd(bwd, l, 0, 0, 0));
    if (timing) NNCallCUDA(cudaEventRecord(c->ev[4 * i + 3], s));
    /* graph: the parameter slices lie in list order, so layers low .. L-1 all done make the gradient from low's on final */
    if (!net->graph.on) PetscCall(NNDeviceLayerDone(net, c, i, dtheta, s));
    else {
      net->graph.done[i] = PETSC_TRUE;
      while (low > 0 && net->graph.done[low - 1]) PetscCall(NNDeviceLayerDone(net, c, --low, dtheta, s));
    }
  }
  /* the whole gradient at once; resident, it stays on the device for the optimizer's device step */
  if (!cb->layerdone && !net->dev.resident) PetscCall(NNDeviceDownload(c, c->np, c->dtheta, c->hg, dtheta, PETSC_TRUE, s));
  if (need[0] && dx0) {
    PetscScalar *dx;
    PetscCall(VecGetArray(dx0, &dx));
    PetscCall(NNDeviceDownload(c, NNDeviceLength(net, c, 0, n), c->dact[0], c->hg, dx, PETSC_FALSE, s));
    PetscCall(VecRestoreArray(dx0, &dx));
  }
  if (!net->dev.resident || timing) NNCallCUDA(cudaStreamSynchronize(s)); /* the staging buffers are free again */
  if (timing) {
    for (PetscInt i = 0; i < L; i++) {
      PetscLogEvent fwd, bwd;
      PetscCall(NNLayerGetDeviceEvents(((PetscObject)net->layers[i])->type_name, &fwd, &bwd));
      PetscCall(NNDeviceLogTime(bwd, c->ev[4 * i + 2], c->ev[4 * i + 3]));
    }
  }
  PetscFunctionReturn(0);
}
