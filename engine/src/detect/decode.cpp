// decode.cpp — scores + regressors + anchors → detections (MediaPipe's TensorsToDetectionsCalculator
// DecodeBoxes/ConvertToDetections, generalised to SSD, RetinaFace and YOLO-style heads).
//
// The only pass over every anchor is Kernels::filter (the threshold compare, vectorised); an anchor that
// passes is decoded here in scalar code shared by every table, so results never depend on the ISA.
// Sigmoid scores are compared as logits: sigmoid is increasing, so sigmoid(x) ≥ t ⇔ x ≥ log(t/(1−t)),
// and the ~900 (BlazeFace) to ~8400 (YOLOv8) exps per image become exps for the few that pass. The
// logit is computed in double and rounded to float once; that comparison *is* the threshold rule, so
// a reported score may be a float ulp under t at the boundary.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "detect.hpp"
#include "kes/error.hpp"

namespace kes {
namespace detect {
namespace {

// Anchors filtered per kernel call: idx lives on the stack.
constexpr size_t kChunk = 1024;

// Better = the one kept when capacity runs out: higher score, then lower anchor, then lower class.
bool better(const kes_detection& a, const kes_detection& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.anchor != b.anchor) return a.anchor < b.anchor;
    return a.class_id < b.class_id;
}

struct Decoder {
    const kes_detect_decode_config& c;
    size_t sas, scs, bas, bvs;
    kes_detection* out;
    size_t capacity, written = 0, found = 0;
    bool heap = false;

    float value(const float* r, size_t i) const { return r[i * bvs]; }

    void emit(const float* r, const kes_anchor& a, uint32_t anchor, uint32_t cls, float raw) {
        kes_detection d{};
        d.score = c.score_mode == KES_DETECT_SCORE_SIGMOID ? 1.0f / (1.0f + std::exp(-raw)) : raw;
        d.class_id = static_cast<int32_t>(cls);
        d.anchor = anchor;
        const float v0 = value(r, c.box_offset), v1 = value(r, c.box_offset + 1);
        const float v2 = value(r, c.box_offset + 2), v3 = value(r, c.box_offset + 3);
        const bool xy = c.order == KES_DETECT_ORDER_XY;
        const float X0 = xy ? v0 : v1, Y0 = xy ? v1 : v0, X1 = xy ? v2 : v3, Y1 = xy ? v3 : v2;
        switch (c.box_coding) {
            case KES_DETECT_BOX_CENTER_SIZE:
            case KES_DETECT_BOX_CENTER_SIZE_EXP: {
                const float cx = X0 / c.x_scale * a.w + a.cx, cy = Y0 / c.y_scale * a.h + a.cy;
                float w, h;
                if (c.box_coding == KES_DETECT_BOX_CENTER_SIZE) {
                    w = X1 / c.w_scale * a.w, h = Y1 / c.h_scale * a.h;
                } else {
                    w = std::exp(X1 / c.w_scale) * a.w, h = std::exp(Y1 / c.h_scale) * a.h;
                }
                d.x0 = cx - w / 2.0f, d.y0 = cy - h / 2.0f, d.x1 = cx + w / 2.0f, d.y1 = cy + h / 2.0f;
                break;
            }
            case KES_DETECT_BOX_CORNERS:
                d.x0 = X0 / c.x_scale * a.w + a.cx, d.y0 = Y0 / c.y_scale * a.h + a.cy;
                d.x1 = X1 / c.x_scale * a.w + a.cx, d.y1 = Y1 / c.y_scale * a.h + a.cy;
                break;
            case KES_DETECT_BOX_DISTANCES:
                d.x0 = a.cx - X0 / c.x_scale * a.w, d.y0 = a.cy - Y0 / c.y_scale * a.h;
                d.x1 = a.cx + X1 / c.x_scale * a.w, d.y1 = a.cy + Y1 / c.y_scale * a.h;
                break;
        }
        bool ok = std::isfinite(d.x0) && std::isfinite(d.y0) && std::isfinite(d.x1) && std::isfinite(d.y1);
        d.num_keypoints = c.num_keypoints;
        for (uint32_t k = 0; k < c.num_keypoints; ++k) {
            const size_t base = c.keypoint_offset + static_cast<size_t>(k) * c.keypoint_values;
            const float k0 = value(r, base), k1 = value(r, base + 1);
            d.keypoints[k][0] = (xy ? k0 : k1) / c.x_scale * a.w + a.cx;
            d.keypoints[k][1] = (xy ? k1 : k0) / c.y_scale * a.h + a.cy;
            ok = ok && std::isfinite(d.keypoints[k][0]) && std::isfinite(d.keypoints[k][1]);
        }
        if (!ok)
            fail(KES_ERR_CORRUPT_DATA,
                 "anchor %u (score %g) decodes to a non-finite box or keypoint (box %g %g %g %g; anchor %g %g %g %g): "
                 "check the model's regressors and the config's scales",
                 anchor, static_cast<double>(d.score), static_cast<double>(d.x0), static_cast<double>(d.y0),
                 static_cast<double>(d.x1), static_cast<double>(d.y1), static_cast<double>(a.cx),
                 static_cast<double>(a.cy), static_cast<double>(a.w), static_cast<double>(a.h));
        push(d);
    }

