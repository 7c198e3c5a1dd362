// fp16 ↔ fp32 conversion: every half value, a reference written here independently of the SDK's
// (double arithmetic instead of bit twiddling), and bulk (vector) vs single-value (scalar) agreement,
// including tails. Run with KES_CPU_DISABLE=f16c to put the scalar kernel through the same tests.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "dispatch_expect.hpp"
#include "kestrel/tensor.h"

namespace {

uint32_t bits_of(float f) {
    uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
}
float float_of(uint32_t b) {
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
}
bool half_is_nan(uint16_t h) {
    return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
}

// float → half by value: round |f| to a multiple of the half quantum at its magnitude (ties to even via
// nearbyint in the default rounding mode), then encode. NaN: quiet, sign and top payload bits kept.
uint16_t ref_from_f32(float f) {
    const uint32_t b = bits_of(f);
    const auto sign = static_cast<uint16_t>((b >> 16) & 0x8000u);
    if (std::isnan(f)) return static_cast<uint16_t>(sign | 0x7e00u | ((b >> 13) & 0x3ffu));
    if (std::isinf(f)) return static_cast<uint16_t>(sign | 0x7c00u);
    const double a = std::fabs(static_cast<double>(f));
    double quantum = 0x1p-24;  // subnormal halves: multiples of 2^-24
    if (a >= 0x1p-14) {
        int e = 0;
        std::frexp(a, &e);  // a in [2^(e-1), 2^e): 10 fraction bits below 2^(e-1)
        quantum = std::ldexp(1.0, e - 11);
    }
    const double r = std::nearbyint(a / quantum) * quantum;
    if (r >= 65536.0) return static_cast<uint16_t>(sign | 0x7c00u);
    if (r < 0x1p-14) return static_cast<uint16_t>(sign | static_cast<uint16_t>(r / 0x1p-24));
    int e = 0;
    const double m = std::frexp(r, &e);  // r = m·2^e, m in [0.5, 1)
    return static_cast<uint16_t>(sign | ((e - 1 + 15) << 10) | static_cast<uint32_t>((m * 2 - 1) * 1024));
}

// half → float bits; NaN comes back quiet with sign and payload.
uint32_t ref_to_f32_bits(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f) return sign | (m ? 0x7fc00000u | (m << 13) : 0x7f800000u);
    const double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024.0 + m, static_cast<int>(e) - 25);
    return sign | bits_of(static_cast<float>(v));
}

std::string hex(uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", v);
    return buf;
}

// Values chosen to hit every rounding case: exact ties between adjacent halves (and one float ulp
// either side), subnormals, the overflow edge, NaNs, and random bit patterns.
std::vector<float> interesting_floats() {
    std::vector<float> v;
    for (uint32_t h = 0; h < 0x7bff; ++h) {  // every pair of adjacent finite positive halves
        const float lo = float_of(ref_to_f32_bits(static_cast<uint16_t>(h)));
        const float hi = float_of(ref_to_f32_bits(static_cast<uint16_t>(h + 1)));
        const float mid = (lo + hi) / 2;  // exact: 12 significant bits
        for (float x : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)}) {
            v.push_back(x);
            v.push_back(-x);
        }
    }
    const float specials[] = {0.0f,     -0.0f,     1.0f,       -1.0f,        65504.0f,     65519.996f,
                              65520.0f, -65520.0f, 65536.0f,   1e10f,        FLT_MAX,      -FLT_MAX,
                              0x1p-24f, 0x1p-25f,  -0x1p-25f,  3 * 0x1p-26f, 3 * 0x1p-25f, 0x1p-14f,
                              FLT_MIN,  0x1p-149f, -0x1p-149f, 0x1.ffcp-15f, 0x1.ffep-15f};
    const float inf = std::numeric_limits<float>::infinity();

    v.insert(v.end(), std::begin(specials), std::end(specials));
    v.push_back(inf);
    v.push_back(-inf);
    v.push_back(std::nextafter(65520.0f, 0.0f));
    v.push_back(std::nextafter(0x1p-25f, 0.0f));
    v.push_back(std::nextafter(0x1p-25f, 1.0f));
    for (uint32_t nan : {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u, 0x7fa5a5a5u, 0x7fffffffu, 0xffffe000u})
        v.push_back(float_of(nan));

    std::mt19937 rng(20240601u);  // fixed seed: failures reproduce
    for (int i = 0; i < 50000; ++i) v.push_back(float_of(static_cast<uint32_t>(rng())));  // any bits
    std::uniform_int_distribution<int> exp(-27, 17);
    for (int i = 0; i < 50000; ++i) {  // magnitudes around the half range
        const float m = 1.0f + static_cast<float>(rng() & 0x7fffffu) * 0x1p-23f;
        v.push_back(std::ldexp(i % 2 ? -m : m, exp(rng)));
    }
    return v;
}

}  // namespace

