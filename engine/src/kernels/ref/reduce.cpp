// reduce.cpp — Softmax, LogSoftmax, Reduce*, ArgMax/ArgMin.
//
// Choices:
// - Softmax/LogSoftmax use opset-13 semantics: one axis (default -1); computed as exp(x - max) / sum,
//   so large inputs do not overflow.
// - Reduce* take axes from input 1 (opset 18 style, must be constant) or the "axes" attribute
//   (opset ≤ 17); keepdims (default 1); noop_with_empty_axes (default 0: no axes = all axes; 1: the
//   input is passed through).
// - Accumulation is in the output dtype (f32 for floats; wrapping two's complement for integers);
//   ReduceLogSumExp is log(sum(exp(x))) without max subtraction (no scratch memory in run()), so it
//   overflows to inf for inputs above ~88. ReduceMax/Min of an empty set give -inf/+inf (f32) or the
//   type's lowest/highest value.
// - ArgMax/ArgMin: first index of the extreme unless select_last_index = 1; NaN is never selected.
// - Reduce* on f32 and f64 (Sum/Mean/Max/Min/Prod also i32, i64).
// - Hardmax (opset 13, one axis): the first maximum gets 1. CumSum: axis is a constant input; integer
//   sums wrap. TopK: K must be constant; output always sorted (value, then lower index first for ties),
//   also when sorted = 0; O(K·n) selection so run() needs no scratch memory.
#include <cmath>
#include <limits>
#include <type_traits>

#include "op_util.hpp"
#include "ops.hpp"

