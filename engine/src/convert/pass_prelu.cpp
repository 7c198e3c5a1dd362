// pass_prelu.cpp — relu(x) + c·(x − |x|) → PRelu(x, 2c), relu(x) + c·(−relu(−x)) → PRelu(x, c)
// (pass_prelu.hpp).
#include "pass_prelu.hpp"

#include <algorithm>
#include <cstring>

#include "kes/error.hpp"

namespace kes::ir {

namespace {

struct Matcher {
    Graph& g;
    std::vector<int32_t> producer;        // tensor → node index, -1
    std::vector<int32_t> consumer_count;  // tensor → number of node inputs reading it

    explicit Matcher(Graph& graph) : g(graph) {
        producer.assign(g.tensors.size(), -1);
        consumer_count.assign(g.tensors.size(), 0);
        for (size_t i = 0; i < g.nodes.size(); ++i) {
            for (int32_t t : g.nodes[i].outputs)
                if (t >= 0) producer[static_cast<size_t>(t)] = static_cast<int32_t>(i);
            for (int32_t t : g.nodes[i].inputs)
                if (t >= 0) ++consumer_count[static_cast<size_t>(t)];
        }
    }

    // The node producing t when it is `op` with no fused activation, t its only output, read by
    // exactly one node and not a graph output; else nullptr.
    const Node* private_producer(int32_t t, const char* op) const {
        if (t < 0 || static_cast<size_t>(t) >= producer.size()) return nullptr;
        const int32_t p = producer[static_cast<size_t>(t)];
        if (p < 0 || consumer_count[static_cast<size_t>(t)] != 1 || g.is_graph_output(t)) return nullptr;
        const Node& n = g.nodes[static_cast<size_t>(p)];
        if (n.op != op || n.outputs.size() != 1 || n.attrs.has("activation")) return nullptr;
        return &n;
    }

