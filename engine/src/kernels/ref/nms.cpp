// nms.cpp — NonMaxSuppression (opset 10/11; the two opsets are the same op).
//
// ONNX's output selected_indices is [num_selected, 3] with a data-dependent first dim, which a static
// memory plan cannot hold. Kestrel's output is bounded instead:
// - output 0, selected_indices: int64 [B × C × K, 3] with K = min(max_output_boxes_per_class,
//   num_boxes) (no class can select more boxes than there are). Rows are [batch, class, box] in
//   ONNX's order (batch, then class, then selection order); the valid rows come first and every row
//   after them is [-1, -1, -1]. Padding with -1 keeps a downstream op well defined: Gather accepts -1
//   (the last element), so a post-processing graph reads valid data everywhere and the app drops the
//   padded rows by the count below.
// - output 1 (optional), valid_count: int64 [1], the number of valid rows. ONNX graphs declare only
//   output 0, so the ONNX importer leaves the node with one output: the app then finds the count as
//   the first row whose batch index is -1 (or the row count when there is none).
// max_output_boxes_per_class must be a constant (it sizes the output); absent or ≤ 0 gives 0 rows, as
// ONNX says. iou_threshold and score_threshold may be constants or runtime tensors (read in run()).
//
// Semantics follow ONNX Runtime's CPU kernel (onnxruntime/core/providers/cpu/object_detection/
// non_max_suppression.cc): per batch and class, the candidates are the boxes whose score is
// > score_threshold (every box without one); they are visited by score descending, equal scores lower
// box index first; a candidate is selected unless its IoU with an already selected box is >
// iou_threshold; at most K per class. IoU is computed in f32 as ORT does: center_point_box 0 reads
// [y1, x1, y2, x2] with the corners in either order, 1 reads [x_center, y_center, width, height];
// disjoint boxes, empty intersections and non-positive areas never suppress. iou_threshold outside
// [0, 1] is KES_ERR_INVALID_ARGUMENT (ORT refuses it too).
//
// Hostile values give defined results: a NaN score is never selected; a NaN or infinite coordinate
// makes the IoU NaN or a failed comparison, so such a box neither suppresses nor is suppressed.
//
// run() allocates nothing and has no scratch (Kernel::run without a RunContext, as constant folding and
// the op tests call it): instead of sorting, each step searches the next candidate in (score desc,
// index asc) order strictly after the previous one. That is O(N) per visited candidate, O(N × visited)
// per class: measured 0.6 ms for one 8400-box class visiting ~100 candidates (test_ops_nms.cpp
// NonMaxSuppression.Yolo8400BoxesIsFast), so ~50 ms for 80 such classes without a score_threshold. A
// score_threshold (YOLO exports use 0.25) keeps `visited` to a few per class; a heap over RunContext
// scratch would make the unthresholded case O(N + visited·log N) if it ever matters.
#include <cmath>
#include <cstring>
#include <limits>

#include "op_util.hpp"
#include "ops.hpp"

