// Small kernels the GPU tests put on the queue around enqueued operations: they show that an
// operation runs in queue order (a kernel before a send fills what is sent, a kernel after a
// receive sees what arrived).  Each launcher returns the launch error.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

namespace gpu_test {

inline unsigned grid_for(size_t n) {
    size_t b = (n + 255) / 256;
    return static_cast<unsigned>(b == 0 ? 1 : (b > 1024 ? 1024 : b));
}

template <class T>
__global__ void k_fill(T *p, size_t n, T v) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) p[i] = v;
}
template <class T>
cudaError_t fill(T *p, size_t n, T v, cudaStream_t s) {
    k_fill<T><<<grid_for(n), 256, 0, s>>>(p, n, v);
    return cudaGetLastError();
}

// p[i] = a * (i % m) + b: values that tell elements apart and stay exact in float.
template <class T>
__global__ void k_ramp(T *p, size_t n, T a, size_t m, T b) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        p[i] = a * static_cast<T>(i % m) + b;
}
template <class T>
cudaError_t ramp(T *p, size_t n, T a, size_t m, T b, cudaStream_t s) {
    k_ramp<T><<<grid_for(n), 256, 0, s>>>(p, n, a, m, b);
    return cudaGetLastError();
}

template <class T>
__global__ void k_add(T *p, size_t n, T v) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) p[i] += v;
}
template <class T>
cudaError_t add(T *p, size_t n, T v, cudaStream_t s) {
    k_add<T><<<grid_for(n), 256, 0, s>>>(p, n, v);
    return cudaGetLastError();
}

// y = a * x + y
static __global__ void k_saxpy(size_t n, float a, const float *x, float *y) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        y[i] = a * x[i] + y[i];
}
inline cudaError_t saxpy(size_t n, float a, const float *x, float *y, cudaStream_t s) {
    k_saxpy<<<grid_for(n), 256, 0, s>>>(n, a, x, y);
    return cudaGetLastError();
}

// Holds the queue for ns nanoseconds of the GPU's global timer.
static __global__ void k_spin(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}
inline cudaError_t spin(unsigned long long ns, cudaStream_t s) {
    k_spin<<<1, 1, 0, s>>>(ns);
    return cudaGetLastError();
}

}  // namespace gpu_test
