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
// - Landmarks2TransformMatrix (L [N, K, 3] or [N, K·3]) → M [N, 4, 4] (version 2): the row-major affine
//   matrix from a crop's pixel grid to the landmarks' coordinates. The crop is rotated so that the
//   line from landmark left_rotation_idx to right_rotation_idx lies at target_rotation_radians, holds
//   the landmarks subset_idxs (their rotated bounding box, centred), is scaled by scale_x/scale_y and
//   has output_width × output_height pixels: M = T(centre) · R(−rotation) · S(size · scale / output) ·
//   T(−output / 2).
// - TransformLandmarks (L [N, K, D≥2], M [N, 4, 4]) → L' (version 2): x, y ← M's 2×2 block times (x, y)
//   plus its translation column; further coordinates are copied.
// - TransformTensorBilinear (X [N, H, W, C], M [N, 4, 4]) → Y [N, output_height, output_width, C]
//   (version 2): Y(x, y) samples X bilinearly at M · (x + ½, y + ½) − ½ (pixel centres); a point
//   outside [0, W−1] × [0, H−1] gives 0.
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

// Input 1 of the transform ops: one row-major 4×4 matrix per batch entry.
void require_matrices(const TensorDesc& m, int64_t batch) {
    require_dtype(m, KES_F32, "the matrix input");
    if (shape_elements(m.shape) != batch * 16 || m.rank() < 2 || m.shape.back() != 4 ||
        m.shape[m.shape.size() - 2] != 4)
        fail(KES_ERR_INVALID_ARGUMENT, "matrix input %s is not %lld row-major 4x4 matrices",
             shape_string(m.shape).c_str(), static_cast<long long>(batch));
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

// ---- Landmarks2TransformMatrix ------------------------------------------------------------------------------

std::unique_ptr<Kernel> create_landmarks_to_matrix(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& l = *node.inputs[0];
    require_dtype(l, KES_F32, "landmarks input");
    if (l.rank() < 2 || l.shape[0] < 1 || shape_elements(l.shape) % (3 * l.shape[0]) != 0)
        fail(KES_ERR_INVALID_ARGUMENT, "landmarks %s are not [N, K, 3] (or [N, K*3])", shape_string(l.shape).c_str());
    const int64_t batch = l.shape[0], count = shape_elements(l.shape) / (3 * batch);
    const Attrs& a = node.attrs;
    const int64_t left = a.require_int("left_rotation_idx"), right = a.require_int("right_rotation_idx");
    const std::vector<int64_t> subset = a.require_ints("subset_idxs");
    const int64_t out_h = a.require_int("output_height"), out_w = a.require_int("output_width");
    const float scale_x = a.get_float("scale_x", 1.0f), scale_y = a.get_float("scale_y", 1.0f);
    const float target = a.get_float("target_rotation_radians", 0.0f);
    check_geometry("attribute 'output_height'", out_h, 1);
    check_geometry("attribute 'output_width'", out_w, 1);
    if (subset.empty()) fail(KES_ERR_INVALID_ARGUMENT, "attribute 'subset_idxs' is empty");
    std::vector<int64_t> used = subset;
    used.push_back(left), used.push_back(right);
    for (int64_t i : used)
        if (i < 0 || i >= count)
            fail(KES_ERR_INVALID_ARGUMENT, "landmark index %lld is outside the %lld landmarks",
                 static_cast<long long>(i), static_cast<long long>(count));
    outputs[0].dtype = KES_F32;
    outputs[0].shape = {batch, 4, 4};
    return make_kernel([=](const void* const* in, void* const* out) {
        for (int64_t b = 0; b < batch; ++b) {
            const float* p = in_as<float>(in, 0) + b * count * 3;
            float* m = out_as<float>(out, 0) + b * 16;
            const double lx = p[3 * left], ly = p[3 * left + 1], rx = p[3 * right], ry = p[3 * right + 1];
            const double rotation = target - std::atan2(ry - ly, rx - lx);
            const double cr = std::cos(rotation), sr = std::sin(rotation);
            // The subset's bounding box in the crop's orientation.
            double min_u = 0, max_u = 0, min_v = 0, max_v = 0;
            for (size_t i = 0; i < subset.size(); ++i) {
                const double x = p[3 * subset[i]], y = p[3 * subset[i] + 1];
                const double u = cr * x - sr * y, v = sr * x + cr * y;
                if (i == 0 || u < min_u) min_u = u;
                if (i == 0 || u > max_u) max_u = u;
                if (i == 0 || v < min_v) min_v = v;
                if (i == 0 || v > max_v) max_v = v;
            }
            const double cu = (min_u + max_u) / 2, cv = (min_v + max_v) / 2;
            const double cx = cr * cu + sr * cv, cy = -sr * cu + cr * cv;  // the centre back in image axes
            const double sx = scale_x * (max_u - min_u) / static_cast<double>(out_w);
            const double sy = scale_y * (max_v - min_v) / static_cast<double>(out_h);
            // R(−rotation) · S, then the translation that puts the crop's middle pixel on the centre.
            const double a00 = cr * sx, a01 = sr * sy, a10 = -sr * sx, a11 = cr * sy;
            const double hw = static_cast<double>(out_w) / 2, hh = static_cast<double>(out_h) / 2;
            const double rows[16] = {a00, a01, 0, cx - a00 * hw - a01 * hh,  //
                                     a10, a11, 0, cy - a10 * hw - a11 * hh,  //
                                     0,   0,   1, 0,                         //
                                     0,   0,   0, 1};
            for (int k = 0; k < 16; ++k) m[k] = static_cast<float>(rows[k]);
        }
    });
}

// ---- TransformLandmarks -----------------------------------------------------------------------------------

std::unique_ptr<Kernel> create_transform_landmarks(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& l = *node.inputs[0];
    require_dtype(l, KES_F32, "landmarks input");
    if (l.rank() != 3 || l.shape[2] < 2)
        fail(KES_ERR_INVALID_ARGUMENT, "landmarks %s are not [N, K, D >= 2]", shape_string(l.shape).c_str());
    const int64_t batch = l.shape[0], count = l.shape[1], dims = l.shape[2];
    require_matrices(*node.inputs[1], batch);
    outputs[0].dtype = KES_F32;
    outputs[0].shape = l.shape;
    return make_kernel([=](const void* const* in, void* const* out) {
        const float* pl = in_as<float>(in, 0);
        float* po = out_as<float>(out, 0);
        for (int64_t b = 0; b < batch; ++b) {
            const float* m = in_as<float>(in, 1) + b * 16;
            for (int64_t k = 0; k < count; ++k) {
                const float* p = pl + (b * count + k) * dims;
                float* o = po + (b * count + k) * dims;
                const float x = p[0], y = p[1];
                for (int64_t d = 2; d < dims; ++d) o[d] = p[d];
                o[0] = m[0] * x + m[1] * y + m[3];
                o[1] = m[4] * x + m[5] * y + m[7];
            }
        }
    });
}

// ---- TransformTensorBilinear -------------------------------------------------------------------------------

std::unique_ptr<Kernel> create_transform_tensor(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    require_f32_nhwc(x, "input X");
    const int64_t n = x.shape[0], h = x.shape[1], w = x.shape[2], c = x.shape[3];
    require_matrices(*node.inputs[1], n);
    const int64_t out_h = node.attrs.require_int("output_height"), out_w = node.attrs.require_int("output_width");
    check_geometry("attribute 'output_height'", out_h, 1);
    check_geometry("attribute 'output_width'", out_w, 1);
    outputs[0].dtype = KES_F32;
    outputs[0].shape = {n, out_h, out_w, c};
    return make_kernel([=](const void* const* in, void* const* out) {
        const float* px = in_as<float>(in, 0);
        float* py = out_as<float>(out, 0);
        for (int64_t b = 0; b < n; ++b) {
            const float* m = in_as<float>(in, 1) + b * 16;
            const float* img = px + b * h * w * c;
            for (int64_t oy = 0; oy < out_h; ++oy)
                for (int64_t ox = 0; ox < out_w; ++ox) {
                    float* o = py + ((b * out_h + oy) * out_w + ox) * c;
                    const float fx = static_cast<float>(ox) + 0.5f, fy = static_cast<float>(oy) + 0.5f;
                    const float u = m[0] * fx + m[1] * fy + m[3] - 0.5f;
                    const float v = m[4] * fx + m[5] * fy + m[7] - 0.5f;
                    if (!(u >= 0.0f && u <= static_cast<float>(w - 1) && v >= 0.0f && v <= static_cast<float>(h - 1))) {
                        std::fill(o, o + c, 0.0f);
                        continue;
                    }
                    const int64_t x0 = static_cast<int64_t>(std::floor(u)), y0 = static_cast<int64_t>(std::floor(v));
                    const float ax = u - static_cast<float>(x0), ay = v - static_cast<float>(y0);
                    // The right/lower neighbour is past the edge only with weight 0 (u = W−1 exactly).
                    const int64_t x1 = std::min(x0 + 1, w - 1), y1 = std::min(y0 + 1, h - 1);
                    const float* p00 = img + (y0 * w + x0) * c;
                    const float* p01 = img + (y0 * w + x1) * c;
                    const float* p10 = img + (y1 * w + x0) * c;
                    const float* p11 = img + (y1 * w + x1) * c;
                    for (int64_t ch = 0; ch < c; ++ch) {
                        const float top = (1.0f - ax) * p00[ch] + ax * p01[ch];
                        const float bottom = (1.0f - ax) * p10[ch] + ax * p11[ch];
                        o[ch] = (1.0f - ay) * top + ay * bottom;
                    }
                }
        }
    });
}

}  // namespace

void add_mediapipe_ops(OpList& ops) {
    ops.push_back({"MaxPoolingWithArgmax2D", 1, 1, 2, 2, create_max_pool_argmax});
    ops.push_back({"MaxUnpooling2D", 2, 2, 1, 1, create_max_unpool});
    ops.push_back({"Landmarks2TransformMatrix", 1, 1, 1, 1, create_landmarks_to_matrix});
    ops.push_back({"TransformLandmarks", 2, 2, 1, 1, create_transform_landmarks});
    ops.push_back({"TransformTensorBilinear", 2, 2, 1, 1, create_transform_tensor});
}

}  // namespace kes
