#include <gtest/gtest.h>

#include <string>

#include "kestrel/sdk.h"

TEST(Cpu, FeaturesMatchTheArchitecture) {
    const uint32_t f = kes_cpu_features();
    const std::string arch = kes_cpu_arch();
#if defined(__aarch64__)
    EXPECT_EQ(arch, "aarch64");
    EXPECT_TRUE(f & KES_CPU_NEON);
    EXPECT_EQ(f & (KES_CPU_AVX2 | KES_CPU_AVX512F | KES_CPU_F16C), 0u);
#elif defined(__x86_64__)
    EXPECT_EQ(arch, "x86_64");
    EXPECT_EQ(f & KES_CPU_NEON, 0u);
    // Derived features never appear without their base.
    if (f & KES_CPU_AVX512BW) {
        EXPECT_TRUE(f & KES_CPU_AVX512F);
    }
    if (f & KES_CPU_AVX512VNNI) {
        EXPECT_TRUE(f & KES_CPU_AVX512BW);
    }
#endif
    EXPECT_EQ(kes_cpu_has(0), 1);
    EXPECT_EQ(kes_cpu_has(f), 1);
}

TEST(Cpu, DescribeReportsNeededSizeAndRefusesSmallBuffers) {
    size_t needed = 0;
    char tiny[2];
    EXPECT_EQ(kes_cpu_describe(tiny, sizeof tiny, &needed), KES_ERR_INVALID_ARGUMENT);  // even "none" needs 5
    ASSERT_GE(needed, 2u);
    std::string buf(needed, '\0');
    ASSERT_EQ(kes_cpu_describe(&buf[0], buf.size(), nullptr), KES_OK);
    EXPECT_EQ(std::string(buf.c_str()).size() + 1, needed);
}

TEST(Cpu, EveryFeatureBitHasAName) {
    for (uint32_t bit = 1; bit != 0; bit <<= 1) {
        const char* name = kes_cpu_feature_name(static_cast<kes_cpu_feature>(bit));
        if (bit & (KES_CPU_SSE41 | KES_CPU_AVX2 | KES_CPU_NEON | KES_CPU_SVE)) {
            ASSERT_NE(name, nullptr);
        }
    }
    EXPECT_STREQ(kes_cpu_feature_name(KES_CPU_AVX2), "avx2");
    EXPECT_EQ(kes_cpu_feature_name(static_cast<kes_cpu_feature>(3)), nullptr);
    EXPECT_GE(kes_cpu_count(), 1u);
}
