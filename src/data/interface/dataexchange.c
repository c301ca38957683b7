/*
   Distributed data sets: the rows of a minibatch fetched from the ranks that hold them
   (NNDataGetBatchOn() in data.c calls it when the data set is distributed).
*/
#include <petnn/private/nnimpl.h>

/* x2d[q]: rank q of xcomm in the data set's communicator comm; d2x[r]: rank r of comm in xcomm, -1 if not in it */
static PetscErrorCode NNDataExchangeRanks(MPI_Comm comm, MPI_Comm xcomm, PetscMPIInt x2d[], PetscMPIInt d2x[])
{
  MPI_Group    gd, gx;
  PetscMPIInt  P, Q, *seq;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &P));
  PetscCallMPI(MPI_Comm_size(xcomm, &Q));
  PetscCall(PetscMalloc1(Q, &seq));
  for (PetscMPIInt q = 0; q < Q; q++) seq[q] = q;
  PetscCallMPI(MPI_Comm_group(comm, &gd));
  PetscCallMPI(MPI_Comm_group(xcomm, &gx));
  PetscCallMPI(MPI_Group_translate_ranks(gx, Q, seq, gd, x2d));
  PetscCallMPI(MPI_Group_free(&gd));
  PetscCallMPI(MPI_Group_free(&gx));
  PetscCall(PetscFree(seq));
  for (PetscMPIInt r = 0; r < P; r++) d2x[r] = -1;
  for (PetscMPIInt q = 0; q < Q; q++) {
    PetscCheck(x2d[q] != MPI_UNDEFINED, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The exchange communicator is not part of the data set's communicator");
    d2x[x2d[q]] = q;
  }
  PetscFunctionReturn(0);
}

/* the rows requested by every rank of xcomm, fetched from their owners: one MPI_Alltoall of the
   counts, one MPI_Alltoallv of the row numbers, one of the rows (features and targets together) */
