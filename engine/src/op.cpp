// op.cpp — the shared helpers of op.hpp: shapes, broadcasting, constant reads, fused activations.
#include "op.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kes/error.hpp"
#include "kes/math.hpp"

namespace kes {

int64_t TensorDesc::elements() const {
    return shape_elements(shape);
}

size_t TensorDesc::bytes() const {
    return static_cast<size_t>(elements()) * kes_dtype_size(dtype);
}

std::unique_ptr<Kernel> create_kernel(const OpDef& def, const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const char* name = node.name.c_str();
    const char* op = node.op.c_str();
    if (node.inputs.size() < def.min_inputs || node.inputs.size() > def.max_inputs)
        fail(KES_ERR_INVALID_ARGUMENT, "node %s (%s): %zu inputs (expected %zu..%zu)", name, op, node.inputs.size(),
             def.min_inputs, def.max_inputs);
    if (node.output_count < def.min_outputs || node.output_count > def.max_outputs)
        fail(KES_ERR_INVALID_ARGUMENT, "node %s (%s): %zu outputs (expected %zu..%zu)", name, op, node.output_count,
             def.min_outputs, def.max_outputs);
    for (size_t i = 0; i < def.min_inputs; ++i)
        if (!node.inputs[i]) fail(KES_ERR_INVALID_ARGUMENT, "node %s (%s): required input %zu is missing", name, op, i);
    outputs.assign(node.output_count, TensorDesc{});
    try {
        return def.create(node, outputs);
    } catch (const Error& e) {
        throw Error(e.status(), format("node %s (%s): %s", name, op, e.what()));
    }
}

bool is_view_op(std::string_view op) {
    return op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Identity";
}

bool is_unary_elementwise(std::string_view op) {
    static constexpr std::string_view kUnary[] = {"Relu",      "Abs",        "Neg",   "Sigmoid",   "Tanh",
                                                  "Sqrt",      "Exp",        "Log",   "Floor",     "Ceil",
                                                  "Round",     "Reciprocal", "Erf",   "HardSwish", "HardSigmoid",
                                                  "LeakyRelu", "Elu",        "Selu",  "Celu",      "ThresholdedRelu",
                                                  "Softplus",  "Softsign",   "Sign",  "Sin",       "Cos",
                                                  "Tan",       "Sinh",       "Cosh",  "Asin",      "Acos",
                                                  "Atan",      "Asinh",      "Acosh", "Atanh",     "Shrink",
                                                  "IsNaN",     "IsInf",      "Not"};
    return std::find(std::begin(kUnary), std::end(kUnary), op) != std::end(kUnary);
}

bool is_inplace_input(std::string_view op, size_t input, size_t output_count, kes_dtype input_dtype,
                      const Shape& input_shape, kes_dtype output_dtype, const Shape& output_shape) {
    // Each kernel checked in its run() (see op.hpp). Input 0 only: unary math and Not (elementwise.cpp),
    // then Clip, Dropout (elementwise.cpp), Cast, CastLike (misc.cpp), BatchNormalization (nn.cpp) and
    // the variadic ops, which copy input 0 into the output before reading the others.
    static constexpr std::string_view kFirstInput[] = {"Clip", "Dropout", "Cast", "CastLike", "BatchNormalization",
                                                       "Max",  "Min",     "Sum",  "Mean"};
    // Either input: the binary ops (elementwise.cpp create_binary).
    static constexpr std::string_view kAnyInput[] = {"Add",         "Sub",     "Mul",   "Div",
                                                     "Mod",         "Pow",     "PRelu", "BitShift",
                                                     "Equal",       "Greater", "Less",  "GreaterOrEqual",
                                                     "LessOrEqual", "And",     "Or",    "Xor"};
    auto listed = [&](const auto& list) { return std::find(std::begin(list), std::end(list), op) != std::end(list); };
    // IsNaN / IsInf write bool: never the size of their input, so never listed.
    const bool unary = is_unary_elementwise(op) && op != "IsNaN" && op != "IsInf";
    if (!listed(kAnyInput) && (input != 0 || !(unary || listed(kFirstInput)))) return false;
    if (output_count != 1) return false;
    const size_t size = kes_dtype_size(input_dtype);
    return size != 0 && size == kes_dtype_size(output_dtype) && input_shape == output_shape;
}

int64_t shape_elements(const Shape& shape) {
    // The product of the non-zero dims is capped too, so strides (which skip a zero dim's factor)
    // never overflow even for an empty tensor like [0, 2^31, 2^31].
    uint64_t n = 1, nonzero = 1;
    for (int64_t d : shape) {
        if (d < 0) fail(KES_ERR_INVALID_ARGUMENT, "shape %s has a negative dimension", shape_string(shape).c_str());
        if (!checked_mul(nonzero, static_cast<uint64_t>(d ? d : 1), &nonzero) || nonzero > (uint64_t{1} << 40))
            fail(KES_ERR_INVALID_ARGUMENT, "shape %s has too many elements", shape_string(shape).c_str());
        n *= static_cast<uint64_t>(d);
    }
    return static_cast<int64_t>(n);
}

std::string shape_string(const Shape& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ',';
        s += std::to_string(shape[i]);
    }
    return s + "]";
}

