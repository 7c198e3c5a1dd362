// engine_api.cpp — the C API of kestrel/engine.h: loading (memory, file, mmap, caller memory),
// description, contexts and the synchronous CPU executor.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "kes/error.hpp"
#include "kes/file.hpp"
#include "kes/math.hpp"
#include "kestrel/engine.h"
#ifdef KES_ENGINE_HAVE_AIPP
#include "kestrel/aipp.h"
#endif
#include "kestrel/trace.h"
#include "model.hpp"

// The AIPP of one graph input, parsed from the model's aipp_op text when the model loads.
struct InputAipp {
    bool present = false;
#ifdef KES_ENGINE_HAVE_AIPP
    kes_aipp_params params{};
#endif
};

struct kes_model {
    kes::ModelInfo info;
    std::vector<InputAipp> aipp;         // one per graph input
    std::vector<kes::Program> programs;  // [0]: as written (the largest gear); then the other gears
    const uint8_t* weights = nullptr;    // the 128-byte aligned blob (owned, caller's or mapped)
    void* owned_weights = nullptr;       // kes_mem_alloc'd
    // Kernel interface v2: packed weights (one slice per node, shared by every gear) after the blob
    // in the weight region, and the scratch every context reserves after its arena.
    size_t packed_size = 0;
    size_t scratch_size = 0;
    std::vector<size_t> packed_offset;  // per node, into the packed region
    uint8_t* packed = nullptr;
    void* owned_packed = nullptr;
    void* map = nullptr;  // mmap of the file (KES_MODEL_LOAD_MMAP)
    size_t map_size = 0;
    void* work = nullptr;  // caller work memory from a *_with_mem load
    size_t work_size = 0;

    ~kes_model() {
        programs.clear();  // kernels may point into the weights
        kes_mem_free(owned_packed);
        kes_mem_free(owned_weights);
        if (map) munmap(map, map_size);
    }
    const kes::Program* program_for(const kes::Gear& gear) const {
        for (const kes::Program& p : programs)
            if (p.gear.batch == gear.batch && p.gear.height == gear.height && p.gear.width == gear.width) return &p;
        return nullptr;
    }
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
    uint8_t* arena = nullptr;
    void* owned_arena = nullptr;
    const kes::Program* program = nullptr;  // the selected gear
    std::vector<const void*> in_ptrs;       // per-node scratch, sized at creation
    std::vector<void*> out_ptrs;
    kes::RunContext rc;                     // threads and scratch (the arena's tail) for the kernels
    kes_thread_pool* owned_pool = nullptr;  // a pool of its own when the config pins CPUs
    bool profiling = false;
    std::vector<uint64_t> node_ns;  // per node, the last run's time (profiling on)
    kes_model_node_observer observer = nullptr;
    void* observer_user = nullptr;
    std::vector<kes_tensor> observed;  // the node's outputs as the observer sees them, sized at creation
    std::vector<const char*> observed_names;
    std::vector<const char*> span_names;  // per node, interned when profiling is turned on

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
        kes_thread_pool_destroy(owned_pool);
        kes_mem_free(owned_arena);
    }
};

