// fusion_qdq.cpp — fuse_qdq (fusion.hpp): a QDQ graph (ONNX Runtime's quantize_static output, every
// quantized op written as DequantizeLinear → float op → QuantizeLinear) kept as quantized ops.
//
// Rewrites, each when the float op's output feeds exactly the QuantizeLinear (optionally through a Relu
// or a Clip with constant bounds, which becomes the fused op's output range: ops/quant.hpp
// fused_activation_range, exact), every scale and zero point is a constant and the shapes suit the
// quantized kernel (checked by creating it):
// - Conv (NCHW, 1-D/2-D; weight per tensor or per output channel; bias an int32 DequantizeLinear whose
//   scale is x_scale · w_scale, as the quantizer writes it) → QLinearConv;
// - MatMul (B per tensor, or per column when 2-D) and Gemm (alpha = beta = 1, no transA, constant B,
//   transB applied to B's bytes, bias as Conv's) → QLinearMatMul (Kestrel's input 8 is the bias);
// - Add, Mul (per tensor, one type) → QLinearAdd, QLinearMul; GlobalAveragePool → QLinearGlobalAveragePool;
//   Concat → QLinearConcat;
// - MaxPool, Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Relu and Clip run on the quantized values
//   themselves (they commute with a monotonic quantization: MaxPool/view ops as they are, Relu and Clip as
//   a Clip at the quantized bounds); when the QuantizeLinear after them has other parameters than the
//   input's, a one-input QLinearConcat requantizes after them (exact: the float path's arithmetic).
// Everything else keeps its DequantizeLinear → float op → QuantizeLinear, computed in f32 (correct, not
// integer): the pass logs how many such pairs remain and around which ops.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>

#include "../ops/quant.hpp"
#include "fusion.hpp"
#include "kes/error.hpp"
#include "kes/logging.hpp"

namespace kes::ir {

namespace {

const Tensor& tensor_at(const Graph& g, int32_t t) {
    return g.tensors[static_cast<size_t>(t)];
}

bool is_const(const Graph& g, int32_t t) {
    return t >= 0 && tensor_at(g, t).is_const;
}

// A DequantizeLinear's operands: the quantized tensor and its constant scale and zero point.
struct Dequantized {
    int32_t q = -1, scale = -1, zero_point = -1;  // zero_point -1: omitted (0)
    int64_t axis = 1;
};

// t's producer as a DequantizeLinear of u8/i8 (or i32, for a bias) with constant parameters.
bool dequantized(const Graph& g, int32_t t, Dequantized* d) {
    const int32_t p = t >= 0 ? g.producer(t) : -1;
    if (p < 0) return false;
    const Node& n = g.nodes[static_cast<size_t>(p)];
    if (n.op != "DequantizeLinear" || n.inputs.size() < 2 || n.inputs[0] < 0) return false;
    const int32_t zp = n.inputs.size() > 2 ? n.inputs[2] : -1;
    if (!is_const(g, n.inputs[1]) || (zp >= 0 && !is_const(g, zp))) return false;
    d->q = n.inputs[0], d->scale = n.inputs[1], d->zero_point = zp;
    d->axis = n.attrs.get_int("axis", 1);
    return true;
}

bool is_quantized(const Graph& g, const Dequantized& d) {
    return is_quantized_dtype(tensor_at(g, d.q).dtype);
}
bool per_tensor(const Graph& g, const Dequantized& d) {
    return tensor_at(g, d.scale).elements() == 1;
}

// The node reading t when it is the only reader (t no graph output) and reads it once; else -1.
int32_t sole_reader(const Graph& g, int32_t t) {
    if (g.is_graph_output(t)) return -1;
    const std::vector<int32_t> c = g.consumers(t);
    if (c.size() != 1) return -1;
    const Node& n = g.nodes[static_cast<size_t>(c[0])];
    return std::count(n.inputs.begin(), n.inputs.end(), t) == 1 ? c[0] : -1;
}

// The QuantizeLinear that alone reads t, with constant per-tensor parameters; -1 if none.
int32_t quantizing_reader(const Graph& g, int32_t t) {
    const int32_t r = sole_reader(g, t);
    if (r < 0) return -1;
    const Node& q = g.nodes[static_cast<size_t>(r)];
    if (q.op != "QuantizeLinear" || q.inputs.size() < 2 || q.inputs[0] != t || !is_const(g, q.inputs[1])) return -1;
    if (tensor_at(g, q.inputs[1]).elements() != 1) return -1;
    if (q.inputs.size() > 2 && q.inputs[2] >= 0 && !is_const(g, q.inputs[2])) return -1;
    return r;
}

float scalar_f32(const Graph& g, int32_t t) {
    float v = 0.0f;
    std::memcpy(&v, tensor_at(g, t).data.data(), sizeof v);
    return v;
}

int64_t zero_point_value(const Graph& g, int32_t zp, size_t i = 0) {
    if (zp < 0) return 0;
    const Tensor& z = tensor_at(g, zp);
    switch (z.dtype) {
        case KES_U8: return z.as<uint8_t>()[i];
        case KES_I8: return z.as<int8_t>()[i];
        case KES_I32: return z.as<int32_t>()[i];
        default: return -1;  // not a zero point type: never matches
    }
}

struct Pass {
    Graph& g;
    std::vector<char> drop;
    std::map<std::string, size_t> fused_ops;  // op → count, for the log
    size_t zeros = 0;

