/*
   Convolution by direct loops, for single precision (-nn_precision single, conv_single.c): no im2col matrix and no
   GEMM call. The activations keep a pixel's batch slots and channels contiguous ([pixel][slot][channel]), so with the
   channels a multiple of the vector length (16 floats) each pass is a small register-blocked product:

     forward    y[q][r][:]  = b + sum_t sum_c x[tap t of q][r][c] W_t[c][:]           (12 slots x 16 outputs in registers)
     backward   dx[tap t of q][r][:] += sum_o dy[q][r][o] WT_t[o][:]                  (WT_t = W_t transposed, per tap)
                dW_t[c][:] += sum_{q,r} x[tap t of q][r][c] dy[q][r][:]               (16 input channels x 16 outputs)

   The GEMMs of im2col (depth ntap*Cin, 16 columns) and of Winograd (depth Cin, 16 columns) are too thin for the BLAS
   to run near its peak at 16-64 channels; these loops read the input where it lies and keep the accumulators in
   registers. Any stride, padding, dilation and periodic halo (the tap offsets of conv_im2col.c); one group; input and
   output channels multiples of 16. Zero padding skips the tap. Threads split output pixels, or batch slots when the
   input gradient is scattered (conv_run.c). The weights use im2col's packing (Wp: rows (tap, channel), then the bias
   row), and so does the weight gradient. Compiled for the machine's vector units (include/petnn/private/nnsimd.h);
   double precision does not use it (its results stay those of im2col and Winograd).
*/
#include "conv.h"
#include <petnn/private/nnsimd.h>

/* the direct loops take this geometry (in single precision) */
PetscBool NNConvDirectApplies(const NNConvGeom *g)
{
  return (PetscBool)(g->G == 1 && !g->transposed && g->Cin % 16 == 0 && g->Cout % 16 == 0);
}

void NNConvDirectWorkSize(const NNConvGeom *g, PetscInt *nscalar, PetscInt *nint)
{
  *nscalar = 1;
  *nint    = g->ntap;
}

#include <petnn/private/nnrealdouble.h>
#include "conv_direct_passes.h"
#include <petnn/private/nnrealsingle.h>
#include "conv_direct_passes.h"
#include <petnn/private/nnrealundef.h>
