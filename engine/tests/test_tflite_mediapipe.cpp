// What MediaPipe's TFLite models need beyond the common builtins, each on a small case checked by hand:
// DENSIFY (sparse weights made dense at import), DEPTH_TO_SPACE, and MediaPipe's custom operators
// (Convolution2DTransposeBias, ...). The real models are in test_real_models.cpp (RealModels.MediaPipe*).
#include <gtest/gtest.h>

#include <flatbuffers/flexbuffers.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kes/error.hpp"
#include "op.hpp"
#include "test_tflite_builder.hpp"

using kes_test::TfliteBuilder;
namespace tfl = kes::tflite;

namespace {

using kes_test::import_error;
using kes_test::run_graph;

kes::ir::Graph import(const std::vector<uint8_t>& bytes) {
    return kes::ir::import_tflite(bytes.data(), bytes.size());
}

// ---- DENSIFY -------------------------------------------------------------------------------------------------

struct SparseLevel {
    bool dense;
    int32_t dense_size;
    std::vector<int32_t> segments, indices;
};

// A [rows, cols] model: output = input + DENSIFY(sparse constant with these levels and values).
std::vector<uint8_t> densify_model(int32_t rows, int32_t cols, const std::vector<int32_t>& order,
                                   const std::vector<int32_t>& block_map, const std::vector<SparseLevel>& levels,
                                   const std::vector<float>& values) {
    TfliteBuilder tb;
    flatbuffers::FlatBufferBuilder& fb = tb.fb();
    std::vector<flatbuffers::Offset<tfl::DimensionMetadata>> meta;
    for (const SparseLevel& l : levels) {
        if (l.dense) {
            meta.push_back(tfl::CreateDimensionMetadata(fb, tfl::DimensionType::DENSE, l.dense_size));
            continue;
        }
        const auto seg_values = fb.CreateVector(l.segments);
        const auto segments = tfl::CreateInt32Vector(fb, seg_values);
        const auto idx_values = fb.CreateVector(l.indices);
        const auto indices = tfl::CreateInt32Vector(fb, idx_values);
        meta.push_back(tfl::CreateDimensionMetadata(fb, tfl::DimensionType::SPARSE_CSR, 0,
                                                    tfl::SparseIndexVector::Int32Vector, segments.Union(),
                                                    tfl::SparseIndexVector::Int32Vector, indices.Union()));
    }
    const auto order_vector = fb.CreateVector(order);
    const auto block_vector = fb.CreateVector(block_map);
    const auto meta_vector = fb.CreateVector(meta);
    const auto sparsity = tfl::CreateSparsityParameters(fb, order_vector, block_vector, meta_vector);
    const int32_t weights = tb.sparse_f32("weights_sparse", {rows, cols}, values, sparsity);
    const int32_t dense = tb.tensor("weights", {rows, cols});
    const int32_t in = tb.tensor("input", {rows, cols});
    const int32_t out = tb.tensor("output", {rows, cols});
    tb.op(tfl::BuiltinOperator::DENSIFY, {weights}, {dense});
    tb.op(tfl::BuiltinOperator::ADD, {in, dense}, {out});
    return tb.finish({in}, {out});
}

TEST(TfliteMediaPipe, DensifyCsrRowsBecomeTheDenseMatrix) {
    // Rows dense, columns CSR: row 0 keeps columns 1 and 3, row 1 column 0.
    const auto bytes =
        densify_model(2, 4, {0, 1}, {}, {{true, 2, {}, {}}, {false, 0, {0, 2, 3}, {1, 3, 0}}}, {5.0f, 7.0f, 9.0f});
    kes::ir::Graph g = import(bytes);
    const auto got = run_graph(std::move(g), {{1, 1, 1, 1, 2, 2, 2, 2}});
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0], (std::vector<float>{1, 6, 1, 8, 11, 2, 2, 2}));
}

