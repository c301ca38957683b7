/* NNLoadONNX(): an ONNX model file (ModelProto, parsed by protobuf-c) into the network's layers and parameters. */
#include <petnn/private/nnimpl.h>
#if defined(PETNN_HAVE_ONNX)
#include "onnximpl.h"

static PetscLogEvent NN_LoadONNX = 0;

/* the file's bytes, read on rank 0 and broadcast */
static PetscErrorCode NNONNXReadFile(MPI_Comm comm, const char file[], size_t *len, uint8_t **buf)
{
  PetscMPIInt rank;
  long        n = -1;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  *buf = NULL;
  if (rank == 0) {
    FILE *fp = fopen(file, "rb");
    if (fp && !fseek(fp, 0, SEEK_END)) n = ftell(fp);
    if (n >= 0 && n < PETSC_MPI_INT_MAX) {
      rewind(fp);
      if (PetscMalloc1(n + 1, buf)) n = -1; /* the file is closed on this path too */
      else if (fread(*buf, 1, (size_t)n, fp) != (size_t)n) n = -1;
    } else n = -1;
    if (fp) (void)fclose(fp);
  }
  PetscCallMPI(MPI_Bcast(&n, 1, MPI_LONG, 0, comm));
  if (n < 0) PetscCall(PetscFree(*buf));
  PetscCheck(n >= 0, comm, PETSC_ERR_FILE_OPEN, "Cannot read the ONNX model %s (missing, unreadable, or over 2 GB)", file);
  if (rank) PetscCall(PetscMalloc1(n + 1, buf));
  PetscCallMPI(MPI_Bcast(*buf, (PetscMPIInt)n, MPI_BYTE, 0, comm));
  *len = (size_t)n;
  PetscFunctionReturn(0);
}

/* the opset of the default domain ("" or "ai.onnx"), checked against the range the importer knows */
static PetscErrorCode NNONNXGetOpset(NNONNX *o, const Onnx__ModelProto *m, const char file[])
{
  PetscFunctionBegin;
  o->opset = -1;
  for (size_t i = 0; i < m->n_opset_import; i++) {
    const char *d = m->opset_import[i]->domain;
    PetscBool   onnx;
    PetscCall(PetscStrcmp(d, "ai.onnx", &onnx));
    if (!d || !d[0] || onnx) o->opset = m->opset_import[i]->version;
  }
  PetscCheck(o->opset >= 7 && o->opset <= 17, o->comm, PETSC_ERR_SUP, "ONNX model %s: opset %lld of the default domain is not supported (7 to 17 are; torch.onnx.export(..., opset_version=14))", file, (long long)o->opset);
  PetscFunctionReturn(0);
}

static PetscErrorCode NNONNXConvert(NNONNX *o, const Onnx__ModelProto *m, const char file[])
{
  PetscFunctionBegin;
  PetscCheck(m->graph, o->comm, PETSC_ERR_FILE_UNEXPECTED, "ONNX model %s has no graph (truncated or corrupt file?)", file);
  o->g = m->graph;
  PetscCall(NNONNXGetOpset(o, m, file));
  PetscCall(NNONNXSetInput(o));
  PetscCall(NNONNXConvertNodes(o));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLoadONNX_Private(NN net, const char file[])
{
  NNONNX            o = {0};
  size_t            len;
  uint8_t          *buf;
  Onnx__ModelProto *m;
  PetscErrorCode    ierr;

  PetscFunctionBegin;
  o.net  = net;
  o.comm = PetscObjectComm((PetscObject)net);
  PetscCall(NNONNXReadFile(o.comm, file, &len, &buf));
  m = onnx__model_proto__unpack(NULL, len, buf);
  PetscCall(PetscFree(buf));
  PetscCheck(m, o.comm, PETSC_ERR_FILE_UNEXPECTED, "%s is not a valid ONNX model: protobuf-c cannot parse it as an onnx.ModelProto (truncated or corrupt file?)", file);
  ierr = NNONNXConvert(&o, m, file);
  onnx__model_proto__free_unpacked(m, NULL);
  for (PetscInt i = 0; i < o.nnames; i++) PetscCall(PetscFree(o.names[i]));
  PetscCall(PetscFree(o.names));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}
#endif

/*@C
   NNLoadONNX - builds the network's layers and parameters from an ONNX model file

   Collective

   Input Parameters:
+  net - the network, with no layers yet
-  file - the ONNX model (for example written by torch.onnx.export())

   Options Database Key:
.  -nn_onnx <file> - the same from `NNSetFromOptions()`

   Notes:
   The file is parsed with protobuf-c on Debian's onnx.proto. Each ONNX node becomes a layer named after the node,
   with every character outside [A-Za-z0-9_] replaced by '_' (and made unique), so -<layer>_... options still apply
   after the import. The parameters come from the model's initializers (float or double; float converted) and
   replace the initialization of every `NNSetUp()`. The network's input shape is the model's declared input shape
   (without the batch dimension); one set before must agree.

   Supported: sequential graphs of Gemm, MatMul (+ Add), Relu, LeakyRelu, Tanh, Sigmoid, Flatten, Reshape (to flat),
   Identity and Dropout (skipped), opsets 7 to 17. Anything else stops with an error naming the node, its operator
   and the opset. Initializers in external data, NaN or Inf parameters, and truncated or corrupt files are errors.
   Needs a PetNN built with protobuf-c (PETNN_WITH_ONNX).

   Level: beginner

.seealso: `NNSetFromOptions()`, `NNAddLayer()`, `NNSetInputShape()`, `NNGetLayerParameters()`
@*/
PetscErrorCode NNLoadONNX(NN net, const char file[])
{
#if defined(PETNN_HAVE_ONNX)
  PetscErrorCode ierr;
#endif

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscValidCharPointer(file, 2);
#if defined(PETNN_HAVE_ONNX)
  PetscCheck(net->added.n == 0, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONGSTATE, "NNLoadONNX(%s): the network already has %" PetscInt_FMT " layers; an ONNX model builds the network from none", file, net->added.n);
  if (!NN_LoadONNX) PetscCall(NNLogEventRegister("NNLoadONNX", NN_CLASSID, &NN_LoadONNX));
  PetscCall(PetscLogEventBegin(NN_LoadONNX, net, 0, 0, 0));
  PetscCall(NNImportedReset(net));
  ierr = NNLoadONNX_Private(net, file);
  PetscCall(PetscLogEventEnd(NN_LoadONNX, net, 0, 0, 0)); /* after an error too */
  PetscCall(ierr);
  PetscCall(PetscStrallocpy(file, &net->imported.file));
#else
  SETERRQ(PetscObjectComm((PetscObject)net), PETSC_ERR_SUP, "NNLoadONNX(%s): this PetNN was built without ONNX import (install libprotobuf-c-dev protobuf-c-compiler libonnx-dev and reconfigure; -DPETNN_WITH_ONNX=ON)", file);
#endif
  PetscFunctionReturn(0);
}
