// The layout-choice pass (convert/pass_layout.hpp): every graph runs through the reference kernels
// before and after the pass on random data and must give the same outputs, with its graph inputs and
// outputs untouched and never more Transposes than the Convs and MaxPools it switched pay for.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "convert/convert.hpp"
#include "convert/fusion.hpp"
#include "convert/importers.hpp"
#include "convert/kom_writer.hpp"
#include "convert/pass_layout.hpp"
#include "convert/passes.hpp"
#include "kes/error.hpp"
#include "kestrel/engine.h"
#include "test_kom_run.hpp"
#include "test_onnx_builder.hpp"
#include "test_passes_runner.hpp"

using namespace kes;
using namespace kes_test;

namespace {

const std::vector<int64_t> kToNchw{0, 3, 1, 2}, kToNhwc{0, 2, 3, 1};

std::vector<float> random_f(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    return v;
}

int32_t act(ir::Graph& g, const std::string& name, Shape shape = {}) {
    const bool known = !shape.empty();
    return g.add_activation(name, KES_F32, std::move(shape), known);
}

int32_t weight(ir::Graph& g, const std::string& name, Shape shape, uint32_t seed) {
    const size_t n = static_cast<size_t>(shape_elements(shape));
    return g.add_constant_f32(name, std::move(shape), random_f(n, seed));
}

ir::Node& transpose(ir::Graph& g, int32_t x, int32_t y, const std::vector<int64_t>& perm) {
    ir::Node& n = g.add_node("Transpose", {x}, {y});
    n.attrs.set_ints("perm", perm);
    return n;
}

size_t count_op(const ir::Graph& g, const std::string& op) {
    size_t n = 0;
    for (const ir::Node& node : g.nodes) n += node.op == op;
    return n;
}

const ir::Node* first_node(const ir::Graph& g, const std::string& op) {
    for (const ir::Node& n : g.nodes)
        if (n.op == op) return &n;
    return nullptr;
}

std::vector<std::string> layouts_of(const ir::Graph& g, const std::string& op) {
    std::vector<std::string> out;
    for (const ir::Node& n : g.nodes)
        if (n.op == op) out.push_back(n.attrs.get_string("data_layout", "NCHW"));
    return out;
}

struct Io {
    std::vector<std::string> names;
    std::vector<Shape> shapes;
    bool operator==(const Io& o) const { return names == o.names && shapes == o.shapes; }
};

Io io_of(const ir::Graph& g) {
    Io io;
    for (const auto* list : {&g.inputs, &g.outputs})
        for (int32_t t : *list) {
            io.names.push_back(g.tensors[static_cast<size_t>(t)].name);
            io.shapes.push_back(g.tensors[static_cast<size_t>(t)].shape);
        }
    return io;
}

std::vector<std::vector<float>> random_inputs(ir::Graph g, uint32_t seed) {
    ir::infer_shapes(g);
    std::vector<std::vector<float>> in;
    for (int32_t t : g.inputs)
        in.push_back(random_f(static_cast<size_t>(g.tensors[static_cast<size_t>(t)].elements()), seed++));
    return in;
}

// What the NHWC Convs and MaxPools of g are worth in the pass's cost model (pass_layout.hpp).
int nhwc_gain(const ir::Graph& g) {
    int gain = 0;
    for (const ir::Node& n : g.nodes)
        if (n.attrs.get_string("data_layout", "NCHW") == "NHWC")
            gain += n.op == "Conv" ? ir::kNhwcGainConv : n.op == "MaxPool" ? ir::kNhwcGainMaxPool : 0;
    return gain;
}

// Runs the pass and checks what every rewrite must keep: outputs (1e-5 relative), graph I/O, and the
// cost model's promise: each applied region costs less than it gains, so the Transposes grow by less
// than the gain of the ops switched to NHWC (at most gain - 1), and not at all when none switched.
// Returns the pass's stats.
ir::PassStats choose_layout_checked(ir::Graph& g, uint32_t seed = 7) {
    ir::infer_shapes(g);
    const std::vector<std::vector<float>> in = random_inputs(g, seed);
    const auto before = run_graph(g, in);
    const Io io = io_of(g);
    const size_t transposes = count_op(g, "Transpose");
    const int gain_before = nhwc_gain(g);
    const ir::PassStats stats = ir::choose_layout(g);
    const int gained = nhwc_gain(g) - gain_before;
    EXPECT_EQ(io_of(g), io);
    EXPECT_LE(count_op(g, "Transpose"), transposes + static_cast<size_t>(gained > 0 ? gained - 1 : 0));
    expect_close(run_graph(g, in), before, 1e-6f, 1e-5f);
    return stats;
}

// tf2onnx's wrapping: x NHWC → Transpose → [NCHW body] → Transpose → y NHWC.
struct Wrapped {
    ir::Graph g;
    int32_t body_in = -1;  // the NCHW tensor the body reads
    // The body's result leaves through the final Transpose as the graph output y.
    void finish(int32_t body_out) {
        const int32_t y = act(g, "y");
        transpose(g, body_out, y, kToNhwc);
        g.outputs = {y};
    }
};

Wrapped wrapped(Shape nhwc) {
    Wrapped w;
    const int32_t x = act(w.g, "x", std::move(nhwc));
    w.g.inputs = {x};
    w.body_in = act(w.g, "x_nchw");
    transpose(w.g, x, w.body_in, kToNchw);
    return w;
}

}  // namespace

