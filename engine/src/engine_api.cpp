// engine_api.cpp — the C API of kestrel/engine.h over the executor seam (executor.hpp): picking the
// backend from the file, argument checks every backend shares, and the asynchronous queue of a context.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "executor.hpp"
#include "kernels/select.hpp"
#ifdef KES_ENGINE_HAVE_ASCEND
#include "ascend/ascend_executor.hpp"
#endif
#include "kes/error.hpp"
#include "kes/file.hpp"
#include "kes/struct_size.hpp"
#include "kestrel/engine.h"
#include "kestrel/trace.h"

struct kes_model {
    std::unique_ptr<kes::Executor> executor;
};

// The asynchronous queue of a context: one worker thread, started by the first async call, runs
// jobs in submission order from a fixed ring (no allocation per job).
struct AsyncJob {
    std::vector<kes_tensor> inputs, outputs;    // sized at queue creation
    std::vector<kes_model_input> image_inputs;  // kes_model_execute_images_async: used instead of inputs
    bool images = false;
    kes_model_callback callback = nullptr;
    void* user = nullptr;
};

struct kes_model_context {
    const kes_model* model = nullptr;
    std::unique_ptr<kes::ExecutorContext> impl;

    std::mutex mutex;
    std::condition_variable cv;
    std::vector<AsyncJob> ring;
    size_t head = 0, count = 0;  // jobs queued (not yet finished)
    bool running = false;        // the worker is executing ring[head]
    bool stop = false;
    kes_status first_error = KES_OK;
    std::string first_error_text;
    std::thread worker;

    ~kes_model_context() {
        if (worker.joinable()) {
            {
                std::lock_guard<std::mutex> lock(mutex);
                stop = true;
            }
            cv.notify_all();
            worker.join();
        }
        impl.reset();
    }
};

namespace kes {

// Every backend this build has, tried in order. The Ascend executor joins this table.
const ExecutorFactory& executor_for(const uint8_t* data, size_t size) {
    KES_REQUIRE(data != nullptr || size == 0, "data is NULL");
    const ExecutorFactory* const factories[] = {
        &cpu_executor_factory(),
#ifdef KES_ENGINE_HAVE_ASCEND
        &ascend_executor_factory(),
#endif
    };
    for (const ExecutorFactory* f : factories)
        if (f->recognizes(data, size)) return *f;
    // A .om starts with the "IMOD" header (BOARD-RULES §Models): name it rather than call it corrupt.
    if (size >= 4 && std::memcmp(data, "IMOD", 4) == 0)
        KES_FAIL(KES_ERR_UNSUPPORTED,
                 "model: an Ascend .om file; this build runs .kom files on the CPU (convert the source model "
                 "with kes-convert), the NPU executor is not in this build");
    KES_FAIL(KES_ERR_CORRUPT_DATA, "model: not a .kom file (file identifier is not \"KOM1\") nor an Ascend .om");
}

}  // namespace kes

