// elementwise.cpp — unary, binary (numpy broadcasting), variadic and select ops.
//
// Choices:
// - Unary math is f32 (Abs/Neg/Relu/Sign also i8, i32, i64). Add, Sub, Mul, Div, Mod, the comparisons
//   and Max/Min/Sum/Mean run on every plain numeric dtype (f32, f64, i8, u8, i16, u16, i32, u32, i64,
//   u64); the arithmetic ones and Max/Min/Sum/Mean also on f16 (each step computed in float and rounded
//   back to f16, nearest even); Pow takes an f32/f64/i32/i64 base and any numeric exponent, computed in double and
//   converted back (integers saturate).
// - Integer Add/Sub/Mul wrap around (two's complement, like ONNX Runtime) instead of being undefined;
//   integer Div truncates toward zero; a zero divisor is KES_ERR_INVALID_ARGUMENT at run time
//   (INT_MIN / -1 wraps to INT_MIN). Mod: fmod=0 takes the divisor's sign (integers only), fmod=1 the
//   dividend's (C fmod / %).
// - BitShift on unsigned types; shifting by the bit width or more gives 0.
// - Comparisons (Equal, Greater, Less, GreaterOrEqual, LessOrEqual) write bool (one byte, 0/1).
// - Fused activations ("activation" attributes, op.hpp) are honoured by Add, Sub, Mul, Div on f32.
// - Round is half-to-even (ONNX); Erf is std::erf in float; Relu(NaN) = NaN; Max/Min return NaN if any
//   input is NaN.
// - Dropout is inference only: a constant training_mode of true is KES_ERR_UNSUPPORTED; the optional
//   mask output is all true.
#include <cmath>
#include <limits>
#include <type_traits>

#include "op_util.hpp"
#include "ops.hpp"

