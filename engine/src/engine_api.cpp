// engine_api.cpp — the C API of kestrel/engine.h: loading (memory, file, mmap, caller memory),
// description, contexts and the synchronous CPU executor.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

#include "kernels.hpp"
#include "kes/error.hpp"
#include "kes/math.hpp"
#include "kestrel/engine.h"
#include "kestrel/trace.h"
#include "model.hpp"

struct kes_model {
    kes::ModelInfo info;
    const uint8_t* weights = nullptr;  // the 128-byte aligned blob (owned, caller's or mapped)
    void* owned_weights = nullptr;     // kes_mem_alloc'd
    void* map = nullptr;               // mmap of the file (KES_MODEL_LOAD_MMAP)
    size_t map_size = 0;
    void* work = nullptr;  // caller work memory from a *_with_mem load
    size_t work_size = 0;

    ~kes_model() {
        kes_mem_free(owned_weights);
        if (map) munmap(map, map_size);
    }
};

struct kes_model_context {
    const kes_model* model = nullptr;
    uint8_t* arena = nullptr;
    void* owned_arena = nullptr;
    ~kes_model_context() { kes_mem_free(owned_arena); }
};

namespace {

size_t arena_bytes(const kes::ModelInfo& m) {
    return static_cast<size_t>(m.arena_size);
}
size_t weight_bytes(const kes::ModelInfo& m) {
    return static_cast<size_t>(m.weights_size);
}

void check_region(const char* what, const void* ptr, size_t size, size_t needed) {
    if (!ptr) {
        KES_REQUIRE(size == 0, "%s is NULL but %s_size is %zu", what, what, size);
        return;
    }
    KES_REQUIRE(reinterpret_cast<uintptr_t>(ptr) % KES_MEM_ALIGNMENT == 0, "%s %p is not 128-byte aligned", what, ptr);
    KES_REQUIRE(size >= needed, "%s_size %zu is smaller than the model needs (%zu bytes)", what, size, needed);
}

// Verifies the bytes and copies the weights into `weight` (or engine memory when NULL).
std::unique_ptr<kes_model> load(const uint8_t* data, size_t size, void* work, size_t work_size, void* weight,
                                size_t weight_size) {
    auto model = std::make_unique<kes_model>();
    model->info = kes::parse_kom(data, size);
    const kes::ModelInfo& m = model->info;
    check_region("work", work, work_size, arena_bytes(m));
    check_region("weight", weight, weight_size, weight_bytes(m));
    model->work = work;
    model->work_size = work_size;
    if (m.weights_size == 0) return model;
    if (!weight) {
        if (kes_mem_alloc(KES_MEM_HOST, weight_bytes(m), &model->owned_weights) != KES_OK)
            KES_FAIL(KES_ERR_OUT_OF_MEMORY, "cannot allocate %zu weight bytes", weight_bytes(m));
        weight = model->owned_weights;
    }
    std::memcpy(weight, data + m.weights_offset, weight_bytes(m));
    model->weights = static_cast<const uint8_t*>(weight);
    return model;
}

std::vector<uint8_t> read_file(const char* path) {
    KES_REQUIRE_NOT_NULL(path);
    std::ifstream in(path, std::ios::binary);
    if (!in) KES_FAIL(KES_ERR_IO, "cannot open '%s': %s", path, std::strerror(errno));
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) KES_FAIL(KES_ERR_IO, "cannot read '%s'", path);
    return bytes;
}

std::unique_ptr<kes_model> load_mapped(const char* path) {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) KES_FAIL(KES_ERR_IO, "cannot open '%s': %s", path, std::strerror(errno));
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
    return model;
}

