// Post-training quantization (convert/quantize.hpp, kes-convert --quantize int8): a small conv net
// built here (Conv+Relu, depthwise Conv+Relu, 1x1 Conv, GlobalAveragePool, Gemm) is quantized from a
// handful of generated .npy calibration inputs with each calibration method; the integer ops must be
// there, its output on inputs it was not calibrated on close to the float model's, the report one row
// per quantized layer; --keep-float leaves a layer f32; bad calibration sets fail naming the problem.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "convert/convert.hpp"
#include "convert/quantize.hpp"
#include "kes/npy.hpp"
#include "kes/tensor_compare.hpp"
#include "kestrel/convert.h"
#include "test_kom_run.hpp"
#include "test_onnx_builder.hpp"
#include "test_status.hpp"

using namespace kes_test;

namespace {

constexpr int64_t kChannels = 3, kSize = 12;
constexpr size_t kInputElements = kChannels * kSize * kSize;

std::vector<float> random_values(size_t n, float scale, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, scale);
    std::vector<float> v(n);
    for (float& x : v) x = normal(rng);
    return v;
}

// x [1,3,12,12] → Conv(8, 3x3) → PRelu (slopes 0.05..4: channel ranges apart, as in MobileFaceNet) →
// depthwise Conv(3x3)+Relu → Conv(6, 1x1) → GlobalAveragePool → Flatten → Gemm(5, transB) → y [1,5].
// conv1's output and conv2's input are equalized per channel (read by / written by the float PRelu),
// conv3's output too (read by the pool); conv2's Relu is fused.
std::vector<uint8_t> conv_net() {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {1, kChannels, kSize, kSize}));
    s.outputs.push_back(value_info("y", kFloat, {1, 5}));
    s.initializers.push_back(tensor_f32("w1", {8, kChannels, 3, 3}, random_values(8 * kChannels * 9, 0.3f, 1)));
    s.initializers.push_back(tensor_f32("b1", {8}, random_values(8, 0.1f, 2)));
    s.initializers.push_back(tensor_f32("w2", {8, 1, 3, 3}, random_values(8 * 9, 0.4f, 3)));
    s.initializers.push_back(tensor_f32("b2", {8}, random_values(8, 0.1f, 4)));
    s.initializers.push_back(tensor_f32("w3", {6, 8, 1, 1}, random_values(6 * 8, 0.4f, 5)));
    s.initializers.push_back(tensor_f32("w4", {5, 6}, random_values(5 * 6, 0.5f, 6)));
    s.initializers.push_back(tensor_f32("b4", {5}, random_values(5, 0.1f, 7)));
    s.initializers.push_back(tensor_f32("slope", {8, 1, 1}, {0.05f, 4.0f, 0.3f, 1.0f, 2.5f, 0.1f, 0.7f, 3.0f}));
    s.nodes.push_back(node("Conv", {"x", "w1", "b1"}, {"c1"}, {attr_ints("pads", {1, 1, 1, 1})}, "conv1"));
    s.nodes.push_back(node("PRelu", {"c1", "slope"}, {"r1"}, {}, "prelu1"));
    s.nodes.push_back(
        node("Conv", {"r1", "w2", "b2"}, {"c2"}, {attr_ints("pads", {1, 1, 1, 1}), attr_int("group", 8)}, "conv2"));
    s.nodes.push_back(node("Relu", {"c2"}, {"r2"}, {}, "relu2"));
    s.nodes.push_back(node("Conv", {"r2", "w3"}, {"c3"}, {}, "conv3"));
    s.nodes.push_back(node("GlobalAveragePool", {"c3"}, {"p"}, {}, "pool"));
    s.nodes.push_back(node("Flatten", {"p"}, {"f"}, {}, "flatten"));
    s.nodes.push_back(node("Gemm", {"f", "w4", "b4"}, {"y"}, {attr_int("transB", 1)}, "fc"));
    return onnx_model(s);
}

