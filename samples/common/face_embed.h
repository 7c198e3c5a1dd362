/* face_embed.h — a face's keypoints to an embedding, and an embedding to a name: what face-search and
 * video-analytics share after their detectors (face_model.h runs the model, face_names.h holds the people).
 *
 *   face keypoints ─kes_detect_align_face→ 112×112 NV12 ─AIPP + MobileFaceNet→ embedding ─fv→ name
 *
 * Teaches the alignment (the SDK's: kestrel/detect.h maps the eyes, nose and mouth onto ArcFace's
 * template), the embedder run one face at a time, and the top-1 cosine search that names it. */
#ifndef KESTREL_SAMPLES_FACE_EMBED_H
#define KESTREL_SAMPLES_FACE_EMBED_H

#include <stddef.h>
#include <stdint.h>

#include "face_model.h"
#include "face_names.h"
#include "kestrel/kestrel.h"

#define FACE_EMBED_MAX_DIM 1024 /* embedder output floats */

/* The AIPP both face models take (BlazeFace and MobileFaceNet: RGB, (x − 127.5) / 128) from full-range
 * BT.601 NV12 (JPEGD's, JFIF): the app runs it for a model converted without --insert-op-conf. */
int face_aipp_params(const char* program, kes_aipp_params* aipp);

typedef struct face_embedder {
    model net;
    kes_aipp_params aipp; /* face_aipp_params: used when the model carries no AIPP */
    size_t dim;           /* embedding floats */
} face_embedder;

/* Opens the embedder at PATH (e.g. MobileFaceNet, [1,112,112,3] → [1,192]) and checks it gives an
 * embedding of 8..FACE_EMBED_MAX_DIM floats; `program` starts its messages. Returns 0, or 1 after
 * printing the error (face_embedder_close still frees what was made). */
int face_embedder_open(face_embedder* e, const char* program, const char* path, kes_mem_pool* pool);
void face_embedder_close(face_embedder* e);

/* The face (BlazeFace's keypoints 0..3 in `img`'s pixels) as the embedder's 112×112 input, in *out (the
 * caller releases it). Returns 1 with *out filled, 0 for keypoints that define no face (nothing to
 * embed: not an error), -1 on an error (kes_last_error() says which). */
int face_align(const kes_detection* face, const kes_image* img, kes_mem_pool* pool, kes_image* out);

/* The embedding (e->dim floats) of an aligned face. Returns 0, or 1 after printing the error. */
int face_embed(face_embedder* e, const kes_image* aligned, float* embedding);

/* All three: align the face of `img`, embed it into `embedding` (room for e->dim floats) and search `db`:
 * *person (-1 when nobody is enrolled) and its *cosine. Returns 1 when searched, 0 when the keypoints
 * define no face, -1 after printing an error. */
int face_identify(face_embedder* e, const face_db* db, const kes_detection* face, const kes_image* img,
                  kes_mem_pool* pool, float* embedding, int64_t* person, float* cosine);

#endif