namespace {

size_t arena_bytes(const kes::ModelInfo& m) {
    return static_cast<size_t>(m.arena_size);
}
size_t blob_bytes(const kes::ModelInfo& m) {
    return static_cast<size_t>(m.weights_size);
}
size_t align128(size_t n) {
    return (n + KES_MEM_ALIGNMENT - 1) / KES_MEM_ALIGNMENT * KES_MEM_ALIGNMENT;
}
// What kes_model_query_size reports: the arena plus the largest scratch of any node, and the weight
// blob plus the packed weights.
size_t work_bytes(const kes_model& model) {
    return arena_bytes(model.info) + model.scratch_size;
}
size_t weight_bytes(const kes_model& model) {
    return blob_bytes(model.info) + model.packed_size;
}

void check_region(const char* what, const void* ptr, size_t size, size_t needed) {
    if (!ptr) {
        KES_REQUIRE(size == 0, "%s is NULL but %s_size is %zu", what, what, size);
        return;
    }
    KES_REQUIRE(reinterpret_cast<uintptr_t>(ptr) % KES_MEM_ALIGNMENT == 0, "%s %p is not 128-byte aligned", what, ptr);
    KES_REQUIRE(size >= needed, "%s_size %zu is smaller than the model needs (%zu bytes)", what, size, needed);
}

// The kernels of every gear (the largest, as written, first), with fast kernels where they apply; then
// the sizes they need: packed weights (one slice per node, laid out from the first gear, which every
// other gear's kernel of that node shares) and scratch (the largest of any kernel at kMaxThreads).
void build_programs(kes_model& model) {
    const kes::ModelInfo& m = model.info;
    kes::Gear largest;
    if (!m.batch_gears.empty()) largest.batch = m.batch_gears.back();
    if (!m.image_sizes.empty()) std::tie(largest.height, largest.width) = m.image_sizes.back();
    model.programs.push_back(kes::build_program(m, model.weights, largest, true));
    for (size_t g = 0; g + 1 < m.batch_gears.size(); ++g)
        model.programs.push_back(kes::build_program(m, model.weights, kes::Gear{m.batch_gears[g], 0, 0}, true));
    for (size_t g = 0; g + 1 < m.image_sizes.size(); ++g)
        model.programs.push_back(
            kes::build_program(m, model.weights, kes::Gear{0, m.image_sizes[g].first, m.image_sizes[g].second}, true));

    model.packed_offset.assign(m.nodes.size(), 0);
    size_t packed = 0, scratch = 0;
    for (size_t i = 0; i < m.nodes.size(); ++i) {
        const size_t bytes = model.programs.front().kernels[i]->packed_bytes();
        model.packed_offset[i] = packed;
        packed += align128(bytes);
        for (const kes::Program& p : model.programs) {
            // Packing depends on the weights and attributes only (op.hpp), so every gear agrees.
            if (p.kernels[i]->packed_bytes() != bytes)
                KES_FAIL(KES_ERR_INTERNAL, "model: node %zu (%s): the packed weights differ between gears", i,
                         m.nodes[i].name.c_str());
            scratch = std::max(scratch, p.kernels[i]->scratch_bytes(kes::kMaxThreads));
        }
    }
    model.packed_size = packed;
    model.scratch_size = align128(scratch);
}

// Packs every node's weights once into `region` (packed_size bytes) and gives the slice to each gear.
void pack_weights(kes_model& model, uint8_t* region) {
    model.packed = region;
    for (size_t i = 0; i < model.info.nodes.size(); ++i) {
        if (model.programs.front().kernels[i]->packed_bytes() == 0) continue;
        uint8_t* slice = region + model.packed_offset[i];
        model.programs.front().kernels[i]->pack(slice);
        for (kes::Program& p : model.programs) p.kernels[i]->bind_packed(slice);
    }
}

// The packed region in engine memory (no caller weight memory, or a mapped file).
void pack_weights_owned(kes_model& model) {
    if (model.packed_size == 0) return;
    if (kes_mem_alloc(KES_MEM_HOST, model.packed_size, &model.owned_packed) != KES_OK)
        KES_FAIL(KES_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of packed weights", model.packed_size);
    pack_weights(model, static_cast<uint8_t*>(model.owned_packed));
}

// Parses each input's aipp_op text (one block, written by kes-convert) into AIPP parameters, so that
// kes_model_execute_images runs it. A text the aipp module refuses makes the file corrupt.
void prepare_aipp(kes_model& model) {
    model.aipp.assign(model.info.inputs.size(), InputAipp{});
#ifdef KES_ENGINE_HAVE_AIPP
    for (const auto& [index, text] : model.info.aipp) {
        const std::string& name = model.info.tensors[static_cast<size_t>(model.info.inputs[index])].name;
        kes_aipp_config* config = nullptr;
        if (kes_aipp_config_parse(text.data(), text.size(), name.c_str(), &config) != KES_OK)
            KES_FAIL(KES_ERR_CORRUPT_DATA, "model: the AIPP config of input %u (%s) is invalid: %s", index,
                     name.c_str(), kes_last_error());
        InputAipp& a = model.aipp[index];
        kes_aipp_params_init(&a.params);
        const uint32_t blocks = kes_aipp_config_count(config);
        const kes_status st = blocks == 1 ? kes_aipp_config_get(config, 0, &a.params) : KES_ERR_CORRUPT_DATA;
        kes_aipp_config_destroy(config);
        if (st != KES_OK)
            KES_FAIL(KES_ERR_CORRUPT_DATA, "model: input %u (%s) carries %u aipp_op blocks (one expected)", index,
                     name.c_str(), blocks);
        a.present = true;
    }
#endif
}

// Verifies the bytes and copies the weights into `weight` (or engine memory when NULL).
std::unique_ptr<kes_model> load(const uint8_t* data, size_t size, void* work, size_t work_size, void* weight,
                                size_t weight_size) {
    auto model = std::make_unique<kes_model>();
    model->info = kes::parse_kom(data, size);
    const kes::ModelInfo& m = model->info;
    // The kernels are built over the weights where they will stay, so the blob is copied first; the
    // sizes that include packed weights and scratch are known only then.
    check_region("weight", weight, weight_size, blob_bytes(m));
    model->work = work;
    model->work_size = work_size;
    if (m.weights_size != 0) {
        if (!weight) {
            if (kes_mem_alloc(KES_MEM_HOST, blob_bytes(m), &model->owned_weights) != KES_OK)
                KES_FAIL(KES_ERR_OUT_OF_MEMORY, "cannot allocate %zu weight bytes", blob_bytes(m));
        } else {
            model->weights = static_cast<const uint8_t*>(weight);
        }
        void* blob = weight ? weight : model->owned_weights;
        std::memcpy(blob, data + m.weights_offset, blob_bytes(m));
        model->weights = static_cast<const uint8_t*>(blob);
    }
    build_programs(*model);
    check_region("work", work, work_size, work_bytes(*model));
    if (weight) {
        check_region("weight", weight, weight_size, weight_bytes(*model));
        pack_weights(*model, static_cast<uint8_t*>(weight) + blob_bytes(m));
    } else {
        pack_weights_owned(*model);
    }
    prepare_aipp(*model);
    return model;
}

std::unique_ptr<kes_model> load_mapped(const char* path) {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        KES_FAIL(errno == ENOENT ? KES_ERR_NOT_FOUND : KES_ERR_IO, "cannot open '%s': %s", path, std::strerror(errno));
    struct stat st {};
    if (fstat(fd, &st) != 0 || st.st_size <= 0) {
        ::close(fd);
        KES_FAIL(KES_ERR_CORRUPT_DATA, "'%s' is empty or cannot be examined", path);
    }
    const size_t size = static_cast<size_t>(st.st_size);
    void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) KES_FAIL(KES_ERR_IO, "cannot map '%s': %s", path, std::strerror(errno));
    auto model = std::make_unique<kes_model>();
    model->map = map;
    model->map_size = size;
    const auto* bytes = static_cast<const uint8_t*>(map);
    model->info = kes::parse_kom(bytes, size);
    model->weights = model->info.weights_size ? bytes + model->info.weights_offset : nullptr;
    build_programs(*model);
    pack_weights_owned(*model);
    prepare_aipp(*model);
    return model;
}

// `shape` and `bytes`: the tensor at a gear (the file's shapes, or a program's).
void describe(const kes::TensorInfo& t, const kes::Shape& shape, uint64_t bytes, kes_tensor* out) {
    std::memset(out, 0, sizeof *out);
    out->dtype = t.dtype;
    out->layout = t.layout;
    out->ndim = static_cast<uint32_t>(shape.size());
    int64_t stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
        out->shape[d] = shape[d];
        out->strides[d] = stride;
        stride *= shape[d] > 1 ? shape[d] : 1;
    }
    out->size = static_cast<size_t>(bytes);
}

