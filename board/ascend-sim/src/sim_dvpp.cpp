// sim_dvpp.cpp — libacl_dvpp.so's common half: DVPP memory, channels, picture / batch / ROI / resize /
// JPEGE descriptions, the SoC rules and the aclFinalize ledger (BOARD-RULES §Memory, §VPC,
// §AscendCL).
//
// Rules enforced:
//   - acldvppMalloc memory is device memory (PROT_NONE for the CPU in ACL_HOST mode), 128-byte aligned,
//     ALIGN_UP(size, 32) + 32 bytes reserved; acldvppFree only (aclrtFree refuses it);
//   - every DVPP input/output pointer must lie in live acldvppMalloc memory with the bytes the work
//     needs and start 128-byte aligned, else 100000 ACL_ERROR_INVALID_PARAM (UNCONFIRMED: a board may
//     say 200003 ACL_ERROR_MEMORY_ADDRESS_UNALIGNED for the alignment); on 310B VPC and VDEC also
//     take aclrtMalloc memory (BOARD-RULES §Memory);
//   - channel limits per SoC: 207005 ACL_ERROR_RT_RESOURCE_ALLOC_FAIL when all are taken (UNCONFIRMED
//     code and counts: 64 acldvpp channels on 310, 128 on 310B; VDEC channel ids 0..31 on both);
//   - acldvppSetChannelDescMode is 200006 on 310 (BOARD-RULES §Formats); on 310B a channel with a mode refuses
//     work of another mode (100000);
//   - a description destroyed while its channel lives: 148051; every description, channel and DVPP
//     buffer still alive at aclFinalize is a leak (148051).
#include <cstring>

#include "sim_dvpp.hpp"