    explicit Pass(Graph& graph) : g(graph), drop(graph.nodes.size(), 0) {}

    // The QuantizeLinear's output type: its zero point's, u8 when omitted.
    kes_dtype quantized_type(const Node& q) const {
        return q.inputs.size() > 2 && q.inputs[2] >= 0 ? tensor_at(g, q.inputs[2]).dtype : KES_U8;
    }

    // A zero point input that is always there: the given one, or a new scalar 0 of `dtype`.
    int32_t zero_point_or_zero(int32_t zp, kes_dtype dtype) {
        if (zp >= 0) return zp;
        const uint8_t zero = 0;
        return g.add_constant("qdq_zero_point_" + std::to_string(zeros++), dtype, Shape{}, &zero);
    }

    // The Relu/Clip (constant f32 bounds) between a float op's output and its QuantizeLinear, if any:
    // sets the activation attributes on `fused`, returns the QuantizeLinear node and the nodes to drop.
    int32_t output_quantizer(int32_t out, Attrs& fused, std::vector<int32_t>& absorbed, bool allow_activation) {
        int32_t q = quantizing_reader(g, out);
        if (q >= 0 || !allow_activation) return q;
        const int32_t a = sole_reader(g, out);
        if (a < 0) return -1;
        const Node& act = g.nodes[static_cast<size_t>(a)];
        if (act.op == "Relu") {
            fused.set_string("activation", "Relu");
        } else if (act.op == "Clip") {
            const int32_t lo = act.inputs.size() > 1 ? act.inputs[1] : -1;
            const int32_t hi = act.inputs.size() > 2 ? act.inputs[2] : -1;
            for (int32_t b : {lo, hi})
                if (b >= 0 && (!is_const(g, b) || tensor_at(g, b).dtype != KES_F32 || tensor_at(g, b).elements() != 1))
                    return -1;
            fused.set_string("activation", "Clip");
            fused.set_float("activation_min", lo >= 0 ? scalar_f32(g, lo) : -INFINITY);
            fused.set_float("activation_max", hi >= 0 ? scalar_f32(g, hi) : INFINITY);
        } else {
            return -1;
        }
        q = quantizing_reader(g, act.outputs[0]);
        if (q >= 0) absorbed.push_back(a);
        return q;
    }

