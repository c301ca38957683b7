static char help[] = "The bad-input catalogue (tests/BADINPUT.md): each hostile input must be refused with a PETSc error\n"
                     "that names what is wrong (and what would be valid), never a crash, a hang or a wrong result.\n"
                     "  -h5 <dir>   also the HDF5 files of the wrong type and rank that tests/badinput_h5.py wrote in dir\n"
                     "  -shard      the zero-sample shard (run on more ranks than samples)\n\n";

#define _GNU_SOURCE /* setresuid */
#include <petnn.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* the objects a case makes, destroyed after it whether it failed or not */
typedef struct {
  NN     net, net2;
  NNData data;
  Vec    v;
} Objects;

static Objects obj;

static PetscErrorCode DestroyObjects(void)
{
  PetscFunctionBegin;
  PetscCall(NNDestroy(&obj.net));
  PetscCall(NNDestroy(&obj.net2));
  PetscCall(NNDataDestroy(&obj.data));
  PetscCall(VecDestroy(&obj.v));
  PetscFunctionReturn(0);
}

/* Runs the case, which must fail with a message containing expect; prints the kind and the message */
static PetscErrorCode Expect(const char kind[], PetscErrorCode (*run)(void), const char expect[])
{
  PetscErrorCode ierr;
  const char    *text;
  char          *msg = NULL, *found = NULL;

  PetscFunctionBegin;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = run();
  PetscCall(PetscPopErrorHandler());
  PetscCall(DestroyObjects());
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Case %s: expected an error, got none", kind);
  PetscCall(NNErrorMessage(ierr, &text, &msg));
  if (msg) PetscCall(PetscStrstr(msg, expect, &found));
  PetscCheck(found, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Case %s: the error message \"%s\" does not contain \"%s\"", kind, msg ? msg : "", expect);
  { /* the temporary file name holds the process id: print it as <pid> */
    char  line[1024], *tmp;
    PetscCall(PetscStrncpy(line, msg, sizeof(line)));
    PetscCall(PetscStrstr(line, ".tmp.", &tmp));
    if (tmp) {
      const char *end = msg + (tmp - line) + 5;
      while (*end >= '0' && *end <= '9') end++;
      PetscCall(PetscSNPrintf(tmp + 5, sizeof(line) - (size_t)(tmp + 5 - line), "<pid>%s", end));
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %s\n", kind, line));
  }
  PetscFunctionReturn(0);
}

/* a network from options with the given prefix (samples of shape (4) unless the options say otherwise) */
static PetscErrorCode MakeNet(const char prefix[], const char opts[], NN *net)
{
  PetscFunctionBegin;
  PetscCall(PetscOptionsInsertString(NULL, opts));
  PetscCall(NNCreate(PETSC_COMM_WORLD, net));
  PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetInputShape(*net, 1, (PetscInt[]){4}));
  PetscCall(NNSetFromOptions(*net));
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* trains one epoch of a dense 4 -> 3 classifier (or regressor with loss mse) on a data set of the given type and file */
static PetscErrorCode TrainOn(const char prefix[], const char type[], const char file[], const char loss[], const char extra[])
{
  char opts[1024], dprefix[64];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(opts, sizeof(opts), "-%snn_layers fc1 -%sfc1_type dense -%sfc1_units 3 -%snn_loss %s -%snn_batch_size 2 -%snn_epochs 1 -%snn_monitor 0 %s", prefix, prefix, prefix, prefix, loss, prefix, prefix, prefix, extra));
  PetscCall(MakeNet(prefix, opts, &obj.net));
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, &obj.data));
  PetscCall(PetscSNPrintf(dprefix, sizeof(dprefix), "%strain_", prefix));
  PetscCall(NNDataSetOptionsPrefix(obj.data, dprefix));
  PetscCall(NNDataSetType(obj.data, type));
  PetscCall(NNDataSetFileName(obj.data, file));
  PetscCall(NNDataSetFromOptions(obj.data));
  PetscCall(NNTrain(obj.net, obj.data, NULL));
  PetscFunctionReturn(0);
}

/* n samples of 4 features (0.1*i) and targets t[] (k per sample) as a PETSc binary dense Mat + Vec,
   or as HDF5 datasets x [n,4] and y [n] or [n,k] written by VecView() */
