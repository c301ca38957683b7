static char help[] = "Loss-Hessian products and eigenvalues against dense references and one rank.\n\n"
                     "A serial copy of a small network (PETSC_COMM_SELF) is the reference; the same network on\n"
                     "PETSC_COMM_WORLD, split into data groups (-spatial 1) or data x spatial groups, forms its\n"
                     "Hessian over the whole data set. Checks: the parameters and buffers are restored bitwise\n"
                     "after a product, H v agrees with one rank, the Hessian formed column by column is\n"
                     "symmetric, and SLEPc's extreme eigenvalues agree with those of the dense Hessian (Jacobi)\n"
                     "and with one rank, all to -tol relative to the largest |eigenvalue|.\n"
                     "  -net mlp|relu|bn|cnn|ode   tanh MLP, ReLU MLP (kinks frozen), MLP with batch norm and dropout,\n"
                     "                    small CNN, dense -> ODE block (RK4, TSAdjoint) -> dense\n"
                     "  -spatial S        ranks per spatial group (cnn)\n"
                     "  -nev k            eigenvalues compared at each end (default 4)\n"
                     "Torch mode (tests/spectral_hessian_torch.py): -hvp_data_file <h5> -load <ckpt> -hvp_v <bin>\n"
                     "-hvp_out <bin> computes H v of the network given by -nn_layers ... on all the data.\n";

#include <petnn.h>
#include <unistd.h>

#define NSAMPLES 43 /* batches of 10 split over up to 4 data groups, the last one of 3 */
#define NCLASSES 3