// ---- NCHW ops between tf2onnx's Transposes ----------------------------------------------------------------

TEST(ChooseLayout, Tf2OnnxConvChainEndsWithoutTransposes) {
    Wrapped w = wrapped({1, 9, 8, 4});
    ir::Graph& g = w.g;
    const int32_t c1 = act(g, "c1"), r1 = act(g, "r1"), c2 = act(g, "c2"), c3 = act(g, "c3"), p = act(g, "p");
    ir::Node& conv1 = g.add_node("Conv", {w.body_in, weight(g, "w1", {6, 4, 3, 3}, 1), weight(g, "b1", {6}, 2)}, {c1});
    conv1.attrs.set_ints("pads", {1, 0, 1, 2});
    conv1.attrs.set_ints("strides", {1, 2});
    g.add_node("Relu", {c1}, {r1});
    // Depthwise, then grouped with dilation.
    ir::Node& dw = g.add_node("Conv", {r1, weight(g, "w2", {6, 1, 3, 3}, 3), weight(g, "b2", {6}, 4)}, {c2});
    dw.attrs.set_int("group", 6);
    dw.attrs.set_ints("pads", {1, 1, 1, 1});
    ir::Node& grouped = g.add_node("Conv", {c2, weight(g, "w3", {4, 3, 2, 2}, 5)}, {c3});
    grouped.attrs.set_int("group", 2);
    grouped.attrs.set_ints("dilations", {2, 1});
    ir::Node& pool = g.add_node("MaxPool", {c3}, {p});
    pool.attrs.set_ints("kernel_shape", {2, 2});
    pool.attrs.set_ints("strides", {2, 2});
    pool.attrs.set_int("ceil_mode", 1);
    w.finish(p);

    const ir::PassStats stats = choose_layout_checked(g);
    EXPECT_EQ(count_op(g, "Transpose"), 0u);
    EXPECT_EQ(layouts_of(g, "Conv"), (std::vector<std::string>{"NHWC", "NHWC", "NHWC"}));
    EXPECT_EQ(layouts_of(g, "MaxPool"), (std::vector<std::string>{"NHWC"}));
    EXPECT_EQ(stats.nodes_fused, 4u);
    EXPECT_EQ(stats.nodes_removed, 2u);
    // The Conv reads the graph input directly and its filter is OHWI.
    const ir::Node* conv = first_node(g, "Conv");
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(conv->inputs[0], g.inputs[0]);
    EXPECT_EQ(g.tensors[static_cast<size_t>(conv->inputs[1])].shape, (Shape{6, 3, 3, 4}));
}

TEST(ChooseLayout, Tf2OnnxResidualBlockEndsWithoutTransposes) {
    // NHWC elementwise ops (Relu, the residual Add) between the wrappers of three Convs.
    Wrapped w = wrapped({1, 5, 6, 3});
    ir::Graph& g = w.g;
    auto conv = [&](int32_t in, const std::string& name, int64_t cin, uint32_t seed) {
        const int32_t c = act(g, name), back = act(g, name + "_nhwc");
        g.add_node("Conv", {in, weight(g, name + "_w", {3, cin, 3, 3}, seed), weight(g, name + "_b", {3}, seed + 1)},
                   {c})
            .attrs.set_ints("pads", {1, 1, 1, 1});
        transpose(g, c, back, kToNhwc);
        return back;
    };
    auto to_nchw = [&](int32_t in, const std::string& name) {
        const int32_t t = act(g, name);
        transpose(g, in, t, kToNchw);
        return t;
    };
    const int32_t a = conv(w.body_in, "conv1", 3, 1), r = act(g, "r"), s = act(g, "s"), o = act(g, "o");
    g.add_node("Relu", {a}, {r});
    const int32_t c2 = conv(to_nchw(r, "r_nchw"), "conv2", 3, 3);
    g.add_node("Add", {r, c2}, {s});
    g.add_node("Relu", {s}, {o});
    const int32_t c3 = conv(to_nchw(o, "o_nchw"), "conv3", 3, 5);
    g.outputs = {c3};

    choose_layout_checked(g);
    EXPECT_EQ(count_op(g, "Transpose"), 0u);
    EXPECT_EQ(layouts_of(g, "Conv"), (std::vector<std::string>{"NHWC", "NHWC", "NHWC"}));
}

