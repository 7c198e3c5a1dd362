// Small hand-built models shared by the engine tests and the fuzz seed writer.
#pragma once

#include <cmath>
#include <vector>

#include "kom_builder.hpp"

namespace kes_test {

inline std::vector<float> wave(size_t n, float scale, float bias) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.7f * static_cast<float>(i) + 0.3f) + bias;
    return v;
}

// y = relu(conv_a(x)) + conv_b(x) + beta, x [1,5,6,3] NHWC:
//   conv_a: 3x3 OHWI, Cout 4, stride 2/1, dilation 1/2, pads top 1 left 2 bottom 1 right 0, bias → [1,3,4,4]
//   conv_b: 1x3, stride 2/1, no pads, no bias, fused Relu                                     → [1,3,4,4]
//   beta:   [4], broadcast over N, H, W
struct ConvReluAdd {
    static constexpr int64_t H = 5, W = 6, C = 3, CO = 4, OH = 3, OW = 4;
    kes::NodeInfo conv_a, conv_b;
    std::vector<float> filter_a = wave(CO * 3 * 3 * C, 0.5f, 0.0f);
    std::vector<float> bias_a = wave(CO, 0.2f, -0.1f);
    std::vector<float> filter_b = wave(CO * 1 * 3 * C, 0.8f, 0.05f);
    std::vector<float> beta = wave(CO, 0.3f, 0.2f);

    ConvReluAdd() {
        conv_a.stride_h = 2, conv_a.dilation_w = 2;
        conv_a.pad_top = 1, conv_a.pad_left = 2, conv_a.pad_bottom = 1;
        conv_b.stride_h = 2;
        conv_b.fused_relu = true;
    }

    kes::KomImage build() const {
        kes::KomBuilder b;
        const int32_t x = b.tensor("x", {1, H, W, C}, KES_LAYOUT_NHWC);
        const int32_t fa = b.weight("filter_a", {CO, 3, 3, C}, filter_a);
        const int32_t ba = b.weight("bias_a", {CO}, bias_a);
        const int32_t fb = b.weight("filter_b", {CO, 1, 3, C}, filter_b);
        const int32_t be = b.weight("beta", {CO}, beta);
        const int32_t a = b.tensor("a", {1, OH, OW, CO}, KES_LAYOUT_NHWC);
        const int32_t r = b.tensor("r", {1, OH, OW, CO}, KES_LAYOUT_NHWC);
        const int32_t s = b.tensor("s", {1, OH, OW, CO}, KES_LAYOUT_NHWC);
        const int32_t t = b.tensor("t", {1, OH, OW, CO}, KES_LAYOUT_NHWC);
        const int32_t y = b.tensor("y", {1, OH, OW, CO}, KES_LAYOUT_NHWC);
        b.input(x);
        b.output(y);
        b.node(kes::Op::Conv2D, {x, fa, ba}, a, conv_a, "conv_a");
        b.node(kes::Op::Relu, {a}, r, {}, "relu");
        b.node(kes::Op::Conv2D, {x, fb}, s, conv_b, "conv_b");
        b.node(kes::Op::Add, {r, s}, t, {}, "add");
        b.node(kes::Op::Add, {t, be}, y, {}, "add_beta");
        return b.finish();
    }
};

// TFLite's PReLU pattern: y = relu(x) + alpha * (x - |x|), x [2,3,4], alpha [4] (broadcast).
struct Prelu {
    std::vector<float> alpha = wave(4, 0.1f, 0.2f);
    kes::KomImage build() const {
        kes::KomBuilder b;
        const int32_t x = b.tensor("x", {2, 3, 4});
        const int32_t al = b.weight("alpha", {4}, alpha);
        const int32_t r = b.tensor("relu", {2, 3, 4});
        const int32_t ab = b.tensor("abs", {2, 3, 4});
        const int32_t d = b.tensor("diff", {2, 3, 4});
        const int32_t m = b.tensor("scaled", {2, 3, 4});
        const int32_t y = b.tensor("y", {2, 3, 4});
        b.input(x);
        b.output(y);
        b.node(kes::Op::Relu, {x}, r);
        b.node(kes::Op::Abs, {x}, ab);
        b.node(kes::Op::Sub, {x, ab}, d);
        b.node(kes::Op::Mul, {al, d}, m);
        b.node(kes::Op::Add, {r, m}, y);
        return b.finish();
    }
};

// x [2,3,4] → Reshape [6,4] → FullyConnected (W [5,4], bias, Relu) → MatMul with B [5,2] → y [6,2];
// a second output is the reshaped input itself (an alias of x's bytes).
struct Dense {
    std::vector<float> w = wave(5 * 4, 0.6f, 0.0f);
    std::vector<float> bias = wave(5, 0.3f, 0.1f);
    std::vector<float> bmat = wave(5 * 2, 0.9f, -0.2f);
    kes::KomImage build(bool alias = true) const {
        kes::KomBuilder b;
        b.alias_reshapes(alias);
        const int32_t x = b.tensor("x", {2, 3, 4});
        const int32_t flat = b.tensor("flat", {6, 4});
        const int32_t wt = b.weight("w", {5, 4}, w);
        const int32_t bs = b.weight("bias", {5}, bias);
        const int32_t bm = b.weight("bmat", {5, 2}, bmat);
        const int32_t h = b.tensor("h", {6, 5});
        const int32_t y = b.tensor("y", {6, 2});
        b.input(x);
        b.output(y);
        b.output(flat);
        b.node(kes::Op::Reshape, {x}, flat);
        kes::NodeInfo fc;
        fc.fused_relu = true;
        b.node(kes::Op::FullyConnected, {flat, wt, bs}, h, fc);
        b.node(kes::Op::MatMul, {h, bm}, y);
        return b.finish();
    }
};

}  // namespace kes_test
