// The protobuf wire reader and the ONNX importer (convert/protobuf_reader.hpp, convert/importers.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

#include "convert/importers.hpp"
#include "convert/passes.hpp"
#include "convert/protobuf_reader.hpp"
#include "kes/error.hpp"
#include "test_deps.hpp"
#include "test_onnx_builder.hpp"
#include "test_passes_runner.hpp"
#include "test_status.hpp"

using namespace kes;
using namespace kes_test;

namespace {

ir::Graph import(const std::vector<uint8_t>& bytes) {
    return ir::import_onnx(bytes.data(), bytes.size());
}

std::vector<float> iota_f(size_t n, float scale = 0.25f, float bias = -1.0f) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = bias + scale * static_cast<float>(i);
    return v;
}

}  // namespace

// ---- protobuf reader ------------------------------------------------------------------------------------

TEST(ProtobufReader, ReadsEveryWireType) {
    Pb m;
    m.varint(1, 300).fixed32(2, 1.5f).str(3, "abc").varint(4, 0xffffffffffffffffull);
    pb::Reader r(m.bytes.data(), m.bytes.size(), "Test");
    pb::Field f;
    ASSERT_TRUE(r.next(f));
    EXPECT_EQ(f.number, 1u);
    EXPECT_EQ(f.value, 300u);
    ASSERT_TRUE(r.next(f));
    EXPECT_EQ(f.type, pb::WireType::Fixed32);
    EXPECT_EQ(f.as_float(), 1.5f);
    ASSERT_TRUE(r.next(f));
    EXPECT_EQ(f.as_string(), "abc");
    ASSERT_TRUE(r.next(f));
    EXPECT_EQ(f.as_int64(), -1);
    EXPECT_FALSE(r.next(f));
}

TEST(ProtobufReader, PackedAndUnpackedRepeatedReadAlike) {
    Pb m;
    m.packed_varints(1, {1, -2, 300});
    m.varint(1, 7);
    pb::Reader r(m.bytes.data(), m.bytes.size(), "Test");
    pb::Field f;
    std::vector<int64_t> v;
    while (r.next(f)) pb::append_varints(r, f, v);
    EXPECT_EQ(v, (std::vector<int64_t>{1, -2, 300, 7}));
}

TEST(ProtobufReader, TruncatedVarintIsCorrupt) {
    const uint8_t bytes[] = {0x08, 0xff, 0xff};
    pb::Reader r(bytes, sizeof bytes, "Test");
    pb::Field f;
    EXPECT_EQ(status_of([&] { r.next(f); }), KES_ERR_CORRUPT_DATA);
}

TEST(ProtobufReader, LengthPastTheEndIsCorrupt) {
    const uint8_t bytes[] = {0x0a, 0x05, 'a', 'b'};
    pb::Reader r(bytes, sizeof bytes, "Test");
    pb::Field f;
    std::string msg;
    EXPECT_EQ(status_of([&] { r.next(f); }, &msg), KES_ERR_CORRUPT_DATA);
    EXPECT_NE(msg.find("only 2 remain"), std::string::npos) << msg;
}

TEST(ProtobufReader, GroupWireTypeIsCorrupt) {
    const uint8_t bytes[] = {0x0b, 0x0c};
    pb::Reader r(bytes, sizeof bytes, "Test");
    pb::Field f;
    EXPECT_EQ(status_of([&] { r.next(f); }), KES_ERR_CORRUPT_DATA);
}

TEST(ProtobufReader, NestingDeeperThanTheLimitIsCorrupt) {
    Pb inner;
    inner.varint(1, 1);
    for (int i = 0; i < pb::kMaxDepth + 2; ++i) {
        Pb outer;
        outer.msg(1, inner);
        inner = outer;
    }
    std::function<void(pb::Reader)> walk = [&](pb::Reader r) {
        pb::Field f;
        while (r.next(f))
            if (f.type == pb::WireType::Bytes) walk(r.message(f, "Nested"));
    };
    EXPECT_EQ(status_of([&] { walk(pb::Reader(inner.bytes.data(), inner.bytes.size(), "Nested")); }),
              KES_ERR_CORRUPT_DATA);
}

