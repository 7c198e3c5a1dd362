// 1:N and M:N search against the double-precision brute-force reference.
#include <string>

#include "fv_test_util.hpp"

using namespace fvt;

namespace {

const kes_fv_range kAll{0, 1023, 0, 1023};

std::vector<kes_fv_result> search(const kes_fv_repo* r, const std::vector<float>& q, const kes_fv_search_params& p,
                                  uint32_t* count) {
    std::vector<kes_fv_result> res(p.k);
    EXPECT_EQ(kes_fv_search(r, q.data(), q.size(), &p, res.data(), res.size(), count), KES_OK) << kes_last_error();
    return res;
}

TEST(FvSearch, EmptyRepositoryGivesNoResults) {
    Repo r = make_dense(16, KES_F32, KES_FV_METRIC_IP);
    const auto q = random_floats(16, 1);
    const kes_fv_search_params p = params(5);
    uint32_t count = 99;
    search(r.get(), q, p, &count);
    EXPECT_EQ(count, 0u);
    std::vector<kes_fv_result> res(3 * 5);
    std::vector<uint32_t> counts(3, 99);
    const auto qs = random_floats(48, 2);
    ASSERT_EQ(kes_fv_search_batch(r.get(), qs.data(), 3, qs.size(), &p, res.data(), res.size(), counts.data()), KES_OK);
    EXPECT_EQ(counts, std::vector<uint32_t>({0, 0, 0}));
    Repo pq = make_pq();
    const auto t = random_table(3);
    search(pq.get(), t, p, &count);
    EXPECT_EQ(count, 0u);
}

TEST(FvSearch, Pq36MatchesBruteForceOverALibraryRange) {
    Repo r = make_pq();
    const Libs libs{{0, 0}, {0, 7}, {3, 1}, {1023, 1023}};
    for (size_t i = 0; i < libs.size(); ++i)
        add_pq(r.get(), libs[i].first, libs[i].second, random_pq36(700 + 37 * i, 10 + i));
    for (uint32_t seed = 0; seed < 3; ++seed) {
        const auto t = random_table(20 + seed);
        for (const kes_fv_range& range : {kAll, kes_fv_range{0, 3, 0, 6}, kes_fv_range{1023, 1023, 1023, 1023}}) {
            kes_fv_search_params p = params(50);
            p.range = range;
            uint32_t count = 0;
            const auto res = search(r.get(), t, p, &count);
            expect_same_topk(res.data(), count, brute_force(r.get(), t.data(), range, libs), p.k);
        }
    }
}

struct DenseCase {
    kes_dtype storage;
    kes_fv_metric metric;
    uint32_t dim;
};

// Readable ctest names instead of the default byte dump.
void PrintTo(const DenseCase& c, std::ostream* os) {
    *os << kes_dtype_name(c.storage) << "/metric" << static_cast<int>(c.metric) << "/dim" << c.dim;
}

class FvSearchDense : public ::testing::TestWithParam<DenseCase> {};

TEST_P(FvSearchDense, MatchesBruteForceOverStoredVectors) {
    const DenseCase c = GetParam();
    Repo r = make_dense(c.dim, c.storage, c.metric);
    const Libs libs{{0, 0}, {2, 9}, {2, 10}};
    for (size_t i = 0; i < libs.size(); ++i)
        add_dense(r.get(), libs[i].first, libs[i].second, random_floats(c.dim * (300 + 50 * i), 40 + i), c.dim);
    // A few deletions, so tombstones are skipped inside a scan.
    ASSERT_EQ(kes_fv_repo_delete(r.get(), 2, 9, 17), KES_OK);
    ASSERT_EQ(kes_fv_repo_delete(r.get(), 0, 0, 0), KES_OK);
    for (uint32_t seed = 0; seed < 3; ++seed) {
        const auto q = random_floats(c.dim, 60 + seed);
        kes_fv_search_params p = params(seed == 2 ? 1000 : 20);  // 1000 > population: everything
        uint32_t count = 0;
        const auto res = search(r.get(), q, p, &count);
        expect_same_topk(res.data(), count, brute_force(r.get(), q.data(), kAll, libs), p.k);
    }
}

std::string dense_name(const ::testing::TestParamInfo<DenseCase>& info) {
    const char* m = info.param.metric == KES_FV_METRIC_IP   ? "IP"
                    : info.param.metric == KES_FV_METRIC_L2 ? "L2"
                                                            : "Cosine";
    return std::string(kes_dtype_name(info.param.storage)) + m + "Dim" + std::to_string(info.param.dim);
}

INSTANTIATE_TEST_SUITE_P(
    AllStoragesAndMetrics, FvSearchDense,
    ::testing::Values(DenseCase{KES_F32, KES_FV_METRIC_IP, 128}, DenseCase{KES_F32, KES_FV_METRIC_COSINE, 37},
                      DenseCase{KES_F32, KES_FV_METRIC_L2, 64}, DenseCase{KES_F16, KES_FV_METRIC_IP, 37},
                      DenseCase{KES_F16, KES_FV_METRIC_COSINE, 128}, DenseCase{KES_F16, KES_FV_METRIC_L2, 19},
                      DenseCase{KES_I8, KES_FV_METRIC_IP, 64}, DenseCase{KES_I8, KES_FV_METRIC_COSINE, 33},
                      DenseCase{KES_I8, KES_FV_METRIC_L2, 128}),
    dense_name);

TEST(FvSearch, ResultsAreSortedBestFirstForEachMetric) {
    for (kes_fv_metric m : {KES_FV_METRIC_IP, KES_FV_METRIC_COSINE, KES_FV_METRIC_L2}) {
        Repo r = make_dense(8, KES_F32, m);
        add_dense(r.get(), 0, 0, random_floats(8 * 200, 70), 8);
        const auto q = random_floats(8, 71);
        uint32_t count = 0;
        const auto res = search(r.get(), q, params(30), &count);
        ASSERT_EQ(count, 30u);
        for (uint32_t i = 1; i < count; ++i) {
            if (m == KES_FV_METRIC_L2)
                EXPECT_LE(res[i - 1].distance, res[i].distance);
            else
                EXPECT_GE(res[i - 1].distance, res[i].distance);
        }
    }
}

TEST(FvSearch, OverflowingScoresNeverComeBackAsNaN) {
    Repo r = make_dense(2, KES_F32, KES_FV_METRIC_IP);
    // 3e38·3e38 overflows: +inf + −inf = NaN on paths that round each product (whether a path fuses
    // multiply-add, and so gets +inf instead, depends on the CPU). A NaN must rank as the worst score
    // and never reach the caller or break the sort.
    add_dense(r.get(), 0, 0, {3e38f, 3e38f, 1.f, 1.f, 3e38f, -3e38f}, 2);
    uint32_t count = 0;
    const auto res = search(r.get(), {3e38f, -3e38f}, params(3), &count);
    ASSERT_EQ(count, 3u);
    bool saw_finite = false;
    for (uint32_t i = 0; i < count; ++i) {
        EXPECT_FALSE(std::isnan(res[i].distance)) << i;
        if (i > 0) {
            EXPECT_GE(res[i - 1].distance, res[i].distance) << i;
        }
        if (res[i].offset == 1) saw_finite = res[i].distance == 0.f;
    }
    EXPECT_TRUE(saw_finite);
    EXPECT_TRUE(std::isinf(res[0].distance) && res[0].distance > 0);  // feature 2 is +inf on every path
}

TEST(FvSearch, DeletedFeatureNeverReturned) {
    Repo r = make_dense(8, KES_F32, KES_FV_METRIC_L2);
    auto x = random_floats(8 * 100, 80);
    const std::vector<float> q(x.begin() + 8 * 42, x.begin() + 8 * 43);  // exactly feature 42
    add_dense(r.get(), 0, 0, x, 8);
    uint32_t count = 0;
    auto res = search(r.get(), q, params(100), &count);
    ASSERT_EQ(count, 100u);
    EXPECT_EQ(res[0].offset, 42u);
    EXPECT_EQ(res[0].distance, 0.f);
    ASSERT_EQ(kes_fv_repo_delete(r.get(), 0, 0, 42), KES_OK);
    res = search(r.get(), q, params(100), &count);
    ASSERT_EQ(count, 99u);
    for (uint32_t i = 0; i < count; ++i) EXPECT_NE(res[i].offset, 42u);
}

TEST(FvSearch, ModifyIsVisibleToTheNextSearch) {
    Repo r = make_pq();
    auto a = random_pq36(300, 90);
    add_pq(r.get(), 5, 5, a);
    // A table whose column 0 is free: a feature of all-zero codes is the unique best.
    std::vector<float> t = random_table(91);
    for (size_t m = 0; m < 32; ++m) t[m * 256] = 0.f;
    std::vector<uint8_t> best(36, 0);
    ASSERT_EQ(kes_fv_repo_modify(r.get(), 5, 5, 123, best.data(), 36), KES_OK);
    uint32_t count = 0;
    const auto res = search(r.get(), t, params(3), &count);
    ASSERT_EQ(count, 3u);
    EXPECT_EQ(res[0].id0, 5u);
    EXPECT_EQ(res[0].id1, 5u);
    EXPECT_EQ(res[0].offset, 123u);
    EXPECT_EQ(res[0].distance, 0.f);
}

TEST(FvSearch, RangeSelectsOnlyItsLibrariesAndDeletedRangesVanish) {
    Repo r = make_dense(4, KES_F32, KES_FV_METRIC_IP);
    const Libs libs{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 2}};
    for (const auto& l : libs) add_dense(r.get(), l.first, l.second, random_floats(4 * 30, l.first * 7 + l.second), 4);
    kes_fv_search_params p = params(200);
    p.range = {0, 1, 1, 1};
    uint32_t count = 0;
    auto res = search(r.get(), random_floats(4, 5), p, &count);
    ASSERT_EQ(count, 60u);
    for (uint32_t i = 0; i < count; ++i) EXPECT_EQ(res[i].id1, 1u);
    const kes_fv_range del{0, 0, 0, 1023};
    ASSERT_EQ(kes_fv_repo_delete_range(r.get(), &del, nullptr), KES_OK);
    p.range = kAll;
    res = search(r.get(), random_floats(4, 5), p, &count);
    ASSERT_EQ(count, 90u);
    for (uint32_t i = 0; i < count; ++i) EXPECT_NE(res[i].id0, 0u);
}

