// executor.hpp — the engine's model-level seam: one loaded model of one backend, and its contexts.
//
// kestrel/engine.h is one C API over every backend. Behind it, a model is an Executor: the CPU engine
// over a .kom file (cpu/cpu_executor.cpp: static arena plan, kernels per gear), or the Ascend runtime
// over a .om file (the NPU, through AscendCL loaded at run time). engine_api.cpp owns what is the same
// for every backend: the C boundary (status + last error), argument counts, the asynchronous queue of
// a context; everything that touches memory or kernels is the executor's.
//
// The factory table (executor_for) picks the backend from a file's first bytes, so an app calls the
// same kes_model_load_* for both and its code does not change between a laptop and a board.
//
// Errors are kes::Error exceptions (caught at the C boundary); messages name the tensor or the rule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kestrel/engine.h"

namespace kes {

// One graph input or output: its name, and a contiguous descriptor at the largest gear (data NULL,
// size = the bytes a buffer for it needs).
struct IoDesc {
    std::string name;
    kes_tensor desc{};
};

// A contiguous descriptor (data NULL) of `shape` in `layout` whose buffer needs `bytes`: how every
// executor describes its inputs and outputs.
inline void describe_contiguous(kes_dtype dtype, kes_layout layout, const std::vector<int64_t>& shape, size_t bytes,
                                kes_tensor* out) {
    *out = kes_tensor{};
    out->dtype = dtype;
    out->layout = layout;
    out->ndim = static_cast<uint32_t>(shape.size() < KES_TENSOR_MAX_DIMS ? shape.size() : KES_TENSOR_MAX_DIMS);
    int64_t stride = 1;
    for (size_t d = out->ndim; d-- > 0;) {
        out->shape[d] = shape[d];
        out->strides[d] = stride;
        stride *= shape[d] > 1 ? shape[d] : 1;
    }
    out->size = bytes;
}

struct ContextConfig {
    uint32_t threads = 0;  // 0: the backend's default
    const int* cpu_affinity = nullptr;
    uint32_t affinity_count = 0;
};

// One execution state of a model: its work memory and the selected gear. Used by one thread at a time
// (engine_api.cpp serialises it against its asynchronous queue).
class ExecutorContext {
public:
    virtual ~ExecutorContext() = default;
    virtual uint32_t threads() const = 0;
    // Gears: 0 (0, 0) is the largest. KES_ERR_INVALID_ARGUMENT for a gear the model does not have.
    virtual void set_batch(int64_t batch) = 0;
    virtual void set_image_size(int64_t height, int64_t width) = 0;
    // Input or output `index` (in range) at the current gear.
    virtual void describe(bool input, size_t index, kes_tensor* out) const = 0;
    // The model's input/output counts are checked by the caller; tensors are the executor's to check.
    virtual void execute(const kes_tensor* inputs, kes_tensor* outputs) = 0;
    virtual void execute_images(const kes_model_input* inputs, kes_tensor* outputs) = 0;
    // Borrows `params` (nullptr clears) for input `index` (in range): KES_ERR_INVALID_ARGUMENT for an
    // input without dynamic AIPP. execute_images fails, naming kes_model_context_set_dynamic_aipp, for a
    // dynamic-AIPP input without parameters.
    virtual void set_dynamic_aipp(size_t index, const kes_aipp_dynamic* params) = 0;
    // Per-layer profile: where the backend has one (else KES_ERR_UNSUPPORTED).
    virtual void set_profiling(bool on) = 0;
    // Fills every field of `out` but struct_size, for layer `index` (in range).
    virtual void layer_profile(size_t index, kes_model_layer_profile* out) const = 0;
    virtual void set_observer(kes_model_node_observer observer, void* user_data) = 0;
};

class Executor {
public:
    virtual ~Executor() = default;
    virtual const char* backend() const = 0;  // "cpu", "ascend"
    virtual size_t work_bytes() const = 0;
    virtual size_t weight_bytes() const = 0;
    virtual void memory_plan(size_t* arena_bytes, size_t* ideal_bytes) const = 0;
    virtual const std::vector<IoDesc>& inputs() const = 0;
    virtual const std::vector<IoDesc>& outputs() const = 0;
    virtual const std::vector<int64_t>& batch_gears() const = 0;                      // ascending
    virtual const std::vector<std::pair<int64_t, int64_t>>& image_sizes() const = 0;  // (h, w)
    virtual const char* input_aipp(size_t index) const = 0;                           // aipp_op text or nullptr
    // Fills every field of `out` but struct_size.
    virtual void metadata(kes_model_metadata* out) const = 0;
    virtual size_t layer_count() const = 0;
    // `work` (work_size bytes, checked by the executor) or nullptr: the model's own or new memory.
    virtual std::unique_ptr<ExecutorContext> create_context(void* work, size_t work_size,
                                                            const ContextConfig& config) const = 0;
};

// A backend's model loader. Loads take caller memory as kestrel/engine.h describes (nullptr: the
// executor's own); a mapped load keeps the file mapped for the model's life.
struct ExecutorFactory {
    const char* name;
    const char* file_kind;  // ".kom", ".om": for messages
    bool (*recognizes)(const uint8_t* data, size_t size);
    void (*query_size)(const uint8_t* data, size_t size, size_t* work_bytes, size_t* weight_bytes);
    std::unique_ptr<Executor> (*load)(const uint8_t* data, size_t size, void* work, size_t work_size, void* weight,
                                      size_t weight_size);
    // nullptr: the file is read and loaded. verify_weights: check the weights' checksum (engine.h,
    // KES_MODEL_LOAD_NO_VERIFY), which reads every mapped page.
    std::unique_ptr<Executor> (*load_mapped)(const char* path, bool verify_weights);
};

const ExecutorFactory& cpu_executor_factory();  // cpu/cpu_executor.cpp

// The backend for a file from its first bytes. KES_ERR_CORRUPT_DATA naming the formats it is not;
// KES_ERR_UNSUPPORTED for a format this build or machine cannot run (e.g. a .om without the Ascend
// runtime), saying what would.
const ExecutorFactory& executor_for(const uint8_t* data, size_t size);

}  // namespace kes
