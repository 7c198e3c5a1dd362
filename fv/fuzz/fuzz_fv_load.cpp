// Fuzz target for the repository loader: any bytes must load or fail with a status, never crash,
// and whatever loads must survive a search (the loader's value checks are what keep NaNs out).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kestrel/fv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    kes_fv_repo* repo = nullptr;
    if (kes_fv_repo_load_memory(data, size, &repo) != KES_OK) return 0;
    size_t floats = 0;
    kes_fv_repo_query_floats(repo, &floats);
    std::vector<float> query(floats, 0.5f);
    kes_fv_search_params params;
    kes_fv_search_params_init(&params);
    params.k = 1;
    kes_fv_result result[1];
    uint32_t count = 0;
    kes_fv_search(repo, query.data(), query.size(), &params, result, 1, &count);
    kes_fv_repo_destroy(repo);
    return 0;
}
