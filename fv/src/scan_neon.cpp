// scan_neon.cpp — NEON (ASIMD, baseline armv8-a) scan kernels; a stub on other architectures.
// NEON has no gather, so the PQ36 ADC scan unrolls four features with independent sums instead.
#include "fv_kernels.hpp"
#include "kes/cpu_dispatch.hpp"
#include "scan_batch.hpp"

#if KES_SIMD_ARM
#include <arm_neon.h>

#include "kestrel/tensor.h"

namespace kes {
namespace fv {
namespace {

inline float32x4_t load4(const float* p) {
    return vld1q_f32(p);
}
// FCVTL (f16 → f32 widening) is part of baseline ASIMD; only f16 arithmetic needs ASIMDHP.
inline float32x4_t load4(const uint16_t* p) {
    return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)));
}
inline float32x4_t load4(const int8_t* p) {
    int8_t tmp[8] = {p[0], p[1], p[2], p[3], 0, 0, 0, 0};
    return vcvtq_f32_s32(vmovl_s16(vget_low_s16(vmovl_s8(vld1_s8(tmp)))));
}
inline float widen(float v) {
    return v;
}
inline float widen(uint16_t v) {
    return kes_fp16_to_float(v);
}
inline float widen(int8_t v) {
    return static_cast<float>(v);
}

template <class T>
inline float dot1(const float* q, const T* x, size_t dim) {
    float32x4_t a0 = vdupq_n_f32(0.f), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 16 <= dim; i += 16) {
        a0 = vfmaq_f32(a0, vld1q_f32(q + i), load4(x + i));
        a1 = vfmaq_f32(a1, vld1q_f32(q + i + 4), load4(x + i + 4));
        a2 = vfmaq_f32(a2, vld1q_f32(q + i + 8), load4(x + i + 8));
        a3 = vfmaq_f32(a3, vld1q_f32(q + i + 12), load4(x + i + 12));
    }
    for (; i + 4 <= dim; i += 4) a0 = vfmaq_f32(a0, vld1q_f32(q + i), load4(x + i));
    float s = vaddvq_f32(vaddq_f32(vaddq_f32(a0, a1), vaddq_f32(a2, a3)));
    for (; i < dim; ++i) s += q[i] * widen(x[i]);
    return s;
}

// Exact int8 sums: 8 × 8 widening multiplies to int16 (|product| ≤ 128 · 127 fits), pairwise
// accumulated into int32 lanes; the tail is scalar.
struct IntOps {
    static void sums(const I8Query& q, const int8_t* x, size_t dim, int32_t* hi_dot, int32_t* lo_dot) {
        int32x4_t ah = vdupq_n_s32(0), al = ah;
        size_t i = 0;
        for (; i + 16 <= dim; i += 16) {
            const int8x16_t xv = vld1q_s8(x + i), hv = vld1q_s8(q.hi + i), lv = vld1q_s8(q.lo + i);
            ah = vpadalq_s16(ah, vmull_s8(vget_low_s8(xv), vget_low_s8(hv)));
            ah = vpadalq_s16(ah, vmull_high_s8(xv, hv));
            al = vpadalq_s16(al, vmull_s8(vget_low_s8(xv), vget_low_s8(lv)));
            al = vpadalq_s16(al, vmull_high_s8(xv, lv));
        }
        int32_t h = vaddvq_s32(ah), l = vaddvq_s32(al);
        for (; i < dim; ++i) {
            h += int32_t{q.hi[i]} * x[i];
            l += int32_t{q.lo[i]} * x[i];
        }
        *hi_dot = h;
        *lo_dot = l;
    }
};
using I8 = I8Batch<IntOps>;

template <class T>
inline float l21(const float* q, const T* x, size_t dim, float scale) {
    float32x4_t a0 = vdupq_n_f32(0.f), a1 = a0;
    size_t i = 0;
    for (; i + 8 <= dim; i += 8) {
        const float32x4_t d0 = vsubq_f32(vld1q_f32(q + i), vmulq_n_f32(load4(x + i), scale));
        const float32x4_t d1 = vsubq_f32(vld1q_f32(q + i + 4), vmulq_n_f32(load4(x + i + 4), scale));
        a0 = vfmaq_f32(a0, d0, d0);
        a1 = vfmaq_f32(a1, d1, d1);
    }
    float s = vaddvq_f32(vaddq_f32(a0, a1));
    for (; i < dim; ++i) {
        const float d = q[i] - widen(x[i]) * scale;
        s += d * d;
    }
    return s;
}

// The single-vector kernels above, for the shared n-vector loops of scan_batch.hpp.
struct Ops {
    template <class T>
    static float dot(const float* q, const T* x, size_t dim) {
        return dot1(q, x, dim);
    }
    template <class T>
    static float l2(const float* q, const T* x, size_t dim, float scale) {
        return l21(q, x, dim, scale);
    }
};
using Batch = ScanBatch<Ops>;

void adc_pq32(const float* table, const uint8_t* codes, size_t n, float* out) {
    size_t j = 0;
    for (; j + 4 <= n; j += 4) {
        const uint8_t* c = codes + j * 32;
        float s0 = 0.f, s1 = 0.f, s2 = 0.f, s3 = 0.f;
        for (size_t m = 0; m < 32; ++m) {
            const float* t = table + m * 256;
            s0 += t[c[m]];
            s1 += t[c[32 + m]];
            s2 += t[c[64 + m]];
            s3 += t[c[96 + m]];
        }
        out[j] = s0;
        out[j + 1] = s1;
        out[j + 2] = s2;
        out[j + 3] = s3;
    }
    for (; j < n; ++j) {
        const uint8_t* c = codes + j * 32;
        float s = 0.f;
        for (size_t m = 0; m < 32; ++m) s += table[m * 256 + c[m]];
        out[j] = s;
    }
}

const Kernels kNeon = {"neon",       Batch::dot_f32,  Batch::l2_f32,   Batch::dot_f16,  Batch::l2_f16, I8::dot_i8,
                       Batch::l2_i8, Batch::dot4_f32, Batch::dot4_f16, Batch::dot8_f32, I8::dot4_i8,   adc_pq32};

}  // namespace

const Kernels* kernels_neon() {
    return &kNeon;
}

}  // namespace fv
}  // namespace kes

#else

namespace kes {
namespace fv {
const Kernels* kernels_neon() {
    return nullptr;
}
}  // namespace fv
}  // namespace kes

#endif