std::string fresh_dir(const std::string& name) {
    const std::string dir = std::string(KES_TEST_TMPDIR) + "/quantize_" + std::to_string(getpid()) + "_" + name;
    ::mkdir(KES_TEST_TMPDIR, 0755);
    ::mkdir(dir.c_str(), 0755);
    return dir;
}

// Six calibration inputs (the tests' inputs are other draws of the same distribution).
std::string calibration_dir() {
    static const std::string dir = [] {
        const std::string d = fresh_dir("calibration");
        for (uint32_t k = 0; k < 6; ++k) {
            const std::vector<float> x = random_values(kInputElements, 1.0f, 100 + k);
            kes::npy::write_file(d + "/sample" + std::to_string(k) + ".npy", KES_F32, {1, kChannels, kSize, kSize},
                                 x.data(), x.size() * sizeof(float));
        }
        return d;
    }();
    return dir;
}

kes::convert::Options quantize_options(kes::convert::CalibrationMethod method) {
    kes::convert::Options o;
    o.quantize.int8 = true;
    o.quantize.calibration_dir = calibration_dir();
    o.quantize.method = method;
    return o;
}

std::map<std::string, int> op_counts(const kes::ir::Graph& g) {
    std::map<std::string, int> ops;
    for (const kes::ir::Node& n : g.nodes) ++ops[n.op];
    return ops;
}

// The float and the quantized model's outputs on inputs calibration did not see.
kes::TensorComparison compare_with_float(const kes::convert::Options& options) {
    const std::vector<uint8_t> model = conv_net();
    const std::vector<uint8_t> float_kom = kes::convert::convert(model.data(), model.size(), {}).image.bytes;
    const std::vector<uint8_t> int8_kom = kes::convert::convert(model.data(), model.size(), options).image.bytes;
    kes::TensorComparison c;
    for (uint32_t k = 0; k < 4; ++k) {
        const std::vector<float> x = random_values(kInputElements, 1.0f, 200 + k);
        const std::vector<float> want = execute_kom(float_kom, x), got = execute_kom(int8_kom, x);
        EXPECT_EQ(got.size(), 5u);
        EXPECT_EQ(want.size(), got.size());
        for (size_t i = 0; i < want.size() && i < got.size(); ++i) c.add(got[i], want[i], 0, 0);
    }
    return c;
}

class QuantizeMethods : public ::testing::TestWithParam<kes::convert::CalibrationMethod> {};

TEST_P(QuantizeMethods, IntegerOpsCloseToTheFloatModel) {
    const kes::convert::Options options = quantize_options(GetParam());
    const std::vector<uint8_t> model = conv_net();
    std::vector<kes::convert::LayerReport> report;
    const kes::ir::Graph g = kes::convert::build_graph(model.data(), model.size(), options, nullptr, &report);
    std::map<std::string, int> ops = op_counts(g);
    EXPECT_EQ(ops["QLinearConv"], 3);
    EXPECT_EQ(ops["QLinearMatMul"], 1);  // the Gemm
    EXPECT_EQ(ops["Conv"], 0);
    EXPECT_EQ(ops["Gemm"], 0);

    ASSERT_EQ(report.size(), 4u);
    const char* layers[] = {"conv1", "conv2", "conv3", "fc"};
    for (size_t k = 0; k < 4; ++k) {
        EXPECT_EQ(report[k].layer, layers[k]);
        EXPECT_GE(report[k].cosine, 0.99) << report[k].layer;
        EXPECT_LT(report[k].cosine, 1.0) << report[k].layer << ": int8 is not exact";
    }
    EXPECT_EQ(report[1].tensor, "r2");  // measured after its Relu, which the QLinearConv takes in
    EXPECT_EQ(ops["Mul"], 3);           // conv1's and conv3's outputs multiplied back, conv2's input divided

    const kes::TensorComparison c = compare_with_float(options);
    std::printf("[ quantize ] output vs float: cosine %.6f, max abs %.4g\n", c.cosine(), c.max_abs);
    EXPECT_GE(c.cosine(), 0.99);
    EXPECT_GT(c.max_abs, 0.0);  // the model really changed
}

