/*
   The device (-nn_device cpu|cuda): where the activations live and the passes run. Like the precision
   (nnprecision.c), the device is a property of the activations, not a fork of the network: on a GPU the network keeps
   device copies of act[] and dact[] and of the parameters, runs the layers' device passes (ops forwarddevice and
   backwarddevice), and meets the host Vecs only at the boundaries: the input batch is uploaded, the output is
   downloaded, the loss is evaluated on the device in double (NNDeviceLossEvaluate(): the targets go up, the loss
   value comes down; other loss types on the host, the gradient going up) and the input gradient is downloaded when
   asked for.

   The parameters have two regimes. Outside NNTrain() (and in NNTrain() with data groups, tournaments or spectral
   normalization) the parameter Vec is the master: it is uploaded at the start of every forward pass and the gradient
   is added into the gradient Vec (layer by layer when a reducer waits for it, else at once). In NNTrain() on one rank
   with an optimizer that has a device step (sgd, adam, adamw) the parameters are resident (NNDeviceSetResident()):
   the device holds the master copy in double (and the float copy the passes read in single precision), the gradient
   stays there, and the optimizer steps there on device copies of its state (src/opt/interface/optdevice.c); the Vecs
   are brought up to date before checkpoints and at the end of every epoch.

   This file is built always; the CUDA parts are in nndevice_cuda.c (CMake's PETNN_WITH_CUDA). Without CUDA, or
   without a GPU, NNSetDevice(net, NN_DEVICE_CUDA) is an error that says why.
*/
#include <petnn/private/nnimpl.h>
#include <petnn/private/deviceimpl.h>
#if defined(PETNN_HAVE_CUDA)
  #include <petnn/private/cudaimpl.h>
#endif

const char *const NNDevices[] = {"cpu", "cuda", "NNDevice", "NN_DEVICE_", NULL};

/*@C
   NNDeviceIsAvailable - says whether networks can run on a device in this build and on this machine

   Not Collective

   Input Parameters:
+  dev - `NN_DEVICE_CPU` or `NN_DEVICE_CUDA`
-  len - the size of why[] (may be 0)

   Output Parameters:
+  avail - `PETSC_TRUE` when `NNSetDevice()` accepts dev here
-  why - when not available, the reason (may be NULL): a PetNN built without CUDA, or no GPU found (with CUDA's error)

   Level: intermediate

.seealso: `NNSetDevice()`
@*/
PetscErrorCode NNDeviceIsAvailable(NNDevice dev, PetscBool *avail, size_t len, char why[])
{
  PetscFunctionBegin;
  PetscAssertPointer(avail, 2);
  *avail = PETSC_FALSE;
  if (why && len) why[0] = 0;
  if (dev == NN_DEVICE_CPU) {
    *avail = PETSC_TRUE;
    PetscFunctionReturn(0);
  }
  if (dev != NN_DEVICE_CUDA) {
    if (why && len) PetscCall(PetscSNPrintf(why, len, "unknown device %d (valid: cpu, cuda)", (int)dev));
    PetscFunctionReturn(0);
  }
#if defined(PETNN_HAVE_CUDA)
  {
    PetscInt count;
    PetscCall(NNCUDAGetDeviceCount(&count, len, why));
    *avail = (PetscBool)(count > 0);
  }
#else
  if (why && len) PetscCall(PetscSNPrintf(why, len, "this PetNN was built without CUDA (CMake found no nvcc, CUDA runtime and cuBLAS, or -DPETNN_WITH_CUDA=OFF)"));
#endif
  PetscFunctionReturn(0);
}