// Checks a caller tensor against the model's tensor `t` at the selected gear, without allocating
// (except to report).
void check_io(const char* what, size_t i, const kes::TensorInfo& t, const kes::Shape& shape, uint64_t bytes,
              const kes_tensor& x) {
    KES_REQUIRE(kes::enum_value(x.dtype) == t.dtype, "%s[%zu] (%s): dtype must be %s", what, i, t.name.c_str(),
                kes_dtype_name(t.dtype));
    bool same = x.ndim == shape.size();
    for (size_t d = 0; same && d < shape.size(); ++d) same = x.shape[d] == shape[d];
    KES_REQUIRE(same, "%s[%zu] (%s): shape differs from the model's %s", what, i, t.name.c_str(),
                kes::shape_string(shape).c_str());
    KES_REQUIRE(kes_tensor_is_contiguous(&x), "%s[%zu] (%s): must be contiguous", what, i, t.name.c_str());
    KES_REQUIRE(x.size >= bytes, "%s[%zu] (%s): size %zu < %llu bytes", what, i, t.name.c_str(), x.size,
                static_cast<unsigned long long>(bytes));
    KES_REQUIRE(x.data != nullptr || bytes == 0, "%s[%zu] (%s): data is NULL", what, i, t.name.c_str());
}

// Trace spans keep their names by pointer until the trace is written, possibly at exit after the model
// is gone: layer names are copied here once and kept for the process's life.
const char* intern(const std::string& name) {
    static std::mutex mutex;
    static auto* names = new std::set<std::string>();  // never freed: spans may be written at exit
    std::lock_guard<std::mutex> lock(mutex);
    return names->insert(name).first->c_str();
}

// One node on the pointers already in ctx->in_ptrs / out_ptrs; with profiling on, timed and traced (one
// span per node, named after it).
void run_node(kes_model_context* ctx, const kes::Program& p, size_t i, bool tracing) {
    if (!ctx->profiling) {
        p.kernels[i]->run(ctx->rc, ctx->in_ptrs.data(), ctx->out_ptrs.data());
        return;
    }
    if (tracing) kes_trace_begin("engine.node", ctx->span_names[i]);
    const auto start = std::chrono::steady_clock::now();
    p.kernels[i]->run(ctx->rc, ctx->in_ptrs.data(), ctx->out_ptrs.data());
    ctx->node_ns[i] = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
    if (tracing) kes_trace_end();
}

void run(kes_model_context* ctx) {
    const kes_model& model = *ctx->model;
    const kes::ModelInfo& m = model.info;
    const kes::Program& p = *ctx->program;
    auto ptr = [&](int32_t t) -> void* {
        if (t < 0) return nullptr;
        const kes::TensorInfo& ti = m.tensors[static_cast<size_t>(t)];
        // Weights are read-only: kernels receive them through const pointers only.
        const uint8_t* base = ti.weight >= 0 ? model.weights : ctx->arena;
        return const_cast<uint8_t*>(base) + ti.offset;
    };
    const bool tracing = kes_trace_enabled() != 0;
    for (size_t i = 0; i < m.nodes.size(); ++i) {
        const kes::NodeInfo& n = m.nodes[i];
        for (size_t k = 0; k < n.inputs.size(); ++k) ctx->in_ptrs[k] = ptr(n.inputs[k]);
        for (size_t k = 0; k < n.outputs.size(); ++k) ctx->out_ptrs[k] = ptr(n.outputs[k]);
        if (ctx->observer) {
            run_node(ctx, p, i, tracing);
            for (size_t k = 0; k < n.outputs.size(); ++k) {
                kes_tensor& t = ctx->observed[k];
                std::memset(&t, 0, sizeof t);
                ctx->observed_names[k] = "";
                if (n.outputs[k] < 0) continue;
                const size_t o = static_cast<size_t>(n.outputs[k]);
                ctx->observed_names[k] = m.tensors[o].name.c_str();
                describe(m.tensors[o], p.shapes[o], p.bytes[o], &t);
                t.data = ctx->out_ptrs[k];
            }
            ctx->observer(i, n.name.c_str(), ctx->observed_names.data(), ctx->observed.data(), n.outputs.size(),
                          ctx->observer_user);
            continue;
        }
        if (!ctx->profiling) {
            p.kernels[i]->run(ctx->rc, ctx->in_ptrs.data(), ctx->out_ptrs.data());
            continue;
        }
        run_node(ctx, p, i, tracing);
    }
}

