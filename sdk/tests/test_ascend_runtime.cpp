// The AscendCL loader, error mapping, backend choice and lifecycle, against Kestrel's simulator.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>

#include "ascend_test_env.hpp"
#include "kes/ascend.hpp"
#include "kes/struct_size.hpp"
#include "kestrel/memory.h"
#include "struct_size_check.hpp"

using namespace kes_test;

namespace {

kes_backend_info query(kes_status* status = nullptr) {
    kes_backend_info info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    const kes_status st = kes_backend_query(&info);
    if (status) *status = st;
    return info;
}

}  // namespace

using AscendLoader = AscendTest;
using AscendBackend = AscendTest;
using AscendLifecycle = AscendTest;

TEST_F(AscendLoader, FindsTheSimulatorThroughKesAscendLibDir) {
    kes_status st = KES_ERR_INTERNAL;
    const kes_backend_info info = query(&st);
    ASSERT_EQ(st, KES_OK) << kes_last_error();
    EXPECT_EQ(info.active, KES_BACKEND_ASCEND) << info.reason;
    EXPECT_EQ(info.runtime_loaded, 1u);
    EXPECT_EQ(std::string(info.library), std::string(KES_ASCEND_SIM_DIR) + "/libascendcl.so");
    EXPECT_STREQ(info.soc_name, "Ascend310B4");
    EXPECT_EQ(info.run_mode, KES_ASCEND_RUN_MODE_DEVICE);
    EXPECT_EQ(info.device_count, 1u);
    EXPECT_EQ(info.device_id, 0);
    EXPECT_EQ(info.app_owns_runtime, 0u);
    EXPECT_EQ(kes_backend_active(), KES_BACKEND_ASCEND);
}

TEST_F(AscendLoader, MissingLibraryFallsBackToCpuUnderAuto) {
    setenv("KES_ASCEND_LIB_DIR", "/nonexistent/kestrel-test", 1);
    kes_status st = KES_ERR_INTERNAL;
    const kes_backend_info info = query(&st);
    ASSERT_EQ(st, KES_OK) << kes_last_error();
    EXPECT_EQ(info.active, KES_BACKEND_CPU);
    EXPECT_EQ(info.runtime_loaded, 0u);
    EXPECT_NE(std::strstr(info.reason, "not found"), nullptr) << info.reason;
    EXPECT_NE(std::strstr(info.reason, "KES_ASCEND_LIB_DIR=/nonexistent/kestrel-test"), nullptr) << info.reason;
    // KES_MEM_DEVICE is then host memory, exactly as before the Ascend backend existed.
    void* p = nullptr;
    ASSERT_EQ(kes_mem_alloc(KES_MEM_DEVICE, 100, &p), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_mem_is_host_accessible(KES_MEM_DEVICE), 1);
    std::memset(p, 7, 100);
    kes_mem_free(p);
}

TEST_F(AscendLoader, MissingLibraryUnderAscendFailsClearly) {
    setenv("KES_ASCEND_LIB_DIR", "/nonexistent/kestrel-test", 1);
    EXPECT_EQ(kes_backend_set(KES_BACKEND_ASCEND), KES_ERR_NOT_FOUND);
    EXPECT_NE(std::strstr(kes_last_error(), "libascendcl.so) not found"), nullptr) << kes_last_error();
    EXPECT_EQ(kes_backend_get(), KES_BACKEND_AUTO);  // the old choice stays

    EXPECT_EQ(kes_backend_active(), KES_BACKEND_CPU);  // auto: the CPU serves
}

TEST_F(AscendLoader, KesBackendEnvironmentAscendWithoutLibraryRefusesDeviceMemory) {
    setenv("KES_ASCEND_LIB_DIR", "/nonexistent/kestrel-test", 1);
    setenv("KES_BACKEND", "ascend", 1);
    void* p = nullptr;
    EXPECT_EQ(kes_mem_alloc(KES_MEM_DEVICE, 64, &p), KES_ERR_NOT_FOUND);
    EXPECT_NE(std::strstr(kes_last_error(), "KES_BACKEND=ascend, but AscendCL (libascendcl.so) not found"), nullptr)
        << kes_last_error();
    EXPECT_EQ(kes_backend_active(), KES_BACKEND_NONE);
    kes_status st = KES_OK;
    const kes_backend_info info = query(&st);
    EXPECT_EQ(st, KES_ERR_NOT_FOUND);
    EXPECT_EQ(info.active, KES_BACKEND_NONE);
    EXPECT_EQ(kes_mem_is_host_accessible(KES_MEM_DEVICE), 0);
}