/*@
   NNSetDevice - sets where the network's activations live and its forward and backward passes run

   Logically Collective

   Input Parameters:
+  net - the network
-  dev - `NN_DEVICE_CPU` (the default) or `NN_DEVICE_CUDA`

   Options Database Keys:
+  -nn_device <cpu,cuda> - the device
-  -nn_cuda_tf32 <bool> - single-precision GEMMs on the GPU may use TF32 tensor cores (`NNSetCUDATF32()`; default false)

   Notes:
   On a GPU the activations, their gradients and a copy of the parameters are PetNN's own device arrays in the
   precision of `NNSetPrecision()`: dense layers run through cuBLAS (`cublasGemmEx()`), conv2d through cuDNN (in a PetNN
   built with it) or PetNN's im2col kernels and cuBLAS GEMMs (`-<layer>device_algorithm`), conv3d and the transposed
   convolutions through the latter, and the norms, pooling, upsampling, dropout, the spatial layout changes, the
   pointwise activations, residual layers, the graph layers (add, concat, split) and the explicit schemes of ODE blocks
   through PetNN's kernels. The input batch is uploaded and the output downloaded; mse, l1, huber, bce_with_logits and
   cross_entropy are evaluated on the GPU in double (the targets uploaded), other losses on the host (the output's
   gradient uploaded). `NNTrain()` on one rank with sgd, adam or adamw, or with data groups reduced by nccl, keeps the
   parameters, their gradient and the optimizer state on the GPU and steps there, copying them into their Vecs
   (`NNGetParameters()`, the optimizer's state) before every checkpoint and at the end of every epoch. Elsewhere
   (`NNLossGradient()` called directly, data groups reduced on the host, tournaments, spectral normalization, TAO) the
   parameter Vec is uploaded when it changed and the gradient added into the gradient Vec (`NNGetGradient()`), so
   data-parallel training reduces it as on the CPU. Each rank uses GPU (its rank on the node) modulo (the GPUs it sees).

   Only networks (sequential or graph) whose layers all have device passes run on a device (the list is in the error
   message and tutorial 15; partitioned dense and convolution layers and sharded layers of any of them too; graph networks
   in either precision, unlike the CPU);
   `NNSetUp()` names the first layer that has none. Spatial (DMDA) activations split over ranks run on a device through
   to_spatial, spatial_flatten, the pointwise activations, conv2d/conv3d (GEMM passes) and max and average pooling: the
   halos are exchanged through page-locked host buffers with the DMDA's own scatter (MPI need not be CUDA-aware);
   `NNSetUp()` refuses such a network with any other layer type on them, naming the layer.
   `NN_DEVICE_CUDA` needs a PetNN built with CUDA and a GPU: otherwise this is an error that says which is missing
   (`NNDeviceIsAvailable()`). The CUDA code of this version has been compiled and run in PetNN's CUDA emulation on the
   host (CMake's PETNN_CUDA_EMULATION; every kernel except cuDNN's), but not yet on a GPU.

   -log_view shows the device time of each layer type as NNDevFwd_<type> and NNDevBwd_<type> (the CUDA-event time of
   its kernels plus the host time to enqueue them), and NNDevUpload/NNDevDownload the transfers.

   Level: intermediate

.seealso: `NNGetDevice()`, `NNSetPrecision()`, `NNDeviceIsAvailable()`, `NNSetCUDATF32()`
@*/
PetscErrorCode NNSetDevice(NN net, NNDevice dev)
{
  PetscBool avail;
  char      why[256];

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscValidLogicalCollectiveEnum(net, dev, 2);
  PetscCheck(dev == NN_DEVICE_CPU || dev == NN_DEVICE_CUDA, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "Unknown device %d: valid are cpu and cuda", (int)dev);
  PetscCall(NNDeviceIsAvailable(dev, &avail, sizeof(why), why));
  PetscCheck(avail, PETSC_COMM_SELF, PETSC_ERR_SUP_SYS, "-nn_device %s: %s; valid here: cpu", NNDevices[dev], why);
#if defined(PETNN_HAVE_CUDA)
  if (dev == NN_DEVICE_CUDA) PetscCall(NNCUDAInitialize(PetscObjectComm((PetscObject)net)));
#endif
  if (net->dev.type != dev) net->setupcalled = PETSC_FALSE;
  net->dev.type = dev;
  PetscFunctionReturn(0);
}

