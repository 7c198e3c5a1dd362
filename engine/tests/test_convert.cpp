// The conversion pipeline and its C API (convert/convert.hpp, kestrel/convert.h): option parsing,
// tensor files, overrides, AIPP, f16 weights, and converted models executing like the reference.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>

#include "convert/convert.hpp"
#include "convert/importers.hpp"
#include "kes/error.hpp"
#include "kes/struct_size.hpp"
#include "kestrel/convert.h"
#include "kestrel/engine.h"
#include "kestrel/log.h"
#include "struct_size_check.hpp"
#include "test_kom_run.hpp"
#include "test_onnx_builder.hpp"
#include "test_passes_runner.hpp"
#include "test_status.hpp"

using namespace kes;
using namespace kes_test;

namespace {

std::vector<float> wave_f(size_t n, float scale, float bias) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.7f * static_cast<float>(i) + 0.2f) + bias;
    return v;
}

// x [N,2,5,5] → Conv(4, 3x3, pads 1) → BatchNormalization → Relu → Gemm-free head: y
std::vector<uint8_t> conv_bn_relu_model(size_t cout = 4) {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {-1, 2, 5, 5}));
    s.outputs.push_back(value_info("y", kFloat, {-1, static_cast<int64_t>(cout), 5, 5}));
    s.initializers.push_back(tensor_f32("w", {static_cast<int64_t>(cout), 2, 3, 3}, wave_f(cout * 18, 0.5f, 0.0f)));
    s.initializers.push_back(tensor_f32("b", {static_cast<int64_t>(cout)}, wave_f(cout, 0.2f, 0.0f)));
    s.initializers.push_back(tensor_f32("gamma", {static_cast<int64_t>(cout)}, wave_f(cout, 0.5f, 1.0f)));
    s.initializers.push_back(tensor_f32("beta", {static_cast<int64_t>(cout)}, wave_f(cout, 0.3f, 0.0f)));
    s.initializers.push_back(tensor_f32("mean", {static_cast<int64_t>(cout)}, wave_f(cout, 0.1f, 0.0f)));
    s.initializers.push_back(tensor_f32("var", {static_cast<int64_t>(cout)}, wave_f(cout, 0.2f, 1.0f)));
    s.nodes.push_back(node("Conv", {"x", "w", "b"}, {"c"}, {attr_ints("pads", {1, 1, 1, 1})}));
    s.nodes.push_back(node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"n"}));
    s.nodes.push_back(node("Relu", {"n"}, {"y"}));
    return onnx_model(s);
}

