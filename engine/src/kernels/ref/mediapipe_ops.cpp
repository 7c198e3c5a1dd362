// mediapipe_ops.cpp — MediaPipe's custom TFLite operators (mediapipe/util/tflite/operations), f32, NHWC,
// written from their published semantics; the TFLite importer maps the custom ops onto these.
//
// - MaxPoolingWithArgmax2D (X) → (Y, I): a TF-padded max pool (kernel_shape, strides, auto_pad
//   SAME_UPPER or VALID, optional fused activation on Y) that also writes, as a float, where in its
//   window each maximum was: I = ky · kernel_w + kx (the first maximum in row-major window order;
//   padding never wins).
// - MaxUnpooling2D (Y, I) → X: the inverse scatter. Each input value goes to the output pixel its
//   index names inside the window of its position (windows as a transposed conv: kernel_shape,
//   strides, pads, output_padding); every other output is 0, a later write to the same pixel wins.
//   An index that is not a whole number inside the window is refused when the kernel runs.
#include <algorithm>
#include <cmath>
#include <limits>

#include "op_util.hpp"
#include "ops.hpp"

namespace kes {

namespace {

void require_f32_nhwc(const TensorDesc& t, const char* what) {
    require_dtype(t, KES_F32, what);
    if (t.rank() != 4)
        fail(KES_ERR_INVALID_ARGUMENT, "%s has shape %s; expected 4-d NHWC", what, shape_string(t.shape).c_str());
}

// ---- MaxPoolingWithArgmax2D ------------------------------------------------------------------------------

std::unique_ptr<Kernel> create_max_pool_argmax(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    require_f32_nhwc(x, "input X");
    const Shape kernel = node.attrs.require_ints("kernel_shape");
    if (kernel.size() != 2) fail(KES_ERR_INVALID_ARGUMENT, "attribute 'kernel_shape' needs 2 values");
    for (int64_t k : kernel) check_geometry("attribute 'kernel_shape'", k, 1);
    const std::vector<Window> win = resolve_windows(node.attrs, {x.shape[1], x.shape[2]}, kernel, false);
    const Activation act = Activation::from_attrs(node.attrs);
    const int64_t n = x.shape[0], h = x.shape[1], w = x.shape[2], c = x.shape[3];
    const Window wy = win[0], wx = win[1];
    for (TensorDesc& o : outputs) o.dtype = KES_F32, o.shape = {n, wy.out, wx.out, c};
    return make_kernel([=](const void* const* in, void* const* out) {
        const float* px = in_as<float>(in, 0);
        float* py = out_as<float>(out, 0);
        float* pi = out_as<float>(out, 1);
        for (int64_t b = 0; b < n; ++b)
            for (int64_t oy = 0; oy < wy.out; ++oy)
                for (int64_t ox = 0; ox < wx.out; ++ox)
                    for (int64_t ch = 0; ch < c; ++ch) {
                        float best = -std::numeric_limits<float>::infinity();
                        int64_t at = -1;
                        for (int64_t ky = 0; ky < wy.kernel; ++ky) {
                            const int64_t iy = oy * wy.stride - wy.pad_begin + ky;
                            if (iy < 0 || iy >= h) continue;
                            for (int64_t kx = 0; kx < wx.kernel; ++kx) {
                                const int64_t ix = ox * wx.stride - wx.pad_begin + kx;
                                if (ix < 0 || ix >= w) continue;
                                const float v = px[((b * h + iy) * w + ix) * c + ch];
                                if (at < 0 || v > best) best = v, at = ky * wx.kernel + kx;
                            }
                        }
                        const int64_t o = ((b * wy.out + oy) * wx.out + ox) * c + ch;
                        py[o] = act.apply(at < 0 ? 0.0f : best);
                        pi[o] = static_cast<float>(at < 0 ? 0 : at);
                    }
    });
}

// ---- MaxUnpooling2D ----------------------------------------------------------------------------------------

std::unique_ptr<Kernel> create_max_unpool(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& y = *node.inputs[0];
    const TensorDesc& idx = *node.inputs[1];
    require_f32_nhwc(y, "input Y");
    require_dtype(idx, KES_F32, "indices I");
    if (idx.shape != y.shape)
        fail(KES_ERR_INVALID_ARGUMENT, "indices %s and values %s differ in shape", shape_string(idx.shape).c_str(),
             shape_string(y.shape).c_str());
    const Shape kernel = node.attrs.require_ints("kernel_shape");
    if (kernel.size() != 2) fail(KES_ERR_INVALID_ARGUMENT, "attribute 'kernel_shape' needs 2 values");
    const std::vector<Window> win =
        resolve_transposed_windows(node.attrs, {y.shape[1], y.shape[2]}, kernel, Layout::NHWC);
    const int64_t n = y.shape[0], h = y.shape[1], w = y.shape[2], c = y.shape[3];
    const Window wy = win[0], wx = win[1];
    outputs[0].dtype = KES_F32;
    outputs[0].shape = {n, wy.out, wx.out, c};
    const int64_t taps = wy.kernel * wx.kernel;
    return make_kernel([=](const void* const* in, void* const* out) {
        const float* pv = in_as<float>(in, 0);
        const float* pi = in_as<float>(in, 1);
        float* px = out_as<float>(out, 0);
        std::fill(px, px + n * wy.out * wx.out * c, 0.0f);
        for (int64_t b = 0; b < n; ++b)
            for (int64_t iy = 0; iy < h; ++iy)
                for (int64_t ix = 0; ix < w; ++ix)
                    for (int64_t ch = 0; ch < c; ++ch) {
                        const int64_t i = ((b * h + iy) * w + ix) * c + ch;
                        const float f = pi[i];
                        if (!(f >= 0.0f && f < static_cast<float>(taps)) || f != std::floor(f))
                            fail(KES_ERR_INVALID_ARGUMENT,
                                 "index %g at element %lld is not a position in a %lldx%lld window",
                                 static_cast<double>(f), static_cast<long long>(i), static_cast<long long>(wy.kernel),
                                 static_cast<long long>(wx.kernel));
                        const int64_t k = static_cast<int64_t>(f);
                        const int64_t oy = iy * wy.stride - wy.pad_begin + k / wx.kernel;
                        const int64_t ox = ix * wx.stride - wx.pad_begin + k % wx.kernel;
                        if (oy < 0 || oy >= wy.out || ox < 0 || ox >= wx.out) continue;  // in the padding
                        px[((b * wy.out + oy) * wx.out + ox) * c + ch] = pv[i];
                    }
    });
}

}  // namespace

void add_mediapipe_ops(OpList& ops) {
    ops.push_back({"MaxPoolingWithArgmax2D", 1, 1, 2, 2, create_max_pool_argmax});
    ops.push_back({"MaxUnpooling2D", 2, 2, 1, 1, create_max_unpool});
}

}  // namespace kes