/*@
   NNGetDevice - gets the device set with `NNSetDevice()`

   Not Collective

   Level: intermediate

.seealso: `NNSetDevice()`
@*/
PetscErrorCode NNGetDevice(NN net, NNDevice *dev)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscAssertPointer(dev, 2);
  *dev = net->dev.type;
  PetscFunctionReturn(0);
}

/*@
   NNSetCUDATF32 - lets single-precision GEMMs on the GPU use TF32 tensor cores (10-bit mantissas in the products)

   Logically Collective

   Input Parameters:
+  net - the network
-  flg - `PETSC_TRUE` to allow TF32 (default `PETSC_FALSE`: full float products)

   Options Database Key:
.  -nn_cuda_tf32 <bool> - allow TF32

   Notes:
   Has an effect only with `NNSetDevice()` `NN_DEVICE_CUDA` and `NNSetPrecision()` `NN_PRECISION_SINGLE`; double GEMMs are
   always double.

   Level: advanced

.seealso: `NNSetDevice()`, `NNGetCUDATF32()`
@*/
PetscErrorCode NNSetCUDATF32(NN net, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscValidLogicalCollectiveBool(net, flg, 2);
  net->dev.tf32 = flg;
  PetscFunctionReturn(0);
}

/*@
   NNGetCUDATF32 - gets whether single-precision GEMMs on the GPU may use TF32 (`NNSetCUDATF32()`)

   Not Collective

   Level: advanced

.seealso: `NNSetCUDATF32()`
@*/
PetscErrorCode NNGetCUDATF32(NN net, PetscBool *flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscAssertPointer(flg, 2);
  *flg = net->dev.tf32;
  PetscFunctionReturn(0);
}

#if defined(PETNN_HAVE_CUDA)
  #define NN_CUDA_NOTE "(CUDA: built in)"
#else
  #define NN_CUDA_NOTE "(cuda needs CUDA: this PetNN was built without it)"
#endif

/* -nn_device, -nn_cuda_tf32 (called by NNSetFromOptions()) */
PetscErrorCode NNSetFromOptions_Device(NN net, NNOptionItems PetscOptionsObject)
{
  NNDevice  dev = net->dev.type;
  PetscBool flg, tf32 = net->dev.tf32;

  PetscFunctionBegin;
  PetscCall(PetscOptionsEnum("-nn_device", "Where the activations live and the passes run: cpu or cuda " NN_CUDA_NOTE, "NNSetDevice", NNDevices, (PetscEnum)dev, (PetscEnum *)&dev, &flg));
  if (flg) PetscCall(NNSetDevice(net, dev));
  PetscCall(PetscOptionsBool("-nn_cuda_tf32", "Single-precision GEMMs on the GPU may use TF32 tensor cores", "NNSetCUDATF32", tf32, &tf32, &flg));
  if (flg) PetscCall(NNSetCUDATF32(net, tf32));
  PetscFunctionReturn(0);
}

/* the layer runs its own device passes: its type has them, and if it is partitioned, its device passes take the
   partition (sharding is the network's: NNLayerShardBeginDevice()) */
PetscBool NNLayerHasDevicePasses(NNLayer l)
{
  PetscBool passes = (PetscBool)((l->ops->forwarddevice && l->ops->backwarddevice) || (l->ops->forwardmultidevice && l->ops->backwardmultidevice));
  return (PetscBool)(passes && (l->part.type == NN_PARTITION_REPLICATE || l->part.devicepasses));
}

/* the ranks that share the spatial (DMDA) activation of node v (1: none, or on one rank); node 0 is the input */
static PetscErrorCode NNDeviceNodeSplitSize(NN net, PetscInt v, PetscMPIInt *size)
{
  DM dm = NULL;

  PetscFunctionBegin;
  *size = 1;
  if (v == 0) dm = net->spatial.indm;
  else PetscCall(VecGetDM(net->act[v], &dm));
  if (dm) PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)dm), size));
  PetscFunctionReturn(0);
}