namespace kes {

namespace {

// ---- unary --------------------------------------------------------------------------------------------

enum class Un {
    Relu,
    Abs,
    Neg,
    Sigmoid,
    Tanh,
    Sqrt,
    Exp,
    Log,
    Floor,
    Ceil,
    Round,
    Reciprocal,
    Erf,
    HardSwish,
    HardSigmoid,
    LeakyRelu,
    Elu,
    Selu,
    Softplus,
    Softsign,
    Sign,
    Sin,
    Cos,
    Celu,
    ThresholdedRelu,
    Tan,
    Sinh,
    Cosh,
    Asin,
    Acos,
    Atan,
    Asinh,
    Acosh,
    Atanh,
    Shrink
};

struct UnParams {
    float alpha = 0.0f, beta = 0.0f, gamma = 0.0f;
};

template <Un K>
inline float unary_f(float x, const UnParams& p) {
    if constexpr (K == Un::Relu) return x < 0.0f ? 0.0f : x;
    if constexpr (K == Un::Abs) return std::fabs(x);
    if constexpr (K == Un::Neg) return -x;
    if constexpr (K == Un::Sigmoid) return reference_sigmoid(x);
    if constexpr (K == Un::Tanh) return std::tanh(x);
    if constexpr (K == Un::Sqrt) return std::sqrt(x);
    if constexpr (K == Un::Exp) return std::exp(x);
    if constexpr (K == Un::Log) return std::log(x);
    if constexpr (K == Un::Floor) return std::floor(x);
    if constexpr (K == Un::Ceil) return std::ceil(x);
    if constexpr (K == Un::Round) return std::nearbyint(x);  // default rounding mode: half to even
    if constexpr (K == Un::Reciprocal) return 1.0f / x;
    if constexpr (K == Un::Erf) return std::erf(x);
    if constexpr (K == Un::HardSwish) return x * std::fmin(std::fmax(x / 6.0f + 0.5f, 0.0f), 1.0f);
    if constexpr (K == Un::HardSigmoid) return std::fmin(std::fmax(p.alpha * x + p.beta, 0.0f), 1.0f);
    if constexpr (K == Un::LeakyRelu) return x >= 0.0f ? x : p.alpha * x;
    if constexpr (K == Un::Elu) return x >= 0.0f ? x : p.alpha * (std::exp(x) - 1.0f);
    if constexpr (K == Un::Selu) return x > 0.0f ? p.gamma * x : p.gamma * (p.alpha * std::exp(x) - p.alpha);
    if constexpr (K == Un::Softplus) return x > 20.0f ? x : std::log1p(std::exp(x));
    if constexpr (K == Un::Softsign) return x / (1.0f + std::fabs(x));
    if constexpr (K == Un::Sign) return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x);
    if constexpr (K == Un::Sin) return std::sin(x);
    if constexpr (K == Un::Cos) return std::cos(x);
    if constexpr (K == Un::Celu) return std::fmax(0.0f, x) + std::fmin(0.0f, p.alpha * (std::exp(x / p.alpha) - 1.0f));
    if constexpr (K == Un::ThresholdedRelu) return x > p.alpha ? x : 0.0f;
    if constexpr (K == Un::Tan) return std::tan(x);
    if constexpr (K == Un::Sinh) return std::sinh(x);
    if constexpr (K == Un::Cosh) return std::cosh(x);
    if constexpr (K == Un::Asin) return std::asin(x);
    if constexpr (K == Un::Acos) return std::acos(x);
    if constexpr (K == Un::Atan) return std::atan(x);
    if constexpr (K == Un::Asinh) return std::asinh(x);
    if constexpr (K == Un::Acosh) return std::acosh(x);
    if constexpr (K == Un::Atanh) return std::atanh(x);
    if constexpr (K == Un::Shrink) return x < -p.alpha ? x + p.beta : (x > p.alpha ? x - p.beta : 0.0f);
    return x;
}

template <Un K, class T>
inline T unary_int(T x) {
    if constexpr (K == Un::Relu) return x < 0 ? T(0) : x;
    if constexpr (K == Un::Sign) return static_cast<T>(x > 0 ? 1 : (x < 0 ? -1 : 0));
    // Abs/Neg wrap for the most negative value (as two's complement hardware does) instead of UB.
    const T neg = wrap_sub(T(0), x);
    if constexpr (K == Un::Abs) return x < 0 ? neg : x;
    if constexpr (K == Un::Neg) return neg;
    return x;
}

template <Un K>
constexpr bool unary_has_int() {
    return K == Un::Relu || K == Un::Abs || K == Un::Neg || K == Un::Sign;
}

template <Un K, class T>
std::unique_ptr<Kernel> unary_int_kernel(int64_t n) {
    return make_kernel([n](const void* const* in, void* const* out) {
        const T* x = in_as<T>(in, 0);
        T* y = out_as<T>(out, 0);
        for (int64_t i = 0; i < n; ++i) y[i] = unary_int<K, T>(x[i]);
    });
}

template <Un K>
std::unique_ptr<Kernel> create_unary(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    outputs[0].dtype = x.dtype;
    outputs[0].shape = x.shape;
    const int64_t n = x.elements();
    UnParams p;
    if constexpr (K == Un::HardSigmoid) {
        p.alpha = node.attrs.get_float("alpha", 0.2f);
        p.beta = node.attrs.get_float("beta", 0.5f);
    } else if constexpr (K == Un::LeakyRelu) {
        p.alpha = node.attrs.get_float("alpha", 0.01f);
    } else if constexpr (K == Un::Elu) {
        p.alpha = node.attrs.get_float("alpha", 1.0f);
    } else if constexpr (K == Un::Selu) {
        p.alpha = node.attrs.get_float("alpha", 1.67326319217681884765625f);
        p.gamma = node.attrs.get_float("gamma", 1.05070102214813232421875f);
    } else if constexpr (K == Un::Celu) {
        p.alpha = node.attrs.get_float("alpha", 1.0f);
        if (p.alpha == 0.0f) fail(KES_ERR_INVALID_ARGUMENT, "attribute 'alpha' must not be 0");
    } else if constexpr (K == Un::ThresholdedRelu) {
        p.alpha = node.attrs.get_float("alpha", 1.0f);
    } else if constexpr (K == Un::Shrink) {
        p.alpha = node.attrs.get_float("lambd", 0.5f);
        p.beta = node.attrs.get_float("bias", 0.0f);
    }
    if (x.dtype == KES_F32) {
        return make_kernel([n, p](const void* const* in, void* const* out) {
            const float* a = in_as<float>(in, 0);
            float* y = out_as<float>(out, 0);
            for (int64_t i = 0; i < n; ++i) y[i] = unary_f<K>(a[i], p);
        });
    }
    if constexpr (unary_has_int<K>()) {
        switch (x.dtype) {
            case KES_I8: return unary_int_kernel<K, int8_t>(n);
            case KES_I32: return unary_int_kernel<K, int32_t>(n);
            case KES_I64: return unary_int_kernel<K, int64_t>(n);
            default: unsupported_dtype("input X", x.dtype, "f32, i8, i32, i64");
        }
    }
    unsupported_dtype("input X", x.dtype, "f32");
}

// Identity (any dtype) and Dropout (inference: identity plus an all-true mask).
std::unique_ptr<Kernel> create_identity(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    if (node.op == "Dropout") {
        if (const TensorDesc* ratio = node.input(1)) {
            if (!ratio->is_const() && ratio->dtype != KES_F32 && ratio->dtype != KES_F16 && ratio->dtype != KES_F64)
                unsupported_dtype("input ratio", ratio->dtype, "f32, f16, f64");
        }
        if (const TensorDesc* training = node.input(2)) {
            if (!training->is_const() || training->dtype != KES_BOOL || training->elements() != 1)
                fail(KES_ERR_UNSUPPORTED, "input training_mode must be a constant bool scalar (inference only)");
            if (*static_cast<const uint8_t*>(training->data) != 0)
                fail(KES_ERR_UNSUPPORTED, "training_mode = true is not supported (inference only)");
        }
    }
    outputs[0].dtype = x.dtype;
    outputs[0].shape = x.shape;
    const bool mask = outputs.size() > 1;
    if (mask) {
        outputs[1].dtype = KES_BOOL;
        outputs[1].shape = x.shape;
    }
    const size_t bytes = x.bytes();
    const size_t count = static_cast<size_t>(x.elements());
    return make_kernel([bytes, count, mask](const void* const* in, void* const* out) {
        if (in[0] != out[0] && bytes) std::memmove(out[0], in[0], bytes);
        if (mask && count) std::memset(out[1], 1, count);
    });
}

std::unique_ptr<Kernel> create_not(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    require_dtype(x, KES_BOOL, "input X");
    outputs[0].dtype = KES_BOOL;
    outputs[0].shape = x.shape;
    const int64_t n = x.elements();
    return make_kernel([n](const void* const* in, void* const* out) {
        const uint8_t* a = in_as<uint8_t>(in, 0);
        uint8_t* y = out_as<uint8_t>(out, 0);
        for (int64_t i = 0; i < n; ++i) y[i] = a[i] ? 0 : 1;
    });
}

// IsNaN / IsInf (f32 → bool).
template <bool kInf>
std::unique_ptr<Kernel> create_is_special(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    require_dtype(x, KES_F32, "input X");
    outputs[0].dtype = KES_BOOL;
    outputs[0].shape = x.shape;
    const int64_t n = x.elements();
    const bool neg = node.attrs.get_int("detect_negative", 1) != 0, pos = node.attrs.get_int("detect_positive", 1) != 0;
    return make_kernel([n, neg, pos](const void* const* in, void* const* out) {
        const float* a = in_as<float>(in, 0);
        uint8_t* y = out_as<uint8_t>(out, 0);
        for (int64_t i = 0; i < n; ++i)
            y[i] = kInf ? std::isinf(a[i]) && (a[i] > 0 ? pos : neg) : std::isnan(a[i]) != 0;
    });
}

// ---- Clip -----------------------------------------------------------------------------------------------

template <class T>
std::unique_ptr<Kernel> clip_kernel(int64_t n, bool has_min, bool has_max) {
    return make_kernel([n, has_min, has_max](const void* const* in, void* const* out) {
        const T* x = in_as<T>(in, 0);
        T* y = out_as<T>(out, 0);
        // min/max are read per run: they may be runtime tensors.
        const T lo = has_min && in[1] ? *in_as<T>(in, 1) : std::numeric_limits<T>::lowest();
        const T hi = has_max && in[2] ? *in_as<T>(in, 2) : std::numeric_limits<T>::max();
        for (int64_t i = 0; i < n; ++i) {
            const T v = x[i] < lo ? lo : x[i];
            y[i] = v > hi ? hi : v;  // when min > max every value becomes max (ONNX)
        }
    });
}

std::unique_ptr<Kernel> create_clip(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    for (size_t i = 1; i < 3; ++i) {
        const TensorDesc* b = node.input(i);
        if (!b) continue;
        if (b->dtype != x.dtype)
            fail(KES_ERR_INVALID_ARGUMENT, "input %s is %s but X is %s", i == 1 ? "min" : "max",
                 kes_dtype_name(b->dtype), kes_dtype_name(x.dtype));
        if (b->elements() != 1)
            fail(KES_ERR_INVALID_ARGUMENT, "input %s must be a scalar (has shape %s)", i == 1 ? "min" : "max",
                 shape_string(b->shape).c_str());
    }
    outputs[0].dtype = x.dtype;
    outputs[0].shape = x.shape;
    const int64_t n = x.elements();
    const bool has_min = node.input(1) != nullptr, has_max = node.input(2) != nullptr;
    switch (x.dtype) {
        case KES_F32: return clip_kernel<float>(n, has_min, has_max);
        case KES_I8: return clip_kernel<int8_t>(n, has_min, has_max);
        case KES_U8: return clip_kernel<uint8_t>(n, has_min, has_max);
        case KES_I32: return clip_kernel<int32_t>(n, has_min, has_max);
        case KES_I64: return clip_kernel<int64_t>(n, has_min, has_max);
        default: unsupported_dtype("input X", x.dtype, "f32, i8, u8, i32, i64");
    }
}

// ---- binary ---------------------------------------------------------------------------------------------

enum class Bin {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    Equal,
    Greater,
    Less,
    GreaterOrEqual,
    LessOrEqual,
    And,
    Or,
    Xor,
    PRelu,
    Mod,
    FMod,
    BitShift
};

template <Bin K>
constexpr bool is_compare() {
    return K == Bin::Equal || K == Bin::Greater || K == Bin::Less || K == Bin::GreaterOrEqual || K == Bin::LessOrEqual;
}

template <Bin K, class T>
inline T arith(T a, T b) {
    if constexpr (std::is_floating_point<T>::value) {
        if constexpr (K == Bin::Add) return a + b;
        if constexpr (K == Bin::Sub) return a - b;
        if constexpr (K == Bin::Mul) return a * b;
        if constexpr (K == Bin::Div) return a / b;
        if constexpr (K == Bin::PRelu) return a < 0 ? a * b : a;
        if constexpr (K == Bin::Mod || K == Bin::FMod) return std::fmod(a, b);
    } else {
        if constexpr (K == Bin::Add) return wrap_add(a, b);
        if constexpr (K == Bin::Sub) return wrap_sub(a, b);
        if constexpr (K == Bin::Mul) return wrap_mul(a, b);
        if constexpr (K == Bin::Div || K == Bin::Mod || K == Bin::FMod) {
            if (b == 0) fail(KES_ERR_INVALID_ARGUMENT, "integer division by zero");
            if constexpr (std::is_signed<T>::value)
                if (b == T(-1)) return K == Bin::Div ? wrap_sub(T(0), a) : T(0);
            if constexpr (K == Bin::Div) return static_cast<T>(a / b);
            T r = static_cast<T>(a % b);  // FMod: C remainder, the sign of the dividend
            // Mod with fmod=0: the sign of the divisor (Python), as ONNX defines for integers.
            if constexpr (K == Bin::Mod && std::is_signed<T>::value)
                if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
            return r;
        }
    }
    return a;
}

// Unsigned shifts; an amount of the type's width or more gives 0 (C would be undefined).
template <class T>
inline T shift(T a, T b, bool left) {
    if (b >= static_cast<T>(sizeof(T) * 8)) return T(0);
    using W = WrapType<T>;
    return static_cast<T>(left ? static_cast<W>(a) << b : static_cast<W>(a) >> b);
}

template <class T>
std::unique_ptr<Kernel> shift_kernel(const BroadcastPlan& plan, bool left) {
    return make_kernel([plan, left](const void* const* in, void* const* out) {
        const T* a = in_as<T>(in, 0);
        const T* b = in_as<T>(in, 1);
        T* y = out_as<T>(out, 0);
        for_each_broadcast(plan, [&](int64_t i, int64_t ia, int64_t ib, int64_t) { y[i] = shift(a[ia], b[ib], left); });
    });
}

template <Bin K, class T>
inline uint8_t compare(T a, T b) {
    if constexpr (K == Bin::Equal) return a == b;
    if constexpr (K == Bin::Greater) return a > b;
    if constexpr (K == Bin::Less) return a < b;
    if constexpr (K == Bin::GreaterOrEqual) return a >= b;
    return a <= b;
}

template <Bin K, class T>
std::unique_ptr<Kernel> arith_kernel(const BroadcastPlan& plan, const Activation& act) {
    return make_kernel([plan, act](const void* const* in, void* const* out) {
        const T* a = in_as<T>(in, 0);
        const T* b = in_as<T>(in, 1);
        T* y = out_as<T>(out, 0);
        for_each_broadcast(plan, [&](int64_t i, int64_t ia, int64_t ib, int64_t) { y[i] = arith<K, T>(a[ia], b[ib]); });
        if constexpr (std::is_same<T, float>::value) act.apply(y, static_cast<size_t>(plan.count));
    });
}

// f16 (stored as binary16 bits): computed in float, rounded back to nearest even.
template <Bin K>
std::unique_ptr<Kernel> arith_kernel_f16(const BroadcastPlan& plan) {
    return make_kernel([plan](const void* const* in, void* const* out) {
        const uint16_t* a = in_as<uint16_t>(in, 0);
        const uint16_t* b = in_as<uint16_t>(in, 1);
        uint16_t* y = out_as<uint16_t>(out, 0);
        for_each_broadcast(plan, [&](int64_t i, int64_t ia, int64_t ib, int64_t) {
            y[i] = kes_fp16_from_float(arith<K, float>(kes_fp16_to_float(a[ia]), kes_fp16_to_float(b[ib])));
        });
    });
}

template <Bin K, class T>
std::unique_ptr<Kernel> compare_kernel(const BroadcastPlan& plan) {
    return make_kernel([plan](const void* const* in, void* const* out) {
        const T* a = in_as<T>(in, 0);
        const T* b = in_as<T>(in, 1);
        uint8_t* y = out_as<uint8_t>(out, 0);
        for_each_broadcast(plan,
                           [&](int64_t i, int64_t ia, int64_t ib, int64_t) { y[i] = compare<K, T>(a[ia], b[ib]); });
    });
}

// Pow in double, converted back to the base's dtype (saturating for integers).
template <class T, class E>
std::unique_ptr<Kernel> pow_kernel(const BroadcastPlan& plan) {
    return make_kernel([plan](const void* const* in, void* const* out) {
        const T* a = in_as<T>(in, 0);
        const E* b = in_as<E>(in, 1);
        T* y = out_as<T>(out, 0);
        for_each_broadcast(plan, [&](int64_t i, int64_t ia, int64_t ib, int64_t) {
            y[i] = saturate_cast<T>(std::pow(static_cast<double>(a[ia]), static_cast<double>(b[ib])));
        });
    });
}

template <Bin K>
std::unique_ptr<Kernel> create_binary(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& a = *node.inputs[0];
    const TensorDesc& b = *node.inputs[1];
    const Bin kind = K == Bin::Mod && node.attrs.get_int("fmod", 0) != 0 ? Bin::FMod : K;
    if (K != Bin::Pow && a.dtype != b.dtype)
        fail(KES_ERR_INVALID_ARGUMENT, "inputs have different dtypes (%s and %s)", kes_dtype_name(a.dtype),
             kes_dtype_name(b.dtype));
    Shape out_shape = broadcast_shapes(a.shape, b.shape);
    if (K == Bin::PRelu && out_shape != a.shape)
        fail(KES_ERR_INVALID_ARGUMENT, "slope of shape %s does not broadcast to X's shape %s",
             shape_string(b.shape).c_str(), shape_string(a.shape).c_str());
    const BroadcastPlan plan = make_broadcast_plan(out_shape, {a.shape, b.shape});
    outputs[0].shape = out_shape;
    outputs[0].dtype = is_compare<K>() || K == Bin::And || K == Bin::Or || K == Bin::Xor ? KES_BOOL : a.dtype;

    if constexpr (is_compare<K>()) {
        std::unique_ptr<Kernel> k;
        if (a.dtype == KES_BOOL && K == Bin::Equal) return compare_kernel<K, uint8_t>(plan);
        if (dispatch_numeric(a.dtype, [&](auto tag) { k = compare_kernel<K, typename decltype(tag)::type>(plan); }))
            return k;
        unsupported_dtype("input A", a.dtype, kNumericTypes);
    } else if constexpr (K == Bin::And || K == Bin::Or || K == Bin::Xor) {
        require_dtype(a, KES_BOOL, "input A");
        return make_kernel([plan](const void* const* in, void* const* out) {
            const uint8_t* x = in_as<uint8_t>(in, 0);
            const uint8_t* z = in_as<uint8_t>(in, 1);
            uint8_t* y = out_as<uint8_t>(out, 0);
            for_each_broadcast(plan, [&](int64_t i, int64_t ia, int64_t ib, int64_t) {
                const bool p = x[ia] != 0, q = z[ib] != 0;
                y[i] = K == Bin::And ? (p && q) : (K == Bin::Or ? (p || q) : (p != q));
            });
        });
    } else if constexpr (K == Bin::Pow) {
        std::unique_ptr<Kernel> k;
        bool base_ok = false;
        const bool exp_ok = dispatch_numeric(b.dtype, [&](auto etag) {
            using E = typename decltype(etag)::type;
            switch (a.dtype) {
                case KES_F32: k = pow_kernel<float, E>(plan), base_ok = true; break;
                case KES_F64: k = pow_kernel<double, E>(plan), base_ok = true; break;
                case KES_I32: k = pow_kernel<int32_t, E>(plan), base_ok = true; break;
                case KES_I64: k = pow_kernel<int64_t, E>(plan), base_ok = true; break;
                default: break;
            }
        });
        if (!exp_ok) unsupported_dtype("input Y", b.dtype, kNumericTypes);
        if (!base_ok) unsupported_dtype("input X", a.dtype, "f32, f64, i32, i64");
        return k;
    } else if constexpr (K == Bin::BitShift) {
        const bool left = get_choice(node.attrs, "direction", "", {"LEFT", "RIGHT"}) == "LEFT";
        switch (a.dtype) {
            case KES_U8: return shift_kernel<uint8_t>(plan, left);
            case KES_U16: return shift_kernel<uint16_t>(plan, left);
            case KES_U32: return shift_kernel<uint32_t>(plan, left);
            case KES_U64: return shift_kernel<uint64_t>(plan, left);
            default: unsupported_dtype("input X", a.dtype, "u8, u16, u32, u64");
        }
    } else if constexpr (K == Bin::PRelu) {
        require_dtype(a, KES_F32, "input X");
        return arith_kernel<K, float>(plan, Activation{});
    } else {
        if constexpr (K == Bin::Mod) {
            if ((a.dtype == KES_F32 || a.dtype == KES_F64) && kind != Bin::FMod)
                fail(KES_ERR_INVALID_ARGUMENT, "attribute 'fmod' must be 1 for floating point inputs");
        }
        const Activation act = Activation::from_attrs(node.attrs);
        if (act.kind != Activation::Kind::None && a.dtype != KES_F32)
            fail(KES_ERR_UNSUPPORTED, "a fused activation needs f32 (inputs are %s)", kes_dtype_name(a.dtype));
        std::unique_ptr<Kernel> k;
        const bool ok = dispatch_numeric(a.dtype, [&](auto tag) {
            using T = typename decltype(tag)::type;
            k = kind == Bin::FMod ? arith_kernel<Bin::FMod, T>(plan, act) : arith_kernel<K, T>(plan, act);
        });
        if (ok) return k;
        if (a.dtype == KES_F16)
            return kind == Bin::FMod ? arith_kernel_f16<Bin::FMod>(plan) : arith_kernel_f16<K>(plan);
        unsupported_dtype("input A", a.dtype, "f16, f32, f64, i8, u8, i16, u16, i32, u32, i64, u64");
    }
}

// ---- variadic: Max, Min, Sum, Mean ----------------------------------------------------------------------

enum class Var { Max, Min, Sum, Mean };

template <Var K, class T>
inline T var_fold(T acc, T v) {
    if constexpr (K == Var::Max) {
        if constexpr (std::is_floating_point<T>::value)
            if (std::isnan(acc) || std::isnan(v)) return std::numeric_limits<T>::quiet_NaN();
        return v > acc ? v : acc;
    }
    if constexpr (K == Var::Min) {
        if constexpr (std::is_floating_point<T>::value)
            if (std::isnan(acc) || std::isnan(v)) return std::numeric_limits<T>::quiet_NaN();
        return v < acc ? v : acc;
    }
    if constexpr (std::is_integral<T>::value) return wrap_add(acc, v);
    return acc + v;
}

template <Var K, class T>
std::unique_ptr<Kernel> variadic_kernel(std::vector<BroadcastPlan> plans) {
    return make_kernel([plans](const void* const* in, void* const* out) {
        T* y = out_as<T>(out, 0);
        const T* x0 = in_as<T>(in, 0);
        for_each_broadcast(plans[0], [&](int64_t i, int64_t ia, int64_t, int64_t) { y[i] = x0[ia]; });
        for (size_t k = 1; k < plans.size(); ++k) {
            const T* xk = in_as<T>(in, k);
            for_each_broadcast(plans[k],
                               [&](int64_t i, int64_t ia, int64_t, int64_t) { y[i] = var_fold<K, T>(y[i], xk[ia]); });
        }
        if constexpr (K == Var::Mean) {
            const T n = static_cast<T>(plans.size());
            for (int64_t i = 0; i < plans[0].count; ++i) y[i] /= n;
        }
    });
}

template <Var K>
std::unique_ptr<Kernel> create_variadic(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    std::vector<Shape> shapes;
    const kes_dtype dtype = node.inputs[0]->dtype;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
        if (!node.inputs[i]) fail(KES_ERR_INVALID_ARGUMENT, "input %zu is missing", i);
        if (node.inputs[i]->dtype != dtype)
            fail(KES_ERR_INVALID_ARGUMENT, "input %zu is %s but input 0 is %s", i,
                 kes_dtype_name(node.inputs[i]->dtype), kes_dtype_name(dtype));
        shapes.push_back(node.inputs[i]->shape);
    }
    const Shape out_shape = broadcast_all(shapes);
    std::vector<BroadcastPlan> plans;
    for (const Shape& s : shapes) plans.push_back(make_broadcast_plan(out_shape, {s}));
    outputs[0].dtype = dtype;
    outputs[0].shape = out_shape;
    std::unique_ptr<Kernel> k;
    if (dispatch_numeric(dtype, [&](auto tag) { k = variadic_kernel<K, typename decltype(tag)::type>(plans); }))
        return k;
    if (dtype == KES_F16) {
        return make_kernel([plans](const void* const* in, void* const* out) {
            uint16_t* y = out_as<uint16_t>(out, 0);
            const uint16_t* x0 = in_as<uint16_t>(in, 0);
            for_each_broadcast(plans[0], [&](int64_t i, int64_t ia, int64_t, int64_t) { y[i] = x0[ia]; });
            for (size_t j = 1; j < plans.size(); ++j) {
                const uint16_t* xj = in_as<uint16_t>(in, j);
                for_each_broadcast(plans[j], [&](int64_t i, int64_t ia, int64_t, int64_t) {
                    y[i] = kes_fp16_from_float(var_fold<K, float>(kes_fp16_to_float(y[i]), kes_fp16_to_float(xj[ia])));
                });
            }
            if (K == Var::Mean)
                for (int64_t i = 0; i < plans[0].count; ++i)
                    y[i] = kes_fp16_from_float(kes_fp16_to_float(y[i]) / static_cast<float>(plans.size()));
        });
    }
    unsupported_dtype("input 0", dtype, "f16, f32, f64, i8, u8, i16, u16, i32, u32, i64, u64");
}

