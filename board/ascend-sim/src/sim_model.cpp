// sim_model.cpp — the simulator's aclmdl* half: an "NPU" that runs IMOD containers wrapping a .kom
// (imod.hpp, made by kes-sim-pack) through Kestrel's CPU engine, so outputs are real numbers.
//
// What it enforces as the real runtime does (BOARD-RULES §Models): real .om files are refused (545001), so is a
// container built for another SoC (ATC's --soc_version must match the chip); work and weight memory
// and every dataset buffer must be device memory (aclrtMalloc); a dynamic model has the hidden input
// "ascend_mbatch_shape_data" that aclmdlSetDynamicBatchSize / aclmdlSetDynamicHWSize fill (the app must
// give it a device buffer and never write it), and its input dims report -1 on the dynamic axes;
// execution reads and writes device memory only inside simulated device work.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "imod.hpp"
#include "kestrel/engine.h"
#if __has_include("kestrel/aipp.h")
#include "kestrel/aipp.h"
#define SIM_HAVE_AIPP 1
#endif
#include "sim.hpp"

namespace kes_sim {

namespace {

constexpr const char* kHiddenName = "ascend_mbatch_shape_data";
constexpr const char* kAippName = "ascend_dynamic_aipp_data";

std::string kes_error() {
    return kes_last_error();
}

// A copy of the .kom at a 128-byte aligned address: the engine's verifier and loader expect the alignment
// kes-convert gives its files, and the app's buffer + 256 need not have it.
struct AlignedCopy {
    void* data = nullptr;
    explicit AlignedCopy(const uint8_t* p, size_t n) {
        if (posix_memalign(&data, 128, n) == 0) std::memcpy(data, p, n);
    }
    ~AlignedCopy() { std::free(data); }
};

// Parses the container; returns 0 with the view, or the code the real runtime would give.
aclError open_container(const char* call, const void* model, size_t size, ImodView* view) {
    if (!model || size == 0) return report(kInvalidParam, std::string(call) + ": model is NULL or modelSize is 0");
    std::string why;
    switch (parse(model, size, view, &why)) {
        case ImodCheck::kOk: return kOk;
        case ImodCheck::kNotImod: return report(kInvalidFile, std::string(call) + ": " + why);
        case ImodCheck::kRealOm: return report(kGeLoadModel, std::string(call) + ": " + why);
        case ImodCheck::kDamaged: return report(kParseModel, std::string(call) + ": " + why);
    }
    return kParseModel;
}

// Whether graph input `i` carries static AIPP, and the image it takes (BOARD-RULES §Models: ATC's --insert_op_conf
// makes a static-AIPP input the DVPP image buffer itself, UINT8). src_image_size 0 means the model
// input's own height and width, as in ATC. Formats beyond YUV420SP (taken as NV12), RGB888 and YUV400
// are not simulated: such an input stays the AIPP output tensor.
bool image_input(kes_model* m, size_t i, const kes_tensor& t, Model::ImageInput* out) {
#ifdef SIM_HAVE_AIPP
    const char* text = nullptr;
    if (kes_model_input_aipp(m, i, &text) != KES_OK || !text) return false;
    kes_aipp_config* config = nullptr;
    if (kes_aipp_config_parse(text, std::strlen(text), "sim", &config) != KES_OK) return false;
    kes_aipp_params p;
    kes_aipp_params_init(&p);
    const bool got = kes_aipp_config_count(config) == 1 && kes_aipp_config_get(config, 0, &p) == KES_OK;
    kes_aipp_config_destroy(config);
    if (!got || t.ndim != 4) return false;
    if (p.aipp_mode == KES_AIPP_MODE_DYNAMIC) {
        // ATC makes a dynamic-AIPP input a buffer of max_src_image_size bytes per batch item; what the
        // image is (format, size) comes with the parameters in ascend_dynamic_aipp_data.
        out->bytes = static_cast<size_t>(p.max_src_image_size);
        out->dynamic = out->on = true;
        return true;
    }
    if (p.aipp_mode != KES_AIPP_MODE_STATIC) return false;
    // The input's recorded layout; an ND one (a .kom from an older converter) follows the engine's rule
    // for AIPP inputs (engine.h, kes_model_execute_images): NCHW, ATC's default, never guessed from the shape.
    const bool nhwc = t.layout == KES_LAYOUT_NHWC;
    out->width = p.src_image_size_w ? p.src_image_size_w : static_cast<uint32_t>(t.shape[nhwc ? 2 : 3]);
    out->height = p.src_image_size_h ? p.src_image_size_h : static_cast<uint32_t>(t.shape[nhwc ? 1 : 2]);
    const size_t area = size_t{out->width} * out->height;
    switch (p.input_format) {
        case KES_AIPP_YUV420SP_U8:
            out->format = KES_PIXEL_NV12, out->width_stride = out->width, out->bytes = area * 3 / 2;
            break;
        case KES_AIPP_RGB888_U8:
            out->format = KES_PIXEL_RGB888, out->width_stride = 3 * out->width, out->bytes = area * 3;
            break;
        case KES_AIPP_YUV400_U8:
            out->format = KES_PIXEL_YUV400, out->width_stride = out->width, out->bytes = area;
            break;
        default: return false;
    }
    out->on = true;
    return true;
#else
    (void)m, (void)i, (void)t, (void)out;
    return false;
#endif
}

void fill_io(kes_model* m, Model& out) {
    size_t inputs = 0, outputs = 0;
    kes_model_input_count(m, &inputs);
    kes_model_output_count(m, &outputs);
    out.graph_inputs = inputs;
    int64_t gears[2 * 100];
    size_t count = 0;
    kes_model_batch_gears(m, gears, 100, &count);
    out.batch_gears.assign(gears, gears + std::min<size_t>(count, 100));
    kes_model_image_sizes(m, gears, 100, &count);
    out.image_gears.assign(gears, gears + 2 * std::min<size_t>(count, 100));
    auto describe = [&](const kes_tensor& t, const char* name, bool is_input) {
        SimIO io;
        io.name = name ? name : "";
        io.dtype = static_cast<aclDataType>(t.dtype);  // kes_dtype numbers are aclDataType's (tensor.h)
        io.format = t.layout == KES_LAYOUT_NCHW ? 0 : t.layout == KES_LAYOUT_NHWC ? 1 : 2;
        io.size = t.size;
        io.dims.assign(t.shape, t.shape + t.ndim);
        if (is_input && !out.batch_gears.empty() && !io.dims.empty()) io.dims[0] = -1;
        if (is_input && !out.image_gears.empty() && io.dims.size() == 4) {
            const bool nhwc = t.layout == KES_LAYOUT_NHWC;
            io.dims[nhwc ? 1 : 2] = -1;
            io.dims[nhwc ? 2 : 3] = -1;
        }
        return io;
    };
    out.image_inputs.assign(inputs, Model::ImageInput{});
    for (size_t i = 0; i < inputs; ++i) {
        kes_tensor t;
        const char* name = nullptr;
        kes_model_input_desc(m, i, &t);
        kes_model_input_name(m, i, &name);
        out.desc.inputs.push_back(describe(t, name, true));
        if (!image_input(m, i, t, &out.image_inputs[i])) continue;
        if (out.image_inputs[i].dynamic) {
            // One ascend_dynamic_aipp_data per model here (ATC's naming for several is UNCONFIRMED): a
            // second dynamic-AIPP input stays the AIPP output tensor.
            if (out.aipp_input != SIZE_MAX) {
                out.image_inputs[i] = Model::ImageInput{};
                continue;
            }
            out.aipp_input = i;
        }
        SimIO& io = out.desc.inputs.back();
        io.dtype = 4;  // ACL_UINT8: the image bytes; the inserted AIPP makes the network's input
        const int64_t batch = out.batch_gears.empty() ? (t.ndim ? t.shape[0] : 1) : out.batch_gears.back();
        io.size = static_cast<size_t>(batch) * out.image_inputs[i].bytes;
    }
    for (size_t i = 0; i < outputs; ++i) {
        kes_tensor t;
        const char* name = nullptr;
        kes_model_output_desc(m, i, &t);
        kes_model_output_name(m, i, &name);
        out.desc.outputs.push_back(describe(t, name, false));
    }
    if (!out.batch_gears.empty() || !out.image_gears.empty()) {
        // The hidden input of ATC's dynamic models, last: int64 [1] for batch, [2] for (h, w). Its exact
        // shape on a board is UNCONFIRMED; apps size it with aclmdlGetInputSizeByIndex, as they must.
        SimIO hidden;
        hidden.name = kHiddenName;
        hidden.dtype = 9;  // ACL_INT64
        hidden.dims = {out.batch_gears.empty() ? 2 : 1};
        hidden.size = static_cast<size_t>(hidden.dims[0]) * 8;
        out.hidden_index = out.desc.inputs.size();
        out.desc.inputs.push_back(hidden);
    }
    if (out.aipp_input != SIZE_MAX) {
        // The hidden input of dynamic AIPP (ACL_DYNAMIC_AIPP_NAME), after the gears' one: sized as
        // aclmdlGetAippDataSize says for the largest batch; aclmdlSetInputAIPP writes it.
        const std::vector<int64_t>& dims = out.desc.inputs[out.aipp_input].dims;
        int64_t batch = out.batch_gears.empty() ? (dims.empty() ? 1 : dims[0]) : out.batch_gears.back();
        if (batch < 1) batch = 1;
        SimIO hidden;
        hidden.name = kAippName;
        hidden.dtype = 4;  // ACL_UINT8
        hidden.size = sim_aipp_data_size(static_cast<uint64_t>(batch));
        hidden.dims = {static_cast<int64_t>(hidden.size)};
        out.aipp_index = out.desc.inputs.size();
        out.desc.inputs.push_back(hidden);
    }
    out.desc.batch_gears = out.batch_gears;
    out.desc.image_gears = out.image_gears;
    out.desc.filled = true;
}

Model* find_model(uint32_t id) {
    auto it = sim().models.find(id);
    return it == sim().models.end() ? nullptr : it->second.get();
}

bool valid_desc(const aclmdlDesc* d) {
    return d && sim().descs.count(const_cast<aclmdlDesc*>(d)) && d->filled;
}

bool valid_dataset(const aclmdlDataset* d) {
    return d && sim().datasets.count(const_cast<aclmdlDataset*>(d));
}

// Checks a dataset buffer: live, device memory, at least `need` bytes.
aclError check_buffer(const char* call, const aclmdlDataset* ds, size_t index, size_t need, const char* what,
                      aclDataBuffer** out) {
    if (index >= ds->buffers.size())
        return report(kInvalidParam, std::string(call) + ": no buffer " + std::to_string(index));
    aclDataBuffer* b = ds->buffers[index];
    if (!sim().buffers.count(b)) {
        return report(kInvalidParam,
                      std::string(call) + ": " + what + " buffer " + std::to_string(index) + " was destroyed");
    }
    if (b->size < need) {
        return report(kInvalidParam, std::string(call) + ": " + what + " " + std::to_string(index) + " has " +
                                         std::to_string(b->size) + " bytes, the model needs " + std::to_string(need));
    }
    if (!device_region(b->data, need)) {
        return report(kInvalidParam, std::string(call) + ": " + what + " " + std::to_string(index) +
                                         " is not device memory (aclrtMalloc): the NPU cannot read host memory");
    }
    *out = b;
    return kOk;
}

#ifdef SIM_HAVE_AIPP
// The parameters in a hidden input, as the aipp module's dynamic object (the simulated NPU's AIPP).
aclError decode_aipp(const uint8_t* data, const SimAippHead& h,
                     std::unique_ptr<kes_aipp_dynamic, void (*)(kes_aipp_dynamic*)>* out) {
    kes_aipp_dynamic* d = nullptr;
    if (kes_aipp_dynamic_create(nullptr, h.batch, &d) != KES_OK)
        return report(kRtModelExecute, "aclmdlExecute: dynamic AIPP: " + kes_error());
    out->reset(d);
    const int16_t* mx = h.matrix;
    bool ok = kes_aipp_dynamic_set_input_format(d, static_cast<kes_aipp_input_format>(h.input_format)) == KES_OK &&
              kes_aipp_dynamic_set_src_image_size(d, h.src_w, h.src_h) == KES_OK &&
              kes_aipp_dynamic_set_rbuv_swap_switch(d, h.rbuv_swap) == KES_OK &&
              kes_aipp_dynamic_set_ax_swap_switch(d, h.ax_swap) == KES_OK &&
              (!h.csc_switch ||
               kes_aipp_dynamic_set_csc_params(d, h.csc_switch, mx[0], mx[1], mx[2], mx[3], mx[4], mx[5], mx[6], mx[7],
                                               mx[8], h.output_bias[0], h.output_bias[1], h.output_bias[2],
                                               h.input_bias[0], h.input_bias[1], h.input_bias[2]) == KES_OK);
    for (uint64_t k = 0; ok && k < h.batch; ++k) {
        SimAippItem it;
        std::memcpy(&it, data + 64 + 96 * k, sizeof it);
        ok = kes_aipp_dynamic_set_crop_params(d, it.crop_switch, it.crop_start_w, it.crop_start_h, it.crop_w, it.crop_h,
                                              k) == KES_OK &&
             kes_aipp_dynamic_set_padding_params(d, it.padding_switch, it.top, it.bottom, it.left, it.right, k) ==
                 KES_OK &&
             kes_aipp_dynamic_set_dtc_pixel_mean(d, it.mean[0], it.mean[1], it.mean[2], it.mean[3], k) == KES_OK &&
             kes_aipp_dynamic_set_dtc_pixel_min(d, it.min[0], it.min[1], it.min[2], it.min[3], k) == KES_OK &&
             kes_aipp_dynamic_set_pixel_var_reci(d, it.var_reci[0], it.var_reci[1], it.var_reci[2], it.var_reci[3],
                                                 k) == KES_OK;
    }
    if (!ok) return report(kRtModelExecute, "aclmdlExecute: dynamic AIPP parameters: " + kes_error());
    return kOk;
}

// The image a dynamic-AIPP input holds per batch item: tightly packed at src_image_size, in the byte
// order of input_format (BOARD-RULES §AIPP-order).
aclError dynamic_view(const SimAippHead& h, Model::ImageInput* v) {
    v->width = static_cast<uint32_t>(h.src_w);
    v->height = static_cast<uint32_t>(h.src_h);
    const size_t area = size_t{v->width} * v->height;
    switch (h.input_format) {
        case KES_AIPP_YUV420SP_U8:
            v->format = KES_PIXEL_NV12, v->width_stride = v->width, v->bytes = area * 3 / 2;
            break;
        case KES_AIPP_RGB888_U8:
            v->format = KES_PIXEL_RGB888, v->width_stride = 3 * v->width, v->bytes = area * 3;
            break;
        case KES_AIPP_YUV400_U8: v->format = KES_PIXEL_YUV400, v->width_stride = v->width, v->bytes = area; break;
        case KES_AIPP_XRGB8888_U8:
            v->format = KES_PIXEL_ARGB8888, v->width_stride = 4 * v->width, v->bytes = area * 4;
            break;
        default:
            return report(kRtModelExecute, "aclmdlExecute: dynamic AIPP input_format " +
                                               std::to_string(h.input_format) + " is not simulated");
    }
    if (area == 0)
        return report(kRtModelExecute, "aclmdlExecute: dynamic AIPP src_image_size is 0 (aclmdlSetAIPPSrcImageSize)");
    return kOk;
}
#endif

// Runs one execution; the caller holds the lock and has validated the ids. Device work scope inside.
aclError execute(uint32_t id, const aclmdlDataset* input, aclmdlDataset* output) {
    Model* m = find_model(id);
    if (!m) return report(kInvalidModelId, "aclmdlExecute: model " + std::to_string(id) + " was unloaded");
    DeviceWork work;
    if (m->hidden_index != SIZE_MAX) {
        aclDataBuffer* hb = nullptr;
        if (aclError e = check_buffer("aclmdlExecute", input, m->hidden_index, m->desc.inputs[m->hidden_index].size,
                                      "input", &hb)) {
            return e;
        }
        int64_t v[2] = {0, 0};
        std::memcpy(v, hb->data, m->desc.inputs[m->hidden_index].size);
        const kes_status st = m->batch_gears.empty() ? kes_model_context_set_image_size(m->context, v[0], v[1])
                                                     : kes_model_context_set_batch(m->context, v[0]);
        if (st != KES_OK || v[0] == 0) {
            return report(kRtModelExecute,
                          "aclmdlExecute: the dynamic input holds no valid gear (call "
                          "aclmdlSetDynamicBatchSize / aclmdlSetDynamicHWSize on this dataset): " +
                              kes_error());
        }
    }
#ifdef SIM_HAVE_AIPP
    // Dynamic AIPP: the parameters aclmdlSetInputAIPP left in the hidden input, for the engine's AIPP.
    std::unique_ptr<kes_aipp_dynamic, void (*)(kes_aipp_dynamic*)> dynamic(nullptr, kes_aipp_dynamic_destroy);
    SimAippHead head;
    if (m->aipp_index != SIZE_MAX) {
        aclDataBuffer* ab = nullptr;
        if (aclError e =
                check_buffer("aclmdlExecute", input, m->aipp_index, m->desc.inputs[m->aipp_index].size, "input", &ab)) {
            return e;
        }
        std::memcpy(&head, ab->data, sizeof head);
        if (head.magic != kSimAippMagic || head.batch == 0)
            return report(kRtModelExecute,
                          "aclmdlExecute: ascend_dynamic_aipp_data holds no parameters (call aclmdlSetInputAIPP on "
                          "this dataset)");
        if (aclError e = decode_aipp(static_cast<const uint8_t*>(ab->data), head, &dynamic)) return e;
    }
#endif
    std::vector<kes_tensor> ins(m->graph_inputs), outs(m->desc.outputs.size());
    std::vector<kes_model_input> image_ins(m->graph_inputs);
    std::vector<std::vector<kes_image>> images(m->graph_inputs);
    bool any_images = false;
    for (size_t i = 0; i < ins.size(); ++i) {
        kes_tensor d;
        kes_model_context_input_desc(m->context, i, &d);
        aclDataBuffer* b = nullptr;
        image_ins[i] = kes_model_input{&ins[i], nullptr, 0};
        if (m->image_inputs[i].on) {
            const Model::ImageInput& im = m->image_inputs[i];
            const int64_t batch = d.ndim ? d.shape[0] : 1;
            if (aclError e =
                    check_buffer("aclmdlExecute", input, i, im.bytes * static_cast<size_t>(batch), "input", &b))
                return e;
            images[i].resize(static_cast<size_t>(batch));
            Model::ImageInput view = im;
#ifdef SIM_HAVE_AIPP
            if (im.dynamic) {
                if (head.batch < static_cast<uint64_t>(batch))
                    return report(kRtModelExecute, "aclmdlExecute: aclmdlCreateAIPP's batch " +
                                                       std::to_string(head.batch) + " is smaller than the input's " +
                                                       std::to_string(batch));
                if (aclError e = dynamic_view(head, &view)) return e;
                if (view.bytes > im.bytes)
                    return report(kRtModelExecute, "aclmdlExecute: a " + std::to_string(view.width) + "x" +
                                                       std::to_string(view.height) + " source image is " +
                                                       std::to_string(view.bytes) +
                                                       " bytes, more than the model's "
                                                       "max_src_image_size " +
                                                       std::to_string(im.bytes));
                kes_model_context_set_dynamic_aipp(m->context, i, dynamic.get());
            }
#endif
            for (int64_t k = 0; k < batch; ++k) {
                kes_image& img = images[i][static_cast<size_t>(k)];
                if (kes_image_wrap(&img, static_cast<kes_pixel_format>(view.format), view.width, view.height,
                                   view.width_stride, view.height, static_cast<uint8_t*>(b->data) + k * im.bytes,
                                   view.bytes) != KES_OK) {
                    return report(kInvalidParam,
                                  "aclmdlExecute: image input " + std::to_string(i) + ": " + kes_error());
                }
            }
            image_ins[i] = kes_model_input{nullptr, images[i].data(), static_cast<uint32_t>(batch)};
            any_images = true;
            continue;
        }
        if (aclError e = check_buffer("aclmdlExecute", input, i, d.size, "input", &b)) return e;
        if (kes_tensor_wrap(&ins[i], d.dtype, d.layout, d.ndim, d.shape, b->data, b->size) != KES_OK) {
            return report(kInvalidParam, "aclmdlExecute: input " + std::to_string(i) + ": " + kes_error());
        }
    }
    for (size_t i = 0; i < outs.size(); ++i) {
        kes_tensor d;
        kes_model_context_output_desc(m->context, i, &d);
        aclDataBuffer* b = nullptr;
        if (aclError e = check_buffer("aclmdlExecute", output, i, d.size, "output", &b)) return e;
        if (kes_tensor_wrap(&outs[i], d.dtype, d.layout, d.ndim, d.shape, b->data, b->size) != KES_OK) {
            return report(kInvalidParam, "aclmdlExecute: output " + std::to_string(i) + ": " + kes_error());
        }
    }
    const kes_status st =
        any_images ? kes_model_execute_images(m->context, image_ins.data(), image_ins.size(), outs.data(), outs.size())
                   : kes_model_execute(m->context, ins.data(), ins.size(), outs.data(), outs.size());
    if (m->aipp_input != SIZE_MAX) kes_model_context_set_dynamic_aipp(m->context, m->aipp_input, nullptr);
    if (st != KES_OK) {
        return report(kRtModelExecute, "aclmdlExecute: the model failed: " + kes_error());
    }
    return kOk;
}

aclError check_datasets(const char* call, Model* m, const aclmdlDataset* input, const aclmdlDataset* output) {
    if (!valid_dataset(input) || !valid_dataset(output)) {
        return report(kInvalidParam, std::string(call) + ": input or output is not a live dataset");
    }
    if (input->buffers.size() != m->desc.inputs.size()) {
        return report(kModelInputNotMatch,
                      std::string(call) + ": " + std::to_string(input->buffers.size()) +
                          " input buffers, the model has " + std::to_string(m->desc.inputs.size()) + " inputs" +
                          (m->hidden_index != SIZE_MAX ? " (the last is ascend_mbatch_shape_data)" : ""));
    }
    if (output->buffers.size() != m->desc.outputs.size()) {
        return report(kModelOutputNotMatch, std::string(call) + ": " + std::to_string(output->buffers.size()) +
                                                " output buffers, the model has " +
                                                std::to_string(m->desc.outputs.size()) + " outputs");
    }
    return kOk;
}

}  // namespace

void release_models(std::vector<std::string>* leaks) {
    Sim& s = sim();
    for (auto& m : s.models) leaks->push_back("model " + std::to_string(m.first) + " (never aclmdlUnload-ed)");
    for (aclmdlAIPP* a : s.aipps) {
        leaks->push_back("dynamic AIPP parameters " + hex(a) + " (aclmdlCreateAIPP)");
        delete a;
    }
    s.aipps.clear();
    DeviceWork work;
    s.models.clear();
}

}  // namespace kes_sim

