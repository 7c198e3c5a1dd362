// test_fusion_dwpw.cpp — the fused depthwise → pointwise kernel (kernels::fuse_depthwise_pointwise) and
// the CPU executor's use of it. The kernel: on random shapes (odd sizes, channel counts off every vector
// width, 3×3 and 5×5, strides, pads, dilation, batch 2, residual, activations), on every microkernel
// table and on 1 and 3 threads, it gives the bytes of the two fast kernels run apart, and the reference
// kernels' values within their tolerance. The executor: a dw→pw chain fuses, a depthwise output with two
// readers or that is a graph output does not, the arena shrinks by the intermediates, an observer sees
// every node (the pair then runs apart, to the same bytes), and executing allocates nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "alloc_counter.hpp"
#include "fast_kernel_test_util.hpp"
#include "kernels/common/kernels.hpp"
#include "kernels/common/microkernels.hpp"
#include "kernels/select.hpp"
#include "kestrel/engine.h"
#include "kestrel/memory.h"
#include "model.hpp"
#include "op_test_util.hpp"
#include "test_kom_run.hpp"
#include "test_onnx_builder.hpp"

namespace {

using kes_test::A;
using kes_test::TT;

using kes_test::random_f32;
using Buffer = kes_test::AlignedBuffer;
using Pool = kes_test::ThreePool;
using Node = kes_test::TestNode;

const char* const kActivations[] = {"", "Relu", "Relu6", "HardSwish", "Sigmoid"};

TEST(FusionDwPw, FusedKernelGivesTheUnfusedBytesOnEveryTableAndThreadCount) {
    std::mt19937 rng(4321);
    auto pick = [&](std::initializer_list<int64_t> v) { return *(v.begin() + rng() % v.size()); };
    Pool pool;
    int tested = 0;
    for (int iter = 0; tested < 60 && iter < 1000; ++iter) {
        const int64_t n = pick({1, 1, 2}), h = pick({1, 5, 7, 13, 20}), w = pick({1, 3, 9, 11, 16});
        const int64_t k = pick({3, 3, 5}), s = pick({1, 1, 2}), d = pick({1, 1, 2});
        const int64_t c = pick({1, 3, 17, 24, 40}), m = pick({1, 3, 16, 24, 33});
        const int64_t pt = static_cast<int64_t>(rng() % k), pl = static_cast<int64_t>(rng() % k);
        const int64_t pb = static_cast<int64_t>(rng() % k), pr = static_cast<int64_t>(rng() % k);
        const int64_t reach = (k - 1) * d + 1;
        if (h + pt + pb < reach || w + pl + pr < reach) continue;
        if (c == 1 && m == 1) continue;  // a 1×1 conv of one channel is depthwise itself: nothing to fuse into
        const int64_t oh = (h + pt + pb - reach) / s + 1, ow = (w + pl + pr - reach) / s + 1;
        const TT x = random_f32(rng, {n, h, w, c});
        const TT wd = random_f32(rng, {c, k, k, 1}, true), bd = random_f32(rng, {c}, true);
        const TT wp = random_f32(rng, {m, 1, 1, c}, true), bp = random_f32(rng, {m}, true);
        const TT sum = random_f32(rng, {n, oh, ow, m});
        A da, pa;
        da.s("data_layout", "NHWC").i("group", c).is("strides", {s, s}).is("dilations", {d, d});
        da.is("pads", {pt, pl, pb, pr});
        pa.s("data_layout", "NHWC").i("group", 1);
        const char* dact = kActivations[rng() % std::size(kActivations)];
        const char* pact = kActivations[rng() % std::size(kActivations)];
        if (*dact) da.s("activation", dact);
        if (*pact) pa.s("activation", pact);
        const bool has_sum = rng() % 2 == 0, pw_bias = rng() % 4 != 0;
        std::vector<const TT*> pin{nullptr, &wp};
        if (pw_bias || has_sum) pin.push_back(pw_bias ? &bp : nullptr);
        if (has_sum) pin.push_back(&sum);
        const std::string what = "x[" + std::to_string(n) + "," + std::to_string(h) + "," + std::to_string(w) + "," +
                                 std::to_string(c) + "] k" + std::to_string(k) + " s" + std::to_string(s) + " d" +
                                 std::to_string(d) + " m" + std::to_string(m) + " " + dact + "/" + pact +
                                 (has_sum ? " +residual" : "");
        SCOPED_TRACE(what);

        // The oracle: the reference kernels, one after the other.
        const TT ref_mid = kes_test::run1("Conv", da, {&x, &wd, &bd});
        std::vector<const TT*> ref_in = pin;
        ref_in[0] = &ref_mid;
        const std::vector<float> ref = kes_test::run1("Conv", pa, ref_in).f();

        Node dn("Conv", da, {&x, &wd, &bd});
        TT mid_desc;  // the pointwise node's input 0: the depthwise output's shape
        mid_desc.shape = dn.outs[0].shape;
        pin[0] = &mid_desc;
        Node pn("Conv", pa, pin);
        for (const kes::kernels::Microkernels* table : kes::kernels::microkernels_available()) {
            SCOPED_TRACE(table->name);
            std::unique_ptr<kes::Kernel> dk = kes::select_kernel(*dn.node, dn.outs, *table);
            std::unique_ptr<kes::Kernel> pk = kes::select_kernel(*pn.node, pn.outs, *table);
            ASSERT_TRUE(dk && pk);
            Buffer dpack(dk->packed_bytes()), ppack(pk->packed_bytes());
            dk->pack(dpack.data()), dk->bind_packed(dpack.data());
            pk->pack(ppack.data()), pk->bind_packed(ppack.data());
            std::unique_ptr<kes::Kernel> fk = kes::kernels::fuse_depthwise_pointwise(*dk, *pk);
            if (std::string(pk->impl()).rfind("conv1x1-", 0) == 0) {
                // Images smaller than a tile run their 1×1 conv as one Gemm (gemm.cpp), which does not fuse.
                EXPECT_EQ(fk, nullptr) << pk->impl();
                continue;
            }
            ASSERT_NE(fk, nullptr) << dk->impl() << " → " << pk->impl();
            EXPECT_EQ(std::string(fk->impl()), std::string("dwconv+igemm-") + table->name);
            const size_t scratch_bytes =
                std::max({dk->scratch_bytes(kes::kMaxThreads), pk->scratch_bytes(kes::kMaxThreads),
                          fk->scratch_bytes(kes::kMaxThreads)});
            Buffer scratch(scratch_bytes);
            std::vector<float> mid(static_cast<size_t>(dn.outs[0].elements()), NAN);
            std::vector<float> apart(static_cast<size_t>(pn.outs[0].elements()), NAN), y1(apart.size(), -NAN),
                y3(apart.size(), NAN);
            const void* din[] = {x.bytes.data(), nullptr, nullptr};
            void* dout[] = {mid.data()};
            std::vector<const void*> pin_ptrs{mid.data(), nullptr, nullptr, sum.bytes.data()};
            void* pout[] = {apart.data()};
            kes::RunContext serial;
            serial.scratch = scratch.data();
            serial.scratch_size = scratch_bytes;
            const kes::RunContext threaded{pool.pool, 3, scratch.data(), scratch_bytes};
            dk->run(serial, din, dout);
            pk->run(serial, pin_ptrs.data(), pout);
            std::vector<const void*> fin = pin_ptrs;
            fin[0] = x.bytes.data();  // the fused kernel reads the depthwise input
            void* o1[] = {y1.data()};
            void* o3[] = {y3.data()};
            kes_test::start_counting();
            fk->run(serial, fin.data(), o1);
            fk->run(threaded, fin.data(), o3);
            EXPECT_EQ(kes_test::stop_counting(), 0u) << "run() allocated";
            ASSERT_EQ(std::memcmp(y1.data(), apart.data(), y1.size() * sizeof(float)), 0) << "fused and unfused differ";
            ASSERT_EQ(std::memcmp(y1.data(), y3.data(), y1.size() * sizeof(float)), 0) << "1 and 3 threads differ";
            ASSERT_EQ(ref.size(), y1.size());
            for (size_t i = 0; i < ref.size(); ++i)
                ASSERT_LE(std::fabs(ref[i] - y1[i]), 1e-4f * (1.0f + std::fabs(ref[i])))
                    << "element " << i << ": reference " << ref[i] << ", fused " << y1[i];
        }
        if (HasFatalFailure()) return;
        ++tested;
    }
    EXPECT_EQ(tested, 60);
}

TEST(FusionDwPw, OnlyADepthwiseConvFeedingAPlainPointwiseConvFuses) {
    std::mt19937 rng(7);
    const TT x = random_f32(rng, {1, 9, 9, 8});
    const TT wd = random_f32(rng, {8, 3, 3, 1}, true), wp = random_f32(rng, {8, 1, 1, 8}, true);
    const TT w3 = random_f32(rng, {8, 3, 3, 8}, true), wg = random_f32(rng, {8, 1, 1, 4}, true);
    A da, pa, strided, grouped, dense;
    da.s("data_layout", "NHWC").i("group", 8).is("pads", {1, 1, 1, 1});
    pa.s("data_layout", "NHWC");
    strided.s("data_layout", "NHWC").is("strides", {2, 2});
    grouped.s("data_layout", "NHWC").i("group", 2);
    dense.s("data_layout", "NHWC").is("pads", {1, 1, 1, 1});
    const kes::kernels::Microkernels& mk = kes::kernels::microkernels_active();
    Node dn("Conv", da, {&x, &wd}), pn("Conv", pa, {&x, &wp}), sn("Conv", strided, {&x, &wp});
    Node gn("Conv", grouped, {&x, &wg}), cn("Conv", dense, {&x, &w3});
    auto k = [&](Node& nd) { return kes::select_kernel(*nd.node, nd.outs, mk); };
    EXPECT_NE(kes::kernels::fuse_depthwise_pointwise(*k(dn), *k(pn)), nullptr);
    EXPECT_EQ(kes::kernels::fuse_depthwise_pointwise(*k(dn), *k(sn)), nullptr) << "strided 1×1";
    EXPECT_EQ(kes::kernels::fuse_depthwise_pointwise(*k(dn), *k(gn)), nullptr) << "grouped 1×1";
    EXPECT_EQ(kes::kernels::fuse_depthwise_pointwise(*k(dn), *k(cn)), nullptr) << "3×3 consumer";
    EXPECT_EQ(kes::kernels::fuse_depthwise_pointwise(*k(cn), *k(pn)), nullptr) << "dense producer";
    const kes_test::Created ref = kes_test::create_op("Conv", da, {&x, &wd}, 1);
    EXPECT_EQ(kes::kernels::fuse_depthwise_pointwise(*ref.kernel, *k(pn)), nullptr) << "reference producer";
}

// ---- the executor ---------------------------------------------------------------------------------

using namespace kes_test;

std::vector<float> ramp(size_t n, float scale, float phase) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * static_cast<float>(i) + phase);
    return v;
}

