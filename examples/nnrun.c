static char help[] = "PetNN's generic driver: builds a network from the options database and trains,\n"
                     "evaluates, or differentiates it.\n\n"
                     "  -mode train   minibatch training on -train_data_* with evaluation on -test_data_* (default)\n"
                     "  -mode tao     full-batch training through TAO (-tao_type lmvm, ...)\n"
                     "  -mode eval    loss and accuracy of a loaded checkpoint on the test data\n"
                     "  -mode grad    forward and backward on -grad_data_* samples; writes outputs, the input\n"
                     "                gradient and the parameter gradients to -grad_output (HDF5, PyTorch names)\n"
                     "  -load <file>  start from a checkpoint (training resumes where it stopped)\n"
                     "  -nn_view      print the network\n\n";

#include <petnn.h>

int main(int argc, char **argv)
{
  NN          net;
  NNData      train = NULL, test = NULL, gdata = NULL;
  char        mode[16] = "train", load[PETSC_MAX_PATH_LEN] = "", gout[PETSC_MAX_PATH_LEN] = "gradients.h5";
  PetscBool   view = PETSC_FALSE, istrain, istao, iseval, isgrad, hastest = PETSC_TRUE;
  PetscReal   loss, acc;
  MPI_Comm    comm;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  comm = PETSC_COMM_WORLD;
  PetscOptionsBegin(comm, NULL, "PetNN driver options", "NN");
  PetscCall(PetscOptionsString("-mode", "train, tao, eval or grad", NULL, mode, mode, sizeof(mode), NULL));
  PetscCall(PetscOptionsString("-load", "Checkpoint to start from", "NNCheckpointLoad", load, load, sizeof(load), NULL));
  PetscCall(PetscOptionsString("-grad_output", "HDF5 file written by -mode grad", "NNSaveGradients", gout, gout, sizeof(gout), NULL));
  PetscCall(PetscOptionsBool("-test", "Evaluate on held-out data (-test_data_*)", NULL, hastest, &hastest, NULL));
  PetscCall(PetscOptionsBool("-nn_view", "View the network", "NNView", view, &view, NULL));
  PetscOptionsEnd();
  PetscCall(PetscStrcmp(mode, "train", &istrain));
  PetscCall(PetscStrcmp(mode, "tao", &istao));
  PetscCall(PetscStrcmp(mode, "eval", &iseval));
  PetscCall(PetscStrcmp(mode, "grad", &isgrad));
  PetscCheck(istrain || istao || iseval || isgrad, comm, PETSC_ERR_ARG_WRONG, "Unknown -mode %s; valid: train tao eval grad", mode);

  PetscCall(NNCreate(comm, &net));
  PetscCall(NNSetFromOptions(net));

  if (istrain || istao) {
    PetscCall(NNDataCreate(comm, &train));
    PetscCall(NNDataSetOptionsPrefix(train, "train_"));
    PetscCall(NNDataSetFromOptions(train));
  }
  if ((istrain && hastest) || iseval) {
    PetscCall(NNDataCreate(comm, &test));
    PetscCall(NNDataSetOptionsPrefix(test, "test_"));
    PetscCall(NNDataSetType(test, NNDATAIDX));
    PetscCall(NNDataIDXSetSplit(test, "t10k"));
    PetscCall(NNDataSetFromOptions(test));
  }
  if (isgrad) {
    PetscCall(NNDataCreate(comm, &gdata));
    PetscCall(NNDataSetOptionsPrefix(gdata, "grad_"));
    PetscCall(NNDataSetType(gdata, NNDATAHDF5));
    PetscCall(NNDataSetFromOptions(gdata));
  }
  { /* the network takes the shape of the samples unless -nn_input_shape says otherwise */
    NNData  d = train ? train : (test ? test : gdata);
    NNShape s, in;
    PetscCall(NNGetInputShape(net, &in));
    if (!in.ndim && d) {
      PetscCall(NNDataGetSampleShape(d, &s));
      PetscCall(NNSetInputShape(net, s.ndim, s.dim));
    }
  }
  if (isgrad) { /* one batch holding every sample */
    PetscInt n;
    PetscCall(NNDataGetNumSamples(gdata, &n));
    PetscCall(NNSetBatchSize(net, n));
  }
  PetscCall(NNSetUp(net));
  if (load[0]) PetscCall(NNCheckpointLoad(net, load));
  if (view) PetscCall(NNView(net, PETSC_VIEWER_STDOUT_(comm)));

  if (istrain) {
    PetscCall(NNTrain(net, train, test));
    if (test) {
      PetscCall(NNEvaluate(net, test, &loss, &acc));
      if (acc >= 0) PetscCall(PetscPrintf(comm, "Final test loss %.4f, test accuracy %.4f\n", (double)loss, (double)acc));
      else PetscCall(PetscPrintf(comm, "Final test loss %.6e\n", (double)loss));
    }
  } else if (istao) {
    Tao tao;
    PetscCall(TaoCreate(PETSC_COMM_SELF, &tao));
    PetscCall(TaoSetType(tao, TAOLMVM));
    PetscCall(TaoSetFromOptions(tao));
    PetscCall(NNTrainTao(net, train, tao));
    PetscCall(NNEvaluate(net, train, &loss, NULL));
    PetscCall(PetscPrintf(comm, "Training loss after TAO: %.6e\n", (double)loss));
    PetscCall(TaoDestroy(&tao));
  } else if (iseval) {
    PetscCall(NNEvaluate(net, test, &loss, &acc));
    PetscCall(PetscPrintf(comm, "Test loss %.6f, test accuracy %.4f\n", (double)loss, (double)acc));
  } else {
    PetscInt  n, *idx;
    Vec       x, t;
    PetscCall(NNDataGetNumSamples(gdata, &n));
    PetscCall(NNCreateBatchVecs(net, &x, &t));
    PetscCall(PetscMalloc1(n, &idx));
    for (PetscInt i = 0; i < n; i++) idx[i] = i;
    PetscCall(NNDataGetBatch(gdata, n, idx, x, t));
    PetscCall(NNSaveGradients(net, gout, n, x, t));
    PetscCall(PetscFree(idx));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&t));
  }
  PetscCall(NNDataDestroy(&train));
  PetscCall(NNDataDestroy(&test));
  PetscCall(NNDataDestroy(&gdata));
  PetscCall(NNDestroy(&net));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   testset:
     requires: fashion_mnist
     args: -options_file fashion_mlp.opts -train_data_max_samples 3000 -test_data_max_samples 1000
     test:
       suffix: mlp
       args: -nn_epochs 2 -nn_view
     test:
       suffix: gradcheck
       args: -nn_epochs 1 -nn_batch_size 8 -train_data_max_samples 64 -relu1_type tanh -relu2_type gelu -nn_gradient_check -nn_monitor 0
     test:
       suffix: sgd_nesterov_step
       args: -nn_epochs 2 -opt_type sgd -opt_learning_rate 0.05 -opt_momentum 0.9 -opt_nesterov -opt_weight_decay 1e-4 -opt_schedule step -opt_step_size 1 -opt_gamma 0.5
     test:
       suffix: adamw_cosine
       args: -nn_epochs 2 -opt_type adamw -opt_schedule cosine -fc1_units 64 -fc2_units 32

   test:
     suffix: odenet
     requires: fashion_mnist
     args: -options_file fashion_odenet.opts -nn_epochs 1 -nn_batch_size 32 -train_data_max_samples 128 -test_data_max_samples 128 -ode1_checkpoints 2 -nn_view -conv1_threads 1 -f1_threads 1 -f2_threads 1

   test:
     suffix: yaml
     requires: fashion_mnist yaml
     args: -options_file_yaml fashion_mlp.yaml -nn_epochs 1 -train_data_max_samples 3000 -test_data_max_samples 1000 -options_left

TEST*/