using namespace kes_sim;

#define SIM_LOCK std::lock_guard<std::recursive_mutex> sim_lock_(sim().mutex)
#define SIM_ENTER(needs) \
    SIM_LOCK;            \
    if (aclError e_ = enter(__func__, (needs))) return e_

SIM_API aclError aclmdlQuerySizeFromMem(const void* model, size_t modelSize, size_t* workSize, size_t* weightSize) {
    SIM_ENTER(kNeedInit);
    if (!workSize || !weightSize)
        return report(kInvalidParam, "aclmdlQuerySizeFromMem: workSize or weightSize is NULL");
    ImodView v;
    if (aclError e = open_container(__func__, model, modelSize, &v)) return e;
    AlignedCopy kom(v.payload, v.payload_size);
    if (!kom.data) return report(200000, "aclmdlQuerySizeFromMem: out of host memory");
    if (kes_model_query_size(kom.data, v.payload_size, workSize, weightSize) != KES_OK) {
        return report(kParseModel, std::string("aclmdlQuerySizeFromMem: the wrapped .kom is invalid: ") + kes_error());
    }
    return kOk;
}

SIM_API aclError aclmdlLoadFromMemWithMem(const void* model, size_t modelSize, uint32_t* modelId, void* workPtr,
                                          size_t workSize, void* weightPtr, size_t weightSize) {
    SIM_ENTER(kNeedContext);
    Sim& s = sim();
    if (!modelId) return report(kInvalidParam, "aclmdlLoadFromMemWithMem: modelId is NULL");
    ImodView v;
    if (aclError e = open_container(__func__, model, modelSize, &v)) return e;
    if (v.soc != s.config.soc) {
        // The runtime's code for this case is UNCONFIRMED (forums quote the message, not the code).
        return report(kGeLoadModel, "aclmdlLoadFromMemWithMem: the model was built for " + v.soc +
                                        " (ATC --soc_version) "
                                        "but this device is " +
                                        s.config.soc + ": convert it again with --soc_version=" + s.config.soc);
    }
    AlignedCopy kom(v.payload, v.payload_size);
    if (!kom.data) return report(200000, "aclmdlLoadFromMemWithMem: out of host memory");
    size_t need_work = 0, need_weight = 0;
    if (kes_model_query_size(kom.data, v.payload_size, &need_work, &need_weight) != KES_OK) {
        return report(kParseModel,
                      std::string("aclmdlLoadFromMemWithMem: the wrapped .kom is invalid: ") + kes_error());
    }
    auto check_region = [&](const char* what, void* p, size_t given, size_t need) -> aclError {
        if (!p) return kOk;
        if (given < need) {
            return report(kInvalidParam, std::string("aclmdlLoadFromMemWithMem: ") + what + " memory of " +
                                             std::to_string(given) + " bytes, aclmdlQuerySizeFromMem asks " +
                                             std::to_string(need));
        }
        if (!device_region(p, need)) {
            return report(kGeModelAddrInvalid, std::string("aclmdlLoadFromMemWithMem: ") + what +
                                                   " memory is not device memory from aclrtMalloc");
        }
        return kOk;
    };
    if (aclError e = check_region("work", workPtr, workSize, need_work)) return e;
    if (aclError e = check_region("weight", weightPtr, weightSize, need_weight)) return e;
    auto m = std::make_unique<Model>();
    m->soc = v.soc;
    if (!workPtr) workPtr = m->own_work = internal_alloc(need_work ? need_work : 128);
    if (!weightPtr) weightPtr = m->own_weight = internal_alloc(need_weight ? need_weight : 128);
    if (!workPtr || !weightPtr) return report(kRtDeviceOom, "aclmdlLoadFromMemWithMem: no device memory for the model");
    const size_t work_bytes = m->own_work ? std::max<size_t>(need_work, 128) : workSize;
    const size_t weight_bytes = m->own_weight ? std::max<size_t>(need_weight, 128) : weightSize;
    DeviceWork work;
    if (kes_model_load_from_memory_with_mem(kom.data, v.payload_size, workPtr, work_bytes, weightPtr, weight_bytes,
                                            &m->model) != KES_OK ||
        kes_model_context_create(m->model, nullptr, 0, &m->context) != KES_OK) {
        return report(kGeLoadModel, std::string("aclmdlLoadFromMemWithMem: ") + kes_error());
    }
    fill_io(m->model, *m);
    const uint32_t id = s.next_model_id++;
    s.models[id] = std::move(m);
    *modelId = id;
    return kOk;
}

