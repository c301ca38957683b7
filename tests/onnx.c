static char help[] = "ONNX import (NNLoadONNX(), -nn_onnx): a model's forward pass on a batch from a raw file (tests/onnx_torch.py\n"
                     "compares it with PyTorch), and bad models with their clear errors (tests/onnx_bad.py writes them).\n";

#include <petnn.h>

/* -nn_onnx model -input x.bin -n N -output y.bin: y = the network's output on the N samples of x (raw doubles) */
static PetscErrorCode Predict(const char in[], const char out[], PetscInt n)
{
  NN                 net;
  Vec                x, y;
  PetscScalar       *a;
  const PetscScalar *b;
  PetscInt           len, ylen;
  FILE              *f;
  PetscMPIInt        rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetBatchSize(net, n));
  PetscCall(NNSetFromOptions(net));
  PetscCall(NNCreateBatchVecs(net, &x, NULL));
  PetscCall(VecGetSize(x, &len));
  PetscCall(VecGetArray(x, &a));
  PetscCall(PetscFOpen(PETSC_COMM_SELF, in, "rb", &f));
  PetscCheck(fread(a, sizeof(PetscScalar), (size_t)len, f) == (size_t)len, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s holds fewer than %" PetscInt_FMT " doubles", in, len);
  PetscCall(PetscFClose(PETSC_COMM_SELF, f));
  PetscCall(VecRestoreArray(x, &a));
  PetscCall(NNForward(net, n, x, &y));
  PetscCall(VecGetLocalSize(y, &ylen));
  PetscCall(VecGetArrayRead(y, &b));
  if (rank == 0) {
    PetscCall(PetscFOpen(PETSC_COMM_SELF, out, "wb", &f));
    PetscCheck(fwrite(b, sizeof(PetscScalar), (size_t)ylen, f) == (size_t)ylen, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "cannot write %s", out);
    PetscCall(PetscFClose(PETSC_COMM_SELF, f));
  }
  PetscCall(VecRestoreArrayRead(y, &b));
  PetscCall(VecDestroy(&x));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/* the network is destroyed after an error too (no leaks under -malloc_dump) */
static PetscErrorCode Load(const char file[])
{
  NN             net;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  ierr = NNLoadONNX(net, file);
  if (!ierr) ierr = NNSetUp(net);
  PetscCall(NNDestroy(&net));
  return ierr;
}

/* the model dir/name must fail to load with a message containing expect */
static PetscErrorCode ExpectError(const char dir[], const char name[], const char expect[])
{
  char           file[PETSC_MAX_PATH_LEN], *msg, *found = NULL;
  const char    *text;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(file, sizeof(file), "%s/%s", dir, name));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = Load(file);
  PetscCall(PetscPopErrorHandler());
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: expected an error, got none", name);
  PetscCall(NNErrorMessage(ierr, &text, &msg));
  if (msg) PetscCall(PetscStrstr(msg, expect, &found));
  PetscCheck(found, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: the error message \"%s\" does not contain \"%s\"", name, msg ? msg : "", expect);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: clear error (%s)\n", name, expect));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  char      in[PETSC_MAX_PATH_LEN] = "", out[PETSC_MAX_PATH_LEN] = "y.bin", dir[PETSC_MAX_PATH_LEN] = "";
  PetscInt  n = 1;
  PetscBool fin, fdir;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-input", in, sizeof(in), &fin));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-output", out, sizeof(out), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-bad_dir", dir, sizeof(dir), &fdir));
  if (fin) PetscCall(Predict(in, out, n));
  if (fdir) {
    PetscCall(ExpectError(dir, "missing.onnx", "Cannot read the ONNX model"));
    PetscCall(ExpectError(dir, "corrupt.onnx", "is not a valid ONNX model"));
    PetscCall(ExpectError(dir, "truncated.onnx", "truncated or corrupt"));
    PetscCall(ExpectError(dir, "unsupported.onnx", "(op type Softplus, opset 14) is not supported"));
    PetscCall(ExpectError(dir, "opset.onnx", "opset 99 of the default domain is not supported"));
    PetscCall(ExpectError(dir, "nan.onnx", "has a NaN or Inf"));
    PetscCall(ExpectError(dir, "external.onnx", "is stored in external data"));
    PetscCall(ExpectError(dir, "shape.onnx", "takes 5 features but the layers before give 4"));
    PetscCall(ExpectError(dir, "branch.onnx", "The ONNX graph branches at node"));
  }
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   # bad models (written by tests/onnx_bad.py with the onnx package), each with its clear error
   test:
      suffix: bad
      requires: petnn_onnx
      command: /usr/bin/python3 ${PETNN_SOURCE_DIR}/tests/onnx_bad.py onnx_bad && ${exe} -bad_dir onnx_bad

   # random PyTorch MLPs exported by torch.onnx.export (opsets 13, 14; float64 and float32) against PyTorch
   test:
      suffix: torch
      requires: torch petnn_onnx
      command: /usr/bin/python3 ${PETNN_SOURCE_DIR}/tests/onnx_torch.py ${exe}

TEST*/
