// fusion.cpp — BatchNorm/scale folding, activation fusion and explicit padding (fusion.hpp).
#include "fusion.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "../ops/geometry.hpp"
#include "kes/error.hpp"

namespace kes::ir {

namespace {

Tensor& tensor(Graph& g, int32_t t) {
    return g.tensors[static_cast<size_t>(t)];
}

bool is_const_f32(const Graph& g, int32_t t) {
    return t >= 0 && g.tensors[static_cast<size_t>(t)].is_const && g.tensors[static_cast<size_t>(t)].dtype == KES_F32;
}

std::vector<float> floats_of(const Tensor& t) {
    std::vector<float> v(t.data.size() / sizeof(float));
    if (!v.empty()) std::memcpy(v.data(), t.data.data(), v.size() * sizeof(float));
    return v;
}

// The node consuming `t` when it is exactly one node reading it once and t is not a graph output.
int32_t sole_consumer(const Graph& g, int32_t t) {
    if (g.is_graph_output(t)) return -1;
    const std::vector<int32_t> c = g.consumers(t);
    if (c.size() != 1) return -1;
    const Node& n = g.nodes[static_cast<size_t>(c[0])];
    if (std::count(n.inputs.begin(), n.inputs.end(), t) != 1) return -1;
    return c[0];
}

bool has_activation(const Node& n) {
    return !n.attrs.get_string("activation", "").empty();
}

// ---- channel affine: y' = s[c] * y + b[c] along the producer's channel axis ----------------------------

struct Affine {
    std::vector<float> scale, shift;
};

// Channel axis of a Conv/Gemm output, or -1 when the node cannot absorb an affine.
int64_t affine_channel_axis(const Graph& g, const Node& p) {
    if (p.outputs.size() != 1 || has_activation(p)) return -1;
    const Tensor& y = g.tensors[static_cast<size_t>(p.outputs[0])];
    if (y.dtype != KES_F32 || !y.has_shape || y.shape.size() < 2) return -1;
    if (p.inputs.size() < 2 || !is_const_f32(g, p.inputs[1])) return -1;
    if (p.inputs.size() > 2 && p.inputs[2] >= 0 && !is_const_f32(g, p.inputs[2])) return -1;
    if (p.op == "Conv") {
        const bool nhwc = p.attrs.get_string("data_layout", "NCHW") == "NHWC";
        return nhwc ? static_cast<int64_t>(y.shape.size()) - 1 : 1;
    }
    if (p.op == "Gemm" && y.shape.size() == 2) return 1;
    return -1;
}

// Per-channel values of a constant operand that broadcasts along `axis` of `out` only (or a scalar);
// empty when it does not.
std::vector<float> per_channel(const Tensor& c, const Shape& out, int64_t axis) {
    const int64_t channels = out[static_cast<size_t>(axis)];
    if (!c.is_const || c.dtype != KES_F32 || c.shape.size() > out.size()) return {};
    const std::vector<float> v = floats_of(c);
    if (v.size() == 1) return std::vector<float>(static_cast<size_t>(channels), v[0]);
    const size_t shift = out.size() - c.shape.size();
    for (size_t d = 0; d < c.shape.size(); ++d) {
        const int64_t extent = c.shape[d];
        if (extent == 1) continue;
        if (static_cast<int64_t>(d + shift) != axis || extent != channels) return {};
    }
    return static_cast<int64_t>(v.size()) == channels ? v : std::vector<float>{};
}

int32_t new_constant(Graph& g, const std::string& base, Shape shape, const std::vector<float>& values) {
    std::string name = base;
    for (int k = 1; g.find_tensor(name) >= 0; ++k) name = base + "_" + std::to_string(k);
    return g.add_constant_f32(name, std::move(shape), values);
}

// Rewrites producer p's weights so that its output becomes s * y + b per channel.
void apply_affine(Graph& g, size_t pi, const Affine& a) {
    Node& p = g.nodes[pi];
    const Tensor& y = g.tensors[static_cast<size_t>(p.outputs[0])];
    const int64_t channels = static_cast<int64_t>(a.scale.size());
    const Tensor& w = tensor(g, p.inputs[1]);
    std::vector<float> wv = floats_of(w);
    const bool has_bias = p.inputs.size() > 2 && p.inputs[2] >= 0;
    if (p.op == "Conv") {
        // Filter dim 0 is the output channel (OIHW and OHWI alike).
        const size_t per = wv.size() / static_cast<size_t>(channels);
        for (int64_t o = 0; o < channels; ++o)
            for (size_t k = 0; k < per; ++k) wv[static_cast<size_t>(o) * per + k] *= a.scale[static_cast<size_t>(o)];
        std::vector<float> bv =
            has_bias ? floats_of(tensor(g, p.inputs[2])) : std::vector<float>(static_cast<size_t>(channels), 0.0f);
        for (int64_t o = 0; o < channels; ++o)
            bv[static_cast<size_t>(o)] =
                bv[static_cast<size_t>(o)] * a.scale[static_cast<size_t>(o)] + a.shift[static_cast<size_t>(o)];
        const Shape wshape = w.shape;
        const std::string wname = w.name, pname = p.name;
        const int32_t nw = new_constant(g, wname + "_fused", wshape, wv);
        const int32_t nb = new_constant(g, pname + "_bias_fused", Shape{channels}, bv);
        Node& q = g.nodes[pi];
        q.inputs[1] = nw;
        if (q.inputs.size() < 3) q.inputs.resize(3, -1);
        q.inputs[2] = nb;
        return;
    }
    // Gemm: y = alpha * A' B' + beta * C over [M, N]; scale B's column n (row n when transB), and
    // C' = s * beta * C + b (materialised at [N] or [M, N]), beta = 1.
    const bool trans_b = p.attrs.get_int("transB", 0) != 0;
    const int64_t rows = w.shape[0], cols = w.shape[1];
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
            wv[static_cast<size_t>(r * cols + c)] *= a.scale[static_cast<size_t>(trans_b ? r : c)];
    const int64_t m = y.shape[0], n = y.shape[1];
    const float beta = p.attrs.get_float("beta", 1.0f);
    Shape c_shape{n};
    std::vector<float> cv;
    if (has_bias) {
        const Tensor& c = tensor(g, p.inputs[2]);
        const bool full = c.shape.size() == 2 && c.shape[0] > 1;
        if (full) c_shape = {m, n};
        const Shape strides = broadcast_strides(c.shape, full ? Shape{m, n} : Shape{n});
        const std::vector<float> old = floats_of(c);
        const int64_t rows_out = full ? m : 1;
        cv.resize(static_cast<size_t>(rows_out * n));
        for (int64_t i = 0; i < rows_out; ++i)
            for (int64_t j = 0; j < n; ++j) {
                const int64_t off = full ? i * strides[0] + j * strides[1] : j * strides[0];
                cv[static_cast<size_t>(i * n + j)] =
                    a.scale[static_cast<size_t>(j)] * beta * old[static_cast<size_t>(off)] +
                    a.shift[static_cast<size_t>(j)];
            }
    } else {
        cv = a.shift;
    }
    const Shape wshape = w.shape;
    const std::string wname = w.name, pname = p.name;
    const int32_t nw = new_constant(g, wname + "_fused", wshape, wv);
    const int32_t nc = new_constant(g, pname + "_c_fused", c_shape, cv);
    Node& q = g.nodes[pi];
    q.inputs[1] = nw;
    if (q.inputs.size() < 3) q.inputs.resize(3, -1);
    q.inputs[2] = nc;
    q.attrs.set_float("beta", 1.0f);
}

// The affine a consumer applies to the producer's output t, if it is one.
bool consumer_affine(const Graph& g, const Node& c, int32_t t, const Shape& out, int64_t axis, Affine& a) {
    const size_t channels = static_cast<size_t>(out[static_cast<size_t>(axis)]);
    if (c.outputs.size() != 1) return false;
    if (c.op == "BatchNormalization") {
        if (c.inputs.size() != 5 || c.inputs[0] != t || axis != 1) return false;
        if (c.attrs.get_int("training_mode", 0) != 0) return false;
        std::vector<float> p[4];
        for (size_t i = 0; i < 4; ++i) {
            const int32_t in = c.inputs[i + 1];
            if (!is_const_f32(g, in)) return false;
            p[i] = floats_of(g.tensors[static_cast<size_t>(in)]);
            if (p[i].size() != channels) return false;
        }
        const float eps = c.attrs.get_float("epsilon", 1e-5f);
        a.scale.resize(channels), a.shift.resize(channels);
        for (size_t o = 0; o < channels; ++o) {
            a.scale[o] = p[0][o] / std::sqrt(p[3][o] + eps);
            a.shift[o] = p[1][o] - p[2][o] * a.scale[o];
        }
        return true;
    }
    if (c.op != "Mul" && c.op != "Add" && c.op != "Sub" && c.op != "Div") return false;
    if (c.inputs.size() != 2 || has_activation(c)) return false;
    const bool t_first = c.inputs[0] == t;
    const int32_t other = t_first ? c.inputs[1] : c.inputs[0];
    if (other < 0 || other == t) return false;
    const std::vector<float> v = per_channel(g.tensors[static_cast<size_t>(other)], out, axis);
    if (v.empty()) return false;
    const Tensor& cy = g.tensors[static_cast<size_t>(c.outputs[0])];
    if (!cy.has_shape || cy.shape != out) return false;
    a.scale.assign(channels, 1.0f), a.shift.assign(channels, 0.0f);
    for (size_t o = 0; o < channels; ++o) {
        if (c.op == "Mul") {
            a.scale[o] = v[o];
        } else if (c.op == "Add") {
            a.shift[o] = v[o];
        } else if (c.op == "Sub") {
            if (t_first)
                a.shift[o] = -v[o];
            else
                a.scale[o] = -1.0f, a.shift[o] = v[o];
        } else {  // Div: only y / c is affine in y
            if (!t_first || v[o] == 0.0f) return false;
            a.scale[o] = 1.0f / v[o];
        }
    }
    return true;
}

// ---- activations -------------------------------------------------------------------------------------------

bool can_take_activation(const Graph& g, const Node& p) {
    static const char* ops[] = {"Conv", "ConvTranspose", "Gemm", "MatMul", "Add", "Sub", "Mul", "Div"};
    if (std::none_of(std::begin(ops), std::end(ops), [&](const char* o) { return p.op == o; })) return false;
    if (p.outputs.size() != 1 || has_activation(p)) return false;
    return g.tensors[static_cast<size_t>(p.outputs[0])].dtype == KES_F32;
}

// The activation a node computes, when it is one Activation can express.
bool activation_of(const Graph& g, const Node& n, Activation& act) {
    using K = Activation::Kind;
    act = Activation{};
    if (n.outputs.size() != 1 || n.inputs.empty()) return false;
    if (n.op == "Relu") {
        act.kind = K::Relu;
    } else if (n.op == "Sigmoid") {
        act.kind = K::Sigmoid;
    } else if (n.op == "Tanh") {
        act.kind = K::Tanh;
    } else if (n.op == "HardSwish") {
        act.kind = K::HardSwish;
    } else if (n.op == "LeakyRelu") {
        act.kind = K::LeakyRelu, act.alpha = n.attrs.get_float("alpha", 0.01f);
    } else if (n.op == "HardSigmoid") {
        act.kind = K::HardSigmoid;
        act.alpha = n.attrs.get_float("alpha", 0.2f), act.beta = n.attrs.get_float("beta", 0.5f);
    } else if (n.op == "Clip") {
        act.kind = K::Clip, act.min = -INFINITY, act.max = INFINITY;
        for (size_t i = 1; i < n.inputs.size() && i < 3; ++i) {
            const int32_t b = n.inputs[i];
            if (b < 0) continue;
            if (!is_const_f32(g, b) || g.tensors[static_cast<size_t>(b)].data.size() != sizeof(float)) return false;
            const float v = floats_of(g.tensors[static_cast<size_t>(b)])[0];
            (i == 1 ? act.min : act.max) = v;
        }
    } else {
        return false;
    }
    return true;
}

// ---- explicit padding ----------------------------------------------------------------------------------------

bool make_node_padding_explicit(const Graph& g, Node& n) {
    const bool conv = n.op == "Conv";
    if (!conv && n.op != "MaxPool" && n.op != "AveragePool" && n.op != "LpPool") return false;
    const std::string auto_pad = n.attrs.get_string("auto_pad", "NOTSET");
    if (auto_pad == "NOTSET" || n.inputs.empty() || n.inputs[0] < 0) return false;
    const Tensor& x = g.tensors[static_cast<size_t>(n.inputs[0])];
    if (!x.has_shape || x.shape.size() < 3) return false;
    const bool nhwc = n.attrs.get_string("data_layout", "NCHW") == "NHWC";
    const Shape spatial =
        nhwc ? Shape(x.shape.begin() + 1, x.shape.end() - 1) : Shape(x.shape.begin() + 2, x.shape.end());
    Shape kernel = n.attrs.get_ints("kernel_shape");
    if (kernel.empty() && conv && n.inputs.size() > 1 && n.inputs[1] >= 0) {
        const Shape& w = g.tensors[static_cast<size_t>(n.inputs[1])].shape;
        if (w.size() != x.shape.size()) return false;
        kernel = nhwc ? Shape(w.begin() + 1, w.end() - 1) : Shape(w.begin() + 2, w.end());
    }
    if (kernel.size() != spatial.size()) return false;
    const std::vector<Window> win = resolve_windows(n.attrs, spatial, kernel, !conv);
    std::vector<int64_t> pads(2 * win.size());
    for (size_t i = 0; i < win.size(); ++i) pads[i] = win[i].pad_begin, pads[i + win.size()] = win[i].pad_end;
    n.attrs.erase("auto_pad");
    n.attrs.set_ints("pads", pads);
    return true;
}

}  // namespace

PassStats fuse_channel_affine(Graph& g) {
    PassStats stats;
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t pi = 0; pi < g.nodes.size() && !changed; ++pi) {
            const int64_t axis = affine_channel_axis(g, g.nodes[pi]);
            if (axis < 0) continue;
            const int32_t t = g.nodes[pi].outputs[0];
            const int32_t ci = sole_consumer(g, t);
            if (ci < 0) continue;
            const Node& c = g.nodes[static_cast<size_t>(ci)];
            Affine a;
            if (!consumer_affine(g, c, t, g.tensors[static_cast<size_t>(t)].shape, axis, a)) continue;
            const int32_t y = c.outputs[0];
            apply_affine(g, pi, a);
            g.nodes[pi].outputs[0] = y;
            g.nodes.erase(g.nodes.begin() + ci);
            ++stats.nodes_fused, ++stats.nodes_removed;
            changed = true;
        }
    }
    if (stats.nodes_fused) g.compact();
    return stats;
}

