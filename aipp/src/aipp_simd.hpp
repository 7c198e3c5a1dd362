// aipp_simd.hpp — the row kernels behind aipp_kernels.cpp's fast path: one table of function pointers
// per instruction set, chosen once on first use from kes_cpu_has() (so KES_CPU_DISABLE applies), as
// every SIMD choice in Kestrel is (docs/ARCHITECTURE.md "SIMD dispatch").
//
// Plain pointers and integers only: the SIMD files include nothing else, so no inline function shared
// with other translation units is ever compiled with their ISA flags (see sdk/src/fp16_x86.cpp).
//
// Each kernel does the leading part of a row and returns how many elements it did; the caller finishes
// the row with its scalar code (the per-channel DTC tables), which is also the whole scalar table: its
// kernels do nothing. Every table gives the bits of run_rows_scalar (tests compare them byte for byte).
#pragma once

#include <cstdint>

namespace kes {
namespace aipp {

struct Kernels {
    const char* name;  // "scalar", "avx2" or "neon"
    // CSC of BOARD-RULES §AIPP-order over one YUV420SP row: yrow and uvrow point at the first cropped pixel (an even
    // column), m9/ib/ob are the registers. Writes out0..out2[0..n) for the largest n ≤ w that is a
    // multiple of the vector width and returns n.
    uint32_t (*yuv420sp_csc_row)(const uint8_t* yrow, const uint8_t* uvrow, uint32_t w, int swap_uv, const int32_t* m9,
                                 const int32_t* ib, const int32_t* ob, uint8_t* out0, uint8_t* out1,
                                 uint8_t* out2) noexcept;
    // Float-mode DTC of BOARD-RULES §AIPP-order into contiguous f32: dst[i] = ((src[i] − mean) − min) × var, with the
    // same three IEEE operations as the reference (no FMA), so the bits match.
    uint32_t (*dtc_row_f32)(const uint8_t* src, uint32_t n, float mean, float min, float var, float* dst) noexcept;
    // The same into fp16 bits: float mode rounds the float result once; board_exact (min and var already
    // fp16 values) rounds (x − mean − min) and the product, as run_rows_scalar does.
    uint32_t (*dtc_row_f16)(const uint8_t* src, uint32_t n, float mean, float min, float var, int board_exact,
                            uint16_t* dst) noexcept;
};

const Kernels& kernels_scalar() noexcept;  // aipp_kernels.cpp
// nullptr when this build or this CPU lacks the instruction set.
const Kernels* kernels_avx2() noexcept;  // aipp_avx2.cpp: AVX2 + FMA + F16C
const Kernels* kernels_neon() noexcept;  // aipp_neon.cpp: armv8-a baseline
// The fastest table this CPU runs (decided once, thread-safe).
const Kernels& kernels_active() noexcept;

}  // namespace aipp
}  // namespace kes
