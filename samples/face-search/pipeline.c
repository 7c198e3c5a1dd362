/* pipeline.c — one image through JPEGD, VPC, BlazeFace, alignment, MobileFaceNet and the fv search
 * (pipeline.h draws the path). Read pipeline_open, then pipeline_process_image. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "pipeline.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "errors.h"

const char* const kStageName[ST_COUNT] = {"decode", "detect", "align", "embed", "search", "draw", "encode"};

double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

double stage_begin(int stage) {
    if (kes_trace_enabled()) kes_trace_begin("face-search", kStageName[stage]);
    return now_ms();
}

void stage_end(timing* t, int stage, double start) {
    t->ms[stage] += now_ms() - start;
    t->calls[stage]++;
    if (kes_trace_enabled()) kes_trace_end();
}

int pipeline_open(pipeline* p, const char* detector, const char* embedder, float detect_threshold) {
    kes_mem_pool_config pool_cfg;
    kes_mem_pool_config_init(&pool_cfg);
    pool_cfg.initial_bytes = 64u << 20;
    pool_cfg.grow_bytes = 64u << 20;
    pool_cfg.name = "face-search";
    if (kes_mem_pool_create(&pool_cfg, &p->pool) != KES_OK) return fail("pool");
    kes_dvpp_channel_config ch_cfg;
    kes_dvpp_channel_config_init(&ch_cfg);
    ch_cfg.pool = p->pool; /* host memory: the CPU aligns the faces and draws the boxes */
    if (kes_dvpp_channel_create(&ch_cfg, &p->channel) != KES_OK) return fail("DVPP channel");
    /* Both models take RGB (x − 127.5) / 128; JPEGD output is full-range BT.601 (JFIF). */
    if (face_aipp_params("face-search", &p->aipp) || model_open(&p->det, "face-search", detector, p->pool) ||
        face_embedder_open(&p->emb, "face-search", embedder, p->pool))
        return 1;
    if (blazeface_init(&p->detector, &p->det, detector, detect_threshold, MAX_FACES)) return 1;
    p->dim = p->emb.dim;
    return face_db_create(&p->db, "face-search", p->dim);
}

void pipeline_close(pipeline* p) {
    face_db_destroy(&p->db);
    blazeface_free(&p->detector);
    face_embedder_close(&p->emb);
    model_close(&p->det);
    kes_dvpp_channel_destroy(p->channel);
    kes_mem_pool_destroy(p->pool);
}

int pipeline_decode_photo(pipeline* p, const char* path, kes_image* img) {
    const double t0 = stage_begin(ST_DECODE);
    const kes_status st = kes_jpeg_decode_file(p->channel, path, KES_PIXEL_NV12, NULL, img);
    stage_end(&p->time, ST_DECODE, t0);
    p->time.frames++;
    return st == KES_OK ? 0 : fail(path);
}

/* Faces sorted left to right (then top to bottom): the numbers --enroll NAME=PHOTO:FACE uses. */
static int by_position(const void* a, const void* b) {
    const kes_detection* x = &((const face*)a)->det;
    const kes_detection* y = &((const face*)b)->det;
    if (x->x0 != y->x0) return x->x0 < y->x0 ? -1 : 1;
    if (x->y0 != y->y0) return x->y0 < y->y0 ? -1 : 1;
    return 0;
}

/* VPC letterboxes the image to the detector's square input (the whole image, its aspect kept), the
 * detector runs, and blazeface.c turns its outputs into faces in the image's pixels. */
static int detect_faces(pipeline* p, const kes_image* img, face* faces, size_t* count) {
    *count = 0;
    const double t0 = stage_begin(ST_DETECT);
    const uint32_t side = p->detector.size;
    kes_image boxed;
    kes_vpc_roi paste;
    if (kes_vpc_letterbox(p->channel, img, NULL, side, side, NULL, NULL, &boxed, &paste) != KES_OK) {
        stage_end(&p->time, ST_DETECT, t0);
        return fail("VPC letterbox");
    }
    int rc = model_run(&p->det, &p->aipp, &boxed, "BlazeFace");
    kes_image_release(&boxed);
    const kes_detection* found = NULL;
    size_t kept = 0;
    if (!rc) rc = blazeface_decode(&p->detector, &p->det, &paste, img, &found, &kept);
    if (!rc) {
        for (size_t i = 0; i < kept; ++i) {
            faces[i].det = found[i];
            faces[i].person = -1;
            faces[i].cosine = 0;
        }
        qsort(faces, kept, sizeof *faces, by_position);
        *count = kept;
    }
    stage_end(&p->time, ST_DETECT, t0);
    return rc;
}

int pipeline_process_image(pipeline* p, const kes_image* img, face* faces, float* embeddings, size_t* count) {
    size_t n = 0;
    *count = 0;
    p->time.images++;
    if (detect_faces(p, img, faces, &n)) return 1;
    size_t used = 0;
    for (size_t i = 0; i < n; ++i) {
        double t0 = stage_begin(ST_ALIGN);
        kes_image aligned;
        const int rc = face_align(&faces[i].det, img, p->pool, &aligned);
        stage_end(&p->time, ST_ALIGN, t0);
        if (rc < 0) return fail("aligned face image");
        if (rc == 0) continue;
        t0 = stage_begin(ST_EMBED);
        const int rc_run = face_embed(&p->emb, &aligned, embeddings + used * p->dim);
        kes_image_release(&aligned);
        stage_end(&p->time, ST_EMBED, t0);
        if (rc_run) return 1;
        faces[used++] = faces[i];
    }
    p->time.faces += used;
    *count = used;
    return 0;
}

int pipeline_search_faces(pipeline* p, const float* embeddings, face* faces, size_t count) {
    const double t0 = stage_begin(ST_SEARCH);
    int rc = 0;
    for (size_t i = 0; i < count && !rc; ++i)
        rc = face_db_search(&p->db, embeddings + i * p->dim, &faces[i].person, &faces[i].cosine);
    stage_end(&p->time, ST_SEARCH, t0);
    return rc;
}

const char* face_name(const pipeline* p, const face* f) {
    return face_db_name(&p->db, f->person, f->cosine, p->threshold);
}
