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

}  // namespace

const Microkernels* microkernels_neon() {
    // Built on first call, which dispatch::pick_table makes only on a CPU with these instructions: as a
    // namespace-scope object its initialiser ran ISA code at load time, before any check (SIGILL).
    // 6 × 16 tile: 24 accumulators + 4 weight vectors + broadcasts of the 32 q registers.
    static const Microkernels table = impl::make_table<Neon, 6, 4, 4>("neon");
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
