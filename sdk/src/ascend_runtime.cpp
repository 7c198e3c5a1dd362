// ascend_runtime.cpp — loads AscendCL at run time, owns its lifecycle, and chooses the backend
// (kestrel/backend.h is the manual; BOARD-RULES §AscendCL).
//
// One process-wide state behind one mutex: the requested backend, the loaded library and its function
// table, and the resolution (CPU, Ascend, or unavailable with the reason). The resolution is published
// through an atomic so the hot paths (every KES_MEM_DEVICE allocation, every copy) read it without the
// lock. The state is never destroyed: memory freed by static destructors at exit still finds its table.
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ascend_runtime.hpp"
#include "kes/acl_dvpp.hpp"
#include "kes/ascend.hpp"
#include "kes/error.hpp"
#include "kes/host_services.hpp"
#include "kes/logging.hpp"
#include "kes/math.hpp"
#include "kes/struct_size.hpp"
#include "kestrel/backend.h"
#include "kestrel/board.h"

namespace kes {
namespace acl {
namespace {

// A loaded library: up to two handles (libascendcl.so, or CANN 9's libacl_rt.so + libacl_mdl.so).
struct Library {
    void* handles[2] = {nullptr, nullptr};
    std::string path;

    Library() = default;
    Library(const Library&) = delete;
    Library& operator=(const Library&) = delete;
    ~Library() {
        for (void* h : handles) {
            if (h) dlclose(h);
        }
    }
    void* symbol(const char* name) const noexcept {
        for (void* h : handles) {
            if (!h) continue;
            if (void* p = dlsym(h, name)) return p;
        }
        return nullptr;
    }
};

// libacl_dvpp.so, loaded on the first dvpp() call after the runtime (an app that runs only models never
// opens it).
struct DvppLibrary {
    void* handle = nullptr;
    std::string path;
    DvppApi api{};