    const Tensor* f32_const(int32_t t) const {
        if (t < 0) return nullptr;
        const Tensor& c = g.tensors[static_cast<size_t>(t)];
        return c.is_const && c.dtype == KES_F32 && c.has_shape ? &c : nullptr;
    }
};

std::vector<float> floats_of(const Tensor& t) {
    std::vector<float> v(t.data.size() / sizeof(float));
    if (!v.empty()) std::memcpy(v.data(), t.data.data(), v.size() * sizeof(float));
    return v;
}

}  // namespace

PassStats fuse_prelu_pattern(Graph& g) {
    PassStats stats;
    std::vector<char> remove(g.nodes.size(), 0);
    std::vector<Node> added;
    Matcher m(g);
    for (size_t ai = 0; ai < g.nodes.size(); ++ai) {
        const Node& add = g.nodes[ai];
        if (add.op != "Add" || add.inputs.size() != 2 || add.outputs.size() != 1 || add.attrs.has("activation"))
            continue;
        for (int side = 0; side < 2; ++side) {
            const Node* relu = m.private_producer(add.inputs[static_cast<size_t>(side)], "Relu");
            if (!relu || relu->inputs.size() != 1) continue;
            const int32_t x = relu->inputs[0];
            // Right branch: Mul(c, sub) optionally wrapped in Mul(·, k).
            const Node* mul = m.private_producer(add.inputs[static_cast<size_t>(1 - side)], "Mul");
            if (!mul || mul->inputs.size() != 2) continue;
            float extra = 1.0f;
            const Node* scale_mul = nullptr;
            auto split_mul = [&](const Node* n, const Tensor*& c, int32_t& other) {
                for (int k = 0; k < 2; ++k) {
                    if (const Tensor* t = m.f32_const(n->inputs[static_cast<size_t>(k)])) {
                        c = t;
                        other = n->inputs[static_cast<size_t>(1 - k)];
                        return true;
                    }
                }
                return false;
            };
            const Tensor* c = nullptr;
            int32_t other = -1;
            if (!split_mul(mul, c, other)) continue;
            float sign = 0.0f;
            std::vector<const Node*> matched;  // the pattern's nodes besides relu, mul and the Add
            // TFLite MTCNN spells it relu(x) + c · (−relu(−x)) = relu(x) + c · min(x, 0): slope c.
            if (const Node* neg_out = m.private_producer(other, "Neg")) {
                const Node* relu_neg =
                    neg_out->inputs.size() == 1 ? m.private_producer(neg_out->inputs[0], "Relu") : nullptr;
                const Node* neg_in =
                    relu_neg && relu_neg->inputs.size() == 1 ? m.private_producer(relu_neg->inputs[0], "Neg") : nullptr;
                if (!neg_in || neg_in->inputs.size() != 1 || neg_in->inputs[0] != x) continue;
                sign = 1.0f;
                matched = {neg_out, relu_neg, neg_in};
            } else {
                const Node* sub = m.private_producer(other, "Sub");
                if (!sub) {
                    // Maybe mul is the scalar k around Mul(c, sub).
                    if (c->elements() != 1) continue;
                    const Node* inner = m.private_producer(other, "Mul");
                    if (!inner || inner->inputs.size() != 2) continue;
                    extra = floats_of(*c)[0];
                    scale_mul = mul;
                    mul = inner;
                    if (!split_mul(mul, c, other)) continue;
                    sub = m.private_producer(other, "Sub");
                    if (!sub) continue;
                }
                if (sub->inputs.size() != 2) continue;
                const Node* abs;
                if (sub->inputs[0] == x && (abs = m.private_producer(sub->inputs[1], "Abs"))) {
                    sign = 2.0f;
                } else if (sub->inputs[1] == x && (abs = m.private_producer(sub->inputs[0], "Abs"))) {
                    sign = -2.0f;
                } else {
                    continue;
                }
                if (abs->inputs.size() != 1 || abs->inputs[0] != x) continue;
                matched = {abs, sub};
            }
            const Tensor& xt = g.tensors[static_cast<size_t>(x)];
            if (!xt.has_shape || xt.dtype != KES_F32) continue;
            // The slope must broadcast onto x without growing it (PRelu broadcasts one way only).
            bool fits = c->shape.size() <= xt.shape.size();
            for (size_t d = 0; fits && d < c->shape.size(); ++d) {
                const int64_t cd = c->shape[c->shape.size() - 1 - d], xd = xt.shape[xt.shape.size() - 1 - d];
                fits = cd == 1 || cd == xd;
            }
            if (!fits) continue;

            std::vector<float> slope = floats_of(*c);
            for (float& s : slope) s *= sign * extra;
            const int32_t slope_t =
                g.add_constant_f32(add.name + "/prelu_slope", c->shape, slope);  // may reallocate tensors
            Node prelu;
            prelu.name = add.name;
            prelu.op = "PRelu";
            prelu.inputs = {x, slope_t};
            prelu.outputs = add.outputs;
            added.push_back(std::move(prelu));
            matched.push_back(relu);
            matched.push_back(mul);
            if (scale_mul) matched.push_back(scale_mul);
            for (const Node* n : matched) remove[static_cast<size_t>(n - g.nodes.data())] = 1;
            remove[ai] = 1;
            stats.nodes_fused += static_cast<uint32_t>(matched.size() + 1);
            break;
        }
        // Tensors may have grown; the matcher indexes by tensor, so extend it.
        m.producer.resize(g.tensors.size(), -1);
        m.consumer_count.resize(g.tensors.size(), 0);
    }
    if (added.empty()) return stats;
    std::vector<Node> kept;
    kept.reserve(g.nodes.size());
    size_t next = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        if (!remove[i]) {
            kept.push_back(std::move(g.nodes[i]));
        } else if (next < added.size() && added[next].outputs == g.nodes[i].outputs) {
            kept.push_back(std::move(added[next++]));  // the PRelu takes its Add's place
        }
    }
    g.nodes = std::move(kept);
    g.compact();
    return stats;
}

}  // namespace kes::ir