TEST(TfliteMediaPipe, DensifyBlockSparseColumnsBecomeTheDenseMatrix) {
    // Columns in blocks of 2: row 0 keeps block 1 (columns 2, 3), row 1 block 0 (columns 0, 1).
    const auto bytes =
        densify_model(2, 4, {0, 1, 2}, {1}, {{true, 2, {}, {}}, {false, 0, {0, 1, 2}, {1, 0}}, {true, 2, {}, {}}},
                      {1.0f, 2.0f, 3.0f, 4.0f});
    const auto got = run_graph(import(bytes), {std::vector<float>(8, 0.0f)});
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0], (std::vector<float>{0, 0, 1, 2, 3, 4, 0, 0}));
}

TEST(TfliteMediaPipe, DensifyRefusesIndicesOutsideTheShape) {
    const auto bad_index =
        densify_model(2, 4, {0, 1}, {}, {{true, 2, {}, {}}, {false, 0, {0, 1, 2}, {1, 4}}}, {5.0f, 7.0f});
    const auto [status, message] = import_error(bad_index);
    EXPECT_EQ(status, KES_ERR_CORRUPT_DATA);
    EXPECT_NE(message.find("index 4 is outside [0, 4)"), std::string::npos) << message;

    const auto decreasing =
        densify_model(2, 4, {0, 1}, {}, {{true, 2, {}, {}}, {false, 0, {0, 2, 1}, {1, 3}}}, {5.0f, 7.0f});
    const auto [status2, message2] = import_error(decreasing);
    EXPECT_EQ(status2, KES_ERR_CORRUPT_DATA);
    EXPECT_NE(message2.find("array_segments decrease"), std::string::npos) << message2;

    // Three stored entries but two values.
    const auto short_values =
        densify_model(2, 4, {0, 1}, {}, {{true, 2, {}, {}}, {false, 0, {0, 2, 3}, {1, 3, 0}}}, {5.0f, 7.0f});
    const auto [status3, message3] = import_error(short_values);
    EXPECT_EQ(status3, KES_ERR_CORRUPT_DATA);
    EXPECT_NE(message3.find("past its 2 values"), std::string::npos) << message3;
}

TEST(TfliteMediaPipe, SparseTensorOutsideDensifyIsRefused) {
    TfliteBuilder tb;
    flatbuffers::FlatBufferBuilder& fb = tb.fb();
    const auto order = fb.CreateVector(std::vector<int32_t>{0});
    std::vector<flatbuffers::Offset<tfl::DimensionMetadata>> meta = {
        tfl::CreateDimensionMetadata(fb, tfl::DimensionType::DENSE, 2)};
    const auto meta_vector = fb.CreateVector(meta);
    const auto sparsity = tfl::CreateSparsityParameters(fb, order, 0, meta_vector);
    const int32_t w = tb.sparse_f32("w", {2}, {1.0f, 2.0f}, sparsity);
    const int32_t in = tb.tensor("input", {2}), out = tb.tensor("output", {2});
    tb.op(tfl::BuiltinOperator::ADD, {in, w}, {out});
    const auto [status, message] = import_error(tb.finish({in}, {out}));
    EXPECT_EQ(status, KES_ERR_UNSUPPORTED);
    EXPECT_NE(message.find("is sparse"), std::string::npos) << message;
}

// ---- DEPTH_TO_SPACE --------------------------------------------------------------------------------------------

TEST(TfliteMediaPipe, DepthToSpaceMovesChannelBlocksIntoPixels) {
    // [1, 1, 2, 4], block 2 → [1, 2, 4, 1]: output (i, 2x + j) is input pixel x, channel 2i + j.
    TfliteBuilder tb;
    const int32_t in = tb.tensor("input", {1, 1, 2, 4}), out = tb.tensor("output", {1, 2, 4, 1});
    tb.op(tfl::BuiltinOperator::DEPTH_TO_SPACE, {in}, {out}, tfl::BuiltinOptions::DepthToSpaceOptions,
          tfl::CreateDepthToSpaceOptions(tb.fb(), 2).Union());
    const auto got = run_graph(import(tb.finish({in}, {out})), {{0, 1, 2, 3, 4, 5, 6, 7}});
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0], (std::vector<float>{0, 1, 4, 5, 2, 3, 6, 7}));
}

// ---- Convolution2DTransposeBias ---------------------------------------------------------------------------------

