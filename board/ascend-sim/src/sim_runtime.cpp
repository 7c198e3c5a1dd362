// sim_runtime.cpp — the simulator's runtime half: aclInit/aclFinalize and the ledger, devices, contexts,
// streams, device and host memory, data buffers, errors (BOARD-RULES §AscendCL).
//
// Rules enforced, so a green test against the simulator means something:
//   - aclInit once (100002 on a repeat); calls before it fail with 100001;
//   - a current context per thread: calls that need one fail with 107002 when the thread has none;
//   - *Async work runs only when its stream is synchronised (results invisible before);
//   - ACL_HOST run mode: device memory is mapped PROT_NONE and opened only inside simulated device work,
//     so a CPU touch crashes; ACL_DEVICE mode: it is ordinary readable memory, as on the boards;
//   - ACL_HOST mode: aclrtMemcpy's kind must match where each pointer lives (device memory only from
//     aclrtMalloc/acldvppMalloc); ACL_DEVICE mode: the app's own memory is device memory, so every kind
//     copies between any two buffers (docs/SIMULATOR.md: CANN's aclrtMemcpy reads the direction from the
//     pointers, and ACLLite's CopyDataToDeviceEx passes DEVICE_TO_DEVICE from new[] memory on a board);
//     a copy that starts inside a device buffer and runs past its end is refused in both modes;
//   - aclFinalize checks a ledger of every allocation, context, stream, model, description, dataset
//     and data buffer: a leak prints each object on stderr, releases it and returns 148051. Stricter
//     than a board on purpose: CANN's aclFinalize releases what is left and returns 0 (its runtime
//     only logs per-type counts; docs/SIMULATOR.md), which hides the leak a test must catch.
//     KES_SIM_LEAK_CHECK=0 behaves as the board does (the leaks are still printed).
// Environment (read at aclInit): KES_SIM_SOC (Ascend310B4), KES_SIM_RUN_MODE (device|host),
// KES_SIM_DEVICE_COUNT (1), KES_SIM_DEVICE_MEMORY (bytes, 1 GiB), KES_SIM_TASK_MS (simulated duration
// of each stream task, 0), KES_SIM_FAIL (call:N:code,...), KES_SIM_LEAK_ABORT=1 (abort on a leak),
// KES_SIM_LEAK_CHECK=0 (aclFinalize returns 0 on a leak, as a board's does);
// KES_SIM_STUB=1 (read at every call) turns it into a link-only stub: every call returns 100039.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "kestrel/backend.h"
#include "sim.hpp"

