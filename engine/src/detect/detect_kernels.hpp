// detect_kernels.hpp — the per-ISA kernels under kestrel/detect.h: the score threshold pass over every
// anchor and the IoU of one box against many.
//
// The project's one dispatch idiom (kernels/common/microkernels.hpp, fv's scan tables): a table of
// function pointers per instruction set, chosen once from kes_cpu_features(), so KES_CPU_DISABLE forces
// the scalar table. The scalar table is the reference: the AVX2 and NEON tables give its results bit
// for bit (comparisons are exact; the IoU uses the same IEEE operations in the same order — every detect
// source is compiled with -ffp-contract=off so no compiler fuses a multiply-add in one table only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kes {
namespace detect {

// Candidates for suppression, in visiting order (structure of arrays, so the IoU loop loads vectors).
struct BoxesSoA {
    const float *x0, *y0, *x1, *y1, *area;
};

struct Kernels {
    const char* name;  // "scalar", "avx2", "neon"

    // Writes to idx (ascending) every anchor a < count for which some class c < classes has
    // s[a·anchor_stride + c·class_stride] ≥ threshold; returns how many. NaN never passes.
    size_t (*filter)(const float* s, size_t count, size_t anchor_stride, size_t class_stride, size_t classes,
                     float threshold, uint32_t* idx);

    // For j in [begin, end) with alive[j] set and IoU(box, j) > threshold: alive[j] = 0 and j is
    // appended to hits (ascending). Returns the number of hits. alive[j] is ~0u or 0 (a lane mask for
    // the vector tables). IoU, exactly:
    //   iw = max(min(x1, bx1) − max(x0, bx0), 0), ih likewise, inter = iw·ih,
    //   hit = inter > threshold · ((area + barea) − inter)
    // (IoU > threshold without the division, which would cost more than the rest of the test; a NaN
    // union, from areas that overflow, is no hit).
    // with box = {x0, y0, x1, y1} and barea its area. Inputs are finite (kes_detect_nms checks).
    size_t (*suppress)(const BoxesSoA& s, size_t begin, size_t end, const float box[4], float barea, float threshold,
                       uint32_t* alive, uint32_t* hits);
};

const Kernels& kernels_scalar();
const Kernels* kernels_avx2();  // nullptr when this build or this CPU lacks AVX2
const Kernels* kernels_neon();  // nullptr off aarch64

// The fastest table this CPU runs (decided once, from kes_cpu_features()): the one the C API uses.
const Kernels& kernels_active();
// Every table usable on this CPU, scalar first: for tests and benchmarks (detect.hpp takes one).
std::vector<const Kernels*> kernels_available();

// The scalar IoU test of Kernels::suppress, shared by every table for its tail.
// static: the ISA-flagged files use it too, and each must keep its own copy (an inline function is
// shared, and at -O0 the linker may keep an AVX one for baseline callers; cmake/check_isa_objects.cmake).
static inline bool iou_above(float x0, float y0, float x1, float y1, float area, const float box[4], float barea,
                             float threshold) {
    const float lx = x0 > box[0] ? x0 : box[0], hx = x1 < box[2] ? x1 : box[2];
    const float ly = y0 > box[1] ? y0 : box[1], hy = y1 < box[3] ? y1 : box[3];
    float iw = hx - lx, ih = hy - ly;
    iw = iw > 0.0f ? iw : 0.0f;
    ih = ih > 0.0f ? ih : 0.0f;
    const float inter = iw * ih;
    const float uni = (area + barea) - inter;
    return inter > threshold * uni;
}

}  // namespace detect
}  // namespace kes