namespace kes {

namespace {

// ---- Softmax --------------------------------------------------------------------------------------------

template <bool kLog>
std::unique_ptr<Kernel> create_softmax(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    require_dtype(x, KES_F32, "input");
    outputs[0].dtype = KES_F32;
    outputs[0].shape = x.shape;
    if (x.rank() == 0) fail(KES_ERR_INVALID_ARGUMENT, "input must have rank >= 1");
    const int64_t axis = normalize_axis(node.attrs.get_int("axis", -1), x.rank());
    const AxisSplit around = split_at_axis(x.shape, axis);
    const int64_t outer = around.outer, dim = around.dim, inner = around.inner;
    return make_kernel([outer, inner, dim](const void* const* in, void* const* out) {
        const float* px = in_as<float>(in, 0);
        float* py = out_as<float>(out, 0);
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t i = 0; i < inner; ++i) {
                const float* xp = px + o * dim * inner + i;
                float* yp = py + o * dim * inner + i;
                float mx = -std::numeric_limits<float>::infinity();
                for (int64_t k = 0; k < dim; ++k) mx = std::fmax(mx, xp[k * inner]);
                float sum = 0.0f;
                for (int64_t k = 0; k < dim; ++k) {
                    const float e = std::exp(xp[k * inner] - mx);
                    sum += e;
                    if (!kLog) yp[k * inner] = e;
                }
                if (kLog) {
                    const float ls = std::log(sum);
                    for (int64_t k = 0; k < dim; ++k) yp[k * inner] = xp[k * inner] - mx - ls;
                } else {
                    for (int64_t k = 0; k < dim; ++k) yp[k * inner] /= sum;
                }
            }
    });
}

// ---- Reduce* --------------------------------------------------------------------------------------------

enum class Red { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };

template <Red K, class T>
T reduce_init() {
    if constexpr (K == Red::Max) {
        if constexpr (std::is_floating_point<T>::value) return -std::numeric_limits<T>::infinity();
        return std::numeric_limits<T>::lowest();
    }
    if constexpr (K == Red::Min) {
        if constexpr (std::is_floating_point<T>::value) return std::numeric_limits<T>::infinity();
        return std::numeric_limits<T>::max();
    }
    if constexpr (K == Red::Prod) return T(1);
    return T(0);
}

template <Red K, class T>
inline T reduce_step(T acc, T v) {
    if constexpr (std::is_integral<T>::value) {
        if constexpr (K == Red::Sum || K == Red::Mean) return wrap_add(acc, v);
        if constexpr (K == Red::Prod) return wrap_mul(acc, v);
        if constexpr (K == Red::Max) return v > acc ? v : acc;
        if constexpr (K == Red::Min) return v < acc ? v : acc;
        return acc;
    } else {
        if constexpr (K == Red::Sum || K == Red::Mean || K == Red::LogSum) return acc + v;
        if constexpr (K == Red::Prod) return acc * v;
        if constexpr (K == Red::Max || K == Red::Min) {
            if (std::isnan(acc) || std::isnan(v)) return std::numeric_limits<T>::quiet_NaN();
            return (K == Red::Max ? v > acc : v < acc) ? v : acc;
        }
        if constexpr (K == Red::L1) return acc + std::fabs(v);
        if constexpr (K == Red::L2 || K == Red::SumSquare) return acc + v * v;
        if constexpr (K == Red::LogSumExp) return acc + std::exp(v);
        return acc;
    }
}

template <Red K, class T>
std::unique_ptr<Kernel> reduce_kernel(const BroadcastPlan& plan, int64_t out_count, int64_t group) {
    return make_kernel([plan, out_count, group](const void* const* in, void* const* out) {
        const T* x = in_as<T>(in, 0);
        T* y = out_as<T>(out, 0);
        for (int64_t i = 0; i < out_count; ++i) y[i] = reduce_init<K, T>();
        for_each_broadcast(plan,
                           [&](int64_t i, int64_t io, int64_t, int64_t) { y[io] = reduce_step<K, T>(y[io], x[i]); });
        if constexpr (std::is_floating_point<T>::value) {
            for (int64_t i = 0; i < out_count; ++i) {
                if constexpr (K == Red::Mean) y[i] /= static_cast<T>(group);
                if constexpr (K == Red::L2) y[i] = std::sqrt(y[i]);
                if constexpr (K == Red::LogSum || K == Red::LogSumExp) y[i] = std::log(y[i]);
            }
        } else if constexpr (K == Red::Mean) {
            for (int64_t i = 0; i < out_count; ++i) y[i] = group ? static_cast<T>(y[i] / group) : T(0);
        }
    });
}

// Reduced axes from input 1 or the "axes" attribute; empty when none were given.
std::vector<int64_t> reduce_axes(const NodeDesc& node, int64_t rank) {
    std::vector<int64_t> axes;
    if (const TensorDesc* t = node.input(1)) {
        axes = const_int_list(*t, "input axes");
    } else {
        axes = node.attrs.get_ints("axes");
    }
    for (int64_t& a : axes) a = normalize_axis(a, rank);
    return axes;
}

template <Red K>
std::unique_ptr<Kernel> create_reduce(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    const bool keepdims = node.attrs.get_int("keepdims", 1) != 0;
    const bool noop_empty = node.attrs.get_int("noop_with_empty_axes", 0) != 0;
    std::vector<int64_t> axes = reduce_axes(node, x.rank());
    const bool is_float_only = K != Red::Sum && K != Red::Max && K != Red::Min && K != Red::Prod && K != Red::Mean;
    const bool is_float = x.dtype == KES_F32 || x.dtype == KES_F64;
    if (!is_float && (is_float_only || (x.dtype != KES_I32 && x.dtype != KES_I64)))
        unsupported_dtype("input data", x.dtype, is_float_only ? "f32, f64" : "f32, f64, i32, i64");
    outputs[0].dtype = x.dtype;
    if (axes.empty() && noop_empty) {
        outputs[0].shape = x.shape;
        const size_t bytes = x.bytes();
        return make_kernel([bytes](const void* const* in, void* const* out) {
            if (in[0] != out[0] && bytes) std::memmove(out[0], in[0], bytes);
        });
    }
    std::vector<bool> reduced(static_cast<size_t>(x.rank()), axes.empty());
    for (int64_t a : axes) reduced[static_cast<size_t>(a)] = true;
    Shape kept, out;
    int64_t group = 1;
    for (size_t d = 0; d < x.shape.size(); ++d) {
        kept.push_back(reduced[d] ? 1 : x.shape[d]);
        if (reduced[d]) group *= x.shape[d];
        if (!reduced[d] || keepdims) out.push_back(reduced[d] ? 1 : x.shape[d]);
    }
    outputs[0].shape = out;
    // Iterating the input, the "kept" view (reduced dims of extent 1, stride 0) gives the output offset.
    const BroadcastPlan plan = make_broadcast_plan(x.shape, {kept});
    const int64_t out_count = shape_elements(out);
    if (x.dtype == KES_I32) return reduce_kernel<K, int32_t>(plan, out_count, group);
    if (x.dtype == KES_F64) return reduce_kernel<K, double>(plan, out_count, group);
    if (x.dtype == KES_I64) return reduce_kernel<K, int64_t>(plan, out_count, group);
    return reduce_kernel<K, float>(plan, out_count, group);
}

// ---- ArgMax / ArgMin ------------------------------------------------------------------------------------

template <bool kMax, class T>
std::unique_ptr<Kernel> arg_kernel(int64_t outer, int64_t dim, int64_t inner, bool last) {
    return make_kernel([=](const void* const* in, void* const* out) {
        const T* x = in_as<T>(in, 0);
        int64_t* y = out_as<int64_t>(out, 0);
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t i = 0; i < inner; ++i) {
                const T* p = x + o * dim * inner + i;
                int64_t best = 0;
                for (int64_t k = 1; k < dim; ++k) {
                    const T v = p[k * inner], b = p[best * inner];
                    const bool better = kMax ? (last ? v >= b : v > b) : (last ? v <= b : v < b);
                    if (better) best = k;
                }
                y[o * inner + i] = best;
            }
    });
}

