static char help[] = "Dense layers on the CUDA device against cuBLAS alone, shape by shape.\n\n"
                     "For each shape in:out:n it times a dense layer's device passes (forward: the bias and W x; backward:\n"
                     "dx, dW and db) and the same three GEMMs of the weights through cublasGemmEx() alone (Y = W X,\n"
                     "dX = W^T dY, dW = dY X^T), on the same device, in the same precision and math mode, and prints both\n"
                     "times, their rates and the fraction of cuBLAS's rate the layer reaches (cuBLAS time / layer time).\n"
                     "Each time is the best of -rounds rounds, layer and cuBLAS alternating; a round repeats its passes\n"
                     "until they took -min_time seconds (wall clock from a synchronized device to a synchronized device,\n"
                     "launches included, as a training step sees them).\n"
                     "Before timing, the layer's results are checked against the GEMMs' (plus the bias and its\n"
                     "gradient computed on the host): relative 2-norm differences <= 1e-12 in double, 1e-5 in single.\n"
                     "Without a GPU (or in a PetNN built without CUDA) the program says why and exits with code 77.\n\n"
                     "  -shapes in:out:n,...  the layers (default: the MLP's, the CNN's and the ODE-Net's dense layers at\n"
                     "                        batch 128, and 4096:4096:4096)\n"
                     "  -nn_precision <double|single>, -nn_cuda_tf32: as for a network\n"
                     "  -rounds <3>           timed rounds per shape\n"
                     "  -min_time <0.05>      seconds a round lasts at least\n"
                     "  -times <true>         print the times (false: only the checks, stable output for the test harness)\n\n";

#include <petnn/private/layerimpl.h>
#if defined(PETNN_HAVE_CUDA)
  #include <petnn/private/cudaimpl.h> /* NNCallCUDA(), NNCallCUBLAS(); this program calls none of its PETSC_INTERN functions */
#endif

#define MAX_SHAPES 32

#if defined(PETNN_HAVE_CUDA)
typedef struct {
  NNPrecision    prec;
  PetscBool      tf32;
  cublasHandle_t blas;
  size_t         es;
  PetscInt       in, out, n;
  NNLayer        l;
  void          *W, *dW, *X, *Y, *dY, *dX, *Yr, *dXr, *dWr; /* device; W and dW hold the bias after the weights */
} Bench;

/* a device array of len random numbers in [-1, 1) of the precision; the host copy in double when h is not NULL */
static PetscErrorCode DeviceRandom(Bench *b, PetscRandom r, PetscInt len, void **d, PetscReal **h)
{
  PetscReal *v;
  float     *f;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(len, &v));
  PetscCall(PetscMalloc1(len, &f));
  for (PetscInt i = 0; i < len; i++) {
    PetscCall(PetscRandomGetValueReal(r, &v[i]));
    f[i] = (float)v[i];
    if (b->prec == NN_PRECISION_SINGLE) v[i] = f[i];
  }
  NNCallCUDA(cudaMalloc(d, len * b->es));
  NNCallCUDA(cudaMemcpy(*d, b->prec == NN_PRECISION_SINGLE ? (void *)f : (void *)v, len * b->es, cudaMemcpyHostToDevice));
  if (h) *h = v;
  else PetscCall(PetscFree(v));
  PetscCall(PetscFree(f));
  PetscFunctionReturn(0);
}

/* a device array of the precision into doubles */
static PetscErrorCode Download(Bench *b, const void *d, PetscInt len, PetscReal *h)
{
  float *f;

  PetscFunctionBegin;
  if (b->prec == NN_PRECISION_DOUBLE) {
    NNCallCUDA(cudaMemcpy(h, d, len * sizeof(double), cudaMemcpyDeviceToHost));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscMalloc1(len, &f));
  NNCallCUDA(cudaMemcpy(f, d, len * sizeof(float), cudaMemcpyDeviceToHost));
  for (PetscInt i = 0; i < len; i++) h[i] = f[i];
  PetscCall(PetscFree(f));
  PetscFunctionReturn(0);
}

