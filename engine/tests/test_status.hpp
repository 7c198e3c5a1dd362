// status_of: runs f and returns the kes::Error status it throws (KES_OK when it returns), with the
// message in *message — for the converter tests that call the C++ pipeline directly.
#pragma once

#include <functional>
#include <string>

#include "kes/error.hpp"

namespace kes_test {

inline kes_status status_of(const std::function<void()>& f, std::string* message = nullptr) {
    try {
        f();
    } catch (const kes::Error& e) {
        if (message) *message = e.what();
        return e.status();
    }
    return KES_OK;
}

}  // namespace kes_test
