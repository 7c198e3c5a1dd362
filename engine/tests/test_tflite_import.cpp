// The TFLite importer: small .tflite files written here with FlatBuffers' builder, converted, run
// through the C API and compared with TFLite's semantics computed directly in NHWC; hostile files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "convert/fusion.hpp"
#include "kes/error.hpp"
#include "test_tflite_builder.hpp"

using kes_test::TfliteBuilder;
namespace tfl = kes::tflite;

namespace {

using kes_test::expect_near_all;
using kes_test::import_error;
using kes_test::ramp;
using kes_test::run_graph;

kes::ir::Graph import(const std::vector<uint8_t>& bytes) {
    return kes::ir::import_tflite(bytes.data(), bytes.size());
}

// TF's output size and leading pad for SAME/VALID, written from TF's documentation.
void tf_window(int64_t in, int64_t k, int64_t s, int64_t d, bool same, int64_t* out, int64_t* pad) {
    const int64_t eff = (k - 1) * d + 1;
    *out = same ? (in + s - 1) / s : (in - eff) / s + 1;
    *pad = same ? std::max<int64_t>((*out - 1) * s + eff - in, 0) / 2 : 0;
}

// TFLite CONV_2D (filter OHWI) or DEPTHWISE_CONV_2D (filter [1,KH,KW,C·M]) on NHWC, then act.
std::vector<float> tf_conv(const std::vector<float>& x, int64_t n, int64_t h, int64_t w, int64_t c,
                           const std::vector<float>& f, int64_t o, int64_t kh, int64_t kw, const std::vector<float>& b,
                           int64_t stride, int64_t dil, bool same, bool depthwise, float lo, float hi, int64_t* oh,
                           int64_t* ow) {
    int64_t ph, pw;
    tf_window(h, kh, stride, dil, same, oh, &ph);
    tf_window(w, kw, stride, dil, same, ow, &pw);
    std::vector<float> y(static_cast<size_t>(n * *oh * *ow * o));
    for (int64_t ni = 0; ni < n; ++ni)
        for (int64_t yi = 0; yi < *oh; ++yi)
            for (int64_t xi = 0; xi < *ow; ++xi)
                for (int64_t oc = 0; oc < o; ++oc) {
                    double acc = b.empty() ? 0.0 : b[static_cast<size_t>(oc)];
                    for (int64_t ky = 0; ky < kh; ++ky)
                        for (int64_t kx = 0; kx < kw; ++kx) {
                            const int64_t iy = yi * stride - ph + ky * dil, ix = xi * stride - pw + kx * dil;
                            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                            const float* px = &x[static_cast<size_t>(((ni * h + iy) * w + ix) * c)];
                            if (depthwise) {
                                acc += px[oc / (o / c)] * f[static_cast<size_t>((ky * kw + kx) * o + oc)];
                            } else {
                                for (int64_t ci = 0; ci < c; ++ci)
                                    acc += px[ci] * f[static_cast<size_t>(((oc * kh + ky) * kw + kx) * c + ci)];
                            }
                        }
                    y[static_cast<size_t>(((ni * *oh + yi) * *ow + xi) * o + oc)] =
                        std::min(std::max(static_cast<float>(acc), lo), hi);
                }
    return y;
}

std::vector<int32_t> i32shape(std::initializer_list<int64_t> s) {
    return std::vector<int32_t>(s.begin(), s.end());
}

}  // namespace

TEST(TfliteImport, ConvSameStride2WithFusedRelu6MatchesTflite) {
    const int64_t N = 2, H = 6, W = 5, C = 3, O = 4, K = 3;
    const auto x = ramp(N * H * W * C, 2.0f, 0.1f), f = ramp(O * K * K * C, 0.7f, 0.0f), b = ramp(O, 1.0f, 0.5f);
    TfliteBuilder tb;
    const int32_t in = tb.tensor("input", i32shape({N, H, W, C}));
    const int32_t filt = tb.f32("filter", i32shape({O, K, K, C}), f), bias = tb.f32("bias", {4}, b);
    const int32_t out = tb.tensor("output", i32shape({N, 3, 3, O}));
    tb.op(tfl::BuiltinOperator::CONV_2D, {in, filt, bias}, {out}, tfl::BuiltinOptions::Conv2DOptions,
          tfl::CreateConv2DOptions(tb.fb(), tfl::Padding::SAME, 2, 2, tfl::ActivationFunctionType::RELU6).Union());
    kes::ir::Graph g = import(tb.finish({in}, {out}));

    ASSERT_EQ(g.nodes.size(), 1u);
    const kes::ir::Node& conv = g.nodes[0];
    EXPECT_EQ(conv.op, "Conv");
    EXPECT_EQ(conv.attrs.get_string("data_layout"), "NHWC");
    // SAME stays symbolic at import (it follows the input size); the explicit-padding pass writes it out.
    // H 6, stride 2, k 3: out 3, total pad 1 → 0 top, 1 bottom; W 5: out 3, total 2 → 1 / 1.
    EXPECT_EQ(conv.attrs.get_string("auto_pad"), "SAME_UPPER");
    kes::ir::Graph explicit_pads = g;
    EXPECT_EQ(kes::ir::make_padding_explicit(explicit_pads).nodes_fused, 1u);
    EXPECT_EQ(explicit_pads.nodes[0].attrs.get_ints("pads"), (std::vector<int64_t>{0, 1, 1, 1}));
    EXPECT_FALSE(explicit_pads.nodes[0].attrs.has("auto_pad"));
    EXPECT_EQ(g.tensors[static_cast<size_t>(g.inputs[0])].layout, KES_LAYOUT_NHWC);

    int64_t oh, ow;
    const auto want = tf_conv(x, N, H, W, C, f, O, K, K, b, 2, 1, true, false, 0.0f, 6.0f, &oh, &ow);
    const auto got = run_graph(std::move(g), {x});
    ASSERT_EQ(got.size(), 1u);
    expect_near_all(got[0], want, 1e-5f, "conv");
}

