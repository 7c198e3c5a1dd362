// fast_kernel_test_util.hpp — what the fast-kernel tests (test_kernels_fast.cpp, test_fusion_dwpw.cpp)
// share: a node built over test tensors as select_kernel sees it, random inputs, aligned buffers for
// packed weights and scratch, and a 3-thread pool.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kestrel/memory.h"
#include "kestrel/thread_pool.h"
#include "op_test_util.hpp"

namespace kes_test {

// 128-byte aligned engine memory (packed weights, scratch), freed on scope exit.
struct AlignedBuffer {
    void* p = nullptr;
    explicit AlignedBuffer(size_t bytes) { EXPECT_EQ(kes_mem_alloc(KES_MEM_HOST, bytes ? bytes : 128, &p), KES_OK); }
    ~AlignedBuffer() { kes_mem_free(p); }
    AlignedBuffer(const AlignedBuffer&) = delete;
    AlignedBuffer& operator=(const AlignedBuffer&) = delete;
    uint8_t* data() const { return static_cast<uint8_t*>(p); }
};

// A pool of 3 threads: the thread count the tests compare with 1.
struct ThreePool {
    kes_thread_pool* pool = nullptr;
    ThreePool() {
        kes_thread_pool_config c;
        kes_thread_pool_config_init(&c);
        c.threads = 3;
        EXPECT_EQ(kes_thread_pool_create(&c, &pool), KES_OK);
    }
    ~ThreePool() { kes_thread_pool_destroy(pool); }
    ThreePool(const ThreePool&) = delete;
    ThreePool& operator=(const ThreePool&) = delete;
};

// Uniform values in [-range, range].
inline TT random_f32(std::mt19937& rng, kes::Shape shape, bool is_const = false, float range = 1.0f) {
    std::uniform_real_distribution<float> d(-range, range);
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = d(rng);
    return f32(std::move(shape), v, is_const);
}

// A node over test tensors, as the executor gives it to select_kernel: constants' bytes visible, an
// omitted optional input a null descriptor; its reference kernel is created, which fills `outs`.
struct TestNode {
    std::string op;    // NodeDesc keeps references to the name, op and attributes:
    kes::Attrs attrs;  // a copy, so a temporary Attrs{} argument does not dangle (select_kernel reads them)
    std::vector<kes::TensorDesc> descs;
    std::vector<const kes::TensorDesc*> ptrs;
    std::vector<const void*> data;  // each input's bytes, for Kernel::run
    std::vector<kes::TensorDesc> outs;
    std::unique_ptr<kes::NodeDesc> node;
    TestNode(const std::string& op_name, const kes::Attrs& attrs_in, const std::vector<const TT*>& in,
             size_t outputs = 1)
        : op(op_name), attrs(attrs_in), descs(in.size()) {
        static const std::string name = "n0";
        for (size_t i = 0; i < in.size(); ++i) {
            if (!in[i]) {
                ptrs.push_back(nullptr);
                data.push_back(nullptr);
                continue;
            }
            descs[i].dtype = in[i]->dtype;
            descs[i].shape = in[i]->shape;
            descs[i].data = in[i]->is_const ? in[i]->bytes.data() : nullptr;
            ptrs.push_back(&descs[i]);
            data.push_back(in[i]->bytes.data());
        }
        node = std::make_unique<kes::NodeDesc>(kes::NodeDesc{name, op, attrs, ptrs, outputs});
        kes::create_kernel(*kes::find_op(op), *node, outs);
    }
};

}  // namespace kes_test