TEST(ChooseLayout, PerChannelConstantsAndPoolsFollowTheLayout) {
    Wrapped w = wrapped({2, 6, 5, 3});
    ir::Graph& g = w.g;
    const int32_t c = act(g, "c"), a = act(g, "a"), m = act(g, "m"), s = act(g, "s"), cl = act(g, "cl"),
                  bn = act(g, "bn"), ap = act(g, "ap"), pr = act(g, "pr");
    g.add_node("Conv", {w.body_in, weight(g, "w", {5, 3, 1, 1}, 1)}, {c});
    g.add_node("Add", {c, weight(g, "per_channel", {5, 1, 1}, 2)}, {a});
    g.add_node("Mul", {weight(g, "full", {1, 5, 6, 5}, 3), a}, {m});
    g.add_node("Sub", {m, g.add_constant_f32("half", {}, {0.5f})}, {s});
    g.add_node("Clip", {s, g.add_constant_f32("lo", {}, {-0.6f}), g.add_constant_f32("hi", {}, {0.7f})}, {cl});
    g.add_node("BatchNormalization",
               {cl, weight(g, "gamma", {5}, 4), weight(g, "beta", {5}, 5), weight(g, "mean", {5}, 6),
                g.add_constant_f32("var", {5}, {0.5f, 1.0f, 2.0f, 0.25f, 1.5f})},
               {bn});
    ir::Node& pool = g.add_node("AveragePool", {bn}, {ap});
    pool.attrs.set_ints("kernel_shape", {3, 2});
    pool.attrs.set_ints("pads", {1, 0, 1, 1});
    pool.attrs.set_int("count_include_pad", 1);
    g.add_node("PRelu", {ap, weight(g, "slope", {5, 1, 1}, 7)}, {pr});
    w.finish(pr);

    choose_layout_checked(g);
    EXPECT_EQ(count_op(g, "Transpose"), 0u);
    EXPECT_EQ(layouts_of(g, "BatchNormalization"), (std::vector<std::string>{"NHWC"}));
    EXPECT_EQ(layouts_of(g, "AveragePool"), (std::vector<std::string>{"NHWC"}));
    const ir::Node* add = first_node(g, "Add");
    ASSERT_NE(add, nullptr);
    EXPECT_EQ(g.tensors[static_cast<size_t>(add->inputs[1])].shape, (Shape{1, 1, 1, 5}));
}

TEST(ChooseLayout, AxisOpsAreRenumbered) {
    Wrapped w = wrapped({1, 4, 6, 3});
    ir::Graph& g = w.g;
    const int32_t ca = act(g, "ca"), cb = act(g, "cb"), cat = act(g, "cat"), sm = act(g, "sm"), red = act(g, "red"),
                  sub = act(g, "sub"), pad = act(g, "pad"), rs = act(g, "rs"), sl = act(g, "sl"), s0 = act(g, "s0"),
                  s1 = act(g, "s1"), sum = act(g, "sum"), am = act(g, "am"), amf = act(g, "amf"), out = act(g, "out");
    g.add_node("Conv", {w.body_in, weight(g, "wa", {2, 3, 1, 1}, 1)}, {ca});
    g.add_node("Conv", {w.body_in, weight(g, "wb", {4, 3, 1, 1}, 2)}, {cb});
    g.add_node("Concat", {ca, cb, weight(g, "k", {1, 2, 4, 6}, 3)}, {cat}).attrs.set_int("axis", 1);
    g.add_node("Softmax", {cat}, {sm}).attrs.set_int("axis", 1);
    g.add_node("ReduceMax", {sm, g.add_constant_i64("axes", {2}, {2, -1})}, {red});
    g.add_node("Sub", {sm, red}, {sub});
    g.add_node("Pad", {sub, g.add_constant_i64("pads", {8}, {0, 1, 2, 0, 0, 0, 1, 1})}, {pad})
        .attrs.set_string("mode", "reflect");
    g.add_node("Resize", {pad, -1, g.add_constant_f32("scales", {4}, {1.0f, 1.0f, 2.0f, 1.5f})}, {rs})
        .attrs.set_string("mode", "linear");
    g.add_node("Slice",
               {rs, g.add_constant_i64("starts", {3}, {0, 1, 1}), g.add_constant_i64("ends", {3}, {1, 8, 100})}, {sl});
    ir::Node& split = g.add_node("Split", {sl, g.add_constant_i64("split", {2}, {3, 4})}, {s0, s1});
    split.attrs.set_int("axis", 1);
    g.add_node("Concat", {s0, s1}, {sum}).attrs.set_int("axis", 1);
    // ArgMax's i64 indices come back as floats, so the chain stays one region.
    g.add_node("ArgMax", {sum}, {am}).attrs.set_int("axis", 1);
    g.add_node("Cast", {am}, {amf}).attrs.set_int("to", 1);
    g.add_node("Add", {sum, amf}, {out});
    w.finish(out);

    choose_layout_checked(g);
    EXPECT_EQ(count_op(g, "Transpose"), 0u);
    EXPECT_EQ(first_node(g, "Softmax")->attrs.get_int("axis", -1), 3);
    EXPECT_EQ(first_node(g, "Split")->attrs.get_int("axis", 0), 3);
    EXPECT_EQ(first_node(g, "ArgMax")->attrs.get_int("axis", 0), 3);
}