TEST(TfliteImport, DepthwiseMultiplier2DilatedBecomesGroupedConvWithOhwiFilter) {
    const int64_t N = 1, H = 7, W = 6, C = 3, M = 2, K = 3;
    const auto x = ramp(N * H * W * C, 1.5f, -0.2f), f = ramp(K * K * C * M, 0.9f, 0.05f), b = ramp(C * M, 0.3f, 0.0f);
    TfliteBuilder tb;
    const int32_t in = tb.tensor("input", i32shape({N, H, W, C}));
    const int32_t filt = tb.f32("dw", i32shape({1, K, K, C * M}), f), bias = tb.f32("bias", i32shape({C * M}), b);
    const int32_t out = tb.tensor("output", i32shape({N, H, W, C * M}));
    tb.op(
        tfl::BuiltinOperator::DEPTHWISE_CONV_2D, {in, filt, bias}, {out}, tfl::BuiltinOptions::DepthwiseConv2DOptions,
        tfl::CreateDepthwiseConv2DOptions(tb.fb(), tfl::Padding::SAME, 1, 1, M, tfl::ActivationFunctionType::NONE, 2, 2)
            .Union());
    kes::ir::Graph g = import(tb.finish({in}, {out}));
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].attrs.get_int("group", 0), C);
    const kes::ir::Tensor& w = g.tensors[static_cast<size_t>(g.nodes[0].inputs[1])];
    EXPECT_EQ(w.shape, (kes::Shape{C * M, K, K, 1}));
    EXPECT_EQ(w.as<float>()[1 * K * K + 2], f[static_cast<size_t>(2 * C * M + 1)]);  // o 1, ky 0, kx 2

    int64_t oh, ow;
    const auto want = tf_conv(x, N, H, W, C, f, C * M, K, K, b, 1, 2, true, true, -INFINITY, INFINITY, &oh, &ow);
    const auto got = run_graph(std::move(g), {x});
    ASSERT_EQ(got.size(), 1u);
    expect_near_all(got[0], want, 1e-5f, "depthwise");
}

TEST(TfliteImport, FullyConnectedFlattensLikeTflite) {
    // [2,1,1,6] · W[4,6]ᵀ + b, keep_num_dims false → [2,4], fused RELU.
    const auto x = ramp(12, 1.0f, 0.0f), w = ramp(24, 0.5f, 0.1f), b = ramp(4, 0.2f, 0.0f);
    TfliteBuilder tb;
    const int32_t in = tb.tensor("input", {2, 1, 1, 6});
    const int32_t wt = tb.f32("w", {4, 6}, w), bt = tb.f32("b", {4}, b), out = tb.tensor("out", {2, 4});
    tb.op(tfl::BuiltinOperator::FULLY_CONNECTED, {in, wt, bt}, {out}, tfl::BuiltinOptions::FullyConnectedOptions,
          tfl::CreateFullyConnectedOptions(tb.fb(), tfl::ActivationFunctionType::RELU).Union());
    std::vector<float> want(8);
    for (int r = 0; r < 2; ++r)
        for (int u = 0; u < 4; ++u) {
            double acc = b[static_cast<size_t>(u)];
            for (int k = 0; k < 6; ++k) acc += x[static_cast<size_t>(r * 6 + k)] * w[static_cast<size_t>(u * 6 + k)];
            want[static_cast<size_t>(r * 4 + u)] = std::max(0.0f, static_cast<float>(acc));
        }
    const auto got = run_graph(import(tb.finish({in}, {out})), {x});
    ASSERT_EQ(got.size(), 1u);
    expect_near_all(got[0], want, 1e-5f, "fully connected");
}