// The argument checks both synchronous bodies (and the async queue) start with.
void check_counts(const kes::ModelInfo& m, bool has_inputs, size_t input_count, const kes_tensor* outputs,
                  size_t output_count) {
    KES_REQUIRE(input_count == m.inputs.size(), "input_count is %zu, the model has %zu inputs", input_count,
                m.inputs.size());
    KES_REQUIRE(output_count == m.outputs.size(), "output_count is %zu, the model has %zu outputs", output_count,
                m.outputs.size());
    KES_REQUIRE(has_inputs || input_count == 0, "inputs is NULL");
    KES_REQUIRE(outputs != nullptr, "outputs is NULL");
}

void check_outputs(const kes::ModelInfo& m, const kes::Program& p, const kes_tensor* outputs, size_t output_count) {
    for (size_t i = 0; i < output_count; ++i) {
        const size_t t = static_cast<size_t>(m.outputs[i]);
        check_io("outputs", i, m.tensors[t], p.shapes[t], p.bytes[t], outputs[i]);
    }
}

// Runs the nodes on the inputs already in the arena, then copies the graph outputs out.
void run_and_copy_outputs(kes_model_context* context, kes_tensor* outputs, size_t output_count) {
    const kes::ModelInfo& m = context->model->info;
    const kes::Program& p = *context->program;
    run(context);
    for (size_t i = 0; i < output_count; ++i) {
        const size_t t = static_cast<size_t>(m.outputs[i]);
        if (p.bytes[t]) std::memcpy(outputs[i].data, context->arena + m.tensors[t].offset, p.bytes[t]);
    }
}

// The synchronous body shared by kes_model_execute and the async worker.
void execute(kes_model_context* context, const kes_tensor* inputs, size_t input_count, kes_tensor* outputs,
             size_t output_count) {
    const kes::ModelInfo& m = context->model->info;
    const kes::Program& p = *context->program;
    check_counts(m, inputs != nullptr, input_count, outputs, output_count);
    for (size_t i = 0; i < input_count; ++i) {
        const size_t t = static_cast<size_t>(m.inputs[i]);
        check_io("inputs", i, m.tensors[t], p.shapes[t], p.bytes[t], inputs[i]);
    }
    check_outputs(m, p, outputs, output_count);
    for (size_t i = 0; i < input_count; ++i) {
        const size_t t = static_cast<size_t>(m.inputs[i]);
        if (p.bytes[t]) std::memcpy(context->arena + m.tensors[t].offset, inputs[i].data, p.bytes[t]);
    }
    run_and_copy_outputs(context, outputs, output_count);
}

// kes_model_execute_images: AIPP inputs are written by the aipp module straight into the arena.
void execute_images(kes_model_context* context, const kes_model_input* inputs, size_t input_count, kes_tensor* outputs,
                    size_t output_count) {
    const kes_model& model = *context->model;
    const kes::ModelInfo& m = model.info;
    const kes::Program& p = *context->program;
    check_counts(m, inputs != nullptr, input_count, outputs, output_count);
    for (size_t i = 0; i < input_count; ++i) {
        const size_t t = static_cast<size_t>(m.inputs[i]);
        const kes::TensorInfo& ti = m.tensors[t];
        const kes_model_input& in = inputs[i];
        if (model.aipp[i].present) {
            KES_REQUIRE(in.tensor == nullptr && in.images != nullptr,
                        "inputs[%zu] (%s) carries AIPP: give images (and no tensor)", i, ti.name.c_str());
            const int64_t batch = p.shapes[t].empty() ? 1 : p.shapes[t][0];
            KES_REQUIRE(in.image_count == static_cast<uint64_t>(batch),
                        "inputs[%zu] (%s): %u images for a batch of %lld", i, ti.name.c_str(), in.image_count,
                        static_cast<long long>(batch));
        } else {
            KES_REQUIRE(in.tensor != nullptr && in.images == nullptr,
                        "inputs[%zu] (%s) has no AIPP: give a tensor (and no images)", i, ti.name.c_str());
            check_io("inputs", i, ti, p.shapes[t], p.bytes[t], *in.tensor);
        }
    }
    check_outputs(m, p, outputs, output_count);
    for (size_t i = 0; i < input_count; ++i) {
        const size_t t = static_cast<size_t>(m.inputs[i]);
        const kes::TensorInfo& ti = m.tensors[t];
        uint8_t* dst = context->arena + ti.offset;
        if (!model.aipp[i].present) {
            if (p.bytes[t]) std::memcpy(dst, inputs[i].tensor->data, p.bytes[t]);
            continue;
        }
#ifdef KES_ENGINE_HAVE_AIPP
        if (model.aipp[i].params.aipp_mode == KES_AIPP_MODE_DYNAMIC)
            KES_FAIL(KES_ERR_UNSUPPORTED,
                     "inputs[%zu] (%s) has dynamic AIPP: run kes_aipp_dynamic_execute and kes_model_execute", i,
                     ti.name.c_str());
        kes_tensor tensor;
        describe(ti, p.shapes[t], p.bytes[t], &tensor);
        // An ND input (ONNX's, unless converted with --input-format) is NCHW, ATC's default input_format,
        // unless it is plainly channels-last: dim 3 is AIPP's channel count and dim 1 is not (models
        // exported from TensorFlow or Barracuda, e.g. BlazeFace [1,256,256,3]).
        if (tensor.layout == KES_LAYOUT_ND && tensor.ndim == 4) {
            const int64_t c = model.aipp[i].params.input_format == KES_AIPP_YUV400_U8 ? 1 : 3;
            tensor.layout = tensor.shape[3] == c && tensor.shape[1] != c ? KES_LAYOUT_NHWC : KES_LAYOUT_NCHW;
        }
        tensor.data = dst;
        if (kes_aipp_execute(&model.aipp[i].params, nullptr, inputs[i].images, inputs[i].image_count, &tensor) !=
            KES_OK)
            KES_FAIL(kes_last_status(), "inputs[%zu] (%s): AIPP: %s", i, ti.name.c_str(), kes_last_error());
#else
        KES_FAIL(KES_ERR_UNSUPPORTED,
                 "inputs[%zu] (%s) carries AIPP, and this build has no aipp module: pass the "
                 "AIPP output tensor to kes_model_execute",
                 i, ti.name.c_str());
#endif
    }
    run_and_copy_outputs(context, outputs, output_count);
}

