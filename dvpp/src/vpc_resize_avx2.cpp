// The VPC's AVX2 kernel table (vpc_internal.hpp): the bilinear passes; on other architectures
// nothing (vpc_resize.cpp has the kernels_avx2() stub). The horizontal pass: Each element's two samples are
// fetched with one small scalar load (2 bytes for 1 channel, 4 bytes = both pairs of a U/V pixel for 2
// channels), widened to 16 bits and multiplied by both weights with vpmaddwd: the same exact 32-bit
// sums as the scalar loop, then kept as sum >> 4 in 16 bits, all OpenCV's vertical step uses. Two
// source rows share one pass over the tables. (Hardware gathers were tried first: with the gather-data-sampling
// mitigation they are several times slower than these loads.)
#include <cstring>

#include "kes/cpu_dispatch.hpp"
#include "vpc_internal.hpp"

#if KES_SIMD_X86
#include <immintrin.h>

namespace kes {
namespace vpc {
namespace {

inline int load_u16(const uint8_t* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
}
inline int load_u32(const uint8_t* p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

// 8 exact 32-bit sums → OpenCV's v_pack(sum >> 4) as 8 int16.
inline __m128i shift_pack(__m256i sums) {
    sums = _mm256_srai_epi32(sums, 4);
    return _mm_packs_epi32(_mm256_castsi256_si128(sums), _mm256_extracti128_si256(sums, 1));
}

// Elements [i, i + 8) from the two 16-byte windows at ofs[i] and ofs[i + 4] and their shuffles.
inline __m256i windowed(const uint8_t* s, const int32_t* ofs, const uint8_t* shuffle, size_t i) {
    const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + ofs[i]));
    const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + ofs[i + 4]));
    const __m256i bytes = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
    return _mm256_shuffle_epi8(bytes, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(shuffle + 4 * i)));
}

template <int kRows>
size_t hresize_c1(const uint8_t* const* src, const HTables& t, int16_t* const* out) {
    // Locals, not t's fields: the stores through out[] would otherwise make the compiler reload them.
    const int32_t* const ofs = t.ofs;
    const int32_t* const wpair = t.wpair;
    const uint8_t* const shuffle = t.shuffle;
    const uint8_t* const window = t.window;
    const size_t n = t.n;
    const uint8_t* const rows_in[2] = {src[0], kRows == 2 ? src[1] : src[0]};
    int16_t* const rows_out[2] = {out[0], kRows == 2 ? out[1] : out[0]};
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wpair + i));
        const bool fast = (window[i / 4] & window[i / 4 + 1]) != 0;
        for (int r = 0; r < kRows; ++r) {
            const uint8_t* s = rows_in[r];
            __m256i pairs;
            if (fast) {
                pairs = windowed(s, ofs, shuffle, i);
            } else {
                const int32_t* o = ofs + i;
                __m128i p = _mm_cvtsi32_si128(load_u16(s + o[0]));
                p = _mm_insert_epi16(p, load_u16(s + o[1]), 1);
                p = _mm_insert_epi16(p, load_u16(s + o[2]), 2);
                p = _mm_insert_epi16(p, load_u16(s + o[3]), 3);
                p = _mm_insert_epi16(p, load_u16(s + o[4]), 4);
                p = _mm_insert_epi16(p, load_u16(s + o[5]), 5);
                p = _mm_insert_epi16(p, load_u16(s + o[6]), 6);
                p = _mm_insert_epi16(p, load_u16(s + o[7]), 7);
                pairs = _mm256_cvtepu8_epi16(p);
            }
            _mm_storeu_si128(reinterpret_cast<__m128i*>(rows_out[r] + i), shift_pack(_mm256_madd_epi16(pairs, w)));
        }
    }
    return i;
}

