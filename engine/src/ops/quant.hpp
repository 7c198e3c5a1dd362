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
// A TFLite model's ops carry the attribute kes_requantization = "tflite" and follow TFLite's integer
// arithmetic instead (its reference kernels, which its optimized ones match bit for bit): multipliers
// as a Q31 significand and a power-of-two shift (QuantizeMultiplier), products rounded by gemmlowp's
// SaturatingRoundingDoublingHighMul then RoundingDivideByPOT (two roundings, as TFLite's default build),
// and std::round (half away from zero)
// wherever TFLite rounds a float. Each format then matches its own runtime exactly.
// docs/ARCHITECTURE.md "Quantized models" lists each op's rule and how exactly it matches its runtime.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

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

// Which runtime's requantization an op follows: attribute kes_requantization, "onnx" (the default) or
// "tflite"; INVALID_ARGUMENT naming another value.
enum class Requantization { Onnx, Tflite };
Requantization requantization_of(const Attrs& attrs);

// TFLite's fixed-point multiplier: real ≈ multiplier · 2^(shift − 31), multiplier in [2^30, 2^31).
struct FixedPointMultiplier {
    int32_t multiplier = 0;
    int shift = 0;  // > 0: a left shift before the multiplication; <= 0: a rounding right shift after
};
// TFLite's QuantizeMultiplier (frexp, the significand rounded half away from zero to Q31; below 2^-31
// it flushes to 0). `what` names the multiplier in errors: INVALID_ARGUMENT for one that is not finite
// and >= 0, or too large to shift (>= 2^31: scales that no converter writes).
FixedPointMultiplier quantize_multiplier(double real, const char* what);

// gemmlowp's SaturatingRoundingDoublingHighMul: the high 32 bits of 2·a·b, rounded to nearest (its
// nudge sends a tie up: 1.5 → 2 but -1.5 → -1); INT32_MIN² saturates.
inline int32_t saturating_rounding_doubling_high_mul(int32_t a, int32_t b) {
    if (a == b && a == std::numeric_limits<int32_t>::min()) return std::numeric_limits<int32_t>::max();
    const int64_t ab = static_cast<int64_t>(a) * b;
    const int64_t nudge = ab >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
    return static_cast<int32_t>((ab + nudge) / (int64_t{1} << 31));
}
// gemmlowp's RoundingDivideByPOT: x / 2^exponent rounded half away from zero (0 <= exponent <= 31).
inline int32_t rounding_divide_by_pot(int32_t x, int exponent) {
    const int32_t mask = static_cast<int32_t>((int64_t{1} << exponent) - 1);
    const int32_t remainder = x & mask;
    const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}
// TFLite's MultiplyByQuantizedMultiplier. Its left shift is an int32 multiplication in TFLite; here it
// wraps (defined behaviour) where TFLite's would overflow.
inline int32_t multiply_by_quantized_multiplier(int32_t x, FixedPointMultiplier m) {
    const int left = m.shift > 0 ? m.shift : 0, right = m.shift > 0 ? 0 : -m.shift;
    const int32_t shifted = static_cast<int32_t>(static_cast<uint32_t>(x) << left);
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(shifted, m.multiplier), right);
}

// TFLite's QUANTIZE of one value: round(x / scale) half away from zero, + zp, saturated. NaN gives lo.
inline int32_t quantize_value_tflite(float x, float scale, int32_t zp, QuantRange r) {
    const float v = std::round(x / scale);
    if (std::isnan(v)) return r.min;
    if (v <= static_cast<float>(r.min - zp)) return r.min;
    if (v >= static_cast<float>(r.max - zp)) return r.max;
    return static_cast<int32_t>(v) + zp;
}

// The output range left after a fused Relu or Clip (op.hpp's Activation, attributes "activation",
// "activation_min"/"activation_max") on a quantized output: quantization is monotonic and maps 0 to the
// zero point, so Relu then QuantizeLinear equals QuantizeLinear then a clamp at zp, and Clip(a, b)
// a clamp at the quantized a and b — exactly, with no extra rounding. UNSUPPORTED for other activations.
// TFLite quantizes the bounds with its own rounding (CalculateActivationRangeQuantized).
QuantRange fused_activation_range(const Activation& act, float scale, int32_t zp, QuantRange r,
                                  Requantization mode = Requantization::Onnx);

}  // namespace kes
