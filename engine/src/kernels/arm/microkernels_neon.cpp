// microkernels_neon.cpp — the microkernel table for NEON (ASIMD, baseline armv8-a); a stub on other
// architectures. No dotprod or fp16 arithmetic here: whether the boards' cores have them is unconfirmed
// (BOARD-RULES §CPU), so those would come as separate tables behind getauxval().
#include "../common/microkernels.hpp"
#include "kes/cpu_dispatch.hpp"

#if KES_SIMD_ARM
#include <arm_neon.h>

#include "../common/microkernel_impl.hpp"

namespace kes {
namespace kernels {
namespace {

struct Neon {
    using reg = float32x4_t;
    static constexpr size_t width = 4;
    static reg load_partial(const float* p, size_t n) { return impl::load_partial_by_copy<Neon>(p, n); }
    static void store_partial(float* p, size_t n, reg x) { impl::store_partial_by_copy<Neon>(p, n, x); }
    static reg load(const float* p) { return vld1q_f32(p); }
    static void store(float* p, reg x) { vst1q_f32(p, x); }
    static reg set1(float x) { return vdupq_n_f32(x); }
    static reg fma(reg a, reg b, reg c) { return vfmaq_f32(c, a, b); }
    static reg add(reg a, reg b) { return vaddq_f32(a, b); }
    static reg mul(reg a, reg b) { return vmulq_f32(a, b); }
    // fmin/fmax semantics would drop a NaN; compare-and-select keeps it like the x86 tables.
    static reg min(reg a, reg b) { return vbslq_f32(vcltq_f32(b, a), b, a); }
    static reg max(reg a, reg b) { return vbslq_f32(vcgtq_f32(b, a), b, a); }
    static reg sub(reg a, reg b) { return vsubq_f32(a, b); }
    static reg div(reg a, reg b) { return vdivq_f32(a, b); }
    static reg round(reg x) { return vrndnq_f32(x); }
    static reg pow2i(reg n) {
        const int32x4_t e = vaddq_s32(vcvtnq_s32_f32(n), vdupq_n_s32(127));
        return vreinterpretq_f32_s32(vshlq_n_s32(e, 23));
    }
    static float hsum(reg x) { return vaddvq_f32(x); }
    static float hmax(reg x) { return vmaxvq_f32(x); }
};

// Microkernels::qgemm, 8 output channels × 8 pixels, k one at a time: smlal/smlal2 by a lane of the 8
// channels' weights into 16 int32x4 accumulators (exact: int16 products widened before they are summed).
constexpr int kQMr = 8, kQNr = 8, kQKg = 1;

template <int L>
inline void qmac_lane(int32x4_t* acc, int16x8_t x, int16x8_t w) {
    acc[2 * L] = vmlal_laneq_s16(acc[2 * L], vget_low_s16(x), w, L);
    acc[2 * L + 1] = vmlal_high_laneq_s16(acc[2 * L + 1], x, w, L);
}

// Requantizes 8 sums of one output channel and stores nc ≤ 8 bytes: ops/quant.hpp's rule, lane for lane
// (FCVTNS rounds half to even; FMAXNM takes the bound for a NaN product; the narrowing keeps low bytes).
inline void store_requantized(int32x4_t a, int32x4_t b, float multiplier, const QuantOut& q, uint8_t* y, size_t nc) {
    const float32x4_t m = vdupq_n_f32(multiplier), lo = vdupq_n_f32(q.lo), hi = vdupq_n_f32(q.hi);
    const int32x4_t zp = vdupq_n_s32(q.zero_point);
    const float32x4_t fa = vminq_f32(vmaxnmq_f32(vmulq_f32(vcvtq_f32_s32(a), m), lo), hi);
    const float32x4_t fb = vminq_f32(vmaxnmq_f32(vmulq_f32(vcvtq_f32_s32(b), m), lo), hi);
    const int32x4_t ia = vaddq_s32(vcvtnq_s32_f32(fa), zp), ib = vaddq_s32(vcvtnq_s32_f32(fb), zp);
    const uint8x8_t bytes = vreinterpret_u8_s8(vmovn_s16(vcombine_s16(vmovn_s32(ia), vmovn_s32(ib))));
    if (nc == 8) {
        vst1_u8(y, bytes);
    } else {
        uint8_t tmp[8];
        vst1_u8(tmp, bytes);
        __builtin_memcpy(y, tmp, nc);
    }
}

void qgemm_8x8(size_t mr, size_t nc, size_t kgroups, const int16_t* w, const int16_t* x, const int32_t* bias,
               const float* multiplier, const QuantOut& q, uint8_t* y, size_t y_stride) {
    int32x4_t acc[2 * kQMr];
#pragma GCC unroll 8
    for (int r = 0; r < kQMr; ++r) acc[2 * r] = acc[2 * r + 1] = vdupq_n_s32(static_cast<size_t>(r) < mr ? bias[r] : 0);
    for (size_t g = 0; g < kgroups; ++g, w += kQMr * kQKg, x += kQNr * kQKg) {
        const int16x8_t xv = vld1q_s16(x), wv = vld1q_s16(w);
        qmac_lane<0>(acc, xv, wv);
        qmac_lane<1>(acc, xv, wv);
        qmac_lane<2>(acc, xv, wv);
        qmac_lane<3>(acc, xv, wv);
        qmac_lane<4>(acc, xv, wv);
        qmac_lane<5>(acc, xv, wv);
        qmac_lane<6>(acc, xv, wv);
        qmac_lane<7>(acc, xv, wv);
    }
#pragma GCC unroll 8
    for (int r = 0; r < kQMr; ++r) {
        if (static_cast<size_t>(r) >= mr) break;
        store_requantized(acc[2 * r], acc[2 * r + 1], multiplier[r], q, y + static_cast<size_t>(r) * y_stride, nc);
    }
}

}  // namespace

const Microkernels* microkernels_neon() {
    // Built on first call, which dispatch::pick_table makes only on a CPU with these instructions: as a
    // namespace-scope object its initialiser ran ISA code at load time, before any check (SIGILL).
    // 6 × 16 tile: 24 accumulators + 4 weight vectors + broadcasts of the 32 q registers.
    // The int8 GEMM tile is this file's own (qgemm_8x8); the rest are the template's.
    static const Microkernels table = [] {
        Microkernels t = impl::make_table<Neon, 6, 4, 4>("neon");
        t.qgemm_mr = kQMr, t.qgemm_nr = kQNr, t.qgemm_kgroup = kQKg;
        t.qgemm = &qgemm_8x8;
        return t;
    }();
    return &table;
}

}  // namespace kernels
}  // namespace kes

#else

namespace kes {
namespace kernels {
const Microkernels* microkernels_neon() {
    return nullptr;
}
}  // namespace kernels
}  // namespace kes

#endif
