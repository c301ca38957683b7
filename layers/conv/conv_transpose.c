/*
   2-d and 3-d transposed convolution on the spatial (DMDA) layout: torch.nn.ConvTranspose2d / 3d
   with stride, zero padding, output padding, dilation and groups.

   PyTorch's definition scatters: input pixel i adds x[i] W[t] into output i*s - p + t*dil. Here each
   output pixel gathers instead: output o sums, over the taps t for which (o + p - t*dil)/s is an
   integer i inside the input grid, x[i] W[t]. That is the convolution's im2col + GEMM
   (layers/conv/conv_im2col.c) with other tap offsets, so forward, weight gradient and input
   gradient (col2im into the ghosted input gradient, summed back with DMLocalToGlobal(ADD_VALUES))
   are conv's passes, threads included (layers/conv/conv_run.c).

   Output extent along each axis: (N-1)*s - 2p + dil*(k-1) + output_padding + 1 (PyTorch's).
   Output ownership: the input's rank grid with every boundary multiplied by the stride, the last
   rank taking what remains: rank r of an axis owns outputs [s*a_r, s*a_{r+1}) with a_r the first
   input it owns, and the last rank [s*a_last, No). When No = s*N (kernel = stride, no padding, or
   e.g. k 4, s 2, p 1), every range is exactly the input's times s, so a max pool by 2 followed by
   a conv_transpose with kernel 2 and stride 2 gives back the layout before the pool (U-Net skips)
   whenever the encoder's ranges are even (the pool's ranges are then exactly half of them).
   The halo is the farthest an owned output's taps reach outside the rank's inputs.

   Parameters (PyTorch order): weight [in, out/groups, (kd,) kh, kw], bias [out]. The device passes (-nn_device cuda,
   also split over ranks) are in layers/conv/conv_gemm_cuda.c.
*/
#include "conv.h"
#include <petnn/private/deviceimpl.h>
#include <cblas.h>

static const char *const NNConvTAxisName[3] = {"width", "height", "depth"};

