/*
   The model-parallel primitives of partitionops.c on device arrays (-nn_device cuda), for the partitioned layers'
   device passes: [rows][cols] arrays whose columns are split over the ranks of the partition communicator.
     take        a strided device copy of the rank's columns (cudaMemcpy2DAsync, no host round trip);
     all-gather  the rank's columns downloaded into a page-locked stage, MPI_Allgatherv on the host (MPI need not be
                 CUDA-aware), every rank's block uploaded into its columns;
     sum         NNDeviceAllreduceSum() (src/layer/interface/spatialhalo_cuda.c).
   The stage is shared by all layers (one pass at a time): NNCUDAGetHostStage(NN_CUDA_STAGE_PARTITION).
   tests/cuda_model_parallel.c checks the layers that use them against their CPU passes.
*/
#include <petnn/private/cudaimpl.h>
#include <petnn/private/partitiondevice.h>

/*
   NNDevicePartColumnsTake - local[r][j] = full[r][dsp_me + j] for rows < n on device arrays of precision prec (leading
   dimensions ldf and ldl); not collective
*/
PetscErrorCode NNDevicePartColumnsTake(NNPartColumns *p, NNPrecision prec, PetscInt n, const void *full, PetscInt ldf, void *local, PetscInt ldl)
{
  size_t       es = prec == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  size_t       c  = (size_t)p->cnt[p->rank];
  cudaStream_t s;

  PetscFunctionBegin;
  if (!n || !c) PetscFunctionReturn(0);
  PetscCall(NNCUDAGetStream(&s));
  NNCallCUDA(cudaMemcpy2DAsync(local, (size_t)ldl * es, (const char *)full + (size_t)p->dsp[p->rank] * es, (size_t)ldf * es, c * es, (size_t)n, cudaMemcpyDeviceToDevice, s));
  PetscFunctionReturn(0);
}

/*
   NNDevicePartColumnsAllgather - full[r][dsp_q + j] = rank q's local[r][j] for rows < n on device arrays of precision
   prec; collective on the partition communicator
*/
PetscErrorCode NNDevicePartColumnsAllgather(NNPartColumns *p, NNPrecision prec, PetscInt n, const void *local, PetscInt ldl, void *full, PetscInt ldf)
{
  size_t       es = prec == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  PetscMPIInt *cnt, *dsp;
  char        *stage;
  cudaStream_t s;

  PetscFunctionBegin;
  PetscCheck(n <= p->maxrows, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "All-gather of %" PetscInt_FMT " rows; set up for %" PetscInt_FMT, n, p->maxrows);
  if (!n) PetscFunctionReturn(0);
  PetscCall(NNParallelRegisterEvents());
  PetscCall(PetscLogEventBegin(NN_PartGather, 0, 0, 0, 0));
  PetscCall(NNCUDAGetHostStage(NN_CUDA_STAGE_PARTITION, (size_t)n * p->ncol * es, "staging of a model-parallel all-gather", (void **)&stage));
  PetscCall(NNCUDAGetStream(&s));
  PetscCall(PetscMalloc2(p->size, &cnt, p->size, &dsp));
  for (PetscMPIInt q = 0; q < p->size; q++) { /* rank q's block: [n][cnt_q] from n * dsp_q */
    PetscCall(PetscMPIIntCast(n * p->cnt[q], &cnt[q]));
    PetscCall(PetscMPIIntCast(n * p->dsp[q], &dsp[q]));
  }
  if (p->cnt[p->rank]) NNCallCUDA(cudaMemcpy2DAsync(stage + (size_t)dsp[p->rank] * es, (size_t)p->cnt[p->rank] * es, local, (size_t)ldl * es, (size_t)p->cnt[p->rank] * es, (size_t)n, cudaMemcpyDeviceToHost, s));
  NNCallCUDA(cudaStreamSynchronize(s));
  PetscCallMPI(MPI_Allgatherv(MPI_IN_PLACE, cnt[p->rank], prec == NN_PRECISION_SINGLE ? MPI_FLOAT : MPI_DOUBLE, stage, cnt, dsp, prec == NN_PRECISION_SINGLE ? MPI_FLOAT : MPI_DOUBLE, p->comm));
  for (PetscMPIInt q = 0; q < p->size; q++)
    if (p->cnt[q]) NNCallCUDA(cudaMemcpy2DAsync((char *)full + (size_t)p->dsp[q] * es, (size_t)ldf * es, stage + (size_t)dsp[q] * es, (size_t)p->cnt[q] * es, (size_t)p->cnt[q] * es, (size_t)n, cudaMemcpyHostToDevice, s));
  NNCallCUDA(cudaStreamSynchronize(s)); /* the stage is free again */
  PetscCall(PetscFree2(cnt, dsp));
  PetscCall(PetscLogEventEnd(NN_PartGather, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}