namespace {

// The synchronous calls and the gear setters need an empty queue (the worker uses the same context).
// require_no_queued_work expects the context's mutex held.
void require_no_queued_work(const kes_model_context& context) {
    KES_REQUIRE(context.count == 0, "the context has asynchronous work queued: kes_model_context_wait first");
}

void require_idle(kes_model_context* context) {
    KES_REQUIRE_NOT_NULL(context);
    std::lock_guard<std::mutex> lock(context->mutex);
    require_no_queued_work(*context);
}

// The argument checks both synchronous bodies (and the async queue) start with.
void check_counts(const kes::Executor& e, bool has_inputs, size_t input_count, const kes_tensor* outputs,
                  size_t output_count) {
    KES_REQUIRE(input_count == e.inputs().size(), "input_count is %zu, the model has %zu inputs", input_count,
                e.inputs().size());
    KES_REQUIRE(output_count == e.outputs().size(), "output_count is %zu, the model has %zu outputs", output_count,
                e.outputs().size());
    KES_REQUIRE(has_inputs || input_count == 0, "inputs is NULL");
    KES_REQUIRE(outputs != nullptr, "outputs is NULL");
}

void execute(kes_model_context* context, const kes_tensor* inputs, size_t input_count, kes_tensor* outputs,
             size_t output_count) {
    check_counts(*context->model->executor, inputs != nullptr, input_count, outputs, output_count);
    context->impl->execute(inputs, outputs);
}

void execute_images(kes_model_context* context, const kes_model_input* inputs, size_t input_count, kes_tensor* outputs,
                    size_t output_count) {
    check_counts(*context->model->executor, inputs != nullptr, input_count, outputs, output_count);
    context->impl->execute_images(inputs, outputs);
}

void worker_loop(kes_model_context* ctx) {
    std::unique_lock<std::mutex> lock(ctx->mutex);
    for (;;) {
        ctx->cv.wait(lock, [&] { return ctx->stop || ctx->count > 0; });
        if (ctx->count == 0) return;  // stop requested and the queue is drained
        AsyncJob& job = ctx->ring[ctx->head];
        ctx->running = true;
        lock.unlock();
        const kes_status st =
            kes::guard(job.images ? "kes_model_execute_images_async" : "kes_model_execute_async", [&] {
                if (job.images)
                    execute_images(ctx, job.image_inputs.data(), job.image_inputs.size(), job.outputs.data(),
                                   job.outputs.size());
                else
                    execute(ctx, job.inputs.data(), job.inputs.size(), job.outputs.data(), job.outputs.size());
                return KES_OK;
            });
        if (job.callback) job.callback(st, st == KES_OK ? "" : kes_last_error(), job.user);
        lock.lock();
        if (st != KES_OK && ctx->first_error == KES_OK) {
            ctx->first_error = st;
            ctx->first_error_text = kes_last_error();
        }
        ctx->running = false;
        ctx->head = (ctx->head + 1) % ctx->ring.size();
        --ctx->count;
        ctx->cv.notify_all();
    }
}

const kes::IoDesc& io(const kes_model* model, bool input, size_t index) {
    KES_REQUIRE_NOT_NULL(model);
    const std::vector<kes::IoDesc>& list = input ? model->executor->inputs() : model->executor->outputs();
    KES_REQUIRE(index < list.size(), "%s index %zu out of range (the model has %zu)", input ? "input" : "output", index,
                list.size());
    return list[index];
}

kes_status find_io(const char* fn, const kes_model* model, bool input, const char* name, size_t* out_index) {
    return kes::guard(fn, [&] {
        KES_REQUIRE_NOT_NULL(model);
        KES_REQUIRE_NOT_NULL(name);
        KES_REQUIRE_NOT_NULL(out_index);
        const std::vector<kes::IoDesc>& list = input ? model->executor->inputs() : model->executor->outputs();
        for (size_t i = 0; i < list.size(); ++i) {
            if (list[i].name == name) {
                *out_index = i;
                return KES_OK;
            }
        }
        KES_FAIL(KES_ERR_NOT_FOUND, "the model has no %s named '%s'", input ? "input" : "output", name);
    });
}

void query_sizes(const uint8_t* data, size_t size, size_t* out_work_bytes, size_t* out_weight_bytes) {
    KES_REQUIRE_NOT_NULL(out_work_bytes);
    KES_REQUIRE_NOT_NULL(out_weight_bytes);
    kes::executor_for(data, size).query_size(data, size, out_work_bytes, out_weight_bytes);
}

kes_model* load(const uint8_t* data, size_t size, void* work, size_t work_size, void* weight, size_t weight_size) {
    auto model = std::make_unique<kes_model>();
    model->executor = kes::executor_for(data, size).load(data, size, work, work_size, weight, weight_size);
    return model.release();
}

// Runs f, a load or a size query of the file at `path`: an error in the file's content (a damaged or
// unsupported model) names the file.
template <class F>
auto naming_file(const char* path, F f) -> decltype(f()) {
    try {
        return f();
    } catch (const kes::Error& e) {
        if (e.status() != KES_ERR_CORRUPT_DATA && e.status() != KES_ERR_UNSUPPORTED) throw;
        throw kes::Error(e.status(), kes::format("%s: %s", path, e.what()));
    }
}

// The first bytes of a file, enough to recognise its format (a short file gives what it has).
std::vector<uint8_t> file_head(const char* path) {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        KES_FAIL(errno == ENOENT ? KES_ERR_NOT_FOUND : KES_ERR_IO, "cannot open '%s': %s", path, std::strerror(errno));
    std::vector<uint8_t> head(16);
    const ssize_t n = ::read(fd, head.data(), head.size());
    ::close(fd);
    if (n < 0) KES_FAIL(KES_ERR_IO, "cannot read '%s': %s", path, std::strerror(errno));
    head.resize(static_cast<size_t>(n));
    return head;
}

}  // namespace