INSTANTIATE_TEST_SUITE_P(Quantize, QuantizeMethods,
                         ::testing::Values(kes::convert::CalibrationMethod::MinMax,
                                           kes::convert::CalibrationMethod::Percentile,
                                           kes::convert::CalibrationMethod::Entropy));

TEST(Quantize, KeepFloatLeavesTheLayerInF32) {
    kes::convert::Options options = quantize_options(kes::convert::CalibrationMethod::MinMax);
    options.quantize.keep_float = {"conv2"};
    const std::vector<uint8_t> model = conv_net();
    std::vector<kes::convert::LayerReport> report;
    const kes::ir::Graph g = kes::convert::build_graph(model.data(), model.size(), options, nullptr, &report);
    std::map<std::string, int> ops = op_counts(g);
    EXPECT_EQ(ops["QLinearConv"], 2);
    EXPECT_EQ(ops["Conv"], 1);
    for (const kes::ir::Node& n : g.nodes)
        if (n.op == "Conv") {
            EXPECT_EQ(n.name, "conv2");
        }
    ASSERT_EQ(report.size(), 3u);
    for (const kes::convert::LayerReport& r : report) EXPECT_NE(r.layer, "conv2");
    EXPECT_GE(compare_with_float(options).cosine(), 0.99);
}

TEST(Quantize, ALowerPercentileClipsMore) {
    // 99.99 % of a few thousand values is about their largest; 90 % clips the tails, which costs accuracy
    // on this net (whose large values matter): the method really changes the ranges.
    const std::vector<uint8_t> model = conv_net();
    std::vector<double> cosines;
    for (double percentile : {100.0, 90.0}) {
        kes::convert::Options options = quantize_options(kes::convert::CalibrationMethod::Percentile);
        options.quantize.percentile = percentile;
        std::vector<kes::convert::LayerReport> report;
        kes::convert::build_graph(model.data(), model.size(), options, nullptr, &report);
        ASSERT_EQ(report.size(), 4u);
        cosines.push_back(report[0].cosine);
    }
    EXPECT_LT(cosines[1], cosines[0] - 1e-4);
}

TEST(Quantize, PercentileClipsAndEntropyFindsAGaussiansTail) {
    // |x| of a unit Gaussian: the entropy threshold lies in its tail, below the largest value seen.
    std::vector<double> histogram(2048);
    const std::vector<float> x = random_values(100000, 1.0f, 9);
    float top = 0;
    for (float v : x) top = std::max(top, std::fabs(v));
    for (float v : x) histogram[std::min<size_t>(2047, static_cast<size_t>(std::fabs(v) / top * 2048))] += 1;
    const double t = kes::convert::entropy_threshold(histogram, top / 2048.0, 128);
    EXPECT_GT(t, 2.5);
    EXPECT_LT(t, 0.95 * top);
    // A uniform distribution has no tail to clip.
    std::vector<double> flat(2048, 10.0);
    EXPECT_GT(kes::convert::entropy_threshold(flat, 1.0 / 2048, 128), 0.9);
}

