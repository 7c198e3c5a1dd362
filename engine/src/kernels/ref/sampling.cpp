// sampling.cpp — GridSample, RoiAlign and MaxUnpool (reading or writing at data-dependent positions).
//
// Choices:
// - GridSample (opset 16 names bilinear / nearest / bicubic; the opset-20 names linear / cubic are
//   accepted as the same modes): f32, 4-d X [N, C, H, W] and grid [N, Hout, Wout, 2] only. Follows the
//   ONNX reference (onnx/reference/ops/op_grid_sample.py): each axis on its own — denormalize, nearest
//   rounds half to even (np.rint), a coordinate outside [x_min, x_max] is clamped to [0, d-1] (border)
//   or reflected (reflection); then every tap (floor-based, 2 for linear, 4 for cubic with a = -0.75)
//   is fetched with the padding rule (zeros: 0 outside; border: clamped; reflection: reflected and
//   truncated). A NaN coordinate (and an infinite one with reflection) samples zeros (the reference
//   leaves them undefined).
// - RoiAlign (opset 16): f32 X and rois, batch_indices i64 or i32; mode avg / max with ONNX Runtime's
//   max (per sample the largest weighted corner, then the largest sample; the reference ports it);
//   coordinate_transformation_mode half_pixel / output_half_pixel. A batch index outside [0, N) is
//   KES_ERR_INVALID_ARGUMENT at run time. The sampling grid per bin and axis (sampling_ratio, or the
//   adaptive ceil(roi / out)) is at most kMaxRoiGrid (1024): an ROI that needs more is
//   KES_ERR_INVALID_ARGUMENT at run time rather than minutes of work (a 4K ROI pooled to 7x7 needs 549).
// - MaxUnpool (opset 11): any dtype of X (elements copied bytewise), int64 I of X's shape (flat
//   indices over [N, C, spatial...], as MaxPool's Indices). output_shape must be a constant (else
//   KES_ERR_UNSUPPORTED) of X's rank with X's N and C. Later elements win for a repeated index; an
//   index outside the output is KES_ERR_INVALID_ARGUMENT at run time. As in the ONNX reference (and
//   its test data), the indices address the shape inferred from kernel_shape / strides / pads, and a
//   larger output_shape pads that result with zeros at the end of each spatial axis (smaller: refused).
#include <cmath>
#include <cstring>

#include "op_util.hpp"
#include "ops.hpp"