extern "C" {

const char* kes_engine_kernels_name(void) {
    return kes::kernel_set_name();
}

kes_status kes_model_query_size(const void* data, size_t size, size_t* out_work_bytes, size_t* out_weight_bytes) {
    return kes::guard(__func__, [&] {
        query_sizes(static_cast<const uint8_t*>(data), size, out_work_bytes, out_weight_bytes);
        return KES_OK;
    });
}

kes_status kes_model_query_size_from_file(const char* path, size_t* out_work_bytes, size_t* out_weight_bytes) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_work_bytes);
        KES_REQUIRE_NOT_NULL(out_weight_bytes);
        const std::vector<uint8_t> bytes = kes::read_file(path);
        naming_file(path, [&] { query_sizes(bytes.data(), bytes.size(), out_work_bytes, out_weight_bytes); });
        return KES_OK;
    });
}

kes_status kes_model_load_from_memory(const void* data, size_t size, kes_model** out_model) {
    return kes_model_load_from_memory_with_mem(data, size, nullptr, 0, nullptr, 0, out_model);
}

kes_status kes_model_load_from_memory_with_mem(const void* data, size_t size, void* work, size_t work_size,
                                               void* weight, size_t weight_size, kes_model** out_model) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_model);
        *out_model = nullptr;
        *out_model = load(static_cast<const uint8_t*>(data), size, work, work_size, weight, weight_size);
        return KES_OK;
    });
}

kes_status kes_model_load_from_file(const char* path, uint32_t flags, kes_model** out_model) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_model);
        *out_model = nullptr;
        KES_REQUIRE_NOT_NULL(path);
        KES_REQUIRE((flags & ~(KES_MODEL_LOAD_MMAP | KES_MODEL_LOAD_NO_VERIFY)) == 0, "unknown flags 0x%x", flags);
        if (flags & KES_MODEL_LOAD_MMAP) {
            const std::vector<uint8_t> head = file_head(path);
            const kes::ExecutorFactory& f = kes::executor_for(head.data(), head.size());
            if (f.load_mapped) {
                auto model = std::make_unique<kes_model>();
                const bool verify = (flags & KES_MODEL_LOAD_NO_VERIFY) == 0;
                model->executor = naming_file(path, [&] { return f.load_mapped(path, verify); });
                *out_model = model.release();
                return KES_OK;
            }
        }
        const std::vector<uint8_t> bytes = kes::read_file(path);
        *out_model = naming_file(path, [&] { return load(bytes.data(), bytes.size(), nullptr, 0, nullptr, 0); });
        return KES_OK;
    });
}

kes_status kes_model_load_from_file_with_mem(const char* path, void* work, size_t work_size, void* weight,
                                             size_t weight_size, kes_model** out_model) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_model);
        *out_model = nullptr;
        const std::vector<uint8_t> bytes = kes::read_file(path);
        *out_model =
            naming_file(path, [&] { return load(bytes.data(), bytes.size(), work, work_size, weight, weight_size); });
        return KES_OK;
    });
}

void kes_model_unload(kes_model* model) {
    delete model;
}

kes_status kes_model_get_size(const kes_model* model, size_t* out_work_bytes, size_t* out_weight_bytes) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(model);
        KES_REQUIRE_NOT_NULL(out_work_bytes);
        KES_REQUIRE_NOT_NULL(out_weight_bytes);
        *out_work_bytes = model->executor->work_bytes();
        *out_weight_bytes = model->executor->weight_bytes();
        return KES_OK;
    });
}

kes_status kes_model_get_memory_plan(const kes_model* model, size_t* out_arena_bytes, size_t* out_ideal_bytes) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(model);
        KES_REQUIRE_NOT_NULL(out_arena_bytes);
        KES_REQUIRE_NOT_NULL(out_ideal_bytes);
        model->executor->memory_plan(out_arena_bytes, out_ideal_bytes);
        return KES_OK;
    });
}

