// Chrome trace-event recorder: per-thread event buffers, written as JSON by kes_trace_stop or at exit.
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kes/error.hpp"
#include "kes/host_services.hpp"
#include "kes/logging.hpp"
#include "kestrel/trace.h"
#include "kestrel/version.h"

namespace kes {
namespace {

using Clock = std::chrono::steady_clock;

struct Event {
    const char* category;
    const char* name;
    int64_t start_ns;
    int64_t duration_ns;
};

struct OpenSpan {
    const char* category;
    const char* name;
    int64_t start_ns;
    uint64_t session;  // spans opened in an earlier recording session are dropped at end
};

struct ThreadBuffer {
    std::mutex mutex;  // uncontended except while kes_trace_stop drains this buffer
    std::vector<Event> events;
    uint64_t dropped = 0;
    uint64_t session = 0;  // which recording session `events` belongs to
    long tid = 0;
    std::vector<OpenSpan> open;  // touched only by the owning thread
};

struct Recorder {
    std::mutex mutex;  // guards everything below
    std::vector<std::shared_ptr<ThreadBuffer>> buffers;
    std::string path;
    uint64_t session = 0;
    bool atexit_registered = false;
};

std::atomic<bool> g_enabled{false};
std::atomic<uint64_t> g_session{0};
// Steady-clock time of kes_trace_start, read lock-free by spans on every thread.
std::atomic<int64_t> g_origin_ns{0};

int64_t steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

Recorder& recorder() {
    static Recorder r;
    return r;
}

int64_t now_ns() {
    return steady_ns() - g_origin_ns.load(std::memory_order_relaxed);
}

ThreadBuffer& this_thread_buffer() {
    thread_local std::shared_ptr<ThreadBuffer> buffer = [] {
        auto b = std::make_shared<ThreadBuffer>();
        b->tid = static_cast<long>(syscall(SYS_gettid));
        Recorder& r = recorder();
        std::lock_guard<std::mutex> lock(r.mutex);
        r.buffers.push_back(b);
        return b;
    }();
    return *buffer;
}

void append_json_string(std::string& out, const char* s) {
    out += '"';
    for (const char* p = s ? s : ""; *p; ++p) {
        const unsigned char c = static_cast<unsigned char>(*p);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char esc[8];
            std::snprintf(esc, sizeof esc, "\\u%04x", c);
            out += esc;
        } else {
            out += static_cast<char>(c);
        }
    }
    out += '"';
}

// Writes the JSON file. On failure returns the status and puts the reason in `why`, and records no
// last error itself: at exit this thread's thread-local storage is already destroyed (see stop_at_exit).
kes_status write_trace(Recorder& r, uint64_t session, std::string* why) {
    std::string json = "{\"traceEvents\":[\n";
    const long pid = static_cast<long>(getpid());
    uint64_t dropped = 0;
    bool first = true;
    char num[160];
    for (auto& b : r.buffers) {
        std::lock_guard<std::mutex> lock(b->mutex);
        if (b->session != session) continue;
        dropped += b->dropped;
        for (const Event& e : b->events) {
            if (!first) json += ",\n";
            first = false;
            json += "{\"name\":";
            append_json_string(json, e.name);
            json += ",\"cat\":";
            append_json_string(json, e.category);
            std::snprintf(num, sizeof num, ",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%ld,\"tid\":%ld}",
                          e.start_ns / 1000.0, e.duration_ns / 1000.0, pid, b->tid);
            json += num;
        }
        b->events.clear();
        b->events.shrink_to_fit();
        b->dropped = 0;
    }
    if (!first) json += ",\n";
    std::snprintf(num, sizeof num,
                  "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%ld,\"args\":{\"name\":\"kestrel\"}}", pid);
    json += num;
    json += "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"kestrel_version\":\"" KES_VERSION_STRING "\"";
    std::snprintf(num, sizeof num, ",\"dropped_events\":%llu}}\n", static_cast<unsigned long long>(dropped));
    json += num;

    FILE* f = std::fopen(r.path.c_str(), "wb");
    if (!f) {
        *why = format("cannot open %s for writing: %s", r.path.c_str(), std::strerror(errno));
        return KES_ERR_IO;
    }
    const bool ok = std::fwrite(json.data(), 1, json.size(), f) == json.size();
    const int write_errno = errno;
    const bool closed = std::fclose(f) == 0;
    if (!ok || !closed) {
        *why = format("cannot write %s: %s", r.path.c_str(), std::strerror(ok ? errno : write_errno));
        return KES_ERR_IO;
    }
    KES_LOGI("sdk", "trace written to %s", r.path.c_str());
    return KES_OK;
}

// Runs from exit(), after this thread's thread-local objects (the last error among them) were
// destroyed: going through kes_trace_stop would store the failure in a freed std::string, which
// glibc caught as "double free" in kes-info. So nothing here touches thread-local storage, and a
// trace that cannot be written is said on stderr, the only channel left. Programs that want a
// non-zero exit for it call kes_trace_stop() themselves before returning from main.
void stop_at_exit() {
    Recorder& r = recorder();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (!g_enabled.exchange(false)) return;
    // A copy inside a library the app's Kestrel attached (the simulator's libascendcl.so) recorded
    // nothing of its own: its spans went to the app's recorder, which writes the file. Writing here
    // too truncated the app's trace to this copy's empty one.
    if (host_services()) return;
    std::string why;
    if (write_trace(r, r.session, &why) != KES_OK)
        std::fprintf(stderr, "[kestrel E sdk] the trace was not written: %s\n", why.c_str());
}

// KES_TRACE=file.json: record from start-up and write at exit. A copy in a library loaded later starts
// too (it cannot know yet whether a Kestrel will attach it); once attached it records nothing itself.
[[maybe_unused]] const bool g_started_from_env = [] {
    const char* path = std::getenv("KES_TRACE");
    if (path && *path) {
        if (kes_trace_start(path) != KES_OK) {
            std::fprintf(stderr, "[kestrel W sdk] KES_TRACE: %s\n", kes_last_error());
        }
        return true;
    }
    return false;
}();

}  // namespace
}  // namespace kes