static PetscErrorCode Zero(Bench *b, void *d, PetscInt len)
{
  char *z;

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(len * b->es, &z));
  NNCallCUDA(cudaMemcpy(d, z, len * b->es, cudaMemcpyHostToDevice));
  PetscCall(PetscFree(z));
  PetscFunctionReturn(0);
}

/* C = op(A) op(B) (column-major m x n, inner k) with the layer's compute type */
static PetscErrorCode Gemm(Bench *b, cublasOperation_t ta, cublasOperation_t tb, PetscInt m, PetscInt n, PetscInt k, const void *A, PetscInt lda, const void *B, PetscInt ldb, void *C, PetscInt ldc)
{
  const float           f1 = 1, f0 = 0;
  const double          d1 = 1, d0 = 0;
  const int             s  = b->prec == NN_PRECISION_SINGLE;
  const cudaDataType    t  = s ? CUDA_R_32F : CUDA_R_64F;
  const cublasComputeType_t c = s ? (b->tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F) : CUBLAS_COMPUTE_64F;

  PetscFunctionBegin;
  NNCallCUBLAS(cublasGemmEx(b->blas, ta, tb, (int)m, (int)n, (int)k, s ? (const void *)&f1 : (const void *)&d1, A, t, (int)lda, B, t, (int)ldb, s ? (const void *)&f0 : (const void *)&d0, C, t, (int)ldc, c, CUBLAS_GEMM_DEFAULT));
  PetscFunctionReturn(0);
}

/* the three GEMMs of a dense layer's weights, without its bias (column-major as in layers/core/dense_cuda.c: X in x n,
   W in x out, Y out x n) */
static PetscErrorCode CublasForward(Bench *b)
{
  PetscFunctionBegin;
  PetscCall(Gemm(b, CUBLAS_OP_T, CUBLAS_OP_N, b->out, b->n, b->in, b->W, b->in, b->X, b->in, b->Yr, b->out));
  PetscFunctionReturn(0);
}

static PetscErrorCode CublasBackward(Bench *b)
{
  PetscFunctionBegin;
  PetscCall(Gemm(b, CUBLAS_OP_N, CUBLAS_OP_N, b->in, b->n, b->out, b->W, b->in, b->dY, b->out, b->dXr, b->in));
  PetscCall(Gemm(b, CUBLAS_OP_N, CUBLAS_OP_T, b->in, b->out, b->n, b->X, b->in, b->dY, b->out, b->dWr, b->in));
  PetscFunctionReturn(0);
}

static PetscErrorCode LayerForward(Bench *b)
{
  PetscFunctionBegin;
  PetscCall(b->l->ops->forwarddevice(b->l, b->n, b->X, b->Y));
  PetscFunctionReturn(0);
}

static PetscErrorCode LayerBackward(Bench *b)
{
  PetscFunctionBegin;
  PetscCall(b->l->ops->backwarddevice(b->l, b->n, b->X, b->Y, b->dY, b->dX));
  PetscFunctionReturn(0);
}

/* seconds per call of pass: repeated, doubling, until a round lasts min_time */
static PetscErrorCode TimeRound(Bench *b, PetscErrorCode (*pass)(Bench *), PetscReal min_time, PetscReal *t)
{
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  for (PetscInt reps = 1;; reps *= 2) {
    NNCallCUDA(cudaDeviceSynchronize());
    PetscCall(PetscTime(&t0));
    for (PetscInt r = 0; r < reps; r++) PetscCall(pass(b));
    NNCallCUDA(cudaDeviceSynchronize());
    PetscCall(PetscTime(&t1));
    if (t1 - t0 >= min_time || reps >= (1 << 20)) {
      *t = (t1 - t0) / reps;
      break;
    }
  }
  PetscFunctionReturn(0);
}

static PetscReal RelDiff(PetscInt len, const PetscReal a[], const PetscReal r[])
{
  PetscReal d = 0, s = 0;
  for (PetscInt i = 0; i < len; i++) {
    d += (a[i] - r[i]) * (a[i] - r[i]);
    s += r[i] * r[i];
  }
  return PetscSqrtReal(d) / PetscMax(PetscSqrtReal(s), PETSC_SMALL);
}

