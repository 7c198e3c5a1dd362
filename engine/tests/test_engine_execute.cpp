// The CPU executor against double-precision references computed here, with no allocation per run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "alloc_counter.hpp"
#include "kes/struct_size.hpp"
#include "kestrel/engine.h"
#include "kestrel/trace.h"
#include "kom_generated.h"
#include "struct_size_check.hpp"
#include "test_models.hpp"

namespace {

struct ModelHandle {
    kes_model* model = nullptr;
    kes_model_context* ctx = nullptr;
    explicit ModelHandle(const kes::ir::KomImage& img) {
        EXPECT_EQ(kes_model_load_from_memory(img.bytes.data(), img.bytes.size(), &model), KES_OK) << kes_last_error();
        EXPECT_EQ(kes_model_context_create(model, nullptr, 0, &ctx), KES_OK) << kes_last_error();
    }
    ~ModelHandle() {
        kes_model_context_destroy(ctx);
        kes_model_unload(model);
    }
};

kes_tensor wrap(std::vector<float>& v, std::vector<int64_t> shape, kes_layout layout = KES_LAYOUT_ND) {
    kes_tensor t;
    EXPECT_EQ(kes_tensor_wrap(&t, KES_F32, layout, static_cast<uint32_t>(shape.size()), shape.data(), v.data(),
                              v.size() * sizeof(float)),
              KES_OK)
        << kes_last_error();
    return t;
}

// Double-precision NHWC/OHWI convolution.
std::vector<double> conv_ref(const std::vector<float>& x, int64_t H, int64_t W, int64_t C, const std::vector<float>& f,
                             int64_t CO, int64_t KH, int64_t KW, const kes_test::ConvParams& a, const float* bias,
                             int64_t OH, int64_t OW) {
    std::vector<double> out(static_cast<size_t>(OH * OW * CO));
    for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow)
            for (int64_t co = 0; co < CO; ++co) {
                double acc = bias ? bias[co] : 0.0;
                for (int64_t kh = 0; kh < KH; ++kh)
                    for (int64_t kw = 0; kw < KW; ++kw) {
                        const int64_t ih = oh * a.stride_h - a.pad_top + kh * a.dilation_h;
                        const int64_t iw = ow * a.stride_w - a.pad_left + kw * a.dilation_w;
                        if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                        for (int64_t c = 0; c < C; ++c)
                            acc += double{x[static_cast<size_t>((ih * W + iw) * C + c)]} *
                                   f[static_cast<size_t>(((co * KH + kh) * KW + kw) * C + c)];
                    }
                if (a.relu) acc = std::max(acc, 0.0);
                out[static_cast<size_t>((oh * OW + ow) * CO + co)] = acc;
            }
    return out;
}

}  // namespace

TEST(EngineExecute, ConvReluAddMatchesDoubleReference) {
    const kes_test::ConvReluAdd g;
    ModelHandle h(g.build());
    std::vector<float> x = kes_test::wave(g.H * g.W * g.C, 1.5f, 0.1f), y(g.OH * g.OW * g.CO, -99.0f);
    kes_tensor in = wrap(x, {1, g.H, g.W, g.C}, KES_LAYOUT_NHWC);
    kes_tensor out = wrap(y, {1, g.OH, g.OW, g.CO}, KES_LAYOUT_NHWC);
    ASSERT_EQ(kes_model_execute(h.ctx, &in, 1, &out, 1), KES_OK) << kes_last_error();

    const auto a = conv_ref(x, g.H, g.W, g.C, g.filter_a, g.CO, 3, 3, g.conv_a, g.bias_a.data(), g.OH, g.OW);
    const auto s = conv_ref(x, g.H, g.W, g.C, g.filter_b, g.CO, 1, 3, g.conv_b, nullptr, g.OH, g.OW);
    for (size_t i = 0; i < y.size(); ++i) {
        const double want = std::max(a[i], 0.0) + s[i] + g.beta[i % g.CO];
        EXPECT_NEAR(y[i], want, 1e-5 * (1 + std::fabs(want))) << "element " << i;
    }
}

TEST(EngineExecute, PreluPatternMatchesDoubleReference) {
    const kes_test::Prelu g;
    ModelHandle h(g.build());
    std::vector<float> x = kes_test::wave(24, 2.0f, 0.0f), y(24);
    kes_tensor in = wrap(x, {2, 3, 4}), out = wrap(y, {2, 3, 4});
    ASSERT_EQ(kes_model_execute(h.ctx, &in, 1, &out, 1), KES_OK) << kes_last_error();
    for (size_t i = 0; i < y.size(); ++i) {
        const double v = x[i];
        const double want = std::max(v, 0.0) + g.alpha[i % 4] * (v - std::fabs(v));
        EXPECT_NEAR(y[i], want, 1e-6) << "element " << i;
        EXPECT_NEAR(y[i], v > 0 ? v : 2 * g.alpha[i % 4] * v, 1e-6);  // PReLU with slope 2·alpha
    }
}

