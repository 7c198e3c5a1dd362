/* The README's C example with what it needs around it: its arguments made as an app makes them (BlazeFace's
 * anchors and decoding as samples/face-search sets them up, the people face-search --save wrote), then
 * one call. tools/tests/readme_example_check.sh extracts the example into readme_example.c, builds this
 * file against an installed Kestrel and runs it on the demo's photos (ctest Docs.ReadmeExampleNamesZoe...).
 *   readme_example PHOTO DETECTOR.kom EMBEDDER.kom DB      (DB and DB.names from face-search --save)
 * Exit status: who_is_in's (0, or 1 after printing the error), 2 for usage. */
#include <stdlib.h>
#include <string.h>

#include "readme_example.c"

#define MAX_PEOPLE 64

static int fail(const char* what) {
    fprintf(stderr, "readme_example: %s: %s\n", what, kes_last_error());
    return 1;
}

/* DB.names: "kestrel-face-names 1", then "0 i name" for person i (face-search's format). */
static int load_names(const char* db, char names[MAX_PEOPLE][64], const char* pointers[MAX_PEOPLE]) {
    char path[4096], line[256];
    snprintf(path, sizeof path, "%s.names", db);
    FILE* file = fopen(path, "r");
    if (!file) {
        perror(path);
        return 1;
    }
    int n = 0;
    if (!fgets(line, sizeof line, file) || strcmp(line, "kestrel-face-names 1\n") != 0) n = -1;
    unsigned id0, id1;
    while (n >= 0 && n < MAX_PEOPLE && fscanf(file, "%u %u %63s", &id0, &id1, names[n]) == 3) {
        if (id0 != 0 || id1 != (unsigned)n)
            n = -1;
        else
            pointers[n] = names[n], ++n;
    }
    fclose(file);
    if (n <= 0) fprintf(stderr, "readme_example: %s is not a names file of face-search\n", path);
    return n <= 0;
}

int main(int argc, char** argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: readme_example PHOTO DETECTOR.kom EMBEDDER.kom DB\n");
        return 2;
    }
    static char names[MAX_PEOPLE][64];
    static const char* name_of[MAX_PEOPLE];
    if (load_names(argv[4], names, name_of)) return 1;
    kes_fv_repo* people = NULL;
    if (kes_fv_repo_load(argv[4], &people) != KES_OK) return fail(argv[4]);

    kes_mem_pool_config pool_cfg;
    kes_mem_pool_config_init(&pool_cfg);
    pool_cfg.initial_bytes = 64u << 20;
    pool_cfg.grow_bytes = 64u << 20;
    kes_mem_pool* pool = NULL;
    if (kes_mem_pool_create(&pool_cfg, &pool) != KES_OK) return fail("pool");
    kes_dvpp_channel_config ch_cfg;
    kes_dvpp_channel_config_init(&ch_cfg);
    ch_cfg.pool = pool; /* host memory: the CPU aligns the faces */
    kes_dvpp_channel* ch = NULL;
    if (kes_dvpp_channel_create(&ch_cfg, &ch) != KES_OK) return fail("DVPP channel");

    kes_model *det_model = NULL, *emb_model = NULL;
    kes_model_context *det = NULL, *emb = NULL;
    if (kes_model_load_from_file(argv[2], 0, &det_model) != KES_OK) return fail(argv[2]);
    if (kes_model_load_from_file(argv[3], 0, &emb_model) != KES_OK) return fail(argv[3]);
    if (kes_model_context_create(det_model, NULL, 0, &det) != KES_OK ||
        kes_model_context_create(emb_model, NULL, 0, &emb) != KES_OK)
        return fail("model context");
    kes_tensor det_out[4];
    for (size_t i = 0; i < 4; ++i) {
        kes_tensor desc;
        if (kes_model_context_output_desc(det, i, &desc) != KES_OK ||
            kes_tensor_alloc(&det_out[i], pool, desc.dtype, desc.layout, desc.ndim, desc.shape) != KES_OK)
            return fail("detector outputs");
    }

    /* BlazeFace-256 ("back"): 16x16x2 + 8x8x6 anchors, sigmoid scores >= 0.75, boxes and 6 keypoints in
     * input pixels (samples/face-search/blazeface.c, blazeface_init). */
    static const uint32_t strides[4] = {16, 32, 32, 32};
    kes_detect_anchor_config anchor_cfg;
    kes_detect_anchor_config_init(&anchor_cfg);
    anchor_cfg.input_width = anchor_cfg.input_height = 256;
    anchor_cfg.num_layers = 4;
    anchor_cfg.strides = strides;
    anchor_cfg.min_scale = 0.15625f;
    anchor_cfg.max_scale = 0.75f;
    anchor_cfg.fixed_anchor_size = 1;
    static kes_anchor anchors[896];
    size_t count = 0;
    if (kes_detect_anchors_generate(&anchor_cfg, anchors, 896, &count) != KES_OK) return fail("anchors");
    kes_detect_decode_config decode;
    kes_detect_decode_config_init(&decode);
    decode.score_threshold = 0.75f;
    decode.x_scale = decode.y_scale = decode.w_scale = decode.h_scale = 256;
    decode.num_keypoints = 6;

    const int rc = who_is_in(argv[1], ch, det, det_out, emb, &decode, anchors, people, name_of);

    for (size_t i = 0; i < 4; ++i) kes_tensor_release(&det_out[i]);
    kes_model_context_destroy(emb);
    kes_model_context_destroy(det);
    kes_model_unload(emb_model);
    kes_model_unload(det_model);
    kes_dvpp_channel_destroy(ch);
    kes_mem_pool_destroy(pool);
    kes_fv_repo_destroy(people);
    return rc;
}
