// misc.cpp — Resize, Pad, Cast, Gather, Shape, Size, ConstantOfShape, Range.
//
// Choices:
// - Resize (opset 13..18 inputs X, roi, scales, sizes; an empty scales/roi tensor counts as absent):
//   f32 data; modes nearest (round_prefer_floor, round_prefer_ceil, floor, ceil), linear and cubic
//   (cubic_coeff_a, exclude_outside), over any axes (each axis is separable; at most 3 axes may change).
//   Coordinate modes half_pixel, pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn,
//   tf_crop_and_resize (roi must be constant; outside samples get extrapolation_value),
//   half_pixel_symmetric. Output size from scales is floor(in × scale) computed in double from the f32
//   scale; with sizes the scale is out / in. Linear/cubic sample with edge clamping (ONNX's edge
//   padding). The opset-18 "axes" attribute is honoured; keep_aspect_ratio_policy other than "stretch"
//   is KES_ERR_UNSUPPORTED.
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
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "ops.hpp"
#include "op_util.hpp"

namespace kes {

kes_dtype onnx_to_kes_dtype(int64_t onnx_type) {
    switch (onnx_type) {
        case 1: return KES_F32;
        case 2: return KES_U8;
        case 3: return KES_I8;
        case 4: return KES_U16;
        case 5: return KES_I16;
        case 6: return KES_I32;
        case 7: return KES_I64;
        case 9: return KES_BOOL;
        case 10: return KES_F16;
        case 11: return KES_F64;
        case 12: return KES_U32;
        case 13: return KES_U64;
        default: fail(KES_ERR_UNSUPPORTED, "ONNX data type %lld is not supported", static_cast<long long>(onnx_type));
    }
}

int64_t kes_dtype_to_onnx(kes_dtype dtype) {
    switch (dtype) {
        case KES_F32: return 1;
        case KES_U8: return 2;
        case KES_I8: return 3;
        case KES_U16: return 4;
        case KES_I16: return 5;
        case KES_I32: return 6;
        case KES_I64: return 7;
        case KES_BOOL: return 9;
        case KES_F16: return 10;
        case KES_F64: return 11;
        case KES_U32: return 12;
        case KES_U64: return 13;
    }
    fail(KES_ERR_UNSUPPORTED, "dtype %s has no ONNX equivalent", kes_dtype_name(dtype));
}

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
    const kes_dtype to = onnx_to_kes_dtype(node.attrs.require_int("to"));
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
    const Shape shape = const_ints(s, "input shape");
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
        for (int64_t i = 0; i < n; ++i) std::memcpy(y + i * static_cast<int64_t>(elem.size()), elem.data(), elem.size());
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
    const double count = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
    if (!(count < 1e12)) fail(KES_ERR_INVALID_ARGUMENT, "Range would have too many elements");
    const int64_t n = std::max<int64_t>(0, static_cast<int64_t>(count));
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
    int64_t outer = 1, block = static_cast<int64_t>(kes_dtype_size(x.dtype));
    for (int64_t d = 0; d < x.rank(); ++d) {
        if (d < axis) outer *= x.shape[static_cast<size_t>(d)];
        if (d > axis) block *= x.shape[static_cast<size_t>(d)];
    }
    const int64_t dim = x.shape[static_cast<size_t>(axis)], count = indices.elements();
    const bool i64 = indices.dtype == KES_I64;
    return make_kernel([=](const void* const* in, void* const* outp) {
        if (i64)
            gather_run(in_as<uint8_t>(in, 0), in_as<int64_t>(in, 1), out_as<uint8_t>(outp, 0), outer, dim, count, block);
        else
            gather_run(in_as<uint8_t>(in, 0), in_as<int32_t>(in, 1), out_as<uint8_t>(outp, 0), outer, dim, count, block);
    });
}

// ---- Pad ------------------------------------------------------------------------------------------------