    DvppLibrary() = default;
    DvppLibrary(const DvppLibrary&) = delete;
    DvppLibrary& operator=(const DvppLibrary&) = delete;
    ~DvppLibrary() {
        if (handle) dlclose(handle);
    }
};

struct Loaded {
    std::unique_ptr<Library> library;
    Api api{};
    RuntimeInfo info;
    Context context = nullptr;
    bool device_set = false;
    // Declared after `library`: closed before the runtime it depends on.
    std::unique_ptr<DvppLibrary> dvpp;
    bool dvpp_tried = false;
    std::string dvpp_reason;  // why dvpp is null once tried
};

enum class Resolution { kUnresolved, kCpu, kAscend, kUnavailable };

struct State {
    std::mutex mutex;
    kes_backend requested = KES_BACKEND_AUTO;
    bool requested_read = false;  // KES_BACKEND read from the environment
    std::string library_dir;      // from kes_backend_set_library_dir ("" = none)
    Resolution resolution = Resolution::kUnresolved;
    kes_status failure = KES_OK;  // why Ascend is not active (kCpu under auto, kUnavailable)
    std::string reason;
    std::unique_ptr<Loaded> loaded;
    std::atomic<int> published{static_cast<int>(Resolution::kUnresolved)};
    std::atomic<const Api*> active{nullptr};
    std::atomic<const Api*> loaded_api{nullptr};       // s.loaded's table, readable without the lock
    std::atomic<const DvppApi*> dvpp_active{nullptr};  // the DVPP table while Ascend is active and it loaded
};

// The table of a runtime this thread is bringing up (not yet published), for error messages.
thread_local const Api* t_bringing_up = nullptr;

State& state() noexcept {
    // Never destroyed (see the file comment); constructed on first use, thread-safe.
    alignas(State) static unsigned char storage[sizeof(State)];
    static State* instance = ::new (static_cast<void*>(storage)) State();
    return *instance;
}

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

bool parse_backend(const char* name, kes_backend* out) {
    std::string s;
    for (const char* p = name; *p; ++p) s += static_cast<char>(std::tolower(static_cast<unsigned char>(*p)));
    if (s == "auto" || s.empty()) {
        *out = KES_BACKEND_AUTO;
    } else if (s == "cpu" || s == "host") {
        *out = KES_BACKEND_CPU;
    } else if (s == "ascend" || s == "npu") {
        *out = KES_BACKEND_ASCEND;
    } else {
        return false;
    }
    return true;
}

// Caller holds the lock.
void read_requested(State& s) {
    if (s.requested_read) return;
    s.requested_read = true;
    const std::string v = env("KES_BACKEND");
    if (v.empty()) return;
    kes_backend b;
    if (parse_backend(v.c_str(), &b)) {
        s.requested = b;
    } else {
        KES_LOGW("sdk", "KES_BACKEND=%s is not auto, cpu or ascend; using auto", v.c_str());
    }
}

void publish(State& s, Resolution r) {
    s.resolution = r;
    s.loaded_api.store(s.loaded ? &s.loaded->api : nullptr, std::memory_order_release);
    s.active.store(r == Resolution::kAscend && s.loaded ? &s.loaded->api : nullptr, std::memory_order_release);
    s.dvpp_active.store(r == Resolution::kAscend && s.loaded && s.loaded->dvpp ? &s.loaded->dvpp->api : nullptr,
                        std::memory_order_release);
    s.published.store(static_cast<int>(r), std::memory_order_release);
}

// ---- finding and loading the library ------------------------------------------------------------------

template <class Fn>
bool bind(const Library& lib, Fn*& slot, const char* name) {
    slot = reinterpret_cast<Fn*>(lib.symbol(name));
    return slot != nullptr;
}

// Resolves every symbol; returns "" or the first missing required one.
std::string bind_all(const Library& lib, Api& api) {
    std::string missing;
    auto req = [&](bool ok, const char* name) {
        if (!ok && missing.empty()) missing = name;
    };
#define KES_REQ(name) req(bind(lib, api.name, #name), #name)
#define KES_OPT(name) bind(lib, api.name, #name)
    KES_REQ(aclInit);
    KES_REQ(aclFinalize);
    KES_OPT(aclGetRecentErrMsg);
    KES_OPT(aclrtGetSocName);
    KES_REQ(aclCreateDataBuffer);
    KES_REQ(aclDestroyDataBuffer);
    KES_REQ(aclGetDataBufferAddr);
    KES_OPT(aclGetDataBufferSizeV2);
    KES_OPT(aclUpdateDataBuffer);
    KES_REQ(aclrtSetDevice);
    KES_REQ(aclrtResetDevice);
    KES_REQ(aclrtGetDeviceCount);
    KES_REQ(aclrtGetRunMode);
    KES_REQ(aclrtCreateContext);
    KES_REQ(aclrtDestroyContext);
    KES_REQ(aclrtSetCurrentContext);
    KES_REQ(aclrtGetCurrentContext);
    KES_REQ(aclrtCreateStream);
    KES_REQ(aclrtDestroyStream);
    KES_REQ(aclrtSynchronizeStream);
    KES_OPT(aclrtSynchronizeStreamWithTimeout);
    KES_REQ(aclrtMalloc);
    KES_REQ(aclrtFree);
    KES_REQ(aclrtMallocHost);
    KES_REQ(aclrtFreeHost);
    KES_REQ(aclrtMemcpy);
    KES_REQ(aclrtMemcpyAsync);
    KES_REQ(aclrtMemset);
    KES_REQ(aclmdlQuerySizeFromMem);
    KES_REQ(aclmdlLoadFromMemWithMem);
    KES_REQ(aclmdlUnload);
    KES_REQ(aclmdlCreateDesc);
    KES_REQ(aclmdlDestroyDesc);
    KES_REQ(aclmdlGetDesc);
    KES_REQ(aclmdlGetNumInputs);
    KES_REQ(aclmdlGetNumOutputs);
    KES_REQ(aclmdlGetInputSizeByIndex);
    KES_REQ(aclmdlGetOutputSizeByIndex);
    KES_REQ(aclmdlGetInputDims);
    KES_REQ(aclmdlGetOutputDims);
    KES_REQ(aclmdlGetInputDataType);
    KES_REQ(aclmdlGetOutputDataType);
    KES_REQ(aclmdlGetInputFormat);
    KES_REQ(aclmdlGetOutputFormat);
    KES_REQ(aclmdlGetInputNameByIndex);
    KES_REQ(aclmdlGetOutputNameByIndex);
    KES_REQ(aclmdlGetInputIndexByName);
    KES_REQ(aclmdlGetOutputIndexByName);
    KES_REQ(aclmdlCreateDataset);
    KES_REQ(aclmdlDestroyDataset);
    KES_REQ(aclmdlAddDatasetBuffer);
    KES_REQ(aclmdlGetDatasetNumBuffers);
    KES_REQ(aclmdlGetDatasetBuffer);
    KES_REQ(aclmdlExecute);
    KES_REQ(aclmdlExecuteAsync);
    KES_REQ(aclmdlSetDynamicBatchSize);
    KES_REQ(aclmdlSetDynamicHWSize);
    KES_OPT(aclmdlCreateAIPP);
    KES_OPT(aclmdlDestroyAIPP);
    KES_OPT(aclmdlSetAIPPInputFormat);
    KES_OPT(aclmdlSetAIPPCscParams);
    KES_OPT(aclmdlSetAIPPRbuvSwapSwitch);
    KES_OPT(aclmdlSetAIPPAxSwapSwitch);
    KES_OPT(aclmdlSetAIPPSrcImageSize);
    KES_OPT(aclmdlSetAIPPCropParams);
    KES_OPT(aclmdlSetAIPPPaddingParams);
    KES_OPT(aclmdlSetAIPPDtcPixelMean);
    KES_OPT(aclmdlSetAIPPDtcPixelMin);
    KES_OPT(aclmdlSetAIPPPixelVarReci);
    KES_OPT(aclmdlSetInputAIPP);
#undef KES_REQ
#undef KES_OPT
    return missing;
}

bool exists(const std::string& path) {
    return access(path.c_str(), F_OK) == 0;
}

// Opens `file` (a path, or a bare name for the default search). "" on success, else dlerror's text.
// extra_flags: RTLD_NODELETE for a library that must stay mapped after its dlclose.
std::string open_one(const std::string& file, void** handle, int extra_flags = 0) {
    dlerror();
    *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL | extra_flags);
    if (*handle) return "";
    const char* e = dlerror();
    return e ? e : "dlopen failed";
}

// Tries libascendcl.so, then the CANN 9 pair, in `dir` ("" = the default search). Appends what it saw to
// `tried`; returns the library with every required symbol bound, or nullptr.
std::unique_ptr<Library> try_dir(const std::string& label, const std::string& dir, Api& api, std::string& tried) {
    const bool default_search = dir.empty();
    auto path_of = [&](const char* name) { return default_search ? std::string(name) : dir + "/" + name; };
    auto note = [&](const std::string& what) {
        if (!tried.empty()) tried += "; ";
        tried += label + ": " + what;
    };
    const std::string single = path_of("libascendcl.so");
    const std::string rt = path_of("libacl_rt.so");
    const std::string mdl = path_of("libacl_mdl.so");
    if (!default_search && !exists(single) && !(exists(rt) && exists(mdl))) {
        note("no libascendcl.so (nor libacl_rt.so + libacl_mdl.so)");
        return nullptr;
    }
    auto lib = std::make_unique<Library>();
    std::string err = open_one(single, &lib->handles[0]);
    if (err.empty()) {
        lib->path = single;
    } else {
        std::string err_rt = open_one(rt, &lib->handles[0]);
        std::string err_mdl = err_rt.empty() ? open_one(mdl, &lib->handles[1]) : std::string();
        if (!err_rt.empty() || !err_mdl.empty()) {
            note(default_search ? "libascendcl.so not found by the dynamic loader" : err);
            return nullptr;
        }
        lib->path = rt + " + " + mdl;
    }
    const std::string missing = bind_all(*lib, api);
    if (!missing.empty()) {
        note(lib->path + " lacks " + missing + " (not AscendCL, or a CANN too old)");
        api = Api{};
        return nullptr;
    }
    if (default_search) {
        // Name the file the loader actually picked: that is what a user with a wrong LD_LIBRARY_PATH needs.
        Dl_info info;
        if (dladdr(reinterpret_cast<void*>(api.aclInit), &info) != 0 && info.dli_fname) lib->path = info.dli_fname;
    }
    return lib;
}

std::unique_ptr<Library> find_library(const State& s, Api& api) {
    std::vector<std::pair<std::string, std::string>> places;  // (label, dir)
    if (!s.library_dir.empty()) {
        places.emplace_back("kes_backend_set_library_dir(" + s.library_dir + ")", s.library_dir);
    } else if (!env("KES_ASCEND_LIB_DIR").empty()) {
        places.emplace_back("KES_ASCEND_LIB_DIR=" + env("KES_ASCEND_LIB_DIR"), env("KES_ASCEND_LIB_DIR"));
    }
    for (const char* var : {"ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"}) {
        const std::string v = env(var);
        if (!v.empty()) places.emplace_back(std::string("$") + var + "/lib64", v + "/lib64");
    }
    places.emplace_back("default search", "");
    places.emplace_back("/usr/local/Ascend/ascend-toolkit/latest/lib64",
                        "/usr/local/Ascend/ascend-toolkit/latest/lib64");
    const std::string home = env("HOME");
    if (!home.empty())
        places.emplace_back("$HOME/Ascend/ascend-toolkit/latest/lib64", home + "/Ascend/ascend-toolkit/latest/lib64");
    places.emplace_back("/usr/local/Ascend/cann/lib64", "/usr/local/Ascend/cann/lib64");
    places.emplace_back("/usr/local/Ascend/nnrt/latest/lib64", "/usr/local/Ascend/nnrt/latest/lib64");

    std::string tried;
    for (const auto& place : places) {
        if (auto lib = try_dir(place.first, place.second, api, tried)) return lib;
    }
    fail(KES_ERR_NOT_FOUND,
         "AscendCL (libascendcl.so) not found: %s. Install CANN and source its set_env.sh, set KES_ASCEND_LIB_DIR, "
         "or point it at Kestrel's simulator (board/ascend-sim)",
         tried.c_str());
}

[[noreturn]] void fail_stub(const Loaded& l, const char* call) {
    fail(KES_ERR_UNSUPPORTED,
         "%s returned 100039 ACL_ERROR_COMPILING_STUB_MODE: a stub library was loaded: fix LD_LIBRARY_PATH order "
         "(%s answers every call with 100039, as CANN's link-only lib64/stub/ libraries do; the real lib64 must come "
         "first)",
         call, l.library->path.c_str());
}

// Undoes what bring_up did so far; errors are logged, not thrown (this runs on failure paths too).
Error tear_down(Loaded& l, bool owns_init) noexcept {
    Error first = kSuccess;
    auto keep = [&](Error e) {
        if (first == kSuccess) first = e;
    };
    if (l.context) keep(l.api.aclrtDestroyContext(l.context));
    l.context = nullptr;
    if (l.device_set) keep(l.api.aclrtResetDevice(l.info.device_id));
    l.device_set = false;
    if (owns_init) keep(l.api.aclFinalize());
    return first;
}

// Loads, initialises, sets the device and creates Kestrel's context. Throws kes::Error.
std::unique_ptr<Loaded> bring_up(const State& s) {
    auto l = std::make_unique<Loaded>();
    l->library = find_library(s, l->api);
    l->info.library = l->library->path;
    // A runtime that carries its own copy of Kestrel (board/ascend-sim) shares this one's process-wide
    // state from its first call on: one trace, one log, one thread pool (kes/host_services.hpp).
    for (void* h : l->library->handles) attach_embedded(h);
    const Api& a = l->api;
    struct Mark {
        explicit Mark(const Api* api) { t_bringing_up = api; }
        ~Mark() { t_bringing_up = nullptr; }
    } mark(&a);

    Error e = a.aclInit(nullptr);
    if (e == kStubMode) fail_stub(*l, "aclInit");
    if (e == kRepeatInitialize) {
        // The app initialised AscendCL itself: share it, and never finalize what is not ours.
        l->info.app_owns_runtime = true;
    } else if (e != kSuccess) {
        fail_call("aclInit", e);
    }
    const bool owns = !l->info.app_owns_runtime;
    try {
        uint32_t count = 0;
        e = a.aclrtGetDeviceCount(&count);
        if (e == kStubMode) fail_stub(*l, "aclrtGetDeviceCount");
        check("aclrtGetDeviceCount", e);
        l->info.device_count = count;
        if (count == 0) {
            fail(KES_ERR_NOT_FOUND,
                 "%s loaded but aclrtGetDeviceCount reports no device (is the NPU driver loaded? "
                 "npu-smi info)",
                 l->info.library.c_str());
        }
        int32_t device = 0;
        const std::string dev_env = env("KES_ASCEND_DEVICE");
        if (!dev_env.empty()) {
            char* end = nullptr;
            const long v = std::strtol(dev_env.c_str(), &end, 10);
            if (*end != '\0' || v < 0 || v >= static_cast<long>(count)) {
                fail(KES_ERR_INVALID_ARGUMENT, "KES_ASCEND_DEVICE=%s is not a device id in 0..%u", dev_env.c_str(),
                     count - 1);
            }
            device = static_cast<int32_t>(v);
        }
        l->info.device_id = device;
        // aclrtCreateContext makes the new context current on this thread: remember the app's to put back.
        Context previous = nullptr;
        if (a.aclrtGetCurrentContext(&previous) != kSuccess) previous = nullptr;
        check("aclrtSetDevice", a.aclrtSetDevice(device));
        l->device_set = true;
        check("aclrtCreateContext", a.aclrtCreateContext(&l->context, device));
        if (previous) check("aclrtSetCurrentContext", a.aclrtSetCurrentContext(previous));
        int32_t mode = kRunModeDevice;
        check("aclrtGetRunMode", a.aclrtGetRunMode(&mode));
        l->info.run_mode = mode;
        if (a.aclrtGetSocName) {
            const char* soc = a.aclrtGetSocName();
            l->info.soc_name = soc ? soc : "";
        }
    } catch (...) {
        tear_down(*l, owns);
        throw;
    }
    return l;
}

// ---- DVPP (libacl_dvpp.so) ----------------------------------------------------------------------------

// Resolves the DVPP table from libacl_dvpp.so, and the report-thread calls from the runtime; returns ""
// or the first missing required symbol.
std::string bind_dvpp(const Library& runtime, void* dvpp_handle, DvppApi& d) {
    std::string missing;
    auto lookup = [&](const char* name) -> void* {
        if (void* p = dlsym(dvpp_handle, name)) return p;
        return runtime.symbol(name);
    };
    auto one = [&](auto*& slot, const char* name, bool required) {
        slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(lookup(name));
        if (!slot && required && missing.empty()) missing = name;
    };
#define KES_REQ(name) one(d.name, #name, true)
#define KES_OPT(name) one(d.name, #name, false)
    KES_REQ(acldvppMalloc);
    KES_REQ(acldvppFree);
    KES_REQ(acldvppCreateChannelDesc);
    KES_REQ(acldvppDestroyChannelDesc);
    KES_OPT(acldvppSetChannelDescMode);
    KES_REQ(acldvppCreateChannel);
    KES_REQ(acldvppDestroyChannel);
    KES_REQ(acldvppCreatePicDesc);
    KES_REQ(acldvppDestroyPicDesc);
    KES_REQ(acldvppSetPicDescData);
    KES_REQ(acldvppSetPicDescSize);
    KES_REQ(acldvppSetPicDescFormat);
    KES_REQ(acldvppSetPicDescWidth);
    KES_REQ(acldvppSetPicDescHeight);
    KES_REQ(acldvppSetPicDescWidthStride);
    KES_REQ(acldvppSetPicDescHeightStride);
    KES_REQ(acldvppGetPicDescData);
    KES_REQ(acldvppGetPicDescSize);
    KES_REQ(acldvppGetPicDescFormat);
    KES_REQ(acldvppGetPicDescWidth);
    KES_REQ(acldvppGetPicDescHeight);
    KES_REQ(acldvppGetPicDescWidthStride);
    KES_REQ(acldvppGetPicDescHeightStride);
    KES_REQ(acldvppGetPicDescRetCode);
    KES_REQ(acldvppCreateBatchPicDesc);
    KES_REQ(acldvppGetPicDesc);
    KES_REQ(acldvppDestroyBatchPicDesc);
    KES_REQ(acldvppCreateRoiConfig);
    KES_REQ(acldvppDestroyRoiConfig);
    KES_REQ(acldvppCreateResizeConfig);
    KES_REQ(acldvppDestroyResizeConfig);
    KES_REQ(acldvppVpcResizeAsync);
    KES_REQ(acldvppVpcCropAsync);
    KES_REQ(acldvppVpcCropAndPasteAsync);
    KES_REQ(acldvppVpcBatchCropAsync);
    KES_OPT(acldvppSetResizeConfigInterpolation);
    KES_OPT(acldvppVpcCropResizeAsync);
    KES_OPT(acldvppVpcCropResizePasteAsync);
    KES_OPT(acldvppVpcBatchCropResizeAsync);
    KES_REQ(acldvppJpegGetImageInfoV2);
    KES_REQ(acldvppJpegPredictDecSize);
    KES_REQ(acldvppJpegDecodeAsync);
    KES_REQ(acldvppCreateJpegeConfig);
    KES_REQ(acldvppDestroyJpegeConfig);
    KES_REQ(acldvppSetJpegeConfigLevel);
    KES_REQ(acldvppJpegPredictEncSize);
    KES_REQ(acldvppJpegEncodeAsync);
    KES_REQ(acldvppCreateStreamDesc);
    KES_REQ(acldvppDestroyStreamDesc);
    KES_REQ(acldvppSetStreamDescData);
    KES_REQ(acldvppSetStreamDescSize);
    KES_REQ(acldvppSetStreamDescFormat);
    KES_REQ(acldvppSetStreamDescTimestamp);
    KES_REQ(acldvppSetStreamDescEos);
    KES_REQ(acldvppGetStreamDescData);
    KES_REQ(acldvppGetStreamDescTimestamp);
    KES_REQ(acldvppGetStreamDescRetCode);
    KES_REQ(acldvppGetStreamDescEos);
    KES_REQ(aclvdecCreateChannelDesc);
    KES_REQ(aclvdecDestroyChannelDesc);
    KES_REQ(aclvdecSetChannelDescChannelId);
    KES_REQ(aclvdecSetChannelDescThreadId);
    KES_REQ(aclvdecSetChannelDescCallback);
    KES_REQ(aclvdecSetChannelDescEnType);
    KES_REQ(aclvdecSetChannelDescOutPicFormat);
    KES_REQ(aclvdecCreateChannel);
    KES_REQ(aclvdecDestroyChannel);
    KES_REQ(aclvdecCreateFrameConfig);
    KES_REQ(aclvdecDestroyFrameConfig);
    KES_REQ(aclvdecSendFrame);
    KES_REQ(aclrtSubscribeReport);
    KES_REQ(aclrtProcessReport);
    KES_REQ(aclrtUnSubscribeReport);
#undef KES_REQ
#undef KES_OPT
    return missing;
}

// The directory of the loaded runtime ("" when it came from the default search without a path).
std::string runtime_dir(const Library& lib) {
    std::string first = lib.path.substr(0, lib.path.find(" + "));
    const size_t slash = first.rfind('/');
    return slash == std::string::npos ? std::string() : first.substr(0, slash);
}

// Caller holds the lock and s.loaded is set. Tries once: libacl_dvpp.so beside the runtime, then the
// default search. Failure is remembered as the reason, never thrown: DVPP is optional (the CPU media path
// serves without it).
void ensure_dvpp(State& s) {
    Loaded& l = *s.loaded;
    if (l.dvpp_tried) return;
    l.dvpp_tried = true;
    try {
        auto lib = std::make_unique<DvppLibrary>();
        const std::string dir = runtime_dir(*l.library);
        std::string tried;
        for (const std::string& file :
             {dir.empty() ? std::string() : dir + "/libacl_dvpp.so", std::string("libacl_dvpp.so")}) {
            if (file.empty()) continue;
            // Never unmapped (RTLD_NODELETE): libacl_dvpp.so brings the codec libraries (CANN's media
            // stack on a board, FFmpeg and libjpeg-turbo in the simulator), whose process-wide state does
            // not survive an unload and a reload after kes_backend_shutdown.
            const std::string err = open_one(file, &lib->handle, RTLD_NODELETE);
            if (err.empty()) {
                lib->path = file;
                break;
            }
            if (!tried.empty()) tried += "; ";
            tried += err;
        }
        if (!lib->handle) {
            l.dvpp_reason =
                "libacl_dvpp.so (DVPP V1) not found beside " + l.library->path + " nor by the dynamic loader: " + tried;
        } else {
            const std::string missing = bind_dvpp(*l.library, lib->handle, lib->api);
            if (!missing.empty()) {
                l.dvpp_reason = lib->path + " lacks " + missing + " (not DVPP V1, or a CANN too old)";
            } else {
                KES_LOGI("sdk", "DVPP V1: %s", lib->path.c_str());
                l.dvpp = std::move(lib);
            }
        }
    } catch (const std::bad_alloc&) {
        l.dvpp_reason = "out of memory while loading libacl_dvpp.so";
    }
    if (!l.dvpp) KES_LOGI("sdk", "DVPP hardware unavailable, media runs on the CPU: %s", l.dvpp_reason.c_str());
    publish(s, s.resolution);
}

int board_for_soc(const std::string& soc) noexcept {
    if (soc == "Ascend310") return KES_BOARD_310;
    if (soc.compare(0, 10, "Ascend310B") == 0) return KES_BOARD_310B;
    return -1;
}

// Caller holds the lock. Loads the runtime if needed; throws kes::Error.
void ensure_loaded(State& s) {
    if (s.loaded) return;
    s.loaded = bring_up(s);
    const RuntimeInfo& i = s.loaded->info;
    KES_LOGI("sdk", "AscendCL: %s, SoC %s, %s run mode, device %d of %u%s", i.library.c_str(),
             i.soc_name.empty() ? "?" : i.soc_name.c_str(), i.run_mode == kRunModeHost ? "ACL_HOST" : "ACL_DEVICE",
             i.device_id, i.device_count, i.app_owns_runtime ? " (aclInit by the app)" : "");
    const int board = board_for_soc(i.soc_name);
    if (board >= 0) {
        board_adopt_from_runtime(board);
    } else if (!i.soc_name.empty()) {
        // No kes_board_get() here: resolving the board may ask for this very lock.
        KES_LOGW("sdk", "SoC %s has no Kestrel board profile (310 / 310B); the board profile stays as chosen",
                 i.soc_name.c_str());
    }
}

// Caller holds the lock.
void resolve(State& s) {
    read_requested(s);
    if (s.resolution != Resolution::kUnresolved) return;
    if (s.requested == KES_BACKEND_CPU) {
        s.failure = KES_OK;
        s.reason = "the CPU backend was requested (KES_BACKEND=cpu or kes_backend_set)";
        publish(s, Resolution::kCpu);
        return;
    }
    try {
        ensure_loaded(s);
        s.failure = KES_OK;
        s.reason.clear();
        publish(s, Resolution::kAscend);
    } catch (const kes::Error& e) {
        s.failure = e.status();
        s.reason = e.what();
        if (s.requested == KES_BACKEND_ASCEND) {
            KES_LOGE("sdk", "KES_BACKEND=ascend but Ascend is unavailable: %s", e.what());
            publish(s, Resolution::kUnavailable);
        } else {
            KES_LOGI("sdk", "Ascend unavailable, using the CPU: %s", e.what());
            publish(s, Resolution::kCpu);
        }
    } catch (const std::bad_alloc&) {
        s.failure = KES_ERR_OUT_OF_MEMORY;
        s.reason = "out of memory while loading AscendCL";
        publish(s, s.requested == KES_BACKEND_ASCEND ? Resolution::kUnavailable : Resolution::kCpu);
    }
}

Resolution resolved() noexcept {
    State& s = state();
    int r = s.published.load(std::memory_order_acquire);
    if (r != static_cast<int>(Resolution::kUnresolved)) return static_cast<Resolution>(r);
    std::lock_guard<std::mutex> lock(s.mutex);
    resolve(s);
    return s.resolution;
}

// The device-memory backend that refuses with the reason Ascend is unavailable.
class UnavailableBackend final : public DeviceBackend {
public:
    const char* name() const noexcept override { return "ascend (unavailable)"; }
    void* allocate(size_t, size_t) noexcept override { return nullptr; }
    void release(void*) noexcept override {}
    kes_status failure(std::string* detail) const noexcept override {
        State& s = state();
        std::lock_guard<std::mutex> lock(s.mutex);
        try {
            if (detail) *detail = "KES_BACKEND=ascend, but " + s.reason;
        } catch (...) {
        }
        return s.failure == KES_OK ? KES_ERR_NOT_FOUND : s.failure;
    }
};

}  // namespace

DeviceBackend* ascend_memory_backend() noexcept;  // ascend_memory.cpp

const Api* api() noexcept {
    return resolved() == Resolution::kAscend ? state().active.load(std::memory_order_acquire) : nullptr;
}

const Api& require() {
    if (const Api* a = api()) return *a;
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    fail(s.failure == KES_OK ? KES_ERR_UNSUPPORTED : s.failure, "the Ascend backend is not active: %s",
         s.reason.c_str());
}

const Api* loaded_api() noexcept {
    return state().loaded_api.load(std::memory_order_acquire);
}

const RuntimeInfo& runtime_info() noexcept {
    static const RuntimeInfo none;
    State& s = state();
    return s.loaded ? s.loaded->info : none;
}

Context context() noexcept {
    State& s = state();
    return s.loaded ? s.loaded->context : nullptr;
}

std::string recent_runtime_message() {
    // Lock-free: this runs while formatting errors, often with the state's lock held by this thread.
    const Api* a = t_bringing_up ? t_bringing_up : loaded_api();
    if (!a || !a->aclGetRecentErrMsg) return "";
    const char* m = a->aclGetRecentErrMsg();
    return m ? std::string(m) : std::string();
}

ScopedContext::ScopedContext() {
    const Api* a = loaded_api();
    if (!a) fail(KES_ERR_INTERNAL, "AscendCL is not loaded");
    Context ours = context();
    Context current = nullptr;
    if (a->aclrtGetCurrentContext(&current) != kSuccess) current = nullptr;
    if (current == ours) return;
    check("aclrtSetCurrentContext", a->aclrtSetCurrentContext(ours));
    previous_ = current;
    restore_ = current != nullptr;
}

ScopedContext::~ScopedContext() {
    if (!restore_) return;
    if (const Api* a = loaded_api()) a->aclrtSetCurrentContext(previous_);
}

DeviceBackend* device_memory_backend() noexcept {
    switch (resolved()) {
        case Resolution::kAscend: return ascend_memory_backend();
        case Resolution::kUnavailable: {
            static UnavailableBackend unavailable;
            return &unavailable;
        }
        default: return nullptr;
    }
}

bool device_memory_host_accessible() noexcept {
    switch (resolved()) {
        case Resolution::kAscend: return runtime_info().run_mode == kRunModeDevice;
        case Resolution::kUnavailable: return false;
        default: return true;
    }
}

const DvppApi* dvpp() noexcept {
    if (!api()) return nullptr;
    State& s = state();
    if (const DvppApi* d = s.dvpp_active.load(std::memory_order_acquire)) return d;
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.resolution != Resolution::kAscend || !s.loaded) return nullptr;
    ensure_dvpp(s);
    return s.loaded->dvpp ? &s.loaded->dvpp->api : nullptr;
}