// x [1,C,H,W] (NCHW; the converter's layout pass runs the convs NHWC):
//   dwA → pwA (+x, Relu) = a                 fuses
//   dwB(a) = b, read by pwB and by Add(b, ·)  two readers: stays apart
//   dwC(pB) = c, a graph output, read by pwC  stays apart
//   dwD(pC) 5×5 stride 2 → pwD (C → 2C) = y   fuses
// Big enough that leaving an intermediate out of the arena saves more than the fused kernel's tiles take.
constexpr int64_t kC = 12, kH = 125, kW = 131;

std::vector<uint8_t> chain_onnx() {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {1, kC, kH, kW}));
    const int64_t oh = (kH + 4 - 5) / 2 + 1, ow = (kW + 4 - 5) / 2 + 1;
    s.outputs.push_back(value_info("y", kFloat, {1, 2 * kC, oh, ow}));
    s.outputs.push_back(value_info("c", kFloat, {1, kC, kH, kW}));
    float phase = 0.1f;
    auto dw = [&](const std::string& in, const std::string& out, int64_t k, int64_t stride) {
        const std::string w = out + "_w", b = out + "_b";
        s.initializers.push_back(
            tensor_f32(w, {kC, 1, k, k}, ramp(static_cast<size_t>(kC * k * k), 0.4f, phase += 0.3f)));
        s.initializers.push_back(tensor_f32(b, {kC}, ramp(kC, 0.1f, phase += 0.3f)));
        const int64_t p = k / 2;
        s.nodes.push_back(node("Conv", {in, w, b}, {out},
                               {attr_int("group", kC), attr_ints("pads", {p, p, p, p}),
                                attr_ints("strides", {stride, stride}), attr_ints("kernel_shape", {k, k})},
                               out));
    };
    auto pw = [&](const std::string& in, const std::string& out, int64_t m) {
        const std::string w = out + "_w", b = out + "_b";
        s.initializers.push_back(tensor_f32(w, {m, kC, 1, 1}, ramp(static_cast<size_t>(m * kC), 0.3f, phase += 0.3f)));
        s.initializers.push_back(tensor_f32(b, {m}, ramp(static_cast<size_t>(m), 0.1f, phase += 0.3f)));
        s.nodes.push_back(node("Conv", {in, w, b}, {out}, {}, out));
    };
    dw("x", "dA", 3, 1);
    pw("dA", "pA", kC);
    s.nodes.push_back(node("Add", {"pA", "x"}, {"sA"}, {}, "addA"));
    s.nodes.push_back(node("Relu", {"sA"}, {"a"}, {}, "reluA"));
    dw("a", "b", 3, 1);
    pw("b", "pB", kC);
    s.nodes.push_back(node("Add", {"pB", "b"}, {"sB"}, {}, "addB"));
    dw("sB", "c", 3, 1);
    pw("c", "pC", kC);
    dw("pC", "dD", 5, 2);
    pw("dD", "y", 2 * kC);
    return onnx_model(s);
}

