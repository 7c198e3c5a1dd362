#include <gtest/gtest.h>
#include <algorithm>
#include <cstddef>
#include <cstring>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "alloc_counter.hpp"
#include "kestrel/sdk.h"
#include "struct_size_check.hpp"

using kes_test::expect_struct_growth;
using kes_test::SizedStruct;

namespace {

struct PoolGuard {
    kes_thread_pool* pool = nullptr;
    explicit PoolGuard(uint32_t threads) {
        kes_thread_pool_config c;
        kes_thread_pool_config_init(&c);
        c.threads = threads;
        c.name = "test";
        EXPECT_EQ(kes_thread_pool_create(&c, &pool), KES_OK) << kes_last_error();
    }
    ~PoolGuard() { kes_thread_pool_destroy(pool); }
};

struct CoverState {
    std::vector<std::atomic<int>> hits;
    std::atomic<uint32_t> max_worker{0};
    uint32_t size;
    explicit CoverState(size_t n, uint32_t pool_size) : hits(n), size(pool_size) {}
};

void cover(void* user, uint64_t begin, uint64_t end, uint32_t worker) {
    auto* s = static_cast<CoverState*>(user);
    EXPECT_LT(worker, s->size);
    for (uint64_t i = begin; i < end; ++i) s->hits[i].fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

TEST(ThreadPool, ParallelForCoversEveryIndexExactlyOnce) {
    PoolGuard g(4);
    ASSERT_EQ(kes_thread_pool_size(g.pool), 4u);
    for (uint64_t n : {1u, 7u, 100u, 10007u}) {
        for (uint64_t grain : {0u, 1u, 64u}) {
            CoverState s(n, 4);
            ASSERT_EQ(kes_thread_pool_parallel_for(g.pool, n, grain, cover, &s), KES_OK);
            for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(s.hits[i].load(), 1) << "n=" << n << " i=" << i;
        }
    }
}

TEST(ThreadPool, WorkerIndexIsUniqueAmongConcurrentRanges) {
    PoolGuard g(3);
    struct State {
        std::atomic<int> in_use[3] = {};
        std::atomic<bool> clash{false};
    } s;
    auto fn = [](void* user, uint64_t, uint64_t, uint32_t w) {
        auto* st = static_cast<State*>(user);
        if (st->in_use[w].fetch_add(1) != 0) st->clash = true;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        st->in_use[w].fetch_sub(1);
    };
    ASSERT_EQ(kes_thread_pool_parallel_for(g.pool, 60, 1, fn, &s), KES_OK);
    EXPECT_FALSE(s.clash.load());
}

// Kernels call parallel_for on paths that promise no allocation (engine execute): no thread may
// allocate for it, neither the caller nor the workers that help.
TEST(ThreadPool, ParallelForAllocatesNothingOnAnyThread) {
    PoolGuard g(4);
    std::vector<std::atomic<int>> hits(10000);
    auto fn = [](void* user, uint64_t begin, uint64_t end, uint32_t) {
        auto& h = *static_cast<std::vector<std::atomic<int>>*>(user);
        for (uint64_t i = begin; i < end; ++i) h[i].fetch_add(1, std::memory_order_relaxed);
    };
    ASSERT_EQ(kes_thread_pool_parallel_for(g.pool, hits.size(), 16, fn, &hits), KES_OK);  // warm up
    kes_test::start_counting_all_threads();
    for (int round = 0; round < 50; ++round)
        ASSERT_EQ(kes_thread_pool_parallel_for(g.pool, hits.size(), 16, fn, &hits), KES_OK);
    EXPECT_EQ(kes_test::stop_counting_all_threads(), 0u);
    for (auto& h : hits) ASSERT_EQ(h.load(), 51);
}

TEST(ThreadPool, NestedParallelForRunsInlineWithoutDeadlock) {
    PoolGuard g(2);
    struct Outer {
        kes_thread_pool* pool;
        std::atomic<uint64_t> inner_total{0};
    } o{g.pool};
    auto outer = [](void* user, uint64_t begin, uint64_t end, uint32_t) {
        auto* st = static_cast<Outer*>(user);
        for (uint64_t i = begin; i < end; ++i) {
            auto inner = [](void* u, uint64_t b, uint64_t e, uint32_t) {
                static_cast<std::atomic<uint64_t>*>(u)->fetch_add(e - b);
            };
            ASSERT_EQ(kes_thread_pool_parallel_for(st->pool, 10, 1, inner, &st->inner_total), KES_OK);
        }
    };
    ASSERT_EQ(kes_thread_pool_parallel_for(g.pool, 16, 1, outer, &o), KES_OK);
    EXPECT_EQ(o.inner_total.load(), 160u);
}

TEST(ThreadPool, SubmitRunsTasksAndWaitIdleWaitsForThem) {
    PoolGuard g(1);  // one thread still gets a worker, so submit is asynchronous
    std::atomic<int> done{0};
    for (int i = 0; i < 100; ++i) {
        ASSERT_EQ(kes_thread_pool_submit(
                      g.pool, [](void* u) { static_cast<std::atomic<int>*>(u)->fetch_add(1); }, &done),
                  KES_OK);
    }
    ASSERT_EQ(kes_thread_pool_wait_idle(g.pool), KES_OK);
    EXPECT_EQ(done.load(), 100);
}

TEST(ThreadPool, ManyCallersShareOnePool) {
    PoolGuard g(3);
    std::vector<std::thread> callers;
    std::atomic<int> failures{0};
    for (int t = 0; t < 3; ++t) {
        callers.emplace_back([&] {
            for (int rep = 0; rep < 20; ++rep) {
                CoverState s(257, 3);
                if (kes_thread_pool_parallel_for(g.pool, 257, 8, cover, &s) != KES_OK) failures++;
                for (auto& h : s.hits)
                    if (h.load() != 1) failures++;
            }
        });
    }
    for (auto& c : callers) c.join();
    EXPECT_EQ(failures.load(), 0);
}

TEST(ThreadPool, DestroyFinishesQueuedTasks) {
    std::atomic<int> done{0};
    {
        PoolGuard g(2);
        for (int i = 0; i < 20; ++i) {
            kes_thread_pool_submit(
                g.pool, [](void* u) { static_cast<std::atomic<int>*>(u)->fetch_add(1); }, &done);
        }
    }
    EXPECT_EQ(done.load(), 20);
}

TEST(ThreadPool, DefaultPoolIsSharedAndSurvivesDestroy) {
    kes_thread_pool* p = kes_thread_pool_default();
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p, kes_thread_pool_default());
    EXPECT_GE(kes_thread_pool_size(p), 1u);
    kes_thread_pool_destroy(p);  // ignored
    CoverState s(33, kes_thread_pool_size(p));
    EXPECT_EQ(kes_thread_pool_parallel_for(p, 33, 1, cover, &s), KES_OK);
}

TEST(ThreadPool, BadArgumentsAreRefused) {
    kes_thread_pool* pool = nullptr;
    kes_thread_pool_config c;
    kes_thread_pool_config_init(&c);
    c.struct_size = 4;
    EXPECT_EQ(kes_thread_pool_create(&c, &pool), KES_ERR_INVALID_ARGUMENT);
    kes_thread_pool_config_init(&c);
    c.affinity_count = 2;
    EXPECT_EQ(kes_thread_pool_create(&c, &pool), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("cpu_affinity"), std::string::npos);
    EXPECT_EQ(kes_thread_pool_parallel_for(nullptr, 1, 1, cover, nullptr), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_thread_pool_parallel_for(kes_thread_pool_default(), 1, 1, nullptr, nullptr),
              KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_thread_pool_submit(kes_thread_pool_default(), nullptr, nullptr), KES_ERR_INVALID_ARGUMENT);
}

TEST(ThreadPool, AffinityPinsWorkersWhenAllowed) {
    const int cpus[] = {0};
    kes_thread_pool_config c;
    kes_thread_pool_config_init(&c);
    c.threads = 2;
    c.cpu_affinity = cpus;
    c.affinity_count = 1;
    kes_thread_pool* pool = nullptr;
    ASSERT_EQ(kes_thread_pool_create(&c, &pool), KES_OK);
    CoverState s(100, 2);
    EXPECT_EQ(kes_thread_pool_parallel_for(pool, 100, 1, cover, &s), KES_OK);
    kes_thread_pool_destroy(pool);
}

// struct_size (kes/struct_size.hpp): accepted from the first release up; a newer struct only with a
// zero tail.
TEST(ThreadPool, ConfigGrowsWithoutBreakingApps) {
    kes_thread_pool_config cfg;
    kes_thread_pool_config_init(&cfg);
    cfg.threads = 2;
    expect_struct_growth(cfg, offsetof(kes_thread_pool_config, name) + sizeof(const char*),
                         [](kes_thread_pool_config* c) {
                             kes_thread_pool* pool = nullptr;
                             const kes_status st = kes_thread_pool_create(c, &pool);
                             kes_thread_pool_destroy(pool);
                             return st;
                         });
}