TEST(Quantize, OptionParsersNameTheBadValue) {
    using kes::convert::CalibrationMethod;
    EXPECT_EQ(kes::convert::parse_calibration_method("entropy"), CalibrationMethod::Entropy);
    std::string message;
    EXPECT_EQ(status_of([] { kes::convert::parse_calibration_method("kl"); }, &message), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(message.find("'kl'"), std::string::npos) << message;
    EXPECT_EQ(kes::convert::parse_keep_float("a,b/c"), (std::vector<std::string>{"a", "b/c"}));
    EXPECT_EQ(status_of([] { kes::convert::parse_keep_float("a,,b"); }, &message), KES_ERR_INVALID_ARGUMENT);
}

// kes_convert_memory with the quantization fields (the C API): the report through the callback, and
// the errors of bad calibration sets with their status and a message naming the problem.
struct Rows {
    std::vector<std::string> layers;
    std::vector<double> cosines;
};

void collect(const char* layer, const char*, const char*, double cosine, double, void* user) {
    static_cast<Rows*>(user)->layers.push_back(layer);
    static_cast<Rows*>(user)->cosines.push_back(cosine);
}

kes_status convert_with(const std::string& dir, const char* method, const char* keep_float, Rows* rows = nullptr,
                        const char* quantize = "int8") {
    const std::vector<uint8_t> model = conv_net();
    kes_convert_options opt;
    EXPECT_EQ(kes_convert_options_init(&opt), KES_OK);
    opt.quantize = quantize;
    opt.calibration = dir.c_str();
    opt.calibration_method = method;
    opt.keep_float = keep_float;
    opt.layer_report = rows ? collect : nullptr;
    opt.layer_report_user_data = rows;
    void* kom = nullptr;
    size_t size = 0;
    const kes_status st = kes_convert_memory(model.data(), model.size(), &opt, &kom, &size, nullptr);
    kes_convert_free(kom);
    return st;
}

TEST(Quantize, CApiReportsEachLayer) {
    Rows rows;
    ASSERT_EQ(convert_with(calibration_dir(), "percentile", nullptr, &rows), KES_OK) << kes_last_error();
    EXPECT_EQ(rows.layers, (std::vector<std::string>{"conv1", "conv2", "conv3", "fc"}));
    for (double c : rows.cosines) EXPECT_GE(c, 0.99);
}

void expect_error(kes_status st, kes_status want, const std::string& needle) {
    EXPECT_EQ(st, want) << kes_last_error();
    EXPECT_NE(std::string(kes_last_error()).find(needle), std::string::npos) << kes_last_error();
}

TEST(Quantize, BadCalibrationSetsFailNamingTheProblem) {
    const std::string empty = fresh_dir("empty");
    expect_error(convert_with(empty, nullptr, nullptr), KES_ERR_INVALID_ARGUMENT, "no .npy files");
    expect_error(convert_with(empty + "/missing", nullptr, nullptr), KES_ERR_NOT_FOUND, "missing");
    expect_error(convert_with("", nullptr, nullptr), KES_ERR_INVALID_ARGUMENT, "needs --calibration");

    const std::string shape = fresh_dir("shape");
    const std::vector<float> x(kInputElements / kChannels, 0.5f);
    kes::npy::write_file(shape + "/wrong.npy", KES_F32, {1, 1, kSize, kSize}, x.data(), x.size() * sizeof(float));
    expect_error(convert_with(shape, nullptr, nullptr), KES_ERR_INVALID_ARGUMENT, "wrong.npy' is f32 [1,1,12,12]");

    const std::string nan = fresh_dir("nan");
    std::vector<float> with_nan(kInputElements, 0.5f);
    with_nan[7] = NAN;
    kes::npy::write_file(nan + "/nan.npy", KES_F32, {1, kChannels, kSize, kSize}, with_nan.data(),
                         with_nan.size() * sizeof(float));
    expect_error(convert_with(nan, nullptr, nullptr), KES_ERR_INVALID_ARGUMENT,
                 "nan.npy: the float model computes nan");

    const std::string text = fresh_dir("text");
    std::ofstream(text + "/notes.txt") << "not an array";
    expect_error(convert_with(text, nullptr, nullptr), KES_ERR_INVALID_ARGUMENT, "notes.txt' is not a .npy file");

    const std::string corrupt = fresh_dir("corrupt");
    std::ofstream(corrupt + "/bad.npy") << "\x93NUMPY broken";
    const kes_status st = convert_with(corrupt, nullptr, nullptr);  // the .npy reader's own status
    EXPECT_NE(st, KES_OK);
    EXPECT_NE(std::string(kes_last_error()).find("bad.npy: npy:"), std::string::npos) << kes_last_error();

    expect_error(convert_with(calibration_dir(), "kl", nullptr), KES_ERR_INVALID_ARGUMENT, "'kl'");
    expect_error(convert_with(calibration_dir(), nullptr, "conv9"), KES_ERR_INVALID_ARGUMENT, "no layer 'conv9'");
    expect_error(convert_with(calibration_dir(), nullptr, nullptr, nullptr, "int4"), KES_ERR_INVALID_ARGUMENT,
                 "'int4' is not int8");
}

}  // namespace
