// kes/acl_dvpp.hpp — the DVPP V1 half of the AscendCL seam: libacl_dvpp.so's function table.
//
// kes/ascend.hpp loads the runtime (libascendcl.so); this table comes from libacl_dvpp.so, loaded on
// first use from the directory the runtime came from (then the default search). The dvpp module's
// hardware path and the sdk's DVPP memory backend call DVPP through it:
//
//   const kes::acl::DvppApi* d = kes::acl::dvpp();    // nullptr: no DVPP (kes::acl::dvpp_reason() says why)
//   kes::acl::ScopedContext bind;                     // DVPP calls need a current context too
//   kes::acl::check("acldvppJpegDecodeAsync", d->acldvppJpegDecodeAsync(ch, data, size, pic, stream));
//
// Only DVPP V1 (acldvpp*, aclvdec*): every object is an opaque descriptor set through functions, so no
// struct layout can be wrong. V2 (hi_mpi_*, libacl_dvpp_mpi.so) would be a second table beside this one
// once its struct layouts are confirmed on a board.
//
// Declarations are re-typed from the Apache-2.0 header of mindspore-ai/graphengine
// (910/inc/external/acl/ops/acl_dvpp.h; aclrt*Report from acl_rt.h) — checked there, not copied. C enums
// (acldvppPixelFormat, acldvppStreamFormat, ...) are int-sized on every ABI Kestrel targets, so they
// appear here as int32_t / uint32_t as the header's setter takes them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kes/ascend.hpp"

