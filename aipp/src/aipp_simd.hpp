// aipp_simd.hpp — the SIMD row kernels behind aipp_kernels.cpp's dispatch. Plain pointers and
// integers only: the SIMD files include nothing else, so no inline function shared with other
// translation units is ever compiled with their ISA flags (see sdk/src/fp16_x86.cpp).
#pragma once

#include <cstdint>

namespace kes {
namespace aipp {

// CSC of spec §3.2 over one YUV420SP row: yrow and uvrow point at the first cropped pixel (an even
// column), m/ib/ob are the registers. Writes out0..out2[0..n) for the largest n ≤ w that is a
// multiple of 8 and returns n; the caller finishes the tail with the scalar code.
uint32_t yuv420sp_csc_row_avx2(const uint8_t* yrow, const uint8_t* uvrow, uint32_t w, int swap_uv, const int32_t* m9,
                               const int32_t* ib, const int32_t* ob, uint8_t* out0, uint8_t* out1,
                               uint8_t* out2) noexcept;

// Float-mode DTC of spec §3.2 into contiguous f32: dst[i] = ((src[i] − mean) − min) × var, with the
// same three IEEE operations as the reference (no FMA), so the bits match. Returns elements done.
uint32_t dtc_row_f32_avx2(const uint8_t* src, uint32_t n, float mean, float min, float var, float* dst) noexcept;

}  // namespace aipp
}  // namespace kes

namespace kes {
namespace aipp {

// As dtc_row_f32_avx2 into fp16 bits: float mode rounds the float result once; board_exact (min and
// var already fp16 values) rounds (x − mean − min) and the product, as run_rows_scalar does.
uint32_t dtc_row_f16_avx2(const uint8_t* src, uint32_t n, float mean, float min, float var, int board_exact,
                          uint16_t* dst) noexcept;

// NEON twins of the AVX2 kernels (aarch64 baseline, no run-time check needed).
uint32_t yuv420sp_csc_row_neon(const uint8_t* yrow, const uint8_t* uvrow, uint32_t w, int swap_uv, const int32_t* m9,
                               const int32_t* ib, const int32_t* ob, uint8_t* out0, uint8_t* out1,
                               uint8_t* out2) noexcept;
uint32_t dtc_row_f32_neon(const uint8_t* src, uint32_t n, float mean, float min, float var, float* dst) noexcept;
uint32_t dtc_row_f16_neon(const uint8_t* src, uint32_t n, float mean, float min, float var, int board_exact,
                          uint16_t* dst) noexcept;

}  // namespace aipp
}  // namespace kes
