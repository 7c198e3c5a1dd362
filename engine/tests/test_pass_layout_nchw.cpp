// The layout pass on plain NCHW CNNs, as PyTorch exports them (convert/pass_layout.hpp): no Transpose
// anywhere, so only the gain of the convs on the fast NHWC kernels can pay for the Transposes at the
// graph's edges. Each model is an ONNX file; it goes through the converter's whole pipeline
// (convert::build_graph: folding, the layout pass, fusions) and, separately, through the layout pass
// alone on the unfused graph (so BatchNormalization is carried too). Both must give the imported
// graph's outputs within 1e-5 relative on the reference kernels (the pipeline: its NCHW twice, the same
// passes without the layout pass, as folding BatchNormalization rounds differently), with the convs
// NHWC and Transposes only where the region meets the graph's input, output or an op that reads NCHW
// order.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "convert/convert.hpp"
#include "convert/fusion.hpp"
#include "convert/importers.hpp"
#include "convert/pass_layout.hpp"
#include "convert/passes.hpp"
#include "test_kom_run.hpp"
#include "test_onnx_builder.hpp"
#include "test_passes_runner.hpp"

using namespace kes;
using namespace kes_test;

namespace {

std::vector<float> random_f(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    return v;
}

size_t count_op(const ir::Graph& g, const std::string& op) {
    size_t n = 0;
    for (const ir::Node& node : g.nodes) n += node.op == op;
    return n;
}

std::vector<std::string> layouts_of(const ir::Graph& g, const std::string& op) {
    std::vector<std::string> out;
    for (const ir::Node& n : g.nodes)
        if (n.op == op) out.push_back(n.attrs.get_string("data_layout", "NCHW"));
    return out;
}

std::vector<std::string> all(size_t n, const char* layout) {
    return std::vector<std::string>(n, layout);
}

// A PyTorch-style ONNX graph under construction: NCHW, Conv + BatchNormalization (unfused) + activation.
class Net {
public:
    OnnxGraphSpec s;

    explicit Net(std::vector<int64_t> input_shape) { s.inputs.push_back(value_info("input", kFloat, input_shape)); }

    std::string conv(const std::string& x, int64_t cin, int64_t cout, int64_t k, int64_t stride = 1, int64_t group = 1,
                     const std::string& act = "Relu", bool bn = true) {
        const std::string name = fresh("conv");
        const int64_t fan_in = cin / group * k * k;
        s.initializers.push_back(
            tensor_f32(name + "_w", {cout, cin / group, k, k}, random_f(static_cast<size_t>(cout * fan_in), seed_++)));
        s.initializers.push_back(tensor_f32(name + "_b", {cout}, random_f(static_cast<size_t>(cout), seed_++)));
        s.nodes.push_back(node("Conv", {x, name + "_w", name + "_b"}, {name},
                               {attr_ints("kernel_shape", {k, k}), attr_ints("strides", {stride, stride}),
                                attr_ints("pads", {k / 2, k / 2, k / 2, k / 2}), attr_int("group", group)}));
        std::string y = name;
        if (bn) y = batch_norm(y, cout);
        if (act.empty()) return y;
        return activation(y, act);
    }

    std::string batch_norm(const std::string& x, int64_t c) {
        const std::string name = fresh("bn");
        const size_t n = static_cast<size_t>(c);
        s.initializers.push_back(tensor_f32(name + "_gamma", {c}, random_f(n, seed_++, 0.5f, 1.5f)));
        s.initializers.push_back(tensor_f32(name + "_beta", {c}, random_f(n, seed_++)));
        s.initializers.push_back(tensor_f32(name + "_mean", {c}, random_f(n, seed_++)));
        s.initializers.push_back(tensor_f32(name + "_var", {c}, random_f(n, seed_++, 0.5f, 2.0f)));
        s.nodes.push_back(node("BatchNormalization",
                               {x, name + "_gamma", name + "_beta", name + "_mean", name + "_var"}, {name},
                               {attr_float("epsilon", 1e-5f)}));
        return name;
    }

    std::string activation(const std::string& x, const std::string& op) {
        const std::string name = fresh(op);
        if (op == "Relu6") {  // PyTorch's ReLU6 exports as Clip with constant bounds
            if (!bounds_) {
                s.initializers.push_back(tensor_f32("zero", {}, {0.0f}));
                s.initializers.push_back(tensor_f32("six", {}, {6.0f}));
                bounds_ = true;
            }
            s.nodes.push_back(node("Clip", {x, "zero", "six"}, {name}));
        } else {
            s.nodes.push_back(node(op, {x}, {name}));
        }
        return name;
    }

