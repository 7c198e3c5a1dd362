// test_deps.hpp — how a test skips for a missing dependency (test clips, the RTSP server, the ONNX node
// tests, the real models): KES_TEST_SKIP(message) skips on a developer's machine, and fails when
// KES_REQUIRE_TEST_DEPS is set (./kestrel.sh test sets it under CI=true), so the suite cannot pass by
// not running (issue 15 §4). Use it in a TEST body (both branches return from it).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

namespace kes_test {

inline bool test_deps_required() {
    const char* v = std::getenv("KES_REQUIRE_TEST_DEPS");
    return v && *v && std::strcmp(v, "0") != 0;
}

}  // namespace kes_test

#define KES_TEST_SKIP(message)                                                              \
    do {                                                                                    \
        if (kes_test::test_deps_required()) FAIL() << "required, but missing: " << message; \
        GTEST_SKIP() << message;                                                            \
    } while (0)