// ---- Where ----------------------------------------------------------------------------------------------

std::unique_ptr<Kernel> create_where(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& c = *node.inputs[0];
    const TensorDesc& x = *node.inputs[1];
    const TensorDesc& y = *node.inputs[2];
    require_dtype(c, KES_BOOL, "input condition");
    if (x.dtype != y.dtype)
        fail(KES_ERR_INVALID_ARGUMENT, "inputs X and Y have different dtypes (%s and %s)", kes_dtype_name(x.dtype),
             kes_dtype_name(y.dtype));
    const Shape out_shape = broadcast_all({c.shape, x.shape, y.shape});
    const BroadcastPlan plan = make_broadcast_plan(out_shape, {c.shape, x.shape, y.shape});
    outputs[0].dtype = x.dtype;
    outputs[0].shape = out_shape;
    const size_t es = kes_dtype_size(x.dtype);
    return make_kernel([plan, es](const void* const* in, void* const* out) {
        const uint8_t* cond = in_as<uint8_t>(in, 0);
        const uint8_t* a = in_as<uint8_t>(in, 1);
        const uint8_t* b = in_as<uint8_t>(in, 2);
        uint8_t* o = out_as<uint8_t>(out, 0);
        for_each_broadcast(plan, [&](int64_t i, int64_t ic, int64_t ia, int64_t ib) {
            const uint8_t* src = cond[ic] ? a + ia * static_cast<int64_t>(es) : b + ib * static_cast<int64_t>(es);
            std::memcpy(o + i * static_cast<int64_t>(es), src, es);
        });
    });
}

}  // namespace

