// Process-wide log sink: level filter (atomic), optional callback, stderr by default. A copy of Kestrel in
// a library the app's Kestrel attached uses the app's (kes/host_services.hpp).
#include <atomic>
#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "kes/error.hpp"
#include "kes/host_services.hpp"
#include "kes/logging.hpp"
#include "kes/math.hpp"

namespace kes {
namespace {

constexpr int kLevelUnset = -1;
std::atomic<int> g_level{kLevelUnset};

struct Sink {
    std::mutex mutex;  // guards the callback pair and serialises stderr lines
    kes_log_callback callback = nullptr;
    void* user_data = nullptr;
};
Sink& sink() {
    static Sink s;
    return s;
}

bool parse_level(const char* name, kes_log_level* out) {
    if (!name) return false;
    static const char* const kNames[] = {"off", "error", "warn", "info", "debug", "trace"};
    if (name[0] >= '0' && name[0] <= '5' && name[1] == '\0') {
        *out = static_cast<kes_log_level>(name[0] - '0');
        return true;
    }
    for (int i = 0; i <= KES_LOG_TRACE; ++i) {
        const char* a = name;
        const char* b = kNames[i];
        while (*a && *b && std::tolower(static_cast<unsigned char>(*a)) == *b) ++a, ++b;
        if (*a == '\0' && *b == '\0') {
            *out = static_cast<kes_log_level>(i);
            return true;
        }
    }
    if (std::strcmp(name, "warning") == 0) {
        *out = KES_LOG_WARN;
        return true;
    }
    return false;
}

int current_level() noexcept {
    int level = g_level.load(std::memory_order_relaxed);
    if (level != kLevelUnset) return level;
    // First use: KES_LOG_LEVEL decides, else warnings and errors only.
    kes_log_level from_env = KES_LOG_WARN;
    const char* env = std::getenv("KES_LOG_LEVEL");
    const bool bad_env = env && *env && !parse_level(env, &from_env);
    int expected = kLevelUnset;
    g_level.compare_exchange_strong(expected, from_env, std::memory_order_relaxed);
    if (bad_env) {
        std::fprintf(stderr,
                     "[kestrel W sdk] KES_LOG_LEVEL=%s is not off|error|warn|info|debug|trace|0..5; using warn\n", env);
    }
    return g_level.load(std::memory_order_relaxed);
}

const char kLetters[] = "-EWIDT";

void vlog(kes_log_level level, const char* module, const char* fmt, va_list args) noexcept {
    char buf[1024];
    std::vsnprintf(buf, sizeof buf, fmt, args);
    // A copy in a library the app's Kestrel attached (the simulator) logs through the app's sink: its
    // callback, its stderr lock.
    if (const kes_host_services* host = host_services()) {
        host->log_write(level, module ? module : "app", "%s", buf);
        return;
    }
    Sink& s = sink();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.callback) {
        s.callback(level, module ? module : "app", buf, s.user_data);
    } else {
        std::fprintf(stderr, "[kestrel %c %s] %s\n", kLetters[level], module ? module : "app", buf);
    }
}

}  // namespace

bool log_enabled(kes_log_level level) noexcept {
    if (const kes_host_services* host = host_services())
        return level != KES_LOG_OFF && static_cast<int>(level) <= static_cast<int>(host->log_get_level());
    return level != KES_LOG_OFF && static_cast<int>(level) <= current_level();
}

void log_message(kes_log_level level, const char* module, const char* fmt, ...) noexcept {
    va_list args;
    va_start(args, fmt);
    vlog(level, module, fmt, args);
    va_end(args);
}

}  // namespace kes

extern "C" {

kes_status kes_log_set_level(kes_log_level level) {
    if (const kes_host_services* host = kes::host_services()) return host->log_set_level(level);
    const int64_t value = kes::enum_value(level);
    if (value < KES_LOG_OFF || value > KES_LOG_TRACE) {
        return kes::set_error(KES_ERR_INVALID_ARGUMENT, "kes_log_set_level: level %lld is outside %d..%d",
                              static_cast<long long>(value), KES_LOG_OFF, KES_LOG_TRACE);
    }
    kes::g_level.store(static_cast<int>(value), std::memory_order_relaxed);
    return KES_OK;
}

kes_log_level kes_log_get_level(void) {
    if (const kes_host_services* host = kes::host_services()) return host->log_get_level();
    return static_cast<kes_log_level>(kes::current_level());
}

void kes_log_set_callback(kes_log_callback callback, void* user_data) {
    if (const kes_host_services* host = kes::host_services()) return host->log_set_callback(callback, user_data);
    kes::Sink& s = kes::sink();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.callback = callback;
    s.user_data = user_data;
}

void kes_log_write(kes_log_level level, const char* module, const char* format, ...) {
    const int64_t value = kes::enum_value(level);
    if (!format || value <= KES_LOG_OFF || value > KES_LOG_TRACE || !kes::log_enabled(level)) return;
    va_list args;
    va_start(args, format);
    kes::vlog(level, module, format, args);
    va_end(args);
}

const char* kes_log_level_name(kes_log_level level) {
    switch (kes::enum_value(level)) {
        case KES_LOG_OFF: return "off";
        case KES_LOG_ERROR: return "error";
        case KES_LOG_WARN: return "warn";
        case KES_LOG_INFO: return "info";
        case KES_LOG_DEBUG: return "debug";
        case KES_LOG_TRACE: return "trace";
    }
    return "unknown";
}

kes_status kes_log_level_from_name(const char* name, kes_log_level* out_level) {
    if (!name || !out_level) {
        return kes::set_error(KES_ERR_INVALID_ARGUMENT, "kes_log_level_from_name: %s is NULL",
                              name ? "out_level" : "name");
    }
    if (!kes::parse_level(name, out_level)) {
        return kes::set_error(KES_ERR_INVALID_ARGUMENT,
                              "kes_log_level_from_name: \"%s\" is not off|error|warn|info|debug|trace|0..5", name);
    }
    return KES_OK;
}

}  // extern "C"
