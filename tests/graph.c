static char help[] = "Graph networks (-nn_type graph): finite-difference gradient check of a dense graph with fan-out,\n"
                     "split, add and concat; a graph network without named inputs against the sequential one (bitwise,\n"
                     "in double and in single precision); a checkpoint saved and loaded; errors for bad graphs.\n\n"
                     "  -verbose   print the measured errors\n"
                     "  -dp_only   only the data-parallel training of a graph network (run it on several ranks)\n"
                     "  -single    that training in single precision (-nn_precision single), both runs\n"
                     "  -torch     only write the files of the PyTorch cross-check (tests/graph_torch.py)\n\n";

#include <petnn.h>
#include <string.h>

static PetscBool verbose = PETSC_FALSE, single = PETSC_FALSE;

static PetscErrorCode AddLayer(NN net, NNLayerType type, const char name[], PetscInt units, PetscInt nin, const char *const inputs[])
{
  NNLayer l;

  PetscFunctionBegin;
  PetscCall(NNAddLayer(net, type, name, &l));
  if (units) PetscCall(NNLayerDenseSetUnits(l, units));
  if (nin) PetscCall(NNLayerSetInputs(l, nin, inputs));
  PetscFunctionReturn(0);
}

/*
   input(5) -> d1 dense 6 -> t1 tanh -> s split 2,4;  d2 dense 4 <- s:0;  d3 dense 4 <- input;
   a add <- d2, s:1, d3;  g tanh <- a;  c concat <- g, t1 (10);  out dense 3 <- c
   The input feeds d1 and d3, t1 feeds s and c: two activations whose gradients are sums.
*/
static PetscErrorCode BuildDenseGraph(PetscInt64 seed, NN *net)
{
  NNLayer  s;
  PetscInt in[] = {5}, sizes[] = {2, 4};

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, net));
  PetscCall(NNSetType(*net, NNTYPEGRAPH));
  PetscCall(NNSetInputShape(*net, 1, in));
  PetscCall(NNSetBatchSize(*net, 4));
  PetscCall(NNSetSeed(*net, seed));
  PetscCall(NNSetLoss(*net, NNLOSSMSE));
  PetscCall(AddLayer(*net, NNLAYERDENSE, "d1", 6, 0, NULL));
  PetscCall(AddLayer(*net, NNLAYERTANH, "t1", 0, 0, NULL));
  PetscCall(NNAddLayer(*net, NNLAYERSPLIT, "s", &s));
  PetscCall(NNLayerSplitSetSizes(s, 2, sizes));
  PetscCall(AddLayer(*net, NNLAYERDENSE, "d2", 4, 1, (const char *[]){"s:0"}));
  PetscCall(AddLayer(*net, NNLAYERDENSE, "d3", 4, 1, (const char *[]){"input"}));
  PetscCall(AddLayer(*net, NNLAYERADD, "a", 0, 3, (const char *[]){"d2", "s:1", "d3"}));
  PetscCall(AddLayer(*net, NNLAYERTANH, "g", 0, 0, NULL));
  PetscCall(AddLayer(*net, NNLAYERCONCAT, "c", 0, 2, (const char *[]){"g", "t1"}));
  PetscCall(AddLayer(*net, NNLAYERDENSE, "out", 3, 0, NULL));
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/*
   For data parallelism: a graph whose list order is not the order the layers run in, so layers with
   parameters finish their backward passes out of list order (d3, first in the list, runs after s):
   d3 dense 4 <- s:1;  d1 dense 6 <- input;  t1 tanh;  s split 2,4;  d2 dense 4 <- s:0;  a add <- d2, d3;
   g tanh;  c concat <- g, t1;  out dense 3
*/
static PetscErrorCode BuildShuffledGraph(MPI_Comm comm, NN *net)
{
  NNLayer     s;
  PetscInt    in[] = {5}, sizes[] = {2, 4};
  PetscMPIInt size;
  NNOpt       opt;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(NNCreate(comm, net));
  if (size > 1) PetscCall(NNSetProcessGrid(*net, 1, size)); /* one data group per rank */
  PetscCall(NNSetType(*net, NNTYPEGRAPH));
  PetscCall(NNSetInputShape(*net, 1, in));
  PetscCall(NNSetBatchSize(*net, 10));
  PetscCall(NNSetSeed(*net, 3));
  PetscCall(NNSetLoss(*net, NNLOSSCROSSENTROPY));
  if (single) PetscCall(NNSetPrecision(*net, NN_PRECISION_SINGLE));
  PetscCall(AddLayer(*net, NNLAYERDENSE, "d3", 4, 1, (const char *[]){"s:1"}));
  PetscCall(AddLayer(*net, NNLAYERDENSE, "d1", 6, 1, (const char *[]){"input"}));
  PetscCall(AddLayer(*net, NNLAYERTANH, "t1", 0, 0, NULL));
  PetscCall(NNAddLayer(*net, NNLAYERSPLIT, "s", &s));
  PetscCall(NNLayerSplitSetSizes(s, 2, sizes));
  PetscCall(AddLayer(*net, NNLAYERDENSE, "d2", 4, 1, (const char *[]){"s:0"}));
  PetscCall(AddLayer(*net, NNLAYERADD, "a", 0, 2, (const char *[]){"d2", "d3"}));
  PetscCall(AddLayer(*net, NNLAYERTANH, "g", 0, 0, NULL));
  PetscCall(AddLayer(*net, NNLAYERCONCAT, "c", 0, 2, (const char *[]){"g", "t1"}));
  PetscCall(AddLayer(*net, NNLAYERDENSE, "out", 3, 0, NULL));
  PetscCall(NNSetEpochs(*net, 3));
  PetscCall(NNGetOpt(*net, &opt));
  PetscCall(NNOptSetLearningRate(opt, 0.05));
  if (size > 1) PetscCall(NNSetFromOptions(*net)); /* -nn_allreduce, -nn_bucket_size of the run */
  PetscFunctionReturn(0);
}