TEST(EngineExecute, ReshapeFullyConnectedMatMul) {
    const kes_test::Dense g;
    for (bool alias : {true, false}) {
        const kes::ir::KomImage img = g.build(alias);
        ModelHandle h(img);
        std::vector<float> x = kes_test::wave(24, 1.0f, 0.0f), y(12), flat(24);
        kes_tensor in = wrap(x, {2, 3, 4});
        kes_tensor outs[2] = {wrap(y, {6, 2}), wrap(flat, {6, 4})};
        ASSERT_EQ(kes_model_execute(h.ctx, &in, 1, outs, 2), KES_OK) << kes_last_error();
        EXPECT_EQ(flat, x);
        for (int m = 0; m < 6; ++m)
            for (int n = 0; n < 2; ++n) {
                double acc = 0;
                for (int k = 0; k < 5; ++k) {
                    double hk = g.bias[k];
                    for (int j = 0; j < 4; ++j) hk += double{x[m * 4 + j]} * g.w[k * 4 + j];
                    acc += std::max(hk, 0.0) * g.bmat[k * 2 + n];
                }
                EXPECT_NEAR(y[m * 2 + n], acc, 1e-5) << m << "," << n;
            }
    }
    // Aliased, the reshape's output shares its input's arena bytes (tensor 0 is x, tensor 2 flat).
    for (bool alias : {true, false}) {
        const kes::ir::KomImage img = g.build(alias);
        const auto* offsets = kes::kom::GetModel(img.bytes.data())->plan()->tensor_offsets();
        EXPECT_EQ(offsets->Get(0) == offsets->Get(2), alias);
    }
}

// Issue 5 §3: models run one after another may share one work buffer (aclmdl models sharing a
// workspace). Two different models loaded on one buffer sized for the larger, executed alternately,
// give what each gives on its own memory: nothing one leaves in the arena is read by the other.
TEST(EngineExecute, ModelsRunOneAfterAnotherShareOneWorkBuffer) {
    const kes_test::ConvReluAdd conv;
    const kes_test::Dense dense;
    const kes::ir::KomImage a = conv.build(), b = dense.build();
    size_t work_a = 0, work_b = 0, weights_a = 0, weights_b = 0;
    ASSERT_EQ(kes_model_query_size(a.bytes.data(), a.bytes.size(), &work_a, &weights_a), KES_OK);
    ASSERT_EQ(kes_model_query_size(b.bytes.data(), b.bytes.size(), &work_b, &weights_b), KES_OK);
    kes_mem_pool_config cfg;
    kes_mem_pool_config_init(&cfg);
    cfg.initial_bytes = 1 << 20;
    kes_mem_pool* pool = nullptr;
    ASSERT_EQ(kes_mem_pool_create(&cfg, &pool), KES_OK);
    const size_t shared_bytes = std::max(work_a, work_b);
    void* shared = nullptr;
    ASSERT_EQ(kes_mem_pool_alloc(pool, shared_bytes, &shared), KES_OK);
    kes_model *ma = nullptr, *mb = nullptr;
    ASSERT_EQ(
        kes_model_load_from_memory_with_mem(a.bytes.data(), a.bytes.size(), shared, shared_bytes, nullptr, 0, &ma),
        KES_OK)
        << kes_last_error();
    ASSERT_EQ(
        kes_model_load_from_memory_with_mem(b.bytes.data(), b.bytes.size(), shared, shared_bytes, nullptr, 0, &mb),
        KES_OK)
        << kes_last_error();
    kes_model_context *ca = nullptr, *cb = nullptr;
    ASSERT_EQ(kes_model_context_create(ma, nullptr, 0, &ca), KES_OK);
    ASSERT_EQ(kes_model_context_create(mb, nullptr, 0, &cb), KES_OK);

    ModelHandle own_a(a), own_b(b);  // references on their own arenas
    std::vector<float> xa = kes_test::wave(conv.H * conv.W * conv.C, 1.0f, 0.0f);
    std::vector<float> xb = kes_test::wave(2 * 3 * 4, 0.5f, 0.1f);
    auto run_a = [&](kes_model_context* ctx) {
        std::vector<float> y(conv.OH * conv.OW * conv.CO);
        kes_tensor in = wrap(xa, {1, conv.H, conv.W, conv.C}, KES_LAYOUT_NHWC);
        kes_tensor out = wrap(y, {1, conv.OH, conv.OW, conv.CO}, KES_LAYOUT_NHWC);
        EXPECT_EQ(kes_model_execute(ctx, &in, 1, &out, 1), KES_OK) << kes_last_error();
        return y;
    };
    auto run_b = [&](kes_model_context* ctx) {
        std::vector<float> y(6 * 2), flat(6 * 4);
        kes_tensor in = wrap(xb, {2, 3, 4});
        kes_tensor outs[2] = {wrap(y, {6, 2}), wrap(flat, {6, 4})};
        EXPECT_EQ(kes_model_execute(ctx, &in, 1, outs, 2), KES_OK) << kes_last_error();
        y.insert(y.end(), flat.begin(), flat.end());
        return y;
    };
    const std::vector<float> want_a = run_a(own_a.ctx), want_b = run_b(own_b.ctx);
    for (int round = 0; round < 3; ++round) {
        EXPECT_EQ(run_a(ca), want_a) << "round " << round;
        EXPECT_EQ(run_b(cb), want_b) << "round " << round;
    }
    kes_model_context_destroy(ca);
    kes_model_context_destroy(cb);
    kes_model_unload(ma);
    kes_model_unload(mb);
    kes_mem_pool_free(pool, shared);
    kes_mem_pool_destroy(pool);
}

