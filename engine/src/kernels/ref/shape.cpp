// shape.cpp — ops that move data without arithmetic: Reshape, Flatten, Squeeze, Unsqueeze, Transpose,
// Concat, Split, Slice, Expand, Tile, Trilu, DepthToSpace, SpaceToDepth, and Kestrel's ChannelShuffle. All of
// them work on any dtype (they copy elements by size).
//
// Choices:
// - Shape-determining inputs (Reshape shape, Slice starts/ends/axes/steps, Squeeze/Unsqueeze axes,
//   Split split, Expand shape, Tile repeats) must be constants at create(); otherwise
//   KES_ERR_UNSUPPORTED. Squeeze/Unsqueeze/Split also accept their pre-opset-13 "axes"/"split"
//   attributes.
// - Split without "split" divides the axis into ceil(dim / outputs) sized parts, the last one smaller
//   (opset 18's num_outputs rule; an evenly divisible axis gives the opset 13 result).
// - Slice clamps as ONNX: starts/ends are first offset by the dim when negative, then clamped to
//   [0, dim] (positive steps) or [0, dim-1] / [-1, dim-1] (negative steps). A step of 0 is
//   KES_ERR_INVALID_ARGUMENT.
// - Reshape / Flatten / Squeeze / Unsqueeze copy (memmove) unless the executor gives them the same
//   buffer in and out.
// - ChannelShuffle (Kestrel's own op: attributes "axis", default 1, and "group" g, which divides that
//   axis's extent C) is ShuffleNet's Reshape [.., g, C/g, ..] → Transpose (swap the two) → Reshape
//   back, as one node that the layout pass can renumber (the converter folds that pattern into it):
//   output channel j·g + i is input channel i·(C/g) + j.
#include <algorithm>
#include <limits>

#include "op_util.hpp"
#include "ops.hpp"

