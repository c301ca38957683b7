/* Package registration: classes, types, log events (PETSc's XXXInitializePackage pattern). */
#include <petnn/private/nnimpl.h>
#include <petnn/private/spectralimpl.h>

PetscClassId  NN_CLASSID, NNLAYER_CLASSID, NNOPT_CLASSID, NNDATA_CLASSID;
PetscLogEvent NN_Forward, NN_Backward, NN_Loss, NN_OptStep, NN_DataLoad, NN_Checkpoint, NN_Predict, NN_TrainStep;

static PetscBool PetNNPackageInitialized = PETSC_FALSE;

PETSC_INTERN PetscErrorCode NNLayerRegisterAllTypes(void);
PETSC_INTERN PetscErrorCode NNOptRegisterAllTypes(void);
PETSC_INTERN PetscErrorCode NNDataRegisterAllTypes(void);
PETSC_INTERN PetscErrorCode NNLossRegisterAllTypes(void);

/* the network's trainer, created by NNSetFromOptions() (NNTrainerConstructor in nnimpl.h) */
static PetscErrorCode NNCreateTrainer(NN net)
{
  NNTrainer tr;

  PetscFunctionBegin;
  PetscCall(NNGetTrainer(net, &tr));
  PetscFunctionReturn(0);
}

/*@C
   PetNNFinalizePackage - frees the type registries; called from PetscFinalize()

   Level: developer

.seealso: `PetNNInitializePackage()`
@*/
PetscErrorCode PetNNFinalizePackage(void)
{
  PetscFunctionBegin;
  PetscCall(PetscFunctionListDestroy(&NNLayerList));
  PetscCall(PetscFunctionListDestroy(&NNOptList));
  PetscCall(PetscFunctionListDestroy(&NNDataList));
  PetscCall(PetscFunctionListDestroy(&NNLossList));
  PetNNPackageInitialized = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/*@C
   PetNNInitializePackage - registers the PetNN classes, types and log events

   Called lazily by every XXXCreate(); calling it again is harmless.

   Level: developer

.seealso: `PetNNFinalizePackage()`, `NNCreate()`
@*/
PetscErrorCode PetNNInitializePackage(void)
{
  PetscFunctionBegin;
  if (PetNNPackageInitialized) PetscFunctionReturn(0);
  PetNNPackageInitialized = PETSC_TRUE;
  PetscCall(PetscClassIdRegister("Neural network", &NN_CLASSID));
  PetscCall(PetscClassIdRegister("NN layer", &NNLAYER_CLASSID));
  PetscCall(PetscClassIdRegister("NN optimizer", &NNOPT_CLASSID));
  PetscCall(PetscClassIdRegister("NN data set", &NNDATA_CLASSID));
  PetscCall(PetscClassIdRegister("NN trainer", &NNTRAINER_CLASSID));
  PetscCall(PetscClassIdRegister("NN reducer", &NNREDUCER_CLASSID));
  PetscCall(NNLayerRegisterAllTypes());
  PetscCall(NNOptRegisterAllTypes());
  PetscCall(NNDataRegisterAllTypes());
  PetscCall(NNLossRegisterAllTypes());
  NNTrainerConstructor = NNCreateTrainer;
  NNLayerSetFromOptionsHook = NNLayerSetFromOptions_SpectralNorm; /* -<layer>_spectral_norm */
  NNLayerSetUpHook          = NNLayerSetUp_SpectralNorm;
  /* network-level events; every layer type adds its own forward/backward events */
  PetscCall(NNLogEventRegister("NNForward", NN_CLASSID, &NN_Forward));
  PetscCall(NNLogEventRegister("NNBackward", NN_CLASSID, &NN_Backward));
  PetscCall(NNLogEventRegister("NNLoss", NN_CLASSID, &NN_Loss));
  PetscCall(NNLogEventRegister("NNOptStep", NNOPT_CLASSID, &NN_OptStep));
  PetscCall(NNLogEventRegister("NNDataLoad", NNDATA_CLASSID, &NN_DataLoad));
  PetscCall(NNLogEventRegister("NNCheckpoint", NN_CLASSID, &NN_Checkpoint));
  PetscCall(NNLogEventRegister("NNPredict", NN_CLASSID, &NN_Predict));
  PetscCall(NNLogEventRegister("NNTrainStep", NN_CLASSID, &NN_TrainStep));
  { /* -info :nn selects (or -info :~nn hides) PetNN's messages */
    PetscClassId classids[4] = {NN_CLASSID, NNLAYER_CLASSID, NNOPT_CLASSID, NNDATA_CLASSID};
    PetscCall(PetscInfoProcessClass("nn", 4, classids));
  }
  PetscCall(PetscRegisterFinalize(PetNNFinalizePackage));
  PetscFunctionReturn(0);
}
