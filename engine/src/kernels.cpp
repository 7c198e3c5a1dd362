#include "kernels.hpp"

#include <cmath>
#include <cstring>

namespace kes {

namespace {

inline float apply(Op op, float x, float y) {
    switch (op) {
        case Op::Add: return x + y;
        case Op::Sub: return x - y;
        default: return x * y;
    }
}

// Element strides of `t` seen through the output's shape (right-aligned, 0 where broadcast).
void broadcast_strides(const TensorInfo& t, const TensorInfo& out, int64_t* strides) {
    int64_t s = 1;
    const uint32_t shift = out.ndim - t.ndim;
    for (uint32_t d = out.ndim; d-- > 0;) {
        if (d < shift) {
            strides[d] = 0;
            continue;
        }
        const int64_t extent = t.shape[d - shift];
        strides[d] = extent == 1 ? 0 : s;
        s *= extent;
    }
}

}  // namespace

void kernel_binary(Op op, const TensorInfo& a, const float* pa, const TensorInfo& b, const float* pb,
                   const TensorInfo& out, float* po, bool relu) {
    const uint64_t n = out.elements;
    if (n == 0) return;
    if (a.elements == n && b.elements == n) {
        for (uint64_t i = 0; i < n; ++i) {
            const float v = apply(op, pa[i], pb[i]);
            po[i] = relu && v < 0.0f ? 0.0f : v;
        }
        return;
    }
    int64_t sa[KES_TENSOR_MAX_DIMS] = {}, sb[KES_TENSOR_MAX_DIMS] = {}, idx[KES_TENSOR_MAX_DIMS] = {};
    broadcast_strides(a, out, sa);
    broadcast_strides(b, out, sb);
    int64_t ia = 0, ib = 0;
    for (uint64_t i = 0; i < n; ++i) {
        const float v = apply(op, pa[ia], pb[ib]);
        po[i] = relu && v < 0.0f ? 0.0f : v;
        for (uint32_t d = out.ndim; d-- > 0;) {  // odometer increment of the output index
            ia += sa[d];
            ib += sb[d];
            if (++idx[d] < out.shape[d]) break;
            ia -= sa[d] * idx[d];
            ib -= sb[d] * idx[d];
            idx[d] = 0;
        }
    }
}

void kernel_unary(Op op, uint64_t count, const float* in, float* out) {
    if (op == Op::Relu) {
        for (uint64_t i = 0; i < count; ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
    } else if (op == Op::Abs) {
        for (uint64_t i = 0; i < count; ++i) out[i] = std::fabs(in[i]);
    } else if (in != out) {  // Reshape that could not alias
        std::memmove(out, in, count * sizeof(float));
    }
}

void kernel_conv2d(const NodeInfo& node, const TensorInfo& in, const float* pin, const TensorInfo& filter,
                   const float* pf, const float* bias, const TensorInfo& out, float* pout) {
    const int64_t N = in.shape[0], H = in.shape[1], W = in.shape[2], C = in.shape[3];
    const int64_t KH = filter.shape[1], KW = filter.shape[2];
    const int64_t OH = out.shape[1], OW = out.shape[2], CO = out.shape[3];
    for (int64_t n = 0; n < N; ++n)
        for (int64_t oh = 0; oh < OH; ++oh)
            for (int64_t ow = 0; ow < OW; ++ow)
                for (int64_t co = 0; co < CO; ++co) {
                    float acc = bias ? bias[co] : 0.0f;
                    for (int64_t kh = 0; kh < KH; ++kh) {
                        const int64_t ih = oh * node.stride_h - node.pad_top + kh * node.dilation_h;
                        if (ih < 0 || ih >= H) continue;
                        for (int64_t kw = 0; kw < KW; ++kw) {
                            const int64_t iw = ow * node.stride_w - node.pad_left + kw * node.dilation_w;
                            if (iw < 0 || iw >= W) continue;
                            const float* x = pin + ((n * H + ih) * W + iw) * C;
                            const float* w = pf + ((co * KH + kh) * KW + kw) * C;
                            for (int64_t c = 0; c < C; ++c) acc += x[c] * w[c];
                        }
                    }
                    if (node.fused_relu && acc < 0.0f) acc = 0.0f;
                    pout[((n * OH + oh) * OW + ow) * CO + co] = acc;
                }
}

void kernel_fully_connected(const TensorInfo& in, const float* pin, const TensorInfo& w, const float* pw,
                            const float* bias, float* pout, bool relu) {
    const int64_t N = in.shape[0], K = in.shape[1], CO = w.shape[0];
    for (int64_t n = 0; n < N; ++n)
        for (int64_t co = 0; co < CO; ++co) {
            float acc = bias ? bias[co] : 0.0f;
            for (int64_t k = 0; k < K; ++k) acc += pin[n * K + k] * pw[co * K + k];
            pout[n * CO + co] = relu && acc < 0.0f ? 0.0f : acc;
        }
}

void kernel_matmul(const TensorInfo& a, const float* pa, const TensorInfo& b, const float* pb, float* pout) {
    const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[1];
    for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
            float acc = 0.0f;
            for (int64_t k = 0; k < K; ++k) acc += pa[m * K + k] * pb[k * N + n];
            pout[m * N + n] = acc;
        }
}

}  // namespace kes