namespace kes_sim {
namespace {

thread_local Context* t_current = nullptr;
thread_local std::string t_recent;
thread_local std::string t_recent_returned;

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

bool stub_mode() {
    const std::string v = env("KES_SIM_STUB");
    return !v.empty() && v != "0";
}

uint64_t env_u64(const char* name, uint64_t fallback) {
    const std::string v = env(name);
    if (v.empty()) return fallback;
    char* end = nullptr;
    const unsigned long long x = std::strtoull(v.c_str(), &end, 10);
    if (*end != '\0') {
        std::fprintf(stderr, "kes-ascend-sim: %s=%s is not a number; using %llu\n", name, v.c_str(),
                     static_cast<unsigned long long>(fallback));
        return fallback;
    }
    return x;
}

Config read_config() {
    Config c;
    const std::string soc = env("KES_SIM_SOC");
    if (!soc.empty()) c.soc = soc;
    const std::string mode = env("KES_SIM_RUN_MODE");
    if (mode == "host" || mode == "ACL_HOST" || mode == "1") {
        c.run_mode = 1;
    } else if (!mode.empty() && mode != "device" && mode != "ACL_DEVICE" && mode != "0") {
        std::fprintf(stderr, "kes-ascend-sim: KES_SIM_RUN_MODE=%s is not device or host; using device\n", mode.c_str());
    }
    c.device_count = static_cast<uint32_t>(env_u64("KES_SIM_DEVICE_COUNT", 1));
    c.memory_limit = env_u64("KES_SIM_DEVICE_MEMORY", c.memory_limit);
    c.task_ms = static_cast<int>(env_u64("KES_SIM_TASK_MS", 0));
    c.leak_abort = env("KES_SIM_LEAK_ABORT") == "1";
    c.leak_check = env("KES_SIM_LEAK_CHECK") != "0";
    // call:N:code[,call:N:code...]
    const std::string faults = env("KES_SIM_FAIL");
    size_t pos = 0;
    while (pos < faults.size()) {
        size_t comma = faults.find(',', pos);
        if (comma == std::string::npos) comma = faults.size();
        const std::string item = faults.substr(pos, comma - pos);
        pos = comma + 1;
        const size_t a = item.find(':'), b = item.find(':', a == std::string::npos ? a : a + 1);
        Fault f;
        if (a != std::string::npos && b != std::string::npos) {
            f.call = item.substr(0, a);
            f.nth = std::strtoull(item.substr(a + 1, b - a - 1).c_str(), nullptr, 10);
            f.code = static_cast<aclError>(std::strtol(item.substr(b + 1).c_str(), nullptr, 10));
        }
        if (f.call.empty() || f.nth == 0 || f.code == 0) {
            std::fprintf(stderr, "kes-ascend-sim: KES_SIM_FAIL item '%s' is not call:N:code (N >= 1); ignored\n",
                         item.c_str());
            continue;
        }
        c.faults.push_back(f);
    }
    return c;
}

size_t page_size() {
    static const size_t p = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return p;
}

bool host_mode() {
    return sim().config.run_mode == 1;
}

// Maps a device region; PROT_NONE in ACL_HOST mode unless device work is running.
void* map_region(size_t size, bool internal, aclError* code, bool dvpp = false) {
    Sim& s = sim();
    const size_t rounded = ((size + 31) / 32) * 32 + 32;  // acl's ALIGN_UP(size, 32) + 32
    const size_t mapped = (rounded + page_size() - 1) / page_size() * page_size();
    if (!internal && s.device_bytes + mapped > s.config.memory_limit) {
        *code = report(kRtDeviceOom, "device memory exhausted: " + std::to_string(size) + " bytes asked, " +
                                         std::to_string(s.device_bytes) + " of " +
                                         std::to_string(s.config.memory_limit) + " in use (KES_SIM_DEVICE_MEMORY)");
        return nullptr;
    }
    const int prot = host_mode() && s.open_depth == 0 ? PROT_NONE : PROT_READ | PROT_WRITE;
    void* p = mmap(nullptr, mapped, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        *code = report(kRtDeviceOom, std::string("mmap of device memory failed: ") + std::strerror(errno));
        return nullptr;
    }
    Region r;
    r.size = size;
    r.mapped = mapped;
    r.internal = internal;
    r.dvpp = dvpp;
    s.device[reinterpret_cast<uintptr_t>(p)] = r;
    if (!internal) s.device_bytes += mapped;
    *code = kOk;
    return p;
}

void unmap_region(std::map<uintptr_t, Region>::iterator it) {
    Sim& s = sim();
    if (!it->second.internal) s.device_bytes -= it->second.mapped;
    munmap(reinterpret_cast<void*>(it->first), it->second.mapped);
    s.device.erase(it);
}

void protect_all(int prot) {
    for (const auto& r : sim().device) mprotect(reinterpret_cast<void*>(r.first), r.second.mapped, prot);
}

aclError run_tasks(Stream* st, int32_t timeout_ms) {
    Sim& s = sim();
    const int64_t cost = static_cast<int64_t>(st->tasks.size()) * s.config.task_ms;
    if (timeout_ms >= 0 && cost > timeout_ms) {
        std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
        return report(kRtStreamSyncTimeout, std::to_string(st->tasks.size()) + " queued tasks need " +
                                                std::to_string(cost) + " ms, more than the " +
                                                std::to_string(timeout_ms) + " ms timeout (KES_SIM_TASK_MS)");
    }
    if (cost > 0) std::this_thread::sleep_for(std::chrono::milliseconds(cost));
    std::vector<std::function<aclError()>> tasks;
    tasks.swap(st->tasks);
    aclError first = kOk;
    DeviceWork work;
    for (auto& t : tasks) {
        const aclError e = t();
        if (e != kOk && first == kOk) first = e;
    }
    return first;
}

// Checks that a copy's pointer lies where its kind says; "" when fine. In ACL_DEVICE mode the kind
// names no place: the app's memory is the device's (aclrtMallocHost even returns device memory there),
// so only a range that leaves the device buffer it starts in is refused.
std::string placement_error(const char* what, const void* p, size_t n, bool device_side) {
    const bool in_device = device_region(p, n) != nullptr;
    const bool touches_device = device_region(p, 1) != nullptr;
    if (touches_device && !in_device) {
        return std::string(what) + " " + hex(p) + " (+" + std::to_string(n) +
               ") runs past the end of the device memory it starts in";
    }
    if (!host_mode()) return "";
    if (device_side && !in_device) {
        return std::string(what) + " " + hex(p) + " (+" + std::to_string(n) +
               ") is not inside device memory from aclrtMalloc, but the copy kind says it is (ACL_HOST run "
               "mode: the app's memory is the host's)";
    }
    if (!device_side && touches_device) {
        return std::string(what) + " " + hex(p) + " is device memory, but the copy kind says host memory";
    }
    return "";
}

aclError check_copy(const char* call, void* dst, size_t dst_max, const void* src, size_t count, aclrtMemcpyKind kind) {
    if (!dst || !src) return report(kInvalidParam, std::string(call) + ": dst or src is NULL");
    if (count > dst_max) {
        return report(kInvalidParam, std::string(call) + ": count " + std::to_string(count) + " exceeds destMax " +
                                         std::to_string(dst_max));
    }
    if (kind < 0 || kind > 4) return report(kInvalidParam, std::string(call) + ": kind " + std::to_string(kind));
    if (kind == 4) return kOk;  // ACL_MEMCPY_DEFAULT: the runtime works out where each side lives
    const bool dst_dev = kind == 1 || kind == 3, src_dev = kind == 2 || kind == 3;
    std::string e = placement_error("dst", dst, count, dst_dev);
    if (e.empty()) e = placement_error("src", src, count, src_dev);
    if (!e.empty()) return report(kInvalidParam, std::string(call) + ": " + e);
    return kOk;
}

}  // namespace

std::string hex(const void* p) {
    char b[32];
    std::snprintf(b, sizeof b, "%p", p);
    return b;
}

void* dvpp_alloc(size_t size, aclError* code) {
    return map_region(size, false, code, true);
}

aclError dvpp_free(void* p) {
    auto it = sim().device.find(reinterpret_cast<uintptr_t>(p));
    if (!p || it == sim().device.end() || !it->second.dvpp) {
        return report(kRtMemoryFree, "acldvppFree: " + hex(p) + " is not the start of live acldvppMalloc memory");
    }
    unmap_region(it);
    return kOk;
}

Sim& sim() {
    // Never destroyed: an app's static destructors may still call in at exit.
    alignas(Sim) static unsigned char storage[sizeof(Sim)];
    static Sim* s = ::new (static_cast<void*>(storage)) Sim();
    return *s;
}

aclError report(aclError code, const std::string& message) {
    t_recent = "[kes-ascend-sim] " + message;
    return code;
}

aclError enter(const char* call, int needs) {
    if (stub_mode()) return kStubMode;
    Sim& s = sim();
    if (!s.initialised) s.config = read_config();
    const uint64_t n = ++s.calls[call];
    for (const Fault& f : s.config.faults) {
        if (f.call == call && f.nth == n) {
            return report(f.code, std::string(call) + ": failure injected by KES_SIM_FAIL (call #" + std::to_string(n) +
                                      ", code " + std::to_string(f.code) + ")");
        }
    }
    if ((needs & kNeedInit) && !s.initialised) {
        return report(kUninitialize, std::string(call) + ": aclInit has not been called");
    }
    if (needs == kNeedContext && !current_context()) {
        return report(kRtContextNull, std::string(call) +
                                          ": no context is current on this thread (aclrtSetDevice, aclrtCreateContext "
                                          "or aclrtSetCurrentContext on this thread first)");
    }
    return kOk;
}

Context* current_context() {
    Sim& s = sim();
    return t_current && s.contexts.count(t_current) ? t_current : nullptr;
}

const Region* device_region(const void* p, size_t n, uintptr_t* start) {
    Sim& s = sim();
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    auto it = s.device.upper_bound(a);
    if (it == s.device.begin()) return nullptr;
    --it;
    if (a - it->first >= it->second.mapped || n > it->second.mapped - (a - it->first)) return nullptr;
    if (start) *start = it->first;
    return &it->second;
}

DeviceWork::DeviceWork() {
    Sim& s = sim();
    if (s.open_depth++ == 0 && host_mode()) protect_all(PROT_READ | PROT_WRITE);
}

DeviceWork::~DeviceWork() {
    Sim& s = sim();
    if (--s.open_depth == 0 && host_mode()) protect_all(PROT_NONE);
}

void* internal_alloc(size_t size) {
    aclError code = kOk;
    return map_region(size, true, &code);
}

void internal_free(void* p) {
    auto it = sim().device.find(reinterpret_cast<uintptr_t>(p));
    if (it != sim().device.end()) unmap_region(it);
}

aclError resolve_stream(aclrtStream stream, Stream** out) {
    Sim& s = sim();
    Context* ctx = current_context();
    if (!stream) {
        if (!ctx->default_stream) {
            ctx->default_stream = std::make_unique<Stream>();
            ctx->default_stream->context = ctx;
        }
        *out = ctx->default_stream.get();
        return kOk;
    }
    auto it = s.streams.find(static_cast<Stream*>(stream));
    if (it == s.streams.end()) return report(kRtInvalidHandle, "stream " + hex(stream) + " is not a live stream");
    if (it->second->context != ctx) {
        return report(kRtStreamContext, "stream " + hex(stream) + " belongs to another context than this thread's");
    }
    *out = it->second.get();
    return kOk;
}

}  // namespace kes_sim

