// The PReLU pattern pass (convert/pass_prelu.hpp): TFLite's relu(x) + c·(x − |x|) becomes PRelu(x, 2c)
// with the same outputs; look-alikes that are not the pattern stay untouched.
#include <gtest/gtest.h>

#include "convert/pass_prelu.hpp"
#include "test_tflite_builder.hpp"

namespace {

using kes::ir::Graph;

enum class Variant { Folded, ScalarHalf, SwappedOperands, AbsMinusX, NegReluNeg };

// x [1,2,3,4] → the spelled-out PReLU (α per channel, as MobileFaceNet writes it) → y, then y + 1 so
// the pattern's output is not itself the graph output.
Graph spelled_prelu(Variant v, bool relu_also_output = false) {
    Graph g;
    const int32_t x = g.add_activation("x", KES_F32, {1, 2, 3, 4}, true);
    const std::vector<float> alpha = {0.25f, -0.5f, 1.5f, 0.05f};
    const int32_t c = g.add_constant_f32("c", {4}, alpha);
    const int32_t r = g.add_activation("relu"), s = g.add_activation("sub");
    const int32_t m = g.add_activation("mul"), y = g.add_activation("y"), z = g.add_activation("z");
    g.add_node("Relu", {x}, {r});
    if (v == Variant::NegReluNeg) {
        // MTCNN's spelling: s = −relu(−x) = min(x, 0), then c · s; the slope is c itself.
        const int32_t n1 = g.add_activation("neg1"), r2 = g.add_activation("relu2");
        g.add_node("Neg", {x}, {n1});
        g.add_node("Relu", {n1}, {r2});
        g.add_node("Neg", {r2}, {s});
    } else {
        const int32_t a = g.add_activation("abs");
        g.add_node("Abs", {x}, {a});
        g.add_node("Sub", v == Variant::AbsMinusX ? std::vector<int32_t>{a, x} : std::vector<int32_t>{x, a}, {s});
    }
    if (v == Variant::ScalarHalf) {
        const int32_t m0 = g.add_activation("mul0");
        g.add_node("Mul", {c, s}, {m0});
        g.add_node("Mul", {m0, g.add_constant_f32("half", {}, {0.5f})}, {m});
    } else {
        g.add_node("Mul", v == Variant::SwappedOperands ? std::vector<int32_t>{s, c} : std::vector<int32_t>{c, s}, {m});
    }
    g.add_node("Add", v == Variant::SwappedOperands ? std::vector<int32_t>{m, r} : std::vector<int32_t>{r, m}, {y});
    g.add_node("Add", {y, g.add_constant_f32("one", {}, {1.0f})}, {z});
    g.inputs = {x};
    g.outputs = {z};
    if (relu_also_output) g.outputs.push_back(r);
    return g;
}

std::vector<float> input() {
    std::vector<float> v(24);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.75f;
    return v;
}

void expect_fused_equal(Variant v) {
    Graph before = spelled_prelu(v);
    Graph after = spelled_prelu(v);
    kes::ir::infer_shapes(after);
    const kes::ir::PassStats stats = kes::ir::fuse_prelu_pattern(after);
    EXPECT_GT(stats.nodes_fused, 0u);
    ASSERT_EQ(after.nodes.size(), 2u);
    EXPECT_EQ(after.nodes[0].op, "PRelu");
    EXPECT_EQ(after.nodes[1].op, "Add");
    const auto want = kes_test::run_graph(std::move(before), {input()});
    const auto got = kes_test::run_graph(std::move(after), {input()});
    ASSERT_EQ(want.size(), 1u);
    ASSERT_EQ(got.size(), 1u);
    kes_test::expect_near_all(got[0], want[0], 1e-6f, "prelu");
}

}  // namespace

TEST(PreluPattern, FoldedHalfAlphaBecomesPReluWithSameOutputs) {
    expect_fused_equal(Variant::Folded);
}

TEST(PreluPattern, ExplicitScalarHalfIsFoldedIntoTheSlope) {
    expect_fused_equal(Variant::ScalarHalf);
}

TEST(PreluPattern, SwappedOperandsStillMatch) {
    expect_fused_equal(Variant::SwappedOperands);
}

TEST(PreluPattern, AbsMinusXGivesNegatedSlope) {
    expect_fused_equal(Variant::AbsMinusX);
}

TEST(PreluPattern, MtcnnNegReluNegFormBecomesPReluWithSlopeC) {
    expect_fused_equal(Variant::NegReluNeg);
}

TEST(PreluPattern, SharedIntermediateLeavesTheGraphAlone) {
    Graph g = spelled_prelu(Variant::Folded, /*relu_also_output=*/true);
    kes::ir::infer_shapes(g);
    const size_t nodes = g.nodes.size();
    EXPECT_EQ(kes::ir::fuse_prelu_pattern(g).nodes_fused, 0u);
    EXPECT_EQ(g.nodes.size(), nodes);
}

TEST(PreluPattern, SlopeThatWouldGrowTheInputIsNotFused) {
    // c [2,1,1,4] against x [1,2,3,4]: c·(x − |x|) broadcasts to [2,2,3,4]; PRelu cannot express that.
    Graph g;
    const int32_t x = g.add_activation("x", KES_F32, {1, 2, 3, 4}, true);
    const int32_t c = g.add_constant_f32("c", {2, 1, 1, 4}, std::vector<float>(8, 0.1f));
    const int32_t r = g.add_activation("relu"), a = g.add_activation("abs"), s = g.add_activation("sub");
    const int32_t m = g.add_activation("mul"), y = g.add_activation("y");
    g.add_node("Relu", {x}, {r});
    g.add_node("Abs", {x}, {a});
    g.add_node("Sub", {x, a}, {s});
    g.add_node("Mul", {c, s}, {m});
    g.add_node("Add", {r, m}, {y});
    g.inputs = {x};
    g.outputs = {y};
    kes::ir::infer_shapes(g);
    EXPECT_EQ(kes::ir::fuse_prelu_pattern(g).nodes_fused, 0u);
    EXPECT_EQ(g.nodes.size(), 5u);
}
