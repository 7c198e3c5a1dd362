// The shared worker pool: a FIFO of tasks served by N-1 workers; parallel_for lets the caller work too.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kes/error.hpp"
#include "kes/host_services.hpp"
#include "kes/logging.hpp"
#include "kes/struct_size.hpp"
#include "kestrel/cpu.h"
#include "kestrel/thread_pool.h"

namespace kes {
struct ParallelJob;
}

struct kes_thread_pool {
    explicit kes_thread_pool(const kes_thread_pool_config& config);
    // The default pool of a copy of Kestrel in a library the app's Kestrel attached: no threads of its
    // own, every call goes to the app's default pool (kes/host_services.hpp).
    kes_thread_pool(const kes_host_services& host, kes_thread_pool* host_pool);
    ~kes_thread_pool();

    void submit(std::function<void()> task, bool counted);
    void wait_idle();
    void worker_main(uint32_t index);

    uint32_t size = 1;  // workers + the caller of parallel_for
    bool is_default = false;
    std::string name;
    std::vector<int> affinity;

    std::mutex mutex;
    std::condition_variable work_ready;
    std::condition_variable idle;
    std::deque<std::function<void()>> queue;
    uint64_t outstanding_tasks = 0;  // submitted via kes_thread_pool_submit and not yet finished
    // parallel_for jobs open for helpers: intrusive list of jobs living on their callers' stacks, so a
    // parallel_for allocates nothing. Guarded by `mutex`.
    kes::ParallelJob* jobs = nullptr;
    std::condition_variable helper_left;  // a helper finished with a job
    bool stopping = false;
    // Bumped (under `mutex`) whenever work is posted or the pool stops: a worker that just finished
    // watches it for a short while before sleeping (spin_until below).
    std::atomic<uint64_t> posted{0};
    std::vector<std::thread> workers;
    const kes_host_services* host = nullptr;  // set: a stand-in for host_pool, the app's pool
    kes_thread_pool* host_pool = nullptr;
};

namespace kes {

// One parallel_for call, on its caller's stack. Helpers join it from the pool's job list while it has
// unclaimed chunks; the caller unlinks it when its own share is done and waits until every helper that
// joined has left, so the job never outlives a reader.
struct ParallelJob {
    kes_range_fn fn = nullptr;
    void* user_data = nullptr;
    uint64_t count = 0;
    uint64_t chunk = 1;
    uint32_t max_helpers = 0;  // helpers beyond this find nothing to do: do not wake them
    std::atomic<uint64_t> next{0};
    std::atomic<uint32_t> next_participant{0};
    uint32_t helpers_joined = 0;              // guarded by the pool mutex
    uint32_t helpers_active = 0;              // guarded by the pool mutex
    std::atomic<uint32_t> active_helpers{0};  // helpers_active, readable without the mutex (spinning)
    ParallelJob* link = nullptr;              // guarded by the pool mutex

    bool has_work() const { return next.load(std::memory_order_relaxed) < count && helpers_joined < max_helpers; }

    // Claims chunks until none are left.
    void participate() {
        const uint32_t index = next_participant.fetch_add(1, std::memory_order_relaxed);
        for (;;) {
            const uint64_t begin = next.fetch_add(chunk, std::memory_order_relaxed);
            if (begin >= count) break;
            fn(user_data, begin, std::min(count, begin + chunk), index);
        }
    }
};

}  // namespace kes

