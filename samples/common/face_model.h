/* face_model.h — one model through the engine (kestrel/engine.h): load a converted .kom (or a .om on the
 * NPU), one context, pool-allocated input and outputs, and one image per run. Teaches the two ways an
 * image reaches a model: a model converted with --insert-op-conf carries its AIPP and takes the NV12
 * image itself (kes_model_execute_images, as on a board); any other model gets the app's own AIPP
 * (kes_aipp_execute into the input tensor, then kes_model_execute). Both give the same bits. */
#ifndef KESTREL_SAMPLES_FACE_MODEL_H
#define KESTREL_SAMPLES_FACE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "kestrel/kestrel.h"

#define MODEL_MAX_OUTPUTS 4

/* One loaded model with its context and I/O buffers (from the pool). */
typedef struct model {
    const char* program; /* names the program in messages */
    kes_model* model;
    kes_model_context* ctx;
    int has_aipp;       /* converted with --insert-op-conf: the model consumes the NV12 image itself */
    kes_tensor in;      /* otherwise the app's AIPP writes this input tensor */
    uint32_t in_height; /* the input image's size (NHWC dims 1, 2; NCHW dims 2, 3) */
    uint32_t in_width;
    kes_tensor out[MODEL_MAX_OUTPUTS];
    size_t outputs;
    size_t out_elements[MODEL_MAX_OUTPUTS];
} model;

/* Loads PATH for one image at a time (batch 1; a model that cannot run so is refused, saying which
 * conversion fixes it) with float32 outputs; `program` starts its messages. Returns 0, or 1 after printing
 * the error. */
int model_open(model* m, const char* program, const char* path, kes_mem_pool* pool);

/* One image through the model; `what` names the model in an error. Returns 0 or 1. */
int model_run(model* m, const kes_aipp_params* aipp, const kes_image* image, const char* what);

/* Releases what model_open made; harmless after a failed open. */
void model_close(model* m);

#endif /* KESTREL_SAMPLES_FACE_MODEL_H */