using namespace kes_sim;

#define SIM_LOCK std::lock_guard<std::recursive_mutex> sim_lock_(sim().mutex)
#define SIM_ENTER(needs) \
    SIM_LOCK;            \
    if (aclError e_ = enter(__func__, (needs))) return e_

// ---- init, finalize, errors ------------------------------------------------------------------------

SIM_API aclError aclInit(const char* configPath) {
    SIM_ENTER(kNeedNothing);
    Sim& s = sim();
    if (s.initialised) return report(kRepeatInitialize, "aclInit: already initialised in this process");
    if (configPath && *configPath && access(configPath, R_OK) != 0) {
        return report(kInvalidFile, std::string("aclInit: cannot read config file ") + configPath);
    }
    s.initialised = true;
    s.ever_initialised = true;
    // The simulated NPU is the simulator's own copy of Kestrel's CPU engine: that copy must never look
    // for AscendCL itself (reading the board profile, as static AIPP does, resolves the backend and would
    // load this very library, init it again and leave a context in the app's ledger).
    kes_backend_set(KES_BACKEND_CPU);
    // The simulated device applies its own SoC's rules (static AIPP is validated against the board
    // profile), never the app's KES_BOARD or --board choice: the 310 and the 310B differ.
    if (s.config.soc == "Ascend310") {
        kes_board_set(KES_BOARD_310);
    } else if (s.config.soc.compare(0, 10, "Ascend310B") == 0) {
        kes_board_set(KES_BOARD_310B);
    }
    return kOk;
}

