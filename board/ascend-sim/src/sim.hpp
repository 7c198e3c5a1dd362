// sim.hpp — shared state of Kestrel's AscendCL simulator (libascendcl.so built from board/ascend-sim).
//
// Types and signatures are re-typed from the Apache-2.0 headers of mindspore-ai/graphengine
// (inc/external/acl/acl_base.h, acl_rt.h, acl_mdl.h), not copied; error codes from its error_codes/.
// Only the acl* symbols leave the library (exports.map), plus the kes_sim:: internals that the
// simulator's libacl_dvpp.so (linked against this library, as CANN's is) shares the runtime's state
// through; everything else, the CPU engine included, is local, so it never collides with the Kestrel
// copy inside the app that loads it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "kestrel/engine.h"

#define SIM_API extern "C" __attribute__((visibility("default")))

typedef int aclError;
typedef void* aclrtContext;
typedef void* aclrtStream;
typedef struct aclmdlDesc aclmdlDesc;
typedef struct aclmdlDataset aclmdlDataset;
typedef struct aclDataBuffer aclDataBuffer;
typedef struct aclmdlAIPP aclmdlAIPP;
typedef struct aclmdlIODims {
    char name[128];
    size_t dimCount;
    int64_t dims[128];
} aclmdlIODims;
typedef int aclrtRunMode;          // ACL_DEVICE = 0, ACL_HOST = 1
typedef int aclrtMemcpyKind;       // H2H, H2D, D2H, D2D, DEFAULT
typedef int aclrtMemMallocPolicy;  // HUGE_FIRST, HUGE_ONLY, NORMAL_ONLY (+ P2P variants)
typedef int aclDataType;
typedef int aclFormat;

// One input or output as aclmdlGetDesc describes it.
struct SimIO {
    std::string name;
    std::vector<int64_t> dims;  // -1 on dynamic axes
    aclDataType dtype = 0;
    aclFormat format = 2;  // ACL_FORMAT_ND
    size_t size = 0;       // bytes at the largest gear
};

struct aclmdlDesc {
    bool filled = false;
    std::vector<SimIO> inputs, outputs;
    std::vector<int64_t> batch_gears;  // aclmdlGetDynamicBatch
    std::vector<int64_t> image_gears;  // aclmdlGetDynamicHW: (h, w) pairs
};
struct aclmdlDataset {
    std::vector<aclDataBuffer*> buffers;
};
// aclmdlCreateAIPP's object: the dynamic AIPP parameters aclmdlSetAIPP* set, in the layout
// aclmdlSetInputAIPP copies into the hidden input ascend_dynamic_aipp_data (BOARD-RULES §AIPP-dynamic: 64 bytes for the
// batch-wide part + 96 per batch item, aclmdlGetAippDataSize; the field order inside is the simulator's).
struct SimAippHead {
    int32_t input_format = 0;  // aclAippInputFormat
    int8_t csc_switch = 0, rbuv_swap = 0, ax_swap = 0, pad0 = 0;
    int32_t src_w = 0, src_h = 0;
    int16_t matrix[9] = {};
    uint8_t output_bias[3] = {}, input_bias[3] = {};
    uint64_t batch = 0;
    uint32_t magic = 0;  // kSimAippMagic once aclmdlSetInputAIPP wrote it
};
struct SimAippItem {
    int8_t crop_switch = 0, padding_switch = 0;
    int32_t crop_start_w = 0, crop_start_h = 0, crop_w = 0, crop_h = 0;
    int32_t top = 0, bottom = 0, left = 0, right = 0;
    int16_t mean[4] = {};
    float min[4] = {};
    float var_reci[4] = {1.0f, 1.0f, 1.0f, 1.0f};
};
static_assert(sizeof(SimAippHead) <= 64 && sizeof(SimAippItem) <= 96,
              "AippDynamicPara sizes (docs/BOARD-RULES.md §AIPP-dynamic)");
constexpr uint32_t kSimAippMagic = 0x5041534bu;  // "KSAP"
inline size_t sim_aipp_data_size(uint64_t batch) {
    return 64 + 96 * static_cast<size_t>(batch);
}
struct aclmdlAIPP {
    SimAippHead head;
    std::vector<SimAippItem> items;
};

struct aclDataBuffer {
    void* data = nullptr;
    size_t size = 0;
};

