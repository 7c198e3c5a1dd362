// ascend_executor.cpp — .om models on the NPU through AscendCL (ascend_executor.hpp says what the app
// sees). Facts and their sources: BOARD-RULES §AscendCL, §Models (graphengine acl_mdl.h, the
// resnet50 sample's model_process.cpp). Behaviour taken from documentation only, never seen on a board,
// is marked UNCONFIRMED.
#include "ascend_executor.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kes/ascend.hpp"
#include "kes/error.hpp"
#include "kestrel/backend.h"
#include "kestrel/memory.h"
#ifdef KES_ENGINE_HAVE_AIPP
#include "kestrel/aipp.h"
#endif

namespace kes {
namespace {

constexpr size_t kOmHeaderSize = 256;  // ATC's ModelFileHeader (BOARD-RULES §Models)
constexpr int32_t kAclFloat = 0, kAclFloat16 = 1, kAclUint8 = 4;
constexpr int32_t kAclFormatNchw = 0, kAclFormatNhwc = 1;

size_t align128(size_t n) {
    return (n + KES_MEM_ALIGNMENT - 1) / KES_MEM_ALIGNMENT * KES_MEM_ALIGNMENT;
}

// ---- the runtime ---------------------------------------------------------------------------------

// The Ascend table, or KES_ERR_UNSUPPORTED saying why there is none (no CANN found, a stub library,
// KES_BACKEND=cpu, no device): the sdk's reason is the useful part of the message.
const acl::Api& runtime() {
    try {
        return acl::require();
    } catch (const Error& e) {
        KES_FAIL(KES_ERR_UNSUPPORTED,
                 "model: an Ascend .om runs only on the NPU, and the Ascend runtime is not available (%s). "
                 "Install CANN or point KES_ASCEND_LIB_DIR at it, or run the .kom from kes-convert on the CPU",
                 e.what());
    }
}

// Symbols of acl_mdl.h that the sdk's table does not carry (acl_mdl.h types, re-typed):
//   aclError aclmdlGetDynamicBatch(const aclmdlDesc*, aclmdlBatch*)   aclmdlBatch { size_t; uint64_t[128] }
//   aclError aclmdlGetDynamicHW(const aclmdlDesc*, size_t index, aclmdlHW*)  aclmdlHW { size_t; uint64_t[128][2] }
// They live in the library that holds aclmdlGetDesc (libascendcl.so, or CANN 9's libacl_mdl.so); the sdk
// opened it RTLD_LOCAL, so they are looked up through that library's own handle (RTLD_NOLOAD: no new
// load, only a reference, dropped again at once — the sdk keeps the library loaded while models live,
// since their device memory keeps kes_backend_shutdown from unloading it).
constexpr size_t kMaxGears = 128;  // ACL_MAX_BATCH_NUM, ACL_MAX_HW_NUM
struct MdlBatch {
    size_t batchCount;
    uint64_t batch[kMaxGears];
};
struct MdlHW {
    size_t hwCount;
    uint64_t hw[kMaxGears][2];
};
struct OptionalMdl {
    acl::Error (*aclmdlGetDynamicBatch)(const acl::MdlDesc*, MdlBatch*) = nullptr;
    acl::Error (*aclmdlGetDynamicHW)(const acl::MdlDesc*, size_t, MdlHW*) = nullptr;
};

OptionalMdl optional_symbols(const acl::Api& api) {
    OptionalMdl o;
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void*>(api.aclmdlGetDesc), &info) || !info.dli_fname) return o;
    void* handle = dlopen(info.dli_fname, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!handle) return o;
    o.aclmdlGetDynamicBatch =
        reinterpret_cast<decltype(o.aclmdlGetDynamicBatch)>(dlsym(handle, "aclmdlGetDynamicBatch"));
    o.aclmdlGetDynamicHW = reinterpret_cast<decltype(o.aclmdlGetDynamicHW)>(dlsym(handle, "aclmdlGetDynamicHW"));
    dlclose(handle);
    return o;
}

// ---- the .om header ------------------------------------------------------------------------------

// A .om starts with "IMOD" (BOARD-RULES §Models; hicann/ge ModelFileHeader, netron's om.js).
bool recognizes(const uint8_t* data, size_t size) {
    return size >= 4 && std::memcmp(data, "IMOD", 4) == 0;
}

// The SoC the .om was built for (ATC --soc_version), or "" when the header does not say.
// UNCONFIRMED: the layout of a real .om's header beyond the magic is not public. Kestrel's simulator
// (kes-sim-pack) writes the SoC NUL-terminated in bytes 40..103; that is the only place read here, and
// only a string that looks like an Ascend SoC name is believed. In a real ATC header those bytes fall
// inside other fields (a checksum, by netron's reading), where "Ascend..." is as good as impossible: for
// a real .om the check is left to the runtime, whose load error is then explained with the same hint.
std::string om_soc(const uint8_t* data, size_t size) {
    constexpr size_t kOffset = 40, kLength = 64;
    if (size < kOmHeaderSize) return "";
    const char* s = reinterpret_cast<const char*>(data + kOffset);
    const size_t n = strnlen(s, kLength);
    if (n == kLength || n < 7 || std::strncmp(s, "Ascend", 6) != 0) return "";
    for (size_t i = 0; i < n; ++i)
        if (!std::isalnum(static_cast<unsigned char>(s[i]))) return "";
    return std::string(s, n);
}

// A wrong --soc_version is the most frequent load failure in the forums ("Soc version [Ascend310B4] is
// invalid"): name both chips and the fix before the runtime gives its less direct error.
void check_soc(const uint8_t* data, size_t size) {
    const std::string model = om_soc(data, size);
    const std::string& device = acl::runtime_info().soc_name;
    if (model.empty() || device.empty() || model == device) return;
    KES_FAIL(KES_ERR_UNSUPPORTED,
             "model: the .om was built for %s (ATC --soc_version=%s) but this device is %s: convert it again "
             "with --soc_version=%s (kes-convert --om does it with the board profile's SoC)",
             model.c_str(), model.c_str(), device.c_str(), device.c_str());
}

// ---- description ---------------------------------------------------------------------------------

kes_dtype to_dtype(int32_t acl_type, const char* what, size_t index, const std::string& name) {
    // kes_dtype's values are aclDataType's (kestrel/tensor.h); others (ACL_STRING, BF16, ...) are not.
    switch (acl_type) {
        case 0:
        case 1:
        case 2:
        case 3:
        case 4:
        case 6:
        case 7:
        case 8:
        case 9:
        case 10:
        case 11:
        case 12: return static_cast<kes_dtype>(acl_type);
        default:
            KES_FAIL(KES_ERR_UNSUPPORTED, "model: %s %zu (%s) has aclDataType %d, which Kestrel has no dtype for", what,
                     index, name.c_str(), acl_type);
    }
}

