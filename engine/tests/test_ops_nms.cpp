// test_ops_nms.cpp — NonMaxSuppression (kernels/ref/nms.cpp): ONNX's node test data reproduced, the
// bounded output (-1 padding, valid_count), ordering, ties, thresholds, hostile values, and one model
// through the public converter and engine API.
#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <numeric>

#include "convert/convert.hpp"
#include "kestrel/convert.h"
#include "kestrel/engine.h"
#include "op_test_util.hpp"
#include "test_deps.hpp"
#include "test_onnx_builder.hpp"

namespace kes_test {
namespace {

// An independent oracle: ONNX Runtime's algorithm with a real sort (stable, so equal scores keep the
// lower index first). Rows of [b, c, i].
std::vector<int64_t> reference_nms(const std::vector<float>& boxes, const std::vector<float>& scores, int64_t batches,
                                   int64_t classes, int64_t n, int64_t k, float iou_thr, bool has_score_thr,
                                   float score_thr, bool center) {
    auto corners = [&](const float* b, float* out) {  // x_min, y_min, x_max, y_max
        if (center) {
            out[0] = b[0] - b[2] / 2, out[2] = b[0] + b[2] / 2, out[1] = b[1] - b[3] / 2, out[3] = b[1] + b[3] / 2;
        } else {
            out[0] = std::min(b[1], b[3]), out[2] = std::max(b[1], b[3]);
            out[1] = std::min(b[0], b[2]), out[3] = std::max(b[0], b[2]);
        }
    };
    auto iou_above = [&](const float* a, const float* b) {
        float p[4], q[4];
        corners(a, p), corners(b, q);
        const float iw = std::min(p[2], q[2]) - std::max(p[0], q[0]), ih = std::min(p[3], q[3]) - std::max(p[1], q[1]);
        if (!(iw > 0 && ih > 0)) return false;
        const float inter = iw * ih, a1 = (p[2] - p[0]) * (p[3] - p[1]), a2 = (q[2] - q[0]) * (q[3] - q[1]);
        if (!(a1 > 0 && a2 > 0 && a1 + a2 - inter > 0)) return false;
        return inter / (a1 + a2 - inter) > iou_thr;
    };
    std::vector<int64_t> rows;
    for (int64_t b = 0; b < batches; ++b)
        for (int64_t c = 0; c < classes; ++c) {
            const float* s = scores.data() + (b * classes + c) * n;
            std::vector<int64_t> order;
            for (int64_t i = 0; i < n; ++i)
                if (!std::isnan(s[i]) && (!has_score_thr || s[i] > score_thr)) order.push_back(i);
            std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return s[x] > s[y]; });
            std::vector<int64_t> kept;
            for (int64_t i : order) {
                if (static_cast<int64_t>(kept.size()) >= k) break;
                bool keep = true;
                for (int64_t j : kept)
                    if (iou_above(&boxes[static_cast<size_t>((b * n + j) * 4)],
                                  &boxes[static_cast<size_t>((b * n + i) * 4)]))
                        keep = false;
                if (keep) kept.push_back(i);
            }
            for (int64_t i : kept) rows.insert(rows.end(), {b, c, i});
        }
    return rows;
}

struct NmsResult {
    Shape shape;
    std::vector<int64_t> rows;  // all rows, padding included
    int64_t valid = -1;
};

NmsResult nms(const TT& boxes, const TT& scores, const TT* max_out, const TT* iou, const TT* score, int64_t center = 0,
              size_t n_out = 2) {
    std::vector<const TT*> in = {&boxes, &scores, max_out, iou, score};
    const std::vector<TT> out = run_op("NonMaxSuppression", A().i("center_point_box", center), in, n_out);
    NmsResult r;
    r.shape = out[0].shape;
    r.rows = out[0].values<int64_t>();
    if (n_out > 1) r.valid = out[1].values<int64_t>().at(0);
    return r;
}