TEST(TfliteImport, AveragePoolSameCountsOnlyValidPixels) {
    // [1,3,3,1], 2x2 window, stride 2, SAME: output 2x2, the right/bottom windows are partly padding.
    const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    TfliteBuilder tb;
    const int32_t in = tb.tensor("input", {1, 3, 3, 1}), out = tb.tensor("out", {1, 2, 2, 1});
    tb.op(tfl::BuiltinOperator::AVERAGE_POOL_2D, {in}, {out}, tfl::BuiltinOptions::Pool2DOptions,
          tfl::CreatePool2DOptions(tb.fb(), tfl::Padding::SAME, 2, 2, 2, 2).Union());
    const auto got = run_graph(import(tb.finish({in}, {out})), {x});
    ASSERT_EQ(got.size(), 1u);
    expect_near_all(got[0], {3.0f, 4.5f, 7.5f, 9.0f}, 1e-6f, "average pool");
}

TEST(TfliteImport, MaxPoolWithFusedReluGetsAnActivationNode) {
    const std::vector<float> x = {-1, -2, -3, -4, 5, -6, -7, -8};  // [1,2,4,1]
    TfliteBuilder tb;
    const int32_t in = tb.tensor("input", {1, 2, 4, 1}), out = tb.tensor("out", {1, 1, 2, 1});
    tb.op(
        tfl::BuiltinOperator::MAX_POOL_2D, {in}, {out}, tfl::BuiltinOptions::Pool2DOptions,
        tfl::CreatePool2DOptions(tb.fb(), tfl::Padding::VALID, 2, 2, 2, 2, tfl::ActivationFunctionType::RELU).Union());
    kes::ir::Graph g = import(tb.finish({in}, {out}));
    ASSERT_EQ(g.nodes.size(), 2u);
    EXPECT_EQ(g.nodes[1].op, "Relu");
    const auto got = run_graph(std::move(g), {x});
    ASSERT_EQ(got.size(), 1u);
    expect_near_all(got[0], {5.0f, 0.0f}, 0.0f, "max pool + relu");
}

TEST(TfliteImport, StridedSliceMasksAndShrinkAxis) {
    // x [2,3,4]; x[1, ::-1, 1:] with begin_mask on dim 1, end_mask on dims 1 and 2, shrink dim 0.
    std::vector<float> x(24);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
    TfliteBuilder tb;
    const int32_t in = tb.tensor("input", {2, 3, 4});
    const int32_t begin = tb.i32("begin", {3}, {1, 7, 1}), end = tb.i32("end", {3}, {2, 0, 0});
    const int32_t strides = tb.i32("strides", {3}, {1, -1, 1}), out = tb.tensor("out", {3, 3});
    tb.op(tfl::BuiltinOperator::STRIDED_SLICE, {in, begin, end, strides}, {out},
          tfl::BuiltinOptions::StridedSliceOptions,
          tfl::CreateStridedSliceOptions(tb.fb(), 0b010, 0b110, 0, 0, 0b001).Union());
    const auto got = run_graph(import(tb.finish({in}, {out})), {x});
    ASSERT_EQ(got.size(), 1u);
    expect_near_all(got[0], {21, 22, 23, 17, 18, 19, 13, 14, 15}, 0.0f, "strided slice");
}

// TF's RESIZE_BILINEAR with half_pixel_centers on a [1,H,W,2] ramp, against TF's formula.
static void check_resize_bilinear_half_pixel(int64_t H, int64_t W, int64_t OH, int64_t OW) {
    const auto x = ramp(H * W * 2, 3.0f, 0.0f);  // [1,2,3,2]
    TfliteBuilder tb;
    const int32_t in = tb.tensor("input", i32shape({1, H, W, 2}));
    const int32_t size = tb.i32("size", {2}, {static_cast<int32_t>(OH), static_cast<int32_t>(OW)});
    const int32_t out = tb.tensor("out", i32shape({1, OH, OW, 2}));
    tb.op(tfl::BuiltinOperator::RESIZE_BILINEAR, {in, size}, {out}, tfl::BuiltinOptions::ResizeBilinearOptions,
          tfl::CreateResizeBilinearOptions(tb.fb(), false, true).Union());
    // TF: in = (out + 0.5)·scale − 0.5, lower = max(floor(in), 0), upper = min(ceil(in), size − 1).
    auto axis = [](int64_t o, int64_t in_size, int64_t out_size, int64_t* lo, int64_t* hi, float* t) {
        const float v =
            (static_cast<float>(o) + 0.5f) * static_cast<float>(in_size) / static_cast<float>(out_size) - 0.5f;
        *lo = std::max<int64_t>(static_cast<int64_t>(std::floor(v)), 0);
        *hi = std::min<int64_t>(static_cast<int64_t>(std::ceil(v)), in_size - 1);
        *t = v - std::floor(v);
    };
    std::vector<float> want;
    for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox)
            for (int64_t c = 0; c < 2; ++c) {
                int64_t y0, y1, x0, x1;
                float ty, tx;
                axis(oy, H, OH, &y0, &y1, &ty);
                axis(ox, W, OW, &x0, &x1, &tx);
                auto at = [&](int64_t y, int64_t xx) { return x[static_cast<size_t>((y * W + xx) * 2 + c)]; };
                const float top = at(y0, x0) + (at(y0, x1) - at(y0, x0)) * tx;
                const float bottom = at(y1, x0) + (at(y1, x1) - at(y1, x0)) * tx;
                want.push_back(top + (bottom - top) * ty);
            }
    const kes::ir::Graph g = import(tb.finish({in}, {out}));
    ASSERT_EQ(g.nodes.size(), 1u);
    const bool integral = OH % H == 0 && OW % W == 0;
    EXPECT_EQ(g.nodes[0].inputs.size(), integral ? 3u : 4u) << "scales for an integer factor, else sizes";
    const auto got = run_graph(g, {x});
    ASSERT_EQ(got.size(), 1u);
    expect_near_all(got[0], want, 1e-5f, "resize bilinear");
}