size_t dtype_bytes(kes_dtype t) {
    switch (t) {
        case KES_F16:
        case KES_I16:
        case KES_U16: return 2;
        case KES_I8:
        case KES_U8:
        case KES_BOOL: return 1;
        case KES_I64:
        case KES_U64:
        case KES_F64: return 8;
        default: return 4;
    }
}

// One model input or output as the runtime describes it.
struct Io {
    std::string name;
    size_t acl_index = 0;       // in the runtime's list (hidden inputs included)
    size_t bytes = 0;           // aclmdlGet*SizeByIndex: the largest gear's
    std::vector<int64_t> dims;  // aclmdlGet*Dims, -1 on dynamic axes
    kes_dtype dtype = KES_F32;
    kes_layout layout = KES_LAYOUT_ND;
    bool image = false;         // an AIPP input (UINT8): fed raw image bytes
    bool dynamic_aipp = false;  // its AIPP takes run-time parameters (ascend_dynamic_aipp_data)
};

// An image input is described as its raw bytes, [batch, bytes per image]: ND, whatever layout the
// network's own input has (the .om says NCHW or NHWC for it, which a 2-d tensor cannot carry).
void fill_tensor(const Io& io, const std::vector<int64_t>& shape, size_t bytes, kes_tensor* out) {
    describe_contiguous(io.dtype, io.image ? KES_LAYOUT_ND : io.layout, shape, bytes, out);
}

int64_t product(const std::vector<int64_t>& v) {
    int64_t p = 1;
    for (int64_t d : v) p *= d;
    return p;
}

// The (height, width) axes of a 4-d tensor in `layout` (NCHW unless NHWC).
std::pair<size_t, size_t> hw_axes(kes_layout layout) {
    return layout == KES_LAYOUT_NHWC ? std::make_pair<size_t, size_t>(1, 2) : std::make_pair<size_t, size_t>(2, 3);
}

// A gear: batch, or (height, width); 0 = none.
struct Gear {
    int64_t batch = 0, height = 0, width = 0;
};

class AscendModel;

class AscendContext final : public ExecutorContext {
public:
    explicit AscendContext(const AscendModel& m) : model(m) {}
    ~AscendContext() override;
    void create(void* work, size_t work_size);

    uint32_t threads() const override { return 1; }  // the NPU's; no CPU threads of ours
    void set_batch(int64_t batch) override;
    void set_image_size(int64_t height, int64_t width) override;
    void describe(bool input, size_t index, kes_tensor* out) const override;
    void execute(const kes_tensor* inputs, kes_tensor* outputs) override;
    void execute_images(const kes_model_input* inputs, kes_tensor* outputs) override;
    void set_dynamic_aipp(size_t index, const kes_aipp_dynamic* params) override;
    void set_profiling(bool on) override {
        if (on)
            KES_FAIL(KES_ERR_UNSUPPORTED,
                     "per-layer profile: the NPU reports no per-layer times through AscendCL (profile a .om with "
                     "msprof, or its .kom on the CPU)");
    }
    void layer_profile(size_t, kes_model_layer_profile*) const override {
        KES_FAIL(KES_ERR_UNSUPPORTED, "per-layer profile: the NPU reports no per-layer times through AscendCL");
    }
    void set_observer(kes_model_node_observer observer, void*) override {
        if (observer)
            KES_FAIL(KES_ERR_UNSUPPORTED,
                     "node observer: a .om runs as one graph on the NPU and AscendCL shows no intermediate tensors "
                     "(compare its .kom on the CPU with kes-model-bench --dump)");
    }

private:
    const AscendModel& model;
    const acl::Api* api = nullptr;
    acl::Stream stream = nullptr;
    acl::Dataset* in_ds = nullptr;
    acl::Dataset* out_ds = nullptr;
    std::vector<acl::DataBuffer*> buffers;              // every one created, for the destructor
    std::vector<void*> in_dev, out_dev;                 // per runtime input / output
    std::vector<void*> owned;                           // kes_mem_alloc'd device buffers (none with caller work)
    Gear gear;                                          // selected (0: the largest)
    bool gear_applied = false;                          // the hidden input holds `gear`
    bool stream_dirty = false;                          // a sync failed: work may still be queued
    std::vector<kes_tensor> in_cur, out_cur;            // the app's tensors at the selected gear
    std::vector<const kes_aipp_dynamic*> dynamic_aipp;  // per input: borrowed (set_dynamic_aipp)

    void add_buffer(acl::Dataset* ds, void* device, size_t bytes);
    void refresh_shapes();
    void apply_gear();
    void check_tensor(const char* what, size_t i, const Io& io, const kes_tensor& want, const kes_tensor& x) const;
    void run(kes_tensor* outputs);
    void drain() noexcept;
    void require_no_dynamic_aipp() const;
    void check_dynamic_images(size_t i, const kes_model_input& in, size_t per_image) const;
    void set_input_aipp(size_t i, const kes_model_input& in);
};

class AscendModel final : public Executor {
public:
    const acl::Api* api = nullptr;
    uint32_t id = 0;
    bool loaded = false;
    void* work = nullptr;  // device memory: the caller's or owned_*
    void* weight = nullptr;
    void* owned_work = nullptr;
    void* owned_weight = nullptr;
    size_t work_size = 0, weight_size = 0;
    acl::MdlDesc* desc = nullptr;
    std::vector<Io> ins, outs;                        // the app's view (hidden inputs left out)
    std::vector<size_t> acl_in_bytes, acl_out_bytes;  // every runtime input / output, hidden ones included
    size_t dynamic_index = SIZE_MAX;                  // ascend_mbatch_shape_data
    size_t aipp_index = SIZE_MAX;                     // ascend_dynamic_aipp_data
    std::string dynamic_aipp_text;                    // what kes_model_input_aipp reports for that input
    std::vector<int64_t> batches;
    std::vector<std::pair<int64_t, int64_t>> sizes;
    std::vector<IoDesc> in_descs, out_descs;
    std::string soc, source = "om", empty;

    ~AscendModel() override {
        try {
            acl::ScopedContext bind;
            if (desc) api->aclmdlDestroyDesc(desc);
            if (loaded) api->aclmdlUnload(id);  // before its memory goes (BOARD-RULES §Models: the caller frees both)
        } catch (...) {
            // Nothing to report from a destructor: the ledger at kes_backend_shutdown names what stayed.
        }
        kes_mem_free(owned_work);
        kes_mem_free(owned_weight);
    }

