// nn.cpp — Conv, ConvTranspose, Gemm, MatMul, pools, BatchNormalization (f32).
//
// Choices:
// - Conv/ConvTranspose/pools take 1-D, 2-D or 3-D spatial inputs (rank 3, 4 or 5). "data_layout" NCHW
//   (default; NCDHW at rank 5) or NHWC (channels last: [N, W, C], [N, H, W, C], [N, D, H, W, C]).
//   NHWC filters: Conv [M, K..., C/group] (TFLite OHWI), ConvTranspose [M, K..., C/group] as well
//   (TFLite TRANSPOSE_CONV's OHWI; ONNX's NCHW ConvTranspose filter is [C, M/group, K...]).
// - Kernels index (d, h, w); lower ranks get trivial leading axes. Rank 5 runs a separate instance of
//   each kernel template (kDeep): the 1-D/2-D instances compile the depth axis away, so their loops
//   and their order of accumulation (hence their results, bit for bit) are the plain 2-D ones.
// - auto_pad is resolved at create() into explicit pads (SAME_UPPER puts the odd pad at the end).
// - ceil_mode: a window that would start inside the right padding is dropped (PyTorch / ONNX Runtime).
// - AveragePool count_include_pad counts the taps inside the padded input [-pad_begin, in + pad_end)
//   (not the ceil_mode overhang); otherwise only the taps inside the input.
// - MaxPool's optional Indices output (NCHW only) holds flat row-major indices into X (storage_order
//   1: column-major within each channel's spatial volume, first axis fastest, as ONNX Runtime).
// - Conv, ConvTranspose, Gemm and MatMul apply the fused "activation" attributes (op.hpp).
// - BatchNormalization is inference only (one output); the channel axis is 1 (NCHW) or the last (NHWC).
// - MaxPool also runs on u8/i8 (its padding never wins); AveragePool is f32.
// - LayerNormalization (opset 17; Scale/B broadcast over the normalised dims; optional Mean and
//   InvStdDev outputs), InstanceNormalization and LRN (NCHW, channel window floor/ceil((size-1)/2))
//   accumulate mean and variance in double.
#include <cmath>
#include <limits>

#include "op_util.hpp"
#include "ops.hpp"

namespace kes {

namespace {

// Dimensions and element strides of a rank 3/4/5 image tensor; the spatial axes fill (d, h, w) from
// the back, so 1-D inputs get d = h = 1 and 2-D inputs d = 1 (stride 0).
struct Img {
    int64_t n = 1, c = 1, d = 1, h = 1, w = 1;
    int64_t sn = 0, sc = 0, sd = 0, sh = 0, sw = 0;
    int64_t at(int64_t in, int64_t ic, int64_t id, int64_t ih, int64_t iw) const {
        return in * sn + ic * sc + id * sd + ih * sh + iw * sw;
    }
};

// Index of the first spatial axis of a rank-r image (or filter) tensor: after N and C (NCHW) or N (NHWC).
size_t first_spatial_axis(Layout layout) {
    return layout == Layout::NCHW ? 2 : 1;
}

// Writes spatial extents/strides `vals[first .. first + count)` into (d, h, w) slots, right-aligned.
void fill_dhw(const Shape& vals, size_t first, size_t count, int64_t* d, int64_t* h, int64_t* w) {
    int64_t* slot[3] = {d, h, w};
    for (size_t i = 0; i < count; ++i) *slot[3 - count + i] = vals[first + i];
}

Img image_dims(const Shape& s, Layout layout) {
    Img g;
    const Shape st = contiguous_strides(s);
    const size_t channel = layout == Layout::NCHW ? 1 : s.size() - 1;
    g.n = s[0], g.sn = st[0];
    g.c = s[channel], g.sc = st[channel];
    fill_dhw(s, first_spatial_axis(layout), s.size() - 2, &g.d, &g.h, &g.w);
    fill_dhw(st, first_spatial_axis(layout), s.size() - 2, &g.sd, &g.sh, &g.sw);
    return g;
}

Shape image_shape(int64_t n, int64_t c, const std::vector<Window>& win, Layout layout) {
    Shape s{n};
    if (layout == Layout::NCHW) s.push_back(c);
    for (const Window& a : win) s.push_back(a.out);
    if (layout == Layout::NHWC) s.push_back(c);
    return s;
}

void require_image(const TensorDesc& x, const char* what) {
    if (x.rank() < 3 || x.rank() > 5)
        fail(KES_ERR_UNSUPPORTED, "%s has rank %lld; supported: 3 (1-D), 4 (2-D) or 5 (3-D spatial)", what,
             static_cast<long long>(x.rank()));
}

Shape spatial_of(const Img& g, size_t rank) {
    if (rank == 3) return Shape{g.w};
    if (rank == 4) return Shape{g.h, g.w};
    return Shape{g.d, g.h, g.w};
}

// (d, h, w) windows from the per-axis list, right-aligned: missing leading axes get a trivial window.
void split_windows(const std::vector<Window>& win, Window& wd, Window& wh, Window& ww) {
    Window* slot[3] = {&wd, &wh, &ww};
    for (Window* s : slot) *s = Window{};
    for (size_t i = 0; i < win.size(); ++i) *slot[3 - win.size() + i] = win[i];
}

Shape kernel_attr_or(const Attrs& attrs, const Shape& from_weight) {
    if (!attrs.has("kernel_shape")) return from_weight;
    const std::vector<int64_t> k = attrs.get_ints("kernel_shape");
    if (k != from_weight)
        fail(KES_ERR_INVALID_ARGUMENT, "attribute 'kernel_shape' %s does not match the weight's %s",
             shape_string(k).c_str(), shape_string(from_weight).c_str());
    return k;
}

// ---- Conv -----------------------------------------------------------------------------------------------

struct ConvGeom {
    Img x, y;
    Window wd, wh, ww;
    int64_t group = 1;
    int64_t wm = 0, wc = 0, wkd = 0, wkh = 0, wkw = 0;  // weight strides (out channel, in channel, kd, kh, kw)
};

// What Conv and ConvTranspose read alike. X is an f32 image and W an f32 filter of its rank; `group`
// divides X's channels. The filter's channel axes differ between the two ops, so each reads M, C/g and
// the kernel extents from W itself, then calls finish_weight() and, with the windows, set_output().
struct ConvSetup {
    const TensorDesc& x;
    const TensorDesc& w;
    const TensorDesc* b;
    Layout layout = Layout::NCHW;
    Shape wst;  // W's strides
    ConvGeom g;