/* the most ranks that share a spatial activation layer i reads or writes (a graph network's layer: its nodes) */
static PetscErrorCode NNDeviceLayerSplitSize(NN net, PetscInt i, PetscMPIInt *size)
{
  PetscInt    nv = 2, v[2] = {i, i + 1}, *nodes = v;
  PetscMPIInt s;

  PetscFunctionBegin;
  *size = 1;
  for (int side = 0; side < 2; side++) {
    if (net->graph.on) {
      const PetscInt *ptr = side ? net->graph.outptr : net->graph.inptr;
      nodes               = (side ? net->graph.out : net->graph.in) + ptr[i];
      nv                  = ptr[i + 1] - ptr[i];
    } else {
      nodes = v + side;
      nv    = 1;
    }
    for (PetscInt k = 0; k < nv; k++) {
      PetscCall(NNDeviceNodeSplitSize(net, nodes[k], &s));
      *size = PetscMax(*size, s);
    }
  }
  PetscFunctionReturn(0);
}

/* after NNSetUp() made the activation Vecs: checks that the network can run on its device and makes the device arrays */
PetscErrorCode NNDeviceSetUp(NN net)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)net);

  PetscFunctionBegin;
  if (net->dev.type == NN_DEVICE_CPU) PetscFunctionReturn(0);
  for (PetscInt i = 0; i < net->nlayers; i++) {
    NNLayer     l      = net->layers[i];
    const char *name   = ((PetscObject)l)->name, *type = ((PetscObject)l)->type_name;
    PetscBool   passes = (PetscBool)((l->ops->forwarddevice && l->ops->backwarddevice) || (l->ops->forwardmultidevice && l->ops->backwardmultidevice));
    PetscCheck(passes, comm, PETSC_ERR_SUP, "-nn_device %s: layer %s (type %s) has no device passes; the types that have them are " NN_DEVICE_LAYER_TYPES ": use -nn_device cpu for this network", NNDevices[net->dev.type], name, type);
    PetscCheck(NNLayerHasDevicePasses(l), comm, PETSC_ERR_SUP, "-nn_device %s: layer %s is partitioned (-%spartition) and its type's device passes do not take that partition (dense: rows, columns; conv2d/conv3d: filters, channels; any type: shard); use -nn_device cpu or -%spartition replicate",
               NNDevices[net->dev.type], name, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "", ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "");
  }
  /* spatial activations split over ranks: every layer that reads or writes one must have device passes for that
     (l->dev.split: the halo exchange staged through host memory, sums over the ranks) */
  for (PetscInt i = 0; i < net->nlayers; i++) {
    NNLayer     l = net->layers[i];
    PetscMPIInt size;
    PetscCall(NNDeviceLayerSplitSize(net, i, &size));
    PetscCheck(size == 1 || l->dev.split, comm, PETSC_ERR_SUP, "-nn_device %s: layer %s (type %s) has no device passes for spatial (DMDA) activations split over ranks (here %d); those that do: " NN_DEVICE_SPLIT_LAYER_TYPES " (convolutions with -<layer prefix>device_algorithm gemm, their default on split activations; not cudnn). Keep a sample's spatial activations on one rank (-<prefix>da_processors_x 1 -<prefix>da_processors_y 1 on the to_spatial layer, or one rank per data group) or use -nn_device cpu",
               NNDevices[net->dev.type], ((PetscObject)l)->name, ((PetscObject)l)->type_name, (int)size);
  }
#if defined(PETNN_HAVE_CUDA)
  PetscCall(NNDeviceSetUp_CUDA(net));
#else
  SETERRQ(comm, PETSC_ERR_SUP_SYS, "-nn_device %s: this PetNN was built without CUDA; valid here: cpu", NNDevices[net->dev.type]);
#endif
  PetscFunctionReturn(0);
}

/* frees the device arrays (NNSetUp() remakes them; NNDestroy()) */
PetscErrorCode NNDeviceReset(NN net)
{
  PetscFunctionBegin;
#if defined(PETNN_HAVE_CUDA)
  PetscCall(NNDeviceReset_CUDA(net));
#else
  (void)net;
#endif
  PetscFunctionReturn(0);
}

