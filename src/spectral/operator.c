/* Layer operator norms: the exact spectral norm (largest singular value) of a layer's linear operator
   by SLEPc SVD, and the dense reference that checks it (LAPACK gesvd of the operator formed column by
   column, gathered on rank 0). The per-type table of norms and Lipschitz constants is lipschitz.c. */
#include <petnn/private/spectralimpl.h>
#include <petscblaslapack.h>

static PetscLogEvent NN_OperatorNorm = 0, NN_OperatorNormRef = 0;

static PetscErrorCode NNOperatorRegisterEvents(void)
{
  PetscFunctionBegin;
  if (!NN_OperatorNorm) {
    PetscCall(NNLogEventRegister("NNOperatorNorm", NN_CLASSID, &NN_OperatorNorm));
    PetscCall(NNLogEventRegister("NNOperatorNormRef", NN_CLASSID, &NN_OperatorNormRef));
  }
  PetscFunctionReturn(0);
}

/*
   NNOperatorSVD - sigma_max of A by SLEPc SVD with options prefix `prefix` (tolerance 1e-12 unless
   -<prefix>svd_tol says otherwise), and the solver's iterations
*/
PetscErrorCode NNOperatorSVD(Mat A, const char prefix[], PetscReal *sigma, PetscInt *its)
{
#if defined(PETNN_HAVE_SLEPC)
  SVD      svd;
  PetscInt nconv;
#endif

  PetscFunctionBegin;
  PetscCall(NNSlepcInitialize());
#if defined(PETNN_HAVE_SLEPC)
  PetscCall(NNOperatorRegisterEvents());
  PetscCall(PetscLogEventBegin(NN_OperatorNorm, A, 0, 0, 0));
  PetscCall(SVDCreate(PetscObjectComm((PetscObject)A), &svd));
  PetscCall(SVDSetOptionsPrefix(svd, prefix));
  PetscCall(SVDSetOperators(svd, A, NULL));
  PetscCall(SVDSetImplicitTranspose(svd, PETSC_TRUE)); /* shells have MatMultTranspose, not MatTranspose */
  PetscCall(SVDSetWhichSingularTriplets(svd, SVD_LARGEST));
  PetscCall(SVDSetDimensions(svd, 1, PETSC_DEFAULT, PETSC_DEFAULT));
  PetscCall(SVDSetTolerances(svd, 1e-12, PETSC_DEFAULT));
  PetscCall(SVDSetFromOptions(svd));
  PetscCall(SVDSolve(svd));
  PetscCall(SVDGetConverged(svd, &nconv));
  PetscCheck(nconv > 0, PetscObjectComm((PetscObject)A), PETSC_ERR_CONV_FAILED, "SVD of the operator (-%ssvd_*) did not converge: raise -%smax_it or -%sncv", prefix ? prefix : "", prefix ? prefix : "", prefix ? prefix : "");
  PetscCall(SVDGetSingularTriplet(svd, 0, sigma, NULL, NULL));
  PetscCall(SVDGetIterationNumber(svd, its));
  PetscCall(SVDDestroy(&svd));
  PetscCall(PetscLogEventEnd(NN_OperatorNorm, A, 0, 0, 0));
#else /* NNSlepcInitialize() has refused */
  (void)A, (void)prefix, (void)sigma, (void)its;
#endif
  PetscFunctionReturn(0);
}

