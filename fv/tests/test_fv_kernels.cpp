// Every SIMD kernel table this CPU runs against the scalar reference, and whole searches under each.
#include <cstdio>
#include <string>

#include "dispatch_expect.hpp"
#include "fv_kernels.hpp"
#include "fv_test_util.hpp"
#include "kestrel/fv.h"

using namespace fvt;

namespace {

// Float sums in a different order: relative error grows with dim; 1e-5 × (1 + Σ|terms|) is ample.
void expect_close(const std::vector<float>& got, const std::vector<float>& want, const std::vector<float>& mag,
                  const char* kernel, const char* fn, size_t dim) {
    for (size_t j = 0; j < got.size(); ++j)
        EXPECT_NEAR(got[j], want[j], 2e-6 * dim * (1.0 + mag[j])) << kernel << " " << fn << " dim " << dim << " #" << j;
}

TEST(FvKernels, ActiveTableIsTheFastestThisCpuAllows) {
    constexpr uint32_t kAvx512 = KES_CPU_AVX512F | KES_CPU_AVX512BW | KES_CPU_AVX2 | KES_CPU_F16C;
    const std::initializer_list<kes_test::TableGate> gates = {{kAvx512 | KES_CPU_AVX512VNNI, "avx512vnni"},
                                                              {kAvx512, "avx512"},
                                                              {KES_CPU_AVX2 | KES_CPU_F16C, "avx2"},
                                                              {KES_CPU_NEON | KES_CPU_ASIMDDP, "neon_dotprod"},
                                                              {KES_CPU_NEON, "neon"}};
    const std::string want = kes_test::expected_table(gates, "scalar");
    kes_test::record_table("fv", want);
    EXPECT_EQ(kes_fv_kernels_name(), want);
    EXPECT_EQ(kes::fv::kernels_active().name, want);
    EXPECT_EQ(kes_test::names_of(kes::fv::kernels_available()), kes_test::expected_usable(gates, "scalar"));
}

TEST(FvKernels, EveryKernelMatchesScalarOnEveryTail) {
    const kes::fv::Kernels& S = kes::fv::kernels_scalar();
    const auto all = kes::fv::kernels_available();
    EXPECT_EQ(all.front(), &S);
    std::string names;
    for (const kes::fv::Kernels* K : all) names += std::string(" ") + K->name;
    std::printf("kernels on this CPU:%s (active: %s)\n", names.c_str(), kes::fv::kernels_active().name);
    std::mt19937 rng(7);
    for (const kes::fv::Kernels* K : all) {
        for (size_t dim : {1, 3, 7, 8, 15, 16, 17, 31, 32, 33, 47, 64, 100, 512}) {
            const size_t n = 13;
            const auto q = random_floats(dim, static_cast<uint32_t>(dim));
            const auto x = random_floats(dim * n, static_cast<uint32_t>(dim + 1), -2.f, 2.f);
            std::vector<uint16_t> h(dim * n);
            kes_fp16_from_f32(x.data(), h.data(), h.size());
            std::vector<int8_t> c(dim * n);
            for (auto& v : c) v = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
            const auto sc = random_floats(n, 5, 0.001f, 0.05f);
            std::vector<float> want(n), got(n), mag(n, 0.f);
            for (size_t j = 0; j < n; ++j)
                for (size_t i = 0; i < dim; ++i) mag[j] += std::fabs(q[i] * x[j * dim + i]) + q[i] * q[i] + 4.f;
            S.dot_f32(q.data(), x.data(), dim, n, want.data());
            K->dot_f32(q.data(), x.data(), dim, n, got.data());
            expect_close(got, want, mag, K->name, "dot_f32", dim);
            {  // the M:N kernels give the same scores (bit-identical: FourQueryKernels... below)
                const float* q4[4] = {q.data(), q.data(), q.data(), q.data()};
                std::vector<float> o4(4 * n);
                float* out4[4] = {o4.data(), o4.data() + n, o4.data() + 2 * n, o4.data() + 3 * n};
                K->dot4_f32(q4, x.data(), dim, n, out4);
                expect_close(std::vector<float>(o4.begin() + 3 * n, o4.end()), want, mag, K->name, "dot4_f32", dim);
            }
            S.l2_f32(q.data(), x.data(), dim, n, want.data());
            K->l2_f32(q.data(), x.data(), dim, n, got.data());
            expect_close(got, want, mag, K->name, "l2_f32", dim);
            S.dot_f16(q.data(), h.data(), dim, n, want.data());
            K->dot_f16(q.data(), h.data(), dim, n, got.data());
            expect_close(got, want, mag, K->name, "dot_f16", dim);
            S.l2_f16(q.data(), h.data(), dim, n, want.data());
            K->l2_f16(q.data(), h.data(), dim, n, got.data());
            expect_close(got, want, mag, K->name, "l2_f16", dim);
            // int8 inner products are integer sums: every table gives the scalar kernel's bits.
            std::vector<int8_t> qstore;
            kes::fv::I8Query qi;
            kes::fv::quantize_query_i8(q.data(), dim, qstore, qi);
            S.dot_i8(qi, c.data(), sc.data(), dim, n, want.data());
            K->dot_i8(qi, c.data(), sc.data(), dim, n, got.data());
            for (size_t j = 0; j < n; ++j) ASSERT_EQ(got[j], want[j]) << K->name << " dot_i8 dim " << dim << " #" << j;
            S.l2_i8(q.data(), c.data(), sc.data(), dim, n, want.data());
            K->l2_i8(q.data(), c.data(), sc.data(), dim, n, got.data());
            expect_close(got, want, mag, K->name, "l2_i8", dim);
        }
        for (size_t n : {1, 7, 8, 9, 16, 37}) {
            const auto t = random_table(static_cast<uint32_t>(n));
            std::vector<uint8_t> codes(n * 32);
            for (auto& v : codes) v = static_cast<uint8_t>(rng() & 255u);
            std::vector<float> want(n), got(n), mag(n, 32 * 0.2f);
            S.adc_pq32(t.data(), codes.data(), n, want.data());
            K->adc_pq32(t.data(), codes.data(), n, got.data());
            expect_close(got, want, mag, K->name, "adc_pq32", 32);
        }
    }
}

// M:N relies on this: a batch must return exactly what the same queries return one at a time.
TEST(FvKernels, FourQueryKernelsAreBitIdenticalToSingleQueryOnes) {
    for (const kes::fv::Kernels* K : kes::fv::kernels_available()) {
        for (size_t dim : {1, 5, 16, 31, 32, 33, 48, 64, 129}) {
            const size_t n = 11;
            const auto qa = random_floats(dim * 4, static_cast<uint32_t>(dim) + 3);
            const float* q[4] = {qa.data(), qa.data() + dim, qa.data() + 2 * dim, qa.data() + 3 * dim};
            const auto x = random_floats(dim * n, static_cast<uint32_t>(dim) + 4);
            std::vector<uint16_t> h(dim * n);
            kes_fp16_from_f32(x.data(), h.data(), h.size());
            std::vector<int8_t> c(dim * n);
            for (size_t i = 0; i < c.size(); ++i) c[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 255) - 127);
            const auto sc = random_floats(n, 6, 0.001f, 0.05f);
            std::vector<float> o4(4 * n), one(n);
            float* const out[4] = {o4.data(), o4.data() + n, o4.data() + 2 * n, o4.data() + 3 * n};
            K->dot4_f32(q, x.data(), dim, n, out);
            for (int j = 0; j < 4; ++j) {
                K->dot_f32(q[j], x.data(), dim, n, one.data());
                for (size_t v = 0; v < n; ++v) ASSERT_EQ(out[j][v], one[v]) << K->name << " f32 dim " << dim;
            }
            {
                const auto qa8 = random_floats(dim * 8, static_cast<uint32_t>(dim) + 9);
                const float* q8[8];
                std::vector<float> o8(8 * n);
                float* out8[8];
                for (int j = 0; j < 8; ++j) {
                    q8[j] = qa8.data() + j * dim;
                    out8[j] = o8.data() + j * n;
                }
                K->dot8_f32(q8, x.data(), dim, n, out8);
                for (int j = 0; j < 8; ++j) {
                    K->dot_f32(q8[j], x.data(), dim, n, one.data());
                    for (size_t v = 0; v < n; ++v) ASSERT_EQ(out8[j][v], one[v]) << K->name << " f32 x8 dim " << dim;
                }
            }
            K->dot4_f16(q, h.data(), dim, n, out);
            for (int j = 0; j < 4; ++j) {
                K->dot_f16(q[j], h.data(), dim, n, one.data());
                for (size_t v = 0; v < n; ++v) ASSERT_EQ(out[j][v], one[v]) << K->name << " f16 dim " << dim;
            }
            std::vector<int8_t> store[4];
            kes::fv::I8Query qi[4];
            for (int j = 0; j < 4; ++j) kes::fv::quantize_query_i8(q[j], dim, store[j], qi[j]);
            const kes::fv::I8Query* qp[4] = {&qi[0], &qi[1], &qi[2], &qi[3]};
            K->dot4_i8(qp, c.data(), sc.data(), dim, n, out);
            for (int j = 0; j < 4; ++j) {
                K->dot_i8(qi[j], c.data(), sc.data(), dim, n, one.data());
                for (size_t v = 0; v < n; ++v) ASSERT_EQ(out[j][v], one[v]) << K->name << " i8 dim " << dim;
            }
        }
    }
}