    const char* backend() const override { return "ascend"; }
    size_t work_bytes() const override { return work_size; }
    size_t weight_bytes() const override { return weight_size; }
    void memory_plan(size_t* arena, size_t* ideal) const override {
        *arena = work_size;  // the runtime's plan is not visible: its work memory stands for it
        *ideal = work_size;
    }
    const std::vector<IoDesc>& inputs() const override { return in_descs; }
    const std::vector<IoDesc>& outputs() const override { return out_descs; }
    const std::vector<int64_t>& batch_gears() const override { return batches; }
    const std::vector<std::pair<int64_t, int64_t>>& image_sizes() const override { return sizes; }
    // The aipp_op text was compiled into the .om and the runtime does not give it back; an input that
    // takes images (static AIPP) reports the mode, so an app knows to feed it images (face-search
    // does: the same code then runs a .kom on the CPU and a .om on the NPU).
    // A dynamic-AIPP input reports its mode and max_src_image_size (its bytes per batch item).
    const char* input_aipp(size_t index) const override {
        if (ins[index].dynamic_aipp) return dynamic_aipp_text.c_str();
        return ins[index].image ? "aipp_op {\n    aipp_mode : static\n}\n" : nullptr;
    }
    void metadata(kes_model_metadata* out) const override {
        out->format_version = 0;
        out->source_format = source.c_str();
        out->source_hash = empty.c_str();
        out->converter_version = empty.c_str();
        out->target_board = soc.c_str();
    }
    size_t layer_count() const override { return 0; }
    std::unique_ptr<ExecutorContext> create_context(void* w, size_t w_size, const ContextConfig&) const override {
        auto ctx = std::make_unique<AscendContext>(*this);
        ctx->create(w, w_size);
        return ctx;
    }

    // The tensor shape of `io` at `g` (0: the largest gear).
    std::vector<int64_t> shape_at(const Io& io, bool input, const Gear& g) const;
    size_t bytes_at(const Io& io, const std::vector<int64_t>& shape) const {
        if (io.image)
            return io.bytes / static_cast<size_t>(std::max<int64_t>(1, max_batch())) *
                   static_cast<size_t>(shape.empty() ? 1 : shape[0]);
        return static_cast<size_t>(product(shape)) * dtype_bytes(io.dtype);
    }
    int64_t max_batch() const { return batches.empty() ? 0 : batches.back(); }
    Gear largest() const {
        Gear g;
        g.batch = max_batch();
        if (!sizes.empty()) std::tie(g.height, g.width) = sizes.back();
        return g;
    }

    void describe_io(const OptionalMdl& opt);
};

// ---- AscendModel ---------------------------------------------------------------------------------

// Shapes at a gear. Inputs: the -1 axes take the gear. Outputs (the runtime describes them at the
// largest gear; aclmdlGetCurOutputDims is not in the table): dim 0 equal to the largest batch follows
// the batch, and for image gears each spatial axis of a 4-d output scales with the input's height and
// width (rounded up, as strided convolutions round). UNCONFIRMED beyond convolutional models: a model
// whose outputs do not scale so reads a wrong shape here (the byte counts never exceed the buffers).
std::vector<int64_t> AscendModel::shape_at(const Io& io, bool input, const Gear& g0) const {
    const Gear big = largest();
    const Gear g{g0.batch ? g0.batch : big.batch, g0.height ? g0.height : big.height, g0.width ? g0.width : big.width};
    std::vector<int64_t> s = io.dims;
    if (io.image) {
        s = {g.batch ? g.batch : (io.dims.empty() || io.dims[0] < 1 ? 1 : io.dims[0]), 0};
        s[1] = static_cast<int64_t>(io.bytes) / std::max<int64_t>(1, big.batch ? big.batch : s[0]);
        return s;
    }
    if (input) {
        if (!s.empty() && s[0] == -1 && g.batch) s[0] = g.batch;
        if (s.size() == 4 && g.height) {
            const auto [h, w] = hw_axes(io.layout);
            if (s[h] == -1) s[h] = g.height;
            if (s[w] == -1) s[w] = g.width;
        }
        // A -1 no gear explains (gears not reported by this runtime): the largest buffer decides it, when
        // there is exactly one.
        if (std::count(s.begin(), s.end(), int64_t{-1}) == 1) {
            const int64_t rest = -product(s) * static_cast<int64_t>(dtype_bytes(io.dtype));
            *std::find(s.begin(), s.end(), int64_t{-1}) = rest > 0 ? static_cast<int64_t>(io.bytes) / rest : 0;
        }
        return s;
    }
    if (!s.empty() && big.batch && s[0] == big.batch) s[0] = g.batch;
    if (s.size() == 4 && big.height && (g.height != big.height || g.width != big.width)) {
        const auto [h, w] = hw_axes(io.layout);
        s[h] = (s[h] * g.height + big.height - 1) / big.height;
        s[w] = (s[w] * g.width + big.width - 1) / big.width;
    }
    return s;
}

