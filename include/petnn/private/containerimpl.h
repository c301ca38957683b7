/* Private helpers of the container layers, whose children run in order as one block: "residual"
   (layers/container/residual.c) and "ode" (ts/ode). One implementation: layers/container/container.c. */
#pragma once

#include <petnn/private/nnimpl.h>

/* the children's activation Vecs, wired as NNSetUp() wires a network */
typedef struct {
  Vec     *out;  /* out[c]: output of child c, capacity nbatch, in the layout child c makes */
  Vec     *dout; /* dout[c]: gradient w.r.t. out[c] (the last one is NULL: the block's own output gradient) */
  PetscInt nvec; /* number of children the Vecs were made for (0: not made yet) */
} NNLayerContainer;

PETSC_INTERN const char    *NNLayerContainerPrefix(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerContainerAddLayer(NNLayer, const char[], NNLayerType, const char[], NNLayer *);
PETSC_INTERN PetscErrorCode NNLayerContainerSetFromOptions(NNLayer, const char[], const char[], const char[], NNOptionItems );
PETSC_INTERN PetscErrorCode NNLayerContainerSetUpChildren(NNLayer, NNShape *);
PETSC_INTERN PetscBool      NNLayerContainerSameShape(const NNShape *, const NNShape *);
PETSC_INTERN PetscErrorCode NNLayerContainerCheckLayout(NNLayer, const char[], const char[], DM, DM);
PETSC_INTERN PetscErrorCode NNLayerContainerCreateVecs(NNLayer, NNLayerContainer *, DM, DM *);
PETSC_INTERN PetscErrorCode NNLayerContainerDestroyVecs(NNLayerContainer *);
PETSC_INTERN PetscErrorCode NNLayerContainerGetInputDM(NNLayer, Vec, DM *);
PETSC_INTERN PetscErrorCode NNLayerContainerCreateOutputVec(NNLayer, DM, Vec *);