namespace kes {
namespace acl {

struct DvppChannelDesc;   // acldvppChannelDesc
struct DvppPicDesc;       // acldvppPicDesc
struct DvppBatchPicDesc;  // acldvppBatchPicDesc
struct DvppRoiConfig;     // acldvppRoiConfig
struct DvppResizeConfig;  // acldvppResizeConfig
struct DvppJpegeConfig;   // acldvppJpegeConfig
struct DvppStreamDesc;    // acldvppStreamDesc
struct VdecChannelDesc;   // aclvdecChannelDesc
struct VdecFrameConfig;   // aclvdecFrameConfig

// aclvdecCallback: runs on the thread subscribed to the stream's reports (aclrtSubscribeReport), from
// inside aclrtProcessReport.
using VdecCallback = void (*)(DvppStreamDesc* input, DvppPicDesc* output, void* user_data);

// acldvppPixelFormat (the values Kestrel uses).
enum : int32_t {
    kDvppYuv400 = 0,
    kDvppNv12 = 1,  // PIXEL_FORMAT_YUV_SEMIPLANAR_420
    kDvppNv21 = 2,  // PIXEL_FORMAT_YVU_SEMIPLANAR_420
    kDvppYuv422Sp = 3,
    kDvppYvu422Sp = 4,
    kDvppYuv444Sp = 5,
    kDvppYvu444Sp = 6,
    kDvppRgb888 = 12,
    kDvppBgr888 = 13,
    kDvppYuv440Sp = 1000,
    kDvppYvu440Sp = 1001,
    kDvppUnknown = 10000,
};
// acldvppStreamFormat
enum : int32_t { kH265Main = 0, kH264Baseline = 1, kH264Main = 2, kH264High = 3 };
// acldvppJpegFormat (chroma subsampling of a JPEG)
enum : int32_t {
    kJpegCss444 = 0,
    kJpegCss422 = 1,
    kJpegCss420 = 2,
    kJpegCssGray = 3,
    kJpegCss440 = 4,
    kJpegCss411 = 5,
    kJpegCssUnknown = 1000,
};
// acldvppChannelMode (acldvppSetChannelDescMode; a channel without a mode serves every one)
enum : uint32_t { kDvppModeVpc = 1, kDvppModeJpegd = 2, kDvppModeJpege = 4, kDvppModePngd = 8 };

// DVPP error codes Kestrel reacts to (acl_base.h, error_codes/rt_error_codes.h).
enum : Error {
    kUnsupportedJpeg = 148052,      // ACL_ERROR_UNSUPPORTED_JPEG (progressive, arithmetic-coded, …)
    kFeatureUnsupported = 200006,   // ACL_ERROR_FEATURE_UNSUPPORTED
    kRtResourceAllocFail = 207005,  // ACL_ERROR_RT_RESOURCE_ALLOC_FAIL. UNCONFIRMED: the code a board gives
                                    // when every DVPP channel is taken; the simulator returns this one.
};

struct DvppApi {
    // memory (128-byte aligned start; ALIGN_UP(size, 32) + 32 bytes reserved)
    Error (*acldvppMalloc)(void** ptr, size_t size);
    Error (*acldvppFree)(void* ptr);
    // channels
    DvppChannelDesc* (*acldvppCreateChannelDesc)();
    Error (*acldvppDestroyChannelDesc)(DvppChannelDesc* desc);
    Error (*acldvppSetChannelDescMode)(DvppChannelDesc* desc, uint32_t mode);  // optional (CANN 5+)
    Error (*acldvppCreateChannel)(DvppChannelDesc* desc);
    Error (*acldvppDestroyChannel)(DvppChannelDesc* desc);
    // pictures
    DvppPicDesc* (*acldvppCreatePicDesc)();
    Error (*acldvppDestroyPicDesc)(DvppPicDesc* desc);
    Error (*acldvppSetPicDescData)(DvppPicDesc* desc, void* data);
    Error (*acldvppSetPicDescSize)(DvppPicDesc* desc, uint32_t size);
    Error (*acldvppSetPicDescFormat)(DvppPicDesc* desc, int32_t format);
    Error (*acldvppSetPicDescWidth)(DvppPicDesc* desc, uint32_t width);
    Error (*acldvppSetPicDescHeight)(DvppPicDesc* desc, uint32_t height);
    Error (*acldvppSetPicDescWidthStride)(DvppPicDesc* desc, uint32_t stride);
    Error (*acldvppSetPicDescHeightStride)(DvppPicDesc* desc, uint32_t stride);
    void* (*acldvppGetPicDescData)(const DvppPicDesc* desc);
    uint32_t (*acldvppGetPicDescSize)(const DvppPicDesc* desc);
    int32_t (*acldvppGetPicDescFormat)(const DvppPicDesc* desc);
    uint32_t (*acldvppGetPicDescWidth)(const DvppPicDesc* desc);
    uint32_t (*acldvppGetPicDescHeight)(const DvppPicDesc* desc);
    uint32_t (*acldvppGetPicDescWidthStride)(const DvppPicDesc* desc);
    uint32_t (*acldvppGetPicDescHeightStride)(const DvppPicDesc* desc);
    uint32_t (*acldvppGetPicDescRetCode)(const DvppPicDesc* desc);
    DvppBatchPicDesc* (*acldvppCreateBatchPicDesc)(uint32_t batch_size);
    DvppPicDesc* (*acldvppGetPicDesc)(DvppBatchPicDesc* batch, uint32_t index);
    Error (*acldvppDestroyBatchPicDesc)(DvppBatchPicDesc* batch);
    // VPC (ROIs are inclusive: even left/top, odd right/bottom)
    DvppRoiConfig* (*acldvppCreateRoiConfig)(uint32_t left, uint32_t right, uint32_t top, uint32_t bottom);
    Error (*acldvppDestroyRoiConfig)(DvppRoiConfig* roi);
    DvppResizeConfig* (*acldvppCreateResizeConfig)();
    Error (*acldvppDestroyResizeConfig)(DvppResizeConfig* config);
    Error (*acldvppVpcResizeAsync)(DvppChannelDesc* ch, DvppPicDesc* in, DvppPicDesc* out, DvppResizeConfig* config,
                                   Stream stream);
    Error (*acldvppVpcCropAsync)(DvppChannelDesc* ch, DvppPicDesc* in, DvppPicDesc* out, DvppRoiConfig* crop,
                                 Stream stream);
    Error (*acldvppVpcCropAndPasteAsync)(DvppChannelDesc* ch, DvppPicDesc* in, DvppPicDesc* out, DvppRoiConfig* crop,
                                         DvppRoiConfig* paste, Stream stream);
    Error (*acldvppVpcBatchCropAsync)(DvppChannelDesc* ch, DvppBatchPicDesc* src, uint32_t* roi_nums, uint32_t size,
                                      DvppBatchPicDesc* dst, DvppRoiConfig* crops[], Stream stream);
    // The resize-config variants (optional: CANN 5+), which take the interpolation
    // (acldvppSetResizeConfigInterpolation: 0 the SoC's default, 1 bilinear, 2 nearest).
    Error (*acldvppSetResizeConfigInterpolation)(DvppResizeConfig* config, uint32_t interpolation);
    Error (*acldvppVpcCropResizeAsync)(DvppChannelDesc* ch, DvppPicDesc* in, DvppPicDesc* out, DvppRoiConfig* crop,
                                       DvppResizeConfig* config, Stream stream);
    Error (*acldvppVpcCropResizePasteAsync)(DvppChannelDesc* ch, DvppPicDesc* in, DvppPicDesc* out, DvppRoiConfig* crop,
                                            DvppRoiConfig* paste, DvppResizeConfig* config, Stream stream);
    Error (*acldvppVpcBatchCropResizeAsync)(DvppChannelDesc* ch, DvppBatchPicDesc* src, uint32_t* roi_nums,
                                            uint32_t size, DvppBatchPicDesc* dst, DvppRoiConfig* crops[],
                                            DvppResizeConfig* config, Stream stream);
    // JPEGD (data: DVPP memory for the decode; host memory is fine for the two queries)
    Error (*acldvppJpegGetImageInfoV2)(const void* data, uint32_t size, uint32_t* width, uint32_t* height,
                                       int32_t* components, int32_t* format);
    Error (*acldvppJpegPredictDecSize)(const void* data, uint32_t size, int32_t out_format, uint32_t* dec_size);
    Error (*acldvppJpegDecodeAsync)(DvppChannelDesc* ch, const void* data, uint32_t size, DvppPicDesc* out,
                                    Stream stream);
    // JPEGE (size: in = capacity of data, out = bytes written, valid after the stream sync)
    DvppJpegeConfig* (*acldvppCreateJpegeConfig)();
    Error (*acldvppDestroyJpegeConfig)(DvppJpegeConfig* config);
    Error (*acldvppSetJpegeConfigLevel)(DvppJpegeConfig* config, uint32_t level);
    Error (*acldvppJpegPredictEncSize)(const DvppPicDesc* in, const DvppJpegeConfig* config, uint32_t* size);
    Error (*acldvppJpegEncodeAsync)(DvppChannelDesc* ch, DvppPicDesc* in, const void* data, uint32_t* size,
                                    DvppJpegeConfig* config, Stream stream);
    // VDEC streams
    DvppStreamDesc* (*acldvppCreateStreamDesc)();
    Error (*acldvppDestroyStreamDesc)(DvppStreamDesc* desc);
    Error (*acldvppSetStreamDescData)(DvppStreamDesc* desc, void* data);
    Error (*acldvppSetStreamDescSize)(DvppStreamDesc* desc, uint32_t size);
    Error (*acldvppSetStreamDescFormat)(DvppStreamDesc* desc, int32_t format);
    Error (*acldvppSetStreamDescTimestamp)(DvppStreamDesc* desc, uint64_t timestamp);
    Error (*acldvppSetStreamDescEos)(DvppStreamDesc* desc, uint8_t eos);
    void* (*acldvppGetStreamDescData)(const DvppStreamDesc* desc);
    uint64_t (*acldvppGetStreamDescTimestamp)(const DvppStreamDesc* desc);
    uint32_t (*acldvppGetStreamDescRetCode)(const DvppStreamDesc* desc);
    uint8_t (*acldvppGetStreamDescEos)(const DvppStreamDesc* desc);
    // VDEC channels
    VdecChannelDesc* (*aclvdecCreateChannelDesc)();
    Error (*aclvdecDestroyChannelDesc)(VdecChannelDesc* desc);
    Error (*aclvdecSetChannelDescChannelId)(VdecChannelDesc* desc, uint32_t id);
    Error (*aclvdecSetChannelDescThreadId)(VdecChannelDesc* desc, uint64_t thread_id);
    Error (*aclvdecSetChannelDescCallback)(VdecChannelDesc* desc, VdecCallback callback);
    Error (*aclvdecSetChannelDescEnType)(VdecChannelDesc* desc, int32_t stream_format);
    Error (*aclvdecSetChannelDescOutPicFormat)(VdecChannelDesc* desc, int32_t pixel_format);
    Error (*aclvdecCreateChannel)(VdecChannelDesc* desc);
    Error (*aclvdecDestroyChannel)(VdecChannelDesc* desc);
    VdecFrameConfig* (*aclvdecCreateFrameConfig)();
    Error (*aclvdecDestroyFrameConfig)(VdecFrameConfig* config);
    Error (*aclvdecSendFrame)(VdecChannelDesc* ch, DvppStreamDesc* in, DvppPicDesc* out, VdecFrameConfig* config,
                              void* user_data);
    // acl_rt.h (libascendcl.so): the report thread that runs VDEC callbacks
    Error (*aclrtSubscribeReport)(uint64_t thread_id, Stream stream);
    Error (*aclrtProcessReport)(int32_t timeout_ms);
    Error (*aclrtUnSubscribeReport)(uint64_t thread_id, Stream stream);
};

// The DVPP table when the Ascend backend is active and libacl_dvpp.so loaded with every required symbol,
// else nullptr. Loads on first call (after the runtime); never throws.
const DvppApi* dvpp() noexcept;

// Why dvpp() is nullptr ("" when it is not): the backend choice, a missing library, a missing symbol.
const char* dvpp_reason() noexcept;

}  // namespace acl
}  // namespace kes
