/* face_embed.c — alignment, embedding and search of one face (face_embed.h). */
#include "face_embed.h"

#include <stdio.h>
#include <string.h>

#include "sample_errors.h"

int face_aipp_params(const char* program, kes_aipp_params* aipp) {
    kes_aipp_params_init(aipp);
    if (kes_aipp_params_apply_recipe(aipp, KES_AIPP_RECIPE_RGB_CENTERED, KES_AIPP_YUV420SP_U8,
                                     KES_AIPP_CSC_YUV2RGB_BT601_WIDE) != KES_OK)
        return sample_fail(program, "AIPP recipe");
    return 0;
}

int face_embedder_open(face_embedder* e, const char* program, const char* path, kes_mem_pool* pool) {
    memset(e, 0, sizeof *e);
    if (face_aipp_params(program, &e->aipp) || model_open(&e->net, program, path, pool)) return 1;
    e->dim = e->net.outputs >= 1 ? e->net.out_elements[0] : 0;
    if (e->dim < 8 || e->dim > FACE_EMBED_MAX_DIM) {
        fprintf(stderr, "%s: %s: the embedder gives %zu floats, not an embedding of 8..%d\n", program, path, e->dim,
                FACE_EMBED_MAX_DIM);
        return 1;
    }
    return 0;
}

void face_embedder_close(face_embedder* e) {
    model_close(&e->net);
}

/* MobileFaceNet wants faces aligned as in training (ArcFace's 112×112 template); a plain box crop loses
 * about 0.3 of same-face cosine. The SDK does it: kes_detect_align_face (kestrel/detect.h) maps the eyes,
 * nose and mouth centre BlazeFace found onto the template and samples the NV12 image there (VPC has no
 * affine warp). kes_detect_align_similarity tells keypoints that define no face (nothing to embed) from an
 * error. */
int face_align(const kes_detection* face, const kes_image* img, kes_mem_pool* pool, kes_image* out) {
    kes_detect_similarity t;
    if (kes_detect_align_similarity(face, &t) != KES_OK) return 0;
    return kes_detect_align_face(face, img, pool, out) == KES_OK ? 1 : -1;
}

int face_embed(face_embedder* e, const kes_image* aligned, float* embedding) {
    if (model_run(&e->net, &e->aipp, aligned, "MobileFaceNet")) return 1;
    memcpy(embedding, e->net.out[0].data, e->dim * sizeof(float));
    return 0;
}

int face_identify(face_embedder* e, const face_db* db, const kes_detection* face, const kes_image* img,
                  kes_mem_pool* pool, float* embedding, int64_t* person, float* cosine) {
    *person = -1;
    *cosine = 0;
    kes_image aligned;
    const int rc = face_align(face, img, pool, &aligned);
    if (rc < 0) return -sample_fail(e->net.program, "aligned face image");
    if (rc == 0) return 0;
    const int failed = face_embed(e, &aligned, embedding);
    kes_image_release(&aligned);
    if (failed || face_db_search(db, embedding, person, cosine)) return -1;
    return 1;
}
