// aipp_neon.cpp — the NEON row-kernel table for aarch64 (the boards' CPU), the twin of aipp_avx2.cpp
// (on other architectures, a stub).
//
// NEON is part of armv8-a, so no flags; the table is still chosen through kes_cpu_has() (KES_CPU_DISABLE). Same
// exactness rules as the AVX2 file: 32-bit integer products for CSC, separate sub/sub/mul for the DTC (the build does
// not contract to FMA: ISO C++ mode), so the bits match run_rows_scalar.
#include "aipp_simd.hpp"
#include "kes/cpu_dispatch.hpp"

#if KES_SIMD_ARM

#include <arm_neon.h>

namespace kes {
namespace aipp {
namespace {

uint32_t yuv420sp_csc_row_neon(const uint8_t* yrow, const uint8_t* uvrow, uint32_t w, int swap_uv, const int32_t* m9,
                               const int32_t* ib, const int32_t* ob, uint8_t* out0, uint8_t* out1,
                               uint8_t* out2) noexcept {
    uint8_t* out[3] = {out0, out1, out2};
    const int32x4_t zero = vdupq_n_s32(0), max = vdupq_n_s32(255);
    uint32_t x = 0;
    for (; x + 8 <= w; x += 8) {
        const int16x8_t y16 = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(yrow + x)));
        // 4 chroma pairs in exactly 8 bytes (no read past the row); vuzp splits first/second bytes.
        const uint8x8_t raw = vld1_u8(uvrow + x);
        const uint8x8x2_t uv = vuzp_u8(raw, raw);
        uint8x8_t u8 = swap_uv ? uv.val[1] : uv.val[0];
        uint8x8_t v8 = swap_uv ? uv.val[0] : uv.val[1];
        u8 = vzip_u8(u8, u8).val[0];  // u0 u0 u1 u1 u2 u2 u3 u3
        v8 = vzip_u8(v8, v8).val[0];
        const int16x8_t u16 = vreinterpretq_s16_u16(vmovl_u8(u8)), v16 = vreinterpretq_s16_u16(vmovl_u8(v8));
        const int32x4_t yl = vsubq_s32(vmovl_s16(vget_low_s16(y16)), vdupq_n_s32(ib[0]));
        const int32x4_t yh = vsubq_s32(vmovl_s16(vget_high_s16(y16)), vdupq_n_s32(ib[0]));
        const int32x4_t ul = vsubq_s32(vmovl_s16(vget_low_s16(u16)), vdupq_n_s32(ib[1]));
        const int32x4_t uh = vsubq_s32(vmovl_s16(vget_high_s16(u16)), vdupq_n_s32(ib[1]));
        const int32x4_t vl = vsubq_s32(vmovl_s16(vget_low_s16(v16)), vdupq_n_s32(ib[2]));
        const int32x4_t vh = vsubq_s32(vmovl_s16(vget_high_s16(v16)), vdupq_n_s32(ib[2]));
        for (int i = 0; i < 3; ++i) {
            const int32x4_t m0 = vdupq_n_s32(m9[3 * i]), m1 = vdupq_n_s32(m9[3 * i + 1]),
                            m2 = vdupq_n_s32(m9[3 * i + 2]);
            const int32x4_t o = vdupq_n_s32(ob[i]);
            int32x4_t lo = vmlaq_s32(vmlaq_s32(vmulq_s32(m0, yl), m1, ul), m2, vl);
            int32x4_t hi = vmlaq_s32(vmlaq_s32(vmulq_s32(m0, yh), m1, uh), m2, vh);
            lo = vminq_s32(vmaxq_s32(vaddq_s32(vshrq_n_s32(lo, 8), o), zero), max);  // arithmetic shift
            hi = vminq_s32(vmaxq_s32(vaddq_s32(vshrq_n_s32(hi, 8), o), zero), max);
            const uint16x8_t n16 = vcombine_u16(vqmovun_s32(lo), vqmovun_s32(hi));
            vst1_u8(out[i] + x, vqmovn_u16(n16));
        }
    }
    return x;
}

uint32_t dtc_row_f32_neon(const uint8_t* src, uint32_t n, float mean, float min, float var, float* dst) noexcept {
    const float32x4_t vm = vdupq_n_f32(mean), vn = vdupq_n_f32(min), vv = vdupq_n_f32(var);
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const uint16x8_t x16 = vmovl_u8(vld1_u8(src + i));
        const float32x4_t a = vcvtq_f32_u32(vmovl_u16(vget_low_u16(x16)));
        const float32x4_t b = vcvtq_f32_u32(vmovl_u16(vget_high_u16(x16)));
        vst1q_f32(dst + i, vmulq_f32(vsubq_f32(vsubq_f32(a, vm), vn), vv));
        vst1q_f32(dst + i + 4, vmulq_f32(vsubq_f32(vsubq_f32(b, vm), vn), vv));
    }
    return i;
}

uint32_t dtc_row_f16_neon(const uint8_t* src, uint32_t n, float mean, float min, float var, int board_exact,
                          uint16_t* dst) noexcept {
    const float32x4_t vm = vdupq_n_f32(mean), vn = vdupq_n_f32(min), vv = vdupq_n_f32(var);
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const uint16x8_t x16 = vmovl_u8(vld1_u8(src + i));
        float32x4_t d[2] = {vcvtq_f32_u32(vmovl_u16(vget_low_u16(x16))), vcvtq_f32_u32(vmovl_u16(vget_high_u16(x16)))};
        for (int h = 0; h < 2; ++h) {
            d[h] = vsubq_f32(vsubq_f32(d[h], vm), vn);
            // FCVT rounds by FPCR, round-to-nearest-even by default: the bits of kes_fp16_from_float.
            if (board_exact) d[h] = vcvt_f32_f16(vcvt_f16_f32(d[h]));
            vst1_u16(dst + i + 4 * h, vreinterpret_u16_f16(vcvt_f16_f32(vmulq_f32(d[h], vv))));
        }
    }
    return i;
}

const Kernels kNeon = {"neon", yuv420sp_csc_row_neon, dtc_row_f32_neon, dtc_row_f16_neon};

}  // namespace

const Kernels* kernels_neon() noexcept {
    return &kNeon;
}

}  // namespace aipp
}  // namespace kes

#else

namespace kes {
namespace aipp {
const Kernels* kernels_neon() noexcept {
    return nullptr;
}
}  // namespace aipp
}  // namespace kes

#endif  // KES_SIMD_ARM
