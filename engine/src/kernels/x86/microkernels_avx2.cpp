// microkernels_avx2.cpp — the microkernel table for AVX2 + FMA (compiled with those flags only, chosen
// at run time by dispatch::pick_table once kes_cpu_has() confirms them; on other architectures this file compiles to a
// stub).
#include "../common/microkernels.hpp"
#include "kes/cpu_dispatch.hpp"

#if KES_SIMD_X86
#include <immintrin.h>

#include "../common/microkernel_impl.hpp"

namespace kes {
namespace kernels {
namespace {

struct Avx2 {
    using reg = __m256;
    static constexpr size_t width = 8;
    static reg load(const float* p) { return _mm256_loadu_ps(p); }
    static void store(float* p, reg x) { _mm256_storeu_ps(p, x); }
    static reg set1(float x) { return _mm256_set1_ps(x); }
    static reg fma(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
    static reg add(reg a, reg b) { return _mm256_add_ps(a, b); }
    static reg mul(reg a, reg b) { return _mm256_mul_ps(a, b); }
    // maxps/minps return the second operand when either is NaN: with the bound first, NaN passes.
    static reg min(reg a, reg b) { return _mm256_min_ps(b, a); }
    static reg max(reg a, reg b) { return _mm256_max_ps(b, a); }
    static reg sub(reg a, reg b) { return _mm256_sub_ps(a, b); }
    static reg div(reg a, reg b) { return _mm256_div_ps(a, b); }
    static reg round(reg x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
    static reg pow2i(reg n) {
        const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
        return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
    }
    static float hsum(reg x) {
        __m128 s = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
        s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
    }
    static float hmax(reg x) {
        __m128 s = _mm_max_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
        s = _mm_max_ps(s, _mm_movehl_ps(s, s));
        return _mm_cvtss_f32(_mm_max_ss(s, _mm_movehdup_ps(s)));
    }
    static __m256i mask(size_t n) {
        const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), lanes);
    }
    static reg load_partial(const float* p, size_t n) { return _mm256_maskload_ps(p, mask(n)); }
    static void store_partial(float* p, size_t n, reg x) { _mm256_maskstore_ps(p, mask(n), x); }
};

// Requantizes two vectors of 8 sums (pixels 0-7, 8-15 of one output channel) and stores their nc ≤ 16
// bytes: ops/quant.hpp's rule, lane for lane (cvtps rounds half to even under the default MXCSR; MAXPS
// returns its second operand, the bound, for a NaN product).
inline void store_requantized(__m256i a, __m256i b, float multiplier, const QuantOut& q, uint8_t* y, size_t nc) {
    const __m256 m = _mm256_set1_ps(multiplier), lo = _mm256_set1_ps(q.lo), hi = _mm256_set1_ps(q.hi);
    const __m256i zp = _mm256_set1_epi32(q.zero_point);
    const __m256 fa = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(a), m), lo), hi);
    const __m256 fb = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(b), m), lo), hi);
    const __m256i ia = _mm256_add_epi32(_mm256_cvtps_epi32(fa), zp), ib = _mm256_add_epi32(_mm256_cvtps_epi32(fb), zp);
    // Values in [-128, 255]: packs keeps them; their low bytes are the u8 or i8 results.
    __m256i w16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(ia, ib), 0xD8);
    w16 = _mm256_and_si256(w16, _mm256_set1_epi16(0xFF));
    const __m128i bytes = _mm_packus_epi16(_mm256_castsi256_si128(w16), _mm256_extracti128_si256(w16, 1));
    if (nc == 16) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(y), bytes);
    } else {
        alignas(16) uint8_t tmp[16];
        _mm_store_si128(reinterpret_cast<__m128i*>(tmp), bytes);
        __builtin_memcpy(y, tmp, nc);
    }
}

// Microkernels::qgemm, 4 output channels × 16 pixels, k in pairs: vpmaddwd of 8 pixels' (x[k], x[k+1])
// with the broadcast (w[k], w[k+1]) gives 8 exact int32 sums of two products (no 16-bit saturation,
// unlike vpmaddubsw). 8 accumulators + 2 pixel vectors + 1 broadcast.
constexpr int kQMr = 4, kQNr = 16, kQKg = 2;
void qgemm_4x16(size_t mr, size_t nc, size_t kgroups, const int16_t* w, const int16_t* x, const int32_t* bias,
                const float* multiplier, const QuantOut& q, uint8_t* y, size_t y_stride) {
    __m256i acc[kQMr][2];
#pragma GCC unroll 4
    for (int r = 0; r < kQMr; ++r) acc[r][0] = acc[r][1] = _mm256_set1_epi32(static_cast<size_t>(r) < mr ? bias[r] : 0);
    for (size_t g = 0; g < kgroups; ++g, w += kQMr * kQKg, x += kQNr * kQKg) {
        const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x));
        const __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 16));