struct Observed {
    std::vector<std::string> names;  // every output tensor the observer saw, in order
};

void observe(size_t, const char*, const char* const* output_names, kes_tensor*, size_t count, void* user) {
    for (size_t k = 0; k < count; ++k) static_cast<Observed*>(user)->names.push_back(output_names[k]);
}

const char* impl_of(kes_model_context* ctx, const kes_model* model, const std::string& name) {
    size_t layers = 0;
    EXPECT_EQ(kes_model_layer_count(model, &layers), KES_OK);
    for (size_t i = 0; i < layers; ++i) {
        kes_model_layer_profile p;
        p.struct_size = sizeof p;
        EXPECT_EQ(kes_model_context_layer_profile(ctx, i, &p), KES_OK);
        if (name == p.name) return p.impl;
    }
    return "(no such layer)";
}

TEST(FusionDwPw, ExecutorFusesOnlySingleReaderIntermediatesAndShrinksTheArena) {
    const std::vector<uint8_t> kom = convert_bytes(chain_onnx(), nullptr);
    const kes::ModelInfo file = kes::parse_kom(kom.data(), kom.size());
    Loaded m(kom);
    ASSERT_NE(m.ctx, nullptr);
    ASSERT_EQ(kes_model_context_set_profiling(m.ctx, 1), KES_OK);
    const std::vector<float> input = sine_input(static_cast<size_t>(kC * kH * kW), 1.0f, 0.0f);
    const std::vector<std::vector<float>> fused = run(m.ctx, 2, input);

    const bool fast = std::string(kes::kernel_set_name()) != "reference";
    if (fast) {
        const std::string table = kes::kernels::microkernels_active().name;
        EXPECT_EQ(std::string(impl_of(m.ctx, m.model, "dA")), "fused into pA");
        EXPECT_EQ(std::string(impl_of(m.ctx, m.model, "pA")), "dwconv+igemm-" + table);
        EXPECT_EQ(std::string(impl_of(m.ctx, m.model, "b")), "dwconv-" + table) << "two readers";
        EXPECT_EQ(std::string(impl_of(m.ctx, m.model, "c")), "dwconv-" + table) << "a graph output";
        EXPECT_EQ(std::string(impl_of(m.ctx, m.model, "dD")), "fused into y");
        EXPECT_EQ(std::string(impl_of(m.ctx, m.model, "y")), "dwconv+igemm-" + table);
        // dA and dD live in no arena: the plan shrinks below the file's.
        size_t arena = 0, ideal = 0;
        ASSERT_EQ(kes_model_get_memory_plan(m.model, &arena, &ideal), KES_OK);
        EXPECT_LT(arena, file.arena_size);
        EXPECT_LE(ideal, arena);
    }

    // Executing allocates nothing, fused or (with an observer) apart.
    const std::vector<float> alloc_probe = input;  // allocated before counting
    std::vector<kes_tensor> outs(2);
    std::vector<std::vector<float>> observed(2);
    for (size_t i = 0; i < 2; ++i) {
        ASSERT_EQ(kes_model_context_output_desc(m.ctx, i, &outs[i]), KES_OK);
        observed[i].assign(outs[i].size / sizeof(float), NAN);
        outs[i].data = observed[i].data();
    }
    kes_tensor in;
    ASSERT_EQ(kes_model_context_input_desc(m.ctx, 0, &in), KES_OK);
    in.data = const_cast<float*>(alloc_probe.data());
    kes_test::start_counting_all_threads();
    ASSERT_EQ(kes_model_execute(m.ctx, &in, 1, outs.data(), 2), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_test::stop_counting_all_threads(), 0u);

    // An observer sees every node's output; the pair then runs apart, to the same bytes.
    Observed seen;
    ASSERT_EQ(kes_model_context_set_observer(m.ctx, observe, &seen), KES_OK) << kes_last_error();
    seen.names.reserve(64);
    for (auto& o : observed) std::fill(o.begin(), o.end(), NAN);
    kes_test::start_counting_all_threads();
    ASSERT_EQ(kes_model_execute(m.ctx, &in, 1, outs.data(), 2), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_test::stop_counting_all_threads(), 0u);
    size_t layers = 0;
    ASSERT_EQ(kes_model_layer_count(m.model, &layers), KES_OK);
    EXPECT_EQ(seen.names.size(), layers);  // the layout pass's tensors are named <tensor>_nhwc
    EXPECT_NE(std::find(seen.names.begin(), seen.names.end(), "dA_nhwc"), seen.names.end());
    EXPECT_NE(std::find(seen.names.begin(), seen.names.end(), "dD_nhwc"), seen.names.end());
    if (fast) {
        EXPECT_EQ(std::string(impl_of(m.ctx, m.model, "dA")),
                  "dwconv-" + std::string(kes::kernels::microkernels_active().name));
    }
    for (size_t i = 0; i < 2; ++i)
        ASSERT_EQ(std::memcmp(observed[i].data(), fused[i].data(), fused[i].size() * sizeof(float)), 0)
            << "output " << i << ": observed (apart) and fused runs differ";

    // Removing the observer fuses again; 1 and 3 threads give the same bytes.
    ASSERT_EQ(kes_model_context_set_observer(m.ctx, nullptr, nullptr), KES_OK);
    kes_model_context_config cfg;
    kes_model_context_config_init(&cfg);
    cfg.threads = 3;
    kes_model_context* ctx3 = nullptr;
    ASSERT_EQ(kes_model_context_create_with_config(m.model, nullptr, 0, &cfg, &ctx3), KES_OK) << kes_last_error();
    const std::vector<std::vector<float>> three = run(ctx3, 2, input);
    kes_model_context_destroy(ctx3);
    for (size_t i = 0; i < 2; ++i)
        EXPECT_EQ(std::memcmp(three[i].data(), fused[i].data(), fused[i].size() * sizeof(float)), 0) << i;
}

