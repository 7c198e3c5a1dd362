// quant.cpp — see quant.hpp.
#include "quant.hpp"

#include "geometry.hpp"
#include "kes/error.hpp"

namespace kes {

bool is_quantized_dtype(kes_dtype dtype) {
    return dtype == KES_U8 || dtype == KES_I8;
}

QuantRange quantized_range(kes_dtype dtype) {
    if (dtype == KES_U8) return {0, 255};
    if (dtype == KES_I8) return {-128, 127};
    fail(KES_ERR_UNSUPPORTED, "quantized type %s is not supported (u8, i8)", kes_dtype_name(dtype));
}

namespace {

int64_t zero_point_at(const TensorDesc& zp, int64_t i) {
    return zp.dtype == KES_U8 ? static_cast<const uint8_t*>(zp.data)[i] : static_cast<const int8_t*>(zp.data)[i];
}

}  // namespace

Quant read_quant(const TensorDesc& scale, const TensorDesc* zero_point, kes_dtype q_dtype, const char* what,
                 int64_t axis, int64_t channels) {
    if (scale.dtype != KES_F32)
        fail(KES_ERR_INVALID_ARGUMENT, "%s_scale is %s; expected f32", what, kes_dtype_name(scale.dtype));
    if (!scale.is_const() || (zero_point && !zero_point->is_const()))
        fail(KES_ERR_UNSUPPORTED, "%s_scale and %s_zero_point must be constants", what, what);
    const int64_t n = scale.elements();
    // One value is per tensor whatever its rank (ONNX's tests write [1] as often as []).
    if (n != 1 && !(channels > 0 && scale.rank() == 1 && n == channels)) {
        if (channels > 0)
            fail(KES_ERR_INVALID_ARGUMENT, "%s_scale has shape %s; expected a scalar or [%lld]", what,
                 shape_string(scale.shape).c_str(), static_cast<long long>(channels));
        fail(KES_ERR_INVALID_ARGUMENT, "%s_scale has shape %s; expected a scalar (per tensor)", what,
             shape_string(scale.shape).c_str());
    }
    Quant q;
    q.axis = n != 1 ? axis : -1;
    const float* s = static_cast<const float*>(scale.data);
    q.scale.assign(s, s + n);
    for (float v : q.scale)
        if (!(v > 0.0f) || !std::isfinite(v))
            fail(KES_ERR_INVALID_ARGUMENT, "%s_scale holds %g; scales must be finite and > 0", what,
                 static_cast<double>(v));
    q.zero_point.assign(static_cast<size_t>(n), 0);
    if (zero_point) {
        if (zero_point->dtype != q_dtype)
            fail(KES_ERR_INVALID_ARGUMENT, "%s_zero_point is %s; expected %s", what, kes_dtype_name(zero_point->dtype),
                 kes_dtype_name(q_dtype));
        if (zero_point->elements() != n)
            fail(KES_ERR_INVALID_ARGUMENT, "%s_zero_point has shape %s; %s_scale %s", what,
                 shape_string(zero_point->shape).c_str(), what, shape_string(scale.shape).c_str());
        for (int64_t i = 0; i < n; ++i) q.zero_point[static_cast<size_t>(i)] = zero_point_at(*zero_point, i);
    }
    return q;
}

Requantization requantization_of(const Attrs& attrs) {
    return get_choice(attrs, "kes_requantization", "onnx", {"onnx", "tflite"}) == "tflite" ? Requantization::Tflite
                                                                                           : Requantization::Onnx;
}

FixedPointMultiplier quantize_multiplier(double real, const char* what) {
    if (!(real >= 0.0) || !std::isfinite(real))
        fail(KES_ERR_INVALID_ARGUMENT, "%s multiplier %g is not finite and >= 0", what, real);
    FixedPointMultiplier m;
    if (real == 0.0) return m;
    const double significand = std::frexp(real, &m.shift);
    int64_t q = static_cast<int64_t>(std::round(significand * static_cast<double>(int64_t{1} << 31)));
    if (q == (int64_t{1} << 31)) q /= 2, ++m.shift;
    if (m.shift < -31) return FixedPointMultiplier{};  // every bit would shift out: TFLite flushes to 0
    if (m.shift > 30)
        fail(KES_ERR_INVALID_ARGUMENT, "%s multiplier %g is too large (>= 2^31; check the quantization scales)", what,
             real);
    m.multiplier = static_cast<int32_t>(q);
    return m;
}

QuantRange fused_activation_range(const Activation& act, float scale, int32_t zp, QuantRange r, Requantization mode) {
    const auto quantize = [&](float v) {
        return mode == Requantization::Tflite ? quantize_value_tflite(v, scale, zp, r)
                                              : quantize_value(v, scale, zp, r);
    };
    switch (act.kind) {
        case Activation::Kind::None: return r;
        case Activation::Kind::Relu: return {std::max(r.min, zp), r.max};
        case Activation::Kind::Clip: {
            const QuantRange c{quantize(act.min), quantize(act.max)};
            return {std::max(r.min, c.min), std::min(r.max, c.max)};
        }
        default: fail(KES_ERR_UNSUPPORTED, "a quantized output takes only a fused Relu or Clip");
    }
}

}  // namespace kes