template <bool kMax>
std::unique_ptr<Kernel> create_arg(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    if (x.rank() == 0) fail(KES_ERR_INVALID_ARGUMENT, "input must have rank >= 1");
    const int64_t axis = normalize_axis(node.attrs.get_int("axis", 0), x.rank());
    const bool keepdims = node.attrs.get_int("keepdims", 1) != 0;
    const bool last = node.attrs.get_int("select_last_index", 0) != 0;
    const AxisSplit around = split_at_axis(x.shape, axis);
    const int64_t outer = around.outer, dim = around.dim, inner = around.inner;
    Shape out = x.shape;
    if (keepdims)
        out[static_cast<size_t>(axis)] = 1;
    else
        out.erase(out.begin() + axis);
    if (dim == 0) fail(KES_ERR_INVALID_ARGUMENT, "cannot take the arg-extreme of an empty axis");
    outputs[0].dtype = KES_I64;
    outputs[0].shape = out;
    switch (x.dtype) {
        case KES_F32: return arg_kernel<kMax, float>(outer, dim, inner, last);
        case KES_I32: return arg_kernel<kMax, int32_t>(outer, dim, inner, last);
        case KES_I64: return arg_kernel<kMax, int64_t>(outer, dim, inner, last);
        case KES_U8: return arg_kernel<kMax, uint8_t>(outer, dim, inner, last);
        case KES_I8: return arg_kernel<kMax, int8_t>(outer, dim, inner, last);
        default: unsupported_dtype("input data", x.dtype, "f32, i32, i64, u8, i8");
    }
}

// ---- Hardmax, CumSum, TopK ------------------------------------------------------------------------------

std::unique_ptr<Kernel> create_hardmax(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    require_dtype(x, KES_F32, "input");
    if (x.rank() == 0) fail(KES_ERR_INVALID_ARGUMENT, "input must have rank >= 1");
    const int64_t axis = normalize_axis(node.attrs.get_int("axis", -1), x.rank());
    const AxisSplit around = split_at_axis(x.shape, axis);
    const int64_t outer = around.outer, dim = around.dim, inner = around.inner;
    outputs[0].dtype = KES_F32;
    outputs[0].shape = x.shape;
    return make_kernel([outer, inner, dim](const void* const* in, void* const* out) {
        const float* px = in_as<float>(in, 0);
        float* py = out_as<float>(out, 0);
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t i = 0; i < inner; ++i) {
                const int64_t base = o * dim * inner + i;
                int64_t best = 0;
                for (int64_t k = 0; k < dim; ++k) {
                    if (px[base + k * inner] > px[base + best * inner]) best = k;
                    py[base + k * inner] = 0.0f;
                }
                if (dim) py[base + best * inner] = 1.0f;
            }
    });
}

template <class T>
std::unique_ptr<Kernel> cumsum_kernel(int64_t outer, int64_t dim, int64_t inner, bool exclusive, bool reverse) {
    return make_kernel([=](const void* const* in, void* const* out) {
        const T* px = in_as<T>(in, 0);
        T* py = out_as<T>(out, 0);
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t i = 0; i < inner; ++i) {
                T acc = T(0);
                for (int64_t j = 0; j < dim; ++j) {
                    const int64_t k = reverse ? dim - 1 - j : j;
                    const int64_t at = (o * dim + k) * inner + i;
                    const T v = px[at];
                    if (exclusive) py[at] = acc;
                    if constexpr (std::is_integral<T>::value)
                        acc = wrap_add(acc, v);
                    else
                        acc += v;
                    if (!exclusive) py[at] = acc;
                }
            }
    });
}

std::unique_ptr<Kernel> create_cumsum(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    const std::vector<int64_t> axis_v = const_int_list(*node.inputs[1], "input axis");
    if (axis_v.size() != 1) fail(KES_ERR_INVALID_ARGUMENT, "input axis must be a scalar");
    if (x.rank() == 0) fail(KES_ERR_INVALID_ARGUMENT, "input must have rank >= 1");
    const int64_t axis = normalize_axis(axis_v[0], x.rank());
    const bool exclusive = node.attrs.get_int("exclusive", 0) != 0, reverse = node.attrs.get_int("reverse", 0) != 0;
    const AxisSplit around = split_at_axis(x.shape, axis);
    const int64_t outer = around.outer, dim = around.dim, inner = around.inner;
    outputs[0].dtype = x.dtype;
    outputs[0].shape = x.shape;
    std::unique_ptr<Kernel> k;
    if (dispatch_numeric(x.dtype, [&](auto tag) {
            k = cumsum_kernel<typename decltype(tag)::type>(outer, dim, inner, exclusive, reverse);
        }))
        return k;
    unsupported_dtype("input x", x.dtype, kNumericTypes);
}

