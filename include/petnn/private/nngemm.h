/* The float GEMM of the layers' own passes (src/sys/threads.c): cblas_sgemm's signature, split over PetNN's threads
   inside NNThreadsBegin/End. The precision templates call it as NN_GEMM_LAYER. */
#pragma once

#include <petscsys.h>
#include <cblas.h>

PETSC_INTERN void NNGemmLayerSingle(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint, blasint, blasint, float, const float *, blasint, const float *, blasint, float, float *, blasint);
