/* NN_SIMD: a hot loop compiled for the machine's vector units. The build targets x86-64-v2 (SSE4.2), so a function
   marked NN_SIMD is cloned for AVX-512 and AVX2 as well, the loader picking the clone the processor runs (GCC's
   target_clones, an ifunc on Linux). Float loops only where double results must stay bitwise those of the build
   target: the clones may contract a*b+c into fused multiply-adds. */
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
  #define NN_SIMD __attribute__((target_clones("avx512f", "avx2", "default")))
#else
  #define NN_SIMD
#endif