// Fusion must not cost memory: here the arena's peak is the wide tensor before the pair, so leaving the
// pair's intermediate out saves nothing while the fused kernel's tiles would add scratch: it stays apart.
TEST(FusionDwPw, APairThatWouldGrowTheWorkMemoryStaysApart) {
    constexpr int64_t c = 12, h = 64, w = 64, wide = 8 * c;
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {1, c, h, w}));
    s.outputs.push_back(value_info("y", kFloat, {1, c, h, w}));
    auto conv = [&](const std::string& in, const std::string& out, int64_t cin, int64_t cout, int64_t group,
                    int64_t k) {
        const std::string wt = out + "_w", b = out + "_b";
        s.initializers.push_back(tensor_f32(wt, {cout, cin / group, k, k},
                                            ramp(static_cast<size_t>(cout * (cin / group) * k * k), 0.2f, 0.5f)));
        s.initializers.push_back(tensor_f32(b, {cout}, ramp(static_cast<size_t>(cout), 0.1f, 0.7f)));
        const int64_t p = k / 2;
        s.nodes.push_back(
            node("Conv", {in, wt, b}, {out},
                 {attr_int("group", group), attr_ints("pads", {p, p, p, p}), attr_ints("kernel_shape", {k, k})}, out));
    };
    conv("x", "widen", c, wide, 1, 1);  // the peak: x and this 1.5 MB tensor
    conv("widen", "narrow", wide, c, 1, 1);
    conv("narrow", "d", c, c, c, 3);  // depthwise
    conv("d", "y", c, c, 1, 1);       // pointwise: would fuse on its own
    const std::vector<uint8_t> kom = convert_bytes(onnx_model(s), nullptr);
    const kes::ModelInfo file = kes::parse_kom(kom.data(), kom.size());
    Loaded m(kom);
    ASSERT_NE(m.ctx, nullptr);
    ASSERT_EQ(kes_model_context_set_profiling(m.ctx, 1), KES_OK);
    const std::vector<float> input = sine_input(static_cast<size_t>(c * h * w), 1.0f, 0.0f);
    run(m.ctx, 1, input);
    size_t arena = 0, ideal = 0;
    ASSERT_EQ(kes_model_get_memory_plan(m.model, &arena, &ideal), KES_OK);
    EXPECT_EQ(arena, file.arena_size);
    if (std::string(kes::kernel_set_name()) != "reference") {
        EXPECT_EQ(std::string(impl_of(m.ctx, m.model, "d")),
                  "dwconv-" + std::string(kes::kernels::microkernels_active().name));
    }
}

