// quant.cpp — the quantized ops' reference kernels.
//
// - DequantizeLinear (u8, i8, i32 → f32) and QuantizeLinear (f32 → u8/i8; rounding half to even,
//   saturating): per-tensor (one-element scale) or per-axis (1-D scale along "axis", default 1); scale
//   and zero point are read at run time.
#include <cmath>

#include "op_util.hpp"
#include "ops.hpp"

namespace kes {

namespace {

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
std::unique_ptr<Kernel> quantize_kernel(const QuantPlan& q) {
    return make_kernel([q](const void* const* in, void* const* out) {
        const float* x = in_as<float>(in, 0);
        const float* scale = in_as<float>(in, 1);
        const Q* zp = q.has_zero_point && in[2] ? in_as<Q>(in, 2) : nullptr;
        Q* y = out_as<Q>(out, 0);
        for (int64_t i = 0; i < q.count; ++i) {
            const int64_t c = (i / q.inner) % q.channels;
            // x / scale in float, as ONNX's reference and ONNX Runtime compute it (ties then round alike).
            const double v = static_cast<double>(std::nearbyint(x[i] / scale[c])) + (zp ? zp[c] : 0);
            y[i] = saturate_cast<Q>(v);
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
    switch (outputs[0].dtype) {
        case KES_U8: return quantize_kernel<uint8_t>(q);
        case KES_I8: return quantize_kernel<int8_t>(q);
        default: unsupported_dtype("input zero_point", outputs[0].dtype, "u8, i8");
    }
}

}  // namespace

void add_quant_ops(OpList& ops) {
    ops.push_back({"DequantizeLinear", 2, 3, 1, 1, create_dequantize});
    ops.push_back({"QuantizeLinear", 2, 3, 1, 1, create_quantize});
}

}  // namespace kes
