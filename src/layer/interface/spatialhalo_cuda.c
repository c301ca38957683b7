/*
   The halo exchange of a windowed spatial layer on the device (-nn_device cuda) when its spatial activations are split
   over ranks. MPI here need not be CUDA-aware, so the exchange is staged through page-locked host buffers, and only the
   pixels that cross ranks travel: the halo DMDA's global-to-local PetscSF (NNSpatialHaloGetSF()) is split once, at the
   first exchange, into
     direct    one ghosted copy of each owned pixel on its own rank: a device kernel copies it (no host round trip);
     faces     every other leaf (the ghosts other ranks own, and a periodic axis' own wrapped ghosts), fed by the
               boundary pixels (the owned pixels such leaves read) through a compact PetscSF (boundary -> faces) built
               from the DMDA's by renumbering its roots (PetscSFComputeDegree(), a broadcast of the new numbers).
   so an exchange moves the boundary and the face pixels (thin layers of the stencil width) instead of the whole owned
   and ghosted arrays:
     scatter  gather the boundary pixels, download them, PetscSFBcast (MPI_REPLACE) to the face pixels on the host,
              upload them and scatter them into the ghosted array; the direct copies on the device
     sum      gather the face pixels, download them, PetscSFReduce (a sum) into the zeroed boundary pixels, upload them
              and add them to the owned array, which first gets its direct copies (zero where it has none)
   the adjoint of each other, as DMGlobalToLocal(INSERT_VALUES) and DMLocalToGlobal(ADD_VALUES) are on the CPU (ghosted
   entries no leaf covers are not written: no pass reads them). The staging is the halo's (h->dev), made on first use
   for its precision. NNDevHalo logs both, the waits for the stream before the host's part included.

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
  size_t      bs;                    /* entries of a pixel (the SF's unit) */
  size_t      nown, nghost;          /* entries of the owned and the ghosted array */
  PetscInt    nroots, nbound, nface; /* owned pixels, boundary pixels, face pixels */
  int        *ddirect;               /* device: per owned pixel, its direct copy in the ghosted array (-1: none) */
  int        *dbound, *dface;        /* device: the boundary pixels (owned indices), the face pixels (ghosted indices) */
  PetscSF     sfc;                   /* boundary pixels (roots) -> face pixels (leaves) */
  void       *hown, *hghost;         /* page-locked staging of the boundary and the face pixels */
  void       *dstage;                /* device: the packed boundary or face pixels */
  void       *xg, *dxg;              /* the ghosted input and input gradient on the device (made when a layer asks for them) */
} NNSpatialHaloDevice;

static PetscLogEvent NN_DevHalo = 0;

static PetscErrorCode NNDevHaloEvent(void)
{
  PetscFunctionBegin;
  if (!NN_DevHalo) PetscCall(NNLogEventRegister("NNDevHalo", NN_CLASSID, &NN_DevHalo));
  PetscFunctionReturn(0);
}

PetscErrorCode NNSpatialHaloDeviceReset(NNSpatialHalo *h)
{
  NNSpatialHaloDevice *d = (NNSpatialHaloDevice *)h->dev;

  PetscFunctionBegin;
  if (!d) PetscFunctionReturn(0);
  PetscCall(NNCUDAFreeHost(&d->hown));
  PetscCall(NNCUDAFreeHost(&d->hghost));
  PetscCall(NNCUDAFree((void **)&d->ddirect));
  PetscCall(NNCUDAFree((void **)&d->dbound));
  PetscCall(NNCUDAFree((void **)&d->dface));
  PetscCall(NNCUDAFree(&d->dstage));
  PetscCall(PetscSFDestroy(&d->sfc));
  PetscCall(NNCUDAFree(&d->xg));
  PetscCall(NNCUDAFree(&d->dxg));
  PetscCall(PetscFree(h->dev));
  PetscFunctionReturn(0);
}

