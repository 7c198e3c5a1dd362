// Test helper: collects Kestrel's warnings and errors while alive, so tests can assert on them and
// expected warnings (leak reports, refused frees) stay off stderr.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "kestrel/log.h"

namespace kes_test {

class LogCapture {
public:
    LogCapture() : old_level_(kes_log_get_level()) {
        kes_log_set_level(KES_LOG_WARN);
        kes_log_set_callback(&LogCapture::on_log, this);
    }
    ~LogCapture() {
        kes_log_set_callback(nullptr, nullptr);
        kes_log_set_level(old_level_);
    }
    LogCapture(const LogCapture&) = delete;
    LogCapture& operator=(const LogCapture&) = delete;

    // Every captured message (errors and warnings).
    std::vector<std::string> lines() {
        std::lock_guard<std::mutex> lock(mutex_);
        return lines_;
    }
    // Only the KES_LOG_WARN messages.
    std::vector<std::string> warnings() {
        std::lock_guard<std::mutex> lock(mutex_);
        return warnings_;
    }

private:
    static void on_log(kes_log_level level, const char*, const char* message, void* user) {
        auto* self = static_cast<LogCapture*>(user);
        std::lock_guard<std::mutex> lock(self->mutex_);
        self->lines_.emplace_back(message);
        if (level == KES_LOG_WARN) self->warnings_.emplace_back(message);
    }
    kes_log_level old_level_;
    std::mutex mutex_;
    std::vector<std::string> lines_;
    std::vector<std::string> warnings_;
};

}  // namespace kes_test