// Batch gears: every gear fuses (one plan for all), and each gear's result is the batch-1 result per image.
TEST(FusionDwPw, BatchGearsFuseAndAgreeWithBatchOne) {
    OnnxGraphSpec s;
    s.inputs.push_back(value_info("x", kFloat, {-1, kC, kH, kW}));
    s.outputs.push_back(value_info("y", kFloat, {-1, kC, kH, kW}));
    s.initializers.push_back(tensor_f32("wd", {kC, 1, 3, 3}, ramp(kC * 9, 0.4f, 0.2f)));
    s.initializers.push_back(tensor_f32("wp", {kC, kC, 1, 1}, ramp(kC * kC, 0.3f, 0.5f)));
    s.nodes.push_back(node("Conv", {"x", "wd"}, {"d"}, {attr_int("group", kC), attr_ints("pads", {1, 1, 1, 1})}, "d"));
    // Residual blocks, so that an intermediate is live beside the block's input and leaving it out of
    // the arena saves memory (else fusion stays off: APairThatWouldGrowTheWorkMemoryStaysApart).
    s.nodes.push_back(node("Conv", {"d", "wp"}, {"p"}, {}, "p"));
    s.nodes.push_back(node("Add", {"p", "x"}, {"s"}, {}, "s"));
    s.nodes.push_back(
        node("Conv", {"s", "wd"}, {"d2"}, {attr_int("group", kC), attr_ints("pads", {1, 1, 1, 1})}, "d2"));
    s.nodes.push_back(node("Conv", {"d2", "wp"}, {"y0"}, {}, "y0"));
    s.nodes.push_back(node("Add", {"y0", "s"}, {"y"}, {}, "y"));
    const std::vector<uint8_t> kom = convert_bytes(onnx_model(s), nullptr, nullptr, "1,2");
    Loaded m(kom);
    ASSERT_NE(m.ctx, nullptr);
    const size_t image = static_cast<size_t>(kC * kH * kW);
    const std::vector<float> in2 = sine_input(2 * image, 1.0f, 0.0f);
    const std::vector<float> y2 = run(m.ctx, 1, in2)[0];
    ASSERT_EQ(kes_model_context_set_batch(m.ctx, 1), KES_OK);
    for (size_t b = 0; b < 2; ++b) {
        const std::vector<float> one(in2.begin() + static_cast<std::ptrdiff_t>(b * image),
                                     in2.begin() + static_cast<std::ptrdiff_t>((b + 1) * image));
        const std::vector<float> y1 = run(m.ctx, 1, one)[0];
        ASSERT_EQ(y1.size(), image);
        EXPECT_EQ(std::memcmp(y1.data(), y2.data() + b * image, image * sizeof(float)), 0) << "image " << b;
    }
    ASSERT_EQ(kes_model_context_set_profiling(m.ctx, 1), KES_OK);
    run(m.ctx, 1, std::vector<float>(in2.begin(), in2.begin() + static_cast<std::ptrdiff_t>(image)));
    if (std::string(kes::kernel_set_name()) != "reference") {
        EXPECT_EQ(std::string(impl_of(m.ctx, m.model, "d2")), "fused into y0");
    }
}

}  // namespace