TEST(Fp16, AllHalfValuesRoundTripExactly) {
    std::vector<uint16_t> halves(65536);
    for (uint32_t h = 0; h < 65536; ++h) halves[h] = static_cast<uint16_t>(h);

    std::vector<float> floats(65536);
    kes_fp16_to_f32(halves.data(), floats.data(), halves.size());
    std::vector<uint16_t> back(65536);
    kes_fp16_from_f32(floats.data(), back.data(), floats.size());

    int failures = 0;
    for (uint32_t h = 0; h < 65536 && failures < 10; ++h) {
        const auto h16 = static_cast<uint16_t>(h);
        const uint32_t want = ref_to_f32_bits(h16);
        const float single = kes_fp16_to_float(h16);
        const uint16_t single_back = kes_fp16_from_float(single);
        bool ok = bits_of(single) == want && bits_of(floats[h]) == want;
        if (half_is_nan(h16)) {
            // NaN stays NaN with its sign; the payload may only gain the quiet bit.
            ok = ok && half_is_nan(back[h]) && half_is_nan(single_back) && (back[h] & 0x8000u) == (h & 0x8000u) &&
                 back[h] == (h | 0x200u) && single_back == back[h];
        } else {
            ok = ok && back[h] == h16 && single_back == h16;
        }
        if (!ok) {
            ++failures;
            ADD_FAILURE() << "half " << hex(h) << ": to_float " << hex(bits_of(single)) << " bulk "
                          << hex(bits_of(floats[h])) << " want " << hex(want) << "; back " << hex(back[h]) << " single "
                          << hex(single_back);
        }
    }
}

TEST(Fp16, MatchesScalarReferenceOnRandomFloats) {
    const std::vector<float> in = interesting_floats();
    std::vector<uint16_t> bulk(in.size());
    kes_fp16_from_f32(in.data(), bulk.data(), in.size());
    int failures = 0;
    for (size_t i = 0; i < in.size() && failures < 10; ++i) {
        const uint16_t want = ref_from_f32(in[i]);
        const uint16_t single = kes_fp16_from_float(in[i]);
        if (bulk[i] != want || single != want) {
            ++failures;
            ADD_FAILURE() << "float " << hex(bits_of(in[i])) << " (" << in[i] << "): bulk " << hex(bulk[i])
                          << " single " << hex(single) << " want " << hex(want);
        }
    }
    // Spot checks of the reference itself, so a wrong reference cannot hide a wrong kernel.
    EXPECT_EQ(ref_from_f32(65504.0f), 0x7bffu);
    EXPECT_EQ(ref_from_f32(65520.0f), 0x7c00u);  // tie rounds to even = inf
    EXPECT_EQ(ref_from_f32(std::nextafter(65520.0f, 0.0f)), 0x7bffu);
    EXPECT_EQ(ref_from_f32(0x1p-24f), 0x0001u);  // smallest subnormal
    EXPECT_EQ(ref_from_f32(0x1p-25f), 0x0000u);  // tie to even = 0
    EXPECT_EQ(ref_from_f32(std::nextafter(0x1p-25f, 1.0f)), 0x0001u);
    EXPECT_EQ(ref_from_f32(3 * 0x1p-26f), 0x0001u);         // 0.75 subnormal ulps
    EXPECT_EQ(ref_from_f32(3 * 0x1p-25f), 0x0002u);         // 1.5 subnormal ulps: tie to 2
    EXPECT_EQ(ref_from_f32(0x1.ffep-15f), 0x0400u);         // rounds up into the normals
    EXPECT_EQ(ref_from_f32(1.0f + 0x1p-11f), 0x3c00u);      // tie to even (down)
    EXPECT_EQ(ref_from_f32(1.0f + 3 * 0x1p-11f), 0x3c02u);  // tie to even (up)
    EXPECT_EQ(ref_from_f32(-2.0f), 0xc000u);
    EXPECT_EQ(ref_from_f32(float_of(0x7f800001u)), 0x7e00u);  // signalling NaN made quiet
    EXPECT_EQ(ref_from_f32(float_of(0xffc02000u)), 0xfe01u);  // sign and payload kept
}