static PetscErrorCode TrainShuffledGraph(MPI_Comm comm, const char file[], NN *net)
{
  NNData data;

  PetscFunctionBegin;
  PetscCall(BuildShuffledGraph(comm, net));
  PetscCall(NNDataCreate(comm, &data));
  PetscCall(NNDataSetType(data, NNDATABINARY));
  PetscCall(NNDataSetFileName(data, file));
  PetscCall(NNTrain(*net, data, NULL));
  PetscCall(NNDataDestroy(&data));
  PetscFunctionReturn(0);
}

/* data-parallel training of the shuffled graph on all ranks follows a serial copy's, and the ranks agree bitwise; in
   single precision the shards' float gradients are summed in another order than one rank's (tolerance 1e-5) */
static PetscErrorCode TestDataParallel(void)
{
  const PetscReal    tol  = single ? 1e-5 : 1e-10;
  const char        *file = "graph_dp_data.dat";
  PetscMPIInt        rank;
  NN                 ref, net;
  Vec                t0, t1;
  PetscInt           np;
  PetscReal          num = 0, den = 0;
  const PetscScalar *a, *b;
  PetscScalar       *mx, *mn;
  PetscBool          identical;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  if (!rank) { /* 23 samples of 5 features, 3 classes: batches 10, 10, 3 */
    Mat         X;
    Vec         y;
    PetscViewer v;
    PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, 23, 5, NULL, &X));
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, 23, &y));
    for (PetscInt i = 0; i < 23; i++) {
      for (PetscInt j = 0; j < 5; j++) PetscCall(MatSetValue(X, i, j, PetscSinReal(1.0 + i * 5 + j) + (j % 3 == i % 3 ? 0.5 : 0.0), INSERT_VALUES));
      PetscCall(VecSetValue(y, i, (PetscScalar)(i % 3), INSERT_VALUES));
    }
    PetscCall(MatAssemblyBegin(X, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(X, MAT_FINAL_ASSEMBLY));
    PetscCall(VecAssemblyBegin(y));
    PetscCall(VecAssemblyEnd(y));
    PetscCall(PetscViewerBinaryOpen(PETSC_COMM_SELF, file, FILE_MODE_WRITE, &v));
    PetscCall(MatView(X, v));
    PetscCall(VecView(y, v));
    PetscCall(PetscViewerDestroy(&v));
    PetscCall(MatDestroy(&X));
    PetscCall(VecDestroy(&y));
  }
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(TrainShuffledGraph(PETSC_COMM_SELF, file, &ref));
  PetscCall(TrainShuffledGraph(PETSC_COMM_WORLD, file, &net));
  PetscCall(NNGetParameters(ref, &t0));
  PetscCall(NNGetParameters(net, &t1));
  PetscCall(VecGetSize(t0, &np));
  PetscCall(PetscMalloc2(np, &mx, np, &mn));
  PetscCall(VecGetArrayRead(t0, &a));
  PetscCall(VecGetArrayRead(t1, &b));
  for (PetscInt i = 0; i < np; i++) {
    num = PetscMax(num, PetscAbsScalar(a[i] - b[i]));
    den = PetscMax(den, PetscAbsScalar(a[i]));
  }
  PetscCallMPI(MPI_Allreduce(b, mx, (PetscMPIInt)np, MPIU_SCALAR, MPIU_MAX, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Allreduce(b, mn, (PetscMPIInt)np, MPIU_SCALAR, MPIU_MIN, PETSC_COMM_WORLD));
  identical = (PetscBool)!(memcmp(mx, b, np * sizeof(PetscScalar)) || memcmp(mn, b, np * sizeof(PetscScalar)));
  PetscCall(VecRestoreArrayRead(t1, &b));
  PetscCall(VecRestoreArrayRead(t0, &a));
  PetscCall(PetscFree2(mx, mn));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &num, 1, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &identical, 1, NN_MPI_BOOL, MPI_LAND, PETSC_COMM_WORLD));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  parameters after 3 epochs: max difference to one rank %g (relative to max %g)\n", (double)num, (double)den));
  PetscCheck(identical && num <= tol * den, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "data-parallel graph training differs: identical %d, parameter difference %g", identical, (double)(num / den));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "graph network, layers out of list order%s: data-parallel training follows one rank (%g), parameters identical on all ranks\n", single ? ", single precision" : "", (double)tol));
  PetscCall(NNDestroy(&ref));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/* the same random batch on every rank */
