// fp16_kernels.hpp — the fp16 ↔ fp32 kernels behind kes_fp16_* (kestrel/tensor.h), for fp16.cpp's
// run-time dispatch and for tests that want to call one path directly.
//
// Every kernel gives bit-identical results: IEEE 754 round-to-nearest-even, subnormals kept (no
// flush-to-zero), ±inf kept, and a NaN becomes a quiet NaN with the same sign and the top payload bits
// (what F16C's VCVTPS2PH/VCVTPH2PS and AArch64's FCVT do with the default FPCR).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kes/cpu_dispatch.hpp"

namespace kes {
namespace fp16 {

// Scalar reference (fp16.cpp): always built, always tested.
uint16_t from_f32_scalar(float value) noexcept;
float to_f32_scalar(uint16_t value) noexcept;
void from_f32_scalar(const float* src, uint16_t* dst, size_t count) noexcept;
void to_f32_scalar(const uint16_t* src, float* dst, size_t count) noexcept;

#if KES_SIMD_X86
// fp16_x86.cpp, compiled with -mf16c -mavx: call only when kes_cpu_has(KES_CPU_F16C).
void from_f32_f16c(const float* src, uint16_t* dst, size_t count) noexcept;
void to_f32_f16c(const uint16_t* src, float* dst, size_t count) noexcept;
#endif

#if KES_SIMD_ARM
// fp16.cpp: NEON conversions are part of baseline armv8-a.
void from_f32_neon(const float* src, uint16_t* dst, size_t count) noexcept;
void to_f32_neon(const uint16_t* src, float* dst, size_t count) noexcept;
#endif

// The kernel pair kes_fp16_from_f32/kes_fp16_to_f32 use, chosen on first call; name is "scalar",
// "f16c" or "neon".
struct Kernels {
    void (*from_f32)(const float*, uint16_t*, size_t) noexcept;
    void (*to_f32)(const uint16_t*, float*, size_t) noexcept;
    const char* name;
};
const Kernels& active_kernels() noexcept;

}  // namespace fp16
}  // namespace kes