    void push(const kes_detection& d) {
        ++found;
        if (written < capacity) {
            out[written++] = d;
            return;
        }
        if (capacity == 0) return;
        // Full: keep the `capacity` best in a heap whose front is the worst of them.
        if (!heap) {
            std::make_heap(out, out + capacity, better);
            heap = true;
        }
        if (!better(d, out[0])) return;
        std::pop_heap(out, out + capacity, better);
        out[capacity - 1] = d;
        std::push_heap(out, out + capacity, better);
    }
};

}  // namespace

size_t decode(const Kernels& kernels, const kes_detect_decode_config& c, const kes_detect_head* heads,
              size_t head_count, const kes_anchor* anchors, size_t anchor_count, kes_detection* out, size_t capacity) {
    KES_REQUIRE(!std::isnan(c.score_threshold), "config->score_threshold is NaN");
    const int32_t score_mode = enum_bits(c.score_mode), class_mode = enum_bits(c.class_mode);
    const int32_t box_coding = enum_bits(c.box_coding), order = enum_bits(c.order);
    KES_REQUIRE(score_mode == KES_DETECT_SCORE_SIGMOID || score_mode == KES_DETECT_SCORE_RAW,
                "config->score_mode is %d: not a kes_detect_score_mode", score_mode);
    KES_REQUIRE(class_mode == KES_DETECT_CLASS_MAX || class_mode == KES_DETECT_CLASS_EACH,
                "config->class_mode is %d: not a kes_detect_class_mode", class_mode);
    KES_REQUIRE(box_coding >= KES_DETECT_BOX_CENTER_SIZE && box_coding <= KES_DETECT_BOX_DISTANCES,
                "config->box_coding is %d: not a kes_detect_box_coding", box_coding);
    KES_REQUIRE(order == KES_DETECT_ORDER_XY || order == KES_DETECT_ORDER_YX,
                "config->order is %d: not a kes_detect_order", order);
    KES_REQUIRE(c.num_classes >= 1 && c.first_class < c.num_classes,
                "config->first_class %u must be below num_classes %u (≥ 1)", c.first_class, c.num_classes);
    KES_REQUIRE(c.num_keypoints <= KES_DETECT_MAX_KEYPOINTS, "config->num_keypoints is %u: at most %d", c.num_keypoints,
                KES_DETECT_MAX_KEYPOINTS);
    KES_REQUIRE(c.num_keypoints == 0 || c.keypoint_values >= 2,
                "config->keypoint_values is %u: a keypoint has at least x and y", c.keypoint_values);
    for (float s : {c.x_scale, c.y_scale, c.w_scale, c.h_scale})
        KES_REQUIRE(std::isfinite(s) && s != 0.0f, "config->x/y/w/h_scale must be finite and non-zero (got %g)",
                    static_cast<double>(s));
    KES_REQUIRE(head_count == 0 || heads != nullptr, "heads is NULL (head_count %zu)", head_count);
    KES_REQUIRE(out != nullptr || capacity == 0, "out is NULL with capacity %zu", capacity);
    size_t total = 0;
    for (size_t h = 0; h < head_count; ++h) {
        if (heads[h].count == 0) continue;
        KES_REQUIRE(heads[h].scores != nullptr && heads[h].boxes != nullptr,
                    "heads[%zu] has %zu anchors and a NULL scores or boxes pointer", h, heads[h].count);
        KES_REQUIRE(heads[h].count <= std::numeric_limits<uint32_t>::max() - total,
                    "the heads hold more than 2^32 anchors");
        total += heads[h].count;
    }
    if (anchors)
        KES_REQUIRE(anchor_count == total, "anchor_count is %zu but the heads hold %zu anchors", anchor_count, total);
    else
        KES_REQUIRE(anchor_count == 0, "anchors is NULL with anchor_count %zu (NULL means identity anchors: pass 0)",
                    anchor_count);

    const size_t classes = c.num_classes - c.first_class;
    const size_t values = std::max<size_t>(
        c.box_offset + size_t{4}, c.keypoint_offset + static_cast<size_t>(c.num_keypoints) * c.keypoint_values);
    Decoder d{c,
              c.score_anchor_stride ? c.score_anchor_stride : c.num_classes,
              c.score_class_stride ? c.score_class_stride : 1,
              c.box_anchor_stride ? c.box_anchor_stride : values,
              c.box_value_stride ? c.box_value_stride : 1,
              out,
              capacity};
    float threshold = c.score_threshold;
    if (c.score_mode == KES_DETECT_SCORE_SIGMOID) {
        const double t = c.score_threshold;
        if (t <= 0.0)
            threshold = -std::numeric_limits<float>::infinity();  // every logit but NaN
        else if (t > 1.0)
            threshold = std::numeric_limits<float>::quiet_NaN();  // nothing passes
        else if (t == 1.0)
            threshold = std::numeric_limits<float>::infinity();  // only +inf (sigmoid 1)
        else
            threshold = static_cast<float>(std::log(t / (1.0 - t)));
    }
    const kes_anchor identity{0.0f, 0.0f, 1.0f, 1.0f};
    uint32_t idx[kChunk];
    size_t base = 0;
    for (size_t h = 0; h < head_count; ++h) {
        const kes_detect_head& head = heads[h];
        for (size_t start = 0; start < head.count; start += kChunk) {
            const size_t len = std::min(kChunk, head.count - start);
            const float* s = head.scores + start * d.sas + c.first_class * d.scs;
            const size_t n = kernels.filter(s, len, d.sas, d.scs, classes, threshold, idx);
            for (size_t i = 0; i < n; ++i) {
                const size_t a = start + idx[i];
                const uint32_t anchor = static_cast<uint32_t>(base + a);
                const float* row = s + idx[i] * d.sas;
                const float* r = head.boxes + a * d.bas;
                const kes_anchor& an = anchors ? anchors[anchor] : identity;
                if (c.class_mode == KES_DETECT_CLASS_MAX) {
                    size_t best = classes;
                    float best_v = 0.0f;
                    for (size_t k = 0; k < classes; ++k) {
                        const float v = row[k * d.scs];
                        if (v >= threshold && (best == classes || v > best_v)) best = k, best_v = v;
                    }
                    d.emit(r, an, anchor, static_cast<uint32_t>(c.first_class + best), best_v);
                } else {
                    for (size_t k = 0; k < classes; ++k) {
                        const float v = row[k * d.scs];
                        if (v >= threshold) d.emit(r, an, anchor, static_cast<uint32_t>(c.first_class + k), v);
                    }
                }
            }
        }
        base += head.count;
    }
    if (d.heap)
        std::sort(out, out + capacity, [](const kes_detection& a, const kes_detection& b) {
            return a.anchor != b.anchor ? a.anchor < b.anchor : a.class_id < b.class_id;
        });
    return d.found;
}

}  // namespace detect
}  // namespace kes