namespace kes {
namespace {

// How long a worker that ran out of work, or a parallel_for caller waiting for its helpers, keeps
// checking before it sleeps on a condition variable. Waking a sleeping thread costs tens of
// microseconds, as long as a whole layer of a small CNN: the engine runs one parallel_for per layer,
// back to back, and without this a second thread made BlazeFace slower, not faster. Like ONNX
// Runtime's spinning pool; KES_POOL_SPIN_US sets it (0 turns spinning off; default 200).
uint64_t spin_ns() {
    static const uint64_t ns = [] {
        const char* v = std::getenv("KES_POOL_SPIN_US");
        if (!v || !*v) return uint64_t{200000};
        char* end = nullptr;
        const unsigned long long us = std::strtoull(v, &end, 10);
        return *end == '\0' && us <= 1000000 ? static_cast<uint64_t>(us) * 1000 : uint64_t{200000};
    }();
    return ns;
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

// Polls `done` until it holds or spin_ns() passes; true when it held.
template <class Done>
bool spin_until(Done&& done) {
    const uint64_t limit = spin_ns();
    if (limit == 0) return done();
    const auto start = std::chrono::steady_clock::now();
    for (uint32_t i = 0;; ++i) {
        if (done()) return true;
        cpu_relax();
        if ((i & 63) == 63 && static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                        std::chrono::steady_clock::now() - start)
                                                        .count()) > limit)
            return done();
    }
}

// The pool whose worker is running on this thread: a parallel_for issued from inside runs inline.
thread_local const kes_thread_pool* t_worker_of = nullptr;

void name_and_pin(const std::string& prefix, uint32_t index, const std::vector<int>& affinity) {
    char name[16];
    std::snprintf(name, sizeof name, "%.10s-%u", prefix.c_str(), index);
    pthread_setname_np(pthread_self(), name);
    if (!affinity.empty()) {
        cpu_set_t set;
        CPU_ZERO(&set);
        const int cpu = affinity[index % affinity.size()];
        CPU_SET(cpu, &set);
        if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
            KES_LOGW("sdk", "thread pool %s: cannot pin worker %u to CPU %d", prefix.c_str(), index, cpu);
        }
    }
}

}  // namespace
}  // namespace kes

kes_thread_pool::kes_thread_pool(const kes_thread_pool_config& config) {
    size = config.threads ? config.threads : kes_cpu_count();
    name = config.name && *config.name ? config.name : "kes";
    if (config.cpu_affinity && config.affinity_count) {
        affinity.assign(config.cpu_affinity, config.cpu_affinity + config.affinity_count);
    }
    // At least one worker even for size 1, so kes_thread_pool_submit always runs asynchronously.
    const uint32_t worker_count = std::max<uint32_t>(1, size - 1);
    workers.reserve(worker_count);
    try {
        for (uint32_t i = 0; i < worker_count; ++i) workers.emplace_back([this, i] { worker_main(i); });
    } catch (...) {
        {
            std::lock_guard<std::mutex> lock(mutex);
            stopping = true;
            posted.fetch_add(1, std::memory_order_release);
        }
        work_ready.notify_all();
        for (auto& t : workers) t.join();
        throw;
    }
}

kes_thread_pool::kes_thread_pool(const kes_host_services& services, kes_thread_pool* pool)
    : size(services.thread_pool_size(pool)), is_default(true), name("host"), host(&services), host_pool(pool) {}

kes_thread_pool::~kes_thread_pool() {
    {
        std::lock_guard<std::mutex> lock(mutex);
        stopping = true;
        posted.fetch_add(1, std::memory_order_release);
    }
    work_ready.notify_all();
    for (auto& t : workers) t.join();
}