TEST(EngineExecute, ExecuteAllocatesNothing) {
    const kes_test::ConvReluAdd g;
    const kes::ir::KomImage img = g.build();
    // Caller memory from a pool, as on the board.
    kes_mem_pool_config cfg;
    kes_mem_pool_config_init(&cfg);
    cfg.initial_bytes = 1 << 20;
    kes_mem_pool* pool = nullptr;
    ASSERT_EQ(kes_mem_pool_create(&cfg, &pool), KES_OK);
    size_t work_bytes = 0, weight_bytes = 0;
    ASSERT_EQ(kes_model_query_size(img.bytes.data(), img.bytes.size(), &work_bytes, &weight_bytes), KES_OK);
    void *work = nullptr, *weights = nullptr;
    ASSERT_EQ(kes_mem_pool_alloc(pool, work_bytes, &work), KES_OK);
    ASSERT_EQ(kes_mem_pool_alloc(pool, weight_bytes, &weights), KES_OK);
    kes_model* model = nullptr;
    ASSERT_EQ(kes_model_load_from_memory_with_mem(img.bytes.data(), img.bytes.size(), work, work_bytes, weights,
                                                  weight_bytes, &model),
              KES_OK)
        << kes_last_error();
    kes_model_context* ctx = nullptr;
    ASSERT_EQ(kes_model_context_create(model, nullptr, 0, &ctx), KES_OK);
    std::vector<float> x = kes_test::wave(g.H * g.W * g.C, 1.0f, 0.0f), y(g.OH * g.OW * g.CO);
    kes_tensor in = wrap(x, {1, g.H, g.W, g.C}, KES_LAYOUT_NHWC);
    kes_tensor out = wrap(y, {1, g.OH, g.OW, g.CO}, KES_LAYOUT_NHWC);
    kes_mem_pool_stats before, after;
    ASSERT_EQ(kes_mem_pool_get_stats(pool, &before), KES_OK);

    kes_test::start_counting();
    kes_status st = KES_OK;
    for (int i = 0; i < 10 && st == KES_OK; ++i) st = kes_model_execute(ctx, &in, 1, &out, 1);
    const uint64_t allocations = kes_test::stop_counting();
    ASSERT_EQ(st, KES_OK) << kes_last_error();
    EXPECT_EQ(allocations, 0u);
    ASSERT_EQ(kes_mem_pool_get_stats(pool, &after), KES_OK);
    EXPECT_EQ(after.total_allocs, before.total_allocs);

    // The counter does see allocations (guards against a counter that never counts).
    kes_test::start_counting();
    auto probe = std::make_unique<std::vector<int>>(3);
    EXPECT_GT(kes_test::stop_counting(), 0u);
    probe.reset();

    kes_model_context_destroy(ctx);
    kes_model_unload(model);
    kes_mem_pool_free(pool, work);
    kes_mem_pool_free(pool, weights);
    kes_mem_pool_destroy(pool);
}

