static char help[] = "PetNN's generic driver: builds a network from the options database and trains,\n"
                     "evaluates, or differentiates it.\n\n"
                     "  -mode train   minibatch training on -train_data_* with evaluation on -test_data_* (default)\n"
                     "  -mode tao     full-batch training through TAO (-tao_type lmvm, ...)\n"
                     "  -mode eval    loss and accuracy of a loaded checkpoint on the test data, and for a\n"
                     "                classifier the confusion matrix (rows: true class, columns: predicted), and the\n"
                     "                spectral views the options ask for (-nn_spectral_view, -<block>_spectrum_view)\n"
                     "  -mode predict outputs of the network for the samples in -predict_input (an HDF5 dataset\n"
                     "                -predict_dataset [N, d1, ...], default x, or a PETSc binary Vec), written to\n"
                     "                -predict_output (.h5: dataset predictions [N, k]; otherwise a PETSc binary Vec)\n"
                     "  -mode grad    forward and backward on -grad_data_* samples; writes outputs, the input\n"
                     "                gradient and the parameter gradients to -grad_output (HDF5, PyTorch names)\n"
                     "  -load <file>  start from a checkpoint (training resumes where it stopped)\n"
                     "  -nn_view      print the network\n\n";

#include <petnn.h>

/* a data set configured by the options with the given prefix, starting from type (NULL: the
   default, idx); an IDX data set starts from the t10k split when it is the test data */
static PetscErrorCode CreateData(MPI_Comm comm, const char prefix[], NNDataType type, NNData *d)
{
  PetscBool test;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(prefix, "test_", &test));
  PetscCall(NNDataCreate(comm, d));
  PetscCall(NNDataSetOptionsPrefix(*d, prefix));
  if (type) PetscCall(NNDataSetType(*d, type));
  if (test) PetscCall(NNDataIDXSetSplit(*d, "t10k"));
  PetscCall(NNDataSetFromOptions(*d));
  PetscFunctionReturn(0);
}

/* the class with the largest output of each of m samples (k outputs each) */
static void ArgMax(PetscInt m, PetscInt k, const PetscScalar *y, PetscInt cls[])
{
  for (PetscInt i = 0; i < m; i++) {
    cls[i] = 0;
    for (PetscInt c = 1; c < k; c++)
      if (PetscRealPart(y[i * k + c]) > PetscRealPart(y[i * k + cls[i]])) cls[i] = c;
  }
}

/* counts[t * k + p]: samples of true class t predicted as p, over the whole data set (batches of the
   network's batch size; every rank asks for the same samples, so every rank has the same matrix) */
static PetscErrorCode ConfusionMatrix(NN net, NNData data, PetscInt k, PetscInt counts[])
{
  PetscInt N, B, sz, *idx, *cls;
  NNShape  in;
  Vec      x, t, y;

  PetscFunctionBegin;
  PetscCall(NNDataGetNumSamples(data, &N));
  PetscCall(NNGetBatchSize(net, &B));
  PetscCall(NNGetInputShape(net, &in));
  sz = NNShapeSize(&in);
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, B * sz, &x));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, B, &t));
  PetscCall(PetscMalloc2(B, &idx, B, &cls));
  PetscCall(PetscArrayzero(counts, k * k));
  for (PetscInt s = 0; s < N; s += B) {
    PetscInt           m = PetscMin(B, N - s);
    const PetscScalar *ya, *ta;
    Vec                xm;
    for (PetscInt i = 0; i < m; i++) idx[i] = s + i;
    PetscCall(NNDataGetBatch(data, m, idx, x, t));
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, m * sz, &xm));
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, m * k, &y));
    { /* the first m samples of the batch */
      const PetscScalar *xa;
      PetscScalar       *xma;
      PetscCall(VecGetArrayRead(x, &xa));
      PetscCall(VecGetArrayWrite(xm, &xma));
      PetscCall(PetscArraycpy(xma, xa, m * sz));
      PetscCall(VecRestoreArrayWrite(xm, &xma));
      PetscCall(VecRestoreArrayRead(x, &xa));
    }
    PetscCall(NNPredict(net, xm, y));
    PetscCall(VecGetArrayRead(y, &ya));
    PetscCall(VecGetArrayRead(t, &ta));
    ArgMax(m, k, ya, cls);
    for (PetscInt i = 0; i < m; i++) {
      PetscInt c = (PetscInt)PetscRealPart(ta[i]);
      PetscCheck(c >= 0 && c < k, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Sample %" PetscInt_FMT " has label %g; the network has %" PetscInt_FMT " classes", s + i, (double)PetscRealPart(ta[i]), k);
      counts[c * k + cls[i]]++;
    }
    PetscCall(VecRestoreArrayRead(t, &ta));
    PetscCall(VecRestoreArrayRead(y, &ya));
    PetscCall(VecDestroy(&xm));
    PetscCall(VecDestroy(&y));
  }
  PetscCall(PetscFree2(idx, cls));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscFunctionReturn(0);
}