void kes_thread_pool::worker_main(uint32_t index) {
    kes::name_and_pin(name, index, affinity);
    kes::t_worker_of = this;
    auto open_job = [this]() -> kes::ParallelJob* {
        for (kes::ParallelJob* j = jobs; j; j = j->link)
            if (j->has_work()) return j;
        return nullptr;
    };
    for (;;) {
        std::function<void()> task;
        {
            // Work may be posted in a moment (the next layer): watch for it before taking the lock to
            // sleep. A post missed here is not lost: the wait below checks for work first.
            const uint64_t seen = posted.load(std::memory_order_acquire);
            kes::spin_until([&] { return posted.load(std::memory_order_acquire) != seen; });
            std::unique_lock<std::mutex> lock(mutex);
            // The job is picked by the same check that ends the wait: `next` moves outside the lock, so
            // a second look could find it drained and the worker would have nothing to do (an earlier
            // version then exited, losing the worker). A job drained meanwhile is harmless: it is still
            // linked (its caller unlinks it under this lock), participate() finds no chunk and returns.
            kes::ParallelJob* job = nullptr;
            work_ready.wait(lock, [&] {
                job = open_job();
                return stopping || !queue.empty() || job != nullptr;
            });
            if (job) {  // parallel_for work first: its caller is waiting
                ++job->helpers_joined;
                ++job->helpers_active;
                job->active_helpers.fetch_add(1, std::memory_order_relaxed);
                lock.unlock();
                job->participate();
                lock.lock();
                job->active_helpers.fetch_sub(1, std::memory_order_release);
                if (--job->helpers_active == 0) helper_left.notify_all();
                continue;
            }
            if (queue.empty()) return;  // stopping, and everything queued has run
            task = std::move(queue.front());
            queue.pop_front();
        }
        task();
    }
}

void kes_thread_pool::submit(std::function<void()> task, bool counted) {
    {
        std::lock_guard<std::mutex> lock(mutex);
        if (counted) {
            ++outstanding_tasks;
            queue.emplace_back([this, t = std::move(task)] {
                t();
                std::lock_guard<std::mutex> l(mutex);
                if (--outstanding_tasks == 0) idle.notify_all();
            });
        } else {
            queue.emplace_back(std::move(task));
        }
        posted.fetch_add(1, std::memory_order_release);
    }
    work_ready.notify_one();
}

void kes_thread_pool::wait_idle() {
    std::unique_lock<std::mutex> lock(mutex);
    idle.wait(lock, [this] { return outstanding_tasks == 0; });
}

extern "C" {

void kes_thread_pool_config_init(kes_thread_pool_config* config) {
    if (!config) return;
    std::memset(config, 0, sizeof *config);
    config->struct_size = sizeof *config;
    config->name = "kes";
}

kes_status kes_thread_pool_create(const kes_thread_pool_config* config, kes_thread_pool** out_pool) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_pool);
        *out_pool = nullptr;
        kes_thread_pool_config c;
        kes_thread_pool_config_init(&c);
        if (config)
            kes::read_struct(config, KES_STRUCT_SIZE_THROUGH(kes_thread_pool_config, name), "config",
                             "kes_thread_pool_config", &c);
        KES_REQUIRE(c.threads <= 1024, "threads %u > 1024", c.threads);
        KES_REQUIRE(c.affinity_count == 0 || c.cpu_affinity != nullptr, "affinity_count %u but cpu_affinity is NULL",
                    c.affinity_count);
        for (uint32_t i = 0; i < c.affinity_count; ++i) {
            KES_REQUIRE(c.cpu_affinity[i] >= 0 && c.cpu_affinity[i] < CPU_SETSIZE, "cpu_affinity[%u] = %d is not a CPU",
                        i, c.cpu_affinity[i]);
        }
        try {
            *out_pool = std::make_unique<kes_thread_pool>(c).release();
        } catch (const std::system_error& e) {
            KES_FAIL(KES_ERR_OUT_OF_MEMORY, "cannot start worker threads: %s", e.what());
        }
        return KES_OK;
    });
}

void kes_thread_pool_destroy(kes_thread_pool* pool) {
    if (!pool || pool->is_default) return;
    std::unique_ptr<kes_thread_pool> owned(pool);
}