static PetscErrorCode WriteData(const char file[], PetscBool cnn)
{
  PetscInt    F = cnn ? 64 : 6;
  Mat         X;
  Vec         y;
  PetscViewer v;
  PetscRandom r;

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetSeed(r, 11));
  PetscCall(PetscRandomSeed(r));
  PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, NSAMPLES, F, NULL, &X));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, NSAMPLES, &y));
  for (PetscInt i = 0; i < NSAMPLES; i++) {
    for (PetscInt j = 0; j < F; j++) {
      PetscReal u;
      PetscCall(PetscRandomGetValueReal(r, &u));
      PetscCall(MatSetValue(X, i, j, u + (j % NCLASSES == i % NCLASSES ? 0.5 : 0.0), INSERT_VALUES));
    }
    PetscCall(VecSetValue(y, i, (PetscScalar)(i % NCLASSES), INSERT_VALUES));
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
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

static PetscErrorCode CreateNet(MPI_Comm comm, const char *type, PetscInt spatial, NN *net)
{
  NNLayer     l;
  PetscMPIInt size;
  PetscBool   cnn, bn, relu, ode;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(type, "cnn", &cnn));
  PetscCall(PetscStrcmp(type, "ode", &ode));
  PetscCall(PetscStrcmp(type, "relu", &relu));
  PetscCall(PetscStrcmp(type, "bn", &bn));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(NNCreate(comm, net));
  if (comm != PETSC_COMM_SELF && !cnn) PetscCall(NNSetProcessGrid(*net, 1, size / spatial));
  if (ode) { /* dense -> ODE block (f = dense + tanh, RK4, 3 steps) -> dense, from the options */
    PetscCall(PetscOptionsInsertString(NULL, "-nn_layers fc1,ode,fc2 -fc1_type dense -fc1_units 5 -ode_type ode -ode_layers f1,ft -f1_type dense -f1_units 5 -ft_type tanh -ode_steps 3 -ode_ts_type rk -ode_ts_rk_type 4 -fc2_type dense -fc2_units 3"));
    PetscCall(NNSetInputShape(*net, 1, (PetscInt[]){6}));
    PetscCall(NNSetLoss(*net, NNLOSSCROSSENTROPY));
    PetscCall(NNSetBatchSize(*net, 10));
    PetscCall(NNSetSeed(*net, 5));
    PetscCall(NNSetFromOptions(*net));
    PetscCall(NNSetUp(*net));
    PetscFunctionReturn(0);
  }
  if (cnn) {
    PetscCall(NNAddLayer(*net, NNLAYERTOSPATIAL, "sp", NULL));
    PetscCall(NNAddLayer(*net, NNLAYERCONV2D, "conv", &l));
    PetscCall(NNLayerConvSetFilters(l, 2));
    PetscCall(NNLayerConvSetKernelSize(l, 3));
    PetscCall(NNLayerConvSetPadding(l, 1));
    PetscCall(NNAddLayer(*net, NNLAYERAVGPOOL2D, "pool", &l));
    PetscCall(NNLayerPoolSetKernelSize(l, 2));
    PetscCall(NNAddLayer(*net, NNLAYERSPATIALFLATTEN, "flat", NULL));
    PetscCall(NNSetInputShape(*net, 3, (PetscInt[]){1, 8, 8}));
  } else {
    PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc1", &l));
    PetscCall(NNLayerDenseSetUnits(l, 7));
    PetscCall(NNSetInputShape(*net, 1, (PetscInt[]){6}));
    if (bn) PetscCall(NNAddLayer(*net, NNLAYERBATCHNORM1D, "bn", NULL));
  }
  PetscCall(NNAddLayer(*net, relu ? NNLAYERRELU : NNLAYERTANH, "act", NULL));
  if (bn) {
    PetscCall(NNAddLayer(*net, NNLAYERDROPOUT, "drop", &l));
    PetscCall(NNLayerDropoutSetRate(l, 0.25));
  }
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc2", &l));
  PetscCall(NNLayerDenseSetUnits(l, NCLASSES));
  if (comm != PETSC_COMM_SELF && cnn) PetscCall(NNSetProcessGrid(*net, 1, size / spatial));
  PetscCall(NNSetLoss(*net, NNLOSSCROSSENTROPY));
  PetscCall(NNSetBatchSize(*net, 10));
  PetscCall(NNSetSeed(*net, 5));
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

static PetscErrorCode CreateData(MPI_Comm comm, const char file[], const char prefix[], PetscBool cnn, NNData *data)
{
  char opt[64];

  PetscFunctionBegin;
  PetscCall(NNDataCreate(comm, data));
  PetscCall(NNDataSetType(*data, NNDATABINARY));
  PetscCall(NNDataSetFileName(*data, file));
  if (cnn) {
    PetscCall(PetscSNPrintf(opt, sizeof(opt), "-%sdata_shape", prefix));
    PetscCall(PetscOptionsSetValue(NULL, opt, "1,8,8"));
  }
  PetscCall(NNDataSetOptionsPrefix(*data, prefix));
  PetscCall(NNDataSetFromOptions(*data));
  PetscFunctionReturn(0);
}

static PetscErrorCode Report(MPI_Comm comm, const char what[], PetscReal err, PetscReal tol)
{
  PetscFunctionBegin;
  PetscCall(PetscPrintf(comm, "%s: %s\n", what, err <= tol ? "pass" : "FAIL"));
  if (!(err <= tol)) PetscCall(PetscPrintf(comm, "  (relative error %g > %g)\n", (double)err, (double)tol));
  PetscFunctionReturn(0);
}

/* the dense Hessian A (P x P, column major, on every rank) formed column by column from the shell */
static PetscErrorCode DenseHessian(Mat H, PetscInt P, PetscScalar *A)
{
  Mat                D;
  const PetscScalar *d;
  PetscInt           lo, hi, lda;
  PetscMPIInt        cnt;

  PetscFunctionBegin;
  PetscCall(MatComputeOperator(H, MATDENSE, &D));
  PetscCall(MatGetOwnershipRange(D, &lo, &hi));
  PetscCall(MatDenseGetLDA(D, &lda));
  PetscCall(PetscArrayzero(A, P * P));
  PetscCall(MatDenseGetArrayRead(D, &d));
  for (PetscInt j = 0; j < P; j++)
    for (PetscInt i = lo; i < hi; i++) A[i + j * P] = d[(i - lo) + j * lda];
  PetscCall(MatDenseRestoreArrayRead(D, &d));
  PetscCall(PetscMPIIntCast(P * P, &cnt));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, A, cnt, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)H)));
  PetscCall(MatDestroy(&D));
  PetscFunctionReturn(0);
}

