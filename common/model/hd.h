/* FMHA_HD marks the helpers of common/model/ that device code calls too (encoders, address maps):
 * __host__ __device__ under nvcc, nothing under a C compiler. One definition of every bit layout,
 * shared by the kernels and the host model, is what lets CI test the code the kernels run. */
#ifndef FMHA_MODEL_HD_H
#define FMHA_MODEL_HD_H

#ifdef __CUDACC__
#define FMHA_HD static __host__ __device__ __forceinline__
#else
#define FMHA_HD static inline
#endif

#endif