// The valid rows are `want`, every later row is -1, and valid_count says how many.
void expect_bounded(const NmsResult& got, const std::vector<int64_t>& want, int64_t bound_rows) {
    ASSERT_EQ(got.shape, (Shape{bound_rows, 3}));
    EXPECT_EQ(got.valid * 3, static_cast<int64_t>(want.size()));
    ASSERT_EQ(got.rows.size(), static_cast<size_t>(bound_rows * 3));
    ASSERT_LE(want.size(), got.rows.size());
    EXPECT_EQ(std::vector<int64_t>(got.rows.begin(), got.rows.begin() + static_cast<ptrdiff_t>(want.size())), want);
    for (size_t i = want.size(); i < got.rows.size(); ++i) EXPECT_EQ(got.rows[i], -1) << "padding element " << i;
}

const char* kNodeData = "/usr/share/libonnx-testdata/data/node";

class NmsOnnxData : public ::testing::TestWithParam<const char*> {};

// Every NonMaxSuppression case of ONNX's node tests, inputs and expected output read from the
// TensorProto files as the conformance runner reads them; thresholds fed as runtime tensors.
TEST_P(NmsOnnxData, MatchesTheExpectedSelection) {
    const std::string dir = std::string(kNodeData) + "/" + GetParam() + "/test_data_set_0/";
    if (access((dir + "output_0.pb").c_str(), R_OK) != 0) KES_TEST_SKIP("no libonnx-testdata");
    std::vector<TT> in;
    for (int i = 0; i < 5; ++i) {
        const kes::ir::Tensor t = kes::convert::read_tensor_file(dir + "input_" + std::to_string(i) + ".pb");
        TT x;
        x.dtype = t.dtype, x.shape = t.shape, x.bytes = t.data, x.is_const = i == 2;
        in.push_back(std::move(x));
    }
    const kes::ir::Tensor want = kes::convert::read_tensor_file(dir + "output_0.pb");
    std::vector<int64_t> want_rows(static_cast<size_t>(want.elements()));
    std::memcpy(want_rows.data(), want.data.data(), want.data.size());
    const int64_t center = std::string(GetParam()).find("center_point") != std::string::npos ? 1 : 0;
    const NmsResult got = nms(in[0], in[1], &in[2], &in[3], &in[4], center);
    const int64_t k = std::min(in[2].values<int64_t>().at(0), in[0].shape[1]);
    expect_bounded(got, want_rows, in[1].shape[0] * in[1].shape[1] * k);
}

INSTANTIATE_TEST_SUITE_P(
    NonMaxSuppression, NmsOnnxData,
    ::testing::Values("test_nonmaxsuppression_center_point_box_format", "test_nonmaxsuppression_flipped_coordinates",
                      "test_nonmaxsuppression_identical_boxes", "test_nonmaxsuppression_limit_output_size",
                      "test_nonmaxsuppression_single_box", "test_nonmaxsuppression_suppress_by_IOU",
                      "test_nonmaxsuppression_suppress_by_IOU_and_scores", "test_nonmaxsuppression_two_batches",
                      "test_nonmaxsuppression_two_classes"),
    [](const ::testing::TestParamInfo<const char*>& p) {
        return std::string(p.param).substr(std::strlen("test_nonmaxsuppression_"));
    });

// ONNX's suppress_by_IOU boxes: [y1, x1, y2, x2], six boxes in two clusters and one apart.
const std::vector<float> kBoxes = {0, 0,  1, 1,  0, 0.1f,  1, 1.1f,  0, -0.1f, 1, 0.9f,
                                   0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100,   1, 101};
const std::vector<float> kScores = {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f};

TEST(NonMaxSuppression, RowsPastTheValidOnesAreMinusOneAndValidCountSaysHowMany) {
    const TT boxes = f32({1, 6, 4}, kBoxes), scores = f32({1, 1, 6}, kScores);
    const TT k = i64({1}, {5}), iou = f32({1}, {0.5f}), thr = f32({1}, {0.0f});
    const NmsResult r = nms(boxes, scores, &k, &iou, &thr);
    expect_bounded(r, {0, 0, 3, 0, 0, 0, 0, 0, 5}, 5);
    EXPECT_EQ(r.valid, 3);
}

