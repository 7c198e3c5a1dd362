// test_tflite_quant.cpp — fully quantized TFLite models (engine/tests/models/make_tflite_quant_models.py;
// committed fixtures in engine/tests/models/tflite_quant/): each converts keeping its quantized ops
// quantized (no float Conv, Gemm, Add, Mul or Concat; every QLinear op on TFLite's arithmetic), runs,
// and matches TFLite's integer kernels as the generator computes them (checked there against Arm NN's
// CpuRef, which computes in float and is within 1 LSB of them): the FULLY_CONNECTED logits, which every
// integer op before them decides, and the ADD's and the first CONV_2D's outputs bit-exact; SOFTMAX and
// LOGISTIC (f32 between DequantizeLinear and QuantizeLinear here) within 1 LSB (docs/ARCHITECTURE.md
// "Quantized models"). Also: TFLite's fixed-point helpers on known values, an int8 conv against TFLite's
// arithmetic written out, uint8 CONCATENATION's requantization, QUANTIZE between types, an op computed in
// f32, and bad quantization parameters refused naming the tensor.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "convert/convert.hpp"
#include "kestrel/convert.h"
#include "kestrel/engine.h"
#include "model_cache.hpp"
#include "ops/quant.hpp"
#include "test_tflite_builder.hpp"