    // Replaces node `at` by `fused` (reading quantized tensors, writing the QuantizeLinear's output),
    // dropping the QuantizeLinear and `absorbed`, when the quantized kernel accepts it.
    bool replace(size_t at, Node fused, int32_t quantize, const std::vector<int32_t>& absorbed) {
        const Node& qn = g.nodes[static_cast<size_t>(quantize)];
        fused.outputs = {qn.outputs[0]};
        fused.name = g.nodes[at].name;
        try {
            infer_node(g, fused);
        } catch (const Error& e) {
            KES_LOGD("convert", "qdq: %s (%s) stays in f32: %s", fused.name.c_str(), g.nodes[at].op.c_str(), e.what());
            return false;
        }
        ++fused_ops[fused.op];
        g.nodes[at] = std::move(fused);
        drop[static_cast<size_t>(quantize)] = 1;
        for (int32_t a : absorbed) drop[static_cast<size_t>(a)] = 1;
        return true;
    }

    // Bias: an int32 DequantizeLinear of zero point 0 whose scale is x_scale · w_scale[c] (ONNX Runtime's
    // quantizer writes exactly that product); -1 when absent, -2 when it does not fit.
    int32_t int32_bias(int32_t b, const Dequantized& x, const Dequantized& w, int64_t channels) {
        if (b < 0) return -1;
        Dequantized d;
        if (!dequantized(g, b, &d) || tensor_at(g, d.q).dtype != KES_I32 || !is_const(g, d.q)) return -2;
        if (tensor_at(g, d.q).shape != Shape{channels}) return -2;
        const Tensor& bs = tensor_at(g, d.scale);
        const Tensor& ws = tensor_at(g, w.scale);
        const float xs = scalar_f32(g, x.scale);
        for (int64_t c = 0; c < channels; ++c) {
            const size_t ic = static_cast<size_t>(c);
            const float expect = xs * ws.as<float>()[ws.elements() == 1 ? 0 : ic];
            const float got = bs.as<float>()[bs.elements() == 1 ? 0 : ic];
            if (std::fabs(got - expect) > 1e-5f * expect) return -2;
            if (zero_point_value(g, d.zero_point,
                                 d.zero_point >= 0 && tensor_at(g, d.zero_point).elements() > 1 ? ic : 0) != 0)
                return -2;
        }
        return d.q;
    }

    void conv(size_t i) {
        const Node& n = g.nodes[i];
        Dequantized x, w;
        if (n.inputs.size() < 2 || n.inputs.size() > 3 || !dequantized(g, n.inputs[0], &x) ||
            !dequantized(g, n.inputs[1], &w) || !is_quantized(g, x) || !is_quantized(g, w) || !per_tensor(g, x) ||
            !is_const(g, w.q) || (!per_tensor(g, w) && w.axis != 0))
            return;
        const int64_t m = tensor_at(g, w.q).shape.empty() ? 0 : tensor_at(g, w.q).shape[0];
        const int32_t bias = int32_bias(n.inputs.size() > 2 ? n.inputs[2] : -1, x, w, m);
        if (bias == -2) return;
        Node fused;
        fused.op = "QLinearConv";
        fused.attrs = n.attrs;
        std::vector<int32_t> absorbed;
        const int32_t q = output_quantizer(n.outputs[0], fused.attrs, absorbed, true);
        if (q < 0) return;
        const Node& qn = g.nodes[static_cast<size_t>(q)];
        fused.inputs = {x.q,          x.scale,
                        x.zero_point, w.q,
                        w.scale,      w.zero_point,
                        qn.inputs[1], zero_point_or_zero(qn.inputs.size() > 2 ? qn.inputs[2] : -1, quantized_type(qn))};
        if (bias >= 0) fused.inputs.push_back(bias);
        replace(i, std::move(fused), q, absorbed);
    }