// Selection without scratch memory: step j picks the first element (in the order value desc/asc, then
// index asc) that comes after the one step j-1 picked. O(k·n), fine for a reference.
template <class T>
std::unique_ptr<Kernel> topk_kernel(int64_t outer, int64_t dim, int64_t inner, int64_t k, bool largest) {
    return make_kernel([=](const void* const* in, void* const* out) {
        const T* px = in_as<T>(in, 0);
        T* pv = out_as<T>(out, 0);
        int64_t* pi = out_as<int64_t>(out, 1);
        auto before = [largest](T va, int64_t ia, T vb, int64_t ib) {
            if (va != vb) return largest ? va > vb : va < vb;
            return ia < ib;
        };
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t i = 0; i < inner; ++i) {
                const T* row = px + o * dim * inner + i;
                int64_t prev = -1;
                for (int64_t j = 0; j < k; ++j) {
                    int64_t best = -1;
                    for (int64_t c = 0; c < dim; ++c) {
                        if (prev >= 0 && !before(row[prev * inner], prev, row[c * inner], c)) continue;
                        if (best < 0 || before(row[c * inner], c, row[best * inner], best)) best = c;
                    }
                    const int64_t at = (o * k + j) * inner + i;
                    pv[at] = row[best * inner];
                    pi[at] = best;
                    prev = best;
                }
            }
    });
}

std::unique_ptr<Kernel> create_topk(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    const std::vector<int64_t> kv = const_int_list(*node.inputs[1], "input K");
    if (kv.size() != 1) fail(KES_ERR_INVALID_ARGUMENT, "input K must have one element");
    if (x.rank() == 0) fail(KES_ERR_INVALID_ARGUMENT, "input must have rank >= 1");
    const int64_t axis = normalize_axis(node.attrs.get_int("axis", -1), x.rank());
    const bool largest = node.attrs.get_int("largest", 1) != 0;
    const int64_t dim = x.shape[static_cast<size_t>(axis)], k = kv[0];
    if (k < 0 || k > dim)
        fail(KES_ERR_INVALID_ARGUMENT, "K = %lld is outside [0, %lld]", static_cast<long long>(k),
             static_cast<long long>(dim));
    const AxisSplit around = split_at_axis(x.shape, axis);
    const int64_t outer = around.outer, inner = around.inner;
    Shape out = x.shape;
    out[static_cast<size_t>(axis)] = k;
    outputs[0].dtype = x.dtype;
    outputs[0].shape = out;
    outputs[1].dtype = KES_I64;
    outputs[1].shape = out;
    std::unique_ptr<Kernel> kern;
    if (dispatch_numeric(x.dtype, [&](auto tag) {
            kern = topk_kernel<typename decltype(tag)::type>(outer, dim, inner, k, largest);
        }))
        return kern;
    unsupported_dtype("input X", x.dtype, kNumericTypes);
}

}  // namespace

void add_reduce_ops(OpList& ops) {
    ops.push_back({"Softmax", 1, 1, 1, 1, create_softmax<false>});
    ops.push_back({"LogSoftmax", 1, 1, 1, 1, create_softmax<true>});
    ops.push_back({"ReduceSum", 1, 2, 1, 1, create_reduce<Red::Sum>});
    ops.push_back({"ReduceMean", 1, 2, 1, 1, create_reduce<Red::Mean>});
    ops.push_back({"ReduceMax", 1, 2, 1, 1, create_reduce<Red::Max>});
    ops.push_back({"ReduceMin", 1, 2, 1, 1, create_reduce<Red::Min>});
    ops.push_back({"ReduceProd", 1, 2, 1, 1, create_reduce<Red::Prod>});
    ops.push_back({"ReduceL1", 1, 2, 1, 1, create_reduce<Red::L1>});
    ops.push_back({"ReduceL2", 1, 2, 1, 1, create_reduce<Red::L2>});
    ops.push_back({"ReduceSumSquare", 1, 2, 1, 1, create_reduce<Red::SumSquare>});
    ops.push_back({"ReduceLogSum", 1, 2, 1, 1, create_reduce<Red::LogSum>});
    ops.push_back({"ReduceLogSumExp", 1, 2, 1, 1, create_reduce<Red::LogSumExp>});
    ops.push_back({"ArgMax", 1, 1, 1, 1, create_arg<true>});
    ops.push_back({"Hardmax", 1, 1, 1, 1, create_hardmax});
    ops.push_back({"CumSum", 2, 2, 1, 1, create_cumsum});
    ops.push_back({"TopK", 2, 2, 2, 2, create_topk});
    ops.push_back({"ArgMin", 1, 1, 1, 1, create_arg<false>});
}

}  // namespace kes