TEST(EngineExecute, ContextsRunConcurrentlyOnOneModel) {
    const kes_test::Prelu g;
    const kes::ir::KomImage img = g.build();
    kes_model* model = nullptr;
    ASSERT_EQ(kes_model_load_from_memory(img.bytes.data(), img.bytes.size(), &model), KES_OK);
    std::vector<std::thread> threads;
    std::vector<int> ok(4, 0);
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            kes_model_context* ctx = nullptr;
            if (kes_model_context_create(model, nullptr, 0, &ctx) != KES_OK) return;
            std::vector<float> x = kes_test::wave(24, 1.0f + t, 0.0f), y(24);
            kes_tensor in = wrap(x, {2, 3, 4}), out = wrap(y, {2, 3, 4});
            bool good = true;
            for (int i = 0; i < 50 && good; ++i) {
                good = kes_model_execute(ctx, &in, 1, &out, 1) == KES_OK;
                for (size_t k = 0; k < 24 && good; ++k)
                    good = std::fabs(y[k] - (x[k] > 0 ? x[k] : 2 * g.alpha[k % 4] * x[k])) < 1e-5f;
            }
            ok[t] = good;
            kes_model_context_destroy(ctx);
        });
    for (auto& th : threads) th.join();
    EXPECT_EQ(ok, std::vector<int>(4, 1));
    kes_model_unload(model);
}

TEST(EngineExecute, MismatchedTensorsAreRefusedWithNames) {
    const kes_test::Prelu g;
    ModelHandle h(g.build());
    std::vector<float> x(24), y(24), small(12);
    kes_tensor in = wrap(x, {2, 3, 4}), out = wrap(y, {2, 3, 4}), bad = wrap(small, {3, 4});
    EXPECT_EQ(kes_model_execute(h.ctx, &bad, 1, &out, 1), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("inputs[0] (x)"), std::string::npos) << kes_last_error();
    EXPECT_EQ(kes_model_execute(h.ctx, &in, 0, &out, 1), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_model_execute(h.ctx, &in, 1, &bad, 1), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_model_execute(nullptr, &in, 1, &out, 1), KES_ERR_INVALID_ARGUMENT);
}

TEST(EngineExecute, RecordsATraceSpanWhenTracing) {
    const kes_test::ConvReluAdd g;
    ModelHandle h(g.build());
    std::vector<float> x = kes_test::wave(g.H * g.W * g.C, 1.5f, 0.1f), y(g.OH * g.OW * g.CO);
    kes_tensor in = wrap(x, {1, g.H, g.W, g.C}, KES_LAYOUT_NHWC);
    kes_tensor out = wrap(y, {1, g.OH, g.OW, g.CO}, KES_LAYOUT_NHWC);
    const std::string path = std::string(KES_TEST_TMPDIR) + "/engine_trace.json";
    ASSERT_EQ(kes_trace_start(path.c_str()), KES_OK) << kes_last_error();
    const kes_status st = kes_model_execute(h.ctx, &in, 1, &out, 1);
    ASSERT_EQ(kes_trace_stop(), KES_OK) << kes_last_error();
    ASSERT_EQ(st, KES_OK);
    FILE* f = std::fopen(path.c_str(), "rb");
    ASSERT_NE(f, nullptr);
    std::string text(4096, '\0');
    text.resize(std::fread(&text[0], 1, text.size(), f));
    std::fclose(f);
    EXPECT_NE(text.find("\"name\":\"model_execute\",\"cat\":\"engine\""), std::string::npos) << text;
}

// struct_size (kes/struct_size.hpp): the context config is read, and the metadata and layer profile are
// filled, at any size from their first release up, as in every other module (a newer app's larger
// struct was refused, and a config's unknown tail named differently).
TEST(EngineStructSize, ConfigMetadataAndLayerProfileGrowWithoutBreakingApps) {
    const kes_test::ConvReluAdd g;
    const kes::ir::KomImage img = g.build();
    kes_model* model = nullptr;
    ASSERT_EQ(kes_model_load_from_memory(img.bytes.data(), img.bytes.size(), &model), KES_OK) << kes_last_error();
    kes_model_context_config cfg;
    kes_model_context_config_init(&cfg);
    cfg.threads = 1;
    kes_test::expect_struct_growth(
        cfg, KES_STRUCT_SIZE_THROUGH(kes_model_context_config, affinity_count), [&](kes_model_context_config* c) {
            kes_model_context* ctx = nullptr;
            const kes_status st = kes_model_context_create_with_config(model, nullptr, 0, c, &ctx);
            kes_model_context_destroy(ctx);
            return st;
        });
    kes_test::expect_out_struct_growth<kes_model_metadata>(
        KES_STRUCT_SIZE_THROUGH(kes_model_metadata, target_board),
        [&](kes_model_metadata* md) { return kes_model_get_metadata(model, md); });
    kes_model_context* ctx = nullptr;
    ASSERT_EQ(kes_model_context_create(model, nullptr, 0, &ctx), KES_OK) << kes_last_error();
    kes_test::expect_out_struct_growth<kes_model_layer_profile>(
        KES_STRUCT_SIZE_THROUGH(kes_model_layer_profile, output_shape),
        [&](kes_model_layer_profile* lp) { return kes_model_context_layer_profile(ctx, 0, lp); });
    kes_model_context_destroy(ctx);
    kes_model_unload(model);
}
