#include "ir.hpp"

#include <algorithm>
#include <cstring>

#include "kes/error.hpp"

namespace kes::ir {

int64_t Tensor::elements() const {
    return shape_elements(shape);
}

TensorDesc Tensor::desc() const {
    TensorDesc d;
    d.dtype = dtype;
    d.shape = shape;
    d.quant = quant;
    d.data = is_const ? static_cast<const void*>(data.data()) : nullptr;
    // An empty constant still counts as constant: give it a non-null address.
    if (is_const && data.empty()) d.data = this;
    return d;
}

int32_t Graph::add_tensor(Tensor t) {
    tensors.push_back(std::move(t));
    return static_cast<int32_t>(tensors.size() - 1);
}

int32_t Graph::add_activation(std::string name, kes_dtype dtype, Shape shape, bool known) {
    Tensor t;
    t.name = std::move(name);
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.has_shape = known;
    return add_tensor(std::move(t));
}

int32_t Graph::add_constant(std::string name, kes_dtype dtype, Shape shape, const void* bytes) {
    Tensor t;
    t.name = std::move(name);
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.has_shape = true;
    t.is_const = true;
    const size_t size = static_cast<size_t>(shape_elements(t.shape)) * kes_dtype_size(dtype);
    t.data.resize(size);
    if (size) std::memcpy(t.data.data(), bytes, size);
    return add_tensor(std::move(t));
}

int32_t Graph::add_constant_f32(std::string name, Shape shape, const std::vector<float>& values) {
    KES_REQUIRE(shape_elements(shape) == static_cast<int64_t>(values.size()), "constant %s: %zu values for shape %s",
                name.c_str(), values.size(), shape_string(shape).c_str());
    return add_constant(std::move(name), KES_F32, std::move(shape), values.data());
}

int32_t Graph::add_constant_i64(std::string name, Shape shape, const std::vector<int64_t>& values) {
    KES_REQUIRE(shape_elements(shape) == static_cast<int64_t>(values.size()), "constant %s: %zu values for shape %s",
                name.c_str(), values.size(), shape_string(shape).c_str());
    return add_constant(std::move(name), KES_I64, std::move(shape), values.data());
}

Node& Graph::add_node(std::string op, std::vector<int32_t> ins, std::vector<int32_t> outs, std::string name) {
    Node n;
    n.op = std::move(op);
    n.inputs = std::move(ins);
    n.outputs = std::move(outs);
    n.name = name.empty() ? n.op + "_" + std::to_string(nodes.size()) : std::move(name);
    nodes.push_back(std::move(n));
    return nodes.back();
}

int32_t Graph::find_tensor(const std::string& name) const {
    for (size_t i = 0; i < tensors.size(); ++i)
        if (tensors[i].name == name) return static_cast<int32_t>(i);
    return -1;
}

int32_t Graph::producer(int32_t t) const {
    for (size_t i = 0; i < nodes.size(); ++i)
        for (int32_t o : nodes[i].outputs)
            if (o == t) return static_cast<int32_t>(i);
    return -1;
}

std::vector<int32_t> Graph::consumers(int32_t t) const {
    std::vector<int32_t> out;
    for (size_t i = 0; i < nodes.size(); ++i)
        if (std::find(nodes[i].inputs.begin(), nodes[i].inputs.end(), t) != nodes[i].inputs.end())
            out.push_back(static_cast<int32_t>(i));
    return out;
}

bool Graph::is_graph_output(int32_t t) const {
    return std::find(outputs.begin(), outputs.end(), t) != outputs.end();
}

void Graph::toposort() {
    const size_t nt = tensors.size();
    std::vector<char> ready(nt, 0);
    for (size_t t = 0; t < nt; ++t)
        if (tensors[t].is_const) ready[t] = 1;
    for (int32_t t : inputs) {
        KES_REQUIRE(t >= 0 && static_cast<size_t>(t) < nt, "graph input index %d out of range", t);
        ready[static_cast<size_t>(t)] = 1;
    }
    std::vector<Node> sorted;
    sorted.reserve(nodes.size());
    std::vector<char> done(nodes.size(), 0);
    size_t remaining = nodes.size();
    while (remaining > 0) {
        bool progress = false;
        for (size_t i = 0; i < nodes.size(); ++i) {
            if (done[i]) continue;
            bool ok = true;
            for (int32_t t : nodes[i].inputs) {
                if (t < 0) continue;
                KES_REQUIRE(static_cast<size_t>(t) < nt, "node %s input index %d out of range", nodes[i].name.c_str(),
                            t);
                if (!ready[static_cast<size_t>(t)]) {
                    ok = false;
                    break;
                }
            }
            if (!ok) continue;
            for (int32_t t : nodes[i].outputs) {
                KES_REQUIRE(t >= 0 && static_cast<size_t>(t) < nt, "node %s output index %d out of range",
                            nodes[i].name.c_str(), t);
                ready[static_cast<size_t>(t)] = 1;
            }
            done[i] = 1;
            sorted.push_back(std::move(nodes[i]));
            --remaining;
            progress = true;
        }
        if (!progress) {
            for (size_t i = 0; i < nodes.size(); ++i) {
                if (done[i]) continue;
                for (int32_t t : nodes[i].inputs)
                    if (t >= 0 && !ready[static_cast<size_t>(t)])
                        fail(KES_ERR_INVALID_ARGUMENT,
                             "graph: node %s reads tensor '%s', which no node produces (or a cycle)",
                             nodes[i].name.c_str(), tensors[static_cast<size_t>(t)].name.c_str());
            }
            fail(KES_ERR_INVALID_ARGUMENT, "graph: cycle");
        }
    }
    nodes = std::move(sorted);
}

void Graph::compact() {
    const size_t nt = tensors.size();
    std::vector<char> used(nt, 0);
    for (int32_t t : inputs) used[static_cast<size_t>(t)] = 1;
    for (int32_t t : outputs) used[static_cast<size_t>(t)] = 1;
    for (const InputAipp& a : aipp)
        if (a.input >= 0) used[static_cast<size_t>(a.input)] = 1;
    for (const ImageInput& a : image_inputs)
        if (a.input >= 0) used[static_cast<size_t>(a.input)] = 1;
    for (const Node& n : nodes) {
        for (int32_t t : n.inputs)
            if (t >= 0) used[static_cast<size_t>(t)] = 1;
        for (int32_t t : n.outputs) used[static_cast<size_t>(t)] = 1;
    }
    std::vector<int32_t> remap(nt, -1);
    std::vector<Tensor> kept;
    for (size_t t = 0; t < nt; ++t) {
        if (!used[t]) continue;
        remap[t] = static_cast<int32_t>(kept.size());
        kept.push_back(std::move(tensors[t]));
    }
    tensors = std::move(kept);
    auto fix = [&](int32_t& t) {
        if (t >= 0) t = remap[static_cast<size_t>(t)];
    };
    for (int32_t& t : inputs) fix(t);
    for (int32_t& t : outputs) fix(t);
    for (InputAipp& a : aipp) fix(a.input);
    for (ImageInput& a : image_inputs) fix(a.input);
    for (Node& n : nodes) {
        for (int32_t& t : n.inputs) fix(t);
        for (int32_t& t : n.outputs) fix(t);
    }
}

}  // namespace kes::ir