namespace {

// Mul(t, Sigmoid(t)): the Swish (SiLU) PyTorch exports as two nodes. True when t's consumers are
// exactly that Sigmoid (index *sig) and that Mul (index *mul), the Sigmoid's output feeding only the Mul.
bool swish_of(const Graph& g, int32_t t, int32_t* sig, int32_t* mul) {
    if (g.is_graph_output(t)) return false;
    const std::vector<int32_t> c = g.consumers(t);
    if (c.size() != 2) return false;
    for (int k = 0; k < 2; ++k) {
        const Node& s = g.nodes[static_cast<size_t>(c[static_cast<size_t>(k)])];
        const Node& m = g.nodes[static_cast<size_t>(c[static_cast<size_t>(1 - k)])];
        if (s.op != "Sigmoid" || s.inputs.size() != 1 || s.outputs.size() != 1 || m.op != "Mul") continue;
        const int32_t st = s.outputs[0];
        if (m.inputs.size() != 2 || m.outputs.size() != 1 || has_activation(m)) continue;
        if (!((m.inputs[0] == t && m.inputs[1] == st) || (m.inputs[0] == st && m.inputs[1] == t))) continue;
        if (sole_consumer(g, st) != c[static_cast<size_t>(1 - k)]) continue;
        if (g.tensors[static_cast<size_t>(m.outputs[0])].dtype != KES_F32) continue;
        *sig = c[static_cast<size_t>(k)], *mul = c[static_cast<size_t>(1 - k)];
        return true;
    }
    return false;
}

}  // namespace