static PetscErrorCode WriteData(const char file[], PetscBool hdf5, PetscInt n, PetscInt k, const PetscScalar x[], const PetscScalar t[])
{
  PetscViewer v;
  Vec         X, T;

  PetscFunctionBegin;
  PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 4, 4 * n, x, &X));
  PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, k, k * n, t, &T));
  PetscCall(PetscObjectSetName((PetscObject)X, "x"));
  PetscCall(PetscObjectSetName((PetscObject)T, "y"));
  PetscCall(PetscViewerCreate(PETSC_COMM_SELF, &v));
  PetscCall(PetscViewerSetType(v, hdf5 ? PETSCVIEWERHDF5 : PETSCVIEWERBINARY));
  PetscCall(PetscViewerFileSetMode(v, FILE_MODE_WRITE));
  PetscCall(PetscViewerFileSetName(v, file));
  if (hdf5) PetscCall(VecView(X, v));
  else {
    Mat M;
    PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, n, 4, NULL, &M));
    for (PetscInt i = 0; i < n; i++)
      for (PetscInt j = 0; j < 4; j++) PetscCall(MatSetValue(M, i, j, x[4 * i + j], INSERT_VALUES));
    PetscCall(MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY));
    PetscCall(MatView(M, v));
    PetscCall(MatDestroy(&M));
  }
  PetscCall(VecView(T, v));
  PetscCall(PetscViewerDestroy(&v));
  PetscCall(VecDestroy(&X));
  PetscCall(VecDestroy(&T));
  PetscFunctionReturn(0);
}

/* writes bytes to a file (rank 0) */
static PetscErrorCode WriteBytes(const char file[], const unsigned char *b, size_t n)
{
  FILE *f;

  PetscFunctionBegin;
  PetscCall(PetscFOpen(PETSC_COMM_WORLD, file, "wb", &f));
  if (f) PetscCheck(fwrite(b, 1, n, f) == n, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "Cannot write %s", file);
  PetscCall(PetscFClose(PETSC_COMM_WORLD, f));
  PetscFunctionReturn(0);
}

/* v[0..n) as big-endian PetscInts (the integers of PETSc's binary format); returns the bytes written */
static size_t PutInts(unsigned char *b, const PetscInt64 v[], int n)
{
  const size_t isz = sizeof(PetscInt);
  for (int i = 0; i < n; i++)
    for (size_t j = 0; j < isz; j++) b[isz * i + j] = (unsigned char)(((unsigned long long)v[i]) >> (8 * (isz - 1 - j)));
  return isz * (size_t)n;
}

static PetscScalar X8[32], Y8[8];