namespace kes {

namespace {

// Copy-only kernel (the output has the input's bytes under another shape).
std::unique_ptr<Kernel> copy_kernel(size_t bytes) {
    return make_kernel([bytes](const void* const* in, void* const* out) {
        if (in[0] != out[0] && bytes) std::memmove(out[0], in[0], bytes);
    });
}

// A strided gather of the input into the contiguous output (Transpose, Slice, Expand, ...).
std::unique_ptr<Kernel> strided_kernel(size_t elem_size, const Shape& out_shape, const Shape& in_strides,
                                       int64_t offset) {
    if (out_shape.size() > static_cast<size_t>(kMaxRank))
        fail(KES_ERR_UNSUPPORTED, "rank %zu exceeds the supported %d", out_shape.size(), kMaxRank);
    struct Plan {
        int rank;
        int64_t shape[kMaxRank];
        int64_t strides[kMaxRank];
    } p{};
    p.rank = static_cast<int>(out_shape.size());
    for (size_t d = 0; d < out_shape.size(); ++d) p.shape[d] = out_shape[d], p.strides[d] = in_strides[d];
    return make_kernel([p, elem_size, offset](const void* const* in, void* const* out) {
        copy_strided(in[0], out[0], elem_size, p.rank, p.shape, p.strides, offset);
    });
}

std::vector<int64_t> axes_input_or_attr(const NodeDesc& node, size_t input_index, const char* attr, bool* given) {
    const TensorDesc* t = node.input(input_index);
    *given = true;
    if (t) return const_int_list(*t, "input axes");
    if (node.attrs.has(attr)) return node.attrs.get_ints(attr);
    *given = false;
    return {};
}

std::vector<int64_t> normalize_axes(std::vector<int64_t> axes, int64_t rank, const char* what) {
    for (int64_t& a : axes) a = normalize_axis(a, rank);
    std::vector<int64_t> sorted = axes;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
        fail(KES_ERR_INVALID_ARGUMENT, "%s has a repeated axis", what);
    return axes;
}

// ---- Reshape, Flatten, Squeeze, Unsqueeze ---------------------------------------------------------------

std::unique_ptr<Kernel> create_reshape(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    const std::vector<int64_t> spec = const_int_list(*node.inputs[1], "input shape");
    if (node.inputs[1]->rank() != 1) fail(KES_ERR_INVALID_ARGUMENT, "input shape must be 1-D");
    const bool allow_zero = node.attrs.get_int("allowzero", 0) != 0;
    Shape out(spec.size());
    int64_t infer = -1, known = 1;
    for (size_t i = 0; i < spec.size(); ++i) {
        int64_t d = spec[i];
        if (d == 0 && !allow_zero) {
            if (i >= x.shape.size())
                fail(KES_ERR_INVALID_ARGUMENT, "shape entry %zu is 0 but the input has rank %lld", i,
                     static_cast<long long>(x.rank()));
            d = x.shape[i];
        }
        if (d == -1) {
            if (infer >= 0) fail(KES_ERR_INVALID_ARGUMENT, "shape %s has more than one -1", shape_string(spec).c_str());
            infer = static_cast<int64_t>(i);
            continue;
        }
        if (d < 0) fail(KES_ERR_INVALID_ARGUMENT, "shape %s has an invalid entry", shape_string(spec).c_str());
        out[i] = d;
        known = shape_elements({known, d});
    }
    const int64_t total = x.elements();
    if (infer >= 0) {
        if (allow_zero && known == 0) fail(KES_ERR_INVALID_ARGUMENT, "-1 together with a 0 dim (allowzero)");
        if (known == 0 || total % known != 0)
            fail(KES_ERR_INVALID_ARGUMENT, "cannot reshape %s to %s", shape_string(x.shape).c_str(),
                 shape_string(spec).c_str());
        out[static_cast<size_t>(infer)] = total / known;
    }
    if (shape_elements(out) != total)
        fail(KES_ERR_INVALID_ARGUMENT, "cannot reshape %s (%lld elements) to %s", shape_string(x.shape).c_str(),
             static_cast<long long>(total), shape_string(spec).c_str());
    outputs[0].dtype = x.dtype;
    outputs[0].shape = out;
    return copy_kernel(x.bytes());
}

std::unique_ptr<Kernel> create_flatten(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    int64_t axis = node.attrs.get_int("axis", 1);
    if (axis < -x.rank() || axis > x.rank())
        fail(KES_ERR_INVALID_ARGUMENT, "attribute 'axis' %lld is out of range for rank %lld",
             static_cast<long long>(axis), static_cast<long long>(x.rank()));
    if (axis < 0) axis += x.rank();
    const AxisSplit around = split_at_axis(x.shape, axis);
    outputs[0].dtype = x.dtype;
    outputs[0].shape = {around.outer, around.dim * around.inner};
    return copy_kernel(x.bytes());
}

std::unique_ptr<Kernel> create_squeeze(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    bool given = false;
    std::vector<int64_t> axes = axes_input_or_attr(node, 1, "axes", &given);
    axes = normalize_axes(axes, x.rank(), "axes");
    Shape out;
    for (int64_t d = 0; d < x.rank(); ++d) {
        const int64_t extent = x.shape[static_cast<size_t>(d)];
        const bool listed = std::find(axes.begin(), axes.end(), d) != axes.end();
        if (listed && extent != 1)
            fail(KES_ERR_INVALID_ARGUMENT, "cannot squeeze axis %lld of extent %lld", static_cast<long long>(d),
                 static_cast<long long>(extent));
        if (listed || (!given && extent == 1)) continue;
        out.push_back(extent);
    }
    outputs[0].dtype = x.dtype;
    outputs[0].shape = out;
    return copy_kernel(x.bytes());
}

std::unique_ptr<Kernel> create_unsqueeze(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    bool given = false;
    std::vector<int64_t> axes = axes_input_or_attr(node, 1, "axes", &given);
    if (!given) fail(KES_ERR_INVALID_ARGUMENT, "axes are required (input 1 or attribute 'axes')");
    const int64_t out_rank = x.rank() + static_cast<int64_t>(axes.size());
    axes = normalize_axes(axes, out_rank, "axes");
    Shape out;
    size_t next = 0;
    for (int64_t d = 0; d < out_rank; ++d) {
        if (std::find(axes.begin(), axes.end(), d) != axes.end())
            out.push_back(1);
        else
            out.push_back(x.shape[next++]);
    }
    outputs[0].dtype = x.dtype;
    outputs[0].shape = out;
    return copy_kernel(x.bytes());
}

// ---- Transpose, DepthToSpace, SpaceToDepth --------------------------------------------------------------

// Output shape and input strides of a transpose of `shape` by `perm` (already validated).
std::unique_ptr<Kernel> transpose_kernel(size_t elem_size, const Shape& shape, const std::vector<int64_t>& perm,
                                         Shape* out_shape) {
    const Shape st = contiguous_strides(shape);
    Shape strides(perm.size());
    out_shape->resize(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) {
        (*out_shape)[i] = shape[static_cast<size_t>(perm[i])];
        strides[i] = st[static_cast<size_t>(perm[i])];
    }
    return strided_kernel(elem_size, *out_shape, strides, 0);
}

std::unique_ptr<Kernel> create_transpose(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    std::vector<int64_t> perm = node.attrs.get_ints("perm");
    if (!node.attrs.has("perm"))
        for (int64_t d = x.rank(); d-- > 0;) perm.push_back(d);
    if (static_cast<int64_t>(perm.size()) != x.rank())
        fail(KES_ERR_INVALID_ARGUMENT, "attribute 'perm' has %zu entries for rank %lld", perm.size(),
             static_cast<long long>(x.rank()));
    std::vector<bool> seen(perm.size(), false);
    for (int64_t& p : perm) {
        if (p < -x.rank() || p >= x.rank() || seen[static_cast<size_t>(p < 0 ? p + x.rank() : p)])
            fail(KES_ERR_INVALID_ARGUMENT, "attribute 'perm' %s is not a permutation", shape_string(perm).c_str());
        if (p < 0) p += x.rank();
        seen[static_cast<size_t>(p)] = true;
    }
    outputs[0].dtype = x.dtype;
    return transpose_kernel(kes_dtype_size(x.dtype), x.shape, perm, &outputs[0].shape);
}

std::unique_ptr<Kernel> create_channel_shuffle(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    if (x.rank() == 0) fail(KES_ERR_INVALID_ARGUMENT, "cannot shuffle a scalar");
    const int64_t axis = normalize_axis(node.attrs.get_int("axis", 1), x.rank());
    const int64_t group = node.attrs.require_int("group");
    const AxisSplit around = split_at_axis(x.shape, axis);
    if (group < 1 || around.dim % group != 0)
        fail(KES_ERR_INVALID_ARGUMENT, "attribute 'group' %lld does not divide the %lld channels of axis %lld",
             static_cast<long long>(group), static_cast<long long>(around.dim), static_cast<long long>(axis));
    outputs[0].dtype = x.dtype;
    outputs[0].shape = x.shape;
    Shape permuted;
    return transpose_kernel(kes_dtype_size(x.dtype), {around.outer, group, around.dim / group, around.inner},
                            {0, 2, 1, 3}, &permuted);
}

template <bool kToSpace>
std::unique_ptr<Kernel> create_depth_space(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    if (x.rank() != 4) fail(KES_ERR_INVALID_ARGUMENT, "input has rank %lld; expected 4 (NCHW)", (long long)x.rank());
    const int64_t b = node.attrs.require_int("blocksize");
    check_geometry("attribute 'blocksize'", b, 1);
    const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
    Shape view;
    std::vector<int64_t> perm;
    Shape out;
    if (kToSpace) {
        const std::string mode = get_choice(node.attrs, "mode", "DCR", {"DCR", "CRD"});
        if (c % (b * b) != 0)
            fail(KES_ERR_INVALID_ARGUMENT, "%lld channels are not divisible by blocksize² %lld",
                 static_cast<long long>(c), static_cast<long long>(b * b));
        const int64_t oc = c / (b * b);
        if (mode == "DCR") {
            view = {n, b, b, oc, h, w};
            perm = {0, 3, 4, 1, 5, 2};
        } else {
            view = {n, oc, b, b, h, w};
            perm = {0, 1, 4, 2, 5, 3};
        }
        out = {n, oc, h * b, w * b};
    } else {
        if (h % b != 0 || w % b != 0)
            fail(KES_ERR_INVALID_ARGUMENT, "spatial size %lldx%lld is not divisible by blocksize %lld",
                 static_cast<long long>(h), static_cast<long long>(w), static_cast<long long>(b));
        view = {n, c, h / b, b, w / b, b};
        perm = {0, 3, 5, 1, 2, 4};
        out = {n, c * b * b, h / b, w / b};
    }
    Shape permuted;
    auto k = transpose_kernel(kes_dtype_size(x.dtype), view, perm, &permuted);
    outputs[0].dtype = x.dtype;
    outputs[0].shape = out;
    return k;
}

// ---- Concat, Split --------------------------------------------------------------------------------------

std::unique_ptr<Kernel> create_concat(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x0 = *node.inputs[0];
    const int64_t rank = x0.rank();
    if (rank == 0) fail(KES_ERR_INVALID_ARGUMENT, "cannot concatenate scalars");
    const int64_t axis = normalize_axis(node.attrs.require_int("axis"), rank);
    Shape out = x0.shape;
    out[static_cast<size_t>(axis)] = 0;
    std::vector<int64_t> chunk;  // bytes per outer row of each input
    const size_t es = kes_dtype_size(x0.dtype);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
        const TensorDesc* t = node.inputs[i];
        if (!t) fail(KES_ERR_INVALID_ARGUMENT, "input %zu is missing", i);
        if (t->dtype != x0.dtype || t->rank() != rank)
            fail(KES_ERR_INVALID_ARGUMENT, "input %zu (%s %s) does not match input 0 (%s %s)", i,
                 kes_dtype_name(t->dtype), shape_string(t->shape).c_str(), kes_dtype_name(x0.dtype),
                 shape_string(x0.shape).c_str());
        for (int64_t d = 0; d < rank; ++d)
            if (d != axis && t->shape[static_cast<size_t>(d)] != x0.shape[static_cast<size_t>(d)])
                fail(KES_ERR_INVALID_ARGUMENT, "input %zu has shape %s; input 0 has %s (axis %lld)", i,
                     shape_string(t->shape).c_str(), shape_string(x0.shape).c_str(), static_cast<long long>(axis));
        out[static_cast<size_t>(axis)] += t->shape[static_cast<size_t>(axis)];
        const AxisSplit around = split_at_axis(t->shape, axis);
        chunk.push_back(around.dim * around.inner * static_cast<int64_t>(es));
    }
    const int64_t outer = split_at_axis(out, axis).outer;
    int64_t row = 0;
    for (int64_t c : chunk) row += c;
    outputs[0].dtype = x0.dtype;
    outputs[0].shape = out;
    shape_elements(out);
    return make_kernel([chunk, outer, row](const void* const* in, void* const* outp) {
        uint8_t* y = out_as<uint8_t>(outp, 0);
        int64_t col = 0;
        for (size_t i = 0; i < chunk.size(); ++i) {
            const uint8_t* x = in_as<uint8_t>(in, i);
            const int64_t c = chunk[i];
            if (c)
                for (int64_t o = 0; o < outer; ++o) std::memcpy(y + o * row + col, x + o * c, static_cast<size_t>(c));
            col += c;
        }
    });
}

std::unique_ptr<Kernel> create_split(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    if (x.rank() == 0) fail(KES_ERR_INVALID_ARGUMENT, "cannot split a scalar");
    const int64_t axis = normalize_axis(node.attrs.get_int("axis", 0), x.rank());
    const int64_t dim = x.shape[static_cast<size_t>(axis)];
    const int64_t parts = static_cast<int64_t>(outputs.size());
    std::vector<int64_t> split;
    if (const TensorDesc* s = node.input(1)) {
        split = const_int_list(*s, "input split");
    } else if (node.attrs.has("split")) {
        split = node.attrs.get_ints("split");
    } else {
        const int64_t num = node.attrs.get_int("num_outputs", parts);
        if (num != parts)
            fail(KES_ERR_INVALID_ARGUMENT, "attribute 'num_outputs' %lld differs from the %lld outputs",
                 static_cast<long long>(num), static_cast<long long>(parts));
        const int64_t each = (dim + parts - 1) / parts;
        for (int64_t i = 0; i < parts; ++i) split.push_back(std::max<int64_t>(0, std::min(each, dim - i * each)));
    }
    if (static_cast<int64_t>(split.size()) != parts)
        fail(KES_ERR_INVALID_ARGUMENT, "split has %zu entries for %lld outputs", split.size(),
             static_cast<long long>(parts));
    int64_t sum = 0;
    for (int64_t s : split) {
        if (s < 0 || s > dim) fail(KES_ERR_INVALID_ARGUMENT, "split has an entry outside [0, %lld]", (long long)dim);
        sum += s;
    }
    if (sum != dim)
        fail(KES_ERR_INVALID_ARGUMENT, "split %s does not add up to the axis extent %lld", shape_string(split).c_str(),
             static_cast<long long>(dim));
    const size_t es = kes_dtype_size(x.dtype);
    const AxisSplit around = split_at_axis(x.shape, axis);
    const int64_t outer = around.outer, inner = around.inner * static_cast<int64_t>(es);
    std::vector<int64_t> chunk;
    for (int64_t i = 0; i < parts; ++i) {
        outputs[static_cast<size_t>(i)].dtype = x.dtype;
        outputs[static_cast<size_t>(i)].shape = x.shape;
        outputs[static_cast<size_t>(i)].shape[static_cast<size_t>(axis)] = split[static_cast<size_t>(i)];
        chunk.push_back(split[static_cast<size_t>(i)] * inner);
    }
    const int64_t row = dim * inner;
    return make_kernel([chunk, outer, row](const void* const* in, void* const* outp) {
        const uint8_t* src = in_as<uint8_t>(in, 0);
        int64_t col = 0;
        for (size_t i = 0; i < chunk.size(); ++i) {
            uint8_t* y = out_as<uint8_t>(outp, i);
            const int64_t c = chunk[i];
            if (c)
                for (int64_t o = 0; o < outer; ++o) std::memcpy(y + o * c, src + o * row + col, static_cast<size_t>(c));
            col += c;
        }
    });
}

// ---- Slice, Expand, Tile --------------------------------------------------------------------------------

std::unique_ptr<Kernel> create_slice(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    const std::vector<int64_t> starts = const_int_list(*node.inputs[1], "input starts");
    const std::vector<int64_t> ends = const_int_list(*node.inputs[2], "input ends");
    std::vector<int64_t> axes;
    if (const TensorDesc* a = node.input(3)) {
        axes = const_int_list(*a, "input axes");
    } else {
        for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    }
    std::vector<int64_t> steps(starts.size(), 1);
    if (const TensorDesc* s = node.input(4)) steps = const_int_list(*s, "input steps");
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
        fail(KES_ERR_INVALID_ARGUMENT, "starts, ends, axes and steps have different lengths (%zu, %zu, %zu, %zu)",
             starts.size(), ends.size(), axes.size(), steps.size());
    axes = normalize_axes(axes, x.rank(), "input axes");
    const Shape st = contiguous_strides(x.shape);
    Shape out = x.shape, strides = st;
    int64_t offset = 0;
    for (size_t i = 0; i < axes.size(); ++i) {
        const size_t d = static_cast<size_t>(axes[i]);
        const int64_t dim = x.shape[d], step = steps[i];
        if (step == 0) fail(KES_ERR_INVALID_ARGUMENT, "input steps has a 0 entry (axis %zu)", d);
        int64_t s = starts[i], e = ends[i];
        if (s < 0) s = s < -dim ? -dim - 1 : s + dim;  // stays very negative: clamped below
        if (e < 0) e = e < -dim ? -dim - 1 : e + dim;
        if (step > 0) {
            s = std::clamp<int64_t>(s, 0, dim);
            e = std::clamp<int64_t>(e, 0, dim);
        } else {
            s = std::clamp<int64_t>(s, 0, dim - 1);
            e = std::clamp<int64_t>(e, -1, dim - 1);
        }
        // Written so that no step (even INT64_MIN) overflows: e - s and s - e are at most dim + 1.
        int64_t n = 0;
        if (step > 0 && e > s) n = 1 + (e - s - 1) / step;
        if (step < 0 && s > e) n = step < -dim ? 1 : 1 + (s - e - 1) / -step;
        out[d] = n;
        strides[d] = n > 1 ? st[d] * step : 0;  // n > 1 implies |step| < dim
        if (n > 0) offset += s * st[d];
    }
    outputs[0].dtype = x.dtype;
    outputs[0].shape = out;
    return strided_kernel(kes_dtype_size(x.dtype), out, strides, offset);
}

std::unique_ptr<Kernel> create_expand(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    const std::vector<int64_t> shape = const_int_list(*node.inputs[1], "input shape");
    const Shape out = broadcast_shapes(x.shape, shape);
    shape_elements(out);
    outputs[0].dtype = x.dtype;
    outputs[0].shape = out;
    return strided_kernel(kes_dtype_size(x.dtype), out, broadcast_strides(x.shape, out), 0);
}

std::unique_ptr<Kernel> create_tile(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    const std::vector<int64_t> repeats = const_int_list(*node.inputs[1], "input repeats");
    if (static_cast<int64_t>(repeats.size()) != x.rank())
        fail(KES_ERR_INVALID_ARGUMENT, "input repeats has %zu entries for rank %lld", repeats.size(),
             static_cast<long long>(x.rank()));
    require_rank_at_most(x, kMaxRank / 2, "input");
    // Viewed as [r0, d0, r1, d1, ...] with stride 0 along each repeat axis.
    const Shape st = contiguous_strides(x.shape);
    Shape view, strides, out;
    for (size_t d = 0; d < repeats.size(); ++d) {
        if (repeats[d] < 0) fail(KES_ERR_INVALID_ARGUMENT, "input repeats has a negative entry");
        shape_elements({repeats[d], x.shape[d]});  // overflow check
        view.push_back(repeats[d]);
        strides.push_back(0);
        view.push_back(x.shape[d]);
        strides.push_back(st[d]);
        out.push_back(repeats[d] * x.shape[d]);
    }
    shape_elements(out);
    outputs[0].dtype = x.dtype;
    outputs[0].shape = out;
    return strided_kernel(kes_dtype_size(x.dtype), view, strides, 0);
}

// ---- Trilu ----------------------------------------------------------------------------------------------

std::unique_ptr<Kernel> create_trilu(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    if (x.rank() < 2) fail(KES_ERR_INVALID_ARGUMENT, "input must have rank >= 2");
    int64_t k = 0;
    if (const TensorDesc* kt = node.input(1)) {
        const std::vector<int64_t> kv = const_int_list(*kt, "input k");
        if (kv.size() != 1) fail(KES_ERR_INVALID_ARGUMENT, "input k must be a scalar");
        k = kv[0];
    }
    const bool upper = node.attrs.get_int("upper", 1) != 0;
    const int64_t rows = x.shape[x.shape.size() - 2], cols = x.shape.back();
    const int64_t mats = rows * cols != 0 ? x.elements() / (rows * cols) : 0;
    const size_t es = kes_dtype_size(x.dtype);
    outputs[0].dtype = x.dtype;
    outputs[0].shape = x.shape;
    return make_kernel([=](const void* const* in, void* const* out) {
        const uint8_t* src = in_as<uint8_t>(in, 0);
        uint8_t* y = out_as<uint8_t>(out, 0);
        for (int64_t m = 0; m < mats; ++m)
            for (int64_t r = 0; r < rows; ++r)
                for (int64_t c = 0; c < cols; ++c) {
                    const int64_t at = ((m * rows + r) * cols + c) * static_cast<int64_t>(es);
                    const bool keep = upper ? c - r >= k : c - r <= k;
                    if (keep)
                        std::memcpy(y + at, src + at, es);
                    else
                        std::memset(y + at, 0, es);
                }
    });
}

}  // namespace

