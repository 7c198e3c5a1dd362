/* A C app that links Kestrel::fv alone (find_package(Kestrel COMPONENTS fv)): a dense cosine
 * repository of three vectors, one 1:N search that must find the second. */
#include <stdio.h>

#include "kestrel/fv.h"

int main(void) {
    kes_fv_config cfg;
    kes_fv_config_init(&cfg);
    cfg.kind = KES_FV_DENSE;
    cfg.dim = 4;
    cfg.metric = KES_FV_METRIC_COSINE;
    kes_fv_repo* repo = NULL;
    const float people[3][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}};
    const float query[4] = {0.1f, 0.9f, 0.0f, 0.1f};
    kes_fv_search_params params;
    kes_fv_search_params_init(&params);
    params.k = 1;
    kes_fv_result best;
    uint32_t found = 0;
    if (kes_fv_repo_create(&cfg, &repo) != KES_OK ||
        kes_fv_repo_add(repo, 0, 0, 0, people, 3, sizeof people) != KES_OK ||
        kes_fv_search(repo, query, 4, &params, &best, 1, &found) != KES_OK) {
        fprintf(stderr, "consumer-fv: %s\n", kes_last_error());
        kes_fv_repo_destroy(repo);
        return 1;
    }
    kes_fv_repo_destroy(repo);
    printf("consumer-fv: best of 3 is offset %u at cosine %.2f\n", best.offset, best.distance);
    return found == 1 && best.offset == 1 ? 0 : 1;
}
