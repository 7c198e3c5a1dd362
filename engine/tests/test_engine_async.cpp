// Asynchronous execution, dynamic batch gears and the AIPP text a model carries.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <string>
#include <vector>

#include "kestrel/engine.h"
#include "test_models.hpp"

namespace {

// y = relu(x) * scale, x [B,3,4] with batch gears {1, 2, 4} (written at the largest gear).
kes::ir::KomImage gear_model(std::vector<int64_t> gears, const std::string& aipp = "") {
    kes::ir::Graph g;
    const int64_t b = gears.empty() ? 2 : gears.back();
    const int32_t x = kes_test::act(g, "x", {b, 3, 4});
    const int32_t r = kes_test::act(g, "r", {b, 3, 4});
    const int32_t s = g.add_constant_f32("scale", {4}, {0.5f, 1.0f, 2.0f, -1.0f});
    const int32_t y = kes_test::act(g, "y", {b, 3, 4});
    g.inputs = {x};
    g.outputs = {y};
    g.add_node("Relu", {x}, {r});
    g.add_node("Mul", {r, s}, {y});
    g.dynamic_batch = std::move(gears);
    if (!aipp.empty()) g.aipp.push_back({x, aipp});
    return kes::ir::write_kom(g);
}

float expected(float x, size_t i) {
    const float scale[4] = {0.5f, 1.0f, 2.0f, -1.0f};
    return (x > 0 ? x : 0.0f) * scale[i % 4];
}

kes_tensor wrap(std::vector<float>& v, std::vector<int64_t> shape) {
    kes_tensor t;
    EXPECT_EQ(kes_tensor_wrap(&t, KES_F32, KES_LAYOUT_ND, static_cast<uint32_t>(shape.size()), shape.data(), v.data(),
                              v.size() * sizeof(float)),
              KES_OK);
    return t;
}

struct Loaded {
    kes_model* model = nullptr;
    kes_model_context* ctx = nullptr;
    explicit Loaded(const kes::ir::KomImage& img) {
        EXPECT_EQ(kes_model_load_from_memory(img.bytes.data(), img.bytes.size(), &model), KES_OK) << kes_last_error();
        EXPECT_EQ(kes_model_context_create(model, nullptr, 0, &ctx), KES_OK) << kes_last_error();
    }
    ~Loaded() {
        kes_model_context_destroy(ctx);
        kes_model_unload(model);
    }
};

}  // namespace

TEST(EngineGears, EachGearComputesItsOwnBatch) {
    Loaded h(gear_model({1, 2, 4}));
    int64_t gears[4] = {};
    size_t count = 0;
    ASSERT_EQ(kes_model_batch_gears(h.model, gears, 4, &count), KES_OK);
    ASSERT_EQ(count, 3u);
    EXPECT_EQ(gears[0], 1);
    EXPECT_EQ(gears[2], 4);
    kes_tensor desc;
    ASSERT_EQ(kes_model_input_desc(h.model, 0, &desc), KES_OK);
    EXPECT_EQ(desc.shape[0], 4);  // described at the largest gear
    for (int64_t b : {1, 2, 4, 1}) {
        ASSERT_EQ(kes_model_context_set_batch(h.ctx, b), KES_OK) << kes_last_error();
        std::vector<float> x = kes_test::wave(static_cast<size_t>(b * 12), 2.0f, 0.1f), y(x.size(), -7.0f);
        kes_tensor in = wrap(x, {b, 3, 4}), out = wrap(y, {b, 3, 4});
        ASSERT_EQ(kes_model_execute(h.ctx, &in, 1, &out, 1), KES_OK) << kes_last_error();
        for (size_t i = 0; i < y.size(); ++i) EXPECT_FLOAT_EQ(y[i], expected(x[i], i)) << "batch " << b;
        // The other gears' shapes are refused while this one is selected.
        std::vector<float> big(4 * 12), big_out(4 * 12);
        kes_tensor in4 = wrap(big, {4, 3, 4}), out4 = wrap(big_out, {4, 3, 4});
        if (b != 4) {
            EXPECT_EQ(kes_model_execute(h.ctx, &in4, 1, &out4, 1), KES_ERR_INVALID_ARGUMENT);
            EXPECT_NE(std::string(kes_last_error()).find("shape differs"), std::string::npos) << kes_last_error();
        }
    }
    EXPECT_EQ(kes_model_context_set_batch(h.ctx, 3), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("not one of the model's gears"), std::string::npos);
}

TEST(EngineGears, StaticModelTakesOnlyZero) {
    Loaded h(gear_model({}));
    size_t count = 9;
    ASSERT_EQ(kes_model_batch_gears(h.model, nullptr, 0, &count), KES_OK);
    EXPECT_EQ(count, 0u);
    EXPECT_EQ(kes_model_context_set_batch(h.ctx, 0), KES_OK);
    EXPECT_EQ(kes_model_context_set_batch(h.ctx, 1), KES_ERR_INVALID_ARGUMENT);
}