const char* dvpp_reason() noexcept {
    thread_local std::string reason;
    try {
        if (dvpp()) return "";
        State& s = state();
        std::lock_guard<std::mutex> lock(s.mutex);
        if (s.resolution != Resolution::kAscend || !s.loaded) {
            reason =
                s.reason.empty() ? "the Ascend backend is not active" : "the Ascend backend is not active: " + s.reason;
        } else {
            reason = s.loaded->dvpp_reason;
        }
    } catch (...) {
        return "out of memory";
    }
    return reason.c_str();
}

bool copy(void* dst, size_t dst_capacity, const void* src, size_t count, int32_t kind) {
    const Api* a = api();
    if (!a) return false;
    ScopedContext bind;
    check("aclrtMemcpy", a->aclrtMemcpy(dst, dst_capacity, src, count, kind));
    return true;
}

int detected_board() noexcept {
    if (!api()) return -1;
    return board_for_soc(runtime_info().soc_name);
}

}  // namespace acl
}  // namespace kes

extern "C" {

kes_status kes_backend_set(kes_backend backend) {
    return kes::guard(__func__, [&] {
        const auto v = kes::enum_value(backend);
        KES_REQUIRE(v == KES_BACKEND_AUTO || v == KES_BACKEND_CPU || v == KES_BACKEND_ASCEND,
                    "backend %lld is not KES_BACKEND_AUTO, KES_BACKEND_CPU or KES_BACKEND_ASCEND",
                    static_cast<long long>(v));
        using kes::acl::Resolution;
        kes::acl::State& s = kes::acl::state();
        std::lock_guard<std::mutex> lock(s.mutex);
        kes::acl::read_requested(s);
        if (backend == KES_BACKEND_CPU) {
            s.requested = backend;
            s.resolution = Resolution::kUnresolved;
            kes::acl::resolve(s);
            return KES_OK;
        }
        if (backend == KES_BACKEND_ASCEND) {
            // Fail now, with the reason, rather than at the first allocation; the old choice stays.
            kes::acl::ensure_loaded(s);
        }
        s.requested = backend;
        s.resolution = Resolution::kUnresolved;
        if (s.loaded) {
            kes::acl::publish(s, Resolution::kAscend);
        } else {
            kes::acl::publish(s, Resolution::kUnresolved);  // auto: resolve lazily, at the next use
        }
        return KES_OK;
    });
}

kes_backend kes_backend_get(void) {
    kes::acl::State& s = kes::acl::state();
    std::lock_guard<std::mutex> lock(s.mutex);
    kes::acl::read_requested(s);
    return s.requested;
}

kes_backend kes_backend_active(void) {
    switch (kes::acl::resolved()) {
        case kes::acl::Resolution::kAscend: return KES_BACKEND_ASCEND;
        case kes::acl::Resolution::kUnavailable: return KES_BACKEND_NONE;
        default: return KES_BACKEND_CPU;
    }
}

kes_status kes_backend_query(kes_backend_info* out_info) {
    return kes::guard(__func__, [&] {
        kes::check_out_struct(out_info, KES_STRUCT_SIZE_THROUGH(kes_backend_info, reason), "out_info",
                              "kes_backend_info");
        const kes_backend active = kes_backend_active();
        kes::acl::State& s = kes::acl::state();
        std::lock_guard<std::mutex> lock(s.mutex);
        kes_backend_info i;
        std::memset(&i, 0, sizeof i);
        i.requested = s.requested;
        i.active = active;
        i.run_mode = KES_ASCEND_RUN_MODE_UNKNOWN;
        i.device_id = -1;
        i.host_accessible = active != KES_BACKEND_NONE;
        auto put = [](char* dst, size_t cap, const std::string& src) {
            const size_t n = src.size() < cap - 1 ? src.size() : cap - 1;
            std::memcpy(dst, src.data(), n);
            dst[n] = '\0';
        };
        if (s.loaded) {
            const kes::acl::RuntimeInfo& r = s.loaded->info;
            i.runtime_loaded = 1;
            i.app_owns_runtime = r.app_owns_runtime;
            i.run_mode = r.run_mode;
            i.device_count = r.device_count;
            i.device_id = r.device_id;
            put(i.soc_name, sizeof i.soc_name, r.soc_name);
            put(i.library, sizeof i.library, r.library);
            if (active == KES_BACKEND_ASCEND) i.host_accessible = r.run_mode == kes::acl::kRunModeDevice;
        }
        put(i.reason, sizeof i.reason, s.reason);
        kes::write_struct(i, out_info);
        if (active == KES_BACKEND_NONE) {
            kes::fail(s.failure == KES_OK ? KES_ERR_NOT_FOUND : s.failure, "KES_BACKEND=ascend, but %s",
                      s.reason.c_str());
        }
        return KES_OK;
    });
}

kes_status kes_backend_set_library_dir(const char* dir) {
    return kes::guard(__func__, [&] {
        kes::acl::State& s = kes::acl::state();
        std::lock_guard<std::mutex> lock(s.mutex);
        if (s.loaded) {
            KES_FAIL(KES_ERR_BUSY, "AscendCL is already loaded from %s: call kes_backend_shutdown first",
                     s.loaded->info.library.c_str());
        }
        s.library_dir = dir ? dir : "";
        // A cached "not found" must not outlive the directory it was found missing in.
        if (s.resolution != kes::acl::Resolution::kAscend) kes::acl::publish(s, kes::acl::Resolution::kUnresolved);
        return KES_OK;
    });
}

kes_status kes_backend_shutdown(void) {
    return kes::guard(__func__, [&] {
        kes::acl::State& s = kes::acl::state();
        std::lock_guard<std::mutex> lock(s.mutex);
        if (s.loaded) {
            const size_t live = kes::acl::live_device_allocations();
            if (live != 0) {
                KES_FAIL(KES_ERR_BUSY,
                         "%zu KES_MEM_DEVICE or KES_MEM_DVPP buffers or pool chunks from the Ascend backend are still "
                         "alive: free them first",
                         live);
            }
        }
        std::unique_ptr<kes::acl::Loaded> l = std::move(s.loaded);
        kes::acl::publish(s, kes::acl::Resolution::kUnresolved);
        s.failure = KES_OK;
        s.reason.clear();
        if (!l) return KES_OK;
        const bool owns = !l->info.app_owns_runtime;
        const kes::acl::Error e = kes::acl::tear_down(*l, owns);
        if (e != kes::acl::kSuccess) {
            std::string text;
            if (l->api.aclGetRecentErrMsg) {
                const char* m = l->api.aclGetRecentErrMsg();
                if (m) text = m;
            }
            KES_FAIL(kes::acl::error_status(e), "releasing AscendCL failed: %d %s (%s)%s%s", static_cast<int>(e),
                     kes::acl::error_name(e), kes::acl::error_hint(e), text.empty() ? "" : "; runtime: ", text.c_str());
        }
        return KES_OK;
    });
}

const char* kes_backend_name(kes_backend backend) {
    switch (kes::enum_value(backend)) {
        case KES_BACKEND_AUTO: return "auto";
        case KES_BACKEND_CPU: return "cpu";
        case KES_BACKEND_ASCEND: return "ascend";
        case KES_BACKEND_NONE: return "none";
    }
    return "unknown";
}

kes_status kes_backend_from_name(const char* name, kes_backend* out_backend) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(name);
        KES_REQUIRE_NOT_NULL(out_backend);
        KES_REQUIRE(*name != '\0' && kes::acl::parse_backend(name, out_backend),
                    "\"%s\" is not a backend (auto, cpu or ascend)", name);
        return KES_OK;
    });
}

}  // extern "C"
