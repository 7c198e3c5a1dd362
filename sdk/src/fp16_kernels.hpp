// fp16_kernels.hpp — the fp16 ↔ fp32 kernels behind kes_fp16_* (kestrel/tensor.h): one table of
// function pointers per instruction set, chosen once on first use from kes_cpu_has() (so
// KES_CPU_DISABLE applies), as every SIMD choice in Kestrel is (docs/ARCHITECTURE.md "SIMD dispatch").
//
// Every kernel gives bit-identical results: IEEE 754 round-to-nearest-even, subnormals kept (no
// flush-to-zero), ±inf kept, and a NaN becomes a quiet NaN with the same sign and the top payload bits
// (what F16C's VCVTPS2PH/VCVTPH2PS and AArch64's FCVT do with the default FPCR). The scalar table is
// the reference: always built, always tested.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kes/cpu_dispatch.hpp"

namespace kes {
namespace fp16 {

// No <vector> or other library headers here: fp16_x86.cpp includes this file (see its header comment).

// Scalar reference (fp16.cpp), also the single-value kes_fp16_from_float/kes_fp16_to_float.
uint16_t from_f32_scalar(float value) noexcept;
float to_f32_scalar(uint16_t value) noexcept;
void from_f32_scalar(const float* src, uint16_t* dst, size_t count) noexcept;
void to_f32_scalar(const uint16_t* src, float* dst, size_t count) noexcept;

struct Kernels {
    const char* name;  // "scalar", "f16c" or "neon"
    void (*from_f32)(const float* src, uint16_t* dst, size_t count) noexcept;
    void (*to_f32)(const uint16_t* src, float* dst, size_t count) noexcept;
};

const Kernels& kernels_scalar() noexcept;
// nullptr when this build or this CPU lacks the instruction set.
const Kernels* kernels_f16c() noexcept;  // fp16_x86.cpp, compiled with -mf16c -mavx
const Kernels* kernels_neon() noexcept;  // fp16.cpp: NEON conversions are part of baseline armv8-a

// The fastest table this CPU runs (decided once, thread-safe): what kes_fp16_from_f32/_to_f32 call.
const Kernels& kernels_active() noexcept;

}  // namespace fp16
}  // namespace kes
