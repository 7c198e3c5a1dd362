// quant.cpp — the quantized ops' reference kernels. The rules they share (reading scales and zero
// points, rounding, requantization) are the op layer's, ops/quant.hpp; docs/ARCHITECTURE.md "Quantized models"
// says per op how exactly the results match ONNX Runtime.
//
// - DequantizeLinear (u8, i8, i32 → f32; (x - zp) · scale) and QuantizeLinear (f32 → u8/i8): per-tensor
//   (one-element scale) or per-axis (1-D scale along "axis", default 1); scale and zero point are read
//   at run time, so they may come from another node.
// - QLinearConv (ONNX) and ConvInteger: NCHW (or NHWC with OHWI weights, data_layout), 1-D or 2-D, groups,
// pads/strides/dilations/auto_pad; the
//   weight's zero point per tensor or per output channel. QLinearConv's input 8 is the int32 bias
//   (scale x_scale · w_scale); a fused Relu/Clip ("activation") narrows the output range.
// - QLinearMatMul (ONNX) and MatMulInteger: numpy batch broadcast as MatMul; B's scale and zero point
//   per tensor or per column when B is 2-D. QLinearMatMul takes a Kestrel input 8, an int32 bias per
//   column (a fused QDQ Gemm's, scale a_scale · b_scale) and a fused Relu/Clip.
// - DynamicQuantizeLinear: u8 output, scale and zero point computed from the data at run time.
// - QLinearAdd, QLinearMul, QLinearGlobalAveragePool, QLinearConcat: the com.microsoft contrib ops
//   ONNX Runtime's quantizer writes (QOperator format); Add/Mul broadcast.
// With kes_requantization "tflite" (a TFLite model's ops) QuantizeLinear, QLinearConv, QLinearMatMul,
// QLinearAdd, QLinearMul and QLinearConcat follow TFLite's integer arithmetic (ops/quant.hpp).
// QLinear* ops need constant scales and zero points (their multipliers are fixed at create()); the
// *Integer ops and DynamicQuantizeLinear's consumers read zero points at run time. Accumulation is in
// 64 bits, wrapped to 32 as ONNX Runtime's int32 accumulators wrap (only hostile shapes get there).
#include <cmath>
#include <limits>

#include "../../ops/quant.hpp"
#include "op_util.hpp"
#include "ops.hpp"

