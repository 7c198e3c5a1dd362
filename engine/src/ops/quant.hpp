// quant.hpp — the op layer's quantization rules (no kernels): which element types are quantized, how an
// op reads a tensor's scale and zero point from its constant inputs, and the rounding every quantized
// kernel shares. The reference kernels (kernels/ref/quant.cpp), the converter's QDQ fusion
// (convert/fusion_qdq.cpp) and, later, fast int8 kernels all use these, so they agree on every bit.
//
// Arithmetic follows ONNX Runtime's CPU provider (MLAS), the reference users compare against:
// - QuantizeLinear: x / scale in f32, clamped to [qmin - zp, qmax - zp], rounded half to even, + zp.
//   A NaN becomes qmin (MLAS's x86 MAXPS keeps the bound when x is NaN).
// - Requantization of an int32 accumulator (QLinearConv, QLinearMatMul, QLinearGlobalAveragePool):
//   f32(acc) · multiplier in f32, where multiplier = in_scale · w_scale / out_scale computed in f32 in
//   that order; then clamped, rounded half to even and shifted by the output zero point as above.
// docs/ARCHITECTURE.md "Quantized models" lists each op's rule and how exactly it matches ONNX Runtime.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "../op.hpp"

namespace kes {

// u8 and i8, the element types of ONNX's QuantizeLinear output and of every QLinear* tensor.
bool is_quantized_dtype(kes_dtype dtype);
struct QuantRange {
    int32_t min = 0, max = 255;
};
QuantRange quantized_range(kes_dtype dtype);  // [0, 255] or [-128, 127]; UNSUPPORTED for others

// A tensor's scale and zero point from an op's constant inputs (scale: f32; zero point: `q_dtype`, or
// omitted = 0). Per tensor (one value), or per axis when `channels` > 0: a 1-D scale of `channels`
// values along `axis` (the zero point then has as many). `what` names the tensor in errors ("x", "w").
// Throws UNSUPPORTED when an input is not constant (quantized kernels fix their arithmetic at create()),
// INVALID_ARGUMENT for a shape or dtype that does not fit, a scale that is not finite and > 0, or a zero
// point outside the type's range.
Quant read_quant(const TensorDesc& scale, const TensorDesc* zero_point, kes_dtype q_dtype, const char* what,
                 int64_t axis = -1, int64_t channels = 0);

inline float quant_scale(const Quant& q, int64_t c) {
    return q.scale.size() == 1 ? q.scale[0] : q.scale[c];
}
inline int32_t quant_zero_point(const Quant& q, int64_t c) {
    return static_cast<int32_t>(q.zero_point.size() == 1 ? q.zero_point[0] : q.zero_point[c]);
}

// v clamped to [lo - zp, hi - zp], rounded half to even (std::nearbyint in the default rounding mode),
// plus zp: the last step of QuantizeLinear and of every requantization. NaN gives lo.
inline int32_t round_to_quantized(float v, int32_t zp, QuantRange r) {
    v = std::max(v, static_cast<float>(r.min - zp));  // a NaN v takes the bound, as MAXPS does
    v = std::min(v, static_cast<float>(r.max - zp));
    if (std::isnan(v)) v = static_cast<float>(r.min - zp);
    return static_cast<int32_t>(std::nearbyint(v)) + zp;
}

// ONNX QuantizeLinear of one value.
inline int32_t quantize_value(float x, float scale, int32_t zp, QuantRange r) {
    return round_to_quantized(x / scale, zp, r);
}

// The multiplier of that requantization, in ONNX Runtime's order (in_scale · w_scale, then / out_scale,
// in f32): the reference and the fast kernels compute it here, so they agree on every bit.
inline float requant_multiplier(float in_scale, float w_scale, float out_scale) {
    return in_scale * w_scale / out_scale;
}

// Requantization of an int32 accumulator by an f32 multiplier (see the top of this file).
inline int32_t requantize(int32_t acc, float multiplier, int32_t zp, QuantRange r) {
    return round_to_quantized(static_cast<float>(acc) * multiplier, zp, r);
}

// The output range left after a fused Relu or Clip (op.hpp's Activation, attributes "activation",
// "activation_min"/"activation_max") on a quantized output: quantization is monotonic and maps 0 to the
// zero point, so Relu then QuantizeLinear equals QuantizeLinear then a clamp at zp, and Clip(a, b)
// a clamp at the quantized a and b — exactly, with no extra rounding. UNSUPPORTED for other activations.
QuantRange fused_activation_range(const Activation& act, float scale, int32_t zp, QuantRange r);

}  // namespace kes
