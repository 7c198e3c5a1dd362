// The memory behind owned images and tensors (owned_block.hpp).
#include "owned_block.hpp"

#include "kes/error.hpp"
#include "kes/logging.hpp"

namespace kes {

void* try_alloc_owned_block(kes_mem_pool* pool, size_t bytes, kes_status* out_status) noexcept {
    const size_t request = bytes ? bytes : 1;
    void* data = nullptr;
    *out_status = pool ? kes_mem_pool_alloc(pool, request, &data) : kes_mem_alloc(KES_MEM_HOST, request, &data);
    return *out_status == KES_OK ? data : nullptr;
}

void fail_owned_block(kes_status status, kes_mem_pool* pool, size_t bytes, const std::string& what) {
    const std::string why = kes_last_error();
    KES_FAIL(status == KES_OK ? KES_ERR_OUT_OF_MEMORY : status, "cannot allocate %zu bytes for %s from %s: %s", bytes,
             what.c_str(), pool ? "the pool" : "host memory", why.c_str());
}

void free_owned_block(kes_mem_pool* pool, void* data, const char* caller) {
    if (data == nullptr) return;
    if (pool == nullptr) {
        kes_mem_free(data);
    } else if (kes_mem_pool_free(pool, data) != KES_OK) {
        KES_LOGW("sdk", "%s: %s", caller, kes_last_error());
    }
}

}  // namespace kes