std::string tmp_path(const std::string& name) {
    return std::string(KES_TEST_TMPDIR) + "/convert_" + std::to_string(getpid()) + "_" + name;
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<uint8_t> npy(const std::string& descr, const std::string& shape, const void* data, size_t bytes_of_data,
                         const char* order = "False") {
    std::string header = "{'descr': '" + descr + "', 'fortran_order': " + order + ", 'shape': " + shape + ", }";
    while ((10 + header.size() + 1) % 64) header += ' ';
    header += '\n';
    // Built as one string (GCC 12's -O3 -Warray-bounds misfires on vector::insert into a short vector).
    std::string bytes = "\x93NUMPY";
    bytes += '\x01';
    bytes += '\x00';
    bytes += static_cast<char>(header.size() & 0xff);
    bytes += static_cast<char>(header.size() >> 8);
    bytes += header;
    bytes.append(static_cast<const char*>(data), bytes_of_data);
    return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

}  // namespace

// ---- options ------------------------------------------------------------------------------------------------

TEST(ConvertOptions, InputShapesAllowColonsInNames) {
    const auto shapes = convert::parse_input_shapes("input:0:1,256,256,3; b:2");
    ASSERT_EQ(shapes.size(), 2u);
    EXPECT_EQ(shapes[0].first, "input:0");
    EXPECT_EQ(shapes[0].second, (Shape{1, 256, 256, 3}));
    EXPECT_EQ(shapes[1].first, "b");
    EXPECT_EQ(shapes[1].second, (Shape{2}));
    EXPECT_EQ(status_of([] { convert::parse_input_shapes("x1,2"); }), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(status_of([] { convert::parse_input_shapes("x:1,-2"); }), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(status_of([] { convert::parse_input_shapes("x:1,a"); }), KES_ERR_INVALID_ARGUMENT);
}

TEST(ConvertOptions, BatchGearsAreSortedAndUnique) {
    EXPECT_EQ(convert::parse_batch_gears("8,1,4,2,4"), (std::vector<int64_t>{1, 2, 4, 8}));
    EXPECT_EQ(status_of([] { convert::parse_batch_gears("0,2"); }), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(status_of([] { convert::parse_batch_gears(""); }), KES_ERR_INVALID_ARGUMENT);
}

// Number lists take decimal integers and every item: an empty item, a '+', a blank inside a number or a
// trailing comma is refused naming the option (they were read as a shorter list or as the number).
// Blanks around an item stay allowed.
TEST(ConvertOptions, NumberListsRefuseEmptyItemsSignsAndInnerBlanks) {
    for (const char* bad : {"1,,2", "1,2,", "+1", "1 2", ",4", "0x10", "4e1"}) {
        SCOPED_TRACE(bad);
        std::string message;
        EXPECT_EQ(status_of([&] { convert::parse_batch_gears(bad); }, &message), KES_ERR_INVALID_ARGUMENT);
        EXPECT_NE(message.find("--dynamic-batch"), std::string::npos) << message;
        EXPECT_EQ(status_of([&] { convert::parse_input_shapes(std::string("x:") + bad); }), KES_ERR_INVALID_ARGUMENT);
    }
    EXPECT_EQ(status_of([] { convert::parse_image_sizes("224,,224"); }), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(status_of([] { convert::parse_image_sizes("+224,224"); }), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(convert::parse_batch_gears(" 1, 2 ,4"), (std::vector<int64_t>{1, 2, 4}));
    EXPECT_EQ(convert::parse_input_shapes("x: 1, -1, -1, 3")[0].second, (Shape{1, -1, -1, 3}));
}

TEST(ConvertOptions, FormatIsDetectedFromTheTfliteIdentifier) {
    const uint8_t tflite[8] = {0x1c, 0, 0, 0, 'T', 'F', 'L', '3'};
    EXPECT_EQ(convert::detect_format(tflite, 8), convert::Format::Tflite);
    const std::vector<uint8_t> onnx = conv_bn_relu_model();
    EXPECT_EQ(convert::detect_format(onnx.data(), onnx.size()), convert::Format::Onnx);
}

TEST(ConvertOptions, Sha256MatchesFipsVectors) {
    EXPECT_EQ(convert::sha256_hex(nullptr, 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const std::string abc = "abc";
    EXPECT_EQ(convert::sha256_hex(reinterpret_cast<const uint8_t*>(abc.data()), 3),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const std::string two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    EXPECT_EQ(convert::sha256_hex(reinterpret_cast<const uint8_t*>(two.data()), two.size()),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

// ---- tensor files -----------------------------------------------------------------------------------------------

TEST(TensorFiles, NpyOfF32AndI64Reads) {
    const float f[6] = {1, 2, 3, 4, 5, 6};
    const std::vector<uint8_t> a = npy("<f4", "(2, 3)", f, sizeof f);
    const ir::Tensor t = convert::parse_npy(a.data(), a.size());
    EXPECT_EQ(t.dtype, KES_F32);
    EXPECT_EQ(t.shape, (Shape{2, 3}));
    EXPECT_EQ(t.as<float>()[5], 6.0f);
    const int64_t i[1] = {-7};
    const std::vector<uint8_t> b = npy("<i8", "(1,)", i, sizeof i);
    EXPECT_EQ(convert::parse_npy(b.data(), b.size()).as<int64_t>()[0], -7);
    const std::vector<uint8_t> scalar = npy("<i8", "()", i, sizeof i);
    EXPECT_EQ(convert::parse_npy(scalar.data(), scalar.size()).shape, Shape{});
}

TEST(TensorFiles, NpyThatLiesIsRejected) {
    const float f[6] = {};
    const std::vector<uint8_t> short_data = npy("<f4", "(2, 4)", f, sizeof f);
    EXPECT_EQ(status_of([&] { convert::parse_npy(short_data.data(), short_data.size()); }), KES_ERR_CORRUPT_DATA);
    const std::vector<uint8_t> big_endian = npy(">f4", "(2, 3)", f, sizeof f);
    EXPECT_EQ(status_of([&] { convert::parse_npy(big_endian.data(), big_endian.size()); }), KES_ERR_UNSUPPORTED);
    const std::vector<uint8_t> fortran = npy("<f4", "(2, 3)", f, sizeof f, "True");
    EXPECT_EQ(status_of([&] { convert::parse_npy(fortran.data(), fortran.size()); }), KES_ERR_UNSUPPORTED);
    for (size_t n = 0; n < short_data.size(); ++n)
        EXPECT_NE(status_of([&] { convert::parse_npy(short_data.data(), n); }), KES_OK);
}

TEST(TensorFiles, TensorProtoFileReads) {
    const Pb t = tensor_i64("shape", {2}, {3, -1});
    const ir::Tensor x = convert::import_onnx_tensor(t.bytes.data(), t.bytes.size());
    EXPECT_EQ(x.name, "shape");
    EXPECT_EQ(x.as<int64_t>()[1], -1);
}

// ---- pipeline --------------------------------------------------------------------------------------------------

TEST(ConvertPipeline, UnknownInputShapeAsksForInputShape) {
    const std::vector<uint8_t> model = conv_bn_relu_model();
    std::string msg;
    EXPECT_EQ(status_of([&] { convert::build_graph(model.data(), model.size(), {}); }, &msg), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(msg.find("--input-shape"), std::string::npos) << msg;
}

TEST(ConvertPipeline, FoldsFusesAndKeepsTheReferenceOutputs) {
    const std::vector<uint8_t> model = conv_bn_relu_model();
    convert::Options opt;
    opt.input_shapes = convert::parse_input_shapes("x:1,2,5,5");
    ir::PassStats stats;
    const ir::Graph g = convert::build_graph(model.data(), model.size(), opt, &stats);
    // Conv with BatchNorm folded and Relu fused, stored NHWC between a Transpose after the input and one
    // before the output (pass_layout.hpp: one conv on the fast NHWC kernels outweighs two Transposes).
    ASSERT_EQ(g.nodes.size(), 3u);
    ASSERT_EQ(g.nodes[1].op, "Conv");
    EXPECT_EQ(g.nodes[1].attrs.get_string("activation"), "Relu");
    EXPECT_EQ(stats.nodes_fused, 2u);
    EXPECT_EQ(g.metadata.source_format, "onnx");
    EXPECT_EQ(g.metadata.source_hash, convert::sha256_hex(model.data(), model.size()));

    ir::Graph reference = ir::import_onnx(model.data(), model.size());
    reference.tensors[static_cast<size_t>(reference.inputs[0])].shape[0] = 1;
    const std::vector<float> x = wave_f(50, 1.0f, 0.1f);
    expect_close(run_graph(g, {x}), run_graph(reference, {x}));
}

TEST(ConvertPipeline, DynamicBatchDescribesTheLargestGear) {
    const std::vector<uint8_t> model = conv_bn_relu_model();
    convert::Options opt;
    opt.input_shapes = convert::parse_input_shapes("x:1,2,5,5");
    opt.dynamic_batch = {1, 2, 4};
    const ir::Graph g = convert::build_graph(model.data(), model.size(), opt);
    EXPECT_EQ(g.dynamic_batch, (std::vector<int64_t>{1, 2, 4}));
    EXPECT_EQ(g.tensors[static_cast<size_t>(g.inputs[0])].shape, (Shape{4, 2, 5, 5}));
    EXPECT_EQ(g.tensors[static_cast<size_t>(g.outputs[0])].shape, (Shape{4, 4, 5, 5}));
}

TEST(ConvertPipeline, InputFormatRecordsTheLayoutOfFourDimensionalInputs) {
    const std::vector<uint8_t> model = conv_bn_relu_model();
    convert::Options opt;
    opt.input_shapes = convert::parse_input_shapes("x:1,2,5,5");
    const ir::Graph nd = convert::build_graph(model.data(), model.size(), opt);
    EXPECT_EQ(nd.tensors[static_cast<size_t>(nd.inputs[0])].layout, KES_LAYOUT_ND);  // an ONNX file does not say
    opt.input_format = "NCHW";
    const ir::Graph g = convert::build_graph(model.data(), model.size(), opt);
    EXPECT_EQ(g.tensors[static_cast<size_t>(g.inputs[0])].layout, KES_LAYOUT_NCHW);
    opt.input_format = "NC1HWC0";  // ATC's 5-d format: not a layout Kestrel records
    std::string msg;
    EXPECT_EQ(status_of([&] { convert::build_graph(model.data(), model.size(), opt); }, &msg),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(msg.find("--input-format"), std::string::npos) << msg;
}

TEST(ConvertPipeline, FreezeInputTurnsAnInputIntoAConstant) {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {2, 3}));
    s.inputs.push_back(value_info("shape", kInt64, {2}));
    s.outputs.push_back(value_info("y", kFloat, {3, 2}));
    s.nodes.push_back(node("Reshape", {"x", "shape"}, {"y"}));
    const std::vector<uint8_t> model = onnx_model(s);
    const int64_t dims[2] = {3, 2};
    const std::vector<uint8_t> file = npy("<i8", "(2,)", dims, sizeof dims);
    const std::string path = tmp_path("shape.npy");
    write_bytes(path, file);
    convert::Options opt;
    opt.frozen = convert::parse_freeze_inputs("shape=" + path);
    const ir::Graph g = convert::build_graph(model.data(), model.size(), opt);
    ASSERT_EQ(g.inputs.size(), 1u);
    EXPECT_EQ(g.tensors[static_cast<size_t>(g.outputs[0])].shape, (Shape{3, 2}));
    std::remove(path.c_str());
    convert::Options wrong;
    const float f[2] = {3, 2};
    const std::vector<uint8_t> float_file = npy("<f4", "(2,)", f, sizeof f);
    wrong.frozen = {{"shape", convert::parse_npy(float_file.data(), float_file.size())}};
    EXPECT_EQ(status_of([&] { convert::build_graph(model.data(), model.size(), wrong); }), KES_ERR_INVALID_ARGUMENT);
    convert::Options unknown;
    unknown.frozen = {{"nope", wrong.frozen[0].second}};
    EXPECT_EQ(status_of([&] { convert::build_graph(model.data(), model.size(), unknown); }), KES_ERR_INVALID_ARGUMENT);
}

TEST(ConvertPipeline, AippBlocksAttachToTheirRelatedInput) {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("a", kFloat, {1, 3, 4, 4}));
    s.inputs.push_back(value_info("b", kFloat, {1, 3, 4, 4}));
    s.outputs.push_back(value_info("y", kFloat, {1, 3, 4, 4}));
    s.nodes.push_back(node("Add", {"a", "b"}, {"y"}));
    const std::vector<uint8_t> model = onnx_model(s);
    convert::Options opt;
    opt.aipp_config =
        "# two inputs\naipp_op {\n  aipp_mode : static\n  related_input_rank : 1  # second\n  input_format : "
        "YUV420SP_U8\n}\naipp_op {\n  aipp_mode: static\n  input_format : RGB888_U8\n}\n";
    const ir::Graph g = convert::build_graph(model.data(), model.size(), opt);
    ASSERT_EQ(g.aipp.size(), 2u);
    EXPECT_EQ(g.tensors[static_cast<size_t>(g.aipp[0].input)].name, "b");
    EXPECT_NE(g.aipp[0].config.find("YUV420SP_U8"), std::string::npos);
    EXPECT_EQ(g.tensors[static_cast<size_t>(g.aipp[1].input)].name, "a");
    opt.aipp_config = "aipp_op { related_input_rank : 2 }";
    EXPECT_EQ(status_of([&] { convert::build_graph(model.data(), model.size(), opt); }), KES_ERR_INVALID_ARGUMENT);
    opt.aipp_config = "nothing here";
    EXPECT_EQ(status_of([&] { convert::build_graph(model.data(), model.size(), opt); }), KES_ERR_INVALID_ARGUMENT);
}

// x (4-d) → [Transpose(perm), when perm is given] → Relu → y.
std::vector<uint8_t> relu_model(const std::vector<int64_t>& x_shape, const std::vector<int64_t>& perm) {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, x_shape));
    std::vector<int64_t> y_shape = x_shape;
    for (size_t d = 0; d < perm.size(); ++d) y_shape[d] = x_shape[static_cast<size_t>(perm[d])];
    s.outputs.push_back(value_info("y", kFloat, y_shape));
    if (perm.empty()) {
        s.nodes.push_back(node("Relu", {"x"}, {"y"}));
    } else {
        s.nodes.push_back(node("Transpose", {"x"}, {"t"}, {attr_ints("perm", perm)}));
        s.nodes.push_back(node("Relu", {"t"}, {"y"}));
    }
    return onnx_model(s);
}

kes_layout input_layout(const std::vector<uint8_t>& model, const convert::Options& opt) {
    const ir::Graph g = convert::build_graph(model.data(), model.size(), opt);
    return g.tensors[static_cast<size_t>(g.inputs[0])].layout;
}

const char* const kStaticRgbAipp = "aipp_op {\n  aipp_mode : static\n  input_format : RGB888_U8\n}\n";

TEST(ConvertPipeline, AnInputReadThroughTransposeToNchwIsRecordedNhwc) {
    const std::vector<uint8_t> model = relu_model({1, 8, 8, 3}, {0, 3, 1, 2});  // tf2onnx's pattern
    convert::Options opt;
    EXPECT_EQ(input_layout(model, opt), KES_LAYOUT_NHWC);
    opt.aipp_config = kStaticRgbAipp;
    EXPECT_EQ(input_layout(model, opt), KES_LAYOUT_NHWC);
    // The same shape read through another Transpose says nothing: an AIPP input gets ATC's default.
    EXPECT_EQ(input_layout(relu_model({1, 8, 8, 3}, {0, 2, 3, 1}), opt), KES_LAYOUT_NCHW);
}

TEST(ConvertPipeline, AnExplicitInputFormatWinsOverTheGraph) {
    const std::vector<uint8_t> model = relu_model({1, 8, 8, 3}, {0, 3, 1, 2});
    convert::Options opt;
    opt.aipp_config = kStaticRgbAipp;
    opt.input_format = "NCHW";
    EXPECT_EQ(input_layout(model, opt), KES_LAYOUT_NCHW);
    opt.input_format = "NHWC";
    EXPECT_EQ(input_layout(relu_model({1, 3, 8, 8}, {}), opt), KES_LAYOUT_NHWC);
}

TEST(ConvertPipeline, AnAippInputsLayoutIsNeverReadFromItsShape) {
    convert::Options opt;
    opt.aipp_config = kStaticRgbAipp;
    // Channels-last-looking and ambiguous shapes alike: no fact in the graph, so ATC's default NCHW.
    for (const std::vector<int64_t>& shape : {std::vector<int64_t>{1, 8, 8, 3}, {1, 3, 3, 3}, {1, 3, 8, 8}})
        EXPECT_EQ(input_layout(relu_model(shape, {}), opt), KES_LAYOUT_NCHW) << shape_string(shape);
    // Without AIPP nothing needs a layout the model does not give: it stays ND.
    EXPECT_EQ(input_layout(relu_model({1, 8, 8, 3}, {}), convert::Options{}), KES_LAYOUT_ND);
}

// A .kom from before kes-convert recorded AIPP layouts carries an ND input: it runs as NCHW (engine.h),
// exactly like a file that says NCHW, whatever its shape looks like, and the load says so once.
TEST(ConvertPipeline, AnOlderFilesAippInputWithoutALayoutRunsAsNchwAndLoadingSaysSo) {
    convert::Options opt;
    opt.aipp_config = kStaticRgbAipp;
    const std::vector<uint8_t> model = relu_model({1, 3, 4, 3}, {});  // either way round: the shape decides nothing
    ir::Graph recorded = convert::build_graph(model.data(), model.size(), opt);
    ASSERT_EQ(recorded.tensors[static_cast<size_t>(recorded.inputs[0])].layout, KES_LAYOUT_NCHW);
    ir::Graph older = recorded;
    older.tensors[static_cast<size_t>(older.inputs[0])].layout = KES_LAYOUT_ND;

    static std::vector<std::string> warnings;
    warnings.clear();
    kes_log_set_callback(
        [](kes_log_level level, const char*, const char* message, void*) {
            if (level == KES_LOG_WARN) warnings.emplace_back(message);
        },
        nullptr);
    std::vector<uint8_t> rgb(3 * 4 * 3);
    for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<uint8_t>(17 * i + 3);
    auto run = [&](const ir::Graph& g) {
        const ir::KomImage kom = ir::write_kom(g);
        kes_model* m = nullptr;
        kes_model_context* ctx = nullptr;
        std::vector<float> y(3 * 4 * 3, -1.f);
        EXPECT_EQ(kes_model_load_from_memory(kom.bytes.data(), kom.bytes.size(), &m), KES_OK) << kes_last_error();
        EXPECT_EQ(kes_model_context_create(m, nullptr, 0, &ctx), KES_OK) << kes_last_error();
        kes_image image;
        EXPECT_EQ(kes_image_wrap(&image, KES_PIXEL_RGB888, 3, 4, 0, 0, rgb.data(), rgb.size()), KES_OK);
        const kes_model_input in{nullptr, &image, 1};
        kes_tensor out;
        EXPECT_EQ(kes_model_context_output_desc(ctx, 0, &out), KES_OK);
        out.data = y.data();
        out.size = y.size() * sizeof(float);
        EXPECT_EQ(kes_model_execute_images(ctx, &in, 1, &out, 1), KES_OK) << kes_last_error();
        kes_model_context_destroy(ctx);
        kes_model_unload(m);
        return y;
    };
    const std::vector<float> as_recorded = run(recorded);
    EXPECT_TRUE(warnings.empty());
    const std::vector<float> as_older = run(older);
    kes_log_set_callback(nullptr, nullptr);
    EXPECT_EQ(as_older, as_recorded);
    // NCHW: the red plane first (the first pixel's R, G, B are 3, 20, 37).
    EXPECT_EQ(as_recorded[0], 3.f);
    EXPECT_EQ(as_recorded[1], 3.f + 17 * 3);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("read as NCHW"), std::string::npos) << warnings[0];
}

TEST(ConvertPipeline, F16WeightsAreCastBackBeforeTheirConsumer) {
    const std::vector<uint8_t> model = conv_bn_relu_model(16);  // 16×2×3×3 = 288 weights ≥ 256
    convert::Options opt;
    opt.input_shapes = convert::parse_input_shapes("x:1,2,5,5");
    const ir::Graph f32 = convert::build_graph(model.data(), model.size(), opt);
    opt.f16_weights = true;
    const ir::Graph f16 = convert::build_graph(model.data(), model.size(), opt);
    ASSERT_EQ(f16.nodes.size(), 4u);  // the Cast, and the NHWC Conv between its two layout Transposes
    const auto cast =
        std::find_if(f16.nodes.begin(), f16.nodes.end(), [](const ir::Node& n) { return n.op == "Cast"; });
    ASSERT_NE(cast, f16.nodes.end());
    EXPECT_EQ(f16.tensors[static_cast<size_t>(cast->inputs[0])].dtype, KES_F16);
    const std::vector<float> x = wave_f(50, 1.0f, 0.0f);
    expect_close(run_graph(f16, {x}), run_graph(f32, {x}), 2e-2f, 2e-3f);
}

TEST(ConvertPipeline, UnknownBoardIsRejected) {
    const std::vector<uint8_t> model = conv_bn_relu_model();
    convert::Options opt;
    opt.input_shapes = convert::parse_input_shapes("x:1,2,5,5");
    opt.board = "320";
    EXPECT_EQ(status_of([&] { convert::build_graph(model.data(), model.size(), opt); }), KES_ERR_INVALID_ARGUMENT);
}

// ---- C API and execution ------------------------------------------------------------------------------------------

TEST(ConvertApi, ConvertedModelExecutesLikeTheReference) {
    const std::vector<uint8_t> model = conv_bn_relu_model();
    kes_convert_options opt;
    ASSERT_EQ(kes_convert_options_init(&opt), KES_OK);
    opt.input_shape = "x:1,2,5,5";
    kes_convert_summary summary;
    std::memset(&summary, 0, sizeof summary);
    summary.struct_size = sizeof summary;
    void* kom = nullptr;
    size_t size = 0;
    ASSERT_EQ(kes_convert_memory(model.data(), model.size(), &opt, &kom, &size, &summary), KES_OK) << kes_last_error();
    EXPECT_EQ(summary.ops, 3u);  // the NHWC Conv between its two layout Transposes (pass_layout.hpp)
    EXPECT_EQ(summary.parameters, 4u * 18 + 4);
    EXPECT_EQ(summary.file_bytes, size);
    EXPECT_GE(summary.arena_bytes, summary.ideal_bytes);
    EXPECT_GT(summary.weight_bytes, 0u);
    const std::vector<uint8_t> bytes(static_cast<uint8_t*>(kom), static_cast<uint8_t*>(kom) + size);
    kes_convert_free(kom);

    ir::Graph reference = ir::import_onnx(model.data(), model.size());
    reference.tensors[static_cast<size_t>(reference.inputs[0])].shape[0] = 1;
    const std::vector<float> x = wave_f(50, 1.0f, -0.1f);
    const std::vector<float> y = execute_kom(bytes, x);
    expect_close({y}, run_graph(reference, {x}));
}

TEST(ConvertApi, AFailedConversionWritesNothing) {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {4}));
    s.outputs.push_back(value_info("y", kFloat, {4}));
    s.nodes.push_back(node("NoSuchOp", {"x"}, {"y"}, {}, "odd"));
    const std::string in = tmp_path("bad.onnx"), out = tmp_path("bad.kom");
    write_bytes(in, onnx_model(s));
    std::remove(out.c_str());
    EXPECT_EQ(kes_convert_file(in.c_str(), out.c_str(), nullptr, nullptr), KES_ERR_UNSUPPORTED);
    EXPECT_NE(std::string(kes_last_error()).find("NoSuchOp"), std::string::npos) << kes_last_error();
    EXPECT_NE(access(out.c_str(), F_OK), 0) << "an output file was written";
    void* kom = reinterpret_cast<void*>(1);
    size_t size = 7;
    const std::vector<uint8_t> bytes = onnx_model(s);
    EXPECT_EQ(kes_convert_memory(bytes.data(), bytes.size(), nullptr, &kom, &size, nullptr), KES_ERR_UNSUPPORTED);
    EXPECT_EQ(kom, nullptr);
    EXPECT_EQ(size, 0u);
    std::remove(in.c_str());
}

TEST(ConvertApi, FileConversionWritesAFileThatLoads) {
    const std::string in = tmp_path("ok.onnx"), out = tmp_path("ok.kom");
    write_bytes(in, conv_bn_relu_model());
    kes_convert_options opt;
    kes_convert_options_init(&opt);
    opt.input_shape = "x:1,2,5,5";
    opt.board = "310B";
    ASSERT_EQ(kes_convert_file(in.c_str(), out.c_str(), &opt, nullptr), KES_OK) << kes_last_error();
    kes_model* m = nullptr;
    ASSERT_EQ(kes_model_load_from_file(out.c_str(), 0, &m), KES_OK) << kes_last_error();
    // The file records where it came from (issue 5 §1 metadata).
    kes_model_metadata md;
    std::memset(&md, 0, sizeof md);
    md.struct_size = sizeof md;
    ASSERT_EQ(kes_model_get_metadata(m, &md), KES_OK) << kes_last_error();
    EXPECT_EQ(md.format_version, 2u);
    EXPECT_STREQ(md.source_format, "onnx");
    EXPECT_STREQ(md.target_board, "310B");
    const std::vector<uint8_t> source = conv_bn_relu_model();
    EXPECT_EQ(md.source_hash, convert::sha256_hex(source.data(), source.size()));
    EXPECT_EQ(std::string(md.converter_version).rfind("kes-convert ", 0), 0u) << md.converter_version;
    md.struct_size = 2;  // not a kes_model_metadata
    EXPECT_EQ(kes_model_get_metadata(m, &md), KES_ERR_INVALID_ARGUMENT);
    kes_model_unload(m);
    std::remove(in.c_str());
    std::remove(out.c_str());
}

TEST(ConvertApi, BadOptionsAreInvalidArguments) {
    const std::vector<uint8_t> model = conv_bn_relu_model();
    kes_convert_options opt;
    kes_convert_options_init(&opt);
    void* kom = nullptr;
    size_t size = 0;
    opt.input_shape = "nosuch:1,2,5,5";
    EXPECT_EQ(kes_convert_memory(model.data(), model.size(), &opt, &kom, &size, nullptr), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("'x'"), std::string::npos) << kes_last_error();
    opt.input_shape = "x:1,2,5,5";
    opt.struct_size = 0;
    EXPECT_EQ(kes_convert_memory(model.data(), model.size(), &opt, &kom, &size, nullptr), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_convert_options_init(nullptr), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_convert_file("/nonexistent/model.onnx", "/tmp/x.kom", nullptr, nullptr), KES_ERR_NOT_FOUND);
}

// kes_convert_options and kes_convert_summary follow the struct_size contract (kes/struct_size.hpp): an
// app built against the first release (before the image size gears and the input format) converts; a
// newer app's options with an unknown tail of zeros convert, with a set tail they are refused; the
// summary is written to the caller's size only. (Before: any size up to sizeof, nothing larger.)
TEST(ConvertApi, OptionsAndSummaryGrowWithoutBreakingApps) {
    const std::vector<uint8_t> model = conv_bn_relu_model();
    kes_convert_options opt;
    ASSERT_EQ(kes_convert_options_init(&opt), KES_OK);
    opt.input_shape = "x:1,2,5,5";
    const auto convert = [&](const kes_convert_options* o, kes_convert_summary* s) {
        void* kom = nullptr;
        size_t size = 0;
        const kes_status st = kes_convert_memory(model.data(), model.size(), o, &kom, &size, s);
        kes_convert_free(kom);
        return st;
    };
    kes_test::expect_struct_growth(opt, KES_STRUCT_SIZE_THROUGH(kes_convert_options, progress_user_data),
                                   [&](kes_convert_options* o) { return convert(o, nullptr); });
    kes_test::expect_out_struct_growth<kes_convert_summary>(KES_STRUCT_SIZE_THROUGH(kes_convert_summary, nodes_removed),
                                                            [&](kes_convert_summary* s) { return convert(&opt, s); });
}

TEST(ConvertApi, F16WeightsHalveTheWeightBytesAndExecute) {
    const std::vector<uint8_t> model = conv_bn_relu_model(32);  // 32×2×3×3 = 576 weights
    kes_convert_options opt;
    kes_convert_options_init(&opt);
    opt.input_shape = "x:1,2,5,5";
    kes_convert_summary s32, s16;
    std::memset(&s32, 0, sizeof s32);
    std::memset(&s16, 0, sizeof s16);
    s32.struct_size = s16.struct_size = sizeof s32;
    void* k32 = nullptr;
    void* k16 = nullptr;
    size_t n32 = 0, n16 = 0;
    ASSERT_EQ(kes_convert_memory(model.data(), model.size(), &opt, &k32, &n32, &s32), KES_OK) << kes_last_error();
    opt.weight_type = KES_CONVERT_WEIGHTS_F16;
    ASSERT_EQ(kes_convert_memory(model.data(), model.size(), &opt, &k16, &n16, &s16), KES_OK) << kes_last_error();
    EXPECT_LT(s16.weight_bytes, s32.weight_bytes);
    EXPECT_EQ(s16.ops, s32.ops + 1);  // the Cast
    const std::vector<uint8_t> b32(static_cast<uint8_t*>(k32), static_cast<uint8_t*>(k32) + n32);
    const std::vector<uint8_t> b16(static_cast<uint8_t*>(k16), static_cast<uint8_t*>(k16) + n16);
    kes_convert_free(k32);
    kes_convert_free(k16);
    const std::vector<float> x = wave_f(50, 1.0f, 0.0f);
    expect_close({execute_kom(b16, x)}, {execute_kom(b32, x)}, 2e-2f, 2e-3f);
}
