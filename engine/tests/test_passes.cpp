// Converter passes (convert/passes.hpp, convert/fusion.hpp): each is checked by running the graph
// through the reference kernels before and after it and comparing the outputs.
#include <gtest/gtest.h>

#include <cmath>

#include "convert/fusion.hpp"
#include "convert/passes.hpp"
#include "kes/error.hpp"
#include "test_passes_runner.hpp"

using namespace kes;
using namespace kes_test;

namespace {

std::vector<float> wave_f(size_t n, float scale, float bias) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.9f * static_cast<float>(i) + 0.4f) + bias;
    return v;
}

int32_t act(ir::Graph& g, const std::string& name, Shape shape = {}) {
    return g.add_activation(name, KES_F32, std::move(shape), true);
}

size_t count_op(const ir::Graph& g, const std::string& op) {
    size_t n = 0;
    for (const ir::Node& node : g.nodes) n += node.op == op;
    return n;
}

// x [1,3,5,5] → Conv(4 out, 3x3, pads 1, bias) → c
ir::Graph conv_graph(int32_t* c_out, bool nhwc = false) {
    ir::Graph g;
    const int32_t x = act(g, "x", nhwc ? Shape{1, 5, 5, 3} : Shape{1, 3, 5, 5});
    g.inputs = {x};
    const int32_t w = g.add_constant_f32("w", nhwc ? Shape{4, 3, 3, 3} : Shape{4, 3, 3, 3}, wave_f(108, 0.4f, 0.0f));
    const int32_t b = g.add_constant_f32("b", {4}, {0.1f, -0.3f, 0.2f, 0.05f});
    const int32_t c = act(g, "c");
    ir::Node& conv = g.add_node("Conv", {x, w, b}, {c}, "conv");
    conv.attrs.set_ints("pads", {1, 1, 1, 1});
    if (nhwc) conv.attrs.set_string("data_layout", "NHWC");
    *c_out = c;
    return g;
}

}  // namespace

// ---- constant folding and dead nodes ------------------------------------------------------------------

TEST(FoldConstants, ShapeGatherConcatReshapeChainDisappears) {
    ir::Graph g;
    const int32_t x = act(g, "x", {2, 3, 4});
    g.inputs = {x};
    const int32_t shape = act(g, "shape"), first = act(g, "first"), target = act(g, "target"), y = act(g, "y");
    g.add_node("Shape", {x}, {shape});
    g.add_node("Gather", {shape, g.add_constant_i64("idx", {1}, {0})}, {first}).attrs.set_int("axis", 0);
    g.add_node("Concat", {first, g.add_constant_i64("rest", {1}, {-1})}, {target}).attrs.set_int("axis", 0);
    g.add_node("Reshape", {x, target}, {y});
    g.outputs = {y};
    const std::vector<float> in = wave_f(24, 1.0f, 0.0f);
    const ir::PassStats st = ir::fold_constants(g);
    EXPECT_EQ(st.nodes_folded, 3u);
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].op, "Reshape");
    const ir::Tensor& t = g.tensors[static_cast<size_t>(g.nodes[0].inputs[1])];
    ASSERT_TRUE(t.is_const);
    EXPECT_EQ(std::vector<int64_t>(t.as<int64_t>(), t.as<int64_t>() + 2), (std::vector<int64_t>{2, -1}));
    const auto out = run_graph(g, {in});
    EXPECT_EQ(g.tensors[static_cast<size_t>(g.outputs[0])].shape, (Shape{2, 12}));
    EXPECT_EQ(out[0], in);
}

TEST(FoldConstants, ConstantOfShapeFoldsAndItsValueIsUsed) {
    ir::Graph g;
    const int32_t x = act(g, "x", {2, 3});
    g.inputs = {x};
    const int32_t fill = act(g, "fill"), y = act(g, "y");
    g.add_node("ConstantOfShape", {g.add_constant_i64("dims", {2}, {2, 3})}, {fill}).attrs.set_float("value", 1.5f);
    g.add_node("Add", {x, fill}, {y});
    g.outputs = {y};
    const std::vector<float> in = wave_f(6, 1.0f, 0.0f);
    const auto before = run_graph(g, {in});
    ir::fold_constants(g);
    EXPECT_EQ(count_op(g, "ConstantOfShape"), 0u);
    const auto after = run_graph(g, {in});
    expect_close(after, before, 0, 0);
    EXPECT_FLOAT_EQ(after[0][0], in[0] + 1.5f);
}