namespace kes {

namespace {

// ---- GridSample -----------------------------------------------------------------------------------------

enum class SampleMode : uint8_t { Nearest, Linear, Cubic };
enum class PadMode : uint8_t { Zeros, Border, Reflection };

struct GridAxis {
    int64_t size = 1;
    double lo = 0.0, hi = 0.0;  // the border: [-0.5, d-0.5], or [0, d-1] with align_corners
    bool align_corners = false;
};

double reflect(double x, double lo, double hi) {
    const double range = hi - lo;
    if (range <= 0.0) return lo;  // a 1-pixel axis with align_corners: the reference divides by zero
    if (x < lo) {
        const double dx = lo - x;
        const double n = std::trunc(dx / range);
        const double r = dx - n * range;
        return std::fmod(n, 2.0) == 0.0 ? lo + r : hi - r;
    }
    if (x > hi) {
        const double dx = x - hi;
        const double n = std::trunc(dx / range);
        const double r = dx - n * range;
        return std::fmod(n, 2.0) == 0.0 ? hi - r : lo + r;
    }
    return x;
}

// The padding rule for one integer tap: an in-range index, or -1 for a zero.
int64_t resolve_tap(int64_t i, const GridAxis& a, PadMode pad) {
    switch (pad) {
        case PadMode::Zeros: return i >= 0 && i < a.size ? i : -1;
        case PadMode::Border: return i < 0 ? 0 : (i >= a.size ? a.size - 1 : i);
        case PadMode::Reflection: break;
    }
    const int64_t r = static_cast<int64_t>(reflect(static_cast<double>(i), a.lo, a.hi));
    return r < 0 ? 0 : (r >= a.size ? a.size - 1 : r);  // guards rounding only: reflect stays in the border
}

void cubic_coeffs(double t, double* c) {
    constexpr double A = -0.75;
    const double x = std::fabs(t);
    c[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
    c[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
    c[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
    c[3] = ((A * (2 - x) - 5 * A) * (2 - x) + 8 * A) * (2 - x) - 4 * A;
}

// Taps of one normalized coordinate along one axis; returns their count (1, 2 or 4).
int axis_taps(float normalized, const GridAxis& a, SampleMode mode, PadMode pad, int64_t* index, double* weight) {
    const double d = static_cast<double>(a.size);
    const double n = normalized;
    // The reference keeps denormalized coordinates in float32.
    double x = static_cast<float>(a.align_corners ? (n + 1.0) / 2.0 * (d - 1.0) : ((n + 1.0) * d - 1.0) / 2.0);
    const int taps = mode == SampleMode::Nearest ? 1 : (mode == SampleMode::Linear ? 2 : 4);
    // NaN, and ±inf under reflection (which has no nearest mirrored point), sample zeros; ±inf under
    // zeros/border padding is bounded below like any far coordinate.
    if (std::isnan(x) || (std::isinf(x) && pad == PadMode::Reflection)) {
        for (int k = 0; k < taps; ++k) index[k] = -1, weight[k] = 0.0;
        return taps;
    }
    if (mode == SampleMode::Nearest) x = std::nearbyint(x);  // default rounding: half to even, as np.rint
    if (x < a.lo || x > a.hi) {
        if (pad == PadMode::Border) x = x < 0.0 ? 0.0 : (x > d - 1.0 ? d - 1.0 : x);
        if (pad == PadMode::Reflection) x = reflect(x, a.lo, a.hi);
        // Zeros: every tap is outside already; bounding x keeps the integer conversions defined.
        if (pad == PadMode::Zeros) x = x < -8.0 ? -8.0 : (x > d + 8.0 ? d + 8.0 : x);
    }
    if (mode == SampleMode::Nearest) {
        index[0] = resolve_tap(static_cast<int64_t>(x), a, pad);
        weight[0] = 1.0;
        return 1;
    }
    const double x0 = std::floor(x);
    const double t = x - x0;
    const int64_t i0 = static_cast<int64_t>(x0);
    if (mode == SampleMode::Linear) {
        index[0] = resolve_tap(i0, a, pad), weight[0] = 1.0 - t;
        index[1] = resolve_tap(i0 + 1, a, pad), weight[1] = t;
        return 2;
    }
    cubic_coeffs(t, weight);
    for (int k = 0; k < 4; ++k) index[k] = resolve_tap(i0 - 1 + k, a, pad);
    return 4;
}

struct GridGeom {
    int64_t n = 0, c = 0, h_out = 0, w_out = 0;
    GridAxis ax_h, ax_w;
    SampleMode mode = SampleMode::Linear;
    PadMode pad = PadMode::Zeros;
};

void run_grid_sample(const GridGeom& g, const float* x, const float* grid, float* y) {
    const int64_t plane_in = g.ax_h.size * g.ax_w.size, plane_out = g.h_out * g.w_out;
    for (int64_t n = 0; n < g.n; ++n)
        for (int64_t p = 0; p < plane_out; ++p) {
            const float* gp = grid + (n * plane_out + p) * 2;
            int64_t ix[4], iy[4];
            double wx[4], wy[4];
            const int tx = axis_taps(gp[0], g.ax_w, g.mode, g.pad, ix, wx);
            const int ty = axis_taps(gp[1], g.ax_h, g.mode, g.pad, iy, wy);
            for (int64_t c = 0; c < g.c; ++c) {
                const float* plane = x + (n * g.c + c) * plane_in;
                double acc = 0.0;
                for (int j = 0; j < ty; ++j) {
                    if (iy[j] < 0) continue;
                    const float* row = plane + iy[j] * g.ax_w.size;
                    double r = 0.0;
                    for (int i = 0; i < tx; ++i)
                        if (ix[i] >= 0) r += wx[i] * row[ix[i]];
                    acc += wy[j] * r;
                }
                y[(n * g.c + c) * plane_out + p] = static_cast<float>(acc);
            }
        }
}

std::unique_ptr<Kernel> create_grid_sample(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    const TensorDesc& grid = *node.inputs[1];
    require_dtype(x, KES_F32, "input X");
    require_dtype(grid, KES_F32, "input grid");
    if (x.rank() != 4)
        fail(KES_ERR_UNSUPPORTED, "input X is %s; only 4-d [N, C, H, W] is supported", shape_string(x.shape).c_str());
    if (grid.rank() != 4 || grid.shape[0] != x.shape[0] || grid.shape[3] != 2)
        fail(KES_ERR_INVALID_ARGUMENT, "input grid is %s; expected [%lld, H_out, W_out, 2]",
             shape_string(grid.shape).c_str(), static_cast<long long>(x.shape[0]));
    const std::string mode =
        get_choice(node.attrs, "mode", "bilinear", {"bilinear", "nearest", "bicubic", "linear", "cubic"});
    const std::string pad = get_choice(node.attrs, "padding_mode", "zeros", {"zeros", "border", "reflection"});
    const int64_t align = node.attrs.get_int("align_corners", 0);
    if (align != 0 && align != 1)
        fail(KES_ERR_INVALID_ARGUMENT, "attribute 'align_corners' is %lld; expected 0 or 1",
             static_cast<long long>(align));
    GridGeom g;
    g.n = x.shape[0], g.c = x.shape[1], g.h_out = grid.shape[1], g.w_out = grid.shape[2];
    g.mode = mode == "nearest" ? SampleMode::Nearest
                               : (mode == "bilinear" || mode == "linear" ? SampleMode::Linear : SampleMode::Cubic);
    g.pad = pad == "zeros" ? PadMode::Zeros : (pad == "border" ? PadMode::Border : PadMode::Reflection);
    GridAxis* axes[2] = {&g.ax_h, &g.ax_w};
    for (int k = 0; k < 2; ++k) {
        GridAxis& a = *axes[k];
        a.size = x.shape[static_cast<size_t>(2 + k)];
        a.align_corners = align == 1;
        a.lo = a.align_corners ? 0.0 : -0.5;
        a.hi = a.align_corners ? static_cast<double>(a.size) - 1.0 : static_cast<double>(a.size) - 0.5;
    }
    outputs[0].dtype = KES_F32;
    outputs[0].shape = {g.n, g.c, g.h_out, g.w_out};
    if (shape_elements(outputs[0].shape) == 0) return make_kernel([](const void* const*, void* const*) {});
    if (g.ax_h.size == 0 || g.ax_w.size == 0)
        fail(KES_ERR_INVALID_ARGUMENT, "cannot sample an empty input X %s", shape_string(x.shape).c_str());
    return make_kernel([g](const void* const* in, void* const* out) {
        run_grid_sample(g, in_as<float>(in, 0), in_as<float>(in, 1), out_as<float>(out, 0));
    });
}

// ---- RoiAlign -------------------------------------------------------------------------------------------

constexpr int64_t kMaxRoiGrid = 1 << 10;

struct RoiGeom {
    int64_t n = 0, c = 0, h = 0, w = 0, rois = 0, out_h = 1, out_w = 1, sampling_ratio = 0;
    double spatial_scale = 1.0;
    bool half_pixel = true, max_mode = false, batch_i64 = true;
};

// Bilinear sample of one plane at (y, x) as ONNX Runtime's RoiAlign: zero weights outside [-1, extent],
// edge clamping inside. Writes 4 offsets and weights.
void roi_sample(const RoiGeom& g, double y, double x, int64_t* pos, double* w) {
    if (!(y >= -1.0 && y <= static_cast<double>(g.h) && x >= -1.0 && x <= static_cast<double>(g.w))) {
        for (int k = 0; k < 4; ++k) pos[k] = 0, w[k] = 0.0;
        return;
    }
    if (y <= 0.0) y = 0.0;
    if (x <= 0.0) x = 0.0;
    int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x), y_high, x_high;
    if (y_low >= g.h - 1) {
        y_high = y_low = g.h - 1;
        y = static_cast<double>(y_low);
    } else {
        y_high = y_low + 1;
    }
    if (x_low >= g.w - 1) {
        x_high = x_low = g.w - 1;
        x = static_cast<double>(x_low);
    } else {
        x_high = x_low + 1;
    }
    const double ly = y - static_cast<double>(y_low), lx = x - static_cast<double>(x_low);
    const double hy = 1.0 - ly, hx = 1.0 - lx;
    pos[0] = y_low * g.w + x_low, w[0] = hy * hx;
    pos[1] = y_low * g.w + x_high, w[1] = hy * lx;
    pos[2] = y_high * g.w + x_low, w[2] = ly * hx;
    pos[3] = y_high * g.w + x_high, w[3] = ly * lx;
}

int64_t roi_grid(int64_t sampling_ratio, double extent, int64_t out, int64_t roi) {
    if (sampling_ratio > 0) return sampling_ratio;
    const double cells = std::ceil(extent / static_cast<double>(out));
    if (!(cells > 0.0)) return 0;  // also NaN
    if (cells > static_cast<double>(kMaxRoiGrid))
        fail(KES_ERR_INVALID_ARGUMENT,
             "RoiAlign roi %lld needs %.0f samples per bin along an axis (at most %lld): set sampling_ratio",
             static_cast<long long>(roi), cells, static_cast<long long>(kMaxRoiGrid));
    return static_cast<int64_t>(cells);
}

void run_roi_align(const RoiGeom& g, const float* x, const float* rois, const void* batch, float* y) {
    const double offset = g.half_pixel ? 0.5 : 0.0;
    for (int64_t r = 0; r < g.rois; ++r) {
        const int64_t b = g.batch_i64 ? static_cast<const int64_t*>(batch)[r] : static_cast<const int32_t*>(batch)[r];
        if (b < 0 || b >= g.n)
            fail(KES_ERR_INVALID_ARGUMENT, "RoiAlign batch index %lld is out of range for a batch of %lld",
                 static_cast<long long>(b), static_cast<long long>(g.n));
        const float* roi = rois + r * 4;
        const double start_w = roi[0] * g.spatial_scale - offset, start_h = roi[1] * g.spatial_scale - offset;
        const double end_w = roi[2] * g.spatial_scale - offset, end_h = roi[3] * g.spatial_scale - offset;
        double roi_w = end_w - start_w, roi_h = end_h - start_h;
        if (!g.half_pixel) {  // output_half_pixel forces malformed ROIs to 1x1 (ONNX Runtime, the reference)
            roi_w = roi_w > 1.0 ? roi_w : 1.0;
            roi_h = roi_h > 1.0 ? roi_h : 1.0;
        }
        const double bin_h = roi_h / static_cast<double>(g.out_h), bin_w = roi_w / static_cast<double>(g.out_w);
        const int64_t grid_h = roi_grid(g.sampling_ratio, roi_h, g.out_h, r);
        const int64_t grid_w = roi_grid(g.sampling_ratio, roi_w, g.out_w, r);
        const double count = static_cast<double>(grid_h * grid_w > 1 ? grid_h * grid_w : 1);
        for (int64_t c = 0; c < g.c; ++c) {
            const float* plane = x + (b * g.c + c) * g.h * g.w;
            float* out = y + (r * g.c + c) * g.out_h * g.out_w;
            for (int64_t ph = 0; ph < g.out_h; ++ph)
                for (int64_t pw = 0; pw < g.out_w; ++pw) {
                    double acc = 0.0;
                    bool first = true;
                    for (int64_t iy = 0; iy < grid_h; ++iy) {
                        const double yy = start_h + static_cast<double>(ph) * bin_h +
                                          (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(grid_h);
                        for (int64_t ix = 0; ix < grid_w; ++ix) {
                            const double xx = start_w + static_cast<double>(pw) * bin_w +
                                              (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(grid_w);
                            int64_t pos[4];
                            double w[4];
                            roi_sample(g, yy, xx, pos, w);
                            if (!g.max_mode) {
                                for (int k = 0; k < 4; ++k) acc += w[k] * plane[pos[k]];
                                continue;
                            }
                            double v = w[0] * plane[pos[0]];
                            for (int k = 1; k < 4; ++k) v = std::fmax(v, w[k] * plane[pos[k]]);
                            acc = first ? v : std::fmax(acc, v);
                            first = false;
                        }
                    }
                    out[ph * g.out_w + pw] = static_cast<float>(g.max_mode ? acc : acc / count);
                }
        }
    }
}

std::unique_ptr<Kernel> create_roi_align(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    const TensorDesc& rois = *node.inputs[1];
    const TensorDesc& batch = *node.inputs[2];
    require_dtype(x, KES_F32, "input X");
    require_dtype(rois, KES_F32, "input rois");
    if (batch.dtype != KES_I64 && batch.dtype != KES_I32)
        unsupported_dtype("input batch_indices", batch.dtype, "i64, i32");
    if (x.rank() != 4)
        fail(KES_ERR_INVALID_ARGUMENT, "input X is %s; expected [N, C, H, W]", shape_string(x.shape).c_str());
    if (rois.rank() != 2 || rois.shape[1] != 4)
        fail(KES_ERR_INVALID_ARGUMENT, "input rois is %s; expected [num_rois, 4]", shape_string(rois.shape).c_str());
    if (batch.rank() != 1 || batch.shape[0] != rois.shape[0])
        fail(KES_ERR_INVALID_ARGUMENT, "input batch_indices is %s; expected [%lld]", shape_string(batch.shape).c_str(),
             static_cast<long long>(rois.shape[0]));
    RoiGeom g;
    g.n = x.shape[0], g.c = x.shape[1], g.h = x.shape[2], g.w = x.shape[3], g.rois = rois.shape[0];
    g.max_mode = get_choice(node.attrs, "mode", "avg", {"avg", "max"}) == "max";
    g.half_pixel = get_choice(node.attrs, "coordinate_transformation_mode", "half_pixel",
                              {"half_pixel", "output_half_pixel"}) == "half_pixel";
    g.out_h = node.attrs.get_int("output_height", 1);
    g.out_w = node.attrs.get_int("output_width", 1);
    check_geometry("output_height", g.out_h, 1);
    check_geometry("output_width", g.out_w, 1);
    g.sampling_ratio = node.attrs.get_int("sampling_ratio", 0);
    check_geometry("sampling_ratio", g.sampling_ratio, 0);
    if (g.sampling_ratio > kMaxRoiGrid)
        fail(KES_ERR_UNSUPPORTED, "sampling_ratio %lld is above %lld samples per bin and axis",
             static_cast<long long>(g.sampling_ratio), static_cast<long long>(kMaxRoiGrid));
    g.spatial_scale = node.attrs.get_float("spatial_scale", 1.0f);
    g.batch_i64 = batch.dtype == KES_I64;
    outputs[0].dtype = KES_F32;
    outputs[0].shape = {g.rois, g.c, g.out_h, g.out_w};
    if (shape_elements(outputs[0].shape) == 0) return make_kernel([](const void* const*, void* const*) {});
    if (g.h == 0 || g.w == 0 || g.n == 0)
        fail(KES_ERR_INVALID_ARGUMENT, "cannot pool regions of an empty input X %s", shape_string(x.shape).c_str());
    return make_kernel([g](const void* const* in, void* const* out) {
        run_roi_align(g, in_as<float>(in, 0), in_as<float>(in, 1), in[2], out_as<float>(out, 0));
    });
}

// ---- MaxUnpool ------------------------------------------------------------------------------------------

std::unique_ptr<Kernel> create_max_unpool(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    const TensorDesc& idx = *node.inputs[1];
    require_dtype(idx, KES_I64, "input I");
    if (x.dtype == KES_BOOL) unsupported_dtype("input X", x.dtype, "numeric types");
    if (x.rank() < 3)
        fail(KES_ERR_INVALID_ARGUMENT, "input X is %s; expected [N, C, spatial...]", shape_string(x.shape).c_str());
    if (idx.shape != x.shape)
        fail(KES_ERR_INVALID_ARGUMENT, "input I is %s; expected X's shape %s", shape_string(idx.shape).c_str(),
             shape_string(x.shape).c_str());
    const size_t spatial = x.shape.size() - 2;
    const std::vector<int64_t> kernel = node.attrs.get_ints("kernel_shape");
    std::vector<int64_t> pads = node.attrs.get_ints("pads");
    std::vector<int64_t> strides = node.attrs.get_ints("strides");
    if (pads.empty()) pads.assign(2 * spatial, 0);
    if (strides.empty()) strides.assign(spatial, 1);
    if (kernel.size() != spatial || pads.size() != 2 * spatial || strides.size() != spatial)
        fail(KES_ERR_INVALID_ARGUMENT,
             "kernel_shape, strides and pads have %zu, %zu and %zu values; expected %zu, %zu and %zu", kernel.size(),
             strides.size(), pads.size(), spatial, spatial, 2 * spatial);
    Shape out = x.shape;
    for (size_t d = 0; d < spatial; ++d) {
        check_geometry("kernel_shape", kernel[d], 1);
        check_geometry("strides", strides[d], 1);
        check_geometry("pads", pads[d], 0);
        check_geometry("pads", pads[d + spatial], 0);
        check_geometry("an input extent", x.shape[d + 2], 0);
        out[d + 2] = (x.shape[d + 2] - 1) * strides[d] - (pads[d] + pads[d + spatial]) + kernel[d];
        if (out[d + 2] < 0)
            fail(KES_ERR_INVALID_ARGUMENT, "the inferred output extent %lld along axis %zu is negative",
                 static_cast<long long>(out[d + 2]), d + 2);
    }
    require_rank_at_most(x, kMaxRank, "input X");
    Shape result = out;
    if (const TensorDesc* os = node.input(2)) {
        const std::vector<int64_t> given = const_ints(*os, "input output_shape");
        if (given.size() != x.shape.size() || given[0] != x.shape[0] || given[1] != x.shape[1])
            fail(KES_ERR_INVALID_ARGUMENT, "input output_shape %s does not match X %s (rank, N and C)",
                 shape_string(given).c_str(), shape_string(x.shape).c_str());
        for (size_t d = 2; d < given.size(); ++d) {
            check_geometry("an entry of output_shape", given[d], 0);
            if (given[d] < out[d])
                fail(KES_ERR_INVALID_ARGUMENT, "input output_shape %s is smaller than the unpooled shape %s",
                     shape_string(given).c_str(), shape_string(out).c_str());
        }
        result = given;
    }
    outputs[0].dtype = x.dtype;
    outputs[0].shape = result;
    const int64_t result_count = shape_elements(result);
    const int64_t unpooled_count = shape_elements(out);
    const int64_t in_count = x.elements();
    const size_t elem = x.bytes() / static_cast<size_t>(in_count > 0 ? in_count : 1);
    const size_t result_bytes = static_cast<size_t>(result_count) * elem;
    // The indices address the unpooled shape; output_shape only pads it at the end of each axis.
    const int rank = static_cast<int>(out.size());
    int64_t unpooled[kMaxRank] = {}, result_stride[kMaxRank] = {};
    const Shape strides_out = contiguous_strides(result);
    for (int d = 0; d < rank; ++d)
        unpooled[d] = out[static_cast<size_t>(d)], result_stride[d] = strides_out[static_cast<size_t>(d)];
    const auto kernel_fn = [=](const void* const* in, void* const* outp) {
        const auto* src = static_cast<const uint8_t*>(in[0]);
        const int64_t* where = in_as<int64_t>(in, 1);
        auto* dst = static_cast<uint8_t*>(outp[0]);
        if (result_bytes) std::memset(dst, 0, result_bytes);  // all-zero bytes are 0 in every numeric dtype
        for (int64_t i = 0; i < in_count; ++i) {
            int64_t flat = where[i];
            if (flat < 0 || flat >= unpooled_count)
                fail(KES_ERR_INVALID_ARGUMENT, "MaxUnpool index %lld is out of range for an output of %lld elements",
                     static_cast<long long>(flat), static_cast<long long>(unpooled_count));
            int64_t o = 0;
            for (int d = rank - 1; d >= 0; --d) {
                o += (flat % unpooled[d]) * result_stride[d];
                flat /= unpooled[d];
            }
            std::memcpy(dst + static_cast<size_t>(o) * elem, src + static_cast<size_t>(i) * elem, elem);
        }
    };
    return make_kernel(kernel_fn);
}

}  // namespace

void add_sampling_ops(OpList& ops) {
    ops.push_back({"GridSample", 2, 2, 1, 1, create_grid_sample});
    ops.push_back({"RoiAlign", 3, 3, 1, 1, create_roi_align});
    ops.push_back({"MaxUnpool", 2, 3, 1, 1, create_max_unpool});
}

}  // namespace kes