/* relative asymmetry of A, then the eigenvalues (ascending) of (A + A^T)/2 by the cyclic Jacobi
   method, a dense reference independent of SLEPc (and of a LAPACK the tests need not link) */
static PetscErrorCode DenseEigenvalues(PetscInt P, PetscScalar *A, PetscReal *asym, PetscReal w[])
{
  PetscReal amax = 0, dmax = 0;

  PetscFunctionBegin;
  for (PetscInt j = 0; j < P; j++)
    for (PetscInt i = 0; i < P; i++) {
      amax = PetscMax(amax, PetscAbsScalar(A[i + j * P]));
      dmax = PetscMax(dmax, PetscAbsScalar(A[i + j * P] - A[j + i * P]));
    }
  *asym = dmax / amax;
  for (PetscInt j = 0; j < P; j++)
    for (PetscInt i = 0; i < j; i++) A[i + j * P] = A[j + i * P] = (A[i + j * P] + A[j + i * P]) / 2;
  for (PetscInt sweep = 0; sweep < 100; sweep++) {
    PetscReal off = 0;
    for (PetscInt j = 0; j < P; j++)
      for (PetscInt i = 0; i < j; i++) off += PetscSqr(PetscRealPart(A[i + j * P]));
    if (off <= PetscSqr(1e-15 * amax)) break;
    for (PetscInt p = 0; p < P; p++)
      for (PetscInt q = p + 1; q < P; q++) {
        PetscReal apq = PetscRealPart(A[p + q * P]), app = PetscRealPart(A[p + p * P]), aqq = PetscRealPart(A[q + q * P]), theta, t, c, s;
        if (apq == 0) continue;
        theta = (aqq - app) / (2 * apq);
        t     = (theta >= 0 ? 1 : -1) / (PetscAbsReal(theta) + PetscSqrtReal(theta * theta + 1));
        c     = 1 / PetscSqrtReal(t * t + 1);
        s     = t * c;
        for (PetscInt k = 0; k < P; k++) { /* A <- J^T A J with the rotation in the (p, q) plane */
          PetscReal akp = PetscRealPart(A[k + p * P]), akq = PetscRealPart(A[k + q * P]);
          A[k + p * P] = c * akp - s * akq;
          A[k + q * P] = s * akp + c * akq;
        }
        for (PetscInt k = 0; k < P; k++) {
          PetscReal apk = PetscRealPart(A[p + k * P]), aqk = PetscRealPart(A[q + k * P]);
          A[p + k * P] = c * apk - s * aqk;
          A[q + k * P] = s * apk + c * aqk;
        }
      }
  }
  for (PetscInt i = 0; i < P; i++) w[i] = PetscRealPart(A[i + i * P]);
  PetscCall(PetscSortReal(P, w));
  PetscFunctionReturn(0);
}

/* H v for the torch cross-check: the network of the options, its checkpoint, all the HDF5 data */
static PetscErrorCode TorchMode(const char load[], const char vfile[], const char out[])
{
  NN          net;
  NNData      data;
  NNShape     s;
  PetscInt    n;
  Mat         H;
  Vec         v, hv;
  PetscViewer viewer;

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetFromOptions(net));
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, &data));
  PetscCall(NNDataSetOptionsPrefix(data, "hvp_"));
  PetscCall(NNDataSetType(data, NNDATAHDF5));
  PetscCall(NNDataSetFromOptions(data));
  PetscCall(NNDataGetSampleShape(data, &s));
  PetscCall(NNSetInputShape(net, s.ndim, s.dim));
  PetscCall(NNDataGetNumSamples(data, &n));
  PetscCall(NNSetUp(net));
  PetscCall(NNCheckpointLoad(net, load));
  PetscCall(NNCreateHessianData(net, data, -1, &H));
  PetscCall(MatCreateVecs(H, &v, &hv));
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, vfile, FILE_MODE_READ, &viewer));
  PetscCall(VecLoad(v, viewer));
  PetscCall(PetscViewerDestroy(&viewer));
  PetscCall(MatMult(H, v, hv));
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, out, FILE_MODE_WRITE, &viewer));
  PetscCall(VecView(hv, viewer));
  PetscCall(PetscViewerDestroy(&viewer));
  PetscCall(VecDestroy(&v));
  PetscCall(VecDestroy(&hv));
  PetscCall(MatDestroy(&H));
  PetscCall(NNDataDestroy(&data));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/* H v on all ranks against the one-rank reference; parameters and buffers restored bitwise */