/*
   NNOperatorDenseReference - sigma_max of A from its explicit form: MatComputeOperator() applies A to
   every unit vector, the rows are gathered on rank 0 and LAPACK gesvd gives all singular values.
   For tests and checks of small operators: O(m n) memory on rank 0, O(m n min(m,n)) work.
*/
PetscErrorCode NNOperatorDenseReference(Mat A, PetscReal *sigma)
{
  MPI_Comm           comm = PetscObjectComm((PetscObject)A);
  Mat                D;
  PetscInt           M, N, m, lda;
  PetscMPIInt        size, rank, cnt, *counts = NULL, *displs = NULL;
  const PetscScalar *a;
  PetscScalar       *blk, *G = NULL;

  PetscFunctionBegin;
  PetscCall(NNOperatorRegisterEvents());
  PetscCall(PetscLogEventBegin(NN_OperatorNormRef, A, 0, 0, 0));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(MatComputeOperator(A, MATDENSE, &D));
  PetscCall(MatGetSize(D, &M, &N));
  PetscCall(MatGetLocalSize(D, &m, NULL));
  PetscCall(MatDenseGetLDA(D, &lda));
  PetscCall(MatDenseGetArrayRead(D, &a));
  /* the local rows of A are columns of A^T (same singular values): packed as an N x m column-major
     block, the ranks' blocks in order form A^T column-major on rank 0 with no reordering */
  PetscCall(PetscMalloc1(PetscMax(m * N, 1), &blk));
  for (PetscInt i = 0; i < m; i++)
    for (PetscInt j = 0; j < N; j++) blk[i * N + j] = a[j * lda + i];
  PetscCall(MatDenseRestoreArrayRead(D, &a));
  PetscCall(MatDestroy(&D));
  PetscCall(PetscMPIIntCast(m * N, &cnt));
  if (rank == 0) PetscCall(PetscMalloc3(M * N, &G, size, &counts, size + 1, &displs));
  PetscCallMPI(MPI_Gather(&cnt, 1, MPI_INT, counts, 1, MPI_INT, 0, comm));
  if (rank == 0) {
    displs[0] = 0;
    for (PetscMPIInt r = 0; r < size; r++) displs[r + 1] = displs[r] + counts[r];
  }
  PetscCallMPI(MPI_Gatherv(blk, cnt, MPIU_SCALAR, G, counts, displs, MPIU_SCALAR, 0, comm));
  PetscCall(PetscFree(blk));
  *sigma = 0;
  if (rank == 0 && M > 0 && N > 0) {
    PetscBLASInt bm, bn, lwork = -1, info, one = 1;
    PetscScalar  wq, *work;
    PetscReal   *s;

    PetscCall(PetscBLASIntCast(N, &bm)); /* G is A^T: N x M */
    PetscCall(PetscBLASIntCast(M, &bn));
    PetscCall(PetscMalloc1(PetscMin(M, N), &s));
#if defined(PETSC_USE_COMPLEX)
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "The dense reference needs real scalars");
#else
    PetscCallBLAS("LAPACKgesvd", LAPACKgesvd_("N", "N", &bm, &bn, G, &bm, s, NULL, &one, NULL, &one, &wq, &lwork, &info));
    PetscCall(PetscBLASIntCast((PetscInt)PetscRealPart(wq), &lwork));
    PetscCall(PetscMalloc1(lwork, &work));
    PetscCallBLAS("LAPACKgesvd", LAPACKgesvd_("N", "N", &bm, &bn, G, &bm, s, NULL, &one, NULL, &one, work, &lwork, &info));
    PetscCall(PetscFree(work));
#endif
    PetscCheck(info == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "LAPACK gesvd failed with info %d", (int)info);
    *sigma = s[0];
    PetscCall(PetscFree(s));
  }
  if (rank == 0) PetscCall(PetscFree3(G, counts, displs));
  PetscCallMPI(MPI_Bcast(sigma, 1, MPIU_REAL, 0, comm));
  PetscCall(PetscLogEventEnd(NN_OperatorNormRef, A, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* the network ready for layer calls: set up again where only its batch capacity changed since (the end
   of a data-parallel NNTrain() restores it), which keeps the parameters */
PetscErrorCode NNSpectralSetUp(NN net)
{
  PetscFunctionBegin;
  if (net->setupcalled) PetscFunctionReturn(0);
  PetscCheck(net->theta && !net->init.reinit, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONGSTATE, "Call NNSetUp() (or train the network, or load a checkpoint) before computing operator norms");
  PetscCall(NNSetUp(net));
  PetscFunctionReturn(0);
}

/* the operator of a dense or spatial linear layer (*op: the shell's context, NULL for dense) */
static PetscErrorCode NNLayerCreateOperator(NNLayer l, Mat *A, NNLinearOp **op)
{
  PetscBool dense;

  PetscFunctionBegin;
  *op = NULL;
  PetscCall(PetscObjectTypeCompare((PetscObject)l, NNLAYERDENSE, &dense));
  if (dense) PetscCall(NNLayerCreateWeightMat(l, A));
  else {
    PetscCall(NNLinearOpCreate(l, op));
    PetscCall(NNLinearOpCreateShell(*op, A));
  }
  PetscFunctionReturn(0);
}

/* sigma_max of a dense or spatial linear layer's operator by SLEPc (reference: by the dense reference) */
PetscErrorCode NNLayerOperatorSigma_Private(NNLayer l, PetscBool reference, PetscReal *sigma, PetscInt *its)
{
  Mat         A;
  NNLinearOp *op;
  char        prefix[256];

  PetscFunctionBegin;
  PetscCall(NNLayerCreateOperator(l, &A, &op));
  PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "%ssvd_", ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "nn_spectral_"));
  *its = 0;
  if (reference) PetscCall(NNOperatorDenseReference(A, sigma));
  else PetscCall(NNOperatorSVD(A, prefix, sigma, its));
  PetscCall(MatDestroy(&A));
  PetscCall(NNLinearOpDestroy(&op));
  PetscFunctionReturn(0);
}