static PetscErrorCode DataSets(void)
{
  PetscScalar x[32], y[8];

  PetscFunctionBegin;
  for (PetscInt i = 0; i < 32; i++) X8[i] = 0.1 * i;
  for (PetscInt i = 0; i < 8; i++) Y8[i] = i % 3;
  PetscCall(PetscArraycpy(x, X8, 32));
  x[4 * 5 + 2] = NAN; /* sample 5 */
  PetscCall(WriteData("bi_nan.h5", PETSC_TRUE, 8, 1, x, Y8));
  PetscCall(PetscArraycpy(y, Y8, 8));
  y[6] = INFINITY;
  PetscCall(WriteData("bi_inf.dat", PETSC_FALSE, 8, 1, X8, y));
  y[6] = -1;
  PetscCall(WriteData("bi_negative.dat", PETSC_FALSE, 8, 1, X8, y));
  y[6] = 1.5;
  PetscCall(WriteData("bi_fraction.dat", PETSC_FALSE, 8, 1, X8, y));
  PetscCall(WriteData("bi_one.dat", PETSC_FALSE, 1, 1, X8, Y8));
  PetscCall(WriteData("bi_empty.dat", PETSC_FALSE, 0, 1, X8, Y8));
  { /* IDX: a dimension of 2^32-1; a header promising 60000 images of 28x28 in a file of 116 bytes */
    unsigned char big[16] = {0, 0, 8, 3, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 28, 0, 0, 0, 28}, lab[12] = {0, 0, 8, 1, 0, 0, 0xea, 0x60, 0, 0, 0, 0};
    unsigned char lie[116] = {0, 0, 8, 3, 0, 0, 0xea, 0x60, 0, 0, 0, 28, 0, 0, 0, 28};
    PetscCall(WriteBytes("bi_big-images-idx3-ubyte", big, sizeof(big)));
    PetscCall(WriteBytes("bi-labels-idx1-ubyte", lab, sizeof(lab)));
    PetscCall(WriteBytes("bi_lie-images-idx3-ubyte", lie, sizeof(lie)));
  }
  { /* PETSc binary: an AIJ Mat with a negative row length; a dense Mat whose size overflows 64 bits. The integers in
       these files are PetscInts, big-endian: 4 or 8 bytes (--with-64-bit-indices) */
    const PetscInt64 big = sizeof(PetscInt) == 8 ? INT64_MAX : 0x7fffffff;
    const PetscInt64 aij[8] = {1211216, 2, 4, 2, -1, 3, 0, 1}, vec[2] = {1211214, 2}, dense[4] = {1211216, big, big, -1}; /* AIJ: header, row lengths, columns */
    unsigned char    b[160] = {0};
    size_t           n;

    n = PutInts(b, aij, 8);
    n += 2 * sizeof(double); /* two zero values */
    n += PutInts(b + n, vec, 2); /* the targets: a Vec of 2 zeros */
    n += 2 * sizeof(double);
    PetscCall(WriteBytes("bi_aij.dat", b, n));
    PetscCall(PetscArrayzero(b, sizeof(b)));
    n = PutInts(b, dense, 4) + 6 * sizeof(double);
    PetscCall(WriteBytes("bi_dense.dat", b, n));
  }
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- the cases */

/* cases that train on a data file: kind, options prefix, data-set type, file, loss, more options, expected text */
typedef struct {
  const char *kind, *prefix, *type, *file, *loss, *extra, *expect;
} TrainCase;

static const TrainCase train_cases[] = {
  {"NaN in an HDF5 data file", "a_", NNDATAHDF5, "bi_nan.h5", "cross_entropy", "", "has a NaN or infinite feature or target"},
  {"Inf in the targets of a binary file", "b_", NNDATABINARY, "bi_inf.dat", "mse", "-b_fc1_units 1", "has a NaN or infinite feature or target"},
  {"negative class label", "c_", NNDATABINARY, "bi_negative.dat", "cross_entropy", "", "is not a class index in [0,3)"},
  {"fractional class label", "d_", NNDATABINARY, "bi_fraction.dat", "cross_entropy", "", "is not a class index in [0,3)"},
#if defined(PETSC_USE_64BIT_INDICES) /* 2 x 3037000500^2 > 2^63 - 1; an IDX dimension (32 bits) always fits: the header's count is checked against the labels */
  {"sample shape beyond PetscInt", "n_", NNDATABINARY, "bi_inf.dat", "mse", "-n_train_data_shape 3037000500,3037000500,2", "the most a PetscInt counts"},
  {"IDX dimension beyond 32-bit PetscInt", "o_", NNDATAIDX, "", "cross_entropy", "-o_train_data_images bi_big-images-idx3-ubyte -o_train_data_labels bi-labels-idx1-ubyte", "has 4294967295 images but"},
#else
  {"sample shape beyond PetscInt", "n_", NNDATABINARY, "bi_inf.dat", "mse", "-n_train_data_shape 65536,65536,2", "the most a PetscInt counts"},
  {"IDX dimension beyond PetscInt", "o_", NNDATAIDX, "", "cross_entropy", "-o_train_data_images bi_big-images-idx3-ubyte -o_train_data_labels bi-labels-idx1-ubyte", "more than this PETSc's PetscInt holds"},
#endif
  {"IDX header promising more than the file holds", "p_", NNDATAIDX, "", "cross_entropy", "-p_train_data_images bi_lie-images-idx3-ubyte -p_train_data_labels bi-labels-idx1-ubyte", "is truncated"},
  {"data file without samples", "t_", NNDATABINARY, "bi_empty.dat", "cross_entropy", "", "are empty"},
  {"AIJ Mat with a negative row length", "q_", NNDATABINARY, "bi_aij.dat", "mse", "-q_fc1_units 1", "AIJ Mat: row"},
  {"dense Mat whose size overflows 64 bits", "r_", NNDATABINARY, "bi_dense.dat", "mse", "", "needs more bytes than the file has"},
};
static const TrainCase *train_case;

static PetscErrorCode RunTrainCase(void)
{
  return TrainOn(train_case->prefix, train_case->type, train_case->file, train_case->loss, train_case->extra);
}


/* saves a checkpoint of network a and loads it into network b */
static PetscErrorCode SaveLoad(const char pa[], const char a[], const char pb[], const char b[], const char file[])
{
  PetscFunctionBegin;
  PetscCall(MakeNet(pa, a, &obj.net));
  PetscCall(NNCheckpointSave(obj.net, file));
  PetscCall(MakeNet(pb, b, &obj.net2));
  PetscCall(NNCheckpointLoad(obj.net2, file));
  PetscFunctionReturn(0);
}

static PetscErrorCode OtherArchitecture(void)
{
  return SaveLoad("e_", "-e_nn_layers fc1 -e_fc1_type dense -e_fc1_units 3", "f_", "-f_nn_layers fc1 -f_fc1_type dense -f_fc1_units 5", "bi_arch.h5");
}
static PetscErrorCode ExtraLayer(void)
{
  return SaveLoad("g_", "-g_nn_layers fc1,fc2 -g_fc1_type dense -g_fc1_units 3 -g_fc2_type dense -g_fc2_units 2", "h_", "-h_nn_layers fc1 -h_fc1_type dense -h_fc1_units 3", "bi_extra.h5");
}
static PetscErrorCode ResidualCycle(void)
{
  return MakeNet("j_", "-j_nn_layers res1 -j_res1_type residual -j_res1_layers a,res2 -j_a_type dense -j_a_units 4 -j_res2_type residual -j_res2_layers b,res1 -j_b_type tanh", &obj.net);
}
static PetscErrorCode ODECycle(void)
{
  return MakeNet("k_", "-k_nn_layers ode1 -k_ode1_type ode -k_ode1_layers f,res1 -k_f_type dense -k_f_units 4 -k_res1_type residual -k_res1_layers ode1", &obj.net);
}

static PetscErrorCode ReadOnlyDirectory(void)
{
  PetscFunctionBegin;
  PetscCall(MakeNet("l_", "-l_nn_layers fc1 -l_fc1_type dense -l_fc1_units 3", &obj.net));
  (void)mkdir("bi_readonly", 0755);
  PetscCheck(chmod("bi_readonly", 0555) == 0, PETSC_COMM_SELF, PETSC_ERR_SYS, "chmod failed");
  if (getuid() == 0) { /* root writes anywhere: save as nobody (the saved user id restores root) */
    PetscErrorCode ierr;
    PetscCheck(setresuid(65534, 65534, 0) == 0, PETSC_COMM_SELF, PETSC_ERR_SYS, "setresuid failed");
    ierr = NNCheckpointSave(obj.net, "bi_readonly/ckpt.h5");
    PetscCheck(setresuid(0, 0, 0) == 0, PETSC_COMM_SELF, PETSC_ERR_SYS, "setresuid back to root failed");
    PetscCall(ierr);
  } else PetscCall(NNCheckpointSave(obj.net, "bi_readonly/ckpt.h5"));
  PetscFunctionReturn(0);
}

static PetscErrorCode HugeDense(void)
{
#if defined(PETSC_USE_64BIT_INDICES) /* 1000 x 1e17 weights > 2^63 - 1 */
  return MakeNet("m_", "-m_nn_input_shape 1000 -m_nn_layers fc1 -m_fc1_type dense -m_fc1_units 100000000000000000", &obj.net);
#else
  return MakeNet("m_", "-m_nn_input_shape 1000 -m_nn_layers fc1 -m_fc1_type dense -m_fc1_units 2147483647", &obj.net);
#endif
}

/* the parameters after a failed save are those of the checkpoint that was there before */
static PetscErrorCode DiskFull(void)
{
  struct rlimit old, lim;
  Vec           theta;
  PetscBool     same;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(MakeNet("s_", "-s_nn_layers fc1 -s_fc1_type dense -s_fc1_units 3", &obj.net));
  PetscCall(NNCheckpointSave(obj.net, "bi_full.h5"));
  PetscCall(NNGetParameters(obj.net, &theta));
  PetscCall(VecDuplicate(theta, &obj.v));
  PetscCall(VecCopy(theta, obj.v));
  PetscCall(VecShift(theta, 1.0)); /* a newer state, which does not fit on the disk */
  /* a full disk: writes past 1 KiB fail with EFBIG (SIGXFSZ ignored) */
  PetscCheck(getrlimit(RLIMIT_FSIZE, &old) == 0, PETSC_COMM_SELF, PETSC_ERR_SYS, "getrlimit failed");
  lim          = old;
  lim.rlim_cur = 1024;
  signal(SIGXFSZ, SIG_IGN);
  PetscCheck(setrlimit(RLIMIT_FSIZE, &lim) == 0, PETSC_COMM_SELF, PETSC_ERR_SYS, "setrlimit failed");
  ierr = NNCheckpointSave(obj.net, "bi_full.h5");
  PetscCheck(setrlimit(RLIMIT_FSIZE, &old) == 0, PETSC_COMM_SELF, PETSC_ERR_SYS, "setrlimit failed");
  signal(SIGXFSZ, SIG_DFL);
  if (!ierr) PetscFunctionReturn(0); /* Expect() reports the missing error */
  /* the previous checkpoint survived: it loads and holds the parameters saved first */
  PetscCall(PetscPopErrorHandler()); /* the checks below must not fail */
  PetscCall(NNCheckpointLoad(obj.net, "bi_full.h5"));
  PetscCall(NNGetParameters(obj.net, &theta));
  PetscCall(VecEqual(theta, obj.v, &same));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "disk full while checkpointing: the previous checkpoint loads and holds the parameters saved before: %s\n", same ? "yes" : "NO"));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  return ierr;
}