namespace {

namespace tfl = kes::tflite;
using kes_test::TfliteBuilder;

std::vector<uint8_t> read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    EXPECT_TRUE(f) << path;
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::string fixture(const std::string& file) {
    return std::string(KES_SOURCE_DIR) + "/engine/tests/models/tflite_quant/" + file;
}

struct Deleters {
    void operator()(kes_model* m) const { kes_model_unload(m); }
    void operator()(kes_model_context* c) const { kes_model_context_destroy(c); }
};

struct Output {
    kes_dtype dtype = KES_F32;
    std::vector<uint8_t> bytes;
};

// Converts and runs a model on the raw input bytes; returns each output's dtype and bytes.
std::vector<Output> run_model(const std::vector<uint8_t>& model_bytes, std::vector<uint8_t> input) {
    void* kom = nullptr;
    size_t kom_size = 0;
    EXPECT_EQ(kes_convert_memory(model_bytes.data(), model_bytes.size(), nullptr, &kom, &kom_size, nullptr), KES_OK)
        << kes_last_error();
    if (!kom) return {};
    std::unique_ptr<void, void (*)(void*)> kom_owner(kom, kes_convert_free);
    kes_model* raw_model = nullptr;
    EXPECT_EQ(kes_model_load_from_memory(kom, kom_size, &raw_model), KES_OK) << kes_last_error();
    std::unique_ptr<kes_model, Deleters> model(raw_model);
    if (!model) return {};
    kes_model_context* raw_ctx = nullptr;
    EXPECT_EQ(kes_model_context_create(model.get(), nullptr, 0, &raw_ctx), KES_OK) << kes_last_error();
    std::unique_ptr<kes_model_context, Deleters> ctx(raw_ctx);
    if (!ctx) return {};
    kes_tensor in;
    EXPECT_EQ(kes_model_context_input_desc(ctx.get(), 0, &in), KES_OK);
    kes_tensor x = in;
    EXPECT_EQ(kes_tensor_wrap(&x, in.dtype, in.layout, in.ndim, in.shape, input.data(), input.size()), KES_OK)
        << kes_last_error();
    size_t n_out = 0;
    EXPECT_EQ(kes_model_output_count(model.get(), &n_out), KES_OK);
    std::vector<kes_tensor> outs(n_out);
    std::vector<Output> values(n_out);
    for (size_t k = 0; k < n_out; ++k) {
        kes_tensor d;
        EXPECT_EQ(kes_model_context_output_desc(ctx.get(), k, &d), KES_OK);
        size_t elements = 1;
        for (uint32_t i = 0; i < d.ndim; ++i) elements *= static_cast<size_t>(d.shape[i]);
        values[k].dtype = d.dtype;
        values[k].bytes.assign(elements * kes_dtype_size(d.dtype), 0);
        EXPECT_EQ(kes_tensor_wrap(&outs[k], d.dtype, d.layout, d.ndim, d.shape, values[k].bytes.data(),
                                  values[k].bytes.size()),
                  KES_OK);
    }
    EXPECT_EQ(kes_model_execute(ctx.get(), &x, 1, outs.data(), n_out), KES_OK) << kes_last_error();
    return values;
}

// An output's values in its own units: quantized steps for u8/i8, f32 divided by `lsb`.
std::vector<double> steps(const Output& o, double lsb) {
    std::vector<double> v;
    const size_t n = o.bytes.size() / kes_dtype_size(o.dtype);
    for (size_t i = 0; i < n; ++i) {
        if (o.dtype == KES_I8) {
            v.push_back(static_cast<int8_t>(o.bytes[i]));
        } else if (o.dtype == KES_U8) {
            v.push_back(o.bytes[i]);
        } else {
            float f;
            std::memcpy(&f, &o.bytes[4 * i], 4);
            v.push_back(f / lsb);
        }
    }
    return v;
}

struct FixtureCase {
    const char* name;
    kes_dtype quantized;  // the activations' type
};

class TfliteQuantModels : public ::testing::TestWithParam<FixtureCase> {};

TEST_P(TfliteQuantModels, StayQuantizedAndMatchTflite) {
    const FixtureCase c = GetParam();
    const std::vector<uint8_t> model = read_file(fixture(std::string(c.name) + ".tflite"));
    ASSERT_FALSE(model.empty());

    // The converted graph: every quantized op of the file is a quantized op, on TFLite's arithmetic.
    const kes::ir::Graph g = kes::convert::build_graph(model.data(), model.size(), kes::convert::Options{});
    std::map<std::string, int> ops;
    for (const kes::ir::Node& n : g.nodes) {
        ++ops[n.op];
        if (n.op.rfind("QLinear", 0) == 0 || n.op == "QuantizeLinear") {
            EXPECT_EQ(n.attrs.get_string("kes_requantization"), "tflite") << n.name;
        }
    }
    for (const kes::ir::Tensor& t : g.tensors)
        if (!t.is_const && (t.dtype == KES_U8 || t.dtype == KES_I8)) {
            EXPECT_FALSE(t.quant.empty()) << t.name << " lost its quantization";
        }
    EXPECT_EQ(ops["QLinearConv"], 3);  // CONV_2D, DEPTHWISE_CONV_2D, CONV_2D 1x1
    EXPECT_EQ(ops["QLinearMatMul"], 1);
    EXPECT_EQ(ops["QLinearAdd"], 1);
    EXPECT_EQ(ops["QLinearMul"], 1);
    EXPECT_EQ(ops["QLinearConcat"], 1);
    EXPECT_EQ(ops["MaxPool"], 1);
    for (const char* op : {"Conv", "Gemm", "MatMul", "Add", "Mul", "Concat"})
        EXPECT_EQ(ops[op], 0) << op << " stayed a float op";
    // No quantized form: in f32 between a DequantizeLinear and a QuantizeLinear each.
    EXPECT_EQ(ops["Softmax"], 1);
    EXPECT_EQ(ops["Sigmoid"], 1);

    const std::vector<Output> outs = run_model(model, read_file(fixture(std::string(c.name) + "_input.bin")));
    ASSERT_EQ(outs.size(), 5u);
    constexpr double kSoftmaxLsb = 1.0 / 256;  // TFLite fixes SOFTMAX's and LOGISTIC's output scale
    const char* what[] = {"SOFTMAX", "LOGISTIC", "FULLY_CONNECTED logits", "ADD", "first CONV_2D"};
    const double bound[] = {1, 1, 0, 0, 0};
    for (size_t k = 0; k < outs.size(); ++k) {
        const Output want_raw{outs[k].dtype,
                              read_file(fixture(std::string(c.name) + "_out" + std::to_string(k) + ".bin"))};
        const std::vector<double> got = steps(outs[k], kSoftmaxLsb), want = steps(want_raw, kSoftmaxLsb);
        ASSERT_EQ(got.size(), want.size()) << what[k];
        if (k > 0) {
            EXPECT_EQ(outs[k].dtype, c.quantized) << what[k];
        }
        double worst = 0;
        size_t exact = 0;
        for (size_t i = 0; i < got.size(); ++i) {
            worst = std::max(worst, std::fabs(got[i] - want[i]));
            exact += got[i] == want[i];
        }
        std::cout << "[ tflite8  ] " << c.name << " " << what[k] << ": " << exact << "/" << got.size() << " exact, max "
                  << worst << " LSB\n";
        EXPECT_LE(worst, bound[k] + 1e-9) << c.name << " " << what[k];
    }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TfliteQuantModels,
                         ::testing::Values(FixtureCase{"int8_cnn", KES_I8}, FixtureCase{"int8_io", KES_I8},
                                           FixtureCase{"uint8_cnn", KES_U8}),
                         [](const ::testing::TestParamInfo<FixtureCase>& p) { return std::string(p.param.name); });

// ---- TFLite's fixed-point arithmetic -------------------------------------------------------------------

TEST(TfliteFixedPoint, QuantizeMultiplierAsTflite) {
    // frexp's significand in Q31, rounded half away from zero; the shift is its exponent.
    const kes::FixedPointMultiplier half = kes::quantize_multiplier(0.5, "test");
    EXPECT_EQ(half.multiplier, 1 << 30);
    EXPECT_EQ(half.shift, 0);
    const kes::FixedPointMultiplier three = kes::quantize_multiplier(3.0, "test");
    EXPECT_EQ(three.multiplier, 3 << 29);
    EXPECT_EQ(three.shift, 2);
    // A significand that rounds up to 2^31 becomes 2^30 with the next exponent.
    const kes::FixedPointMultiplier up = kes::quantize_multiplier(1.0 - 1e-12, "test");
    EXPECT_EQ(up.multiplier, 1 << 30);
    EXPECT_EQ(up.shift, 1);
    // Below 2^-31 every bit would shift out: TFLite flushes to 0.
    EXPECT_EQ(kes::quantize_multiplier(1e-12, "test").multiplier, 0);
    EXPECT_EQ(kes::quantize_multiplier(0.0, "test").multiplier, 0);
    for (double bad : {-1.0, std::nan(""), static_cast<double>(INFINITY), 4.0e9}) {
        try {
            kes::quantize_multiplier(bad, "output");
            ADD_FAILURE() << bad << " accepted";
        } catch (const kes::Error& e) {
            EXPECT_EQ(e.status(), KES_ERR_INVALID_ARGUMENT);
            EXPECT_NE(std::string(e.what()).find("output multiplier"), std::string::npos) << e.what();
        }
    }
}

TEST(TfliteFixedPoint, RoundsAsGemmlowp) {
    // x · 0.5 (multiplier 2^30, shift 0) rounds in the high multiplication alone, whose nudge makes a
    // tie go up: 1.5 → 2, 2.5 → 3, but -1.5 → -1, -2.5 → -2 (gemmlowp's SaturatingRoundingDoublingHighMul).
    const kes::FixedPointMultiplier half = kes::quantize_multiplier(0.5, "test");
    EXPECT_EQ(kes::multiply_by_quantized_multiplier(3, half), 2);
    EXPECT_EQ(kes::multiply_by_quantized_multiplier(5, half), 3);
    EXPECT_EQ(kes::multiply_by_quantized_multiplier(-3, half), -1);
    EXPECT_EQ(kes::multiply_by_quantized_multiplier(-5, half), -2);
    EXPECT_EQ(kes::multiply_by_quantized_multiplier(-7, half), -3);
    // x / 8: the high multiplication rounds, then the right shift rounds again, as TFLite's (gemmlowp's)
    // MultiplyByQuantizedMultiplier does: 11/8 = 1.375 gives 2 (5.5 → 6, 6/4 = 1.5 → 2), 9/8 gives 1.
    const kes::FixedPointMultiplier eighth = kes::quantize_multiplier(0.125, "test");
    EXPECT_EQ(eighth.shift, -2);
    EXPECT_EQ(kes::multiply_by_quantized_multiplier(12, eighth), 2);
    EXPECT_EQ(kes::multiply_by_quantized_multiplier(-12, eighth), -2);
    EXPECT_EQ(kes::multiply_by_quantized_multiplier(11, eighth), 2);
    EXPECT_EQ(kes::multiply_by_quantized_multiplier(9, eighth), 1);
    EXPECT_EQ(kes::multiply_by_quantized_multiplier(-9, eighth), -1);
    // The one product that saturates.
    EXPECT_EQ(kes::saturating_rounding_doubling_high_mul(INT32_MIN, INT32_MIN), INT32_MAX);
    // QUANTIZE rounds half away from zero (ONNX's QuantizeLinear: half to even).
    const kes::QuantRange i8 = kes::quantized_range(KES_I8);
    EXPECT_EQ(kes::quantize_value_tflite(2.5f, 1.0f, 0, i8), 3);
    EXPECT_EQ(kes::quantize_value(2.5f, 1.0f, 0, i8), 2);
    EXPECT_EQ(kes::quantize_value_tflite(-2.5f, 1.0f, 1, i8), -2);
    EXPECT_EQ(kes::quantize_value_tflite(1000.0f, 1.0f, 0, i8), 127);
    EXPECT_EQ(kes::quantize_value_tflite(std::nanf(""), 1.0f, 0, i8), -128);
}

// ---- importer: the quantized path and its refusals -----------------------------------------------------

flatbuffers::Offset<tfl::QuantizationParameters> quant(TfliteBuilder& tb, std::vector<float> scale,
                                                       std::vector<int64_t> zero_point, int32_t axis = 0) {
    const auto s = tb.fb().CreateVector(scale);
    const auto z = tb.fb().CreateVector(zero_point);
    return tfl::CreateQuantizationParameters(tb.fb(), 0, 0, s, z, tfl::QuantizationDetails::NONE, 0, axis);
}

// int8 input [1,3,3,2] → CONV_2D 1x1 (per-channel weights) → int8 output, with the given input and
// output quantization.
std::vector<uint8_t> int8_conv(std::vector<float> in_scale, int64_t in_zp, float out_scale, int64_t out_zp,
                               float w_scale1 = 0.02f) {
    TfliteBuilder tb;
    const int32_t in = tb.tensor("x", {1, 3, 3, 2}, tfl::TensorType::INT8, {},
                                 quant(tb, in_scale, std::vector<int64_t>(in_scale.size(), in_zp)));
    const std::vector<int8_t> w = {10, -20, 30, 40};
    const int32_t wt = tb.tensor("w", {2, 1, 1, 2}, tfl::TensorType::INT8, TfliteBuilder::bytes_of(w),
                                 quant(tb, {0.01f, w_scale1}, {0, 0}, 0));
    const int32_t out = tb.tensor("y", {1, 3, 3, 2}, tfl::TensorType::INT8, {}, quant(tb, {out_scale}, {out_zp}));
    tb.op(tfl::BuiltinOperator::CONV_2D, {in, wt, -1}, {out}, tfl::BuiltinOptions::Conv2DOptions,
          tfl::CreateConv2DOptions(tb.fb(), tfl::Padding::SAME, 1, 1).Union());
    return tb.finish({in}, {out});
}

TEST(TfliteQuantImport, Int8ConvBecomesNhwcQLinearConv) {
    const std::vector<uint8_t> model = int8_conv({0.1f}, 3, 0.05f, -2);
    const kes::ir::Graph g = kes::ir::import_tflite(model.data(), model.size());
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].op, "QLinearConv");
    EXPECT_EQ(g.nodes[0].attrs.get_string("data_layout"), "NHWC");
    EXPECT_EQ(g.nodes[0].attrs.get_string("kes_requantization"), "tflite");
}