SIM_API aclError aclFinalize() {
    SIM_LOCK;
    if (stub_mode()) return kStubMode;
    Sim& s = sim();
    if (!s.initialised) {
        return report(s.ever_initialised ? kRepeatFinalize : kUninitialize, "aclFinalize: not initialised");
    }
    if (aclError e = enter(__func__, kNeedInit)) return e;
    std::vector<std::string> leaks;
    if (s.release_dvpp) s.release_dvpp(&leaks);  // DVPP channels and descriptions (libacl_dvpp.so)
    release_models(&leaks);
    for (auto it = s.device.begin(); it != s.device.end();) {
        auto next = std::next(it);
        if (!it->second.internal) {
            leaks.push_back(std::string(it->second.dvpp ? "DVPP memory " : "device memory ") +
                            hex(reinterpret_cast<void*>(it->first)) + " (" + std::to_string(it->second.size) +
                            (it->second.dvpp ? " bytes, acldvppMalloc)" : " bytes, aclrtMalloc)"));
        }
        unmap_region(it);
        it = next;
    }
    for (void* p : s.host) {
        leaks.push_back("host memory " + hex(p) + " (aclrtMallocHost)");
        std::free(p);
    }
    for (auto& st : s.streams) leaks.push_back("stream " + hex(st.first) + " (aclrtCreateStream)");
    {
        std::lock_guard<std::mutex> lock(s.reports.mutex);
        for (auto& sub : s.reports.subscriptions) {
            leaks.push_back("report subscription of thread " + std::to_string(sub.second) + " to stream " +
                            hex(sub.first) + " (aclrtSubscribeReport)");
        }
        s.reports.subscriptions.clear();
        s.reports.queues.clear();
    }
    for (auto& c : s.user_contexts) leaks.push_back("context " + hex(c.first) + " (aclrtCreateContext)");
    for (auto& d : s.device_refs) {
        if (d.second > 0)
            leaks.push_back("device " + std::to_string(d.first) + " set and never reset (aclrtResetDevice)");
    }
    for (aclmdlDesc* d : s.descs) {
        leaks.push_back("model description " + hex(d) + " (aclmdlCreateDesc)");
        delete d;
    }
    for (aclmdlDataset* d : s.datasets) {
        leaks.push_back("dataset " + hex(d) + " (aclmdlCreateDataset)");
        delete d;
    }
    for (aclDataBuffer* b : s.buffers) {
        leaks.push_back("data buffer " + hex(b) + " (aclCreateDataBuffer)");
        delete b;
    }
    const bool abort_on_leak = s.config.leak_abort, fail_on_leak = s.config.leak_check;
    // Back to a fresh process: the next aclInit starts over (the real runtime's behaviour after
    // aclFinalize is UNCONFIRMED; the simulator allows it so one test process can run many cases).
    s.host.clear();
    s.streams.clear();
    s.user_contexts.clear();
    s.default_contexts.clear();
    s.contexts.clear();
    s.device_refs.clear();
    s.descs.clear();
    s.datasets.clear();
    s.buffers.clear();
    s.calls.clear();
    s.device_bytes = 0;
    s.initialised = false;
    if (leaks.empty()) return kOk;
    std::string all;
    for (const std::string& l : leaks) {
        std::fprintf(stderr, "kes-ascend-sim: aclFinalize: leaked %s\n", l.c_str());
        all += (all.empty() ? "" : "; ") + l;
    }
    std::fflush(stderr);
    if (abort_on_leak) std::abort();
    if (!fail_on_leak) return kOk;  // KES_SIM_LEAK_CHECK=0: what a board's aclFinalize returns
    return report(kResourceNotCleared, "aclFinalize: " + std::to_string(leaks.size()) +
                                           " objects were never released (a board's aclFinalize would release "
                                           "them and return 0; KES_SIM_LEAK_CHECK=0 does too): " +
                                           all);
}