TEST_F(AscendLoader, StubLibraryIsRecognisedAndNamed) {
    setenv("KES_SIM_STUB", "1", 1);
    const kes_backend_info info = query();
    EXPECT_EQ(info.active, KES_BACKEND_CPU);
    EXPECT_NE(std::strstr(info.reason, "a stub library was loaded: fix LD_LIBRARY_PATH order"), nullptr) << info.reason;
    EXPECT_NE(std::strstr(info.reason, "100039"), nullptr) << info.reason;
    EXPECT_EQ(kes_backend_set(KES_BACKEND_ASCEND), KES_ERR_UNSUPPORTED);
    EXPECT_NE(std::strstr(kes_last_error(), "a stub library was loaded"), nullptr) << kes_last_error();
}

TEST_F(AscendLoader, ApiDirectoryComesBeforeTheEnvironment) {
    setenv("KES_ASCEND_LIB_DIR", "/nonexistent/kestrel-test", 1);
    ASSERT_EQ(kes_backend_set_library_dir(KES_ASCEND_SIM_DIR), KES_OK);
    EXPECT_EQ(kes_backend_active(), KES_BACKEND_ASCEND);
    // Once loaded, the directory cannot change under the running runtime.
    EXPECT_EQ(kes_backend_set_library_dir("/elsewhere"), KES_ERR_BUSY);
    EXPECT_NE(std::strstr(kes_last_error(), "kes_backend_shutdown"), nullptr) << kes_last_error();
}

TEST_F(AscendBackend, CpuChoiceNeverLoadsTheRuntime) {
    ASSERT_EQ(kes_backend_set(KES_BACKEND_CPU), KES_OK);
    const kes_backend_info info = query();
    EXPECT_EQ(info.active, KES_BACKEND_CPU);
    EXPECT_EQ(info.runtime_loaded, 0u);
    EXPECT_EQ(kes::acl::api(), nullptr);
    EXPECT_EQ(kes_backend_set(KES_BACKEND_ASCEND), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_backend_active(), KES_BACKEND_ASCEND);
}

TEST_F(AscendBackend, NamesRoundTripAndBadValuesAreRefused) {
    kes_backend b;
    EXPECT_EQ(kes_backend_from_name("NPU", &b), KES_OK);
    EXPECT_EQ(b, KES_BACKEND_ASCEND);
    EXPECT_STREQ(kes_backend_name(KES_BACKEND_CPU), "cpu");
    EXPECT_EQ(kes_backend_from_name("gpu", &b), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_backend_set(static_cast<kes_backend>(7)), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_backend_set(KES_BACKEND_NONE), KES_ERR_INVALID_ARGUMENT);
    kes_backend_info info;
    info.struct_size = 3;
    EXPECT_EQ(kes_backend_query(&info), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_backend_query(nullptr), KES_ERR_INVALID_ARGUMENT);
}

// struct_size (kes/struct_size.hpp): an app built against another release's kes_backend_info gets the
// fields it has (a newer one its unknown tail zeroed); only sizeof(kes_backend_info) was accepted.
TEST_F(AscendBackend, InfoOfAnyReleaseIsFilled) {
    kes_test::expect_out_struct_growth<kes_backend_info>(KES_STRUCT_SIZE_THROUGH(kes_backend_info, reason),
                                                         [](kes_backend_info* i) { return kes_backend_query(i); });
}

TEST_F(AscendBackend, SocName310SelectsThe310Profile) {
    setenv("KES_SIM_SOC", "Ascend310", 1);
    EXPECT_EQ(kes_board_get(), KES_BOARD_310);
}