TEST(ProtobufReader, PackedFloatsNotMultipleOfFourIsCorrupt) {
    Pb m;
    const uint8_t three[3] = {1, 2, 3};
    m.raw(1, three, 3);
    pb::Reader r(m.bytes.data(), m.bytes.size(), "Test");
    pb::Field f;
    ASSERT_TRUE(r.next(f));
    std::vector<float> v;
    EXPECT_EQ(status_of([&] { pb::append_floats(r, f, v); }), KES_ERR_CORRUPT_DATA);
}

// ---- importer: structure ------------------------------------------------------------------------------------

namespace {

// x [N,2,4,4] (N a dim_param) → Conv(3x3, pads 1, 2 → 3 channels, bias) → Relu → y
OnnxGraphSpec conv_relu_spec() {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {-1, 2, 4, 4}));
    s.outputs.push_back(value_info("y", kFloat, {-1, 3, 4, 4}));
    s.initializers.push_back(tensor_f32("w", {3, 2, 3, 3}, iota_f(54, 0.05f, -1.0f)));
    s.initializers.push_back(tensor_f32("b", {3}, {0.1f, -0.2f, 0.3f}, false));
    s.nodes.push_back(node("Conv", {"x", "w", "b"}, {"c"},
                           {attr_ints("pads", {1, 1, 1, 1}), attr_ints("kernel_shape", {3, 3})}, "conv1"));
    s.nodes.push_back(node("Relu", {"c"}, {"y"}, {}, "relu1"));
    return s;
}

}  // namespace

TEST(OnnxImport, ReadsNodesInitializersInputsAndOutputs) {
    const ir::Graph g = import(onnx_model(conv_relu_spec()));
    EXPECT_EQ(g.metadata.source_format, "onnx");
    ASSERT_EQ(g.inputs.size(), 1u);
    const ir::Tensor& x = g.tensors[static_cast<size_t>(g.inputs[0])];
    EXPECT_EQ(x.name, "x");
    EXPECT_EQ(x.shape, (Shape{-1, 2, 4, 4}));  // dim_param → unknown
    ASSERT_EQ(g.nodes.size(), 2u);
    EXPECT_EQ(g.nodes[0].op, "Conv");
    EXPECT_EQ(g.nodes[0].name, "conv1");
    EXPECT_EQ(g.nodes[0].attrs.get_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
    const ir::Tensor& w = g.tensors[static_cast<size_t>(g.nodes[0].inputs[1])];
    EXPECT_TRUE(w.is_const);
    EXPECT_EQ(w.shape, (Shape{3, 2, 3, 3}));
    EXPECT_FLOAT_EQ(w.as<float>()[53], -1.0f + 0.05f * 53);
    const ir::Tensor& b = g.tensors[static_cast<size_t>(g.nodes[0].inputs[2])];
    EXPECT_FLOAT_EQ(b.as<float>()[2], 0.3f);  // float_data form
    ASSERT_EQ(g.outputs.size(), 1u);
    EXPECT_EQ(g.tensors[static_cast<size_t>(g.outputs[0])].name, "y");
}

TEST(OnnxImport, RecurrentActivationsBecomeOneCommaSeparatedString) {
    // x [T=2, N=1, I=3] → LSTM(hidden 2) with activations f, g, h named per the ONNX spec.
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {2, 1, 3}));
    s.outputs.push_back(value_info("y", kFloat, {2, 1, 1, 2}));
    s.initializers.push_back(tensor_f32("w", {1, 8, 3}, iota_f(24, 0.05f, -0.5f)));
    s.initializers.push_back(tensor_f32("r", {1, 8, 2}, iota_f(16, 0.04f, -0.3f)));
    s.nodes.push_back(node("LSTM", {"x", "w", "r"}, {"y"},
                           {attr_int("hidden_size", 2), attr_strings("activations", {"HardSigmoid", "Tanh", "Relu"})}));
    const ir::Graph g = import(onnx_model(s, 14));
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].attrs.get_string("activations"), "HardSigmoid,Tanh,Relu");
    ir::Graph shaped = g;
    ir::infer_shapes(shaped);  // the LSTM op reads the list
    EXPECT_EQ(shaped.tensors[static_cast<size_t>(shaped.outputs[0])].shape, (Shape{2, 1, 1, 2}));

    // Other string lists are still refused, naming the attribute.
    s.nodes[0] = node("Relu", {"x"}, {"y"}, {attr_strings("labels", {"a", "b"})});
    std::string message;
    EXPECT_EQ(status_of([&] { import(onnx_model(s, 14)); }, &message), KES_ERR_UNSUPPORTED);
    EXPECT_NE(message.find("labels"), std::string::npos) << message;
}