/* a data file without samples */

/* more ranks than samples: a rank whose shard is empty trains on samples fetched from the others */
static PetscErrorCode ZeroSampleShard(void)
{
  PetscReal   loss;
  PetscInt    lo, hi, n = 0;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCall(TrainOn("y_", NNDATABINARY, "bi_one.dat", "cross_entropy", ""));
  PetscCall(NNEvaluate(obj.net, obj.data, &loss, NULL));
  PetscCall(NNDataGetOwnershipRange(obj.data, &lo, &hi));
  if (hi == lo) n = 1;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "zero-sample shard: 1 sample on %d ranks, %" PetscInt_FMT " of them hold none: training and evaluation run (loss finite: %s)\n", size, n, PetscIsInfOrNanReal(loss) ? "NO" : "yes"));
  PetscCall(DestroyObjects());
  PetscFunctionReturn(0);
}

static char h5dir[PETSC_MAX_PATH_LEN] = "";

/* cases on the files tests/badinput_h5.py wrote in h5dir */
static const TrainCase h5_cases[] = {
  {"HDF5 features of strings", "u_", NNDATAHDF5, "bi_string.h5", "cross_entropy", "", "does not convert to a number"},
  {"HDF5 features of rank 6", "v_", NNDATAHDF5, "bi_rank6.h5", "cross_entropy", "", "has 6 dimensions"},
  {"HDF5 scalar targets", "w_", NNDATAHDF5, "bi_scalar.h5", "cross_entropy", "", "is a scalar"},
  {"HDF5 group where the features should be", "x_", NNDATAHDF5, "bi_group.h5", "cross_entropy", "", "has no features dataset"},
};

