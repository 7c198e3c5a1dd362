// scan_avx512.cpp — AVX-512 (F + BW/DQ/VL) scan kernels: 16 lanes, masked tails instead of scalar
// loops (masked loads never fault on the lanes they skip). Chosen at run time; a stub elsewhere.
#include "fv_kernels.hpp"
#include "kes/cpu_dispatch.hpp"
#include "scan_batch.hpp"

#if KES_SIMD_X86
// GCC 12's AVX-512 headers build "undefined" vectors by self-assignment, which -Wmaybe-uninitialized
// reports (as -Wmaybe-uninitialized or -Wuninitialized, depending on inlining) at every use
// (GCC bug 105593); the warning is about the header, not this code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

namespace kes {
namespace fv {
namespace {

inline __m512 load16(const float* p, __mmask16 m) {
    return _mm512_maskz_loadu_ps(m, p);
}
inline __m512 load16(const uint16_t* p, __mmask16 m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
}
inline __m512 load16(const int8_t* p, __mmask16 m) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, p)));
}

inline __mmask16 tail_mask(size_t left) {
    return left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1u);
}

template <class T>
inline float dot1(const float* q, const T* x, size_t dim) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0;
    size_t i = 0;
    for (; i + 32 <= dim; i += 32) {
        a0 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i), load16(x + i, 0xFFFF), a0);
        a1 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i + 16), load16(x + i + 16, 0xFFFF), a1);
    }
    for (; i < dim; i += 16) {
        const __mmask16 m = tail_mask(dim - i);
        a0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, q + i), load16(x + i, m), a0);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
}

template <class T>
inline float l21(const float* q, const T* x, size_t dim, float scale) {
    const __m512 sc = _mm512_set1_ps(scale);
    __m512 a0 = _mm512_setzero_ps(), a1 = a0;
    size_t i = 0;
    for (; i + 32 <= dim; i += 32) {
        const __m512 d0 = _mm512_sub_ps(_mm512_loadu_ps(q + i), _mm512_mul_ps(load16(x + i, 0xFFFF), sc));
        const __m512 d1 = _mm512_sub_ps(_mm512_loadu_ps(q + i + 16), _mm512_mul_ps(load16(x + i + 16, 0xFFFF), sc));
        a0 = _mm512_fmadd_ps(d0, d0, a0);
        a1 = _mm512_fmadd_ps(d1, d1, a1);
    }
    for (; i < dim; i += 16) {
        const __mmask16 m = tail_mask(dim - i);
        const __m512 d0 = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, q + i), _mm512_mul_ps(load16(x + i, m), sc));
        a0 = _mm512_fmadd_ps(d0, d0, a0);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
}

// f32 inner products, 1:N and M:N alike, go through one register-blocked micro-kernel: NQ queries ×
// NV vectors, one 16-lane accumulator per (query, vector) pair over the 16-float steps, the masked
// tail last, then _mm512_reduce_add_ps. Every tile shape therefore sums each pair in the same order,
// so a score does not depend on the tile (or batch) it was computed in. NQ·NV accumulators + NV
// vector registers + 1 query register must fit the 32 zmm registers.
template <int NQ, int NV>
inline void tile_f32(const float* const* q, const float* x, size_t dim, float* const* out, size_t v0) {
    __m512 acc[NQ][NV];
    for (int j = 0; j < NQ; ++j)
        for (int v = 0; v < NV; ++v) acc[j][v] = _mm512_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= dim; i += 16) {
        __m512 xv[NV];
        for (int v = 0; v < NV; ++v) xv[v] = _mm512_loadu_ps(x + v * dim + i);
        for (int j = 0; j < NQ; ++j) {
            const __m512 qv = _mm512_loadu_ps(q[j] + i);
            for (int v = 0; v < NV; ++v) acc[j][v] = _mm512_fmadd_ps(qv, xv[v], acc[j][v]);
        }
    }
    if (i < dim) {
        const __mmask16 m = tail_mask(dim - i);
        __m512 xv[NV];
        for (int v = 0; v < NV; ++v) xv[v] = _mm512_maskz_loadu_ps(m, x + v * dim + i);
        for (int j = 0; j < NQ; ++j) {
            const __m512 qv = _mm512_maskz_loadu_ps(m, q[j] + i);
            for (int v = 0; v < NV; ++v) acc[j][v] = _mm512_fmadd_ps(qv, xv[v], acc[j][v]);
        }
    }
    for (int j = 0; j < NQ; ++j)
        for (int v = 0; v < NV; ++v) out[j][v0 + v] = _mm512_reduce_add_ps(acc[j][v]);
}

template <int NQ, int NV>
inline void blocked_f32(const float* const* q, const float* x, size_t dim, size_t n, float* const* out) {
    size_t v = 0;
    for (; v + NV <= n; v += NV) tile_f32<NQ, NV>(q, x + v * dim, dim, out, v);
    for (; v < n; ++v) tile_f32<NQ, 1>(q, x + v * dim, dim, out, v);
}