/* NNView()'s line: the device and the precision (nothing on the CPU, the default) */
PetscErrorCode NNDeviceView(NN net, PetscViewer v)
{
  PetscFunctionBegin;
  if (net->dev.type == NN_DEVICE_CPU) PetscFunctionReturn(0);
#if defined(PETNN_HAVE_CUDA)
  PetscCall(NNDeviceView_CUDA(net, v));
#else
  PetscCall(PetscViewerASCIIPrintf(v, "device: %s (not built in)\n", NNDevices[net->dev.type]));
#endif
  PetscFunctionReturn(0);
}

/* the forward pass of a network on the device; the output is left in act[nlayers] (double). Without wait, the output's
   download is only started and NNDeviceForwardLayersEnd() completes it: a training step then waits for the device
   once, in the loss on the device, instead of once for the output and once for the loss (tests/device_step.c) */
PetscErrorCode NNDeviceForwardLayers(NN net, PetscInt n, Vec x0, PetscBool wait)
{
  PetscFunctionBegin;
#if defined(PETNN_HAVE_CUDA)
  PetscCall(NNDeviceForwardLayers_CUDA(net, n, x0, wait));
#else
  (void)n;
  (void)x0;
  (void)wait;
  SETERRQ(PetscObjectComm((PetscObject)net), PETSC_ERR_SUP_SYS, "-nn_device %s: this PetNN was built without CUDA", NNDevices[net->dev.type]);
#endif
  PetscFunctionReturn(0);
}

/* the output of NNDeviceForwardLayers(net, n, x0, PETSC_FALSE) into act[nlayers]; a no-op when none is on its way */
PetscErrorCode NNDeviceForwardLayersEnd(NN net)
{
  PetscFunctionBegin;
#if defined(PETNN_HAVE_CUDA)
  PetscCall(NNDeviceForwardLayersEnd_CUDA(net));
#else
  (void)net;
#endif
  PetscFunctionReturn(0);
}

/* the backward pass on the device from the loss gradient dact[nlayers] (double) down to dx0 (NULL: not needed), the
   parameter gradient added into dtheta layer by layer, calling layerdone after each as the CPU pass does */
PetscErrorCode NNDeviceBackward(NN net, PetscInt n, Vec x0, Vec dx0, PetscScalar *dtheta, PetscBool need[])
{
  PetscFunctionBegin;
#if defined(PETNN_HAVE_CUDA)
  PetscCall(NNDeviceBackward_CUDA(net, n, x0, dx0, dtheta, need));
#else
  (void)n;
  (void)x0;
  (void)dx0;
  (void)dtheta;
  (void)need;
  SETERRQ(PetscObjectComm((PetscObject)net), PETSC_ERR_SUP_SYS, "-nn_device %s: this PetNN was built without CUDA", NNDevices[net->dev.type]);
#endif
  PetscFunctionReturn(0);
}

/* the loss of the first n samples against the targets t and dL/dy, evaluated where the output is (done: it was; the
   backward pass then starts from the device's dL/dy), or left to the host (done false) */
PetscErrorCode NNDeviceLossEvaluate(NN net, PetscInt n, Vec t, PetscReal *loss, PetscBool *done)
{
  PetscFunctionBegin;
  *done = PETSC_FALSE;
#if defined(PETNN_HAVE_CUDA)
  PetscCall(NNDeviceLossEvaluate_CUDA(net, n, t, loss, done));
#else
  (void)net, (void)n, (void)t, (void)loss;
#endif
  PetscFunctionReturn(0);
}

