/*
   Fuzz target: the ONNX importer (NNLoadONNX(): protobuf-c's unpacking of onnx.ModelProto and PetNN's translation of
   the graph into layers and parameters).

   Input: the model file's bytes. A model that loads is set up for a batch of 2, run forward on zeros and viewed.
   Needs a library built with ONNX import (PETNN_WITH_ONNX); without it every input is refused by NNLoadONNX().
*/
#define FUZZ_NAME onnx
#include "fuzz.h"

static PetscErrorCode FuzzONNXUse(const char file[], NN *net, Vec *x, PetscViewer *v)
{
  Vec y;

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_SELF, net));
  PetscCall(NNLoadONNX(*net, file));
  PetscCall(NNSetBatchSize(*net, 2));
  PetscCall(NNCreateBatchVecs(*net, x, NULL));
  PetscCall(NNForward(*net, 2, *x, &y));
  PetscCall(PetscViewerASCIIOpen(PETSC_COMM_SELF, "/dev/null", v));
  PetscCall(NNView(*net, *v));
  PetscFunctionReturn(0);
}

static int FuzzOne_onnx(const uint8_t *data, size_t size)
{
  char        file[PETSC_MAX_PATH_LEN];
  NN          net = NULL;
  Vec         x   = NULL;
  PetscViewer v   = NULL;

  FuzzTempName(file, sizeof(file), "model.onnx");
  if (FuzzWriteFile(file, data, size)) return 0;
  FuzzBegin();
  (void)FuzzONNXUse(file, &net, &x, &v);
  (void)PetscViewerDestroy(&v);
  (void)VecDestroy(&x);
  (void)NNDestroy(&net);
  FuzzEnd();
  unlink(file);
  return 0;
}