static PetscErrorCode FillBatch(NN net, Vec *x, Vec *t)
{
  PetscRandom r;

  PetscFunctionBegin;
  PetscCall(NNCreateBatchVecs(net, x, t));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetInterval(r, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(r, 17));
  PetscCall(PetscRandomSeed(r));
  PetscCall(VecSetRandom(*x, r));
  PetscCall(VecSetRandom(*t, r));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestGradientCheck(void)
{
  NN        net;
  Vec       x, t;
  PetscReal ep, ei;

  PetscFunctionBegin;
  PetscCall(BuildDenseGraph(3, &net));
  PetscCall(NNView(net, NULL));
  PetscCall(FillBatch(net, &x, &t));
  PetscCall(NNGradientCheck(net, 3, x, t, 1e-6, &ep, &ei));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  finite differences: parameters %.3e, inputs %.3e\n", (double)ep, (double)ei));
  PetscCheck(ep < 1e-6 && ei < 1e-6, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "finite-difference check of the dense graph failed: %g %g", (double)ep, (double)ei);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "dense graph (fan-out, split, add, concat): finite-difference check passed\n"));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/* files for tests/graph_torch.py: the dense graph's checkpoint and its loss, output and gradients on 3 samples */
static PetscErrorCode WriteTorchFiles(void)
{
  NN  net;
  Vec x, t;

  PetscFunctionBegin;
  PetscCall(BuildDenseGraph(3, &net));
  PetscCall(FillBatch(net, &x, &t));
  PetscCall(NNCheckpointSave(net, "graph_dense.h5"));
  PetscCall(NNSaveGradients(net, "graph_dense_grad.h5", 3, x, t));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/* a checkpoint of the graph network loads into a fresh one (other seed): same parameters, same loss */
static PetscErrorCode TestCheckpoint(void)
{
  NN        a, b;
  Vec       x, t, ta, tb;
  PetscReal La, Lb;
  PetscBool same;

  PetscFunctionBegin;
  PetscCall(BuildDenseGraph(3, &a));
  PetscCall(BuildDenseGraph(99, &b));
  PetscCall(NNCheckpointSave(a, "graph_checkpoint.h5"));
  PetscCall(NNCheckpointLoad(b, "graph_checkpoint.h5"));
  PetscCall(NNGetParameters(a, &ta));
  PetscCall(NNGetParameters(b, &tb));
  PetscCall(VecEqual(ta, tb, &same));
  PetscCheck(same, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the loaded graph network has other parameters");
  PetscCall(FillBatch(a, &x, &t));
  PetscCall(NNLossGradient(a, 4, x, t, &La, NULL));
  PetscCall(NNLossGradient(b, 4, x, t, &Lb, NULL));
  PetscCheck(La == Lb, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "loss after loading %.17g differs from %.17g", (double)Lb, (double)La);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "graph checkpoint: saved and loaded, same parameters and loss\n"));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&a));
  PetscCall(NNDestroy(&b));
  PetscFunctionReturn(0);
}