SIM_API const char* aclGetRecentErrMsg() {
    if (stub_mode()) return nullptr;
    if (t_recent.empty()) return nullptr;
    t_recent_returned.swap(t_recent);  // read-and-clear; the text stays valid until the next call
    t_recent.clear();
    return t_recent_returned.c_str();
}

SIM_API const char* aclrtGetSocName() {
    SIM_LOCK;
    if (stub_mode()) return nullptr;
    Sim& s = sim();
    if (!s.initialised) s.config = read_config();
    return s.config.soc.c_str();
}

// ---- devices and contexts --------------------------------------------------------------------------

SIM_API aclError aclrtGetDeviceCount(uint32_t* count) {
    SIM_ENTER(kNeedInit);
    if (!count) return report(kInvalidParam, "aclrtGetDeviceCount: count is NULL");
    *count = sim().config.device_count;
    return kOk;
}

SIM_API aclError aclrtGetRunMode(aclrtRunMode* runMode) {
    SIM_ENTER(kNeedInit);
    if (!runMode) return report(kInvalidParam, "aclrtGetRunMode: runMode is NULL");
    *runMode = sim().config.run_mode;
    return kOk;
}

SIM_API aclError aclrtSetDevice(int32_t deviceId) {
    SIM_ENTER(kNeedInit);
    Sim& s = sim();
    if (deviceId < 0 || static_cast<uint32_t>(deviceId) >= s.config.device_count) {
        return report(kRtInvalidDeviceId, "aclrtSetDevice: device " + std::to_string(deviceId) + " of " +
                                              std::to_string(s.config.device_count));
    }
    if (s.device_refs[deviceId]++ == 0) {
        auto ctx = std::make_unique<Context>();
        ctx->device = deviceId;
        ctx->is_default = true;
        s.contexts.insert(ctx.get());
        s.default_contexts[deviceId] = std::move(ctx);
    }
    t_current = s.default_contexts[deviceId].get();  // the default context becomes current on this thread
    return kOk;
}

