// fp16_x86.cpp — the F16C kernel table for kes_fp16_from_f32/kes_fp16_to_f32, returned by
// kernels_f16c(), which dispatch::pick_table calls only once kes_cpu_has(KES_CPU_F16C) (on other
// architectures, a stub).
//
// Compiled with -mf16c -mavx (sdk/CMakeLists.txt). Keep this file free of inline functions shared
// with other translation units (no <algorithm>, <vector>, ...): the linker may keep this file's
// AVX-encoded copy of such a function and run it on a CPU without AVX. Only intrinsics and memcpy.
#include "fp16_kernels.hpp"

#if KES_SIMD_X86

#include <immintrin.h>

#include <cstring>

namespace kes {
namespace fp16 {
namespace {

// imm8 = 0: round-to-nearest-even from the immediate, not MXCSR.RC (imm8 bit 2 clear).
#define KES_FP16_RNE _MM_FROUND_TO_NEAREST_INT

void from_f32_f16c(const float* src, uint16_t* dst, size_t count) noexcept {
    size_t i = 0;
    for (; i + 16 <= count; i += 16) {
        const __m128i a = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), KES_FP16_RNE);
        const __m128i b = _mm256_cvtps_ph(_mm256_loadu_ps(src + i + 8), KES_FP16_RNE);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), a);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i + 8), b);
    }
    if (i + 8 <= count) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), KES_FP16_RNE));
        i += 8;
    }
    if (i < count) {  // 1..7 left: through a zero-padded block, so tails use the same instruction
        float in[8] = {};
        uint16_t out[8];
        const size_t n = count - i;
        std::memcpy(in, src + i, n * sizeof(float));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_cvtps_ph(_mm256_loadu_ps(in), KES_FP16_RNE));
        std::memcpy(dst + i, out, n * sizeof(uint16_t));
    }
}

void to_f32_f16c(const uint16_t* src, float* dst, size_t count) noexcept {
    size_t i = 0;
    for (; i + 16 <= count; i += 16) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 8));
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(a));
        _mm256_storeu_ps(dst + i + 8, _mm256_cvtph_ps(b));
    }
    if (i + 8 <= count) {
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
        i += 8;
    }
    if (i < count) {
        uint16_t in[8] = {};
        float out[8];
        const size_t n = count - i;
        std::memcpy(in, src + i, n * sizeof(uint16_t));
        _mm256_storeu_ps(out, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in))));
        std::memcpy(dst + i, out, n * sizeof(float));
    }
}

#undef KES_FP16_RNE

const Kernels kF16c = {"f16c", from_f32_f16c, to_f32_f16c};

}  // namespace

const Kernels* kernels_f16c() noexcept {
    return &kF16c;
}

}  // namespace fp16
}  // namespace kes

#else

namespace kes {
namespace fp16 {
const Kernels* kernels_f16c() noexcept {
    return nullptr;
}
}  // namespace fp16
}  // namespace kes

#endif  // KES_SIMD_X86