/* n PetscInts as ints on the device (the split's index tables, once per set-up) */
static PetscErrorCode NNSpatialHaloDeviceUploadIndices(PetscInt n, const PetscInt *a, int **d)
{
  int *h;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(PetscMax(n, 1), &h));
  for (PetscInt i = 0; i < n; i++) h[i] = (int)a[i];
  PetscCall(NNCUDAMalloc(PetscMax(n, 1) * sizeof(int), (void **)d));
  if (n) NNCallCUDA(cudaMemcpy(*d, h, (size_t)n * sizeof(int), cudaMemcpyHostToDevice));
  PetscCall(PetscFree(h));
  PetscFunctionReturn(0);
}

/* the split of the DMDA's global-to-local SF sf into the direct copies and the compact SF of the boundary and face pixels */
static PetscErrorCode NNSpatialHaloDeviceSplitSF(NNSpatialHaloDevice *d, PetscSF sf)
{
  MPI_Comm           comm = PetscObjectComm((PetscObject)sf);
  PetscMPIInt        rank;
  PetscInt           nroots, nleaves, *direct, *face, *rc, *lrc, *bound;
  const PetscInt    *ilocal, *deg;
  const PetscSFNode *iremote;
  PetscSFNode       *fr;
  PetscSF            sfr;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscSFGetGraph(sf, &nroots, &nleaves, &ilocal, &iremote));
  PetscCheck((size_t)nroots * d->bs == d->nown, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The halo's SF has %" PetscInt_FMT " roots of %zu entries, the owned array %zu entries", nroots, d->bs, d->nown);
  PetscCall(PetscMalloc6(nroots, &direct, nleaves, &face, nleaves, &fr, nroots, &rc, nleaves, &lrc, nroots, &bound));
  for (PetscInt r = 0; r < nroots; r++) direct[r] = -1;
  d->nroots = nroots;
  d->nface  = 0;
  for (PetscInt i = 0; i < nleaves; i++) { /* the first leaf of an owned pixel on its own rank is its direct copy */
    PetscInt li = ilocal ? ilocal[i] : i;
    if (iremote[i].rank == rank && direct[iremote[i].index] < 0) direct[iremote[i].index] = li;
    else {
      face[d->nface] = li;
      fr[d->nface++] = iremote[i];
    }
  }
  /* the boundary pixels: the roots some face pixel reads, numbered in root order; the faces learn their numbers */
  PetscCall(PetscSFCreate(comm, &sfr));
  PetscCall(PetscSFSetGraph(sfr, nroots, d->nface, NULL, PETSC_COPY_VALUES, fr, PETSC_COPY_VALUES));
  PetscCall(PetscSFSetUp(sfr));
  PetscCall(PetscSFComputeDegreeBegin(sfr, &deg));
  PetscCall(PetscSFComputeDegreeEnd(sfr, &deg));
  d->nbound = 0;
  for (PetscInt r = 0; r < nroots; r++) {
    rc[r] = deg[r] ? d->nbound : -1;
    if (deg[r]) bound[d->nbound++] = r;
  }
  PetscCall(PetscSFBcastBegin(sfr, MPIU_INT, rc, lrc, MPI_REPLACE));
  PetscCall(PetscSFBcastEnd(sfr, MPIU_INT, rc, lrc, MPI_REPLACE));
  for (PetscInt k = 0; k < d->nface; k++) fr[k].index = lrc[k];
  PetscCall(PetscSFCreate(comm, &d->sfc));
  PetscCall(PetscSFSetGraph(d->sfc, d->nbound, d->nface, NULL, PETSC_COPY_VALUES, fr, PETSC_COPY_VALUES));
  PetscCall(PetscSFSetUp(d->sfc));
  PetscCall(PetscSFDestroy(&sfr));
  PetscCall(NNSpatialHaloDeviceUploadIndices(nroots, direct, &d->ddirect));
  PetscCall(NNSpatialHaloDeviceUploadIndices(d->nbound, bound, &d->dbound));
  PetscCall(NNSpatialHaloDeviceUploadIndices(d->nface, face, &d->dface));
  PetscCall(PetscFree6(direct, face, fr, rc, lrc, bound));
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
    PetscInt     xm, ym, zm, gm[3], dof;
    PetscSF      sf;
    MPI_Datatype unit;
    PetscMPIInt  ue;
    PetscCall(NNDevHaloEvent());
    PetscCall(PetscNew(&d));
    h->dev  = d;
    d->prec = prec;
    PetscCall(DMDAGetCorners(h->dahalo, NULL, NULL, NULL, &xm, &ym, &zm));
    PetscCall(DMDAGetGhostCorners(h->dahalo, NULL, NULL, NULL, &gm[0], &gm[1], &gm[2]));
    PetscCall(DMDAGetInfo(h->dahalo, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &dof, NULL, NULL, NULL, NULL, NULL));
    d->nown   = (size_t)xm * ym * zm * dof;
    d->nghost = (size_t)gm[0] * gm[1] * gm[2] * dof;
    PetscCall(NNSpatialHaloGetSF(h, (PetscBool)(prec == NN_PRECISION_SINGLE), &sf, &unit, NULL));
    PetscCallMPI(MPI_Type_size(unit, &ue));
    d->bs = (size_t)ue / es;
    PetscCall(NNSpatialHaloDeviceSplitSF(d, sf));
    PetscCall(NNCUDAMallocHost(PetscMax((size_t)d->nbound * d->bs, 1) * es, "halo staging", &d->hown));
    PetscCall(NNCUDAMallocHost(PetscMax((size_t)d->nface * d->bs, 1) * es, "halo staging", &d->hghost));
    PetscCall(NNCUDAMalloc(PetscMax((size_t)PetscMax(d->nbound, d->nface) * d->bs, 1) * es, &d->dstage));
  }
  *dd = (NNSpatialHaloDevice *)h->dev;
  PetscFunctionReturn(0);
}