namespace kes_sim {
namespace {

SocRules make_rules(const std::string& soc) {
    SocRules r;
    r.v100 = soc == "Ascend310";
    if (r.v100) {
        r.vpc_stride_align = 16;
        r.vpc_min_width_stride = 32;
        r.vpc_in_max_width = r.vpc_in_max_height = 8192;  // > 4096: the "8K" mode, NV12/NV21 only
        r.vpc_out_max_width = r.vpc_out_max_height = 4096;
        r.roi_parity = true;
        r.jpegd_width_align = 128;
        r.jpeg_max = 8192;
        r.vdec_max_width = r.vdec_max_height = 4096;
        r.dvpp_channels = 64;
        r.vdec_channel_ids = 32;
        r.vpc_takes_device_memory = false;
    } else {
        r.vpc_stride_align = 1;
        r.vpc_min_width_stride = 10;
        r.vpc_in_max_width = r.vpc_in_max_height = 8192;
        r.vpc_out_max_width = 4096;
        r.vpc_out_max_height = 8192;
        r.roi_parity = false;
        r.jpegd_width_align = 64;
        r.jpeg_max = 16384;
        r.vdec_max_width = r.vdec_max_height = 8192;
        r.dvpp_channels = 128;
        r.vdec_channel_ids = 32;
        r.vpc_takes_device_memory = true;
    }
    return r;
}

template <class T>
void release(Ledger<T>& ledger, const char* what, std::vector<std::string>* leaks) {
    for (auto& kv : ledger.live) leaks->push_back(std::string(what) + " " + hex(kv.first));
    ledger.live.clear();
}

// aclFinalize: every object still alive is a leak; the state starts over for the next aclInit.
void release_all(std::vector<std::string>* leaks) {
    Dvpp& d = dvpp();
    for (auto& kv : d.channels.live) {
        if (kv.second->created) leaks->push_back("DVPP channel of " + hex(kv.first) + " (acldvppCreateChannel)");
    }
    for (auto& kv : d.vdecs.live) {
        if (kv.second->decoder) leaks->push_back("VDEC channel of " + hex(kv.first) + " (aclvdecCreateChannel)");
    }
    release(d.vdecs, "VDEC channel description (aclvdecCreateChannelDesc)", leaks);
    release(d.channels, "DVPP channel description (acldvppCreateChannelDesc)", leaks);
    release(d.pics, "picture description (acldvppCreatePicDesc)", leaks);
    release(d.batches, "batch picture description (acldvppCreateBatchPicDesc)", leaks);
    release(d.rois, "ROI config (acldvppCreateRoiConfig)", leaks);
    release(d.resizes, "resize config (acldvppCreateResizeConfig)", leaks);
    release(d.jpeges, "JPEGE config (acldvppCreateJpegeConfig)", leaks);
    release(d.streams, "stream description (acldvppCreateStreamDesc)", leaks);
    release(d.frame_configs, "VDEC frame config (aclvdecCreateFrameConfig)", leaks);
    d.batch_pics.clear();
    d.live_channels = 0;
    d.vdec_ids.clear();
}

__attribute__((constructor)) void join_the_runtime() {
    sim().release_dvpp = &release_all;
}
__attribute__((destructor)) void leave_the_runtime() {
    std::lock_guard<std::recursive_mutex> lock(sim().mutex);
    if (sim().release_dvpp == &release_all) sim().release_dvpp = nullptr;
}

}  // namespace

const SocRules& soc_rules() {
    static std::string soc;
    static SocRules rules;
    if (soc != sim().config.soc) {
        soc = sim().config.soc;
        rules = make_rules(soc);
    }
    return rules;
}

Dvpp& dvpp() {
    // Never destroyed: the runtime's aclFinalize may run from an app's static destructors.
    alignas(Dvpp) static unsigned char storage[sizeof(Dvpp)];
    static Dvpp* d = ::new (static_cast<void*>(storage)) Dvpp();
    return *d;
}

aclError check_buffer(const std::string& call, const std::string& what, const void* p, uint64_t bytes, bool device_ok,
                      uint32_t alignment) {
    if (!p) return report(kInvalidParam, call + ": " + what + " is NULL");
    uintptr_t start = 0;
    const Region* r = device_region(p, 1, &start);
    if (!r || r->internal) {
        return report(kInvalidParam, call + ": " + what + " " + hex(p) + " is not DVPP memory (acldvppMalloc)");
    }
    if (!r->dvpp && !device_ok) {
        return report(kInvalidParam, call + ": " + what + " " + hex(p) +
                                         " is aclrtMalloc memory; this SoC's DVPP needs acldvppMalloc memory here");
    }
    if (reinterpret_cast<uintptr_t>(p) % alignment != 0) {
        return report(kInvalidParam, call + ": " + what + " " + hex(p) + " does not start " +
                                         std::to_string(alignment) + "-byte aligned");
    }
    const uint64_t offset = reinterpret_cast<uintptr_t>(p) - start;
    if (offset + bytes > r->size) {
        return report(kInvalidParam, call + ": " + what + " needs " + std::to_string(bytes) + " bytes at " + hex(p) +
                                         ", but its buffer holds " +
                                         std::to_string(r->size - std::min<uint64_t>(offset, r->size)));
    }
    return kOk;
}

bool buffer_alive(const void* p, uint64_t bytes) {
    uintptr_t start = 0;
    const Region* r = device_region(p, 1, &start);
    return r && !r->internal && reinterpret_cast<uintptr_t>(p) - start + bytes <= r->size;
}

aclError queue_task(aclrtStream stream, std::function<aclError()> task) {
    Stream* st = nullptr;
    if (aclError e = resolve_stream(stream, &st)) return e;
    st->tasks.push_back(std::move(task));
    return kOk;
}

aclError check_channel(const std::string& call, const acldvppChannelDesc* ch, uint32_t mode) {
    if (!dvpp().channels.contains(ch)) {
        return report(kInvalidParam, call + ": " + hex(ch) + " is not a live channel description");
    }
    if (!ch->created) return report(kInvalidParam, call + ": the channel was not created (acldvppCreateChannel)");
    if (ch->mode != 0 && !(ch->mode & mode)) {
        return report(kInvalidParam, call + ": the channel was created for mode " + std::to_string(ch->mode) +
                                         ", which does not include " + std::to_string(mode));
    }
    return kOk;
}

}  // namespace kes_sim

using namespace kes_sim;

// ---- memory ----------------------------------------------------------------------------------------

DVPP_API aclError acldvppMalloc(void** devPtr, size_t size) {
    DVPP_ENTER(kNeedContext);
    if (!devPtr) return report(kInvalidParam, "acldvppMalloc: devPtr is NULL");
    *devPtr = nullptr;
    if (size == 0) return report(kInvalidParam, "acldvppMalloc: size is 0");
    aclError code = kOk;
    *devPtr = dvpp_alloc(size, &code);
    return code;
}