TEST(FoldConstants, NodeProducingAGraphOutputStays) {
    ir::Graph g;
    const int32_t y = act(g, "y");
    g.add_node("Neg", {g.add_constant_f32("k", {2}, {1.0f, -2.0f})}, {y});
    g.outputs = {y};
    ir::fold_constants(g);
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(run_graph(g, {})[0], (std::vector<float>{-1.0f, 2.0f}));
}

TEST(FoldConstants, LargeResultsStayNodesPastTheBudget) {
    ir::Graph g;
    const int32_t x = act(g, "x", {64});
    g.inputs = {x};
    const int32_t fill = act(g, "fill"), y = act(g, "y");
    g.add_node("ConstantOfShape", {g.add_constant_i64("dims", {1}, {64})}, {fill});
    g.add_node("Add", {x, fill}, {y});
    g.outputs = {y};
    ir::fold_constants(g, 100);  // 64 floats = 256 bytes > 100
    EXPECT_EQ(count_op(g, "ConstantOfShape"), 1u);
}

TEST(FoldConstants, UnknownGraphInputShapeIsReported) {
    ir::Graph g;
    const int32_t x = g.add_activation("x", KES_F32, {-1, 3}, true);
    g.inputs = {x};
    const int32_t y = act(g, "y");
    g.add_node("Relu", {x}, {y});
    g.outputs = {y};
    EXPECT_THROW(ir::fold_constants(g), Error);
}

TEST(RemoveDeadNodes, RemovesNodesThatReachNoOutputAndTheirTensors) {
    ir::Graph g;
    const int32_t x = act(g, "x", {4});
    g.inputs = {x};
    const int32_t a = act(g, "a"), dead1 = act(g, "dead1"), dead2 = act(g, "dead2");
    g.add_node("Relu", {x}, {a});
    g.add_node("Neg", {x}, {dead1});
    g.add_node("Exp", {dead1}, {dead2});
    g.outputs = {a};
    const ir::PassStats st = ir::remove_dead_nodes(g);
    EXPECT_EQ(st.nodes_removed, 2u);
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.find_tensor("dead2"), -1);
    EXPECT_EQ(g.tensors.size(), 2u);
}

// ---- channel affine (BatchNorm / scale) -------------------------------------------------------------------

// ---- no-op Casts --------------------------------------------------------------------------------------

// An fp16 ONNX model computed in f32 (onnx_import.cpp) leaves Casts from f32 to f32, also one producing
// a graph output (keep_io_types=True); a Cast that changes the type stays.
TEST(RemoveNoopCasts, SameTypeCastsGoAndTheGraphOutputKeepsItsName) {
    ir::Graph g;
    const int32_t x = act(g, "x", {2, 3});
    g.inputs = {x};
    const int32_t a = act(g, "a"), r = act(g, "r"), b = act(g, "b"), y = act(g, "y"), h = act(g, "h");
    g.add_node("Cast", {x}, {a}, "in_cast").attrs.set_int("to", 1);
    g.add_node("Relu", {a}, {r}, "relu");
    g.add_node("Neg", {r}, {b}, "neg");
    g.add_node("Cast", {b}, {y}, "out_cast").attrs.set_int("to", 1);
    g.add_node("Cast", {r}, {h}, "to_int").attrs.set_int("to", 7);
    g.outputs = {y, h};
    const std::vector<float> in = wave_f(6, 2.0f, 0.0f);
    ir::infer_shapes(g);
    const auto before = run_graph(g, {in});
    const ir::PassStats stats = ir::remove_noop_casts(g);
    EXPECT_EQ(stats.nodes_removed, 2u);
    EXPECT_EQ(count_op(g, "Cast"), 1u);
    ASSERT_EQ(g.nodes.size(), 3u);
    EXPECT_EQ(g.nodes[0].inputs[0], g.inputs[0]);                                // Relu reads x
    EXPECT_EQ(g.tensors[static_cast<size_t>(g.nodes[1].outputs[0])].name, "y");  // Neg writes y
    EXPECT_EQ(g.tensors[static_cast<size_t>(g.outputs[0])].name, "y");
    EXPECT_EQ(run_graph(g, {in}), before);
}

