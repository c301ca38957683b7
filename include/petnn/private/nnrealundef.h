/* Ends a precision template's instance (see nnrealdouble.h) */
#undef NN_REAL
#undef NN_SUFFIX
#undef NN_GEMM
#undef NN_VLEN
#undef NN_GEMM_LAYER
#undef NN_MPI_REAL