TEST(ChooseLayout, ConvTransposeGetsItsNhwcFilter) {
    Wrapped w = wrapped({1, 3, 4, 4});
    ir::Graph& g = w.g;
    const int32_t d = act(g, "d"), r = act(g, "r");
    ir::Node& deconv =
        g.add_node("ConvTranspose", {w.body_in, weight(g, "w", {4, 3, 3, 2}, 1), weight(g, "b", {6}, 2)}, {d});
    deconv.attrs.set_int("group", 2);
    deconv.attrs.set_ints("strides", {2, 2});
    deconv.attrs.set_ints("pads", {1, 0, 0, 1});
    deconv.attrs.set_ints("output_padding", {1, 0});
    g.add_node("Relu", {d}, {r});
    w.finish(r);

    choose_layout_checked(g);
    EXPECT_EQ(count_op(g, "Transpose"), 0u);
    EXPECT_EQ(layouts_of(g, "ConvTranspose"), (std::vector<std::string>{"NHWC"}));
    EXPECT_EQ(g.tensors[static_cast<size_t>(first_node(g, "ConvTranspose")->inputs[1])].shape, (Shape{6, 3, 2, 2}));
}

TEST(ChooseLayout, GlobalPoolBeforeFlattenNeedsOnlyAReshape) {
    Wrapped w = wrapped({1, 5, 5, 3});
    ir::Graph& g = w.g;
    const int32_t c = act(g, "c"), gap = act(g, "gap"), flat = act(g, "flat");
    g.add_node("Conv", {w.body_in, weight(g, "w", {8, 3, 3, 3}, 1)}, {c});
    g.add_node("GlobalAveragePool", {c}, {gap});
    g.add_node("Flatten", {gap}, {flat});
    g.outputs = {flat};

    choose_layout_checked(g);
    EXPECT_EQ(count_op(g, "Transpose"), 0u);
    EXPECT_EQ(layouts_of(g, "GlobalAveragePool"), (std::vector<std::string>{"NHWC"}));
    EXPECT_EQ(count_op(g, "Reshape"), 1u);  // [1,1,1,8] → [1,8,1,1] moves no element
}

TEST(ChooseLayout, ATransposeIsAddedWhereItRemovesTwo) {
    // The NCHW result is also a graph output: it keeps one Transpose, the two wrappers go.
    Wrapped w = wrapped({1, 4, 4, 2});
    ir::Graph& g = w.g;
    const int32_t c = act(g, "c");
    g.add_node("Conv", {w.body_in, weight(g, "w", {3, 2, 3, 3}, 1)}, {c}).attrs.set_ints("pads", {1, 1, 1, 1});
    w.finish(c);
    g.outputs.push_back(c);

    choose_layout_checked(g);
    EXPECT_EQ(count_op(g, "Transpose"), 1u);
    EXPECT_EQ(layouts_of(g, "Conv"), (std::vector<std::string>{"NHWC"}));
    EXPECT_EQ(g.nodes[static_cast<size_t>(g.producer(g.outputs[1]))].op, "Transpose");
}

namespace {

// GlobalAveragePool → Flatten → Gemm → Reshape [1,C,1,1] → Sigmoid → Mul: the region meets the
// Flatten and the Reshape at [1,C,1,1] tensors, where a Reshape does the Transpose's work.
ir::Graph squeeze_excite_graph() {
    Wrapped w = wrapped({1, 5, 4, 3});
    ir::Graph& g = w.g;
    const int32_t c = act(g, "c"), gap = act(g, "gap"), flat = act(g, "flat"), fc = act(g, "fc"), r = act(g, "r"),
                  s = act(g, "s"), m = act(g, "m");
    g.add_node("Conv", {w.body_in, weight(g, "w", {6, 3, 1, 1}, 1)}, {c});
    g.add_node("GlobalAveragePool", {c}, {gap});
    g.add_node("Flatten", {gap}, {flat});
    g.add_node("Gemm", {flat, weight(g, "fc_w", {6, 6}, 2)}, {fc});
    g.add_node("Reshape", {fc, g.add_constant_i64("to", {4}, {1, 6, 1, 1})}, {r});
    g.add_node("Sigmoid", {r}, {s});
    g.add_node("Mul", {c, s}, {m});
    w.finish(m);
    return std::move(w.g);
}

}  // namespace

TEST(ChooseLayout, SqueezeExciteBlockNeedsOnlyReshapes) {
    ir::Graph g = squeeze_excite_graph();
    choose_layout_checked(g);
    EXPECT_EQ(count_op(g, "Transpose"), 0u);
    EXPECT_EQ(count_op(g, "Reshape"), 3u);
    EXPECT_EQ(layouts_of(g, "GlobalAveragePool"), (std::vector<std::string>{"NHWC"}));
}

