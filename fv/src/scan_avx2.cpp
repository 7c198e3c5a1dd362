// scan_avx2.cpp — AVX2 + FMA + F16C scan kernels (compiled with those flags only, chosen at run
// time by dispatch::pick_table once kes_cpu_has() confirms them; on other architectures this file compiles to a stub).
#include "fv_kernels.hpp"
#include "kes/cpu_dispatch.hpp"
#include "scan_batch.hpp"

#if KES_SIMD_X86
#include <immintrin.h>

#include "kestrel/tensor.h"

namespace kes {
namespace fv {
namespace {

inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

inline __m256 load8(const float* p) {
    return _mm256_loadu_ps(p);
}
inline __m256 load8(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline __m256 load8(const int8_t* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
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

// Four accumulators hide the FMA latency; the tail (dim % 8) is scalar.
template <class T>
inline float dot1(const float* q, const T* x, size_t dim) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 32 <= dim; i += 32) {
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), load8(x + i), a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8), load8(x + i + 8), a1);
        a2 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 16), load8(x + i + 16), a2);
        a3 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 24), load8(x + i + 24), a3);
    }
    for (; i + 8 <= dim; i += 8) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), load8(x + i), a0);
    float s = hsum(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
    for (; i < dim; ++i) s += q[i] * widen(x[i]);
    return s;
}

template <class T>
inline float l21(const float* q, const T* x, size_t dim, float scale) {
    const __m256 sc = _mm256_set1_ps(scale);
    __m256 a0 = _mm256_setzero_ps(), a1 = a0;
    size_t i = 0;
    for (; i + 16 <= dim; i += 16) {
        const __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(q + i), _mm256_mul_ps(load8(x + i), sc));
        const __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(q + i + 8), _mm256_mul_ps(load8(x + i + 8), sc));
        a0 = _mm256_fmadd_ps(d0, d0, a0);
        a1 = _mm256_fmadd_ps(d1, d1, a1);
    }
    for (; i + 8 <= dim; i += 8) {
        const __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(q + i), _mm256_mul_ps(load8(x + i), sc));
        a0 = _mm256_fmadd_ps(d0, d0, a0);
    }
    float s = hsum(_mm256_add_ps(a0, a1));
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

// Exact int8 sums: sign-extend 16 codes and 16 query bytes to int16, multiply-add pairs to int32
// (each pair ≤ 2 · 128 · 127, far from overflow); the tail is scalar.
struct IntOps {
    static void sums(const I8Query& q, const int8_t* x, size_t dim, int32_t* hi_dot, int32_t* lo_dot) {
        __m256i ah = _mm256_setzero_si256(), al = ah;
        size_t i = 0;
        for (; i + 16 <= dim; i += 16) {
            const __m256i xv = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)));
            const __m256i hv = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q.hi + i)));
            const __m256i lv = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q.lo + i)));
            ah = _mm256_add_epi32(ah, _mm256_madd_epi16(xv, hv));
            al = _mm256_add_epi32(al, _mm256_madd_epi16(xv, lv));
        }
        int32_t h = hsum_epi32(ah), l = hsum_epi32(al);
        for (; i < dim; ++i) {
            h += int32_t{q.hi[i]} * x[i];
            l += int32_t{q.lo[i]} * x[i];
        }
        *hi_dot = h;
        *lo_dot = l;
    }
    static int32_t hsum_epi32(__m256i v) {
        __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
        return _mm_cvtsi128_si32(s);
    }
};
using I8 = I8Batch<IntOps>;

// Sums of 8 registers, one per lane: [Σa0, Σa1, ..., Σa7].
inline __m256 reduce8(const __m256* a) {
    const __m256 t0 = _mm256_hadd_ps(_mm256_hadd_ps(a[0], a[1]), _mm256_hadd_ps(a[2], a[3]));
    const __m256 t1 = _mm256_hadd_ps(_mm256_hadd_ps(a[4], a[5]), _mm256_hadd_ps(a[6], a[7]));
    return _mm256_add_ps(_mm256_permute2f128_ps(t0, t1, 0x20), _mm256_permute2f128_ps(t0, t1, 0x31));
}

// The 32 KB table sits in L1, so the scan is bound by the gathers: 4 gathers of 8 per feature,
// 8 features per step so the horizontal sums are shared.
void adc_pq32(const float* table, const uint8_t* codes, size_t n, float* out) {
    __m256i offs[4];
    for (int g = 0; g < 4; ++g)
        offs[g] = _mm256_setr_epi32((8 * g + 0) * 256, (8 * g + 1) * 256, (8 * g + 2) * 256, (8 * g + 3) * 256,
                                    (8 * g + 4) * 256, (8 * g + 5) * 256, (8 * g + 6) * 256, (8 * g + 7) * 256);
    size_t j = 0;
    for (; j + 8 <= n; j += 8) {
        __m256 acc[8];
        for (int v = 0; v < 8; ++v) {
            const uint8_t* c = codes + (j + v) * 32;
            __m256 a = _mm256_setzero_ps();
            for (int g = 0; g < 4; ++g) {
                const __m256i idx = _mm256_add_epi32(
                    _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(c + 8 * g))), offs[g]);
                a = _mm256_add_ps(a, _mm256_i32gather_ps(table, idx, 4));
            }
            acc[v] = a;
        }
        _mm256_storeu_ps(out + j, reduce8(acc));
    }
    for (; j < n; ++j) {
        const uint8_t* c = codes + j * 32;
        float s = 0.f;
        for (size_t m = 0; m < 32; ++m) s += table[m * 256 + c[m]];
        out[j] = s;
    }
}

const Kernels kAvx2 = {"avx2",       Batch::dot_f32,  Batch::l2_f32,   Batch::dot_f16,  Batch::l2_f16, I8::dot_i8,
                       Batch::l2_i8, Batch::dot4_f32, Batch::dot4_f16, Batch::dot8_f32, I8::dot4_i8,   adc_pq32};

}  // namespace

const Kernels* kernels_avx2() {
    return &kAvx2;
}

}  // namespace fv
}  // namespace kes

#else

namespace kes {
namespace fv {
const Kernels* kernels_avx2() {
    return nullptr;
}
}  // namespace fv
}  // namespace kes

#endif
