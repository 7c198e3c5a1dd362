// test_kernels_fast.cpp — every fast kernel against its reference kernel (the oracle), on random shapes:
// odd sizes, stride/pad/dilation/group combinations, channel counts that are not a multiple of any
// vector width, batch > 1, fused activations. Each case runs on every microkernel table this CPU has
// (scalar first: KES_CPU_DISABLE-style fallbacks included), on 1 thread and on 3, and the two must
// give the same bytes. Under qemu (the aarch64 build) the NEON table is the one tested.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "alloc_counter.hpp"
#include "kernels/common/microkernels.hpp"
#include "kernels/select.hpp"
#include "kestrel/memory.h"
#include "op_test_util.hpp"

namespace {

using kes_test::A;
using kes_test::TT;

struct AlignedBuffer {
    void* p = nullptr;
    explicit AlignedBuffer(size_t bytes) { EXPECT_EQ(kes_mem_alloc(KES_MEM_HOST, bytes ? bytes : 128, &p), KES_OK); }
    ~AlignedBuffer() { kes_mem_free(p); }
    uint8_t* data() const { return static_cast<uint8_t*>(p); }
};

struct Pool {
    kes_thread_pool* pool = nullptr;
    Pool() {
        kes_thread_pool_config c;
        kes_thread_pool_config_init(&c);
        c.threads = 3;
        EXPECT_EQ(kes_thread_pool_create(&c, &pool), KES_OK);
    }
    ~Pool() { kes_thread_pool_destroy(pool); }
};

TT random_f32(std::mt19937& rng, kes::Shape shape, bool is_const = false) {
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = d(rng);
    return kes_test::f32(std::move(shape), v, is_const);
}

struct FastRun {
    std::vector<float> one_thread, three_threads;
    std::string impl;
};

// Creates the node's reference kernel, runs it, then offers the node to the fast kernels with each
// table and compares. Returns false (and reports) when no fast kernel took the node.
void expect_fast_matches_reference(const std::string& op, const kes::Attrs& attrs, const std::vector<const TT*>& in,
                                   const std::string& what, float tolerance = 1e-4f) {
    SCOPED_TRACE(op + " " + what);
    const std::vector<TT> ref = kes_test::run_op(op, attrs, in, 1);
    static const std::string node_name = "n0";
    std::vector<kes::TensorDesc> descs(in.size());
    std::vector<const kes::TensorDesc*> ptrs;
    std::vector<const void*> in_ptrs;
    for (size_t i = 0; i < in.size(); ++i) {
        descs[i].dtype = in[i]->dtype;
        descs[i].shape = in[i]->shape;
        descs[i].data = in[i]->is_const ? in[i]->bytes.data() : nullptr;
        ptrs.push_back(&descs[i]);
        in_ptrs.push_back(in[i]->bytes.data());
    }
    kes::NodeDesc node{node_name, op, attrs, ptrs, 1};
    std::vector<kes::TensorDesc> outs;
    kes::create_kernel(*kes::find_op(op), node, outs);
    Pool pool;
    for (const kes::kernels::Microkernels* table : kes::kernels::microkernels_available()) {
        SCOPED_TRACE(table->name);
        kes::kernels::microkernels_override(table);
        std::unique_ptr<kes::Kernel> fast = kes::select_kernel(node, outs);
        kes::kernels::microkernels_override(nullptr);
        ASSERT_NE(fast, nullptr) << "no fast kernel took the node";
        AlignedBuffer packed(fast->packed_bytes());
        fast->pack(packed.data());
        fast->bind_packed(packed.data());
        AlignedBuffer scratch(fast->scratch_bytes(kes::kMaxThreads));
        std::vector<float> y1(static_cast<size_t>(outs[0].elements()), NAN), y3(y1.size(), -NAN);
        void* o1[] = {y1.data()};
        void* o3[] = {y3.data()};
        kes::RunContext serial;
        serial.scratch = scratch.data();
        kes::RunContext threaded{pool.pool, 3, scratch.data(), fast->scratch_bytes(kes::kMaxThreads)};
        kes_test::start_counting();
        fast->run(serial, in_ptrs.data(), o1);
        fast->run(threaded, in_ptrs.data(), o3);
        EXPECT_EQ(kes_test::stop_counting(), 0u) << "run() allocated";
        ASSERT_EQ(std::memcmp(y1.data(), y3.data(), y1.size() * sizeof(float)), 0)
            << "1 and 3 threads differ (" << fast->impl() << ")";
        const std::vector<float> r = ref[0].f();
        ASSERT_EQ(r.size(), y1.size());
        for (size_t i = 0; i < r.size(); ++i)
            ASSERT_LE(std::fabs(r[i] - y1[i]), tolerance * (1.0f + std::fabs(r[i])))
                << "element " << i << ": reference " << r[i] << ", " << fast->impl() << " " << y1[i];
    }
}

const char* const kActivations[] = {"", "Relu", "Relu6", "LeakyRelu", "HardSwish", "Sigmoid"};

TEST(FastKernels, ConvNhwcMatchesReferenceOnRandomShapes) {
    std::mt19937 rng(1234);
    auto pick = [&](std::initializer_list<int64_t> v) { return *(v.begin() + rng() % v.size()); };
    int tested = 0;
    for (int iter = 0; tested < 90 && iter < 1000; ++iter) {
        const int64_t n = pick({1, 1, 2}), h = pick({1, 3, 7, 8, 13}), w = pick({1, 4, 9, 11});
        const int64_t kh = pick({1, 1, 3, 5}), kw = pick({1, 3, 3, 5});
        const int64_t sh = pick({1, 2}), sw = pick({1, 2}), dh = pick({1, 1, 2}), dw = pick({1, 1, 2});
        const int mode = static_cast<int>(rng() % 3);  // 0 dense, 1 grouped, 2 depthwise
        int64_t c = pick({1, 3, 5, 8, 17, 24, 33}), m = pick({1, 2, 7, 16, 19, 32, 40}), group = 1;
        if (mode == 1) {
            group = pick({2, 3});
            c = group * pick({1, 2, 5}), m = group * pick({1, 3, 8});
        } else if (mode == 2) {
            c = m = group = pick({1, 3, 8, 17, 24, 33});
        }
        const int64_t pt = static_cast<int64_t>(rng() % kh), pl = static_cast<int64_t>(rng() % kw);
        const int64_t pb = static_cast<int64_t>(rng() % kh), pr = static_cast<int64_t>(rng() % kw);
        if (h + pt + pb < (kh - 1) * dh + 1 || w + pl + pr < (kw - 1) * dw + 1) continue;
        const TT x = random_f32(rng, {n, h, w, c});
        const TT wt = random_f32(rng, {m, kh, kw, c / group}, true);
        const TT bias = random_f32(rng, {m}, true);
        const bool has_bias = rng() % 4 != 0;
        A attrs;
        attrs.s("data_layout", "NHWC").i("group", group).is("strides", {sh, sw}).is("dilations", {dh, dw});
        attrs.is("pads", {pt, pl, pb, pr});
        const char* act = kActivations[rng() % std::size(kActivations)];
        if (*act) attrs.s("activation", act);
        std::vector<const TT*> in{&x, &wt};
        if (has_bias) in.push_back(&bias);
        const std::string what = "x[" + std::to_string(n) + "," + std::to_string(h) + "," + std::to_string(w) + "," +
                                 std::to_string(c) + "] w[" + std::to_string(m) + "," + std::to_string(kh) + "," +
                                 std::to_string(kw) + "] s" + std::to_string(sh) + std::to_string(sw) + " d" +
                                 std::to_string(dh) + std::to_string(dw) + " g" + std::to_string(group) + " " + act;
        expect_fast_matches_reference("Conv", attrs, in, what);
        if (HasFatalFailure()) return;
        ++tested;
    }
    EXPECT_EQ(tested, 90);
}

TEST(FastKernels, AddAndMulMatchReferenceForEveryBroadcastTheyTake) {
    std::mt19937 rng(99);
    const std::vector<std::pair<kes::Shape, kes::Shape>> cases = {
        {{2, 5, 7, 19}, {2, 5, 7, 19}},  // residual add
        {{1, 6, 6, 33}, {33}},           // per-channel bias
        {{1, 6, 6, 33}, {1, 1, 1, 33}},  // the same, rank-4
        {{3, 4, 5, 17}, {3, 1, 1, 17}},  // squeeze-excite
        {{1, 1, 1, 40}, {1, 1, 1, 40}}, {{7}, {7}},
    };
    for (const auto& [big, small] : cases)
        for (const char* op : {"Add", "Mul"})
            for (bool swap : {false, true})
                for (const char* act : {"", "Relu", "HardSwish"}) {
                    const TT a = random_f32(rng, big), b = random_f32(rng, small);
                    A attrs;
                    if (*act) attrs.s("activation", act);
                    const std::vector<const TT*> in =
                        swap ? std::vector<const TT*>{&b, &a} : std::vector<const TT*>{&a, &b};
                    expect_fast_matches_reference(op, attrs, in,
                                                  kes::shape_string(big) + (swap ? " swapped " : " ") + act, 0.0f);
                    if (HasFatalFailure()) return;
                }
}

TEST(FastKernels, PReluMatchesReferenceWithPerChannelSlopes) {
    std::mt19937 rng(17);
    for (const auto& [x_shape, slope_shape] : std::vector<std::pair<kes::Shape, kes::Shape>>{
             {{1, 7, 9, 33}, {33}}, {{2, 5, 5, 16}, {1, 1, 16}}, {{3, 11}, {3, 11}}, {{1, 4, 4, 8}, {1}}}) {
        const TT x = random_f32(rng, x_shape), slope = random_f32(rng, slope_shape, true);
        expect_fast_matches_reference("PRelu", A{}, {&x, &slope}, kes::shape_string(x_shape), 1e-6f);
        if (HasFatalFailure()) return;
    }
}

TEST(FastKernels, BroadcastsOutsideTheirPatternKeepTheReferenceKernel) {
    std::mt19937 rng(5);
    const TT a = random_f32(rng, {2, 3, 1}), b = random_f32(rng, {2, 1, 4});  // broadcast both ways
    std::vector<kes::TensorDesc> descs(2);
    descs[0].shape = a.shape, descs[1].shape = b.shape;
    const std::string name = "n0", op = "Add";
    const kes::Attrs attrs;
    kes::NodeDesc node{name, op, attrs, {&descs[0], &descs[1]}, 1};
    std::vector<kes::TensorDesc> outs;
    kes::create_kernel(*kes::find_op(op), node, outs);
    EXPECT_EQ(kes::select_kernel(node, outs), nullptr);
}

TEST(FastKernels, MaxPoolNhwcMatchesReference) {
    std::mt19937 rng(7);
    for (int iter = 0; iter < 40; ++iter) {
        const int64_t n = 1 + rng() % 2, h = 1 + rng() % 12, w = 1 + rng() % 12, c = 1 + rng() % 37;
        const int64_t k = 1 + rng() % 3, s = 1 + rng() % 2, p = static_cast<int64_t>(rng() % k);
        if (h + 2 * p < k || w + 2 * p < k) continue;
        const TT x = random_f32(rng, {n, h, w, c});
        A attrs;
        attrs.s("data_layout", "NHWC").is("kernel_shape", {k, k}).is("strides", {s, s}).is("pads", {p, p, p, p});
        attrs.i("ceil_mode", static_cast<int64_t>(rng() % 2));
        expect_fast_matches_reference("MaxPool", attrs, {&x}, "k" + std::to_string(k) + " s" + std::to_string(s), 0.0f);
        if (HasFatalFailure()) return;
    }
}

TEST(FastKernels, NchwConvKeepsTheReferenceKernel) {
    std::mt19937 rng(3);
    const TT x = random_f32(rng, {1, 3, 5, 5}), w = random_f32(rng, {4, 3, 3, 3}, true);
    std::vector<kes::TensorDesc> descs(2);
    descs[0].shape = x.shape;
    descs[1].shape = w.shape, descs[1].data = w.bytes.data();
    const std::string name = "n0", op = "Conv";
    const kes::Attrs attrs;
    kes::NodeDesc node{name, op, attrs, {&descs[0], &descs[1]}, 1};
    std::vector<kes::TensorDesc> outs;
    kes::create_kernel(*kes::find_op(op), node, outs);
    EXPECT_EQ(kes::select_kernel(node, outs), nullptr);
}

}  // namespace