/* the layer's passes against the GEMMs: y = W x + b, dx, dW and db = the sum of dy over the samples */
static PetscErrorCode Check(Bench *b, const PetscReal hW[], const PetscReal hdY[], PetscReal *err)
{
  const PetscInt in = b->in, out = b->out, n = b->n;
  PetscReal     *y, *yr, *dx, *dxr, *dw, *dwr, *db, e[4];

  PetscFunctionBegin;
  PetscCall(PetscMalloc6(out * n, &y, out * n, &yr, in * n, &dx, in * n, &dxr, (in + 1) * out, &dw, in * out, &dwr));
  PetscCall(PetscCalloc1(out, &db));
  PetscCall(Zero(b, b->dW, (in + 1) * out));
  PetscCall(LayerForward(b));
  PetscCall(LayerBackward(b));
  PetscCall(CublasForward(b));
  PetscCall(CublasBackward(b));
  PetscCall(Download(b, b->Y, out * n, y));
  PetscCall(Download(b, b->Yr, out * n, yr));
  PetscCall(Download(b, b->dX, in * n, dx));
  PetscCall(Download(b, b->dXr, in * n, dxr));
  PetscCall(Download(b, b->dW, (in + 1) * out, dw));
  PetscCall(Download(b, b->dWr, in * out, dwr));
  for (PetscInt j = 0; j < n; j++)
    for (PetscInt o = 0; o < out; o++) {
      yr[j * out + o] += hW[in * out + o];
      db[o] += hdY[j * out + o];
    }
  e[0] = RelDiff(out * n, y, yr);
  e[1] = RelDiff(in * n, dx, dxr);
  e[2] = RelDiff(in * out, dw, dwr);
  e[3] = RelDiff(out, dw + in * out, db);
  *err = PetscMax(PetscMax(e[0], e[1]), PetscMax(e[2], e[3]));
  PetscCall(PetscFree6(y, yr, dx, dxr, dw, dwr));
  PetscCall(PetscFree(db));
  PetscFunctionReturn(0);
}

