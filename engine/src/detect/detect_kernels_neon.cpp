// detect_kernels_neon.cpp — the detect kernels with NEON (ASIMD, baseline armv8-a: no extra flags; a stub
// on other architectures).
#include "detect_kernels.hpp"
#include "kes/cpu_dispatch.hpp"

#if KES_SIMD_ARM
#include <arm_neon.h>

namespace kes {
namespace detect {
namespace {

size_t filter_tail(const float* s, size_t begin, size_t count, size_t anchor_stride, size_t class_stride,
                   size_t classes, float threshold, uint32_t* idx) {
    size_t n = 0;
    for (size_t a = begin; a < count; ++a) {
        const float* row = s + a * anchor_stride;
        for (size_t c = 0; c < classes; ++c) {
            if (row[c * class_stride] >= threshold) {
                idx[n++] = static_cast<uint32_t>(a);
                break;
            }
        }
    }
    return n;
}

size_t filter_neon(const float* s, size_t count, size_t anchor_stride, size_t class_stride, size_t classes,
                   float threshold, uint32_t* idx) {
    if (classes == 0) return 0;
    const float32x4_t t = vdupq_n_f32(threshold);
    size_t n = 0;
    if (anchor_stride == 1) {
        // Planar: eight anchors per step (two q registers), OR of the compares (vcge: NaN is false).
        size_t a = 0;
        for (; a + 8 <= count; a += 8) {
            uint32x4_t lo = vcgeq_f32(vld1q_f32(s + a), t), hi = vcgeq_f32(vld1q_f32(s + a + 4), t);
            for (size_t c = 1; c < classes; ++c) {
                const float* p = s + c * class_stride + a;
                lo = vorrq_u32(lo, vcgeq_f32(vld1q_f32(p), t));
                hi = vorrq_u32(hi, vcgeq_f32(vld1q_f32(p + 4), t));
            }
            if (vmaxvq_u32(vorrq_u32(lo, hi)) == 0) continue;
            uint32_t lanes[8];
            vst1q_u32(lanes, lo);
            vst1q_u32(lanes + 4, hi);
            for (size_t k = 0; k < 8; ++k)
                if (lanes[k]) idx[n++] = static_cast<uint32_t>(a + k);
        }
        return n + filter_tail(s, a, count, anchor_stride, class_stride, classes, threshold, idx + n);
    }
    if (class_stride == 1 && classes >= 4) {
        for (size_t a = 0; a < count; ++a) {
            const float* row = s + a * anchor_stride;
            bool pass = false;
            size_t c = 0;
            for (; c + 4 <= classes && !pass; c += 4) pass = vmaxvq_u32(vcgeq_f32(vld1q_f32(row + c), t)) != 0;
            for (; c < classes && !pass; ++c) pass = row[c] >= threshold;
            if (pass) idx[n++] = static_cast<uint32_t>(a);
        }
        return n;
    }
    return filter_tail(s, 0, count, anchor_stride, class_stride, classes, threshold, idx);
}

// a > b ? a : b and a < b ? a : b, as iou_above selects (vmaxq/vminq would differ on ±0).
inline float32x4_t max_sel(float32x4_t a, float32x4_t b) {
    return vbslq_f32(vcgtq_f32(a, b), a, b);
}
inline float32x4_t min_sel(float32x4_t a, float32x4_t b) {
    return vbslq_f32(vcltq_f32(a, b), a, b);
}

size_t suppress_neon(const BoxesSoA& s, size_t begin, size_t end, const float box[4], float barea, float threshold,
                     uint32_t* alive, uint32_t* hits) {
    const float32x4_t bx0 = vdupq_n_f32(box[0]), by0 = vdupq_n_f32(box[1]);
    const float32x4_t bx1 = vdupq_n_f32(box[2]), by1 = vdupq_n_f32(box[3]);
    const float32x4_t ba = vdupq_n_f32(barea), t = vdupq_n_f32(threshold), zero = vdupq_n_f32(0.0f);
    size_t n = 0, j = begin;
    for (; j + 4 <= end; j += 4) {
        const uint32x4_t al = vld1q_u32(alive + j);
        if (vmaxvq_u32(al) == 0) continue;
        const float32x4_t lx = max_sel(vld1q_f32(s.x0 + j), bx0), hx = min_sel(vld1q_f32(s.x1 + j), bx1);
        const float32x4_t ly = max_sel(vld1q_f32(s.y0 + j), by0), hy = min_sel(vld1q_f32(s.y1 + j), by1);
        const float32x4_t iw = max_sel(vsubq_f32(hx, lx), zero), ih = max_sel(vsubq_f32(hy, ly), zero);
        const float32x4_t inter = vmulq_f32(iw, ih);
        const float32x4_t uni = vsubq_f32(vaddq_f32(vld1q_f32(s.area + j), ba), inter);
        const uint32x4_t h = vandq_u32(vcgtq_f32(inter, vmulq_f32(t, uni)), al);
        if (vmaxvq_u32(h) == 0) continue;
        vst1q_u32(alive + j, vbicq_u32(al, h));
        uint32_t lanes[4];
        vst1q_u32(lanes, h);
        for (size_t k = 0; k < 4; ++k)
            if (lanes[k]) hits[n++] = static_cast<uint32_t>(j + k);
    }
    for (; j < end; ++j) {
        if (alive[j] && iou_above(s.x0[j], s.y0[j], s.x1[j], s.y1[j], s.area[j], box, barea, threshold)) {
            alive[j] = 0;
            hits[n++] = static_cast<uint32_t>(j);
        }
    }
    return n;
}

const Kernels kNeon = {"neon", filter_neon, suppress_neon};

}  // namespace

const Kernels* kernels_neon() {
    return &kNeon;
}

}  // namespace detect
}  // namespace kes

#else

namespace kes {
namespace detect {
const Kernels* kernels_neon() {
    return nullptr;
}
}  // namespace detect
}  // namespace kes

#endif
