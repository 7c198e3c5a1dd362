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
    // A loaded codebook must be usable: the loader's checks keep non-finite values out of tables.
    kes_fv_pq* pq = nullptr;
    if (kes_fv_repo_get_pq(repo, &pq) == KES_OK) {
        uint32_t dim = 0;
        kes_fv_pq_dim(pq, &dim);
        std::vector<float> q(dim, 0.25f), table(KES_FV_PQ36_TABLE_FLOATS);
        kes_fv_pq_compute_table(pq, q.data(), q.size(), table.data(), table.size());
        kes_fv_pq_destroy(pq);
    }
    kes_fv_repo_destroy(repo);
    return 0;
}