static PetscErrorCode RunShape(NNPrecision prec, PetscBool tf32, cublasHandle_t blas, PetscRandom r, const PetscInt shape[3], PetscInt rounds, PetscReal min_time, PetscBool times)
{
  NN         net;
  Bench      b;
  PetscReal *hW, *hdY, err, tol, best[4] = {PETSC_MAX_REAL, PETSC_MAX_REAL, PETSC_MAX_REAL, PETSC_MAX_REAL};
  PetscReal  flops, tl, tc;
  const char *pname = NNPrecisions[prec];

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&b, sizeof(b)));
  b.prec = prec;
  b.tf32 = tf32;
  b.blas = blas;
  b.es   = prec == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  b.in   = shape[0];
  b.out  = shape[1];
  b.n    = shape[2];
  /* a network of this one layer on the device: it initializes the device, and the layer is what a network runs */
  PetscCall(NNCreate(PETSC_COMM_SELF, &net));
  PetscCall(NNSetInputShape(net, 1, &b.in));
  PetscCall(NNAddLayer(net, NNLAYERDENSE, "fc", &b.l));
  PetscCall(NNLayerDenseSetUnits(b.l, b.out));
  PetscCall(NNSetBatchSize(net, b.n));
  PetscCall(NNSetDevice(net, NN_DEVICE_CUDA));
  PetscCall(NNSetPrecision(net, prec));
  PetscCall(NNSetCUDATF32(net, tf32));
  PetscCall(NNSetUp(net));
  PetscCheck(b.l->ops->forwarddevice && b.l->ops->backwarddevice, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the dense layer has no device passes");
  /* the layer's device state as a network's pass sets it (src/nn/interface/nndevice_cuda.c), on this program's arrays */
  PetscCall(DeviceRandom(&b, r, (b.in + 1) * b.out, &b.W, &hW));
  PetscCall(DeviceRandom(&b, r, b.in * b.n, &b.X, NULL));
  PetscCall(DeviceRandom(&b, r, b.out * b.n, &b.dY, &hdY));
  NNCallCUDA(cudaMalloc(&b.dW, (b.in + 1) * b.out * b.es)); /* zeroed by Check(); the timed backward passes add into it */
  NNCallCUDA(cudaMalloc(&b.Y, b.out * b.n * b.es));
  NNCallCUDA(cudaMalloc(&b.Yr, b.out * b.n * b.es));
  NNCallCUDA(cudaMalloc(&b.dX, b.in * b.n * b.es));
  NNCallCUDA(cudaMalloc(&b.dXr, b.in * b.n * b.es));
  NNCallCUDA(cudaMalloc(&b.dWr, b.in * b.out * b.es));
  b.l->dev.prec   = prec;
  b.l->dev.tf32   = tf32;
  b.l->dev.theta  = b.W;
  b.l->dev.dtheta = b.dW;

  PetscCall(Check(&b, hW, hdY, &err));
  tol = prec == NN_PRECISION_SINGLE ? (tf32 ? 1e-2 : 1e-5) : 1e-12;
  PetscCheck(err <= tol, PETSC_COMM_SELF, PETSC_ERR_PLIB, "dense %" PetscInt_FMT " -> %" PetscInt_FMT ", batch %" PetscInt_FMT ", %s: the layer differs from cuBLAS's GEMMs by %g > %g", b.in, b.out, b.n, pname, (double)err, (double)tol);
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "dense %" PetscInt_FMT " -> %" PetscInt_FMT ", batch %" PetscInt_FMT ", %s%s: the layer equals cuBLAS's GEMMs with the bias\n", b.in, b.out, b.n, pname, tf32 ? " (TF32)" : ""));
  if (times) {
    for (PetscInt k = 0; k < rounds; k++) { /* layer and cuBLAS alternate, so that a change of clocks touches both */
      PetscReal t[4];
      PetscCall(TimeRound(&b, LayerForward, min_time, &t[0]));
      PetscCall(TimeRound(&b, CublasForward, min_time, &t[1]));
      PetscCall(TimeRound(&b, LayerBackward, min_time, &t[2]));
      PetscCall(TimeRound(&b, CublasBackward, min_time, &t[3]));
      for (PetscInt i = 0; i < 4; i++) best[i] = PetscMin(best[i], t[i]);
    }
    flops = 2.0 * b.in * b.out * b.n;
    tl    = best[0] + best[2];
    tc    = best[1] + best[3];
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "  forward  layer %10.3f us %9.1f GFLOP/s   cuBLAS %10.3f us %9.1f GFLOP/s   %5.1f%%\n", best[0] * 1e6, flops / best[0] * 1e-9, best[1] * 1e6, flops / best[1] * 1e-9, 100 * best[1] / best[0]));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "  backward layer %10.3f us %9.1f GFLOP/s   cuBLAS %10.3f us %9.1f GFLOP/s   %5.1f%%\n", best[2] * 1e6, 2 * flops / best[2] * 1e-9, best[3] * 1e6, 2 * flops / best[3] * 1e-9, 100 * best[3] / best[2]));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "  step     layer %10.3f us %9.1f GFLOP/s   cuBLAS %10.3f us %9.1f GFLOP/s   %5.1f%% of cuBLAS\n", tl * 1e6, 3 * flops / tl * 1e-9, tc * 1e6, 3 * flops / tc * 1e-9, 100 * tc / tl));
  }
  PetscCall(PetscFree(hW));
  PetscCall(PetscFree(hdY));
  NNCallCUDA(cudaFree(b.W));
  NNCallCUDA(cudaFree(b.dW));
  NNCallCUDA(cudaFree(b.X));
  NNCallCUDA(cudaFree(b.dY));
  NNCallCUDA(cudaFree(b.Y));
  NNCallCUDA(cudaFree(b.Yr));
  NNCallCUDA(cudaFree(b.dX));
  NNCallCUDA(cudaFree(b.dXr));
  NNCallCUDA(cudaFree(b.dWr));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}
#endif