// The synchronous calls and the gear setters need an empty queue (the worker uses the same arena and
// program). require_no_queued_work expects the context's mutex held.
void require_no_queued_work(const kes_model_context& context) {
    KES_REQUIRE(context.count == 0, "the context has asynchronous work queued: kes_model_context_wait first");
}

void require_idle(kes_model_context* context) {
    KES_REQUIRE_NOT_NULL(context);
    std::lock_guard<std::mutex> lock(context->mutex);
    require_no_queued_work(*context);
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

}  // namespace

namespace {

const kes::TensorInfo& io_tensor(const kes_model* model, bool input, size_t index) {
    KES_REQUIRE_NOT_NULL(model);
    const std::vector<int32_t>& list = input ? model->info.inputs : model->info.outputs;
    KES_REQUIRE(index < list.size(), "%s index %zu out of range (the model has %zu)", input ? "input" : "output", index,
                list.size());
    return model->info.tensors[static_cast<size_t>(list[index])];
}

kes_status find_io(const char* fn, const kes_model* model, bool input, const char* name, size_t* out_index) {
    return kes::guard(fn, [&] {
        KES_REQUIRE_NOT_NULL(model);
        KES_REQUIRE_NOT_NULL(name);
        KES_REQUIRE_NOT_NULL(out_index);
        const std::vector<int32_t>& list = input ? model->info.inputs : model->info.outputs;
        for (size_t i = 0; i < list.size(); ++i) {
            if (model->info.tensors[static_cast<size_t>(list[i])].name == name) {
                *out_index = i;
                return KES_OK;
            }
        }
        KES_FAIL(KES_ERR_NOT_FOUND, "the model has no %s named '%s'", input ? "input" : "output", name);
    });
}

// Multiply-adds × 2 of the compute-heavy ops (Conv, ConvTranspose, Gemm, MatMul) at the program's
// shapes, for the profile's GFLOP/s; 0 for other ops.
double layer_flops(const kes::ModelInfo& m, const kes::Program& p, size_t node) {
    const kes::NodeInfo& n = m.nodes[node];
    if (n.outputs.empty() || n.outputs[0] < 0 || n.inputs.size() < 2 || n.inputs[1] < 0) return 0.0;
    const kes::Shape& y = p.shapes[static_cast<size_t>(n.outputs[0])];
    const kes::Shape& w = p.shapes[static_cast<size_t>(n.inputs[1])];
    double out = 1.0, per = 1.0;
    for (int64_t d : y) out *= static_cast<double>(d);
    if (n.op == "Conv") {
        // Each output takes C/group × kernel taps: the weight's elements over its out channels.
        for (size_t d = 1; d < w.size(); ++d) per *= static_cast<double>(w[d]);
    } else if (n.op == "ConvTranspose") {
        for (int64_t d : w) per *= static_cast<double>(d);
        const kes::Shape& x = p.shapes[static_cast<size_t>(n.inputs[0])];
        double in = 1.0;
        for (int64_t d : x) in *= static_cast<double>(d);
        return 2.0 * in * per / std::max<double>(1.0, static_cast<double>(w.empty() ? 1 : w[0]));
    } else if (n.op == "Gemm" || n.op == "MatMul") {
        const kes::Shape& a = p.shapes[static_cast<size_t>(n.inputs[0])];
        const bool trans_a = n.op == "Gemm" && n.attrs.get_int("transA", 0) != 0;
        if (a.empty()) return 0.0;
        per = static_cast<double>(trans_a ? a.front() : a.back());
    } else {
        return 0.0;
    }
    return 2.0 * out * per;
}

// The sizes a load will need: the kernels are built over the file's own weight bytes (not packed).
void query_sizes(const uint8_t* data, size_t size, size_t* out_work_bytes, size_t* out_weight_bytes) {
    kes_model model;
    model.info = kes::parse_kom(data, size);
    model.weights = model.info.weights_size ? data + model.info.weights_offset : nullptr;
    build_programs(model);
    *out_work_bytes = work_bytes(model);
    *out_weight_bytes = weight_bytes(model);
}

}  // namespace

