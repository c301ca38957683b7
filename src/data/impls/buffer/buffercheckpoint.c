/*
   NNDATABUFFER in checkpoints: every rank's part of the ring (the slots in use, as they lie, with the head, the
   counters and the draws' generator) gathered on the writing rank, stored in the network's checkpoint as

     /buffer/header   int64 [P, 11]: capacity, count, head, pushed, seeded, xsize, ysize, xglobal, yglobal, xdm, ydm
     /buffer/rng      uint64 [P, 4]: the generator of the draws
     /buffer/x, /buffer/y  double: the slots in use, rank after rank ([count][xsize] and [count][ysize] each)

   and scattered back on load, so a restarted run holds the same samples in the same slots and draws the same
   minibatches. A restart needs the same number of ranks (P).
*/
#include <petnn/private/bufferimpl.h>

PetscErrorCode NNBufferImageFree(NNBufferImage *img)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(img->header));
  PetscCall(PetscFree(img->rng));
  PetscCall(PetscFree(img->x));
  PetscCall(PetscFree(img->y));
  PetscCall(PetscMemzero(img, sizeof(*img)));
  PetscFunctionReturn(0);
}

/* counts and displacements of each rank's slots in use, from the gathered headers (rank 0) */
static PetscErrorCode NNBufferImageCounts(const NNBufferImage *img, PetscInt which, PetscMPIInt cnt[], PetscMPIInt displ[], PetscInt *total)
{
  PetscInt64 t = 0;

  PetscFunctionBegin;
  for (PetscMPIInt r = 0; r < img->size; r++) {
    const int64_t *h = img->header + (size_t)r * NN_BUFFER_HEADER;
    PetscCall(PetscMPIIntCast((PetscInt)t, &displ[r]));
    PetscCall(PetscMPIIntCast((PetscInt)(h[1] * h[which]), &cnt[r]));
    t += h[1] * h[which];
  }
  *total = (PetscInt)t;
  PetscFunctionReturn(0);
}

PetscErrorCode NNDataBufferGather_Private(NNData d, MPI_Comm comm, NNBufferImage *img)
{
  NNData_Buffer *b = (NNData_Buffer *)d->data;
  int64_t        h[NN_BUFFER_HEADER] = {b->capacity, b->count, b->head, b->pushed, b->seeded, b->xsize, b->ysize, b->xglobal, b->yglobal, b->xdm, b->ydm};
  PetscMPIInt    rank, *cnt = NULL, *displ = NULL, n;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(img, sizeof(*img)));
  PetscCallMPI(MPI_Comm_size(comm, &img->size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) {
    PetscCall(PetscMalloc1((size_t)img->size * NN_BUFFER_HEADER, &img->header));
    PetscCall(PetscMalloc1((size_t)img->size * 4, &img->rng));
    PetscCall(PetscMalloc2(img->size, &cnt, img->size, &displ));
  }
  PetscCallMPI(MPI_Gather(h, NN_BUFFER_HEADER, MPIU_INT64, img->header, NN_BUFFER_HEADER, MPIU_INT64, 0, comm));
  PetscCallMPI(MPI_Gather(b->rng.s, 4, MPI_UINT64_T, img->rng, 4, MPI_UINT64_T, 0, comm));
  for (PetscInt k = 0; k < 2; k++) {
    PetscScalar **dst = k ? &img->y : &img->x, *src = k ? b->y : b->x;
    PetscInt     *tot = k ? &img->ny : &img->nx;
    if (!rank) {
      PetscCall(NNBufferImageCounts(img, k ? 6 : 5, cnt, displ, tot));
      PetscCall(PetscMalloc1(PetscMax(*tot, 1), dst));
    }
    PetscCall(PetscMPIIntCast(b->count * (k ? b->ysize : b->xsize), &n));
    PetscCallMPI(MPI_Gatherv(src, n, MPIU_SCALAR, *dst, cnt, displ, MPIU_SCALAR, 0, comm));
  }
  if (!rank) PetscCall(PetscFree2(cnt, displ));
  PetscFunctionReturn(0);
}