namespace kes_sim {

// The codes the simulator returns (acl_base.h, rt_error_codes.h, ge_error_codes.h).
enum : aclError {
    kOk = 0,
    kInvalidParam = 100000,
    kUninitialize = 100001,
    kRepeatInitialize = 100002,
    kInvalidFile = 100003,
    kInvalidModelId = 100011,
    kParseModel = 100013,
    kModelInputNotMatch = 100017,
    kModelOutputNotMatch = 100018,
    kModelNotDynamic = 100019,
    kRepeatSubscribe = 100033,     // ACL_ERROR_REPEAT_SUBSCRIBE
    kStreamNotSubscribe = 100034,  // ACL_ERROR_STREAM_NOT_SUBSCRIBE
    kThreadNotSubscribe = 100035,  // ACL_ERROR_THREAD_NOT_SUBSCRIBE
    kRepeatFinalize = 100037,
    kStubMode = 100039,
    kResourceNotCleared = 148051,
    kRtParamInvalid = 107000,
    kRtInvalidDeviceId = 107001,
    kRtContextNull = 107002,
    kRtStreamContext = 107003,
    kRtInvalidHandle = 107017,
    kRtMemoryFree = 207002,
    kRtDeviceOom = 207018,
    kRtModelExecute = 507011,
    kRtReportTimeout = 507012,  // ACL_ERROR_RT_REPORT_TIMEOUT
    kRtAicpuException = 507018,
    kRtStreamSyncTimeout = 507046,
    kGeModelAddrInvalid = 145007,
    kGeDynamicBatchSizeInvalid = 145013,
    kGeLoadModel = 545001,
};

struct Fault {
    std::string call;
    uint64_t nth = 0;
    aclError code = 0;
};

struct Config {
    std::string soc = "Ascend310B4";
    int run_mode = 0;
    uint32_t device_count = 1;
    uint64_t memory_limit = 1ull << 30;
    int task_ms = 0;  // simulated duration of every queued stream task
    bool leak_abort = false;
    bool leak_check = true;  // aclFinalize returns 148051 on a leak (KES_SIM_LEAK_CHECK=0: 0, as a board)
    std::vector<Fault> faults;
};

struct Stream;

struct Context {
    int32_t device = 0;
    bool is_default = false;
    std::unique_ptr<Stream> default_stream;
};

struct Stream {
    Context* context = nullptr;
    std::vector<std::function<aclError()>> tasks;
};

struct Region {
    size_t size = 0;        // what the caller asked for
    size_t mapped = 0;      // bytes mapped (whole pages)
    bool internal = false;  // the simulator's own (model work memory it was not given)
    bool dvpp = false;      // from acldvppMalloc (libacl_dvpp.so): freed with acldvppFree only
};

// aclrtSubscribeReport / aclrtProcessReport: work queued for a subscribed thread (VDEC callbacks). The
// mutex is a leaf: nothing that takes Sim::mutex runs while it is held.
struct Reports {
    std::mutex mutex;
    std::condition_variable cv;
    std::map<const void*, uint64_t> subscriptions;                 // stream (or a VDEC channel's own stream) -> thread
    std::map<uint64_t, std::deque<std::function<void()>>> queues;  // per thread, run by aclrtProcessReport
};

// ~Model gives back the device memory the simulator took for it (internal_alloc below).
void internal_free(void* p);

// A loaded model: the CPU engine's model and context over the app's device work and weight memory.
struct Model {
    kes_model* model = nullptr;
    kes_model_context* context = nullptr;
    void* own_work = nullptr;    // internal device memory when the app passed work = NULL
    void* own_weight = nullptr;  // likewise for weights
    std::string soc;
    aclmdlDesc desc;
    std::vector<int64_t> batch_gears;  // ascending
    std::vector<int64_t> image_gears;  // (h, w) pairs
    size_t hidden_index = SIZE_MAX;    // the ascend_mbatch_shape_data input, if dynamic
    size_t aipp_index = SIZE_MAX;      // the ascend_dynamic_aipp_data input, if an input has dynamic AIPP
    size_t aipp_input = SIZE_MAX;      // that graph input
    size_t graph_inputs = 0;
    // Static AIPP inputs (the .kom carries an aipp_op for them): as ATC makes them, the input is the raw
    // image buffer, UINT8, src_image_size_w x _h per batch item; the engine's AIPP runs at execution.
    struct ImageInput {
        bool on = false;
        int format = 0;  // kes_pixel_format
        uint32_t width = 0, height = 0, width_stride = 0;
        size_t bytes = 0;      // per image (dynamic: max_src_image_size)
        bool dynamic = false;  // aipp_mode dynamic: format and size come from ascend_dynamic_aipp_data
    };
    std::vector<ImageInput> image_inputs;  // per graph input