TEST(TfliteImport, ResizeBilinearHalfPixelCentersMatchesTf) {
    // 2x3 → 4x5 keeps the file's sizes; 2x3 → 4x6 (×2) becomes scales; both must be TF's numbers.
    for (const int64_t OW : {5, 6}) {
        SCOPED_TRACE(OW);
        check_resize_bilinear_half_pixel(2, 3, 4, OW);
    }
}

TEST(TfliteImport, MeanSoftmaxBetaPadReshapeChain) {
    // x [1,2,2,3] → PAD (1 row on top) → MEAN over H,W keep_dims → RESHAPE [1,3] → SOFTMAX beta 2.
    const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    TfliteBuilder tb;
    const int32_t in = tb.tensor("input", {1, 2, 2, 3});
    const int32_t pads = tb.i32("pads", {4, 2}, {0, 0, 1, 0, 0, 0, 0, 0}), padded = tb.tensor("padded", {1, 3, 2, 3});
    const int32_t axes = tb.i32("axes", {2}, {1, 2}), mean = tb.tensor("mean", {1, 1, 1, 3});
    const int32_t shape = tb.i32("shape", {2}, {1, 3}), flat = tb.tensor("flat", {1, 3});
    const int32_t out = tb.tensor("out", {1, 3});
    tb.op(tfl::BuiltinOperator::PAD, {in, pads}, {padded});
    tb.op(tfl::BuiltinOperator::MEAN, {padded, axes}, {mean}, tfl::BuiltinOptions::ReducerOptions,
          tfl::CreateReducerOptions(tb.fb(), true).Union());
    tb.op(tfl::BuiltinOperator::RESHAPE, {mean, shape}, {flat});
    tb.op(tfl::BuiltinOperator::SOFTMAX, {flat}, {out}, tfl::BuiltinOptions::SoftmaxOptions,
          tfl::CreateSoftmaxOptions(tb.fb(), 2.0f).Union());
    // Means over 6 pixels (2 of them padding zeros): (1+4+7+10)/6 etc.
    const float m[3] = {22.0f / 6, 26.0f / 6, 30.0f / 6};
    float e[3], s = 0;
    for (int i = 0; i < 3; ++i) s += e[i] = std::exp(2.0f * m[i]);
    const auto got = run_graph(import(tb.finish({in}, {out})), {x});
    ASSERT_EQ(got.size(), 1u);
    expect_near_all(got[0], {e[0] / s, e[1] / s, e[2] / s}, 1e-5f, "pad/mean/reshape/softmax");
}