std::vector<uint8_t> transpose_conv_options(int32_t padding, int32_t stride_w, int32_t stride_h) {
    return TfliteBuilder::bytes_of(std::vector<int32_t>{padding, stride_w, stride_h});
}

std::vector<std::vector<float>> transpose_conv_bias(std::vector<int32_t> in_shape, std::vector<int32_t> filter_shape,
                                                    std::vector<int32_t> out_shape, const std::vector<float>& filter,
                                                    float bias, const std::vector<uint8_t>& options,
                                                    const std::vector<float>& x) {
    TfliteBuilder tb;
    const int32_t in = tb.tensor("input", in_shape);
    const int32_t w = tb.f32("filter", filter_shape, filter), b = tb.f32("bias", {1}, {bias});
    const int32_t out = tb.tensor("output", out_shape);
    tb.custom_op("Convolution2DTransposeBias", {in, w, b}, {out}, options);
    return run_graph(import(tb.finish({in}, {out})), {x});
}

TEST(TfliteMediaPipe, Convolution2DTransposeBiasStride2Kernel2TilesEachPixel) {
    // Kernel 2 = stride 2 (selfie segmentation's last layer): each input pixel fills its own 2×2 tile.
    const auto got = transpose_conv_bias({1, 2, 2, 1}, {1, 2, 2, 1}, {1, 4, 4, 1}, {1, 10, 100, 1000}, 0.5f,
                                         transpose_conv_options(1, 2, 2), {1, 2, 3, 4});
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0], (std::vector<float>{1.5f, 10.5f, 2.5f, 20.5f,          //
                                          100.5f, 1000.5f, 200.5f, 2000.5f,  //
                                          3.5f, 30.5f, 4.5f, 40.5f,          //
                                          300.5f, 3000.5f, 400.5f, 4000.5f}));
}

TEST(TfliteMediaPipe, Convolution2DTransposeBiasSameCropsTheOddPaddingAtTheEnd) {
    // Kernel 3, stride 2 along H on [1, 2]: the full transposed result is [1, 10, 102, 20, 200]; SAME
    // keeps 2·2 = 4 values, padding k − s = 1 taken after (floor half, 0, before).
    const auto same = transpose_conv_bias({1, 2, 1, 1}, {1, 3, 1, 1}, {1, 4, 1, 1}, {1, 10, 100}, -1.0f,
                                          transpose_conv_options(1, 1, 2), {1, 2});
    ASSERT_EQ(same.size(), 1u);
    EXPECT_EQ(same[0], (std::vector<float>{0, 9, 101, 19}));
    // VALID keeps all (2 − 1)·2 + 3 = 5.
    const auto valid = transpose_conv_bias({1, 2, 1, 1}, {1, 3, 1, 1}, {1, 5, 1, 1}, {1, 10, 100}, 0.0f,
                                           transpose_conv_options(2, 1, 2), {1, 2});
    ASSERT_EQ(valid.size(), 1u);
    EXPECT_EQ(valid[0], (std::vector<float>{1, 10, 102, 20, 200}));
}

TEST(TfliteMediaPipe, Convolution2DTransposeBiasRefusesBadOptions) {
    TfliteBuilder tb;
    const int32_t in = tb.tensor("input", {1, 2, 2, 1});
    const int32_t w = tb.f32("filter", {1, 2, 2, 1}, {1, 2, 3, 4}), b = tb.f32("bias", {1}, {0.0f});
    const int32_t out = tb.tensor("output", {1, 4, 4, 1});
    tb.custom_op("Convolution2DTransposeBias", {in, w, b}, {out}, {1, 0, 0, 0});  // 4 of 12 bytes
    const auto [status, message] = import_error(tb.finish({in}, {out}));
    EXPECT_EQ(status, KES_ERR_CORRUPT_DATA);
    EXPECT_NE(message.find("custom options hold 4 bytes, expected 12"), std::string::npos) << message;

    TfliteBuilder unknown;
    const int32_t x = unknown.tensor("input", {1, 2}), y = unknown.tensor("output", {1, 2});
    unknown.custom_op("NoSuchOp", {x}, {y}, {});
    const auto [status2, message2] = import_error(unknown.finish({x}, {y}));
    EXPECT_EQ(status2, KES_ERR_UNSUPPORTED);
    EXPECT_NE(message2.find("custom op 'NoSuchOp' is not supported"), std::string::npos) << message2;
}