TEST(ChooseLayout, ASecondNchwInputGetsItsOwnTranspose) {
    Wrapped w = wrapped({1, 4, 5, 2});
    ir::Graph& g = w.g;
    const int32_t z = act(g, "z", {1, 3, 4, 5}), c = act(g, "c"), a = act(g, "a"), r = act(g, "r");
    g.inputs.push_back(z);
    g.add_node("Conv", {w.body_in, weight(g, "w", {3, 2, 3, 3}, 1)}, {c}).attrs.set_ints("pads", {1, 1, 1, 1});
    g.add_node("Add", {c, z}, {a});
    g.add_node("Relu", {a}, {r});
    w.finish(r);

    choose_layout_checked(g);
    ASSERT_EQ(count_op(g, "Transpose"), 1u);
    const ir::Node* t = first_node(g, "Transpose");
    EXPECT_EQ(g.tensors[static_cast<size_t>(t->inputs[0])].name, "z");  // ids change: compare names
    EXPECT_EQ(t->attrs.get_ints("perm"), kToNhwc);
    EXPECT_EQ(layouts_of(g, "Conv"), (std::vector<std::string>{"NHWC"}));
}

// ---- left alone -------------------------------------------------------------------------------------------

TEST(ChooseLayout, NoGainLeavesTheGraphAsItWas) {
    // One Transpose in, NCHW graph output: switching the AveragePool would move the Transpose, not
    // remove it, and no fast kernel runs an NHWC AveragePool.
    Wrapped w = wrapped({1, 4, 4, 2});
    ir::Graph& g = w.g;
    const int32_t p = act(g, "p");
    g.add_node("AveragePool", {w.body_in}, {p}).attrs.set_ints("kernel_shape", {2, 2});
    g.outputs = {p};
    choose_layout_checked(g);
    EXPECT_EQ(count_op(g, "Transpose"), 1u);
    EXPECT_EQ(layouts_of(g, "AveragePool"), (std::vector<std::string>{"NCHW"}));
}

TEST(ChooseLayout, AConvTakesNhwcWhereTheTransposeOnlyMoves) {
    // One Transpose in, NCHW graph output. This was left alone while only Transposes counted; the
    // same number of Transposes with the Conv on the fast NHWC kernel is the better graph.
    Wrapped w = wrapped({1, 4, 4, 2});
    ir::Graph& g = w.g;
    const int32_t c = act(g, "c");
    g.add_node("Conv", {w.body_in, weight(g, "w", {3, 2, 3, 3}, 1)}, {c});
    g.outputs = {c};
    choose_layout_checked(g);
    EXPECT_EQ(count_op(g, "Transpose"), 1u);
    EXPECT_EQ(layouts_of(g, "Conv"), (std::vector<std::string>{"NHWC"}));
    EXPECT_EQ(first_node(g, "Conv")->inputs[0], g.inputs[0]);
}

TEST(ChooseLayout, ConvWithARuntimeWeightIsLeftAlone) {
    Wrapped w = wrapped({1, 4, 4, 2});
    ir::Graph& g = w.g;
    const int32_t wt = act(g, "w", {3, 2, 3, 3}), c = act(g, "c");
    g.inputs.push_back(wt);
    g.add_node("Conv", {w.body_in, wt}, {c});
    w.finish(c);
    choose_layout_checked(g);
    EXPECT_EQ(count_op(g, "Transpose"), 2u);
    EXPECT_EQ(layouts_of(g, "Conv"), (std::vector<std::string>{"NCHW"}));
}

TEST(ChooseLayout, PermsAConvCannotTakeComposeWithItsNhwcSwitch) {
    // H/W swaps around a Conv: no data_layout absorbs them, so this was left alone while only
    // Transposes counted. Switching the Conv to NHWC folds into both swaps (x → NHWC with H and W
    // swapped is one Transpose) and adds none: the Conv gains the fast kernel for free.
    ir::Graph g;
    const int32_t x = act(g, "x", {1, 2, 4, 5}), t = act(g, "t"), c = act(g, "c"), y = act(g, "y");
    g.inputs = {x};
    transpose(g, x, t, {0, 1, 3, 2});
    g.add_node("Conv", {t, weight(g, "w", {3, 2, 3, 3}, 1)}, {c});
    transpose(g, c, y, {0, 1, 3, 2});
    g.outputs = {y};
    choose_layout_checked(g);
    EXPECT_EQ(g.nodes.size(), 3u);
    EXPECT_EQ(layouts_of(g, "Conv"), (std::vector<std::string>{"NHWC"}));
    ASSERT_EQ(count_op(g, "Transpose"), 2u);
    for (const ir::Node& n : g.nodes)
        if (n.op == "Transpose") {
            EXPECT_EQ(n.attrs.get_ints("perm"), (std::vector<int64_t>{0, 3, 2, 1}));
        }
}

TEST(ChooseLayout, ALoneTransposeIsNotMovedAround) {
    ir::Graph g;
    const int32_t x = act(g, "x", {1, 3, 4, 5}), t = act(g, "t"), y = act(g, "y");
    g.inputs = {x};
    transpose(g, x, t, kToNhwc);
    g.add_node("Relu", {t}, {y});
    g.outputs = {y};
    choose_layout_checked(g);
    ASSERT_EQ(g.nodes.size(), 2u);
    EXPECT_EQ(g.nodes[0].op, "Transpose");
    EXPECT_EQ(g.nodes[0].attrs.get_ints("perm"), kToNhwc);
}

// ---- Transposes among themselves --------------------------------------------------------------------------