TEST(EngineAsync, QueuedJobsRunInOrderAndCallBack) {
    Loaded h(gear_model({}));
    constexpr int kJobs = 12;
    std::vector<std::vector<float>> xs, ys;
    for (int j = 0; j < kJobs; ++j) {
        xs.push_back(kes_test::wave(24, 1.0f + j, -0.2f));
        ys.emplace_back(24, 0.0f);
    }
    std::vector<kes_tensor> ins, outs;
    for (int j = 0; j < kJobs; ++j) {
        ins.push_back(wrap(xs[j], {2, 3, 4}));
        outs.push_back(wrap(ys[j], {2, 3, 4}));
    }
    struct Log {
        std::atomic<int> calls{0};
        std::atomic<int> failures{0};
    } log;
    auto cb = [](kes_status st, const char*, void* user) {
        auto* l = static_cast<Log*>(user);
        l->calls.fetch_add(1);
        if (st != KES_OK) l->failures.fetch_add(1);
    };
    for (int j = 0; j < kJobs; ++j)
        ASSERT_EQ(kes_model_execute_async(h.ctx, &ins[j], 1, &outs[j], 1, cb, &log), KES_OK) << kes_last_error();
    ASSERT_EQ(kes_model_context_wait(h.ctx), KES_OK) << kes_last_error();
    EXPECT_EQ(log.calls.load(), kJobs);
    EXPECT_EQ(log.failures.load(), 0);
    for (int j = 0; j < kJobs; ++j)
        for (size_t i = 0; i < 24; ++i) ASSERT_FLOAT_EQ(ys[j][i], expected(xs[j][i], i)) << "job " << j;
}

TEST(EngineAsync, ErrorsReachTheCallbackAndWait) {
    Loaded h(gear_model({}));
    std::vector<float> x(24), y(12);
    kes_tensor in = wrap(x, {2, 3, 4}), bad = wrap(y, {1, 3, 4});
    std::atomic<int> failed{0};
    auto cb = [](kes_status st, const char* msg, void* user) {
        if (st == KES_ERR_INVALID_ARGUMENT && std::string(msg).find("outputs[0] (y)") != std::string::npos)
            static_cast<std::atomic<int>*>(user)->fetch_add(1);
    };
    ASSERT_EQ(kes_model_execute_async(h.ctx, &in, 1, &bad, 1, cb, &failed), KES_OK);
    EXPECT_EQ(kes_model_context_wait(h.ctx), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("asynchronous execution failed"), std::string::npos);
    EXPECT_EQ(failed.load(), 1);
    EXPECT_EQ(kes_model_context_wait(h.ctx), KES_OK);  // the error is reported once
}

TEST(EngineAsync, FullQueueIsBusyAndDestroyDrains) {
    Loaded h(gear_model({}));
    std::vector<float> x = kes_test::wave(24, 1.0f, 0.0f);
    std::vector<std::vector<float>> ys(KES_MODEL_ASYNC_QUEUE_DEPTH * 2, std::vector<float>(24));
    kes_tensor in = wrap(x, {2, 3, 4});
    int accepted = 0, busy = 0;
    std::vector<bool> queued(ys.size(), false);
    for (size_t j = 0; j < ys.size(); ++j) {
        kes_tensor out = wrap(ys[j], {2, 3, 4});
        const kes_status st = kes_model_execute_async(h.ctx, &in, 1, &out, 1, nullptr, nullptr);
        if (st == KES_OK) queued[j] = true, ++accepted;
        if (st == KES_ERR_BUSY) ++busy;
    }
    // The worker drains while we submit, so how many are refused depends on timing; each submission is
    // either queued or BUSY, and at least a full queue's worth is accepted.
    EXPECT_GE(accepted, KES_MODEL_ASYNC_QUEUE_DEPTH);
    EXPECT_EQ(accepted + busy, static_cast<int>(ys.size()));
    ASSERT_EQ(kes_model_context_wait(h.ctx), KES_OK);
    for (size_t j = 0; j < ys.size(); ++j)
        for (size_t i = 0; i < 24; ++i) ASSERT_FLOAT_EQ(ys[j][i], queued[j] ? expected(x[i], i) : 0.0f) << "job " << j;
}

TEST(EngineAipp, ModelCarriesTheConfigText) {
    const std::string cfg = "aipp_op {\n  aipp_mode: static\n  input_format: YUV420SP_U8\n}\n";
    Loaded h(gear_model({}, cfg));
    const char* text = nullptr;
    ASSERT_EQ(kes_model_input_aipp(h.model, 0, &text), KES_OK);
    ASSERT_NE(text, nullptr);
    EXPECT_EQ(std::string(text), cfg);
    EXPECT_EQ(kes_model_input_aipp(h.model, 1, &text), KES_ERR_INVALID_ARGUMENT);
    Loaded plain(gear_model({}));
    ASSERT_EQ(kes_model_input_aipp(plain.model, 0, &text), KES_OK);
    EXPECT_EQ(text, nullptr);
}
