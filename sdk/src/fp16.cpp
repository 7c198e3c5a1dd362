// fp16.cpp — IEEE 754 binary16 ↔ binary32 conversion (kes_fp16_*, kestrel/tensor.h): the scalar
// reference, the NEON kernel table for aarch64, and the run-time choice of a table (fp16_kernels.hpp;
// the F16C table is in fp16_x86.cpp).
//
// The scalar code is integer-only, so it does not depend on the FPU's rounding mode or
// flush-to-zero/denormals-are-zero settings and gives the same bits everywhere.
#include <cstring>
#include <initializer_list>

#include "fp16_kernels.hpp"
#include "kestrel/cpu.h"
#include "kestrel/tensor.h"

#if KES_SIMD_ARM
#include <arm_neon.h>
#endif

namespace kes {
namespace fp16 {

uint16_t from_f32_scalar(float value) noexcept {
    uint32_t x;
    std::memcpy(&x, &value, sizeof x);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t ax = x & 0x7fffffffu;

    if (ax >= 0x7f800000u) {  // inf, NaN
        if (ax == 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u);
        // Quiet NaN, sign and top 9 payload bits kept, as VCVTPS2PH and FCVT do.
        return static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    }
    // 65520 = 65504 + half an ulp: the tie rounds to even, which is the next binade, i.e. inf.
    if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);

    if (ax >= 0x38800000u) {  // ≥ 2^-14: normal half. Rebias the exponent by 127 - 15 = 112.
        const uint32_t v = ax - 0x38000000u;
        uint32_t h = v >> 13;
        const uint32_t rest = v & 0x1fffu;
        // A mantissa carry propagates into the exponent, which is exactly the right result.
        if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
        return static_cast<uint16_t>(sign | h);
    }
    // Below 2^-14: a subnormal half m·2^-24. Under 2^-25 (half the smallest subnormal, ties to 0 as
    // even) everything rounds to zero.
    if (ax < 0x33000000u) return static_cast<uint16_t>(sign);
    const uint32_t e = ax >> 23;                      // 102..112
    const uint32_t m = (ax & 0x7fffffu) | 0x800000u;  // 24-bit significand
    const uint32_t shift = 126 - e;                   // 14..24
    uint32_t h = m >> shift;
    const uint32_t rest = m & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (h & 1u))) ++h;  // may carry to 0x400, the smallest normal
    return static_cast<uint16_t>(sign | h);
}

float to_f32_scalar(uint16_t value) noexcept {
    const uint32_t sign = static_cast<uint32_t>(value & 0x8000u) << 16;
    const uint32_t e = (value >> 10) & 0x1fu;
    uint32_t m = value & 0x3ffu;
    uint32_t x;
    if (e == 0x1f) {
        // inf, or NaN made quiet (VCVTPH2PS/FCVT set the quiet bit of a signalling NaN).
        x = sign | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0u);
    } else if (e != 0) {
        x = sign | ((e + 112) << 23) | (m << 13);
    } else if (m == 0) {
        x = sign;
    } else {  // subnormal m·2^-24: normalise so bit 10 is the implicit one
        const uint32_t shift = static_cast<uint32_t>(__builtin_clz(m)) - 21;  // 1..10
        m = (m << shift) & 0x3ffu;
        x = sign | ((113 - shift) << 23) | (m << 13);
    }
    float f;
    std::memcpy(&f, &x, sizeof f);
    return f;
}

void from_f32_scalar(const float* src, uint16_t* dst, size_t count) noexcept {
    for (size_t i = 0; i < count; ++i) dst[i] = from_f32_scalar(src[i]);
}

void to_f32_scalar(const uint16_t* src, float* dst, size_t count) noexcept {
    for (size_t i = 0; i < count; ++i) dst[i] = to_f32_scalar(src[i]);
}

namespace {
const Kernels kScalar = {"scalar", from_f32_scalar, to_f32_scalar};
}  // namespace

#if KES_SIMD_ARM
namespace {
// FCVTN/FCVTL follow FPCR: round-to-nearest-even and no flush-to-zero under Linux's default FPCR.
void from_f32_neon(const float* src, uint16_t* dst, size_t count) noexcept {
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        const float16x4_t lo = vcvt_f16_f32(vld1q_f32(src + i));
        const float16x4_t hi = vcvt_f16_f32(vld1q_f32(src + i + 4));
        vst1q_u16(dst + i, vreinterpretq_u16_f16(vcombine_f16(lo, hi)));
    }
    if (i < count) {  // 1..7 left: through a zero-padded block, so tails use the same instruction
        float in[8] = {};
        uint16_t out[8];
        const size_t n = count - i;
        std::memcpy(in, src + i, n * sizeof(float));
        vst1_u16(out, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(in))));
        vst1_u16(out + 4, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(in + 4))));
        std::memcpy(dst + i, out, n * sizeof(uint16_t));
    }
}

void to_f32_neon(const uint16_t* src, float* dst, size_t count) noexcept {
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(src + i));
        vst1q_f32(dst + i, vcvt_f32_f16(vget_low_f16(h)));
        vst1q_f32(dst + i + 4, vcvt_f32_f16(vget_high_f16(h)));
    }
    if (i < count) {
        uint16_t in[8] = {};
        float out[8];
        const size_t n = count - i;
        std::memcpy(in, src + i, n * sizeof(uint16_t));
        const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(in));
        vst1q_f32(out, vcvt_f32_f16(vget_low_f16(h)));
        vst1q_f32(out + 4, vcvt_f32_f16(vget_high_f16(h)));
        std::memcpy(dst + i, out, n * sizeof(float));
    }
}

const Kernels kNeon = {"neon", from_f32_neon, to_f32_neon};
}  // namespace

const Kernels* kernels_neon() noexcept {
    return &kNeon;
}
#else
const Kernels* kernels_neon() noexcept {
    return nullptr;
}
#endif

const Kernels& kernels_scalar() noexcept {
    return kScalar;
}

namespace {
constexpr dispatch::Variant<Kernels> kVariants[] = {
    {KES_CPU_F16C, kernels_f16c},  // F16C is reported only with the AVX state enabled (-mavx)
    {KES_CPU_NEON, kernels_neon},
};
}  // namespace

const Kernels& kernels_active() noexcept {
    static const Kernels& chosen = dispatch::pick_table(kVariants, kScalar);
    return chosen;
}

}  // namespace fp16
}  // namespace kes

extern "C" {

// Bulk calls: nothing to check (count 0 is a no-op; NULL with count > 0 is the caller's bug, as for
// memcpy), so no kes::guard; the kernels are noexcept.
void kes_fp16_from_f32(const float* src, uint16_t* dst, size_t count) {
    if (count == 0) return;
    kes::fp16::kernels_active().from_f32(src, dst, count);
}

void kes_fp16_to_f32(const uint16_t* src, float* dst, size_t count) {
    if (count == 0) return;
    kes::fp16::kernels_active().to_f32(src, dst, count);
}

const char* kes_fp16_kernels_name(void) {
    return kes::fp16::kernels_active().name;
}

// Single values take the scalar path: a call through the dispatch table would cost more than the
// conversion, and every kernel gives the same bits.
uint16_t kes_fp16_from_float(float value) {
    return kes::fp16::from_f32_scalar(value);
}

float kes_fp16_to_float(uint16_t value) {
    return kes::fp16::to_f32_scalar(value);
}

}  // extern "C"