TEST(ChooseLayout, TransposePairCancels) {
    ir::Graph g;
    const int32_t x = act(g, "x", {2, 3, 4, 5}), a = act(g, "a"), b = act(g, "b"), y = act(g, "y");
    g.inputs = {x};
    transpose(g, x, a, {2, 0, 3, 1});
    transpose(g, a, b, {1, 3, 0, 2});  // the inverse
    g.add_node("Relu", {b}, {y});
    g.outputs = {y};
    choose_layout_checked(g);
    EXPECT_EQ(count_op(g, "Transpose"), 0u);
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].inputs[0], g.inputs[0]);
}

TEST(ChooseLayout, PairAroundElementwiseOpsCancels) {
    ir::Graph g;
    const int32_t x = act(g, "x", {2, 3, 4, 5}), a = act(g, "a"), s = act(g, "s"), m = act(g, "m"), y = act(g, "y");
    g.inputs = {x};
    transpose(g, x, a, {0, 2, 1, 3});
    g.add_node("Sigmoid", {a}, {s});
    g.add_node("Mul", {s, weight(g, "k", {4, 1, 5}, 1)}, {m});
    transpose(g, m, y, {0, 2, 1, 3});
    g.outputs = {y};
    choose_layout_checked(g);
    EXPECT_EQ(count_op(g, "Transpose"), 0u);
}

TEST(ChooseLayout, ConsecutiveTransposesCompose) {
    ir::Graph g;
    const int32_t x = act(g, "x", {2, 3, 4, 5}), a = act(g, "a"), b = act(g, "b"), c = act(g, "c"), y = act(g, "y");
    g.inputs = {x};
    transpose(g, x, a, {0, 2, 3, 1});
    transpose(g, a, b, {3, 1, 0, 2});
    transpose(g, b, c, {0, 1, 3, 2});
    g.add_node("Relu", {c}, {y});
    g.outputs = {y};
    choose_layout_checked(g);
    ASSERT_EQ(count_op(g, "Transpose"), 1u);
    // x → a: a[i] = x[p1[i]]; b[i] = a[p2[i]]; c[i] = b[p3[i]] → c[i] = x[p1[p2[p3[i]]]].
    const std::vector<int64_t> p1{0, 2, 3, 1}, p2{3, 1, 0, 2}, p3{0, 1, 3, 2};
    std::vector<int64_t> composed(4);
    for (size_t i = 0; i < 4; ++i) composed[i] = p1[static_cast<size_t>(p2[static_cast<size_t>(p3[i])])];
    EXPECT_EQ(first_node(g, "Transpose")->attrs.get_ints("perm"), composed);
}

TEST(ChooseLayout, IdentityTransposeDisappears) {
    ir::Graph g;
    const int32_t x = act(g, "x", {2, 3}), a = act(g, "a"), y = act(g, "y");
    g.inputs = {x};
    transpose(g, x, a, {0, 1});
    g.add_node("Neg", {a}, {y});
    g.outputs = {y};
    choose_layout_checked(g);
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].op, "Neg");
}

TEST(ChooseLayout, TransposeThatIsAGraphOutputStays) {
    ir::Graph g;
    const int32_t x = act(g, "x", {2, 3, 4}), t = act(g, "t"), u = act(g, "u"), y = act(g, "y");
    g.inputs = {x};
    transpose(g, x, t, {2, 0, 1});
    transpose(g, t, u, {1, 2, 0});
    g.add_node("Relu", {u}, {y});
    g.outputs = {t, y};
    choose_layout_checked(g);
    EXPECT_EQ(count_op(g, "Transpose"), 1u);
    const ir::Node& producer = g.nodes[static_cast<size_t>(g.producer(g.outputs[0]))];
    EXPECT_EQ(producer.op, "Transpose");
    EXPECT_EQ(producer.attrs.get_ints("perm"), (std::vector<int64_t>{2, 0, 1}));
}

TEST(ChooseLayout, GraphInputStraightToAGraphOutputKeepsACopy) {
    ir::Graph g;
    const int32_t x = act(g, "x", {2, 3, 4}), t = act(g, "t"), y = act(g, "y");
    g.inputs = {x};
    transpose(g, x, t, {1, 0, 2});
    transpose(g, t, y, {1, 0, 2});
    g.outputs = {y};
    choose_layout_checked(g);
    EXPECT_EQ(count_op(g, "Transpose"), 0u);
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].op, "Identity");
}

TEST(ChooseLayout, BatchGearsNeverMoveTheBatchAxis) {
    auto build = [](bool gears) {
        ir::Graph g;
        const int32_t x = act(g, "x", {4, 3, 5}), a = act(g, "a"), r = act(g, "r"), y = act(g, "y");
        g.inputs = {x};
        transpose(g, x, a, {1, 0, 2});
        g.add_node("Relu", {a}, {r});
        transpose(g, r, y, {1, 0, 2});
        g.outputs = {y};
        if (gears) g.dynamic_batch = {1, 2, 4};
        return g;
    };
    ir::Graph fixed = build(false), geared = build(true);
    choose_layout_checked(fixed);
    choose_layout_checked(geared);
    EXPECT_EQ(count_op(fixed, "Transpose"), 0u);
    EXPECT_EQ(count_op(geared, "Transpose"), 2u);
}