TEST(OnnxImport, ImportedGraphRunsAndMatchesHandComputedConv) {
    ir::Graph g = import(onnx_model(conv_relu_spec()));
    g.tensors[static_cast<size_t>(g.inputs[0])].shape[0] = 1;
    const std::vector<float> x = iota_f(32, 0.1f, -1.5f);
    const auto y = run_graph(g, {x});
    ASSERT_EQ(y[0].size(), 48u);
    const std::vector<float> w = iota_f(54, 0.05f, -1.0f);
    const float bias[3] = {0.1f, -0.2f, 0.3f};
    for (int o = 0; o < 3; ++o)
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) {
                float acc = bias[o];
                for (int c = 0; c < 2; ++c)
                    for (int ki = 0; ki < 3; ++ki)
                        for (int kj = 0; kj < 3; ++kj) {
                            const int yi = i + ki - 1, xj = j + kj - 1;
                            if (yi < 0 || yi >= 4 || xj < 0 || xj >= 4) continue;
                            acc += x[static_cast<size_t>((c * 4 + yi) * 4 + xj)] *
                                   w[static_cast<size_t>(((o * 2 + c) * 3 + ki) * 3 + kj)];
                        }
                EXPECT_NEAR(y[0][static_cast<size_t>((o * 4 + i) * 4 + j)], std::max(acc, 0.0f), 1e-5f);
            }
}

TEST(OnnxImport, InitializerListedAsGraphInputIsAConstant) {
    OnnxGraphSpec s = conv_relu_spec();
    s.inputs.push_back(value_info("w", kFloat, {3, 2, 3, 3}));
    const ir::Graph g = import(onnx_model(s));
    ASSERT_EQ(g.inputs.size(), 1u);
    EXPECT_EQ(g.tensors[static_cast<size_t>(g.inputs[0])].name, "x");
}

TEST(OnnxImport, ConstantNodesBecomeConstants) {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {2, 3}));
    s.outputs.push_back(value_info("y", kFloat, {3, 2}));
    s.nodes.push_back(node("Constant", {}, {"shape"}, {attr_tensor("value", tensor_i64("", {2}, {3, 2}))}));
    s.nodes.push_back(node("Constant", {}, {"k"}, {attr_float("value_float", 2.0f)}));
    s.nodes.push_back(node("Reshape", {"x", "shape"}, {"r"}));
    s.nodes.push_back(node("Mul", {"r", "k"}, {"y"}));
    const ir::Graph g = import(onnx_model(s));
    ASSERT_EQ(g.nodes.size(), 2u);
    const auto y = run_graph(g, {iota_f(6, 1.0f, 0.0f)});
    EXPECT_EQ(y[0], (std::vector<float>{0, 2, 4, 6, 8, 10}));
}

TEST(OnnxImport, IdentityAndDropoutAreRemovedButAGraphOutputKeepsItsName) {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {4}));
    s.outputs.push_back(value_info("y", kFloat, {4}));
    s.nodes.push_back(node("Identity", {"x"}, {"a"}));
    s.nodes.push_back(node("Dropout", {"a"}, {"b", ""}));
    s.nodes.push_back(node("Relu", {"b"}, {"c"}));
    s.nodes.push_back(node("Identity", {"c"}, {"y"}));
    const ir::Graph g = import(onnx_model(s));
    ASSERT_EQ(g.nodes.size(), 2u);
    EXPECT_EQ(g.nodes[0].op, "Relu");
    EXPECT_EQ(g.tensors[static_cast<size_t>(g.nodes[0].inputs[0])].name, "x");
    EXPECT_EQ(g.nodes[1].op, "Identity");
    EXPECT_EQ(g.tensors[static_cast<size_t>(g.outputs[0])].name, "y");
}

