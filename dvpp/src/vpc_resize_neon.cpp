// The VPC's NEON kernel table (vpc_internal.hpp) for the boards' Cortex-A55/A73: the twins of
// vpc_resize_avx2.cpp plus the 2× area shortcut and nearest-neighbour rows (and vpc_color.cpp's row). Every lane does
// the scalar path's integer arithmetic with the same widths, so the results are identical bit for bit. NEON is part of
// armv8-a: no compiler flags; on other architectures this file compiles to nothing (vpc_resize.cpp has the
// kernels_neon() stub).
#include <cstring>

#include "kes/cpu_dispatch.hpp"
#include "vpc_internal.hpp"

#if KES_SIMD_ARM
#include <arm_neon.h>

namespace kes {
namespace vpc {
namespace {

// memcpy: the source offsets have any alignment; compilers turn these into single ldrh / ldr.
inline uint16_t load_u16(const uint8_t* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
}
inline uint32_t load_u32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

// Four elements as 16-bit sample pairs (a0 b0 a1 b1 ...) times their weight pairs: the exact 32-bit
// sums a·w0 + b·w1, as x86's pmaddwd forms them (vpaddq adds each product pair).
inline int32x4_t madd4(int16x8_t pairs, int16x8_t w) {
    return vpaddq_s32(vmull_s16(vget_low_s16(pairs), vget_low_s16(w)), vmull_high_s16(pairs, w));
}

// OpenCV's v_pack(sum >> 4) of 8 sums: a sum is at most 255 · 2048, so narrowing never clips.
inline int16x8_t shift_pack(int32x4_t lo, int32x4_t hi) {
    return vcombine_s16(vshrn_n_s32(lo, 4), vshrn_n_s32(hi, 4));
}

// The pairs of elements [4g, 4g + 4) from the 16 bytes at ofs[4g] (window[g] = 1).
inline int16x8_t windowed(const uint8_t* s, const int32_t* ofs, const uint8_t* shuffle, size_t i) {
    return vreinterpretq_s16_u8(vqtbl1q_u8(vld1q_u8(s + ofs[i]), vld1q_u8(shuffle + 4 * i)));
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
        const int16x8_t w_lo = vreinterpretq_s16_s32(vld1q_s32(wpair + i));
        const int16x8_t w_hi = vreinterpretq_s16_s32(vld1q_s32(wpair + i + 4));
        const bool fast = (window[i / 4] & window[i / 4 + 1]) != 0;
        for (int r = 0; r < kRows; ++r) {
            const uint8_t* s = rows_in[r];
            int16x8_t p_lo, p_hi;
            if (fast) {
                p_lo = windowed(s, ofs, shuffle, i);
                p_hi = windowed(s, ofs, shuffle, i + 4);
            } else {
                const int32_t* o = ofs + i;
                uint16x8_t p = vdupq_n_u16(load_u16(s + o[0]));
                p = vsetq_lane_u16(load_u16(s + o[1]), p, 1);
                p = vsetq_lane_u16(load_u16(s + o[2]), p, 2);
                p = vsetq_lane_u16(load_u16(s + o[3]), p, 3);
                p = vsetq_lane_u16(load_u16(s + o[4]), p, 4);
                p = vsetq_lane_u16(load_u16(s + o[5]), p, 5);
                p = vsetq_lane_u16(load_u16(s + o[6]), p, 6);
                p = vsetq_lane_u16(load_u16(s + o[7]), p, 7);
                const uint8x16_t bytes = vreinterpretq_u8_u16(p);
                p_lo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(bytes)));
                p_hi = vreinterpretq_s16_u16(vmovl_high_u8(bytes));
            }
            vst1q_s16(rows_out[r] + i, shift_pack(madd4(p_lo, w_lo), madd4(p_hi, w_hi)));
        }
    }
    return i;
}