// A Cast between a graph input and a graph output is the node that copies one into the other: it stays.
TEST(RemoveNoopCasts, CastOfAGraphInputToAGraphOutputStays) {
    ir::Graph g;
    const int32_t x = act(g, "x", {4}), y = act(g, "y");
    g.inputs = {x};
    g.add_node("Cast", {x}, {y}).attrs.set_int("to", 1);
    g.outputs = {y};
    ir::infer_shapes(g);
    EXPECT_EQ(ir::remove_noop_casts(g).nodes_removed, 0u);
    EXPECT_EQ(g.nodes.size(), 1u);
}

TEST(FuseChannelAffine, BatchNormFoldsIntoConvWeights) {
    int32_t c;
    ir::Graph g = conv_graph(&c);
    const int32_t y = act(g, "y");
    g.add_node("BatchNormalization",
               {c, g.add_constant_f32("gamma", {4}, {1.5f, 0.5f, -1.0f, 2.0f}),
                g.add_constant_f32("beta", {4}, {0.1f, 0.2f, 0.3f, -0.4f}),
                g.add_constant_f32("mean", {4}, {0.5f, -0.5f, 0.0f, 1.0f}),
                g.add_constant_f32("var", {4}, {0.25f, 1.0f, 4.0f, 0.5f})},
               {y})
        .attrs.set_float("epsilon", 1e-3f);
    g.outputs = {y};
    const std::vector<float> in = wave_f(75, 1.0f, 0.1f);
    const auto before = run_graph(g, {in});
    ir::infer_shapes(g);
    const ir::PassStats st = ir::fuse_channel_affine(g);
    EXPECT_EQ(st.nodes_fused, 1u);
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.tensors[static_cast<size_t>(g.outputs[0])].name, "y");
    expect_close(run_graph(g, {in}), before, 1e-4f, 1e-4f);
}

TEST(FuseChannelAffine, MulAddSubDivByPerChannelConstantsFoldIntoConv) {
    int32_t c;
    ir::Graph g = conv_graph(&c);
    const int32_t m = act(g, "m"), a = act(g, "a"), s = act(g, "s"), y = act(g, "y");
    g.add_node("Mul", {c, g.add_constant_f32("scale", {4, 1, 1}, {2.0f, -1.0f, 0.5f, 3.0f})}, {m});
    g.add_node("Add", {g.add_constant_f32("shift", {1, 4, 1, 1}, {0.5f, 0.25f, -1.0f, 0.0f}), m}, {a});
    g.add_node("Sub", {g.add_constant_f32("one", {}, {1.0f}), a}, {s});
    g.add_node("Div", {s, g.add_constant_f32("den", {4, 1, 1}, {2.0f, 4.0f, -2.0f, 0.5f})}, {y});
    g.outputs = {y};
    const std::vector<float> in = wave_f(75, 1.0f, -0.2f);
    const auto before = run_graph(g, {in});
    ir::infer_shapes(g);
    EXPECT_EQ(ir::fuse_channel_affine(g).nodes_fused, 4u);
    ASSERT_EQ(g.nodes.size(), 1u);
    expect_close(run_graph(g, {in}), before);
}

TEST(FuseChannelAffine, NhwcConvScalesAlongTheLastAxis) {
    int32_t c;
    ir::Graph g = conv_graph(&c, true);
    const int32_t y = act(g, "y");
    g.add_node("Mul", {c, g.add_constant_f32("scale", {4}, {2.0f, -1.0f, 0.5f, 3.0f})}, {y});
    g.outputs = {y};
    const std::vector<float> in = wave_f(75, 1.0f, 0.3f);
    const auto before = run_graph(g, {in});
    ir::infer_shapes(g);
    EXPECT_EQ(ir::fuse_channel_affine(g).nodes_fused, 1u);
    expect_close(run_graph(g, {in}), before);
}

