/* The partitioned convolution's steps around the replicated algorithms (conv_partition.c), a precision template
   (include/petnn/private/nnrealdouble.h) compiled in double (conv.c's passes) and in float (conv_single.c's): the
   activations and their pieces are NN_REAL; the parameter gradient (grad) stays double in both. */

/* the ghosted input the pass reads: the replicated one (filters) or this rank's channels of it (channels) */
PetscErrorCode PetscConcat(NNConvPartInput, NN_SUFFIX)(NNLayer l, const NN_REAL *xa, const NN_REAL **xuse)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;
  NN_REAL          *buf, *buf2;

  PetscFunctionBegin;
  PetscConcat(NNConvPartBuffers, NN_SUFFIX)(d, &buf, &buf2);
  *xuse = xa;
  if (l->part.type != NN_PARTITION_CHANNELS) PetscFunctionReturn(0);
  PetscCall(PetscConcat(NNPartColumnsTake, NN_SUFFIX)(&d->pc, NNConvPartRows(&d->g, l->part.type), xa, d->pc.ncol, buf, d->pcnt));
  *xuse = buf;
  PetscFunctionReturn(0);
}

/* completes the output from what this rank computed: all-gathers the filters' channels from pbuf (filters),
   or sums the partial outputs and adds the bias to the first n slots (channels); collective */
PetscErrorCode PetscConcat(NNConvPartOutput, NN_SUFFIX)(NNLayer l, PetscInt n, NN_REAL *ya)
{
  NNLayer_Conv      *d    = (NNLayer_Conv *)l->data;
  const NNConvGeom  *g    = &d->g;
  PetscInt           rows = g->npix * g->nb, out = d->filters;
  const NN_REAL     *b    = PetscConcat(NNConvPartTheta, NN_SUFFIX)(l) + g->Cout * g->K;
  NN_REAL          *buf, *buf2;

  PetscFunctionBegin;
  PetscConcat(NNConvPartBuffers, NN_SUFFIX)(d, &buf, &buf2);
  if (l->part.type == NN_PARTITION_FILTERS) {
    PetscCall(PetscConcat(NNPartColumnsAllgather, NN_SUFFIX)(&d->pc, rows, buf, d->pcnt, ya, out));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscConcat(NNPartSum, NN_SUFFIX)(d->pc.comm, rows * out, ya));
  if (d->bias)
    for (PetscInt q = 0; q < g->npix; q++)
      for (PetscInt s = 0; s < n; s++)
        for (PetscInt o = 0; o < out; o++) ya[(q * g->nb + s) * out + o] += b[o];
  PetscFunctionReturn(0);
}

/* the output gradient the pass reads: this rank's filters' columns of dy (filters) or dy itself (channels);
   channels: adds the bias gradient of the first n slots into grad (the layer's gradient, before its sum over
   the spatial ranks) */
PetscErrorCode PetscConcat(NNConvPartOutputGradient, NN_SUFFIX)(NNLayer l, PetscInt n, const NN_REAL *dya, const NN_REAL **dyuse, PetscScalar *grad)
{
  NNLayer_Conv     *d = (NNLayer_Conv *)l->data;
  const NNConvGeom *g = &d->g;
  PetscInt          out = d->filters;
  NN_REAL          *buf, *buf2;

  PetscFunctionBegin;
  PetscConcat(NNConvPartBuffers, NN_SUFFIX)(d, &buf, &buf2);
  *dyuse = dya;
  if (l->part.type == NN_PARTITION_FILTERS) {
    PetscCall(PetscConcat(NNPartColumnsTake, NN_SUFFIX)(&d->pc, g->npix * g->nb, dya, out, buf, d->pcnt));
    *dyuse = buf;
  } else if (l->part.type == NN_PARTITION_CHANNELS && d->bias) {
    PetscScalar *db = grad + g->Cout * g->K;
    for (PetscInt q = 0; q < g->npix; q++)
      for (PetscInt s = 0; s < n; s++)
        for (PetscInt o = 0; o < out; o++) db[o] += dya[(q * g->nb + s) * out + o];
  }
  PetscFunctionReturn(0);
}

/* where the pass writes the ghosted input gradient: the replicated array (filters: a partial sum) or this
   rank's channels (channels: zeroed here) */
PetscErrorCode PetscConcat(NNConvPartInputGradient, NN_SUFFIX)(NNLayer l, NN_REAL *dxa, NN_REAL **dxuse)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;
  NN_REAL          *buf, *buf2;

  PetscFunctionBegin;
  PetscConcat(NNConvPartBuffers, NN_SUFFIX)(d, &buf, &buf2);
  *dxuse = dxa;
  if (!dxa || l->part.type != NN_PARTITION_CHANNELS) PetscFunctionReturn(0);
  PetscCall(PetscArrayzero(buf2, NNConvPartRows(&d->g, l->part.type) * d->pcnt));
  *dxuse = buf2;
  PetscFunctionReturn(0);
}

/* channels: all-gathers the channels' input gradients into the ghosted array dxa (before its halo sum);
   collective */
PetscErrorCode PetscConcat(NNConvPartGatherInputGradient, NN_SUFFIX)(NNLayer l, NN_REAL *dxa)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;
  NN_REAL          *buf, *buf2;

  PetscFunctionBegin;
  PetscConcat(NNConvPartBuffers, NN_SUFFIX)(d, &buf, &buf2);
  if (l->part.type != NN_PARTITION_CHANNELS) PetscFunctionReturn(0);
  PetscCall(PetscConcat(NNPartColumnsAllgather, NN_SUFFIX)(&d->pc, NNConvPartRows(&d->g, l->part.type), buf2, d->pcnt, dxa, d->pc.ncol));
  PetscFunctionReturn(0);
}

