// kes/host_services.hpp — one Kestrel per process (not installed).
//
// A library the process loads at run time may carry a copy of Kestrel of its own: board/ascend-sim's
// libascendcl.so links the engine and the sdk statically to run the simulated NPU. Its copy would keep
// a second set of Kestrel's process-wide state — a second trace recorder (it read KES_TRACE too and
// overwrote the app's file at exit), a second thread pool (twice the threads the board has cores for),
// its own log level and sink (the app's kes_log_set_level/_callback never reached it), its own CPU
// features, each KES_* variable read and warned about twice. So the process's Kestrel lends that copy
// its own: right after dlopen, ascend_runtime.cpp looks up KES_HOST_ATTACH_SYMBOL in the library and
// calls it with this table, and from then on the library's copy forwards trace spans, log messages and
// level, the shared pool and the CPU features to it (host_services() is non-null there). The table holds
// C functions only, so the two copies may come from different Kestrel releases; struct_size comes first
// and fields are only appended. A copy nobody attaches (an AscendCL app without Kestrel) keeps its own.
#pragma once

#include <cstdint>

#include "kestrel/log.h"
#include "kestrel/thread_pool.h"

extern "C" {

typedef struct kes_host_services {
    uint32_t struct_size; /* sizeof(kes_host_services) of the lending copy */
    int (*trace_enabled)(void);
    void (*trace_begin)(const char* category, const char* name);
    void (*trace_end)(void);
    kes_status (*trace_start)(const char* path);
    kes_status (*trace_stop)(void);
    kes_log_level (*log_get_level)(void);
    kes_status (*log_set_level)(kes_log_level level);
    void (*log_set_callback)(kes_log_callback callback, void* user_data);
    void (*log_write)(kes_log_level level, const char* module, const char* format, ...);
    kes_thread_pool* (*thread_pool_default)(void);
    uint32_t (*thread_pool_size)(const kes_thread_pool* pool);
    kes_status (*thread_pool_parallel_for)(kes_thread_pool* pool, uint64_t count, uint64_t grain, kes_range_fn fn,
                                           void* user_data);
    kes_status (*thread_pool_submit)(kes_thread_pool* pool, kes_task_fn fn, void* user_data);
    kes_status (*thread_pool_wait_idle)(kes_thread_pool* pool);
    uint32_t (*cpu_features)(void);
} kes_host_services;

#define KES_HOST_ATTACH_SYMBOL "kes_host_attach"

/* Called by the process's Kestrel in a library that embeds a copy (exported by that library's version
 * script: board/ascend-sim/exports.map). A table older than this copy knows, or this copy's own, is
 * ignored (the copy then keeps its own state). */
KES_API void kes_host_attach(const kes_host_services* host);
}

namespace kes {

// The lending Kestrel's table when this copy lives in a library it attached; null in the process's own.
const kes_host_services* host_services() noexcept;

// This copy's table, lent to the libraries it loads.
const kes_host_services& own_services() noexcept;

// After dlopen of a library that may embed Kestrel: attaches it (and keeps it mapped, since its trace
// span names then live in this copy's buffers). True when the library took the table.
bool attach_embedded(void* dl_handle) noexcept;

}  // namespace kes
