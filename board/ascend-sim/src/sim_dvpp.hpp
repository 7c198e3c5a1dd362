// sim_dvpp.hpp — shared state of the simulator's libacl_dvpp.so (DVPP V1: acldvpp*, aclvdec*).
//
// Types and signatures are re-typed from the Apache-2.0 header of mindspore-ai/graphengine
// (910/inc/external/acl/ops/acl_dvpp.h), not copied. The library links against the simulator's
// libascendcl.so and works on its state (kes_sim::sim(): lock, ledger, device memory, streams, fault
// injection, reports); its own objects are in dvpp() below, listed into the aclFinalize ledger.
//
// Every descriptor is a plain struct behind the opaque C type, checked against dvpp()'s sets on each
// use, so a destroyed or foreign descriptor is refused with 100000 instead of being dereferenced.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "sim.hpp"

struct acldvppStreamDesc;
struct acldvppPicDesc;
typedef void (*aclvdecCallback)(acldvppStreamDesc* input, acldvppPicDesc* output, void* userData);

struct acldvppPicDesc {
    void* data = nullptr;
    uint32_t size = 0;
    int32_t format = 0;  // a fresh description is zeroed, as CANN's: PIXEL_FORMAT_YUV_400
    uint32_t width = 0, height = 0, width_stride = 0, height_stride = 0;
    uint32_t ret_code = 0;
};
struct acldvppBatchPicDesc {
    std::vector<std::unique_ptr<acldvppPicDesc>> pics;
};
struct acldvppRoiConfig {
    uint32_t left = 0, right = 0, top = 0, bottom = 0;  // inclusive
};
struct acldvppResizeConfig {
    uint32_t interpolation = 0;
};
struct acldvppJpegeConfig {
    uint32_t level = 100;  // UNCONFIRMED default; ACLLite sets 100
};
struct acldvppChannelDesc {
    uint32_t mode = 0;  // 0: every mode
    bool created = false;
};
struct acldvppStreamDesc {
    void* data = nullptr;
    uint32_t size = 0;
    int32_t format = 0;
    uint64_t timestamp = 0;
    uint32_t ret_code = 0;
    uint8_t eos = 0;
};
struct aclvdecFrameConfig {
    int unused = 0;
};
namespace kes_sim {
struct VdecDecoder;  // sim_vdec.cpp
}
struct aclvdecChannelDesc {
    uint32_t channel_id = 0;
    uint64_t thread_id = 0;
    aclvdecCallback callback = nullptr;
    int32_t en_type = 0;                            // H265_MAIN_LEVEL
    int32_t out_format = 1;                         // PIXEL_FORMAT_YUV_SEMIPLANAR_420 (UNCONFIRMED default)
    std::unique_ptr<kes_sim::VdecDecoder> decoder;  // set while the channel exists
    ~aclvdecChannelDesc();
};