/* dL/dy on the device (NNDeviceLossEvaluate() done) scaled by w: a data group's share of the mean */
PetscErrorCode NNDeviceScaleOutputGradient(NN net, PetscInt n, PetscReal w)
{
  PetscFunctionBegin;
#if defined(PETNN_HAVE_CUDA)
  PetscCall(NNDeviceScaleOutputGradient_CUDA(net, n, w));
#else
  (void)n, (void)w;
  SETERRQ(PetscObjectComm((PetscObject)net), PETSC_ERR_SUP_SYS, "-nn_device %s: this PetNN was built without CUDA", NNDevices[net->dev.type]);
#endif
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- parameters resident on the device */
PetscErrorCode NNDeviceSetResident(NN net, PetscBool flg)
{
  PetscFunctionBegin;
  if (!flg && net->dev.resident) PetscCall(NNDeviceSyncHost(net));
  net->dev.resident = (PetscBool)(flg && net->dev.type != NN_DEVICE_CPU);
  PetscFunctionReturn(0);
}

PetscErrorCode NNDeviceGetParameters(NN net, NNDeviceParameters *p)
{
  PetscFunctionBegin;
#if defined(PETNN_HAVE_CUDA)
  PetscCall(NNDeviceGetParameters_CUDA(net, p));
#else
  (void)p;
  SETERRQ(PetscObjectComm((PetscObject)net), PETSC_ERR_SUP_SYS, "-nn_device %s: this PetNN was built without CUDA", NNDevices[net->dev.type]);
#endif
  PetscFunctionReturn(0);
}

PetscErrorCode NNDeviceParametersUpdated(NN net)
{
  PetscFunctionBegin;
#if defined(PETNN_HAVE_CUDA)
  if (net->dev.cuda) ((NNDeviceCUDA *)net->dev.cuda)->newer = PETSC_TRUE;
#endif
  PetscFunctionReturn(0);
}

PetscErrorCode NNDeviceSyncHost(NN net)
{
  PetscFunctionBegin;
#if defined(PETNN_HAVE_CUDA)
  if (net->dev.type != NN_DEVICE_CPU) PetscCall(NNDeviceSyncHost_CUDA(net));
#else
  (void)net;
#endif
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- device memory for classes without CUDA sources */
PetscErrorCode NNDeviceMalloc(size_t bytes, void **p)
{
  PetscFunctionBegin;
#if defined(PETNN_HAVE_CUDA)
  PetscCall(NNCUDAMalloc(bytes, p));
#else
  *p = NULL;
  PetscCheck(!bytes, PETSC_COMM_SELF, PETSC_ERR_SUP_SYS, "Device memory: this PetNN was built without CUDA");
#endif
  PetscFunctionReturn(0);
}

PetscErrorCode NNDeviceFree(void **p)
{
  PetscFunctionBegin;
#if defined(PETNN_HAVE_CUDA)
  PetscCall(NNCUDAFree(p));
#else
  *p = NULL;
#endif
  PetscFunctionReturn(0);
}

/* copies on the package's stream, waited for (they are rare: optimizer state at the start and before checkpoints) */
PetscErrorCode NNDeviceCopyToDevice(void *d, const void *h, size_t bytes)
{
  PetscFunctionBegin;
  if (!bytes) PetscFunctionReturn(0);
#if defined(PETNN_HAVE_CUDA)
  {
    cudaStream_t s;
    PetscCall(NNCUDAGetStream(&s));
    NNCallCUDA(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s));
    NNCallCUDA(cudaStreamSynchronize(s));
  }
#else
  (void)d, (void)h;
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP_SYS, "Device memory: this PetNN was built without CUDA");
#endif
  PetscFunctionReturn(0);
}

PetscErrorCode NNDeviceCopyToHost(void *h, const void *d, size_t bytes)
{
  PetscFunctionBegin;
  if (!bytes) PetscFunctionReturn(0);
#if defined(PETNN_HAVE_CUDA)
  {
    cudaStream_t s;
    PetscCall(NNCUDAGetStream(&s));
    NNCallCUDA(cudaStreamSynchronize(s));
    NNCallCUDA(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, s));
    NNCallCUDA(cudaStreamSynchronize(s));
  }
#else
  (void)d, (void)h;
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP_SYS, "Device memory: this PetNN was built without CUDA");
#endif
  PetscFunctionReturn(0);
}