void AscendModel::describe_io(const OptionalMdl& opt) {
    const size_t n_in = api->aclmdlGetNumInputs(desc), n_out = api->aclmdlGetNumOutputs(desc);
    auto read = [&](bool input, size_t i) {
        Io io;
        acl::IODims dims{};
        acl::check(input ? "aclmdlGetInputDims" : "aclmdlGetOutputDims",
                   (input ? api->aclmdlGetInputDims : api->aclmdlGetOutputDims)(desc, i, &dims));
        const char* name = (input ? api->aclmdlGetInputNameByIndex : api->aclmdlGetOutputNameByIndex)(desc, i);
        io.name = name && *name ? name : dims.name;
        io.acl_index = i;
        io.bytes = (input ? api->aclmdlGetInputSizeByIndex : api->aclmdlGetOutputSizeByIndex)(desc, i);
        if (dims.dimCount > KES_TENSOR_MAX_DIMS)
            KES_FAIL(KES_ERR_UNSUPPORTED, "model: %s %zu (%s) has %zu dims; Kestrel tensors have at most %d",
                     input ? "input" : "output", i, io.name.c_str(), dims.dimCount, KES_TENSOR_MAX_DIMS);
        io.dims.assign(dims.dims, dims.dims + dims.dimCount);
        const int32_t t = (input ? api->aclmdlGetInputDataType : api->aclmdlGetOutputDataType)(desc, i);
        io.dtype = to_dtype(t, input ? "input" : "output", i, io.name);
        const int32_t f = (input ? api->aclmdlGetInputFormat : api->aclmdlGetOutputFormat)(desc, i);
        // NC1HWC0 and the other internal formats have no Kestrel layout: their bytes are given as ND.
        io.layout = f == kAclFormatNchw ? KES_LAYOUT_NCHW : f == kAclFormatNhwc ? KES_LAYOUT_NHWC : KES_LAYOUT_ND;
        // ATC makes a static-AIPP input the raw image (UINT8) whatever the network's own input type was
        // (BOARD-RULES §Models); a network input that is genuinely UINT8 is fed the same way (as bytes per item).
        io.image = input && t == kAclUint8 && io.dims.size() == 4;
        return io;
    };
    for (size_t i = 0; i < n_in; ++i) {
        acl_in_bytes.push_back(api->aclmdlGetInputSizeByIndex(desc, i));
        const char* name = api->aclmdlGetInputNameByIndex(desc, i);
        if (name && std::strcmp(name, acl::kDynamicTensorName) == 0) {
            dynamic_index = i;
        } else if (name && std::strcmp(name, acl::kDynamicAippName) == 0) {
            aipp_index = i;
        } else {
            ins.push_back(read(true, i));
        }
    }
    for (size_t i = 0; i < n_out; ++i) {
        acl_out_bytes.push_back(api->aclmdlGetOutputSizeByIndex(desc, i));
        outs.push_back(read(false, i));
    }
    if (dynamic_index != SIZE_MAX) {
        // Gears: the model's own list where the runtime exposes it (batchCount / hwCount 0: none).
        if (opt.aclmdlGetDynamicBatch) {
            MdlBatch b{};
            acl::check("aclmdlGetDynamicBatch", opt.aclmdlGetDynamicBatch(desc, &b));
            for (size_t g = 0; g < std::min(b.batchCount, kMaxGears); ++g)
                batches.push_back(static_cast<int64_t>(b.batch[g]));
        }
        if (opt.aclmdlGetDynamicHW && batches.empty()) {
            MdlHW hw{};
            // The index is "reserved, set -1" in CANN's documentation.
            acl::check("aclmdlGetDynamicHW", opt.aclmdlGetDynamicHW(desc, static_cast<size_t>(-1), &hw));
            for (size_t g = 0; g < std::min(hw.hwCount, kMaxGears); ++g)
                sizes.emplace_back(static_cast<int64_t>(hw.hw[g][0]), static_cast<int64_t>(hw.hw[g][1]));
        }
        std::sort(batches.begin(), batches.end());
        // engine.h: image sizes listed with the largest area last.
        std::stable_sort(sizes.begin(), sizes.end(),
                         [](const auto& a, const auto& b) { return a.first * a.second < b.first * b.second; });
    }
    if (aipp_index != SIZE_MAX) {
        // The hidden input carries the parameters of the model's one image input (ATC's naming when
        // several inputs have dynamic AIPP is UNCONFIRMED: such a model is refused at set_dynamic_aipp).
        Io* only = nullptr;
        size_t images = 0;
        for (Io& io : ins)
            if (io.image) only = &io, ++images;
        if (images == 1) {
            only->dynamic_aipp = true;
            const int64_t batch = std::max<int64_t>(1, max_batch() ? max_batch() : only->dims[0]);
            dynamic_aipp_text = "aipp_op {\n    aipp_mode : dynamic\n    max_src_image_size : " +
                                std::to_string(only->bytes / static_cast<size_t>(batch)) + "\n}\n";
        }
    }
    for (bool input : {true, false}) {
        for (const Io& io : input ? ins : outs) {
            IoDesc d;
            d.name = io.name;
            const std::vector<int64_t> s = shape_at(io, input, Gear{});
            fill_tensor(io, s, std::max(bytes_at(io, s), io.bytes), &d.desc);
            (input ? in_descs : out_descs).push_back(std::move(d));
        }
    }
}

void query_size(const uint8_t* data, size_t size, size_t* out_work, size_t* out_weight) {
    const acl::Api& api = runtime();
    acl::ScopedContext bind;
    acl::check("aclmdlQuerySizeFromMem", api.aclmdlQuerySizeFromMem(data, size, out_work, out_weight));
}

// Caller memory for the runtime: non-NULL regions must hold what the query asked (the runtime checks
// that it is device memory and says so: BOARD-RULES §Models, ACL_ERROR_GE_* "model address invalid").
void check_region(const char* what, const void* p, size_t size, size_t needed) {
    if (!p) {
        KES_REQUIRE(size == 0, "%s is NULL but %s_size is %zu", what, what, size);
        return;
    }
    KES_REQUIRE(reinterpret_cast<uintptr_t>(p) % KES_MEM_ALIGNMENT == 0, "%s %p is not 128-byte aligned", what, p);
    KES_REQUIRE(size >= needed, "%s_size %zu is smaller than the model needs (%zu bytes, aclmdlQuerySizeFromMem)", what,
                size, needed);
}

void* device_alloc(size_t bytes, const char* what) {
    void* p = nullptr;
    if (kes_mem_alloc(KES_MEM_DEVICE, std::max<size_t>(bytes, 1), &p) != KES_OK)
        KES_FAIL(kes_last_status(), "model: cannot allocate %zu bytes of device memory for %s: %s", bytes, what,
                 kes_last_error());
    return p;
}

std::unique_ptr<Executor> load(const uint8_t* data, size_t size, void* work, size_t work_size, void* weight,
                               size_t weight_size) {
    const acl::Api& api = runtime();
    check_soc(data, size);
    auto model = std::make_unique<AscendModel>();  // from here on its destructor releases what exists
    model->api = &api;
    model->soc = om_soc(data, size);
    acl::ScopedContext bind;
    size_t need_work = 0, need_weight = 0;
    acl::check("aclmdlQuerySizeFromMem", api.aclmdlQuerySizeFromMem(data, size, &need_work, &need_weight));
    check_region("work", work, work_size, need_work);
    check_region("weight", weight, weight_size, need_weight);
    model->work_size = need_work;
    model->weight_size = need_weight;
    if (!work && need_work) work = model->owned_work = device_alloc(need_work, "the model's work memory");
    if (!weight && need_weight) weight = model->owned_weight = device_alloc(need_weight, "the model's weights");
    model->work = work;
    model->weight = weight;
    acl::check("aclmdlLoadFromMemWithMem",
               api.aclmdlLoadFromMemWithMem(data, size, &model->id, work, work ? std::max(work_size, need_work) : 0,
                                            weight, weight ? std::max(weight_size, need_weight) : 0));
    model->loaded = true;
    model->desc = api.aclmdlCreateDesc();
    if (!model->desc) acl::fail_call("aclmdlCreateDesc", acl::kBadAlloc);
    acl::check("aclmdlGetDesc", api.aclmdlGetDesc(model->desc, model->id));
    model->describe_io(optional_symbols(api));
    return model;
}

// ---- AscendContext -------------------------------------------------------------------------------

void AscendContext::add_buffer(acl::Dataset* ds, void* device, size_t bytes) {
    acl::DataBuffer* b = api->aclCreateDataBuffer(device, bytes);
    if (!b) acl::fail_call("aclCreateDataBuffer", acl::kBadAlloc);
    buffers.push_back(b);
    acl::check("aclmdlAddDatasetBuffer", api->aclmdlAddDatasetBuffer(ds, b));
}