static PetscErrorCode RunH5Case(void)
{
  char file[2 * PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(file, sizeof(file), "%s/%s", h5dir, train_case->file));
  PetscCall(TrainOn(train_case->prefix, train_case->type, file, train_case->loss, train_case->extra));
  PetscFunctionReturn(0);
}
static PetscErrorCode OtherFormat(void)
{
  char file[2 * PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(file, sizeof(file), "%s/bi_format.h5", h5dir));
  PetscCall(MakeNet("i_", "-i_nn_layers fc1 -i_fc1_type dense -i_fc1_units 3", &obj.net));
  PetscCall(NNCheckpointLoad(obj.net, file));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscBool shard = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-h5", h5dir, sizeof(h5dir), NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-shard", &shard, NULL));
  PetscCall(DataSets());
  if (shard) {
    PetscCall(ZeroSampleShard());
  } else if (h5dir[0]) {
    for (size_t i = 0; i < sizeof(h5_cases) / sizeof(h5_cases[0]); i++) {
      train_case = &h5_cases[i];
      PetscCall(Expect(train_case->kind, RunH5Case, train_case->expect));
    }
    PetscCall(Expect("checkpoint of another format version", OtherFormat, "this PetNN reads"));
  } else {
    for (size_t i = 0; i < sizeof(train_cases) / sizeof(train_cases[0]); i++) {
      train_case = &train_cases[i];
      PetscCall(Expect(train_case->kind, RunTrainCase, train_case->expect));
    }
    PetscCall(Expect("checkpoint of another architecture", OtherArchitecture, "does not match the network"));
    PetscCall(Expect("checkpoint with a layer the network lacks", ExtraLayer, "which the network does not have"));
    PetscCall(Expect("residual block listing a block around it", ResidualCycle, "contains itself"));
    PetscCall(Expect("ODE block listing a block around it", ODECycle, "contains itself"));
    PetscCall(Expect("disk full while checkpointing", DiskFull, "(disk full?)"));
    PetscCall(Expect("read-only checkpoint directory", ReadOnlyDirectory, "is not writable"));
    PetscCall(Expect("dense layer beyond PetscInt", HugeDense, "is too large"));
  }
  /* objects abandoned inside PETSc by an error (options blocks) are not freed: skip the leak report */
  PetscCall(PetscOptionsSetValue(NULL, "-malloc_dump", "0"));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
     suffix: 1
     requires: !int64

   # the messages of the cases beyond PetscInt name other limits with 64-bit indices
   test:
     suffix: 1_int64
     requires: int64

   test:
     suffix: shard
     nsize: 2
     args: -shard

   test:
     suffix: h5
     requires: torch
     command: /usr/bin/python3 ${PETNN_SOURCE_DIR}/tests/badinput_h5.py . && ${exe} -petsc_ci -h5 .

TEST*/