TEST(NonMaxSuppression, WithoutTheCountOutputTheFirstMinusOneRowEndsTheSelection) {
    const TT boxes = f32({1, 6, 4}, kBoxes), scores = f32({1, 1, 6}, kScores);
    const TT k = i64({1}, {5}), iou = f32({1}, {0.5f});
    const NmsResult r = nms(boxes, scores, &k, &iou, nullptr, 0, 1);
    EXPECT_EQ(r.rows, (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5, -1, -1, -1, -1, -1, -1}));
}

TEST(NonMaxSuppression, NonConstantMaxOutputIsRefusedWithHowToFreezeIt) {
    const TT boxes = f32({1, 6, 4}, kBoxes), scores = f32({1, 1, 6}, kScores);
    const TT k = i64({1}, {5}, false);
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "max_output_boxes_per_class", "NonMaxSuppression", A(),
                        {&boxes, &scores, &k}, 2);
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "kes-convert --freeze-input", "NonMaxSuppression", A(),
                        {&boxes, &scores, &k}, 2);
}

TEST(NonMaxSuppression, AbsentOrZeroMaxOutputGivesNoRows) {
    const TT boxes = f32({1, 6, 4}, kBoxes), scores = f32({1, 1, 6}, kScores), zero = i64({1}, {0});
    const NmsResult absent = nms(boxes, scores, nullptr, nullptr, nullptr);
    EXPECT_EQ(absent.shape, (Shape{0, 3}));
    EXPECT_EQ(absent.valid, 0);
    const NmsResult z = nms(boxes, scores, &zero, nullptr, nullptr);
    EXPECT_EQ(z.shape, (Shape{0, 3}));
    EXPECT_EQ(z.valid, 0);
}

TEST(NonMaxSuppression, OutputIsBoundedByTheBoxCountNotAHugeMaxOutput) {
    const TT boxes = f32({1, 6, 4}, kBoxes), scores = f32({1, 2, 6}, std::vector<float>(12, 0.5f));
    const TT k = i64({}, {int64_t{1} << 40});
    const NmsResult r = nms(boxes, scores, &k, nullptr, nullptr);
    EXPECT_EQ(r.shape, (Shape{12, 3}));  // 2 classes × min(2^40, 6 boxes)
    EXPECT_EQ(r.valid, 6);               // iou_threshold 0: box 0 suppresses every box it overlaps
}

TEST(NonMaxSuppression, EqualScoresVisitTheLowerBoxIndexFirst) {
    // Three identical boxes with the same score: the first is kept, the others suppressed by it.
    const TT boxes = f32({1, 3, 4}, {0, 0, 1, 1, 0, 0, 1, 1, 5, 5, 6, 6});
    const TT scores = f32({1, 1, 3}, {0.7f, 0.7f, 0.7f}), k = i64({1}, {3}), iou = f32({1}, {0.5f});
    expect_bounded(nms(boxes, scores, &k, &iou, nullptr), {0, 0, 0, 0, 0, 2}, 3);
}

TEST(NonMaxSuppression, FlippedCornersSelectTheSameBoxes) {
    std::vector<float> flipped = kBoxes;
    for (size_t i = 0; i < flipped.size(); i += 8) {  // every other box written as [y2, x2, y1, x1]
        std::swap(flipped[i], flipped[i + 2]);
        std::swap(flipped[i + 1], flipped[i + 3]);
    }
    const TT a = f32({1, 6, 4}, kBoxes), b = f32({1, 6, 4}, flipped), scores = f32({1, 1, 6}, kScores);
    const TT k = i64({1}, {6}), iou = f32({1}, {0.5f});
    const NmsResult ra = nms(a, scores, &k, &iou, nullptr), rb = nms(b, scores, &k, &iou, nullptr);
    EXPECT_EQ(ra.rows, rb.rows);
    EXPECT_EQ(ra.valid, 3);
}