TEST(FvSearch, TiesAreBrokenByIdsAndOffsetAscending) {
    Repo r = make_dense(4, KES_F32, KES_FV_METRIC_IP);
    const std::vector<float> same = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
    add_dense(r.get(), 7, 3, same, 4);
    add_dense(r.get(), 2, 9, same, 4);
    add_dense(r.get(), 2, 1, same, 4);
    uint32_t count = 0;
    const auto res = search(r.get(), {1, 0, 0, 0}, params(5), &count);
    ASSERT_EQ(count, 5u);
    const uint32_t want[5][3] = {{2, 1, 0}, {2, 1, 1}, {2, 1, 2}, {2, 9, 0}, {2, 9, 1}};
    for (uint32_t i = 0; i < 5; ++i) {
        EXPECT_EQ(res[i].id0, want[i][0]) << i;
        EXPECT_EQ(res[i].id1, want[i][1]) << i;
        EXPECT_EQ(res[i].offset, want[i][2]) << i;
        EXPECT_EQ(res[i].distance, 1.f);
    }
}

TEST(FvSearch, ThresholdKeepsOnlyResultsAtLeastThatClose) {
    Repo ip = make_dense(1, KES_F32, KES_FV_METRIC_IP);
    add_dense(ip.get(), 0, 0, {0.1f, 0.9f, 0.5f, 0.7f, 0.3f}, 1);
    kes_fv_search_params p = params(10);
    p.use_threshold = 1;
    p.threshold = 0.5f;
    uint32_t count = 0;
    auto res = search(ip.get(), {1.f}, p, &count);
    ASSERT_EQ(count, 3u);  // 0.9, 0.7, 0.5 (inclusive)
    EXPECT_EQ(res[2].distance, 0.5f);
    Repo l2 = make_dense(1, KES_F32, KES_FV_METRIC_L2);
    add_dense(l2.get(), 0, 0, {0.f, 1.f, 2.f, 3.f}, 1);
    p.threshold = 1.f;
    res = search(l2.get(), {0.f}, p, &count);
    ASSERT_EQ(count, 2u);  // 0 and 1
    EXPECT_EQ(res[1].distance, 1.f);
    p.threshold = std::nanf("");
    std::vector<kes_fv_result> out(10);
    const float q = 0.f;
    EXPECT_EQ(kes_fv_search(l2.get(), &q, 1, &p, out.data(), out.size(), &count), KES_ERR_INVALID_ARGUMENT);
}