// ---- MaxPoolingWithArgmax2D / MaxUnpooling2D ----------------------------------------------------------------

// TfLitePoolParams as MediaPipe reads it: padding (1 SAME, 2 VALID), strides, filter, activation, and
// the padding TFLite computes at prepare time (ignored).
std::vector<uint8_t> pool_options(int32_t padding, int32_t stride, int32_t filter) {
    return TfliteBuilder::bytes_of(std::vector<int32_t>{padding, stride, stride, filter, filter, 0, 0, 0, 0, 0});
}

TEST(TfliteMediaPipe, MaxPoolingWithArgmaxThenUnpoolingPutsEachMaximumBack) {
    // 2×2 windows, stride 2 over [[1, 5, 2, 0], [3, 4, 8, 7]]: 5 at window position 1, 8 at 2.
    TfliteBuilder tb;
    const int32_t in = tb.tensor("input", {1, 2, 4, 1});
    const int32_t values = tb.tensor("values", {1, 1, 2, 1}), indices = tb.tensor("indices", {1, 1, 2, 1});
    const int32_t unpooled = tb.tensor("unpooled", {1, 2, 4, 1});
    tb.custom_op("MaxPoolingWithArgmax2D", {in}, {values, indices}, pool_options(2, 2, 2));
    tb.custom_op("MaxUnpooling2D", {values, indices}, {unpooled}, pool_options(1, 2, 2));
    const auto got = run_graph(import(tb.finish({in}, {values, indices, unpooled})), {{1, 5, 2, 0, 3, 4, 8, 7}});
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0], (std::vector<float>{5, 8}));
    EXPECT_EQ(got[1], (std::vector<float>{1, 2}));
    EXPECT_EQ(got[2], (std::vector<float>{0, 5, 0, 0, 0, 0, 8, 0}));
}

TEST(TfliteMediaPipe, MaxPoolingWithArgmaxSamePaddingNeverPicksThePadding) {
    // 3 wide, 2×2 stride 2 SAME: 2 windows, the second over column 2 and the padding after it.
    TfliteBuilder tb;
    const int32_t in = tb.tensor("input", {1, 2, 3, 1});
    const int32_t values = tb.tensor("values", {1, 1, 2, 1}), indices = tb.tensor("indices", {1, 1, 2, 1});
    tb.custom_op("MaxPoolingWithArgmax2D", {in}, {values, indices}, pool_options(1, 2, 2));
    const auto got = run_graph(import(tb.finish({in}, {values, indices})), {{-1, -2, -9, -3, -4, -5}});
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0], (std::vector<float>{-1, -5}));
    EXPECT_EQ(got[1], (std::vector<float>{0, 2}));  // -5 at window row 1, column 0
}

TEST(TfliteMediaPipe, MaxUnpoolingRefusesAnIndexOutsideTheWindow) {
    const kes::OpDef* def = kes::find_op("MaxUnpooling2D");
    ASSERT_NE(def, nullptr);
    kes::Attrs attrs;
    attrs.set_ints("kernel_shape", {2, 2});
    attrs.set_ints("strides", {2, 2});
    const std::string name = "unpool", op = "MaxUnpooling2D";
    kes::TensorDesc y, idx;
    y.shape = idx.shape = {1, 1, 1, 1};
    kes::NodeDesc node{name, op, attrs, {&y, &idx}, 1};
    std::vector<kes::TensorDesc> outputs(1);
    const auto kernel = kes::create_kernel(*def, node, outputs);
    EXPECT_EQ(outputs[0].shape, (kes::Shape{1, 2, 2, 1}));
    const float value = 1.0f, index = 4.0f;
    float out[4];
    const void* ins[] = {&value, &index};
    void* outs[] = {out};
    try {
        kernel->run(ins, outs);
        ADD_FAILURE() << "index 4 of a 2x2 window was accepted";
    } catch (const kes::Error& e) {
        EXPECT_EQ(e.status(), KES_ERR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(e.what()).find("index 4 at element 0 is not a position in a 2x2 window"),
                  std::string::npos)
            << e.what();
    }
}

