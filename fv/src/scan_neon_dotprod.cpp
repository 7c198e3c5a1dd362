// scan_neon_dotprod.cpp — int8 inner products with SDOT (armv8.2-a dot-product extension: 16 s8 × s8
// products summed in fours into 4 int32 lanes per instruction). Only this file is compiled with
// -march=armv8.2-a+dotprod; the table (the NEON one with these int8 kernels) is chosen at run time
// when HWCAP reports ASIMDDP (dispatch::pick_table with KES_CPU_ASIMDDP). A stub elsewhere.
// Exact integer sums, identical to the scalar kernel's (fv_kernels.hpp I8Query).
#include "fv_kernels.hpp"
#include "kes/cpu_dispatch.hpp"
#include "scan_batch.hpp"

#if KES_SIMD_ARM && defined(__ARM_FEATURE_DOTPROD)
#include <arm_neon.h>

namespace kes {
namespace fv {
namespace {

struct DotOps {
    static void sums(const I8Query& q, const int8_t* x, size_t dim, int32_t* hi_dot, int32_t* lo_dot) {
        int32x4_t ah0 = vdupq_n_s32(0), ah1 = ah0, al0 = ah0, al1 = ah0;
        size_t i = 0;
        for (; i + 32 <= dim; i += 32) {
            const int8x16_t x0 = vld1q_s8(x + i), x1 = vld1q_s8(x + i + 16);
            ah0 = vdotq_s32(ah0, x0, vld1q_s8(q.hi + i));
            ah1 = vdotq_s32(ah1, x1, vld1q_s8(q.hi + i + 16));
            al0 = vdotq_s32(al0, x0, vld1q_s8(q.lo + i));
            al1 = vdotq_s32(al1, x1, vld1q_s8(q.lo + i + 16));
        }
        for (; i + 16 <= dim; i += 16) {
            const int8x16_t x0 = vld1q_s8(x + i);
            ah0 = vdotq_s32(ah0, x0, vld1q_s8(q.hi + i));
            al0 = vdotq_s32(al0, x0, vld1q_s8(q.lo + i));
        }
        int32_t h = vaddvq_s32(vaddq_s32(ah0, ah1)), l = vaddvq_s32(vaddq_s32(al0, al1));
        for (; i < dim; ++i) {
            h += int32_t{q.hi[i]} * x[i];
            l += int32_t{q.lo[i]} * x[i];
        }
        *hi_dot = h;
        *lo_dot = l;
    }
};
using I8 = I8Batch<DotOps>;

}  // namespace

const Kernels* kernels_neon_dotprod() {
    // Built on first call (after dispatch::pick_table's check), from the base table of its family.
    static const Kernels* const table = []() -> const Kernels* {
        const Kernels* base = kernels_neon();
        if (!base) return nullptr;
        static Kernels t = *base;
        t.name = "neon_dotprod";
        t.dot_i8 = I8::dot_i8;
        t.dot4_i8 = I8::dot4_i8;
        return &t;
    }();
    return table;
}

}  // namespace fv
}  // namespace kes

#else

namespace kes {
namespace fv {
const Kernels* kernels_neon_dotprod() {
    return nullptr;
}
}  // namespace fv
}  // namespace kes

#endif
