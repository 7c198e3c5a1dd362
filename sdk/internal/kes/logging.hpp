// kes/logging.hpp — internal logging macros over kestrel/log.h (not installed).
// The level test comes first so a disabled message costs one relaxed atomic load and no formatting.
#pragma once

#include "kestrel/log.h"

namespace kes {
bool log_enabled(kes_log_level level) noexcept;
void log_message(kes_log_level level, const char* module, const char* fmt, ...) noexcept
    __attribute__((format(printf, 3, 4)));
}  // namespace kes

#define KES_LOG(level, module, ...)                                                    \
    do {                                                                               \
        if (::kes::log_enabled(level)) ::kes::log_message(level, module, __VA_ARGS__); \
    } while (0)
#define KES_LOGE(module, ...) KES_LOG(KES_LOG_ERROR, module, __VA_ARGS__)
#define KES_LOGW(module, ...) KES_LOG(KES_LOG_WARN, module, __VA_ARGS__)
#define KES_LOGI(module, ...) KES_LOG(KES_LOG_INFO, module, __VA_ARGS__)
#define KES_LOGD(module, ...) KES_LOG(KES_LOG_DEBUG, module, __VA_ARGS__)
#define KES_LOGT(module, ...) KES_LOG(KES_LOG_TRACE, module, __VA_ARGS__)