/* what an exchange needs (the staging, the unit and sum of the compact SF, the stream, the bytes of an entry); begins NNDevHalo */
static PetscErrorCode NNSpatialHaloDeviceBegin(NNSpatialHalo *h, NNPrecision prec, NNSpatialHaloDevice **d, MPI_Datatype *unit, MPI_Op *sum, cudaStream_t *s, size_t *es)
{
  PetscSF sf;

  PetscFunctionBegin;
  *es = prec == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  PetscCall(NNSpatialHaloDeviceGet(h, prec, d));
  PetscCall(NNSpatialHaloGetSF(h, (PetscBool)(prec == NN_PRECISION_SINGLE), &sf, unit, sum));
  PetscCall(NNCUDAGetStream(s));
  PetscCall(PetscLogEventBegin(NN_DevHalo, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

/*
   NNSpatialHaloDeviceScatter - xg (device, dahalo's ghosted array) from x (device, the owned array): the exchange of
   DMGlobalToLocal(INSERT_VALUES), the face pixels staged through page-locked host memory, in precision prec
*/
PetscErrorCode NNSpatialHaloDeviceScatter(NNSpatialHalo *h, NNPrecision prec, const void *x, void *xg)
{
  NNSpatialHaloDevice *d;
  MPI_Datatype         unit;
  cudaStream_t         s;
  size_t               es;
  int                  single = prec == NN_PRECISION_SINGLE;

  PetscFunctionBegin;
  PetscCall(NNSpatialHaloDeviceBegin(h, prec, &d, &unit, NULL, &s, &es));
  NNCallCUDA(NNCUDAGatherBlocks(single, (size_t)d->nbound, d->bs, d->dbound, x, d->dstage, s));
  if (d->nbound) NNCallCUDA(cudaMemcpyAsync(d->hown, d->dstage, (size_t)d->nbound * d->bs * es, cudaMemcpyDeviceToHost, s));
  NNCallCUDA(NNCUDAScatterBlocks(single, 0, (size_t)d->nroots, d->bs, d->ddirect, x, xg, s));
  NNCallCUDA(cudaStreamSynchronize(s)); /* also: the last upload from hghost is done */
  PetscCall(PetscSFBcastBegin(d->sfc, unit, d->hown, d->hghost, MPI_REPLACE));
  PetscCall(PetscSFBcastEnd(d->sfc, unit, d->hown, d->hghost, MPI_REPLACE));
  if (d->nface) NNCallCUDA(cudaMemcpyAsync(d->dstage, d->hghost, (size_t)d->nface * d->bs * es, cudaMemcpyHostToDevice, s));
  NNCallCUDA(NNCUDAScatterBlocks(single, 0, (size_t)d->nface, d->bs, d->dface, d->dstage, xg, s));
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
  MPI_Datatype         unit;
  MPI_Op               sum;
  cudaStream_t         s;
  size_t               es;
  int                  single = prec == NN_PRECISION_SINGLE;

  PetscFunctionBegin;
  PetscCall(NNSpatialHaloDeviceBegin(h, prec, &d, &unit, &sum, &s, &es));
  NNCallCUDA(NNCUDAGatherBlocks(single, (size_t)d->nface, d->bs, d->dface, xg, d->dstage, s));
  if (d->nface) NNCallCUDA(cudaMemcpyAsync(d->hghost, d->dstage, (size_t)d->nface * d->bs * es, cudaMemcpyDeviceToHost, s));
  NNCallCUDA(NNCUDAGatherBlocks(single, (size_t)d->nroots, d->bs, d->ddirect, xg, x, s)); /* x = the direct copies (0: none) */
  NNCallCUDA(cudaStreamSynchronize(s)); /* also: the last upload from hown is done */
  PetscCall(PetscMemzero(d->hown, (size_t)d->nbound * d->bs * es));
  PetscCall(PetscSFReduceBegin(d->sfc, unit, d->hghost, d->hown, sum));
  PetscCall(PetscSFReduceEnd(d->sfc, unit, d->hghost, d->hown, sum));
  if (d->nbound) NNCallCUDA(cudaMemcpyAsync(d->dstage, d->hown, (size_t)d->nbound * d->bs * es, cudaMemcpyHostToDevice, s));
  NNCallCUDA(NNCUDAScatterBlocks(single, 1, (size_t)d->nbound, d->bs, d->dbound, d->dstage, x, s));
  PetscCall(PetscLogEventEnd(NN_DevHalo, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

/*
   NNSpatialHaloDeviceGetStaging - the entries an exchange moves between host and device (the boundary and the face
   pixels) and those the whole owned and ghosted arrays hold, in precision prec
*/
PetscErrorCode NNSpatialHaloDeviceGetStaging(NNSpatialHalo *h, NNPrecision prec, size_t *staged, size_t *whole)
{
  NNSpatialHaloDevice *d;

  PetscFunctionBegin;
  PetscCall(NNSpatialHaloDeviceGet(h, prec, &d));
  *staged = (size_t)(d->nbound + d->nface) * d->bs;
  *whole  = d->nown + d->nghost;
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
PetscErrorCode NNDeviceAllreduceSum(MPI_Comm comm, NNPrecision prec, void *d, size_t n)
{
  size_t       es = prec == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  cudaStream_t s;
  PetscMPIInt  cnt, size;
  void        *stage;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (size == 1 || !n) PetscFunctionReturn(0);
  PetscCall(NNDevHaloEvent());
  PetscCall(NNCUDAGetHostStage(NN_CUDA_STAGE_ALLREDUCE, n * es, "staging of a sum over ranks", &stage));
  PetscCall(PetscMPIIntCast((PetscInt)n, &cnt));
  PetscCall(NNCUDAGetStream(&s));
  PetscCall(PetscLogEventBegin(NN_DevHalo, 0, 0, 0, 0));
  NNCallCUDA(cudaMemcpyAsync(stage, d, n * es, cudaMemcpyDeviceToHost, s));
  NNCallCUDA(cudaStreamSynchronize(s));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, stage, cnt, prec == NN_PRECISION_SINGLE ? MPI_FLOAT : MPI_DOUBLE, MPI_SUM, comm));
  NNCallCUDA(cudaMemcpyAsync(d, stage, n * es, cudaMemcpyHostToDevice, s));
  NNCallCUDA(cudaStreamSynchronize(s)); /* the stage is free again */
  PetscCall(PetscLogEventEnd(NN_DevHalo, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}
