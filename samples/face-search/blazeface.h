/* blazeface.h — BlazeFace's outputs to faces in the photo's pixels, with kestrel/detect.h: the anchor
 * grid (once), decoding the scores and regressors above a score threshold, NMS, and the map from the
 * letterboxed model input back to the source image. Teaches the CPU work every detector app does after
 * the model runs; the model itself runs in pipeline.c (model.h). */
#ifndef FACE_SEARCH_BLAZEFACE_H
#define FACE_SEARCH_BLAZEFACE_H

#include <stddef.h>
#include <stdint.h>

#include "face_model.h"
#include "kestrel/kestrel.h"

#define BLAZEFACE_ANCHORS 896 /* BlazeFace 256: 16×16×2 + 8×8×6; BlazeFace 128: the same counts */

typedef struct blazeface {
    uint32_t size; /* the input side: 256 (the "back" model) or 128 (the "front" model) */
    kes_anchor anchors[BLAZEFACE_ANCHORS];
    kes_detect_decode_config decode_cfg;
    kes_detect_nms_config nms_cfg;
    kes_detection* dets; /* BLAZEFACE_ANCHORS */
    void* nms_scratch;
    size_t nms_scratch_size;
} blazeface;

/* Checks that `net` (loaded from PATH) is BlazeFace 256 or 128 and prepares its anchors, the decoding
 * with score_threshold, and NMS keeping at most max_faces. Returns 0, or 1 after printing the error. */
int blazeface_init(blazeface* b, const model* net, const char* path, float score_threshold, size_t max_faces);

/* After `net` ran on a letterbox of `source` (paste: where the source lies in it, kes_vpc_letterbox's
 * ROI): the faces, box and 6 keypoints (right eye, left eye, nose, mouth, right ear, left ear) in source
 * pixels, in *faces (b's buffer, valid until the next call). Returns 0, or 1 after printing the error. */
int blazeface_decode(blazeface* b, const model* net, const kes_vpc_roi* paste, const kes_image* source,
                     const kes_detection** faces, size_t* count);

/* Frees what blazeface_init allocated; harmless on a zeroed struct. */
void blazeface_free(blazeface* b);

#endif /* FACE_SEARCH_BLAZEFACE_H */