// Device buffers for every runtime input and output at its largest size, and the two datasets, once:
// an execution then allocates nothing. The hidden input gets its buffer too, and is never written by us
// (the runtime fills it in aclmdlSetDynamic*: BOARD-RULES §Models).
void AscendContext::create(void* work, size_t work_size) {
    api = model.api;
    acl::ScopedContext bind;
    size_t io_bytes = 0;
    for (size_t b : model.acl_in_bytes) io_bytes += align128(std::max<size_t>(b, 1));
    for (size_t b : model.acl_out_bytes) io_bytes += align128(std::max<size_t>(b, 1));
    uint8_t* carve = nullptr;
    if (work) {
        KES_REQUIRE(reinterpret_cast<uintptr_t>(work) % KES_MEM_ALIGNMENT == 0, "work %p is not 128-byte aligned",
                    work);
        KES_REQUIRE(work_size >= io_bytes,
                    "work_size %zu: an Ascend context keeps its device input and output buffers in its work memory "
                    "(device memory), %zu bytes for this model",
                    work_size, io_bytes);
        carve = static_cast<uint8_t*>(work);
    }
    auto buffer = [&](size_t bytes, const char* what) -> void* {
        if (carve) {
            void* p = carve;
            carve += align128(std::max<size_t>(bytes, 1));
            return p;
        }
        owned.push_back(device_alloc(bytes, what));
        return owned.back();
    };
    for (size_t b : model.acl_in_bytes) in_dev.push_back(buffer(b, "a model input"));
    for (size_t b : model.acl_out_bytes) out_dev.push_back(buffer(b, "a model output"));
    in_ds = api->aclmdlCreateDataset();
    if (!in_ds) acl::fail_call("aclmdlCreateDataset", acl::kBadAlloc);
    out_ds = api->aclmdlCreateDataset();
    if (!out_ds) acl::fail_call("aclmdlCreateDataset", acl::kBadAlloc);
    for (size_t i = 0; i < in_dev.size(); ++i) add_buffer(in_ds, in_dev[i], model.acl_in_bytes[i]);
    for (size_t i = 0; i < out_dev.size(); ++i) add_buffer(out_ds, out_dev[i], model.acl_out_bytes[i]);
    acl::check("aclrtCreateStream", api->aclrtCreateStream(&stream));
    in_cur.resize(model.ins.size());
    out_cur.resize(model.outs.size());
    dynamic_aipp.assign(model.ins.size(), nullptr);
    refresh_shapes();
}

// Waits for whatever a failed synchronisation left on the stream: the runtime must be done with the
// datasets before they go (BOARD-RULES §AscendCL: synchronise before destroying a stream).
void AscendContext::drain() noexcept {
    if (stream && stream_dirty) api->aclrtSynchronizeStream(stream);
    stream_dirty = false;
}

AscendContext::~AscendContext() {
    if (!api) return;
    try {
        acl::ScopedContext bind;
        drain();
        if (stream) api->aclrtDestroyStream(stream);
        if (in_ds) api->aclmdlDestroyDataset(in_ds);
        if (out_ds) api->aclmdlDestroyDataset(out_ds);
        for (acl::DataBuffer* b : buffers) api->aclDestroyDataBuffer(b);
    } catch (...) {
        // As ~AscendModel.
    }
    for (void* p : owned) kes_mem_free(p);
}

void AscendContext::refresh_shapes() {
    for (size_t i = 0; i < model.ins.size(); ++i) {
        const std::vector<int64_t> s = model.shape_at(model.ins[i], true, gear);
        fill_tensor(model.ins[i], s, model.bytes_at(model.ins[i], s), &in_cur[i]);
    }
    for (size_t i = 0; i < model.outs.size(); ++i) {
        const std::vector<int64_t> s = model.shape_at(model.outs[i], false, gear);
        fill_tensor(model.outs[i], s, model.bytes_at(model.outs[i], s), &out_cur[i]);
    }
}

void AscendContext::set_batch(int64_t batch) {
    if (model.batches.empty()) {
        KES_REQUIRE(batch == 0, "the model has a static batch%s: set_batch takes 0 only (got %lld)",
                    model.dynamic_index != SIZE_MAX ? " (or its gears are not reported by this AscendCL)" : "",
                    static_cast<long long>(batch));
        return;
    }
    KES_REQUIRE(batch == 0 || std::find(model.batches.begin(), model.batches.end(), batch) != model.batches.end(),
                "batch %lld is not one of the model's gears", static_cast<long long>(batch));
    gear = Gear{batch, 0, 0};
    gear_applied = false;
    refresh_shapes();
}

void AscendContext::set_image_size(int64_t height, int64_t width) {
    const bool largest = height == 0 && width == 0;
    if (model.sizes.empty()) {
        KES_REQUIRE(largest, "the model has a static image size: set_image_size takes 0, 0 only (got %lldx%lld)",
                    static_cast<long long>(height), static_cast<long long>(width));
        return;
    }
    KES_REQUIRE(largest || std::find(model.sizes.begin(), model.sizes.end(), std::make_pair(height, width)) !=
                               model.sizes.end(),
                "image size %lldx%lld (height x width) is not one of the model's gears", static_cast<long long>(height),
                static_cast<long long>(width));
    gear = Gear{0, height, width};
    gear_applied = false;
    refresh_shapes();
}

void AscendContext::describe(bool input, size_t index, kes_tensor* out) const {
    *out = input ? in_cur[index] : out_cur[index];
}

// The runtime reads the gear from the hidden input, which aclmdlSetDynamic* writes: once per gear
// change (the dataset keeps it), the largest gear when the app chose none.
void AscendContext::apply_gear() {
    if (gear_applied || model.dynamic_index == SIZE_MAX) return;
    const Gear big = model.largest();
    if (!model.batches.empty()) {
        acl::check("aclmdlSetDynamicBatchSize",
                   api->aclmdlSetDynamicBatchSize(model.id, in_ds, model.dynamic_index,
                                                  static_cast<uint64_t>(gear.batch ? gear.batch : big.batch)));
    } else if (!model.sizes.empty()) {
        acl::check("aclmdlSetDynamicHWSize",
                   api->aclmdlSetDynamicHWSize(model.id, in_ds, model.dynamic_index,
                                               static_cast<uint64_t>(gear.height ? gear.height : big.height),
                                               static_cast<uint64_t>(gear.width ? gear.width : big.width)));
    }
    gear_applied = true;
}

void AscendContext::check_tensor(const char* what, size_t i, const Io& io, const kes_tensor& want,
                                 const kes_tensor& x) const {
    KES_REQUIRE(x.dtype == want.dtype, "%s[%zu] (%s): dtype must be %s", what, i, io.name.c_str(),
                kes_dtype_name(want.dtype));
    bool same = x.ndim == want.ndim;
    for (uint32_t d = 0; same && d < want.ndim; ++d) same = x.shape[d] == want.shape[d];
    KES_REQUIRE(same, "%s[%zu] (%s): shape differs from the model's at the current gear", what, i, io.name.c_str());
    KES_REQUIRE(kes_tensor_is_contiguous(&x), "%s[%zu] (%s): must be contiguous", what, i, io.name.c_str());
    KES_REQUIRE(x.size >= want.size, "%s[%zu] (%s): size %zu < %zu bytes", what, i, io.name.c_str(), x.size, want.size);
    KES_REQUIRE(x.data != nullptr || want.size == 0, "%s[%zu] (%s): data is NULL", what, i, io.name.c_str());
}

