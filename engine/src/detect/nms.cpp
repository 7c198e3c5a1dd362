// nms.cpp — greedy non-maximum suppression, hard and MediaPipe's weighted (mediapipe/calculators/util/
// non_max_suppression_calculator.cc, WeightedNonMaxSuppression), in place over the caller's detections.
//
// One sort of indices (score descending, lower index first on ties: a strict order, so the result does
// not depend on the sort algorithm), the boxes copied once into scratch as structure-of-arrays in that
// order, then for each detection still alive: keep it and let Kernels::suppress test its IoU against
// every later one still alive, vector by vector; once most of the rest is suppressed, the live ones are
// compacted. O(n log n + n · kept) at worst, no allocation given scratch.
// Weighted mode blends the kept box with the ones it suppressed, in visiting order, in scalar code
// shared by every table. Per class, the sort groups classes first and each class runs on its own
// range; the kept ones are then ordered by score across classes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "detect.hpp"
#include "kes/error.hpp"

namespace kes {
namespace detect {
namespace {

constexpr size_t kAlign = 64;

struct Scratch {
    uint64_t* keys;
    uint32_t *order, *alive, *hits, *kept;
    float *x0, *y0, *x1, *y1, *area;
};

// keys (8 bytes each), then 9 arrays of 4 bytes, each 64-byte aligned.
constexpr size_t kBytesPerDetection = 8 + 9 * 4, kRegions = 10;

Scratch carve(void* mem, size_t n) {
    auto p = reinterpret_cast<uintptr_t>(mem);
    auto next = [&](size_t elem) {
        p = (p + kAlign - 1) & ~static_cast<uintptr_t>(kAlign - 1);
        void* r = reinterpret_cast<void*>(p);
        p += n * elem;
        return r;
    };
    Scratch s;
    s.keys = static_cast<uint64_t*>(next(8));
    s.order = static_cast<uint32_t*>(next(4));
    s.alive = static_cast<uint32_t*>(next(4));
    s.hits = static_cast<uint32_t*>(next(4));
    s.kept = static_cast<uint32_t*>(next(4));
    s.x0 = static_cast<float*>(next(4));
    s.y0 = static_cast<float*>(next(4));
    s.x1 = static_cast<float*>(next(4));
    s.y1 = static_cast<float*>(next(4));
    s.area = static_cast<float*>(next(4));
    return s;
}

// A finite score as an unsigned key in the same order (+0 for -0: they tie, as floats do).
uint32_t score_key(float score) {
    score += 0.0f;
    uint32_t bits;
    std::memcpy(&bits, &score, sizeof bits);
    return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

// Blends dets[top] with the detections it suppressed (weights: their scores, top first, then in
// visiting order), as MediaPipe's WeightedNonMaxSuppression sums them.
void blend(kes_detection& top, const kes_detection* dets, const uint32_t* order, const uint32_t* hits, size_t nh) {
    const uint32_t nk = top.num_keypoints;
    float total = top.score;
    float b[4] = {top.x0 * top.score, top.y0 * top.score, top.x1 * top.score, top.y1 * top.score};
    float kp[KES_DETECT_MAX_KEYPOINTS][2];
    for (uint32_t k = 0; k < nk; ++k)
        kp[k][0] = top.keypoints[k][0] * top.score, kp[k][1] = top.keypoints[k][1] * top.score;
    for (size_t h = 0; h < nh; ++h) {
        const kes_detection& d = dets[order[hits[h]]];
        const float s = d.score;
        total += s;
        b[0] += d.x0 * s, b[1] += d.y0 * s, b[2] += d.x1 * s, b[3] += d.y1 * s;
        for (uint32_t k = 0; k < nk; ++k) kp[k][0] += d.keypoints[k][0] * s, kp[k][1] += d.keypoints[k][1] * s;
    }
    if (!(total > 0.0f)) return;  // all weights 0: nothing to average by
    top.x0 = b[0] / total, top.y0 = b[1] / total, top.x1 = b[2] / total, top.y1 = b[3] / total;
    for (uint32_t k = 0; k < nk; ++k) top.keypoints[k][0] = kp[k][0] / total, top.keypoints[k][1] = kp[k][1] / total;
}

}  // namespace

size_t nms_scratch_bytes(size_t count) {
    KES_REQUIRE(count <= std::numeric_limits<uint32_t>::max(), "count %zu is over 2^32 detections", count);
    return count * kBytesPerDetection + kRegions * kAlign;
}

size_t nms(const Kernels& kernels, const kes_detect_nms_config& c, kes_detection* dets, size_t n, void* scratch,
           size_t scratch_size) {
    const int32_t mode = enum_bits(c.mode);
    KES_REQUIRE(mode == KES_DETECT_NMS_HARD || mode == KES_DETECT_NMS_WEIGHTED,
                "config->mode is %d: not a kes_detect_nms_mode", mode);
    KES_REQUIRE(c.iou_threshold >= 0.0f && c.iou_threshold <= 1.0f, "config->iou_threshold is %g: must be in [0, 1]",
                static_cast<double>(c.iou_threshold));
    KES_REQUIRE(n == 0 || dets != nullptr, "dets is NULL with count %zu", n);
    const size_t bytes = nms_scratch_bytes(n);
    KES_REQUIRE(scratch != nullptr || scratch_size == 0, "scratch is NULL with scratch_size %zu", scratch_size);
    KES_REQUIRE(scratch == nullptr || scratch_size >= bytes,
                "scratch_size %zu is below the %zu bytes kes_detect_nms_scratch_size gives for %zu detections",
                scratch_size, bytes, n);
    const bool weighted = c.mode == KES_DETECT_NMS_WEIGHTED;
    for (size_t i = 0; i < n; ++i) {
        const kes_detection& d = dets[i];
        KES_REQUIRE(std::isfinite(d.x0) && std::isfinite(d.y0) && std::isfinite(d.x1) && std::isfinite(d.y1) &&
                        std::isfinite(d.score),
                    "dets[%zu] has a non-finite value (box %g %g %g %g, score %g)", i, static_cast<double>(d.x0),
                    static_cast<double>(d.y0), static_cast<double>(d.x1), static_cast<double>(d.y1),
                    static_cast<double>(d.score));
        KES_REQUIRE(d.num_keypoints <= KES_DETECT_MAX_KEYPOINTS, "dets[%zu].num_keypoints is %u: at most %d", i,
                    d.num_keypoints, KES_DETECT_MAX_KEYPOINTS);
        KES_REQUIRE(!weighted || d.score >= 0.0f, "dets[%zu].score is %g: WEIGHTED NMS needs scores >= 0", i,
                    static_cast<double>(d.score));
    }
    if (n == 0) return 0;
    std::vector<unsigned char> owned;
    if (!scratch) {
        owned.resize(bytes);
        scratch = owned.data();
    }
    const Scratch s = carve(scratch, n);

    // Visiting order: score descending, lower index first. Without classes, one sort of 64-bit keys
    // (inverted score key, index) — no indirection into the 168-byte detections while sorting.
    const bool per_class = c.per_class != 0;
    if (!per_class) {
        for (size_t i = 0; i < n; ++i)
            s.keys[i] = (static_cast<uint64_t>(~score_key(dets[i].score)) << 32) | static_cast<uint32_t>(i);
        std::sort(s.keys, s.keys + n);
        for (size_t i = 0; i < n; ++i) s.order[i] = static_cast<uint32_t>(s.keys[i]);
    } else {
        for (size_t i = 0; i < n; ++i) s.order[i] = static_cast<uint32_t>(i);
        std::sort(s.order, s.order + n, [&](uint32_t a, uint32_t b) {
            const kes_detection &da = dets[a], &db = dets[b];
            if (da.class_id != db.class_id) return da.class_id < db.class_id;
            if (da.score != db.score) return da.score > db.score;
            return a < b;
        });
    }
    for (size_t p = 0; p < n; ++p) {
        const kes_detection& d = dets[s.order[p]];
        s.x0[p] = d.x0, s.y0[p] = d.y0, s.x1[p] = d.x1, s.y1[p] = d.y1;
        const float w = d.x1 - d.x0, h = d.y1 - d.y0;
        s.area[p] = (w > 0.0f ? w : 0.0f) * (h > 0.0f ? h : 0.0f);
        s.alive[p] = ~0u;
    }
    const BoxesSoA soa{s.x0, s.y0, s.x1, s.y1, s.area};
    const size_t unlimited = std::numeric_limits<size_t>::max();
    const size_t cap =
        per_class ? (c.max_per_class ? c.max_per_class : unlimited) : (c.max_detections ? c.max_detections : unlimited);
    size_t kept = 0;
    for (size_t begin = 0; begin < n;) {
        size_t seg_end = n;
        if (per_class) {
            seg_end = begin + 1;
            while (seg_end < n && dets[s.order[seg_end]].class_id == dets[s.order[begin]].class_id) ++seg_end;
        }
        size_t end = seg_end, alive_after = seg_end - begin, in_range = 0;
        for (size_t p = begin; p < end; ++p) {
            if (!s.alive[p]) continue;
            s.alive[p] = 0;
            --alive_after;
            s.kept[kept++] = s.order[p];
            ++in_range;
            if (in_range == cap && !weighted) break;
            const float box[4] = {s.x0[p], s.y0[p], s.x1[p], s.y1[p]};
            const size_t nh = kernels.suppress(soa, p + 1, end, box, s.area[p], c.iou_threshold, s.alive, s.hits);
            if (weighted && nh) blend(dets[s.order[p]], dets, s.order, s.hits, nh);
            if (in_range == cap) break;
            alive_after -= nh;
            // Once most of the rest is suppressed, close the gaps (stable, so the visiting order stays):
            // each later IoU pass then reads only live candidates. Shared scalar code, so every table
            // compacts at the same points.
            const size_t rest = end - p - 1;
            if (rest >= 32 && alive_after * 2 < rest) {
                size_t w = p + 1;
                for (size_t j = p + 1; j < end; ++j) {
                    if (!s.alive[j]) continue;
                    s.order[w] = s.order[j], s.x0[w] = s.x0[j], s.y0[w] = s.y0[j], s.x1[w] = s.x1[j];
                    s.y1[w] = s.y1[j], s.area[w] = s.area[j], s.alive[w] = ~0u;
                    ++w;
                }
                end = w;
            }
        }
        begin = seg_end;
    }
    if (per_class) {
        std::sort(s.kept, s.kept + kept, [&](uint32_t a, uint32_t b) {
            if (dets[a].score != dets[b].score) return dets[a].score > dets[b].score;
            return a < b;
        });
        if (c.max_detections && kept > c.max_detections) kept = c.max_detections;
    }
    // dets[k] = the k-th kept, in place: where[i] is the slot holding input i, who[slot] its input.
    uint32_t* where = s.alive;
    uint32_t* who = s.hits;
    for (size_t i = 0; i < n; ++i) where[i] = who[i] = static_cast<uint32_t>(i);
    for (size_t k = 0; k < kept; ++k) {
        const uint32_t want = s.kept[k], from = where[want];
        if (from == k) continue;
        std::swap(dets[k], dets[from]);
        const uint32_t displaced = who[k];
        who[from] = displaced, where[displaced] = from;
        who[k] = want, where[want] = static_cast<uint32_t>(k);
    }
    return kept;
}

}  // namespace detect
}  // namespace kes