void describe(const kes::TensorInfo& t, kes_tensor* out) {
    std::memset(out, 0, sizeof *out);
    out->dtype = t.dtype;
    out->layout = t.layout;
    out->ndim = t.ndim;
    int64_t stride = 1;
    for (uint32_t d = t.ndim; d-- > 0;) {
        out->shape[d] = t.shape[d];
        out->strides[d] = stride;
        stride *= t.shape[d] > 1 ? t.shape[d] : 1;
    }
    out->size = static_cast<size_t>(t.bytes);
}

// Checks a caller tensor against the model's tensor `t` without allocating (except to report).
void check_io(const char* what, size_t i, const kes::TensorInfo& t, const kes_tensor& x) {
    KES_REQUIRE(kes::enum_value(x.dtype) == KES_F32, "%s[%zu] (%s): dtype must be f32", what, i, t.name.c_str());
    bool same = x.ndim == t.ndim;
    for (uint32_t d = 0; same && d < t.ndim; ++d) same = x.shape[d] == t.shape[d];
    KES_REQUIRE(same, "%s[%zu] (%s): shape differs from the model's (ndim %u, want %u)", what, i, t.name.c_str(),
                x.ndim, t.ndim);
    KES_REQUIRE(kes_tensor_is_contiguous(&x), "%s[%zu] (%s): must be contiguous", what, i, t.name.c_str());
    KES_REQUIRE(x.size >= t.bytes, "%s[%zu] (%s): size %zu < %llu bytes", what, i, t.name.c_str(), x.size,
                static_cast<unsigned long long>(t.bytes));
    KES_REQUIRE(x.data != nullptr || t.bytes == 0, "%s[%zu] (%s): data is NULL", what, i, t.name.c_str());
}

void run(kes_model_context* ctx) {
    const kes_model& model = *ctx->model;
    const kes::ModelInfo& m = model.info;
    auto ptr = [&](int32_t t) -> float* {
        const kes::TensorInfo& ti = m.tensors[static_cast<size_t>(t)];
        // Weights are read-only: kernels take them through const parameters only.
        const uint8_t* base = ti.weight >= 0 ? model.weights : ctx->arena;
        return reinterpret_cast<float*>(const_cast<uint8_t*>(base) + ti.offset);
    };
    for (const kes::NodeInfo& n : m.nodes) {
        const kes::TensorInfo& out = m.tensors[static_cast<size_t>(n.output)];
        const kes::TensorInfo& in0 = m.tensors[static_cast<size_t>(n.inputs[0])];
        float* po = ptr(n.output);
        const float* p0 = ptr(n.inputs[0]);
        switch (n.op) {
            case kes::Op::Add:
            case kes::Op::Sub:
            case kes::Op::Mul:
                kes::kernel_binary(n.op, in0, p0, m.tensors[static_cast<size_t>(n.inputs[1])], ptr(n.inputs[1]), out,
                                   po, n.fused_relu);
                break;
            case kes::Op::Relu:
            case kes::Op::Abs:
            case kes::Op::Reshape: kes::kernel_unary(n.op, out.elements, p0, po); break;
            case kes::Op::Conv2D:
                kes::kernel_conv2d(n, in0, p0, m.tensors[static_cast<size_t>(n.inputs[1])], ptr(n.inputs[1]),
                                   n.input_count == 3 ? ptr(n.inputs[2]) : nullptr, out, po);
                break;
            case kes::Op::FullyConnected:
                kes::kernel_fully_connected(in0, p0, m.tensors[static_cast<size_t>(n.inputs[1])], ptr(n.inputs[1]),
                                            n.input_count == 3 ? ptr(n.inputs[2]) : nullptr, po, n.fused_relu);
                break;
            case kes::Op::MatMul:
                kes::kernel_matmul(in0, p0, m.tensors[static_cast<size_t>(n.inputs[1])], ptr(n.inputs[1]), po);
                break;
        }
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

}  // namespace

extern "C" {

kes_status kes_model_query_size(const void* data, size_t size, size_t* out_work_bytes, size_t* out_weight_bytes) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_work_bytes);
        KES_REQUIRE_NOT_NULL(out_weight_bytes);
        const kes::ModelInfo m = kes::parse_kom(static_cast<const uint8_t*>(data), size);
        *out_work_bytes = arena_bytes(m);
        *out_weight_bytes = weight_bytes(m);
        return KES_OK;
    });
}