TEST(FuseChannelAffine, ConstantVaryingAlongAnotherAxisIsNotFolded) {
    int32_t c;
    ir::Graph g = conv_graph(&c);
    const int32_t y = act(g, "y");
    g.add_node("Mul", {c, g.add_constant_f32("row", {5, 1}, {1, 2, 3, 4, 5})}, {y});
    g.outputs = {y};
    ir::infer_shapes(g);
    EXPECT_EQ(ir::fuse_channel_affine(g).nodes_fused, 0u);
    EXPECT_EQ(g.nodes.size(), 2u);
}

TEST(FuseChannelAffine, SharedIntermediateIsNotFolded) {
    int32_t c;
    ir::Graph g = conv_graph(&c);
    const int32_t y = act(g, "y"), z = act(g, "z");
    g.add_node("Mul", {c, g.add_constant_f32("k", {}, {2.0f})}, {y});
    g.add_node("Relu", {c}, {z});
    g.outputs = {y, z};
    ir::infer_shapes(g);
    EXPECT_EQ(ir::fuse_channel_affine(g).nodes_fused, 0u);
}

TEST(FuseChannelAffine, BatchNormFoldsIntoGemmWithAndWithoutTransB) {
    for (int trans_b = 0; trans_b < 2; ++trans_b) {
        ir::Graph g;
        const int32_t x = act(g, "x", {2, 5});
        g.inputs = {x};
        const int32_t w = g.add_constant_f32("w", trans_b ? Shape{3, 5} : Shape{5, 3}, wave_f(15, 0.5f, 0.1f));
        const int32_t cb = g.add_constant_f32("c", {3}, {0.3f, -0.2f, 0.1f});
        const int32_t h = act(g, "h"), y = act(g, "y");
        ir::Node& gemm = g.add_node("Gemm", {x, w, cb}, {h});
        gemm.attrs.set_int("transB", trans_b);
        gemm.attrs.set_float("alpha", 0.75f);
        gemm.attrs.set_float("beta", 2.0f);
        g.add_node(
            "BatchNormalization",
            {h, g.add_constant_f32("gamma", {3}, {1.5f, 0.5f, -1.0f}),
             g.add_constant_f32("beta", {3}, {0.1f, 0.2f, 0.3f}), g.add_constant_f32("mean", {3}, {0.5f, -0.5f, 0.0f}),
             g.add_constant_f32("var", {3}, {0.25f, 1.0f, 4.0f})},
            {y});
        g.outputs = {y};
        const std::vector<float> in = wave_f(10, 1.0f, 0.0f);
        const auto before = run_graph(g, {in});
        ir::infer_shapes(g);
        EXPECT_EQ(ir::fuse_channel_affine(g).nodes_fused, 1u);
        ASSERT_EQ(g.nodes.size(), 1u);
        expect_close(run_graph(g, {in}), before);
    }
}

// ---- activations ---------------------------------------------------------------------------------------

TEST(FuseActivations, ReluClipLeakyReluHardSwishFuseIntoTheirProducers) {
    int32_t c;
    ir::Graph g = conv_graph(&c);
    const int32_t r = act(g, "r"), f = act(g, "f"), mm = act(g, "mm"), l = act(g, "l"), s = act(g, "s"),
                  y = act(g, "y");
    g.add_node("Relu", {c}, {r});
    g.add_node("Flatten", {r}, {f}).attrs.set_int("axis", 1);  // [1,100]
    g.add_node("MatMul", {f, g.add_constant_f32("m", {100, 6}, wave_f(600, 0.1f, 0.0f))}, {mm});
    g.add_node("LeakyRelu", {mm}, {l}).attrs.set_float("alpha", 0.2f);
    g.add_node("Add", {l, g.add_constant_f32("k", {6}, {-1, 0, 1, 2, -3, 0.5f})}, {s});
    g.add_node("Clip", {s, g.add_constant_f32("lo", {}, {-0.5f}), g.add_constant_f32("hi", {}, {1.0f})}, {y});
    g.outputs = {y};
    const std::vector<float> in = wave_f(75, 1.0f, 0.0f);
    const auto before = run_graph(g, {in});
    ir::infer_shapes(g);
    EXPECT_EQ(ir::fuse_activations(g).nodes_fused, 3u);
    EXPECT_EQ(count_op(g, "Relu") + count_op(g, "LeakyRelu") + count_op(g, "Clip"), 0u);
    EXPECT_EQ(g.nodes[0].attrs.get_string("activation"), "Relu");
    expect_close(run_graph(g, {in}), before);
}