TEST(TfliteQuantImport, BadQuantizationRefusedNamingTheTensor) {
    struct Bad {
        std::vector<uint8_t> model;
        const char* message;
    } cases[] = {
        {int8_conv({0.0f}, 0, 0.05f, 0), "tensor 0 'x': quantization scale 0"},
        {int8_conv({0.1f}, 0, -1.0f, 0), "'y': quantization scale -1"},
        {int8_conv({0.1f}, 200, 0.05f, 0), "'x': zero point 200 is outside i8's [-128, 127]"},
        {int8_conv({0.1f, 0.2f}, 0, 0.05f, 0), "'x': 2 quantization scales"},
        {int8_conv({0.1f}, 0, 0.05f, 0, std::nanf("")), "tensor 1 'w': quantization scale nan"},
    };
    for (const Bad& b : cases) {
        const auto [status, message] = kes_test::import_error(b.model);
        EXPECT_EQ(status, KES_ERR_INVALID_ARGUMENT) << message;
        EXPECT_NE(message.find(b.message), std::string::npos) << message;
    }
    // TFLite's 16x8 quantization (int16 activations) has no integer ops here: refused, naming the tensor.
    TfliteBuilder tb;
    const int32_t in = tb.tensor("x16", {1, 4}, tfl::TensorType::INT16, {}, quant(tb, {0.001f}, {0}));
    const int32_t out = tb.tensor("y16", {1, 4}, tfl::TensorType::INT16, {}, quant(tb, {0.002f}, {0}));
    tb.op(tfl::BuiltinOperator::ADD, {in, in}, {out}, tfl::BuiltinOptions::AddOptions,
          tfl::CreateAddOptions(tb.fb()).Union());
    const auto [status, message] = kes_test::import_error(tb.finish({in}, {out}));
    EXPECT_EQ(status, KES_ERR_UNSUPPORTED) << message;
    EXPECT_NE(message.find("int16 activations"), std::string::npos) << message;
    EXPECT_NE(message.find("'x16'"), std::string::npos) << message;
}