    std::string op(const std::string& type, const std::vector<std::string>& inputs, const std::vector<Pb>& attrs = {}) {
        const std::string name = fresh(type);
        s.nodes.push_back(node(type, inputs, {name}, attrs));
        return name;
    }

    std::vector<std::string> op_n(const std::string& type, const std::vector<std::string>& inputs, size_t outputs,
                                  const std::vector<Pb>& attrs = {}) {
        std::vector<std::string> names;
        const std::string name = fresh(type);
        for (size_t i = 0; i < outputs; ++i) names.push_back(name + "_" + std::to_string(i));
        s.nodes.push_back(node(type, inputs, names, attrs));
        return names;
    }

    std::string ints(const std::string& base, const std::vector<int64_t>& v) {
        const std::string name = fresh(base);
        s.initializers.push_back(tensor_i64(name, {static_cast<int64_t>(v.size())}, v));
        return name;
    }

    std::string floats(const std::string& base, const std::vector<int64_t>& dims, const std::vector<float>& v) {
        const std::string name = fresh(base);
        s.initializers.push_back(tensor_f32(name, dims, v));
        return name;
    }

    std::vector<uint8_t> finish(const std::vector<std::pair<std::string, std::vector<int64_t>>>& outputs) {
        for (const auto& [name, shape] : outputs) {
            s.nodes.push_back(node("Identity", {name}, {name + "_out"}));
            s.outputs.push_back(value_info(name + "_out", kFloat, shape));
        }
        return onnx_model(s);
    }

private:
    uint32_t seed_ = 100;
    int count_ = 0;
    bool bounds_ = false;
    std::string fresh(const std::string& base) { return base + "_" + std::to_string(count_++); }
};

std::vector<std::vector<float>> random_inputs(ir::Graph g, uint32_t seed) {
    ir::infer_shapes(g);
    std::vector<std::vector<float>> in;
    for (int32_t t : g.inputs)
        in.push_back(random_f(static_cast<size_t>(g.tensors[static_cast<size_t>(t)].elements()), seed++));
    return in;
}

std::vector<std::string> io_names(const ir::Graph& g) {
    std::vector<std::string> names;
    for (const auto* list : {&g.inputs, &g.outputs})
        for (int32_t t : *list) names.push_back(g.tensors[static_cast<size_t>(t)].name);
    return names;
}

// convert.cpp's passes without the layout pass: the graph the pipeline would run in NCHW.
ir::Graph nchw_pipeline(ir::Graph g) {
    ir::fold_constants(g);
    ir::infer_shapes(g);
    ir::fuse_channel_affine(g);
    ir::run_fusions(g);
    ir::remove_dead_nodes(g);
    ir::infer_shapes(g);
    return g;
}

// The two ways through the converter (see the top of this file); returns (pipeline, pass alone). Both
// must keep the imported graph's inputs, outputs and results.
std::pair<ir::Graph, ir::Graph> convert_checked(const std::vector<uint8_t>& model) {
    const ir::Graph imported = ir::import_onnx(model.data(), model.size());
    const std::vector<std::vector<float>> in = random_inputs(imported, 11);
    const std::vector<std::vector<float>> expected = run_graph(imported, in);

    ir::Graph pipeline = convert::build_graph(model.data(), model.size(), {});
    EXPECT_EQ(io_names(pipeline), io_names(imported));
    {
        SCOPED_TRACE("pipeline against its NCHW twin");
        // 1e-5: aarch64's compiler contracts the reference loops' multiply-adds into FMAs, which round
        // differently in the NCHW and NHWC loop nests (x86-64's baseline has no FMA to contract into).
        expect_close(run_graph(pipeline, in), run_graph(nchw_pipeline(imported), in), 1e-5f, 1e-4f);
    }
    {
        SCOPED_TRACE("pipeline against the imported graph");
        expect_close(run_graph(pipeline, in), expected, 1e-5f, 1e-4f);
    }

    ir::Graph alone = imported;
    ir::fold_constants(alone);
    ir::infer_shapes(alone);
    ir::choose_layout(alone);
    EXPECT_EQ(io_names(alone), io_names(imported));
    SCOPED_TRACE("layout pass alone against the imported graph");
    expect_close(run_graph(alone, in), expected, 1e-5f, 1e-4f);  // FMA contraction on aarch64, as above
    return {std::move(pipeline), std::move(alone)};
}

// The node producing the graph output `i`, through the Identity that Net::finish adds.
const ir::Node& output_producer(const ir::Graph& g, size_t i) {
    const ir::Node* n = &g.nodes[static_cast<size_t>(g.producer(g.outputs[i]))];
    if (n->op == "Identity") n = &g.nodes[static_cast<size_t>(g.producer(n->inputs[0]))];
    return *n;
}

// ResNet's basic block after a stem: conv-bn-relu, conv-bn, residual Add, Relu.
std::vector<uint8_t> resnet_block_model() {
    Net net({1, 3, 12, 10});
    const std::string stem = net.conv("input", 3, 8, 3, 1);
    const std::string a = net.conv(stem, 8, 8, 3, 1);
    const std::string b = net.conv(a, 8, 8, 3, 1, 1, "");
    const std::string sum = net.op("Add", {stem, b});
    return net.finish({{net.activation(sum, "Relu"), {1, 8, 12, 10}}});
}

}  // namespace