    ~Model() {
        kes_model_context_destroy(context);
        kes_model_unload(model);
        if (own_work) internal_free(own_work);
        if (own_weight) internal_free(own_weight);
    }
};

struct Sim {
    std::recursive_mutex mutex;
    bool initialised = false;
    bool ever_initialised = false;
    Config config;
    std::map<std::string, uint64_t> calls;  // per-function call counts, for KES_SIM_FAIL
    std::map<uintptr_t, Region> device;     // device allocations by start address
    uint64_t device_bytes = 0;
    std::set<void*> host;                // aclrtMallocHost
    std::map<int32_t, int> device_refs;  // aclrtSetDevice reference counts
    std::map<int32_t, std::unique_ptr<Context>> default_contexts;
    std::set<Context*> contexts;  // every live context, default ones included
    std::map<Context*, std::unique_ptr<Context>> user_contexts;
    std::map<Stream*, std::unique_ptr<Stream>> streams;
    std::set<aclmdlDesc*> descs;
    std::set<aclmdlDataset*> datasets;
    std::set<aclDataBuffer*> buffers;
    std::set<aclmdlAIPP*> aipps;  // aclmdlCreateAIPP (ledger: release_models)
    std::map<uint32_t, std::unique_ptr<Model>> models;
    uint32_t next_model_id = 1;
    int open_depth = 0;  // nesting of DeviceWork scopes
    Reports reports;
    // Set by libacl_dvpp.so while it is loaded: lists its live objects into the aclFinalize ledger and
    // frees them.
    void (*release_dvpp)(std::vector<std::string>* leaks) = nullptr;
};

// The functions below are shared with libacl_dvpp.so: default visibility (the build hides everything
// else), exported by exports.map's kes_sim:: pattern.
#pragma GCC visibility push(default)

Sim& sim();

// Every entry point starts here: stub mode, fault injection, initialisation and context checks. Returns
// 0 to go on, else the code to return. `needs` is a mask of kNeedInit / kNeedContext.
enum : int { kNeedNothing = 0, kNeedInit = 1, kNeedContext = 3 };
aclError enter(const char* call, int needs);

// Records the thread's message for aclGetRecentErrMsg and returns code.
aclError report(aclError code, const std::string& message);

// The context current on this thread, if it is alive.
Context* current_context();

// The device region holding [p, p + n), or nullptr.
const Region* device_region(const void* p, size_t n, uintptr_t* start = nullptr);

// Simulated device work: in ACL_HOST mode device memory is PROT_NONE for the CPU; a DeviceWork scope
// opens every device region for reading and writing and closes them again at its end, so only work
// the simulated device does (copies, model execution) can touch them.
class DeviceWork {
public:
    DeviceWork();
    ~DeviceWork();
    DeviceWork(const DeviceWork&) = delete;
    DeviceWork& operator=(const DeviceWork&) = delete;
};

// Device memory for the simulator's own use (model work memory the app did not give): not in the
// app's ledger, freed by the simulator.
void* internal_alloc(size_t size);
void internal_free(void* p);

// The stream a *Async call queues on: `stream`, or the current context's default stream for NULL.
// Returns 0 or the code (invalid handle, stream of another context).
aclError resolve_stream(aclrtStream stream, Stream** out);

// DVPP memory (acldvppMalloc): a device region marked dvpp, 128-byte aligned (mappings are page aligned).
void* dvpp_alloc(size_t size, aclError* code);
aclError dvpp_free(void* p);  // kRtMemoryFree when p is not the start of live DVPP memory

// "0x..." for messages.
std::string hex(const void* p);

// The id aclrtSubscribeReport takes for the calling thread (its pthread_t).
uint64_t this_thread_id();

// Subscribes `thread` to the reports of `key` (a stream); kRepeatSubscribe when `key` already has one.
aclError subscribe_report(uint64_t thread, const void* key, const char* call);
aclError unsubscribe_report(uint64_t thread, const void* key, const char* call);
// Queues `work` for the next aclrtProcessReport on `thread`.
void post_report(uint64_t thread, std::function<void()> work);

// sim_model.cpp: describes every model still loaded (for the aclFinalize ledger) and unloads them.
void release_models(std::vector<std::string>* leaks);

#pragma GCC visibility pop

}  // namespace kes_sim
