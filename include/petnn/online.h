/*
   Online training inside a running simulation (included by petnn.h): one optimizer step on a batch the
   caller hands over, and a replay buffer the simulation pushes (input, target) pairs into and training
   draws minibatches from. Tutorial: tutorials/17-online-training.md.
*/
#pragma once

/* a network from an options or YAML file (src/nn/interface/nnfromfile.c) */
PETSC_EXTERN PetscErrorCode NNCreateFromOptionsFile(MPI_Comm, const char[], const char[], NN *);

/* one step of the trainer on the caller's batch (src/trainer/interface/trainstep*.c) */
PETSC_EXTERN PetscErrorCode NNTrainStep(NN, Vec, Vec, PetscReal *);
PETSC_EXTERN PetscErrorCode NNTrainerSetStepsPerEpoch(NNTrainer, PetscInt);
PETSC_EXTERN PetscErrorCode NNTrainerGetStepsPerEpoch(NNTrainer, PetscInt *);

/* the replay buffer (src/data/impls/buffer): a ring of capacity K samples, on each rank its own part of each
   sample (a full sample, or its piece of a DMDA Vec); each data group keeps its own */
#define NNDATABUFFER "buffer"
PETSC_EXTERN PetscErrorCode NNDataBufferSetCapacity(NNData, PetscInt);
PETSC_EXTERN PetscErrorCode NNDataBufferGetCapacity(NNData, PetscInt *);
PETSC_EXTERN PetscErrorCode NNDataBufferSetReplacement(NNData, PetscBool);
PETSC_EXTERN PetscErrorCode NNDataBufferSetSeed(NNData, PetscInt64);
PETSC_EXTERN PetscErrorCode NNDataBufferPush(NNData, Vec, Vec);
PETSC_EXTERN PetscErrorCode NNDataBufferGetCount(NNData, PetscInt *, PetscInt64 *); /* samples held, samples ever pushed */
PETSC_EXTERN PetscErrorCode NNDataBufferSample(NNData, PetscInt, PetscInt[]);        /* draws slot indices as training does */
PETSC_EXTERN PetscErrorCode NNDataBufferGetMemory(NNData, PetscLogDouble *);
PETSC_EXTERN PetscErrorCode NNDataBufferTSMonitor(TS, PetscInt, PetscReal, Vec, void *);
PETSC_EXTERN PetscErrorCode NNDataBufferSetHorizon(NNData, PetscInt);

/* a network's replay buffer: NNTrainStepBuffer() draws a minibatch from it; checkpoints save and load its contents */
PETSC_EXTERN PetscErrorCode NNSetTrainBuffer(NN, NNData);
PETSC_EXTERN PetscErrorCode NNGetTrainBuffer(NN, NNData *);
PETSC_EXTERN PetscErrorCode NNTrainStepBuffer(NN, PetscReal *);