PetscErrorCode NNDataExchange(NNData d, MPI_Comm xcomm, PetscInt n, const PetscInt idx[], PetscScalar *x, PetscScalar *t)
{
  MPI_Comm     comm = PetscObjectComm((PetscObject)d);
  PetscMPIInt  P, Q, *d2x, *x2d, *scnt, *rcnt, *sdsp, *rdsp, *owner, bad = 0, anybad = 0;
  PetscInt     sz = NNShapeSize(&d->shape), k = d->ntarget, row = sz + k, nr = 0, *sidx, *ridx, *pos, *next;
  PetscScalar *rows, *rx, *rt, *got;
  char         msg[256] = "";

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &P));
  PetscCallMPI(MPI_Comm_size(xcomm, &Q));
  PetscCall(PetscMalloc2(Q, &x2d, P, &d2x));
  PetscCall(NNDataExchangeRanks(comm, xcomm, x2d, d2x));
  PetscCall(PetscCalloc4(Q, &scnt, Q, &rcnt, Q + 1, &sdsp, Q + 1, &rdsp));
  PetscCall(PetscMalloc1(n + 1, &owner));
  for (PetscInt i = 0; i < n && !bad; i++) {
    PetscMPIInt o;
    if (idx[i] < 0 || idx[i] >= d->nsamples) {
      PetscCall(PetscSNPrintf(msg, sizeof(msg), "Sample index %" PetscInt_FMT " out of range [0,%" PetscInt_FMT ") of data set %s", idx[i], d->nsamples, ((PetscObject)d)->prefix ? ((PetscObject)d)->prefix : ""));
      bad = 1;
      break;
    }
    PetscCall(NNDataGetOwner(d, idx[i], &o));
    if (d2x[o] < 0) {
      PetscCall(PetscSNPrintf(msg, sizeof(msg), "Sample %" PetscInt_FMT " of data set %s lives on rank %d, outside the ranks exchanging this batch", idx[i], ((PetscObject)d)->prefix ? ((PetscObject)d)->prefix : "", o));
      bad = 1;
      break;
    }
    owner[i] = d2x[o];
    scnt[owner[i]]++;
  }
  if (bad)
    for (PetscMPIInt q = 0; q < Q; q++) scnt[q] = -1; /* tells every rank */
  PetscCall(PetscLogEventBegin(NN_DataExchange, d, 0, 0, 0));
  PetscCallMPI(MPI_Alltoall(scnt, 1, MPI_INT, rcnt, 1, MPI_INT, xcomm));
  for (PetscMPIInt q = 0; q < Q; q++) anybad = anybad || rcnt[q] < 0;
  if (anybad) {
    PetscCall(PetscLogEventEnd(NN_DataExchange, d, 0, 0, 0));
    PetscCall(PetscFree(owner));
    PetscCall(PetscFree4(scnt, rcnt, sdsp, rdsp));
    PetscCall(PetscFree2(x2d, d2x));
    PetscCall(NNCollectiveCheck(xcomm, bad ? PETSC_ERR_ARG_OUTOFRANGE : 0, PETSC_TRUE, "", msg));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_PLIB, "Unreachable");
  }
  for (PetscMPIInt q = 0; q < Q; q++) {
    sdsp[q + 1] = sdsp[q] + scnt[q];
    rdsp[q + 1] = rdsp[q] + rcnt[q];
  }
  nr = rdsp[Q];
  /* row numbers grouped by owner, local to the owner; pos[j]: where the j-th returned row goes */
  PetscCall(PetscMalloc4(n + 1, &sidx, n + 1, &pos, nr + 1, &ridx, Q, &next));
  for (PetscMPIInt q = 0; q < Q; q++) next[q] = sdsp[q];
  for (PetscInt i = 0; i < n; i++) {
    PetscInt j = next[owner[i]]++;
    PetscMPIInt o = x2d[owner[i]];
    sidx[j] = idx[i] - (PetscInt)(((PetscInt64)d->nsamples * o) / P);
    pos[j]  = i;
  }
  PetscCallMPI(MPI_Alltoallv(sidx, scnt, sdsp, MPIU_INT, ridx, rcnt, rdsp, MPIU_INT, xcomm));
  /* serve the rows asked of this rank */
  PetscCall(PetscMalloc4((size_t)nr * sz + 1, &rx, (size_t)nr * k + 1, &rt, (size_t)nr * row + 1, &rows, (size_t)n * row + 1, &got));
  for (PetscInt j = 0; j < nr; j++) PetscCheck(ridx[j] >= 0 && ridx[j] < d->rend - d->rstart, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Row %" PetscInt_FMT " requested of a rank holding %" PetscInt_FMT, ridx[j], d->rend - d->rstart);
  if (nr) PetscUseTypeMethod(d, getbatch, nr, ridx, rx, rt);
  for (PetscInt j = 0; j < nr; j++) {
    PetscCall(PetscArraycpy(rows + j * row, rx + j * sz, sz));
    PetscCall(PetscArraycpy(rows + j * row + sz, rt + j * k, k));
  }
  for (PetscMPIInt q = 0; q < Q; q++) {
    PetscCheck((PetscInt64)sdsp[q + 1] * row < PETSC_MPI_INT_MAX && (PetscInt64)rdsp[q + 1] * row < PETSC_MPI_INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "Batch too large for one exchange");
    scnt[q] *= (PetscMPIInt)row;
    rcnt[q] *= (PetscMPIInt)row;
    sdsp[q] *= (PetscMPIInt)row;
    rdsp[q] *= (PetscMPIInt)row;
  }
  PetscCallMPI(MPI_Alltoallv(rows, rcnt, rdsp, MPIU_SCALAR, got, scnt, sdsp, MPIU_SCALAR, xcomm));
  PetscCall(PetscLogEventEnd(NN_DataExchange, d, 0, 0, 0));
  for (PetscInt j = 0; j < n; j++) {
    PetscInt i = pos[j];
    PetscCall(PetscArraycpy(x + i * sz, got + j * row, sz));
    if (t) PetscCall(PetscArraycpy(t + i * k, got + j * row + sz, k));
  }
  PetscCall(PetscFree4(rx, rt, rows, got));
  PetscCall(PetscFree4(sidx, pos, ridx, next));
  PetscCall(PetscFree(owner));
  PetscCall(PetscFree4(scnt, rcnt, sdsp, rdsp));
  PetscCall(PetscFree2(x2d, d2x));
  PetscFunctionReturn(0);
}
