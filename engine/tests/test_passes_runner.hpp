// test_passes_runner.hpp — runs an ir::Graph through the reference kernels (op registry) without
// writing a .kom, so each converter pass can be checked by comparing a graph's outputs before and
// after it.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "convert/ir.hpp"
#include "convert/passes.hpp"
#include "kes/error.hpp"

namespace kes_test {

// Runs g (shapes inferred here) on f32 inputs, in g.inputs order; returns the f32 outputs.
inline std::vector<std::vector<float>> run_graph(kes::ir::Graph g, const std::vector<std::vector<float>>& inputs) {
    using namespace kes;
    ir::infer_shapes(g);
    std::vector<std::vector<uint8_t>> buf(g.tensors.size());
    for (size_t t = 0; t < g.tensors.size(); ++t) {
        const ir::Tensor& x = g.tensors[t];
        if (x.is_const)
            buf[t] = x.data;
        else
            buf[t].assign(static_cast<size_t>(x.elements()) * kes_dtype_size(x.dtype) + 1, 0);
    }
    if (inputs.size() != g.inputs.size()) throw Error(KES_ERR_INVALID_ARGUMENT, "run_graph: input count");
    for (size_t i = 0; i < inputs.size(); ++i) {
        std::vector<uint8_t>& b = buf[static_cast<size_t>(g.inputs[i])];
        if (b.size() != inputs[i].size() * 4 + 1) throw Error(KES_ERR_INVALID_ARGUMENT, "run_graph: input size");
        std::memcpy(b.data(), inputs[i].data(), inputs[i].size() * 4);
    }
    std::vector<TensorDesc> descs, outs;
    for (const ir::Node& n : g.nodes) {
        descs.assign(n.inputs.size(), TensorDesc{});
        NodeDesc nd{n.name, n.op, n.attrs, {}, n.outputs.size()};
        std::vector<const void*> ins;
        for (size_t i = 0; i < n.inputs.size(); ++i) {
            if (n.inputs[i] < 0) {
                nd.inputs.push_back(nullptr);
                ins.push_back(nullptr);
                continue;
            }
            descs[i] = g.tensors[static_cast<size_t>(n.inputs[i])].desc();
            nd.inputs.push_back(&descs[i]);
            ins.push_back(buf[static_cast<size_t>(n.inputs[i])].data());
        }
        const std::unique_ptr<Kernel> k = create_kernel(*find_op(n.op), nd, outs);
        std::vector<void*> o;
        for (int32_t t : n.outputs) o.push_back(buf[static_cast<size_t>(t)].data());
        k->run(ins.data(), o.data());
    }
    std::vector<std::vector<float>> result;
    for (int32_t t : g.outputs) {
        const ir::Tensor& x = g.tensors[static_cast<size_t>(t)];
        std::vector<float> v(static_cast<size_t>(x.elements()));
        if (x.dtype == KES_F32) {
            std::memcpy(v.data(), buf[static_cast<size_t>(t)].data(), v.size() * 4);
        } else if (x.dtype == KES_I64) {
            for (size_t i = 0; i < v.size(); ++i) {
                int64_t q;
                std::memcpy(&q, buf[static_cast<size_t>(t)].data() + i * 8, 8);
                v[i] = static_cast<float>(q);
            }
        } else {
            throw Error(KES_ERR_UNSUPPORTED, "run_graph: output dtype");
        }
        result.push_back(std::move(v));
    }
    return result;
}

inline void expect_close(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b,
                         float atol = 1e-4f, float rtol = 1e-4f) {
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        ASSERT_EQ(a[i].size(), b[i].size()) << "output " << i;
        for (size_t j = 0; j < a[i].size(); ++j)
            ASSERT_NEAR(a[i][j], b[i][j], atol + rtol * std::fabs(b[i][j])) << "output " << i << " element " << j;
    }
}

}  // namespace kes_test