TEST(FvSearch, KIsLimitedByMaxTopk) {
    Repo r = make_dense(4, KES_F32, KES_FV_METRIC_IP, 16);
    add_dense(r.get(), 0, 0, random_floats(4 * 40, 100), 4);
    const auto q = random_floats(4, 101);
    std::vector<kes_fv_result> out(100);
    uint32_t count = 0;
    kes_fv_search_params p = params(17);
    EXPECT_EQ(kes_fv_search(r.get(), q.data(), 4, &p, out.data(), out.size(), &count), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("params->k must be in [1, 16]"), std::string::npos)
        << kes_last_error();
    p.k = 0;
    EXPECT_EQ(kes_fv_search(r.get(), q.data(), 4, &p, out.data(), out.size(), &count), KES_ERR_INVALID_ARGUMENT);
    p.k = 16;
    EXPECT_EQ(kes_fv_search(r.get(), q.data(), 4, &p, out.data(), out.size(), &count), KES_OK);
    EXPECT_EQ(count, 16u);
    EXPECT_EQ(kes_fv_search(r.get(), q.data(), 4, &p, out.data(), 15, &count), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("results_capacity"), std::string::npos);
}

TEST(FvSearch, BadQueriesAreRefused) {
    Repo r = make_dense(4, KES_F32, KES_FV_METRIC_IP);
    add_dense(r.get(), 0, 0, random_floats(8, 1), 4);
    std::vector<kes_fv_result> out(10);
    uint32_t count = 0;
    const kes_fv_search_params p = params(10);
    const float q[4] = {0, 1, std::nanf(""), 0};
    EXPECT_EQ(kes_fv_search(r.get(), q, 4, &p, out.data(), out.size(), &count), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("not finite"), std::string::npos);
    EXPECT_EQ(kes_fv_search(r.get(), q, 3, &p, out.data(), out.size(), &count), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("query_floats must be 4"), std::string::npos);
    EXPECT_EQ(kes_fv_search(r.get(), nullptr, 4, &p, out.data(), out.size(), &count), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_fv_search(r.get(), q, 4, nullptr, out.data(), out.size(), &count), KES_ERR_INVALID_ARGUMENT);
    kes_fv_search_params bad = p;
    bad.range = {0, 1024, 0, 0};
    const float ok[4] = {0, 1, 0, 0};
    EXPECT_EQ(kes_fv_search(r.get(), ok, 4, &bad, out.data(), out.size(), &count), KES_ERR_INVALID_ARGUMENT);
    bad = p;
    bad.struct_size = 0;
    EXPECT_EQ(kes_fv_search(r.get(), ok, 4, &bad, out.data(), out.size(), &count), KES_ERR_INVALID_ARGUMENT);
}