SIM_API aclError aclrtResetDevice(int32_t deviceId) {
    SIM_ENTER(kNeedInit);
    Sim& s = sim();
    auto it = s.device_refs.find(deviceId);
    if (it == s.device_refs.end() || it->second == 0) {
        return report(kRtInvalidDeviceId, "aclrtResetDevice: device " + std::to_string(deviceId) + " was not set");
    }
    if (--it->second == 0) {
        Context* def = s.default_contexts[deviceId].get();
        s.contexts.erase(def);
        s.default_contexts.erase(deviceId);
    }
    return kOk;
}

SIM_API aclError aclrtCreateContext(aclrtContext* context, int32_t deviceId) {
    SIM_ENTER(kNeedInit);
    Sim& s = sim();
    if (!context) return report(kInvalidParam, "aclrtCreateContext: context is NULL");
    if (deviceId < 0 || static_cast<uint32_t>(deviceId) >= s.config.device_count) {
        return report(kRtInvalidDeviceId, "aclrtCreateContext: device " + std::to_string(deviceId));
    }
    auto ctx = std::make_unique<Context>();
    ctx->device = deviceId;
    Context* raw = ctx.get();
    s.contexts.insert(raw);
    s.user_contexts[raw] = std::move(ctx);
    t_current = raw;  // a new context is current on the creating thread
    *context = raw;
    return kOk;
}

SIM_API aclError aclrtDestroyContext(aclrtContext context) {
    SIM_ENTER(kNeedInit);
    Sim& s = sim();
    auto it = s.user_contexts.find(static_cast<Context*>(context));
    if (it == s.user_contexts.end()) {
        return report(kRtInvalidHandle,
                      "aclrtDestroyContext: " + hex(context) + " is not a context from aclrtCreateContext");
    }
    size_t streams = 0;
    for (auto& st : s.streams) streams += st.second->context == it->first;
    if (streams) {
        return report(kResourceNotCleared, "aclrtDestroyContext: " + std::to_string(streams) +
                                               " streams of this context are alive: destroy them first");
    }
    s.contexts.erase(it->first);
    s.user_contexts.erase(it);
    return kOk;
}

SIM_API aclError aclrtSetCurrentContext(aclrtContext context) {
    SIM_ENTER(kNeedInit);
    Sim& s = sim();
    Context* c = static_cast<Context*>(context);
    if (!c || !s.contexts.count(c)) {
        return report(kRtInvalidHandle, "aclrtSetCurrentContext: " + hex(context) + " is not a live context");
    }
    t_current = c;
    return kOk;
}