// The integer query: q ≈ step · (256 · hi + lo) to 16-bit precision, hi and lo in int8 range, the
// sums recorded; and the extreme values that could overflow the int32 lanes of VNNI / SDOT (all
// codes −128 against query bytes −128 or 127, at the largest dimension) still give the exact sums.
TEST(FvKernels, Int8QueryIsSixteenBitFixedPointAndSumsAreExact) {
    const auto q = random_floats(300, 11, -3.f, 3.f);
    std::vector<int8_t> store;
    kes::fv::I8Query qi;
    kes::fv::quantize_query_i8(q.data(), q.size(), store, qi);
    float maxabs = 0;
    for (float v : q) maxabs = std::max(maxabs, std::fabs(v));
    EXPECT_DOUBLE_EQ(qi.step, maxabs / 32639.0);
    int32_t hs = 0, ls = 0;
    for (size_t i = 0; i < q.size(); ++i) {
        const double back = qi.step * (256.0 * qi.hi[i] + qi.lo[i]);
        EXPECT_NEAR(back, q[i], qi.step * 0.5 + 1e-12) << i;
        EXPECT_GE(qi.hi[i], -127);
        EXPECT_LE(qi.hi[i], 127);
        hs += qi.hi[i];
        ls += qi.lo[i];
    }
    EXPECT_EQ(qi.hi_sum, hs);
    EXPECT_EQ(qi.lo_sum, ls);
    // All-zero query: step 0, every score 0.
    std::vector<float> zero(40, 0.f);
    kes::fv::quantize_query_i8(zero.data(), zero.size(), store, qi);
    EXPECT_EQ(qi.step, 0.0);

    const size_t dim = KES_FV_DIM_MAX;
    std::vector<int8_t> x(dim, -128), hi(dim), lo(dim, -128);
    const float scale = 1.f;
    for (int8_t h : {int8_t{127}, int8_t{-127}}) {
        std::fill(hi.begin(), hi.end(), h);
        kes::fv::I8Query big;
        big.hi = hi.data();
        big.lo = lo.data();
        big.hi_sum = int32_t{h} * static_cast<int32_t>(dim);
        big.lo_sum = -128 * static_cast<int32_t>(dim);
        big.step = 1.0;
        const float want = static_cast<float>(256.0 * (-128.0 * h * dim) + 128.0 * 128.0 * dim);
        for (const kes::fv::Kernels* K : kes::fv::kernels_available()) {
            float got = 0;
            K->dot_i8(big, x.data(), &scale, dim, 1, &got);
            EXPECT_EQ(got, want) << K->name << " hi " << int{h};
        }
    }
}

