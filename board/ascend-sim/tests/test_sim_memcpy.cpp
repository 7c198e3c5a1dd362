// test_sim_memcpy.cpp — the copies AscendCL apps make, written the way Huawei's samples (Ascend/samples)
// and ACLLite (AclLiteUtils.cpp: CopyDataToDeviceEx, CopyDataToHost) write them, on every simulated SoC
// in both run modes (docs/SIMULATOR.md):
//   - ACL_DEVICE (the app runs on the board): its own memory — new[], malloc, a cv::Mat — is device
//     memory, so aclrtMemcpy takes it with any kind; ACLLite passes ACL_MEMCPY_DEVICE_TO_DEVICE there;
//   - ACL_HOST (a PCIe card): the kind must say where each buffer lives, and device memory stays out of
//     the CPU's reach (sdk/tests/test_ascend_memory.cpp: a CPU touch crashes).
// And what aclFinalize returns when an app leaks a channel: 148051 by default, 0 (a board's answer)
// with KES_SIM_LEAK_CHECK=0.
#include <memory>

#include "sim_dvpp_fixture.hpp"

namespace {

class SimMemcpy : public SimDvpp {
protected:
    // The kinds ACLLite and the samples choose from aclrtGetRunMode.
    int32_t to_device() const { return host_mode() ? acl::kMemcpyH2D : acl::kMemcpyD2D; }
    int32_t to_app() const { return host_mode() ? acl::kMemcpyD2H : acl::kMemcpyD2D; }
};

std::unique_ptr<uint8_t[]> app_bytes(size_t n, uint8_t seed) {
    std::unique_ptr<uint8_t[]> p(new uint8_t[n]);
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(seed + i * 7);
    return p;
}

TEST_P(SimMemcpy, RunModeIsTheOneAsked) {
    start();
    int32_t mode = -1;
    ASSERT_EQ(rt.aclrtGetRunMode(&mode), 0);
    EXPECT_EQ(mode, host_mode() ? acl::kRunModeHost : acl::kRunModeDevice);
}

// CopyDataToDeviceEx(dest, ..., src, ..., runMode): a new[] buffer into aclrtMalloc memory, then back
// into another new[] buffer as CopyDataToHost(MEMORY_NORMAL) does. On a board both kinds are D2D.
TEST_P(SimMemcpy, AclLiteCopiesAnAppBufferToTheDeviceAndBack) {
    start();
    const size_t n = 3000;
    const auto src = app_bytes(n, 3);
    void* dev = nullptr;
    ASSERT_EQ(rt.aclrtMalloc(&dev, n, 0), 0) << recent();
    EXPECT_EQ(rt.aclrtMemcpy(dev, n, src.get(), n, to_device()), 0) << recent();
    std::unique_ptr<uint8_t[]> back(new uint8_t[n]());
    EXPECT_EQ(rt.aclrtMemcpy(back.get(), n, dev, n, to_app()), 0) << recent();
    EXPECT_EQ(std::memcmp(back.get(), src.get(), n), 0);
    EXPECT_EQ(rt.aclrtFree(dev), 0);
}

// A sample's file bytes (malloc) into acldvppMalloc memory for JPEGD/VDEC, with the run mode's kind.
TEST_P(SimMemcpy, SampleUploadsAFileIntoDvppMemory) {
    start();
    const size_t n = 5000;
    void* file = std::malloc(n);
    ASSERT_NE(file, nullptr);
    std::memset(file, 0x5a, n);
    Buffer dvpp(api, rt, n);
    EXPECT_EQ(rt.aclrtMemcpy(dvpp.p, n, file, n, to_device()), 0) << recent();
    std::free(file);
    const std::vector<uint8_t> got = dvpp.download();
    EXPECT_EQ(got, std::vector<uint8_t>(n, 0x5a));
}

// Code that never asks the run mode (H2D in, D2H out: most of Ascend/samples) runs in both.
TEST_P(SimMemcpy, HostKindsWorkInBothRunModes) {
    start();
    const size_t n = 256;
    const auto src = app_bytes(n, 9);
    void* dev = nullptr;
    ASSERT_EQ(rt.aclrtMalloc(&dev, n, 0), 0);
    EXPECT_EQ(rt.aclrtMemcpy(dev, n, src.get(), n, acl::kMemcpyH2D), 0) << recent();
    std::vector<uint8_t> back(n);
    EXPECT_EQ(rt.aclrtMemcpy(back.data(), n, dev, n, acl::kMemcpyD2H), 0) << recent();
    EXPECT_EQ(std::memcmp(back.data(), src.get(), n), 0);
    EXPECT_EQ(rt.aclrtFree(dev), 0);
}

// Every kind between every pair of places: all copy in ACL_DEVICE mode; in ACL_HOST mode only the kind
// that names where the two buffers live, the others fail with 100000 and say why.
TEST_P(SimMemcpy, DeviceModeTakesEveryKindHostModeOnlyTheRightOne) {
    start();
    const size_t n = 128;
    void* dev_a = nullptr;
    void* dev_b = nullptr;
    ASSERT_EQ(rt.aclrtMalloc(&dev_a, n, 0), 0);
    ASSERT_EQ(rt.aclrtMalloc(&dev_b, n, 0), 0);
    const auto app_a = app_bytes(n, 1), app_b = app_bytes(n, 2);
    struct Place {
        void* p;
        bool device;
    };
    const Place places[] = {{app_a.get(), false}, {app_b.get(), false}, {dev_a, true}, {dev_b, true}};
    for (const Place& dst : places) {
        for (const Place& src : places) {
            if (dst.p == src.p) continue;
            for (int32_t kind : {acl::kMemcpyH2H, acl::kMemcpyH2D, acl::kMemcpyD2H, acl::kMemcpyD2D}) {
                const bool right = kind == (src.device ? (dst.device ? acl::kMemcpyD2D : acl::kMemcpyD2H)
                                                       : (dst.device ? acl::kMemcpyH2D : acl::kMemcpyH2H));
                const acl::Error e = rt.aclrtMemcpy(dst.p, n, src.p, n, kind);
                const std::string why = recent();
                SCOPED_TRACE("kind " + std::to_string(kind) + (src.device ? " from device" : " from the app") +
                             (dst.device ? " to device" : " to the app"));
                if (!host_mode() || right) {
                    EXPECT_EQ(e, 0) << why;
                } else {
                    EXPECT_EQ(e, acl::kInvalidParam);
                    EXPECT_NE(why.find("copy kind says"), std::string::npos) << why;
                }
            }
        }
    }
    EXPECT_EQ(rt.aclrtFree(dev_a), 0);
    EXPECT_EQ(rt.aclrtFree(dev_b), 0);
}

// The gemm and single-op samples in ACL_DEVICE mode: aclrtMallocHost memory (device memory there)
// copied D2D into aclrtMalloc memory; in ACL_HOST mode it is host memory and takes H2D.
TEST_P(SimMemcpy, MallocHostBufferTakesTheRunModesKind) {
    start();
    const size_t n = 64;
    void* staging = nullptr;
    ASSERT_EQ(rt.aclrtMallocHost(&staging, n), 0);
    std::memset(staging, 0x33, n);
    void* dev = nullptr;
    ASSERT_EQ(rt.aclrtMalloc(&dev, n, 0), 0);
    EXPECT_EQ(rt.aclrtMemcpy(dev, n, staging, n, to_device()), 0) << recent();
    std::vector<uint8_t> back(n);
    EXPECT_EQ(rt.aclrtMemcpy(back.data(), n, dev, n, to_app()), 0) << recent();
    EXPECT_EQ(back, std::vector<uint8_t>(n, 0x33));
    EXPECT_EQ(rt.aclrtFree(dev), 0);
    EXPECT_EQ(rt.aclrtFreeHost(staging), 0);
}

// aclrtMemcpyAsync follows the same rule; the bytes land at the stream's synchronisation.
TEST_P(SimMemcpy, AsyncCopyOfAnAppBufferLandsAtTheSync) {
    start();
    const size_t n = 512;
    const auto src = app_bytes(n, 5);
    void* dev = nullptr;
    ASSERT_EQ(rt.aclrtMalloc(&dev, n, 0), 0);
    ASSERT_EQ(rt.aclrtMemset(dev, n, 0, n), 0);
    ASSERT_EQ(rt.aclrtMemcpyAsync(dev, n, src.get(), n, to_device(), stream), 0) << recent();
    std::vector<uint8_t> back(n, 1);
    ASSERT_EQ(rt.aclrtMemcpy(back.data(), n, dev, n, to_app()), 0);
    EXPECT_EQ(back, std::vector<uint8_t>(n, 0));  // not yet
    ASSERT_EQ(rt.aclrtSynchronizeStream(stream), 0) << recent();
    ASSERT_EQ(rt.aclrtMemcpy(back.data(), n, dev, n, to_app()), 0);
    EXPECT_EQ(std::memcmp(back.data(), src.get(), n), 0);
    EXPECT_EQ(rt.aclrtFree(dev), 0);
}

// A copy that starts inside a device buffer and runs past its end is refused in both modes, whatever
// the kind (the simulator's buffers end at a page: 4096 bytes asked map 8192).
TEST_P(SimMemcpy, CopyPastTheEndOfADeviceBufferIsRefused) {
    start();
    void* dev = nullptr;
    ASSERT_EQ(rt.aclrtMalloc(&dev, 4096, 0), 0);
    const size_t too_many = 8192 + 64;
    const auto src = app_bytes(too_many, 0);
    EXPECT_EQ(rt.aclrtMemcpy(dev, too_many, src.get(), too_many, to_device()), acl::kInvalidParam);
    const std::string why = recent();
    EXPECT_NE(why.find("runs past the end of the device memory it starts in"), std::string::npos) << why;
    EXPECT_EQ(rt.aclrtFree(dev), 0);
}

// An app that exits without destroying its DVPP channel: the simulator's aclFinalize fails (148051) and
// names it; with KES_SIM_LEAK_CHECK=0 it returns 0 like a board's aclFinalize, still naming it on stderr.
TEST_P(SimMemcpy, LeakedChannelFailsAclFinalizeUnlessLeakCheckIsOff) {
    for (const char* check : {"1", "0"}) {
        setenv("KES_SIM_LEAK_CHECK", check, 1);
        start();
        acl::DvppChannelDesc* ch = api.acldvppCreateChannelDesc();
        ASSERT_EQ(api.acldvppCreateChannel(ch), 0);
        ASSERT_EQ(rt.aclrtDestroyStream(stream), 0);
        stream = nullptr;
        ASSERT_EQ(rt.aclrtResetDevice(0), 0);
        running = false;
        testing::internal::CaptureStderr();
        const acl::Error e = rt.aclFinalize();
        const std::string printed = testing::internal::GetCapturedStderr();
        EXPECT_NE(printed.find("leaked DVPP channel of"), std::string::npos) << printed;
        if (std::string(check) == "1") {
            EXPECT_EQ(e, 148051);
            EXPECT_NE(recent().find("KES_SIM_LEAK_CHECK=0"), std::string::npos);
        } else {
            EXPECT_EQ(e, 0);
        }
    }
    unsetenv("KES_SIM_LEAK_CHECK");
}

INSTANTIATE_TEST_SUITE_P(Sim, SimMemcpy, testing::ValuesIn(kes_test::kSimBoards), kes_test::sim_board_name);

}  // namespace
