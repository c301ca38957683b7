/* ONNX import (NNLoadONNX()): the state of one import, shared by the files of src/nn/onnx. Only with PETNN_HAVE_ONNX:
   onnx.pb-c.h is generated from Debian's onnx.proto by protoc-c at build time (CMakeLists.txt). */
#pragma once
#include <petnn/private/nnimpl.h>
#include <petnn/private/layerimpl.h>
#include "onnx.pb-c.h"

#define NN_ONNX_SUPPORTED "Gemm, MatMul (+ Add), Relu, LeakyRelu, Tanh, Sigmoid, Flatten, Reshape (to flat), Identity, Dropout"

typedef struct {
  NN                      net;
  MPI_Comm                comm;
  const Onnx__GraphProto *g;
  int64_t                 opset; /* of the default domain */
  const char             *cur;   /* the tensor the chain has reached */
  PetscInt                nfeat; /* its features per sample (-1: not flat) */
  PetscInt                nnames;
  char                  **names; /* layer names given so far */
} NNONNX;

PETSC_INTERN PetscErrorCode NNONNXGetInitializer(NNONNX *, const char[], const Onnx__TensorProto **);
PETSC_INTERN PetscErrorCode NNONNXTensorSize(NNONNX *, const Onnx__TensorProto *, PetscInt *);
PETSC_INTERN PetscErrorCode NNONNXTensorToScalars(NNONNX *, const Onnx__TensorProto *, PetscScalar **, PetscInt *);
PETSC_INTERN PetscErrorCode NNONNXSetInput(NNONNX *);
PETSC_INTERN PetscErrorCode NNONNXConvertNodes(NNONNX *);
PETSC_INTERN PetscErrorCode NNONNXAddLayer(NNONNX *, const Onnx__NodeProto *, NNLayerType, NNLayer *);
PETSC_INTERN PetscErrorCode NNONNXUnsupported(NNONNX *, const Onnx__NodeProto *, const char[]);
PETSC_INTERN const Onnx__AttributeProto *NNONNXGetAttribute(const Onnx__NodeProto *, const char[]);