TEST(OnnxImport, TypedDataFieldsOfEveryDtype) {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {1}));
    s.outputs.push_back(value_info("y", kFloat, {1}));
    s.nodes.push_back(node("Relu", {"x"}, {"y"}));
    Pb i8, b, h, d, i64;
    i8.varint(1, 3).varint(2, kInt8).str(8, "i8").packed_varints(5, {-3, 0, 127});
    b.varint(1, 2).varint(2, kBool).str(8, "b").packed_varints(5, {1, 0});
    h.varint(1, 1).varint(2, kFloat16).str(8, "h").packed_varints(5, {0x3c00});
    Pb dd;
    const double dv[2] = {0.5, -2.25};
    d.varint(1, 2).varint(2, kDouble).str(8, "d").raw(10, dv, sizeof dv);
    i64 = tensor_i64("i64", {2}, {-5, 1LL << 40}, true);
    s.initializers = {i8, b, h, d, i64};
    const ir::Graph g = import(onnx_model(s));
    const ir::Tensor& ti8 = g.tensors[static_cast<size_t>(g.find_tensor("i8"))];
    EXPECT_EQ(ti8.dtype, KES_I8);
    EXPECT_EQ(ti8.as<int8_t>()[0], -3);
    EXPECT_EQ(ti8.as<int8_t>()[2], 127);
    const ir::Tensor& tb = g.tensors[static_cast<size_t>(g.find_tensor("b"))];
    EXPECT_EQ(tb.dtype, KES_BOOL);
    EXPECT_EQ(tb.data, (std::vector<uint8_t>{1, 0}));
    const ir::Tensor& th = g.tensors[static_cast<size_t>(g.find_tensor("h"))];
    EXPECT_EQ(th.dtype, KES_F32);  // f16 bits in int32_data, read, then widened (fp16 models compute in f32)
    EXPECT_EQ(th.as<float>()[0], 1.0f);
    const ir::Tensor& td = g.tensors[static_cast<size_t>(g.find_tensor("d"))];
    EXPECT_EQ(td.dtype, KES_F64);
    EXPECT_EQ(td.as<double>()[1], -2.25);
    const ir::Tensor& tl = g.tensors[static_cast<size_t>(g.find_tensor("i64"))];
    EXPECT_EQ(tl.as<int64_t>()[1], 1LL << 40);
}

// ---- importer: older opsets are normalised --------------------------------------------------------------

TEST(OnnxImport, ClipAttributesOfOpset6BecomeInputs) {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {5}));
    s.outputs.push_back(value_info("y", kFloat, {5}));
    s.nodes.push_back(node("Clip", {"x"}, {"y"}, {attr_float("min", -0.5f), attr_float("max", 0.75f)}));
    const ir::Graph g = import(onnx_model(s, 6));
    ASSERT_EQ(g.nodes[0].inputs.size(), 3u);
    EXPECT_FALSE(g.nodes[0].attrs.has("min"));
    const auto y = run_graph(g, {{-2.0f, -0.25f, 0.0f, 0.5f, 3.0f}});
    EXPECT_EQ(y[0], (std::vector<float>{-0.5f, -0.25f, 0.0f, 0.5f, 0.75f}));
}

TEST(OnnxImport, SliceSqueezeAndPadAttributesBecomeInputs) {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {1, 4, 3}));
    s.outputs.push_back(value_info("y", kFloat, {4}));
    s.nodes.push_back(node("Slice", {"x"}, {"a"},
                           {attr_ints("starts", {1, 0}), attr_ints("ends", {3, 1}), attr_ints("axes", {1, 2})}));
    s.nodes.push_back(node("Squeeze", {"a"}, {"b"}, {attr_ints("axes", {0, 2})}));  // [2]
    s.nodes.push_back(node("Pad", {"b"}, {"y"}, {attr_ints("pads", {1, 1}), attr_float("value", 9.0f)}));
    const ir::Graph g = import(onnx_model(s, 9));
    for (const ir::Node& n : g.nodes) EXPECT_GE(n.inputs.size(), 2u) << n.op;
    const auto y = run_graph(g, {iota_f(12, 1.0f, 0.0f)});
    EXPECT_EQ(y[0], (std::vector<float>{9, 3, 6, 9}));
}