Shape contiguous_strides(const Shape& shape) {
    shape_elements(shape);  // throws for negative dims or an element count past 2^40: no overflow below
    Shape strides(shape.size());
    int64_t s = 1;
    for (size_t d = shape.size(); d-- > 0;) {
        strides[d] = s;
        s *= shape[d];
    }
    return strides;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
    const size_t n = std::max(a.size(), b.size());
    Shape out(n);
    for (size_t i = 0; i < n; ++i) {
        const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
        const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
        if (da != db && da != 1 && db != 1)
            fail(KES_ERR_INVALID_ARGUMENT, "shapes %s and %s do not broadcast", shape_string(a).c_str(),
                 shape_string(b).c_str());
        out[i] = da == 1 ? db : da;
    }
    return out;
}

Shape broadcast_strides(const Shape& in, const Shape& out) {
    Shape strides(out.size(), 0);
    int64_t s = 1;
    const size_t shift = out.size() - in.size();
    for (size_t d = out.size(); d-- > shift;) {
        const int64_t extent = in[d - shift];
        strides[d] = extent == 1 ? 0 : s;
        s *= extent;
    }
    return strides;
}

int64_t normalize_axis(int64_t axis, int64_t rank) {
    if (axis < -rank || axis >= rank)
        fail(KES_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %lld", static_cast<long long>(axis),
             static_cast<long long>(rank));
    return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> const_ints(const TensorDesc& t, const char* what) {
    if (!t.is_const())
        fail(KES_ERR_UNSUPPORTED, "%s must be a constant (shapes are static; freeze it when converting)", what);
    const int64_t n = t.elements();
    std::vector<int64_t> v(static_cast<size_t>(n));
    if (n == 0) {
        if (t.dtype != KES_I64 && t.dtype != KES_I32)
            fail(KES_ERR_UNSUPPORTED, "%s must be int64 or int32 (is %s)", what, kes_dtype_name(t.dtype));
    } else if (t.dtype == KES_I64) {
        std::memcpy(v.data(), t.data, v.size() * sizeof(int64_t));
    } else if (t.dtype == KES_I32) {
        for (int64_t i = 0; i < n; ++i) {
            int32_t x;
            std::memcpy(&x, static_cast<const uint8_t*>(t.data) + i * 4, 4);
            v[static_cast<size_t>(i)] = x;
        }
    } else {
        fail(KES_ERR_UNSUPPORTED, "%s must be int64 or int32 (is %s)", what, kes_dtype_name(t.dtype));
    }
    return v;
}

std::vector<float> const_floats(const TensorDesc& t, const char* what) {
    if (!t.is_const()) fail(KES_ERR_UNSUPPORTED, "%s must be a constant", what);
    require_dtype(t, KES_F32, what);
    std::vector<float> v(static_cast<size_t>(t.elements()));
    if (!v.empty()) std::memcpy(v.data(), t.data, v.size() * sizeof(float));
    return v;
}

void require_dtype(const TensorDesc& t, kes_dtype dtype, const char* what) {
    if (t.dtype != dtype)
        fail(KES_ERR_UNSUPPORTED, "%s is %s; this op supports %s here", what, kes_dtype_name(t.dtype),
             kes_dtype_name(dtype));
}

Activation Activation::from_attrs(const Attrs& attrs) {
    Activation a;
    const std::string name = attrs.get_string("activation", "");
    if (name.empty()) return a;
    if (name == "Relu") {
        a.kind = Kind::Relu;
    } else if (name == "Relu6") {
        a.kind = Kind::Clip, a.min = 0.0f, a.max = 6.0f;
    } else if (name == "Clip") {
        a.kind = Kind::Clip;
        a.min = attrs.get_float("activation_min", -INFINITY);
        a.max = attrs.get_float("activation_max", INFINITY);
    } else if (name == "LeakyRelu") {
        a.kind = Kind::LeakyRelu, a.alpha = attrs.get_float("activation_alpha", 0.01f);
    } else if (name == "HardSwish") {
        a.kind = Kind::HardSwish;
    } else if (name == "HardSigmoid") {
        a.kind = Kind::HardSigmoid;
        a.alpha = attrs.get_float("activation_alpha", 0.2f);
        a.beta = attrs.get_float("activation_beta", 0.5f);
    } else if (name == "Sigmoid") {
        a.kind = Kind::Sigmoid;
    } else if (name == "Tanh") {
        a.kind = Kind::Tanh;
    } else if (name == "Swish") {
        a.kind = Kind::Swish;
    } else {
        fail(KES_ERR_INVALID_ARGUMENT, "unknown fused activation '%s'", name.c_str());
    }
    return a;
}

void Activation::to_attrs(const Activation& act, Attrs& attrs) {
    const char* names[] = {"", "Relu", "Clip", "LeakyRelu", "HardSwish", "HardSigmoid", "Sigmoid", "Tanh", "Swish"};
    attrs.erase("activation_min");
    attrs.erase("activation_max");
    attrs.erase("activation_alpha");
    attrs.erase("activation_beta");
    if (act.kind == Kind::None) {
        attrs.erase("activation");
        return;
    }
    attrs.set_string("activation", names[static_cast<int>(act.kind)]);
    if (act.kind == Kind::Clip) {
        attrs.set_float("activation_min", act.min);
        attrs.set_float("activation_max", act.max);
    } else if (act.kind == Kind::LeakyRelu || act.kind == Kind::HardSigmoid) {
        attrs.set_float("activation_alpha", act.alpha);
        if (act.kind == Kind::HardSigmoid) attrs.set_float("activation_beta", act.beta);
    }
}

float Activation::apply(float x) const {
    switch (kind) {
        case Kind::None: return x;
        case Kind::Relu: return x > 0.0f ? x : 0.0f;
        case Kind::Clip: return x < min ? min : (x > max ? max : x);
        case Kind::LeakyRelu: return x >= 0.0f ? x : alpha * x;
        case Kind::HardSwish: {
            const float t = std::fmin(std::fmax(x / 6.0f + 0.5f, 0.0f), 1.0f);
            return x * t;
        }
        case Kind::HardSigmoid: return std::fmin(std::fmax(alpha * x + beta, 0.0f), 1.0f);
        case Kind::Sigmoid: return reference_sigmoid(x);
        case Kind::Tanh: return std::tanh(x);
        case Kind::Swish: return x * reference_sigmoid(x);
    }
    return x;
}

void Activation::apply(float* data, size_t count) const {
    if (kind == Kind::None) return;
    for (size_t i = 0; i < count; ++i) data[i] = apply(data[i]);
}

}  // namespace kes