kes_status kes_model_input_count(const kes_model* model, size_t* out_count) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(model);
        KES_REQUIRE_NOT_NULL(out_count);
        *out_count = model->executor->inputs().size();
        return KES_OK;
    });
}

kes_status kes_model_output_count(const kes_model* model, size_t* out_count) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(model);
        KES_REQUIRE_NOT_NULL(out_count);
        *out_count = model->executor->outputs().size();
        return KES_OK;
    });
}

kes_status kes_model_input_name(const kes_model* model, size_t index, const char** out_name) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_name);
        *out_name = io(model, true, index).name.c_str();
        return KES_OK;
    });
}

kes_status kes_model_output_name(const kes_model* model, size_t index, const char** out_name) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_name);
        *out_name = io(model, false, index).name.c_str();
        return KES_OK;
    });
}

kes_status kes_model_input_desc(const kes_model* model, size_t index, kes_tensor* out_desc) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_desc);
        *out_desc = io(model, true, index).desc;
        return KES_OK;
    });
}

kes_status kes_model_output_desc(const kes_model* model, size_t index, kes_tensor* out_desc) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_desc);
        *out_desc = io(model, false, index).desc;
        return KES_OK;
    });
}

kes_status kes_model_find_input(const kes_model* model, const char* name, size_t* out_index) {
    return find_io(__func__, model, true, name, out_index);
}

kes_status kes_model_find_output(const kes_model* model, const char* name, size_t* out_index) {
    return find_io(__func__, model, false, name, out_index);
}

void kes_model_context_config_init(kes_model_context_config* config) {
    if (!config) return;
    std::memset(config, 0, sizeof *config);
    config->struct_size = sizeof *config;
}

kes_status kes_model_context_create(const kes_model* model, void* work, size_t work_size,
                                    kes_model_context** out_context) {
    return kes_model_context_create_with_config(model, work, work_size, nullptr, out_context);
}

kes_status kes_model_context_create_with_config(const kes_model* model, void* work, size_t work_size,
                                                const kes_model_context_config* config,
                                                kes_model_context** out_context) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_context);
        *out_context = nullptr;
        KES_REQUIRE_NOT_NULL(model);
        kes_model_context_config cfg;
        kes_model_context_config_init(&cfg);
        if (config)
            kes::read_struct(config, KES_STRUCT_SIZE_THROUGH(kes_model_context_config, affinity_count), "config",
                             "kes_model_context_config", &cfg);
        KES_REQUIRE(cfg.threads <= KES_MODEL_MAX_THREADS, "config->threads is %u; at most %d", cfg.threads,
                    KES_MODEL_MAX_THREADS);
        KES_REQUIRE(cfg.affinity_count == 0 || cfg.cpu_affinity != nullptr, "config->cpu_affinity is NULL");
        kes::ContextConfig c;
        c.threads = cfg.threads;
        c.cpu_affinity = cfg.cpu_affinity;
        c.affinity_count = cfg.affinity_count;
        auto ctx = std::make_unique<kes_model_context>();
        ctx->model = model;
        ctx->impl = model->executor->create_context(work, work_size, c);
        *out_context = ctx.release();
        return KES_OK;
    });
}

void kes_model_context_destroy(kes_model_context* context) {
    delete context;
}

kes_status kes_model_context_threads(const kes_model_context* context, uint32_t* out_threads) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(context);
        KES_REQUIRE_NOT_NULL(out_threads);
        *out_threads = context->impl->threads();
        return KES_OK;
    });
}

kes_status kes_model_context_set_profiling(kes_model_context* context, int enabled) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(context);
        std::lock_guard<std::mutex> lock(context->mutex);
        require_no_queued_work(*context);
        context->impl->set_profiling(enabled != 0);
        return KES_OK;
    });
}

kes_status kes_model_context_set_observer(kes_model_context* context, kes_model_node_observer observer,
                                          void* user_data) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(context);
        std::lock_guard<std::mutex> lock(context->mutex);
        require_no_queued_work(*context);
        context->impl->set_observer(observer, user_data);
        return KES_OK;
    });
}

kes_status kes_model_layer_count(const kes_model* model, size_t* out_count) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(model);
        KES_REQUIRE_NOT_NULL(out_count);
        *out_count = model->executor->layer_count();
        return KES_OK;
    });
}

