// Status strings, the thread-local last error, and the exception → status bridge (kes/error.hpp).
#include <cstdarg>
#include <cstdio>
#include <new>
#include <string>

#include "kes/error.hpp"
#include "kes/logging.hpp"
#include "kes/math.hpp"

namespace kes {
namespace {

struct LastError {
    kes_status status = KES_OK;
    std::string message;
};

LastError& last_error() {
    thread_local LastError error;
    return error;
}

std::string vformat(const char* fmt, va_list args) {
    va_list copy;
    va_copy(copy, args);
    char small[256];
    const int n = std::vsnprintf(small, sizeof small, fmt, copy);
    va_end(copy);
    if (n < 0) return fmt;
    if (static_cast<size_t>(n) < sizeof small) return std::string(small, static_cast<size_t>(n));
    std::string out(static_cast<size_t>(n) + 1, '\0');
    std::vsnprintf(&out[0], out.size(), fmt, args);
    out.resize(static_cast<size_t>(n));
    return out;
}

kes_status store(kes_status status, std::string message) noexcept {
    try {
        LastError& e = last_error();
        e.status = status;
        e.message = std::move(message);
    } catch (...) {
        // Out of memory while recording an error: keep the status, drop the text.
        last_error().status = status;
    }
    // Failures are normal control flow for callers (a full pool, a bad file), so they log at debug.
    KES_LOGD("sdk", "%s: %s", kes_status_str(status), last_error().message.c_str());
    return status;
}

}  // namespace

std::string format(const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    std::string s = vformat(fmt, args);
    va_end(args);
    return s;
}

void fail(kes_status status, const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    std::string s = vformat(fmt, args);
    va_end(args);
    throw Error(status, std::move(s));
}

kes_status set_error(kes_status status, const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    std::string s;
    try {
        s = vformat(fmt, args);
    } catch (...) {
    }
    va_end(args);
    return store(status, std::move(s));
}

kes_status record_exception(const char* fn, const std::exception_ptr& e) noexcept {
    const char* name = fn ? fn : "kestrel";
    try {
        std::rethrow_exception(e);
    } catch (const Error& err) {
        return store(err.status(), std::string(name) + ": " + err.what());
    } catch (const std::bad_alloc&) {
        return store(KES_ERR_OUT_OF_MEMORY, std::string(name) + ": out of host memory");
    } catch (const std::exception& ex) {
        return store(KES_ERR_INTERNAL, std::string(name) + ": internal error: " + ex.what());
    } catch (...) {
        return store(KES_ERR_INTERNAL, std::string(name) + ": internal error: unknown exception");
    }
}

}  // namespace kes

extern "C" {

const char* kes_status_str(kes_status status) {
    switch (kes::enum_value(status)) {
        case KES_OK: return "KES_OK";
        case KES_ERR_INVALID_ARGUMENT: return "KES_ERR_INVALID_ARGUMENT";
        case KES_ERR_UNSUPPORTED: return "KES_ERR_UNSUPPORTED";
        case KES_ERR_OUT_OF_MEMORY: return "KES_ERR_OUT_OF_MEMORY";
        case KES_ERR_IO: return "KES_ERR_IO";
        case KES_ERR_CORRUPT_DATA: return "KES_ERR_CORRUPT_DATA";
        case KES_ERR_NOT_FOUND: return "KES_ERR_NOT_FOUND";
        case KES_ERR_BUSY: return "KES_ERR_BUSY";
        case KES_ERR_TIMEOUT: return "KES_ERR_TIMEOUT";
        case KES_ERR_INTERNAL: return "KES_ERR_INTERNAL";
    }
    return "KES_ERR_UNKNOWN";
}

const char* kes_last_error(void) {
    return kes::last_error().message.c_str();
}

kes_status kes_last_status(void) {
    return kes::last_error().status;
}

void kes_clear_error(void) {
    kes::LastError& e = kes::last_error();
    e.status = KES_OK;
    e.message.clear();
}

}  // extern "C"