TEST(OnnxImport, UpsampleBecomesResize) {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {1, 1, 2, 2}));
    s.outputs.push_back(value_info("y", kFloat, {1, 1, 4, 4}));
    s.nodes.push_back(
        node("Upsample", {"x"}, {"y"}, {attr_string("mode", "nearest"), attr_floats("scales", {1, 1, 2, 2})}));
    const ir::Graph g = import(onnx_model(s, 7));
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].op, "Resize");
    const auto y = run_graph(g, {{1, 2, 3, 4}});
    EXPECT_EQ(y[0], (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
}

TEST(OnnxImport, Opset11SoftmaxFlattensAtItsAxis) {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {2, 2, 2}));
    s.outputs.push_back(value_info("y", kFloat, {2, 2, 2}));
    s.nodes.push_back(node("Softmax", {"x"}, {"y"}, {attr_int("axis", 1)}));
    ir::Graph g = import(onnx_model(s, 11));
    ir::fold_constants(g);  // the Shape feeding the final Reshape
    EXPECT_EQ(g.nodes.size(), 3u);
    const auto y = run_graph(g, {{0, 1, 2, 3, 4, 5, 6, 7}});
    // Softmax over the last 4 elements of each batch row.
    float sum = 0;
    for (int i = 0; i < 4; ++i) sum += std::exp(static_cast<float>(i));
    for (int b = 0; b < 2; ++b)
        for (int i = 0; i < 4; ++i)
            EXPECT_NEAR(y[0][static_cast<size_t>(b * 4 + i)], std::exp(static_cast<float>(i)) / sum, 1e-6f);
}

// ---- importer: errors ------------------------------------------------------------------------------------------

TEST(OnnxImport, UnsupportedOpNamesOpNodeAndOpset) {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {4}));
    s.outputs.push_back(value_info("y", kFloat, {4}));
    s.nodes.push_back(node("NoSuchOp", {"x"}, {"y"}, {}, "strange"));
    std::string msg;
    EXPECT_EQ(status_of([&] { import(onnx_model(s, 12)); }, &msg), KES_ERR_UNSUPPORTED);
    EXPECT_NE(msg.find("NoSuchOp"), std::string::npos) << msg;
    EXPECT_NE(msg.find("strange"), std::string::npos) << msg;
    EXPECT_NE(msg.find("opset 12"), std::string::npos) << msg;
}

TEST(OnnxImport, ForeignDomainIsUnsupported) {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {4}));
    s.outputs.push_back(value_info("y", kFloat, {4}));
    Pb n = node("Relu", {"x"}, {"y"});
    n.str(7, "com.microsoft");
    s.nodes.push_back(n);
    std::string msg;
    EXPECT_EQ(status_of([&] { import(onnx_model(s)); }, &msg), KES_ERR_UNSUPPORTED);
    // com.microsoft's quantized ops are read (QuantModels.QOperatorModelWithContribOpsMatchesOnnxRuntime);
    // the message says which.
    EXPECT_NE(msg.find("domain 'com.microsoft' is not supported"), std::string::npos) << msg;
    EXPECT_NE(msg.find("QLinearAdd"), std::string::npos) << msg;
}

TEST(OnnxImport, RawDataOfTheWrongSizeIsCorrupt) {
    OnnxGraphSpec s = conv_relu_spec();
    s.initializers[0] = tensor_f32("w", {3, 2, 3, 3}, iota_f(50));
    std::string msg;
    EXPECT_EQ(status_of([&] { import(onnx_model(s)); }, &msg), KES_ERR_CORRUPT_DATA);
    EXPECT_NE(msg.find("raw_data"), std::string::npos) << msg;
}

TEST(OnnxImport, HugeDimsWithoutDataFailBeforeAllocating) {
    OnnxGraphSpec s = conv_relu_spec();
    Pb huge;  // 2^33 floats declared, none given (found by fuzzing: used to reserve 32 GiB first)
    huge.packed_varints(1, {1LL << 33}).varint(2, kFloat).str(8, "w");
    s.initializers[0] = huge;
    std::string msg;
    EXPECT_EQ(status_of([&] { import(onnx_model(s)); }, &msg), KES_ERR_CORRUPT_DATA);
    EXPECT_NE(msg.find("float_data has 0 values"), std::string::npos) << msg;
}

TEST(OnnxImport, UnknownInputNameIsCorrupt) {
    OnnxGraphSpec s = conv_relu_spec();
    s.nodes[1] = node("Relu", {"nothing"}, {"y"});
    EXPECT_EQ(status_of([&] { import(onnx_model(s)); }), KES_ERR_CORRUPT_DATA);
}

