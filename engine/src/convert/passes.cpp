// passes.cpp — constant folding and dead-node removal (passes.hpp).
//
// Choices:
// - fold_constants infers shapes as it goes (each node's create() sees the values folded before it), so
//   it also works on a graph infer_shapes would refuse: a Reshape fed by Shape → Gather → Concat only
//   gets its constant shape input by folding. convert.cpp therefore runs it first.
// - Folding runs each foldable node's own kernel (op registry, create_kernel + run), so a folded value
//   is exactly what the executor would have computed.
// - Shape and Size fold from a known input shape even though their input is not constant; that is
//   what makes Shape → Gather → Concat → Reshape chains disappear. With gears the shape is folded at
//   the largest gear; convert.cpp folds every other gear too and refuses a graph whose folded values
//   differ between gears (kestrel/convert.h "Gears").
// - A node producing a graph output is never folded: graph outputs stay computed by a node (the
//   executor writes outputs from nodes), and a model whose inputs were all frozen still runs its last
//   op.
// - Folding stops growing the constants past max_folded_bytes (e.g. a ConstantOfShape of a huge
//   shape stays a node and runs at execution time instead of bloating the file).
#include <algorithm>
#include <cstring>

#include "kes/error.hpp"
#include "passes.hpp"

namespace kes::ir {

namespace {

bool shape_known(const Tensor& t) {
    if (!t.has_shape) return false;
    for (int64_t d : t.shape)
        if (d < 0) return false;
    return true;
}

// Shape (opset 15 start/end) and Size of a known shape.
bool fold_shape_node(Graph& g, const Node& n) {
    if (n.inputs.empty() || n.inputs[0] < 0 || n.outputs.size() != 1) return false;
    const Tensor& x = g.tensors[static_cast<size_t>(n.inputs[0])];
    if (!shape_known(x)) return false;
    Tensor& out = g.tensors[static_cast<size_t>(n.outputs[0])];
    std::vector<int64_t> values;
    if (n.op == "Size") {
        values.push_back(shape_elements(x.shape));
        out.shape = {};
    } else {
        const int64_t rank = static_cast<int64_t>(x.shape.size());
        int64_t start = n.attrs.get_int("start", 0), end = n.attrs.get_int("end", rank);
        if (start < 0) start += rank;
        if (end < 0) end += rank;
        start = std::min(std::max<int64_t>(start, 0), rank);
        end = std::min(std::max<int64_t>(end, 0), rank);
        for (int64_t i = start; i < end; ++i) values.push_back(x.shape[static_cast<size_t>(i)]);
        out.shape = {static_cast<int64_t>(values.size())};
    }
    out.dtype = KES_I64;
    out.has_shape = true;
    out.is_const = true;
    out.data.resize(values.size() * sizeof(int64_t));
    if (!values.empty()) std::memcpy(out.data.data(), values.data(), out.data.size());
    return true;
}

}  // namespace

PassStats fold_constants(Graph& g, size_t max_folded_bytes, bool keep_quantized) {
    PassStats stats;
    g.toposort();
    require_input_shapes(g);
    size_t folded_bytes = 0;
    std::vector<Node> kept;
    kept.reserve(g.nodes.size());
    std::vector<const void*> in_ptrs;
    std::vector<void*> out_ptrs;
    for (Node& n : g.nodes) {
        bool produces_output = false;
        for (int32_t o : n.outputs) produces_output = produces_output || g.is_graph_output(o);
        if (!produces_output && (n.op == "Shape" || n.op == "Size") && fold_shape_node(g, n)) {
            ++stats.nodes_folded;
            continue;
        }
        bool all_const = !n.inputs.empty();
        for (int32_t t : n.inputs)
            if (t >= 0 && !g.tensors[static_cast<size_t>(t)].is_const) all_const = false;
        if (std::all_of(n.inputs.begin(), n.inputs.end(), [](int32_t t) { return t < 0; })) all_const = false;
        if (keep_quantized && n.op == "DequantizeLinear") all_const = false;
        // Shape inference of this node, with every value folded so far visible to it.
        std::unique_ptr<Kernel> kernel = infer_node(g, n);
        size_t bytes = 0;
        for (int32_t o : n.outputs) bytes += g.tensors[static_cast<size_t>(o)].desc().bytes();
        if (!all_const || produces_output || folded_bytes + bytes > max_folded_bytes) {
            kept.push_back(std::move(n));
            continue;
        }
        folded_bytes += bytes;
        for (int32_t o : n.outputs) {
            Tensor& out = g.tensors[static_cast<size_t>(o)];
            out.data.assign(out.desc().bytes(), 0);
        }
        in_ptrs.assign(n.inputs.size(), nullptr);
        for (size_t i = 0; i < n.inputs.size(); ++i)
            if (n.inputs[i] >= 0) in_ptrs[i] = g.tensors[static_cast<size_t>(n.inputs[i])].data.data();
        out_ptrs.clear();
        for (int32_t o : n.outputs) out_ptrs.push_back(g.tensors[static_cast<size_t>(o)].data.data());
        try {
            kernel->run(in_ptrs.data(), out_ptrs.data());
        } catch (const Error& e) {
            throw Error(e.status(),
                        format("constant folding: node %s (%s): %s", n.name.c_str(), n.op.c_str(), e.what()));
        }
        for (int32_t o : n.outputs) g.tensors[static_cast<size_t>(o)].is_const = true;
        ++stats.nodes_folded;
    }
    stats.nodes_removed = g.nodes.size() - kept.size();
    g.nodes = std::move(kept);
    g.compact();
    return stats;
}

PassStats remove_noop_casts(Graph& g) {
    PassStats stats;
    std::vector<char> drop(g.nodes.size(), 0);
    // to[t]: the tensor that stands for t (itself unless a dropped Cast joined the two); chains of Casts
    // resolve through the Casts before them (nodes are in topological order).
    std::vector<int32_t> to(g.tensors.size());
    for (size_t t = 0; t < to.size(); ++t) to[t] = static_cast<int32_t>(t);
    auto resolve = [&](int32_t t) {
        while (to[static_cast<size_t>(t)] != t) t = to[static_cast<size_t>(t)];
        return t;
    };
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const Node& n = g.nodes[i];
        if (n.op != "Cast" || n.inputs.size() != 1 || n.outputs.size() != 1 || n.inputs[0] < 0) continue;
        const int32_t in = resolve(n.inputs[0]), out = n.outputs[0];
        const Tensor &x = g.tensors[static_cast<size_t>(in)], &y = g.tensors[static_cast<size_t>(out)];
        if (x.dtype != y.dtype || !x.quant.empty() || !y.quant.empty()) continue;
        if (!g.is_graph_output(out)) {
            to[static_cast<size_t>(out)] = in;
        } else if (g.producer(in) >= 0 && !g.is_graph_output(in)) {
            to[static_cast<size_t>(in)] = out;  // the producer writes the graph output under its name
        } else {
            continue;  // a graph input or output copied into a graph output: the copy is the node
        }
        drop[i] = 1;
        ++stats.nodes_removed;
    }
    if (stats.nodes_removed == 0) return stats;
    std::vector<Node> kept;
    kept.reserve(g.nodes.size() - stats.nodes_removed);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        if (drop[i]) continue;
        Node& n = kept.emplace_back(std::move(g.nodes[i]));
        for (int32_t& t : n.inputs)
            if (t >= 0) t = resolve(t);
        for (int32_t& t : n.outputs) t = resolve(t);
    }
    g.nodes = std::move(kept);
    g.compact();
    return stats;
}

PassStats remove_dead_nodes(Graph& g) {
    PassStats stats;
    g.toposort();
    std::vector<char> live(g.tensors.size(), 0);
    for (int32_t t : g.outputs) live[static_cast<size_t>(t)] = 1;
    std::vector<char> keep(g.nodes.size(), 0);
    for (size_t i = g.nodes.size(); i-- > 0;) {  // nodes are in topological order
        const Node& n = g.nodes[i];
        bool needed = false;
        for (int32_t o : n.outputs) needed = needed || live[static_cast<size_t>(o)];
        if (!needed) continue;
        keep[i] = 1;
        for (int32_t t : n.inputs)
            if (t >= 0) live[static_cast<size_t>(t)] = 1;
    }
    std::vector<Node> kept;
    for (size_t i = 0; i < g.nodes.size(); ++i)
        if (keep[i]) kept.push_back(std::move(g.nodes[i]));
    stats.nodes_removed = g.nodes.size() - kept.size();
    g.nodes = std::move(kept);
    g.compact();
    return stats;
}

}  // namespace kes::ir