/* "in:out:n,in:out:n,..." into list[] (3 entries a shape) */
static PetscErrorCode ParseShapes(const char spec[], PetscInt list[], PetscInt *nlist)
{
  const char *p = spec;

  PetscFunctionBegin;
  *nlist = 0;
  while (*p) {
    long a, b, c;
    int  used = 0;
    PetscCheck(sscanf(p, "%ld:%ld:%ld%n", &a, &b, &c, &used) == 3 && a > 0 && b > 0 && c > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-shapes %s: expected in:out:n triples of positive sizes, comma-separated, at \"%s\"", spec, p);
    PetscCheck(*nlist < 3 * MAX_SHAPES, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-shapes %s: at most %d shapes", spec, MAX_SHAPES);
    list[(*nlist)++] = a;
    list[(*nlist)++] = b;
    list[(*nlist)++] = c;
    p += used;
    PetscCheck(*p == ',' || !*p, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-shapes %s: expected a comma or the end after a triple, at \"%s\"", spec, p);
    if (*p) p++;
  }
  PetscCheck(*nlist, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-shapes: no shape given; expected in:out:n triples, comma-separated");
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscInt    list[3 * MAX_SHAPES] = {784, 256, 128, 256, 128, 128, 128, 10, 128, 3136, 1024, 128, 1024, 10, 128, 3136, 256, 128, 256, 10, 128, 4096, 4096, 4096};
  PetscInt    nlist = 24, rounds = 3, prec = NN_PRECISION_DOUBLE;
  PetscReal   min_time = 0.05;
  PetscBool   avail, tf32 = PETSC_FALSE, times = PETSC_TRUE, set;
  char        why[512], spec[1024];

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(NNDeviceIsAvailable(NN_DEVICE_CUDA, &avail, sizeof(why), why));
  if (!avail) { /* exit code 77: the harness (config/petnn_runtest.sh) reports the test as skipped */
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "dense_cublas: SKIPPED: %s\n", why));
    PetscCall(PetscFinalize());
    return 77;
  }
  PetscCall(PetscOptionsGetString(NULL, NULL, "-shapes", spec, sizeof(spec), &set));
  if (set) PetscCall(ParseShapes(spec, list, &nlist));
  PetscCall(PetscOptionsGetEList(NULL, NULL, "-nn_precision", NNPrecisions, 2, &prec, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-nn_cuda_tf32", &tf32, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-rounds", &rounds, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-min_time", &min_time, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-times", &times, NULL));
  PetscCheck(rounds > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-rounds must be > 0; got %" PetscInt_FMT, rounds);
#if defined(PETNN_HAVE_CUDA)
  {
    cublasHandle_t blas;
    PetscRandom    r;
    char           name[256];

    PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
    PetscCall(PetscRandomSetInterval(r, -1, 1));
    PetscCall(PetscRandomSetSeed(r, 5));
    PetscCall(PetscRandomSeed(r));
    NNCallCUBLAS(cublasCreate(&blas));
    NNCallCUBLAS(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH));
    if (times) {
      struct cudaDeviceProp p;
      int                   d;
      NNCallCUDA(cudaGetDevice(&d));
      NNCallCUDA(cudaGetDeviceProperties(&p, d));
      PetscCall(PetscSNPrintf(name, sizeof(name), "%s (sm_%d%d)", p.name, p.major, p.minor));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "dense layers against cuBLAS on %s, %s%s, best of %" PetscInt_FMT " rounds of >= %g s\n", name, NNPrecisions[prec], tf32 ? " with TF32" : "", rounds, (double)min_time));
    }
    for (PetscInt s = 0; s < nlist / 3; s++) PetscCall(RunShape((NNPrecision)prec, tf32, blas, r, &list[3 * s], rounds, min_time, times));
    NNCallCUBLAS(cublasDestroy(blas));
    PetscCall(PetscRandomDestroy(&r));
  }
#endif
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   # the device code on the host (CMake's PETNN_CUDA_EMULATION, make sanitize): the check only, small shapes
   testset:
      requires: cuda_emulation
      args: -shapes 7:5:6,33:17:9,1:3:2 -times 0
      test:
         suffix: emulation_double
         args: -nn_precision double
         output_file: output/dense_cublas_double.out
      test:
         suffix: emulation_single
         args: -nn_precision single
         output_file: output/dense_cublas_single.out

   testset:
      requires: cuda
      args: -shapes 7:5:6,33:17:9,1:3:2 -times 0
      test:
         suffix: check_double
         args: -nn_precision double
         output_file: output/dense_cublas_double.out
      test:
         suffix: check_single
         args: -nn_precision single
         output_file: output/dense_cublas_single.out

TEST*/