SIM_API aclError aclmdlUnload(uint32_t modelId) {
    SIM_ENTER(kNeedContext);
    Sim& s = sim();
    auto it = s.models.find(modelId);
    if (it == s.models.end()) return report(kInvalidModelId, "aclmdlUnload: no model " + std::to_string(modelId));
    DeviceWork work;
    s.models.erase(it);
    return kOk;
}

SIM_API aclmdlDesc* aclmdlCreateDesc() {
    SIM_LOCK;
    if (enter(__func__, kNeedInit) != kOk) return nullptr;
    auto* d = new aclmdlDesc;
    sim().descs.insert(d);
    return d;
}

SIM_API aclError aclmdlDestroyDesc(aclmdlDesc* modelDesc) {
    SIM_ENTER(kNeedInit);
    if (!sim().descs.erase(modelDesc)) return report(kInvalidParam, "aclmdlDestroyDesc: not a live description");
    delete modelDesc;
    return kOk;
}

SIM_API aclError aclmdlGetDesc(aclmdlDesc* modelDesc, uint32_t modelId) {
    SIM_ENTER(kNeedContext);
    if (!modelDesc || !sim().descs.count(modelDesc))
        return report(kInvalidParam, "aclmdlGetDesc: not a live description");
    Model* m = find_model(modelId);
    if (!m) return report(kInvalidModelId, "aclmdlGetDesc: no model " + std::to_string(modelId));
    *modelDesc = m->desc;
    return kOk;
}