TEST(PassLayout, NchwResnetBlockRunsNhwcBetweenBoundaryTransposes) {
    auto [pipeline, alone] = convert_checked(resnet_block_model());
    // One Transpose after the input, one before the output; BatchNormalization folded into the Convs.
    EXPECT_EQ(layouts_of(pipeline, "Conv"), all(3, "NHWC"));
    EXPECT_EQ(count_op(pipeline, "Transpose"), 2u);
    EXPECT_EQ(count_op(pipeline, "BatchNormalization"), 0u);
    EXPECT_EQ(output_producer(pipeline, 0).op, "Transpose");
    // The pass alone carries the unfused BatchNormalizations and the residual Add in NHWC.
    EXPECT_EQ(layouts_of(alone, "Conv"), all(3, "NHWC"));
    EXPECT_EQ(layouts_of(alone, "BatchNormalization"), all(3, "NHWC"));
    EXPECT_EQ(count_op(alone, "Transpose"), 2u);
}

TEST(PassLayout, NchwResnetBlockRunsTheFastConvKernelsFromAKom) {
    // Through the C API: the .kom loads, the fast NHWC kernels run, the result is the reference's
    // (their sums run in another order: 1e-4 relative).
    const std::vector<uint8_t> model = resnet_block_model();
    const ir::Graph imported = ir::import_onnx(model.data(), model.size());
    const std::vector<std::vector<float>> in = random_inputs(imported, 5);
    const std::vector<uint8_t> kom = convert_bytes(model, nullptr);
    expect_close({execute_kom(kom, in[0])}, run_graph(nchw_pipeline(imported), in), 1e-5f, 1e-4f);
}

TEST(PassLayout, NchwMobilenetBlockRunsNhwcBetweenBoundaryTransposes) {
    // MobileNetV2's inverted residual (1x1 expand, 3x3 depthwise, 1x1 project, Add) with ReLU6 as Clip,
    // then MobileNetV3's HardSwish and a strided depthwise conv.
    Net net({1, 8, 9, 11});
    const std::string expand = net.conv("input", 8, 24, 1, 1, 1, "Relu6");
    const std::string dw = net.conv(expand, 24, 24, 3, 1, 24, "Relu6");
    const std::string project = net.conv(dw, 24, 8, 1, 1, 1, "");
    const std::string sum = net.op("Add", {"input", project});
    const std::string hs = net.conv(sum, 8, 16, 1, 1, 1, "HardSwish");
    const std::string down = net.conv(hs, 16, 16, 3, 2, 16, "Sigmoid");
    auto [pipeline, alone] = convert_checked(net.finish({{down, {1, 16, 5, 6}}}));
    EXPECT_EQ(layouts_of(pipeline, "Conv"), all(5, "NHWC"));
    EXPECT_EQ(count_op(pipeline, "Transpose"), 2u);
    EXPECT_EQ(layouts_of(alone, "Conv"), all(5, "NHWC"));
    EXPECT_EQ(count_op(alone, "Transpose"), 2u);
}

