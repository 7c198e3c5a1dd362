// aipp_avx2.cpp — the AVX2 row-kernel table, returned by kernels_avx2(), which dispatch::pick_table
// calls only once kes_cpu_has(KES_CPU_AVX2 | KES_CPU_F16C) (on other architectures, a stub).
//
// Compiled with -mavx2 -mfma -mf16c (aipp/CMakeLists.txt). Only intrinsics here (see aipp_simd.hpp).
// Integer CSC uses exact 32-bit products, and the DTC uses separate sub/sub/mul, so the results are
// bit-identical to run_rows_scalar (tests compare them byte for byte).
#include "aipp_simd.hpp"
#include "kes/cpu_dispatch.hpp"

#if KES_SIMD_X86

#include <immintrin.h>

namespace kes {
namespace aipp {
namespace {

uint32_t yuv420sp_csc_row_avx2(const uint8_t* yrow, const uint8_t* uvrow, uint32_t w, int swap_uv, const int32_t* m9,
                               const int32_t* ib, const int32_t* ob, uint8_t* out0, uint8_t* out1,
                               uint8_t* out2) noexcept {
    // Chroma of pixel j is pair j/2: spread [u0 v0 u1 v1 u2 v2 u3 v3] to u0 u0 u1 u1 ... per lane.
    const __m256i idx_u =
        swap_uv ? _mm256_setr_epi32(1, 1, 3, 3, 5, 5, 7, 7) : _mm256_setr_epi32(0, 0, 2, 2, 4, 4, 6, 6);
    const __m256i idx_v =
        swap_uv ? _mm256_setr_epi32(0, 0, 2, 2, 4, 4, 6, 6) : _mm256_setr_epi32(1, 1, 3, 3, 5, 5, 7, 7);
    const __m256i b0 = _mm256_set1_epi32(ib[0]), b1 = _mm256_set1_epi32(ib[1]), b2 = _mm256_set1_epi32(ib[2]);
    const __m256i zero = _mm256_setzero_si256(), max = _mm256_set1_epi32(255);
    __m256i m[9], o[3];
    for (int i = 0; i < 9; ++i) m[i] = _mm256_set1_epi32(m9[i]);
    for (int i = 0; i < 3; ++i) o[i] = _mm256_set1_epi32(ob[i]);
    uint8_t* out[3] = {out0, out1, out2};
    uint32_t x = 0;
    for (; x + 8 <= w; x += 8) {
        const __m256i y =
            _mm256_sub_epi32(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(yrow + x))), b0);
        const __m256i uv = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(uvrow + x)));
        const __m256i u = _mm256_sub_epi32(_mm256_permutevar8x32_epi32(uv, idx_u), b1);
        const __m256i v = _mm256_sub_epi32(_mm256_permutevar8x32_epi32(uv, idx_v), b2);
        for (int i = 0; i < 3; ++i) {
            __m256i s = _mm256_add_epi32(
                _mm256_mullo_epi32(m[3 * i], y),
                _mm256_add_epi32(_mm256_mullo_epi32(m[3 * i + 1], u), _mm256_mullo_epi32(m[3 * i + 2], v)));
            s = _mm256_add_epi32(_mm256_srai_epi32(s, 8), o[i]);  // arithmetic shift: aipp.h
            s = _mm256_min_epi32(_mm256_max_epi32(s, zero), max);
            // 8 × int32 in [0,255] → 8 bytes.
            const __m128i w16 = _mm_packus_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
            _mm_storel_epi64(reinterpret_cast<__m128i*>(out[i] + x), _mm_packus_epi16(w16, w16));
        }
    }
    return x;
}

uint32_t dtc_row_f32_avx2(const uint8_t* src, uint32_t n, float mean, float min, float var, float* dst) noexcept {
    const __m256 vm = _mm256_set1_ps(mean), vn = _mm256_set1_ps(min), vv = _mm256_set1_ps(var);
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x =
            _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + i))));
        _mm256_storeu_ps(dst + i, _mm256_mul_ps(_mm256_sub_ps(_mm256_sub_ps(x, vm), vn), vv));
    }
    return i;
}

uint32_t dtc_row_f16_avx2(const uint8_t* src, uint32_t n, float mean, float min, float var, int board_exact,
                          uint16_t* dst) noexcept {
    const __m256 vm = _mm256_set1_ps(mean), vn = _mm256_set1_ps(min), vv = _mm256_set1_ps(var);
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x =
            _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + i))));
        __m256 d = _mm256_sub_ps(_mm256_sub_ps(x, vm), vn);
        // imm 0 = round to nearest even, as kes_fp16_from_float (same bits on every path, tensor.h).
        if (board_exact) d = _mm256_cvtph_ps(_mm256_cvtps_ph(d, _MM_FROUND_TO_NEAREST_INT));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                         _mm256_cvtps_ph(_mm256_mul_ps(d, vv), _MM_FROUND_TO_NEAREST_INT));
    }
    return i;
}

const Kernels kAvx2 = {"avx2", yuv420sp_csc_row_avx2, dtc_row_f32_avx2, dtc_row_f16_avx2};

}  // namespace

const Kernels* kernels_avx2() noexcept {
    return &kAvx2;
}

}  // namespace aipp
}  // namespace kes

#else

namespace kes {
namespace aipp {
const Kernels* kernels_avx2() noexcept {
    return nullptr;
}
}  // namespace aipp
}  // namespace kes

#endif  // KES_SIMD_X86