    // MatMul and Gemm → QLinearMatMul.
    void matmul(size_t i) {
        const Node& n = g.nodes[i];
        const bool gemm = n.op == "Gemm";
        Dequantized a, b;
        if (n.inputs.size() < 2 || !dequantized(g, n.inputs[0], &a) || !dequantized(g, n.inputs[1], &b) ||
            !is_quantized(g, a) || !is_quantized(g, b) || !per_tensor(g, a))
            return;
        const Tensor& bt = tensor_at(g, b.q);
        int32_t b_q = b.q;
        int32_t bias = -1;
        if (gemm) {
            if (n.attrs.get_float("alpha", 1.0f) != 1.0f || n.attrs.get_float("beta", 1.0f) != 1.0f ||
                n.attrs.get_int("transA", 0) != 0 || !is_const(g, b.q) || bt.shape.size() != 2)
                return;
            const bool trans_b = n.attrs.get_int("transB", 0) != 0;
            const int64_t cols = trans_b ? bt.shape[0] : bt.shape[1];
            if (!per_tensor(g, b) && b.axis != (trans_b ? 0 : 1)) return;
            bias = int32_bias(n.inputs.size() > 2 ? n.inputs[2] : -1, a, b, cols);
            if (bias == -2) return;
            if (trans_b) b_q = transposed_bytes(b.q);
        } else if (!per_tensor(g, b) && !(bt.shape.size() == 2 && (b.axis == 1 || b.axis == -1))) {
            return;
        }
        Node fused;
        fused.op = "QLinearMatMul";
        std::vector<int32_t> absorbed;
        const int32_t q = output_quantizer(n.outputs[0], fused.attrs, absorbed, true);
        if (q < 0) return;
        const Node& qn = g.nodes[static_cast<size_t>(q)];
        fused.inputs = {a.q,          a.scale,
                        a.zero_point, b_q,
                        b.scale,      b.zero_point,
                        qn.inputs[1], zero_point_or_zero(qn.inputs.size() > 2 ? qn.inputs[2] : -1, quantized_type(qn))};
        if (bias >= 0) fused.inputs.push_back(bias);
        replace(i, std::move(fused), q, absorbed);
    }

    // A new constant: the 2-D u8/i8 constant t transposed.
    int32_t transposed_bytes(int32_t t) {
        const Tensor& src = tensor_at(g, t);
        const int64_t rows = src.shape[0], cols = src.shape[1];
        std::vector<uint8_t> out(src.data.size());
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c)
                out[static_cast<size_t>(c * rows + r)] = src.data[static_cast<size_t>(r * cols + c)];
        const std::string name = src.name + "_transposed";
        const kes_dtype dtype = src.dtype;
        return g.add_constant(name, dtype, Shape{cols, rows}, out.data());
    }

    // Add, Mul → QLinearAdd, QLinearMul; GlobalAveragePool → QLinearGlobalAveragePool.
    void elementwise(size_t i) {
        const Node& n = g.nodes[i];
        const bool pool = n.op == "GlobalAveragePool";
        if (n.inputs.size() != (pool ? 1u : 2u)) return;
        Dequantized d[2];
        for (size_t k = 0; k < n.inputs.size(); ++k)
            if (!dequantized(g, n.inputs[k], &d[k]) || !is_quantized(g, d[k]) || !per_tensor(g, d[k]) ||
                tensor_at(g, d[k].q).dtype != tensor_at(g, d[0].q).dtype)
                return;
        Node fused;
        fused.op = pool ? "QLinearGlobalAveragePool" : n.op == "Add" ? "QLinearAdd" : "QLinearMul";
        std::vector<int32_t> absorbed;
        const int32_t q = output_quantizer(n.outputs[0], fused.attrs, absorbed, n.op == "Add");
        if (q < 0) return;
        const Node& qn = g.nodes[static_cast<size_t>(q)];
        const kes_dtype dtype = tensor_at(g, d[0].q).dtype;
        if (quantized_type(qn) != dtype) return;
        for (size_t k = 0; k < n.inputs.size(); ++k)
            fused.inputs.insert(fused.inputs.end(), {d[k].q, d[k].scale, d[k].zero_point});
        fused.inputs.insert(fused.inputs.end(),
                            {qn.inputs[1], zero_point_or_zero(qn.inputs.size() > 2 ? qn.inputs[2] : -1, dtype)});
        replace(i, std::move(fused), q, absorbed);
    }