TEST(FuseActivations, HardSwishSigmoidAndTanhFuseIntoGemm) {
    for (const char* op : {"HardSwish", "Sigmoid", "Tanh", "HardSigmoid"}) {
        ir::Graph g;
        const int32_t x = act(g, "x", {2, 4});
        g.inputs = {x};
        const int32_t h = act(g, "h"), y = act(g, "y");
        g.add_node("Gemm", {x, g.add_constant_f32("w", {4, 3}, wave_f(12, 2.0f, 0.0f))}, {h});
        g.add_node(op, {h}, {y});
        g.outputs = {y};
        const std::vector<float> in = wave_f(8, 2.0f, 0.0f);
        const auto before = run_graph(g, {in});
        ir::infer_shapes(g);
        EXPECT_EQ(ir::fuse_activations(g).nodes_fused, 1u) << op;
        expect_close(run_graph(g, {in}), before);
    }
}

TEST(FuseActivations, IntermediateThatIsAGraphOutputOrSharedIsKept) {
    int32_t c;
    ir::Graph g = conv_graph(&c);
    const int32_t r = act(g, "r");
    g.add_node("Relu", {c}, {r});
    g.outputs = {c, r};
    ir::infer_shapes(g);
    EXPECT_EQ(ir::fuse_activations(g).nodes_fused, 0u);
    EXPECT_EQ(g.nodes.size(), 2u);
}

// PyTorch's SiLU: Mul(c, Sigmoid(c)) in either operand order becomes the Conv's Swish activation, with
// the same bytes (the reference computes the sigmoid, then the product, as the two nodes did).
TEST(FuseActivations, SigmoidTimesItsInputBecomesSwish) {
    for (bool sigmoid_first : {false, true}) {
        int32_t c;
        ir::Graph g = conv_graph(&c);
        const int32_t s = act(g, "s"), y = act(g, "y");
        g.add_node("Sigmoid", {c}, {s});
        g.add_node("Mul", sigmoid_first ? std::vector<int32_t>{s, c} : std::vector<int32_t>{c, s}, {y});
        g.outputs = {y};
        const std::vector<float> in = wave_f(75, 3.0f, 0.0f);
        const auto before = run_graph(g, {in});
        ir::infer_shapes(g);
        EXPECT_EQ(ir::fuse_activations(g).nodes_fused, 1u);
        ASSERT_EQ(g.nodes.size(), 1u);
        EXPECT_EQ(g.nodes[0].attrs.get_string("activation"), "Swish");
        EXPECT_EQ(g.tensors[static_cast<size_t>(g.nodes[0].outputs[0])].name, "y");
        EXPECT_EQ(run_graph(g, {in}), before) << "sigmoid_first " << sigmoid_first;
    }
}