SIM_API aclError aclrtGetCurrentContext(aclrtContext* context) {
    SIM_ENTER(kNeedInit);
    if (!context) return report(kInvalidParam, "aclrtGetCurrentContext: context is NULL");
    Context* c = current_context();
    if (!c) return report(kRtContextNull, "aclrtGetCurrentContext: no context is current on this thread");
    *context = c;
    return kOk;
}

// ---- streams -----------------------------------------------------------------------------------------

SIM_API aclError aclrtCreateStream(aclrtStream* stream) {
    SIM_ENTER(kNeedContext);
    if (!stream) return report(kInvalidParam, "aclrtCreateStream: stream is NULL");
    auto st = std::make_unique<Stream>();
    st->context = current_context();
    *stream = st.get();
    sim().streams[st.get()] = std::move(st);
    return kOk;
}

SIM_API aclError aclrtDestroyStream(aclrtStream stream) {
    SIM_ENTER(kNeedContext);
    Sim& s = sim();
    auto it = s.streams.find(static_cast<Stream*>(stream));
    if (it == s.streams.end())
        return report(kRtInvalidHandle, "aclrtDestroyStream: " + hex(stream) + " is not a stream");
    if (!it->second->tasks.empty()) {
        return report(kInvalidParam, "aclrtDestroyStream: " + std::to_string(it->second->tasks.size()) +
                                         " tasks are still queued: aclrtSynchronizeStream first");
    }
    s.streams.erase(it);
    return kOk;
}

SIM_API aclError aclrtSynchronizeStream(aclrtStream stream) {
    SIM_ENTER(kNeedContext);
    Stream* st = nullptr;
    if (aclError e = resolve_stream(stream, &st)) return e;
    return run_tasks(st, -1);
}

SIM_API aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout) {
    SIM_ENTER(kNeedContext);
    if (timeout < -1) return report(kInvalidParam, "aclrtSynchronizeStreamWithTimeout: timeout < -1");
    Stream* st = nullptr;
    if (aclError e = resolve_stream(stream, &st)) return e;
    return run_tasks(st, timeout);
}

// ---- memory ----------------------------------------------------------------------------------------

SIM_API aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy) {
    SIM_ENTER(kNeedContext);
    if (!devPtr) return report(kInvalidParam, "aclrtMalloc: devPtr is NULL");
    *devPtr = nullptr;
    if (size == 0) return report(kInvalidParam, "aclrtMalloc: size is 0");
    if (policy < 0 || policy > 5) return report(kInvalidParam, "aclrtMalloc: policy " + std::to_string(policy));
    aclError code = kOk;
    *devPtr = map_region(size, false, &code);
    return code;
}

SIM_API aclError aclrtFree(void* devPtr) {
    SIM_ENTER(kNeedContext);
    Sim& s = sim();
    auto it = s.device.find(reinterpret_cast<uintptr_t>(devPtr));
    if (!devPtr || it == s.device.end() || it->second.internal) {
        return report(kRtMemoryFree, "aclrtFree: " + hex(devPtr) + " is not the start of live aclrtMalloc memory");
    }
    if (it->second.dvpp) {
        return report(kRtMemoryFree, "aclrtFree: " + hex(devPtr) + " is DVPP memory: free it with acldvppFree");
    }
    unmap_region(it);
    return kOk;
}

SIM_API aclError aclrtMallocHost(void** hostPtr, size_t size) {
    SIM_ENTER(kNeedContext);
    if (!hostPtr || size == 0) return report(kInvalidParam, "aclrtMallocHost: hostPtr is NULL or size is 0");
    void* p = nullptr;
    if (posix_memalign(&p, 128, size) != 0) return report(200000, "aclrtMallocHost: out of host memory");
    sim().host.insert(p);
    *hostPtr = p;
    return kOk;
}

