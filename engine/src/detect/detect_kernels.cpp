// detect_kernels.cpp — the scalar (reference) detect kernels and the run-time choice among the tables.
#include "detect_kernels.hpp"

#include "kes/cpu_dispatch.hpp"

namespace kes {
namespace detect {
namespace {

size_t filter_scalar(const float* s, size_t count, size_t anchor_stride, size_t class_stride, size_t classes,
                     float threshold, uint32_t* idx) {
    size_t n = 0;
    for (size_t a = 0; a < count; ++a) {
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

size_t suppress_scalar(const BoxesSoA& s, size_t begin, size_t end, const float box[4], float barea, float threshold,
                       uint32_t* alive, uint32_t* hits) {
    size_t n = 0;
    for (size_t j = begin; j < end; ++j) {
        if (alive[j] && iou_above(s.x0[j], s.y0[j], s.x1[j], s.y1[j], s.area[j], box, barea, threshold)) {
            alive[j] = 0;
            hits[n++] = static_cast<uint32_t>(j);
        }
    }
    return n;
}

const Kernels kScalar = {"scalar", filter_scalar, suppress_scalar};

}  // namespace

const Kernels& kernels_scalar() {
    return kScalar;
}

constexpr dispatch::Variant<Kernels> kVariants[] = {
    {KES_CPU_AVX2, kernels_avx2},
    {KES_CPU_NEON, kernels_neon},
};

const Kernels& kernels_active() {
    static const Kernels& chosen = dispatch::pick_table(kVariants, kScalar);
    return chosen;
}

std::vector<const Kernels*> kernels_available() {
    return dispatch::usable_tables(kVariants, kScalar);
}

}  // namespace detect
}  // namespace kes
