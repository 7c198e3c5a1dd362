// geometry.hpp — the op layer's shape geometry (no kernels): attribute checks shared by every op
// definition, the (outer, dim, inner) view of a shape around an axis, and the conv/pool window
// arithmetic. The reference kernels, the fast kernels and the converter's passes all read windows from
// here, so a fusion decides with exactly the numbers the kernels will run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../attrs.hpp"
#include "../op.hpp"

namespace kes {

// Geometry attributes (pads, strides, dilations, kernel extents, block sizes) above this are rejected
// (KES_ERR_UNSUPPORTED) so that hostile files cannot overflow the shape arithmetic.
constexpr int64_t kMaxGeometry = int64_t{1} << 24;
void check_geometry(const char* name, int64_t value, int64_t min_value);

// Reads an optional string attribute that must be one of `allowed` (INVALID_ARGUMENT otherwise).
std::string get_choice(const Attrs& attrs, const char* name, const char* fallback,
                       const std::vector<const char*>& allowed);

// A shape seen around one axis, the (outer, dim, inner) loops of the ops that work along an axis
// (Softmax, ArgMax, Gather, Split, Concat, ...): `outer` elements before it, its extent, `inner`
// elements after it. axis may be rank (nothing after it: dim = 1), so dim · inner counts the elements
// from the axis on (Flatten, Concat).
struct AxisSplit {
    int64_t outer = 1, dim = 1, inner = 1;
};
inline AxisSplit split_at_axis(const Shape& shape, int64_t axis) {
    AxisSplit s;
    for (size_t d = 0; d < shape.size(); ++d) {
        const int64_t a = static_cast<int64_t>(d);
        (a < axis ? s.outer : a == axis ? s.dim : s.inner) *= shape[d];
    }
    return s;
}

// Data layout of a conv/pool input: "data_layout" attribute, NCHW (default) or NHWC.
enum class Layout : uint8_t { NCHW, NHWC };
Layout get_layout(const Attrs& attrs);

// One spatial axis of a conv/pool window.
struct Window {
    int64_t in = 1, kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0, out = 1;
    int64_t extent() const { return (kernel - 1) * dilation + 1; }
};
// One value per spatial axis (n of them), each at least min_value: strides, dilations, output_padding.
std::vector<int64_t> per_axis_attr(const Attrs& attrs, const char* name, size_t n, int64_t fallback, int64_t min_value);
// The window attributes of a conv or pool over n spatial axes, checked: strides and dilations (≥ 1),
// pads (≥ 0; the n begins, then the n ends) and auto_pad (NOTSET, SAME_UPPER, SAME_LOWER or VALID).
struct WindowAttrs {
    std::vector<int64_t> strides, dilations, pads;
    std::string auto_pad;
};
WindowAttrs read_window_attrs(const Attrs& attrs, size_t n);

// Resolves a window per spatial axis from kernel_shape/strides/dilations/pads/auto_pad/ceil_mode;
// explicit pads afterwards (auto_pad SAME_* is turned into pads here). `spatial_in` are the input
// extents, `kernel` the kernel extents (from the weight for Conv, the attribute for pools).
// ceil_mode: the last window must start inside the input or its left padding (as PyTorch/ORT).
std::vector<Window> resolve_windows(const Attrs& attrs, const Shape& spatial_in, const Shape& kernel,
                                    bool allow_ceil_mode);

// The same for ConvTranspose, whose windows run from the output back to the input: `in` is the input
// extent, `out` the transposed output's, from strides, dilations, output_padding and pads, or from
// output_shape / auto_pad SAME_* (which split the difference to the full size; pad_begin is negative
// when output_shape asks for more than the full size: the extra outputs are bias only, as in ORT).
// `layout` says which dims of a full-rank output_shape are spatial.
std::vector<Window> resolve_transposed_windows(const Attrs& attrs, const Shape& spatial_in, const Shape& kernel,
                                               Layout layout);

}  // namespace kes