    void concat(size_t i) {
        const Node& n = g.nodes[i];
        if (n.inputs.empty()) return;
        std::vector<Dequantized> d(n.inputs.size());
        for (size_t k = 0; k < n.inputs.size(); ++k)
            if (!dequantized(g, n.inputs[k], &d[k]) || !is_quantized(g, d[k]) || !per_tensor(g, d[k]) ||
                tensor_at(g, d[k].q).dtype != tensor_at(g, d[0].q).dtype)
                return;
        Node fused;
        fused.op = "QLinearConcat";
        fused.attrs.set_int("axis", n.attrs.get_int("axis", 0));
        std::vector<int32_t> absorbed;
        const int32_t q = output_quantizer(n.outputs[0], fused.attrs, absorbed, false);
        if (q < 0) return;
        const Node& qn = g.nodes[static_cast<size_t>(q)];
        const kes_dtype dtype = tensor_at(g, d[0].q).dtype;
        if (quantized_type(qn) != dtype) return;
        fused.inputs = {qn.inputs[1], zero_point_or_zero(qn.inputs.size() > 2 ? qn.inputs[2] : -1, dtype)};
        for (const Dequantized& x : d)
            fused.inputs.insert(fused.inputs.end(), {x.q, x.scale, zero_point_or_zero(x.zero_point, dtype)});
        replace(i, std::move(fused), q, absorbed);
    }

    // Ops that commute with a quantization keeping its scale and zero point (see the top).
    void pass_through(size_t i) {
        const Node& n = g.nodes[i];
        Dequantized x;
        if (n.inputs.empty() || n.outputs.size() != 1 || !dequantized(g, n.inputs[0], &x) || !is_quantized(g, x) ||
            !per_tensor(g, x))
            return;
        const int32_t q = quantizing_reader(g, n.outputs[0]);
        if (q < 0) return;
        const Node& qn = g.nodes[static_cast<size_t>(q)];
        const kes_dtype dtype = tensor_at(g, x.q).dtype;
        const int32_t qzp = qn.inputs.size() > 2 ? qn.inputs[2] : -1;
        if (quantized_type(qn) != dtype) return;
        const bool same_quantization = scalar_f32(g, qn.inputs[1]) == scalar_f32(g, x.scale) &&
                                       zero_point_value(g, qzp) == zero_point_value(g, x.zero_point);
        Node fused = n;
        fused.inputs[0] = x.q;
        if (n.op == "Relu" || n.op == "Clip") {
            const float scale = scalar_f32(g, x.scale);
            const int32_t zp = static_cast<int32_t>(zero_point_value(g, x.zero_point));
            const QuantRange full = quantized_range(dtype);
            float lo = 0.0f, hi = INFINITY;
            if (n.op == "Clip") {
                const int32_t a = n.inputs.size() > 1 ? n.inputs[1] : -1, b = n.inputs.size() > 2 ? n.inputs[2] : -1;
                for (int32_t t : {a, b})
                    if (t >= 0 &&
                        (!is_const(g, t) || tensor_at(g, t).dtype != KES_F32 || tensor_at(g, t).elements() != 1))
                        return;
                lo = a >= 0 ? scalar_f32(g, a) : -INFINITY;
                hi = b >= 0 ? scalar_f32(g, b) : INFINITY;
            }
            fused.op = "Clip";
            fused.inputs = {x.q, quantized_bound(quantize_value(lo, scale, zp, full), dtype),
                            quantized_bound(quantize_value(hi, scale, zp, full), dtype)};
        }
        if (same_quantization) {
            replace(i, std::move(fused), q, {});
            return;
        }
        // A QuantizeLinear to other parameters: the op runs in the input's quantization, then a one-input
        // QLinearConcat requantizes (its table is QuantizeLinear(DequantizeLinear(v)), exactly the float
        // path's arithmetic) in the QuantizeLinear's place.
        if (tensor_at(g, x.q).shape.empty()) return;
        const std::string mid_name = tensor_at(g, n.outputs[0]).name + "_quantized";
        fused.outputs = {g.add_activation(mid_name, dtype)};
        Quant& mid_quant = g.tensors[static_cast<size_t>(fused.outputs[0])].quant;  // the input's quantization
        mid_quant.scale = {scalar_f32(g, x.scale)};
        mid_quant.zero_point = {zero_point_value(g, x.zero_point)};
        Node requant;
        requant.op = "QLinearConcat";
        requant.name = qn.name;
        requant.attrs.set_int("axis", 0);
        requant.inputs = {qn.inputs[1], zero_point_or_zero(qzp, dtype), fused.outputs[0], x.scale,
                          zero_point_or_zero(x.zero_point, dtype)};
        requant.outputs = {qn.outputs[0]};
        try {
            infer_node(g, fused);
            infer_node(g, requant);
        } catch (const Error& e) {
            KES_LOGD("convert", "qdq: %s (%s) stays in f32: %s", n.name.c_str(), n.op.c_str(), e.what());
            return;
        }
        ++fused_ops[fused.op + " + requantization"];
        g.nodes[i] = std::move(fused);
        g.nodes[static_cast<size_t>(q)] = std::move(requant);
    }