TEST(TfliteImport, DequantizedFp16AndInt8WeightsBecomeF32Constants) {
    // y = x · dequant(fp16 a) + dequant(int8 b, per-axis scales)
    const std::vector<float> a = {0.5f, -1.25f, 2.0f, 3.5f};
    std::vector<uint16_t> a16(4);
    kes_fp16_from_f32(a.data(), a16.data(), 4);
    const std::vector<int8_t> b8 = {10, -20, 30, -40};  // shape [1,4], axis 1, scales 0.1,0.2,0.3,0.4, zp 0,1,2,3
    TfliteBuilder tb;
    const int32_t in = tb.tensor("input", {1, 4});
    const int32_t ah = tb.tensor("a16", {1, 4}, tfl::TensorType::FLOAT16, TfliteBuilder::bytes_of(a16));
    auto q = tfl::CreateQuantizationParameters(tb.fb(), 0, 0, tb.fb().CreateVector<float>({0.1f, 0.2f, 0.3f, 0.4f}),
                                               tb.fb().CreateVector<int64_t>({0, 1, 2, 3}),
                                               tfl::QuantizationDetails::NONE, 0, 1);
    const int32_t bq = tb.tensor("b8", {1, 4}, tfl::TensorType::INT8, TfliteBuilder::bytes_of(b8), q);
    const int32_t af = tb.tensor("a", {1, 4}), bf = tb.tensor("b", {1, 4});
    const int32_t prod = tb.tensor("prod", {1, 4}), out = tb.tensor("out", {1, 4});
    tb.op(tfl::BuiltinOperator::DEQUANTIZE, {ah}, {af});
    tb.op(tfl::BuiltinOperator::DEQUANTIZE, {bq}, {bf});
    tb.op(tfl::BuiltinOperator::MUL, {in, af}, {prod}, tfl::BuiltinOptions::MulOptions,
          tfl::CreateMulOptions(tb.fb()).Union());
    tb.op(tfl::BuiltinOperator::ADD, {prod, bf}, {out}, tfl::BuiltinOptions::AddOptions,
          tfl::CreateAddOptions(tb.fb()).Union());
    kes::ir::Graph g = import(tb.finish({in}, {out}));
    ASSERT_EQ(g.nodes.size(), 2u);  // the DEQUANTIZEs are folded
    for (const kes::ir::Tensor& t : g.tensors) EXPECT_TRUE(t.dtype == KES_F32) << t.name;
    const std::vector<float> x = {1, 2, 3, 4};
    const float b[4] = {0.1f * 10, 0.2f * (-20 - 1), 0.3f * (30 - 2), 0.4f * (-40 - 3)};
    const auto got = run_graph(std::move(g), {x});
    ASSERT_EQ(got.size(), 1u);
    expect_near_all(got[0], {1 * a[0] + b[0], 2 * a[1] + b[1], 3 * a[2] + b[2], 4 * a[3] + b[3]}, 1e-6f, "dequant");
}

TEST(TfliteImport, ReshapeKeepsBatchSymbolic) {
    TfliteBuilder tb;
    const int32_t in = tb.tensor("input", {2, 1, 1, 8}), out = tb.tensor("out", {2, 8});
    tb.op(tfl::BuiltinOperator::RESHAPE, {in}, {out}, tfl::BuiltinOptions::ReshapeOptions,
          tfl::CreateReshapeOptions(tb.fb(), tb.fb().CreateVector<int32_t>({2, 8})).Union());
    kes::ir::Graph g = import(tb.finish({in}, {out}));
    ASSERT_EQ(g.nodes.size(), 1u);
    const kes::ir::Tensor& shape = g.tensors[static_cast<size_t>(g.nodes[0].inputs[1])];
    ASSERT_EQ(shape.elements(), 2);
    EXPECT_EQ(shape.as<int64_t>()[0], 0);  // ONNX: copy dim 0
    EXPECT_EQ(shape.as<int64_t>()[1], 8);
    std::vector<float> x(16);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
    const auto got = run_graph(std::move(g), {x});
    ASSERT_EQ(got.size(), 1u);
    expect_near_all(got[0], x, 0.0f, "reshape");
}

// ---- hostile and unsupported files -------------------------------------------------------------------

namespace {

std::vector<uint8_t> tiny_relu_model(int32_t builtin = static_cast<int32_t>(tfl::BuiltinOperator::RELU)) {
    TfliteBuilder tb;
    const int32_t in = tb.tensor("x", {1, 4}), out = tb.tensor("y", {1, 4});
    tb.op(builtin, {in}, {out});
    return tb.finish({in}, {out});
}

}  // namespace