extern "C" {

kes_status kes_model_query_size(const void* data, size_t size, size_t* out_work_bytes, size_t* out_weight_bytes) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_work_bytes);
        KES_REQUIRE_NOT_NULL(out_weight_bytes);
        query_sizes(static_cast<const uint8_t*>(data), size, out_work_bytes, out_weight_bytes);
        return KES_OK;
    });
}

kes_status kes_model_query_size_from_file(const char* path, size_t* out_work_bytes, size_t* out_weight_bytes) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_work_bytes);
        KES_REQUIRE_NOT_NULL(out_weight_bytes);
        const std::vector<uint8_t> bytes = kes::read_file(path);
        query_sizes(bytes.data(), bytes.size(), out_work_bytes, out_weight_bytes);
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
        *out_model = load(static_cast<const uint8_t*>(data), size, work, work_size, weight, weight_size).release();
        return KES_OK;
    });
}

kes_status kes_model_load_from_file(const char* path, uint32_t flags, kes_model** out_model) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_model);
        *out_model = nullptr;
        KES_REQUIRE_NOT_NULL(path);
        KES_REQUIRE((flags & ~KES_MODEL_LOAD_MMAP) == 0, "unknown flags 0x%x", flags);
        if (flags & KES_MODEL_LOAD_MMAP) {
            *out_model = load_mapped(path).release();
        } else {
            const std::vector<uint8_t> bytes = kes::read_file(path);
            *out_model = load(bytes.data(), bytes.size(), nullptr, 0, nullptr, 0).release();
        }
        return KES_OK;
    });
}

kes_status kes_model_load_from_file_with_mem(const char* path, void* work, size_t work_size, void* weight,
                                             size_t weight_size, kes_model** out_model) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_model);
        *out_model = nullptr;
        const std::vector<uint8_t> bytes = kes::read_file(path);
        *out_model = load(bytes.data(), bytes.size(), work, work_size, weight, weight_size).release();
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
        *out_work_bytes = work_bytes(*model);
        *out_weight_bytes = weight_bytes(*model);
        return KES_OK;
    });
}

kes_status kes_model_get_memory_plan(const kes_model* model, size_t* out_arena_bytes, size_t* out_ideal_bytes) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(model);
        KES_REQUIRE_NOT_NULL(out_arena_bytes);
        KES_REQUIRE_NOT_NULL(out_ideal_bytes);
        *out_arena_bytes = arena_bytes(model->info);
        *out_ideal_bytes = static_cast<size_t>(model->info.ideal_size);
        return KES_OK;
    });
}

kes_status kes_model_input_count(const kes_model* model, size_t* out_count) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(model);
        KES_REQUIRE_NOT_NULL(out_count);
        *out_count = model->info.inputs.size();
        return KES_OK;
    });
}

kes_status kes_model_output_count(const kes_model* model, size_t* out_count) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(model);
        KES_REQUIRE_NOT_NULL(out_count);
        *out_count = model->info.outputs.size();
        return KES_OK;
    });
}

kes_status kes_model_input_name(const kes_model* model, size_t index, const char** out_name) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_name);
        *out_name = io_tensor(model, true, index).name.c_str();
        return KES_OK;
    });
}

kes_status kes_model_output_name(const kes_model* model, size_t index, const char** out_name) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_name);
        *out_name = io_tensor(model, false, index).name.c_str();
        return KES_OK;
    });
}

kes_status kes_model_input_desc(const kes_model* model, size_t index, kes_tensor* out_desc) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_desc);
        const kes::TensorInfo& t = io_tensor(model, true, index);
        describe(t, t.shape, t.bytes, out_desc);
        return KES_OK;
    });
}

