// Small hand-built models shared by the engine tests and the fuzz seed writer, written through the
// converter's graph (convert/ir.hpp) and kom_writer exactly as kes-convert writes files.
#pragma once

#include <cmath>
#include <vector>

#include "convert/ir.hpp"
#include "convert/kom_writer.hpp"

namespace kes_test {

inline std::vector<float> wave(size_t n, float scale, float bias) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.7f * static_cast<float>(i) + 0.3f) + bias;
    return v;
}

// An activation tensor with a known shape.
inline int32_t act(kes::ir::Graph& g, const char* name, kes::Shape shape, kes_layout layout = KES_LAYOUT_ND) {
    const int32_t t = g.add_activation(name, KES_F32, std::move(shape), true);
    g.tensors[static_cast<size_t>(t)].layout = layout;
    return t;
}

struct ConvParams {
    int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
    int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
    bool relu = false;

    void to_attrs(kes::Attrs& a, int64_t kh, int64_t kw) const {
        a.set_string("data_layout", "NHWC");
        a.set_ints("kernel_shape", {kh, kw});
        a.set_ints("strides", {stride_h, stride_w});
        a.set_ints("dilations", {dilation_h, dilation_w});
        a.set_ints("pads", {pad_top, pad_left, pad_bottom, pad_right});
        if (relu) a.set_string("activation", "Relu");
    }
};

// y = relu(conv_a(x)) + conv_b(x) + beta, x [1,5,6,3] NHWC:
//   conv_a: 3x3 OHWI, Cout 4, stride 2/1, dilation 1/2, pads top 1 left 2 bottom 1 right 0, bias → [1,3,4,4]
//   conv_b: 1x3, stride 2/1, no pads, no bias, fused Relu                                     → [1,3,4,4]
//   beta:   [4], broadcast over N, H, W
struct ConvReluAdd {
    static constexpr int64_t H = 5, W = 6, C = 3, CO = 4, OH = 3, OW = 4;
    ConvParams conv_a, conv_b;
    std::vector<float> filter_a = wave(CO * 3 * 3 * C, 0.5f, 0.0f);
    std::vector<float> bias_a = wave(CO, 0.2f, -0.1f);
    std::vector<float> filter_b = wave(CO * 1 * 3 * C, 0.8f, 0.05f);
    std::vector<float> beta = wave(CO, 0.3f, 0.2f);

    ConvReluAdd() {
        conv_a.stride_h = 2, conv_a.dilation_w = 2;
        conv_a.pad_top = 1, conv_a.pad_left = 2, conv_a.pad_bottom = 1;
        conv_b.stride_h = 2;
        conv_b.relu = true;
    }

    kes::ir::Graph graph() const {
        kes::ir::Graph g;
        const int32_t x = act(g, "x", {1, H, W, C}, KES_LAYOUT_NHWC);
        const int32_t fa = g.add_constant_f32("filter_a", {CO, 3, 3, C}, filter_a);
        const int32_t ba = g.add_constant_f32("bias_a", {CO}, bias_a);
        const int32_t fb = g.add_constant_f32("filter_b", {CO, 1, 3, C}, filter_b);
        const int32_t be = g.add_constant_f32("beta", {CO}, beta);
        const int32_t a = act(g, "a", {1, OH, OW, CO}, KES_LAYOUT_NHWC);
        const int32_t r = act(g, "r", {1, OH, OW, CO}, KES_LAYOUT_NHWC);
        const int32_t s = act(g, "s", {1, OH, OW, CO}, KES_LAYOUT_NHWC);
        const int32_t t = act(g, "t", {1, OH, OW, CO}, KES_LAYOUT_NHWC);
        const int32_t y = act(g, "y", {1, OH, OW, CO}, KES_LAYOUT_NHWC);
        g.inputs = {x};
        g.outputs = {y};
        conv_a.to_attrs(g.add_node("Conv", {x, fa, ba}, {a}, "conv_a").attrs, 3, 3);
        g.add_node("Relu", {a}, {r}, "relu");
        conv_b.to_attrs(g.add_node("Conv", {x, fb}, {s}, "conv_b").attrs, 1, 3);
        g.add_node("Add", {r, s}, {t}, "add");
        g.add_node("Add", {t, be}, {y}, "add_beta");
        return g;
    }
    kes::ir::KomImage build() const { return kes::ir::write_kom(graph()); }
};

// TFLite's PReLU pattern: y = relu(x) + alpha * (x - |x|), x [2,3,4], alpha [4] (broadcast).
struct Prelu {
    std::vector<float> alpha = wave(4, 0.1f, 0.2f);
    kes::ir::Graph graph() const {
        kes::ir::Graph g;
        const int32_t x = act(g, "x", {2, 3, 4});
        const int32_t al = g.add_constant_f32("alpha", {4}, alpha);
        const int32_t r = act(g, "relu", {2, 3, 4});
        const int32_t ab = act(g, "abs", {2, 3, 4});
        const int32_t d = act(g, "diff", {2, 3, 4});
        const int32_t m = act(g, "scaled", {2, 3, 4});
        const int32_t y = act(g, "y", {2, 3, 4});
        g.inputs = {x};
        g.outputs = {y};
        g.add_node("Relu", {x}, {r});
        g.add_node("Abs", {x}, {ab});
        g.add_node("Sub", {x, ab}, {d});
        g.add_node("Mul", {al, d}, {m});
        g.add_node("Add", {r, m}, {y});
        return g;
    }
    kes::ir::KomImage build() const { return kes::ir::write_kom(graph()); }
};

// x [2,3,4] → Reshape [6,4] → Gemm (W [5,4] transposed, bias, fused Relu) → MatMul with B [5,2] → y [6,2];
// a second output is the reshaped input itself (an alias of x's bytes).
struct Dense {
    std::vector<float> w = wave(5 * 4, 0.6f, 0.0f);
    std::vector<float> bias = wave(5, 0.3f, 0.1f);
    std::vector<float> bmat = wave(5 * 2, 0.9f, -0.2f);
    kes::ir::Graph graph() const {
        kes::ir::Graph g;
        const int32_t x = act(g, "x", {2, 3, 4});
        const int32_t shape = g.add_constant_i64("flat_shape", {2}, {6, 4});
        const int32_t flat = act(g, "flat", {6, 4});
        const int32_t wt = g.add_constant_f32("w", {5, 4}, w);
        const int32_t bs = g.add_constant_f32("bias", {5}, bias);
        const int32_t bm = g.add_constant_f32("bmat", {5, 2}, bmat);
        const int32_t h = act(g, "h", {6, 5});
        const int32_t y = act(g, "y", {6, 2});
        g.inputs = {x};
        g.outputs = {y, flat};
        g.add_node("Reshape", {x, shape}, {flat});
        kes::ir::Node& fc = g.add_node("Gemm", {flat, wt, bs}, {h});
        fc.attrs.set_int("transB", 1);
        fc.attrs.set_string("activation", "Relu");
        g.add_node("MatMul", {h, bm}, {y});
        return g;
    }
    kes::ir::KomImage build(bool alias = true) const {
        kes::ir::WriteOptions o;
        o.alias_reshapes = alias;
        return kes::ir::write_kom(graph(), o);
    }
};

}  // namespace kes_test