/* checks of one axis and the output extent along it (64 bits: refused, not wrapped) */
static PetscErrorCode NNConvTransposeAxis(NNLayer l, PetscInt a, PetscInt N, PetscInt *No)
{
  NNLayer_ConvTranspose *d    = (NNLayer_ConvTranspose *)l->data;
  MPI_Comm               comm = PetscObjectComm((PetscObject)l);
  const char            *pre = ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "", *name = ((PetscObject)l)->name, *type = ((PetscObject)l)->type_name;
  PetscInt64             n;

  PetscFunctionBegin;
  PetscCheck(d->k[a] > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s): kernel size %" PetscInt_FMT " along the %s must be positive (-%skernel)", name, type, d->k[a], NNConvTAxisName[a], pre);
  PetscCheck(d->s[a] > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s): stride %" PetscInt_FMT " along the %s must be positive (-%sstride)", name, type, d->s[a], NNConvTAxisName[a], pre);
  PetscCheck(d->dil[a] > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s): dilation %" PetscInt_FMT " along the %s must be positive (-%sdilation)", name, type, d->dil[a], NNConvTAxisName[a], pre);
  PetscCheck(d->pad[a] >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s): padding %" PetscInt_FMT " along the %s must be non-negative (-%spadding)", name, type, d->pad[a], NNConvTAxisName[a], pre);
  PetscCheck(d->opad[a] >= 0 && (d->opad[a] < d->s[a] || d->opad[a] < d->dil[a]), comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s): output padding %" PetscInt_FMT " along the %s must be non-negative and smaller than the stride %" PetscInt_FMT " or the dilation %" PetscInt_FMT " (-%soutput_padding)", name, type, d->opad[a], NNConvTAxisName[a], d->s[a], d->dil[a], pre);
  PetscCheck((PetscInt64)d->dil[a] * (d->k[a] - 1) + 1 <= PETSC_MAX_INT / 4, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s): kernel %" PetscInt_FMT " with dilation %" PetscInt_FMT " along the %s spans more pixels than a PetscInt counts (-%skernel, -%sdilation)", name, type, d->k[a], d->dil[a], NNConvTAxisName[a], pre, pre);
  n = ((PetscInt64)N - 1) * d->s[a] - 2 * (PetscInt64)d->pad[a] + (PetscInt64)d->dil[a] * (d->k[a] - 1) + d->opad[a] + 1;
  PetscCheck(n > 0, comm, PETSC_ERR_ARG_SIZ, "Layer %s (%s): input extent %" PetscInt_FMT " along the %s with kernel %" PetscInt_FMT ", stride %" PetscInt_FMT ", padding %" PetscInt_FMT ", output padding %" PetscInt_FMT " and dilation %" PetscInt_FMT " gives %" PetscInt64_FMT " output pixels, (in-1)*stride - 2*padding + dilation*(kernel-1) + output_padding + 1 must be positive (-%spadding too large)", name, type, N, NNConvTAxisName[a], d->k[a], d->s[a], d->pad[a], d->opad[a], d->dil[a], n, pre);
  PetscCheck(n <= PETSC_MAX_INT / 4, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s): %" PetscInt64_FMT " output pixels along the %s are more than a PetscInt counts (-%sstride, -%skernel)", name, type, n, NNConvTAxisName[a], pre, pre);
  *No = (PetscInt)n;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSetUp_ConvTranspose(NNLayer l)
{
  NNLayer_ConvTranspose *d    = (NNLayer_ConvTranspose *)l->data;
  MPI_Comm               comm = PetscObjectComm((PetscObject)l);
  const char            *pre = ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "", *name = ((PetscObject)l)->name, *type = ((PetscObject)l)->type_name;
  PetscInt               nd = d->nd, C, wdim[5];
  PetscInt64             ntap = 1;
  NNShape               *in = &l->inshape;

  PetscFunctionBegin;
  PetscCheck(!d->badcount, comm, PETSC_ERR_ARG_SIZ, "Layer %s (%s): -%s%s takes 1 or %" PetscInt_FMT " values (%s), got %" PetscInt_FMT, name, type, pre, d->badopt, nd, nd == 2 ? "height,width" : "depth,height,width", d->badcount);
  PetscCall(NNLayerCheckInputRank(l, nd + 1));
  C = in->dim[0];
  PetscCheck(d->filters > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s) has %" PetscInt_FMT " filters; give a positive -%sfilters", name, type, d->filters, pre);
  PetscCheck(d->groups > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s): -%sgroups %" PetscInt_FMT " must be positive", name, type, pre, d->groups);
  PetscCheck(C % d->groups == 0 && d->filters % d->groups == 0, comm, PETSC_ERR_ARG_INCOMP, "Layer %s (%s): -%sgroups %" PetscInt_FMT " must divide both the %" PetscInt_FMT " input channels and the %" PetscInt_FMT " filters", name, type, pre, d->groups, C, d->filters);
  for (PetscInt a = 0; a < 3; a++) {
    d->No[a] = 1;
    if (a >= nd) continue;
    PetscCall(NNConvTransposeAxis(l, a, in->dim[nd - a], &d->No[a]));
    ntap *= d->k[a];
    PetscCheck(ntap * (C / d->groups) <= PETSC_MAX_INT / d->filters - 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s): %" PetscInt_FMT " filters of %" PetscInt_FMT " channels and kernel %" PetscInt_FMT " along the %s make more weights than a PetscInt counts (-%sfilters, -%skernel)", name, type, d->filters, C / d->groups, d->k[a], NNConvTAxisName[a], pre, pre);
  }
  wdim[0] = C;
  wdim[1] = d->filters / d->groups;
  for (PetscInt a = 0; a < nd; a++) wdim[2 + a] = d->k[nd - 1 - a];
  if (nd == 2) PetscCall(NNShapeSet(&l->outshape, 3, (PetscInt[]){d->filters, d->No[1], d->No[0]}));
  else PetscCall(NNShapeSet(&l->outshape, 4, (PetscInt[]){d->filters, d->No[2], d->No[1], d->No[0]}));
  PetscCall(NNLayerAddTensor(l, "weight", NN_TENSOR_PARAM, nd + 2, wdim));
  if (d->bias) PetscCall(NNLayerAddTensor(l, "bias", NN_TENSOR_PARAM, 1, &d->filters));
  PetscCall(PetscMalloc3(d->filters * ((C / d->groups) * ntap + 1), &d->Wp, d->filters * ((C / d->groups) * ntap + 1), &d->dWp, l->nparam, &d->grad));
  PetscFunctionReturn(0);
}

/* PyTorch's default for ConvTranspose: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in = out/groups * prod(kernel) (weight.size(1) * taps) */
static PetscErrorCode NNLayerInitialize_ConvTranspose(NNLayer l)
{
  NNLayer_ConvTranspose *d     = (NNLayer_ConvTranspose *)l->data;
  PetscInt               fanin = d->filters / d->groups;
  PetscScalar           *theta = (PetscScalar *)l->theta;
  PetscReal              bound;

  PetscFunctionBegin;
  for (PetscInt a = 0; a < d->nd; a++) fanin *= d->k[a];
  bound = 1.0 / PetscSqrtReal((PetscReal)fanin);
  for (PetscInt i = 0; i < l->nparam; i++) theta[i] = bound * (2.0 * NNRandomUniform(l->rng) - 1.0);
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerReset_ConvTranspose(NNLayer l)
{
  NNLayer_ConvTranspose *d = (NNLayer_ConvTranspose *)l->data;

  PetscFunctionBegin;
  PetscCall(NNSpatialHaloReset(&d->h));
  PetscCall(PetscFree3(d->Wp, d->dWp, d->grad));
  PetscCall(PetscFree2(d->work, d->iwork));
  PetscCall(NNConvTransposeSingleReset(l));
#if defined(PETNN_HAVE_CUDA)
  PetscCall(NNConvGemmResetDevice(&d->gemm));
#endif
  PetscFunctionReturn(0);
}

/* output ranges along axis a (see the top of the file); *halo grows to the inputs they reach outside the rank's; -1 if all ranks get outputs, else the first empty rank */
static PetscInt NNConvTransposeAxisRanges(const NNLayer_ConvTranspose *d, PetscInt a, PetscInt N, PetscInt nr, const PetscInt li[], PetscInt lo[], PetscInt *halo)
{
  PetscInt start = 0, empty = -1, s = d->s[a], span = d->dil[a] * (d->k[a] - 1);

  for (PetscInt r = 0; r < nr; r++) {
    PetscInt o0 = PetscMin(start * s, d->No[a]), o1 = r == nr - 1 ? d->No[a] : PetscMin((start + li[r]) * s, d->No[a]);
    lo[r] = o1 - o0;
    if (lo[r] <= 0 && empty < 0) empty = r;
    if (lo[r] > 0) { /* inputs i with o = i*s - p + t*dil for some owned o: ceil((o0 + p - span)/s) <= i <= floor((o1 - 1 + p)/s), in the grid */
      PetscInt num = o0 + d->pad[a] - span, ilo = num >= 0 ? (num + s - 1) / s : -((-num) / s), ihi = (o1 - 1 + d->pad[a]) / s;
      ilo   = PetscMax(ilo, 0);
      ihi   = PetscMin(ihi, N - 1);
      *halo = PetscMax(*halo, PetscMax(start - ilo, ihi - (start + li[r] - 1)));
    }
    start += li[r];
  }
  return empty;
}

/* the halo DMDA (the input's grid and ranges with the stencil width the taps need) and the output DMDA */
static PetscErrorCode NNConvTransposeCreateDMs(NNLayer l)
{
  NNLayer_ConvTranspose *d    = (NNLayer_ConvTranspose *)l->data;
  MPI_Comm               comm = PetscObjectComm((PetscObject)l);
  DM                     dain;
  PetscInt               dim, M[3], nr[3], dof, *lo[3] = {NULL, NULL, NULL}, halo = 0, empty = -1, ea = 0, small = -1, sa = 0;
  const PetscInt        *li[3];

  PetscFunctionBegin;
  PetscCall(NNSpatialGetInputDA(l, &dain));
  PetscCall(NNSpatialHaloReset(&d->h));
  PetscCall(DMDAGetInfo(dain, &dim, &M[0], &M[1], &M[2], &nr[0], &nr[1], &nr[2], &dof, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetOwnershipRanges(dain, &li[0], &li[1], &li[2]));
  for (PetscInt a = 0; a < dim; a++) {
    PetscInt e;
    PetscCall(PetscMalloc1(nr[a], &lo[a]));
    e = NNConvTransposeAxisRanges(d, a, M[a], nr[a], li[a], lo[a], &halo);
    if (e >= 0 && empty < 0) {
      empty = e;
      ea    = a;
    }
  }
  for (PetscInt a = 0; a < dim && small < 0; a++) /* PETSc's DMDA needs every rank's piece at least as wide as the halo */
    for (PetscInt i = 0; i < nr[a] && small < 0; i++)
      if (li[a][i] < halo) {
        small = i;
        sa    = a;
      }
  if (empty < 0 && small < 0) {
    if (dim == 2) {
      PetscCall(DMDACreate2d(comm, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, M[0], M[1], nr[0], nr[1], dof, halo, li[0], li[1], &d->h.dahalo));
      PetscCall(DMDACreate2d(comm, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, d->No[0], d->No[1], nr[0], nr[1], l->nbatch * d->filters, 0, lo[0], lo[1], &d->h.daout));
    } else {
      PetscCall(DMDACreate3d(comm, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, M[0], M[1], M[2], nr[0], nr[1], nr[2], dof, halo, li[0], li[1], li[2], &d->h.dahalo));
      PetscCall(DMDACreate3d(comm, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, d->No[0], d->No[1], d->No[2], nr[0], nr[1], nr[2], l->nbatch * d->filters, 0, lo[0], lo[1], lo[2], &d->h.daout));
    }
    PetscCall(DMSetUp(d->h.dahalo));
    PetscCall(DMSetUp(d->h.daout));
    d->h.halo = halo;
  }
  for (PetscInt a = 0; a < dim; a++) PetscCall(PetscFree(lo[a]));
  PetscCheck(empty < 0, comm, PETSC_ERR_ARG_SIZ, "Layer %s (%s): rank %" PetscInt_FMT " along the %s gets no output pixels (its outputs start at stride times its first input, %" PetscInt_FMT " outputs in all); use fewer ranks along that axis or -da_ownership_ranges that leave the last rank outputs", ((PetscObject)l)->name, ((PetscObject)l)->type_name, empty, NNConvTAxisName[ea], d->No[ea]);
  PetscCheck(small < 0, comm, PETSC_ERR_ARG_SIZ, "Layer %s (%s) needs a halo of %" PetscInt_FMT " pixels but rank %" PetscInt_FMT " along the %s holds only %" PetscInt_FMT " of the %" PetscInt_FMT " input pixels; use fewer ranks along that axis", ((PetscObject)l)->name, ((PetscObject)l)->type_name, halo, small, NNConvTAxisName[sa], li[sa][small], M[sa]);
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerCreateOutputVec_ConvTranspose(NNLayer l, Vec *y)
{
  NNLayer_ConvTranspose *d = (NNLayer_ConvTranspose *)l->data;
  NNConvGeom            *g = &d->g;
  PetscInt               nscalar, nint;

  PetscFunctionBegin;
  PetscCall(PetscFree2(d->work, d->iwork));
  PetscCall(NNConvTransposeCreateDMs(l));
  PetscCall(DMCreateGlobalVector(d->h.daout, y));
  PetscCall(PetscMemzero(g, sizeof(*g)));
  PetscCall(NNSpatialHaloGetCorners(&d->h, d->nd, g->os, g->om, g->gs, g->gm));
  if (d->h.halo > 0) PetscCall(NNSpatialHaloCreateVecs(&d->h)); /* halo 0: the input's own array is the ghosted array */
  g->ntap = 1;
  for (PetscInt a = 0; a < 3; a++) {
    PetscBool on = (PetscBool)(a < d->nd);
    g->N[a]      = on ? l->inshape.dim[d->nd - a] : 1;
    g->k[a]      = on ? d->k[a] : 1;
    g->s[a]      = on ? d->s[a] : 1;
    g->p[a]      = on ? d->pad[a] : 0;
    g->dil[a]    = on ? d->dil[a] : 1;
    g->ntap *= g->k[a];
  }
  g->transposed = PETSC_TRUE;
  g->nb         = l->nbatch;
  g->ns         = l->nbatch;
  g->Cin        = l->inshape.dim[0];
  g->Cout       = d->filters;
  g->G          = d->groups;
  g->Cg         = g->Cin / g->G;
  g->Og         = g->Cout / g->G;
  g->K          = g->ntap * g->Cg;
  g->bias       = d->bias;
  g->Ka         = g->K + (d->bias ? 1 : 0);
  g->npix       = g->om[0] * g->om[1] * g->om[2];
  g->alg        = NN_CONV_IM2COL;
  g->rows       = NNConvIm2colDefaultRows(g->Ka);
  d->nthreads   = d->threads > 0 ? d->threads : (PetscInt)openblas_get_num_threads();
  d->nthreads   = PetscMax(1, PetscMin(d->nthreads, NN_CONV_MAX_THREADS));
  PetscCall(NNConvWorkspaceSize(g, d->nthreads, &nscalar, &nint));
  PetscCall(PetscMalloc2(nscalar, &d->work, PetscMax(nint, 1), &d->iwork));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNConvTransposeCheckReady(NNLayer l)
{
  PetscFunctionBegin;
  PetscCheck(((NNLayer_ConvTranspose *)l->data)->h.daout, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s (%s): create its output Vec (NNSetUp() does) before running it", ((PetscObject)l)->name, ((PetscObject)l)->type_name);
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerForwardVec_ConvTranspose(NNLayer l, PetscInt n, Vec x, Vec y)
{
  NNLayer_ConvTranspose *d = (NNLayer_ConvTranspose *)l->data;
  NNConvGeom             g = d->g;
  NNConvPass             pass;
  const PetscScalar     *xa, *W = l->theta, *b;
  PetscScalar           *ya;
  Vec                    xin;
  PetscLogDouble         flops;

  PetscFunctionBegin;
  PetscCall(NNConvTransposeCheckReady(l));
  g.ns = n;
  b    = l->theta + g.Cout * g.K;
  NNConvTransposePackWeights(&g, W, b, d->Wp); /* group blocks of Ka x Og (weight [in, out/groups, taps]), then the biases */
  PetscCall(NNSpatialHaloGetInput(&d->h, x, &xin));
  PetscCall(VecGetArrayRead(xin, &xa));
  PetscCall(VecGetArrayWrite(y, &ya));
  if (n < g.nb)
    for (PetscInt q = 0; q < g.npix; q++) PetscCall(PetscArrayzero(ya + (q * g.nb + n) * g.Cout, (g.nb - n) * g.Cout));
  PetscCall(PetscMemzero(&pass, sizeof(pass)));
  pass.x  = xa;
  pass.y  = ya;
  pass.Wp = d->Wp;
  PetscCall(NNConvRun(&g, &pass, d->nthreads, d->work, d->iwork, &flops));
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(VecRestoreArrayRead(xin, &xa));
  PetscCall(NNSpatialHaloRestoreInput(&d->h));
  PetscCall(PetscLogFlops(flops));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardVec_ConvTranspose(NNLayer l, PetscInt n, Vec x, Vec y PETSC_UNUSED, Vec dy, Vec dx)
{
  NNLayer_ConvTranspose *d = (NNLayer_ConvTranspose *)l->data;
  NNConvGeom             g = d->g;
  NNConvPass             pass;
  const PetscScalar     *xa, *dya;
  PetscScalar           *dxa = NULL;
  Vec                    xin, dxin = NULL;
  PetscMPIInt            cnt;
  PetscLogDouble         flops;

  PetscFunctionBegin;
  PetscCall(NNConvTransposeCheckReady(l));
  g.ns = n;
  PetscCall(PetscArrayzero(d->dWp, g.Cout * g.Ka));
  PetscCall(NNSpatialHaloGetInput(&d->h, x, &xin));
  PetscCall(VecGetArrayRead(xin, &xa));
  PetscCall(VecGetArrayRead(dy, &dya));
  if (dx) {
    PetscCall(NNSpatialHaloGetInputGradient(&d->h, dx, &dxin));
    PetscCall(VecZeroEntries(dxin));
    PetscCall(VecGetArray(dxin, &dxa));
  }
  PetscCall(PetscMemzero(&pass, sizeof(pass)));
  pass.x  = xa;
  pass.dy = dya;
  pass.dx = dxa;
  pass.dW = d->dWp;
  pass.Wp = d->Wp; /* packed by the forward pass */
  PetscCall(NNConvRun(&g, &pass, d->nthreads, d->work, d->iwork, &flops));
  NNConvTransposeUnpackGradient(&g, d->dWp, d->grad, d->grad + g.Cout * g.K);
  PetscCall(VecRestoreArrayRead(dy, &dya));
  PetscCall(VecRestoreArrayRead(xin, &xa));
  PetscCall(NNSpatialHaloRestoreInput(&d->h));
  /* the parameter gradient, summed over the ranks that hold pieces of the samples */
  PetscCall(PetscMPIIntCast(l->nparam, &cnt));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, d->grad, cnt, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)l)));
  for (PetscInt i = 0; i < l->nparam; i++) l->dtheta[i] += d->grad[i];
  if (dx) {
    PetscCall(VecRestoreArray(dxin, &dxa));
    if (d->h.dxl) PetscCall(NNSpatialHaloRestoreInputGradient(&d->h, dx));
  }
  PetscCall(PetscLogFlops(flops));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerDestroy_ConvTranspose(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNConvTransposeComposeFunctions(l, PETSC_FALSE));
  PetscCall(PetscFree(l->data));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerCreate_ConvTranspose(NNLayer l, PetscInt nd)
{
  NNLayer_ConvTranspose *d;

  PetscFunctionBegin;
  PetscCall(PetscNew(&d));
  d->nd     = nd;
  d->groups = 1;
  for (PetscInt a = 0; a < 3; a++) {
    d->k[a]   = 2;
    d->s[a]   = 2;
    d->dil[a] = 1;
  }
  d->bias                 = PETSC_TRUE;
  l->data                 = d;
  l->ops->setup           = NNLayerSetUp_ConvTranspose;
  l->ops->initialize      = NNLayerInitialize_ConvTranspose;
  l->ops->forwardvec      = NNLayerForwardVec_ConvTranspose;
  l->ops->backwardvec     = NNLayerBackwardVec_ConvTranspose;
  l->ops->forwardsingle   = NNLayerForwardSingle_ConvTranspose;
  l->ops->backwardsingle  = NNLayerBackwardSingle_ConvTranspose;
  l->ops->createoutputvec = NNLayerCreateOutputVec_ConvTranspose;
  l->ops->setfromoptions  = NNLayerSetFromOptions_ConvTranspose;
  l->ops->view            = NNLayerView_ConvTranspose;
  l->ops->reset           = NNLayerReset_ConvTranspose;
  l->ops->destroy         = NNLayerDestroy_ConvTranspose;
#if defined(PETNN_HAVE_CUDA)
  l->ops->forwarddevice  = NNLayerForwardDevice_ConvTranspose; /* im2col kernels and GEMMs (layers/conv/conv_gemm_cuda.c) */
  l->ops->backwarddevice = NNLayerBackwardDevice_ConvTranspose;
#endif
  l->dev.split = PETSC_TRUE; /* also on spatial activations split over ranks (the gather of the CPU's passes) */
  PetscCall(NNConvTransposeComposeFunctions(l, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERCONVTRANSPOSE2D - "conv_transpose2d": 2-d transposed convolution (torch.nn.ConvTranspose2d) on a spatial DMDA activation

   Options Database Keys:
+  -<prefix>filters <n> - output channels (required)
.  -<prefix>kernel <k[,k]> - kernel size, one value or (height,width) (default 2)
.  -<prefix>stride <s[,s]> - stride (default 2: the U-Net up-convolution with the default kernel)
.  -<prefix>padding <p[,p]> - PyTorch's padding: pixels dropped from each side of the full output (default 0)
.  -<prefix>output_padding <p[,p]> - extra pixels on the far side of each axis; smaller than the stride or the dilation (default 0)
.  -<prefix>dilation <d[,d]> - spacing of the kernel taps (default 1)
.  -<prefix>groups <g> - groups; must divide the input channels and the filters (default 1)
.  -<prefix>bias <bool> - add a bias (default true)
-  -<prefix>threads <t> - threads splitting the outputs or the batch (default OpenBLAS's thread count)

   Notes:
   Parameters are weight [in, filters/groups, kh, kw] and bias [filters], as in PyTorch, so
   checkpoints move between the two. The output has PyTorch's size
   (in - 1) stride - 2 padding + dilation (kernel - 1) + output_padding + 1 along each axis. The
   output's ranks own stride times their input ranges (the last rank also the remainder), so with
   kernel = stride and no padding the layout is exactly the input's scaled by the stride.

   Each output pixel gathers its inputs (im2col + GEMM of depth in/groups*kh*kw; with stride s a
   fraction 1 - 1/s^2 of the GEMM's columns are zeros). The halo is exchanged before each pass and the
   input gradient summed back with DMLocalToGlobal(ADD_VALUES). On the device (-nn_device cuda, one rank) the passes
   are PetNN's im2col/col2im kernels and cuBLAS GEMMs.

   Level: intermediate

.seealso: `NNLAYERCONVTRANSPOSE3D`, `NNLAYERCONV2D`, `NNLAYERUPSAMPLE`, `NNLayerConvTransposeSetOutputPadding()`, `NNLayerConvSetFilters()`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_ConvTranspose2d(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerCreate_ConvTranspose(l, 2));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERCONVTRANSPOSE3D - "conv_transpose3d": 3-d transposed convolution (torch.nn.ConvTranspose3d) on a 3-d spatial DMDA activation

   Options Database Keys:
+  -<prefix>filters <n> - output channels (required)
.  -<prefix>kernel <k[,k,k]> - kernel size, one value or (depth,height,width) (default 2)
.  -<prefix>stride <s[,s,s]> - stride (default 2)
.  -<prefix>padding <p[,p,p]> - PyTorch's padding (default 0)
.  -<prefix>output_padding <p[,p,p]> - extra pixels on the far side (default 0)
.  -<prefix>dilation <d[,d,d]> - spacing of the kernel taps (default 1)
.  -<prefix>groups <g> - groups (default 1)
.  -<prefix>bias <bool> - add a bias (default true)
-  -<prefix>threads <t> - threads splitting the outputs or the batch

   Notes:
   Parameters are weight [in, filters/groups, kd, kh, kw] and bias [filters], as in PyTorch; see
   `NNLAYERCONVTRANSPOSE2D`.

   Level: intermediate

.seealso: `NNLAYERCONVTRANSPOSE2D`, `NNLAYERCONV3D`, `NNLayerConvTransposeSetOutputPadding()`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_ConvTranspose3d(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerCreate_ConvTranspose(l, 3));
  PetscFunctionReturn(0);
}