TEST(NonMaxSuppression, ScoreThresholdIsStrictAndReadAtRunTime) {
    const TT boxes = f32({1, 6, 4}, kBoxes), scores = f32({1, 1, 6}, kScores), k = i64({1}, {6});
    const TT iou = f32({1}, {0.5f}), at_095 = f32({}, {0.95f}), at_05 = f32({}, {0.5f});
    expect_bounded(nms(boxes, scores, &k, &iou, &at_095), {}, 6);                 // 0.95 itself is not above 0.95
    expect_bounded(nms(boxes, scores, &k, &iou, &at_05), {0, 0, 3, 0, 0, 0}, 6);  // 0.5 excluded, 0.3 too
}

TEST(NonMaxSuppression, IouThresholdOutsideZeroToOneIsRefused) {
    const TT boxes = f32({1, 6, 4}, kBoxes), scores = f32({1, 1, 6}, kScores), k = i64({1}, {6});
    const TT bad_const = konst(f32({1}, {1.5f}));
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "iou_threshold", "NonMaxSuppression", A(),
                        {&boxes, &scores, &k, &bad_const}, 1);
    const TT bad_runtime = f32({1}, {-0.5f});
    try {
        nms(boxes, scores, &k, &bad_runtime, nullptr);
        ADD_FAILURE() << "a runtime iou_threshold of -0.5 ran";
    } catch (const kes::Error& e) {
        EXPECT_EQ(e.status(), KES_ERR_INVALID_ARGUMENT);
    }
}

TEST(NonMaxSuppression, ManyClassesAndBatchesMatchASortingReference) {
    const int64_t batches = 3, classes = 17, n = 60, k = 7;
    for (int64_t center = 0; center <= 1; ++center) {
        std::vector<float> boxes = random_floats(static_cast<size_t>(batches * n * 4), 11 + center, 0.0f, 10.0f);
        if (center)
            for (size_t i = 2; i < boxes.size(); i += 4) boxes[i] *= 0.4f, boxes[i + 1] *= 0.4f;  // w, h
        std::vector<float> scores = random_floats(static_cast<size_t>(batches * classes * n), 7, 0.0f, 1.0f);
        for (size_t i = 0; i < scores.size(); i += 5) scores[i] = 0.5f;  // plenty of ties
        const TT tb = f32({batches, n, 4}, boxes), ts = f32({batches, classes, n}, scores), tk = i64({1}, {k});
        const TT iou = f32({1}, {0.3f}), thr = f32({1}, {0.2f});
        const NmsResult r = nms(tb, ts, &tk, &iou, &thr, center);
        const std::vector<int64_t> want =
            reference_nms(boxes, scores, batches, classes, n, k, 0.3f, true, 0.2f, center);
        EXPECT_GT(want.size(), static_cast<size_t>(batches * classes * 3));  // more than one box per class
        expect_bounded(r, want, batches * classes * k);
    }
}

TEST(NonMaxSuppression, NanScoresAreNeverSelectedAndHostileBoxesGiveDefinedRows) {
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    const TT boxes = f32({1, 5, 4}, {0, 0, 1, 1, nan, 0, 1, 1, 0, -inf, 1, inf, 0, 0, inf, inf, 0, 0, 1, 1});
    const TT scores = f32({1, 1, 5}, {nan, 0.9f, 0.8f, inf, -inf}), k = i64({1}, {5}), iou = f32({1}, {0.5f});
    const NmsResult r = nms(boxes, scores, &k, &iou, nullptr);
    // Score order inf (3), 0.9 (1), 0.8 (2), -inf (4); box 0 (NaN score) never. Boxes 1-3 have NaN or
    // infinite extents, so their IoU is NaN or fails a comparison: none suppresses another; box 4
    // overlaps none of them by a computable IoU either.
    expect_bounded(r, {0, 0, 3, 0, 0, 1, 0, 0, 2, 0, 0, 4}, 5);
}

