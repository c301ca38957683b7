/*
   The halo exchange of a windowed spatial layer on the device (-nn_device cuda) when its spatial activations are split
   over ranks. MPI here need not be CUDA-aware, so the exchange is staged through page-locked host buffers and runs the
   CPU's own exchange there: the halo DMDA's global-to-local PetscSF (NNSpatialHaloGetSF()) in the pass's precision.
     scatter  download the owned array, PetscSFBcast (MPI_REPLACE) into the ghosted host array, upload it
     sum      download the ghosted array, PetscSFReduce (a sum) into the zeroed owned host array, upload it
   the adjoint of each other, as DMGlobalToLocal(INSERT_VALUES) and DMLocalToGlobal(ADD_VALUES) are on the CPU. The
   staging buffers are the halo's (h->dev), made on first use for its precision. NNDevHalo logs both, the waits for
   the stream before the downloads included.

   The layers' passes take the ghosted arrays through NNSpatialHaloDeviceGetInput() and the input gradient through
   NNSpatialHaloDeviceGetInputGradient() / NNSpatialHaloDeviceRestoreInputGradient() (spatialhalodevice.h), and
   NNDeviceAllreduceSum() sums a device array over a communicator the same way (the convolutions' parameter
   gradients, to_spatial's input gradient and spatial_flatten's output, which the CPU passes sum over the ranks).
*/
#include <petnn/private/cudaimpl.h>
#include <petscsf.h>
#include <petnn/private/spatialhalodevice.h>

typedef struct {
  NNPrecision prec;
  size_t      nown, nghost;  /* entries of the owned and the ghosted array */
  void       *hown, *hghost; /* page-locked staging */
  void       *xg, *dxg;      /* the ghosted input and input gradient on the device (made when a layer asks for them) */
} NNSpatialHaloDevice;

static PetscLogEvent NN_DevHalo = 0;

static PetscErrorCode NNDevHaloEvent(void)
{
  PetscFunctionBegin;
  if (!NN_DevHalo) PetscCall(PetscLogEventRegister("NNDevHalo", NN_CLASSID, &NN_DevHalo));
  PetscFunctionReturn(0);
}

PetscErrorCode NNSpatialHaloDeviceReset(NNSpatialHalo *h)
{
  NNSpatialHaloDevice *d = (NNSpatialHaloDevice *)h->dev;

  PetscFunctionBegin;
  if (!d) PetscFunctionReturn(0);
  PetscCall(NNCUDAFreeHost(&d->hown));
  PetscCall(NNCUDAFreeHost(&d->hghost));
  PetscCall(NNCUDAFree(&d->xg));
  PetscCall(NNCUDAFree(&d->dxg));
  PetscCall(PetscFree(h->dev));
  PetscFunctionReturn(0);
}

/* the staging for precision prec, made again when the precision changed */
static PetscErrorCode NNSpatialHaloDeviceGet(NNSpatialHalo *h, NNPrecision prec, NNSpatialHaloDevice **dd)
{
  NNSpatialHaloDevice *d  = (NNSpatialHaloDevice *)h->dev;
  size_t               es = prec == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double);

  PetscFunctionBegin;
  PetscCheck(h->dahalo, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "The halo has no DMDA: set the layer up first");
  if (d && d->prec != prec) PetscCall(NNSpatialHaloDeviceReset(h));
  if (!h->dev) {
    PetscInt xm, ym, zm, gm[3], dof;
    PetscCall(NNDevHaloEvent());
    PetscCall(PetscNew(&d));
    h->dev  = d;
    d->prec = prec;
    PetscCall(DMDAGetCorners(h->dahalo, NULL, NULL, NULL, &xm, &ym, &zm));
    PetscCall(DMDAGetGhostCorners(h->dahalo, NULL, NULL, NULL, &gm[0], &gm[1], &gm[2]));
    PetscCall(DMDAGetInfo(h->dahalo, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &dof, NULL, NULL, NULL, NULL, NULL));
    d->nown   = (size_t)xm * ym * zm * dof;
    d->nghost = (size_t)gm[0] * gm[1] * gm[2] * dof;
    PetscCall(NNCUDAMallocHost(PetscMax(d->nown, 1) * es, "halo staging", &d->hown));
    PetscCall(NNCUDAMallocHost(PetscMax(d->nghost, 1) * es, "halo staging", &d->hghost));
  }
  *dd = (NNSpatialHaloDevice *)h->dev;
  PetscFunctionReturn(0);
}