TEST(OnnxImport, EveryTruncationFailsCleanly) {
    const std::vector<uint8_t> bytes = onnx_model(conv_relu_spec());
    for (size_t n = 0; n < bytes.size(); ++n) {
        const std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<long>(n));
        const kes_status st = status_of([&] { ir::import_onnx(cut.data(), cut.size()); });
        EXPECT_NE(st, KES_OK) << "prefix of " << n << " bytes";
        EXPECT_NE(st, KES_ERR_INTERNAL) << "prefix of " << n << " bytes";
    }
}

TEST(OnnxImport, NotAnOnnxFileIsCorrupt) {
    const std::string text = "this is not a model";
    EXPECT_EQ(status_of([&] { ir::import_onnx(reinterpret_cast<const uint8_t*>(text.data()), text.size()); }),
              KES_ERR_CORRUPT_DATA);
}

// A file written by onnx's own python package (Debian libonnx-testdata), when installed.
TEST(OnnxImport, ReadsAFileWrittenByOnnx) {
    const std::string path = std::string(KES_ONNX_TESTDATA_DIR) + "/test_conv_with_strides_padding/model.onnx";
    std::ifstream f(path, std::ios::binary);
    if (!f) KES_TEST_SKIP("libonnx-testdata not installed (" << path << ")");
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    ir::Graph g = import(bytes);
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].op, "Conv");
    EXPECT_EQ(g.nodes[0].attrs.get_ints("strides"), (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(g.inputs.size(), 2u);
    ir::infer_shapes(g);
    EXPECT_EQ(g.tensors[static_cast<size_t>(g.outputs[0])].shape, (Shape{1, 1, 4, 3}));
}

TEST(OnnxImport, ConstantGraphOutputIsProducedByAnIdentity) {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {2}));
    s.outputs.push_back(value_info("y", kFloat, {2}));
    s.outputs.push_back(value_info("k", kInt64, {2}));
    s.nodes.push_back(node("Relu", {"x"}, {"y"}));
    s.nodes.push_back(node("Constant", {}, {"k"}, {attr_tensor("value", tensor_i64("", {2}, {4, 5}))}));
    const ir::Graph g = import(onnx_model(s));
    ASSERT_EQ(g.outputs.size(), 2u);
    const ir::Tensor& k = g.tensors[static_cast<size_t>(g.outputs[1])];
    EXPECT_EQ(k.name, "k");
    EXPECT_FALSE(k.is_const);
    EXPECT_EQ(g.nodes.back().op, "Identity");
    EXPECT_TRUE(g.tensors[static_cast<size_t>(g.nodes.back().inputs[0])].is_const);
}

TEST(OnnxImport, MalformedNodesAreCorrupt) {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {4}));
    s.outputs.push_back(value_info("y", kFloat, {4}));
    s.nodes.push_back(node("Upsample", {}, {"y"}));  // no input at all
    EXPECT_EQ(status_of([&] { import(onnx_model(s, 9)); }), KES_ERR_CORRUPT_DATA);
    s.nodes[0] = node("Split", {"x"}, {"y", "y"});  // one name produced twice
    EXPECT_EQ(status_of([&] { import(onnx_model(s)); }), KES_ERR_CORRUPT_DATA);
    s.nodes[0] = node("Relu", {"x"}, {"x"});  // overwrites a graph input
    EXPECT_EQ(status_of([&] { import(onnx_model(s)); }), KES_ERR_CORRUPT_DATA);
    Pb empty_tensor_attr;  // type TENSOR but no tensor (found by fuzzing)
    empty_tensor_attr.str(1, "value").varint(20, 4);
    s.initializers.push_back(tensor_i64("dims", {1}, {4}));
    s.nodes[0] = node("ConstantOfShape", {"dims"}, {"y"}, {empty_tensor_attr});
    EXPECT_EQ(status_of([&] { import(onnx_model(s)); }), KES_ERR_CORRUPT_DATA);
}

// ---- import order (issue 24 §1) ---------------------------------------------------------------------------

