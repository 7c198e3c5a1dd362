// Fuzz target for the .kom loader: any bytes must load or fail with a status, never crash; whatever
// loads must execute on zero inputs without touching memory outside its arena and weights.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kestrel/engine.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    kes_model* model = nullptr;
    if (kes_model_load_from_memory(data, size, &model) != KES_OK) return 0;
    size_t work = 0, weight = 0, n_in = 0, n_out = 0;
    kes_model_get_size(model, &work, &weight);
    kes_model_input_count(model, &n_in);
    kes_model_output_count(model, &n_out);
    // Keep runs fast: execute only models whose arena is small (compute grows with the tensors).
    kes_model_context* ctx = nullptr;
    if (work <= (1u << 20) && kes_model_context_create(model, nullptr, 0, &ctx) == KES_OK) {
        std::vector<kes_tensor> ins(n_in), outs(n_out);
        std::vector<std::vector<float>> buffers;
        bool ok = true;
        for (size_t i = 0; i < n_in + n_out && ok; ++i) {
            kes_tensor& t = i < n_in ? ins[i] : outs[i - n_in];
            ok = (i < n_in ? kes_model_input_desc(model, i, &t) : kes_model_output_desc(model, i - n_in, &t)) == KES_OK;
            buffers.emplace_back(t.size / sizeof(float) + 1, 0.5f);
            t.data = buffers.back().data();
        }
        if (ok) kes_model_execute(ctx, ins.data(), n_in, outs.data(), n_out);
        kes_model_context_destroy(ctx);
    }
    kes_model_unload(model);
    return 0;
}
