static char help[] = "-nn_device and NNSetDevice() on any machine: the CPU always, CUDA when this PetNN was built with it and a GPU\n"
                     "is present, else a clear error naming what is valid. Prints the same lines in every case; the GPU\n"
                     "passes themselves are tested by tests/cuda_layers.c.\n\n";

#include <petnn.h>

int main(int argc, char **argv)
{
  NN             net;
  NNDevice       dev;
  PetscBool      avail, tf32, found = PETSC_FALSE;
  char           why[512];
  PetscErrorCode ierr;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNGetDevice(net, &dev));
  PetscCheck(dev == NN_DEVICE_CPU, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "the default device is %s, not cpu", NNDevices[dev]);
  PetscCall(NNDeviceIsAvailable(NN_DEVICE_CPU, &avail, sizeof(why), why));
  PetscCheck(avail, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "cpu is not available: %s", why);
  PetscCall(NNSetDevice(net, NN_DEVICE_CPU));
  PetscCall(NNGetCUDATF32(net, &tf32));
  PetscCheck(!tf32, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "TF32 is allowed by default");
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "default device cpu, TF32 off: PASSED\n"));

  PetscCall(NNDeviceIsAvailable(NN_DEVICE_CUDA, &avail, sizeof(why), why));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = NNSetDevice(net, NN_DEVICE_CUDA);
  PetscCall(PetscPopErrorHandler());
  if (avail) { /* built with CUDA, a GPU present */
    PetscCheck(!ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "NNSetDevice(cuda) failed although a GPU is available");
    PetscCall(NNGetDevice(net, &dev));
    found = (PetscBool)(dev == NN_DEVICE_CUDA);
  } else { /* the error says why and what is valid */
    const char *text;
    char       *msg = NULL, *p1 = NULL, *p2 = NULL;
    PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "NNSetDevice(cuda) succeeded although %s", why);
    PetscCall(NNErrorMessage(ierr, &text, &msg));
    if (msg) PetscCall(PetscStrstr(msg, "-nn_device cuda: ", &p1));
    if (msg) PetscCall(PetscStrstr(msg, "; valid here: cpu", &p2));
    found = (PetscBool)(p1 && p2);
    PetscCheck(found, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "the error of NNSetDevice(cuda) does not say what is valid: %s", msg ? msg : "(none)");
    PetscCall(NNGetDevice(net, &dev));
    PetscCheck(dev == NN_DEVICE_CPU, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "a refused NNSetDevice(cuda) changed the device");
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "NNSetDevice(cuda): accepted with a GPU, otherwise refused with the reason and the valid devices: %s\n", found ? "PASSED" : "FAILED"));
  PetscCall(NNDestroy(&net));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: 1
      output_file: output/device.out

TEST*/