// ---- Landmarks2TransformMatrix, TransformLandmarks, TransformTensorBilinear -------------------------------------

std::vector<uint8_t> flex_map(const std::function<void(flexbuffers::Builder&)>& fill) {
    flexbuffers::Builder fbb;
    const size_t start = fbb.StartMap();
    fill(fbb);
    fbb.EndMap(start);
    fbb.Finish();
    return fbb.GetBuffer();
}

std::vector<uint8_t> landmarks_options(int64_t left, int64_t right, std::vector<int32_t> subset) {
    return flex_map([&](flexbuffers::Builder& fbb) {
        fbb.Int("left_rotation_idx", left);
        fbb.Int("right_rotation_idx", right);
        fbb.Int("output_height", 2);
        fbb.Int("output_width", 4);
        fbb.Float("scale_x", 1.5f);
        fbb.Float("scale_y", 1.5f);
        fbb.Float("target_rotation_radians", 0.0f);
        fbb.Vector("subset_idxs", [&] {
            for (int32_t i : subset) fbb.Int(i);
        });
    });
}

std::vector<float> landmarks_matrix(int64_t left, int64_t right, const std::vector<float>& landmarks) {
    TfliteBuilder tb;
    const int32_t in = tb.tensor("landmarks", {1, 3, 3}), out = tb.tensor("matrix", {1, 4, 4});
    tb.custom_op("Landmarks2TransformMatrix", {in}, {out}, landmarks_options(left, right, {0, 1, 2}), 2);
    const auto got = run_graph(import(tb.finish({in}, {out})), {landmarks});
    return got.empty() ? std::vector<float>{} : got[0];
}

TEST(TfliteMediaPipe, Landmarks2TransformMatrixMapsTheCropOntoTheLandmarks) {
    // (0,0), (4,0), (2,2); left→right is level: the box is x 0..4, y 0..2 (centre (2, 1)), a 4×2 crop
    // scaled 1.5: M = T(2, 1) · S(1.5) · T(−2, −1).
    const std::vector<float> level = landmarks_matrix(0, 1, {0, 0, 7, 4, 0, 7, 2, 2, 7});
    kes_test::expect_near_all(level, {1.5f, 0, 0, -1.0f, 0, 1.5f, 0, -0.5f, 0, 0, 1, 0, 0, 0, 0, 1}, 1e-6f, "level");
    // (0,0), (0,4), (−2,2): left→right points down (+90°), so the crop turns with it: its x axis runs
    // along +y, its y axis along −x; the box is centred at (−1, 2).
    const std::vector<float> turned = landmarks_matrix(0, 1, {0, 0, 7, 0, 4, 7, -2, 2, 7});
    kes_test::expect_near_all(turned, {0, -1.5f, 0, 0.5f, 1.5f, 0, 0, -1.0f, 0, 0, 1, 0, 0, 0, 0, 1}, 1e-6f, "turned");
}