#pragma GCC unroll 4
        for (int r = 0; r < kQMr; ++r) {
            int32_t pair;
            __builtin_memcpy(&pair, w + r * kQKg, sizeof pair);
            const __m256i wr = _mm256_set1_epi32(pair);
            acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(x0, wr));
            acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(x1, wr));
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < kQMr; ++r) {
        if (static_cast<size_t>(r) >= mr) break;
        store_requantized(acc[r][0], acc[r][1], multiplier[r], q, y + static_cast<size_t>(r) * y_stride, nc);
    }
}

// 16 int16 of a tap row for 16 consecutive outputs: contiguous at stride 1; at stride 2 the even
// elements of 32 (sign-extended to int32 and packed back, exact: they are int16).
template <int STEP>
inline __m256i load_tap_row(const int16_t* p) {
    if (STEP == 1) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16));
    const __m256i e0 = _mm256_srai_epi32(_mm256_slli_epi32(v0, 16), 16),
                  e1 = _mm256_srai_epi32(_mm256_slli_epi32(v1, 16), 16);
    return _mm256_permute4x64_epi64(_mm256_packs_epi32(e0, e1), 0xD8);
}

// Microkernels::qdwconv_row at stride 1 and 2: 16 outputs at a time with the taps in pairs (vpmaddwd of
// the two tap rows interleaved with the broadcast weight pair: 16 multiply-adds per instruction, exact);
// the last block reads past the row (qdwconv_overread) and stores only its outputs. Larger strides
// are the portable template's.
template <int STEP>
void qdwconv_row_16(size_t n, size_t ks, const int16_t* const* taps, const int16_t* w, int32_t bias, float multiplier,
                    const QuantOut& q, uint8_t* y) {
    for (size_t i = 0; i < n; i += 16) {
        __m256i lo_acc = _mm256_set1_epi32(bias), hi_acc = lo_acc;
        for (size_t t = 0; t < ks; t += 2) {
            const bool pair = t + 1 < ks;
            const __m256i a = load_tap_row<STEP>(taps[t] + i * STEP);
            const __m256i b = pair ? load_tap_row<STEP>(taps[t + 1] + i * STEP) : _mm256_setzero_si256();
            const uint32_t weights = static_cast<uint16_t>(w[t]) |
                                     (pair ? static_cast<uint32_t>(static_cast<uint16_t>(w[t + 1])) << 16 : 0u);
            const __m256i wp = _mm256_set1_epi32(static_cast<int32_t>(weights));
            // Within each 128-bit lane: unpacklo holds outputs 0-3 (8-11), unpackhi 4-7 (12-15).
            lo_acc = _mm256_add_epi32(lo_acc, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), wp));
            hi_acc = _mm256_add_epi32(hi_acc, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, b), wp));
        }
        store_requantized(_mm256_permute2x128_si256(lo_acc, hi_acc, 0x20),
                          _mm256_permute2x128_si256(lo_acc, hi_acc, 0x31), multiplier, q, y + i,
                          n - i < 16 ? n - i : 16);
    }
}

void qdwconv_row_avx2(size_t n, size_t ks, const int16_t* const* taps, size_t step, const int16_t* w, int32_t bias,
                      float multiplier, const QuantOut& q, uint8_t* y) {
    if (step == 1) return qdwconv_row_16<1>(n, ks, taps, w, bias, multiplier, q, y);
    if (step == 2) return qdwconv_row_16<2>(n, ks, taps, w, bias, multiplier, q, y);
    impl::qdwconv_row<Avx2>(n, ks, taps, step, w, bias, multiplier, q, y);
}

}  // namespace

const Microkernels* microkernels_avx2() {
    // Built on first call, which dispatch::pick_table makes only on a CPU with these instructions: as a
    // namespace-scope object its initialiser ran ISA code at load time, before any check (SIGILL).
    // 6 × 16 tile: 12 accumulators + 2 weight vectors + 1 broadcast of the 16 ymm registers.
    // The int8 GEMM tile and depthwise row are this file's own; the rest are the template's.
    static const Microkernels table = [] {
        Microkernels t = impl::make_table<Avx2, 6, 2, 2>("avx2");
        t.qgemm_mr = kQMr, t.qgemm_nr = kQNr, t.qgemm_kgroup = kQKg;
        t.qgemm = &qgemm_4x16;
        t.qdwconv_row = &qdwconv_row_avx2;
        return t;
    }();
    return &table;
}

}  // namespace kernels
}  // namespace kes

#else

namespace kes {
namespace kernels {
const Microkernels* microkernels_avx2() {
    return nullptr;
}
}  // namespace kernels
}  // namespace kes

#endif