DVPP_API aclError acldvppFree(void* devPtr) {
    DVPP_ENTER(kNeedContext);
    return dvpp_free(devPtr);
}

// ---- channels --------------------------------------------------------------------------------------

DVPP_API acldvppChannelDesc* acldvppCreateChannelDesc() {
    DVPP_ENTER_OR(kNeedContext, nullptr);
    return dvpp().channels.create();
}

DVPP_API aclError acldvppDestroyChannelDesc(acldvppChannelDesc* channelDesc) {
    DVPP_ENTER(kNeedContext);
    if (!channelDesc) return kOk;
    if (!dvpp().channels.contains(channelDesc)) {
        return report(kInvalidParam, "acldvppDestroyChannelDesc: " + hex(channelDesc) + " is not a live description");
    }
    if (channelDesc->created) {
        return report(kResourceNotCleared,
                      "acldvppDestroyChannelDesc: its channel still exists (acldvppDestroyChannel first)");
    }
    dvpp().channels.destroy(channelDesc);
    return kOk;
}

DVPP_API uint64_t acldvppGetChannelDescChannelId(const acldvppChannelDesc* channelDesc) {
    DVPP_LOCK;
    return dvpp().channels.contains(channelDesc) ? reinterpret_cast<uintptr_t>(channelDesc) : 0;
}

DVPP_API aclError acldvppSetChannelDescMode(acldvppChannelDesc* channelDesc, uint32_t mode) {
    DVPP_ENTER(kNeedNothing);
    if (!dvpp().channels.contains(channelDesc)) {
        return report(kInvalidParam, "acldvppSetChannelDescMode: " + hex(channelDesc) + " is not a live description");
    }
    if (soc_rules().v100) {
        return report(kFeatureUnsupported, "acldvppSetChannelDescMode: the Ascend310's DVPP has no channel modes");
    }
    if (mode == 0 || mode > (kModeVpc | kModeJpegd | kModeJpege | kModePngd)) {
        return report(kInvalidParam, "acldvppSetChannelDescMode: mode " + std::to_string(mode) +
                                         " is not a set of "
                                         "VPC=1, JPEGD=2, JPEGE=4, PNGD=8");
    }
    channelDesc->mode = mode;
    return kOk;
}

DVPP_API aclError acldvppCreateChannel(acldvppChannelDesc* channelDesc) {
    DVPP_ENTER(kNeedContext);
    Dvpp& d = dvpp();
    if (!d.channels.contains(channelDesc)) {
        return report(kInvalidParam, "acldvppCreateChannel: " + hex(channelDesc) + " is not a live description");
    }
    if (channelDesc->created) return report(kInvalidParam, "acldvppCreateChannel: the channel already exists");
    if (d.live_channels >= soc_rules().dvpp_channels) {
        return report(kRtResourceAllocFail, "acldvppCreateChannel: all " + std::to_string(soc_rules().dvpp_channels) +
                                                " DVPP channels of " + sim().config.soc + " are in use");
    }
    channelDesc->created = true;
    ++d.live_channels;
    return kOk;
}

DVPP_API aclError acldvppDestroyChannel(acldvppChannelDesc* channelDesc) {
    DVPP_ENTER(kNeedContext);
    Dvpp& d = dvpp();
    if (!d.channels.contains(channelDesc) || !channelDesc->created) {
        return report(kInvalidParam, "acldvppDestroyChannel: " + hex(channelDesc) + " has no live channel");
    }
    channelDesc->created = false;
    --d.live_channels;
    return kOk;
}

// ---- picture descriptions ----------------------------------------------------------------------------

DVPP_API acldvppPicDesc* acldvppCreatePicDesc() {
    DVPP_ENTER_OR(kNeedContext, nullptr);
    return dvpp().pics.create();
}

DVPP_API aclError acldvppDestroyPicDesc(acldvppPicDesc* picDesc) {
    DVPP_ENTER(kNeedContext);
    if (!picDesc) return kOk;
    if (!dvpp().pics.destroy(picDesc)) {
        return report(kInvalidParam, "acldvppDestroyPicDesc: " + hex(picDesc) +
                                         " is not a live picture description from acldvppCreatePicDesc");
    }
    return kOk;
}