void expect_batch_equals_single(kes_dtype storage, kes_fv_metric metric) {
    SCOPED_TRACE(std::string(kes_dtype_name(storage)) + " metric " + std::to_string(metric));
    Repo r = make_dense(48, storage, metric);
    add_dense(r.get(), 0, 0, random_floats(48 * 500, 110), 48);
    add_dense(r.get(), 1, 0, random_floats(48 * 300, 111), 48);
    ASSERT_EQ(kes_fv_repo_delete(r.get(), 1, 0, 5), KES_OK);
    // 17 and 29: the query-parallel path on any pool size ≤ 8, in blocks of 8, 4 and single queries
    for (uint32_t m : {1u, 3u, 17u, 29u}) {
        const auto qs = random_floats(48 * m, 112 + m);
        const kes_fv_search_params p = params(25);
        size_t entries = 0;
        ASSERT_EQ(kes_fv_search_result_entries(m, p.k, &entries), KES_OK);
        ASSERT_EQ(entries, size_t{m} * 25);
        std::vector<kes_fv_result> res(entries);
        std::vector<uint32_t> counts(m);
        ASSERT_EQ(kes_fv_search_batch(r.get(), qs.data(), m, qs.size(), &p, res.data(), res.size(), counts.data()),
                  KES_OK)
            << kes_last_error();
        for (uint32_t i = 0; i < m; ++i) {
            const std::vector<float> q(qs.begin() + 48 * i, qs.begin() + 48 * (i + 1));
            uint32_t count = 0;
            const auto one = search(r.get(), q, p, &count);
            ASSERT_EQ(counts[i], count);
            for (uint32_t j = 0; j < count; ++j) {
                EXPECT_EQ(res[i * 25 + j].offset, one[j].offset);
                EXPECT_EQ(res[i * 25 + j].id0, one[j].id0);
                EXPECT_EQ(res[i * 25 + j].distance, one[j].distance);
            }
        }
    }
}