int32_t sync_timeout_ms() {
    const char* v = std::getenv("KES_ASCEND_SYNC_TIMEOUT_MS");
    if (!v || !*v) return 60000;
    char* end = nullptr;
    const long ms = std::strtol(v, &end, 10);
    return *end == '\0' && ms >= -1 && ms <= INT32_MAX ? static_cast<int32_t>(ms) : 60000;
}

// The inputs are in the device buffers: run on the context's stream, wait, copy the outputs out.
// Host tensors are always copied (aclrtMemcpy), in both run modes: in ACL_DEVICE mode device memory is
// CPU-addressable, but the runtime still runs models only on memory it allocated (the simulator
// refuses other buffers, as BOARD-RULES §Models says the board does), so a malloc'd tensor cannot go in place.
void AscendContext::run(kes_tensor* outputs) {
    acl::check("aclmdlExecuteAsync", api->aclmdlExecuteAsync(model.id, in_ds, out_ds, stream));
    if (api->aclrtSynchronizeStreamWithTimeout) {
        const int32_t ms = sync_timeout_ms();
        const acl::Error e = api->aclrtSynchronizeStreamWithTimeout(stream, ms);
        if (e != acl::kSuccess) {
            stream_dirty = e == acl::kRtStreamSyncTimeout;
            if (stream_dirty)
                KES_FAIL(KES_ERR_TIMEOUT, "%s (the model ran longer than KES_ASCEND_SYNC_TIMEOUT_MS=%d ms)",
                         acl::describe("aclrtSynchronizeStreamWithTimeout", e).c_str(), ms);
            acl::fail_call("aclrtSynchronizeStreamWithTimeout", e);
        }
    } else {
        acl::check("aclrtSynchronizeStream", api->aclrtSynchronizeStream(stream));
    }
    for (size_t i = 0; i < model.outs.size(); ++i) {
        const size_t bytes = out_cur[i].size;
        if (bytes)
            acl::check("aclrtMemcpy", api->aclrtMemcpy(outputs[i].data, outputs[i].size,
                                                       out_dev[model.outs[i].acl_index], bytes, acl::kMemcpyD2H));
    }
}

// kes_model_execute cannot feed a dynamic-AIPP model: its hidden input needs the parameters.
void AscendContext::require_no_dynamic_aipp() const {
    if (model.aipp_index != SIZE_MAX)
        KES_FAIL(KES_ERR_INVALID_ARGUMENT,
                 "the model has dynamic AIPP (ascend_dynamic_aipp_data): give its parameters with "
                 "kes_model_context_set_dynamic_aipp and its images with kes_model_execute_images");
}

// The dynamic AIPP calls are optional in the table (older runtimes): name what is missing.
void require_dynamic_aipp_symbols(const acl::Api& a) {
    const std::pair<bool, const char*> needed[] = {
        {a.aclmdlCreateAIPP != nullptr, "aclmdlCreateAIPP"},
        {a.aclmdlDestroyAIPP != nullptr, "aclmdlDestroyAIPP"},
        {a.aclmdlSetAIPPInputFormat != nullptr, "aclmdlSetAIPPInputFormat"},
        {a.aclmdlSetAIPPCscParams != nullptr, "aclmdlSetAIPPCscParams"},
        {a.aclmdlSetAIPPRbuvSwapSwitch != nullptr, "aclmdlSetAIPPRbuvSwapSwitch"},
        {a.aclmdlSetAIPPAxSwapSwitch != nullptr, "aclmdlSetAIPPAxSwapSwitch"},
        {a.aclmdlSetAIPPSrcImageSize != nullptr, "aclmdlSetAIPPSrcImageSize"},
        {a.aclmdlSetAIPPCropParams != nullptr, "aclmdlSetAIPPCropParams"},
        {a.aclmdlSetAIPPPaddingParams != nullptr, "aclmdlSetAIPPPaddingParams"},
        {a.aclmdlSetAIPPDtcPixelMean != nullptr, "aclmdlSetAIPPDtcPixelMean"},
        {a.aclmdlSetAIPPDtcPixelMin != nullptr, "aclmdlSetAIPPDtcPixelMin"},
        {a.aclmdlSetAIPPPixelVarReci != nullptr, "aclmdlSetAIPPPixelVarReci"},
        {a.aclmdlSetInputAIPP != nullptr, "aclmdlSetInputAIPP"},
    };
    for (const auto& [present, name] : needed)
        if (!present)
            KES_FAIL(KES_ERR_UNSUPPORTED,
                     "dynamic AIPP on the NPU needs aclmdlCreateAIPP, aclmdlDestroyAIPP, the aclmdlSetAIPP* setters "
                     "and aclmdlSetInputAIPP, and this AscendCL (%s) has no %s: update CANN, run the model's .kom "
                     "on the CPU, or convert it with static AIPP",
                     acl::runtime_info().library.c_str(), name);
}

void AscendContext::set_dynamic_aipp(size_t index, const kes_aipp_dynamic* params) {
    const Io& io = model.ins[index];
    if (!io.dynamic_aipp && io.image && model.aipp_index != SIZE_MAX)
        KES_FAIL(KES_ERR_UNSUPPORTED,
                 "input %zu (%s): the model has several image inputs and one ascend_dynamic_aipp_data; Kestrel "
                 "cannot tell which input it belongs to",
                 index, io.name.c_str());
    KES_REQUIRE(io.dynamic_aipp, "input %zu (%s) has no dynamic AIPP (%s)", index, io.name.c_str(),
                io.image ? "its AIPP is static" : "it has no AIPP");
#ifdef KES_ENGINE_HAVE_AIPP
    if (params) require_dynamic_aipp_symbols(*api);
    dynamic_aipp[index] = params;
#else
    (void)params;
    KES_FAIL(KES_ERR_UNSUPPORTED, "dynamic AIPP: this build has no aipp module");
#endif
}