// Not a Swish: the Sigmoid's output used elsewhere too, the conv output used by a third node, or a Mul
// of the conv output with some other tensor.
TEST(FuseActivations, SigmoidAndMulThatAreNotASwishStay) {
    for (int variant = 0; variant < 3; ++variant) {
        int32_t c;
        ir::Graph g = conv_graph(&c);
        const int32_t s = act(g, "s"), y = act(g, "y"), z = act(g, "z");
        g.add_node("Sigmoid", {c}, {s});
        g.add_node("Mul", {c, variant == 2 ? g.add_constant_f32("k", {}, {2.0f}) : s}, {y});
        if (variant == 0) g.add_node("Neg", {s}, {z});
        if (variant == 1) g.add_node("Neg", {c}, {z});
        g.outputs = variant == 2 ? std::vector<int32_t>{y, s} : std::vector<int32_t>{y, z};
        ir::infer_shapes(g);
        const size_t nodes = g.nodes.size();
        EXPECT_EQ(ir::fuse_activations(g).nodes_fused, 0u) << "variant " << variant;
        EXPECT_EQ(g.nodes.size(), nodes) << "variant " << variant;
    }
}

TEST(FuseActivations, ClipWithRuntimeBoundsIsNotFused) {
    ir::Graph g;
    const int32_t x = act(g, "x", {2, 4}), lo = act(g, "lo", {});
    g.inputs = {x, lo};
    const int32_t h = act(g, "h"), y = act(g, "y");
    g.add_node("MatMul", {x, g.add_constant_f32("w", {4, 3}, wave_f(12, 1.0f, 0.0f))}, {h});
    g.add_node("Clip", {h, lo}, {y});
    g.outputs = {y};
    ir::infer_shapes(g);
    EXPECT_EQ(ir::fuse_activations(g).nodes_fused, 0u);
}

// ---- channel shuffle -------------------------------------------------------------------------------------

// ShuffleNet's Reshape → Transpose → Reshape becomes one ChannelShuffle with the same bytes; a Transpose
// that does not swap the split axis's two halves, or an intermediate used elsewhere, keeps the three.
TEST(FuseChannelShuffle, ReshapeTransposeReshapeBecomesOneNode) {
    for (int variant = 0; variant < 3; ++variant) {
        ir::Graph g;
        const int32_t x = act(g, "x", {1, 6, 2, 3});
        g.inputs = {x};
        const int32_t a = act(g, "a"), t = act(g, "t"), y = act(g, "y"), z = act(g, "z");
        g.add_node("Reshape", {x, g.add_constant_i64("s1", {5}, {1, 2, 3, 2, 3})}, {a});
        const std::vector<int64_t> perm =
            variant == 1 ? std::vector<int64_t>{0, 1, 2, 4, 3} : std::vector<int64_t>{0, 2, 1, 3, 4};
        g.add_node("Transpose", {a}, {t}).attrs.set_ints("perm", perm);
        g.add_node("Reshape", {t, g.add_constant_i64("s2", {4}, {1, 6, 2, 3})}, {y});
        g.outputs = {y};
        if (variant == 2) {
            g.add_node("Neg", {t}, {z});
            g.outputs = {y, z};
        }
        const std::vector<float> in = wave_f(36, 1.0f, 0.0f);
        const auto before = run_graph(g, {in});
        ir::infer_shapes(g);
        const size_t fused = ir::fuse_channel_shuffle(g).nodes_fused;
        if (variant == 0) {
            EXPECT_EQ(fused, 1u);
            ASSERT_EQ(g.nodes.size(), 1u);
            EXPECT_EQ(g.nodes[0].op, "ChannelShuffle");
            EXPECT_EQ(g.nodes[0].attrs.get_int("axis", -1), 1);
            EXPECT_EQ(g.nodes[0].attrs.get_int("group", -1), 2);
        } else {
            EXPECT_EQ(fused, 0u) << "variant " << variant;
        }
        EXPECT_EQ(run_graph(g, {in}), before) << "variant " << variant;
    }
}