TEST(TfliteQuantImport, Int8ConvRunsTflitesArithmetic) {
    // Converted and run (NHWC QLinearConv, per-channel weights, the input zero point in every tap)
    // against the sum and TFLite's requantization written out here.
    const std::vector<uint8_t> model = int8_conv({0.1f}, 3, 0.05f, -2);
    std::vector<uint8_t> x(18);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>(static_cast<int8_t>(i * 37 % 101 - 50));
    const std::vector<Output> outs = run_model(model, x);
    ASSERT_EQ(outs.size(), 1u);
    const int8_t w[2][2] = {{10, -20}, {30, 40}};
    const float ws[2] = {0.01f, 0.02f};
    for (int p = 0; p < 9; ++p)
        for (int o = 0; o < 2; ++o) {
            int32_t acc = 0;
            for (int c = 0; c < 2; ++c) acc += (static_cast<int8_t>(x[static_cast<size_t>(p * 2 + c)]) - 3) * w[o][c];
            const kes::FixedPointMultiplier m =
                kes::quantize_multiplier(static_cast<double>(0.1f) * ws[o] / static_cast<double>(0.05f), "test");
            const int32_t want = std::min(127, std::max(-128, kes::multiply_by_quantized_multiplier(acc, m) - 2));
            EXPECT_EQ(static_cast<int8_t>(outs[0].bytes[static_cast<size_t>(p * 2 + o)]), want)
                << "pixel " << p << " channel " << o;
        }
}