static PetscErrorCode CheckProduct(NN net, Mat H, Mat Href, PetscReal tol)
{
  Vec         vref, hvref, v, hv, hvall, theta0, buf0, theta, buf;
  VecScatter  sc;
  PetscRandom r;
  PetscInt    lo, hi;
  PetscBool   same1, same2;
  PetscReal   err, nrm;
  MPI_Comm    comm = PetscObjectComm((PetscObject)H);

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(Href, &vref, &hvref));
  PetscCall(MatCreateVecs(H, &v, &hv));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetInterval(r, -1, 1));
  PetscCall(VecSetRandom(vref, r));
  PetscCall(PetscRandomDestroy(&r));
  PetscCall(VecGetOwnershipRange(v, &lo, &hi));
  {
    const PetscScalar *a;
    PetscScalar       *b;
    PetscCall(VecGetArrayRead(vref, &a));
    PetscCall(VecGetArray(v, &b));
    PetscCall(PetscArraycpy(b, a + lo, hi - lo));
    PetscCall(VecRestoreArray(v, &b));
    PetscCall(VecRestoreArrayRead(vref, &a));
  }
  PetscCall(NNGetParameters(net, &theta));
  PetscCall(NNGetBuffers(net, &buf));
  PetscCall(VecDuplicate(theta, &theta0));
  PetscCall(VecCopy(theta, theta0));
  PetscCall(VecDuplicate(buf, &buf0));
  PetscCall(VecCopy(buf, buf0));
  PetscCall(MatMult(H, v, hv));
  PetscCall(VecEqual(theta, theta0, &same1));
  PetscCall(VecEqual(buf, buf0, &same2));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &same1, 1, NN_MPI_BOOL, MPI_LAND, comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &same2, 1, NN_MPI_BOOL, MPI_LAND, comm));
  PetscCall(PetscPrintf(comm, "parameters and buffers restored bitwise after a product: %s\n", same1 && same2 ? "pass" : "FAIL"));
  PetscCall(MatMult(Href, vref, hvref));
  PetscCall(VecScatterCreateToAll(hv, &sc, &hvall));
  PetscCall(VecScatterBegin(sc, hv, hvall, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(sc, hv, hvall, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecNorm(hvref, NORM_INFINITY, &nrm));
  PetscCall(VecAXPY(hvall, -1, hvref));
  PetscCall(VecNorm(hvall, NORM_INFINITY, &err));
  err /= nrm;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPIU_REAL, MPIU_MAX, comm));
  PetscCall(Report(comm, "H v against one rank", err, tol));
  PetscCall(VecScatterDestroy(&sc));
  PetscCall(VecDestroy(&hvall));
  PetscCall(VecDestroy(&theta0));
  PetscCall(VecDestroy(&buf0));
  PetscCall(VecDestroy(&vref));
  PetscCall(VecDestroy(&hvref));
  PetscCall(VecDestroy(&v));
  PetscCall(VecDestroy(&hv));
  PetscFunctionReturn(0);
}