extern "C" {

kes_status kes_trace_start(const char* path) {
    if (const kes_host_services* host = kes::host_services()) return host->trace_start(path);
    return kes::guard(__func__, [&] {
        KES_REQUIRE(path != nullptr && *path != '\0', "path is NULL or empty");
        kes::Recorder& r = kes::recorder();
        std::lock_guard<std::mutex> lock(r.mutex);
        if (kes::g_enabled.load()) KES_FAIL(KES_ERR_BUSY, "tracing is already on (writing to %s)", r.path.c_str());
        r.path = path;
        kes::g_origin_ns.store(kes::steady_ns());
        r.session += 1;
        kes::g_session.store(r.session);
        if (!r.atexit_registered) {
            std::atexit(kes::stop_at_exit);
            r.atexit_registered = true;
        }
        kes::g_enabled.store(true);
        return KES_OK;
    });
}

kes_status kes_trace_stop(void) {
    if (const kes_host_services* host = kes::host_services()) return host->trace_stop();
    return kes::guard(__func__, [&] {
        kes::Recorder& r = kes::recorder();
        std::lock_guard<std::mutex> lock(r.mutex);
        if (!kes::g_enabled.exchange(false)) KES_FAIL(KES_ERR_NOT_FOUND, "tracing is not on");
        std::string why;
        const kes_status st = kes::write_trace(r, r.session, &why);
        if (st != KES_OK) KES_FAIL(st, "%s", why.c_str());
        return KES_OK;
    });
}

int kes_trace_enabled(void) {
    if (const kes_host_services* host = kes::host_services()) return host->trace_enabled();
    return kes::g_enabled.load(std::memory_order_relaxed) ? 1 : 0;
}

void kes_trace_begin(const char* category, const char* name) {
    if (const kes_host_services* host = kes::host_services()) return host->trace_begin(category, name);
    if (!kes::g_enabled.load(std::memory_order_acquire)) return;
    kes::ThreadBuffer& b = kes::this_thread_buffer();
    b.open.push_back(
        {category ? category : "", name ? name : "", kes::now_ns(), kes::g_session.load(std::memory_order_relaxed)});
}

void kes_trace_end(void) {
    if (const kes_host_services* host = kes::host_services()) return host->trace_end();
    kes::ThreadBuffer& b = kes::this_thread_buffer();
    if (b.open.empty()) return;
    const kes::OpenSpan span = b.open.back();
    b.open.pop_back();
    if (!kes::g_enabled.load(std::memory_order_acquire)) return;
    const int64_t end = kes::now_ns();
    std::lock_guard<std::mutex> lock(b.mutex);
    // Checked under the buffer lock: kes_trace_stop drains buffers after clearing g_enabled, so a span
    // either lands before the drain (and is written) or sees the new state here (and is dropped).
    if (!kes::g_enabled.load(std::memory_order_acquire) || span.session != kes::g_session.load()) return;
    if (b.session != span.session) {
        b.events.clear();
        b.dropped = 0;
        b.session = span.session;
    }
    if (b.events.size() >= KES_TRACE_MAX_EVENTS) {
        ++b.dropped;
        return;
    }
    b.events.push_back({span.category, span.name, span.start_ns, end - span.start_ns});
}

}  // extern "C"