// ShuffleNet's channel shuffle between two convs (Reshape → Transpose → Reshape, as PyTorch exports it):
// one ChannelShuffle inside the NHWC region, renumbered to the last axis; only the two boundary
// Transposes are left.
TEST(PassLayout, NchwChannelShuffleStaysInsideTheNhwcRegion) {
    Net net({1, 8, 6, 5});
    const std::string a = net.conv("input", 8, 8, 1);
    const std::string split = net.op("Reshape", {a, net.ints("s1", {1, 2, 4, 6, 5})});
    const std::string swapped = net.op("Transpose", {split}, {attr_ints("perm", {0, 2, 1, 3, 4})});
    const std::string merged = net.op("Reshape", {swapped, net.ints("s2", {1, 8, 6, 5})});
    const std::string b = net.conv(merged, 8, 8, 3);
    auto [pipeline, alone] = convert_checked(net.finish({{b, {1, 8, 6, 5}}}));
    EXPECT_EQ(layouts_of(pipeline, "Conv"), all(2, "NHWC"));
    EXPECT_EQ(count_op(pipeline, "Transpose"), 2u);
    EXPECT_EQ(count_op(pipeline, "Reshape"), 0u);
    ASSERT_EQ(count_op(pipeline, "ChannelShuffle"), 1u);
    for (const ir::Node& n : pipeline.nodes) {
        if (n.op == "ChannelShuffle") {
            EXPECT_EQ(n.attrs.get_int("axis", 1), 3);
        }
    }
}

// A decoder as PyTorch exports it: Conv + BatchNormalization + SiLU (Sigmoid, Mul), then a learned 2x
// upsampling (ConvTranspose 2x2 stride 2, `group` groups) and Relu: [1,8,6,7] → [1,8,12,14].
std::vector<uint8_t> decoder_model(int64_t group) {
    Net net({1, 8, 6, 7});
    const std::string c = net.conv("input", 8, 16, 3, 1, 1, "");
    const std::string silu = net.op("Mul", {c, net.activation(c, "Sigmoid")});
    const std::string w =
        net.floats("up_w", {16, 8 / group, 2, 2}, random_f(static_cast<size_t>(16 * 8 / group * 4), 7));
    const std::string b = net.floats("up_b", {8}, random_f(8, 8));
    const std::string up =
        net.op("ConvTranspose", {silu, w, b},
               {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2}), attr_int("group", group)});
    return net.finish({{net.activation(up, "Relu"), {1, 8, 12, 14}}});
}

// The pipeline runs the Conv and the ConvTranspose NHWC (a grouped one, which has no fast kernel, because
// the region carries it), the SiLU fused into the Conv as Swish.
TEST(PassLayout, NchwDecoderRunsConvSwishAndConvTransposeNhwc) {
    for (int64_t group : {1, 2}) {
        SCOPED_TRACE("group " + std::to_string(group));
        auto [pipeline, alone] = convert_checked(decoder_model(group));
        EXPECT_EQ(layouts_of(pipeline, "Conv"), all(1, "NHWC"));
        EXPECT_EQ(layouts_of(pipeline, "ConvTranspose"), all(1, "NHWC"));
        EXPECT_EQ(count_op(pipeline, "Transpose"), 2u);
        EXPECT_EQ(count_op(pipeline, "Sigmoid") + count_op(pipeline, "Mul"), 0u);
        for (const ir::Node& n : pipeline.nodes) {
            if (n.op == "Conv") {
                EXPECT_EQ(n.attrs.get_string("activation"), "Swish");
            }
        }
    }
}

// A lone ConvTranspose pays for its two Transposes only when a fast kernel takes it (one group).
TEST(PassLayout, NchwLoneConvTransposeSwitchesOnlyWithOneGroup) {
    for (int64_t group : {1, 2}) {
        SCOPED_TRACE("group " + std::to_string(group));
        Net net({1, 8, 6, 7});
        const std::string w =
            net.floats("w", {8, 16 / group, 2, 2}, random_f(static_cast<size_t>(8 * 16 / group * 4), 3));
        const std::string up =
            net.op("ConvTranspose", {"input", w}, {attr_ints("strides", {2, 2}), attr_int("group", group)});
        auto [pipeline, alone] = convert_checked(net.finish({{net.activation(up, "Relu"), {1, 16, 12, 14}}}));
        EXPECT_EQ(layouts_of(pipeline, "ConvTranspose"), all(1, group == 1 ? "NHWC" : "NCHW"));
        EXPECT_EQ(count_op(pipeline, "Transpose"), group == 1 ? 2u : 0u);
    }
}