#define PIC_SETTER(name, field, type)                                                                       \
    DVPP_API aclError name(acldvppPicDesc* picDesc, type value) {                                           \
        DVPP_ENTER(kNeedNothing);                                                                           \
        if (!pic_alive(picDesc))                                                                            \
            return report(kInvalidParam, #name ": " + hex(picDesc) + " is not a live picture description"); \
        picDesc->field = value;                                                                             \
        return kOk;                                                                                         \
    }
#define PIC_GETTER(name, field, type)                                            \
    DVPP_API type name(const acldvppPicDesc* picDesc) {                          \
        DVPP_LOCK;                                                               \
        return pic_alive(picDesc) ? picDesc->field : decltype(picDesc->field){}; \
    }

PIC_SETTER(acldvppSetPicDescData, data, void*)
PIC_SETTER(acldvppSetPicDescSize, size, uint32_t)
PIC_SETTER(acldvppSetPicDescFormat, format, int32_t)
PIC_SETTER(acldvppSetPicDescWidth, width, uint32_t)
PIC_SETTER(acldvppSetPicDescHeight, height, uint32_t)
PIC_SETTER(acldvppSetPicDescWidthStride, width_stride, uint32_t)
PIC_SETTER(acldvppSetPicDescHeightStride, height_stride, uint32_t)
PIC_SETTER(acldvppSetPicDescRetCode, ret_code, uint32_t)
PIC_GETTER(acldvppGetPicDescData, data, void*)
PIC_GETTER(acldvppGetPicDescSize, size, uint32_t)
PIC_GETTER(acldvppGetPicDescFormat, format, int32_t)
PIC_GETTER(acldvppGetPicDescWidth, width, uint32_t)
PIC_GETTER(acldvppGetPicDescHeight, height, uint32_t)
PIC_GETTER(acldvppGetPicDescWidthStride, width_stride, uint32_t)
PIC_GETTER(acldvppGetPicDescHeightStride, height_stride, uint32_t)
PIC_GETTER(acldvppGetPicDescRetCode, ret_code, uint32_t)

DVPP_API acldvppBatchPicDesc* acldvppCreateBatchPicDesc(uint32_t batchSize) {
    DVPP_ENTER_OR(kNeedContext, nullptr);
    if (batchSize == 0) {
        report(kInvalidParam, "acldvppCreateBatchPicDesc: batchSize is 0");
        return nullptr;
    }
    acldvppBatchPicDesc* b = dvpp().batches.create();
    for (uint32_t i = 0; i < batchSize; ++i) {
        b->pics.push_back(std::make_unique<acldvppPicDesc>());
        dvpp().batch_pics.insert(b->pics.back().get());
    }
    return b;
}

DVPP_API acldvppPicDesc* acldvppGetPicDesc(acldvppBatchPicDesc* batchPicDesc, uint32_t index) {
    DVPP_LOCK;
    if (!dvpp().batches.contains(batchPicDesc) || index >= batchPicDesc->pics.size()) {
        report(kInvalidParam, "acldvppGetPicDesc: not a live batch description, or index " + std::to_string(index) +
                                  " is past its end");
        return nullptr;
    }
    return batchPicDesc->pics[index].get();
}

DVPP_API aclError acldvppDestroyBatchPicDesc(acldvppBatchPicDesc* batchPicDesc) {
    DVPP_ENTER(kNeedContext);
    if (!batchPicDesc) return kOk;
    if (!dvpp().batches.contains(batchPicDesc)) {
        return report(kInvalidParam, "acldvppDestroyBatchPicDesc: " + hex(batchPicDesc) + " is not a live batch");
    }
    for (auto& p : batchPicDesc->pics) dvpp().batch_pics.erase(p.get());
    dvpp().batches.destroy(batchPicDesc);
    return kOk;
}

// ---- ROI, resize and JPEGE configs ------------------------------------------------------------------

DVPP_API acldvppRoiConfig* acldvppCreateRoiConfig(uint32_t left, uint32_t right, uint32_t top, uint32_t bottom) {
    DVPP_ENTER_OR(kNeedInit, nullptr);
    acldvppRoiConfig* r = dvpp().rois.create();
    *r = acldvppRoiConfig{left, right, top, bottom};
    return r;
}

DVPP_API aclError acldvppSetRoiConfig(acldvppRoiConfig* config, uint32_t left, uint32_t right, uint32_t top,
                                      uint32_t bottom) {
    DVPP_ENTER(kNeedNothing);
    if (!dvpp().rois.contains(config)) return report(kInvalidParam, "acldvppSetRoiConfig: not a live ROI config");
    *config = acldvppRoiConfig{left, right, top, bottom};
    return kOk;
}

DVPP_API aclError acldvppDestroyRoiConfig(acldvppRoiConfig* roiConfig) {
    DVPP_ENTER(kNeedInit);
    if (roiConfig && !dvpp().rois.destroy(roiConfig)) {
        return report(kInvalidParam, "acldvppDestroyRoiConfig: " + hex(roiConfig) + " is not a live ROI config");
    }
    return kOk;
}

DVPP_API acldvppResizeConfig* acldvppCreateResizeConfig() {
    DVPP_ENTER_OR(kNeedInit, nullptr);
    return dvpp().resizes.create();
}

DVPP_API aclError acldvppDestroyResizeConfig(acldvppResizeConfig* resizeConfig) {
    DVPP_ENTER(kNeedInit);
    if (resizeConfig && !dvpp().resizes.destroy(resizeConfig)) {
        return report(kInvalidParam, "acldvppDestroyResizeConfig: " + hex(resizeConfig) + " is not a live config");
    }
    return kOk;
}

// 0..4 on 310 (0 = the high-order filter, simulated as bilinear), 0..5 on 310B (BOARD-RULES §VPC).
DVPP_API aclError acldvppSetResizeConfigInterpolation(acldvppResizeConfig* resizeConfig, uint32_t interpolation) {
    DVPP_ENTER(kNeedNothing);
    if (!dvpp().resizes.contains(resizeConfig)) {
        return report(kInvalidParam, "acldvppSetResizeConfigInterpolation: not a live resize config");
    }
    if (interpolation > (soc_rules().v100 ? 4u : 5u)) {
        return report(kInvalidParam, "acldvppSetResizeConfigInterpolation: " + std::to_string(interpolation) +
                                         " is not an interpolation of " + sim().config.soc);
    }
    resizeConfig->interpolation = interpolation;
    return kOk;
}

DVPP_API uint32_t acldvppGetResizeConfigInterpolation(const acldvppResizeConfig* resizeConfig) {
    DVPP_LOCK;
    return dvpp().resizes.contains(resizeConfig) ? resizeConfig->interpolation : 0;
}

DVPP_API acldvppJpegeConfig* acldvppCreateJpegeConfig() {
    DVPP_ENTER_OR(kNeedInit, nullptr);
    return dvpp().jpeges.create();
}

DVPP_API aclError acldvppDestroyJpegeConfig(acldvppJpegeConfig* jpegeConfig) {
    DVPP_ENTER(kNeedInit);
    if (jpegeConfig && !dvpp().jpeges.destroy(jpegeConfig)) {
        return report(kInvalidParam, "acldvppDestroyJpegeConfig: " + hex(jpegeConfig) + " is not a live config");
    }
    return kOk;
}

DVPP_API aclError acldvppSetJpegeConfigLevel(acldvppJpegeConfig* jpegeConfig, uint32_t level) {
    DVPP_ENTER(kNeedNothing);
    if (!dvpp().jpeges.contains(jpegeConfig)) {
        return report(kInvalidParam, "acldvppSetJpegeConfigLevel: not a live JPEGE config");
    }
    if (level > 100)
        return report(kInvalidParam, "acldvppSetJpegeConfigLevel: level " + std::to_string(level) + " > 100");
    jpegeConfig->level = level;
    return kOk;
}

DVPP_API uint32_t acldvppGetJpegeConfigLevel(const acldvppJpegeConfig* jpegeConfig) {
    DVPP_LOCK;
    return dvpp().jpeges.contains(jpegeConfig) ? jpegeConfig->level : 0;
}