namespace kes_sim {

// acldvppPixelFormat / acldvppStreamFormat / acldvppJpegFormat values the simulator uses.
enum : int32_t { kYuv400 = 0, kNv12 = 1, kNv21 = 2, kYuv422Sp = 3, kYvu422Sp = 4, kYuv444Sp = 5, kYvu444Sp = 6 };
enum : int32_t { kYuv440Sp = 1000, kYvu440Sp = 1001, kPixelUnknown = 10000 };
enum : int32_t { kH265Main = 0, kH264Baseline = 1, kH264Main = 2, kH264High = 3 };
enum : int32_t { kCss444 = 0, kCss422 = 1, kCss420 = 2, kCssGray = 3, kCss440 = 4, kCss411 = 5 };
enum : uint32_t { kModeVpc = 1, kModeJpegd = 2, kModeJpege = 4, kModePngd = 8 };

enum : aclError {
    kUnsupportedJpeg = 148052,      // ACL_ERROR_UNSUPPORTED_JPEG
    kFeatureUnsupported = 200006,   // ACL_ERROR_FEATURE_UNSUPPORTED
    kRtResourceAllocFail = 207005,  // ACL_ERROR_RT_RESOURCE_ALLOC_FAIL: every channel taken (UNCONFIRMED)
};

// The ret code a VDEC output picture carries in its callback (UNCONFIRMED: the boards' values are
// hi_mpi VDEC status bits nobody has published for V1; any non-zero value means "no picture").
enum : uint32_t {
    kVdecDecodeFailed = 1,  // the decoder refused the frame's data (bad or missing data)
    kVdecNoPicture = 2,     // the stream ended (EOS) before this frame gave a picture
    kVdecBadOutput = 3,     // output picture description or buffer unusable (too small, not DVPP memory)
    kVdecUnsupported = 4,   // the stream is outside the SoC's limits (resolution, bit depth, chroma)
};

// The simulated SoC's DVPP rules (BOARD-RULES §VPC, §JPEGD, §JPEGE, §PNGD, §VDEC).
struct SocRules {
    bool v100 = false;                               // Ascend310 (DVPP V1 only) vs 310B (V1 beside V2)
    uint32_t vpc_stride_align = 1;                   // widthStride multiple of: 16 on 310, none on 310B
    uint32_t vpc_min_width_stride;                   // 32 on 310, 10 on 310B
    uint32_t vpc_in_max_width, vpc_in_max_height;    // 4096 (8192 in 8K mode, NV12/NV21) / 8192
    uint32_t vpc_out_max_width, vpc_out_max_height;  // 4096x4096 / 4096x8192
    bool roi_parity = false;                         // even left/top, odd right/bottom (310)
    uint32_t jpegd_width_align;                      // 128 on 310, 64 on 310B
    uint32_t jpeg_max;                               // 8192 on 310, 16384 on 310B
    uint32_t vdec_max_width, vdec_max_height;
    uint32_t dvpp_channels;        // live acldvppCreateChannel channels (UNCONFIRMED counts)
    uint32_t vdec_channel_ids;     // VDEC channel ids 0 .. n-1
    bool vpc_takes_device_memory;  // aclrtMalloc memory allowed for VPC/VDEC output (310B)
};
const SocRules& soc_rules();

// Every live DVPP object, for validation and the aclFinalize ledger.
template <class T>
struct Ledger {
    std::map<T*, std::unique_ptr<T>> live;
    T* create() {
        auto p = std::make_unique<T>();
        T* raw = p.get();
        live[raw] = std::move(p);
        return raw;
    }
    bool contains(const T* p) const { return live.count(const_cast<T*>(p)) != 0; }
    bool destroy(T* p) { return live.erase(p) != 0; }
};

struct Dvpp {
    Ledger<acldvppPicDesc> pics;
    std::set<const acldvppPicDesc*> batch_pics;  // owned by a batch description
    Ledger<acldvppBatchPicDesc> batches;
    Ledger<acldvppRoiConfig> rois;
    Ledger<acldvppResizeConfig> resizes;
    Ledger<acldvppJpegeConfig> jpeges;
    Ledger<acldvppChannelDesc> channels;
    Ledger<acldvppStreamDesc> streams;
    Ledger<aclvdecFrameConfig> frame_configs;
    Ledger<aclvdecChannelDesc> vdecs;
    uint32_t live_channels = 0;
    std::set<uint32_t> vdec_ids;  // ids of created VDEC channels
};
Dvpp& dvpp();

inline bool pic_alive(const acldvppPicDesc* p) {
    return p && (dvpp().pics.contains(p) || dvpp().batch_pics.count(p));
}

inline uint32_t align_up(uint32_t v, uint32_t a) {
    return (v + a - 1) / a * a;
}

// Checks that [p, p + bytes) is DVPP memory (or, with device_ok, any device memory), 128-byte aligned.
// Returns 0 or 100000 with the reason recorded for aclGetRecentErrMsg.
aclError check_buffer(const std::string& call, const std::string& what, const void* p, uint64_t bytes,
                      bool device_ok = false, uint32_t alignment = 128);

// Is [p, p + bytes) still live device memory (checked again when queued work runs)?
bool buffer_alive(const void* p, uint64_t bytes);

// A semi-planar 4:2:0 picture as queued work sees it: a snapshot of its description.
struct Yuv420 {
    uint8_t* data = nullptr;
    uint32_t width = 0, height = 0;  // even
    uint32_t width_stride = 0, height_stride = 0;
    bool nv21 = false;
    uint8_t* luma() const { return data; }
    uint8_t* chroma() const { return data + uint64_t(width_stride) * height_stride; }
    uint64_t bytes() const { return uint64_t(width_stride) * height_stride * 3 / 2; }
};

// A rectangle in pixels, inclusive of neither end: [x, x + w) x [y, y + h).
struct Rect {
    uint32_t x = 0, y = 0, w = 0, h = 0;
};

// VPC's two filters: cv::resize's INTER_LINEAR and INTER_NEAREST, bit-exact (sim_vpc.cpp).
enum class VpcFilter { kBilinear, kNearest };

// VPC's scaling of the luma rectangle `from` of `src` onto `to` of `dst`, and of the chroma pairs under
// each (sim_vpc.cpp).
void vpc_scale(const Yuv420& src, Rect from, const Yuv420& dst, Rect to, VpcFilter filter);

// Queues `task` on `stream` (NULL: the context's default stream); runs at aclrtSynchronizeStream.
aclError queue_task(aclrtStream stream, std::function<aclError()> task);

// Is the channel created, and does its mode allow `mode`?
aclError check_channel(const std::string& call, const acldvppChannelDesc* ch, uint32_t mode);

}  // namespace kes_sim

#define DVPP_API extern "C" __attribute__((visibility("default")))
// Entry of every DVPP call: the runtime's lock and its stub / fault-injection / init / context checks.
#define DVPP_LOCK std::unique_lock<std::recursive_mutex> sim_lock_(kes_sim::sim().mutex)
#define DVPP_ENTER(needs) \
    DVPP_LOCK;            \
    if (aclError e_ = kes_sim::enter(__func__, (needs))) return e_
#define DVPP_ENTER_OR(needs, fallback) \
    DVPP_LOCK;                         \
    if (kes_sim::enter(__func__, (needs)) != kes_sim::kOk) return fallback