TEST(NonMaxSuppression, Yolo8400BoxesKeepTheReferenceSelection) {
    // YOLOv8's head: 8400 candidates, 100 per class kept, no score threshold (the worst case for the
    // scratch-free search: 100+ full scans). Its time belongs in a benchmark, not here (0.6 ms measured).
    const int64_t n = 8400, k = 100;
    std::vector<float> boxes = random_floats(static_cast<size_t>(n * 4), 3, 0.0f, 640.0f);
    for (size_t i = 2; i < boxes.size(); i += 4) boxes[i] = 10 + boxes[i] / 16, boxes[i + 1] = 10 + boxes[i + 1] / 16;
    const std::vector<float> scores = random_floats(static_cast<size_t>(n), 4, 0.0f, 1.0f);
    const TT tb = f32({1, n, 4}, boxes), ts = f32({1, 1, n}, scores), tk = i64({1}, {k}), iou = f32({1}, {0.45f});
    Created c = create_op("NonMaxSuppression", A().i("center_point_box", 1), {&tb, &ts, &tk, &iou}, 2);
    std::vector<int64_t> rows(static_cast<size_t>(k * 3)), count(1);
    const void* in[] = {tb.bytes.data(), ts.bytes.data(), tk.bytes.data(), iou.bytes.data()};
    void* out[] = {rows.data(), count.data()};
    c.kernel->run(in, out);
    EXPECT_EQ(count[0], k);
    EXPECT_EQ(rows, reference_nms(boxes, scores, 1, 1, n, k, 0.45f, false, 0.0f, true));
}

// boxes [1, 6, 4] and scores [1, 2, 6] → NonMaxSuppression with constant max_output / thresholds,
// through kes_convert_memory and kes_model_execute.
TEST(NonMaxSuppression, ConvertedOnnxModelRunsWithTheBoundedOutput) {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("boxes", kFloat, {1, 6, 4}));
    s.inputs.push_back(value_info("scores", kFloat, {1, 2, 6}));
    s.outputs.push_back(value_info("selected", kInt64, {-1, 3}));
    s.initializers.push_back(tensor_i64("max_out", {1}, {2}));
    s.initializers.push_back(tensor_f32("iou", {1}, {0.5f}));
    s.initializers.push_back(tensor_f32("score_thr", {1}, {0.4f}));
    s.nodes.push_back(
        node("NonMaxSuppression", {"boxes", "scores", "max_out", "iou", "score_thr"}, {"selected"}, {}, "nms"));
    const std::vector<uint8_t> model = onnx_model(s, 11);
    void* kom = nullptr;
    size_t size = 0;
    ASSERT_EQ(kes_convert_memory(model.data(), model.size(), nullptr, &kom, &size, nullptr), KES_OK)
        << kes_last_error();
    kes_model* m = nullptr;
    const kes_status loaded = kes_model_load_from_memory(kom, size, &m);
    kes_convert_free(kom);
    ASSERT_EQ(loaded, KES_OK) << kes_last_error();
    kes_tensor desc;
    ASSERT_EQ(kes_model_output_desc(m, 0, &desc), KES_OK) << kes_last_error();
    EXPECT_EQ(desc.dtype, KES_I64);
    ASSERT_EQ(desc.ndim, 2u);
    EXPECT_EQ(desc.shape[0], 4);  // 1 batch × 2 classes × 2 per class
    EXPECT_EQ(desc.shape[1], 3);
    kes_model_context* ctx = nullptr;
    ASSERT_EQ(kes_model_context_create(m, nullptr, 0, &ctx), KES_OK) << kes_last_error();
    std::vector<float> boxes = kBoxes;
    std::vector<float> scores = kScores;
    scores.insert(scores.end(), {0.1f, 0.2f, 0.3f, 0.1f, 0.2f, 0.45f});  // class 1: only box 5 above 0.4
    const int64_t box_shape[] = {1, 6, 4}, score_shape[] = {1, 2, 6};
    kes_tensor in[2], out;
    ASSERT_EQ(kes_tensor_wrap(&in[0], KES_F32, KES_LAYOUT_ND, 3, box_shape, boxes.data(), boxes.size() * 4), KES_OK);
    ASSERT_EQ(kes_tensor_wrap(&in[1], KES_F32, KES_LAYOUT_ND, 3, score_shape, scores.data(), scores.size() * 4),
              KES_OK);
    std::vector<int64_t> rows(12, 7);
    ASSERT_EQ(kes_tensor_wrap(&out, desc.dtype, desc.layout, desc.ndim, desc.shape, rows.data(), rows.size() * 8),
              KES_OK);
    ASSERT_EQ(kes_model_execute(ctx, in, 2, &out, 1), KES_OK) << kes_last_error();
    EXPECT_EQ(rows, (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 1, 5, -1, -1, -1}));
    kes_model_context_destroy(ctx);
    kes_model_unload(m);
}