/* the layer-level call: parameters lent for the duration */
static PetscErrorCode NNLayerComputeNorm(NN net, NNLayer l, PetscBool reference, PetscReal *sigma)
{
  NNOperatorNormInfo info;
  PetscErrorCode     ierr;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 2);
  PetscAssertPointer(sigma, 3);
  PetscCall(NNSpectralSetUp(net));
  PetscCall(NNSlepcInitialize());
  PetscCall(NNBeginLayerCalls(net));
  ierr = NNLayerLipschitz_Private(l, reference, sigma, &info);
  PetscCall(NNEndLayerCalls(net));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/*@
   NNLayerComputeOperatorNorm - the spectral norm of a layer's linear operator, or the Lipschitz
   constant of a nonlinear layer

   Collective on the layer

   Input Parameters:
+  net - the network holding the layer, set up (trained or with loaded parameters)
-  l - the layer (`NNGetLayer()`; a layer inside a residual or ODE block works too)

   Output Parameter:
.  sigma - sigma_max of the layer's linear part (the bias left out), or its Lipschitz constant

   Options Database Keys:
.  -<layer>_svd_* - the SLEPc `SVD` computing it (e.g. -conv1_svd_type trlanczos -conv1_svd_tol 1e-14)

   Notes:
   Dense layers: the largest singular value of the weight matrix. Convolutions (conv2d, conv3d,
   strided, dilated, grouped, periodic, spatially decomposed), average pooling and upsampling: a
   `MATSHELL` on ONE sample whose `MatMult()` is the layer's forward pass with the bias zeroed and whose
   `MatMultTranspose()` is its backward input gradient, distributed like the layer's activations;
   SLEPc `SVD` with tolerance 1e-12 unless -<layer>_svd_tol says otherwise. Closed forms: batch norm in
   eval mode max |gamma| / sqrt(var + eps), global average pooling 1/sqrt(pixels), reshapes 1, dropout 1
   (eval mode). Nonlinear layers give their Lipschitz constants: relu, tanh 1, sigmoid 1/4, leaky relu
   max(1, |slope|), gelu 1.1289 (the maximum of x Phi(x)'), max pooling sqrt(the most windows covering
   a pixel); a residual block 1 + its inner layers' product; an ODE block with shared parameters
   exp(T L_f) (the exact flow; Gronwall) or (1 + h L_f)^N for the discrete (forward Euler) scheme.

   Level: intermediate

.seealso: `NNComputeLipschitzBound()`, `NNOperatorNormView()`, `NNLayerComputeOperatorNormReference()`
@*/
PetscErrorCode NNLayerComputeOperatorNorm(NN net, NNLayer l, PetscReal *sigma)
{
  PetscFunctionBegin;
  PetscCall(NNLayerComputeNorm(net, l, PETSC_FALSE, sigma));
  PetscFunctionReturn(0);
}

/*@
   NNLayerComputeOperatorNormReference - `NNLayerComputeOperatorNorm()` with every SLEPc SVD replaced by
   a dense reference: the operator formed column by column (`MatComputeOperator()`), gathered on the
   first rank, all its singular values by LAPACK gesvd

   Collective on the layer

   Input Parameters:
+  net - the network, set up
-  l - the layer

   Output Parameter:
.  sigma - the reference value

   Notes:
   For tests and the -nn_spectral_view_check option: memory O(m n) on one rank.

   Level: developer

.seealso: `NNLayerComputeOperatorNorm()`, `NNOperatorNormView()`
@*/
PetscErrorCode NNLayerComputeOperatorNormReference(NN net, NNLayer l, PetscReal *sigma)
{
  PetscFunctionBegin;
  PetscCall(NNLayerComputeNorm(net, l, PETSC_TRUE, sigma));
  PetscFunctionReturn(0);
}