    explicit ConvSetup(const NodeDesc& node) : x(*node.inputs[0]), w(*node.inputs[1]), b(node.input(2)) {
        require_dtype(x, KES_F32, "input X");
        require_dtype(w, KES_F32, "input W");
        require_image(x, "input X");
        layout = get_layout(node.attrs);
        if (w.rank() != x.rank())
            fail(KES_ERR_INVALID_ARGUMENT, "weight shape %s does not match input rank %lld",
                 shape_string(w.shape).c_str(), static_cast<long long>(x.rank()));
        wst = contiguous_strides(w.shape);
        g.x = image_dims(x.shape, layout);
        g.group = node.attrs.get_int("group", 1);
        if (g.group < 1 || g.x.c % g.group != 0)
            fail(KES_ERR_INVALID_ARGUMENT, "attribute 'group' is %lld; must divide the %lld input channels",
                 static_cast<long long>(g.group), static_cast<long long>(g.x.c));
    }

    void require_groups_divide(int64_t m) const {
        if (m % g.group != 0)
            fail(KES_ERR_INVALID_ARGUMENT, "%lld output channels are not divisible by group %lld",
                 static_cast<long long>(m), static_cast<long long>(g.group));
    }

    // With W's M output channels and kernel extents read: checks 'kernel_shape' against them and B
    // against M, and sets W's kernel-axis strides. Returns the kernel extents.
    Shape finish_weight(const Attrs& attrs, int64_t m, const Shape& kernel) {
        // Kernel axes: W is [., ., K...] (NCHW) or [M, K..., C/g] (NHWC).
        fill_dhw(wst, first_spatial_axis(layout), wst.size() - 2, &g.wkd, &g.wkh, &g.wkw);
        const Shape k = kernel_attr_or(attrs, kernel);
        if (b) {
            require_dtype(*b, KES_F32, "input B");
            if (b->shape != Shape{m})
                fail(KES_ERR_INVALID_ARGUMENT, "bias shape %s; expected [%lld]", shape_string(b->shape).c_str(),
                     static_cast<long long>(m));
        }
        return k;
    }