TEST(TfliteQuantImport, Uint8ConcatRequantizesAsTflite) {
    // uint8 CONCATENATION of inputs quantized differently from the output: TFLite's ConcatenationWithScaling,
    // round(x·s − zx·s) half away from zero + zy with s = x_s · (1 / y_s) in f32. Ties are chosen: input
    // (0.1, 128) to output (0.2, 100) halves every step.
    TfliteBuilder tb;
    const int32_t in = tb.tensor("x", {1, 1, 2, 3}, tfl::TensorType::UINT8, {}, quant(tb, {0.1f}, {128}));
    const std::vector<uint8_t> k = {0, 9, 10, 11, 200, 255};
    const int32_t kt = tb.tensor("k", {1, 1, 2, 3}, tfl::TensorType::UINT8, k, quant(tb, {0.05f}, {10}));
    const int32_t out = tb.tensor("y", {1, 1, 2, 6}, tfl::TensorType::UINT8, {}, quant(tb, {0.2f}, {100}));
    tb.op(tfl::BuiltinOperator::CONCATENATION, {in, kt}, {out}, tfl::BuiltinOptions::ConcatenationOptions,
          tfl::CreateConcatenationOptions(tb.fb(), 3).Union());
    const std::vector<uint8_t> model = tb.finish({in}, {out});
    const std::vector<uint8_t> x = {0, 127, 128, 129, 131, 255};
    const std::vector<Output> outs = run_model(model, x);
    ASSERT_EQ(outs.size(), 1u);
    const auto requant = [](int v, float xs, int zx) {
        const float s = xs * (1.0f / 0.2f), bias = static_cast<float>(-zx) * s;
        return std::min(255, std::max(0, static_cast<int>(std::round(static_cast<float>(v) * s + bias)) + 100));
    };
    for (int px = 0; px < 2; ++px)
        for (int c = 0; c < 6; ++c) {
            const size_t i = static_cast<size_t>(px * 3 + c % 3);
            const int want = c < 3 ? requant(x[i], 0.1f, 128) : requant(k[i], 0.05f, 10);
            EXPECT_EQ(outs[0].bytes[static_cast<size_t>(px * 6 + c)], want) << "pixel " << px << " channel " << c;
        }
    EXPECT_EQ(outs[0].bytes[1], requant(127, 0.1f, 128));  // -0.5 step rounds away from zero: 99
    EXPECT_EQ(outs[0].bytes[1], 99);
}