static PetscErrorCode PrintConfusionMatrix(MPI_Comm comm, PetscInt k, const PetscInt counts[]);

/* -mode eval: loss and accuracy, and for a classifier (cross-entropy loss) the confusion matrix */
static PetscErrorCode Evaluate(NN net, NNData test)
{
  MPI_Comm   comm = PetscObjectComm((PetscObject)net);
  PetscReal  loss, acc;
  NNLossType lt;
  PetscBool  ce;

  PetscFunctionBegin;
  PetscCall(NNEvaluate(net, test, &loss, &acc));
  PetscCall(PetscPrintf(comm, "Test loss %.6f, test accuracy %.4f\n", (double)loss, (double)acc));
  PetscCall(NNGetLoss(net, &lt));
  PetscCall(PetscStrcmp(lt, "cross_entropy", &ce));
  if (ce) {
    NNShape  out;
    PetscInt k, *counts;
    PetscCall(NNGetOutputShape(net, &out));
    k = NNShapeSize(&out);
    PetscCall(PetscMalloc1(k * k, &counts));
    PetscCall(ConfusionMatrix(net, test, k, counts));
    PetscCall(PrintConfusionMatrix(comm, k, counts));
    PetscCall(PetscFree(counts));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode PrintConfusionMatrix(MPI_Comm comm, PetscInt k, const PetscInt counts[])
{
  PetscFunctionBegin;
  PetscCall(PetscPrintf(comm, "Confusion matrix (rows: true class, columns: predicted class)\n      "));
  for (PetscInt p = 0; p < k; p++) PetscCall(PetscPrintf(comm, " %6" PetscInt_FMT, p));
  PetscCall(PetscPrintf(comm, "\n"));
  for (PetscInt c = 0; c < k; c++) {
    PetscInt n = 0;
    PetscCall(PetscPrintf(comm, "%6" PetscInt_FMT, c));
    for (PetscInt p = 0; p < k; p++) {
      PetscCall(PetscPrintf(comm, " %6" PetscInt_FMT, counts[c * k + p]));
      n += counts[c * k + p];
    }
    PetscCall(PetscPrintf(comm, "   (%" PetscInt_FMT " samples, %" PetscInt_FMT " right)\n", n, counts[c * k + c]));
  }
  PetscFunctionReturn(0);
}

/* an HDF5 or PETSc binary viewer on file (the generic calls: petscviewerhdf5.h needs hdf5.h) */
static PetscErrorCode OpenViewer(const char file[], PetscBool hdf5, PetscFileMode mode, PetscViewer *v)
{
  PetscFunctionBegin;
  PetscCall(PetscViewerCreate(PETSC_COMM_SELF, v));
  PetscCall(PetscViewerSetType(*v, hdf5 ? PETSCVIEWERHDF5 : PETSCVIEWERBINARY));
  PetscCall(PetscViewerFileSetMode(*v, mode));
  PetscCall(PetscViewerFileSetName(*v, file));
  PetscFunctionReturn(0);
}

/* -mode predict: the samples of an HDF5 dataset or a binary Vec through the network, the outputs
   [N, k] to an HDF5 dataset "predictions" or a binary Vec */
static PetscErrorCode Predict(NN net, const char input[], const char dataset[], const char output[])
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)net);
  PetscViewer v;
  Vec         x, y;
  PetscInt    n, sz, N, k;
  NNShape     in, out;
  PetscBool   h5in, h5out;

  PetscFunctionBegin;
  PetscCall(PetscStrendswith(input, ".h5", &h5in));
  PetscCall(PetscStrendswith(output, ".h5", &h5out));
  PetscCall(VecCreate(PETSC_COMM_SELF, &x));
  PetscCall(PetscObjectSetName((PetscObject)x, dataset));
  PetscCall(OpenViewer(input, h5in, FILE_MODE_READ, &v));
  PetscCall(VecLoad(x, v));
  PetscCall(PetscViewerDestroy(&v));
  PetscCall(NNGetInputShape(net, &in));
  PetscCall(NNGetOutputShape(net, &out));
  sz = NNShapeSize(&in);
  k  = NNShapeSize(&out);
  PetscCall(VecGetSize(x, &n));
  PetscCheck(n % sz == 0, comm, PETSC_ERR_ARG_SIZ, "-predict_input %s holds %" PetscInt_FMT " values, not a whole number of samples of %" PetscInt_FMT " values (the network's input shape; set it with -nn_input_shape)", input, n, sz);
  N = n / sz;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, N * k, &y));
  PetscCall(VecSetBlockSize(y, k));
  PetscCall(PetscObjectSetName((PetscObject)y, "predictions"));
  PetscCall(NNPredict(net, x, y));
  PetscCall(OpenViewer(output, h5out, FILE_MODE_WRITE, &v));
  PetscCall(VecView(y, v));
  PetscCall(PetscViewerDestroy(&v));
  PetscCall(PetscPrintf(comm, "Wrote the predictions for %" PetscInt_FMT " samples (%" PetscInt_FMT " values each) to %s\n", N, k, output));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  NN          net;
  NNData      train = NULL, test = NULL, gdata = NULL;
  char        mode[16] = "train", load[PETSC_MAX_PATH_LEN] = "", gout[PETSC_MAX_PATH_LEN] = "gradients.h5";
  char        pin[PETSC_MAX_PATH_LEN] = "", pout[PETSC_MAX_PATH_LEN] = "predictions.h5", pset[256] = "x";
  PetscBool   view = PETSC_FALSE, istrain, istao, iseval, isgrad, ispredict, hastest = PETSC_TRUE;
  PetscReal   loss, acc;
  MPI_Comm    comm;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  comm = PETSC_COMM_WORLD;
  PetscOptionsBegin(comm, NULL, "PetNN driver options", "NN");
  PetscCall(PetscOptionsString("-mode", "train, tao, eval, predict or grad", NULL, mode, mode, sizeof(mode), NULL));
  PetscCall(PetscOptionsString("-load", "Checkpoint to start from", "NNCheckpointLoad", load, load, sizeof(load), NULL));
  PetscCall(PetscOptionsString("-grad_output", "HDF5 file written by -mode grad", "NNSaveGradients", gout, gout, sizeof(gout), NULL));
  PetscCall(PetscOptionsString("-predict_input", "File whose samples -mode predict runs through the network (.h5 or PETSc binary)", "NNPredict", pin, pin, sizeof(pin), NULL));
  PetscCall(PetscOptionsString("-predict_dataset", "HDF5 dataset of -predict_input holding the samples", "NNPredict", pset, pset, sizeof(pset), NULL));
  PetscCall(PetscOptionsString("-predict_output", "File -mode predict writes (.h5: dataset predictions; otherwise PETSc binary)", "NNPredict", pout, pout, sizeof(pout), NULL));
  PetscCall(PetscOptionsBool("-test", "Evaluate on held-out data (-test_data_*)", NULL, hastest, &hastest, NULL));
  PetscCall(PetscOptionsBool("-nn_view", "View the network", "NNView", view, &view, NULL));
  PetscOptionsEnd();
  PetscCall(PetscStrcmp(mode, "train", &istrain));
  PetscCall(PetscStrcmp(mode, "tao", &istao));
  PetscCall(PetscStrcmp(mode, "eval", &iseval));
  PetscCall(PetscStrcmp(mode, "grad", &isgrad));
  PetscCall(PetscStrcmp(mode, "predict", &ispredict));
  PetscCheck(istrain || istao || iseval || isgrad || ispredict, comm, PETSC_ERR_ARG_WRONG, "Unknown -mode %s; valid: train tao eval predict grad", mode);
  PetscCheck(!ispredict || pin[0], comm, PETSC_ERR_ARG_WRONG, "-mode predict needs -predict_input <file.h5 or PETSc binary file>");

  PetscCall(NNCreate(comm, &net));
  PetscCall(NNSetFromOptions(net));

  if (istrain || istao) PetscCall(CreateData(comm, "train_", NULL, &train));
  if ((istrain && hastest) || iseval) PetscCall(CreateData(comm, "test_", NNDATAIDX, &test));
  if (isgrad) PetscCall(CreateData(comm, "grad_", NNDATAHDF5, &gdata));
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
    PetscCall(NNCreateTao(net, &tao)); /* on the communicator of the parameters TAO sees */
    PetscCall(TaoSetType(tao, TAOLMVM));
    PetscCall(TaoSetFromOptions(tao));
    PetscCall(NNTrainTao(net, train, tao));
    PetscCall(NNEvaluate(net, train, &loss, NULL));
    PetscCall(PetscPrintf(comm, "Training loss after TAO: %.6e\n", (double)loss));
    PetscCall(TaoDestroy(&tao));
  } else if (iseval) {
    PetscCall(Evaluate(net, test));
    PetscCall(NNSpectralViewFromOptions(net, NULL, test)); /* -nn_spectral_view, -<block>_spectrum_view of the loaded model, as NNTrain() does after training */
  } else if (ispredict) {
    PetscCall(Predict(net, pin, pset, pout));
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
     # TSView lines that PETSc releases after 3.18 add
     filter: grep -v -E "initial time step=|maximum number of step rejections=|maximum number of SNES failures allowed="

   # the ODE block's Jacobian spectrum and step stability at the end of training (SLEPc)
   test:
     suffix: odenet_spectrum
     requires: fashion_mnist slepc
     args: -options_file fashion_odenet.opts -nn_epochs 1 -nn_batch_size 32 -train_data_max_samples 64 -test_data_max_samples 32 -nn_monitor_steps 0 -ode1_spectrum_view -ode1_spectrum_samples 2 -ode1_spectrum_steps 0,2 -ode1_spectrum_smallest 0 -ode1_stability_check -conv1_threads 1 -f1_threads 1 -f2_threads 1
     filter: grep -E "ODE block|  sample|magnitude|rightmost|h lambda|suggestion"

   # -mode eval on an untrained network: loss, accuracy and the confusion matrix
   test:
     suffix: eval
     requires: fashion_mnist
     args: -options_file fashion_mlp.opts -mode eval -test_data_max_samples 200

   # -mode predict from HDF5 and PETSc binary files, checked against W x + b computed in Python
   test:
     suffix: predict
     requires: torch
     command: /usr/bin/python3 ${PETNN_SOURCE_DIR}/tests/nnrun_predict.py ${exe}

   test:
     suffix: yaml
     requires: fashion_mnist yaml
     args: -options_file_yaml fashion_mlp.yaml -nn_epochs 1 -train_data_max_samples 3000 -test_data_max_samples 1000 -options_left

TEST*/