static PetscErrorCode BuildFromOptions(const char prefix[], const char opts[], NN *net)
{
  PetscFunctionBegin;
  PetscCall(PetscOptionsInsertString(NULL, opts));
  PetscCall(NNCreate(PETSC_COMM_WORLD, net));
  PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetFromOptions(*net));
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* the same layers as a sequential network and as a graph network without named inputs: bitwise equal; in single
   precision with a residual block, which runs its double passes on converted activations */
static PetscErrorCode TestSequentialEquivalence(NNPrecision prec)
{
  const char
             *layers = prec == NN_PRECISION_DOUBLE
                       ? "-nn_layers fc1,r,dr,fc2,t,fc3 -nn_input_shape 6 -nn_batch_size 5 -nn_seed 4 -nn_loss mse -fc1_type dense -fc1_units 7 -r_type relu -dr_type dropout -dr_rate 0.3 -fc2_type dense -fc2_units 4 -t_type tanh -fc3_type dense -fc3_units 3"
                       : "-nn_layers res,fc1,r,dr,fc2,t,res2,fc3 -nn_input_shape 6 -nn_batch_size 5 -nn_seed 4 -nn_loss mse -nn_precision single -res_type residual -res_layers fa,ta -fa_type dense -fa_units 6 -ta_type tanh -fc1_type dense -fc1_units 7 "
                         "-r_type relu -dr_type dropout -dr_rate 0.3 -fc2_type dense -fc2_units 4 -t_type tanh -res2_type residual -res2_layers fb -fb_type dense -fb_units 4 -fc3_type dense -fc3_units 3";
  char        opts[2048];
  NN          net[2];
  Vec         x, t, dx[2], g[2], y[2], th[2];
  PetscReal   L[2];
  PetscBool   same[4];

  PetscFunctionBegin;
  for (PetscInt k = 0; k < 2; k++) {
    const char *pre = prec == NN_PRECISION_DOUBLE ? (k ? "gr_" : "sq_") : (k ? "grs_" : "sqs_");
    char        buf[2048], *p = opts;
    /* prefix every option of the list */
    PetscCall(PetscStrncpy(buf, layers, sizeof(buf)));
    opts[0] = 0;
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
      if (tok[0] == '-') PetscCall(PetscSNPrintf(p, sizeof(opts) - (p - opts), "-%s%s ", pre, tok + 1));
      else PetscCall(PetscSNPrintf(p, sizeof(opts) - (p - opts), "%s ", tok));
      p += strlen(p);
    }
    if (k) PetscCall(PetscSNPrintf(p, sizeof(opts) - (p - opts), "-%snn_type graph", pre));
    PetscCall(BuildFromOptions(pre, opts, &net[k]));
  }
  PetscCall(FillBatch(net[0], &x, &t));
  for (PetscInt k = 0; k < 2; k++) {
    PetscCall(VecDuplicate(x, &dx[k]));
    PetscCall(NNLossGradient(net[k], 4, x, t, &L[k], dx[k]));
    PetscCall(NNGetGradient(net[k], &g[k]));
    PetscCall(NNGetParameters(net[k], &th[k]));
    PetscCall(NNForward(net[k], 5, x, &y[k]));
  }
  PetscCall(VecEqual(th[0], th[1], &same[0]));
  PetscCall(VecEqual(g[0], g[1], &same[1]));
  PetscCall(VecEqual(dx[0], dx[1], &same[2]));
  PetscCall(VecEqual(y[0], y[1], &same[3]));
  PetscCheck(L[0] == L[1] && same[0] && same[1] && same[2] && same[3], PETSC_COMM_WORLD, PETSC_ERR_PLIB, "graph network without inputs differs from the sequential one: loss %.17g vs %.17g, parameters %d gradient %d input gradient %d output %d", (double)L[1], (double)L[0], same[0], same[1], same[2], same[3]);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "graph network without named inputs equals the sequential one bitwise%s (loss, gradient, input gradient, output)\n", prec == NN_PRECISION_DOUBLE ? "" : " in single precision"));
  for (PetscInt k = 0; k < 2; k++) {
    PetscCall(VecDestroy(&dx[k]));
    PetscCall(NNDestroy(&net[k]));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscFunctionReturn(0);
}