kes_status kes_model_context_layer_profile(const kes_model_context* context, size_t index,
                                           kes_model_layer_profile* out_layer) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(context);
        // First released without weight_bytes and packed_bytes.
        kes::check_out_struct(out_layer, KES_STRUCT_SIZE_THROUGH(kes_model_layer_profile, output_shape), "out_layer",
                              "kes_model_layer_profile");
        const size_t layers = context->model->executor->layer_count();
        KES_REQUIRE(index < layers, "layer %zu out of range (the model has %zu)", index, layers);
        kes_model_layer_profile full = {};
        context->impl->layer_profile(index, &full);
        kes::write_struct(full, out_layer);
        return KES_OK;
    });
}

kes_status kes_model_execute(kes_model_context* context, const kes_tensor* inputs, size_t input_count,
                             kes_tensor* outputs, size_t output_count) {
    return kes::guard(__func__, [&] {
        kes::TraceScope span("engine", "model_execute");
        require_idle(context);
        execute(context, inputs, input_count, outputs, output_count);
        return KES_OK;
    });
}

kes_status kes_model_execute_images(kes_model_context* context, const kes_model_input* inputs, size_t input_count,
                                    kes_tensor* outputs, size_t output_count) {
    return kes::guard(__func__, [&] {
        kes::TraceScope span("engine", "model_execute_images");
        require_idle(context);
        execute_images(context, inputs, input_count, outputs, output_count);
        return KES_OK;
    });
}

}  // extern "C"

namespace {

// Queues a job on the context's worker (started by the first call: the only allocation). `fill` copies
// the caller's inputs into the job's preallocated slots.
template <class Fill>
kes_status queue_job(const char* fn, kes_model_context* context, size_t input_count, bool has_inputs,
                     kes_tensor* outputs, size_t output_count, kes_model_callback callback, void* user_data,
                     bool images, Fill fill) {
    return kes::guard(fn, [&] {
        KES_REQUIRE_NOT_NULL(context);
        check_counts(*context->model->executor, has_inputs, input_count, outputs, output_count);
        std::unique_lock<std::mutex> lock(context->mutex);
        if (context->ring.empty()) {  // first async call: the queue and its worker
            context->ring.resize(KES_MODEL_ASYNC_QUEUE_DEPTH);
            for (AsyncJob& job : context->ring) {
                job.inputs.resize(input_count);
                job.image_inputs.resize(input_count);
                job.outputs.resize(output_count);
            }
            context->worker = std::thread(worker_loop, context);
        }
        if (context->count == context->ring.size())
            KES_FAIL(KES_ERR_BUSY, "the context's queue is full (%zu jobs): kes_model_context_wait first",
                     context->ring.size());
        AsyncJob& job = context->ring[(context->head + context->count) % context->ring.size()];
        fill(job);
        std::copy(outputs, outputs + output_count, job.outputs.begin());
        job.images = images;
        job.callback = callback;
        job.user = user_data;
        ++context->count;
        context->cv.notify_all();
        return KES_OK;
    });
}

// Selects a gear for the context (no allocation): refused while asynchronous work is queued.
template <class Set>
kes_status set_gear(const char* fn, kes_model_context* context, Set set) {
    return kes::guard(fn, [&] {
        KES_REQUIRE_NOT_NULL(context);
        std::lock_guard<std::mutex> lock(context->mutex);
        require_no_queued_work(*context);
        set(*context->impl);
        return KES_OK;
    });
}

template <class T>
kes_status copy_list(const char* fn, const kes_model* model, const std::vector<T>& (kes::Executor::*list)() const,
                     size_t values_per_item, int64_t* out, size_t capacity, size_t* out_count) {
    return kes::guard(fn, [&] {
        KES_REQUIRE_NOT_NULL(model);
        KES_REQUIRE_NOT_NULL(out_count);
        const std::vector<T>& items = ((*model->executor).*list)();
        *out_count = items.size();
        KES_REQUIRE(out != nullptr || capacity == 0, "the output array is NULL");
        for (size_t i = 0; i < items.size() && i < capacity; ++i) {
            if constexpr (std::is_same<T, int64_t>::value) {
                out[i] = items[i];
            } else {
                out[values_per_item * i] = items[i].first;
                out[values_per_item * i + 1] = items[i].second;
            }
        }
        return KES_OK;
    });
}

}  // namespace

