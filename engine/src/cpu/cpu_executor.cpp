// cpu_executor.cpp — the CPU backend behind executor.hpp: a .kom model verified by parse_kom, one
// program of kernels per gear (fast kernels where they apply, packed once into the weight region),
// one static arena per context with the kernels' scratch at its end, static AIPP run into the arena.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "../executor.hpp"
#include "../kernels/common/kernels.hpp"
#include "../memory_plan.hpp"
#include "../model.hpp"
#include "kes/error.hpp"
#include "kes/file.hpp"
#include "kes/logging.hpp"
#include "kes/math.hpp"
#include "kestrel/memory.h"
#include "kestrel/thread_pool.h"
#include "kestrel/trace.h"
#ifdef KES_ENGINE_HAVE_AIPP
#include "kestrel/aipp.h"
#endif

namespace kes {
namespace {

size_t align128(size_t n) {
    return (n + KES_MEM_ALIGNMENT - 1) / KES_MEM_ALIGNMENT * KES_MEM_ALIGNMENT;
}

void check_region(const char* what, const void* ptr, size_t size, size_t needed) {
    if (!ptr) {
        KES_REQUIRE(size == 0, "%s is NULL but %s_size is %zu", what, what, size);
        return;
    }
    KES_REQUIRE(reinterpret_cast<uintptr_t>(ptr) % KES_MEM_ALIGNMENT == 0, "%s %p is not 128-byte aligned", what, ptr);
    KES_REQUIRE(size >= needed, "%s_size %zu is smaller than the model needs (%zu bytes)", what, size, needed);
}

// The AIPP of one graph input, parsed from the model's aipp_op text when the model loads.
struct InputAipp {
    bool present = false;
#ifdef KES_ENGINE_HAVE_AIPP
    kes_aipp_params params{};
#endif
};

// `shape` and `bytes`: the tensor at a gear (the file's shapes, or a program's).
void describe(const TensorInfo& t, const Shape& shape, uint64_t bytes, kes_tensor* out) {
    describe_contiguous(t.dtype, t.layout, shape, static_cast<size_t>(bytes), out);
}

class CpuModel final : public Executor {
public:
    ModelInfo info;
    std::vector<InputAipp> aipp;       // one per graph input
    std::vector<Program> programs;     // [0]: as written (the largest gear); then the other gears
    const uint8_t* weights = nullptr;  // the 128-byte aligned blob (owned, caller's or mapped)
    void* owned_weights = nullptr;     // kes_mem_alloc'd
    // Kernel interface v2: packed weights (one slice per node, shared by every gear) after the blob
    // in the weight region, and the scratch every context reserves after its arena.
    size_t packed_size = 0;
    size_t scratch_size = 0;
    std::vector<size_t> packed_offset;  // per node, into the packed region
    uint8_t* packed = nullptr;
    void* owned_packed = nullptr;
    // Fusion (fuse_programs): fused_into[i] = j when depthwise node i runs inside node j's fused kernel
    // (then the intermediate tensor is not in the arena), fused_from[j] = i; -1 otherwise. A context with
    // an observer runs the nodes apart and keeps each intermediate in its spill buffer, at spill_offset.
    std::vector<int32_t> fused_into, fused_from;
    std::vector<std::string> fused_note;  // per skipped node: its profile's impl, "fused into <node>"
    std::vector<uint64_t> spill_offset;   // per tensor (intermediates only)
    std::vector<bool> spilled;            // per tensor: an intermediate fusion keeps out of the arena
    size_t spill_size = 0;
    bool fused() const { return spill_size != 0; }
    MappedFile map;        // the file, for KES_MODEL_LOAD_MMAP
    void* work = nullptr;  // caller work memory from a *_with_mem load
    size_t work_size = 0;
    std::vector<IoDesc> input_descs, output_descs;

    ~CpuModel() override {
        programs.clear();  // kernels may point into the weights
        kes_mem_free(owned_packed);
        kes_mem_free(owned_weights);
    }
    const Program* program_for(const Gear& gear) const {
        for (const Program& p : programs)
            if (p.gear.batch == gear.batch && p.gear.height == gear.height && p.gear.width == gear.width) return &p;
        return nullptr;
    }
    size_t arena_bytes() const { return static_cast<size_t>(info.arena_size); }
    size_t blob_bytes() const { return static_cast<size_t>(info.weights_size); }

    const char* backend() const override { return "cpu"; }
    // The arena plus the largest scratch of any node, and the weight blob plus the packed weights.
    size_t work_bytes() const override { return arena_bytes() + scratch_size; }
    size_t weight_bytes() const override { return blob_bytes() + packed_size; }
    void memory_plan(size_t* arena, size_t* ideal) const override {
        *arena = arena_bytes();
        *ideal = static_cast<size_t>(info.ideal_size);
    }
    const std::vector<IoDesc>& inputs() const override { return input_descs; }
    const std::vector<IoDesc>& outputs() const override { return output_descs; }
    const std::vector<int64_t>& batch_gears() const override { return info.batch_gears; }
    const std::vector<std::pair<int64_t, int64_t>>& image_sizes() const override { return info.image_sizes; }
    const char* input_aipp(size_t index) const override {
        for (const auto& [input, text] : info.aipp)
            if (input == index) return text.c_str();
        return nullptr;
    }
    void metadata(kes_model_metadata* out) const override {
        out->format_version = info.format_version;
        out->source_format = info.source_format.c_str();
        out->source_hash = info.source_hash.c_str();
        out->converter_version = info.converter_version.c_str();
        out->target_board = info.target_board.c_str();
    }
    size_t layer_count() const override { return info.nodes.size(); }
    std::unique_ptr<ExecutorContext> create_context(void* work_memory, size_t work_memory_size,
                                                    const ContextConfig& config) const override;