TEST(TfliteMediaPipe, Landmarks2TransformMatrixRefusesBadOptions) {
    TfliteBuilder tb;
    const int32_t in = tb.tensor("landmarks", {1, 3, 3}), out = tb.tensor("matrix", {1, 4, 4});
    tb.custom_op("Landmarks2TransformMatrix", {in}, {out}, landmarks_options(0, 5, {0, 1, 2}), 2);
    kes::ir::Graph g = import(tb.finish({in}, {out}));
    try {
        kes::ir::infer_shapes(g);
        ADD_FAILURE() << "landmark 5 of 3 was accepted";
    } catch (const kes::Error& e) {
        EXPECT_EQ(e.status(), KES_ERR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(e.what()).find("landmark index 5 is outside the 3 landmarks"), std::string::npos)
            << e.what();
    }

    TfliteBuilder missing;
    const int32_t x = missing.tensor("landmarks", {1, 3, 3}), y = missing.tensor("matrix", {1, 4, 4});
    missing.custom_op("Landmarks2TransformMatrix", {x}, {y},
                      flex_map([](flexbuffers::Builder& fbb) { fbb.Int("output_height", 2); }), 2);
    const auto [status, message] = import_error(missing.finish({x}, {y}));
    EXPECT_EQ(status, KES_ERR_CORRUPT_DATA);
    EXPECT_NE(message.find("custom option 'subset_idxs' is not a vector"), std::string::npos) << message;

    TfliteBuilder garbage;
    const int32_t a = garbage.tensor("landmarks", {1, 3, 3}), b = garbage.tensor("matrix", {1, 4, 4});
    garbage.custom_op("Landmarks2TransformMatrix", {a}, {b}, {0xff, 0xff, 0xff, 0x7f}, 2);
    const auto [status2, message2] = import_error(garbage.finish({a}, {b}));
    EXPECT_EQ(status2, KES_ERR_CORRUPT_DATA);
    EXPECT_NE(message2.find("FlexBuffer"), std::string::npos) << message2;

    TfliteBuilder v1;
    const int32_t c = v1.tensor("landmarks", {1, 3, 3}), d = v1.tensor("matrix", {1, 4, 4});
    v1.custom_op("Landmarks2TransformMatrix", {c}, {d}, landmarks_options(0, 1, {0}), 1);
    const auto [status3, message3] = import_error(v1.finish({c}, {d}));
    EXPECT_EQ(status3, KES_ERR_UNSUPPORTED);
    EXPECT_NE(message3.find("version 1 is not supported"), std::string::npos) << message3;
}

TEST(TfliteMediaPipe, TransformLandmarksAppliesTheAffinePartAndKeepsZ) {
    TfliteBuilder tb;
    const int32_t l = tb.tensor("landmarks", {1, 2, 3}), m = tb.tensor("matrix", {1, 4, 4});
    const int32_t out = tb.tensor("out", {1, 2, 3});
    tb.custom_op("TransformLandmarks", {l, m}, {out}, {}, 2);
    const std::vector<float> matrix = {0, -2, 0, 10, 3, 0, 0, 20, 0, 0, 1, 0, 0, 0, 0, 1};
    const auto got = run_graph(import(tb.finish({l, m}, {out})), {{1, 2, 9, 3, 4, 8}, matrix});
    ASSERT_EQ(got.size(), 1u);
    // (x, y) → (−2y + 10, 3x + 20)
    EXPECT_EQ(got[0], (std::vector<float>{6, 23, 9, 2, 29, 8}));
}

TEST(TfliteMediaPipe, TransformTensorBilinearSamplesPixelCentresAndZeroOutside) {
    auto sample = [](int32_t out_h, int32_t out_w, const std::vector<float>& matrix) {
        TfliteBuilder tb;
        const int32_t x = tb.tensor("image", {1, 2, 2, 1}), m = tb.tensor("matrix", {1, 4, 4});
        const int32_t out = tb.tensor("out", {1, out_h, out_w, 1});
        tb.custom_op("TransformTensorBilinear", {x, m}, {out}, flex_map([&](flexbuffers::Builder& fbb) {
                         fbb.Int("output_height", out_h);
                         fbb.Int("output_width", out_w);
                     }),
                     2);
        const auto got = run_graph(import(tb.finish({x, m}, {out})), {{0, 1, 2, 3}, matrix});
        return got.empty() ? std::vector<float>{} : got[0];
    };
    // Half scale, shifted a quarter: output pixel (x, y) reads input (x/2, y/2).
    EXPECT_EQ(sample(2, 2, {0.5f, 0, 0, 0.25f, 0, 0.5f, 0, 0.25f, 0, 0, 1, 0, 0, 0, 0, 1}),
              (std::vector<float>{0, 0.5f, 1, 1.5f}));
    // Identity over 3 columns: the third reads x = 2, past the last column.
    EXPECT_EQ(sample(1, 3, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}), (std::vector<float>{0, 1, 0}));
}

}  // namespace