/* the one-batch Hessian of the first 10 samples against the data-set Hessian over them */
static PetscErrorCode CheckBatch(NN net, NNData data, PetscReal tol)
{
  Mat       Hb, Hd;
  Vec       x, t, v, yb, yd;
  PetscInt  idx[10];
  PetscReal err, nrm;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < 10; i++) idx[i] = i;
  PetscCall(NNCreateBatchVecs(net, &x, &t));
  PetscCall(NNDataGetBatch(data, 10, idx, x, t));
  PetscCall(NNCreateHessian(net, 10, x, t, &Hb));
  PetscCall(NNCreateHessianData(net, data, 10, &Hd));
  PetscCall(MatCreateVecs(Hb, &v, &yb));
  PetscCall(VecDuplicate(yb, &yd));
  PetscCall(VecSet(v, 0.5));
  PetscCall(VecSetValue(v, 0, -1.0, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(v));
  PetscCall(VecAssemblyEnd(v));
  PetscCall(MatMult(Hb, v, yb));
  PetscCall(MatMult(Hd, v, yd));
  PetscCall(VecNorm(yd, NORM_INFINITY, &nrm));
  PetscCall(VecAXPY(yb, -1, yd));
  PetscCall(VecNorm(yb, NORM_INFINITY, &err));
  PetscCall(Report(PetscObjectComm((PetscObject)Hb), "one-batch Hessian against the data-set Hessian of the same samples", err / nrm, tol));
  PetscCall(VecDestroy(&v));
  PetscCall(VecDestroy(&yb));
  PetscCall(VecDestroy(&yd));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(MatDestroy(&Hb));
  PetscCall(MatDestroy(&Hd));
  PetscFunctionReturn(0);
}