namespace {

// x → conv1 → relu1 → (mul by the Constant k) → y, plus a second branch x → neg → z.
OnnxGraphSpec two_branch_spec() {
    OnnxGraphSpec s = conv_relu_spec();
    s.nodes[1] = node("Relu", {"c"}, {"r"}, {}, "relu1");
    s.nodes.push_back(node("Constant", {}, {"k"}, {attr_float("value_float", 0.5f)}, "k"));
    s.nodes.push_back(node("Mul", {"r", "k"}, {"y"}, {}, "scale"));
    s.nodes.push_back(node("Neg", {"x"}, {"z"}, {}, "neg"));
    s.outputs.push_back(value_info("z", kFloat, {-1, 2, 4, 4}));
    return s;
}

std::vector<std::string> node_names(const ir::Graph& g) {
    std::vector<std::string> names;
    for (const ir::Node& n : g.nodes) names.push_back(n.name);
    return names;
}

}  // namespace

// The float16 conversion tool appends Casts at the end of the node list; ONNX Runtime sorts such a file.
TEST(OnnxImport, NodesOutOfOrderAreSortedAndComputeAsTheSortedFile) {
    const OnnxGraphSpec sorted = two_branch_spec();
    OnnxGraphSpec reversed = sorted;
    std::reverse(reversed.nodes.begin(), reversed.nodes.end());
    ir::Graph a = import(onnx_model(sorted)), b = import(onnx_model(reversed));
    // Ready nodes go in file order: the reversed file's independent Neg and Constant come first.
    EXPECT_EQ(node_names(b), (std::vector<std::string>{"neg", "conv1", "relu1", "scale"}));
    a.tensors[static_cast<size_t>(a.inputs[0])].shape[0] = 1;
    b.tensors[static_cast<size_t>(b.inputs[0])].shape[0] = 1;
    const std::vector<float> x = iota_f(32, 0.1f, -1.5f);
    const auto ya = run_graph(a, {x}), yb = run_graph(b, {x});
    ASSERT_EQ(ya.size(), 2u);
    EXPECT_EQ(ya, yb);
}

TEST(OnnxImport, FileOrderIsKeptWhereItIsValid) {
    OnnxGraphSpec s = two_branch_spec();
    std::rotate(s.nodes.begin(), s.nodes.end() - 1, s.nodes.end());  // neg first: still a valid order
    EXPECT_EQ(node_names(import(onnx_model(s))), (std::vector<std::string>{"neg", "conv1", "relu1", "scale"}));
    // Only what must move moves: scale read before the Constant it reads is placed after it.
    s = two_branch_spec();
    std::swap(s.nodes[2], s.nodes[3]);  // conv1 relu1 scale k neg
    EXPECT_EQ(node_names(import(onnx_model(s))), (std::vector<std::string>{"conv1", "relu1", "scale", "neg"}));
}