PassStats fuse_activations(Graph& g) {
    PassStats stats;
    for (size_t pi = 0; pi < g.nodes.size(); ++pi) {
        if (!can_take_activation(g, g.nodes[pi])) continue;
        const int32_t t = g.nodes[pi].outputs[0];
        int32_t sig = -1, mul = -1;
        if (swish_of(g, t, &sig, &mul)) {
            Activation swish;
            swish.kind = Activation::Kind::Swish;
            Node& p = g.nodes[pi];
            Activation::to_attrs(swish, p.attrs);
            p.outputs[0] = g.nodes[static_cast<size_t>(mul)].outputs[0];
            for (int32_t gone : {std::max(sig, mul), std::min(sig, mul)}) {
                g.nodes.erase(g.nodes.begin() + gone);
                if (static_cast<size_t>(gone) < pi) --pi;
            }
            ++stats.nodes_fused, stats.nodes_removed += 2;
            continue;
        }
        const int32_t ci = sole_consumer(g, t);
        if (ci < 0) continue;
        const Node& c = g.nodes[static_cast<size_t>(ci)];
        Activation act;
        if (c.inputs[0] != t || !activation_of(g, c, act)) continue;
        if (g.tensors[static_cast<size_t>(c.outputs[0])].dtype != KES_F32) continue;
        const int32_t y = c.outputs[0];
        Node& p = g.nodes[pi];
        Activation::to_attrs(act, p.attrs);
        p.outputs[0] = y;
        g.nodes.erase(g.nodes.begin() + ci);
        if (static_cast<size_t>(ci) < pi) --pi;
        ++stats.nodes_fused, ++stats.nodes_removed;
    }
    if (stats.nodes_fused) g.compact();
    return stats;
}