TEST(TfliteQuantImport, QuantizeBetweenTypesAndFloatIslands) {
    // int8 input → QUANTIZE to uint8 (same scale: exactly +128) → AVERAGE_POOL_2D, which has no quantized
    // op here: f32 between DequantizeLinear and QuantizeLinear (TFLite: the rounded integer mean).
    TfliteBuilder tb;
    const int32_t in = tb.tensor("x", {1, 2, 2, 1}, tfl::TensorType::INT8, {}, quant(tb, {0.5f}, {-1}));
    const int32_t u = tb.tensor("u", {1, 2, 2, 1}, tfl::TensorType::UINT8, {}, quant(tb, {0.5f}, {127}));
    const int32_t avg = tb.tensor("avg", {1, 1, 1, 1}, tfl::TensorType::UINT8, {}, quant(tb, {0.5f}, {127}));
    tb.op(tfl::BuiltinOperator::QUANTIZE, {in}, {u});
    tb.op(tfl::BuiltinOperator::AVERAGE_POOL_2D, {u}, {avg}, tfl::BuiltinOptions::Pool2DOptions,
          tfl::CreatePool2DOptions(tb.fb(), tfl::Padding::VALID, 2, 2, 2, 2).Union());
    const std::vector<uint8_t> model = tb.finish({in}, {u, avg});
    const kes::ir::Graph g = kes::convert::build_graph(model.data(), model.size(), kes::convert::Options{});
    std::map<std::string, int> ops;
    for (const kes::ir::Node& n : g.nodes) ++ops[n.op];
    EXPECT_EQ(ops["AveragePool"], 1);
    EXPECT_EQ(ops["QuantizeLinear"], 2);
    const std::vector<uint8_t> x = {static_cast<uint8_t>(-128), static_cast<uint8_t>(-3), 4, 127};
    const std::vector<Output> outs = run_model(model, x);
    ASSERT_EQ(outs.size(), 2u);
    ASSERT_EQ(outs[0].dtype, KES_U8);
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(outs[0].bytes[i], static_cast<uint8_t>(static_cast<int8_t>(x[i]) + 128));
    // (0 + 125 + 132 + 255) / 4 = 128: TFLite's (sum + count/2) / count gives 128 as well.
    EXPECT_EQ(outs[1].bytes[0], 128);
}

TEST(TfliteQuantImport, PadFillsWithTheZeroPoint) {
    // TFLite pads a quantized tensor with its zero point (the real 0), on the integers here.
    TfliteBuilder tb;
    const int32_t in = tb.tensor("x", {1, 1, 2, 1}, tfl::TensorType::INT8, {}, quant(tb, {0.1f}, {-7}));
    const int32_t pads = tb.i32("pads", {4, 2}, {0, 0, 1, 0, 0, 1, 0, 0});
    const int32_t out = tb.tensor("y", {1, 2, 3, 1}, tfl::TensorType::INT8, {}, quant(tb, {0.1f}, {-7}));
    tb.op(tfl::BuiltinOperator::PAD, {in, pads}, {out});
    const std::vector<uint8_t> model = tb.finish({in}, {out});
    const kes::ir::Graph g = kes::ir::import_tflite(model.data(), model.size());
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].op, "Pad");
    const std::vector<Output> outs = run_model(model, {5, static_cast<uint8_t>(-100)});
    ASSERT_EQ(outs.size(), 1u);
    const std::vector<int8_t> want = {-7, -7, -7, 5, -100, -7};
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(static_cast<int8_t>(outs[0].bytes[i]), want[i]) << i;
}

