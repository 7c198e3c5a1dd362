// resize.cpp — Resize: plan_resize builds the tap tables (op_util.hpp), which this reference kernel
// and the fast NHWC one (kernels/common/resize_nhwc.cpp) sample alike.
//
// Choices:
// - Resize (opset 13..18 inputs X, roi, scales, sizes; an empty scales/roi tensor counts as absent):
//   f32 data; modes nearest (round_prefer_floor, round_prefer_ceil, floor, ceil), linear and cubic
//   (cubic_coeff_a, exclude_outside), over any axes (each axis is separable; at most 3 axes may change).
//   Coordinate modes half_pixel, pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn,
//   tf_crop_and_resize (roi must be constant; outside samples get extrapolation_value),
//   half_pixel_symmetric. Output size from scales is floor(in × scale) computed in double from the f32
//   scale; with sizes the scale is out / in. Linear/cubic sample with edge clamping (ONNX's edge
//   padding). The opset-18 "axes" attribute and keep_aspect_ratio_policy (with sizes) are honoured.
//   Kestrel's own "kes_size_ratio" (ints, num and den per resized axis; with sizes) makes the output
//   follow the input: each listed axis becomes in × num / den, which must be whole, and "sizes" is the
//   size at the input the file was made for. It is how a TFLite RESIZE to a non-integer ratio of its
//   input (a constant size there) follows dynamic image gears: the gear of a size that ratio cannot
//   serve is refused, naming the axis.
#include <algorithm>
#include <cmath>
#include <limits>

#include "op_util.hpp"
#include "ops.hpp"

