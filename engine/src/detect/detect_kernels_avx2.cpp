// detect_kernels_avx2.cpp — the detect kernels with AVX2 (compiled with -mavx2 -ffp-contract=off only,
// chosen at run time by dispatch::pick_table once kes_cpu_has() confirms AVX2; a stub on other architectures).
#include "detect_kernels.hpp"
#include "kes/cpu_dispatch.hpp"

#if KES_SIMD_X86
#include <immintrin.h>

namespace kes {
namespace detect {
namespace {

// The scalar reference over [begin, count), for the tails and the layouts without a vector path.
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

size_t filter_avx2(const float* s, size_t count, size_t anchor_stride, size_t class_stride, size_t classes,
                   float threshold, uint32_t* idx) {
    if (classes == 0) return 0;
    const __m256 t = _mm256_set1_ps(threshold);
    size_t n = 0;
    if (anchor_stride == 1) {
        // Planar ([C, N] or one class): eight anchors per vector, OR of the compares over the classes.
        size_t a = 0;
        for (; a + 8 <= count; a += 8) {
            __m256 hit = _mm256_cmp_ps(_mm256_loadu_ps(s + a), t, _CMP_GE_OQ);
            for (size_t c = 1; c < classes; ++c)
                hit = _mm256_or_ps(hit, _mm256_cmp_ps(_mm256_loadu_ps(s + c * class_stride + a), t, _CMP_GE_OQ));
            unsigned m = static_cast<unsigned>(_mm256_movemask_ps(hit));
            while (m) {
                idx[n++] = static_cast<uint32_t>(a + static_cast<size_t>(__builtin_ctz(m)));
                m &= m - 1;
            }
        }
        return n + filter_tail(s, a, count, anchor_stride, class_stride, classes, threshold, idx + n);
    }
    if (class_stride == 1 && classes >= 8) {
        // Interleaved ([N, C]): one anchor's classes eight at a time, stopping at the first hit.
        for (size_t a = 0; a < count; ++a) {
            const float* row = s + a * anchor_stride;
            bool pass = false;
            size_t c = 0;
            for (; c + 8 <= classes && !pass; c += 8)
                pass = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(row + c), t, _CMP_GE_OQ)) != 0;
            for (; c < classes && !pass; ++c) pass = row[c] >= threshold;
            if (pass) idx[n++] = static_cast<uint32_t>(a);
        }
        return n;
    }
    return filter_tail(s, 0, count, anchor_stride, class_stride, classes, threshold, idx);
}

size_t suppress_avx2(const BoxesSoA& s, size_t begin, size_t end, const float box[4], float barea, float threshold,
                     uint32_t* alive, uint32_t* hits) {
    const __m256 bx0 = _mm256_set1_ps(box[0]), by0 = _mm256_set1_ps(box[1]);
    const __m256 bx1 = _mm256_set1_ps(box[2]), by1 = _mm256_set1_ps(box[3]);
    const __m256 ba = _mm256_set1_ps(barea), t = _mm256_set1_ps(threshold), zero = _mm256_setzero_ps();
    size_t n = 0, j = begin;
    for (; j + 8 <= end; j += 8) {
        const __m256i al = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(alive + j));
        if (_mm256_testz_si256(al, al)) continue;
        // max_ps(a, b) is a > b ? a : b and min_ps(a, b) is a < b ? a : b: iou_above's selects exactly.
        const __m256 lx = _mm256_max_ps(_mm256_loadu_ps(s.x0 + j), bx0);
        const __m256 hx = _mm256_min_ps(_mm256_loadu_ps(s.x1 + j), bx1);
        const __m256 ly = _mm256_max_ps(_mm256_loadu_ps(s.y0 + j), by0);
        const __m256 hy = _mm256_min_ps(_mm256_loadu_ps(s.y1 + j), by1);
        const __m256 iw = _mm256_max_ps(_mm256_sub_ps(hx, lx), zero);
        const __m256 ih = _mm256_max_ps(_mm256_sub_ps(hy, ly), zero);
        const __m256 inter = _mm256_mul_ps(iw, ih);
        const __m256 uni = _mm256_sub_ps(_mm256_add_ps(_mm256_loadu_ps(s.area + j), ba), inter);
        const __m256 hit = _mm256_cmp_ps(inter, _mm256_mul_ps(t, uni), _CMP_GT_OQ);
        const __m256i h = _mm256_and_si256(_mm256_castps_si256(hit), al);
        unsigned m = static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(h)));
        if (!m) continue;
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(alive + j), _mm256_andnot_si256(h, al));
        while (m) {
            hits[n++] = static_cast<uint32_t>(j + static_cast<size_t>(__builtin_ctz(m)));
            m &= m - 1;
        }
    }
    for (; j < end; ++j) {
        if (alive[j] && iou_above(s.x0[j], s.y0[j], s.x1[j], s.y1[j], s.area[j], box, barea, threshold)) {
            alive[j] = 0;
            hits[n++] = static_cast<uint32_t>(j);
        }
    }
    return n;
}

const Kernels kAvx2 = {"avx2", filter_avx2, suppress_avx2};

}  // namespace

const Kernels* kernels_avx2() {
    return &kAvx2;
}

}  // namespace detect
}  // namespace kes

#else

namespace kes {
namespace detect {
const Kernels* kernels_avx2() {
    return nullptr;
}
}  // namespace detect
}  // namespace kes

#endif
