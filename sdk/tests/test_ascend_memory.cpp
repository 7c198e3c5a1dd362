// KES_MEM_DEVICE served by aclrtMalloc and kes_mem_copy by aclrtMemcpy, on every simulated SoC and run
// mode. In ACL_HOST mode the simulator maps device memory PROT_NONE: any CPU touch by Kestrel (the pool's
// bookkeeping, a memcpy instead of aclrtMemcpy) would crash these tests.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "ascend_test_env.hpp"
#include "kes/ascend.hpp"
#include "kestrel/memory.h"

using namespace kes_test;

using DeviceMemory = AscendBoardTest;

TEST_P(DeviceMemory, RoundTripThroughKesMemCopy) {
    ASSERT_EQ(kes_backend_active(), KES_BACKEND_ASCEND);
    EXPECT_EQ(kes_mem_is_host_accessible(KES_MEM_DEVICE), host_mode() ? 0 : 1);
    EXPECT_EQ(kes_mem_is_host_accessible(KES_MEM_HOST), 1);
    std::vector<uint8_t> src(1000), back(1000, 0);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7 + 3);
    void* a = nullptr;
    void* b = nullptr;
    ASSERT_EQ(kes_mem_alloc(KES_MEM_DEVICE, src.size(), &a), KES_OK) << kes_last_error();
    ASSERT_EQ(kes_mem_alloc_aligned(KES_MEM_DEVICE, src.size(), 4096, &b), KES_OK) << kes_last_error();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % KES_MEM_ALIGNMENT, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 4096, 0u);
    ASSERT_EQ(kes_mem_copy(a, src.size(), src.data(), src.size(), KES_MEMCPY_HOST_TO_DEVICE), KES_OK)
        << kes_last_error();
    ASSERT_EQ(kes_mem_copy(b, src.size(), a, src.size(), KES_MEMCPY_DEVICE_TO_DEVICE), KES_OK) << kes_last_error();
    ASSERT_EQ(kes_mem_copy(back.data(), back.size(), b, back.size(), KES_MEMCPY_DEVICE_TO_HOST), KES_OK)
        << kes_last_error();
    EXPECT_EQ(back, src);
    kes_mem_free(a);
    kes_mem_free(b);
    EXPECT_EQ(kes_backend_shutdown(), KES_OK) << kes_last_error();  // the simulator's ledger is clean
}

TEST_P(DeviceMemory, PoolKeepsItsBookkeepingOffTheDevice) {
    kes_mem_pool_config cfg;
    kes_mem_pool_config_init(&cfg);
    cfg.backend = KES_MEM_DEVICE;
    cfg.initial_bytes = 1 << 20;
    cfg.grow_bytes = 1 << 20;
    cfg.name = "device";
    kes_mem_pool* pool = nullptr;
    ASSERT_EQ(kes_mem_pool_create(&cfg, &pool), KES_OK) << kes_last_error();
    void* blocks[6] = {};
    for (int i = 0; i < 6; ++i) ASSERT_EQ(kes_mem_pool_alloc(pool, 300000, &blocks[i]), KES_OK) << kes_last_error();
    const uint32_t v = 0xC0FFEE;
    uint32_t back = 0;
    ASSERT_EQ(kes_mem_copy(blocks[5], 4, &v, 4, KES_MEMCPY_HOST_TO_DEVICE), KES_OK) << kes_last_error();
    ASSERT_EQ(kes_mem_copy(&back, 4, blocks[5], 4, KES_MEMCPY_DEVICE_TO_HOST), KES_OK) << kes_last_error();
    EXPECT_EQ(back, v);
    for (int i = 0; i < 6; i += 2) EXPECT_EQ(kes_mem_pool_free(pool, blocks[i]), KES_OK);
    EXPECT_EQ(kes_mem_pool_check(pool), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_backend_shutdown(), KES_ERR_BUSY);  // the pool's chunks are device memory
    kes_mem_pool_destroy(pool);
    EXPECT_EQ(kes_backend_shutdown(), KES_OK) << kes_last_error();
}

TEST_P(DeviceMemory, CpuTouchCrashesOnlyInHostRunMode) {
    void* p = nullptr;
    ASSERT_EQ(kes_mem_alloc(KES_MEM_DEVICE, 256, &p), KES_OK) << kes_last_error();
    if (host_mode()) {
        // A PCIe card's memory is not the CPU's: the simulator makes the mistake a crash, not a silent pass.
        EXPECT_DEATH({ static_cast<volatile char*>(p)[0] = 1; }, "");
    } else {
        // ACL_DEVICE (the boards): the app reads and writes device memory in place, as resnet50 does.
        static_cast<volatile char*>(p)[0] = 42;
        char back = 0;
        ASSERT_EQ(kes_mem_copy(&back, 1, p, 1, KES_MEMCPY_DEVICE_TO_HOST), KES_OK) << kes_last_error();
        EXPECT_EQ(back, 42);
    }
    kes_mem_free(p);
}

