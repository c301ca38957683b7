/* The float instance of a precision template (see nnrealdouble.h) */
#include <petnn/private/nnrealundef.h>
#define NN_REAL   float
#define NN_SUFFIX Single
#define NN_GEMM   cblas_sgemm
#define NN_VLEN   16
#define NN_GEMM_LAYER NNGemmLayerSingle
#define NN_MPI_REAL   MPI_FLOAT