SIM_API aclError aclrtFreeHost(void* hostPtr) {
    SIM_ENTER(kNeedContext);
    if (!sim().host.erase(hostPtr)) {
        return report(kInvalidParam, "aclrtFreeHost: " + hex(hostPtr) + " is not from aclrtMallocHost");
    }
    std::free(hostPtr);
    return kOk;
}

SIM_API aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind) {
    SIM_ENTER(kNeedContext);
    if (aclError e = check_copy("aclrtMemcpy", dst, destMax, src, count, kind)) return e;
    DeviceWork work;
    std::memmove(dst, src, count);
    return kOk;
}

SIM_API aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                                  aclrtStream stream) {
    SIM_ENTER(kNeedContext);
    if (aclError e = check_copy("aclrtMemcpyAsync", dst, destMax, src, count, kind)) return e;
    Stream* st = nullptr;
    if (aclError e = resolve_stream(stream, &st)) return e;
    st->tasks.push_back([dst, src, count] {
        std::memmove(dst, src, count);
        return aclError{kOk};
    });
    return kOk;
}

SIM_API aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count) {
    SIM_ENTER(kNeedContext);
    if (!devPtr || count > maxCount) return report(kInvalidParam, "aclrtMemset: devPtr is NULL or count > maxCount");
    if (!device_region(devPtr, count)) {
        return report(kInvalidParam,
                      "aclrtMemset: " + hex(devPtr) + " (+" + std::to_string(count) + ") is not inside device memory");
    }
    DeviceWork work;
    std::memset(devPtr, value, count);
    return kOk;
}

// ---- data buffers ----------------------------------------------------------------------------------

SIM_API aclDataBuffer* aclCreateDataBuffer(void* data, size_t size) {
    SIM_LOCK;
    if (enter(__func__, kNeedInit) != kOk) return nullptr;
    if (!data && size != 0) {
        report(kInvalidParam, "aclCreateDataBuffer: data is NULL with size " + std::to_string(size));
        return nullptr;
    }
    auto* b = new aclDataBuffer;
    b->data = data;
    b->size = size;
    sim().buffers.insert(b);
    return b;
}

SIM_API aclError aclDestroyDataBuffer(const aclDataBuffer* dataBuffer) {
    SIM_ENTER(kNeedInit);
    auto* b = const_cast<aclDataBuffer*>(dataBuffer);
    if (!sim().buffers.erase(b)) {
        return report(kInvalidParam, "aclDestroyDataBuffer: " + hex(dataBuffer) + " is not a live data buffer");
    }
    delete b;
    return kOk;
}

// Points a live buffer at other memory (acl_base.h: a dataset's buffer reused for a new input, as apps do
// to feed a DVPP picture to a model without a copy). The memory is checked when a model runs on it.
SIM_API aclError aclUpdateDataBuffer(aclDataBuffer* dataBuffer, void* data, size_t size) {
    SIM_ENTER(kNeedInit);
    if (!sim().buffers.count(dataBuffer))
        return report(kInvalidParam, "aclUpdateDataBuffer: " + hex(dataBuffer) + " is not a live data buffer");
    if (!data && size != 0)
        return report(kInvalidParam, "aclUpdateDataBuffer: data is NULL with size " + std::to_string(size));
    dataBuffer->data = data;
    dataBuffer->size = size;
    return kOk;
}

SIM_API void* aclGetDataBufferAddr(const aclDataBuffer* dataBuffer) {
    SIM_LOCK;
    if (stub_mode() || !sim().buffers.count(const_cast<aclDataBuffer*>(dataBuffer))) return nullptr;
    return dataBuffer->data;
}

SIM_API size_t aclGetDataBufferSizeV2(const aclDataBuffer* dataBuffer) {
    SIM_LOCK;
    if (stub_mode() || !sim().buffers.count(const_cast<aclDataBuffer*>(dataBuffer))) return 0;
    return dataBuffer->size;
}

SIM_API uint32_t aclGetDataBufferSize(const aclDataBuffer* dataBuffer) {
    return static_cast<uint32_t>(aclGetDataBufferSizeV2(dataBuffer));
}