TEST(FvSearch, BatchEqualsOneQueryAtATime) {
    for (kes_dtype storage : {KES_F32, KES_F16, KES_I8})
        for (kes_fv_metric metric : {KES_FV_METRIC_IP, KES_FV_METRIC_COSINE, KES_FV_METRIC_L2})
            expect_batch_equals_single(storage, metric);
}

TEST(FvSearch, BatchPq36MatchesBruteForce) {
    Repo r = make_pq();
    const Libs libs{{0, 0}};
    add_pq(r.get(), 0, 0, random_pq36(1000, 120));
    const uint32_t m = 9;
    std::vector<float> tables;
    for (uint32_t i = 0; i < m; ++i) {
        const auto t = random_table(121 + i);
        tables.insert(tables.end(), t.begin(), t.end());
    }
    const kes_fv_search_params p = params(10);
    std::vector<kes_fv_result> res(m * 10);
    std::vector<uint32_t> counts(m);
    ASSERT_EQ(kes_fv_search_batch(r.get(), tables.data(), m, tables.size(), &p, res.data(), res.size(), counts.data()),
              KES_OK);
    for (uint32_t i = 0; i < m; ++i)
        expect_same_topk(res.data() + i * 10, counts[i], brute_force(r.get(), tables.data() + i * 8192, kAll, libs),
                         10);
}

TEST(FvSearch, BatchChecksItsArraySizes) {
    Repo r = make_dense(4, KES_F32, KES_FV_METRIC_IP);
    add_dense(r.get(), 0, 0, random_floats(40, 1), 4);
    const auto qs = random_floats(12, 2);
    const kes_fv_search_params p = params(5);
    std::vector<kes_fv_result> res(15);
    std::vector<uint32_t> counts(3);
    EXPECT_EQ(kes_fv_search_batch(r.get(), qs.data(), 3, 12, &p, res.data(), 14, counts.data()),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("query_count 3 × k 5 = 15"), std::string::npos) << kes_last_error();
    EXPECT_EQ(kes_fv_search_batch(r.get(), qs.data(), 3, 11, &p, res.data(), 15, counts.data()),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_fv_search_batch(r.get(), qs.data(), 3, 12, &p, res.data(), 15, nullptr), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_fv_search_batch(r.get(), nullptr, 0, 0, &p, nullptr, 0, nullptr), KES_OK);
    size_t entries = 0;
    EXPECT_EQ(kes_fv_search_result_entries(3, 0, &entries), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_fv_search_result_entries(UINT32_MAX, UINT32_MAX, &entries),
              sizeof(size_t) >= 8 ? KES_OK : KES_ERR_INVALID_ARGUMENT);
}

}  // namespace
