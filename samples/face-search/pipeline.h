/* pipeline.h — the whole path from an image to who is in it, one stage per call:
 *
 *   JPEG ─JPEGD→ NV12 ─VPC letterbox→ 256×256 ─AIPP + BlazeFace→ scores, boxes ─detect.h→ faces
 *   face keypoints ─kes_detect_align_face→ 112×112 NV12 ─AIPP + MobileFaceNet→ embedding ─fv→ name
 *
 * Teaches what an app keeps open for its whole run (a memory pool, a DVPP channel, the AIPP parameters,
 * two models, the names database) and how one image goes through it. Each stage is timed, and recorded
 * as a trace span when KES_TRACE is set. */
#ifndef FACE_SEARCH_PIPELINE_H
#define FACE_SEARCH_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "blazeface.h"
#include "face_embed.h"
#include "face_model.h"
#include "face_names.h"
#include "kestrel/kestrel.h"

#define MAX_FACES 64 /* per image */

/* ---- timing: per-stage totals, and the same stages as trace spans ------------------------------ */

enum { ST_DECODE, ST_DETECT, ST_ALIGN, ST_EMBED, ST_SEARCH, ST_DRAW, ST_ENCODE, ST_COUNT };
extern const char* const kStageName[ST_COUNT];

typedef struct timing {
    double ms[ST_COUNT];
    unsigned long long calls[ST_COUNT];
    unsigned long long frames, images, faces, video_frames; /* decoded, searched */
    double video_ms;
} timing;

double now_ms(void);
double stage_begin(int stage);
void stage_end(timing* t, int stage, double start);

/* ---- the pipeline -------------------------------------------------------------------------------- */

typedef struct face {
    kes_detection det; /* box and keypoints (right eye, left eye, nose, mouth, right ear, left ear) in
                          source pixels */
    int64_t person;    /* best match, -1 when nobody is enrolled */
    float cosine;      /* its cosine */
} face;

typedef struct pipeline {
    kes_mem_pool* pool;
    kes_dvpp_channel* channel;
    kes_aipp_params aipp; /* the detector's, when it carries none */
    model det;
    blazeface detector;
    face_embedder emb; /* alignment, MobileFaceNet: samples/common/face_embed.h */
    size_t dim;        /* embedding floats: emb.dim */
    face_db db;
    float threshold; /* cosine from which a face gets a name */
    timing time;
} pipeline;

/* Opens everything for DETECTOR and EMBEDDER (paths of converted models), the detector deciding faces
 * from detect_threshold. On failure (1, the error printed) pipeline_close still frees what was made. */
int pipeline_open(pipeline* p, const char* detector, const char* embedder, float detect_threshold);
/* p itself must start zeroed (calloc), so that every handle is NULL or made. */
void pipeline_close(pipeline* p);

/* JPEGD: the photo as NV12 in host memory (the CPU reads it to align faces and draw). Returns 0 or 1. */
int pipeline_decode_photo(pipeline* p, const char* path, kes_image* img);

/* Finds the faces of one NV12 image, left to right (then top to bottom: the numbers --enroll
 * NAME=PHOTO:FACE uses), and embeds each: p->dim floats per face in embeddings, at most MAX_FACES. A face
 * whose keypoints are degenerate is dropped. Returns 0 or 1. */
int pipeline_process_image(pipeline* p, const kes_image* img, face* faces, float* embeddings, size_t* count);

/* Searches each face's embedding in the names database: person and cosine of the best match. */
int pipeline_search_faces(pipeline* p, const float* embeddings, face* faces, size_t count);

/* The face's name when its best cosine reaches the threshold, else NULL (unknown). */
const char* face_name(const pipeline* p, const face* f);

#endif /* FACE_SEARCH_PIPELINE_H */
