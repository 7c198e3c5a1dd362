// misc.cpp — Pad, Cast, Gather, Shape, Size, ConstantOfShape, Range, OneHot, Scatter*, GatherND, EyeLike.
//
// Choices:
// - Pad: modes constant, edge, reflect, wrap; any dtype; negative pads crop; constant_value may be a
//   runtime scalar; the opset-18 axes input is honoured (constant).
// - Cast: "to" is ONNX's TensorProto data type code (as in the .onnx file; onnx_to_kes_dtype below).
//   Supported: f32, f16, f64, i8, u8, i16, u16, i32, u32, i64, u64, bool. Float → integer truncates
//   toward zero, NaN becomes 0 and out-of-range values saturate to the type's range (ONNX leaves this
//   undefined); f32 → f16 rounds to nearest even (kes_fp16_from_float); f64 → f16 goes through f32.
//   Anything → bool is (x != 0) (NaN → true); bool → numbers gives 0/1.
// - ConstantOfShape: ONNX's tensor attribute "value" arrives as an Int or Float attribute "value"
//   (default 0.0f) plus an optional Int attribute "dtype" (TensorProto code, default 1 = float).
// - Gather: any data dtype, int32/int64 indices; a negative index counts from the end; an index out of
//   range at run time is KES_ERR_INVALID_ARGUMENT (nothing past the data is read).
// - Range: start/limit/delta must be constant scalars (they set the output shape); f32, i32, i64.
// - GatherElements: like Gather, indices checked at run time.
// - EyeLike's "dtype" and CastLike's target follow Cast's conventions.
// - GatherND (batch_dims) and ScatterND (reduction none/add/mul/max/min): index tuples checked at run
//   time; ScatterND applies updates in order.
// - OneHot: depth must be a constant; an index outside [-depth, depth) gives an all-off row.
// - ScatterElements (reduction none/add/mul/max/min): copies data, then applies the updates in index
//   order (a repeated index with "none" keeps the last update); indices are range-checked at run time.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "op_util.hpp"
#include "ops.hpp"