SIM_API size_t aclmdlGetNumInputs(aclmdlDesc* modelDesc) {
    SIM_LOCK;
    return valid_desc(modelDesc) ? modelDesc->inputs.size() : 0;
}

SIM_API size_t aclmdlGetNumOutputs(aclmdlDesc* modelDesc) {
    SIM_LOCK;
    return valid_desc(modelDesc) ? modelDesc->outputs.size() : 0;
}

SIM_API size_t aclmdlGetInputSizeByIndex(aclmdlDesc* modelDesc, size_t index) {
    SIM_LOCK;
    return valid_desc(modelDesc) && index < modelDesc->inputs.size() ? modelDesc->inputs[index].size : 0;
}

SIM_API size_t aclmdlGetOutputSizeByIndex(aclmdlDesc* modelDesc, size_t index) {
    SIM_LOCK;
    return valid_desc(modelDesc) && index < modelDesc->outputs.size() ? modelDesc->outputs[index].size : 0;
}

namespace {
aclError get_dims(const char* call, const aclmdlDesc* d, const std::vector<SimIO>* ios, size_t index,
                  aclmdlIODims* dims) {
    if (!valid_desc(d) || !dims) return report(kInvalidParam, std::string(call) + ": bad description or dims NULL");
    if (index >= ios->size()) return report(kInvalidParam, std::string(call) + ": index " + std::to_string(index));
    const SimIO& io = (*ios)[index];
    std::memset(dims, 0, sizeof *dims);
    std::strncpy(dims->name, io.name.c_str(), sizeof dims->name - 1);
    dims->dimCount = io.dims.size();
    for (size_t i = 0; i < io.dims.size() && i < 128; ++i) dims->dims[i] = io.dims[i];
    return kOk;
}
const SimIO* io_at(const aclmdlDesc* d, bool input, size_t index) {
    if (!valid_desc(d)) return nullptr;
    const auto& v = input ? d->inputs : d->outputs;
    return index < v.size() ? &v[index] : nullptr;
}
}  // namespace