TEST_P(DeviceMemory, OutOfMemoryIsClearAndLeaksNothing) {
    setenv("KES_SIM_FAIL", "aclrtMalloc:2:207018", 1);
    void* a = nullptr;
    void* b = reinterpret_cast<void*>(1);
    ASSERT_EQ(kes_mem_alloc(KES_MEM_DEVICE, 4096, &a), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_mem_alloc(KES_MEM_DEVICE, 4096, &b), KES_ERR_OUT_OF_MEMORY);
    EXPECT_EQ(b, nullptr);
    const std::string m = kes_last_error();
    EXPECT_NE(m.find("kes_mem_alloc: KES_MEM_DEVICE (ascend backend), 4096 bytes: aclrtMalloc failed: 207018 "
                     "ACL_ERROR_RT_DEVICE_OOM"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("runtime: [kes-ascend-sim] aclrtMalloc: failure injected"), std::string::npos) << m;
    kes_mem_free(a);
    EXPECT_EQ(kes_backend_shutdown(), KES_OK) << kes_last_error();
}

TEST_P(DeviceMemory, PoolOnExhaustedDeviceSaysWhy) {
    setenv("KES_SIM_FAIL", "aclrtMalloc:1:207018", 1);
    kes_mem_pool_config cfg;
    kes_mem_pool_config_init(&cfg);
    cfg.backend = KES_MEM_DEVICE;
    cfg.initial_bytes = 1 << 20;
    kes_mem_pool* pool = nullptr;
    EXPECT_EQ(kes_mem_pool_create(&cfg, &pool), KES_ERR_OUT_OF_MEMORY);
    EXPECT_EQ(pool, nullptr);
    EXPECT_NE(std::string(kes_last_error())
                  .find("the ascend backend has no 1048576 bytes for the first region: "
                        "aclrtMalloc failed: 207018 ACL_ERROR_RT_DEVICE_OOM"),
              std::string::npos)
        << kes_last_error();
    EXPECT_EQ(kes_backend_shutdown(), KES_OK) << kes_last_error();
}

TEST_P(DeviceMemory, DeviceMemoryLimitGivesOutOfMemory) {
    setenv("KES_SIM_DEVICE_MEMORY", "1048576", 1);
    void* a = nullptr;
    EXPECT_EQ(kes_mem_alloc(KES_MEM_DEVICE, 2u << 20, &a), KES_ERR_OUT_OF_MEMORY);
    EXPECT_NE(std::string(kes_last_error()).find("KES_SIM_DEVICE_MEMORY"), std::string::npos) << kes_last_error();
    EXPECT_EQ(kes_backend_shutdown(), KES_OK) << kes_last_error();
}

TEST_P(DeviceMemory, CopyKindMustMatchWhereMemoryLivesInHostRunMode) {
    void* dev = nullptr;
    ASSERT_EQ(kes_mem_alloc(KES_MEM_DEVICE, 64, &dev), KES_OK) << kes_last_error();
    char host[64] = {};
    if (host_mode()) {
        // Device memory named as the host side: the runtime refuses, and so does Kestrel, with the reason.
        EXPECT_EQ(kes_mem_copy(host, 64, dev, 64, KES_MEMCPY_HOST_TO_DEVICE), KES_ERR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(kes_last_error()).find("aclrtMemcpy failed: 100000 ACL_ERROR_INVALID_PARAM"),
                  std::string::npos)
            << kes_last_error();
    } else {
        // On a board (ACL_DEVICE) the app's memory is device memory: the kind names no place.
        EXPECT_EQ(kes_mem_copy(host, 64, dev, 64, KES_MEMCPY_HOST_TO_DEVICE), KES_OK) << kes_last_error();
    }
    // Kestrel's own checks still come first (count > capacity).
    EXPECT_EQ(kes_mem_copy(dev, 8, host, 64, KES_MEMCPY_HOST_TO_DEVICE), KES_ERR_INVALID_ARGUMENT);
    kes_mem_free(dev);
}

TEST_P(DeviceMemory, CpuBackendChoiceServesHostMemory) {
    ASSERT_EQ(kes_backend_set(KES_BACKEND_CPU), KES_OK);
    void* p = nullptr;
    ASSERT_EQ(kes_mem_alloc(KES_MEM_DEVICE, 64, &p), KES_OK) << kes_last_error();
    static_cast<volatile char*>(p)[0] = 1;  // host memory, whatever the simulated run mode
    EXPECT_EQ(kes_mem_is_host_accessible(KES_MEM_DEVICE), 1);
    kes_mem_free(p);
    kes_backend_info info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    ASSERT_EQ(kes_backend_query(&info), KES_OK);
    EXPECT_EQ(info.runtime_loaded, 0u);  // the CPU choice never loaded AscendCL
}

INSTANTIATE_TEST_SUITE_P(Sim, DeviceMemory, testing::ValuesIn(kSimBoards), sim_board_name);