template <int kRows>
size_t hresize_c2(const uint8_t* const* src, const HTables& t, int16_t* const* out) {
    // A pixel's 4 bytes are u0 v0 u1 v1: spread them to the 16-bit pairs (u0, u1), (v0, v1), two
    // pixels per half (index 0xFF reads as zero).
    static const uint8_t kSpread[32] = {0, 0xFF, 2,  0xFF, 1, 0xFF, 3,  0xFF, 4,  0xFF, 6,  0xFF, 5,  0xFF, 7,  0xFF,
                                        8, 0xFF, 10, 0xFF, 9, 0xFF, 11, 0xFF, 12, 0xFF, 14, 0xFF, 13, 0xFF, 15, 0xFF};
    const uint8x16_t spread_lo = vld1q_u8(kSpread), spread_hi = vld1q_u8(kSpread + 16);
    const int32_t* const ofs = t.ofs;
    const int32_t* const wpair = t.wpair;
    const uint8_t* const shuffle = t.shuffle;
    const uint8_t* const window = t.window;
    const size_t n = t.n;
    const uint8_t* const rows_in[2] = {src[0], kRows == 2 ? src[1] : src[0]};
    int16_t* const rows_out[2] = {out[0], kRows == 2 ? out[1] : out[0]};
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const int16x8_t w_lo = vreinterpretq_s16_s32(vld1q_s32(wpair + i));
        const int16x8_t w_hi = vreinterpretq_s16_s32(vld1q_s32(wpair + i + 4));
        const bool fast = (window[i / 4] & window[i / 4 + 1]) != 0;
        for (int r = 0; r < kRows; ++r) {
            const uint8_t* s = rows_in[r];
            int16x8_t p_lo, p_hi;
            if (fast) {
                p_lo = windowed(s, ofs, shuffle, i);
                p_hi = windowed(s, ofs, shuffle, i + 4);
            } else {
                // Elements 2k and 2k + 1 are the U and V of one pixel: ofs[2k + 1] = ofs[2k] + 1.
                const int32_t* o = ofs + i;
                uint32x4_t px = vdupq_n_u32(load_u32(s + o[0]));
                px = vsetq_lane_u32(load_u32(s + o[2]), px, 1);
                px = vsetq_lane_u32(load_u32(s + o[4]), px, 2);
                px = vsetq_lane_u32(load_u32(s + o[6]), px, 3);
                const uint8x16_t bytes = vreinterpretq_u8_u32(px);
                p_lo = vreinterpretq_s16_u8(vqtbl1q_u8(bytes, spread_lo));
                p_hi = vreinterpretq_s16_u8(vqtbl1q_u8(bytes, spread_hi));
            }
            vst1q_s16(rows_out[r] + i, shift_pack(madd4(p_lo, w_lo), madd4(p_hi, w_hi)));
        }
    }
    return i;
}

// (a · b) >> 16 per lane, x86's pmulhw: the high halves of the exact 32-bit products.
inline int16x8_t mul_hi(int16x8_t a, int16_t b) {
    const int32x4_t lo = vmull_n_s16(vget_low_s16(a), b), hi = vmull_high_n_s16(a, b);
    return vuzp2q_s16(vreinterpretq_s16_s32(lo), vreinterpretq_s16_s32(hi));
}

// The rounded mean of 2 × 2 pixels' sums for cn = 2: OpenCV's saturate_cast<uchar>(sum · 0.25f)
// rounds half to even, which is (sum + 1 + bit 2 of sum) >> 2.
inline uint8x8_t mean4_half_even(uint16x8_t sum) {
    const uint16x8_t odd = vandq_u16(vshrq_n_u16(sum, 2), vdupq_n_u16(1));
    return vshrn_n_u16(vaddq_u16(vaddq_u16(sum, vdupq_n_u16(1)), odd), 2);
}

size_t hresize_linear_neon(const uint8_t* const* src, int rows, const HTables& t, int16_t* const* out) {
    if (t.cn == 1) return rows == 2 ? hresize_c1<2>(src, t, out) : hresize_c1<1>(src, t, out);
    if (t.cn == 2) return rows == 2 ? hresize_c2<2>(src, t, out) : hresize_c2<1>(src, t, out);
    return 0;
}