// The parameters, the images (tightly packed at src_image_size, as the board reads them) and the batch.
void AscendContext::check_dynamic_images(size_t i, const kes_model_input& in, size_t per_image) const {
#ifdef KES_ENGINE_HAVE_AIPP
    const Io& io = model.ins[i];
    const kes_aipp_dynamic* d = dynamic_aipp[i];
    KES_REQUIRE(d != nullptr,
                "inputs[%zu] (%s) has dynamic AIPP and the context has no parameters for it: call "
                "kes_model_context_set_dynamic_aipp(context, %zu, params) first",
                i, io.name.c_str(), i);
    const uint64_t items = kes_aipp_dynamic_batch_size(d);
    KES_REQUIRE(items >= in.image_count,
                "inputs[%zu] (%s): %u images, and its dynamic AIPP parameters have %llu batch items "
                "(kes_aipp_dynamic_create's batch_size must be at least the input's batch)",
                i, io.name.c_str(), in.image_count, static_cast<unsigned long long>(items));
    kes_aipp_params p;
    p.struct_size = sizeof p;
    KES_REQUIRE(kes_aipp_dynamic_get_params(d, 0, &p) == KES_OK, "inputs[%zu] (%s): %s", i, io.name.c_str(),
                kes_last_error());
    for (uint32_t k = 0; k < in.image_count; ++k) {
        const kes_image& im = in.images[k];
        size_t bytes = 0;
        KES_REQUIRE(
            im.data != nullptr && kes_image_buffer_size(im.format, im.width_stride, im.height_stride, &bytes) == KES_OK,
            "inputs[%zu] (%s): image %u is not a valid image", i, io.name.c_str(), k);
        KES_REQUIRE(bytes <= per_image && im.size >= bytes,
                    "inputs[%zu] (%s): image %u is %zu bytes, more than the input's max_src_image_size %zu", i,
                    io.name.c_str(), k, bytes, per_image);
        const uint32_t w = p.src_image_size_w ? p.src_image_size_w : im.width;
        const uint32_t h = p.src_image_size_h ? p.src_image_size_h : im.height;
        const uint32_t bpp =
            im.format == KES_PIXEL_RGB888 || im.format == KES_PIXEL_BGR888                                ? 3
            : im.format == KES_PIXEL_NV12 || im.format == KES_PIXEL_NV21 || im.format == KES_PIXEL_YUV400 ? 1
                                                                                                          : 4;
        size_t tight = 0;
        KES_REQUIRE(kes_image_buffer_size(im.format, w * bpp, h, &tight) == KES_OK && tight == bytes,
                    "inputs[%zu] (%s): image %u is %s %ux%u with strides %u x %u; the NPU reads a tightly packed "
                    "src_image_size image (%ux%u): set src_image_size to the strides",
                    i, io.name.c_str(), k, kes_pixel_format_name(im.format), im.width, im.height, im.width_stride,
                    im.height_stride, w, h);
    }
#else
    (void)in, (void)per_image;
    KES_FAIL(KES_ERR_UNSUPPORTED, "inputs[%zu]: dynamic AIPP: this build has no aipp module", i);
#endif
}

// aclmdlCreateAIPP for the images, every batch item's parameters through the setters, then
// aclmdlSetInputAIPP into the hidden input (the runtime copies them: the object goes at once).
void AscendContext::set_input_aipp(size_t i, const kes_model_input& in) {
#ifdef KES_ENGINE_HAVE_AIPP
    require_dynamic_aipp_symbols(*api);
    const kes_aipp_dynamic* d = dynamic_aipp[i];
    acl::MdlAipp* a = api->aclmdlCreateAIPP(in.image_count);
    if (!a) acl::fail_call("aclmdlCreateAIPP", acl::kBadAlloc);
    struct Destroy {
        const acl::Api* api;
        acl::MdlAipp* a;
        ~Destroy() { api->aclmdlDestroyAIPP(a); }
    } destroy{api, a};
    for (uint32_t k = 0; k < in.image_count; ++k) {
        kes_aipp_params p;
        p.struct_size = sizeof p;
        KES_REQUIRE(kes_aipp_dynamic_get_params(d, k, &p) == KES_OK, "inputs[%zu]: %s", i, kes_last_error());
        if (k == 0) {
            // csc_switch without a matrix is ATC's default table (BOARD-RULES §AIPP-CSC), which the runtime needs
            // spelled out.
            if (p.csc_switch && !p.matrix_set)
                kes_aipp_params_set_csc(&p, p.input_format == KES_AIPP_YUV420SP_U8 ? KES_AIPP_CSC_YUV2BGR_BT601_NARROW
                                                                                   : KES_AIPP_CSC_RGB2YUV_BT601_NARROW);
            const uint32_t w = p.src_image_size_w ? p.src_image_size_w : in.images[0].width;
            const uint32_t h = p.src_image_size_h ? p.src_image_size_h : in.images[0].height;
            const auto& m = p.matrix;
            const auto i16 = [](int32_t v) { return static_cast<int16_t>(v); };
            const auto u8 = [](int32_t v) { return static_cast<uint8_t>(v); };
            acl::check("aclmdlSetAIPPInputFormat", api->aclmdlSetAIPPInputFormat(a, p.input_format));
            acl::check("aclmdlSetAIPPSrcImageSize",
                       api->aclmdlSetAIPPSrcImageSize(a, static_cast<int32_t>(w), static_cast<int32_t>(h)));
            acl::check("aclmdlSetAIPPCscParams",
                       api->aclmdlSetAIPPCscParams(a, static_cast<int8_t>(p.csc_switch), i16(m[0][0]), i16(m[0][1]),
                                                   i16(m[0][2]), i16(m[1][0]), i16(m[1][1]), i16(m[1][2]), i16(m[2][0]),
                                                   i16(m[2][1]), i16(m[2][2]), u8(p.output_bias[0]),
                                                   u8(p.output_bias[1]), u8(p.output_bias[2]), u8(p.input_bias[0]),
                                                   u8(p.input_bias[1]), u8(p.input_bias[2])));
            acl::check("aclmdlSetAIPPRbuvSwapSwitch",
                       api->aclmdlSetAIPPRbuvSwapSwitch(a, static_cast<int8_t>(p.rbuv_swap_switch)));
            acl::check("aclmdlSetAIPPAxSwapSwitch",
                       api->aclmdlSetAIPPAxSwapSwitch(a, static_cast<int8_t>(p.ax_swap_switch)));
        }
        const auto s32 = [](uint32_t v) { return static_cast<int32_t>(v); };
        acl::check("aclmdlSetAIPPCropParams",
                   api->aclmdlSetAIPPCropParams(a, static_cast<int8_t>(p.crop), s32(p.load_start_pos_w),
                                                s32(p.load_start_pos_h), s32(p.crop_size_w), s32(p.crop_size_h), k));
        acl::check("aclmdlSetAIPPPaddingParams",
                   api->aclmdlSetAIPPPaddingParams(a, static_cast<int8_t>(p.padding), s32(p.top_padding_size),
                                                   s32(p.bottom_padding_size), s32(p.left_padding_size),
                                                   s32(p.right_padding_size), k));
        acl::check("aclmdlSetAIPPDtcPixelMean", api->aclmdlSetAIPPDtcPixelMean(a, static_cast<int16_t>(p.mean_chn[0]),
                                                                               static_cast<int16_t>(p.mean_chn[1]),
                                                                               static_cast<int16_t>(p.mean_chn[2]),
                                                                               static_cast<int16_t>(p.mean_chn[3]), k));
        acl::check("aclmdlSetAIPPDtcPixelMin",
                   api->aclmdlSetAIPPDtcPixelMin(a, p.min_chn[0], p.min_chn[1], p.min_chn[2], p.min_chn[3], k));
        acl::check("aclmdlSetAIPPPixelVarReci",
                   api->aclmdlSetAIPPPixelVarReci(a, p.var_reci_chn[0], p.var_reci_chn[1], p.var_reci_chn[2],
                                                  p.var_reci_chn[3], k));
    }
    acl::check("aclmdlSetInputAIPP", api->aclmdlSetInputAIPP(model.id, in_ds, model.aipp_index, a));
#else
    (void)i, (void)in;
#endif
}

