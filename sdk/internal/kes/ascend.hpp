// kes/ascend.hpp — the AscendCL seam: the one function table every Kestrel module calls CANN through.
//
// Shared by the sdk (device memory), the engine's Ascend executor and dvpp; not installed. The sdk
// loads the library at run time (kestrel/backend.h has the search order), resolves every symbol below
// into one acl::Api, initialises the runtime once per process and owns one context. A module that runs
// Ascend work does:
//
//   const kes::acl::Api& api = kes::acl::require();      // throws kes::Error when Ascend is unavailable
//   kes::acl::ScopedContext bind;                         // Kestrel's context current on this thread
//   kes::acl::check("aclmdlExecute", api.aclmdlExecute(id, in, out));   // aclError → kes::Error
//
// Declarations are re-typed from the Apache-2.0 headers of mindspore-ai/graphengine
// (inc/external/acl/acl_base.h, acl_rt.h, acl_mdl.h; also under 910/) — checked there, not copied. C
// enums (aclrtMemcpyKind, aclDataType, ...) are int-sized on every ABI Kestrel targets, so they appear
// here as int32_t.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "kestrel/backend.h"
#include "kestrel/status.h"

namespace kes {
namespace acl {

using Error = int32_t;  // aclError
using Context = void*;  // aclrtContext
using Stream = void*;   // aclrtStream
struct MdlDesc;         // aclmdlDesc (opaque)
struct Dataset;         // aclmdlDataset (opaque)
struct DataBuffer;      // aclDataBuffer (opaque)
struct MdlAipp;         // aclmdlAIPP (opaque): dynamic AIPP parameters of every batch item

constexpr size_t kMaxDims = 128;        // ACL_MAX_DIM_CNT
constexpr size_t kMaxTensorName = 128;  // ACL_MAX_TENSOR_NAME_LEN
struct IODims {                         // aclmdlIODims
    char name[kMaxTensorName];
    size_t dimCount;
    int64_t dims[kMaxDims];
};

// The names the runtime gives the hidden inputs of dynamic models (acl_mdl.h).
constexpr const char* kDynamicTensorName = "ascend_mbatch_shape_data";  // ACL_DYNAMIC_TENSOR_NAME
constexpr const char* kDynamicAippName = "ascend_dynamic_aipp_data";    // ACL_DYNAMIC_AIPP_NAME

enum : int32_t { kRunModeDevice = 0, kRunModeHost = 1 };                              // aclrtRunMode
enum : int32_t { kMemcpyH2H = 0, kMemcpyH2D = 1, kMemcpyD2H = 2, kMemcpyD2D = 3 };    // aclrtMemcpyKind
enum : int32_t { kMallocHugeFirst = 0, kMallocHugeOnly = 1, kMallocNormalOnly = 2 };  // aclrtMemMallocPolicy

// Error codes Kestrel reacts to (acl_base.h, error_codes/rt_error_codes.h, ge_error_codes.h).
enum : Error {
    kSuccess = 0,
    kInvalidParam = 100000,
    kUninitialize = 100001,
    kRepeatInitialize = 100002,
    kInvalidFile = 100003,
    kParseModel = 100013,
    kModelNotDynamic = 100019,
    kRepeatFinalize = 100037,
    kStubMode = 100039,  // ACL_ERROR_COMPILING_STUB_MODE: a link-only stub library
    kResourceNotCleared = 148051,
    kBadAlloc = 200000,
    kAddressUnaligned = 200003,
    kRtContextNull = 107002,
    kRtDeviceOom = 207018,
    kRtModelExecute = 507011,
    kRtDevSetup = 507033,
    kRtStreamSyncTimeout = 507046,
    kGeLoadModel = 545001,
};

// Every symbol Kestrel uses. Optional ones (newer CANN releases only) may be nullptr: test before use.
struct Api {
    // acl.h / acl_base.h
    Error (*aclInit)(const char* config_path);
    Error (*aclFinalize)();
    const char* (*aclGetRecentErrMsg)();  // optional (CANN 5+)
    const char* (*aclrtGetSocName)();     // optional on old releases
    DataBuffer* (*aclCreateDataBuffer)(void* data, size_t size);
    Error (*aclDestroyDataBuffer)(const DataBuffer* buffer);
    void* (*aclGetDataBufferAddr)(const DataBuffer* buffer);
    size_t (*aclGetDataBufferSizeV2)(const DataBuffer* buffer);                 // optional (older: uint32 variant only)
    Error (*aclUpdateDataBuffer)(DataBuffer* buffer, void* data, size_t size);  // optional (CANN 5+)
    // acl_rt.h
    Error (*aclrtSetDevice)(int32_t device);
    Error (*aclrtResetDevice)(int32_t device);
    Error (*aclrtGetDeviceCount)(uint32_t* count);
    Error (*aclrtGetRunMode)(int32_t* run_mode);
    Error (*aclrtCreateContext)(Context* context, int32_t device);
    Error (*aclrtDestroyContext)(Context context);
    Error (*aclrtSetCurrentContext)(Context context);
    Error (*aclrtGetCurrentContext)(Context* context);
    Error (*aclrtCreateStream)(Stream* stream);
    Error (*aclrtDestroyStream)(Stream stream);
    Error (*aclrtSynchronizeStream)(Stream stream);
    Error (*aclrtSynchronizeStreamWithTimeout)(Stream stream, int32_t timeout_ms);  // optional
    Error (*aclrtMalloc)(void** ptr, size_t size, int32_t policy);
    Error (*aclrtFree)(void* ptr);
    Error (*aclrtMallocHost)(void** ptr, size_t size);
    Error (*aclrtFreeHost)(void* ptr);
    Error (*aclrtMemcpy)(void* dst, size_t dst_max, const void* src, size_t count, int32_t kind);
    Error (*aclrtMemcpyAsync)(void* dst, size_t dst_max, const void* src, size_t count, int32_t kind, Stream stream);
    Error (*aclrtMemset)(void* ptr, size_t max_count, int32_t value, size_t count);
    // acl_mdl.h
    Error (*aclmdlQuerySizeFromMem)(const void* model, size_t model_size, size_t* work_size, size_t* weight_size);
    Error (*aclmdlLoadFromMemWithMem)(const void* model, size_t model_size, uint32_t* model_id, void* work,
                                      size_t work_size, void* weight, size_t weight_size);
    Error (*aclmdlUnload)(uint32_t model_id);
    MdlDesc* (*aclmdlCreateDesc)();
    Error (*aclmdlDestroyDesc)(MdlDesc* desc);
    Error (*aclmdlGetDesc)(MdlDesc* desc, uint32_t model_id);
    size_t (*aclmdlGetNumInputs)(MdlDesc* desc);
    size_t (*aclmdlGetNumOutputs)(MdlDesc* desc);
    size_t (*aclmdlGetInputSizeByIndex)(MdlDesc* desc, size_t index);
    size_t (*aclmdlGetOutputSizeByIndex)(MdlDesc* desc, size_t index);
    Error (*aclmdlGetInputDims)(const MdlDesc* desc, size_t index, IODims* dims);
    Error (*aclmdlGetOutputDims)(const MdlDesc* desc, size_t index, IODims* dims);
    int32_t (*aclmdlGetInputDataType)(const MdlDesc* desc, size_t index);   // aclDataType
    int32_t (*aclmdlGetOutputDataType)(const MdlDesc* desc, size_t index);  // aclDataType
    int32_t (*aclmdlGetInputFormat)(const MdlDesc* desc, size_t index);     // aclFormat
    int32_t (*aclmdlGetOutputFormat)(const MdlDesc* desc, size_t index);    // aclFormat
    const char* (*aclmdlGetInputNameByIndex)(const MdlDesc* desc, size_t index);
    const char* (*aclmdlGetOutputNameByIndex)(const MdlDesc* desc, size_t index);
    Error (*aclmdlGetInputIndexByName)(const MdlDesc* desc, const char* name, size_t* index);
    Error (*aclmdlGetOutputIndexByName)(const MdlDesc* desc, const char* name, size_t* index);
    Dataset* (*aclmdlCreateDataset)();
    Error (*aclmdlDestroyDataset)(const Dataset* dataset);
    Error (*aclmdlAddDatasetBuffer)(Dataset* dataset, DataBuffer* buffer);
    size_t (*aclmdlGetDatasetNumBuffers)(const Dataset* dataset);
    DataBuffer* (*aclmdlGetDatasetBuffer)(const Dataset* dataset, size_t index);
    Error (*aclmdlExecute)(uint32_t model_id, const Dataset* input, Dataset* output);
    Error (*aclmdlExecuteAsync)(uint32_t model_id, const Dataset* input, Dataset* output, Stream stream);
    Error (*aclmdlSetDynamicBatchSize)(uint32_t model_id, Dataset* dataset, size_t index, uint64_t batch);
    Error (*aclmdlSetDynamicHWSize)(uint32_t model_id, Dataset* dataset, size_t index, uint64_t height, uint64_t width);
    // acl_mdl.h, dynamic AIPP: all optional (a runtime without them runs every other model)
    MdlAipp* (*aclmdlCreateAIPP)(uint64_t batch_size);
    Error (*aclmdlDestroyAIPP)(const MdlAipp* aipp);
    Error (*aclmdlSetAIPPInputFormat)(MdlAipp* aipp, int32_t input_format);  // aclAippInputFormat
    Error (*aclmdlSetAIPPCscParams)(MdlAipp* aipp, int8_t csc_switch, int16_t r0c0, int16_t r0c1, int16_t r0c2,
                                    int16_t r1c0, int16_t r1c1, int16_t r1c2, int16_t r2c0, int16_t r2c1, int16_t r2c2,
                                    uint8_t output_bias0, uint8_t output_bias1, uint8_t output_bias2,
                                    uint8_t input_bias0, uint8_t input_bias1, uint8_t input_bias2);
    Error (*aclmdlSetAIPPRbuvSwapSwitch)(MdlAipp* aipp, int8_t on);
    Error (*aclmdlSetAIPPAxSwapSwitch)(MdlAipp* aipp, int8_t on);
    Error (*aclmdlSetAIPPSrcImageSize)(MdlAipp* aipp, int32_t width, int32_t height);
    Error (*aclmdlSetAIPPCropParams)(MdlAipp* aipp, int8_t crop_switch, int32_t start_w, int32_t start_h, int32_t width,
                                     int32_t height, uint64_t batch_index);
    Error (*aclmdlSetAIPPPaddingParams)(MdlAipp* aipp, int8_t padding_switch, int32_t top, int32_t bottom, int32_t left,
                                        int32_t right, uint64_t batch_index);
    Error (*aclmdlSetAIPPDtcPixelMean)(MdlAipp* aipp, int16_t c0, int16_t c1, int16_t c2, int16_t c3,
                                       uint64_t batch_index);
    Error (*aclmdlSetAIPPDtcPixelMin)(MdlAipp* aipp, float c0, float c1, float c2, float c3, uint64_t batch_index);
    Error (*aclmdlSetAIPPPixelVarReci)(MdlAipp* aipp, float c0, float c1, float c2, float c3, uint64_t batch_index);
    Error (*aclmdlSetInputAIPP)(uint32_t model_id, Dataset* dataset, size_t index, const MdlAipp* aipp);
};

// What the loaded runtime reported at initialisation.
struct RuntimeInfo {
    std::string library;   // path(s) of what was loaded
    std::string soc_name;  // aclrtGetSocName, "" when unknown
    int32_t run_mode = kRunModeDevice;
    uint32_t device_count = 0;
    int32_t device_id = -1;
    bool app_owns_runtime = false;  // the app called aclInit before us (100002)
};

// The table when the Ascend backend is active (resolving the choice on first call), else nullptr.
const Api* api() noexcept;

// The table of the active Ascend backend; throws kes::Error with the reason (missing library, stub,
// no device, KES_BACKEND=cpu) when there is none.
const Api& require();

// What the runtime reported; valid while api() is non-null.
const RuntimeInfo& runtime_info() noexcept;

// The context Kestrel created (valid while api() is non-null).
Context context() noexcept;

// Makes Kestrel's context current on this thread for the scope's lifetime and puts back whatever was
// current before (an app that drives its own contexts on the same thread keeps them). Throws kes::Error
// if the runtime refuses.
class ScopedContext {
public:
    ScopedContext();
    ~ScopedContext();
    ScopedContext(const ScopedContext&) = delete;
    ScopedContext& operator=(const ScopedContext&) = delete;

private:
    Context previous_ = nullptr;
    bool restore_ = false;
};

// The code's constant name ("ACL_ERROR_RT_DEVICE_OOM"), or "unknown AscendCL error" — never NULL.
const char* error_name(Error code) noexcept;
// What an app can do about it (may be "").
const char* error_hint(Error code) noexcept;
// The kes_status an aclError maps to.
kes_status error_status(Error code) noexcept;
// "<call> failed: 207018 ACL_ERROR_RT_DEVICE_OOM (hint); runtime: <aclGetRecentErrMsg text>".
std::string describe(const char* call, Error code);

// Throws kes::Error(error_status(code), describe(call, code)).
[[noreturn]] void fail_call(const char* call, Error code);
// As fail_call, unless code is 0.
inline void check(const char* call, Error code) {
    if (code != kSuccess) fail_call(call, code);
}

}  // namespace acl
}  // namespace kes