size_t vresize_linear_neon(const int16_t* h0, const int16_t* h1, int32_t b0, int32_t b1, uint8_t* d, size_t n) {
    // h ≤ 32640 and 0 ≤ b ≤ 2048, so each high half is ≤ 1020 and their 16-bit sum cannot wrap;
    // vqrshrun is the scalar (v + 2) >> 2 saturated to 0..255.
    const int16_t wb0 = int16_t(b0), wb1 = int16_t(b1);
    auto step = [&](size_t k) {
        const int16x8_t v = vaddq_s16(mul_hi(vld1q_s16(h0 + k), wb0), mul_hi(vld1q_s16(h1 + k), wb1));
        return vqrshrun_n_s16(v, 2);
    };
    size_t i = 0;
    for (; i + 16 <= n; i += 16) vst1q_u8(d + i, vcombine_u8(step(i), step(i + 8)));
    if (i + 8 <= n) {
        vst1_u8(d + i, step(i));
        i += 8;
    }
    return i;
}

size_t area2_row_neon(const uint8_t* s0, const uint8_t* s1, uint32_t cn, uint8_t* d, size_t n) {
    size_t i = 0;
    if (cn == 1) {
        // vpaddl adds each pair of neighbours; vrshrn is (sum + 2) >> 2.
        for (; i + 16 <= n; i += 16) {
            const uint8_t* a = s0 + 2 * i;
            const uint8_t* b = s1 + 2 * i;
            const uint16x8_t lo = vpadalq_u8(vpaddlq_u8(vld1q_u8(a)), vld1q_u8(b));
            const uint16x8_t hi = vpadalq_u8(vpaddlq_u8(vld1q_u8(a + 16)), vld1q_u8(b + 16));
            vst1q_u8(d + i, vcombine_u8(vrshrn_n_u16(lo, 2), vrshrn_n_u16(hi, 2)));
        }
    } else if (cn == 2) {
        // 16 source pixels (32 bytes) per row: uzp splits the even and the odd pixels as 16-bit
        // units, so their bytes line up channel by channel.
        for (; i + 16 <= n; i += 16) {
            const uint8_t* a = s0 + 2 * i;
            const uint8_t* b = s1 + 2 * i;
            const uint16x8_t a0 = vreinterpretq_u16_u8(vld1q_u8(a)), a1 = vreinterpretq_u16_u8(vld1q_u8(a + 16));
            const uint16x8_t b0 = vreinterpretq_u16_u8(vld1q_u8(b)), b1 = vreinterpretq_u16_u8(vld1q_u8(b + 16));
            const uint8x16_t ae = vreinterpretq_u8_u16(vuzp1q_u16(a0, a1));
            const uint8x16_t ao = vreinterpretq_u8_u16(vuzp2q_u16(a0, a1));
            const uint8x16_t be = vreinterpretq_u8_u16(vuzp1q_u16(b0, b1));
            const uint8x16_t bo = vreinterpretq_u8_u16(vuzp2q_u16(b0, b1));
            const uint16x8_t lo =
                vaddq_u16(vaddl_u8(vget_low_u8(ae), vget_low_u8(ao)), vaddl_u8(vget_low_u8(be), vget_low_u8(bo)));
            const uint16x8_t hi = vaddq_u16(vaddl_high_u8(ae, ao), vaddl_high_u8(be, bo));
            vst1q_u8(d + i, vcombine_u8(mean4_half_even(lo), mean4_half_even(hi)));
        }
    }
    return i;
}

size_t nearest_row_neon(const uint8_t* s, const NearestTables& t, uint8_t* d) {
    const uint32_t* const src_byte = t.src_byte;
    for (size_t g = 0; g < t.groups; ++g) {
        uint8_t* out = d + 16 * g;
        if (t.window[g]) {
            const uint8_t* w = s + t.base[g];
            const uint8x16x2_t bytes = {{vld1q_u8(w), vld1q_u8(w + 16)}};
            vst1q_u8(out, vqtbl2q_u8(bytes, vld1q_u8(t.index + 16 * g)));
        } else {
            for (size_t k = 0; k < 16; ++k) out[k] = s[src_byte[16 * g + k]];
        }
    }
    return 16 * t.groups;
}

constexpr Kernels kNeon = {"neon",           hresize_linear_neon, vresize_linear_neon, area2_row_neon,
                           nearest_row_neon, yuv_to_rgb_row_neon, interleave_row_neon, nullptr};

}  // namespace

const Kernels* kernels_neon() noexcept {
    return &kNeon;
}

}  // namespace vpc
}  // namespace kes
#endif