kes_status kes_model_output_desc(const kes_model* model, size_t index, kes_tensor* out_desc) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_desc);
        const kes::TensorInfo& t = io_tensor(model, false, index);
        describe(t, t.shape, t.bytes, out_desc);
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
        if (config) {
            // The first release of this struct is today's: a larger one (a newer app) must have zeros past it.
            KES_REQUIRE(config->struct_size >= sizeof(uint32_t), "config->struct_size %u is too small",
                        config->struct_size);
            const size_t known = std::min<size_t>(config->struct_size, sizeof cfg);
            std::memcpy(&cfg, config, known);
            for (size_t b = sizeof cfg; b < config->struct_size; ++b)
                KES_REQUIRE(reinterpret_cast<const uint8_t*>(config)[b] == 0,
                            "config->struct_size %u is larger than this library's %zu and the extra bytes are not 0",
                            config->struct_size, sizeof cfg);
        }
        KES_REQUIRE(cfg.threads <= KES_MODEL_MAX_THREADS, "config->threads is %u; at most %d", cfg.threads,
                    KES_MODEL_MAX_THREADS);
        KES_REQUIRE(cfg.affinity_count == 0 || cfg.cpu_affinity != nullptr, "config->cpu_affinity is NULL");
        check_region("work", work, work_size, work_bytes(*model));
        auto ctx = std::make_unique<kes_model_context>();
        ctx->model = model;
        if (!work) work = model->work;
        if (!work) {
            const size_t bytes = std::max<size_t>(work_bytes(*model), KES_MEM_ALIGNMENT);
            if (kes_mem_alloc(KES_MEM_HOST, bytes, &ctx->owned_arena) != KES_OK)
                KES_FAIL(KES_ERR_OUT_OF_MEMORY, "cannot allocate the %zu-byte work arena", bytes);
            work = ctx->owned_arena;
        }
        ctx->arena = static_cast<uint8_t*>(work);
        ctx->program = &model->programs.front();
        ctx->in_ptrs.assign(model->info.max_node_inputs, nullptr);
        ctx->out_ptrs.assign(model->info.max_node_outputs, nullptr);
        ctx->node_ns.assign(model->info.nodes.size(), 0);
        ctx->observed.resize(model->info.max_node_outputs);
        ctx->observed_names.resize(model->info.max_node_outputs);
        // Threads: a pool of its own when CPUs are pinned, else the shared pool (at most its size).
        if (cfg.affinity_count != 0) {
            kes_thread_pool_config pc;
            kes_thread_pool_config_init(&pc);
            pc.threads = cfg.threads ? cfg.threads : std::min<uint32_t>(cfg.affinity_count, KES_MODEL_MAX_THREADS);
            pc.cpu_affinity = cfg.cpu_affinity;
            pc.affinity_count = cfg.affinity_count;
            pc.name = "kes-model";
            if (kes_thread_pool_create(&pc, &ctx->owned_pool) != KES_OK)
                KES_FAIL(kes_last_status(), "cannot create the context's thread pool: %s", kes_last_error());
            ctx->rc.pool = ctx->owned_pool;
        } else {
            ctx->rc.pool = kes_thread_pool_default();
        }
        const uint32_t pool_threads = ctx->rc.pool ? kes_thread_pool_size(ctx->rc.pool) : 1;
        ctx->rc.threads = std::max<uint32_t>(1, std::min<uint32_t>(cfg.threads ? cfg.threads : pool_threads,
                                                                   std::min<uint32_t>(pool_threads, kes::kMaxThreads)));
        if (ctx->rc.threads == 1) ctx->rc.pool = nullptr;
        ctx->rc.scratch = ctx->arena + arena_bytes(model->info);
        ctx->rc.scratch_size = model->scratch_size;
        *out_context = ctx.release();
        return KES_OK;
    });
}

kes_status kes_model_context_threads(const kes_model_context* context, uint32_t* out_threads) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(context);
        KES_REQUIRE_NOT_NULL(out_threads);
        *out_threads = context->rc.threads;
        return KES_OK;
    });
}

kes_status kes_model_context_set_profiling(kes_model_context* context, int enabled) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(context);
        std::lock_guard<std::mutex> lock(context->mutex);
        require_no_queued_work(*context);
        context->profiling = enabled != 0;
        if (context->profiling && context->span_names.empty())
            for (const kes::NodeInfo& n : context->model->info.nodes) context->span_names.push_back(intern(n.name));
        std::fill(context->node_ns.begin(), context->node_ns.end(), 0);
        return KES_OK;
    });
}

kes_status kes_model_context_set_observer(kes_model_context* context, kes_model_node_observer observer,
                                          void* user_data) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(context);
        std::lock_guard<std::mutex> lock(context->mutex);
        require_no_queued_work(*context);
        context->observer = observer;
        context->observer_user = user_data;
        return KES_OK;
    });
}

kes_status kes_model_layer_count(const kes_model* model, size_t* out_count) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(model);
        KES_REQUIRE_NOT_NULL(out_count);
        *out_count = model->info.nodes.size();
        return KES_OK;
    });
}

kes_status kes_model_context_layer_profile(const kes_model_context* context, size_t index,
                                           kes_model_layer_profile* out_layer) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(context);
        KES_REQUIRE_NOT_NULL(out_layer);
        KES_REQUIRE(
            out_layer->struct_size >= sizeof(uint32_t) && out_layer->struct_size <= sizeof(kes_model_layer_profile),
            "out_layer->struct_size %u is not sizeof(kes_model_layer_profile)", out_layer->struct_size);
        const kes::ModelInfo& m = context->model->info;
        KES_REQUIRE(index < m.nodes.size(), "layer %zu out of range (the model has %zu)", index, m.nodes.size());
        const kes::NodeInfo& n = m.nodes[index];
        const kes::Program& p = *context->program;
        kes_model_layer_profile full = {};
        full.struct_size = out_layer->struct_size;
        full.name = n.name.c_str();
        full.op = n.op.c_str();
        full.impl = p.kernels[index]->impl();
        full.time_ns = context->node_ns[index];
        full.output_index = n.outputs.empty() || n.outputs[0] < 0 ? -1 : n.outputs[0];
        if (!n.outputs.empty() && n.outputs[0] >= 0) {
            const kes::Shape& shape = p.shapes[static_cast<size_t>(n.outputs[0])];
            full.output_ndim = static_cast<uint32_t>(std::min<size_t>(shape.size(), KES_TENSOR_MAX_DIMS));
            for (uint32_t d = 0; d < full.output_ndim; ++d) full.output_shape[d] = shape[d];
        }
        full.flops = layer_flops(m, p, index);
        std::memcpy(out_layer, &full, out_layer->struct_size);  // older callers get the fields they know
        return KES_OK;
    });
}