PassStats fuse_residual_adds(Graph& g) {
    PassStats stats;
    for (size_t pi = 0; pi < g.nodes.size(); ++pi) {
        const Node& p = g.nodes[pi];
        if (p.op != "Conv" || p.outputs.size() != 1 || has_activation(p) || p.inputs.size() > 3) continue;
        const int32_t t = p.outputs[0];
        const Tensor& y = g.tensors[static_cast<size_t>(t)];
        if (y.dtype != KES_F32 || !y.has_shape) continue;
        const int32_t ci = sole_consumer(g, t);
        if (ci < 0) continue;
        const Node& c = g.nodes[static_cast<size_t>(ci)];
        if (c.op != "Add" || c.inputs.size() != 2 || c.outputs.size() != 1) continue;
        const int32_t r = c.inputs[0] == t ? c.inputs[1] : c.inputs[0];
        const Tensor& rt = g.tensors[static_cast<size_t>(r)];
        const Tensor& out = g.tensors[static_cast<size_t>(c.outputs[0])];
        // Only an Add without broadcast: the residual has the conv output's shape (a ResNet/MobileNet skip).
        if (r == t || rt.dtype != KES_F32 || !rt.has_shape || rt.shape != y.shape || out.shape != y.shape) continue;
        Node fused = p;
        fused.inputs.resize(3, -1);
        fused.inputs.push_back(r);
        Activation act;
        act = Activation::from_attrs(c.attrs);
        Activation::to_attrs(act, fused.attrs);
        fused.outputs[0] = c.outputs[0];
        // The fused node takes the Add's place: the residual may be computed after the Conv.
        g.nodes[static_cast<size_t>(ci)] = std::move(fused);
        g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(pi));
        --pi;
        ++stats.nodes_fused, ++stats.nodes_removed;
    }
    if (stats.nodes_fused) g.compact();
    return stats;
}