// Two shuffles of two inputs, their nodes interleaved (Reshape, Reshape, Transpose, Transpose, ...): the
// fold of the first, at node 0, moves the second's first Reshape to index 0, which is examined again.
TEST(FuseChannelShuffle, InterleavedShufflesFromTheFirstNodeBothFold) {
    ir::Graph g;
    std::vector<int32_t> x, a, t, y;
    for (int k = 0; k < 2; ++k) {
        const std::string n = std::to_string(k);
        x.push_back(act(g, "x" + n, {1, 6, 2, 3}));
        a.push_back(act(g, "a" + n)), t.push_back(act(g, "t" + n)), y.push_back(act(g, "y" + n));
    }
    g.inputs = x;
    for (int k = 0; k < 2; ++k)
        g.add_node("Reshape", {x[k], g.add_constant_i64("s1_" + std::to_string(k), {5}, {1, 2, 3, 2, 3})}, {a[k]});
    for (int k = 0; k < 2; ++k) g.add_node("Transpose", {a[k]}, {t[k]}).attrs.set_ints("perm", {0, 2, 1, 3, 4});
    for (int k = 0; k < 2; ++k)
        g.add_node("Reshape", {t[k], g.add_constant_i64("s2_" + std::to_string(k), {4}, {1, 6, 2, 3})}, {y[k]});
    g.outputs = y;
    const std::vector<float> d0 = wave_f(36, 1.0f, 0.0f), d1 = wave_f(36, 2.0f, 0.5f);
    const auto before = run_graph(g, {d0, d1});
    ir::infer_shapes(g);
    EXPECT_EQ(ir::fuse_channel_shuffle(g).nodes_fused, 2u);
    EXPECT_EQ(count_op(g, "ChannelShuffle"), 2u);
    EXPECT_EQ(g.nodes.size(), 2u);
    EXPECT_EQ(run_graph(g, {d0, d1}), before);
}

// ---- residual adds ---------------------------------------------------------------------------------------

TEST(FuseResidualAdds, AddOfConvAndSkipBecomesTheConvsFourthInputWithTheAddsActivation) {
    for (bool nhwc : {false, true})
        for (bool conv_first : {true, false}) {
            int32_t c;
            ir::Graph g = conv_graph(&c, nhwc);
            // The skip is computed after the Conv (its node comes later): the fused node takes the Add's place.
            const int32_t skip = act(g, "skip"), y = act(g, "y");
            g.add_node("Sigmoid", {g.inputs[0]}, {skip});
            const int32_t sk = act(g, "sk");
            g.add_node("Conv", {skip, g.add_constant_f32("w1", {4, 3, 1, 1}, wave_f(12, 0.3f, 0.0f))}, {sk})
                .attrs.set_string("data_layout", nhwc ? "NHWC" : "NCHW");
            if (nhwc) g.nodes.back().attrs.set_ints("kernel_shape", {1, 1});
            if (nhwc) g.tensors[static_cast<size_t>(g.nodes.back().inputs[1])].shape = {4, 1, 1, 3};
            ir::Node& add =
                g.add_node("Add", conv_first ? std::vector<int32_t>{c, sk} : std::vector<int32_t>{sk, c}, {y});
            add.attrs.set_string("activation", "Relu");
            g.outputs = {y};
            const std::vector<float> in = wave_f(75, 1.0f, 0.0f);
            const auto before = run_graph(g, {in});
            ir::infer_shapes(g);
            // Both Convs feed the Add; the later one (sk, the 1x1 on the skip path) is the one fused.
            EXPECT_EQ(ir::fuse_residual_adds(g).nodes_fused, 1u);
            EXPECT_EQ(count_op(g, "Add"), 0u);
            const ir::Node& fused = g.nodes.back();
            ASSERT_EQ(fused.op, "Conv");
            ASSERT_EQ(fused.inputs.size(), 4u);
            EXPECT_EQ(fused.attrs.get_string("activation"), "Relu");
            EXPECT_EQ(fused.outputs[0], g.outputs[0]);  // the Add's output (ids change when the graph compacts)
            expect_close(run_graph(g, {in}), before);
        }
}

