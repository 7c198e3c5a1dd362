// Batch wrappers shared by the SIMD scan files (int8 inner products are integer kernels of their own,
// wrapped by I8Batch below). Each ISA file writes only the arithmetic — its
// single-vector kernels, wrapped in a TU-local `Ops` struct:
//   template <class T> static float dot(const float* q, const T* x, size_t dim);
//   template <class T> static float l2(const float* q, const T* x, size_t dim, float scale);
// for T = float, uint16_t (fp16 bits) and int8_t — and takes the n-vector loops from here, so every
// table applies per-vector scales and strides the same way.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fv_kernels.hpp"

namespace kes {
namespace fv {

template <class Ops>
struct ScanBatch {
    static void dot_f32(const float* q, const float* x, size_t dim, size_t n, float* out) {
        for (size_t j = 0; j < n; ++j) out[j] = Ops::dot(q, x + j * dim, dim);
    }
    static void l2_f32(const float* q, const float* x, size_t dim, size_t n, float* out) {
        for (size_t j = 0; j < n; ++j) out[j] = Ops::l2(q, x + j * dim, dim, 1.f);
    }
    static void dot_f16(const float* q, const uint16_t* x, size_t dim, size_t n, float* out) {
        for (size_t j = 0; j < n; ++j) out[j] = Ops::dot(q, x + j * dim, dim);
    }
    static void l2_f16(const float* q, const uint16_t* x, size_t dim, size_t n, float* out) {
        for (size_t j = 0; j < n; ++j) out[j] = Ops::l2(q, x + j * dim, dim, 1.f);
    }
    static void l2_i8(const float* q, const int8_t* x, const float* scale, size_t dim, size_t n, float* out) {
        for (size_t j = 0; j < n; ++j) out[j] = Ops::l2(q, x + j * dim, dim, scale[j]);
    }

    // Four queries as four single-query passes (bit-identical by construction), for ISAs without a
    // register-blocked 4-query kernel.
    static void dot4_f32(const float* const* q, const float* x, size_t dim, size_t n, float* const* out) {
        for (int j = 0; j < 4; ++j) dot_f32(q[j], x, dim, n, out[j]);
    }
    static void dot8_f32(const float* const* q, const float* x, size_t dim, size_t n, float* const* out) {
        for (int j = 0; j < 8; ++j) dot_f32(q[j], x, dim, n, out[j]);
    }
    static void dot4_f16(const float* const* q, const uint16_t* x, size_t dim, size_t n, float* const* out) {
        for (int j = 0; j < 4; ++j) dot_f16(q[j], x, dim, n, out[j]);
    }
};

// n-vector and four-query loops around an ISA's exact integer kernel
//   static void sums(const I8Query& q, const int8_t* x, size_t dim, int32_t* hi_dot, int32_t* lo_dot);
template <class IntOps>
struct I8Batch {
    static void dot_i8(const I8Query& q, const int8_t* x, const float* scale, size_t dim, size_t n, float* out) {
        for (size_t j = 0; j < n; ++j) {
            int32_t h = 0, l = 0;
            IntOps::sums(q, x + j * dim, dim, &h, &l);
            out[j] = i8_score(h, l, q.step, scale[j]);
        }
    }
    // Integer sums are exact, so four passes are bit-identical to single queries in any order.
    static void dot4_i8(const I8Query* const* q, const int8_t* x, const float* scale, size_t dim, size_t n,
                        float* const* out) {
        for (int j = 0; j < 4; ++j) dot_i8(*q[j], x, scale, dim, n, out[j]);
    }
};

}  // namespace fv
}  // namespace kes