// Random graphs of Transposes, layout-sensitive ops and layout-free ops, with fan-out and outputs in the
// middle: whatever the pass does must keep the outputs and never add a Transpose.
TEST(ChooseLayout, RandomGraphsKeepTheirOutputs) {
    std::mt19937 rng(2024);
    auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    const std::vector<std::vector<int64_t>> perms{kToNchw, kToNhwc, {0, 1, 3, 2}, {0, 2, 1, 3}, {3, 1, 2, 0}};
    size_t rewritten = 0;
    for (int round = 0; round < 400; ++round) {
        ir::Graph g;
        std::vector<int32_t> pool{act(g, "x", {1, 2, 3, 4})};
        std::vector<Shape> shapes{{1, 2, 3, 4}};
        g.inputs = {pool[0]};
        if (pick(2)) {
            pool.push_back(act(g, "x2", {1, 4, 2, 3}));
            shapes.push_back({1, 4, 2, 3});
            g.inputs.push_back(pool.back());
        }
        const int steps = 4 + static_cast<int>(pick(10));
        for (int step = 0; step < steps; ++step) {
            const size_t i = pick(pool.size());
            const int32_t in = pool[i];
            Shape shape = shapes[i];
            const std::string name = "t" + std::to_string(step);
            const int32_t out = act(g, name);
            switch (pick(9)) {
                case 0:
                case 1: {
                    const std::vector<int64_t>& p = perms[pick(perms.size())];
                    transpose(g, in, out, p);
                    Shape s2(4);
                    for (size_t d = 0; d < 4; ++d) s2[d] = shape[static_cast<size_t>(p[d])];
                    shape = s2;
                    break;
                }
                case 2: g.add_node(pick(2) ? "Relu" : "Sigmoid", {in}, {out}); break;
                case 3: {
                    // Another tensor of the same shape, else a per-channel or full constant.
                    int32_t other = -1;
                    for (size_t j = 0; j < pool.size(); ++j)
                        if (j != i && shapes[j] == shape && pick(2)) other = pool[j];
                    if (other < 0)
                        other = pick(2) ? weight(g, name + "_k", {shape[1], 1, 1}, static_cast<uint32_t>(step))
                                        : weight(g, name + "_k", shape, static_cast<uint32_t>(step));
                    g.add_node(pick(2) ? "Add" : "Mul", {in, other}, {out});
                    break;
                }
                case 4: {
                    const int64_t cout = 1 + static_cast<int64_t>(pick(3));
                    ir::Node& conv = g.add_node(
                        "Conv", {in, weight(g, name + "_w", {cout, shape[1], 3, 3}, static_cast<uint32_t>(step))},
                        {out});
                    conv.attrs.set_ints("pads", {1, 1, 1, 1});
                    shape[1] = cout;
                    break;
                }
                case 5: {
                    ir::Node& pool_node = g.add_node("MaxPool", {in}, {out});
                    pool_node.attrs.set_ints("kernel_shape", {2, 2});
                    pool_node.attrs.set_ints("pads", {0, 0, 1, 1});
                    break;
                }
                case 6: {
                    const int64_t axis = static_cast<int64_t>(pick(4));
                    g.add_node("Concat", {in, in}, {out}).attrs.set_int("axis", axis);
                    shape[static_cast<size_t>(axis)] *= 2;
                    break;
                }
                case 7: g.add_node("Softmax", {in}, {out}).attrs.set_int("axis", static_cast<int64_t>(pick(4))); break;
                default: {
                    const int64_t axis = static_cast<int64_t>(pick(4));
                    g.add_node("ReduceSum", {in, g.add_constant_i64(name + "_axes", {1}, {axis})}, {out});
                    shape[static_cast<size_t>(axis)] = 1;
                    break;
                }
            }
            pool.push_back(out);
            shapes.push_back(shape);
        }
        // Outputs: every unread tensor, plus a few from the middle.
        for (size_t j = g.inputs.size(); j < pool.size(); ++j)
            if (g.consumers(pool[j]).empty() || pick(5) == 0) g.outputs.push_back(pool[j]);
        const size_t transposes = count_op(g, "Transpose");
        SCOPED_TRACE("round " + std::to_string(round));
        choose_layout_checked(g, static_cast<uint32_t>(round));
        rewritten += count_op(g, "Transpose") < transposes;
    }
    EXPECT_GT(rewritten, 40u);  // the pass had work in many of them
}

TEST(ChooseLayout, ImageGearsGetNoReshapes) {
    // A Reshape's shape would hold the written gear's size: with gears the two Reshapes the
    // squeeze-excite block needs at the Flatten and after the Gemm's Reshape are Transposes. They
    // replace the two wrappers, and the Conv gains the fast NHWC kernel.
    ir::Graph g = squeeze_excite_graph();
    g.dynamic_image_sizes = {{3, 2}, {5, 4}};
    choose_layout_checked(g);
    EXPECT_EQ(count_op(g, "Transpose"), 2u);
    EXPECT_EQ(count_op(g, "Reshape"), 1u);
    EXPECT_EQ(layouts_of(g, "Conv"), (std::vector<std::string>{"NHWC"}));
    for (const ir::Node& n : g.nodes)
        if (n.op == "Transpose") {
            EXPECT_NE(g.producer(n.inputs[0]), -1) << "a wrapper Transpose stayed";
        }
}

