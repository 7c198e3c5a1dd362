// Dynamic gears end to end (kestrel/convert.h "Gears", kestrel/engine.h): a model converted with
// --dynamic-image-size executes every gear exactly as a static conversion at that size does (the
// independent path: shapes written, explicit pads), and graphs that folded a gear-specific shape are
// refused at conversion, naming the gear. TFLite's SAME padding per gear: test_tflite_gears.cpp.
// Dynamic AIPP (the run-time parameters of an aipp_mode: dynamic input) through kes_model_execute_images
// gives what the aipp module's kes_aipp_dynamic_execute and kes_model_execute give.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "convert/convert.hpp"
#include "convert/kom_writer.hpp"
#include "kes/error.hpp"
#include "kestrel/aipp.h"
#include "kestrel/convert.h"
#include "kestrel/engine.h"
#include "test_kom_run.hpp"
#include "test_onnx_builder.hpp"
#include "test_status.hpp"

using namespace kes;
using namespace kes_test;

namespace {

// x [1,3,H,W] (H, W unknown) → Conv 8×3×3 stride 2 SAME_UPPER → Relu → MaxPool 3×3 s2 pads 1 → Conv 4×1×1
// → { GlobalAveragePool → "pooled" [1,4,1,1], Resize ×2 nearest → "up" [1,4,2h,2w] }
std::vector<uint8_t> image_model() {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {1, 3, -1, -1}));
    s.outputs.push_back(value_info("pooled", kFloat, {1, 4, 1, 1}));
    s.outputs.push_back(value_info("up", kFloat, {1, 4, -1, -1}));
    s.initializers.push_back(tensor_f32("w1", {8, 3, 3, 3}, sine_input(8 * 27, 0.4f, 0.0f)));
    s.initializers.push_back(tensor_f32("b1", {8}, sine_input(8, 0.1f, 0.05f)));
    s.initializers.push_back(tensor_f32("w2", {4, 8, 1, 1}, sine_input(32, 0.5f, 0.0f)));
    s.initializers.push_back(tensor_f32("scales", {4}, {1.0f, 1.0f, 2.0f, 2.0f}));
    s.nodes.push_back(
        node("Conv", {"x", "w1", "b1"}, {"c1"}, {attr_ints("strides", {2, 2}), attr_string("auto_pad", "SAME_UPPER")}));
    s.nodes.push_back(node("Relu", {"c1"}, {"r"}));
    s.nodes.push_back(
        node("MaxPool", {"r"}, {"p"},
             {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}), attr_ints("pads", {1, 1, 1, 1})}));
    s.nodes.push_back(node("Conv", {"p", "w2"}, {"c2"}));
    s.nodes.push_back(node("GlobalAveragePool", {"c2"}, {"pooled"}));
    s.nodes.push_back(node("Resize", {"c2", "", "scales"}, {"up"}, {attr_string("mode", "nearest")}));
    return onnx_model(s);
}

}  // namespace