TEST(FuseResidualAdds, BroadcastAddsConvsWithActivationsAndSharedOutputsStay) {
    {  // a per-channel bias add broadcasts: not a residual
        int32_t c;
        ir::Graph g = conv_graph(&c);
        const int32_t y = act(g, "y");
        g.add_node("Add", {c, g.add_constant_f32("k", {1, 4, 1, 1}, {1, 2, 3, 4})}, {y});
        g.outputs = {y};
        ir::infer_shapes(g);
        EXPECT_EQ(ir::fuse_residual_adds(g).nodes_fused, 0u);
    }
    {  // the Conv already carries an activation: Relu(conv) + r is not conv + r then Relu
        int32_t c;
        ir::Graph g = conv_graph(&c);
        g.nodes[0].attrs.set_string("activation", "Relu");
        const int32_t r = act(g, "r", {1, 4, 5, 5}), y = act(g, "y");
        g.inputs.push_back(r);
        g.add_node("Add", {c, r}, {y});
        g.outputs = {y};
        ir::infer_shapes(g);
        EXPECT_EQ(ir::fuse_residual_adds(g).nodes_fused, 0u);
    }
    {  // the Conv's output is also a graph output
        int32_t c;
        ir::Graph g = conv_graph(&c);
        const int32_t y = act(g, "y");
        g.add_node("Add", {c, c}, {y});
        g.outputs = {c, y};
        ir::infer_shapes(g);
        EXPECT_EQ(ir::fuse_residual_adds(g).nodes_fused, 0u);
    }
}

// ---- explicit padding -------------------------------------------------------------------------------------

TEST(MakePaddingExplicit, SameUpperAndSameLowerBecomePads) {
    ir::Graph g;
    const int32_t x = act(g, "x", {1, 2, 6, 7});
    g.inputs = {x};
    const int32_t c = act(g, "c"), y = act(g, "y");
    ir::Node& conv = g.add_node("Conv", {x, g.add_constant_f32("w", {3, 2, 3, 2}, wave_f(36, 0.5f, 0.0f))}, {c});
    conv.attrs.set_string("auto_pad", "SAME_UPPER");
    conv.attrs.set_ints("strides", {2, 2});
    ir::Node& pool = g.add_node("MaxPool", {c}, {y});
    pool.attrs.set_string("auto_pad", "SAME_LOWER");
    pool.attrs.set_ints("kernel_shape", {2, 3});
    g.outputs = {y};
    const std::vector<float> in = wave_f(84, 1.0f, 0.0f);
    const auto before = run_graph(g, {in});
    ir::infer_shapes(g);
    EXPECT_EQ(ir::make_padding_explicit(g).nodes_fused, 2u);
    EXPECT_FALSE(g.nodes[0].attrs.has("auto_pad"));
    // in 6 stride 2 kernel 3: out 3, total pad 1 → 0 before, 1 after; in 7 kernel 2: out 4, total 1.
    EXPECT_EQ(g.nodes[0].attrs.get_ints("pads"), (std::vector<int64_t>{0, 0, 1, 1}));
    // pool on [3,4], kernel 2x3 stride 1: totals 1 and 2; SAME_LOWER puts the larger half first.
    EXPECT_EQ(g.nodes[1].attrs.get_ints("pads"), (std::vector<int64_t>{1, 1, 0, 1}));
    expect_close(run_graph(g, {in}), before, 0, 0);
}

TEST(RunFusions, ConvBatchNormReluBecomesOneNode) {
    int32_t c;
    ir::Graph g = conv_graph(&c);
    const int32_t b = act(g, "bn"), y = act(g, "y");
    g.add_node("BatchNormalization",
               {c, g.add_constant_f32("gamma", {4}, {1.5f, 0.5f, -1.0f, 2.0f}),
                g.add_constant_f32("beta", {4}, {0.1f, 0.2f, 0.3f, -0.4f}),
                g.add_constant_f32("mean", {4}, {0.5f, -0.5f, 0.0f, 1.0f}),
                g.add_constant_f32("var", {4}, {0.25f, 1.0f, 4.0f, 0.5f})},
               {b});
    g.add_node("Relu", {b}, {y});
    g.outputs = {y};
    const std::vector<float> in = wave_f(75, 1.0f, 0.1f);
    const auto before = run_graph(g, {in});
    ir::infer_shapes(g);
    ir::run_fusions(g);
    ir::remove_dead_nodes(g);
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].attrs.get_string("activation"), "Relu");
    expect_close(run_graph(g, {in}), before);
}
