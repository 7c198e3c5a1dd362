// shape_inference.cpp — ir::infer_shapes: every op's create() is its shape inference (op.hpp), so the
// converter and the loader can never disagree about a shape.
#include "kes/error.hpp"
#include "passes.hpp"

namespace kes::ir {

void require_input_shapes(const Graph& g) {
    for (int32_t t : g.inputs) {
        const Tensor& in = g.tensors[static_cast<size_t>(t)];
        bool known = in.has_shape;
        for (int64_t d : in.shape) known = known && d >= 0;
        if (!known)
            fail(KES_ERR_INVALID_ARGUMENT, "graph input '%s' has an unknown shape %s: give it (--input-shape)",
                 in.name.c_str(), shape_string(in.shape).c_str());
    }
}

std::unique_ptr<Kernel> infer_node(Graph& g, const Node& n) {
    const OpDef* def = find_op(n.op);
    if (!def) fail(KES_ERR_UNSUPPORTED, "node %s: op '%s' is not supported by Kestrel", n.name.c_str(), n.op.c_str());
    std::vector<TensorDesc> descs(n.inputs.size()), outs;
    NodeDesc nd{n.name, n.op, n.attrs, {}, n.outputs.size()};
    for (size_t i = 0; i < n.inputs.size(); ++i) {
        const int32_t t = n.inputs[i];
        if (t < 0) {
            nd.inputs.push_back(nullptr);
            continue;
        }
        const Tensor& in = g.tensors[static_cast<size_t>(t)];
        if (!in.has_shape)
            fail(KES_ERR_INTERNAL, "node %s: input '%s' has no shape after its producer", n.name.c_str(),
                 in.name.c_str());
        descs[i] = in.desc();
        nd.inputs.push_back(&descs[i]);
    }
    std::unique_ptr<Kernel> kernel = create_kernel(*def, nd, outs);
    for (size_t i = 0; i < n.outputs.size(); ++i) {
        Tensor& out = g.tensors[static_cast<size_t>(n.outputs[i])];
        out.dtype = outs[i].dtype;
        out.shape = outs[i].shape;
        out.has_shape = true;
        if (out.quant.empty()) out.quant = outs[i].quant;
    }
    return kernel;
}

void infer_shapes(Graph& g) {
    g.toposort();
    require_input_shapes(g);
    for (const Node& n : g.nodes) infer_node(g, n);
}

}  // namespace kes::ir