SIM_API aclError aclmdlGetInputDims(const aclmdlDesc* modelDesc, size_t index, aclmdlIODims* dims) {
    SIM_ENTER(kNeedInit);
    return get_dims(__func__, modelDesc, modelDesc ? &modelDesc->inputs : nullptr, index, dims);
}

SIM_API aclError aclmdlGetOutputDims(const aclmdlDesc* modelDesc, size_t index, aclmdlIODims* dims) {
    SIM_ENTER(kNeedInit);
    return get_dims(__func__, modelDesc, modelDesc ? &modelDesc->outputs : nullptr, index, dims);
}

SIM_API aclDataType aclmdlGetInputDataType(const aclmdlDesc* modelDesc, size_t index) {
    SIM_LOCK;
    const SimIO* io = io_at(modelDesc, true, index);
    return io ? io->dtype : -1;  // ACL_DT_UNDEFINED
}

SIM_API aclDataType aclmdlGetOutputDataType(const aclmdlDesc* modelDesc, size_t index) {
    SIM_LOCK;
    const SimIO* io = io_at(modelDesc, false, index);
    return io ? io->dtype : -1;
}

SIM_API aclFormat aclmdlGetInputFormat(const aclmdlDesc* modelDesc, size_t index) {
    SIM_LOCK;
    const SimIO* io = io_at(modelDesc, true, index);
    return io ? io->format : -1;  // ACL_FORMAT_UNDEFINED
}

