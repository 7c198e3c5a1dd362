// geometry.cpp — see geometry.hpp.
#include "geometry.hpp"

#include <algorithm>

#include "kes/error.hpp"

namespace kes {

void check_geometry(const char* name, int64_t value, int64_t min_value) {
    if (value < min_value)
        fail(KES_ERR_INVALID_ARGUMENT, "%s is %lld; must be >= %lld", name, static_cast<long long>(value),
             static_cast<long long>(min_value));
    if (value > kMaxGeometry || value < -kMaxGeometry)
        fail(KES_ERR_UNSUPPORTED, "%s is %lld; at most %lld in magnitude is supported", name,
             static_cast<long long>(value), static_cast<long long>(kMaxGeometry));
}

std::string get_choice(const Attrs& attrs, const char* name, const char* fallback,
                       const std::vector<const char*>& allowed) {
    std::string v = attrs.get_string(name, fallback);
    for (const char* a : allowed)
        if (v == a) return v;
    std::string list;
    for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
    fail(KES_ERR_INVALID_ARGUMENT, "attribute '%s' is '%s'; expected one of %s", name, v.c_str(), list.c_str());
}

Layout get_layout(const Attrs& attrs) {
    return get_choice(attrs, "data_layout", "NCHW", {"NCHW", "NHWC"}) == "NHWC" ? Layout::NHWC : Layout::NCHW;
}

std::vector<int64_t> per_axis_attr(const Attrs& attrs, const char* name, size_t n, int64_t fallback,
                                   int64_t min_value) {
    std::vector<int64_t> v = attrs.get_ints(name, std::vector<int64_t>(n, fallback));
    if (v.size() != n)
        fail(KES_ERR_INVALID_ARGUMENT, "attribute '%s' has %zu values; expected %zu (one per spatial axis)", name,
             v.size(), n);
    for (int64_t x : v) check_geometry(format("attribute '%s'", name).c_str(), x, min_value);
    return v;
}

WindowAttrs read_window_attrs(const Attrs& attrs, size_t n) {
    WindowAttrs a;
    a.strides = per_axis_attr(attrs, "strides", n, 1, 1);
    a.dilations = per_axis_attr(attrs, "dilations", n, 1, 1);
    a.auto_pad = get_choice(attrs, "auto_pad", "NOTSET", {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"});
    a.pads = attrs.get_ints("pads", std::vector<int64_t>(2 * n, 0));
    if (a.pads.size() != 2 * n)
        fail(KES_ERR_INVALID_ARGUMENT, "attribute 'pads' has %zu values; expected %zu", a.pads.size(), 2 * n);
    for (int64_t p : a.pads) check_geometry("attribute 'pads'", p, 0);
    return a;
}

std::vector<Window> resolve_windows(const Attrs& attrs, const Shape& spatial_in, const Shape& kernel,
                                    bool allow_ceil_mode) {
    const size_t n = spatial_in.size();
    const WindowAttrs wa = read_window_attrs(attrs, n);
    const std::string& auto_pad = wa.auto_pad;
    const int64_t ceil_mode = attrs.get_int("ceil_mode", 0);
    if (ceil_mode != 0 && ceil_mode != 1)
        fail(KES_ERR_INVALID_ARGUMENT, "attribute 'ceil_mode' is %lld; expected 0 or 1",
             static_cast<long long>(ceil_mode));
    if (ceil_mode && !allow_ceil_mode) fail(KES_ERR_INVALID_ARGUMENT, "attribute 'ceil_mode' is not valid for this op");

    std::vector<Window> w(n);
    for (size_t i = 0; i < n; ++i) {
        Window& a = w[i];
        a.in = spatial_in[i];
        a.kernel = kernel[i];
        a.stride = wa.strides[i];
        a.dilation = wa.dilations[i];
        check_geometry("the kernel extent", a.kernel, 1);
        if (auto_pad == "NOTSET") {
            a.pad_begin = wa.pads[i];
            a.pad_end = wa.pads[i + n];
        } else if (auto_pad == "VALID") {
            a.pad_begin = a.pad_end = 0;
        } else {
            const int64_t out = (a.in + a.stride - 1) / a.stride;
            const int64_t total = std::max<int64_t>(0, (out - 1) * a.stride + a.extent() - a.in);
            const int64_t small = total / 2, large = total - small;
            a.pad_begin = auto_pad == "SAME_UPPER" ? small : large;
            a.pad_end = auto_pad == "SAME_UPPER" ? large : small;
        }
        const int64_t span = a.in + a.pad_begin + a.pad_end - a.extent();
        if (span < 0)
            fail(KES_ERR_INVALID_ARGUMENT,
                 "window of extent %lld does not fit spatial axis %zu (input %lld, pads %lld+%lld)",
                 static_cast<long long>(a.extent()), i, static_cast<long long>(a.in),
                 static_cast<long long>(a.pad_begin), static_cast<long long>(a.pad_end));
        a.out = (ceil_mode ? (span + a.stride - 1) / a.stride : span / a.stride) + 1;
        // A window that would start in the right padding is dropped (PyTorch / ONNX Runtime rule).
        if (ceil_mode && (a.out - 1) * a.stride >= a.in + a.pad_begin) --a.out;
    }
    return w;
}

std::vector<Window> resolve_transposed_windows(const Attrs& attrs, const Shape& spatial, const Shape& kernel,
                                               Layout layout) {
    const size_t ns = spatial.size();
    const WindowAttrs wa = read_window_attrs(attrs, ns);
    const std::string& auto_pad = wa.auto_pad;
    const std::vector<int64_t> out_pad = per_axis_attr(attrs, "output_padding", ns, 0, 0);
    std::vector<int64_t> out_shape_attr = attrs.get_ints("output_shape");
    if (!out_shape_attr.empty() && out_shape_attr.size() != ns) {
        if (out_shape_attr.size() == ns + 2)  // some exporters give the full shape
            out_shape_attr = layout == Layout::NCHW ? Shape(out_shape_attr.begin() + 2, out_shape_attr.end())
                                                    : Shape(out_shape_attr.begin() + 1, out_shape_attr.end() - 1);
        else
            fail(KES_ERR_INVALID_ARGUMENT, "attribute 'output_shape' has %zu values; expected %zu",
                 out_shape_attr.size(), ns);
    }
    for (int64_t v : out_shape_attr) check_geometry("attribute 'output_shape'", v, 0);
    std::vector<Window> win(ns);
    for (size_t i = 0; i < ns; ++i) {
        Window& a = win[i];
        check_geometry("the kernel extent", kernel[i], 1);
        a.in = spatial[i], a.kernel = kernel[i], a.stride = wa.strides[i], a.dilation = wa.dilations[i];
        if (out_pad[i] >= std::max(a.stride, a.dilation))
            fail(KES_ERR_INVALID_ARGUMENT, "attribute 'output_padding' %lld must be < stride or dilation",
                 static_cast<long long>(out_pad[i]));
        const int64_t full = shape_elements({a.stride, a.in - 1}) + out_pad[i] + a.extent();  // overflow-checked
        if (!out_shape_attr.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
            const int64_t target = !out_shape_attr.empty() ? out_shape_attr[i] : a.in * a.stride;
            // A negative total (output_shape beyond the full size) extends the end with bias-only
            // values, as ONNX Runtime does; the split truncates toward zero like its C++.
            const int64_t total = full - target;
            const bool lower = auto_pad == "SAME_LOWER";
            a.pad_begin = lower ? total - total / 2 : total / 2;
            a.pad_end = total - a.pad_begin;
        } else if (auto_pad == "NOTSET") {
            a.pad_begin = wa.pads[i], a.pad_end = wa.pads[i + ns];
        }
        a.out = full - a.pad_begin - a.pad_end;
        if (a.out < 0) fail(KES_ERR_INVALID_ARGUMENT, "pads exceed the transposed output size %lld", (long long)full);
    }
    return win;
}

}  // namespace kes
