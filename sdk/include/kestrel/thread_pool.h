/* kestrel/thread_pool.h — a fixed-size worker pool shared by every module.
 *
 * One pool, sized once, serves dvpp, aipp, engine and fv, so a 4-core board is not oversubscribed by
 * four libraries each starting their own threads (the big.LITTLE slow-down seen with MNN, alibaba/MNN
 * issue #1073; docs/BOARD-RULES.md §CPU). kes_thread_pool_default() is that shared pool: created on first use with
 * KES_NUM_THREADS threads if set, else the number of online CPUs.
 *
 * parallel_for splits [0, count) into ranges of at least `grain` items; the calling thread works too
 * and the call returns when every range is done. Called from inside a worker (nested parallelism) it
 * runs the whole range inline on that worker instead of deadlocking. It allocates nothing (the job
 * lives on the caller's stack), so kernels may use it on paths that promise no allocation.
 *
 * Thread-safety: every function may be called from any thread, concurrently, on one pool, except
 * kes_thread_pool_destroy, which must be the last call on it (it waits for queued tasks first).
 * Callbacks run on worker threads and must not throw (C++) or longjmp out.
 */
#ifndef KESTREL_THREAD_POOL_H
#define KESTREL_THREAD_POOL_H

#include "kestrel/status.h"

KES_BEGIN_DECLS

typedef struct kes_thread_pool kes_thread_pool; /* opaque handle */

typedef struct kes_thread_pool_config {
    uint32_t struct_size;    /* sizeof(kes_thread_pool_config) */
    uint32_t threads;        /* workers including the caller of parallel_for; 0 = online CPUs */
    const int* cpu_affinity; /* optional: worker i is pinned to cpu_affinity[i % affinity_count] */
    uint32_t affinity_count;
    const char* name; /* thread name prefix shown by top/perf (≤ 10 chars used) */
} kes_thread_pool_config;

KES_API void kes_thread_pool_config_init(kes_thread_pool_config* config);

KES_API kes_status kes_thread_pool_create(const kes_thread_pool_config* config, kes_thread_pool** out_pool);
/* Finishes queued tasks, joins the workers. NULL is a no-op. The default pool cannot be destroyed
 * (the call is ignored); it lives until process exit. */
KES_API void kes_thread_pool_destroy(kes_thread_pool* pool);

/* The shared pool (never NULL unless threads cannot be created at all). */
KES_API kes_thread_pool* kes_thread_pool_default(void);

/* Threads that run work (workers + the caller). */
KES_API uint32_t kes_thread_pool_size(const kes_thread_pool* pool);

/* fn(user_data, begin, end, worker_index) over disjoint ranges covering [0, count). worker_index is
 * in [0, kes_thread_pool_size) and unique among concurrently running calls of this parallel_for,
 * so it can index per-thread scratch. grain 0 means 1. */
typedef void (*kes_range_fn)(void* user_data, uint64_t begin, uint64_t end, uint32_t worker_index);
KES_API kes_status kes_thread_pool_parallel_for(kes_thread_pool* pool, uint64_t count, uint64_t grain, kes_range_fn fn,
                                                void* user_data);

/* Queues fn(user_data) to run on a worker; returns at once. */
typedef void (*kes_task_fn)(void* user_data);
KES_API kes_status kes_thread_pool_submit(kes_thread_pool* pool, kes_task_fn fn, void* user_data);

/* Waits until every task submitted so far has finished. */
KES_API kes_status kes_thread_pool_wait_idle(kes_thread_pool* pool);

KES_END_DECLS

#endif /* KESTREL_THREAD_POOL_H */