    int32_t quantized_bound(int32_t v, kes_dtype dtype) {
        const uint8_t byte = dtype == KES_U8 ? static_cast<uint8_t>(v) : static_cast<uint8_t>(static_cast<int8_t>(v));
        return g.add_constant("qdq_bound_" + std::to_string(zeros++), dtype, Shape{}, &byte);
    }

    void run() {
        // Node indices stay valid: fusions replace a node in place and only mark others dropped.
        for (size_t i = 0; i < g.nodes.size(); ++i) {
            if (drop[i]) continue;
            const std::string& op = g.nodes[i].op;
            if (op == "Conv")
                conv(i);
            else if (op == "MatMul" || op == "Gemm")
                matmul(i);
            else if (op == "Add" || op == "Mul" || op == "GlobalAveragePool")
                elementwise(i);
            else if (op == "Concat")
                concat(i);
            else if (op == "MaxPool" || op == "Relu" || op == "Clip" || op == "Reshape" || op == "Flatten" ||
                     op == "Squeeze" || op == "Unsqueeze" || op == "Transpose")
                pass_through(i);
        }
    }
};

}  // namespace

PassStats fuse_qdq(Graph& g) {
    Pass p(g);
    p.run();
    PassStats stats;
    std::vector<Node> kept;
    for (size_t i = 0; i < g.nodes.size(); ++i)
        if (!p.drop[i]) kept.push_back(std::move(g.nodes[i]));
    stats.nodes_removed = g.nodes.size() - kept.size();
    g.nodes = std::move(kept);
    for (const auto& f : p.fused_ops) stats.nodes_fused += f.second;
    std::string fused_list;
    for (const auto& f : p.fused_ops)
        fused_list += format("%s%s ×%zu", fused_list.empty() ? "" : ", ", f.first.c_str(), f.second);
    // What stays in f32 between a DequantizeLinear and a QuantizeLinear, by op (a DequantizeLinear of
    // constant weights folds into f32 weights afterwards).
    std::map<std::string, size_t> float_ops;
    for (const Node& n : g.nodes) {
        if (n.op == "DequantizeLinear" || n.op == "QuantizeLinear") continue;
        for (int32_t t : n.inputs) {
            const int32_t p_node = t >= 0 ? g.producer(t) : -1;
            if (p_node >= 0 && g.nodes[static_cast<size_t>(p_node)].op == "DequantizeLinear" &&
                !is_const(g, g.nodes[static_cast<size_t>(p_node)].inputs[0])) {
                ++float_ops[n.op];
                break;
            }
        }
    }
    std::string float_list;
    for (const auto& f : float_ops)
        float_list += format("%s%s ×%zu", float_list.empty() ? "" : ", ", f.first.c_str(), f.second);
    if (!fused_list.empty() || !float_list.empty())
        KES_LOGI("convert",
                 "quantized (QDQ) model: fused %s; computed in f32 between DequantizeLinear and QuantizeLinear: %s",
                 fused_list.empty() ? "nothing" : fused_list.c_str(),
                 float_list.empty() ? "nothing" : float_list.c_str());
    return stats;
}

}  // namespace kes::ir