// A node given a second output (possible in an ONNX file, though ONNX's op has one) exports valid_count.
TEST(NonMaxSuppression, ConvertedModelCanExportTheValidCount) {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("boxes", kFloat, {1, 6, 4}));
    s.inputs.push_back(value_info("scores", kFloat, {1, 1, 6}));
    s.outputs.push_back(value_info("selected", kInt64, {-1, 3}));
    s.outputs.push_back(value_info("count", kInt64, {1}));
    s.initializers.push_back(tensor_i64("max_out", {1}, {4}));
    s.initializers.push_back(tensor_f32("iou", {1}, {0.5f}));
    s.nodes.push_back(
        node("NonMaxSuppression", {"boxes", "scores", "max_out", "iou"}, {"selected", "count"}, {}, "nms"));
    const std::vector<uint8_t> model = onnx_model(s, 11);
    void* kom = nullptr;
    size_t size = 0;
    ASSERT_EQ(kes_convert_memory(model.data(), model.size(), nullptr, &kom, &size, nullptr), KES_OK)
        << kes_last_error();
    kes_model* m = nullptr;
    const kes_status loaded = kes_model_load_from_memory(kom, size, &m);
    kes_convert_free(kom);
    ASSERT_EQ(loaded, KES_OK) << kes_last_error();
    kes_model_context* ctx = nullptr;
    ASSERT_EQ(kes_model_context_create(m, nullptr, 0, &ctx), KES_OK) << kes_last_error();
    std::vector<float> boxes = kBoxes, scores = kScores;
    const int64_t box_shape[] = {1, 6, 4}, score_shape[] = {1, 1, 6}, row_shape[] = {4, 3}, count_shape[] = {1};
    kes_tensor in[2], out[2];
    ASSERT_EQ(kes_tensor_wrap(&in[0], KES_F32, KES_LAYOUT_ND, 3, box_shape, boxes.data(), boxes.size() * 4), KES_OK);
    ASSERT_EQ(kes_tensor_wrap(&in[1], KES_F32, KES_LAYOUT_ND, 3, score_shape, scores.data(), scores.size() * 4),
              KES_OK);
    std::vector<int64_t> rows(12, 7), count(1, 7);
    ASSERT_EQ(kes_tensor_wrap(&out[0], KES_I64, KES_LAYOUT_ND, 2, row_shape, rows.data(), rows.size() * 8), KES_OK);
    ASSERT_EQ(kes_tensor_wrap(&out[1], KES_I64, KES_LAYOUT_ND, 1, count_shape, count.data(), 8), KES_OK);
    ASSERT_EQ(kes_model_execute(ctx, in, 2, out, 2), KES_OK) << kes_last_error();
    EXPECT_EQ(rows, (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5, -1, -1, -1}));
    EXPECT_EQ(count[0], 3);
    kes_model_context_destroy(ctx);
    kes_model_unload(m);
}

}  // namespace
}  // namespace kes_test