// ---- through an ONNX file ---------------------------------------------------------------------------------

namespace {

// tf2onnx's shape of a TF conv block: NHWC in, every NCHW op wrapped in Transposes, NHWC elementwise
// ops between the wrappers.
std::vector<uint8_t> tf2onnx_model() {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("input", kFloat, {1, 8, 8, 3}));
    s.outputs.push_back(value_info("output", kFloat, {1, 4, 4, 8}));
    s.initializers.push_back(tensor_f32("w1", {8, 3, 3, 3}, random_f(216, 11)));
    s.initializers.push_back(tensor_f32("b1", {8}, random_f(8, 12)));
    s.initializers.push_back(tensor_f32("w2", {8, 1, 3, 3}, random_f(72, 13)));
    s.initializers.push_back(tensor_f32("shift", {8}, random_f(8, 14)));
    auto perm = [](const std::vector<int64_t>& p) { return std::vector<Pb>{attr_ints("perm", p)}; };
    s.nodes.push_back(node("Transpose", {"input"}, {"t1"}, perm(kToNchw)));
    s.nodes.push_back(
        node("Conv", {"t1", "w1", "b1"}, {"c1"}, {attr_ints("kernel_shape", {3, 3}), attr_ints("pads", {1, 1, 1, 1})}));
    s.nodes.push_back(node("Transpose", {"c1"}, {"c1_nhwc"}, perm(kToNhwc)));
    s.nodes.push_back(node("Relu", {"c1_nhwc"}, {"r1"}));
    s.nodes.push_back(node("Add", {"r1", "shift"}, {"a1"}));  // [8] broadcasts along NHWC's C
    s.nodes.push_back(node("Transpose", {"a1"}, {"t2"}, perm(kToNchw)));
    s.nodes.push_back(
        node("Conv", {"t2", "w2"}, {"c2"},
             {attr_ints("kernel_shape", {3, 3}), attr_int("group", 8), attr_string("auto_pad", "SAME_UPPER")}));
    s.nodes.push_back(
        node("MaxPool", {"c2"}, {"p2"}, {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})}));
    s.nodes.push_back(node("Transpose", {"p2"}, {"output"}, perm(kToNhwc)));
    return onnx_model(s);
}

}  // namespace

TEST(ChooseLayout, Tf2OnnxModelFromAFileLosesEveryTranspose) {
    const std::vector<uint8_t> model = tf2onnx_model();
    ir::Graph reference = ir::import_onnx(model.data(), model.size());
    ir::Graph g = reference;
    ir::fold_constants(g);
    ir::infer_shapes(g);
    ASSERT_EQ(count_op(g, "Transpose"), 4u);
    choose_layout_checked(g, 21);
    EXPECT_EQ(count_op(g, "Transpose"), 0u);
    EXPECT_EQ(layouts_of(g, "Conv"), (std::vector<std::string>{"NHWC", "NHWC"}));
    EXPECT_EQ(layouts_of(g, "MaxPool"), (std::vector<std::string>{"NHWC"}));
    const std::vector<std::vector<float>> in = random_inputs(reference, 3);
    expect_close(run_graph(g, in), run_graph(reference, in), 1e-6f, 1e-5f);

    // The converter runs the pass: its graph has no Transpose left and keeps the reference outputs.
    const ir::Graph converted = convert::build_graph(model.data(), model.size(), {});
    EXPECT_EQ(count_op(converted, "Transpose"), 0u);
    expect_close(run_graph(converted, in), run_graph(reference, in), 1e-6f, 1e-5f);
}

namespace {

// convert.cpp's pass order with choose_layout after fold_constants / infer_shapes, then a .kom.
std::vector<uint8_t> kom_with_layout_pass(ir::Graph g) {
    ir::fold_constants(g);
    ir::infer_shapes(g);
    ir::choose_layout(g);
    EXPECT_EQ(count_op(g, "Transpose"), 0u);
    ir::run_fusions(g);
    ir::remove_dead_nodes(g);
    ir::infer_shapes(g);
    return ir::write_kom(g).bytes;
}

}  // namespace

TEST(ChooseLayout, NhwcModelsLoadAndRunFromAKomImage) {
    const std::vector<uint8_t> model = tf2onnx_model();
    const ir::Graph onnx = ir::import_onnx(model.data(), model.size());
    for (const ir::Graph& reference : {onnx, squeeze_excite_graph()}) {
        const std::vector<std::vector<float>> in = random_inputs(reference, 5);
        const std::vector<uint8_t> kom = kom_with_layout_pass(reference);
        expect_close({execute_kom(kom, in[0])}, run_graph(reference, in), 1e-6f, 1e-5f);
    }
}