// The profile's flops of a ConvTranspose: 2 × input elements × the taps and output channels each meets,
// whichever layout its filter is in ([C, M/g, K...] or [M, K..., C/g]).
TEST(PassLayout, ProfileCountsConvTransposeFlopsInEitherLayout) {
    for (int64_t group : {1, 2}) {
        SCOPED_TRACE("group " + std::to_string(group));
        Loaded m(convert_bytes(decoder_model(group), nullptr));
        ASSERT_NE(m.ctx, nullptr);
        ASSERT_EQ(kes_model_context_set_profiling(m.ctx, 1), KES_OK);
        run(m.ctx, 1, sine_input(8 * 6 * 7, 1.0f, 0.0f));
        size_t layers = 0;
        ASSERT_EQ(kes_model_layer_count(m.model, &layers), KES_OK);
        double flops = -1.0;
        for (size_t i = 0; i < layers; ++i) {
            kes_model_layer_profile p;
            p.struct_size = sizeof p;
            ASSERT_EQ(kes_model_context_layer_profile(m.ctx, i, &p), KES_OK);
            if (std::string(p.op) == "ConvTranspose") flops = p.flops;
        }
        EXPECT_EQ(flops, 2.0 * (6 * 7 * 16) * (2 * 2) * (8 / group));
    }
}

TEST(PassLayout, NchwClassifierHeadReadsItsFlattenThroughAReshape) {
    // conv, MaxPool, GlobalAveragePool, Flatten, Gemm, Softmax: the region ends at the Flatten, whose
    // [1,C,1,1] input needs no Transpose (only size-1 dims move), so the input's is the only one.
    Net net({1, 3, 16, 16});
    const std::string c1 = net.conv("input", 3, 12, 3, 2);
    const std::string pool =
        net.op("MaxPool", {c1},
               {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}), attr_ints("pads", {1, 1, 1, 1})});
    const std::string c2 = net.conv(pool, 12, 16, 3, 1);
    const std::string gap = net.op("GlobalAveragePool", {c2});
    const std::string flat = net.op("Flatten", {gap}, {attr_int("axis", 1)});
    const std::string fc = net.op(
        "Gemm", {flat, net.floats("fc_w", {10, 16}, random_f(160, 3)), net.floats("fc_b", {10}, random_f(10, 4))},
        {attr_int("transB", 1)});
    const std::string prob = net.op("Softmax", {fc}, {attr_int("axis", 1)});
    auto [pipeline, alone] = convert_checked(net.finish({{prob, {1, 10}}}));
    EXPECT_EQ(layouts_of(pipeline, "Conv"), all(2, "NHWC"));
    EXPECT_EQ(layouts_of(pipeline, "MaxPool"), all(1, "NHWC"));
    EXPECT_EQ(layouts_of(pipeline, "GlobalAveragePool"), all(1, "NHWC"));
    EXPECT_EQ(count_op(pipeline, "Transpose"), 1u);
    EXPECT_EQ(output_producer(pipeline, 0).op, "Softmax");
}

TEST(PassLayout, NchwFlattenOfAFeatureMapReadsNchwOrderThroughATranspose) {
    // VGG-style head: Flatten of a [1,C,H,W] map feeds a Gemm whose weights expect C,H,W order.
    Net net({1, 3, 6, 5});
    const std::string c = net.conv("input", 3, 4, 3, 1);
    const std::string flat = net.op("Flatten", {c}, {attr_int("axis", 1)});
    const std::string fc =
        net.op("Gemm", {flat, net.floats("fc_w", {7, 120}, random_f(840, 5))}, {attr_int("transB", 1)});
    auto [pipeline, alone] = convert_checked(net.finish({{fc, {1, 7}}}));
    EXPECT_EQ(layouts_of(pipeline, "Conv"), all(1, "NHWC"));
    ASSERT_EQ(count_op(pipeline, "Transpose"), 2u);
    for (const ir::Node& n : pipeline.nodes)
        if (n.op == "Flatten") {
            EXPECT_EQ(pipeline.nodes[static_cast<size_t>(pipeline.producer(n.inputs[0]))].op, "Transpose");
        }
}

