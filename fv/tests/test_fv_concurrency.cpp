// Many searches with one writer at a time (run under the TSan build too).
#include <atomic>
#include <thread>

#include "fv_test_util.hpp"

using namespace fvt;

namespace {

// Every feature is a constant vector (c, c, ..., c): against the zero query its squared L2 distance
// is dim·c², so a search that saw a half-written feature would report a distance of no such form.
TEST(FvConcurrency, SearchesDuringWritesNeverSeeHalfWrittenFeatures) {
    const uint32_t dim = 64;
    Repo r = make_dense(dim, KES_F32, KES_FV_METRIC_L2);
    auto constant = [&](float c, size_t n) { return std::vector<float>(dim * n, c); };
    ASSERT_EQ(kes_fv_repo_add(r.get(), 0, 0, 0, constant(1.f, 200).data(), 200, dim * 200 * 4), KES_OK);
    std::atomic<bool> stop{false};
    std::atomic<int> bad{0}, searches{0};
    auto reader = [&] {
        const std::vector<float> q(dim, 0.f);
        kes_fv_search_params p = params(50);
        std::vector<kes_fv_result> res(50);
        while (!stop.load()) {
            uint32_t count = 0;
            if (kes_fv_search(r.get(), q.data(), dim, &p, res.data(), res.size(), &count) != KES_OK) ++bad;
            for (uint32_t i = 0; i < count; ++i) {
                const float c = res[i].distance / dim;  // c² ∈ {1, 4, 9}
                if (!(c == 1.f || c == 4.f || c == 9.f)) ++bad;
            }
            ++searches;
        }
    };
    std::vector<std::thread> readers;
    for (int i = 0; i < 3; ++i) readers.emplace_back(reader);
    const auto two = constant(2.f, 1), three = constant(3.f, 10);
    for (uint32_t i = 0; i < 60; ++i) {
        ASSERT_EQ(kes_fv_repo_modify(r.get(), 0, 0, i, (i % 2 ? two : three).data(), dim * 4), KES_OK);
        uint32_t size = 0;
        ASSERT_EQ(kes_fv_repo_library_size(r.get(), 1, 0, &size), KES_OK);
        ASSERT_EQ(kes_fv_repo_add(r.get(), 1, 0, size, three.data(), 10, three.size() * 4), KES_OK);
        ASSERT_EQ(kes_fv_repo_delete(r.get(), 0, 0, 100 + i), KES_OK);
        if (i % 20 == 19) {
            const kes_fv_range lib1{1, 1, 0, 0};
            ASSERT_EQ(kes_fv_repo_delete_range(r.get(), &lib1, nullptr), KES_OK);
        }
        std::this_thread::yield();
    }
    // Let the readers run at least once more after the last write.
    const int seen = searches.load();
    while (searches.load() < seen + 3) std::this_thread::yield();
    stop = true;
    for (auto& t : readers) t.join();
    EXPECT_EQ(bad.load(), 0);
    uint64_t live = 0;
    kes_fv_repo_count(r.get(), &live, nullptr);
    EXPECT_EQ(live, 140u);
}

TEST(FvConcurrency, WritersOnDifferentLibrariesAllLand) {
    Repo r = make_pq();
    std::vector<std::thread> writers;
    for (uint32_t w = 0; w < 4; ++w)
        writers.emplace_back([&, w] {
            for (uint32_t i = 0; i < 20; ++i) {
                const auto a = random_pq36(5, w * 100 + i);
                EXPECT_EQ(kes_fv_repo_add(r.get(), w, 0, i * 5, a.data(), 5, a.size()), KES_OK);
            }
        });
    const auto t = random_table(1);
    for (int i = 0; i < 10; ++i) {
        std::vector<kes_fv_result> res(10);
        uint32_t count = 0;
        const kes_fv_search_params p = params(10);
        EXPECT_EQ(kes_fv_search(r.get(), t.data(), t.size(), &p, res.data(), res.size(), &count), KES_OK);
    }
    for (auto& t2 : writers) t2.join();
    uint64_t live = 0;
    uint32_t libs = 0;
    kes_fv_repo_count(r.get(), &live, &libs);
    EXPECT_EQ(live, 400u);
    EXPECT_EQ(libs, 4u);
}

}  // namespace