TEST_F(AscendBackend, SocName310B4SelectsThe310BProfile) {
    setenv("KES_SIM_SOC", "Ascend310B4", 1);
    ASSERT_EQ(kes_board_set(KES_BOARD_310), KES_OK);  // an app's choice ...
    EXPECT_EQ(kes_backend_active(), KES_BACKEND_ASCEND);
    EXPECT_EQ(kes_board_get(), KES_BOARD_310);  // ... is never overridden by the SoC
}

TEST_F(AscendBackend, UnknownSocKeepsTheDefaultProfile) {
    setenv("KES_SIM_SOC", "Ascend310P3", 1);
    EXPECT_EQ(kes_backend_active(), KES_BACKEND_ASCEND);
    EXPECT_EQ(kes_board_get(), KES_BOARD_310B);
}

TEST(AscendErrors, CodesHaveNamesStatusesAndHints) {
    EXPECT_STREQ(kes::acl::error_name(207018), "ACL_ERROR_RT_DEVICE_OOM");
    EXPECT_EQ(kes::acl::error_status(207018), KES_ERR_OUT_OF_MEMORY);
    EXPECT_EQ(kes::acl::error_status(100039), KES_ERR_UNSUPPORTED);
    EXPECT_EQ(kes::acl::error_status(507046), KES_ERR_TIMEOUT);
    EXPECT_EQ(kes::acl::error_status(545001), KES_ERR_CORRUPT_DATA);
    EXPECT_EQ(kes::acl::error_status(0), KES_OK);
    EXPECT_STREQ(kes::acl::error_name(123456), "unknown AscendCL error");
    EXPECT_EQ(kes::acl::error_status(123456), KES_ERR_INVALID_ARGUMENT);  // 1xxxxx: the caller's
    EXPECT_EQ(kes::acl::error_status(299999), KES_ERR_UNSUPPORTED);
    EXPECT_EQ(kes::acl::error_status(599999), KES_ERR_INTERNAL);
    const std::string d = kes::acl::describe("aclmdlExecute", 507011);
    EXPECT_NE(d.find("aclmdlExecute failed: 507011 ACL_ERROR_RT_MODEL_EXECUTE ("), std::string::npos) << d;
    EXPECT_NE(std::string(kes::acl::error_hint(100039)).find("LD_LIBRARY_PATH"), std::string::npos);
}

TEST_F(AscendLifecycle, AppThatCalledAclInitKeepsOwningTheRuntime) {
    const std::string path = std::string(KES_ASCEND_SIM_DIR) + "/libascendcl.so";
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(h, nullptr) << dlerror();
    using InitFn = int (*)(const char*);
    using FinFn = int (*)();
    auto app_init = reinterpret_cast<InitFn>(dlsym(h, "aclInit"));
    auto app_finalize = reinterpret_cast<FinFn>(dlsym(h, "aclFinalize"));
    ASSERT_EQ(app_init(nullptr), 0);
    const kes_backend_info info = query();
    EXPECT_EQ(info.active, KES_BACKEND_ASCEND) << info.reason;
    EXPECT_EQ(info.app_owns_runtime, 1u);
    void* p = nullptr;
    ASSERT_EQ(kes_mem_alloc(KES_MEM_DEVICE, 256, &p), KES_OK) << kes_last_error();
    kes_mem_free(p);
    EXPECT_EQ(kes_backend_shutdown(), KES_OK) << kes_last_error();
    // Kestrel did not finalize what the app initialised: the app's own aclFinalize still succeeds.
    EXPECT_EQ(app_finalize(), 0);
    dlclose(h);
}

TEST_F(AscendLifecycle, EveryThreadGetsKestrelsContext) {
    ASSERT_EQ(kes_backend_active(), KES_BACKEND_ASCEND);
    const kes::acl::Api& api = kes::acl::require();
    int raw = -1;
    kes_status st = KES_ERR_INTERNAL;
    std::string message;
    std::thread worker([&] {
        // The simulator, like the runtime, refuses device work on a thread without a current context ...
        void* q = nullptr;
        raw = api.aclrtMalloc(&q, 64, kes::acl::kMallocHugeFirst);
        // ... and Kestrel binds its context around its own calls.
        void* p = nullptr;
        st = kes_mem_alloc(KES_MEM_DEVICE, 64, &p);
        message = kes_last_error();
        kes_mem_free(p);
    });
    worker.join();
    EXPECT_EQ(raw, kes::acl::kRtContextNull);
    EXPECT_EQ(st, KES_OK) << message;
}