std::unique_ptr<Kernel> create_pad(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    const std::string mode = get_choice(node.attrs, "mode", "constant", {"constant", "edge", "reflect", "wrap"});
    std::vector<int64_t> pads_in;
    if (const TensorDesc* p = node.input(1))
        pads_in = const_ints(*p, "input pads");
    else
        pads_in = node.attrs.get_ints("pads");  // opset < 11
    std::vector<int64_t> axes;
    if (const TensorDesc* a = node.input(3)) {
        axes = const_ints(*a, "input axes");
        for (int64_t& v : axes) v = normalize_axis(v, x.rank());
    } else {
        for (int64_t d = 0; d < x.rank(); ++d) axes.push_back(d);
    }
    if (pads_in.size() != 2 * axes.size())
        fail(KES_ERR_INVALID_ARGUMENT, "input pads has %zu values; expected %zu", pads_in.size(), 2 * axes.size());
    const size_t r = x.shape.size();
    std::vector<int64_t> begin(r, 0), end(r, 0);
    for (size_t i = 0; i < axes.size(); ++i) {
        begin[static_cast<size_t>(axes[i])] = pads_in[i];
        end[static_cast<size_t>(axes[i])] = pads_in[i + axes.size()];
    }
    const TensorDesc* cv = node.input(2);
    if (cv && (cv->dtype != x.dtype || cv->elements() != 1))
        fail(KES_ERR_INVALID_ARGUMENT, "input constant_value must be a %s scalar", kes_dtype_name(x.dtype));
    if (r > static_cast<size_t>(kMaxRank)) fail(KES_ERR_UNSUPPORTED, "rank %zu exceeds %d", r, kMaxRank);
    Shape out(r);
    // Per axis and output index: the source index, or -1 for the constant.
    std::vector<int64_t> table;
    std::vector<int64_t> table_at(r);
    for (size_t d = 0; d < r; ++d) {
        const int64_t dim = x.shape[d];
        out[d] = dim + begin[d] + end[d];
        if (out[d] < 0) fail(KES_ERR_INVALID_ARGUMENT, "pads crop axis %zu below zero", d);
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

// ---- Resize ---------------------------------------------------------------------------------------------

// Per output index of one axis: up to 4 source indices and weights, or "outside" (extrapolation).
struct AxisTaps {
    int64_t first = 0;  // offset into the tap table
    int taps = 1;       // taps per output index
};

double cubic_weight(double s, double a) {
    s = std::fabs(s);
    if (s <= 1.0) return ((a + 2.0) * s - (a + 3.0)) * s * s + 1.0;
    if (s < 2.0) return ((a * s - 5.0 * a) * s + 8.0 * a) * s - 4.0 * a;
    return 0.0;
}

std::unique_ptr<Kernel> create_resize(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    require_dtype(x, KES_F32, "input X");
    const size_t r = x.shape.size();
    if (r > static_cast<size_t>(kMaxRank)) fail(KES_ERR_UNSUPPORTED, "rank %zu exceeds %d", r, kMaxRank);
    const std::string mode = get_choice(node.attrs, "mode", "nearest", {"nearest", "linear", "cubic"});
    const std::string ctm = get_choice(node.attrs, "coordinate_transformation_mode", "half_pixel",
                                       {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                        "tf_half_pixel_for_nn", "tf_crop_and_resize", "half_pixel_symmetric"});
    const std::string nearest_mode = get_choice(node.attrs, "nearest_mode", "round_prefer_floor",
                                                {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"});
    const std::string policy = get_choice(node.attrs, "keep_aspect_ratio_policy", "stretch",
                                          {"stretch", "not_larger", "not_smaller"});
    if (policy != "stretch")
        fail(KES_ERR_UNSUPPORTED, "attribute 'keep_aspect_ratio_policy' = '%s' is not supported", policy.c_str());
    const double cubic_a = node.attrs.get_float("cubic_coeff_a", -0.75f);
    const bool exclude_outside = node.attrs.get_int("exclude_outside", 0) != 0;
    const float extrapolation = node.attrs.get_float("extrapolation_value", 0.0f);
    std::vector<int64_t> axes = node.attrs.get_ints("axes");
    if (axes.empty())
        for (size_t d = 0; d < r; ++d) axes.push_back(static_cast<int64_t>(d));
    for (int64_t& a : axes) a = normalize_axis(a, static_cast<int64_t>(r));

    const TensorDesc* roi_t = node.input(1);
    const TensorDesc* scales_t = node.input(2);
    const TensorDesc* sizes_t = node.input(3);
    if (scales_t && scales_t->elements() == 0) scales_t = nullptr;
    if (roi_t && roi_t->elements() == 0) roi_t = nullptr;
    if ((scales_t != nullptr) == (sizes_t != nullptr))
        fail(KES_ERR_INVALID_ARGUMENT, "exactly one of the inputs scales and sizes must be given");
    std::vector<double> scale(r, 1.0);
    Shape out = x.shape;
    if (scales_t) {
        const std::vector<float> s = const_floats(*scales_t, "input scales");
        if (s.size() != axes.size())
            fail(KES_ERR_INVALID_ARGUMENT, "input scales has %zu values; expected %zu", s.size(), axes.size());
        for (size_t i = 0; i < axes.size(); ++i) {
            const size_t d = static_cast<size_t>(axes[i]);
            if (!(s[i] > 0.0f)) fail(KES_ERR_INVALID_ARGUMENT, "input scales has a non-positive value");
            scale[d] = s[i];
        }
    } else {
        const std::vector<int64_t> s = const_ints(*sizes_t, "input sizes");
        if (s.size() != axes.size())
            fail(KES_ERR_INVALID_ARGUMENT, "input sizes has %zu values; expected %zu", s.size(), axes.size());
        for (size_t i = 0; i < axes.size(); ++i) {
            const size_t d = static_cast<size_t>(axes[i]);
            if (s[i] < 0) fail(KES_ERR_INVALID_ARGUMENT, "input sizes has a negative value");
            out[d] = s[i];
            scale[d] = x.shape[d] ? static_cast<double>(s[i]) / static_cast<double>(x.shape[d]) : 1.0;
        }
    }
    std::vector<double> roi_start(r, 0.0), roi_end(r, 1.0);
    if (ctm == "tf_crop_and_resize") {
        if (!roi_t) fail(KES_ERR_INVALID_ARGUMENT, "tf_crop_and_resize needs the roi input");
        const std::vector<float> roi = const_floats(*roi_t, "input roi");
        if (roi.size() != 2 * axes.size())
            fail(KES_ERR_INVALID_ARGUMENT, "input roi has %zu values; expected %zu", roi.size(), 2 * axes.size());
        for (size_t i = 0; i < axes.size(); ++i) {
            roi_start[static_cast<size_t>(axes[i])] = roi[i];
            roi_end[static_cast<size_t>(axes[i])] = roi[i + axes.size()];
        }
    }
    if (scales_t)
        for (size_t d = 0; d < r; ++d) {
            const double extent = ctm == "tf_crop_and_resize" ? (roi_end[d] - roi_start[d]) : 1.0;
            out[d] = static_cast<int64_t>(std::floor(static_cast<double>(x.shape[d]) * extent * scale[d]));
        }
    shape_elements(out);
    outputs[0].dtype = KES_F32;
    outputs[0].shape = out;

    // Tap tables per axis. Axes whose mapping is the identity get one tap of weight 1.
    std::vector<int64_t> tap_index;  // -1: outside (extrapolation value)
    std::vector<float> tap_weight;
    std::vector<AxisTaps> axis(r);
    int changing = 0;
    for (size_t d = 0; d < r; ++d) {
        const int64_t in = x.shape[d], on = out[d];
        const double s = scale[d];
        const bool identity = in == on && ctm != "tf_crop_and_resize" && s == 1.0;
        const int taps = identity || mode == "nearest" ? 1 : (mode == "linear" ? 2 : 4);
        if (!identity) ++changing;
        axis[d].first = static_cast<int64_t>(tap_index.size());
        axis[d].taps = taps;
        for (int64_t o = 0; o < on; ++o) {
            if (identity) {
                tap_index.push_back(o);
                tap_weight.push_back(1.0f);
                continue;
            }
            double xo = 0.0;
            const double fo = static_cast<double>(o);
            if (ctm == "half_pixel") {
                xo = (fo + 0.5) / s - 0.5;
            } else if (ctm == "half_pixel_symmetric") {
                const double adj = static_cast<double>(on) / (s * static_cast<double>(in));
                const double center = static_cast<double>(in) / 2.0;
                xo = center * (1.0 - adj) + (fo + 0.5) / s - 0.5;
            } else if (ctm == "pytorch_half_pixel") {
                xo = on > 1 ? (fo + 0.5) / s - 0.5 : 0.0;
            } else if (ctm == "align_corners") {
                xo = on == 1 ? 0.0 : fo * static_cast<double>(in - 1) / static_cast<double>(on - 1);
            } else if (ctm == "asymmetric") {
                xo = fo / s;
            } else if (ctm == "tf_half_pixel_for_nn") {
                xo = (fo + 0.5) / s;
            } else {  // tf_crop_and_resize
                const double span = (roi_end[d] - roi_start[d]) * static_cast<double>(in - 1);
                xo = on > 1 ? roi_start[d] * static_cast<double>(in - 1) + fo * span / static_cast<double>(on - 1)
                            : 0.5 * (roi_start[d] + roi_end[d]) * static_cast<double>(in - 1);
                if (xo < 0.0 || xo > static_cast<double>(in - 1)) {
                    for (int t = 0; t < taps; ++t) tap_index.push_back(-1), tap_weight.push_back(0.0f);
                    continue;
                }
            }
            if (mode == "nearest") {
                double k;
                if (nearest_mode == "floor") {
                    k = std::floor(xo);
                } else if (nearest_mode == "ceil") {
                    k = std::ceil(xo);
                } else if (xo - std::floor(xo) == 0.5) {
                    k = nearest_mode == "round_prefer_floor" ? std::floor(xo) : std::ceil(xo);
                } else {
                    k = std::round(xo);
                }
                tap_index.push_back(std::clamp<int64_t>(static_cast<int64_t>(k), 0, in - 1));
                tap_weight.push_back(1.0f);
            } else if (mode == "linear") {
                const double c = std::clamp(xo, 0.0, static_cast<double>(in - 1));
                const int64_t i0 = static_cast<int64_t>(std::floor(c));
                const int64_t i1 = std::min(i0 + 1, in - 1);
                const double w1 = c - static_cast<double>(i0);
                tap_index.push_back(i0), tap_weight.push_back(static_cast<float>(1.0 - w1));
                tap_index.push_back(i1), tap_weight.push_back(static_cast<float>(w1));
            } else {
                const double f = std::floor(xo), ratio = xo - f;
                double w[4], total = 0.0;
                int64_t idx[4];
                for (int t = 0; t < 4; ++t) {
                    const int64_t i = static_cast<int64_t>(f) - 1 + t;
                    w[t] = cubic_weight(ratio - static_cast<double>(t - 1), cubic_a);
                    if (exclude_outside && (i < 0 || i >= in)) w[t] = 0.0;
                    idx[t] = std::clamp<int64_t>(i, 0, in - 1);
                    total += w[t];
                }
                for (int t = 0; t < 4; ++t) {
                    tap_index.push_back(idx[t]);
                    tap_weight.push_back(static_cast<float>(exclude_outside && total != 0.0 ? w[t] / total : w[t]));
                }
            }
        }
    }
    if (changing > 3)
        fail(KES_ERR_UNSUPPORTED, "Resize changes %d axes; at most 3 are supported", changing);
    if (x.elements() == 0 && shape_elements(out) != 0) fail(KES_ERR_INVALID_ARGUMENT, "cannot resize an empty tensor");
    struct Plan {
        int rank;
        int64_t out[kMaxRank], stride[kMaxRank], first[kMaxRank];
        int taps[kMaxRank];
    } p{};
    const Shape st = contiguous_strides(x.shape);
    p.rank = static_cast<int>(r);
    for (size_t d = 0; d < r; ++d)
        p.out[d] = out[d], p.stride[d] = st[d], p.first[d] = axis[d].first, p.taps[d] = axis[d].taps;
    const int64_t count = shape_elements(out);
    return make_kernel([p, tap_index, tap_weight, count, extrapolation](const void* const* in, void* const* outp) {
        const float* src = in_as<float>(in, 0);
        float* y = out_as<float>(outp, 0);
        int64_t idx[kMaxRank] = {};
        for (int64_t i = 0; i < count; ++i) {
            // Enumerate the tap combinations of all axes (product of per-axis taps; ≤ 4^3).
            int t[kMaxRank] = {};
            double acc = 0.0;
            bool outside = false;
            for (;;) {
                double w = 1.0;
                int64_t off = 0;
                for (int d = 0; d < p.rank; ++d) {
                    const size_t k = static_cast<size_t>(p.first[d] + idx[d] * p.taps[d] + t[d]);
                    if (tap_index[k] < 0) outside = true;
                    off += tap_index[k] * p.stride[d];
                    w *= tap_weight[k];
                }
                if (outside) break;
                if (w != 0.0) acc += w * static_cast<double>(src[off]);
                int d = p.rank - 1;
                for (; d >= 0; --d) {
                    if (++t[d] < p.taps[d]) break;
                    t[d] = 0;
                }
                if (d < 0) break;
            }
            y[i] = outside ? extrapolation : static_cast<float>(acc);
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
    ops.push_back({"Shape", 1, 1, 1, 1, create_shape});
    ops.push_back({"Size", 1, 1, 1, 1, create_size});
    ops.push_back({"ConstantOfShape", 1, 1, 1, 1, create_constant_of_shape});
    ops.push_back({"Range", 3, 3, 1, 1, create_range});
    ops.push_back({"Gather", 2, 2, 1, 1, create_gather});
    ops.push_back({"Pad", 1, 4, 1, 1, create_pad});
    ops.push_back({"Resize", 1, 4, 1, 1, create_resize});
}

}  // namespace kes