    void describe_io() {
        for (bool input : {true, false}) {
            std::vector<IoDesc>& list = input ? input_descs : output_descs;
            for (int32_t t : input ? info.inputs : info.outputs) {
                const TensorInfo& ti = info.tensors[static_cast<size_t>(t)];
                IoDesc d;
                d.name = ti.name;
                describe(ti, ti.shape, ti.bytes, &d.desc);
                list.push_back(std::move(d));
            }
        }
    }
};

// Re-plans the arena without the intermediates of the fused pairs (the .kom's plan holds them): the
// writer's procedure (memory_plan.hpp) over the graph as the fused program runs it — the depthwise node
// gone, its consumer reading the depthwise input (whose life thus reaches the consumer) — sharing bytes
// only where the file did and share_buffers still allows. The intermediates get offsets in the spill
// buffer instead, planned over their own lifetimes (depthwise node to consumer), for observed runs.
void replan_fused(CpuModel& model) {
    ModelInfo& m = model.info;
    const size_t nt = m.tensors.size(), nn = m.nodes.size();
    std::vector<std::vector<int32_t>> ins(nn), outs(nn);
    for (size_t i = 0; i < nn; ++i) ins[i] = m.nodes[i].inputs, outs[i] = m.nodes[i].outputs;
    for (size_t i = 0; i < nn; ++i) {
        const int32_t j = model.fused_into[i];
        if (j < 0) continue;
        ins[static_cast<size_t>(j)][0] = ins[i][0];
        ins[i].clear();
        outs[i].clear();
    }
    SharingGraph g;
    g.tensors.resize(nt);
    for (size_t t = 0; t < nt; ++t)
        g.tensors[t] = SharingGraph::Tensor{m.tensors[t].dtype, &m.tensors[t].shape, m.tensors[t].weight < 0};
    for (size_t i = 0; i < nn; ++i) g.nodes.push_back(SharingGraph::Node{m.nodes[i].op, &ins[i], &outs[i]});
    g.inputs = &m.inputs;
    g.outputs = &m.outputs;
    const BufferSharing sharing = share_buffers(g, [&](ShareKind, size_t node, size_t input) {
        const TensorInfo& in = m.tensors[static_cast<size_t>(ins[node][input])];
        const TensorInfo& out = m.tensors[static_cast<size_t>(outs[node][0])];
        return in.capacity != 0 && out.capacity != 0 && in.offset == out.offset;  // as the file shares
    });
    std::vector<size_t> buffer_of(nt, SIZE_MAX);
    std::vector<PlanBuffer> buffers, spills;
    std::vector<size_t> spill_of(nt, SIZE_MAX);
    for (size_t t = 0; t < nt; ++t) {
        if (m.tensors[t].weight >= 0) continue;
        if (model.spilled[t]) {
            spill_of[t] = spills.size();
            spills.push_back(PlanBuffer{m.tensors[t].capacity, 0, 0});
            continue;
        }
        int64_t first = sharing.first[t], last = sharing.last[t];
        if (first == INT64_MAX) first = last = 0;  // unused: a slot anyway, as the writer gives it
        const size_t r = sharing.group[t];
        if (buffer_of[r] == SIZE_MAX) {
            buffer_of[r] = buffers.size();
            buffers.push_back(PlanBuffer{0, first, last});
        }
        PlanBuffer& b = buffers[buffer_of[r]];
        b.size = std::max(b.size, m.tensors[t].capacity);
        b.first = std::min(b.first, first);
        b.last = std::max(b.last, last);
        buffer_of[t] = buffer_of[r];
    }
    for (size_t i = 0; i < nn; ++i)
        if (model.fused_into[i] >= 0) {
            PlanBuffer& b = spills[spill_of[static_cast<size_t>(m.nodes[i].outputs[0])]];
            b.first = static_cast<int64_t>(i), b.last = model.fused_into[i];
        }
    const MemoryPlanResult plan = plan_memory(buffers), spill = plan_memory(spills);
    model.spill_offset.assign(nt, 0);
    for (size_t t = 0; t < nt; ++t) {
        if (m.tensors[t].weight >= 0) continue;
        if (model.spilled[t])
            model.spill_offset[t] = spill.offsets[spill_of[t]];
        else
            m.tensors[t].offset = plan.offsets[buffer_of[t]];
    }
    m.arena_size = plan.arena_size;
    m.ideal_size = plan.ideal_size;
    model.spill_size = static_cast<size_t>(std::max<uint64_t>(spill.arena_size, KES_MEM_ALIGNMENT));
}

// Depthwise → pointwise fusion (kernels::fuse_depthwise_pointwise), decided here at load so that every
// .kom gains it and the format stays: a depthwise Conv whose output is read by exactly one node, a Conv
// taking it as input 0 (and nowhere else), and is no graph output, runs inside that Conv's kernel when
// every gear's fast kernels fuse. KES_KERNELS=reference has no fast kernels, hence no fusion: the
// oracle runs every node apart.
void fuse_programs(CpuModel& model) {
    const ModelInfo& m = model.info;
    const size_t nn = m.nodes.size(), nt = m.tensors.size();
    for (Program& p : model.programs) p.fused.resize(nn);
    model.fused_into.assign(nn, -1);
    model.fused_from.assign(nn, -1);
    model.fused_note.assign(nn, std::string());
    model.spilled.assign(nt, false);
    std::vector<int32_t> reader(nt, -1);
    std::vector<uint32_t> reads(nt, 0);
    for (size_t i = 0; i < nn; ++i)
        for (int32_t t : m.nodes[i].inputs)
            if (t >= 0) ++reads[static_cast<size_t>(t)], reader[static_cast<size_t>(t)] = static_cast<int32_t>(i);
    for (int32_t t : m.outputs) reads[static_cast<size_t>(t)] += 2;  // a graph output stays in the arena
    bool any = false;
    for (size_t i = 0; i < nn; ++i) {
        const NodeInfo& dw = m.nodes[i];
        if (dw.op != "Conv" || dw.outputs.size() != 1 || dw.inputs.empty() || dw.inputs[0] < 0) continue;
        const size_t d = static_cast<size_t>(dw.outputs[0]);
        if (reads[d] != 1) continue;
        const size_t j = static_cast<size_t>(reader[d]);
        const NodeInfo& pw = m.nodes[j];
        if (pw.op != "Conv" || pw.inputs[0] != dw.outputs[0] || model.fused_from[i] >= 0) continue;
        bool every_gear = true;
        for (Program& p : model.programs) {
            p.fused[j] = kernels::fuse_depthwise_pointwise(*p.kernels[i], *p.kernels[j]);
            every_gear = every_gear && p.fused[j] != nullptr;
        }
        if (!every_gear) {
            for (Program& p : model.programs) p.fused[j].reset();
            continue;
        }
        model.fused_into[i] = static_cast<int32_t>(j);
        model.fused_from[j] = static_cast<int32_t>(i);
        model.fused_note[i] = "fused into " + pw.name;
        model.spilled[d] = true;
        any = true;
    }
    if (any) replan_fused(model);
}

// The kernels of every gear (the largest, as written, first), with fast kernels where they apply; then
// the sizes they need: packed weights (one slice per node, laid out from the first gear, which every
// other gear's kernel of that node shares) and scratch (the largest of any kernel at kMaxThreads).
void build_programs(CpuModel& model) {
    const ModelInfo& m = model.info;
    Gear largest;
    if (!m.batch_gears.empty()) largest.batch = m.batch_gears.back();
    if (!m.image_sizes.empty()) std::tie(largest.height, largest.width) = m.image_sizes.back();
    model.programs.push_back(build_program(m, model.weights, largest, true));
    for (size_t g = 0; g + 1 < m.batch_gears.size(); ++g)
        model.programs.push_back(build_program(m, model.weights, Gear{m.batch_gears[g], 0, 0}, true));
    for (size_t g = 0; g + 1 < m.image_sizes.size(); ++g)
        model.programs.push_back(
            build_program(m, model.weights, Gear{0, m.image_sizes[g].first, m.image_sizes[g].second}, true));

    // Fusion pays in time and must not cost memory: where the fused pairs' tile scratch outgrows what the
    // re-planned arena saves (a model whose peak lies elsewhere: BlazeFace-128), every pair stays apart.
    const std::vector<TensorInfo> tensors_apart = m.tensors;
    const uint64_t arena_apart = m.arena_size, ideal_apart = m.ideal_size;
    fuse_programs(model);
    model.packed_offset.assign(m.nodes.size(), 0);
    size_t packed = 0, scratch = 0, scratch_apart = 0;
    for (size_t i = 0; i < m.nodes.size(); ++i) {
        const size_t bytes = model.programs.front().kernels[i]->packed_bytes();
        model.packed_offset[i] = packed;
        packed += align128(bytes);
        for (const Program& p : model.programs) {
            // Packing depends on the weights and attributes only (op.hpp), so every gear agrees.
            if (p.kernels[i]->packed_bytes() != bytes)
                KES_FAIL(KES_ERR_INTERNAL, "model: node %zu (%s): the packed weights differ between gears", i,
                         m.nodes[i].name.c_str());
            scratch_apart = std::max(scratch_apart, p.kernels[i]->scratch_bytes(kMaxThreads));
            if (p.fused[i]) scratch = std::max(scratch, p.fused[i]->scratch_bytes(kMaxThreads));
        }
    }
    scratch = std::max(scratch, scratch_apart);
    if (model.fused() && model.info.arena_size + align128(scratch) > arena_apart + align128(scratch_apart)) {
        model.info.tensors = tensors_apart;
        model.info.arena_size = arena_apart;
        model.info.ideal_size = ideal_apart;
        for (Program& p : model.programs)
            for (auto& f : p.fused) f.reset();
        std::fill(model.fused_into.begin(), model.fused_into.end(), -1);
        std::fill(model.fused_from.begin(), model.fused_from.end(), -1);
        std::fill(model.fused_note.begin(), model.fused_note.end(), std::string());
        std::fill(model.spilled.begin(), model.spilled.end(), false);
        model.spill_size = 0;
        scratch = scratch_apart;
    }
    model.packed_size = packed;
    model.scratch_size = align128(scratch);
}

// Packs every node's weights once into `region` (packed_size bytes) and gives the slice to each gear.
void pack_weights(CpuModel& model, uint8_t* region) {
    model.packed = region;
    for (size_t i = 0; i < model.info.nodes.size(); ++i) {
        if (model.programs.front().kernels[i]->packed_bytes() == 0) continue;
        uint8_t* slice = region + model.packed_offset[i];
        model.programs.front().kernels[i]->pack(slice);
        for (Program& p : model.programs) p.kernels[i]->bind_packed(slice);
    }
}

// The packed region in engine memory (no caller weight memory, or a mapped file).
void pack_weights_owned(CpuModel& model) {
    if (model.packed_size == 0) return;
    if (kes_mem_alloc(KES_MEM_HOST, model.packed_size, &model.owned_packed) != KES_OK)
        KES_FAIL(KES_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of packed weights", model.packed_size);
    pack_weights(model, static_cast<uint8_t*>(model.owned_packed));
}

// Parses each input's aipp_op text (one block, written by kes-convert) into AIPP parameters, so that
// kes_model_execute_images runs it. A text the aipp module refuses makes the file corrupt.
void prepare_aipp(CpuModel& model) {
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
        // Said once at load, not per frame: the file predates recorded layouts (kes-convert now writes
        // one for every AIPP input), so the rule of engine.h applies and the user should know it does.
        const TensorInfo& ti = model.info.tensors[static_cast<size_t>(model.info.inputs[index])];
        if (ti.layout == KES_LAYOUT_ND && ti.shape.size() == 4)
            KES_LOGW("engine",
                     "input %u (%s): the model records no layout for its AIPP output (an older kes-convert): "
                     "read as NCHW, ATC's default; convert it again if the model takes NHWC",
                     index, name.c_str());
    }
#endif
}

// What every load ends with: the AIPP of the inputs and the I/O descriptions.
void finish_load(CpuModel& model) {
    // Said at load, once per model: such a file's weights may be damaged without anything noticing.
    if (!model.info.has_weights_crc && model.info.weights_size != 0) {
        KES_LOGI("engine",
                 "the model carries no weight checksum (written by a kes-convert before it): its weights are "
                 "loaded unverified; convert it again to have them checked");
    }
    prepare_aipp(model);
    model.describe_io();
}

// Verifies the bytes and copies the weights into `weight` (or engine memory when NULL).
std::unique_ptr<Executor> load(const uint8_t* data, size_t size, void* work, size_t work_size, void* weight,
                               size_t weight_size) {
    auto model = std::make_unique<CpuModel>();
    model->info = parse_kom(data, size);
    const ModelInfo& m = model->info;
    // The kernels are built over the weights where they will stay, so the blob is copied first; the
    // sizes that include packed weights and scratch are known only then.
    check_region("weight", weight, weight_size, model->blob_bytes());
    model->work = work;
    model->work_size = work_size;
    if (m.weights_size != 0) {
        if (!weight && kes_mem_alloc(KES_MEM_HOST, model->blob_bytes(), &model->owned_weights) != KES_OK)
            KES_FAIL(KES_ERR_OUT_OF_MEMORY, "cannot allocate %zu weight bytes", model->blob_bytes());
        void* blob = weight ? weight : model->owned_weights;
        std::memcpy(blob, data + m.weights_offset, model->blob_bytes());
        model->weights = static_cast<const uint8_t*>(blob);
    }
    build_programs(*model);
    check_region("work", work, work_size, model->work_bytes());
    if (weight) {
        check_region("weight", weight, weight_size, model->weight_bytes());
        pack_weights(*model, static_cast<uint8_t*>(weight) + model->blob_bytes());
    } else {
        pack_weights_owned(*model);
    }
    finish_load(*model);
    return model;
}

std::unique_ptr<Executor> load_mapped(const char* path, bool verify_weights) {
    auto model = std::make_unique<CpuModel>();
    model->map = MappedFile(path);
    if (model->map.size() == 0) KES_FAIL(KES_ERR_CORRUPT_DATA, "'%s' is empty", path);
    const uint8_t* bytes = model->map.data();
    model->info = parse_kom(bytes, model->map.size(), verify_weights ? WeightCheck::Verify : WeightCheck::Skip);
    model->weights = model->info.weights_size ? bytes + model->info.weights_offset : nullptr;
    build_programs(*model);
    pack_weights_owned(*model);
    finish_load(*model);
    return model;
}

// The sizes a load will need: the kernels are built over the file's own weight bytes (not packed).
void query_size(const uint8_t* data, size_t size, size_t* out_work_bytes, size_t* out_weight_bytes) {
    CpuModel model;
    model.info = parse_kom(data, size, WeightCheck::Skip);  // the load checks the weights
    model.weights = model.info.weights_size ? data + model.info.weights_offset : nullptr;
    build_programs(model);
    *out_work_bytes = model.work_bytes();
    *out_weight_bytes = model.weight_bytes();
}

// A FlatBuffer with the file identifier "KOM1" (bytes 4..7); parse_kom verifies the rest.
bool recognizes(const uint8_t* data, size_t size) {
    return size >= 8 && std::memcmp(data + 4, "KOM1", 4) == 0;
}

// Checks a caller tensor against the model's tensor `t` at the selected gear, without allocating
// (except to report).
void check_io(const char* what, size_t i, const TensorInfo& t, const Shape& shape, uint64_t bytes,
              const kes_tensor& x) {
    KES_REQUIRE(enum_value(x.dtype) == t.dtype, "%s[%zu] (%s): dtype must be %s", what, i, t.name.c_str(),
                kes_dtype_name(t.dtype));
    bool same = x.ndim == shape.size();
    for (size_t d = 0; same && d < shape.size(); ++d) same = x.shape[d] == shape[d];
    KES_REQUIRE(same, "%s[%zu] (%s): shape differs from the model's %s", what, i, t.name.c_str(),
                shape_string(shape).c_str());
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

// Multiply-adds × 2 of the compute-heavy ops (Conv, ConvTranspose, Gemm, MatMul and their integer forms
// QLinearConv, ConvInteger, QLinearMatMul, MatMulInteger) at the program's shapes, for the profile's
// GFLOP/s (integer operations counted alike); 0 for other ops.
double layer_flops(const ModelInfo& m, const Program& p, size_t node) {
    const NodeInfo& n = m.nodes[node];
    const bool conv = n.op == "Conv" || n.op == "QLinearConv" || n.op == "ConvInteger";
    const bool matmul = n.op == "Gemm" || n.op == "MatMul" || n.op == "QLinearMatMul" || n.op == "MatMulInteger";
    const size_t wi = n.op == "QLinearConv" || n.op == "QLinearMatMul" ? 3 : 1;  // the weight's input
    if (n.outputs.empty() || n.outputs[0] < 0 || n.inputs.size() <= wi || n.inputs[wi] < 0) return 0.0;
    const Shape& y = p.shapes[static_cast<size_t>(n.outputs[0])];
    const Shape& w = p.shapes[static_cast<size_t>(n.inputs[wi])];
    double out = 1.0, per = 1.0;
    for (int64_t d : y) out *= static_cast<double>(d);
    if (conv) {
        // Each output takes C/group × kernel taps: the weight's elements over its out channels.
        for (size_t d = 1; d < w.size(); ++d) per *= static_cast<double>(w[d]);
    } else if (n.op == "ConvTranspose") {
        for (int64_t d : w) per *= static_cast<double>(d);
        const Shape& x = p.shapes[static_cast<size_t>(n.inputs[0])];
        double in = 1.0;
        for (int64_t d : x) in *= static_cast<double>(d);
        // Each input element meets the M/group output channels × taps of its group: the weight's
        // elements over C ([C, M/g, K...], NCHW) or over C/g × group ([M, K..., C/g], NHWC).
        if (w.empty()) return 0.0;
        const bool nhwc = n.attrs.get_string("data_layout", "NCHW") == "NHWC";
        const double group = static_cast<double>(std::max<int64_t>(1, n.attrs.get_int("group", 1)));
        return 2.0 * in * per / std::max(1.0, nhwc ? static_cast<double>(w.back()) * group : static_cast<double>(w[0]));
    } else if (matmul) {
        const Shape& a = p.shapes[static_cast<size_t>(n.inputs[0])];
        const bool trans_a = n.op == "Gemm" && n.attrs.get_int("transA", 0) != 0;
        if (a.empty()) return 0.0;
        per = static_cast<double>(trans_a ? a.front() : a.back());
    } else {
        return 0.0;
    }
    return 2.0 * out * per;
}

class CpuContext final : public ExecutorContext {
public:
    const CpuModel* model = nullptr;
    uint8_t* arena = nullptr;
    void* owned_arena = nullptr;
    const Program* program = nullptr;  // the selected gear
    std::vector<const void*> in_ptrs;  // per-node pointers, sized at creation
    std::vector<void*> out_ptrs;
    RunContext rc;                          // threads and scratch (the arena's tail) for the kernels
    kes_thread_pool* owned_pool = nullptr;  // a pool of its own when the config pins CPUs
    bool profiling = false;
    std::vector<uint64_t> node_ns;  // per node, the last run's time (profiling on)
    kes_model_node_observer observer = nullptr;
    void* observer_user = nullptr;
    std::vector<kes_tensor> observed;  // the node's outputs as the observer sees them, sized at creation
    std::vector<const char*> observed_names;
    std::vector<const char*> span_names;                // per node, interned when profiling is turned on
    std::vector<const kes_aipp_dynamic*> dynamic_aipp;  // per graph input: borrowed, sized at creation
    void* spill = nullptr;   // the fused pairs' intermediates while an observer is set (model->spill_size)
    bool ran_fused = false;  // the last execution ran the fused kernels (no observer)

    ~CpuContext() override {
        kes_thread_pool_destroy(owned_pool);
        kes_mem_free(owned_arena);
        kes_mem_free(spill);
    }

    uint32_t threads() const override { return rc.threads; }

    void set_batch(int64_t batch) override {
        if (model->info.batch_gears.empty()) {
            KES_REQUIRE(batch == 0, "the model has a static batch: set_batch takes 0 only (got %lld)",
                        static_cast<long long>(batch));
            return;
        }
        const Program* p = batch == 0 ? &model->programs.front() : model->program_for(Gear{batch, 0, 0});
        KES_REQUIRE(p != nullptr, "batch %lld is not one of the model's gears", static_cast<long long>(batch));
        program = p;
    }

    void set_image_size(int64_t height, int64_t width) override {
        const bool largest = height == 0 && width == 0;
        if (model->info.image_sizes.empty()) {
            KES_REQUIRE(largest, "the model has a static image size: set_image_size takes 0, 0 only (got %lldx%lld)",
                        static_cast<long long>(height), static_cast<long long>(width));
            return;
        }
        const Program* p = largest ? &model->programs.front() : model->program_for(Gear{0, height, width});
        KES_REQUIRE(p != nullptr, "image size %lldx%lld (height x width) is not one of the model's gears",
                    static_cast<long long>(height), static_cast<long long>(width));
        program = p;
    }

    void describe(bool input, size_t index, kes_tensor* out) const override {
        const size_t t = static_cast<size_t>((input ? model->info.inputs : model->info.outputs)[index]);
        kes::describe(model->info.tensors[t], program->shapes[t], program->bytes[t], out);
    }

    void execute(const kes_tensor* inputs, kes_tensor* outputs) override {
        const ModelInfo& m = model->info;
        const Program& p = *program;
        for (size_t i = 0; i < m.inputs.size(); ++i) {
            const size_t t = static_cast<size_t>(m.inputs[i]);
            check_io("inputs", i, m.tensors[t], p.shapes[t], p.bytes[t], inputs[i]);
        }
        check_outputs(outputs);
        for (size_t i = 0; i < m.inputs.size(); ++i) {
            const size_t t = static_cast<size_t>(m.inputs[i]);
            if (p.bytes[t]) std::memcpy(arena + m.tensors[t].offset, inputs[i].data, p.bytes[t]);
        }
        run_and_copy_outputs(outputs);
    }

    void set_dynamic_aipp(size_t index, const kes_aipp_dynamic* params) override {
#ifdef KES_ENGINE_HAVE_AIPP
        const ModelInfo& m = model->info;
        const TensorInfo& ti = m.tensors[static_cast<size_t>(m.inputs[index])];
        const InputAipp& a = model->aipp[index];
        KES_REQUIRE(a.present && a.params.aipp_mode == KES_AIPP_MODE_DYNAMIC,
                    "input %zu (%s) has no dynamic AIPP (%s): only an input converted with aipp_mode: dynamic "
                    "takes kes_aipp_dynamic parameters",
                    index, ti.name.c_str(), a.present ? "its AIPP is static" : "it has no AIPP");
        dynamic_aipp[index] = params;
#else
        (void)index, (void)params;
        KES_FAIL(KES_ERR_UNSUPPORTED, "dynamic AIPP: this build has no aipp module");
#endif
    }

    // AIPP inputs are written by the aipp module straight into the arena.
    void execute_images(const kes_model_input* inputs, kes_tensor* outputs) override {
        const CpuModel& model_ = *model;
        const ModelInfo& m = model_.info;
        const Program& p = *program;
        for (size_t i = 0; i < m.inputs.size(); ++i) {
            const size_t t = static_cast<size_t>(m.inputs[i]);
            const TensorInfo& ti = m.tensors[t];
            const kes_model_input& in = inputs[i];
            if (model_.aipp[i].present) {
                KES_REQUIRE(in.tensor == nullptr && in.images != nullptr,
                            "inputs[%zu] (%s) carries AIPP: give images (and no tensor)", i, ti.name.c_str());
                const int64_t batch = p.shapes[t].empty() ? 1 : p.shapes[t][0];
                KES_REQUIRE(in.image_count == static_cast<uint64_t>(batch),
                            "inputs[%zu] (%s): %u images for a batch of %lld", i, ti.name.c_str(), in.image_count,
                            static_cast<long long>(batch));
#ifdef KES_ENGINE_HAVE_AIPP
                if (model_.aipp[i].params.aipp_mode == KES_AIPP_MODE_DYNAMIC) check_dynamic(i, ti, in);
#endif
            } else {
                KES_REQUIRE(in.tensor != nullptr && in.images == nullptr,
                            "inputs[%zu] (%s) has no AIPP: give a tensor (and no images)", i, ti.name.c_str());
                check_io("inputs", i, ti, p.shapes[t], p.bytes[t], *in.tensor);
            }
        }
        check_outputs(outputs);
        for (size_t i = 0; i < m.inputs.size(); ++i) {
            const size_t t = static_cast<size_t>(m.inputs[i]);
            const TensorInfo& ti = m.tensors[t];
            uint8_t* dst = arena + ti.offset;
            if (!model_.aipp[i].present) {
                if (p.bytes[t]) std::memcpy(dst, inputs[i].tensor->data, p.bytes[t]);
                continue;
            }
#ifdef KES_ENGINE_HAVE_AIPP
            const bool dynamic = model_.aipp[i].params.aipp_mode == KES_AIPP_MODE_DYNAMIC;
            kes_tensor tensor;
            kes::describe(ti, p.shapes[t], p.bytes[t], &tensor);
            // kes-convert records every AIPP input's layout (convert.cpp, record_input_layouts); an ND one
            // is from an older converter and is NCHW, ATC's default input_format (engine.h) — never
            // guessed from the shape.
            if (tensor.layout == KES_LAYOUT_ND && tensor.ndim == 4) tensor.layout = KES_LAYOUT_NCHW;
            tensor.data = dst;
            const kes_status st = dynamic ? kes_aipp_dynamic_execute(dynamic_aipp[i], nullptr, inputs[i].images,
                                                                     inputs[i].image_count, &tensor)
                                          : kes_aipp_execute(&model_.aipp[i].params, nullptr, inputs[i].images,
                                                             inputs[i].image_count, &tensor);
            if (st != KES_OK)
                KES_FAIL(kes_last_status(), "inputs[%zu] (%s): AIPP: %s", i, ti.name.c_str(), kes_last_error());
#else
            KES_FAIL(KES_ERR_UNSUPPORTED,
                     "inputs[%zu] (%s) carries AIPP, and this build has no aipp module: pass the "
                     "AIPP output tensor to kes_model_execute",
                     i, ti.name.c_str());
#endif
        }
        run_and_copy_outputs(outputs);
    }

    void set_profiling(bool on) override {
        profiling = on;
        if (profiling && span_names.empty())
            for (const NodeInfo& n : model->info.nodes) span_names.push_back(intern(n.name));
        std::fill(node_ns.begin(), node_ns.end(), 0);
    }

    void layer_profile(size_t index, kes_model_layer_profile* out) const override {
        const ModelInfo& m = model->info;
        const NodeInfo& n = m.nodes[index];
        const Program& p = *program;
        out->name = n.name.c_str();
        out->op = n.op.c_str();
        out->impl = p.kernels[index]->impl();
        out->time_ns = node_ns[index];
        out->flops = layer_flops(m, p, index);
        if (ran_fused && model->fused_into[index] >= 0) {
            out->impl = model->fused_note[index].c_str();
            out->flops = 0.0;
        } else if (ran_fused && model->fused_from[index] >= 0) {
            // The fused kernel's time is the pair's: so are its flops.
            out->impl = p.fused[index]->impl();
            out->flops += layer_flops(m, p, static_cast<size_t>(model->fused_from[index]));
        }
        out->output_index = n.outputs.empty() || n.outputs[0] < 0 ? -1 : n.outputs[0];
        out->output_ndim = 0;
        if (!n.outputs.empty() && n.outputs[0] >= 0) {
            const Shape& shape = p.shapes[static_cast<size_t>(n.outputs[0])];
            out->output_ndim = static_cast<uint32_t>(std::min<size_t>(shape.size(), KES_TENSOR_MAX_DIMS));
            for (uint32_t d = 0; d < out->output_ndim; ++d) out->output_shape[d] = shape[d];
        }
        out->weight_bytes = 0;
        for (int32_t t : n.inputs)
            if (t >= 0 && m.tensors[static_cast<size_t>(t)].weight >= 0)
                out->weight_bytes += m.tensors[static_cast<size_t>(t)].bytes;
        out->packed_bytes = p.kernels[index]->packed_bytes();
    }

    // An observer sees every node's output, so the context then runs fused pairs apart, each intermediate
    // in a spill buffer allocated here (execute still allocates nothing) and kept until the context goes.
    void set_observer(kes_model_node_observer fn, void* user_data) override {
        if (fn && model->fused() && !spill && kes_mem_alloc(KES_MEM_HOST, model->spill_size, &spill) != KES_OK)
            KES_FAIL(KES_ERR_OUT_OF_MEMORY,
                     "cannot allocate the %zu-byte buffer an observer needs for the tensors fused kernels keep "
                     "out of the arena",
                     model->spill_size);
        observer = fn;
        observer_user = user_data;
    }

private:
#ifdef KES_ENGINE_HAVE_AIPP
    // A dynamic-AIPP input needs its parameters, enough batch items, and images within the model's
    // max_src_image_size (the aipp_op's bound, as the board's input buffer is).
    void check_dynamic(size_t i, const TensorInfo& ti, const kes_model_input& in) const {
        const kes_aipp_dynamic* d = dynamic_aipp[i];
        KES_REQUIRE(d != nullptr,
                    "inputs[%zu] (%s) has dynamic AIPP and the context has no parameters for it: call "
                    "kes_model_context_set_dynamic_aipp(context, %zu, params) first",
                    i, ti.name.c_str(), i);
        const uint64_t items = kes_aipp_dynamic_batch_size(d);
        KES_REQUIRE(items >= in.image_count,
                    "inputs[%zu] (%s): %u images, and its dynamic AIPP parameters have %llu batch items "
                    "(kes_aipp_dynamic_create's batch_size must be at least the input's batch)",
                    i, ti.name.c_str(), in.image_count, static_cast<unsigned long long>(items));
        const uint64_t max_src = model->aipp[i].params.max_src_image_size;
        for (uint32_t k = 0; k < in.image_count; ++k) {
            const kes_image& im = in.images[k];
            size_t bytes = 0;
            KES_REQUIRE(kes_image_buffer_size(im.format, im.width_stride, im.height_stride, &bytes) == KES_OK,
                        "inputs[%zu] (%s): image %u is not a valid image", i, ti.name.c_str(), k);
            KES_REQUIRE(max_src == 0 || bytes <= max_src,
                        "inputs[%zu] (%s): image %u is %zu bytes (%s, strides %u x %u), more than the input's "
                        "max_src_image_size %llu",
                        i, ti.name.c_str(), k, bytes, kes_pixel_format_name(im.format), im.width_stride,
                        im.height_stride, static_cast<unsigned long long>(max_src));
        }
    }
#endif

    void check_outputs(const kes_tensor* outputs) const {
        const ModelInfo& m = model->info;
        for (size_t i = 0; i < m.outputs.size(); ++i) {
            const size_t t = static_cast<size_t>(m.outputs[i]);
            check_io("outputs", i, m.tensors[t], program->shapes[t], program->bytes[t], outputs[i]);
        }
    }

    // One node on the pointers already in in_ptrs / out_ptrs; with profiling on, timed and traced (one
    // span per node, named after it).
    void run_node(size_t i, const Kernel& kernel, bool tracing) {
        if (!profiling) {
            kernel.run(rc, in_ptrs.data(), out_ptrs.data());
            return;
        }
        if (tracing) kes_trace_begin("engine.node", span_names[i]);
        const auto start = std::chrono::steady_clock::now();
        kernel.run(rc, in_ptrs.data(), out_ptrs.data());
        node_ns[i] = static_cast<uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
        if (tracing) kes_trace_end();
    }

    void run() {
        const ModelInfo& m = model->info;
        const Program& p = *program;
        auto ptr = [&](int32_t t) -> void* {
            if (t < 0) return nullptr;
            const TensorInfo& ti = m.tensors[static_cast<size_t>(t)];
            // An intermediate of a fused pair, run apart for the observer, lives in the spill buffer.
            if (ti.weight < 0 && model->fused() && model->spilled[static_cast<size_t>(t)])
                return static_cast<uint8_t*>(spill) + model->spill_offset[static_cast<size_t>(t)];
            // Weights are read-only: kernels receive them through const pointers only.
            const uint8_t* base = ti.weight >= 0 ? model->weights : arena;
            return const_cast<uint8_t*>(base) + ti.offset;
        };
        const bool tracing = kes_trace_enabled() != 0;
        const bool fused = model->fused() && !observer;
        ran_fused = fused;
        for (size_t i = 0; i < m.nodes.size(); ++i) {
            const NodeInfo& n = m.nodes[i];
            if (fused && model->fused_into[i] >= 0) {
                node_ns[i] = 0;  // runs inside its consumer's kernel
                continue;
            }
            const int32_t from = fused ? model->fused_from[i] : -1;
            for (size_t k = 0; k < n.inputs.size(); ++k)
                in_ptrs[k] = k == 0 && from >= 0 ? ptr(m.nodes[static_cast<size_t>(from)].inputs[0]) : ptr(n.inputs[k]);
            for (size_t k = 0; k < n.outputs.size(); ++k) out_ptrs[k] = ptr(n.outputs[k]);
            run_node(i, from >= 0 ? *p.fused[i] : *p.kernels[i], tracing);
            if (!observer) continue;
            for (size_t k = 0; k < n.outputs.size(); ++k) {
                kes_tensor& t = observed[k];
                std::memset(&t, 0, sizeof t);
                observed_names[k] = "";
                if (n.outputs[k] < 0) continue;
                const size_t o = static_cast<size_t>(n.outputs[k]);
                observed_names[k] = m.tensors[o].name.c_str();
                kes::describe(m.tensors[o], p.shapes[o], p.bytes[o], &t);
                t.data = out_ptrs[k];
            }
            observer(i, n.name.c_str(), observed_names.data(), observed.data(), n.outputs.size(), observer_user);
        }
    }

    // Runs the nodes on the inputs already in the arena, then copies the graph outputs out.
    void run_and_copy_outputs(kes_tensor* outputs) {
        const ModelInfo& m = model->info;
        run();
        for (size_t i = 0; i < m.outputs.size(); ++i) {
            const size_t t = static_cast<size_t>(m.outputs[i]);
            if (program->bytes[t]) std::memcpy(outputs[i].data, arena + m.tensors[t].offset, program->bytes[t]);
        }
    }
};

std::unique_ptr<ExecutorContext> CpuModel::create_context(void* work_memory, size_t work_memory_size,
                                                          const ContextConfig& config) const {
    check_region("work", work_memory, work_memory_size, work_bytes());
    auto ctx = std::make_unique<CpuContext>();
    ctx->model = this;
    if (!work_memory) work_memory = work;
    if (!work_memory) {
        const size_t bytes = std::max<size_t>(work_bytes(), KES_MEM_ALIGNMENT);
        if (kes_mem_alloc(KES_MEM_HOST, bytes, &ctx->owned_arena) != KES_OK)
            KES_FAIL(KES_ERR_OUT_OF_MEMORY, "cannot allocate the %zu-byte work arena", bytes);
        work_memory = ctx->owned_arena;
    }
    ctx->arena = static_cast<uint8_t*>(work_memory);
    ctx->program = &programs.front();
    ctx->in_ptrs.assign(info.max_node_inputs, nullptr);
    ctx->out_ptrs.assign(info.max_node_outputs, nullptr);
    ctx->node_ns.assign(info.nodes.size(), 0);
    ctx->observed.resize(info.max_node_outputs);
    ctx->observed_names.resize(info.max_node_outputs);
    ctx->dynamic_aipp.assign(info.inputs.size(), nullptr);
    ctx->ran_fused = fused();
    // Threads: a pool of its own when CPUs are pinned, else the shared pool (at most its size). A model
    // whose activations fit in kSerialArena runs on the calling thread unless threads are asked for: its
    // layers are too small to split, and its contexts then start no threads (the ONNX conformance
    // runner forks a child per test, which sanitizers make slow when each starts a pool). The pool is
    // created here, never in execute, which allocates nothing.
    constexpr size_t kSerialArena = 256 * 1024;
    if (config.affinity_count != 0) {
        kes_thread_pool_config pc;
        kes_thread_pool_config_init(&pc);
        pc.threads = config.threads ? config.threads : std::min<uint32_t>(config.affinity_count, kMaxThreads);
        pc.cpu_affinity = config.cpu_affinity;
        pc.affinity_count = config.affinity_count;
        pc.name = "kes-model";
        if (kes_thread_pool_create(&pc, &ctx->owned_pool) != KES_OK)
            KES_FAIL(kes_last_status(), "cannot create the context's thread pool: %s", kes_last_error());
        ctx->rc.pool = ctx->owned_pool;
    } else if (config.threads > 1 || (config.threads == 0 && arena_bytes() >= kSerialArena)) {
        ctx->rc.pool = kes_thread_pool_default();
    }
    const uint32_t pool_threads = ctx->rc.pool ? kes_thread_pool_size(ctx->rc.pool) : 1;
    const uint32_t wanted = config.threads ? config.threads : pool_threads;
    ctx->rc.threads = std::max<uint32_t>(1, std::min({wanted, pool_threads, kMaxThreads}));
    if (ctx->rc.threads == 1) ctx->rc.pool = nullptr;
    ctx->rc.scratch = ctx->arena + arena_bytes();
    ctx->rc.scratch_size = scratch_size;
    return ctx;
}

}  // namespace

const ExecutorFactory& cpu_executor_factory() {
    static const ExecutorFactory factory{"cpu", ".kom", recognizes, query_size, load, load_mapped};
    return factory;
}

}  // namespace kes