/* SLEPc's nev largest and most negative eigenvalues against LAPACK and against one rank */
static PetscErrorCode CheckEigenvalues(Mat H, Mat Href, PetscInt nev, PetscReal tol)
{
  PetscInt     P, nc[4];
  PetscScalar *A;
  PetscReal   *w, *e, asym, scale, err[3] = {0, 0, 0};
  MPI_Comm     comm = PetscObjectComm((PetscObject)H);

  PetscFunctionBegin;
  PetscCall(MatGetSize(H, &P, NULL));
  PetscCall(PetscMalloc3(P * P, &A, P, &w, 4 * nev, &e));
  PetscCall(DenseHessian(H, P, A));
  PetscCall(DenseEigenvalues(P, A, &asym, w));
  PetscCall(Report(comm, "Hessian formed column by column is symmetric to 1e-6", asym, 1e-6));
  PetscCall(NNComputeHessianEigenvalues(H, nev, PETSC_FALSE, &nc[0], e));
  PetscCall(NNComputeHessianEigenvalues(H, nev, PETSC_TRUE, &nc[1], e + nev));
  PetscCall(NNComputeHessianEigenvalues(Href, nev, PETSC_FALSE, &nc[2], e + 2 * nev));
  PetscCall(NNComputeHessianEigenvalues(Href, nev, PETSC_TRUE, &nc[3], e + 3 * nev));
  for (PetscInt k = 0; k < 4; k++) PetscCheck(nc[k] == nev, comm, PETSC_ERR_NOT_CONVERGED, "Only %" PetscInt_FMT " of %" PetscInt_FMT " eigenvalues converged", nc[k], nev);
  scale = PetscMax(PetscAbsReal(w[0]), PetscAbsReal(w[P - 1]));
  for (PetscInt i = 0; i < nev; i++) {
    err[0] = PetscMax(err[0], PetscAbsReal(e[i] - w[P - 1 - i]) / scale);
    err[1] = PetscMax(err[1], PetscAbsReal(e[nev + i] - w[i]) / scale);
    err[2] = PetscMax(err[2], PetscAbsReal(e[i] - e[2 * nev + i]) / scale);
    err[2] = PetscMax(err[2], PetscAbsReal(e[nev + i] - e[3 * nev + i]) / scale);
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, err, 3, MPIU_REAL, MPIU_MAX, comm));
  PetscCall(Report(comm, "largest eigenvalues (SLEPc) against the dense Hessian (Jacobi)", err[0], tol));
  PetscCall(Report(comm, "most negative eigenvalues (SLEPc) against the dense Hessian (Jacobi)", err[1], tol));
  PetscCall(Report(comm, "eigenvalues against one rank", err[2], tol));
  PetscCall(PetscPrintf(comm, "largest eigenvalue %s 0, smallest %s 0\n", w[P - 1] > 0 ? ">" : "<=", w[0] < 0 ? "<" : ">="));
  PetscCall(PetscFree3(A, w, e));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  NN          net, ref;
  NNData      data, dref;
  Mat         H, Href;
  char        type[16] = "mlp", file[64], load[PETSC_MAX_PATH_LEN] = "", vfile[PETSC_MAX_PATH_LEN] = "", out[PETSC_MAX_PATH_LEN] = "";
  PetscInt    spatial = 1, nev = 4;
  PetscReal   tol = 1e-8;
  PetscMPIInt rank, size;
  PetscBool   cnn, trainview = PETSC_FALSE, badinput = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Loss-Hessian test options", NULL);
  PetscCall(PetscOptionsString("-net", "mlp, bn or cnn", NULL, type, type, sizeof(type), NULL));
  PetscCall(PetscOptionsInt("-spatial", "Ranks per spatial group", NULL, spatial, &spatial, NULL));
  PetscCall(PetscOptionsInt("-nev", "Eigenvalues compared at each end", NULL, nev, &nev, NULL));
  PetscCall(PetscOptionsReal("-tol", "Relative tolerance", NULL, tol, &tol, NULL));
  PetscCall(PetscOptionsBool("-bad_input", "Check the errors on bad arguments", NULL, badinput, &badinput, NULL));
  PetscCall(PetscOptionsBool("-train_view", "Train one epoch and print -nn_hessian_view", NULL, trainview, &trainview, NULL));
  PetscCall(PetscOptionsString("-load", "Torch mode: checkpoint", NULL, load, load, sizeof(load), NULL));
  PetscCall(PetscOptionsString("-hvp_v", "Torch mode: v (PETSc binary)", NULL, vfile, vfile, sizeof(vfile), NULL));
  PetscCall(PetscOptionsString("-hvp_out", "Torch mode: H v (PETSc binary)", NULL, out, out, sizeof(out), NULL));
  PetscOptionsEnd();
  if (load[0]) {
    PetscCall(TorchMode(load, vfile, out));
    PetscCall(PetscFinalize());
    return 0;
  }
  PetscCall(PetscStrcmp(type, "cnn", &cnn));
  PetscCheck(size % spatial == 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-spatial %" PetscInt_FMT " must divide the %d ranks", spatial, size);
  {
    int pid = (int)getpid(); /* a file of its own: several of these tests may run at once */
    PetscCallMPI(MPI_Bcast(&pid, 1, MPI_INT, 0, PETSC_COMM_WORLD));
    PetscCall(PetscSNPrintf(file, sizeof(file), "spectral_hessian_%s_%d.bin", type, pid));
  }
  if (!rank) PetscCall(WriteData(file, cnn));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));

  PetscCall(CreateNet(PETSC_COMM_SELF, type, 1, &ref));
  PetscCall(CreateData(PETSC_COMM_SELF, file, "dref_", cnn, &dref));
  PetscCall(NNCreateHessianData(ref, dref, -1, &Href));
  PetscCall(CreateNet(PETSC_COMM_WORLD, type, spatial, &net));
  PetscCall(CreateData(PETSC_COMM_WORLD, file, "data_", cnn, &data));
  PetscCall(NNCreateHessianData(net, data, -1, &H));

  if (badinput) { /* clear errors, nothing allocated */
    PetscErrorCode e1, e2;
    Mat            Hbad = NULL;
    PetscInt       nc;
    PetscReal      eig[1];
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    e1 = NNCreateHessianData(net, data, 1000, &Hbad);
    e2 = NNComputeHessianEigenvalues(H, 0, PETSC_FALSE, &nc, eig);
    PetscCall(PetscPopErrorHandler());
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "1000 of 43 samples refused: %s\n", e1 == PETSC_ERR_ARG_OUTOFRANGE && !Hbad ? "pass" : "FAIL"));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "0 eigenvalues refused: %s\n", e2 == PETSC_ERR_ARG_OUTOFRANGE ? "pass" : "FAIL"));
  } else if (trainview) { /* -nn_hessian_view at the end of NNTrain() */
    PetscCall(NNSetEpochs(net, 1));
    PetscCall(NNSetFromOptions(net));
    PetscCall(NNTrain(net, data, NULL));
  } else {
    PetscCall(CheckProduct(net, H, Href, tol));
    PetscCall(CheckBatch(net, data, tol));
    PetscCall(CheckEigenvalues(H, Href, nev, tol));
  }

  PetscCall(MatDestroy(&H));
  PetscCall(MatDestroy(&Href));
  PetscCall(NNDataDestroy(&data));
  PetscCall(NNDataDestroy(&dref));
  PetscCall(NNDestroy(&net));
  PetscCall(NNDestroy(&ref));
  if (!rank) PetscCall(PetscTestFile(file, 'r', &cnn));
  if (!rank && cnn) {
    char info[80];
    PetscCall(PetscSNPrintf(info, sizeof(info), "%s.info", file));
    (void)remove(file);
    (void)remove(info);
  }
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
     suffix: mlp
     requires: slepc
     nsize: {{1 2 3 4}}
     args: -net mlp -nn_hessian_eps_tol 1e-12
     output_file: output/spectral_hessian_mlp.out

   # ReLU: the kink pattern at theta is frozen in both gradients of a product
   test:
     suffix: relu
     requires: slepc
     nsize: {{1 3}}
     args: -net relu -nn_hessian_eps_tol 1e-12
     output_file: output/spectral_hessian_mlp.out

   # batch norm and dropout: evaluation mode (running statistics, no dropout)
   test:
     suffix: bn_eval
     requires: slepc
     args: -net bn -nn_hessian_eps_tol 1e-12
     output_file: output/spectral_hessian_mlp.out

   # training mode (batch statistics, fixed dropout masks): its larger third derivatives make the
   # O(eps^2) truncation error, which is also the operator's asymmetry, 5e-8 at the default step
   test:
     suffix: bn_training
     requires: slepc
     args: -net bn -nn_hessian_eps_tol 1e-12 -nn_hessian_training -nn_hessian_fd_step 1e-6
     output_file: output/spectral_hessian_mlp.out

   # a small CNN (convolution, average pooling) in data groups, and in data x spatial groups
   test:
     suffix: cnn
     requires: slepc
     nsize: {{1 2 3 4}}
     args: -net cnn -nn_hessian_eps_tol 1e-12
     output_file: output/spectral_hessian_mlp.out

   test:
     suffix: cnn_spatial
     requires: slepc
     nsize: {{2 4}}
     args: -net cnn -spatial 2 -nn_hessian_eps_tol 1e-12
     output_file: output/spectral_hessian_mlp.out

   # an ODE block: products through TSSolve/TSAdjointSolve gradients (training mode)
   test:
     suffix: ode
     requires: slepc
     nsize: {{1 2}}
     args: -net ode -nn_hessian_eps_tol 1e-12
     output_file: output/spectral_hessian_mlp.out

   test:
     suffix: bad_input
     requires: slepc
     nsize: 2
     args: -bad_input

   # the view at the end of NNTrain() (eigenvalues, products and time vary: only the header and warnings are compared)
   test:
     suffix: view
     requires: slepc
     nsize: {{1 2}}
     args: -net relu -train_view -nn_hessian_view -nn_hessian_negative -nn_hessian_nev 3
     filter: grep -E "^Loss-Hessian|WARNING|converged|largest:|most negative:" | sed -E "s/(largest|most negative):( -?[0-9.]+e[-+][0-9]+){3}$/\\1: 3 eigenvalues/"
     output_file: output/spectral_hessian_view.out

   # H v against PyTorch's exact torch.autograd.functional.hvp (tests/spectral_hessian_torch.py)
   test:
     suffix: torch
     requires: torch slepc
     timeoutfactor: 0.5
     command: /usr/bin/python3 ${PETNN_SOURCE_DIR}/tests/spectral_hessian_torch.py ${exe}

TEST*/