SIM_API aclFormat aclmdlGetOutputFormat(const aclmdlDesc* modelDesc, size_t index) {
    SIM_LOCK;
    const SimIO* io = io_at(modelDesc, false, index);
    return io ? io->format : -1;
}

SIM_API const char* aclmdlGetInputNameByIndex(const aclmdlDesc* modelDesc, size_t index) {
    SIM_LOCK;
    const SimIO* io = io_at(modelDesc, true, index);
    return io ? io->name.c_str() : "";
}

SIM_API const char* aclmdlGetOutputNameByIndex(const aclmdlDesc* modelDesc, size_t index) {
    SIM_LOCK;
    const SimIO* io = io_at(modelDesc, false, index);
    return io ? io->name.c_str() : "";
}

namespace {
aclError index_by_name(const char* call, const aclmdlDesc* d, bool input, const char* name, size_t* index) {
    if (!valid_desc(d) || !name || !index) return report(kInvalidParam, std::string(call) + ": bad argument");
    const auto& v = input ? d->inputs : d->outputs;
    for (size_t i = 0; i < v.size(); ++i) {
        if (v[i].name == name) {
            *index = i;
            return kOk;
        }
    }
    return report(kInvalidParam, std::string(call) + ": no tensor named " + name);
}
}  // namespace

SIM_API aclError aclmdlGetInputIndexByName(const aclmdlDesc* modelDesc, const char* name, size_t* index) {
    SIM_ENTER(kNeedInit);
    return index_by_name(__func__, modelDesc, true, name, index);
}

SIM_API aclError aclmdlGetOutputIndexByName(const aclmdlDesc* modelDesc, const char* name, size_t* index) {
    SIM_ENTER(kNeedInit);
    return index_by_name(__func__, modelDesc, false, name, index);
}

SIM_API aclmdlDataset* aclmdlCreateDataset() {
    SIM_LOCK;
    if (enter(__func__, kNeedInit) != kOk) return nullptr;
    auto* d = new aclmdlDataset;
    sim().datasets.insert(d);
    return d;
}

SIM_API aclError aclmdlDestroyDataset(const aclmdlDataset* dataset) {
    SIM_ENTER(kNeedInit);
    auto* d = const_cast<aclmdlDataset*>(dataset);
    if (!sim().datasets.erase(d)) return report(kInvalidParam, "aclmdlDestroyDataset: not a live dataset");
    delete d;  // the buffers are the app's (aclDestroyDataBuffer)
    return kOk;
}

SIM_API aclError aclmdlAddDatasetBuffer(aclmdlDataset* dataset, aclDataBuffer* dataBuffer) {
    SIM_ENTER(kNeedInit);
    if (!valid_dataset(dataset) || !sim().buffers.count(dataBuffer)) {
        return report(kInvalidParam, "aclmdlAddDatasetBuffer: dataset or data buffer is not live");
    }
    dataset->buffers.push_back(dataBuffer);
    return kOk;
}

SIM_API size_t aclmdlGetDatasetNumBuffers(const aclmdlDataset* dataset) {
    SIM_LOCK;
    return valid_dataset(dataset) ? dataset->buffers.size() : 0;
}

SIM_API aclDataBuffer* aclmdlGetDatasetBuffer(const aclmdlDataset* dataset, size_t index) {
    SIM_LOCK;
    return valid_dataset(dataset) && index < dataset->buffers.size() ? dataset->buffers[index] : nullptr;
}

SIM_API aclError aclmdlExecute(uint32_t modelId, const aclmdlDataset* input, aclmdlDataset* output) {
    SIM_ENTER(kNeedContext);
    Model* m = find_model(modelId);
    if (!m) return report(kInvalidModelId, "aclmdlExecute: no model " + std::to_string(modelId));
    if (aclError e = check_datasets(__func__, m, input, output)) return e;
    return execute(modelId, input, output);
}

SIM_API aclError aclmdlExecuteAsync(uint32_t modelId, const aclmdlDataset* input, aclmdlDataset* output,
                                    aclrtStream stream) {
    SIM_ENTER(kNeedContext);
    Model* m = find_model(modelId);
    if (!m) return report(kInvalidModelId, "aclmdlExecuteAsync: no model " + std::to_string(modelId));
    if (aclError e = check_datasets(__func__, m, input, output)) return e;
    Stream* st = nullptr;
    if (aclError e = resolve_stream(stream, &st)) return e;
    // The datasets must stay alive until the sync, as on the board; the task re-checks them.
    st->tasks.push_back([modelId, input, output] {
        if (!valid_dataset(input) || !valid_dataset(output)) {
            return report(kRtModelExecute, "aclmdlExecuteAsync: a dataset was destroyed before the stream ran");
        }
        return execute(modelId, input, output);
    });
    return kOk;
}

namespace {
aclError set_dynamic(const char* call, uint32_t id, aclmdlDataset* dataset, size_t index, bool batch, int64_t a,
                     int64_t b) {
    Model* m = find_model(id);
    if (!m) return report(kInvalidModelId, std::string(call) + ": no model " + std::to_string(id));
    const bool has = batch ? !m->batch_gears.empty() : !m->image_gears.empty();
    if (!has) {
        return report(kModelNotDynamic,
                      std::string(call) + ": the model has no dynamic " + (batch ? "batch" : "image size"));
    }
    if (!valid_dataset(dataset)) return report(kInvalidParam, std::string(call) + ": not a live dataset");
    if (index != m->hidden_index) {
        return report(kInvalidParam, std::string(call) + ": index " + std::to_string(index) +
                                         " is not ascend_mbatch_shape_data (index " + std::to_string(m->hidden_index) +
                                         ")");
    }
    bool gear = false;
    if (batch) {
        gear = std::find(m->batch_gears.begin(), m->batch_gears.end(), a) != m->batch_gears.end();
    } else {
        for (size_t g = 0; g + 1 < m->image_gears.size(); g += 2)
            gear |= m->image_gears[g] == a && m->image_gears[g + 1] == b;
    }
    if (!gear) return report(kGeDynamicBatchSizeInvalid, std::string(call) + ": not one of the model's gears");
    aclDataBuffer* hb = nullptr;
    if (aclError e = check_buffer(call, dataset, index, m->desc.inputs[index].size, "input", &hb)) return e;
    const int64_t v[2] = {a, b};
    DeviceWork work;
    std::memcpy(hb->data, v, m->desc.inputs[index].size);
    return kOk;
}
}  // namespace