TEST(DynamicImageSize, EveryGearExecutesLikeAStaticConversionAtThatSize) {
    const std::vector<uint8_t> model = image_model();
    // Odd and even sizes: SAME padding splits differently (15 → pads 1+1, 32 → 0+1).
    const std::vector<uint8_t> kom = convert_bytes(model, nullptr, "32,32;15,17;24,40");
    Loaded dynamic(kom);
    ASSERT_NE(dynamic.ctx, nullptr);

    int64_t sizes[8] = {};
    size_t count = 0;
    ASSERT_EQ(kes_model_image_sizes(dynamic.model, sizes, 4, &count), KES_OK);
    ASSERT_EQ(count, 3u);  // ascending by area; the graph is described at the last
    EXPECT_EQ(std::vector<int64_t>(sizes, sizes + 6), (std::vector<int64_t>{15, 17, 24, 40, 32, 32}));
    kes_tensor desc;
    ASSERT_EQ(kes_model_input_desc(dynamic.model, 0, &desc), KES_OK);
    EXPECT_EQ(desc.shape[2], 32);
    EXPECT_EQ(desc.shape[3], 32);

    size_t dynamic_work = 0, weights = 0;
    ASSERT_EQ(kes_model_get_size(dynamic.model, &dynamic_work, &weights), KES_OK);
    // Largest last, then back: a gear must not depend on what ran before in the same arena.
    const int64_t order[][2] = {{15, 17}, {32, 32}, {24, 40}, {15, 17}};
    for (const auto& hw : order) {
        SCOPED_TRACE(std::to_string(hw[0]) + "x" + std::to_string(hw[1]));
        const std::string shape = "x:1,3," + std::to_string(hw[0]) + "," + std::to_string(hw[1]);
        const std::vector<uint8_t> static_kom = convert_bytes(model, shape.c_str());
        Loaded fixed(static_kom);
        ASSERT_NE(fixed.ctx, nullptr);
        size_t static_work = 0;
        ASSERT_EQ(kes_model_get_size(fixed.model, &static_work, &weights), KES_OK);
        EXPECT_GE(dynamic_work, static_work);

        ASSERT_EQ(kes_model_context_set_image_size(dynamic.ctx, hw[0], hw[1]), KES_OK) << kes_last_error();
        kes_tensor up;
        ASSERT_EQ(kes_model_context_output_desc(dynamic.ctx, 1, &up), KES_OK);
        const int64_t h1 = (hw[0] + 1) / 2, w1 = (hw[1] + 1) / 2;  // SAME, stride 2
        EXPECT_EQ(up.shape[2], 2 * ((h1 + 2 - 3) / 2 + 1));
        EXPECT_EQ(up.shape[3], 2 * ((w1 + 2 - 3) / 2 + 1));

        const std::vector<float> x = sine_input(static_cast<size_t>(3 * hw[0] * hw[1]), 1.0f, 0.2f);
        const auto got = run(dynamic.ctx, 2, x);
        const auto want = run(fixed.ctx, 2, x);
        ASSERT_EQ(got.size(), want.size());
        for (size_t o = 0; o < got.size(); ++o) {
            ASSERT_EQ(got[o].size(), want[o].size());
            EXPECT_EQ(std::memcmp(got[o].data(), want[o].data(), got[o].size() * sizeof(float)), 0) << "output " << o;
        }
    }
    EXPECT_EQ(kes_model_context_set_image_size(dynamic.ctx, 0, 0), KES_OK);
    ASSERT_EQ(kes_model_context_input_desc(dynamic.ctx, 0, &desc), KES_OK);
    EXPECT_EQ(desc.shape[2], 32);
}

TEST(DynamicImageSize, SizesThatAreNotGearsAreRefused) {
    const std::vector<uint8_t> kom = convert_bytes(image_model(), nullptr, "16,16;32,32");
    Loaded m(kom);
    ASSERT_NE(m.ctx, nullptr);
    EXPECT_EQ(kes_model_context_set_image_size(m.ctx, 16, 32), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("16x32"), std::string::npos) << kes_last_error();
    EXPECT_EQ(kes_model_context_set_batch(m.ctx, 2), KES_ERR_INVALID_ARGUMENT);
    // An input tensor of another gear's shape is refused by execute.
    ASSERT_EQ(kes_model_context_set_image_size(m.ctx, 16, 16), KES_OK);
    std::vector<float> big(3 * 32 * 32), pooled(4), up(4 * 16 * 16);
    kes_tensor in, outs[2];
    ASSERT_EQ(kes_model_input_desc(m.model, 0, &in), KES_OK);  // the written (32x32) shape
    in.data = big.data();
    kes_model_context_output_desc(m.ctx, 0, &outs[0]);
    kes_model_context_output_desc(m.ctx, 1, &outs[1]);
    outs[0].data = pooled.data();
    outs[1].data = up.data();
    EXPECT_EQ(kes_model_execute(m.ctx, &in, 1, outs, 2), KES_ERR_INVALID_ARGUMENT);

    const std::vector<uint8_t> fixed = convert_bytes(image_model(), "x:1,3,16,16");
    Loaded s(fixed);
    ASSERT_NE(s.ctx, nullptr);
    size_t count = 7;
    EXPECT_EQ(kes_model_image_sizes(s.model, nullptr, 0, &count), KES_OK);
    EXPECT_EQ(count, 0u);
    EXPECT_EQ(kes_model_context_set_image_size(s.ctx, 0, 0), KES_OK);
    EXPECT_EQ(kes_model_context_set_image_size(s.ctx, 16, 16), KES_ERR_INVALID_ARGUMENT);
}

