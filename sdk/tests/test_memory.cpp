// Tests for the DVPP size rule, kes_mem_alloc* / kes_mem_free and kes_mem_copy (kestrel/memory.h).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kestrel/log.h"
#include "kestrel/memory.h"

#include "log_capture.hpp"

namespace {

// Out-parameters start pointing here, so a test sees whether a failing call reset them to NULL.
char g_poison;

bool aligned_to(const void* p, size_t alignment) {
    return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

bool last_error_mentions(const char* text) {
    return std::string(kes_last_error()).find(text) != std::string::npos;
}

using kes_test::LogCapture;

TEST(MemDvppSize, AlignsUpTo32AndAddsOneMore32) {
    EXPECT_EQ(kes_mem_dvpp_size(0), 32u);  // ALIGN_UP(0, 32) + 32
    EXPECT_EQ(kes_mem_dvpp_size(1), 64u);
    EXPECT_EQ(kes_mem_dvpp_size(31), 64u);
    EXPECT_EQ(kes_mem_dvpp_size(32), 64u);
    EXPECT_EQ(kes_mem_dvpp_size(33), 96u);
    EXPECT_EQ(kes_mem_dvpp_size(64), 96u);
    EXPECT_EQ(kes_mem_dvpp_size(1920u * 1080u * 3u / 2u), 3110400u + 32u);  // 1080p NV12
}

TEST(MemDvppSize, ReturnsZeroWhenTheResultWouldOverflow) {
    EXPECT_EQ(kes_mem_dvpp_size(SIZE_MAX), 0u);
    EXPECT_EQ(kes_mem_dvpp_size(SIZE_MAX - 62), 0u);
    EXPECT_EQ(kes_mem_dvpp_size(SIZE_MAX - 63), SIZE_MAX - 31);  // the largest len that still fits
}

TEST(MemAlloc, BufferIs128ByteAlignedAndHoldsItsDvppSize) {
    for (kes_mem_backend backend : {KES_MEM_HOST, KES_MEM_DEVICE, KES_MEM_DVPP}) {
        for (size_t size : {size_t{1}, size_t{33}, size_t{4096}, size_t{100000}, size_t{3110400}}) {
            void* p = nullptr;
            ASSERT_EQ(kes_mem_alloc(backend, size, &p), KES_OK) << kes_last_error();
            ASSERT_NE(p, nullptr);
            EXPECT_TRUE(aligned_to(p, KES_MEM_ALIGNMENT)) << p;
            std::memset(p, 0x5A, kes_mem_dvpp_size(size));  // the sanitizers flag a short buffer
            kes_mem_free(p);
        }
    }
}

TEST(MemAlloc, DvppMemoryIsHostMemoryWithoutTheHardware) {
    // Host builds: KES_MEM_DVPP is served like KES_MEM_DEVICE, so board code runs here unchanged.
    EXPECT_EQ(kes_mem_is_host_accessible(KES_MEM_DVPP), kes_mem_is_host_accessible(KES_MEM_DEVICE));
    kes_mem_pool_config config;
    kes_mem_pool_config_init(&config);
    config.backend = KES_MEM_DVPP;
    config.initial_bytes = 1 << 16;
    kes_mem_pool* pool = nullptr;
    ASSERT_EQ(kes_mem_pool_create(&config, &pool), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_mem_pool_backend(pool), KES_MEM_DVPP);
    kes_mem_pool_destroy(pool);
    EXPECT_EQ(kes_mem_pool_backend(nullptr), KES_MEM_HOST);
    void* p = nullptr;
    EXPECT_EQ(kes_mem_alloc(static_cast<kes_mem_backend>(3), 64, &p), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(p, nullptr);
    for (kes_mem_backend backend : {KES_MEM_HOST, KES_MEM_DEVICE, KES_MEM_DVPP}) {
        ASSERT_EQ(kes_mem_alloc(backend, 64, &p), KES_OK) << kes_last_error();
        kes_mem_backend got = KES_MEM_HOST;
        EXPECT_EQ(kes_mem_get_backend(p, &got), KES_OK) << kes_last_error();
        EXPECT_EQ(got, backend);
        EXPECT_EQ(kes_mem_get_backend(static_cast<char*>(p) + 128, &got), KES_ERR_NOT_FOUND);
        EXPECT_NE(std::string(kes_last_error()).find("does not start a live kes_mem_alloc buffer"), std::string::npos);
        kes_mem_free(p);
        EXPECT_EQ(kes_mem_get_backend(p, &got), KES_ERR_NOT_FOUND);
    }
}

TEST(MemAlloc, AlignedVariantHonoursAnyPowerOfTwoFrom128) {
    for (size_t alignment : {size_t{128}, size_t{256}, size_t{4096}, size_t{65536}, size_t{2} << 20}) {
        void* p = nullptr;
        ASSERT_EQ(kes_mem_alloc_aligned(KES_MEM_HOST, 1000, alignment, &p), KES_OK) << kes_last_error();
        EXPECT_TRUE(aligned_to(p, alignment)) << p << " alignment " << alignment;
        std::memset(p, 1, kes_mem_dvpp_size(1000));
        kes_mem_free(p);
    }
}

TEST(MemAlloc, AlignedVariantRefusesAlignmentsBelow128OrNotPowersOfTwo) {
    for (size_t alignment : {size_t{0}, size_t{1}, size_t{64}, size_t{100}, size_t{129}, size_t{384}}) {
        void* p = static_cast<void*>(&g_poison);
        EXPECT_EQ(kes_mem_alloc_aligned(KES_MEM_HOST, 64, alignment, &p), KES_ERR_INVALID_ARGUMENT) << alignment;
        EXPECT_EQ(p, nullptr);
        EXPECT_TRUE(last_error_mentions("alignment")) << kes_last_error();
    }
}

TEST(MemAlloc, RefusesZeroSizeNullOutputAndUnknownBackend) {
    void* p = static_cast<void*>(&g_poison);
    EXPECT_EQ(kes_mem_alloc(KES_MEM_HOST, 0, &p), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(p, nullptr);
    EXPECT_EQ(kes_mem_alloc(KES_MEM_HOST, 16, nullptr), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_mem_alloc(static_cast<kes_mem_backend>(7), 16, &p), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(p, nullptr);
    EXPECT_TRUE(last_error_mentions("backend")) << kes_last_error();
}

TEST(MemAlloc, HugeSizeIsOutOfMemoryNotAWrappedSmallBuffer) {
    for (size_t size : {SIZE_MAX, SIZE_MAX - 40, SIZE_MAX / 2}) {
        void* p = static_cast<void*>(&g_poison);
        EXPECT_EQ(kes_mem_alloc(KES_MEM_HOST, size, &p), KES_ERR_OUT_OF_MEMORY) << size;
        EXPECT_EQ(p, nullptr);
        EXPECT_EQ(kes_mem_alloc_aligned(KES_MEM_DEVICE, size, 4096, &p), KES_ERR_OUT_OF_MEMORY) << size;
        EXPECT_EQ(p, nullptr);
    }
}

TEST(MemFree, NullIsANoOp) {
    kes_clear_error();
    kes_mem_free(nullptr);
    EXPECT_EQ(kes_last_status(), KES_OK);
}

TEST(MemFree, UnknownOrAlreadyFreedPointerIsReportedAndIgnored) {
    LogCapture log;
    int on_stack = 0;
    kes_clear_error();
    kes_mem_free(&on_stack);
    EXPECT_EQ(kes_last_status(), KES_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(last_error_mentions("kes_mem_alloc")) << kes_last_error();

    void* p = nullptr;
    ASSERT_EQ(kes_mem_alloc(KES_MEM_HOST, 256, &p), KES_OK);
    kes_clear_error();
    kes_mem_free(p);
    EXPECT_EQ(kes_last_status(), KES_OK);
    kes_mem_free(p);  // double free: refused, not passed to the C heap
    EXPECT_EQ(kes_last_status(), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(log.lines().size(), 2u);
}

TEST(MemFree, ConcurrentAllocAndFreeFromSeveralThreads) {
    std::atomic<int> errors{0};
    std::vector<std::thread> threads;
    threads.reserve(4);
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([t, &errors] {
            for (int i = 0; i < 200; ++i) {
                void* p = nullptr;
                const kes_mem_backend backend = (i & 1) ? KES_MEM_DEVICE : KES_MEM_HOST;
                if (kes_mem_alloc_aligned(backend, 64 + static_cast<size_t>(i), size_t{128} << (i % 4), &p) != KES_OK) {
                    ++errors;
                    continue;
                }
                std::memset(p, t, 64);
                kes_mem_free(p);
            }
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(errors.load(), 0);
}

TEST(MemCopy, CopiesForEveryKind) {
    const char src[] = "kestrel memory copy";
    for (kes_memcpy_kind kind :
         {KES_MEMCPY_HOST_TO_HOST, KES_MEMCPY_HOST_TO_DEVICE, KES_MEMCPY_DEVICE_TO_HOST, KES_MEMCPY_DEVICE_TO_DEVICE}) {
        char dst[64] = {};
        ASSERT_EQ(kes_mem_copy(dst, sizeof dst, src, sizeof src, kind), KES_OK) << kes_last_error();
        EXPECT_STREQ(dst, src);
    }
}

TEST(MemCopy, CountEqualToCapacityIsAllowedAndZeroCountIsANoOp) {
    char src[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    char dst[8] = {};
    EXPECT_EQ(kes_mem_copy(dst, sizeof dst, src, sizeof src, KES_MEMCPY_HOST_TO_HOST), KES_OK);
    EXPECT_EQ(std::memcmp(dst, src, sizeof dst), 0);
    EXPECT_EQ(kes_mem_copy(dst, 0, src, 0, KES_MEMCPY_HOST_TO_HOST), KES_OK);
}

TEST(MemCopy, RefusesNullPointers) {
    char buf[16] = {};
    EXPECT_EQ(kes_mem_copy(nullptr, 16, buf, 8, KES_MEMCPY_HOST_TO_HOST), KES_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(last_error_mentions("dst")) << kes_last_error();
    EXPECT_EQ(kes_mem_copy(buf, 16, nullptr, 8, KES_MEMCPY_HOST_TO_HOST), KES_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(last_error_mentions("src")) << kes_last_error();
}

TEST(MemCopy, RefusesCountAboveDestinationCapacity) {
    char src[32] = {};
    char dst[32] = {'x'};
    EXPECT_EQ(kes_mem_copy(dst, 16, src, 17, KES_MEMCPY_HOST_TO_DEVICE), KES_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(last_error_mentions("dst_capacity")) << kes_last_error();
    EXPECT_EQ(dst[0], 'x');  // nothing copied
}

TEST(MemCopy, RefusesOverlappingRangesButNotAdjacentOnes) {
    char buf[64] = {};
    EXPECT_EQ(kes_mem_copy(buf + 8, 32, buf, 16, KES_MEMCPY_HOST_TO_HOST), KES_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(last_error_mentions("overlap")) << kes_last_error();
    EXPECT_EQ(kes_mem_copy(buf, 32, buf + 8, 16, KES_MEMCPY_DEVICE_TO_DEVICE), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_mem_copy(buf, 64, buf, 1, KES_MEMCPY_HOST_TO_HOST), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_mem_copy(buf + 16, 16, buf, 16, KES_MEMCPY_HOST_TO_HOST), KES_OK);  // touching, not overlapping
}

TEST(MemCopy, RefusesAnUnknownKind) {
    char a[8] = {}, b[8] = {};
    EXPECT_EQ(kes_mem_copy(a, 8, b, 8, static_cast<kes_memcpy_kind>(9)), KES_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(last_error_mentions("kind")) << kes_last_error();
}

}  // namespace