TEST(FvKernels, ScalarAdcIsTheDocumentedSum) {
    std::vector<float> t(8192);
    for (size_t m = 0; m < 32; ++m)
        for (size_t c = 0; c < 256; ++c) t[m * 256 + c] = static_cast<float>(m * 1000 + c);
    std::vector<uint8_t> codes(32);
    float want = 0;
    for (size_t m = 0; m < 32; ++m) {
        codes[m] = static_cast<uint8_t>(m * 7);
        want += static_cast<float>(m * 1000 + m * 7);
    }
    float got = 0;
    kes::fv::kernels_scalar().adc_pq32(t.data(), codes.data(), 1, &got);
    EXPECT_EQ(got, want);
}

// The whole search path on the table kes_fv_search picks gives the brute-force top-k. ctest runs it again
// under KES_CPU_DISABLE (fv/CMakeLists.txt), once per table this CPU has: the tables themselves are
// compared with the scalar one above, in one process.
TEST(FvKernels, SearchMatchesBruteForceOnTheActiveTable) {
    std::printf("searching on the %s table\n", kes::fv::kernels_active().name);
    Repo pq = make_pq();
    Repo dense = make_dense(70, KES_F16, KES_FV_METRIC_L2);
    const Libs libs{{0, 0}, {9, 9}};
    for (const auto& l : libs) {
        add_pq(pq.get(), l.first, l.second, random_pq36(333, l.first + 1));
        add_dense(dense.get(), l.first, l.second, random_floats(70 * 333, l.first + 2), 70);
    }
    const kes_fv_range all{0, 1023, 0, 1023};
    const auto t = random_table(3);
    const auto q = random_floats(70, 4);
    const kes_fv_search_params p = params(40);
    std::vector<kes_fv_result> res(40);
    uint32_t count = 0;
    ASSERT_EQ(kes_fv_search(pq.get(), t.data(), t.size(), &p, res.data(), res.size(), &count), KES_OK);
    expect_same_topk(res.data(), count, brute_force(pq.get(), t.data(), all, libs), 40);
    ASSERT_EQ(kes_fv_search(dense.get(), q.data(), q.size(), &p, res.data(), res.size(), &count), KES_OK);
    expect_same_topk(res.data(), count, brute_force(dense.get(), q.data(), all, libs), 40);
}

}  // namespace