namespace {

// Folds the shuffle whose first Reshape is node ri, if it is one; false (graph untouched) otherwise.
bool fold_channel_shuffle(Graph& g, size_t ri) {
    const Node& r1 = g.nodes[ri];
    if (r1.op != "Reshape" || r1.outputs.size() != 1 || r1.inputs.empty()) return false;
    const int32_t x = r1.inputs[0], t1 = r1.outputs[0];
    const int32_t ti = sole_consumer(g, t1);
    if (ti < 0 || g.nodes[static_cast<size_t>(ti)].op != "Transpose") return false;
    const Node& tr = g.nodes[static_cast<size_t>(ti)];
    const int32_t t2 = tr.outputs[0];
    const int32_t r2i = sole_consumer(g, t2);
    if (r2i < 0 || g.nodes[static_cast<size_t>(r2i)].op != "Reshape") return false;
    const int32_t y = g.nodes[static_cast<size_t>(r2i)].outputs[0];
    const Tensor &xt = g.tensors[static_cast<size_t>(x)], &a = g.tensors[static_cast<size_t>(t1)],
                 &yt = g.tensors[static_cast<size_t>(y)];
    if (!xt.has_shape || !a.has_shape || !yt.has_shape || yt.shape != xt.shape) return false;
    // t1 is x with one axis c split into (g, C/g); the Transpose swaps exactly those two.
    const Shape &xs = xt.shape, &as = a.shape;
    if (as.size() != xs.size() + 1 || xs.empty()) return false;
    size_t c = 0;
    while (c < xs.size() && xs[c] == as[c]) ++c;
    if (c >= xs.size() || as[c] * as[c + 1] != xs[c] || as[c] < 2 || as[c + 1] < 2) return false;
    if (!std::equal(xs.begin() + static_cast<std::ptrdiff_t>(c) + 1, xs.end(),
                    as.begin() + static_cast<std::ptrdiff_t>(c) + 2))
        return false;
    std::vector<int64_t> want(as.size());
    for (size_t i = 0; i < want.size(); ++i) want[i] = static_cast<int64_t>(i);
    std::swap(want[c], want[c + 1]);
    if (tr.attrs.get_ints("perm") != want) return false;
    Node shuffle;
    shuffle.op = "ChannelShuffle";
    shuffle.name = g.nodes[static_cast<size_t>(r2i)].name;
    shuffle.inputs = {x};
    shuffle.outputs = {y};
    shuffle.attrs.set_int("axis", static_cast<int64_t>(c));
    shuffle.attrs.set_int("group", as[c]);
    // The shuffle takes the last Reshape's place; the Reshape and Transpose before it go.
    g.nodes[static_cast<size_t>(r2i)] = std::move(shuffle);
    for (int32_t gone :
         {std::max<int32_t>(ti, static_cast<int32_t>(ri)), std::min<int32_t>(ti, static_cast<int32_t>(ri))})
        g.nodes.erase(g.nodes.begin() + gone);
    return true;
}

}  // namespace

