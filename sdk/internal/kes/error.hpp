// kes/error.hpp — how Kestrel's C++ internals report failures through the C API.
//
// Shared by the sdk and the modules built on it (dvpp, aipp, engine, fv); not installed. Inside
// Kestrel a failure is a kes::Error exception carrying a kes_status and a message. Every C entry point
// wraps its body in kes::guard(), which turns any exception into a status plus this thread's
// kes_last_error() text, prefixed with the entry point's name — so no exception crosses the C boundary
// and every message says which call failed.
//
//   kes_status kes_widget_poke(kes_widget* w, int n) {
//       return kes::guard(__func__, [&] {
//           KES_REQUIRE(w != nullptr, "widget is NULL");
//           KES_REQUIRE(n >= 0, "n must be >= 0 (got %d)", n);
//           ...
//           return KES_OK;
//       });
//   }
#pragma once

#include <exception>
#include <string>

#include "kestrel/status.h"

namespace kes {

class Error : public std::exception {
public:
    Error(kes_status status, std::string message) : status_(status), message_(std::move(message)) {}
    kes_status status() const noexcept { return status_; }
    const char* what() const noexcept override { return message_.c_str(); }

private:
    kes_status status_;
    std::string message_;
};

// printf-style formatting into a std::string.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Throws kes::Error(status, formatted message).
[[noreturn]] void fail(kes_status status, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// Records status + message as this thread's last error and returns status; for paths that return
// instead of throwing. The message should already name the failing call.
kes_status set_error(kes_status status, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// Records an exception caught at the C boundary of function `fn` and returns its status.
kes_status record_exception(const char* fn, const std::exception_ptr& e) noexcept;

template <class Body>
kes_status guard(const char* fn, Body&& body) noexcept {
    try {
        return body();
    } catch (...) {
        return record_exception(fn, std::current_exception());
    }
}

}  // namespace kes

#define KES_FAIL(status, ...) ::kes::fail((status), __VA_ARGS__)
// Argument checks: a violated rule is the caller's mistake → KES_ERR_INVALID_ARGUMENT.
#define KES_REQUIRE(cond, ...)                                           \
    do {                                                                 \
        if (!(cond)) ::kes::fail(KES_ERR_INVALID_ARGUMENT, __VA_ARGS__); \
    } while (0)
#define KES_REQUIRE_NOT_NULL(ptr) KES_REQUIRE((ptr) != nullptr, "%s is NULL", #ptr)