TEST(OnnxImport, CycleIsRefusedNamingItsNodesInOrder) {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {4}));
    s.outputs.push_back(value_info("y", kFloat, {4}));
    s.nodes.push_back(node("Relu", {"x"}, {"r"}, {}, "upstream"));
    s.nodes.push_back(node("Add", {"r", "c"}, {"a"}, {}, "A"));
    s.nodes.push_back(node("Neg", {"a"}, {"b"}, {}, "B"));
    s.nodes.push_back(node("Mul", {"b", "x"}, {"c"}, {}, "C"));
    s.nodes.push_back(node("Abs", {"c"}, {"y"}, {}, "downstream"));  // waits on the cycle, is not in it
    std::string msg;
    EXPECT_EQ(status_of([&] { import(onnx_model(s)); }, &msg), KES_ERR_CORRUPT_DATA);
    EXPECT_NE(msg.find("cycle"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'A' (Add) -> 'B' (Neg) -> 'C' (Mul) -> 'A'"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("downstream"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("upstream"), std::string::npos) << msg;

    // A node reading its own output; an unnamed one is called by its op and index.
    s.nodes = {node("Relu", {"x"}, {"r"}), node("Add", {"r", "s"}, {"s"}), node("Abs", {"s"}, {"y"})};
    EXPECT_EQ(status_of([&] { import(onnx_model(s)); }, &msg), KES_ERR_CORRUPT_DATA);
    EXPECT_NE(msg.find("'Add_1' (Add) -> 'Add_1'"), std::string::npos) << msg;
}

// Sorting does not hide a name nothing produces: the error names it as before.
TEST(OnnxImport, UnproducedNameIsStillNamedWhenTheFileIsOutOfOrder) {
    OnnxGraphSpec s = two_branch_spec();
    s.nodes[3] = node("Mul", {"r", "nothing"}, {"y"}, {}, "scale");
    std::reverse(s.nodes.begin(), s.nodes.end());
    std::string msg;
    EXPECT_EQ(status_of([&] { import(onnx_model(s)); }, &msg), KES_ERR_CORRUPT_DATA);
    EXPECT_NE(msg.find("node 'scale' (Mul) reads 'nothing', which is neither a graph input, an initializer"),
              std::string::npos)
        << msg;
    EXPECT_EQ(msg.find("cycle"), std::string::npos) << msg;
}

// ---- fp16 models (issue 24 §1) ------------------------------------------------------------------------------

namespace {

Pb tensor_f16(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
    std::vector<uint16_t> h(v.size());
    kes_fp16_from_f32(v.data(), h.data(), v.size());
    Pb t;
    for (int64_t d : dims) t.varint(1, static_cast<uint64_t>(d));
    t.varint(2, kFloat16).str(8, name).raw(9, h.data(), h.size() * 2);
    return t;
}

}  // namespace

// As convert_float_to_float16(keep_io_types=False) writes a model: fp16 input, weights and output.
TEST(OnnxImport, Fp16ModelComputesInF32BetweenCastsAtItsFp16Inputs) {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat16, {1, 2, 4, 4}));
    s.outputs.push_back(value_info("y", kFloat16, {1, 3, 4, 4}));
    s.initializers.push_back(tensor_f16("w", {3, 2, 3, 3}, iota_f(54, 0.05f, -1.0f)));
    s.initializers.push_back(tensor_f16("b", {3}, {0.1f, -0.2f, 0.3f}));
    s.nodes.push_back(node("Conv", {"x", "w", "b"}, {"c"},
                           {attr_ints("pads", {1, 1, 1, 1}), attr_ints("kernel_shape", {3, 3})}, "conv1"));
    s.nodes.push_back(node("Cast", {"c"}, {"c32"}, {attr_int("to", kFloat)}, "to_float"));  // a blocked op's Cast
    s.nodes.push_back(node("Relu", {"c32"}, {"r"}, {}, "relu1"));
    s.nodes.push_back(node("Cast", {"r"}, {"y"}, {attr_int("to", kFloat16)}, "to_half"));
    ir::Graph g = import(onnx_model(s));
    const ir::Tensor& x = g.tensors[static_cast<size_t>(g.inputs[0])];
    EXPECT_EQ(x.name, "x");
    EXPECT_EQ(x.dtype, KES_F16);
    ASSERT_GE(g.nodes.size(), 2u);
    EXPECT_EQ(g.nodes.front().op, "Cast");  // x → f32 first
    EXPECT_EQ(g.nodes.front().inputs[0], g.inputs[0]);
    EXPECT_EQ(g.nodes.front().attrs.get_int("to", 0), kFloat);
    EXPECT_EQ(g.nodes.back().op, "Cast");  // f32 → the declared f16 output last
    EXPECT_EQ(g.nodes.back().attrs.get_int("to", 0), kFloat16);
    EXPECT_EQ(g.nodes.back().outputs[0], g.outputs[0]);
    for (const ir::Tensor& t : g.tensors) {
        if (t.is_const) {
            EXPECT_EQ(t.dtype, KES_F32) << t.name;  // widened exactly
        }
    }
    ir::infer_shapes(g);
    for (const ir::Node& n : g.nodes) {  // f16 only where a Cast rounds to it
        const bool to_half = n.op == "Cast" && n.attrs.get_int("to", 0) == kFloat16;
        EXPECT_EQ(g.tensors[static_cast<size_t>(n.outputs[0])].dtype, to_half ? KES_F16 : KES_F32) << n.name;
    }
    // to_float is f32 → f32 now and goes; to_half keeps its rounding: f32 → f16 → f32.
    const ir::PassStats removed = ir::remove_noop_casts(g);
    EXPECT_EQ(removed.nodes_removed, 1u);
    std::vector<std::string> ops;
    for (const ir::Node& n : g.nodes)
        ops.push_back(n.op + (n.op == "Cast" ? std::to_string(n.attrs.get_int("to", 0)) : ""));
    EXPECT_EQ(ops, (std::vector<std::string>{"Cast1", "Conv", "Relu", "Cast10", "Cast1", "Cast10"}));
}