TEST(TfliteImport, RejectsWrongIdentifierAndTruncation) {
    std::vector<uint8_t> bytes = tiny_relu_model();
    auto [st, msg] = import_error(bytes);
    EXPECT_EQ(st, KES_OK) << msg;
    std::vector<uint8_t> bad_id = bytes;
    bad_id[4] = 'X';
    std::tie(st, msg) = import_error(bad_id);
    EXPECT_EQ(st, KES_ERR_CORRUPT_DATA);
    EXPECT_NE(msg.find("TFL3"), std::string::npos) << msg;
    for (size_t cut : {size_t{0}, size_t{7}, bytes.size() / 2, bytes.size() - 1}) {
        std::vector<uint8_t> part(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
        std::tie(st, msg) = import_error(part);
        EXPECT_EQ(st, KES_ERR_CORRUPT_DATA) << "cut at " << cut << ": " << msg;
    }
}

TEST(TfliteImport, UnsupportedBuiltinIsNamedWithOperatorAndSubgraph) {
    auto [st, msg] = import_error(tiny_relu_model(static_cast<int32_t>(tfl::BuiltinOperator::SVDF)));
    EXPECT_EQ(st, KES_ERR_UNSUPPORTED);
    EXPECT_NE(msg.find("SVDF"), std::string::npos) << msg;
    EXPECT_NE(msg.find("operator 0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("subgraph 0"), std::string::npos) << msg;
    // A code past 127 lives only in the extended builtin_code field (schema 3a).
    std::tie(st, msg) = import_error(tiny_relu_model(static_cast<int32_t>(tfl::BuiltinOperator::GELU)));
    EXPECT_EQ(st, KES_ERR_UNSUPPORTED);
    EXPECT_NE(msg.find("GELU"), std::string::npos) << msg;
}

TEST(TfliteImport, RejectsOutOfRangeTensorAndBufferSizeMismatch) {
    {
        TfliteBuilder tb;
        const int32_t in = tb.tensor("x", {1, 4}), out = tb.tensor("y", {1, 4});
        tb.op(tfl::BuiltinOperator::RELU, {in + 10}, {out});
        auto [st, msg] = import_error(tb.finish({in}, {out}));
        EXPECT_EQ(st, KES_ERR_CORRUPT_DATA);
        EXPECT_NE(msg.find("out of range"), std::string::npos) << msg;
    }
    {
        TfliteBuilder tb;
        const int32_t in = tb.tensor("x", {1, 4}), c = tb.f32("c", {1, 4}, {1, 2, 3});  // 3 values for 4
        const int32_t out = tb.tensor("y", {1, 4});
        tb.op(tfl::BuiltinOperator::ADD, {in, c}, {out});
        auto [st, msg] = import_error(tb.finish({in}, {out}));
        EXPECT_EQ(st, KES_ERR_CORRUPT_DATA);
        EXPECT_NE(msg.find("'c'"), std::string::npos) << msg;
    }
    {
        TfliteBuilder tb;  // reads a tensor nothing wrote
        const int32_t in = tb.tensor("x", {1, 4}), ghost = tb.tensor("ghost", {1, 4}), out = tb.tensor("y", {1, 4});
        tb.op(tfl::BuiltinOperator::ADD, {in, ghost}, {out});
        auto [st, msg] = import_error(tb.finish({in}, {out}));
        EXPECT_EQ(st, KES_ERR_CORRUPT_DATA);
        EXPECT_NE(msg.find("ghost"), std::string::npos) << msg;
    }
}

TEST(TfliteImport, RejectsOptionsOfTheWrongTypeAndMissingConvOptions) {
    {
        TfliteBuilder tb;
        const int32_t in = tb.tensor("x", {1, 2, 2, 1}), out = tb.tensor("y", {1, 1, 1, 1});
        tb.op(tfl::BuiltinOperator::MAX_POOL_2D, {in}, {out}, tfl::BuiltinOptions::SoftmaxOptions,
              tfl::CreateSoftmaxOptions(tb.fb(), 1.0f).Union());
        auto [st, msg] = import_error(tb.finish({in}, {out}));
        EXPECT_EQ(st, KES_ERR_CORRUPT_DATA);
        EXPECT_NE(msg.find("Pool2DOptions"), std::string::npos) << msg;
    }
    {
        TfliteBuilder tb;
        const int32_t in = tb.tensor("x", {1, 2, 2, 1}), w = tb.f32("w", {1, 1, 1, 1}, {1.0f});
        const int32_t out = tb.tensor("y", {1, 2, 2, 1});
        tb.op(tfl::BuiltinOperator::CONV_2D, {in, w}, {out});
        auto [st, msg] = import_error(tb.finish({in}, {out}));
        EXPECT_EQ(st, KES_ERR_CORRUPT_DATA);
        EXPECT_NE(msg.find("options are missing"), std::string::npos) << msg;
    }
}

TEST(TfliteImport, RejectsOtherSchemaVersions) {
    TfliteBuilder tb;
    const int32_t in = tb.tensor("x", {1, 4}), out = tb.tensor("y", {1, 4});
    tb.op(tfl::BuiltinOperator::RELU, {in}, {out});
    auto [st, msg] = import_error(tb.finish({in}, {out}, 2));
    EXPECT_EQ(st, KES_ERR_UNSUPPORTED);
    EXPECT_NE(msg.find("version 2"), std::string::npos) << msg;
}

// The fuzz seeds (engine/fuzz/seeds_tflite, written with TfliteBuilder) stay valid models that reach
// deep into the importer: the two graphs convert and shape-infer, the third names its unsupported op.
TEST(TfliteImport, CommittedFuzzSeedsImport) {
    const std::string dir = std::string(KES_SOURCE_DIR) + "/engine/fuzz/seeds_tflite/";
    for (const char* name : {"conv_prelu_dw_reshape.tflite", "pool_concat_resize_slice_fc16.tflite"}) {
        std::ifstream f(dir + name, std::ios::binary);
        ASSERT_TRUE(f) << dir + name;
        const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        kes::ir::Graph g = import(bytes);
        EXPECT_GE(g.nodes.size(), 5u) << name;
        EXPECT_NO_THROW(kes::ir::infer_shapes(g)) << name;
    }
    std::ifstream f(dir + "unsupported_l2norm.tflite", std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    auto [st, msg] = import_error(bytes);
    EXPECT_EQ(st, KES_ERR_UNSUPPORTED);
    EXPECT_NE(msg.find("L2_NORMALIZATION"), std::string::npos) << msg;
}

TEST(TfliteImport, LegacyByteOpcodesAndKeepNumDimsFullyConnected) {
    // [2,3,4] · W[5,4]ᵀ with keep_num_dims → [2,3,5]; the file carries only pre-2.4 byte opcodes.
    const auto x = ramp(24, 1.0f, 0.2f), w = ramp(20, 0.6f, 0.0f);
    TfliteBuilder tb;
    const int32_t in = tb.tensor("input", {2, 3, 4}), wt = tb.f32("w", {5, 4}, w), out = tb.tensor("out", {2, 3, 5});
    tb.op(tfl::BuiltinOperator::FULLY_CONNECTED, {in, wt, -1}, {out}, tfl::BuiltinOptions::FullyConnectedOptions,
          tfl::CreateFullyConnectedOptions(tb.fb(), tfl::ActivationFunctionType::NONE,
                                           tfl::FullyConnectedOptionsWeightsFormat::DEFAULT, true)
              .Union());
    kes::ir::Graph g = import(tb.finish({in}, {out}, 3, /*legacy_codes=*/true));
    std::vector<float> want(30);
    for (int r = 0; r < 6; ++r)
        for (int u = 0; u < 5; ++u) {
            double acc = 0;
            for (int k = 0; k < 4; ++k) acc += x[static_cast<size_t>(r * 4 + k)] * w[static_cast<size_t>(u * 4 + k)];
            want[static_cast<size_t>(r * 5 + u)] = static_cast<float>(acc);
        }
    kes::ir::infer_shapes(g);
    EXPECT_EQ(g.tensors[static_cast<size_t>(g.outputs[0])].shape, (kes::Shape{2, 3, 5}));
    const auto got = run_graph(std::move(g), {x});
    ASSERT_EQ(got.size(), 1u);
    expect_near_all(got[0], want, 1e-5f, "fully connected keep_num_dims");
}

TEST(TfliteImport, ResizeNearestAlignCornersRoundsHalfUp) {
    // 1-d along W: in 3 → out 5 with align_corners: x_in = x_out · 2/4 → 0, 0.5, 1, 1.5, 2 → TF rounds
    // half away from zero: 0, 1, 1, 2, 2.
    TfliteBuilder tb;
    const int32_t in = tb.tensor("input", {1, 1, 3, 1}), size = tb.i32("size", {2}, {1, 5});
    const int32_t out = tb.tensor("out", {1, 1, 5, 1});
    tb.op(tfl::BuiltinOperator::RESIZE_NEAREST_NEIGHBOR, {in, size}, {out},
          tfl::BuiltinOptions::ResizeNearestNeighborOptions,
          tfl::CreateResizeNearestNeighborOptions(tb.fb(), true, false).Union());
    const auto got = run_graph(import(tb.finish({in}, {out})), {{10, 20, 30}});
    ASSERT_EQ(got.size(), 1u);
    expect_near_all(got[0], {10, 20, 20, 30, 30}, 0.0f, "resize nearest");
}

TEST(TfliteImport, UnknownFusedActivationIsUnsupported) {
    TfliteBuilder tb;
    const int32_t a = tb.tensor("a", {1, 4}), b = tb.tensor("b", {1, 4}), out = tb.tensor("y", {1, 4});
    tb.op(tfl::BuiltinOperator::ADD, {a, b}, {out}, tfl::BuiltinOptions::AddOptions,
          tfl::CreateAddOptions(tb.fb(), tfl::ActivationFunctionType::SIGN_BIT).Union());
    auto [st, msg] = import_error(tb.finish({a, b}, {out}));
    EXPECT_EQ(st, KES_ERR_UNSUPPORTED);
    EXPECT_NE(msg.find("ADD"), std::string::npos) << msg;
}

TEST(TfliteImport, ComparisonsAndSelectV2) {
    // y = select(a >= b && a != 2, a, b) with the TFLite comparison/logical/select builtins.
    TfliteBuilder tb;
    const int32_t a = tb.tensor("a", {5}), b = tb.tensor("b", {5}), two = tb.f32("two", {}, {2.0f});
    const int32_t ge = tb.tensor("ge", {5}, tfl::TensorType::BOOL), ne = tb.tensor("ne", {5}, tfl::TensorType::BOOL);
    const int32_t both = tb.tensor("both", {5}, tfl::TensorType::BOOL), out = tb.tensor("y", {5});
    tb.op(tfl::BuiltinOperator::GREATER_EQUAL, {a, b}, {ge});
    tb.op(tfl::BuiltinOperator::NOT_EQUAL, {a, two}, {ne});
    tb.op(tfl::BuiltinOperator::LOGICAL_AND, {ge, ne}, {both});
    tb.op(tfl::BuiltinOperator::SELECT_V2, {both, a, b}, {out});
    const auto got = run_graph(import(tb.finish({a, b}, {out})), {{1, 2, 3, 4, 5}, {0, 1, 3, 5, 9}});
    ASSERT_EQ(got.size(), 1u);
    expect_near_all(got[0], {1, 1, 3, 5, 9}, 0.0f, "select");
}

TEST(TfliteImport, ElementwiseBuiltinsComputeTheirTfliteFunctions) {
    const std::vector<float> x = {0.25f, 0.5f, 1.5f, 2.5f, 7.0f};
    struct Case {
        tfl::BuiltinOperator op;
        float (*f)(float);
    };
    const Case cases[] = {
        {tfl::BuiltinOperator::RELU, [](float v) { return std::max(v, 0.0f); }},
        {tfl::BuiltinOperator::ABS, [](float v) { return std::fabs(v); }},
        {tfl::BuiltinOperator::NEG, [](float v) { return -v; }},
        {tfl::BuiltinOperator::LOGISTIC, [](float v) { return 1.0f / (1.0f + std::exp(-v)); }},
        {tfl::BuiltinOperator::TANH, [](float v) { return std::tanh(v); }},
        {tfl::BuiltinOperator::EXP, [](float v) { return std::exp(v); }},
        {tfl::BuiltinOperator::LOG, [](float v) { return std::log(v); }},
        {tfl::BuiltinOperator::SQRT, [](float v) { return std::sqrt(v); }},
        {tfl::BuiltinOperator::RSQRT, [](float v) { return 1.0f / std::sqrt(v); }},
        {tfl::BuiltinOperator::FLOOR, [](float v) { return std::floor(v); }},
        {tfl::BuiltinOperator::CEIL, [](float v) { return std::ceil(v); }},
        {tfl::BuiltinOperator::ROUND, [](float v) { return std::nearbyint(v); }},  // half to even, as TF
        {tfl::BuiltinOperator::SIN, [](float v) { return std::sin(v); }},
        {tfl::BuiltinOperator::COS, [](float v) { return std::cos(v); }},
        {tfl::BuiltinOperator::HARD_SWISH, [](float v) { return v * std::min(std::max(v + 3.0f, 0.0f), 6.0f) / 6.0f; }},
        {tfl::BuiltinOperator::RELU6, [](float v) { return std::min(std::max(v, 0.0f), 6.0f); }},
        {tfl::BuiltinOperator::RELU_N1_TO_1, [](float v) { return std::min(std::max(v, -1.0f), 1.0f); }},
        {tfl::BuiltinOperator::SQUARE, [](float v) { return v * v; }},
    };
    for (const Case& c : cases) {
        TfliteBuilder tb;
        const int32_t in = tb.tensor("x", {5}), out = tb.tensor("y", {5});
        tb.op(c.op, {in}, {out});
        std::vector<float> want;
        for (float v : x) want.push_back(c.f(v));
        const auto got = run_graph(import(tb.finish({in}, {out})), {x});
        ASSERT_EQ(got.size(), 1u) << tfl::EnumNameBuiltinOperator(c.op);
        expect_near_all(got[0], want, 1e-5f, tfl::EnumNameBuiltinOperator(c.op));
    }
}

TEST(TfliteFuzzSeeds, CommittedBytesComeFromTheBuilder) {
    const std::string dir = std::string(KES_SOURCE_DIR) + "/engine/fuzz/seeds_tflite/";
    const char* write = std::getenv("KES_WRITE_TFLITE_SEEDS");
    for (const kes_test::TfliteSeed& seed : kes_test::tflite_seeds()) {
        const std::vector<uint8_t> built = seed.build();
        if (write && std::string(write) == "1") {
            std::ofstream(dir + seed.file, std::ios::binary)
                .write(reinterpret_cast<const char*>(built.data()), static_cast<std::streamsize>(built.size()));
        }
        std::ifstream f(dir + seed.file, std::ios::binary);
        ASSERT_TRUE(f) << dir + seed.file;
        const std::vector<uint8_t> committed((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        EXPECT_EQ(committed, built) << seed.file << ": rewrite with KES_WRITE_TFLITE_SEEDS=1";
    }
}