/* the case must fail with a message containing expect; prints a stable line */
static PetscErrorCode ExpectError(const char name[], const char prefix[], const char opts[], const char expect[])
{
  PetscErrorCode ierr;
  const char    *text;
  char          *msg, *found = NULL;
  NN             net = NULL;

  PetscFunctionBegin;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = BuildFromOptions(prefix, opts, &net);
  PetscCall(PetscPopErrorHandler());
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Case %s: expected an error, got none", name);
  PetscCall(NNErrorMessage(ierr, &text, &msg));
  if (msg) PetscCall(PetscStrstr(msg, expect, &found));
  PetscCheck(found, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Case %s: the error message \"%s\" does not contain \"%s\"", name, msg ? msg : "", expect);
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s\n", msg));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: clear error (%s)\n", name, expect));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestErrors(void)
{
  PetscFunctionBegin;
  PetscCall(ExpectError("cycle", "e1_", "-e1_nn_type graph -e1_nn_input_shape 3 -e1_nn_layers a,b,c -e1_a_type dense -e1_a_units 3 -e1_a_inputs c -e1_b_type dense -e1_b_units 3 -e1_c_type dense -e1_c_units 3", "has a cycle: b -> c -> a -> b"));
  PetscCall(ExpectError("unknown input", "e2_", "-e2_nn_type graph -e2_nn_input_shape 3 -e2_nn_layers a,b -e2_a_type dense -e2_a_units 3 -e2_b_type dense -e2_b_units 3 -e2_b_inputs zz", "valid inputs: input, a, b"));
  PetscCall(ExpectError("input of itself", "e3_", "-e3_nn_type graph -e3_nn_input_shape 3 -e3_nn_layers a,b -e3_a_type dense -e3_a_units 3 -e3_b_type dense -e3_b_units 3 -e3_b_inputs b", "Layer b names itself as an input"));
  PetscCall(ExpectError("concat shape mismatch", "e4_", "-e4_nn_type graph -e4_nn_input_shape 1,4,4 -e4_nn_layers f,a,c,o -e4_f_type flatten -e4_a_type dense -e4_a_units 3 -e4_c_type concat -e4_c_inputs a,input -e4_o_type flatten", "a produces shape (3) but the network input produces shape (1,4,4)"));
  PetscCall(ExpectError("add shape mismatch", "e5_", "-e5_nn_type graph -e5_nn_input_shape 3 -e5_nn_layers a,b,s -e5_a_type dense -e5_a_units 3 -e5_b_type dense -e5_b_units 4 -e5_b_inputs input -e5_s_type add -e5_s_inputs a,b", "add needs inputs of one shape"));
  PetscCall(ExpectError("concat layout mismatch", "e6_", "-e6_nn_type graph -e6_nn_input_shape 1,4,4 -e6_nn_layers sp,c,f -e6_sp_type to_spatial -e6_c_type concat -e6_c_inputs sp,input -e6_f_type spatial_flatten", "the inputs need the same layout"));
  PetscCall(ExpectError("unused output", "e7_", "-e7_nn_type graph -e7_nn_input_shape 3 -e7_nn_layers a,b -e7_a_type dense -e7_a_units 3 -e7_b_type dense -e7_b_units 3 -e7_b_inputs input", "The output of layer a is read by no layer"));
  PetscCall(ExpectError("unused split piece", "e8_", "-e8_nn_type graph -e8_nn_input_shape 3 -e8_nn_layers s,b -e8_s_type split -e8_s_sizes 1,2 -e8_b_type dense -e8_b_units 3", "Output s:1 of layer s is read by no layer"));
  PetscCall(ExpectError("split port out of range", "e9_", "-e9_nn_type graph -e9_nn_input_shape 3 -e9_nn_layers s,b,c -e9_s_type split -e9_s_sizes 1,2 -e9_b_type dense -e9_b_units 3 -e9_b_inputs s:2 -e9_c_type concat -e9_c_inputs s:0,s:1,b", "has 2 outputs (s:0 .. s:1)"));
  PetscCall(ExpectError("split sizes", "e10_", "-e10_nn_type graph -e10_nn_input_shape 3 -e10_nn_layers s,c -e10_s_type split -e10_s_sizes 1,1 -e10_c_type concat -e10_c_inputs s:0,s:1", "-e10_s_sizes add up to 2 channels"));
  PetscCall(ExpectError("two inputs to a dense layer", "e11_", "-e11_nn_type graph -e11_nn_input_shape 3 -e11_nn_layers a,b -e11_a_type dense -e11_a_units 3 -e11_b_type dense -e11_b_units 3 -e11_b_inputs a,input", "takes one input but -e11_b_inputs names 2"));
  PetscCall(ExpectError("inputs on a sequential network", "e12_", "-e12_nn_input_shape 3 -e12_nn_layers a,b -e12_a_type dense -e12_a_units 3 -e12_b_type dense -e12_b_units 3 -e12_b_inputs a", "use -e12_nn_type graph"));
  PetscCall(ExpectError("concat in a sequential network", "e13_", "-e13_nn_input_shape 3 -e13_nn_layers a,c -e13_a_type dense -e13_a_units 3 -e13_c_type concat", "the network is sequential"));
  PetscCall(ExpectError("inputs inside a block", "e15_", "-e15_nn_type graph -e15_nn_input_shape 3 -e15_nn_layers a,res -e15_a_type dense -e15_a_units 3 -e15_res_type residual -e15_res_layers f -e15_f_type dense -e15_f_units 3 -e15_f_inputs a", "Layer f inside block res names its inputs"));
  PetscCall(ExpectError("dense after a convolution in a graph network (no repartition inserted)", "e16_", "-e16_nn_type graph -e16_nn_input_shape 1,6,6 -e16_nn_layers sp,cv,fc -e16_sp_type to_spatial -e16_cv_type conv2d -e16_cv_filters 2 -e16_fc_type dense -e16_fc_units 3", "after spatial layers a spatial_flatten, which sequential networks insert themselves"));
  PetscCall(ExpectError("unknown network type", "e14_", "-e14_nn_type tree -e14_nn_input_shape 3 -e14_nn_layers a -e14_a_type dense -e14_a_units 3", "Network type tree is unknown (-nn_type): valid types are sequential and graph"));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscBool dponly = PETSC_FALSE, torch = PETSC_FALSE;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-dp_only", &dponly, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-single", &single, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-torch", &torch, NULL));
  if (torch) {
    PetscCall(WriteTorchFiles());
    PetscCall(PetscFinalize());
    return 0;
  }
  if (!dponly) {
    PetscCall(TestGradientCheck());
    PetscCall(TestSequentialEquivalence(NN_PRECISION_DOUBLE));
    PetscCall(TestSequentialEquivalence(NN_PRECISION_SINGLE));
    PetscCall(TestCheckpoint());
    PetscCall(TestErrors());
  }
  PetscCall(TestDataParallel());
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: 1

   # data groups: the gradient all-reduce starts buckets as the layers' parameter slices become final
   test:
      suffix: dp
      nsize: {{2 3}}
      args: -dp_only -nn_bucket_size 0.0003 -nn_allreduce {{mpi shared}}
      output_file: output/graph_dp.out

   # the same in single precision: the float layers' gradients reach the all-reduce through the same callbacks
   test:
      suffix: dp_single
      nsize: 2
      args: -dp_only -single -nn_bucket_size 0.0003 -nn_allreduce {{mpi shared}}
      output_file: output/graph_dp_single.out

   # PyTorch's forward and autograd on the same graph (double precision, <= 1e-10)
   test:
      suffix: torch
      requires: torch
      command: ${exe} -petsc_ci -torch && /usr/bin/python3 ${PETNN_SOURCE_DIR}/tests/graph_torch.py dense graph_dense.h5 graph_dense_grad.h5

TEST*/