void add_elementwise_ops(OpList& ops) {
    constexpr size_t kMany = 1024;
    ops.push_back({"Relu", 1, 1, 1, 1, create_unary<Un::Relu>});
    ops.push_back({"Abs", 1, 1, 1, 1, create_unary<Un::Abs>});
    ops.push_back({"Neg", 1, 1, 1, 1, create_unary<Un::Neg>});
    ops.push_back({"Sigmoid", 1, 1, 1, 1, create_unary<Un::Sigmoid>});
    ops.push_back({"Tanh", 1, 1, 1, 1, create_unary<Un::Tanh>});
    ops.push_back({"Sqrt", 1, 1, 1, 1, create_unary<Un::Sqrt>});
    ops.push_back({"Exp", 1, 1, 1, 1, create_unary<Un::Exp>});
    ops.push_back({"Log", 1, 1, 1, 1, create_unary<Un::Log>});
    ops.push_back({"Floor", 1, 1, 1, 1, create_unary<Un::Floor>});
    ops.push_back({"Ceil", 1, 1, 1, 1, create_unary<Un::Ceil>});
    ops.push_back({"Round", 1, 1, 1, 1, create_unary<Un::Round>});
    ops.push_back({"Reciprocal", 1, 1, 1, 1, create_unary<Un::Reciprocal>});
    ops.push_back({"Erf", 1, 1, 1, 1, create_unary<Un::Erf>});
    ops.push_back({"HardSwish", 1, 1, 1, 1, create_unary<Un::HardSwish>});
    ops.push_back({"HardSigmoid", 1, 1, 1, 1, create_unary<Un::HardSigmoid>});
    ops.push_back({"LeakyRelu", 1, 1, 1, 1, create_unary<Un::LeakyRelu>});
    ops.push_back({"Elu", 1, 1, 1, 1, create_unary<Un::Elu>});
    ops.push_back({"Selu", 1, 1, 1, 1, create_unary<Un::Selu>});
    ops.push_back({"Celu", 1, 1, 1, 1, create_unary<Un::Celu>});
    ops.push_back({"ThresholdedRelu", 1, 1, 1, 1, create_unary<Un::ThresholdedRelu>});
    ops.push_back({"Softplus", 1, 1, 1, 1, create_unary<Un::Softplus>});
    ops.push_back({"Softsign", 1, 1, 1, 1, create_unary<Un::Softsign>});
    ops.push_back({"Sign", 1, 1, 1, 1, create_unary<Un::Sign>});
    ops.push_back({"Sin", 1, 1, 1, 1, create_unary<Un::Sin>});
    ops.push_back({"Cos", 1, 1, 1, 1, create_unary<Un::Cos>});
    ops.push_back({"Tan", 1, 1, 1, 1, create_unary<Un::Tan>});
    ops.push_back({"Sinh", 1, 1, 1, 1, create_unary<Un::Sinh>});
    ops.push_back({"Cosh", 1, 1, 1, 1, create_unary<Un::Cosh>});
    ops.push_back({"Asin", 1, 1, 1, 1, create_unary<Un::Asin>});
    ops.push_back({"Acos", 1, 1, 1, 1, create_unary<Un::Acos>});
    ops.push_back({"Atan", 1, 1, 1, 1, create_unary<Un::Atan>});
    ops.push_back({"Asinh", 1, 1, 1, 1, create_unary<Un::Asinh>});
    ops.push_back({"Acosh", 1, 1, 1, 1, create_unary<Un::Acosh>});
    ops.push_back({"Atanh", 1, 1, 1, 1, create_unary<Un::Atanh>});
    ops.push_back({"Shrink", 1, 1, 1, 1, create_unary<Un::Shrink>});
    ops.push_back({"IsNaN", 1, 1, 1, 1, create_is_special<false>});
    ops.push_back({"IsInf", 1, 1, 1, 1, create_is_special<true>});
    ops.push_back({"Identity", 1, 1, 1, 1, create_identity});
    ops.push_back({"Dropout", 1, 3, 1, 2, create_identity});
    ops.push_back({"Not", 1, 1, 1, 1, create_not});
    ops.push_back({"Clip", 1, 3, 1, 1, create_clip});
    ops.push_back({"Add", 2, 2, 1, 1, create_binary<Bin::Add>});
    ops.push_back({"Sub", 2, 2, 1, 1, create_binary<Bin::Sub>});
    ops.push_back({"Mul", 2, 2, 1, 1, create_binary<Bin::Mul>});
    ops.push_back({"Div", 2, 2, 1, 1, create_binary<Bin::Div>});
    ops.push_back({"Mod", 2, 2, 1, 1, create_binary<Bin::Mod>});
    ops.push_back({"Pow", 2, 2, 1, 1, create_binary<Bin::Pow>});
    ops.push_back({"PRelu", 2, 2, 1, 1, create_binary<Bin::PRelu>});
    ops.push_back({"BitShift", 2, 2, 1, 1, create_binary<Bin::BitShift>});
    ops.push_back({"Equal", 2, 2, 1, 1, create_binary<Bin::Equal>});
    ops.push_back({"Greater", 2, 2, 1, 1, create_binary<Bin::Greater>});
    ops.push_back({"Less", 2, 2, 1, 1, create_binary<Bin::Less>});
    ops.push_back({"GreaterOrEqual", 2, 2, 1, 1, create_binary<Bin::GreaterOrEqual>});
    ops.push_back({"LessOrEqual", 2, 2, 1, 1, create_binary<Bin::LessOrEqual>});
    ops.push_back({"And", 2, 2, 1, 1, create_binary<Bin::And>});
    ops.push_back({"Or", 2, 2, 1, 1, create_binary<Bin::Or>});
    ops.push_back({"Xor", 2, 2, 1, 1, create_binary<Bin::Xor>});
    ops.push_back({"Max", 1, kMany, 1, 1, create_variadic<Var::Max>});
    ops.push_back({"Min", 1, kMany, 1, 1, create_variadic<Var::Min>});
    ops.push_back({"Sum", 1, kMany, 1, 1, create_variadic<Var::Sum>});
    ops.push_back({"Mean", 1, kMany, 1, 1, create_variadic<Var::Mean>});
    ops.push_back({"Where", 3, 3, 1, 1, create_where});
}

}  // namespace kes