extern "C" {

kes_status kes_model_execute_async(kes_model_context* context, const kes_tensor* inputs, size_t input_count,
                                   kes_tensor* outputs, size_t output_count, kes_model_callback callback,
                                   void* user_data) {
    return queue_job(__func__, context, input_count, inputs != nullptr, outputs, output_count, callback, user_data,
                     false, [&](AsyncJob& job) { std::copy(inputs, inputs + input_count, job.inputs.begin()); });
}

kes_status kes_model_execute_images_async(kes_model_context* context, const kes_model_input* inputs, size_t input_count,
                                          kes_tensor* outputs, size_t output_count, kes_model_callback callback,
                                          void* user_data) {
    return queue_job(__func__, context, input_count, inputs != nullptr, outputs, output_count, callback, user_data,
                     true, [&](AsyncJob& job) { std::copy(inputs, inputs + input_count, job.image_inputs.begin()); });
}

kes_status kes_model_context_wait(kes_model_context* context) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(context);
        std::unique_lock<std::mutex> lock(context->mutex);
        context->cv.wait(lock, [&] { return context->count == 0; });
        const kes_status st = context->first_error;
        const std::string text = context->first_error_text;
        context->first_error = KES_OK;
        context->first_error_text.clear();
        if (st != KES_OK) KES_FAIL(st, "an asynchronous execution failed: %s", text.c_str());
        return KES_OK;
    });
}

kes_status kes_model_batch_gears(const kes_model* model, int64_t* out_gears, size_t capacity, size_t* out_count) {
    return copy_list(__func__, model, &kes::Executor::batch_gears, 1, out_gears, capacity, out_count);
}

kes_status kes_model_context_set_batch(kes_model_context* context, int64_t batch) {
    return set_gear(__func__, context, [&](kes::ExecutorContext& c) { c.set_batch(batch); });
}

kes_status kes_model_image_sizes(const kes_model* model, int64_t* out_sizes, size_t capacity, size_t* out_count) {
    return copy_list(__func__, model, &kes::Executor::image_sizes, 2, out_sizes, capacity, out_count);
}

kes_status kes_model_context_set_image_size(kes_model_context* context, int64_t height, int64_t width) {
    return set_gear(__func__, context, [&](kes::ExecutorContext& c) { c.set_image_size(height, width); });
}

kes_status kes_model_context_set_dynamic_aipp(kes_model_context* context, size_t index,
                                              const struct kes_aipp_dynamic* params) {
    return set_gear(__func__, context, [&](kes::ExecutorContext& c) {
        io(context->model, true, index);  // range check
        c.set_dynamic_aipp(index, params);
    });
}

static kes_status context_io_desc(const kes_model_context* context, bool input, size_t index, kes_tensor* out_desc) {
    KES_REQUIRE_NOT_NULL(context);
    KES_REQUIRE_NOT_NULL(out_desc);
    io(context->model, input, index);  // range check
    context->impl->describe(input, index, out_desc);
    return KES_OK;
}

kes_status kes_model_context_input_desc(const kes_model_context* context, size_t index, kes_tensor* out_desc) {
    return kes::guard(__func__, [&] { return context_io_desc(context, true, index, out_desc); });
}

kes_status kes_model_context_output_desc(const kes_model_context* context, size_t index, kes_tensor* out_desc) {
    return kes::guard(__func__, [&] { return context_io_desc(context, false, index, out_desc); });
}

kes_status kes_model_get_metadata(const kes_model* model, kes_model_metadata* out_metadata) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(model);
        kes::check_out_struct(out_metadata, KES_STRUCT_SIZE_THROUGH(kes_model_metadata, target_board), "out_metadata",
                              "kes_model_metadata");
        kes_model_metadata full = {};
        model->executor->metadata(&full);
        kes::write_struct(full, out_metadata);
        return KES_OK;
    });
}

kes_status kes_model_input_aipp(const kes_model* model, size_t index, const char** out_config) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_config);
        io(model, true, index);  // range check
        *out_config = model->executor->input_aipp(index);
        return KES_OK;
    });
}

}  // extern "C"