void AscendContext::execute(const kes_tensor* inputs, kes_tensor* outputs) {
    for (size_t i = 0; i < model.ins.size(); ++i) check_tensor("inputs", i, model.ins[i], in_cur[i], inputs[i]);
    for (size_t i = 0; i < model.outs.size(); ++i) check_tensor("outputs", i, model.outs[i], out_cur[i], outputs[i]);
    require_no_dynamic_aipp();
    acl::ScopedContext bind;
    drain();
    apply_gear();
    for (size_t i = 0; i < model.ins.size(); ++i) {
        if (in_cur[i].size)
            acl::check("aclrtMemcpy",
                       api->aclrtMemcpy(in_dev[model.ins[i].acl_index], model.acl_in_bytes[model.ins[i].acl_index],
                                        inputs[i].data, in_cur[i].size, acl::kMemcpyH2D));
    }
    run(outputs);
}

// Static AIPP runs inside the model: each image's bytes (at the model's src_image_size, compiled into
// the .om) go into the input buffer as they are, one image per batch item.
void AscendContext::execute_images(const kes_model_input* inputs, kes_tensor* outputs) {
    for (size_t i = 0; i < model.ins.size(); ++i) {
        const Io& io = model.ins[i];
        const kes_model_input& in = inputs[i];
        if (!io.image) {
            KES_REQUIRE(in.tensor != nullptr && in.images == nullptr,
                        "inputs[%zu] (%s) has no AIPP: give a tensor (and no images)", i, io.name.c_str());
            check_tensor("inputs", i, io, in_cur[i], *in.tensor);
            continue;
        }
        KES_REQUIRE(in.tensor == nullptr && in.images != nullptr,
                    "inputs[%zu] (%s) carries AIPP (a UINT8 .om input): give images (and no tensor)", i,
                    io.name.c_str());
        const int64_t batch = in_cur[i].shape[0];
        const size_t per_image = static_cast<size_t>(in_cur[i].shape[1]);
        KES_REQUIRE(in.image_count == static_cast<uint64_t>(batch), "inputs[%zu] (%s): %u images for a batch of %lld",
                    i, io.name.c_str(), in.image_count, static_cast<long long>(batch));
        if (io.dynamic_aipp) {
            check_dynamic_images(i, in, per_image);
            continue;
        }
        for (uint32_t k = 0; k < in.image_count; ++k) {
            const kes_image& im = in.images[k];
            size_t bytes = 0;
            KES_REQUIRE(im.data != nullptr &&
                            kes_image_buffer_size(im.format, im.width_stride, im.height_stride, &bytes) == KES_OK,
                        "inputs[%zu] (%s): image %u is not a valid image", i, io.name.c_str(), k);
            KES_REQUIRE(bytes == per_image && im.size >= bytes,
                        "inputs[%zu] (%s): image %u is %s %ux%u (strides %u x %u: %zu bytes); the model's AIPP "
                        "input takes %zu bytes per image (the src_image_size of its aipp_op, strides included)",
                        i, io.name.c_str(), k, kes_pixel_format_name(im.format), im.width, im.height, im.width_stride,
                        im.height_stride, bytes, per_image);
        }
    }
    for (size_t i = 0; i < model.outs.size(); ++i) check_tensor("outputs", i, model.outs[i], out_cur[i], outputs[i]);
    acl::ScopedContext bind;
    drain();
    apply_gear();
    // Dataset buffers pointed at the caller's images go back to the context's own memory on every path.
    std::vector<size_t> borrowed;
    struct Restore {
        const acl::Api* api;
        acl::Dataset* ds;
        const std::vector<void*>& dev;
        const std::vector<size_t>& bytes;
        const std::vector<size_t>& idx;
        ~Restore() {
            for (size_t a : idx) api->aclUpdateDataBuffer(api->aclmdlGetDatasetBuffer(ds, a), dev[a], bytes[a]);
        }
    } restore{api, in_ds, in_dev, model.acl_in_bytes, borrowed};
    for (size_t i = 0; i < model.ins.size(); ++i) {
        const Io& io = model.ins[i];
        uint8_t* dst = static_cast<uint8_t*>(in_dev[io.acl_index]);
        const size_t cap = model.acl_in_bytes[io.acl_index];
        if (!io.image) {
            if (in_cur[i].size)
                acl::check("aclrtMemcpy",
                           api->aclrtMemcpy(dst, cap, inputs[i].tensor->data, in_cur[i].size, acl::kMemcpyH2D));
            continue;
        }
        // A single image already on the device (a DVPP or device buffer of exactly the input's bytes) is
        // the input itself: the dataset's buffer points at it for this run (aclUpdateDataBuffer), as the
        // Ascend samples feed a VPC output to a static-AIPP model. Otherwise the bytes are copied in,
        // host-to-device or device-to-device by where each image lives.
        const size_t per_image = static_cast<size_t>(in_cur[i].shape[1]);
        if (io.dynamic_aipp) {
            // Each image's bytes at the start of its item's max_src_image_size slot; the parameters say
            // how many are read.
            for (uint32_t k = 0; k < inputs[i].image_count; ++k) {
                const kes_image& im = inputs[i].images[k];
                size_t bytes = 0;
                kes_image_buffer_size(im.format, im.width_stride, im.height_stride, &bytes);
                const int32_t kind = kes_image_memory(&im) == KES_MEM_HOST ? acl::kMemcpyH2D : acl::kMemcpyD2D;
                acl::check("aclrtMemcpy",
                           api->aclrtMemcpy(dst + k * per_image, cap - k * per_image, im.data, bytes, kind));
            }
            set_input_aipp(i, inputs[i]);
            continue;
        }
        const kes_image& first = inputs[i].images[0];
        const bool on_device = kes_image_memory(&first) != KES_MEM_HOST;
        if (inputs[i].image_count == 1 && on_device && api->aclUpdateDataBuffer) {
            acl::DataBuffer* b = api->aclmdlGetDatasetBuffer(in_ds, io.acl_index);
            acl::check("aclUpdateDataBuffer", api->aclUpdateDataBuffer(b, first.data, per_image));
            borrowed.push_back(io.acl_index);
            continue;
        }
        for (uint32_t k = 0; k < inputs[i].image_count; ++k) {
            const kes_image& im = inputs[i].images[k];
            const int32_t kind = kes_image_memory(&im) == KES_MEM_HOST ? acl::kMemcpyH2D : acl::kMemcpyD2D;
            acl::check("aclrtMemcpy",
                       api->aclrtMemcpy(dst + k * per_image, cap - k * per_image, im.data, per_image, kind));
        }
    }
    run(outputs);
}

}  // namespace

const ExecutorFactory& ascend_executor_factory() {
    static const ExecutorFactory factory{"ascend", ".om", recognizes, query_size, load, nullptr};
    return factory;
}

}  // namespace kes