TEST(PassLayout, NchwFpnNeckKeepsResizeAndConcatInNhwc) {
    // Two scales, the coarse one upsampled (Resize with scales, and an opset-9 style nearest one),
    // added and concatenated with the fine one along C, then a 1x1 conv and a channel Softmax.
    Net net({1, 3, 16, 12});
    const std::string fine = net.conv("input", 3, 8, 3, 1);
    const std::string coarse = net.conv(fine, 8, 8, 3, 2);
    const std::string up = net.op("Resize", {coarse, "", net.floats("scales", {4}, {1.0f, 1.0f, 2.0f, 2.0f})},
                                  {attr_string("mode", "nearest")});
    const std::string up2 =
        net.op("Resize", {coarse, "", net.floats("scales", {4}, {1.0f, 1.0f, 2.0f, 2.0f})},
               {attr_string("mode", "linear"), attr_string("coordinate_transformation_mode", "half_pixel")});
    const std::string sum = net.op("Add", {fine, up});
    const std::string cat = net.op("Concat", {sum, up2, fine}, {attr_int("axis", 1)});
    const std::string head = net.conv(cat, 24, 6, 1, 1, 1, "", false);
    const std::string sm = net.op("Softmax", {head}, {attr_int("axis", 1)});
    auto [pipeline, alone] = convert_checked(net.finish({{sm, {1, 6, 16, 12}}}));
    EXPECT_EQ(layouts_of(pipeline, "Conv"), all(3, "NHWC"));
    EXPECT_EQ(count_op(pipeline, "Transpose"), 2u);
    for (const ir::Node& n : pipeline.nodes) {
        if (n.op == "Concat" || n.op == "Softmax") {
            EXPECT_EQ(n.attrs.get_int("axis", 0), 3) << n.op;
        }
    }
}

TEST(PassLayout, NchwPadSliceSplitAndReduceAreRenumbered) {
    // Explicit Pad (reflect), a Slice over C and H, a Split along C, a ReduceMean over H,W with
    // keepdims broadcast back: every axis and pad list follows the NHWC order.
    Net net({1, 4, 10, 9});
    const std::string c1 = net.conv("input", 4, 8, 3, 1);
    const std::string pad = net.op("Pad", {c1, net.ints("pads", {0, 0, 1, 2, 0, 0, 2, 1})},
                                   {attr_string("mode", "reflect")});  // [1,8,13,12]
    const std::string c2 = net.conv(pad, 8, 12, 3, 1);
    const std::string sl = net.op("Slice", {c2, net.ints("starts", {2, 1}), net.ints("ends", {10, 12}),
                                            net.ints("axes", {1, 2})});  // [1,8,11,12]
    const std::vector<std::string> parts = net.op_n("Split", {sl, net.ints("split", {3, 5})}, 2, {attr_int("axis", 1)});
    const std::string m = net.op("ReduceMean", {parts[1]}, {attr_ints("axes", {2, 3}), attr_int("keepdims", 1)});
    const std::string centred = net.op("Sub", {parts[1], m});
    const std::string c3 = net.conv(parts[0], 3, 5, 1, 1);
    const std::string cat = net.op("Concat", {c3, centred}, {attr_int("axis", 1)});
    auto [pipeline, alone] = convert_checked(net.finish({{cat, {1, 10, 11, 12}}}));
    EXPECT_EQ(layouts_of(pipeline, "Conv"), all(3, "NHWC"));
    EXPECT_EQ(count_op(pipeline, "Transpose"), 2u);
    EXPECT_EQ(count_op(alone, "Transpose"), 2u);
}

TEST(PassLayout, NchwConvMeetingTheGraphAtManyPlacesStaysNchw) {
    // One small conv whose result leaves the graph at five outputs: five Transposes plus the input's
    // cost more than one conv gains (pass_layout.hpp), so nothing moves.
    Net net({1, 2, 4, 4});
    const std::string c = net.conv("input", 2, 3, 3, 1, 1, "", false);
    std::vector<std::pair<std::string, std::vector<int64_t>>> outs;
    for (const char* op : {"Relu", "Sigmoid", "Tanh", "Neg", "Abs"})
        outs.push_back({net.activation(c, op), {1, 3, 4, 4}});
    auto [pipeline, alone] = convert_checked(net.finish(outs));
    EXPECT_EQ(layouts_of(pipeline, "Conv"), all(1, "NCHW"));
    EXPECT_EQ(count_op(pipeline, "Transpose"), 0u);
}

TEST(PassLayout, NchwConvsOnBothSidesOfAReshapeSwitchAsTwoRegions) {
    // A Reshape cannot be re-expressed in NHWC: each side is a region of its own, with its own
    // Transposes, and the Reshape reads and writes NCHW.
    Net net({1, 4, 6, 6});
    const std::string c1 = net.conv("input", 4, 8, 3, 1);
    const std::string r = net.op("Reshape", {c1, net.ints("shape", {1, 4, 12, 6})});
    const std::string c2 = net.conv(r, 4, 4, 3, 1);
    auto [pipeline, alone] = convert_checked(net.finish({{c2, {1, 4, 12, 6}}}));
    EXPECT_EQ(layouts_of(pipeline, "Conv"), all(2, "NHWC"));
    EXPECT_EQ(count_op(pipeline, "Transpose"), 4u);
}