namespace kes {

namespace {

struct NmsGeom {
    int64_t batches = 0, classes = 0, boxes = 0, per_class = 0;  // per_class = K
    bool center_point_box = false;
};

inline void min_max(float a, float b, float& lo, float& hi) {
    if (a < b) {
        lo = a, hi = b;
    } else {
        lo = b, hi = a;
    }
}

// ORT's SuppressByIOU, comparison for comparison (the same f32 arithmetic gives the same decisions at
// the threshold).
bool suppresses(const float* b1, const float* b2, bool center, float iou_threshold) {
    float x1_min, x1_max, x2_min, x2_max, y1_min, y1_max, y2_min, y2_max;
    if (!center) {
        min_max(b1[1], b1[3], x1_min, x1_max);
        min_max(b2[1], b2[3], x2_min, x2_max);
        min_max(b1[0], b1[2], y1_min, y1_max);
        min_max(b2[0], b2[2], y2_min, y2_max);
    } else {
        const float w1 = b1[2] / 2, h1 = b1[3] / 2, w2 = b2[2] / 2, h2 = b2[3] / 2;
        x1_min = b1[0] - w1, x1_max = b1[0] + w1, y1_min = b1[1] - h1, y1_max = b1[1] + h1;
        x2_min = b2[0] - w2, x2_max = b2[0] + w2, y2_min = b2[1] - h2, y2_max = b2[1] + h2;
    }
    const float ix_min = x1_min > x2_min ? x1_min : x2_min, ix_max = x1_max < x2_max ? x1_max : x2_max;
    if (ix_max <= ix_min) return false;
    const float iy_min = y1_min > y2_min ? y1_min : y2_min, iy_max = y1_max < y2_max ? y1_max : y2_max;
    if (iy_max <= iy_min) return false;
    const float inter = (ix_max - ix_min) * (iy_max - iy_min);
    if (inter <= 0.0f) return false;
    const float area1 = (x1_max - x1_min) * (y1_max - y1_min), area2 = (x2_max - x2_min) * (y2_max - y2_min);
    const float uni = area1 + area2 - inter;
    if (area1 <= 0.0f || area2 <= 0.0f || uni <= 0.0f) return false;
    return inter / uni > iou_threshold;
}

float read_scalar(const void* p) {
    float v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

void check_iou_threshold(float t) {
    if (!(t >= 0.0f && t <= 1.0f)) fail(KES_ERR_INVALID_ARGUMENT, "iou_threshold %g is outside [0, 1]", t);
}

void run_nms(const NmsGeom& g, const float* boxes, const float* scores, float iou_threshold, bool has_score_threshold,
             float score_threshold, int64_t* selected, int64_t* valid_count) {
    int64_t rows = 0;
    for (int64_t b = 0; b < g.batches; ++b) {
        const float* batch_boxes = boxes + b * g.boxes * 4;
        for (int64_t c = 0; c < g.classes; ++c) {
            const float* s = scores + (b * g.classes + c) * g.boxes;
            int64_t* class_rows = selected + rows * 3;  // this class's selections so far
            int64_t taken = 0;
            // The previous visited candidate's key; the next is the best key strictly after it.
            float prev_score = std::numeric_limits<float>::infinity();
            int64_t prev_index = -1;
            while (taken < g.per_class) {
                int64_t best = -1;
                float best_score = 0.0f;
                for (int64_t i = 0; i < g.boxes; ++i) {
                    const float v = s[i];
                    if (v != v || (has_score_threshold && !(v > score_threshold))) continue;
                    if (!(v < prev_score || (v == prev_score && i > prev_index))) continue;
                    if (best < 0 || v > best_score) best = i, best_score = v;
                }
                if (best < 0) break;
                prev_score = best_score, prev_index = best;
                bool keep = true;
                for (int64_t k = 0; k < taken && keep; ++k)
                    keep = !suppresses(batch_boxes + class_rows[k * 3 + 2] * 4, batch_boxes + best * 4,
                                       g.center_point_box, iou_threshold);
                if (!keep) continue;
                class_rows[taken * 3 + 0] = b, class_rows[taken * 3 + 1] = c, class_rows[taken * 3 + 2] = best;
                ++taken;
            }
            rows += taken;
        }
    }
    const int64_t total = g.batches * g.classes * g.per_class;
    for (int64_t r = rows * 3; r < total * 3; ++r) selected[r] = -1;
    if (valid_count) *valid_count = rows;
}

// A threshold input: absent, or one f32 element (scalar or [1]).
void check_threshold_input(const TensorDesc* t, const char* what) {
    if (!t) return;
    require_dtype(*t, KES_F32, what);
    if (t->elements() != 1)
        fail(KES_ERR_INVALID_ARGUMENT, "%s is %s; expected one value", what, shape_string(t->shape).c_str());
}

std::unique_ptr<Kernel> create_nms(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& boxes = *node.inputs[0];
    const TensorDesc& scores = *node.inputs[1];
    require_dtype(boxes, KES_F32, "input boxes");
    require_dtype(scores, KES_F32, "input scores");
    if (boxes.rank() != 3 || boxes.shape[2] != 4)
        fail(KES_ERR_INVALID_ARGUMENT, "input boxes is %s; expected [num_batches, spatial_dimension, 4]",
             shape_string(boxes.shape).c_str());
    if (scores.rank() != 3 || scores.shape[0] != boxes.shape[0] || scores.shape[2] != boxes.shape[1])
        fail(KES_ERR_INVALID_ARGUMENT, "input scores is %s; expected [%lld, num_classes, %lld] for boxes %s",
             shape_string(scores.shape).c_str(), static_cast<long long>(boxes.shape[0]),
             static_cast<long long>(boxes.shape[1]), shape_string(boxes.shape).c_str());
    NmsGeom g;
    g.batches = boxes.shape[0], g.boxes = boxes.shape[1], g.classes = scores.shape[1];
    const int64_t center = node.attrs.get_int("center_point_box", 0);
    if (center != 0 && center != 1)
        fail(KES_ERR_INVALID_ARGUMENT, "center_point_box is %lld; expected 0 or 1", static_cast<long long>(center));
    g.center_point_box = center == 1;

    if (const TensorDesc* m = node.input(2)) {
        if (!m->is_const())
            fail(KES_ERR_UNSUPPORTED,
                 "input max_output_boxes_per_class must be a constant: it bounds the output's shape (static "
                 "memory plan); freeze the graph input that feeds it with `kes-convert --freeze-input NAME=FILE`");
        const std::vector<int64_t> v = const_ints(*m, "input max_output_boxes_per_class");
        if (v.size() != 1)
            fail(KES_ERR_INVALID_ARGUMENT, "input max_output_boxes_per_class is %s; expected one value",
                 shape_string(m->shape).c_str());
        g.per_class = v[0] > 0 ? (v[0] < g.boxes ? v[0] : g.boxes) : 0;  // ORT treats a negative value as 0
    }
    const TensorDesc* iou = node.input(3);
    const TensorDesc* score = node.input(4);
    check_threshold_input(iou, "input iou_threshold");
    check_threshold_input(score, "input score_threshold");
    if (iou && iou->is_const()) check_iou_threshold(read_scalar(iou->data));

    outputs[0].dtype = KES_I64;
    outputs[0].shape = {shape_elements({g.batches, g.classes, g.per_class}), 3};
    shape_elements(outputs[0].shape);  // throws on overflow
    if (outputs.size() > 1) {
        outputs[1].dtype = KES_I64;
        outputs[1].shape = {1};
    }
    const bool has_iou = iou != nullptr, has_score = score != nullptr, has_count = outputs.size() > 1;
    return make_kernel([g, has_iou, has_score, has_count](const void* const* in, void* const* out) {
        float iou_threshold = 0.0f, score_threshold = 0.0f;
        if (has_iou) {
            iou_threshold = read_scalar(in[3]);
            check_iou_threshold(iou_threshold);
        }
        if (has_score) score_threshold = read_scalar(in[4]);
        run_nms(g, in_as<float>(in, 0), in_as<float>(in, 1), iou_threshold, has_score, score_threshold,
                out_as<int64_t>(out, 0), has_count ? out_as<int64_t>(out, 1) : nullptr);
    });
}

}  // namespace

void add_detection_ops(OpList& ops) {
    ops.push_back({"NonMaxSuppression", 2, 5, 1, 2, create_nms});
}

}  // namespace kes