TEST(Fp16, VectorAndScalarPathsAgree) {
    // Every length 0..67 (vector bodies of 8 and 16 plus every tail), from misaligned starts, with
    // sentinels either side to catch a kernel writing past its range.
    std::mt19937 rng(7u);
    std::vector<float> pool_f(80);
    std::vector<uint16_t> pool_h(80);
    for (size_t i = 0; i < pool_f.size(); ++i) {
        pool_f[i] = std::ldexp(static_cast<float>(rng() % 2048) - 1024.0f, static_cast<int>(rng() % 40) - 30);
        pool_h[i] = static_cast<uint16_t>(rng());
    }
    pool_f[3] = std::numeric_limits<float>::quiet_NaN();
    pool_f[17] = 70000.0f;
    pool_h[5] = 0x7d01;  // signalling NaN
    pool_h[9] = 0x0001;

    constexpr uint16_t kSentinelH = 0xdead;
    const uint32_t kSentinelF = 0xdeadbeefu;
    for (size_t offset = 0; offset < 4; ++offset) {
        for (size_t n = 0; n <= 67; ++n) {
            SCOPED_TRACE("offset " + std::to_string(offset) + " count " + std::to_string(n));
            const size_t src_at = offset % (pool_f.size() - n + 1);
            std::vector<uint16_t> h(n + 8, kSentinelH);
            const float* src_f = pool_f.data() + src_at;
            uint16_t* dst_h = h.data() + 1 + offset % 3;
            kes_fp16_from_f32(src_f, dst_h, n);
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(dst_h[i], kes_fp16_from_float(src_f[i])) << "element " << i;
            for (uint16_t* p = h.data(); p < dst_h; ++p) ASSERT_EQ(*p, kSentinelH);
            for (uint16_t* p = dst_h + n; p < h.data() + h.size(); ++p) ASSERT_EQ(*p, kSentinelH);

            std::vector<float> f(n + 8, float_of(kSentinelF));
            const uint16_t* src_h = pool_h.data() + src_at;
            float* dst_f = f.data() + 1 + offset % 3;
            kes_fp16_to_f32(src_h, dst_f, n);
            for (size_t i = 0; i < n; ++i)
                ASSERT_EQ(bits_of(dst_f[i]), bits_of(kes_fp16_to_float(src_h[i]))) << "element " << i;
            for (float* p = f.data(); p < dst_f; ++p) ASSERT_EQ(bits_of(*p), kSentinelF);
            for (float* p = dst_f + n; p < f.data() + f.size(); ++p) ASSERT_EQ(bits_of(*p), kSentinelF);
        }
    }
    kes_fp16_from_f32(nullptr, nullptr, 0);  // zero count touches nothing
    kes_fp16_to_f32(nullptr, nullptr, 0);
}

TEST(Fp16, BulkCallsUseTheFastestTableThisCpuAllows) {
    // F16C is reported only with the AVX state enabled, which the file's -mavx needs.
    const std::string want = kes_test::expected_table({{KES_CPU_F16C, "f16c"}, {KES_CPU_NEON, "neon"}}, "scalar");
    kes_test::record_table("fp16", want);
    EXPECT_EQ(kes_fp16_kernels_name(), want);
}