namespace kes {

namespace {

// ---- Resize ---------------------------------------------------------------------------------------------

double cubic_weight(double s, double a) {
    s = std::fabs(s);
    if (s <= 1.0) return ((a + 2.0) * s - (a + 3.0)) * s * s + 1.0;
    if (s < 2.0) return ((a * s - 5.0 * a) * s + 8.0 * a) * s - 4.0 * a;
    return 0.0;
}

}  // namespace

ResizePlan plan_resize(const NodeDesc& node) {
    const TensorDesc& x = *node.inputs[0];
    require_dtype(x, KES_F32, "input X");
    const size_t r = x.shape.size();
    if (r > static_cast<size_t>(kMaxRank)) fail(KES_ERR_UNSUPPORTED, "rank %zu exceeds %d", r, kMaxRank);
    const std::string mode = get_choice(node.attrs, "mode", "nearest", {"nearest", "linear", "cubic"});
    const std::string ctm = get_choice(node.attrs, "coordinate_transformation_mode", "half_pixel",
                                       {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                        "tf_half_pixel_for_nn", "tf_crop_and_resize", "half_pixel_symmetric"});
    const std::string nearest_mode = get_choice(node.attrs, "nearest_mode", "round_prefer_floor",
                                                {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"});
    const std::string policy =
        get_choice(node.attrs, "keep_aspect_ratio_policy", "stretch", {"stretch", "not_larger", "not_smaller"});
    const double cubic_a = node.attrs.get_float("cubic_coeff_a", -0.75f);
    const bool exclude_outside = node.attrs.get_int("exclude_outside", 0) != 0;
    const float extrapolation = node.attrs.get_float("extrapolation_value", 0.0f);
    std::vector<int64_t> axes = node.attrs.get_ints("axes");
    if (axes.empty())
        for (size_t d = 0; d < r; ++d) axes.push_back(static_cast<int64_t>(d));
    for (int64_t& a : axes) a = normalize_axis(a, static_cast<int64_t>(r));

    const TensorDesc* roi_t = node.input(1);
    const TensorDesc* scales_t = node.input(2);
    const TensorDesc* sizes_t = node.input(3);
    if (scales_t && scales_t->elements() == 0) scales_t = nullptr;
    if (roi_t && roi_t->elements() == 0) roi_t = nullptr;
    if ((scales_t != nullptr) == (sizes_t != nullptr))
        fail(KES_ERR_INVALID_ARGUMENT, "exactly one of the inputs scales and sizes must be given");
    std::vector<double> scale(r, 1.0);
    Shape out = x.shape;
    if (scales_t) {
        const std::vector<float> s = const_floats(*scales_t, "input scales");
        if (s.size() != axes.size())
            fail(KES_ERR_INVALID_ARGUMENT, "input scales has %zu values; expected %zu", s.size(), axes.size());
        for (size_t i = 0; i < axes.size(); ++i) {
            const size_t d = static_cast<size_t>(axes[i]);
            if (!(s[i] > 0.0f)) fail(KES_ERR_INVALID_ARGUMENT, "input scales has a non-positive value");
            scale[d] = s[i];
        }
    } else {
        std::vector<int64_t> s = const_int_list(*sizes_t, "input sizes");
        if (s.size() != axes.size())
            fail(KES_ERR_INVALID_ARGUMENT, "input sizes has %zu values; expected %zu", s.size(), axes.size());
        if (node.attrs.has("kes_size_ratio")) {
            const std::vector<int64_t> ratio = node.attrs.get_ints("kes_size_ratio");
            if (ratio.size() != 2 * axes.size())
                fail(KES_ERR_INVALID_ARGUMENT, "kes_size_ratio has %zu values; expected %zu (num, den per axis)",
                     ratio.size(), 2 * axes.size());
            for (size_t i = 0; i < axes.size(); ++i) {
                const int64_t num = ratio[2 * i], den = ratio[2 * i + 1];
                const int64_t in = x.shape[static_cast<size_t>(axes[i])];
                if (num <= 0 || den <= 0 || num > kMaxGeometry || den > kMaxGeometry)
                    fail(KES_ERR_INVALID_ARGUMENT, "kes_size_ratio %lld/%lld is not a positive ratio",
                         static_cast<long long>(num), static_cast<long long>(den));
                if ((in * num) % den != 0)
                    fail(KES_ERR_UNSUPPORTED,
                         "Resize follows its input at %lld/%lld along axis %lld, and %lld x %lld/%lld is not a "
                         "whole size",
                         static_cast<long long>(num), static_cast<long long>(den), static_cast<long long>(axes[i]),
                         static_cast<long long>(in), static_cast<long long>(num), static_cast<long long>(den));
                s[i] = in * num / den;
            }
        }
        for (size_t i = 0; i < axes.size(); ++i) {
            const size_t d = static_cast<size_t>(axes[i]);
            check_geometry("an entry of input sizes", s[i], 0);
            out[d] = s[i];
            scale[d] = x.shape[d] ? static_cast<double>(s[i]) / static_cast<double>(x.shape[d]) : 1.0;
        }
        if (policy != "stretch" && !axes.empty()) {
            // One scale for all listed axes (the smallest / largest), sizes rounded half up (ONNX).
            double common = scale[static_cast<size_t>(axes[0])];
            for (int64_t a : axes)
                common = policy == "not_larger" ? std::min(common, scale[static_cast<size_t>(a)])
                                                : std::max(common, scale[static_cast<size_t>(a)]);
            for (int64_t a : axes) {
                const size_t d = static_cast<size_t>(a);
                scale[d] = common;
                const double size = std::floor(common * static_cast<double>(x.shape[d]) + 0.5);
                if (!(size >= 0.0 && size <= static_cast<double>(kMaxGeometry)))
                    fail(KES_ERR_UNSUPPORTED, "Resize output extent %g along axis %zu is out of range", size, d);
                out[d] = static_cast<int64_t>(size);
            }
        }
    }
    std::vector<double> roi_start(r, 0.0), roi_end(r, 1.0);
    if (ctm == "tf_crop_and_resize") {
        if (!roi_t) fail(KES_ERR_INVALID_ARGUMENT, "tf_crop_and_resize needs the roi input");
        const std::vector<float> roi = const_floats(*roi_t, "input roi");
        if (roi.size() != 2 * axes.size())
            fail(KES_ERR_INVALID_ARGUMENT, "input roi has %zu values; expected %zu", roi.size(), 2 * axes.size());
        for (size_t i = 0; i < axes.size(); ++i) {
            roi_start[static_cast<size_t>(axes[i])] = roi[i];
            roi_end[static_cast<size_t>(axes[i])] = roi[i + axes.size()];
        }
    }
    if (scales_t)
        for (size_t d = 0; d < r; ++d) {
            const double extent = ctm == "tf_crop_and_resize" ? (roi_end[d] - roi_start[d]) : 1.0;
            const double size = std::floor(static_cast<double>(x.shape[d]) * extent * scale[d]);
            if (!(size >= 0.0 && size <= static_cast<double>(kMaxGeometry)))
                fail(KES_ERR_UNSUPPORTED, "Resize output extent %g along axis %zu is out of range", size, d);
            out[d] = static_cast<int64_t>(size);
        }
    ResizePlan plan;
    plan.out = out;
    plan.extrapolation = extrapolation;
    if (shape_elements(out) == 0) return plan;
    if (x.elements() == 0) fail(KES_ERR_INVALID_ARGUMENT, "cannot resize an empty tensor to a non-empty one");
    int64_t table_entries = 0;
    for (int64_t o : out) table_entries += o * 4;
    if (table_entries > kMaxGeometry)
        fail(KES_ERR_UNSUPPORTED, "Resize output %s is too large for this reference kernel", shape_string(out).c_str());

    // Tap tables per axis. Axes whose mapping is the identity get one tap of weight 1.
    std::vector<int64_t>& tap_index = plan.tap_index;  // -1: outside (extrapolation value)
    std::vector<float>& tap_weight = plan.tap_weight;
    std::vector<ResizePlan::Axis>& axis = plan.axis;
    axis.resize(r);
    int changing = 0;
    for (size_t d = 0; d < r; ++d) {
        const int64_t in = x.shape[d], on = out[d];
        const double s = scale[d];
        const int taps = mode == "nearest" ? 1 : (mode == "linear" ? 2 : 4);
        axis[d].first = static_cast<int64_t>(tap_index.size());
        axis[d].taps = taps;
        for (int64_t o = 0; o < on; ++o) {
            double xo = 0.0;
            const double fo = static_cast<double>(o);
            if (ctm == "half_pixel") {
                xo = (fo + 0.5) / s - 0.5;
            } else if (ctm == "half_pixel_symmetric") {
                const double adj = static_cast<double>(on) / (s * static_cast<double>(in));
                const double center = static_cast<double>(in) / 2.0;
                xo = center * (1.0 - adj) + (fo + 0.5) / s - 0.5;
            } else if (ctm == "pytorch_half_pixel") {
                xo = on > 1 ? (fo + 0.5) / s - 0.5 : 0.0;
            } else if (ctm == "align_corners") {
                xo = on == 1 ? 0.0 : fo * static_cast<double>(in - 1) / static_cast<double>(on - 1);
            } else if (ctm == "asymmetric") {
                xo = fo / s;
            } else if (ctm == "tf_half_pixel_for_nn") {
                xo = (fo + 0.5) / s;
            } else {  // tf_crop_and_resize
                const double span = (roi_end[d] - roi_start[d]) * static_cast<double>(in - 1);
                xo = on > 1 ? roi_start[d] * static_cast<double>(in - 1) + fo * span / static_cast<double>(on - 1)
                            : 0.5 * (roi_start[d] + roi_end[d]) * static_cast<double>(in - 1);
                if (!(xo >= 0.0 && xo <= static_cast<double>(in - 1))) {  // also NaN (hostile roi)
                    for (int t = 0; t < taps; ++t) tap_index.push_back(-1), tap_weight.push_back(0.0f);
                    continue;
                }
            }
            if (mode == "nearest") {
                double k;
                if (nearest_mode == "floor") {
                    k = std::floor(xo);
                } else if (nearest_mode == "ceil") {
                    k = std::ceil(xo);
                } else if (xo - std::floor(xo) == 0.5) {
                    k = nearest_mode == "round_prefer_floor" ? std::floor(xo) : std::ceil(xo);
                } else {
                    k = std::round(xo);
                }
                tap_index.push_back(std::clamp<int64_t>(static_cast<int64_t>(k), 0, in - 1));
                tap_weight.push_back(1.0f);
            } else if (mode == "linear") {
                const double c = std::clamp(xo, 0.0, static_cast<double>(in - 1));
                const int64_t i0 = static_cast<int64_t>(std::floor(c));
                const int64_t i1 = std::min(i0 + 1, in - 1);
                const double w1 = c - static_cast<double>(i0);
                tap_index.push_back(i0), tap_weight.push_back(static_cast<float>(1.0 - w1));
                tap_index.push_back(i1), tap_weight.push_back(static_cast<float>(w1));
            } else {
                const double f = std::floor(xo), ratio = xo - f;
                double w[4], total = 0.0;
                int64_t idx[4];
                for (int t = 0; t < 4; ++t) {
                    const int64_t i = static_cast<int64_t>(f) - 1 + t;
                    w[t] = cubic_weight(ratio - static_cast<double>(t - 1), cubic_a);
                    if (exclude_outside && (i < 0 || i >= in)) w[t] = 0.0;
                    idx[t] = std::clamp<int64_t>(i, 0, in - 1);
                    total += w[t];
                }
                for (int t = 0; t < 4; ++t) {
                    tap_index.push_back(idx[t]);
                    tap_weight.push_back(static_cast<float>(exclude_outside && total != 0.0 ? w[t] / total : w[t]));
                }
            }
        }
    }
    // An axis whose taps reduce to "output o reads input o" (scale 1 in most modes) gets one tap: only
    // the axes that really change cost interpolation work.
    {
        std::vector<int64_t> index2;
        std::vector<float> weight2;
        for (size_t d = 0; d < r; ++d) {
            const int64_t first = axis[d].first, n = axis[d].taps;
            bool identity = out[d] == x.shape[d];
            for (int64_t o = 0; identity && o < out[d]; ++o) {
                float w = 0.0f;
                for (int64_t t = 0; t < n; ++t) {
                    const size_t k = static_cast<size_t>(first + o * n + t);
                    if (tap_index[k] < 0 || (tap_index[k] != o && tap_weight[k] != 0.0f)) identity = false;
                    if (tap_index[k] == o) w += tap_weight[k];
                }
                if (w != 1.0f) identity = false;
            }
            const int64_t new_first = static_cast<int64_t>(index2.size());
            if (identity) {
                for (int64_t o = 0; o < out[d]; ++o) index2.push_back(o), weight2.push_back(1.0f);
                axis[d].taps = 1;
            } else {
                ++changing;
                index2.insert(index2.end(), tap_index.begin() + first, tap_index.begin() + first + out[d] * n);
                weight2.insert(weight2.end(), tap_weight.begin() + first, tap_weight.begin() + first + out[d] * n);
            }
            axis[d].first = new_first;
        }
        tap_index.swap(index2);
        tap_weight.swap(weight2);
    }
    if (changing > 3) fail(KES_ERR_UNSUPPORTED, "Resize changes %d axes; at most 3 are supported", changing);
    return plan;
}

namespace {

std::unique_ptr<Kernel> create_resize(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    const ResizePlan plan = plan_resize(node);
    const Shape& out = plan.out;
    const size_t r = out.size();
    outputs[0].dtype = KES_F32;
    outputs[0].shape = out;
    if (shape_elements(out) == 0) return make_kernel([](const void* const*, void* const*) {});
    const std::vector<int64_t>& tap_index = plan.tap_index;
    const std::vector<float>& tap_weight = plan.tap_weight;
    const std::vector<ResizePlan::Axis>& axis = plan.axis;
    const float extrapolation = plan.extrapolation;
    struct Plan {
        int rank;
        int64_t out[kMaxRank], stride[kMaxRank], first[kMaxRank];
        int taps[kMaxRank];
    } p{};
    const Shape st = contiguous_strides(x.shape);
    p.rank = static_cast<int>(r);
    for (size_t d = 0; d < r; ++d)
        p.out[d] = out[d], p.stride[d] = st[d], p.first[d] = axis[d].first, p.taps[d] = axis[d].taps;
    const int64_t count = shape_elements(out);
    return make_kernel([p, tap_index, tap_weight, count, extrapolation](const void* const* in, void* const* outp) {
        const float* src = in_as<float>(in, 0);
        float* y = out_as<float>(outp, 0);
        int64_t idx[kMaxRank] = {};
        for (int64_t i = 0; i < count; ++i) {
            // Enumerate the tap combinations of all axes (product of per-axis taps; ≤ 4^3).
            int t[kMaxRank] = {};
            double acc = 0.0;
            bool outside = false;
            for (;;) {
                double w = 1.0;
                int64_t off = 0;
                for (int d = 0; d < p.rank; ++d) {
                    const size_t k = static_cast<size_t>(p.first[d] + idx[d] * p.taps[d] + t[d]);
                    if (tap_index[k] < 0) outside = true;
                    off += tap_index[k] * p.stride[d];
                    w *= tap_weight[k];
                }
                if (outside) break;
                if (w != 0.0) acc += w * static_cast<double>(src[off]);
                int d = p.rank - 1;
                for (; d >= 0; --d) {
                    if (++t[d] < p.taps[d]) break;
                    t[d] = 0;
                }
                if (d < 0) break;
            }
            y[i] = outside ? extrapolation : static_cast<float>(acc);
            for (int d = p.rank - 1; d >= 0; --d) {
                if (++idx[d] < p.out[d]) break;
                idx[d] = 0;
            }
        }
    });
}

}  // namespace

void add_resize_ops(OpList& ops) {
    ops.push_back({"Resize", 1, 4, 1, 1, create_resize});
}

}  // namespace kes