template <int kRows>
size_t hresize_c2(const uint8_t* const* src, const HTables& t, int16_t* const* out) {
    // A pixel's dword is u0 v0 u1 v1; widened, words (0, 2) and (1, 3) are the U and V pairs.
    const __m256i order = _mm256_setr_epi8(0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15, 0, 1, 4, 5, 2, 3, 6, 7,
                                           8, 9, 12, 13, 10, 11, 14, 15);
    const int32_t* const ofs = t.ofs;
    const int32_t* const wpair = t.wpair;
    const uint8_t* const shuffle = t.shuffle;
    const uint8_t* const window = t.window;
    const size_t n = t.n;
    const uint8_t* const rows_in[2] = {src[0], kRows == 2 ? src[1] : src[0]};
    int16_t* const rows_out[2] = {out[0], kRows == 2 ? out[1] : out[0]};
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wpair + i));
        const bool fast = (window[i / 4] & window[i / 4 + 1]) != 0;
        for (int r = 0; r < kRows; ++r) {
            const uint8_t* s = rows_in[r];
            __m256i pairs;
            if (fast) {
                pairs = windowed(s, ofs, shuffle, i);
            } else {
                const int32_t* o = ofs + i;
                __m128i px = _mm_cvtsi32_si128(load_u32(s + o[0]));
                px = _mm_insert_epi32(px, load_u32(s + o[2]), 1);
                px = _mm_insert_epi32(px, load_u32(s + o[4]), 2);
                px = _mm_insert_epi32(px, load_u32(s + o[6]), 3);
                pairs = _mm256_shuffle_epi8(_mm256_cvtepu8_epi16(px), order);
            }
            _mm_storeu_si128(reinterpret_cast<__m128i*>(rows_out[r] + i), shift_pack(_mm256_madd_epi16(pairs, w)));
        }
    }
    return i;
}

size_t vresize_linear_avx2(const int16_t* h0, const int16_t* h1, int32_t b0, int32_t b1, uint8_t* d, size_t n) {
    const __m256i vb0 = _mm256_set1_epi16(int16_t(b0)), vb1 = _mm256_set1_epi16(int16_t(b1));
    const __m256i two = _mm256_set1_epi16(2);
    auto step = [&](size_t k) {
        const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(h0 + k));
        const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(h1 + k));
        const __m256i v = _mm256_add_epi16(_mm256_mulhi_epi16(a, vb0), _mm256_mulhi_epi16(b, vb1));
        return _mm256_srai_epi16(_mm256_add_epi16(v, two), 2);
    };
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        // packus works per 128-bit lane: put the four 8-byte groups back in order.
        const __m256i packed = _mm256_packus_epi16(step(i), step(i + 16));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), _mm256_permute4x64_epi64(packed, 0xD8));
    }
    if (i + 16 <= n) {  // one 16-element step in 128-bit registers, the same arithmetic
        const __m128i vb0h = _mm256_castsi256_si128(vb0), vb1h = _mm256_castsi256_si128(vb1);
        const __m128i twoh = _mm256_castsi256_si128(two);
        auto half = [&](size_t k) {
            const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h0 + k));
            const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h1 + k));
            const __m128i v = _mm_add_epi16(_mm_mulhi_epi16(a, vb0h), _mm_mulhi_epi16(b, vb1h));
            return _mm_srai_epi16(_mm_add_epi16(v, twoh), 2);
        };
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm_packus_epi16(half(i), half(i + 8)));
        i += 16;
    }
    return i;
}

size_t hresize_linear_avx2(const uint8_t* const* src, int rows, const HTables& t, int16_t* const* out) {
    if (t.cn == 1) return rows == 2 ? hresize_c1<2>(src, t, out) : hresize_c1<1>(src, t, out);
    if (t.cn == 2) return rows == 2 ? hresize_c2<2>(src, t, out) : hresize_c2<1>(src, t, out);
    return 0;
}

// The chroma row steps gain nothing from AVX2 (memory-bound): the baseline SSE2 ones.
constexpr Kernels kAvx2 = {"avx2",  hresize_linear_avx2, vresize_linear_avx2, nullptr, nullptr,
                           nullptr, interleave_row_sse2, spread_row_sse2};

}  // namespace

const Kernels* kernels_avx2() noexcept {
    return &kAvx2;
}

}  // namespace vpc
}  // namespace kes
#endif