void add_shape_ops(OpList& ops) {
    ops.push_back({"Reshape", 2, 2, 1, 1, create_reshape});
    ops.push_back({"Flatten", 1, 1, 1, 1, create_flatten});
    ops.push_back({"Squeeze", 1, 2, 1, 1, create_squeeze});
    ops.push_back({"Unsqueeze", 1, 2, 1, 1, create_unsqueeze});
    ops.push_back({"Transpose", 1, 1, 1, 1, create_transpose});
    ops.push_back({"DepthToSpace", 1, 1, 1, 1, create_depth_space<true>});
    ops.push_back({"SpaceToDepth", 1, 1, 1, 1, create_depth_space<false>});
    ops.push_back({"Concat", 1, 1024, 1, 1, create_concat});
    ops.push_back({"Split", 1, 2, 1, 1024, create_split});
    ops.push_back({"Slice", 3, 5, 1, 1, create_slice});
    ops.push_back({"Expand", 2, 2, 1, 1, create_expand});
    ops.push_back({"Tile", 2, 2, 1, 1, create_tile});
    ops.push_back({"Trilu", 1, 2, 1, 1, create_trilu});
    ops.push_back({"ChannelShuffle", 1, 1, 1, 1, create_channel_shuffle});
}

}  // namespace kes