kes_thread_pool* kes_thread_pool_default(void) {
    if (const kes_host_services* host = kes::host_services()) {
        // Never a second pool in one process: the app's, through a stand-in made once.
        static kes_thread_pool* const stand_in = [host]() -> kes_thread_pool* {
            kes_thread_pool* pool = host->thread_pool_default();
            if (!pool) return nullptr;
            static kes_thread_pool forwarder(*host, pool);
            return &forwarder;
        }();
        return stand_in;
    }
    // Reachable from this static for the whole process, so leak checkers do not flag it; its threads
    // idle on a condition variable until exit.
    static kes_thread_pool* const pool = [] {
        kes_thread_pool_config c;
        kes_thread_pool_config_init(&c);
        if (const char* env = std::getenv("KES_NUM_THREADS")) {
            const long n = std::strtol(env, nullptr, 10);
            if (n >= 1 && n <= 1024) {
                c.threads = static_cast<uint32_t>(n);
            } else {
                KES_LOGW("sdk", "KES_NUM_THREADS=%s is not 1..1024; using all %u CPUs", env, kes_cpu_count());
            }
        }
        kes_thread_pool* p = nullptr;
        if (kes_thread_pool_create(&c, &p) != KES_OK) {
            KES_LOGE("sdk", "cannot create the default thread pool: %s", kes_last_error());
            return static_cast<kes_thread_pool*>(nullptr);
        }
        p->is_default = true;
        return p;
    }();
    return pool;
}

uint32_t kes_thread_pool_size(const kes_thread_pool* pool) {
    return pool ? pool->size : 0;
}

kes_status kes_thread_pool_parallel_for(kes_thread_pool* pool, uint64_t count, uint64_t grain, kes_range_fn fn,
                                        void* user_data) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(pool);
        KES_REQUIRE_NOT_NULL(fn);
        if (pool->host) return pool->host->thread_pool_parallel_for(pool->host_pool, count, grain, fn, user_data);
        if (count == 0) return KES_OK;
        if (grain == 0) grain = 1;
        // Nested call from one of our workers, a one-thread pool, or too little work: run inline.
        if (kes::t_worker_of == pool || pool->size <= 1 || count <= grain) {
            fn(user_data, 0, count, 0);
            return KES_OK;
        }
        kes::ParallelJob job;
        job.fn = fn;
        job.user_data = user_data;
        job.count = count;
        // ~4 chunks per thread balances uneven ranges without much claiming overhead.
        job.chunk = std::max<uint64_t>(grain, (count + pool->size * 4 - 1) / (pool->size * 4));
        const uint64_t chunks = (count + job.chunk - 1) / job.chunk;
        job.max_helpers = static_cast<uint32_t>(std::min<uint64_t>(pool->size - 1, chunks - 1));
        {
            std::lock_guard<std::mutex> lock(pool->mutex);
            job.link = pool->jobs;
            pool->jobs = &job;
            pool->posted.fetch_add(1, std::memory_order_release);
        }
        for (uint32_t i = 0; i < job.max_helpers; ++i) pool->work_ready.notify_one();
        job.participate();
        // Every chunk is claimed: close the job to new helpers, then wait for those inside it.
        std::unique_lock<std::mutex> lock(pool->mutex);
        for (kes::ParallelJob** j = &pool->jobs; *j; j = &(*j)->link) {
            if (*j == &job) {
                *j = job.link;
                break;
            }
        }
        // Helpers finish their last chunk about when the caller does: watch for it before sleeping.
        if (job.helpers_active != 0) {
            lock.unlock();
            kes::spin_until([&] { return job.active_helpers.load(std::memory_order_acquire) == 0; });
            lock.lock();
        }
        pool->helper_left.wait(lock, [&] { return job.helpers_active == 0; });
        return KES_OK;
    });
}

kes_status kes_thread_pool_submit(kes_thread_pool* pool, kes_task_fn fn, void* user_data) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(pool);
        KES_REQUIRE_NOT_NULL(fn);
        if (pool->host) return pool->host->thread_pool_submit(pool->host_pool, fn, user_data);
        pool->submit([fn, user_data] { fn(user_data); }, true);
        return KES_OK;
    });
}

kes_status kes_thread_pool_wait_idle(kes_thread_pool* pool) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(pool);
        if (pool->host) return pool->host->thread_pool_wait_idle(pool->host_pool);
        KES_REQUIRE(kes::t_worker_of != pool, "called from a worker of the same pool (would wait for itself)");
        pool->wait_idle();
        return KES_OK;
    });
}

}  // extern "C"