// 1:N: four vectors per step share the query load (the scan is memory-bound; this keeps it there).
void dot_f32(const float* q, const float* x, size_t dim, size_t n, float* out) {
    blocked_f32<1, 4>(&q, x, dim, n, &out);
}
// M:N: 4 × 4 and 8 × 3 tiles: each vector loaded from cache serves 4 or 8 queries and each query
// load 4 or 3 vectors, so the FMAs, not the loads, are the limit.
void dot4_f32(const float* const* q, const float* x, size_t dim, size_t n, float* const* out) {
    blocked_f32<4, 4>(q, x, dim, n, out);
}
void dot8_f32(const float* const* q, const float* x, size_t dim, size_t n, float* const* out) {
    blocked_f32<8, 3>(q, x, dim, n, out);
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

// Four queries against one vector, with dot1's exact accumulation order per query (a0 over even
// 16-lane steps, a1 over odd ones, masked tail into a0), so results match dot1 bit for bit.
template <class T>
inline void dot4_1(const float* const* q, const T* x, size_t dim, float* r) {
    __m512 a0[4], a1[4];
    for (int j = 0; j < 4; ++j) a0[j] = a1[j] = _mm512_setzero_ps();
    size_t i = 0;
    for (; i + 32 <= dim; i += 32) {
        const __m512 x0 = load16(x + i, 0xFFFF), x1 = load16(x + i + 16, 0xFFFF);
        for (int j = 0; j < 4; ++j) {
            a0[j] = _mm512_fmadd_ps(_mm512_loadu_ps(q[j] + i), x0, a0[j]);
            a1[j] = _mm512_fmadd_ps(_mm512_loadu_ps(q[j] + i + 16), x1, a1[j]);
        }
    }
    for (; i < dim; i += 16) {
        const __mmask16 m = tail_mask(dim - i);
        const __m512 x0 = load16(x + i, m);
        for (int j = 0; j < 4; ++j) a0[j] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, q[j] + i), x0, a0[j]);
    }
    for (int j = 0; j < 4; ++j) r[j] = _mm512_reduce_add_ps(_mm512_add_ps(a0[j], a1[j]));
}

void dot4_f16(const float* const* q, const uint16_t* x, size_t dim, size_t n, float* const* out) {
    float r[4];
    for (size_t v = 0; v < n; ++v) {
        dot4_1(q, x + v * dim, dim, r);
        for (int j = 0; j < 4; ++j) out[j][v] = r[j];
    }
}
// Exact int8 sums without VNNI (the VNNI ones are in scan_avx512_vnni.cpp): 32 codes and query
// bytes sign-extended to int16, pairs multiplied and added to int32; masked tail (zeros add nothing).
struct IntOps {
    static void sums(const I8Query& q, const int8_t* x, size_t dim, int32_t* hi_dot, int32_t* lo_dot) {
        __m512i ah = _mm512_setzero_si512(), al = ah;
        for (size_t i = 0; i < dim; i += 32) {
            const __mmask32 m = dim - i >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((1u << (dim - i)) - 1u);
            const __m512i xv = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(m, x + i));
            ah =
                _mm512_add_epi32(ah, _mm512_madd_epi16(xv, _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(m, q.hi + i))));
            al =
                _mm512_add_epi32(al, _mm512_madd_epi16(xv, _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(m, q.lo + i))));
        }
        *hi_dot = _mm512_reduce_add_epi32(ah);
        *lo_dot = _mm512_reduce_add_epi32(al);
    }
};
using I8 = I8Batch<IntOps>;

inline __m256 reduce8(const __m256* a) {
    const __m256 t0 = _mm256_hadd_ps(_mm256_hadd_ps(a[0], a[1]), _mm256_hadd_ps(a[2], a[3]));
    const __m256 t1 = _mm256_hadd_ps(_mm256_hadd_ps(a[4], a[5]), _mm256_hadd_ps(a[6], a[7]));
    return _mm256_add_ps(_mm256_permute2f128_ps(t0, t1, 0x20), _mm256_permute2f128_ps(t0, t1, 0x31));
}

// Two 16-lane gathers per feature (codes 0..15 and 16..31), folded to 8 lanes and reduced 8
// features at a time.
void adc_pq32(const float* table, const uint8_t* codes, size_t n, float* out) {
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i off0 = _mm512_slli_epi32(lane, 8);
    const __m512i off1 = _mm512_add_epi32(off0, _mm512_set1_epi32(16 * 256));
    size_t j = 0;
    for (; j + 8 <= n; j += 8) {
        __m256 acc[8];
        for (int v = 0; v < 8; ++v) {
            const uint8_t* c = codes + (j + v) * 32;
            const __m512i i0 =
                _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c))), off0);
            const __m512i i1 =
                _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c + 16))), off1);
            const __m512 s = _mm512_add_ps(_mm512_i32gather_ps(i0, table, 4), _mm512_i32gather_ps(i1, table, 4));
            acc[v] = _mm256_add_ps(_mm512_castps512_ps256(s),
                                   _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s), 1)));
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

const Kernels kAvx512 = {"avx512",     dot_f32,  Batch::l2_f32, Batch::dot_f16, Batch::l2_f16, I8::dot_i8,
                         Batch::l2_i8, dot4_f32, dot4_f16,      dot8_f32,       I8::dot4_i8,   adc_pq32};

}  // namespace

const Kernels* kernels_avx512() {
    return &kAvx512;
}

}  // namespace fv
}  // namespace kes

#else

namespace kes {
namespace fv {
const Kernels* kernels_avx512() {
    return nullptr;
}
}  // namespace fv
}  // namespace kes

#endif