namespace kes {

namespace {

// ---- Cast -----------------------------------------------------------------------------------------------

// Every dtype is read as double (exact for all but i64/u64 beyond 2^53, which take the integer path).
template <class To, class From>
inline To convert_value(From v) {
    if constexpr (std::is_same<To, From>::value) {
        return v;
    } else if constexpr (std::is_integral<To>::value && std::is_floating_point<From>::value) {
        if (std::isnan(v)) return To(0);
        if (v <= static_cast<From>(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
        if (v >= static_cast<From>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
        return static_cast<To>(v);
    } else if constexpr (std::is_integral<To>::value && std::is_integral<From>::value) {
        // Saturating between integer types of different signedness and width.
        if constexpr (std::is_signed<From>::value) {
            if (v < 0 && !std::is_signed<To>::value) return To(0);
            if (static_cast<int64_t>(v) < static_cast<int64_t>(std::numeric_limits<To>::lowest()))
                return std::numeric_limits<To>::lowest();
            if (v > 0 && static_cast<uint64_t>(v) > static_cast<uint64_t>(std::numeric_limits<To>::max()))
                return std::numeric_limits<To>::max();
        } else {
            if (static_cast<uint64_t>(v) > static_cast<uint64_t>(std::numeric_limits<To>::max()))
                return std::numeric_limits<To>::max();
        }
        return static_cast<To>(v);
    } else {
        return static_cast<To>(v);
    }
}

// Storage types: f16 is uint16_t bits, bool is uint8_t 0/1; both are handled around the numeric core.
enum class Storage { Plain, Half, Bool };

template <class T>
struct Tag {
    using type = T;
};

template <class F>
void with_dtype(kes_dtype dt, F&& f) {
    switch (dt) {
        case KES_F32: f(Tag<float>{}, Storage::Plain); break;
        case KES_F64: f(Tag<double>{}, Storage::Plain); break;
        case KES_F16: f(Tag<float>{}, Storage::Half); break;
        case KES_I8: f(Tag<int8_t>{}, Storage::Plain); break;
        case KES_U8: f(Tag<uint8_t>{}, Storage::Plain); break;
        case KES_I16: f(Tag<int16_t>{}, Storage::Plain); break;
        case KES_U16: f(Tag<uint16_t>{}, Storage::Plain); break;
        case KES_I32: f(Tag<int32_t>{}, Storage::Plain); break;
        case KES_U32: f(Tag<uint32_t>{}, Storage::Plain); break;
        case KES_I64: f(Tag<int64_t>{}, Storage::Plain); break;
        case KES_U64: f(Tag<uint64_t>{}, Storage::Plain); break;
        case KES_BOOL: f(Tag<uint8_t>{}, Storage::Bool); break;
        default: unsupported_dtype("tensor", dt, "f32, f16, f64, i8, u8, i16, u16, i32, u32, i64, u64, bool");
    }
}

template <class From, class To>
std::unique_ptr<Kernel> cast_kernel(int64_t n, Storage sf, Storage st) {
    return make_kernel([n, sf, st](const void* const* in, void* const* out) {
        for (int64_t i = 0; i < n; ++i) {
            From v;
            if (sf == Storage::Half) {
                v = static_cast<From>(kes_fp16_to_float(in_as<uint16_t>(in, 0)[i]));
            } else {
                v = in_as<From>(in, 0)[i];
                if (sf == Storage::Bool) v = static_cast<From>(v != 0);
            }
            if (st == Storage::Bool) {
                out_as<uint8_t>(out, 0)[i] = v != From(0) || (std::is_floating_point<From>::value && v != v);
            } else if (st == Storage::Half) {
                out_as<uint16_t>(out, 0)[i] = kes_fp16_from_float(static_cast<float>(v));
            } else {
                out_as<To>(out, 0)[i] = convert_value<To>(v);
            }
        }
    });
}

std::unique_ptr<Kernel> create_cast(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    const kes_dtype to =
        node.op == "CastLike" ? node.inputs[1]->dtype : onnx_to_kes_dtype(node.attrs.require_int("to"));
    outputs[0].dtype = to;
    outputs[0].shape = x.shape;
    const int64_t n = x.elements();
    std::unique_ptr<Kernel> k;
    with_dtype(x.dtype, [&](auto from_tag, Storage sf) {
        using From = typename decltype(from_tag)::type;
        with_dtype(to, [&](auto to_tag, Storage st) {
            using To = typename decltype(to_tag)::type;
            k = cast_kernel<From, To>(n, sf, st);
        });
    });
    return k;
}

// ---- Shape, Size, ConstantOfShape, Range ----------------------------------------------------------------

std::unique_ptr<Kernel> const_output_kernel(std::vector<uint8_t> bytes) {
    return make_kernel([bytes](const void* const*, void* const* out) {
        if (!bytes.empty()) std::memcpy(out[0], bytes.data(), bytes.size());
    });
}

template <class T>
std::vector<uint8_t> to_bytes(const std::vector<T>& v) {
    std::vector<uint8_t> b(v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
    return b;
}

std::unique_ptr<Kernel> create_shape(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    const int64_t r = x.rank();
    int64_t start = node.attrs.get_int("start", 0), end = node.attrs.get_int("end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = std::clamp<int64_t>(start, 0, r);
    end = std::clamp<int64_t>(end, 0, r);
    std::vector<int64_t> dims;
    for (int64_t d = start; d < end; ++d) dims.push_back(x.shape[static_cast<size_t>(d)]);
    outputs[0].dtype = KES_I64;
    outputs[0].shape = {static_cast<int64_t>(dims.size())};
    return const_output_kernel(to_bytes(dims));
}

std::unique_ptr<Kernel> create_size(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    outputs[0].dtype = KES_I64;
    outputs[0].shape = {};
    return const_output_kernel(to_bytes(std::vector<int64_t>{node.inputs[0]->elements()}));
}

std::unique_ptr<Kernel> create_constant_of_shape(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& s = *node.inputs[0];
    if (s.rank() != 1) fail(KES_ERR_INVALID_ARGUMENT, "input shape must be 1-D (is %s)", shape_string(s.shape).c_str());
    const Shape shape = const_int_list(s, "input shape");
    const kes_dtype dtype = onnx_to_kes_dtype(node.attrs.get_int("dtype", 1));
    const Attr* value = node.attrs.find("value");
    if (value && value->kind != AttrKind::Int && value->kind != AttrKind::Float)
        fail(KES_ERR_INVALID_ARGUMENT, "attribute 'value' is %s, expected int or float", attr_kind_name(value->kind));
    const bool is_int = value && value->kind == AttrKind::Int;
    const int64_t n = shape_elements(shape);
    outputs[0].dtype = dtype;
    outputs[0].shape = shape;
    // One element's bytes, converted like Cast.
    std::vector<uint8_t> elem(kes_dtype_size(dtype));
    with_dtype(dtype, [&](auto tag, Storage st) {
        using T = typename decltype(tag)::type;
        T v;
        if (is_int)
            v = convert_value<T>(value->i);
        else
            v = convert_value<T>(value ? value->f : 0.0f);
        if (st == Storage::Half) {
            const uint16_t h = kes_fp16_from_float(static_cast<float>(v));
            std::memcpy(elem.data(), &h, 2);
        } else {
            if (st == Storage::Bool) v = static_cast<T>(v != T(0));
            std::memcpy(elem.data(), &v, sizeof(T));
        }
    });
    return make_kernel([elem, n](const void* const*, void* const* out) {
        uint8_t* y = out_as<uint8_t>(out, 0);
        for (int64_t i = 0; i < n; ++i)
            std::memcpy(y + i * static_cast<int64_t>(elem.size()), elem.data(), elem.size());
    });
}

template <class T>
T const_scalar(const TensorDesc& t, const char* what) {
    if (!t.is_const()) fail(KES_ERR_UNSUPPORTED, "%s must be a constant (it sets the output shape)", what);
    if (t.elements() != 1) fail(KES_ERR_INVALID_ARGUMENT, "%s must be a scalar", what);
    T v;
    std::memcpy(&v, t.data, sizeof(T));
    return v;
}

template <class T>
std::unique_ptr<Kernel> range_kernel(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const T start = const_scalar<T>(*node.inputs[0], "input start");
    const T limit = const_scalar<T>(*node.inputs[1], "input limit");
    const T delta = const_scalar<T>(*node.inputs[2], "input delta");
    if (delta == T(0)) fail(KES_ERR_INVALID_ARGUMENT, "input delta is 0");
    const double count =
        std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
    if (std::isnan(count)) fail(KES_ERR_INVALID_ARGUMENT, "start, limit and delta must be finite");
    if (!(count < 67108864.0)) fail(KES_ERR_UNSUPPORTED, "Range would have more than 2^26 elements");
    const int64_t n = count > 0.0 ? static_cast<int64_t>(count) : 0;
    outputs[0].shape = {n};
    std::vector<T> values(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) values[static_cast<size_t>(i)] = static_cast<T>(start + static_cast<T>(i) * delta);
    return const_output_kernel(to_bytes(values));
}

std::unique_ptr<Kernel> create_range(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const kes_dtype dt = node.inputs[0]->dtype;
    for (size_t i = 1; i < 3; ++i)
        if (node.inputs[i]->dtype != dt) fail(KES_ERR_INVALID_ARGUMENT, "start, limit and delta have different dtypes");
    outputs[0].dtype = dt;
    switch (dt) {
        case KES_F32: return range_kernel<float>(node, outputs);
        case KES_I32: return range_kernel<int32_t>(node, outputs);
        case KES_I64: return range_kernel<int64_t>(node, outputs);
        default: unsupported_dtype("input start", dt, "f32, i32, i64");
    }
}

// ---- Gather ---------------------------------------------------------------------------------------------

template <class I>
void gather_run(const uint8_t* data, const I* idx, uint8_t* y, int64_t outer, int64_t dim, int64_t count,
                int64_t block) {
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t k = 0; k < count; ++k) {
            int64_t i = static_cast<int64_t>(idx[k]);
            if (i < -dim || i >= dim)
                fail(KES_ERR_INVALID_ARGUMENT, "Gather index %lld is out of range for an axis of %lld",
                     static_cast<long long>(i), static_cast<long long>(dim));
            if (i < 0) i += dim;
            std::memcpy(y + (o * count + k) * block, data + (o * dim + i) * block, static_cast<size_t>(block));
        }
}

std::unique_ptr<Kernel> create_gather(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    const TensorDesc& indices = *node.inputs[1];
    if (indices.dtype != KES_I64 && indices.dtype != KES_I32)
        unsupported_dtype("input indices", indices.dtype, "i32, i64");
    if (x.rank() == 0) fail(KES_ERR_INVALID_ARGUMENT, "input data must have rank >= 1");
    const int64_t axis = normalize_axis(node.attrs.get_int("axis", 0), x.rank());
    Shape out(x.shape.begin(), x.shape.begin() + axis);
    out.insert(out.end(), indices.shape.begin(), indices.shape.end());
    out.insert(out.end(), x.shape.begin() + axis + 1, x.shape.end());
    outputs[0].dtype = x.dtype;
    outputs[0].shape = out;
    shape_elements(out);
    const AxisSplit around = split_at_axis(x.shape, axis);
    const int64_t outer = around.outer, block = around.inner * static_cast<int64_t>(kes_dtype_size(x.dtype));
    const int64_t dim = around.dim, count = indices.elements();
    const bool i64 = indices.dtype == KES_I64;
    return make_kernel([=](const void* const* in, void* const* outp) {
        if (i64)
            gather_run(in_as<uint8_t>(in, 0), in_as<int64_t>(in, 1), out_as<uint8_t>(outp, 0), outer, dim, count,
                       block);
        else
            gather_run(in_as<uint8_t>(in, 0), in_as<int32_t>(in, 1), out_as<uint8_t>(outp, 0), outer, dim, count,
                       block);
    });
}

// ---- GatherElements ------------------------------------------------------------------------------------

std::unique_ptr<Kernel> create_gather_elements(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    const TensorDesc& indices = *node.inputs[1];
    if (indices.dtype != KES_I64 && indices.dtype != KES_I32)
        unsupported_dtype("input indices", indices.dtype, "i32, i64");
    if (x.rank() == 0 || indices.rank() != x.rank())
        fail(KES_ERR_INVALID_ARGUMENT, "indices %s must have the rank of data %s", shape_string(indices.shape).c_str(),
             shape_string(x.shape).c_str());
    require_rank_at_most(x, kMaxRank, "input data");
    const int64_t axis = normalize_axis(node.attrs.get_int("axis", 0), x.rank());
    outputs[0].dtype = x.dtype;
    outputs[0].shape = indices.shape;
    struct Plan {
        int rank, axis;
        int64_t shape[kMaxRank], stride[kMaxRank];
        int64_t dim, count;
        size_t es;
        bool i64;
    } p{};
    const Shape st = contiguous_strides(x.shape);
    p.rank = static_cast<int>(x.rank());
    p.axis = static_cast<int>(axis);
    for (size_t d = 0; d < x.shape.size(); ++d) p.shape[d] = indices.shape[d], p.stride[d] = st[d];
    p.dim = x.shape[static_cast<size_t>(axis)];
    p.count = indices.elements();
    p.es = kes_dtype_size(x.dtype);
    p.i64 = indices.dtype == KES_I64;
    return make_kernel([p](const void* const* in, void* const* outp) {
        const uint8_t* src = in_as<uint8_t>(in, 0);
        uint8_t* y = out_as<uint8_t>(outp, 0);
        int64_t idx[kMaxRank] = {};
        for (int64_t i = 0; i < p.count; ++i) {
            int64_t k = p.i64 ? in_as<int64_t>(in, 1)[i] : in_as<int32_t>(in, 1)[i];
            if (k < -p.dim || k >= p.dim)
                fail(KES_ERR_INVALID_ARGUMENT, "GatherElements index %lld is out of range for an axis of %lld",
                     static_cast<long long>(k), static_cast<long long>(p.dim));
            if (k < 0) k += p.dim;
            int64_t off = 0;
            for (int d = 0; d < p.rank; ++d) off += (d == p.axis ? k : idx[d]) * p.stride[d];
            std::memcpy(y + i * static_cast<int64_t>(p.es), src + off * static_cast<int64_t>(p.es), p.es);
            for (int d = p.rank - 1; d >= 0; --d) {
                if (++idx[d] < p.shape[d]) break;
                idx[d] = 0;
            }
        }
    });
}

// ---- OneHot ---------------------------------------------------------------------------------------------

std::unique_ptr<Kernel> create_one_hot(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& indices = *node.inputs[0];
    const TensorDesc& depth_t = *node.inputs[1];
    const TensorDesc& values = *node.inputs[2];
    if (values.elements() != 2) fail(KES_ERR_INVALID_ARGUMENT, "input values must hold [off, on]");
    if (!depth_t.is_const() || depth_t.elements() != 1)
        fail(KES_ERR_UNSUPPORTED, "input depth must be a constant scalar (it sets the output shape)");
    double depth_v = 0.0;
    if (!dispatch_numeric(depth_t.dtype, [&](auto tag) {
            using T = typename decltype(tag)::type;
            T v;
            std::memcpy(&v, depth_t.data, sizeof(T));
            depth_v = static_cast<double>(v);
        }))
        unsupported_dtype("input depth", depth_t.dtype, kNumericTypes);
    if (!(depth_v >= 1.0 && depth_v <= static_cast<double>(kMaxGeometry)))
        fail(KES_ERR_INVALID_ARGUMENT, "input depth is %g; must be in [1, %lld]", depth_v,
             static_cast<long long>(kMaxGeometry));
    const int64_t depth = static_cast<int64_t>(depth_v);
    const int64_t out_rank = indices.rank() + 1;
    const int64_t axis = normalize_axis(node.attrs.get_int("axis", -1), out_rank);
    Shape out = indices.shape;
    out.insert(out.begin() + axis, depth);
    shape_elements(out);
    const AxisSplit around = split_at_axis(indices.shape, axis);
    const int64_t outer = around.outer, inner = around.dim * around.inner;
    outputs[0].dtype = values.dtype;
    outputs[0].shape = out;
    const size_t es = kes_dtype_size(values.dtype);
    const kes_dtype idt = indices.dtype;
    if (!dispatch_numeric(idt, [](auto) {})) unsupported_dtype("input indices", idt, kNumericTypes);
    return make_kernel([=](const void* const* in, void* const* outp) {
        const uint8_t* vals = in_as<uint8_t>(in, 2);
        uint8_t* y = out_as<uint8_t>(outp, 0);
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t i = 0; i < inner; ++i) {
                double raw = 0.0;
                dispatch_numeric(idt, [&](auto tag) {
                    using T = typename decltype(tag)::type;
                    raw = static_cast<double>(in_as<T>(in, 0)[o * inner + i]);
                });
                int64_t hot = raw > -1e15 && raw < 1e15 ? static_cast<int64_t>(raw) : depth;  // NaN/huge: off
                if (hot < 0) hot += depth;  // negative indices count from the end; others stay off
                for (int64_t k = 0; k < depth; ++k)
                    std::memcpy(y + ((o * depth + k) * inner + i) * static_cast<int64_t>(es),
                                vals + (k == hot ? es : 0), es);
            }
    });
}

// ---- ScatterElements ------------------------------------------------------------------------------------

template <class T>
std::unique_ptr<Kernel> scatter_elements_kernel(const Shape& data_shape, const Shape& idx_shape, int64_t axis, bool i64,
                                                int reduction) {
    struct Plan {
        int rank, axis;
        int64_t shape[kMaxRank], stride[kMaxRank];
        int64_t dim, count, total;
    } p{};
    const Shape st = contiguous_strides(data_shape);
    p.rank = static_cast<int>(data_shape.size());
    p.axis = static_cast<int>(axis);
    for (size_t d = 0; d < data_shape.size(); ++d) p.shape[d] = idx_shape[d], p.stride[d] = st[d];
    p.dim = data_shape[static_cast<size_t>(axis)];
    p.count = shape_elements(idx_shape);
    p.total = shape_elements(data_shape);
    return make_kernel([p, i64, reduction](const void* const* in, void* const* out) {
        const T* data = in_as<T>(in, 0);
        const T* upd = in_as<T>(in, 2);
        T* y = out_as<T>(out, 0);
        if (y != data && p.total) std::memmove(y, data, static_cast<size_t>(p.total) * sizeof(T));
        int64_t idx[kMaxRank] = {};
        for (int64_t i = 0; i < p.count; ++i) {
            int64_t k = i64 ? in_as<int64_t>(in, 1)[i] : in_as<int32_t>(in, 1)[i];
            if (k < -p.dim || k >= p.dim)
                fail(KES_ERR_INVALID_ARGUMENT, "ScatterElements index %lld is out of range for an axis of %lld",
                     static_cast<long long>(k), static_cast<long long>(p.dim));
            if (k < 0) k += p.dim;
            int64_t off = 0;
            for (int d = 0; d < p.rank; ++d) off += (d == p.axis ? k : idx[d]) * p.stride[d];
            const T v = upd[i];
            switch (reduction) {
                case 0: y[off] = v; break;
                case 1:
                    if constexpr (std::is_integral<T>::value)
                        y[off] = wrap_add(y[off], v);
                    else
                        y[off] = y[off] + v;
                    break;
                case 2:
                    if constexpr (std::is_integral<T>::value)
                        y[off] = wrap_mul(y[off], v);
                    else
                        y[off] = y[off] * v;
                    break;
                case 3: y[off] = v > y[off] ? v : y[off]; break;
                default: y[off] = v < y[off] ? v : y[off]; break;
            }
            for (int d = p.rank - 1; d >= 0; --d) {
                if (++idx[d] < p.shape[d]) break;
                idx[d] = 0;
            }
        }
    });
}

std::unique_ptr<Kernel> create_scatter_elements(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    const TensorDesc& indices = *node.inputs[1];
    const TensorDesc& updates = *node.inputs[2];
    if (indices.dtype != KES_I64 && indices.dtype != KES_I32)
        unsupported_dtype("input indices", indices.dtype, "i32, i64");
    if (x.rank() == 0 || indices.rank() != x.rank() || updates.shape != indices.shape || updates.dtype != x.dtype)
        fail(KES_ERR_INVALID_ARGUMENT, "data %s, indices %s and updates %s do not match", shape_string(x.shape).c_str(),
             shape_string(indices.shape).c_str(), shape_string(updates.shape).c_str());
    require_rank_at_most(x, kMaxRank, "input data");
    for (size_t d = 0; d < x.shape.size(); ++d)
        if (indices.shape[d] > x.shape[d])
            fail(KES_ERR_INVALID_ARGUMENT, "indices %s exceed data %s", shape_string(indices.shape).c_str(),
                 shape_string(x.shape).c_str());
    const int64_t axis = normalize_axis(node.attrs.get_int("axis", 0), x.rank());
    const std::string red = get_choice(node.attrs, "reduction", "none", {"none", "add", "mul", "max", "min"});
    const int reduction = red == "none" ? 0 : red == "add" ? 1 : red == "mul" ? 2 : red == "max" ? 3 : 4;
    outputs[0].dtype = x.dtype;
    outputs[0].shape = x.shape;
    const bool i64 = indices.dtype == KES_I64;
    std::unique_ptr<Kernel> k;
    if (x.dtype == KES_BOOL && reduction == 0)
        return scatter_elements_kernel<uint8_t>(x.shape, indices.shape, axis, i64, 0);
    if (dispatch_numeric(x.dtype, [&](auto tag) {
            k = scatter_elements_kernel<typename decltype(tag)::type>(x.shape, indices.shape, axis, i64, reduction);
        }))
        return k;
    unsupported_dtype("input data", x.dtype, kNumericTypes);
}

// ---- GatherND / ScatterND -------------------------------------------------------------------------------

// Index tuples of the last indices dim address blocks of data; checked at run time.
struct NdPlan {
    int64_t tuples = 0, k = 0, block = 0;                 // block: bytes per addressed slice
    int64_t per_batch = 1, batch_stride = 0;              // tuples per batch, data bytes per batch
    int64_t dims[kMaxRank] = {}, strides[kMaxRank] = {};  // extents and byte strides of the indexed dims
    bool i64 = true;
};

NdPlan nd_plan(const TensorDesc& x, const TensorDesc& indices, int64_t batch_dims) {
    if (indices.dtype != KES_I64 && indices.dtype != KES_I32)
        unsupported_dtype("input indices", indices.dtype, "i32, i64");
    if (indices.rank() < 1 || x.rank() < 1) fail(KES_ERR_INVALID_ARGUMENT, "data and indices must have rank >= 1");
    require_rank_at_most(x, kMaxRank, "input data");
    NdPlan p;
    p.k = indices.shape.back();
    if (batch_dims < 0 || batch_dims >= std::min(x.rank(), indices.rank()) || p.k < 1 || p.k > x.rank() - batch_dims)
        fail(KES_ERR_INVALID_ARGUMENT, "indices %s cannot index data %s with batch_dims %lld",
             shape_string(indices.shape).c_str(), shape_string(x.shape).c_str(), static_cast<long long>(batch_dims));
    for (int64_t d = 0; d < batch_dims; ++d)
        if (x.shape[static_cast<size_t>(d)] != indices.shape[static_cast<size_t>(d)])
            fail(KES_ERR_INVALID_ARGUMENT, "batch dims of data %s and indices %s differ", shape_string(x.shape).c_str(),
                 shape_string(indices.shape).c_str());
    const int64_t es = static_cast<int64_t>(kes_dtype_size(x.dtype));
    const Shape st = contiguous_strides(x.shape);
    p.block = es;
    for (int64_t d = batch_dims + p.k; d < x.rank(); ++d) p.block *= x.shape[static_cast<size_t>(d)];
    for (int64_t j = 0; j < p.k; ++j) {
        p.dims[j] = x.shape[static_cast<size_t>(batch_dims + j)];
        p.strides[j] = st[static_cast<size_t>(batch_dims + j)] * es;
    }
    p.tuples = indices.elements() / p.k;
    for (int64_t d = batch_dims; d < indices.rank() - 1; ++d) p.per_batch *= indices.shape[static_cast<size_t>(d)];
    p.batch_stride = batch_dims > 0 ? st[static_cast<size_t>(batch_dims - 1)] * es : 0;
    p.i64 = indices.dtype == KES_I64;
    return p;
}

// Byte offset into data of index tuple t.
inline int64_t nd_offset(const NdPlan& p, const void* indices, int64_t t) {
    int64_t off = p.per_batch ? (t / p.per_batch) * p.batch_stride : 0;
    for (int64_t j = 0; j < p.k; ++j) {
        int64_t i = p.i64 ? static_cast<const int64_t*>(indices)[t * p.k + j]
                          : static_cast<const int32_t*>(indices)[t * p.k + j];
        if (i < -p.dims[j] || i >= p.dims[j])
            fail(KES_ERR_INVALID_ARGUMENT, "index %lld is out of range for an axis of %lld", static_cast<long long>(i),
                 static_cast<long long>(p.dims[j]));
        if (i < 0) i += p.dims[j];
        off += i * p.strides[j];
    }
    return off;
}

std::unique_ptr<Kernel> create_gather_nd(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    const TensorDesc& indices = *node.inputs[1];
    const int64_t b = node.attrs.get_int("batch_dims", 0);
    const NdPlan p = nd_plan(x, indices, b);
    Shape out(indices.shape.begin(), indices.shape.end() - 1);
    out.insert(out.end(), x.shape.begin() + b + p.k, x.shape.end());
    outputs[0].dtype = x.dtype;
    outputs[0].shape = out;
    return make_kernel([p](const void* const* in, void* const* outp) {
        const uint8_t* src = in_as<uint8_t>(in, 0);
        uint8_t* y = out_as<uint8_t>(outp, 0);
        for (int64_t t = 0; t < p.tuples; ++t)
            std::memcpy(y + t * p.block, src + nd_offset(p, in[1], t), static_cast<size_t>(p.block));
    });
}

template <class T>
void scatter_block(T* y, const T* u, int64_t n, int reduction) {
    for (int64_t i = 0; i < n; ++i) {
        switch (reduction) {
            case 0: y[i] = u[i]; break;
            case 1:
                if constexpr (std::is_integral<T>::value)
                    y[i] = wrap_add(y[i], u[i]);
                else
                    y[i] = y[i] + u[i];
                break;
            case 2:
                if constexpr (std::is_integral<T>::value)
                    y[i] = wrap_mul(y[i], u[i]);
                else
                    y[i] = y[i] * u[i];
                break;
            case 3: y[i] = u[i] > y[i] ? u[i] : y[i]; break;
            default: y[i] = u[i] < y[i] ? u[i] : y[i]; break;
        }
    }
}

std::unique_ptr<Kernel> create_scatter_nd(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    const TensorDesc& indices = *node.inputs[1];
    const TensorDesc& updates = *node.inputs[2];
    const NdPlan p = nd_plan(x, indices, 0);
    Shape want(indices.shape.begin(), indices.shape.end() - 1);
    want.insert(want.end(), x.shape.begin() + p.k, x.shape.end());
    if (updates.shape != want || updates.dtype != x.dtype)
        fail(KES_ERR_INVALID_ARGUMENT, "updates %s %s; expected %s %s", kes_dtype_name(updates.dtype),
             shape_string(updates.shape).c_str(), kes_dtype_name(x.dtype), shape_string(want).c_str());
    const std::string red = get_choice(node.attrs, "reduction", "none", {"none", "add", "mul", "max", "min"});
    const int reduction = red == "none" ? 0 : red == "add" ? 1 : red == "mul" ? 2 : red == "max" ? 3 : 4;
    outputs[0].dtype = x.dtype;
    outputs[0].shape = x.shape;
    const size_t bytes = x.bytes();
    const kes_dtype dt = x.dtype;
    if (reduction != 0 && !dispatch_numeric(dt, [](auto) {})) unsupported_dtype("input data", dt, kNumericTypes);
    return make_kernel([p, bytes, dt, reduction](const void* const* in, void* const* outp) {
        uint8_t* y = out_as<uint8_t>(outp, 0);
        const uint8_t* u = in_as<uint8_t>(in, 2);
        if (in[0] != outp[0] && bytes) std::memmove(y, in[0], bytes);
        for (int64_t t = 0; t < p.tuples; ++t) {
            uint8_t* dst = y + nd_offset(p, in[1], t);
            const uint8_t* src = u + t * p.block;
            if (reduction == 0) {
                std::memcpy(dst, src, static_cast<size_t>(p.block));
                continue;
            }
            dispatch_numeric(dt, [&](auto tag) {
                using T = typename decltype(tag)::type;
                scatter_block(reinterpret_cast<T*>(dst), reinterpret_cast<const T*>(src),
                              p.block / static_cast<int64_t>(sizeof(T)), reduction);
            });
        }
    });
}

// ---- EyeLike --------------------------------------------------------------------------------------------

std::unique_ptr<Kernel> create_eye_like(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    if (x.rank() != 2) fail(KES_ERR_INVALID_ARGUMENT, "input must be 2-D (is %s)", shape_string(x.shape).c_str());
    const kes_dtype dtype = node.attrs.has("dtype") ? onnx_to_kes_dtype(node.attrs.get_int("dtype", 1)) : x.dtype;
    const int64_t k = node.attrs.get_int("k", 0);
    check_geometry("attribute 'k'", k, -kMaxGeometry);
    outputs[0].dtype = dtype;
    outputs[0].shape = x.shape;
    std::vector<uint8_t> one(kes_dtype_size(dtype));
    with_dtype(dtype, [&](auto tag, Storage st) {
        using T = typename decltype(tag)::type;
        if (st == Storage::Half) {
            const uint16_t h = kes_fp16_from_float(1.0f);
            std::memcpy(one.data(), &h, 2);
        } else {
            const T v = T(1);
            std::memcpy(one.data(), &v, sizeof(T));
        }
    });
    const int64_t rows = x.shape[0], cols = x.shape[1];
    return make_kernel([one, rows, cols, k](const void* const*, void* const* out) {
        uint8_t* y = out_as<uint8_t>(out, 0);
        const int64_t es = static_cast<int64_t>(one.size());
        if (rows > 0 && cols > 0) std::memset(y, 0, static_cast<size_t>(rows * cols * es));
        for (int64_t r = 0; r < rows; ++r)
            if (r + k >= 0 && r + k < cols) std::memcpy(y + (r * cols + r + k) * es, one.data(), one.size());
    });
}

// ---- Pad ------------------------------------------------------------------------------------------------

std::unique_ptr<Kernel> create_pad(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    const std::string mode = get_choice(node.attrs, "mode", "constant", {"constant", "edge", "reflect", "wrap"});
    std::vector<int64_t> pads_in;
    if (const TensorDesc* p = node.input(1))
        pads_in = const_int_list(*p, "input pads");
    else
        pads_in = node.attrs.get_ints("pads");  // opset < 11
    std::vector<int64_t> axes;
    if (const TensorDesc* a = node.input(3)) {
        axes = const_int_list(*a, "input axes");
        for (int64_t& v : axes) v = normalize_axis(v, x.rank());
    } else {
        for (int64_t d = 0; d < x.rank(); ++d) axes.push_back(d);
    }
    if (pads_in.size() != 2 * axes.size())
        fail(KES_ERR_INVALID_ARGUMENT, "input pads has %zu values; expected %zu", pads_in.size(), 2 * axes.size());
    const size_t r = x.shape.size();
    std::vector<int64_t> begin(r, 0), end(r, 0);
    for (int64_t p : pads_in) check_geometry("a pad", p, -kMaxGeometry);
    for (size_t i = 0; i < axes.size(); ++i) {
        begin[static_cast<size_t>(axes[i])] = pads_in[i];
        end[static_cast<size_t>(axes[i])] = pads_in[i + axes.size()];
    }
    const TensorDesc* cv = node.input(2);
    if (cv && (cv->dtype != x.dtype || cv->elements() != 1))
        fail(KES_ERR_INVALID_ARGUMENT, "input constant_value must be a %s scalar", kes_dtype_name(x.dtype));
    if (r > static_cast<size_t>(kMaxRank)) fail(KES_ERR_UNSUPPORTED, "rank %zu exceeds %d", r, kMaxRank);
    Shape out(r);
    for (size_t d = 0; d < r; ++d) {
        out[d] = x.shape[d] + begin[d] + end[d];
        if (out[d] < 0) fail(KES_ERR_INVALID_ARGUMENT, "pads crop axis %zu below zero", d);
    }
    // An empty output needs no tables (and a huge extent next to a 0 must not build one).
    const bool empty_out = shape_elements(out) == 0;
    // Per axis and output index: the source index, or -1 for the constant.
    std::vector<int64_t> table;
    std::vector<int64_t> table_at(r);
    for (size_t d = 0; d < r && !empty_out; ++d) {
        const int64_t dim = x.shape[d];
        if (dim == 0 && out[d] > 0 && mode != "constant")
            fail(KES_ERR_INVALID_ARGUMENT, "mode '%s' cannot pad an empty axis %zu", mode.c_str(), d);
        table_at[d] = static_cast<int64_t>(table.size());
        for (int64_t o = 0; o < out[d]; ++o) {
            int64_t i = o - begin[d];
            if (i < 0 || i >= dim) {
                if (mode == "constant") {
                    i = -1;
                } else if (mode == "edge") {
                    i = std::clamp<int64_t>(i, 0, dim - 1);
                } else if (mode == "wrap") {
                    i = ((i % dim) + dim) % dim;
                } else if (dim == 1) {
                    i = 0;  // reflecting a single element repeats it
                } else {
                    const int64_t period = 2 * (dim - 1);
                    i = ((i % period) + period) % period;
                    if (i >= dim) i = period - i;
                }
            }
            table.push_back(i);
        }
    }
    shape_elements(out);
    outputs[0].dtype = x.dtype;
    outputs[0].shape = out;
    const Shape st = contiguous_strides(x.shape);
    struct Plan {
        int rank;
        int64_t out[kMaxRank], stride[kMaxRank], at[kMaxRank];
    } p{};
    p.rank = static_cast<int>(r);
    for (size_t d = 0; d < r; ++d) p.out[d] = out[d], p.stride[d] = st[d], p.at[d] = table_at[d];
    const size_t es = kes_dtype_size(x.dtype);
    const int64_t count = shape_elements(out);
    const bool has_cv = cv != nullptr;
    return make_kernel([p, table, es, count, has_cv](const void* const* in, void* const* outp) {
        const uint8_t* src = in_as<uint8_t>(in, 0);
        uint8_t* y = out_as<uint8_t>(outp, 0);
        uint8_t fill[8] = {};
        if (has_cv && in[2]) std::memcpy(fill, in[2], es);
        int64_t idx[kMaxRank] = {};
        for (int64_t i = 0; i < count; ++i) {
            int64_t off = 0;
            bool constant = false;
            for (int d = 0; d < p.rank; ++d) {
                const int64_t s = table[static_cast<size_t>(p.at[d] + idx[d])];
                if (s < 0) {
                    constant = true;
                    break;
                }
                off += s * p.stride[d];
            }
            std::memcpy(y + i * static_cast<int64_t>(es), constant ? fill : src + off * static_cast<int64_t>(es), es);
            for (int d = p.rank - 1; d >= 0; --d) {
                if (++idx[d] < p.out[d]) break;
                idx[d] = 0;
            }
        }
    });
}

}  // namespace

void add_misc_ops(OpList& ops) {
    ops.push_back({"Cast", 1, 1, 1, 1, create_cast});
    ops.push_back({"CastLike", 2, 2, 1, 1, create_cast});
    ops.push_back({"GatherElements", 2, 2, 1, 1, create_gather_elements});
    ops.push_back({"EyeLike", 1, 1, 1, 1, create_eye_like});
    ops.push_back({"OneHot", 3, 3, 1, 1, create_one_hot});
    ops.push_back({"ScatterElements", 3, 3, 1, 1, create_scatter_elements});
    ops.push_back({"GatherND", 2, 2, 1, 1, create_gather_nd});
    ops.push_back({"ScatterND", 3, 3, 1, 1, create_scatter_nd});
    ops.push_back({"Shape", 1, 1, 1, 1, create_shape});
    ops.push_back({"Size", 1, 1, 1, 1, create_size});
    ops.push_back({"ConstantOfShape", 1, 1, 1, 1, create_constant_of_shape});
    ops.push_back({"Range", 3, 3, 1, 1, create_range});
    ops.push_back({"Gather", 2, 2, 1, 1, create_gather});
    ops.push_back({"Pad", 1, 4, 1, 1, create_pad});
}

}  // namespace kes