SIM_API aclError aclmdlSetDynamicBatchSize(uint32_t modelId, aclmdlDataset* dataset, size_t index, uint64_t batchSize) {
    SIM_ENTER(kNeedContext);
    return set_dynamic(__func__, modelId, dataset, index, true, static_cast<int64_t>(batchSize), 0);
}

SIM_API aclError aclmdlSetDynamicHWSize(uint32_t modelId, aclmdlDataset* dataset, size_t index, uint64_t height,
                                        uint64_t width) {
    SIM_ENTER(kNeedContext);
    return set_dynamic(__func__, modelId, dataset, index, false, static_cast<int64_t>(height),
                       static_cast<int64_t>(width));
}

// The gears, as aclmdlGetDynamicBatch / aclmdlGetDynamicHW report them (acl_mdl.h: aclmdlBatch
// { size_t batchCount; uint64_t batch[128]; }, aclmdlHW { size_t hwCount; uint64_t hw[128][2]; }; a
// count of 0 means the model has no such gears; the HW index is "reserved, -1" in CANN's documentation).
typedef struct aclmdlBatch {
    size_t batchCount;
    uint64_t batch[128];
} aclmdlBatch;
typedef struct aclmdlHW {
    size_t hwCount;
    uint64_t hw[128][2];
} aclmdlHW;

SIM_API aclError aclmdlGetDynamicBatch(const aclmdlDesc* modelDesc, aclmdlBatch* batch) {
    SIM_ENTER(kNeedInit);
    if (!valid_desc(modelDesc) || !batch)
        return report(kInvalidParam, "aclmdlGetDynamicBatch: bad description or batch NULL");
    std::memset(batch, 0, sizeof *batch);
    batch->batchCount = std::min<size_t>(modelDesc->batch_gears.size(), 128);
    for (size_t g = 0; g < batch->batchCount; ++g) batch->batch[g] = static_cast<uint64_t>(modelDesc->batch_gears[g]);
    return kOk;
}

SIM_API aclError aclmdlGetDynamicHW(const aclmdlDesc* modelDesc, size_t index, aclmdlHW* hw) {
    SIM_ENTER(kNeedInit);
    (void)index;
    if (!valid_desc(modelDesc) || !hw) return report(kInvalidParam, "aclmdlGetDynamicHW: bad description or hw NULL");
    std::memset(hw, 0, sizeof *hw);
    hw->hwCount = std::min<size_t>(modelDesc->image_gears.size() / 2, 128);
    for (size_t g = 0; g < hw->hwCount; ++g) {
        hw->hw[g][0] = static_cast<uint64_t>(modelDesc->image_gears[2 * g]);
        hw->hw[g][1] = static_cast<uint64_t>(modelDesc->image_gears[2 * g + 1]);
    }
    return kOk;
}

// ---- dynamic AIPP (BOARD-RULES §AIPP-dynamic) ---------------------------------------------------------------------

namespace {
aclmdlAIPP* live_aipp(const aclmdlAIPP* p) {
    auto* a = const_cast<aclmdlAIPP*>(p);
    return a && sim().aipps.count(a) ? a : nullptr;
}
aclError aipp_arg(const char* call, const aclmdlAIPP* p, aclmdlAIPP** out) {
    *out = live_aipp(p);
    return *out ? kOk : report(kInvalidParam, std::string(call) + ": not a live aclmdlAIPP (aclmdlCreateAIPP)");
}
aclError aipp_item(const char* call, const aclmdlAIPP* p, uint64_t batch_index, SimAippItem** out) {
    aclmdlAIPP* a = nullptr;
    if (aclError e = aipp_arg(call, p, &a)) return e;
    if (batch_index >= a->items.size()) {
        return report(kInvalidParam, std::string(call) + ": batchIndex " + std::to_string(batch_index) +
                                         " out of range (aclmdlCreateAIPP's batch " + std::to_string(a->items.size()) +
                                         ")");
    }
    *out = &a->items[batch_index];
    return kOk;
}
}  // namespace

SIM_API aclmdlAIPP* aclmdlCreateAIPP(uint64_t batchSize) {
    SIM_LOCK;
    if (enter(__func__, kNeedInit) != kOk) return nullptr;
    if (batchSize == 0) {
        report(kInvalidParam, "aclmdlCreateAIPP: batchSize is 0");
        return nullptr;
    }
    auto* a = new aclmdlAIPP;
    a->head.batch = batchSize;
    a->items.resize(batchSize);
    sim().aipps.insert(a);
    return a;
}

SIM_API aclError aclmdlDestroyAIPP(const aclmdlAIPP* aippParmsSet) {
    SIM_ENTER(kNeedInit);
    aclmdlAIPP* a = nullptr;
    if (aclError e = aipp_arg(__func__, aippParmsSet, &a)) return e;
    sim().aipps.erase(a);
    delete a;
    return kOk;
}

SIM_API aclError aclmdlSetAIPPInputFormat(aclmdlAIPP* aippParmsSet, int32_t inputFormat) {
    SIM_ENTER(kNeedInit);
    aclmdlAIPP* a = nullptr;
    if (aclError e = aipp_arg(__func__, aippParmsSet, &a)) return e;
    a->head.input_format = inputFormat;
    return kOk;
}

SIM_API aclError aclmdlSetAIPPCscParams(aclmdlAIPP* aippParmsSet, int8_t cscSwitch, int16_t r0c0, int16_t r0c1,
                                        int16_t r0c2, int16_t r1c0, int16_t r1c1, int16_t r1c2, int16_t r2c0,
                                        int16_t r2c1, int16_t r2c2, uint8_t outBias0, uint8_t outBias1,
                                        uint8_t outBias2, uint8_t inBias0, uint8_t inBias1, uint8_t inBias2) {
    SIM_ENTER(kNeedInit);
    aclmdlAIPP* a = nullptr;
    if (aclError e = aipp_arg(__func__, aippParmsSet, &a)) return e;
    const int16_t m[9] = {r0c0, r0c1, r0c2, r1c0, r1c1, r1c2, r2c0, r2c1, r2c2};
    a->head.csc_switch = cscSwitch;
    std::memcpy(a->head.matrix, m, sizeof m);
    const uint8_t ob[3] = {outBias0, outBias1, outBias2}, ib[3] = {inBias0, inBias1, inBias2};
    std::memcpy(a->head.output_bias, ob, 3);
    std::memcpy(a->head.input_bias, ib, 3);
    return kOk;
}