PassStats fuse_channel_shuffle(Graph& g) {
    PassStats stats;
    // A fold removes node ri: the node that takes its index is examined next.
    for (size_t ri = 0; ri < g.nodes.size();) {
        if (!fold_channel_shuffle(g, ri)) {
            ++ri;
            continue;
        }
        ++stats.nodes_fused, stats.nodes_removed += 2;
    }
    if (stats.nodes_fused) g.compact();
    return stats;
}

PassStats make_padding_explicit(Graph& g) {
    PassStats stats;
    // With image size gears the pads depend on the gear: auto_pad stays, and each gear's kernels
    // resolve it when the model is loaded.
    if (!g.dynamic_image_sizes.empty()) return stats;
    for (Node& n : g.nodes) {
        try {
            if (make_node_padding_explicit(g, n)) ++stats.nodes_fused;
        } catch (const Error& e) {
            throw Error(e.status(), format("node %s (%s): %s", n.name.c_str(), n.op.c_str(), e.what()));
        }
    }
    return stats;
}

PassStats run_fusions(Graph& g) {
    PassStats total;
    for (const PassStats& s :
         {make_padding_explicit(g), fuse_channel_affine(g), fuse_activations(g), fuse_residual_adds(g)}) {
        total.nodes_fused += s.nodes_fused;
        total.nodes_removed += s.nodes_removed;
    }
    return total;
}

}  // namespace kes::ir
