// One Kestrel per process: the table this copy lends the libraries it loads, and the one it was lent
// when it lives in such a library (kes/host_services.hpp says why).
#include "kes/host_services.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstddef>

#include "kes/logging.hpp"
#include "kestrel/cpu.h"
#include "kestrel/trace.h"

namespace kes {
namespace {

std::atomic<const kes_host_services*> g_host{nullptr};

// The fields of the first release: a lender older than that is ignored.
constexpr size_t kServicesV1 = offsetof(kes_host_services, cpu_features) + sizeof(kes_host_services::cpu_features);

}  // namespace

const kes_host_services* host_services() noexcept {
    return g_host.load(std::memory_order_acquire);
}

const kes_host_services& own_services() noexcept {
    // The public entry points, which forward in turn if this copy was itself lent a table.
    static const kes_host_services table = {sizeof(kes_host_services),
                                            kes_trace_enabled,
                                            kes_trace_begin,
                                            kes_trace_end,
                                            kes_trace_start,
                                            kes_trace_stop,
                                            kes_log_get_level,
                                            kes_log_set_level,
                                            kes_log_set_callback,
                                            kes_log_write,
                                            kes_thread_pool_default,
                                            kes_thread_pool_size,
                                            kes_thread_pool_parallel_for,
                                            kes_thread_pool_submit,
                                            kes_thread_pool_wait_idle,
                                            kes_cpu_features};
    return table;
}

bool attach_embedded(void* dl_handle) noexcept {
    if (!dl_handle) return false;
    using Attach = void (*)(const kes_host_services*);
    const auto attach = reinterpret_cast<Attach>(dlsym(dl_handle, KES_HOST_ATTACH_SYMBOL));
    if (!attach) return false;
    // From now on this copy's trace buffers hold span names that are the library's string literals, and
    // its threads run the library's code: it must stay mapped after a kes_backend_shutdown's dlclose.
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(attach), &info) != 0 && info.dli_fname)
        dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    attach(&own_services());
    KES_LOGD("sdk", "%s carries a copy of Kestrel: it shares this process's trace, log, thread pool and CPU features",
             info.dli_fname ? info.dli_fname : "the AscendCL library");
    return true;
}

}  // namespace kes

extern "C" void kes_host_attach(const kes_host_services* host) {
    if (!host || host == &kes::own_services() || host->struct_size < kes::kServicesV1) return;
    kes::g_host.store(host, std::memory_order_release);
}