namespace kes {

namespace {

template <class F>
void dispatch_quantized(kes_dtype dtype, const char* what, F&& f) {
    if (dtype == KES_U8) return f(TypeTag<uint8_t>{});
    if (dtype == KES_I8) return f(TypeTag<int8_t>{});
    unsupported_dtype(what, dtype, "u8, i8");
}

// u8 or i8, else UNSUPPORTED naming the input.
void require_quantized(const TensorDesc& t, const char* what) {
    if (!is_quantized_dtype(t.dtype)) unsupported_dtype(what, t.dtype, "u8, i8");
}

// Narrows a 64-bit accumulator to ONNX Runtime's int32 (two's complement wrap, no UB).
inline int32_t wrap_i32(int64_t v) {
    return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
}

// A zero point read at run time: an omitted input is 0; `per_channel` ones are indexed by channel.
struct RuntimeZeroPoint {
    kes_dtype dtype = KES_U8;
    bool present = false, per_channel = false;
    int32_t at(const void* p, int64_t c) const {
        if (!present) return 0;
        const int64_t i = per_channel ? c : 0;
        return dtype == KES_U8 ? static_cast<const uint8_t*>(p)[i] : static_cast<const int8_t*>(p)[i];
    }
};

// The zero point input `zp` of a quantized tensor of type `q_dtype`: a scalar, or [channels] when
// channels > 0 (per channel).
RuntimeZeroPoint runtime_zero_point(const TensorDesc* zp, kes_dtype q_dtype, const char* what, int64_t channels) {
    RuntimeZeroPoint z;
    z.dtype = q_dtype;
    if (!zp) return z;
    if (zp->dtype != q_dtype)
        fail(KES_ERR_INVALID_ARGUMENT, "%s is %s; expected %s (the quantized input's type)", what,
             kes_dtype_name(zp->dtype), kes_dtype_name(q_dtype));
    z.present = true;
    if (zp->elements() == 1 && zp->rank() <= 1) return z;
    if (channels > 0 && zp->rank() == 1 && zp->shape[0] == channels) {
        z.per_channel = true;
        return z;
    }
    fail(KES_ERR_INVALID_ARGUMENT, "%s has shape %s; expected a scalar%s", what, shape_string(zp->shape).c_str(),
         channels > 0 ? format(" or [%lld]", static_cast<long long>(channels)).c_str() : "");
}

// ---- DequantizeLinear / QuantizeLinear ------------------------------------------------------------------

// Per-tensor (scalar scale) or per-axis (1-D scale along `axis`) parameters; read at run time.
struct QuantPlan {
    int64_t count = 0, inner = 1, channels = 1;  // channel of element i = (i / inner) % channels
    bool has_zero_point = false;
};

QuantPlan quant_plan(const NodeDesc& node, const TensorDesc& x, const TensorDesc& scale, const TensorDesc* zp) {
    require_dtype(scale, KES_F32, "input scale");
    QuantPlan q;
    q.count = x.elements();
    q.has_zero_point = zp != nullptr;
    if (scale.elements() != 1) {
        if (scale.rank() != 1) fail(KES_ERR_INVALID_ARGUMENT, "input scale must be a scalar or 1-D");
        const int64_t axis = normalize_axis(node.attrs.get_int("axis", 1), x.rank());
        q.channels = x.shape[static_cast<size_t>(axis)];
        if (scale.shape[0] != q.channels)
            fail(KES_ERR_INVALID_ARGUMENT, "input scale has %lld values for %lld channels on axis %lld",
                 static_cast<long long>(scale.shape[0]), static_cast<long long>(q.channels),
                 static_cast<long long>(axis));
        q.inner = split_at_axis(x.shape, axis).inner;
    }
    if (zp && zp->elements() != scale.elements())
        fail(KES_ERR_INVALID_ARGUMENT, "input zero_point shape %s differs from scale %s",
             shape_string(zp->shape).c_str(), shape_string(scale.shape).c_str());
    return q;
}

template <class Q>
std::unique_ptr<Kernel> dequantize_kernel(const QuantPlan& q) {
    return make_kernel([q](const void* const* in, void* const* out) {
        const Q* x = in_as<Q>(in, 0);
        const float* scale = in_as<float>(in, 1);
        const Q* zp = q.has_zero_point && in[2] ? in_as<Q>(in, 2) : nullptr;
        float* y = out_as<float>(out, 0);
        for (int64_t i = 0; i < q.count; ++i) {
            const int64_t c = (i / q.inner) % q.channels;
            const double z = zp ? static_cast<double>(zp[c]) : 0.0;
            y[i] = static_cast<float>((static_cast<double>(x[i]) - z) * scale[c]);
        }
    });
}

template <class Q>
std::unique_ptr<Kernel> quantize_kernel(const QuantPlan& q, QuantRange range, Requantization mode) {
    const bool tflite = mode == Requantization::Tflite;
    return make_kernel([q, range, tflite](const void* const* in, void* const* out) {
        const float* x = in_as<float>(in, 0);
        const float* scale = in_as<float>(in, 1);
        const Q* zp = q.has_zero_point && in[2] ? in_as<Q>(in, 2) : nullptr;
        Q* y = out_as<Q>(out, 0);
        for (int64_t i = 0; i < q.count; ++i) {
            const int64_t c = (i / q.inner) % q.channels;
            const int32_t z = zp ? zp[c] : 0;
            y[i] = static_cast<Q>(tflite ? quantize_value_tflite(x[i], scale[c], z, range)
                                         : quantize_value(x[i], scale[c], z, range));
        }
    });
}

std::unique_ptr<Kernel> create_dequantize(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    const TensorDesc* zp = node.input(2);
    if (zp && zp->dtype != x.dtype) fail(KES_ERR_INVALID_ARGUMENT, "zero_point dtype differs from x");
    const QuantPlan q = quant_plan(node, x, *node.inputs[1], zp);
    outputs[0].dtype = KES_F32;
    outputs[0].shape = x.shape;
    switch (x.dtype) {
        case KES_U8: return dequantize_kernel<uint8_t>(q);
        case KES_I8: return dequantize_kernel<int8_t>(q);
        case KES_I32: return dequantize_kernel<int32_t>(q);
        default: unsupported_dtype("input x", x.dtype, "u8, i8, i32");
    }
}

std::unique_ptr<Kernel> create_quantize(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    require_dtype(x, KES_F32, "input x");
    const TensorDesc* zp = node.input(2);
    const QuantPlan q = quant_plan(node, x, *node.inputs[1], zp);
    outputs[0].dtype = zp ? zp->dtype : KES_U8;
    outputs[0].shape = x.shape;
    const TensorDesc& scale = *node.inputs[1];
    // A constant per-tensor quantization is the output tensor's (the .kom records it).
    if (is_quantized_dtype(outputs[0].dtype) && scale.is_const() && scale.elements() == 1 && (!zp || zp->is_const()))
        outputs[0].quant = read_quant(scale, zp, outputs[0].dtype, "y");
    switch (outputs[0].dtype) {
        case KES_U8: return quantize_kernel<uint8_t>(q, quantized_range(KES_U8), requantization_of(node.attrs));
        case KES_I8: return quantize_kernel<int8_t>(q, quantized_range(KES_I8), requantization_of(node.attrs));
        default: unsupported_dtype("input zero_point", outputs[0].dtype, "u8, i8");
    }
}

// ---- integer convolution: ConvInteger, QLinearConv -----------------------------------------------------

// NCHW with OIHW weights (ONNX), or NHWC with OHWI weights (data_layout "NHWC", a TFLite model's);
// one or two spatial axes (1-D is H = 1). The strides say where a channel, row and column lie.
struct IntConvGeom {
    int64_t n = 1, c = 1, m = 1, group = 1, ih = 1, iw = 1, oh = 1, ow = 1;
    Window wh, ww;
    bool nhwc = false;
    int64_t x_c = 1, x_y = 1, x_x = 1;  // input element strides of a channel, a row, a column
    int64_t w_c = 1, w_y = 1, w_x = 1;  // weight element strides within one output channel's filter
};

IntConvGeom int_conv_geometry(const NodeDesc& node, const TensorDesc& x, const TensorDesc& w, TensorDesc& y) {
    require_quantized(x, "input x");
    require_quantized(w, "input w");
    if (x.rank() != 3 && x.rank() != 4)
        fail(KES_ERR_UNSUPPORTED, "input x has shape %s; 1-D or 2-D convolutions are supported",
             shape_string(x.shape).c_str());
    IntConvGeom g;
    g.nhwc = get_layout(node.attrs) == Layout::NHWC;
    if (w.rank() != x.rank())
        fail(KES_ERR_INVALID_ARGUMENT, "weight shape %s does not match input rank %lld", shape_string(w.shape).c_str(),
             static_cast<long long>(x.rank()));
    // Channels last moves C (and the weight's I) behind the spatial axes.
    const size_t c_axis = g.nhwc ? x.shape.size() - 1 : 1, s_first = g.nhwc ? 1 : 2;
    g.n = x.shape[0], g.c = x.shape[c_axis], g.m = w.shape[0];
    g.group = node.attrs.get_int("group", 1);
    if (g.group < 1 || g.c % g.group != 0 || g.m % g.group != 0)
        fail(KES_ERR_INVALID_ARGUMENT, "attribute 'group' is %lld; must divide the %lld input and %lld output channels",
             static_cast<long long>(g.group), static_cast<long long>(g.c), static_cast<long long>(g.m));
    if (w.shape[c_axis] != g.c / g.group)
        fail(KES_ERR_INVALID_ARGUMENT, "weight shape %s: %lld input channels per group expected",
             shape_string(w.shape).c_str(), static_cast<long long>(g.c / g.group));
    const Shape spatial(x.shape.begin() + s_first, x.shape.begin() + s_first + (x.rank() - 2)),
        kernel(w.shape.begin() + s_first, w.shape.begin() + s_first + (w.rank() - 2));
    const Shape kernel_attr = node.attrs.get_ints("kernel_shape", kernel);
    if (kernel_attr != kernel)
        fail(KES_ERR_INVALID_ARGUMENT, "attribute 'kernel_shape' %s does not match the weight's %s",
             shape_string(kernel_attr).c_str(), shape_string(kernel).c_str());
    const std::vector<Window> win = resolve_windows(node.attrs, spatial, kernel, false);
    g.ww = win.back();
    if (win.size() == 2) g.wh = win[0];
    g.ih = g.wh.in, g.iw = g.ww.in, g.oh = g.wh.out, g.ow = g.ww.out;
    const int64_t cpg = g.c / g.group, kh = g.wh.kernel, kw = g.ww.kernel;
    if (g.nhwc) {
        g.x_c = 1, g.x_x = g.c, g.x_y = g.iw * g.c;
        g.w_c = 1, g.w_x = cpg, g.w_y = kw * cpg;
        y.shape = x.rank() == 4 ? Shape{g.n, g.oh, g.ow, g.m} : Shape{g.n, g.ow, g.m};
    } else {
        g.x_x = 1, g.x_y = g.iw, g.x_c = g.ih * g.iw;
        g.w_x = 1, g.w_y = kw, g.w_c = kh * kw;
        y.shape = x.rank() == 4 ? Shape{g.n, g.m, g.oh, g.ow} : Shape{g.n, g.m, g.ow};
    }
    return g;
}

// The kernel taps [first, last) of one axis whose input position o·stride − pad + k·dilation is inside.
struct TapRange {
    int64_t first = 0, last = 0;
};
inline TapRange taps_inside(const Window& w, int64_t o) {
    const int64_t start = o * w.stride - w.pad_begin;  // input position of tap 0
    TapRange r;
    r.first = start >= 0 ? 0 : (-start + w.dilation - 1) / w.dilation;
    r.last = start >= w.in ? 0 : std::min(w.kernel, (w.in - start + w.dilation - 1) / w.dilation);
    r.first = std::min(r.first, r.last);
    return r;
}

// emit(output index, output channel, Σ (x - zx)(w - zw(oc)) + bias(oc)) for every output element.
template <class X, class W, class ZW, class Emit>
void int_conv_run(const IntConvGeom& g, const X* x, int32_t zx, const W* w, ZW&& zw, const int32_t* bias, Emit&& emit) {
    const int64_t cpg = g.c / g.group, mpg = g.m / g.group;
    const int64_t filter_size = cpg * g.wh.kernel * g.ww.kernel, image = g.ih * g.iw * g.c;
    for (int64_t n = 0; n < g.n; ++n)
        for (int64_t oc = 0; oc < g.m; ++oc) {
            const int64_t c0 = (oc / mpg) * cpg;
            const int32_t z = zw(oc);
            const W* wo = w + oc * filter_size;
            for (int64_t oy = 0; oy < g.oh; ++oy) {
                const TapRange ry = taps_inside(g.wh, oy);
                const int64_t y0 = oy * g.wh.stride - g.wh.pad_begin;
                for (int64_t ox = 0; ox < g.ow; ++ox) {
                    const TapRange rx = taps_inside(g.ww, ox);
                    const int64_t x0 = ox * g.ww.stride - g.ww.pad_begin;
                    int64_t acc = bias ? bias[oc] : 0;
                    for (int64_t c = 0; c < cpg; ++c) {
                        const X* xc = x + n * image + (c0 + c) * g.x_c;
                        const W* wc = wo + c * g.w_c;
                        for (int64_t ky = ry.first; ky < ry.last; ++ky) {
                            const X* xr = xc + (y0 + ky * g.wh.dilation) * g.x_y + x0 * g.x_x;
                            const W* wr = wc + ky * g.w_y;
                            for (int64_t kx = rx.first; kx < rx.last; ++kx)  // each product fits int32
                                acc += (static_cast<int32_t>(xr[kx * g.ww.dilation * g.x_x]) - zx) *
                                       (static_cast<int32_t>(wr[kx * g.w_x]) - z);
                        }
                    }
                    const int64_t o =
                        g.nhwc ? ((n * g.oh + oy) * g.ow + ox) * g.m + oc : ((n * g.m + oc) * g.oh + oy) * g.ow + ox;
                    emit(o, oc, wrap_i32(acc));
                }
            }
        }
}

// ConvInteger(x, w, x_zero_point, w_zero_point) → int32.
std::unique_ptr<Kernel> create_conv_integer(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    const TensorDesc& w = *node.inputs[1];
    const IntConvGeom g = int_conv_geometry(node, x, w, outputs[0]);
    outputs[0].dtype = KES_I32;
    const RuntimeZeroPoint zx = runtime_zero_point(node.input(2), x.dtype, "x_zero_point", 0);
    const RuntimeZeroPoint zw = runtime_zero_point(node.input(3), w.dtype, "w_zero_point", g.m);
    std::unique_ptr<Kernel> k;
    dispatch_quantized(x.dtype, "input x", [&](auto xt) {
        using X = typename decltype(xt)::type;
        dispatch_quantized(w.dtype, "input w", [&](auto wt) {
            using W = typename decltype(wt)::type;
            k = make_kernel([g, zx, zw](const void* const* in, void* const* out) {
                int32_t* y = out_as<int32_t>(out, 0);
                // Optional inputs a node leaves out have no slot in `in`: read only those it has.
                const void* pzw = zw.present ? in[3] : nullptr;
                int_conv_run(
                    g, in_as<X>(in, 0), zx.at(zx.present ? in[2] : nullptr, 0), in_as<W>(in, 1),
                    [&](int64_t oc) { return zw.at(pzw, oc); }, nullptr,
                    [&](int64_t o, int64_t, int32_t acc) { y[o] = acc; });
            });
        });
    });
    return k;
}

// The per-output-channel requantization of QLinearConv / QLinearMatMul, the output zero point and the
// range a fused Relu/Clip leaves. ONNX: multiplier[c] = in_scale · w_scale / out_scale in f32 (ONNX
// Runtime's order). TFLite (kes_requantization "tflite"): that ratio in double as a fixed-point
// multiplier; TFLite forms the product in_scale · w_scale in f32 first on its per-tensor paths (uint8
// CONV_2D, per-tensor FULLY_CONNECTED: `f32_product`) and in double on its per-channel ones.
struct Requant {
    std::vector<float> multiplier;
    std::vector<FixedPointMultiplier> fixed_point;  // TFLite's, else empty
    int32_t zp = 0;
    QuantRange range;
    int32_t apply(int32_t acc, int64_t c) const {
        if (!fixed_point.empty()) {
            const FixedPointMultiplier& m = fixed_point[fixed_point.size() == 1 ? 0 : static_cast<size_t>(c)];
            const int32_t v = multiply_by_quantized_multiplier(acc, m) + zp;
            return std::min(std::max(v, range.min), range.max);
        }
        return requantize(acc, multiplier[multiplier.size() == 1 ? 0 : static_cast<size_t>(c)], zp, range);
    }
};

Requant make_requant(const NodeDesc& node, const Quant& in, const Quant& w, const Quant& out, kes_dtype out_dtype,
                     bool f32_product) {
    Requant r;
    const Requantization mode = requantization_of(node.attrs);
    for (float ws : w.scale) {
        r.multiplier.push_back(requant_multiplier(in.scale[0], ws, out.scale[0]));
        if (mode == Requantization::Tflite) {
            const double product =
                f32_product ? static_cast<double>(in.scale[0] * ws) : static_cast<double>(in.scale[0]) * ws;
            r.fixed_point.push_back(quantize_multiplier(product / out.scale[0], "output"));
        }
    }
    r.zp = quant_zero_point(out, 0);
    r.range = fused_activation_range(Activation::from_attrs(node.attrs), out.scale[0], r.zp, quantized_range(out_dtype),
                                     mode);
    return r;
}

// An optional int32 bias input of `count` values (QLinearConv's B; QLinearMatMul's Kestrel input 8).
bool read_bias_input(const TensorDesc* b, int64_t count) {
    if (!b) return false;
    if (b->dtype != KES_I32) fail(KES_ERR_INVALID_ARGUMENT, "input B is %s; expected i32", kes_dtype_name(b->dtype));
    if (b->shape != Shape{count})
        fail(KES_ERR_INVALID_ARGUMENT, "input B has shape %s; expected [%lld]", shape_string(b->shape).c_str(),
             static_cast<long long>(count));
    return true;
}

// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B).
std::unique_ptr<Kernel> create_qlinear_conv(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    const TensorDesc& w = *node.inputs[3];
    const TensorDesc* y_zp = node.input(7);
    if (!y_zp) fail(KES_ERR_INVALID_ARGUMENT, "input y_zero_point is required (it sets the output type)");
    TensorDesc& y = outputs[0];
    const IntConvGeom g = int_conv_geometry(node, x, w, y);
    const Quant qx = read_quant(*node.inputs[1], node.input(2), x.dtype, "x");
    const Quant qw = read_quant(*node.inputs[4], node.input(5), w.dtype, "w", 0, g.m);
    const Quant qy = read_quant(*node.inputs[6], y_zp, y_zp->dtype, "y");
    y.dtype = y_zp->dtype;
    y.quant = qy;
    const bool has_bias = read_bias_input(node.input(8), g.m);
    const Requant rq = make_requant(node, qx, qw, qy, y.dtype, x.dtype == KES_U8);
    std::unique_ptr<Kernel> k;
    dispatch_quantized(x.dtype, "input x", [&](auto xt) {
        using X = typename decltype(xt)::type;
        dispatch_quantized(w.dtype, "input w", [&](auto wt) {
            using W = typename decltype(wt)::type;
            dispatch_quantized(y.dtype, "input y_zero_point", [&](auto yt) {
                using Y = typename decltype(yt)::type;
                k = make_kernel([g, qx, qw, rq, has_bias](const void* const* in, void* const* out) {
                    Y* py = out_as<Y>(out, 0);
                    int_conv_run(
                        g, in_as<X>(in, 0), quant_zero_point(qx, 0), in_as<W>(in, 3),
                        [&](int64_t oc) { return quant_zero_point(qw, oc); },
                        has_bias ? in_as<int32_t>(in, 8) : nullptr,
                        [&](int64_t o, int64_t oc, int32_t acc) { py[o] = static_cast<Y>(rq.apply(acc, oc)); });
                });
            });
        });
    });
    return k;
}

// ---- integer matrix product: MatMulInteger, QLinearMatMul ----------------------------------------------

struct IntMatMulGeom {
    int64_t m = 1, k = 1, n = 1;
    BroadcastPlan batch;
};

IntMatMulGeom int_matmul_geometry(const TensorDesc& a, const TensorDesc& b, TensorDesc& y) {
    require_quantized(a, "input a");
    require_quantized(b, "input b");
    if (a.rank() < 1 || b.rank() < 1) fail(KES_ERR_INVALID_ARGUMENT, "matrix inputs must have rank >= 1");
    require_rank_at_most(a, kMaxRank, "input A");
    require_rank_at_most(b, kMaxRank, "input B");
    Shape sa = a.shape, sb = b.shape;
    const bool a_vec = sa.size() == 1, b_vec = sb.size() == 1;
    if (a_vec) sa.insert(sa.begin(), 1);
    if (b_vec) sb.push_back(1);
    IntMatMulGeom g;
    g.m = sa[sa.size() - 2], g.k = sa.back(), g.n = sb.back();
    if (sb[sb.size() - 2] != g.k)
        fail(KES_ERR_INVALID_ARGUMENT, "shapes %s and %s: inner dimensions differ", shape_string(a.shape).c_str(),
             shape_string(b.shape).c_str());
    const Shape batch_a(sa.begin(), sa.end() - 2), batch_b(sb.begin(), sb.end() - 2);
    const Shape batch = broadcast_shapes(batch_a, batch_b);
    g.batch = make_broadcast_plan(batch, {batch_a, batch_b});
    y.shape = batch;
    if (!a_vec) y.shape.push_back(g.m);
    if (!b_vec) y.shape.push_back(g.n);
    return g;
}

// emit(output index, column, Σ (a - za)(b - zb(col)) + bias(col)).
template <class A, class B, class ZB, class Emit>
void int_matmul_run(const IntMatMulGeom& g, const A* a, int32_t za, const B* b, ZB&& zb, const int32_t* bias,
                    Emit&& emit) {
    for_each_broadcast(g.batch, [&](int64_t i, int64_t ia, int64_t ib, int64_t) {
        const A* ma = a + ia * g.m * g.k;
        const B* mb = b + ib * g.k * g.n;
        for (int64_t r = 0; r < g.m; ++r)
            for (int64_t col = 0; col < g.n; ++col) {
                const int32_t z = zb(col);
                int64_t acc = bias ? bias[col] : 0;
                for (int64_t t = 0; t < g.k; ++t)
                    acc += static_cast<int64_t>(static_cast<int32_t>(ma[r * g.k + t]) - za) *
                           (static_cast<int32_t>(mb[t * g.n + col]) - z);
                emit((i * g.m + r) * g.n + col, col, wrap_i32(acc));
            }
    });
}

// B's per-column parameters exist only for a 2-D B (ONNX Runtime's rule): the column count, else 0.
int64_t per_column_channels(const TensorDesc& b, const IntMatMulGeom& g) {
    return b.rank() == 2 ? g.n : 0;
}

// MatMulInteger(A, B, a_zero_point, b_zero_point) → int32.
std::unique_ptr<Kernel> create_matmul_integer(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& a = *node.inputs[0];
    const TensorDesc& b = *node.inputs[1];
    const IntMatMulGeom g = int_matmul_geometry(a, b, outputs[0]);
    outputs[0].dtype = KES_I32;
    const RuntimeZeroPoint za = runtime_zero_point(node.input(2), a.dtype, "a_zero_point", 0);
    const RuntimeZeroPoint zb = runtime_zero_point(node.input(3), b.dtype, "b_zero_point", per_column_channels(b, g));
    std::unique_ptr<Kernel> k;
    dispatch_quantized(a.dtype, "input A", [&](auto at) {
        using A = typename decltype(at)::type;
        dispatch_quantized(b.dtype, "input B", [&](auto bt) {
            using B = typename decltype(bt)::type;
            k = make_kernel([g, za, zb](const void* const* in, void* const* out) {
                int32_t* y = out_as<int32_t>(out, 0);
                const void* pzb = zb.present ? in[3] : nullptr;  // absent optional inputs have no slot
                int_matmul_run(
                    g, in_as<A>(in, 0), za.at(za.present ? in[2] : nullptr, 0), in_as<B>(in, 1),
                    [&](int64_t c) { return zb.at(pzb, c); }, nullptr,
                    [&](int64_t o, int64_t, int32_t acc) { y[o] = acc; });
            });
        });
    });
    return k;
}

// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp[, bias]).
std::unique_ptr<Kernel> create_qlinear_matmul(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& a = *node.inputs[0];
    const TensorDesc& b = *node.inputs[3];
    const TensorDesc* y_zp = node.input(7);
    if (!y_zp) fail(KES_ERR_INVALID_ARGUMENT, "input y_zero_point is required (it sets the output type)");
    TensorDesc& y = outputs[0];
    const IntMatMulGeom g = int_matmul_geometry(a, b, y);
    const Quant qa = read_quant(*node.inputs[1], node.input(2), a.dtype, "a");
    const Quant qb = read_quant(*node.inputs[4], node.input(5), b.dtype, "b", 1, per_column_channels(b, g));
    const Quant qy = read_quant(*node.inputs[6], y_zp, y_zp->dtype, "y");
    y.dtype = y_zp->dtype;
    y.quant = qy;
    const bool has_bias = read_bias_input(node.input(8), g.n);
    const Requant rq = make_requant(node, qa, qb, qy, y.dtype, qb.scale.size() == 1);
    std::unique_ptr<Kernel> k;
    dispatch_quantized(a.dtype, "input a", [&](auto at) {
        using A = typename decltype(at)::type;
        dispatch_quantized(b.dtype, "input b", [&](auto bt) {
            using B = typename decltype(bt)::type;
            dispatch_quantized(y.dtype, "input y_zero_point", [&](auto yt) {
                using Y = typename decltype(yt)::type;
                k = make_kernel([g, qa, qb, rq, has_bias](const void* const* in, void* const* out) {
                    Y* py = out_as<Y>(out, 0);
                    int_matmul_run(
                        g, in_as<A>(in, 0), quant_zero_point(qa, 0), in_as<B>(in, 3),
                        [&](int64_t c) { return quant_zero_point(qb, c); }, has_bias ? in_as<int32_t>(in, 8) : nullptr,
                        [&](int64_t o, int64_t c, int32_t acc) { py[o] = static_cast<Y>(rq.apply(acc, c)); });
                });
            });
        });
    });
    return k;
}

// ---- DynamicQuantizeLinear -----------------------------------------------------------------------------

// y, y_scale, y_zero_point = DynamicQuantizeLinear(x), u8. As ONNX Runtime: the range [min(0, min x),
// max(0, max x)] over 255 steps (scale 1 when the range is empty), zero point round-half-even of
// -min / scale clamped to [0, 255], then QuantizeLinear. NaNs are skipped by the min/max.
std::unique_ptr<Kernel> create_dynamic_quantize(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    require_dtype(x, KES_F32, "input x");
    outputs[0].dtype = KES_U8;
    outputs[0].shape = x.shape;
    if (outputs.size() > 1) outputs[1].dtype = KES_F32, outputs[1].shape = {};
    if (outputs.size() > 2) outputs[2].dtype = KES_U8, outputs[2].shape = {};
    const int64_t count = x.elements();
    const size_t n_out = outputs.size();
    return make_kernel([count, n_out](const void* const* in, void* const* out) {
        const float* px = in_as<float>(in, 0);
        float lo = 0.0f, hi = 0.0f;
        for (int64_t i = 0; i < count; ++i) lo = std::min(lo, px[i]), hi = std::max(hi, px[i]);
        const QuantRange r = quantized_range(KES_U8);
        const float scale = hi == lo ? 1.0f : (hi - lo) / static_cast<float>(r.max - r.min);
        const float zero_from_min = static_cast<float>(r.min) - lo / scale;
        const int32_t zp = static_cast<int32_t>(
            std::nearbyint(std::max(static_cast<float>(r.min), std::min(static_cast<float>(r.max), zero_from_min))));
        uint8_t* y = out_as<uint8_t>(out, 0);
        for (int64_t i = 0; i < count; ++i) y[i] = static_cast<uint8_t>(quantize_value(px[i], scale, zp, r));
        if (n_out > 1 && out[1]) *out_as<float>(out, 1) = scale;
        if (n_out > 2 && out[2]) *out_as<uint8_t>(out, 2) = static_cast<uint8_t>(zp);
    });
}

// ---- QLinearAdd, QLinearMul (com.microsoft) ------------------------------------------------------------

// QLinearAdd / QLinearMul(A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp): broadcasting, C of A's type.
// Add as ONNX Runtime's reference loop: A_s·(a - za) + B_s·(b - zb) in f32, divided by C_s, rounded
// half to even, + zc. Mul: the integer product (a - za)(b - zb) requantized by A_s·B_s / C_s.
// TFLite's (kes_requantization "tflite"), as its ADD and MUL kernels: Add scales each (x - zx)·2^20
// by x_s / (2·max(A_s, B_s)) and their sum by 2·max(A_s, B_s) / (2^20·C_s), each a fixed-point
// multiplier; Mul requantizes the product by the fixed-point A_s·B_s / C_s (that product in f32).
struct TfliteAddParams {
    FixedPointMultiplier a, b, out;
};
TfliteAddParams tflite_add_params(float sa, float sb, float sc) {
    constexpr int kLeftShift = 20;  // TFLite's headroom for 8-bit inputs
    const double twice_max = 2.0 * static_cast<double>(std::max(sa, sb));
    TfliteAddParams p;
    p.a = quantize_multiplier(sa / twice_max, "input A");
    p.b = quantize_multiplier(sb / twice_max, "input B");
    p.out = quantize_multiplier(twice_max / (static_cast<double>(int64_t{1} << kLeftShift) * sc), "output C");
    return p;
}
inline int32_t tflite_add(int32_t da, int32_t db, const TfliteAddParams& p) {
    const int32_t sa = multiply_by_quantized_multiplier(da * (1 << 20), p.a);
    const int32_t sb = multiply_by_quantized_multiplier(db * (1 << 20), p.b);
    return multiply_by_quantized_multiplier(sa + sb, p.out);
}

template <bool kMul>
std::unique_ptr<Kernel> create_qlinear_binary(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& a = *node.inputs[0];
    const TensorDesc& b = *node.inputs[3];
    require_quantized(a, "input A");
    if (a.dtype != b.dtype)
        fail(KES_ERR_INVALID_ARGUMENT, "inputs A (%s) and B (%s) differ in type", kes_dtype_name(a.dtype),
             kes_dtype_name(b.dtype));
    require_rank_at_most(a, kMaxRank, "input A");
    require_rank_at_most(b, kMaxRank, "input B");
    const Quant qa = read_quant(*node.inputs[1], node.input(2), a.dtype, "A");
    const Quant qb = read_quant(*node.inputs[4], node.input(5), b.dtype, "B");
    const Quant qc = read_quant(*node.inputs[6], node.input(7), a.dtype, "C");
    TensorDesc& c = outputs[0];
    c.dtype = a.dtype;
    c.shape = broadcast_shapes(a.shape, b.shape);
    c.quant = qc;
    const BroadcastPlan plan = make_broadcast_plan(c.shape, {a.shape, b.shape});
    const int32_t za = quant_zero_point(qa, 0), zb = quant_zero_point(qb, 0), zc = quant_zero_point(qc, 0);
    const float sa = qa.scale[0], sb = qb.scale[0], sc = qc.scale[0];
    const float mul_multiplier = sa * sb / sc;
    const Requantization mode = requantization_of(node.attrs);
    const bool tflite = mode == Requantization::Tflite;
    const QuantRange range =
        fused_activation_range(Activation::from_attrs(node.attrs), sc, zc, quantized_range(a.dtype), mode);
    TfliteAddParams add_fixed;
    FixedPointMultiplier mul_fixed;
    if (tflite && kMul) mul_fixed = quantize_multiplier(static_cast<double>(sa * sb / sc), "output C");
    if (tflite && !kMul) add_fixed = tflite_add_params(sa, sb, sc);
    std::unique_ptr<Kernel> k;
    dispatch_quantized(a.dtype, "input A", [&](auto t) {
        using T = typename decltype(t)::type;
        k = make_kernel([=](const void* const* in, void* const* out) {
            const T* pa = in_as<T>(in, 0);
            const T* pb = in_as<T>(in, 3);
            T* pc = out_as<T>(out, 0);
            for_each_broadcast(plan, [&](int64_t i, int64_t ia, int64_t ib, int64_t) {
                const int32_t da = static_cast<int32_t>(pa[ia]) - za, db = static_cast<int32_t>(pb[ib]) - zb;
                if (tflite) {
                    const int32_t v =
                        (kMul ? multiply_by_quantized_multiplier(da * db, mul_fixed) : tflite_add(da, db, add_fixed)) +
                        zc;
                    pc[i] = static_cast<T>(std::min(std::max(v, range.min), range.max));
                } else if constexpr (kMul) {
                    pc[i] = static_cast<T>(requantize(da * db, mul_multiplier, zc, range));
                } else {
                    const float sum = sa * static_cast<float>(da) + sb * static_cast<float>(db);
                    pc[i] = static_cast<T>(round_to_quantized(sum / sc, zc, range));
                }
            });
        });
    });
    return k;
}

// ---- QLinearGlobalAveragePool (com.microsoft) ----------------------------------------------------------

// QLinearGlobalAveragePool(X, x_scale, x_zp, y_scale, y_zp), attribute channels_last (0: NCHW...,
// 1: N...C): the integer sum of (x - zx) over the image requantized by x_scale / (y_scale · pixels).
std::unique_ptr<Kernel> create_qlinear_global_average_pool(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    if (x.rank() < 3)
        fail(KES_ERR_INVALID_ARGUMENT, "input X has shape %s; expected N, C and spatial axes",
             shape_string(x.shape).c_str());
    const int64_t channels_last = node.attrs.get_int("channels_last", 0);
    if (channels_last != 0 && channels_last != 1)
        fail(KES_ERR_INVALID_ARGUMENT, "attribute 'channels_last' is %lld; expected 0 or 1",
             static_cast<long long>(channels_last));
    const Quant qx = read_quant(*node.inputs[1], node.input(2), x.dtype, "x");
    const Quant qy = read_quant(*node.inputs[3], node.input(4), x.dtype, "y");
    TensorDesc& y = outputs[0];
    y.dtype = x.dtype;
    y.quant = qy;
    const size_t c_axis = channels_last ? x.shape.size() - 1 : 1;
    const int64_t n = x.shape[0], c = x.shape[c_axis];
    const int64_t pixels = c == 0 || n == 0 ? 0 : x.elements() / (n * c);
    y.shape = Shape(x.shape.size(), 1);
    y.shape[0] = n, y.shape[c_axis] = c;
    const float multiplier = qx.scale[0] / (qy.scale[0] * static_cast<float>(pixels));
    const int32_t zx = quant_zero_point(qx, 0), zy = quant_zero_point(qy, 0);
    const QuantRange range = quantized_range(x.dtype);
    const bool last = channels_last != 0;
    std::unique_ptr<Kernel> k;
    dispatch_quantized(x.dtype, "input X", [&](auto t) {
        using T = typename decltype(t)::type;
        k = make_kernel([=](const void* const* in, void* const* out) {
            const T* px = in_as<T>(in, 0);
            T* py = out_as<T>(out, 0);
            for (int64_t b = 0; b < n; ++b)
                for (int64_t ch = 0; ch < c; ++ch) {
                    int64_t acc = 0;
                    for (int64_t p = 0; p < pixels; ++p)
                        acc +=
                            static_cast<int32_t>(last ? px[(b * pixels + p) * c + ch] : px[(b * c + ch) * pixels + p]) -
                            zx;
                    py[b * c + ch] = static_cast<T>(requantize(wrap_i32(acc), multiplier, zy, range));
                }
        });
    });
    return k;
}

// ---- QLinearConcat (com.microsoft) ---------------------------------------------------------------------

// QLinearConcat(Y_scale, Y_zp, X0, X0_scale, X0_zp, X1, ...), attribute axis. An input quantized as
// the output is copied; another is requantized through a 256-entry table of QuantizeLinear(
// (x - zx) · x_scale), as ONNX Runtime does; with kes_requantization "tflite", of round(x · s − zx · s)
// half away from zero + zy, s = x_scale · (1 / y_scale) in f32, as TFLite's CONCATENATION.
std::unique_ptr<Kernel> create_qlinear_concat(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    if (node.inputs.size() < 5 || (node.inputs.size() - 2) % 3 != 0)
        fail(KES_ERR_INVALID_ARGUMENT,
             "%zu inputs; expected Y_scale, Y_zero_point and (X, X_scale, X_zero_point) triples", node.inputs.size());
    const size_t count = (node.inputs.size() - 2) / 3;
    for (size_t i = 0; i < node.inputs.size(); ++i)
        if (!node.inputs[i]) fail(KES_ERR_INVALID_ARGUMENT, "input %zu is omitted; QLinearConcat takes them all", i);
    const TensorDesc& x0 = *node.inputs[2];
    const kes_dtype dtype = x0.dtype;
    require_quantized(x0, "input X0");
    const QuantRange range = quantized_range(dtype);
    const Quant qy = read_quant(*node.inputs[0], node.inputs[1], dtype, "Y");
    const bool tflite = requantization_of(node.attrs) == Requantization::Tflite;
    const int64_t rank = x0.rank();
    if (rank < 1) fail(KES_ERR_INVALID_ARGUMENT, "inputs must have rank >= 1");
    const int64_t axis = normalize_axis(node.attrs.get_int("axis", 0), rank);
    Shape out = x0.shape;
    out[static_cast<size_t>(axis)] = 0;
    struct Part {
        int64_t block = 0;        // elements per outer index (axis extent × inner)
        bool same = true;         // quantized as the output: copied
        int16_t table[256] = {};  // else: output value of each input byte (indexed by the byte)
    };
    std::vector<Part> parts(count);
    for (size_t i = 0; i < count; ++i) {
        const TensorDesc& x = *node.inputs[2 + 3 * i];
        if (x.dtype != dtype || x.rank() != rank)
            fail(KES_ERR_INVALID_ARGUMENT, "input X%zu is %s %s; X0 is %s %s", i, kes_dtype_name(x.dtype),
                 shape_string(x.shape).c_str(), kes_dtype_name(dtype), shape_string(x0.shape).c_str());
        for (int64_t d = 0; d < rank; ++d)
            if (d != axis && x.shape[static_cast<size_t>(d)] != x0.shape[static_cast<size_t>(d)])
                fail(KES_ERR_INVALID_ARGUMENT, "input X%zu has shape %s; X0 %s (only axis %lld may differ)", i,
                     shape_string(x.shape).c_str(), shape_string(x0.shape).c_str(), static_cast<long long>(axis));
        out[static_cast<size_t>(axis)] += x.shape[static_cast<size_t>(axis)];
        const std::string name = format("X%zu", i);
        const Quant qx = read_quant(*node.inputs[3 + 3 * i], node.inputs[4 + 3 * i], dtype, name.c_str());
        Part& p = parts[i];
        const AxisSplit s = split_at_axis(x.shape, axis);
        p.block = s.dim * s.inner;
        p.same = qx.scale[0] == qy.scale[0] && qx.zero_point[0] == qy.zero_point[0];
        const int32_t zx = quant_zero_point(qx, 0), zy = quant_zero_point(qy, 0);
        const float tflite_scale = qx.scale[0] * (1.0f / qy.scale[0]),
                    tflite_bias = static_cast<float>(-zx) * tflite_scale;
        for (int32_t v = range.min; v <= range.max; ++v) {
            int32_t q;
            if (tflite) {
                // Bounded before the cast: a hostile scale ratio must not overflow the conversion.
                const float r = std::round(static_cast<float>(v) * tflite_scale + tflite_bias) + static_cast<float>(zy);
                q = static_cast<int32_t>(
                    std::min(std::max(r, static_cast<float>(range.min)), static_cast<float>(range.max)));
            } else {
                q = quantize_value(static_cast<float>(v - zx) * qx.scale[0], qy.scale[0], zy, range);
            }
            p.table[static_cast<uint8_t>(v)] = static_cast<int16_t>(q);
        }
    }
    const int64_t outer = split_at_axis(out, axis).outer;
    outputs[0].dtype = dtype;
    outputs[0].shape = out;
    outputs[0].quant = qy;
    return make_kernel([parts, outer, count](const void* const* in, void* const* outp) {
        uint8_t* y = out_as<uint8_t>(outp, 0);  // u8 and i8 alike: bytes, the table indexed by the byte
        for (int64_t o = 0; o < outer; ++o)
            for (size_t i = 0; i < count; ++i) {
                const Part& p = parts[i];
                const uint8_t* x = in_as<uint8_t>(in, 2 + 3 * i) + o * p.block;
                if (p.same)
                    std::memcpy(y, x, static_cast<size_t>(p.block));
                else
                    for (int64_t e = 0; e < p.block; ++e) y[e] = static_cast<uint8_t>(p.table[x[e]]);
                y += p.block;
            }
    });
}

}  // namespace

void add_quant_ops(OpList& ops) {
    ops.push_back({"DequantizeLinear", 2, 3, 1, 1, create_dequantize});
    ops.push_back({"QuantizeLinear", 2, 3, 1, 1, create_quantize});
    ops.push_back({"DynamicQuantizeLinear", 1, 1, 1, 3, create_dynamic_quantize});
    ops.push_back({"ConvInteger", 2, 4, 1, 1, create_conv_integer});
    ops.push_back({"MatMulInteger", 2, 4, 1, 1, create_matmul_integer});
    ops.push_back({"QLinearConv", 8, 9, 1, 1, create_qlinear_conv});
    ops.push_back({"QLinearMatMul", 8, 9, 1, 1, create_qlinear_matmul});
    ops.push_back({"QLinearAdd", 7, 8, 1, 1, create_qlinear_binary<false>});
    ops.push_back({"QLinearMul", 7, 8, 1, 1, create_qlinear_binary<true>});
    ops.push_back({"QLinearGlobalAveragePool", 4, 5, 1, 1, create_qlinear_global_average_pool});
    ops.push_back({"QLinearConcat", 5, 2 + 3 * 64, 1, 1, create_qlinear_concat});
}

}  // namespace kes