    // Y: f32, an image of M channels over the windows.
    void set_output(int64_t m, const std::vector<Window>& win, TensorDesc& y) {
        split_windows(win, g.wd, g.wh, g.ww);
        y.dtype = KES_F32;
        y.shape = image_shape(g.x.n, m, win, layout);
        g.y = image_dims(y.shape, layout);
    }
};

// The taps of the window at (od, oh, ow) of a conv or pool geometry: f(kd, kh, kw, d, h, w) for each
// kernel offset whose position (o · stride − pad_begin + k · dilation per axis) lies inside `img`, in
// kernel order. Conv and MaxPool gather from X's positions, ConvTranspose scatters to Y's.
template <bool kDeep, class Geom, class F>
void for_each_tap(const Geom& g, const Img& img, int64_t od, int64_t oh, int64_t ow, F&& f) {
    const int64_t kernel_d = kDeep ? g.wd.kernel : 1;
    for (int64_t kd = 0; kd < kernel_d; ++kd) {
        const int64_t d = kDeep ? od * g.wd.stride - g.wd.pad_begin + kd * g.wd.dilation : 0;
        if (kDeep && (d < 0 || d >= img.d)) continue;
        for (int64_t kh = 0; kh < g.wh.kernel; ++kh) {
            const int64_t h = oh * g.wh.stride - g.wh.pad_begin + kh * g.wh.dilation;
            if (h < 0 || h >= img.h) continue;
            for (int64_t kw = 0; kw < g.ww.kernel; ++kw) {
                const int64_t w = ow * g.ww.stride - g.ww.pad_begin + kw * g.ww.dilation;
                if (w < 0 || w >= img.w) continue;
                f(kd, kh, kw, d, h, w);
            }
        }
    }
}

template <bool kDeep>
void conv_run(const ConvGeom& g, const Activation& act, const float* px, const float* pw, const float* pb,
              const float* psum, float* py) {
    const int64_t cpg = g.x.c / g.group, mg = g.y.c / g.group;
    const int64_t out_d = kDeep ? g.y.d : 1;
    for (int64_t n = 0; n < g.x.n; ++n)
        for (int64_t oc = 0; oc < g.y.c; ++oc) {
            const int64_t c0 = (oc / mg) * cpg;
            for (int64_t od = 0; od < out_d; ++od)
                for (int64_t oh = 0; oh < g.y.h; ++oh)
                    for (int64_t ow = 0; ow < g.y.w; ++ow) {
                        float acc = pb ? pb[oc] : 0.0f;
                        for_each_tap<kDeep>(
                            g, g.x, od, oh, ow,
                            [&](int64_t kd, int64_t kh, int64_t kw, int64_t id, int64_t ih, int64_t iw) {
                                const float* xp = px + g.x.at(n, c0, id, ih, iw);
                                const float* wp = pw + oc * g.wm + kd * g.wkd + kh * g.wkh + kw * g.wkw;
                                for (int64_t c = 0; c < cpg; ++c) acc += xp[c * g.x.sc] * wp[c * g.wc];
                            });
                        const int64_t o = g.y.at(n, oc, od, oh, ow);
                        // The residual is added before the activation (Add(Conv(x), r) then Relu); it is
                        // read before y[o] is written, so y may sit on its bytes.
                        py[o] = act.apply(psum ? acc + psum[o] : acc);
                    }
        }
}

template <bool kDeep>
std::unique_ptr<Kernel> conv_kernel(const ConvGeom& g, const Activation& act, bool has_bias, bool has_sum) {
    return make_kernel([g, act, has_bias, has_sum](const void* const* in, void* const* out) {
        conv_run<kDeep>(g, act, in_as<float>(in, 0), in_as<float>(in, 1), has_bias ? in_as<float>(in, 2) : nullptr,
                        has_sum ? in_as<float>(in, 3) : nullptr, out_as<float>(out, 0));
    });
}

std::unique_ptr<Kernel> create_conv(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    ConvSetup s(node);
    const TensorDesc& x = s.x;
    const TensorDesc& w = s.w;
    const Layout layout = s.layout;
    ConvGeom& g = s.g;
    // Weight as [M, C/g, K...] (NCHW) or [M, K..., C/g] (NHWC).
    const int64_t m = w.shape[0];
    const int64_t cg = layout == Layout::NCHW ? w.shape[1] : w.shape.back();
    Shape kernel = layout == Layout::NCHW ? Shape(w.shape.begin() + 2, w.shape.end())
                                          : Shape(w.shape.begin() + 1, w.shape.end() - 1);
    if (cg != g.x.c / g.group)
        fail(KES_ERR_INVALID_ARGUMENT, "weight shape %s: %lld input channels per group expected (C=%lld, group=%lld)",
             shape_string(w.shape).c_str(), static_cast<long long>(g.x.c / g.group), static_cast<long long>(g.x.c),
             static_cast<long long>(g.group));
    s.require_groups_divide(m);
    kernel = s.finish_weight(node.attrs, m, kernel);
    g.wm = s.wst[0];
    g.wc = layout == Layout::NCHW ? s.wst[1] : s.wst.back();
    s.set_output(m, resolve_windows(node.attrs, spatial_of(g.x, x.shape.size()), kernel, false), outputs[0]);
    const Activation act = Activation::from_attrs(node.attrs);
    const bool has_bias = s.b != nullptr;
    // Input 3 (Kestrel's, not ONNX's): a tensor of the output's shape added before the activation, the
    // residual Add the converter fuses into the Conv before it (fusion.cpp fuse_residual_add).
    const TensorDesc* sum = node.input(3);
    if (sum) {
        require_dtype(*sum, KES_F32, "input Sum");
        if (sum->shape != outputs[0].shape)
            fail(KES_ERR_INVALID_ARGUMENT, "input Sum has shape %s; the output's is %s",
                 shape_string(sum->shape).c_str(), shape_string(outputs[0].shape).c_str());
    }
    const bool has_sum = sum != nullptr;
    return x.rank() == 5 ? conv_kernel<true>(g, act, has_bias, has_sum) : conv_kernel<false>(g, act, has_bias, has_sum);
}

// ---- ConvTranspose --------------------------------------------------------------------------------------

template <bool kDeep>
void conv_transpose_run(const ConvGeom& g, bool nchw_weight, const float* px, const float* pw, const float* pb,
                        float* py) {
    const int64_t cg = g.x.c / g.group, mg = g.y.c / g.group;
    const int64_t in_d = kDeep ? g.x.d : 1, out_d = kDeep ? g.y.d : 1;
    for (int64_t n = 0; n < g.y.n; ++n)
        for (int64_t oc = 0; oc < g.y.c; ++oc)
            for (int64_t od = 0; od < out_d; ++od)
                for (int64_t oh = 0; oh < g.y.h; ++oh)
                    for (int64_t ow = 0; ow < g.y.w; ++ow) py[g.y.at(n, oc, od, oh, ow)] = pb ? pb[oc] : 0.0f;
    // Scatter each input pixel through the kernel.
    for (int64_t n = 0; n < g.x.n; ++n)
        for (int64_t c = 0; c < g.x.c; ++c) {
            const int64_t grp = c / cg, ci = c % cg;
            for (int64_t id = 0; id < in_d; ++id)
                for (int64_t ih = 0; ih < g.x.h; ++ih)
                    for (int64_t iw = 0; iw < g.x.w; ++iw) {
                        const float v = px[g.x.at(n, c, id, ih, iw)];
                        for (int64_t mo = 0; mo < mg; ++mo) {
                            const int64_t oc = grp * mg + mo;
                            // NCHW weight [C, M/g, ...] is indexed by (c, mo); NHWC [M, ..., C/g] by (oc, ci).
                            const float* wp = nchw_weight ? pw + c * g.wc + mo * g.wm : pw + oc * g.wm + ci * g.wc;
                            for_each_tap<kDeep>(
                                g, g.y, id, ih, iw,
                                [&](int64_t kd, int64_t kh, int64_t kw, int64_t od, int64_t oh, int64_t ow) {
                                    py[g.y.at(n, oc, od, oh, ow)] += v * wp[kd * g.wkd + kh * g.wkh + kw * g.wkw];
                                });
                        }
                    }
        }
}

template <bool kDeep>
std::unique_ptr<Kernel> conv_transpose_kernel(const ConvGeom& g, const Activation& act, bool has_bias,
                                              int64_t out_count, bool nchw_weight) {
    return make_kernel([g, act, has_bias, out_count, nchw_weight](const void* const* in, void* const* out) {
        float* py = out_as<float>(out, 0);
        conv_transpose_run<kDeep>(g, nchw_weight, in_as<float>(in, 0), in_as<float>(in, 1),
                                  has_bias ? in_as<float>(in, 2) : nullptr, py);
        act.apply(py, static_cast<size_t>(out_count));
    });
}

std::unique_ptr<Kernel> create_conv_transpose(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    ConvSetup s(node);
    const TensorDesc& x = s.x;
    const TensorDesc& w = s.w;
    const Layout layout = s.layout;
    const Shape& wst = s.wst;
    ConvGeom& g = s.g;
    int64_t m = 0;
    Shape kernel;
    if (layout == Layout::NCHW) {  // [C, M/g, K...]
        if (w.shape[0] != g.x.c)
            fail(KES_ERR_INVALID_ARGUMENT, "weight shape %s: first dim must be the %lld input channels",
                 shape_string(w.shape).c_str(), static_cast<long long>(g.x.c));
        m = w.shape[1] * g.group;
        kernel.assign(w.shape.begin() + 2, w.shape.end());
        g.wc = wst[0], g.wm = wst[1];
    } else {  // [M, K..., C/g]
        if (w.shape.back() != g.x.c / g.group)
            fail(KES_ERR_INVALID_ARGUMENT, "weight shape %s: last dim must be %lld input channels per group",
                 shape_string(w.shape).c_str(), static_cast<long long>(g.x.c / g.group));
        m = w.shape[0];
        s.require_groups_divide(m);
        kernel.assign(w.shape.begin() + 1, w.shape.end() - 1);
        g.wm = wst[0], g.wc = wst.back();
    }
    kernel = s.finish_weight(node.attrs, m, kernel);
    const Shape spatial = spatial_of(g.x, x.shape.size());
    const std::vector<Window> win = resolve_transposed_windows(node.attrs, spatial, kernel, layout);
    s.set_output(m, win, outputs[0]);
    const Activation act = Activation::from_attrs(node.attrs);
    const bool has_bias = s.b != nullptr;
    const int64_t out_count = shape_elements(outputs[0].shape);
    const bool nchw_weight = layout == Layout::NCHW;
    return x.rank() == 5 ? conv_transpose_kernel<true>(g, act, has_bias, out_count, nchw_weight)
                         : conv_transpose_kernel<false>(g, act, has_bias, out_count, nchw_weight);
}

// ---- Gemm / MatMul --------------------------------------------------------------------------------------

std::unique_ptr<Kernel> create_gemm(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& a = *node.inputs[0];
    const TensorDesc& b = *node.inputs[1];
    const TensorDesc* c = node.input(2);
    require_dtype(a, KES_F32, "input A");
    require_dtype(b, KES_F32, "input B");
    if (a.rank() != 2 || b.rank() != 2)
        fail(KES_ERR_INVALID_ARGUMENT, "A %s and B %s must be matrices", shape_string(a.shape).c_str(),
             shape_string(b.shape).c_str());
    const bool ta = node.attrs.get_int("transA", 0) != 0, tb = node.attrs.get_int("transB", 0) != 0;
    const float alpha = node.attrs.get_float("alpha", 1.0f), beta = node.attrs.get_float("beta", 1.0f);
    const int64_t M = ta ? a.shape[1] : a.shape[0], K = ta ? a.shape[0] : a.shape[1];
    const int64_t K2 = tb ? b.shape[1] : b.shape[0], N = tb ? b.shape[0] : b.shape[1];
    if (K != K2)
        fail(KES_ERR_INVALID_ARGUMENT, "inner dimensions differ: A %s%s, B %s%s", shape_string(a.shape).c_str(),
             ta ? " (transposed)" : "", shape_string(b.shape).c_str(), tb ? " (transposed)" : "");
    const Shape out_shape{M, N};
    BroadcastPlan cplan;
    if (c) {
        require_dtype(*c, KES_F32, "input C");
        if (broadcast_shapes(c->shape, out_shape) != out_shape)
            fail(KES_ERR_INVALID_ARGUMENT, "C of shape %s does not broadcast to %s", shape_string(c->shape).c_str(),
                 shape_string(out_shape).c_str());
        cplan = make_broadcast_plan(out_shape, {c->shape});
    }
    outputs[0].dtype = KES_F32;
    outputs[0].shape = out_shape;
    const Activation act = Activation::from_attrs(node.attrs);
    const bool has_c = c != nullptr;
    // Element strides of A as (m, k) and B as (k, n).
    const int64_t am = ta ? 1 : K, ak = ta ? M : 1, bk = tb ? 1 : N, bn = tb ? K : 1;
    return make_kernel([=](const void* const* in, void* const* out) {
        const float* pa = in_as<float>(in, 0);
        const float* pb = in_as<float>(in, 1);
        float* py = out_as<float>(out, 0);
        for (int64_t m = 0; m < M; ++m)
            for (int64_t n = 0; n < N; ++n) {
                float acc = 0.0f;
                for (int64_t k = 0; k < K; ++k) acc += pa[m * am + k * ak] * pb[k * bk + n * bn];
                py[m * N + n] = alpha * acc;
            }
        if (has_c) {
            const float* pc = in_as<float>(in, 2);
            for_each_broadcast(cplan, [&](int64_t i, int64_t ic, int64_t, int64_t) { py[i] += beta * pc[ic]; });
        }
        act.apply(py, static_cast<size_t>(M * N));
    });
}

std::unique_ptr<Kernel> create_matmul(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& a = *node.inputs[0];
    const TensorDesc& b = *node.inputs[1];
    require_dtype(a, KES_F32, "input A");
    require_dtype(b, KES_F32, "input B");
    if (a.rank() < 1 || b.rank() < 1) fail(KES_ERR_INVALID_ARGUMENT, "MatMul inputs must have rank >= 1");
    Shape sa = a.shape, sb = b.shape;
    const bool a_vec = sa.size() == 1, b_vec = sb.size() == 1;
    if (a_vec) sa.insert(sa.begin(), 1);
    if (b_vec) sb.push_back(1);
    const int64_t M = sa[sa.size() - 2], K = sa.back(), N = sb.back();
    if (sb[sb.size() - 2] != K)
        fail(KES_ERR_INVALID_ARGUMENT, "shapes %s and %s: inner dimensions differ", shape_string(a.shape).c_str(),
             shape_string(b.shape).c_str());
    const Shape batch_a(sa.begin(), sa.end() - 2), batch_b(sb.begin(), sb.end() - 2);
    const Shape batch = broadcast_shapes(batch_a, batch_b);
    const BroadcastPlan plan = make_broadcast_plan(batch, {batch_a, batch_b});
    Shape out_shape = batch;
    if (!a_vec) out_shape.push_back(M);
    if (!b_vec) out_shape.push_back(N);
    outputs[0].dtype = KES_F32;
    outputs[0].shape = out_shape;
    const Activation act = Activation::from_attrs(node.attrs);
    return make_kernel([=](const void* const* in, void* const* out) {
        const float* pa = in_as<float>(in, 0);
        const float* pb = in_as<float>(in, 1);
        float* py = out_as<float>(out, 0);
        for_each_broadcast(plan, [&](int64_t i, int64_t ia, int64_t ib, int64_t) {
            const float* ma = pa + ia * M * K;
            const float* mb = pb + ib * K * N;
            float* my = py + i * M * N;
            for (int64_t m = 0; m < M; ++m)
                for (int64_t n = 0; n < N; ++n) {
                    float acc = 0.0f;
                    for (int64_t k = 0; k < K; ++k) acc += ma[m * K + k] * mb[k * N + n];
                    my[m * N + n] = act.apply(acc);
                }
        });
    });
}

// ---- pools ----------------------------------------------------------------------------------------------

struct PoolGeom {
    Img x, y;
    Window wd, wh, ww;
};

PoolGeom pool_geometry(const NodeDesc& node, std::vector<TensorDesc>& outputs, bool allow_ceil) {
    const TensorDesc& x = *node.inputs[0];
    const bool bytes_ok = node.op == "MaxPool" && (x.dtype == KES_U8 || x.dtype == KES_I8);
    if (x.dtype != KES_F32 && !bytes_ok)
        unsupported_dtype("input X", x.dtype, node.op == "MaxPool" ? "f32, u8, i8" : "f32");
    require_image(x, "input X");
    const Layout layout = get_layout(node.attrs);
    PoolGeom g;
    g.x = image_dims(x.shape, layout);
    const Shape spatial = spatial_of(g.x, x.shape.size());
    const std::vector<int64_t> kernel = node.attrs.require_ints("kernel_shape");
    if (kernel.size() != spatial.size())
        fail(KES_ERR_INVALID_ARGUMENT, "attribute 'kernel_shape' has %zu values; expected %zu", kernel.size(),
             spatial.size());
    const std::vector<Window> win = resolve_windows(node.attrs, spatial, kernel, allow_ceil);
    split_windows(win, g.wd, g.wh, g.ww);
    outputs[0].dtype = x.dtype;
    outputs[0].shape = image_shape(g.x.n, g.x.c, win, layout);
    g.y = image_dims(outputs[0].shape, layout);
    return g;
}

template <class T, bool kDeep>
void max_pool_run(const PoolGeom& g, int64_t storage_order, const T* px, T* py, int64_t* pi) {
    const int64_t out_d = kDeep ? g.y.d : 1;
    for (int64_t n = 0; n < g.x.n; ++n)
        for (int64_t c = 0; c < g.x.c; ++c)
            for (int64_t od = 0; od < out_d; ++od)
                for (int64_t oh = 0; oh < g.y.h; ++oh)
                    for (int64_t ow = 0; ow < g.y.w; ++ow) {
                        T best = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                                      : std::numeric_limits<T>::lowest();
                        int64_t best_d = 0, best_h = -1, best_w = -1;
                        for_each_tap<kDeep>(g, g.x, od, oh, ow,
                                            [&](int64_t, int64_t, int64_t, int64_t id, int64_t ih, int64_t iw) {
                                                const T v = px[g.x.at(n, c, id, ih, iw)];
                                                if (v > best || best_h < 0)
                                                    best = v, best_d = id, best_h = ih, best_w = iw;
                                            });
                        const int64_t o = g.y.at(n, c, od, oh, ow);
                        py[o] = best;
                        if (pi) {
                            const int64_t volume = (n * g.x.c + c) * g.x.d * g.x.h * g.x.w;
                            pi[o] = volume + (storage_order ? best_d + g.x.d * (best_h + g.x.h * best_w)
                                                            : (best_d * g.x.h + best_h) * g.x.w + best_w);
                        }
                    }
}

template <class T, bool kDeep>
std::unique_ptr<Kernel> max_pool_kernel(const PoolGeom& g, bool indices, int64_t storage_order) {
    return make_kernel([g, indices, storage_order](const void* const* in, void* const* out) {
        max_pool_run<T, kDeep>(g, storage_order, in_as<T>(in, 0), out_as<T>(out, 0),
                               indices ? out_as<int64_t>(out, 1) : nullptr);
    });
}

template <class T>
std::unique_ptr<Kernel> max_pool_kernel(const PoolGeom& g, bool deep, bool indices, int64_t storage_order) {
    return deep ? max_pool_kernel<T, true>(g, indices, storage_order)
                : max_pool_kernel<T, false>(g, indices, storage_order);
}

std::unique_ptr<Kernel> create_max_pool(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const PoolGeom g = pool_geometry(node, outputs, true);
    const bool deep = node.inputs[0]->rank() == 5;
    const int64_t storage_order = node.attrs.get_int("storage_order", 0);
    if (storage_order != 0 && storage_order != 1)
        fail(KES_ERR_INVALID_ARGUMENT, "attribute 'storage_order' is %lld; expected 0 or 1",
             static_cast<long long>(storage_order));
    const bool indices = outputs.size() > 1;
    if (indices) {
        if (get_layout(node.attrs) != Layout::NCHW)
            fail(KES_ERR_UNSUPPORTED, "the Indices output needs data_layout NCHW");
        outputs[1].dtype = KES_I64;
        outputs[1].shape = outputs[0].shape;
    }
    const kes_dtype dt = node.inputs[0]->dtype;
    if (dt == KES_U8) return max_pool_kernel<uint8_t>(g, deep, indices, storage_order);
    if (dt == KES_I8) return max_pool_kernel<int8_t>(g, deep, indices, storage_order);
    return max_pool_kernel<float>(g, deep, indices, storage_order);
}

template <bool kDeep>
void average_pool_run(const PoolGeom& g, bool include_pad, const float* px, float* py) {
    const int64_t out_d = kDeep ? g.y.d : 1, kernel_d = kDeep ? g.wd.kernel : 1;
    for (int64_t n = 0; n < g.x.n; ++n)
        for (int64_t c = 0; c < g.x.c; ++c)
            for (int64_t od = 0; od < out_d; ++od)
                for (int64_t oh = 0; oh < g.y.h; ++oh)
                    for (int64_t ow = 0; ow < g.y.w; ++ow) {
                        float sum = 0.0f;
                        int64_t count = 0;
                        for (int64_t kd = 0; kd < kernel_d; ++kd) {
                            const int64_t id = kDeep ? od * g.wd.stride - g.wd.pad_begin + kd * g.wd.dilation : 0;
                            const bool d_in = !kDeep || (id >= 0 && id < g.x.d);
                            const bool d_padded = !kDeep || (id >= -g.wd.pad_begin && id < g.x.d + g.wd.pad_end);
                            for (int64_t kh = 0; kh < g.wh.kernel; ++kh) {
                                const int64_t ih = oh * g.wh.stride - g.wh.pad_begin + kh * g.wh.dilation;
                                const bool h_in = d_in && ih >= 0 && ih < g.x.h;
                                const bool h_padded = d_padded && ih >= -g.wh.pad_begin && ih < g.x.h + g.wh.pad_end;
                                for (int64_t kw = 0; kw < g.ww.kernel; ++kw) {
                                    const int64_t iw = ow * g.ww.stride - g.ww.pad_begin + kw * g.ww.dilation;
                                    const bool w_in = iw >= 0 && iw < g.x.w;
                                    if (h_in && w_in) {
                                        sum += px[g.x.at(n, c, id, ih, iw)];
                                        ++count;
                                    } else if (include_pad && h_padded && iw >= -g.ww.pad_begin &&
                                               iw < g.x.w + g.ww.pad_end) {
                                        ++count;
                                    }
                                }
                            }
                        }
                        py[g.y.at(n, c, od, oh, ow)] = count ? sum / static_cast<float>(count) : 0.0f;
                    }
}

std::unique_ptr<Kernel> create_average_pool(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const PoolGeom g = pool_geometry(node, outputs, true);
    const bool include_pad = node.attrs.get_int("count_include_pad", 0) != 0;
    if (node.inputs[0]->rank() == 5)
        return make_kernel([g, include_pad](const void* const* in, void* const* out) {
            average_pool_run<true>(g, include_pad, in_as<float>(in, 0), out_as<float>(out, 0));
        });
    return make_kernel([g, include_pad](const void* const* in, void* const* out) {
        average_pool_run<false>(g, include_pad, in_as<float>(in, 0), out_as<float>(out, 0));
    });
}

template <bool kMax>
std::unique_ptr<Kernel> create_global_pool(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    require_dtype(x, KES_F32, "input X");
    if (x.rank() < 3) fail(KES_ERR_INVALID_ARGUMENT, "input X has rank %lld; expected >= 3", (long long)x.rank());
    const Layout layout = get_layout(node.attrs);
    const int64_t n = x.shape[0];
    const int64_t c = layout == Layout::NCHW ? x.shape[1] : x.shape.back();
    const int64_t spatial = x.elements() / std::max<int64_t>(1, n * c);
    Shape out_shape(x.shape.size(), 1);
    out_shape[0] = n;
    out_shape[layout == Layout::NCHW ? 1 : out_shape.size() - 1] = c;
    outputs[0].dtype = KES_F32;
    outputs[0].shape = out_shape;
    // NCHW: channel stride = spatial, element stride 1; NHWC: channel stride 1, element stride c.
    const int64_t sc = layout == Layout::NCHW ? spatial : 1, ss = layout == Layout::NCHW ? 1 : c;
    return make_kernel([=](const void* const* in, void* const* out) {
        const float* px = in_as<float>(in, 0);
        float* py = out_as<float>(out, 0);
        for (int64_t b = 0; b < n; ++b)
            for (int64_t ch = 0; ch < c; ++ch) {
                const float* p = px + b * c * spatial + ch * sc;
                float acc = kMax ? -std::numeric_limits<float>::infinity() : 0.0f;
                for (int64_t s = 0; s < spatial; ++s) acc = kMax ? std::fmax(acc, p[s * ss]) : acc + p[s * ss];
                py[b * c + ch] = kMax ? acc : acc / static_cast<float>(spatial);
            }
    });
}

// ---- BatchNormalization ---------------------------------------------------------------------------------

std::unique_ptr<Kernel> create_batch_norm(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    require_dtype(x, KES_F32, "input X");
    if (node.attrs.get_int("training_mode", 0) != 0)
        fail(KES_ERR_UNSUPPORTED, "attribute 'training_mode' = 1 is not supported (inference only)");
    if (outputs.size() != 1) fail(KES_ERR_UNSUPPORTED, "only the Y output is supported (inference only)");
    if (x.rank() < 2) fail(KES_ERR_INVALID_ARGUMENT, "input X has rank %lld; expected >= 2", (long long)x.rank());
    const Layout layout = get_layout(node.attrs);
    const int64_t c = layout == Layout::NCHW ? x.shape[1] : x.shape.back();
    const char* names[] = {"", "scale", "B", "input_mean", "input_var"};
    for (size_t i = 1; i < 5; ++i) {
        require_dtype(*node.inputs[i], KES_F32, names[i]);
        if (node.inputs[i]->shape != Shape{c})
            fail(KES_ERR_INVALID_ARGUMENT, "input %s has shape %s; expected [%lld]", names[i],
                 shape_string(node.inputs[i]->shape).c_str(), static_cast<long long>(c));
    }
    const float eps = node.attrs.get_float("epsilon", 1e-5f);
    outputs[0].dtype = KES_F32;
    outputs[0].shape = x.shape;
    const int64_t total = x.elements();
    const int64_t inner = layout == Layout::NCHW ? total / std::max<int64_t>(1, x.shape[0] * c) : 1;
    return make_kernel([=](const void* const* in, void* const* out) {
        const float* px = in_as<float>(in, 0);
        const float* scale = in_as<float>(in, 1);
        const float* bias = in_as<float>(in, 2);
        const float* mean = in_as<float>(in, 3);
        const float* var = in_as<float>(in, 4);
        float* py = out_as<float>(out, 0);
        if (c == 0) return;
        for (int64_t i = 0; i < total; i += inner) {
            const int64_t ch = (i / inner) % c;
            const float k = scale[ch] / std::sqrt(var[ch] + eps);
            const float d = bias[ch] - mean[ch] * k;
            for (int64_t j = 0; j < inner; ++j) py[i + j] = px[i + j] * k + d;
        }
    });
}

// ---- LayerNormalization, InstanceNormalization, LRN -----------------------------------------------------

std::unique_ptr<Kernel> create_layer_norm(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    const TensorDesc& scale = *node.inputs[1];
    const TensorDesc* bias = node.input(2);
    require_dtype(x, KES_F32, "input X");
    require_dtype(scale, KES_F32, "input Scale");
    if (x.rank() == 0) fail(KES_ERR_INVALID_ARGUMENT, "input X must have rank >= 1");
    const int64_t axis = normalize_axis(node.attrs.get_int("axis", -1), x.rank());
    const float eps = node.attrs.get_float("epsilon", 1e-5f);
    const Shape norm_shape(x.shape.begin() + axis, x.shape.end());
    auto check = [&](const TensorDesc& t, const char* what) {
        if (broadcast_shapes(t.shape, norm_shape) != norm_shape)
            fail(KES_ERR_INVALID_ARGUMENT, "input %s of shape %s does not broadcast to %s", what,
                 shape_string(t.shape).c_str(), shape_string(norm_shape).c_str());
    };
    check(scale, "Scale");
    if (bias) {
        require_dtype(*bias, KES_F32, "input B");
        check(*bias, "B");
    }
    const BroadcastPlan plan = make_broadcast_plan(norm_shape, {scale.shape, bias ? bias->shape : Shape{}});
    const int64_t inner = shape_elements(norm_shape), outer = inner ? x.elements() / inner : 0;
    outputs[0].dtype = KES_F32;
    outputs[0].shape = x.shape;
    Shape stat_shape = x.shape;
    for (size_t d = static_cast<size_t>(axis); d < stat_shape.size(); ++d) stat_shape[d] = 1;
    for (size_t i = 1; i < outputs.size(); ++i) outputs[i].dtype = KES_F32, outputs[i].shape = stat_shape;
    const bool has_bias = bias != nullptr;
    const size_t n_out = outputs.size();
    return make_kernel([=](const void* const* in, void* const* out) {
        const float* px = in_as<float>(in, 0);
        const float* ps = in_as<float>(in, 1);
        const float* pb = has_bias ? in_as<float>(in, 2) : nullptr;
        float* py = out_as<float>(out, 0);
        for (int64_t o = 0; o < outer; ++o) {
            const float* xr = px + o * inner;
            float* yr = py + o * inner;
            double mean = 0.0, var = 0.0;
            for (int64_t i = 0; i < inner; ++i) mean += xr[i];
            mean /= static_cast<double>(inner);
            for (int64_t i = 0; i < inner; ++i) var += (xr[i] - mean) * (xr[i] - mean);
            var /= static_cast<double>(inner);
            const double inv = 1.0 / std::sqrt(var + eps);
            for_each_broadcast(plan, [&](int64_t i, int64_t is, int64_t ib, int64_t) {
                yr[i] = static_cast<float>((xr[i] - mean) * inv * ps[is] + (pb ? pb[ib] : 0.0f));
            });
            if (n_out > 1 && out[1]) out_as<float>(out, 1)[o] = static_cast<float>(mean);
            if (n_out > 2 && out[2]) out_as<float>(out, 2)[o] = static_cast<float>(inv);
        }
    });
}

std::unique_ptr<Kernel> create_instance_norm(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    require_dtype(x, KES_F32, "input");
    if (x.rank() < 3) fail(KES_ERR_INVALID_ARGUMENT, "input must have rank >= 3");
    const int64_t n = x.shape[0], c = x.shape[1];
    for (size_t i = 1; i < 3; ++i) {
        require_dtype(*node.inputs[i], KES_F32, i == 1 ? "scale" : "B");
        if (node.inputs[i]->shape != Shape{c})
            fail(KES_ERR_INVALID_ARGUMENT, "input %s must have shape [%lld]", i == 1 ? "scale" : "B",
                 static_cast<long long>(c));
    }
    const float eps = node.attrs.get_float("epsilon", 1e-5f);
    const int64_t spatial = n * c != 0 ? x.elements() / (n * c) : 0;
    outputs[0].dtype = KES_F32;
    outputs[0].shape = x.shape;
    return make_kernel([=](const void* const* in, void* const* out) {
        const float* px = in_as<float>(in, 0);
        const float* ps = in_as<float>(in, 1);
        const float* pb = in_as<float>(in, 2);
        float* py = out_as<float>(out, 0);
        for (int64_t p = 0; p < n * c; ++p) {
            const float* xr = px + p * spatial;
            double mean = 0.0, var = 0.0;
            for (int64_t i = 0; i < spatial; ++i) mean += xr[i];
            mean /= static_cast<double>(spatial);
            for (int64_t i = 0; i < spatial; ++i) var += (xr[i] - mean) * (xr[i] - mean);
            var /= static_cast<double>(spatial);
            const double k = ps[p % c] / std::sqrt(var + eps);
            for (int64_t i = 0; i < spatial; ++i)
                py[p * spatial + i] = static_cast<float>((xr[i] - mean) * k + pb[p % c]);
        }
    });
}

std::unique_ptr<Kernel> create_lrn(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const TensorDesc& x = *node.inputs[0];
    require_dtype(x, KES_F32, "input X");
    if (x.rank() < 3) fail(KES_ERR_INVALID_ARGUMENT, "input X must have rank >= 3 (NCHW)");
    const int64_t size = node.attrs.require_int("size");
    if (size < 1) fail(KES_ERR_INVALID_ARGUMENT, "attribute 'size' must be >= 1");
    const float alpha = node.attrs.get_float("alpha", 1e-4f), beta = node.attrs.get_float("beta", 0.75f);
    const float bias = node.attrs.get_float("bias", 1.0f);
    const int64_t n = x.shape[0], c = x.shape[1], spatial = n * c != 0 ? x.elements() / (n * c) : 0;
    const int64_t before = (size - 1) / 2, after = size - 1 - before;
    outputs[0].dtype = KES_F32;
    outputs[0].shape = x.shape;
    return make_kernel([=](const void* const* in, void* const* out) {
        const float* px = in_as<float>(in, 0);
        float* py = out_as<float>(out, 0);
        for (int64_t b = 0; b < n; ++b)
            for (int64_t ch = 0; ch < c; ++ch)
                for (int64_t s = 0; s < spatial; ++s) {
                    double sum = 0.0;
                    for (int64_t k = std::max<int64_t>(0, ch - before); k <= std::min(c - 1, ch + after); ++k) {
                        const double v = px[(b * c + k) * spatial + s];
                        sum += v * v;
                    }
                    const int64_t at = (b * c + ch) * spatial + s;
                    py[at] =
                        static_cast<float>(px[at] / std::pow(bias + alpha / static_cast<double>(size) * sum, beta));
                }
    });
}

}  // namespace

void add_nn_ops(OpList& ops) {
    ops.push_back({"Conv", 2, 4, 1, 1, create_conv});
    ops.push_back({"ConvTranspose", 2, 3, 1, 1, create_conv_transpose});
    ops.push_back({"Gemm", 2, 3, 1, 1, create_gemm});
    ops.push_back({"MatMul", 2, 2, 1, 1, create_matmul});
    ops.push_back({"MaxPool", 1, 1, 1, 2, create_max_pool});
    ops.push_back({"AveragePool", 1, 1, 1, 1, create_average_pool});
    ops.push_back({"GlobalAveragePool", 1, 1, 1, 1, create_global_pool<false>});
    ops.push_back({"GlobalMaxPool", 1, 1, 1, 1, create_global_pool<true>});
    ops.push_back({"BatchNormalization", 5, 5, 1, 3, create_batch_norm});
    ops.push_back({"LayerNormalization", 2, 3, 1, 3, create_layer_norm});
    ops.push_back({"InstanceNormalization", 3, 3, 1, 1, create_instance_norm});
    ops.push_back({"LRN", 1, 1, 1, 1, create_lrn});
}

}  // namespace kes