/* this rank's header from the checkpoint against the buffer it goes into */
static PetscErrorCode NNBufferApplyHeader(NNData d, const int64_t h[], const uint64_t rng[])
{
  NNData_Buffer *b      = (NNData_Buffer *)d->data;
  const char    *prefix = ((PetscObject)d)->prefix ? ((PetscObject)d)->prefix : "";

  PetscFunctionBegin;
  PetscCheck(h[0] == b->capacity, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "The checkpoint's replay buffer has capacity %" PetscInt64_FMT ", replay buffer%s%s has %" PetscInt_FMT " (-%sdata_buffer_capacity)", (PetscInt64)h[0], NNBufferSep(d), prefix, b->capacity, prefix);
  PetscCheck(!b->xglobal || (h[5] == b->xsize && h[6] == b->ysize && h[9] == b->xdm && h[10] == b->ydm), PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "The checkpoint's replay buffer holds samples of %" PetscInt64_FMT " input and %" PetscInt64_FMT " target values on this rank, replay buffer%s%s of %" PetscInt_FMT " and %" PetscInt_FMT, (PetscInt64)h[5], (PetscInt64)h[6], NNBufferSep(d), prefix, b->xsize, b->ysize);
  b->count   = (PetscInt)h[1];
  b->head    = (PetscInt)h[2];
  b->pushed  = (PetscInt64)h[3];
  b->seeded  = (PetscBool)h[4];
  b->xsize   = (PetscInt)h[5];
  b->ysize   = (PetscInt)h[6];
  b->xglobal = (PetscInt)h[7];
  b->yglobal = (PetscInt)h[8];
  b->xdm     = (PetscBool)h[9];
  b->ydm     = (PetscBool)h[10];
  for (int k = 0; k < 4; k++) b->rng.s[k] = rng[k];
  d->nsamples = b->count;
  d->rend     = b->count;
  d->ntarget  = b->yglobal;
  if (!d->shape.ndim) d->shape = (NNShape){1, {b->xglobal}};
  PetscCall(PetscFree(b->x));
  PetscCall(PetscFree(b->y));
  if (b->xglobal) {
    PetscCall(PetscMalloc1(PetscMax((size_t)b->capacity * b->xsize, 1), &b->x));
    PetscCall(PetscMalloc1(PetscMax((size_t)b->capacity * b->ysize, 1), &b->y));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NNDataBufferScatter_Private(NNData d, MPI_Comm comm, NNBufferImage *img)
{
  NNData_Buffer *b = (NNData_Buffer *)d->data;
  int64_t        h[NN_BUFFER_HEADER];
  uint64_t       rng[4];
  PetscMPIInt    rank, size, P = img->size, *cnt = NULL, *displ = NULL, n;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Bcast(&P, 1, MPI_INT, 0, comm));
  PetscCheck(P == size, comm, PETSC_ERR_ARG_INCOMP, "The checkpoint's replay buffer was written by %d ranks, this run has %d: restart on as many ranks", (int)P, (int)size);
  PetscCallMPI(MPI_Scatter(img->header, NN_BUFFER_HEADER, MPIU_INT64, h, NN_BUFFER_HEADER, MPIU_INT64, 0, comm));
  PetscCallMPI(MPI_Scatter(img->rng, 4, MPI_UINT64_T, rng, 4, MPI_UINT64_T, 0, comm));
  PetscCall(NNBufferApplyHeader(d, h, rng));
  if (!rank) PetscCall(PetscMalloc2(P, &cnt, P, &displ));
  for (PetscInt k = 0; k < 2; k++) {
    PetscInt tot;
    if (!rank) PetscCall(NNBufferImageCounts(img, k ? 6 : 5, cnt, displ, &tot));
    PetscCall(PetscMPIIntCast(b->count * (k ? b->ysize : b->xsize), &n));
    PetscCallMPI(MPI_Scatterv(k ? img->y : img->x, cnt, displ, MPIU_SCALAR, k ? b->y : b->x, n, MPIU_SCALAR, 0, comm));
  }
  if (!rank) PetscCall(PetscFree2(cnt, displ));
  PetscFunctionReturn(0);
}

PetscErrorCode NNBufferImageWrite(int64_t fid, const NNBufferImage *img)
{
  PetscInt dh[2] = {img->size, NN_BUFFER_HEADER}, dr[2] = {img->size, 4};

  PetscFunctionBegin;
  PetscCall(NNH5WriteInt64(fid, "buffer/header", 2, dh, img->header));
  PetscCall(NNH5WriteUInt64(fid, "buffer/rng", 2, dr, img->rng));
  PetscCall(NNH5WriteArray(fid, "buffer/x", 1, &img->nx, img->x));
  PetscCall(NNH5WriteArray(fid, "buffer/y", 1, &img->ny, img->y));
  PetscFunctionReturn(0);
}

/* rank 0: the image, if the checkpoint holds one (found) */
PetscErrorCode NNBufferImageRead(int64_t fid, const char file[], NNBufferImage *img, PetscBool *found)
{
  PetscInt     nd, dims[NN_H5_MAX_DIM], dr[2], cnt;
  PetscMPIInt *c, *dspl;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(img, sizeof(*img)));
  PetscCall(NNH5IsDataset(fid, "buffer/header", found));
  if (!*found) PetscFunctionReturn(0);
  PetscCall(NNH5GetShape(fid, "buffer/header", &nd, dims));
  PetscCheck(nd == 2 && dims[1] == NN_BUFFER_HEADER, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Checkpoint %s: buffer/header should be [ranks, %d]", file, NN_BUFFER_HEADER);
  PetscCall(PetscMPIIntCast(dims[0], &img->size));
  dr[0] = dims[0];
  dr[1] = 4;
  PetscCall(PetscMalloc1((size_t)dims[0] * NN_BUFFER_HEADER, &img->header));
  PetscCall(PetscMalloc1((size_t)dims[0] * 4, &img->rng));
  PetscCall(NNH5ReadInt64(fid, "buffer/header", 2, dims, img->header));
  PetscCall(NNH5ReadUInt64(fid, "buffer/rng", 2, dr, img->rng));
  PetscCall(PetscMalloc2(img->size, &c, img->size, &dspl));
  PetscCall(NNBufferImageCounts(img, 5, c, dspl, &img->nx));
  PetscCall(NNBufferImageCounts(img, 6, c, dspl, &cnt));
  img->ny = cnt;
  PetscCall(PetscFree2(c, dspl));
  PetscCall(PetscMalloc1(PetscMax(img->nx, 1), &img->x));
  PetscCall(PetscMalloc1(PetscMax(img->ny, 1), &img->y));
  PetscCall(NNH5ReadArray(fid, "buffer/x", 1, &img->nx, img->x));
  PetscCall(NNH5ReadArray(fid, "buffer/y", 1, &img->ny, img->y));
  PetscFunctionReturn(0);
}
