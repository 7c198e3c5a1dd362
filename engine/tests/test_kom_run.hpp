// Test helpers that go through the public C API only: convert (kestrel/convert.h), load and execute
// (kestrel/engine.h) a model at a context's current gear. Shared by the converter, gear and layout tests.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kestrel/convert.h"
#include "kestrel/engine.h"

namespace kes_test {

inline std::vector<float> sine_input(size_t n, float scale, float bias) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * static_cast<float>(i) + 0.1f) + bias;
    return v;
}

inline std::vector<uint8_t> convert_bytes(const std::vector<uint8_t>& model, const char* input_shape,
                                          const char* image_sizes = nullptr, const char* batches = nullptr) {
    kes_convert_options opt;
    EXPECT_EQ(kes_convert_options_init(&opt), KES_OK);
    opt.input_shape = input_shape;
    opt.dynamic_image_size = image_sizes;
    opt.dynamic_batch = batches;
    void* kom = nullptr;
    size_t size = 0;
    EXPECT_EQ(kes_convert_memory(model.data(), model.size(), &opt, &kom, &size, nullptr), KES_OK) << kes_last_error();
    std::vector<uint8_t> bytes(static_cast<uint8_t*>(kom), static_cast<uint8_t*>(kom) + size);
    kes_convert_free(kom);
    return bytes;
}

struct Loaded {
    kes_model* model = nullptr;
    kes_model_context* ctx = nullptr;
    explicit Loaded(const std::vector<uint8_t>& kom) {
        EXPECT_EQ(kes_model_load_from_memory(kom.data(), kom.size(), &model), KES_OK) << kes_last_error();
        if (model) {
            EXPECT_EQ(kes_model_context_create(model, nullptr, 0, &ctx), KES_OK) << kes_last_error();
        }
    }
    ~Loaded() {
        kes_model_context_destroy(ctx);
        kes_model_unload(model);
    }
};

// Executes the context's current gear on `input`; returns every output (f32).
inline std::vector<std::vector<float>> run(kes_model_context* ctx, size_t outputs, std::vector<float> input) {
    kes_tensor in;
    EXPECT_EQ(kes_model_context_input_desc(ctx, 0, &in), KES_OK) << kes_last_error();
    EXPECT_EQ(in.size, input.size() * sizeof(float));
    in.data = input.data();
    std::vector<kes_tensor> outs(outputs);
    std::vector<std::vector<float>> values(outputs);
    for (size_t i = 0; i < outputs; ++i) {
        EXPECT_EQ(kes_model_context_output_desc(ctx, i, &outs[i]), KES_OK) << kes_last_error();
        values[i].assign(outs[i].size / sizeof(float), NAN);
        outs[i].data = values[i].data();
    }
    EXPECT_EQ(kes_model_execute(ctx, &in, 1, outs.data(), outputs), KES_OK) << kes_last_error();
    return values;
}

// Loads a .kom image and executes it once on one f32 input; returns its first output.
inline std::vector<float> execute_kom(const std::vector<uint8_t>& kom, std::vector<float> input) {
    Loaded m(kom);
    if (!m.ctx) return {};
    std::vector<std::vector<float>> outputs = run(m.ctx, 1, std::move(input));
    return outputs.empty() ? std::vector<float>{} : outputs[0];
}

}  // namespace kes_test
