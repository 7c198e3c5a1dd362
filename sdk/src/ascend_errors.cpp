// ascend_errors.cpp — aclError → kes_status, with the code's name and a hint a user can act on.
//
// Users call AscendCL's codes opaque ("error 507011"). Every failure Kestrel reports names the call, the
// code, its constant name from the Apache-2.0 headers (acl_base.h, error_codes/rt_error_codes.h,
// ge_error_codes.h in mindspore-ai/graphengine) and what usually causes it, plus the runtime's own text.
#include <cstdio>
#include <string>

#include "ascend_runtime.hpp"
#include "kes/ascend.hpp"
#include "kes/error.hpp"

namespace kes {
namespace acl {
namespace {

struct Known {
    Error code;
    const char* name;
    kes_status status;
    const char* hint;
};

// Hints are the documented or most common cause; codes outside the table fall back to their range.
constexpr Known kKnown[] = {
    {100000, "ACL_ERROR_INVALID_PARAM", KES_ERR_INVALID_ARGUMENT, "an argument is NULL, out of range or mismatched"},
    {100001, "ACL_ERROR_UNINITIALIZE", KES_ERR_INTERNAL, "aclInit has not been called (or aclFinalize already was)"},
    {100002, "ACL_ERROR_REPEAT_INITIALIZE", KES_ERR_INVALID_ARGUMENT, "aclInit was already called in this process"},
    {100003, "ACL_ERROR_INVALID_FILE", KES_ERR_CORRUPT_DATA, "the file is not what the call expects"},
    {100005, "ACL_ERROR_INVALID_FILE_SIZE", KES_ERR_CORRUPT_DATA, "the file size is wrong"},
    {100006, "ACL_ERROR_PARSE_FILE", KES_ERR_CORRUPT_DATA, "the file could not be parsed"},
    {100011, "ACL_ERROR_INVALID_MODEL_ID", KES_ERR_INVALID_ARGUMENT, "no model is loaded under this id"},
    {100012, "ACL_ERROR_DESERIALIZE_MODEL", KES_ERR_CORRUPT_DATA, "the .om file is damaged or from another CANN"},
    {100013, "ACL_ERROR_PARSE_MODEL", KES_ERR_CORRUPT_DATA, "the .om file could not be parsed"},
    {100014, "ACL_ERROR_READ_MODEL_FAILURE", KES_ERR_IO, "the model file could not be read"},
    {100015, "ACL_ERROR_MODEL_SIZE_INVALID", KES_ERR_INVALID_ARGUMENT, "work or weight memory is smaller than queried"},
    {100017, "ACL_ERROR_MODEL_INPUT_NOT_MATCH", KES_ERR_INVALID_ARGUMENT, "the input dataset does not match the model"},
    {100018, "ACL_ERROR_MODEL_OUTPUT_NOT_MATCH", KES_ERR_INVALID_ARGUMENT,
     "the output dataset does not match the model"},
    {100019, "ACL_ERROR_MODEL_NOT_DYNAMIC", KES_ERR_INVALID_ARGUMENT,
     "the model has no dynamic batch or image size: convert it with ATC --dynamic_batch_size/--dynamic_image_size"},
    {100036, "ACL_ERROR_WAIT_CALLBACK_TIMEOUT", KES_ERR_TIMEOUT, "no callback arrived in time"},
    {100037, "ACL_ERROR_REPEAT_FINALIZE", KES_ERR_INVALID_ARGUMENT, "aclFinalize was already called"},
    {100039, "ACL_ERROR_COMPILING_STUB_MODE", KES_ERR_UNSUPPORTED,
     "a stub library was loaded: fix LD_LIBRARY_PATH order (lib64/stub must not come before lib64)"},
    {148051, "ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED", KES_ERR_BUSY,
     "streams, contexts, models or device memory are still alive: release them first"},
    {148052, "ACL_ERROR_UNSUPPORTED_JPEG", KES_ERR_UNSUPPORTED,
     "the hardware JPEG decoder refuses this file (progressive, arithmetic-coded or no EOI)"},
    {200000, "ACL_ERROR_BAD_ALLOC", KES_ERR_OUT_OF_MEMORY, "host or device memory is exhausted"},
    {200001, "ACL_ERROR_API_NOT_SUPPORT", KES_ERR_UNSUPPORTED, "this SoC or CANN version lacks the call"},
    {200002, "ACL_ERROR_INVALID_DEVICE", KES_ERR_NOT_FOUND, "no such device id (see npu-smi info)"},
    {200003, "ACL_ERROR_MEMORY_ADDRESS_UNALIGNED", KES_ERR_INVALID_ARGUMENT,
     "the address is not aligned as the call requires (128 bytes for DVPP and model buffers)"},
    {200006, "ACL_ERROR_FEATURE_UNSUPPORTED", KES_ERR_UNSUPPORTED, "this SoC does not support the feature"},
    {300000, "ACL_ERROR_STORAGE_OVER_LIMIT", KES_ERR_OUT_OF_MEMORY, "a storage limit was exceeded"},
    {500000, "ACL_ERROR_INTERNAL_ERROR", KES_ERR_INTERNAL, "an internal error of AscendCL"},
    {500001, "ACL_ERROR_FAILURE", KES_ERR_INTERNAL, "AscendCL failed; see the runtime's log (ASCEND_GLOBAL_LOG_LEVEL)"},
    {500002, "ACL_ERROR_GE_FAILURE", KES_ERR_INTERNAL, "the graph engine failed"},
    {500003, "ACL_ERROR_RT_FAILURE", KES_ERR_INTERNAL, "the runtime failed"},
    {500004, "ACL_ERROR_DRV_FAILURE", KES_ERR_INTERNAL, "the driver failed: is the NPU driver loaded (npu-smi info)?"},
    {107000, "ACL_ERROR_RT_PARAM_INVALID", KES_ERR_INVALID_ARGUMENT, "the runtime refused an argument"},
    {107001, "ACL_ERROR_RT_INVALID_DEVICEID", KES_ERR_NOT_FOUND, "no such device id (see npu-smi info)"},
    {107002, "ACL_ERROR_RT_CONTEXT_NULL", KES_ERR_INTERNAL,
     "no context is current on this thread: each thread must call aclrtSetCurrentContext"},
    {107003, "ACL_ERROR_RT_STREAM_CONTEXT", KES_ERR_INVALID_ARGUMENT, "the stream belongs to another context"},
    {107017, "ACL_ERROR_RT_INVALID_HANDLE", KES_ERR_INVALID_ARGUMENT, "a stream, context or model handle is stale"},
    {207000, "ACL_ERROR_RT_FEATURE_NOT_SUPPORT", KES_ERR_UNSUPPORTED, "this SoC does not support the feature"},
    {207001, "ACL_ERROR_RT_MEMORY_ALLOCATION", KES_ERR_OUT_OF_MEMORY, "device memory could not be allocated"},
    {207002, "ACL_ERROR_RT_MEMORY_FREE", KES_ERR_INVALID_ARGUMENT, "the pointer is not live device memory"},
    {207017, "ACL_ERROR_RT_OVER_FLOW", KES_ERR_INTERNAL, "a counter or size overflowed"},
    {207018, "ACL_ERROR_RT_DEVICE_OOM", KES_ERR_OUT_OF_MEMORY,
     "device memory is exhausted: free buffers, unload models or use smaller pools"},
    {507000, "ACL_ERROR_RT_INTERNAL_ERROR", KES_ERR_INTERNAL, "an internal error of the runtime"},
    {507011, "ACL_ERROR_RT_MODEL_EXECUTE", KES_ERR_INTERNAL,
     "the model failed on the device: check the inputs' sizes and the device log"},
    {507012, "ACL_ERROR_RT_REPORT_TIMEOUT", KES_ERR_TIMEOUT, "the device did not report in time"},
    {507014, "ACL_ERROR_RT_AICORE_TIMEOUT", KES_ERR_TIMEOUT, "an AI core task timed out"},
    {507015, "ACL_ERROR_RT_AICORE_EXCEPTION", KES_ERR_INTERNAL, "an AI core task raised an exception"},
    {507033, "ACL_ERROR_RT_DEV_SETUP_ERROR", KES_ERR_NOT_FOUND,
     "the device could not be set up: driver missing, device busy or another process holds it"},
    {507035, "ACL_ERROR_RT_VECTOR_CORE_EXCEPTION", KES_ERR_INTERNAL, "a vector core task raised an exception"},
    {507046, "ACL_ERROR_RT_STREAM_SYNC_TIMEOUT", KES_ERR_TIMEOUT, "the stream's work did not finish in time"},
    {507899, "ACL_ERROR_RT_DRV_INTERNAL_ERROR", KES_ERR_INTERNAL, "the driver failed internally"},
    {145000, "ACL_ERROR_GE_PARAM_INVALID", KES_ERR_INVALID_ARGUMENT, "the graph engine refused an argument"},
    {145013, "ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID", KES_ERR_INVALID_ARGUMENT, "the batch is not one of the gears"},
    {545000, "ACL_ERROR_GE_INTERNAL_ERROR", KES_ERR_INTERNAL, "an internal error of the graph engine"},
    {545001, "ACL_ERROR_GE_LOAD_MODEL", KES_ERR_CORRUPT_DATA,
     "the model could not be loaded: built by ATC for another --soc_version, another CANN, or damaged"},
};

const Known* find(Error code) noexcept {
    for (const Known& k : kKnown) {
        if (k.code == code) return &k;
    }
    return nullptr;
}

}  // namespace

const char* error_name(Error code) noexcept {
    const Known* k = find(code);
    return k ? k->name : "unknown AscendCL error";
}

const char* error_hint(Error code) noexcept {
    const Known* k = find(code);
    return k ? k->hint : "";
}

kes_status error_status(Error code) noexcept {
    if (code == kSuccess) return KES_OK;
    if (const Known* k = find(code)) return k->status;
    // The ranges of acl_base.h: 1xxxxx caller errors, 2xxxxx resources, 5xxxxx internal.
    const int range = code / 100000;
    if (range == 1) return KES_ERR_INVALID_ARGUMENT;
    if (range == 2) return KES_ERR_UNSUPPORTED;
    return KES_ERR_INTERNAL;
}

std::string describe(const char* call, Error code) {
    std::string text = format("%s failed: %d %s", call, static_cast<int>(code), error_name(code));
    const char* hint = error_hint(code);
    if (*hint) text += format(" (%s)", hint);
    const std::string recent = recent_runtime_message();
    if (!recent.empty()) text += "; runtime: " + recent;
    return text;
}

void fail_call(const char* call, Error code) {
    fail(error_status(code), "%s", describe(call, code).c_str());
}

}  // namespace acl
}  // namespace kes