TEST_F(AscendLifecycle, SyncTimeoutIsReportedAsTimeout) {
    setenv("KES_SIM_TASK_MS", "300", 1);
    const kes::acl::Api& api = kes::acl::require();
    ASSERT_NE(api.aclrtSynchronizeStreamWithTimeout, nullptr);
    kes::acl::ScopedContext bind;
    kes::acl::Stream stream = nullptr;
    ASSERT_EQ(api.aclrtCreateStream(&stream), 0);
    void* dev = nullptr;
    ASSERT_EQ(api.aclrtMalloc(&dev, 64, kes::acl::kMallocHugeFirst), 0);
    const char src[64] = "copied by the stream";
    char back[64] = {};
    ASSERT_EQ(api.aclrtMemcpyAsync(dev, 64, src, 64, kes::acl::kMemcpyH2D, stream), 0);
    const int e = api.aclrtSynchronizeStreamWithTimeout(stream, 20);
    EXPECT_EQ(e, kes::acl::kRtStreamSyncTimeout);
    EXPECT_EQ(kes::acl::error_status(e), KES_ERR_TIMEOUT);
    const std::string d = kes::acl::describe("aclrtSynchronizeStreamWithTimeout", e);
    EXPECT_NE(d.find("ACL_ERROR_RT_STREAM_SYNC_TIMEOUT"), std::string::npos) << d;
    EXPECT_NE(d.find("runtime: [kes-ascend-sim]"), std::string::npos) << d;  // aclGetRecentErrMsg appended
    // Until the stream runs, the device has not been written.
    ASSERT_EQ(api.aclrtMemcpy(back, 64, dev, 64, kes::acl::kMemcpyD2H), 0);
    EXPECT_EQ(back[0], 0);
    ASSERT_EQ(api.aclrtSynchronizeStream(stream), 0);
    ASSERT_EQ(api.aclrtMemcpy(back, 64, dev, 64, kes::acl::kMemcpyD2H), 0);
    EXPECT_STREQ(back, src);
    EXPECT_EQ(api.aclrtFree(dev), 0);
    EXPECT_EQ(api.aclrtDestroyStream(stream), 0);
}

TEST_F(AscendLifecycle, ShutdownReportsLeakedDeviceObjects) {
    const kes::acl::Api& api = kes::acl::require();
    kes::acl::Stream stream = nullptr;
    {
        kes::acl::ScopedContext bind;
        ASSERT_EQ(api.aclrtCreateStream(&stream), 0);  // never destroyed
    }
    const kes_status st = kes_backend_shutdown();
    EXPECT_EQ(st, KES_ERR_BUSY);
    EXPECT_NE(std::strstr(kes_last_error(), "ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED"), nullptr) << kes_last_error();
    EXPECT_NE(std::strstr(kes_last_error(), "never released"), nullptr) << kes_last_error();
    EXPECT_NE(std::strstr(kes_last_error(), "(aclrtCreateStream)"), nullptr) << kes_last_error();
}

TEST_F(AscendLifecycle, LeakAbortOptionStopsTheProcess) {
    setenv("KES_SIM_LEAK_ABORT", "1", 1);
    EXPECT_DEATH(
        {
            const kes::acl::Api& api = kes::acl::require();
            kes::acl::ScopedContext bind;
            kes::acl::DataBuffer* b = api.aclCreateDataBuffer(nullptr, 0);  // never destroyed
            (void)b;
            kes_backend_shutdown();
        },
        "leaked data buffer");
}

TEST_F(AscendLifecycle, CleanShutdownThenReloadWorks) {
    void* p = nullptr;
    ASSERT_EQ(kes_mem_alloc(KES_MEM_DEVICE, 64, &p), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_backend_shutdown(), KES_ERR_BUSY);  // a live buffer keeps the runtime
    kes_mem_free(p);
    EXPECT_EQ(kes_backend_shutdown(), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_backend_shutdown(), KES_OK);            // nothing loaded: a no-op
    EXPECT_EQ(kes_backend_active(), KES_BACKEND_ASCEND);  // loads afresh
}