TEST(DynamicImageSize, AShapeFoldedAtTheLargestGearIsRefusedNamingTheGear) {
    // y = Reshape(Relu(x), Shape(x)): the target folds into [1,3,32,32] at the largest gear, into
    // another value at 16x16.
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {1, 3, -1, -1}));
    s.outputs.push_back(value_info("y", kFloat, {1, 3, -1, -1}));
    s.nodes.push_back(node("Relu", {"x"}, {"r"}));
    s.nodes.push_back(node("Shape", {"x"}, {"shape"}));
    s.nodes.push_back(node("Reshape", {"r", "shape"}, {"y"}));
    const std::vector<uint8_t> model = onnx_model(s);
    convert::Options opt;
    opt.dynamic_image_sizes = convert::parse_image_sizes("16,16;32,32");
    std::string msg;
    EXPECT_EQ(status_of([&] { convert::convert(model.data(), model.size(), opt); }, &msg), KES_ERR_UNSUPPORTED);
    EXPECT_NE(msg.find("image gear 16x16"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'shape'"), std::string::npos) << msg;
}

TEST(DynamicImageSize, AFailureAtTheLargestGearNamesIt) {
    // Concat(x, c) along channels with a constant c [1,4,8,8]: fine at 8x8, not at 16x16, the largest
    // gear, where the model is folded and planned. The message named the node only.
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {1, 3, -1, -1}));
    s.outputs.push_back(value_info("y", kFloat, {1, 7, -1, -1}));
    s.initializers.push_back(tensor_f32("c", {1, 4, 8, 8}, sine_input(4 * 64, 0.5f, 0.0f)));
    s.nodes.push_back(node("Concat", {"x", "c"}, {"y"}, {attr_int("axis", 1)}));
    const std::vector<uint8_t> model = onnx_model(s);
    convert::Options opt;
    opt.dynamic_image_sizes = convert::parse_image_sizes("8,8;16,16");
    std::string msg;
    EXPECT_NE(status_of([&] { convert::convert(model.data(), model.size(), opt); }, &msg), KES_OK);
    EXPECT_NE(msg.find("image gear 16x16 (the largest"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Concat"), std::string::npos) << msg;
}

TEST(ConvertOptions, TensorsAndArenasAboveTheLimitAreRefusedNamingTheOption) {
    // image_model at 1x3x64x64: x is 49152 bytes, the largest tensor; the arena holds x and c1 at once.
    const std::vector<uint8_t> model = image_model();
    convert::Options opt;
    opt.input_shapes = convert::parse_input_shapes("x:1,3,64,64");
    EXPECT_EQ(opt.max_tensor_bytes, uint64_t{4} << 30);  // the default
    opt.max_tensor_bytes = 40000;
    std::string msg;
    EXPECT_EQ(status_of([&] { convert::convert(model.data(), model.size(), opt); }, &msg), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(msg.find("tensor 'x' [1,3,64,64] f32"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--max-tensor-bytes"), std::string::npos) << msg;
    opt.max_tensor_bytes = 49152;  // every tensor fits, the arena does not
    EXPECT_EQ(status_of([&] { convert::convert(model.data(), model.size(), opt); }, &msg), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(msg.find("the activation arena needs"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--max-tensor-bytes"), std::string::npos) << msg;
    // Through the C API: 0 is the default, and a raised limit converts.
    kes_convert_options c;
    kes_convert_options_init(&c);
    EXPECT_EQ(c.max_tensor_bytes, 0u);
    c.input_shape = "x:1,3,64,64";
    c.max_tensor_bytes = 40000;
    void* kom = nullptr;
    size_t size = 0;
    EXPECT_EQ(kes_convert_memory(model.data(), model.size(), &c, &kom, &size, nullptr), KES_ERR_INVALID_ARGUMENT);
    c.max_tensor_bytes = 1u << 20;
    EXPECT_EQ(kes_convert_memory(model.data(), model.size(), &c, &kom, &size, nullptr), KES_OK) << kes_last_error();
    kes_convert_free(kom);
}

TEST(DynamicBatch, AShapeChainKeepingOnlyGearFreeDimsConverts) {
    // Reshape(x, Concat([0], Shape(x)[1:2], [-1])): dims 1.. do not depend on the batch, so the folded
    // target [0, 2, -1] is the same at every gear, and the model runs at batch 1 and 4.
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {-1, 2, 4, 4}));
    s.outputs.push_back(value_info("y", kFloat, {-1, 2, 16}));
    s.initializers.push_back(tensor_i64("starts", {1}, {1}));
    s.initializers.push_back(tensor_i64("ends", {1}, {2}));
    s.initializers.push_back(tensor_i64("zero", {1}, {0}));
    s.initializers.push_back(tensor_i64("minus1", {1}, {-1}));
    s.nodes.push_back(node("Shape", {"x"}, {"shape"}));
    s.nodes.push_back(node("Slice", {"shape", "starts", "ends"}, {"c"}));
    s.nodes.push_back(node("Concat", {"zero", "c", "minus1"}, {"target"}, {attr_int("axis", 0)}));
    s.nodes.push_back(node("Reshape", {"x", "target"}, {"y"}));
    const std::vector<uint8_t> kom = convert_bytes(onnx_model(s), "x:1,2,4,4", nullptr, "1,4");
    Loaded m(kom);
    ASSERT_NE(m.ctx, nullptr);
    ASSERT_EQ(kes_model_context_set_batch(m.ctx, 1), KES_OK) << kes_last_error();
    const std::vector<float> x = sine_input(32, 1.0f, 0.0f);
    const auto y = run(m.ctx, 1, x);
    ASSERT_EQ(y.size(), 1u);
    EXPECT_EQ(y[0], x);  // a reshape moves no value
}

TEST(DynamicBatch, AReshapeThatFixedTheBatchIsRefused) {
    // Reshape(x, Concat(Shape(x)[0:1], [-1])) folds into [4,-1] at the largest gear: at batch 1 it
    // would silently give [4, C·H·W/4].
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {-1, 2, 4, 4}));
    s.outputs.push_back(value_info("y", kFloat, {-1, 32}));
    s.initializers.push_back(tensor_i64("starts", {1}, {0}));
    s.initializers.push_back(tensor_i64("ends", {1}, {1}));
    s.initializers.push_back(tensor_i64("minus1", {1}, {-1}));
    s.nodes.push_back(node("Shape", {"x"}, {"shape"}));
    s.nodes.push_back(node("Slice", {"shape", "starts", "ends"}, {"n"}));
    s.nodes.push_back(node("Concat", {"n", "minus1"}, {"target"}, {attr_int("axis", 0)}));
    s.nodes.push_back(node("Reshape", {"x", "target"}, {"y"}));
    const std::vector<uint8_t> model = onnx_model(s);
    convert::Options opt;
    opt.input_shapes = convert::parse_input_shapes("x:1,2,4,4");
    opt.dynamic_batch = {1, 4};
    std::string msg;
    EXPECT_EQ(status_of([&] { convert::convert(model.data(), model.size(), opt); }, &msg), KES_ERR_UNSUPPORTED);
    EXPECT_NE(msg.find("batch gear 1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'target'"), std::string::npos) << msg;
}

TEST(ConvertOptions, ImageSizesAreSortedByAreaAndChecked) {
    const auto sizes = convert::parse_image_sizes("32,32; 15,17;24,40;15,17");
    ASSERT_EQ(sizes.size(), 3u);
    EXPECT_EQ(sizes[0], (ir::ImageSize{15, 17}));
    EXPECT_EQ(sizes[1], (ir::ImageSize{24, 40}));
    EXPECT_EQ(sizes[2], (ir::ImageSize{32, 32}));
    std::string msg;
    EXPECT_EQ(status_of([&] { convert::parse_image_sizes("32"); }, &msg), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(status_of([&] { convert::parse_image_sizes("0,5"); }, &msg), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(status_of([&] { convert::parse_image_sizes("a,b"); }, &msg), KES_ERR_INVALID_ARGUMENT);

    const std::vector<uint8_t> model = image_model();
    convert::Options opt;
    opt.dynamic_image_sizes = sizes;
    opt.dynamic_batch = {1, 2};
    opt.input_shapes = convert::parse_input_shapes("x:1,3,-1,-1");
    EXPECT_EQ(status_of([&] { convert::build_graph(model.data(), model.size(), opt); }, &msg),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(msg.find("exclude each other"), std::string::npos) << msg;
    opt.dynamic_batch.clear();
    opt.input_shapes = convert::parse_input_shapes("x:-1,3,-1,-1");
    EXPECT_EQ(status_of([&] { convert::build_graph(model.data(), model.size(), opt); }, &msg),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(msg.find("3 unknown dims"), std::string::npos) << msg;
}

TEST(DynamicImageSize, LoaderRefusesInconsistentGears) {
    convert::Options opt;
    const std::vector<uint8_t> model = image_model();
    opt.dynamic_image_sizes = convert::parse_image_sizes("16,16;32,32");
    const ir::Graph good = convert::build_graph(model.data(), model.size(), opt);
    ir::WriteOptions wo;
    wo.tensor_capacity = convert::check_gears(good);
    auto load_status = [&](const ir::Graph& g, const ir::WriteOptions& w) {
        const ir::KomImage image = ir::write_kom(g, w);
        kes_model* m = nullptr;
        const kes_status st = kes_model_load_from_memory(image.bytes.data(), image.bytes.size(), &m);
        kes_model_unload(m);
        return st;
    };
    EXPECT_EQ(load_status(good, wo), KES_OK) << kes_last_error();

    ir::Graph descending = good;
    std::swap(descending.dynamic_image_sizes[0], descending.dynamic_image_sizes[1]);
    EXPECT_EQ(load_status(descending, wo), KES_ERR_CORRUPT_DATA);
    EXPECT_NE(std::string(kes_last_error()).find("ascend"), std::string::npos) << kes_last_error();

    ir::Graph both = good;
    both.dynamic_batch = {1};
    EXPECT_EQ(load_status(both, wo), KES_ERR_CORRUPT_DATA);

    // Each gear is a program built at load time: a file may not ask for more than ATC's 100.
    ir::Graph many = good;
    many.dynamic_image_sizes.clear();
    for (int64_t w = 1; w <= 101; ++w) many.dynamic_image_sizes.push_back(ir::ImageSize{1, w});
    many.dynamic_image_sizes.back() = ir::ImageSize{32, 32};
    EXPECT_EQ(load_status(many, ir::WriteOptions{}), KES_ERR_CORRUPT_DATA);
    EXPECT_NE(std::string(kes_last_error()).find("101 image gears"), std::string::npos) << kes_last_error();

    // A gear of smaller area can still need more bytes for some tensor (1x1000 < 32x32, but the first
    // Conv's output is 8x1x500 > 8x16x16): without the capacities check_gears computes, refused.
    ir::Graph grown = good;
    grown.dynamic_image_sizes[0] = ir::ImageSize{1, 1000};
    EXPECT_EQ(load_status(grown, ir::WriteOptions{}), KES_ERR_CORRUPT_DATA);
    EXPECT_NE(std::string(kes_last_error()).find("plan reserves"), std::string::npos) << kes_last_error();
}

// ---- dynamic AIPP (aipp_mode dynamic): kes_model_context_set_dynamic_aipp + kes_model_execute_images ----

namespace {

// x [N,3,8,8] → Conv 4×3×3 pads 1 → Relu → "y", converted with `aipp` (an aipp_op text) on x.
std::vector<uint8_t> conv_kom_with_aipp(const char* aipp, int64_t batch) {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {batch, 3, 8, 8}));
    s.outputs.push_back(value_info("y", kFloat, {batch, 4, 8, 8}));
    s.initializers.push_back(tensor_f32("w", {4, 3, 3, 3}, sine_input(4 * 27, 0.3f, 0.0f)));
    s.initializers.push_back(tensor_f32("b", {4}, sine_input(4, 0.1f, 0.0f)));
    s.nodes.push_back(node("Conv", {"x", "w", "b"}, {"c"}, {attr_ints("pads", {1, 1, 1, 1})}));
    s.nodes.push_back(node("Relu", {"c"}, {"y"}));
    const std::vector<uint8_t> onnx = onnx_model(s);
    const std::string conf = std::string(KES_TEST_TMPDIR) + "/dynamic_aipp_" + std::to_string(getpid()) + ".cfg";
    FILE* f = std::fopen(conf.c_str(), "w");
    EXPECT_NE(f, nullptr);
    std::fputs(aipp, f);
    std::fclose(f);
    kes_convert_options opt;
    kes_convert_options_init(&opt);
    opt.insert_op_conf = conf.c_str();
    void* kom = nullptr;
    size_t size = 0;
    EXPECT_EQ(kes_convert_memory(onnx.data(), onnx.size(), &opt, &kom, &size, nullptr), KES_OK) << kes_last_error();
    std::remove(conf.c_str());
    std::vector<uint8_t> bytes(static_cast<uint8_t*>(kom), static_cast<uint8_t*>(kom) + size);
    kes_convert_free(kom);
    return bytes;
}

constexpr const char* kDynamicAipp =
    "aipp_op {\n  aipp_mode: dynamic\n  related_input_rank: 0\n  max_src_image_size: 1536\n}\n";

// Per-item parameters unlike each other: a crop of a 16×16 NV12 image (item 0), a padded 6×6 crop
// (item 1), each with its own mean, min and var_reci.
kes_aipp_dynamic* make_params(uint64_t batch) {
    kes_aipp_dynamic* d = nullptr;
    EXPECT_EQ(kes_aipp_dynamic_create(nullptr, batch, &d), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_aipp_dynamic_set_input_format(d, KES_AIPP_YUV420SP_U8), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_aipp_dynamic_set_src_image_size(d, 16, 16), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_aipp_dynamic_set_csc_params(d, 1, 298, 0, 409, 298, -100, -208, 298, 516, 0, 0, 0, 0, 16, 128, 128),
              KES_OK)
        << kes_last_error();
    for (uint64_t k = 0; k < batch; ++k) {
        if (k % 2 == 0) {
            EXPECT_EQ(kes_aipp_dynamic_set_crop_params(d, 1, 2, 4, 8, 8, k), KES_OK) << kes_last_error();
        } else {
            EXPECT_EQ(kes_aipp_dynamic_set_crop_params(d, 1, 4, 2, 6, 6, k), KES_OK) << kes_last_error();
            EXPECT_EQ(kes_aipp_dynamic_set_padding_params(d, 1, 1, 1, 1, 1, k), KES_OK) << kes_last_error();
        }
        const int16_t m = static_cast<int16_t>(100 + 10 * k);
        EXPECT_EQ(kes_aipp_dynamic_set_dtc_pixel_mean(d, m, 110, 120, 0, k), KES_OK) << kes_last_error();
        EXPECT_EQ(kes_aipp_dynamic_set_dtc_pixel_min(d, 0.5f, 0.25f, 0.0f, 0.0f, k), KES_OK) << kes_last_error();
        EXPECT_EQ(kes_aipp_dynamic_set_pixel_var_reci(d, 0.0078125f, 0.01f, 0.02f, 1.0f, k), KES_OK)
            << kes_last_error();
    }
    return d;
}

struct DynamicAippRun {
    kes_model* model = nullptr;
    kes_model_context* ctx = nullptr;
    std::vector<std::vector<uint8_t>> pixels;
    std::vector<kes_image> images;
    kes_tensor dout{};

    DynamicAippRun(const std::vector<uint8_t>& kom, uint32_t count) : pixels(count), images(count) {
        EXPECT_EQ(kes_model_load_from_memory(kom.data(), kom.size(), &model), KES_OK) << kes_last_error();
        EXPECT_EQ(kes_model_context_create(model, nullptr, 0, &ctx), KES_OK) << kes_last_error();
        EXPECT_EQ(kes_model_context_output_desc(ctx, 0, &dout), KES_OK);
        for (uint32_t k = 0; k < count; ++k) {
            pixels[k].resize(16 * 16 * 3 / 2);
            for (size_t i = 0; i < pixels[k].size(); ++i) pixels[k][i] = static_cast<uint8_t>(37 * i + 11 + 53 * k);
            EXPECT_EQ(kes_image_wrap(&images[k], KES_PIXEL_NV12, 16, 16, 0, 0, pixels[k].data(), pixels[k].size()),
                      KES_OK);
        }
    }
    ~DynamicAippRun() {
        kes_model_context_destroy(ctx);
        kes_model_unload(model);
    }
    kes_status execute_images(std::vector<float>* y, uint32_t count) {
        y->assign(dout.size / 4, -7.0f);
        kes_tensor out;
        kes_tensor_wrap(&out, dout.dtype, dout.layout, dout.ndim, dout.shape, y->data(), dout.size);
        const kes_model_input in{nullptr, images.data(), count};
        return kes_model_execute_images(ctx, &in, 1, &out, 1);
    }
};

}  // namespace

TEST(DynamicAipp, ExecuteImagesEqualsDynamicAippThenExecute) {
    const std::vector<uint8_t> kom = conv_kom_with_aipp(kDynamicAipp, 2);
    DynamicAippRun r(kom, 2);
    const char* text = nullptr;
    ASSERT_EQ(kes_model_input_aipp(r.model, 0, &text), KES_OK);
    ASSERT_NE(text, nullptr);
    EXPECT_NE(std::string(text).find("dynamic"), std::string::npos) << text;
    kes_aipp_dynamic* params = make_params(2);
    ASSERT_EQ(kes_model_context_set_dynamic_aipp(r.ctx, 0, params), KES_OK) << kes_last_error();
    std::vector<float> got;
    ASSERT_EQ(r.execute_images(&got, 2), KES_OK) << kes_last_error();

    // The independent path: the aipp module into a tensor of the input's shape, then kes_model_execute.
    kes_tensor din, x, out;
    ASSERT_EQ(kes_model_context_input_desc(r.ctx, 0, &din), KES_OK);
    std::vector<float> xs(din.size / 4);
    kes_tensor_wrap(&x, din.dtype, KES_LAYOUT_NCHW, din.ndim, din.shape, xs.data(), din.size);
    ASSERT_EQ(kes_aipp_dynamic_execute(params, nullptr, r.images.data(), 2, &x), KES_OK) << kes_last_error();
    x.layout = din.layout;
    std::vector<float> want(r.dout.size / 4, -9.0f);
    kes_tensor_wrap(&out, r.dout.dtype, r.dout.layout, r.dout.ndim, r.dout.shape, want.data(), r.dout.size);
    ASSERT_EQ(kes_model_execute(r.ctx, &x, 1, &out, 1), KES_OK) << kes_last_error();
    EXPECT_EQ(got, want);

    // Changing the parameters changes the next execution (they are borrowed, not copied).
    ASSERT_EQ(kes_aipp_dynamic_set_dtc_pixel_mean(params, 0, 0, 0, 0, 1), KES_OK);
    std::vector<float> changed;
    ASSERT_EQ(r.execute_images(&changed, 2), KES_OK) << kes_last_error();
    EXPECT_NE(changed, got);

    // Asynchronously, the same.
    ASSERT_EQ(kes_aipp_dynamic_set_dtc_pixel_mean(params, 110, 110, 120, 0, 1), KES_OK);
    std::vector<float> queued(r.dout.size / 4);
    kes_tensor qout;
    kes_tensor_wrap(&qout, r.dout.dtype, r.dout.layout, r.dout.ndim, r.dout.shape, queued.data(), r.dout.size);
    const kes_model_input in{nullptr, r.images.data(), 2};
    // The job's callback holds it on the queue until the check below is done: without it, a fast worker
    // could finish first and the "queued" check would see an idle context (it did, once, under load).
    std::atomic<bool> release{false};
    auto hold = [](kes_status, const char*, void* user) {
        while (!static_cast<std::atomic<bool>*>(user)->load()) std::this_thread::yield();
    };
    ASSERT_EQ(kes_model_execute_images_async(r.ctx, &in, 1, &qout, 1, hold, &release), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_model_context_set_dynamic_aipp(r.ctx, 0, nullptr), KES_ERR_INVALID_ARGUMENT)
        << "refused while work is queued";
    release = true;
    ASSERT_EQ(kes_model_context_wait(r.ctx), KES_OK) << kes_last_error();
    EXPECT_EQ(queued, got);
    kes_aipp_dynamic_destroy(params);
    ASSERT_EQ(kes_model_context_set_dynamic_aipp(r.ctx, 0, nullptr), KES_OK);
}

TEST(DynamicAipp, WithoutParametersTheErrorNamesTheCallToMake) {
    const std::vector<uint8_t> kom = conv_kom_with_aipp(kDynamicAipp, 1);
    DynamicAippRun r(kom, 1);
    std::vector<float> y;
    EXPECT_EQ(r.execute_images(&y, 1), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("kes_model_context_set_dynamic_aipp"), std::string::npos)
        << kes_last_error();
    // Cleared parameters are no parameters.
    kes_aipp_dynamic* params = make_params(1);
    ASSERT_EQ(kes_model_context_set_dynamic_aipp(r.ctx, 0, params), KES_OK) << kes_last_error();
    EXPECT_EQ(r.execute_images(&y, 1), KES_OK) << kes_last_error();
    ASSERT_EQ(kes_model_context_set_dynamic_aipp(r.ctx, 0, nullptr), KES_OK);
    EXPECT_EQ(r.execute_images(&y, 1), KES_ERR_INVALID_ARGUMENT);
    kes_aipp_dynamic_destroy(params);
}

TEST(DynamicAipp, FewerBatchItemsThanImagesIsNamed) {
    const std::vector<uint8_t> kom = conv_kom_with_aipp(kDynamicAipp, 2);
    DynamicAippRun r(kom, 2);
    kes_aipp_dynamic* params = make_params(1);
    ASSERT_EQ(kes_model_context_set_dynamic_aipp(r.ctx, 0, params), KES_OK) << kes_last_error();
    std::vector<float> y;
    EXPECT_EQ(r.execute_images(&y, 2), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("1 batch items"), std::string::npos) << kes_last_error();
    kes_aipp_dynamic_destroy(params);
}

TEST(DynamicAipp, ImageLargerThanMaxSrcImageSizeIsNamed) {
    const std::vector<uint8_t> kom = conv_kom_with_aipp(
        "aipp_op {\n  aipp_mode: dynamic\n  related_input_rank: 0\n  max_src_image_size: 300\n}\n", 1);
    DynamicAippRun r(kom, 1);
    kes_aipp_dynamic* params = make_params(1);
    ASSERT_EQ(kes_model_context_set_dynamic_aipp(r.ctx, 0, params), KES_OK) << kes_last_error();
    std::vector<float> y;
    EXPECT_EQ(r.execute_images(&y, 1), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("max_src_image_size 300"), std::string::npos) << kes_last_error();
    kes_aipp_dynamic_destroy(params);
}

TEST(DynamicAipp, InputsWithoutDynamicAippRefuseParameters) {
    kes_aipp_dynamic* params = make_params(1);
    const std::vector<uint8_t> static_kom =
        conv_kom_with_aipp("aipp_op {\n  aipp_mode: static\n  input_format: YUV420SP_U8\n  csc_switch: true\n}\n", 1);
    DynamicAippRun s(static_kom, 1);
    EXPECT_EQ(kes_model_context_set_dynamic_aipp(s.ctx, 0, params), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("static"), std::string::npos) << kes_last_error();
    EXPECT_EQ(kes_model_context_set_dynamic_aipp(s.ctx, 1, params), KES_ERR_INVALID_ARGUMENT) << "out of range";
    EXPECT_EQ(kes_model_context_set_dynamic_aipp(nullptr, 0, params), KES_ERR_INVALID_ARGUMENT);
    kes_aipp_dynamic_destroy(params);
}