/* what an exchange needs (the staging, the SF, its unit and sum, the stream, the bytes of an entry); begins NNDevHalo */
static PetscErrorCode NNSpatialHaloDeviceBegin(NNSpatialHalo *h, NNPrecision prec, NNSpatialHaloDevice **d, PetscSF *sf, MPI_Datatype *unit, MPI_Op *sum, cudaStream_t *s, size_t *es)
{
  PetscFunctionBegin;
  *es = prec == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  PetscCall(NNSpatialHaloDeviceGet(h, prec, d));
  PetscCall(NNSpatialHaloGetSF(h, (PetscBool)(prec == NN_PRECISION_SINGLE), sf, unit, sum));
  PetscCall(NNCUDAGetStream(s));
  PetscCall(PetscLogEventBegin(NN_DevHalo, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

/*
   NNSpatialHaloDeviceScatter - xg (device, dahalo's ghosted array) from x (device, the owned array): the exchange of
   DMGlobalToLocal(INSERT_VALUES) staged through page-locked host memory, in precision prec
*/
PetscErrorCode NNSpatialHaloDeviceScatter(NNSpatialHalo *h, NNPrecision prec, const void *x, void *xg)
{
  NNSpatialHaloDevice *d;
  PetscSF              sf;
  MPI_Datatype         unit;
  cudaStream_t         s;
  size_t               es;

  PetscFunctionBegin;
  PetscCall(NNSpatialHaloDeviceBegin(h, prec, &d, &sf, &unit, NULL, &s, &es));
  if (d->nown) NNCallCUDA(cudaMemcpyAsync(d->hown, x, d->nown * es, cudaMemcpyDeviceToHost, s));
  NNCallCUDA(cudaStreamSynchronize(s));
  PetscCall(PetscSFBcastBegin(sf, unit, d->hown, d->hghost, MPI_REPLACE));
  PetscCall(PetscSFBcastEnd(sf, unit, d->hown, d->hghost, MPI_REPLACE));
  if (d->nghost) NNCallCUDA(cudaMemcpyAsync(xg, d->hghost, d->nghost * es, cudaMemcpyHostToDevice, s));
  PetscCall(PetscLogEventEnd(NN_DevHalo, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

/*
   NNSpatialHaloDeviceSum - x (device, the owned array) = the ghosted array xg (device) summed over the ranks' halos:
   the adjoint of NNSpatialHaloDeviceScatter() (DMLocalToGlobal(ADD_VALUES) into zeros), staged the same way
*/
PetscErrorCode NNSpatialHaloDeviceSum(NNSpatialHalo *h, NNPrecision prec, const void *xg, void *x)
{
  NNSpatialHaloDevice *d;
  PetscSF              sf;
  MPI_Datatype         unit;
  MPI_Op               sum;
  cudaStream_t         s;
  size_t               es;

  PetscFunctionBegin;
  PetscCall(NNSpatialHaloDeviceBegin(h, prec, &d, &sf, &unit, &sum, &s, &es));
  if (d->nghost) NNCallCUDA(cudaMemcpyAsync(d->hghost, xg, d->nghost * es, cudaMemcpyDeviceToHost, s));
  NNCallCUDA(cudaStreamSynchronize(s)); /* also: the last upload from hown is done */
  PetscCall(PetscMemzero(d->hown, d->nown * es));
  PetscCall(PetscSFReduceBegin(sf, unit, d->hghost, d->hown, sum));
  PetscCall(PetscSFReduceEnd(sf, unit, d->hghost, d->hown, sum));
  if (d->nown) NNCallCUDA(cudaMemcpyAsync(x, d->hown, d->nown * es, cudaMemcpyHostToDevice, s));
  PetscCall(PetscLogEventEnd(NN_DevHalo, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* whether the layer's spatial input is split over ranks: then its device passes index the owned and ghosted boxes */
PetscErrorCode NNSpatialHaloDeviceSplit(NNSpatialHalo *h, PetscBool *split)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)h->dahalo), &size));
  *split = (PetscBool)(size > 1);
  PetscFunctionReturn(0);
}

/* *xg: the ghosted input of a split layer, exchanged into the halo's device array; x itself when the layer reads its
   owned box only (no halo Vecs: the owned box is the ghosted one) or is not split */
PetscErrorCode NNSpatialHaloDeviceGetInput(NNSpatialHalo *h, NNPrecision prec, const void *x, const void **xg)
{
  NNSpatialHaloDevice *d;
  PetscBool            split;

  PetscFunctionBegin;
  *xg = x;
  PetscCall(NNSpatialHaloDeviceSplit(h, &split));
  if (!split || !h->xl) PetscFunctionReturn(0);
  PetscCall(NNSpatialHaloDeviceGet(h, prec, &d));
  if (!d->xg) PetscCall(NNCUDAMalloc(PetscMax(d->nghost, 1) * (prec == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double)), &d->xg));
  PetscCall(NNSpatialHaloDeviceScatter(h, prec, x, d->xg));
  *xg = d->xg;
  PetscFunctionReturn(0);
}

/* *dxg: where the backward pass writes the ghosted input gradient (every entry): the halo's device array, or dx */
PetscErrorCode NNSpatialHaloDeviceGetInputGradient(NNSpatialHalo *h, NNPrecision prec, void *dx, void **dxg)
{
  NNSpatialHaloDevice *d;
  PetscBool            split;

  PetscFunctionBegin;
  *dxg = dx;
  PetscCall(NNSpatialHaloDeviceSplit(h, &split));
  if (!dx || !split || !h->xl) PetscFunctionReturn(0);
  PetscCall(NNSpatialHaloDeviceGet(h, prec, &d));
  if (!d->dxg) PetscCall(NNCUDAMalloc(PetscMax(d->nghost, 1) * (prec == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double)), &d->dxg));
  *dxg = d->dxg;
  PetscFunctionReturn(0);
}

/* dx = the ghosted input gradient summed over the ranks' halos (nothing to do when it was written into dx itself) */
PetscErrorCode NNSpatialHaloDeviceRestoreInputGradient(NNSpatialHalo *h, NNPrecision prec, void *dx)
{
  PetscBool split;

  PetscFunctionBegin;
  PetscCall(NNSpatialHaloDeviceSplit(h, &split));
  if (!dx || !split || !h->xl) PetscFunctionReturn(0);
  PetscCall(NNSpatialHaloDeviceSum(h, prec, ((NNSpatialHaloDevice *)h->dev)->dxg, dx));
  PetscFunctionReturn(0);
}

/* the corners the device kernels index: the owned output box (os, om) and the ghosted input box (gs, gm) of a split
   layer (NNSpatialHaloGetCorners()), else the whole grids N (input) and No (output) */
PetscErrorCode NNSpatialHaloDeviceCorners(NNSpatialHalo *h, PetscInt nd, const int N[3], const int No[3], int os[3], int om[3], int gs[3], int gm[3])
{
  PetscBool split;
  PetscInt  s[3], m[3], g0[3], g1[3];

  PetscFunctionBegin;
  PetscCall(NNSpatialHaloDeviceSplit(h, &split));
  if (!split) {
    for (int a = 0; a < 3; a++) {
      os[a] = gs[a] = 0;
      om[a]         = No[a];
      gm[a]         = N[a];
    }
    PetscFunctionReturn(0);
  }
  PetscCall(NNSpatialHaloGetCorners(h, nd, s, m, g0, g1));
  for (int a = 0; a < 3; a++) {
    os[a] = (int)s[a];
    om[a] = (int)m[a];
    gs[a] = (int)g0[a];
    gm[a] = (int)g1[a];
  }
  PetscFunctionReturn(0);
}

/* d[0..n) summed over comm in place (precision prec), staged through page-locked host memory kept until PetscFinalize() */
static void  *NNAllreduceStage      = NULL;
static size_t NNAllreduceStageBytes = 0;

static PetscErrorCode NNAllreduceStageFree(void)
{
  PetscFunctionBegin;
  PetscCall(NNCUDAFreeHost(&NNAllreduceStage));
  NNAllreduceStageBytes = 0;
  PetscFunctionReturn(0);
}

PetscErrorCode NNDeviceAllreduceSum(MPI_Comm comm, NNPrecision prec, void *d, size_t n)
{
  size_t       es = prec == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  cudaStream_t s;
  PetscMPIInt  cnt, size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (size == 1 || !n) PetscFunctionReturn(0);
  PetscCall(NNDevHaloEvent());
  if (NNAllreduceStageBytes < n * es) {
    if (!NNAllreduceStage) PetscCall(PetscRegisterFinalize(NNAllreduceStageFree));
    PetscCall(NNCUDAFreeHost(&NNAllreduceStage));
    PetscCall(NNCUDAMallocHost(n * es, "staging of a sum over ranks", &NNAllreduceStage));
    NNAllreduceStageBytes = n * es;
  }
  PetscCall(PetscMPIIntCast((PetscInt)n, &cnt));
  PetscCall(NNCUDAGetStream(&s));
  PetscCall(PetscLogEventBegin(NN_DevHalo, 0, 0, 0, 0));
  NNCallCUDA(cudaMemcpyAsync(NNAllreduceStage, d, n * es, cudaMemcpyDeviceToHost, s));
  NNCallCUDA(cudaStreamSynchronize(s));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, NNAllreduceStage, cnt, prec == NN_PRECISION_SINGLE ? MPI_FLOAT : MPI_DOUBLE, MPI_SUM, comm));
  NNCallCUDA(cudaMemcpyAsync(d, NNAllreduceStage, n * es, cudaMemcpyHostToDevice, s));
  NNCallCUDA(cudaStreamSynchronize(s)); /* the stage is free again */
  PetscCall(PetscLogEventEnd(NN_DevHalo, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}
