/*
   Collective errors and the log events of the parallel machinery: helpers every class may use
   (data sets, checkpoints, training), so none of them has to call into the network's grid code.
*/
#include <petnn/private/nnimpl.h>

PetscLogEvent NN_AllreduceLaunch, NN_AllreduceWait, NN_Allgather, NN_DataExchange, NN_Broadcast, NN_Tournament, NN_PartGather, NN_PartReduce;

static PetscBool NNParallelEventsRegistered = PETSC_FALSE;

static PetscErrorCode NNParallelFinalizeEvents(void)
{
  PetscFunctionBegin;
  NNParallelEventsRegistered = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* log events of the parallel machinery (registered on first use, so they follow the layer events in -log_view) */
PetscErrorCode NNParallelRegisterEvents(void)
{
  PetscFunctionBegin;
  if (NNParallelEventsRegistered) PetscFunctionReturn(0);
  NNParallelEventsRegistered = PETSC_TRUE;
  PetscCall(PetNNInitializePackage());
  PetscCall(NNLogEventRegister("NNAllreduceLaunch", NN_CLASSID, &NN_AllreduceLaunch));
  PetscCall(NNLogEventRegister("NNAllreduceWait", NN_CLASSID, &NN_AllreduceWait));
  PetscCall(NNLogEventRegister("NNAllgather", NN_CLASSID, &NN_Allgather));
  PetscCall(NNLogEventRegister("NNDataExchange", NNDATA_CLASSID, &NN_DataExchange));
  PetscCall(NNLogEventRegister("NNBroadcast", NN_CLASSID, &NN_Broadcast));
  PetscCall(NNLogEventRegister("NNTournament", NN_CLASSID, &NN_Tournament));
  PetscCall(NNLogEventRegister("NNPartGather", NN_CLASSID, &NN_PartGather)); /* model parallelism: all-gathers of split activations */
  PetscCall(NNLogEventRegister("NNPartReduce", NN_CLASSID, &NN_PartReduce)); /* model parallelism: sums of partial activations and gradients */
  PetscCall(PetscRegisterFinalize(NNParallelFinalizeEvents));
  PetscFunctionReturn(0);
}

/* every rank raises the error of the first rank where ierr is nonzero, with that rank's message (and,
   with tellrank, the rank that found it if the others did not) */
PetscErrorCode NNCollectiveCheck(MPI_Comm comm, PetscErrorCode ierr, PetscBool tellrank, const char what[], const char message[])
{
  PetscMPIInt rank, size, first, nbad, code = (PetscMPIInt)ierr;
  char        msg[1024] = "";

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  first = ierr ? rank : size;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm));
  if (first == size) PetscFunctionReturn(0);
  if (rank == first) PetscCall(PetscStrncpy(msg, message ? message : "unknown error", sizeof(msg)));
  PetscCallMPI(MPI_Bcast(msg, (PetscMPIInt)sizeof(msg), MPI_CHAR, first, comm));
  PetscCallMPI(MPI_Bcast(&code, 1, MPI_INT, first, comm));
  nbad = ierr ? 1 : 0;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &nbad, 1, MPI_INT, MPI_SUM, comm));
  if (tellrank && nbad < size) SETERRQ(comm, (PetscErrorCode)code, "%s%s (found on rank %d of %d; every rank stops)", what, msg, first, size);
  SETERRQ(comm, (PetscErrorCode)code, "%s%s", what, msg);
}

/* after a local step that may have failed on some ranks (ierr, caught with PetscReturnErrorHandler):
   every rank raises the first failing rank's error, so no rank waits in a later collective */
PetscErrorCode NNCollectiveError(MPI_Comm comm, PetscErrorCode ierr, PetscBool tellrank, const char what[])
{
  char *specific = NULL;

  PetscFunctionBegin;
  if (ierr) PetscCall(NNErrorMessage(ierr, NULL, &specific));
  PetscCall(NNCollectiveCheck(comm, ierr, tellrank, what, specific));
  PetscFunctionReturn(0);
}