// ---- a real model: MediaPipe's BlazeFace (face_detection_short_range) quantized to int8 ----------------

// The DequantizeLinear scale of each graph output (the LSB of a DEQUANTIZE'd int8 output).
std::vector<float> output_lsb(const kes::ir::Graph& g) {
    std::vector<float> lsb;
    for (int32_t o : g.outputs) {
        float scale = 0;
        const int32_t p = g.producer(o);
        if (p >= 0 && g.nodes[static_cast<size_t>(p)].op == "DequantizeLinear") {
            const kes::ir::Tensor& sc = g.tensors[static_cast<size_t>(g.nodes[static_cast<size_t>(p)].inputs[1])];
            if (sc.is_const && sc.elements() == 1) std::memcpy(&scale, sc.data.data(), 4);
        }
        lsb.push_back(scale);
    }
    return lsb;
}

TEST(TfliteQuantRealModels, BlazeFace128Int8) {
    // fetch_models.sh quantizes it (make_tflite_quant_models.py quantize: per-channel int8 weights, int8
    // activations calibrated on photo 1, RELU fused into its ADD or conv as TFLite's converter does).
    const std::string dir = kes_test::cache_dir() + "/tflite_quant/", name = "blazeface_128_int8";
    std::vector<uint8_t> model, input;
    if (!kes_test::read_bytes(dir + name + ".tflite", model) || !kes_test::read_bytes(dir + name + "_input.bin", input))
        GTEST_SKIP() << dir + name + ".tflite is missing: run engine/tests/models/fetch_models.sh";
    const kes::ir::Graph g = kes::convert::build_graph(model.data(), model.size(), kes::convert::Options{});
    std::map<std::string, int> ops;
    for (const kes::ir::Node& n : g.nodes) ++ops[n.op];
    EXPECT_EQ(ops["QLinearConv"], 37);  // 21 CONV_2D and 16 DEPTHWISE_CONV_2D
    EXPECT_EQ(ops["QLinearAdd"], 16);
    EXPECT_EQ(ops["Pad"], 11);  // on the integers, with the zero point
    for (const char* op : {"Conv", "Add", "Relu", "Concat"}) EXPECT_EQ(ops[op], 0) << op << " stayed a float op";
    EXPECT_EQ(ops["QuantizeLinear"], 1);    // the float input's
    EXPECT_EQ(ops["DequantizeLinear"], 2);  // one per float output: nothing runs in f32 between
    const std::vector<float> lsb = output_lsb(g);
    const std::vector<Output> outs = run_model(model, input);
    ASSERT_EQ(outs.size(), 2u);
    for (size_t k = 0; k < outs.size(); ++k) {
        std::vector<uint8_t> want_bytes, float_bytes;
        ASSERT_TRUE(kes_test::read_bytes(dir + name + "_out" + std::to_string(k) + ".bin", want_bytes));
        ASSERT_TRUE(kes_test::read_bytes(dir + name + "_float_out" + std::to_string(k) + ".bin", float_bytes));
        ASSERT_GT(lsb[k], 0.0f);
        const std::vector<double> got = steps(outs[k], lsb[k]), want = steps({KES_F32, want_bytes}, lsb[k]),
                                  real = steps({KES_F32, float_bytes}, lsb[k]);
        ASSERT_EQ(got.size(), want.size());
        ASSERT_EQ(got.size(), real.size());
        double worst = 0, dot = 0, n1 = 0, n2 = 0;
        size_t exact = 0;
        for (size_t i = 0; i < got.size(); ++i) {
            worst = std::max(worst, std::fabs(got[i] - want[i]));
            exact += std::fabs(got[i] - want[i]) < 1e-3;
            dot += got[i] * real[i], n1 += got[i] * got[i], n2 += real[i] * real[i];
        }
        const double cosine = dot / std::sqrt(n1 * n2);
        std::cout << "[ tflite8  ] " << name << " output " << k << ": " << exact << "/" << got.size()
                  << " exact against TFLite's arithmetic, max " << worst << " LSB; against the float model: cosine "
                  << cosine << "\n";
        EXPECT_LT(worst, 1e-3) << name << " output " << k;
        EXPECT_GT(cosine, 0.99) << name << " output " << k;
    }
}

}  // namespace