void kes_model_context_destroy(kes_model_context* context) {
    delete context;
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
        check_counts(context->model->info, has_inputs, input_count, outputs, output_count);
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
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(model);
        KES_REQUIRE_NOT_NULL(out_count);
        const std::vector<int64_t>& gears = model->info.batch_gears;
        *out_count = gears.size();
        KES_REQUIRE(out_gears != nullptr || capacity == 0, "out_gears is NULL");
        for (size_t i = 0; i < gears.size() && i < capacity; ++i) out_gears[i] = gears[i];
        return KES_OK;
    });
}

// Selects a program for the context (no allocation): refused while asynchronous work is queued.
static kes_status select_program(kes_model_context* context, const kes::Program* p) {
    std::lock_guard<std::mutex> lock(context->mutex);
    require_no_queued_work(*context);
    context->program = p;
    return KES_OK;
}

kes_status kes_model_context_set_batch(kes_model_context* context, int64_t batch) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(context);
        const kes_model& model = *context->model;
        if (model.info.batch_gears.empty()) {
            KES_REQUIRE(batch == 0, "the model has a static batch: set_batch takes 0 only (got %lld)",
                        static_cast<long long>(batch));
            return KES_OK;
        }
        const kes::Program* p = batch == 0 ? &model.programs.front() : model.program_for(kes::Gear{batch, 0, 0});
        KES_REQUIRE(p != nullptr, "batch %lld is not one of the model's gears", static_cast<long long>(batch));
        return select_program(context, p);
    });
}

kes_status kes_model_image_sizes(const kes_model* model, int64_t* out_sizes, size_t capacity, size_t* out_count) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(model);
        KES_REQUIRE_NOT_NULL(out_count);
        const auto& sizes = model->info.image_sizes;
        *out_count = sizes.size();
        KES_REQUIRE(out_sizes != nullptr || capacity == 0, "out_sizes is NULL");
        for (size_t i = 0; i < sizes.size() && i < capacity; ++i) {
            out_sizes[2 * i] = sizes[i].first;
            out_sizes[2 * i + 1] = sizes[i].second;
        }
        return KES_OK;
    });
}

kes_status kes_model_context_set_image_size(kes_model_context* context, int64_t height, int64_t width) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(context);
        const kes_model& model = *context->model;
        const bool largest = height == 0 && width == 0;
        if (model.info.image_sizes.empty()) {
            KES_REQUIRE(largest, "the model has a static image size: set_image_size takes 0, 0 only (got %lldx%lld)",
                        static_cast<long long>(height), static_cast<long long>(width));
            return KES_OK;
        }
        const kes::Program* p = largest ? &model.programs.front() : model.program_for(kes::Gear{0, height, width});
        KES_REQUIRE(p != nullptr, "image size %lldx%lld (height x width) is not one of the model's gears",
                    static_cast<long long>(height), static_cast<long long>(width));
        return select_program(context, p);
    });
}

static kes_status context_io_desc(const kes_model_context* context, bool input, size_t index, kes_tensor* out_desc) {
    KES_REQUIRE_NOT_NULL(context);
    KES_REQUIRE_NOT_NULL(out_desc);
    const kes::TensorInfo& t = io_tensor(context->model, input, index);
    const size_t ti = static_cast<size_t>((input ? context->model->info.inputs : context->model->info.outputs)[index]);
    describe(t, context->program->shapes[ti], context->program->bytes[ti], out_desc);
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
        KES_REQUIRE_NOT_NULL(out_metadata);
        KES_REQUIRE(
            out_metadata->struct_size >= sizeof(uint32_t) && out_metadata->struct_size <= sizeof(kes_model_metadata),
            "out_metadata->struct_size %u is not sizeof(kes_model_metadata)", out_metadata->struct_size);
        const kes::ModelInfo& m = model->info;
        kes_model_metadata full = {};
        full.struct_size = out_metadata->struct_size;
        full.format_version = m.format_version;
        full.source_format = m.source_format.c_str();
        full.source_hash = m.source_hash.c_str();
        full.converter_version = m.converter_version.c_str();
        full.target_board = m.target_board.c_str();
        std::memcpy(out_metadata, &full, out_metadata->struct_size);  // older callers get the fields they know
        return KES_OK;
    });
}

kes_status kes_model_input_aipp(const kes_model* model, size_t index, const char** out_config) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_config);
        io_tensor(model, true, index);  // range check
        *out_config = nullptr;
        for (const auto& [input, text] : model->info.aipp)
            if (input == index) *out_config = text.c_str();
        return KES_OK;
    });
}

}  // extern "C"