kes_status kes_model_query_size_from_file(const char* path, size_t* out_work_bytes, size_t* out_weight_bytes) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_work_bytes);
        KES_REQUIRE_NOT_NULL(out_weight_bytes);
        const std::vector<uint8_t> bytes = read_file(path);
        const kes::ModelInfo m = kes::parse_kom(bytes.data(), bytes.size());
        *out_work_bytes = arena_bytes(m);
        *out_weight_bytes = weight_bytes(m);
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
            const std::vector<uint8_t> bytes = read_file(path);
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
        const std::vector<uint8_t> bytes = read_file(path);
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
        *out_work_bytes = arena_bytes(model->info);
        *out_weight_bytes = weight_bytes(model->info);
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
        describe(io_tensor(model, true, index), out_desc);
        return KES_OK;
    });
}

kes_status kes_model_output_desc(const kes_model* model, size_t index, kes_tensor* out_desc) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_desc);
        describe(io_tensor(model, false, index), out_desc);
        return KES_OK;
    });
}

kes_status kes_model_find_input(const kes_model* model, const char* name, size_t* out_index) {
    return find_io(__func__, model, true, name, out_index);
}

kes_status kes_model_find_output(const kes_model* model, const char* name, size_t* out_index) {
    return find_io(__func__, model, false, name, out_index);
}

kes_status kes_model_context_create(const kes_model* model, void* work, size_t work_size,
                                    kes_model_context** out_context) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_context);
        *out_context = nullptr;
        KES_REQUIRE_NOT_NULL(model);
        check_region("work", work, work_size, arena_bytes(model->info));
        auto ctx = std::make_unique<kes_model_context>();
        ctx->model = model;
        if (!work) work = model->work;
        if (!work) {
            const size_t bytes = arena_bytes(model->info) ? arena_bytes(model->info) : KES_MEM_ALIGNMENT;
            if (kes_mem_alloc(KES_MEM_HOST, bytes, &ctx->owned_arena) != KES_OK)
                KES_FAIL(KES_ERR_OUT_OF_MEMORY, "cannot allocate the %zu-byte work arena", bytes);
            work = ctx->owned_arena;
        }
        ctx->arena = static_cast<uint8_t*>(work);
        *out_context = ctx.release();
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
        KES_REQUIRE_NOT_NULL(context);
        const kes::ModelInfo& m = context->model->info;
        KES_REQUIRE(input_count == m.inputs.size(), "input_count is %zu, the model has %zu inputs", input_count,
                    m.inputs.size());
        KES_REQUIRE(output_count == m.outputs.size(), "output_count is %zu, the model has %zu outputs", output_count,
                    m.outputs.size());
        KES_REQUIRE(inputs != nullptr, "inputs is NULL");
        KES_REQUIRE(outputs != nullptr, "outputs is NULL");
        for (size_t i = 0; i < input_count; ++i) check_io("inputs", i, m.tensors[m.inputs[i]], inputs[i]);
        for (size_t i = 0; i < output_count; ++i) check_io("outputs", i, m.tensors[m.outputs[i]], outputs[i]);
        for (size_t i = 0; i < input_count; ++i) {
            const kes::TensorInfo& t = m.tensors[m.inputs[i]];
            if (t.bytes) std::memcpy(context->arena + t.offset, inputs[i].data, t.bytes);
        }
        run(context);
        for (size_t i = 0; i < output_count; ++i) {
            const kes::TensorInfo& t = m.tensors[m.outputs[i]];
            if (t.bytes) std::memcpy(outputs[i].data, context->arena + t.offset, t.bytes);
        }
        return KES_OK;
    });
}

}  // extern "C"
