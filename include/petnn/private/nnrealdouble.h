/* Precision templates (-nn_precision): a header written in terms of the macros below is included once after this file
   and once after nnrealsingle.h, then nnrealundef.h ends them, so both precisions compile from one source:
     NN_REAL   the element type of activations and their gradients
     NN_SUFFIX appended to the names the template defines: nothing in double, Single in float
     NN_GEMM   the BLAS GEMM of that type
     NN_GEMM_LAYER  the GEMM of a layer's own pass (in float split over PetNN's threads: include/petnn/private/nngemm.h)
     NN_VLEN   entries of a 64-byte vector
     NN_MPI_REAL the MPI datatype of NN_REAL */
#include <petnn/private/nnrealundef.h>
#define NN_REAL   PetscScalar
#define NN_SUFFIX
#define NN_GEMM   cblas_dgemm
#define NN_VLEN   8
#define NN_GEMM_LAYER cblas_dgemm
#define NN_MPI_REAL   MPIU_SCALAR