SIM_API aclError aclmdlSetAIPPRbuvSwapSwitch(aclmdlAIPP* aippParmsSet, int8_t rbuvSwapSwitch) {
    SIM_ENTER(kNeedInit);
    aclmdlAIPP* a = nullptr;
    if (aclError e = aipp_arg(__func__, aippParmsSet, &a)) return e;
    a->head.rbuv_swap = rbuvSwapSwitch;
    return kOk;
}

SIM_API aclError aclmdlSetAIPPAxSwapSwitch(aclmdlAIPP* aippParmsSet, int8_t axSwapSwitch) {
    SIM_ENTER(kNeedInit);
    aclmdlAIPP* a = nullptr;
    if (aclError e = aipp_arg(__func__, aippParmsSet, &a)) return e;
    a->head.ax_swap = axSwapSwitch;
    return kOk;
}

SIM_API aclError aclmdlSetAIPPSrcImageSize(aclmdlAIPP* aippParmsSet, int32_t srcImageSizeW, int32_t srcImageSizeH) {
    SIM_ENTER(kNeedInit);
    aclmdlAIPP* a = nullptr;
    if (aclError e = aipp_arg(__func__, aippParmsSet, &a)) return e;
    a->head.src_w = srcImageSizeW;
    a->head.src_h = srcImageSizeH;
    return kOk;
}

SIM_API aclError aclmdlSetAIPPCropParams(aclmdlAIPP* aippParmsSet, int8_t cropSwitch, int32_t cropStartPosW,
                                         int32_t cropStartPosH, int32_t cropSizeW, int32_t cropSizeH,
                                         uint64_t batchIndex) {
    SIM_ENTER(kNeedInit);
    SimAippItem* it = nullptr;
    if (aclError e = aipp_item(__func__, aippParmsSet, batchIndex, &it)) return e;
    it->crop_switch = cropSwitch;
    it->crop_start_w = cropStartPosW, it->crop_start_h = cropStartPosH;
    it->crop_w = cropSizeW, it->crop_h = cropSizeH;
    return kOk;
}

SIM_API aclError aclmdlSetAIPPPaddingParams(aclmdlAIPP* aippParmsSet, int8_t paddingSwitch, int32_t paddingSizeTop,
                                            int32_t paddingSizeBottom, int32_t paddingSizeLeft,
                                            int32_t paddingSizeRight, uint64_t batchIndex) {
    SIM_ENTER(kNeedInit);
    SimAippItem* it = nullptr;
    if (aclError e = aipp_item(__func__, aippParmsSet, batchIndex, &it)) return e;
    it->padding_switch = paddingSwitch;
    it->top = paddingSizeTop, it->bottom = paddingSizeBottom;
    it->left = paddingSizeLeft, it->right = paddingSizeRight;
    return kOk;
}

SIM_API aclError aclmdlSetAIPPDtcPixelMean(aclmdlAIPP* aippParmsSet, int16_t c0, int16_t c1, int16_t c2, int16_t c3,
                                           uint64_t batchIndex) {
    SIM_ENTER(kNeedInit);
    SimAippItem* it = nullptr;
    if (aclError e = aipp_item(__func__, aippParmsSet, batchIndex, &it)) return e;
    const int16_t v[4] = {c0, c1, c2, c3};
    std::memcpy(it->mean, v, sizeof v);
    return kOk;
}

SIM_API aclError aclmdlSetAIPPDtcPixelMin(aclmdlAIPP* aippParmsSet, float c0, float c1, float c2, float c3,
                                          uint64_t batchIndex) {
    SIM_ENTER(kNeedInit);
    SimAippItem* it = nullptr;
    if (aclError e = aipp_item(__func__, aippParmsSet, batchIndex, &it)) return e;
    const float v[4] = {c0, c1, c2, c3};
    std::memcpy(it->min, v, sizeof v);
    return kOk;
}

SIM_API aclError aclmdlSetAIPPPixelVarReci(aclmdlAIPP* aippParmsSet, float c0, float c1, float c2, float c3,
                                           uint64_t batchIndex) {
    SIM_ENTER(kNeedInit);
    SimAippItem* it = nullptr;
    if (aclError e = aipp_item(__func__, aippParmsSet, batchIndex, &it)) return e;
    const float v[4] = {c0, c1, c2, c3};
    std::memcpy(it->var_reci, v, sizeof v);
    return kOk;
}

// Copies the parameters into the hidden input, as the runtime does: the aclmdlAIPP may go at once.
SIM_API aclError aclmdlSetInputAIPP(uint32_t modelId, aclmdlDataset* dataset, size_t index,
                                    const aclmdlAIPP* aippParmsSet) {
    SIM_ENTER(kNeedContext);
    Model* m = find_model(modelId);
    if (!m) return report(kInvalidModelId, "aclmdlSetInputAIPP: no model " + std::to_string(modelId));
    if (m->aipp_index == SIZE_MAX)
        return report(kInvalidParam, "aclmdlSetInputAIPP: the model has no dynamic AIPP (no ascend_dynamic_aipp_data)");
    if (!valid_dataset(dataset)) return report(kInvalidParam, "aclmdlSetInputAIPP: not a live dataset");
    if (index != m->aipp_index) {
        return report(kInvalidParam, "aclmdlSetInputAIPP: index " + std::to_string(index) +
                                         " is not ascend_dynamic_aipp_data (index " + std::to_string(m->aipp_index) +
                                         ")");
    }
    aclmdlAIPP* a = nullptr;
    if (aclError e = aipp_arg(__func__, aippParmsSet, &a)) return e;
    const size_t need = sim_aipp_data_size(a->head.batch);
    if (need > m->desc.inputs[index].size) {
        return report(kInvalidParam, "aclmdlSetInputAIPP: aclmdlCreateAIPP's batch " + std::to_string(a->head.batch) +
                                         " is larger than the model's");
    }
    aclDataBuffer* b = nullptr;
    if (aclError e = check_buffer(__func__, dataset, index, m->desc.inputs[index].size, "input", &b)) return e;
    SimAippHead head = a->head;
    head.magic = kSimAippMagic;
    DeviceWork work;
    auto* dst = static_cast<uint8_t*>(b->data);
    std::memset(dst, 0, m->desc.inputs[index].size);
    std::memcpy(dst, &head, sizeof head);
    for (size_t k = 0; k < a->items.size(); ++k) std::memcpy(dst + 64 + 96 * k, &a->items[k], sizeof(SimAippItem));
    return kOk;
}
