/* face_model.c — one model through the engine: load, check it runs one image at a time, allocate its
 * tensors, run it with or without the AIPP it carries (face_model.h says why there are two ways). */
#include "face_model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sample_errors.h"

/* face-search and video-analytics' embedder run one image (a frame, a face) at a time: a model whose input takes a
 * batch of N > 1 cannot run it. Said here, with the conversion that fixes it; later it surfaced as an AIPP error
 * ("output N is 2 but 1 images") or, through the embedding's size (N x 192 floats), as a database that "holds no
 * 384-float embeddings". MobileFaceNet's TFLite file has a fixed batch of 2. */
static int batch_problem(const char* program, const char* path, const char* input, int64_t batch, const int64_t* gears,
                         size_t count) {
    fprintf(stderr, "%s: %s: input '%s' ", program, path, input);
    if (count > 0) {
        fprintf(stderr, "has batch gears");
        for (size_t g = 0; g < count && g < 16; ++g) fprintf(stderr, "%s%lld", g ? "," : " ", (long long)gears[g]);
        fprintf(stderr, " and no gear 1");
    } else {
        fprintf(stderr, "takes a fixed batch of %lld images", (long long)batch);
    }
    fprintf(stderr,
            ", but %s gives it one image at a time: convert the model again with --dynamic-batch 1,%lld "
            "(or --input-shape '%s:1,...')\n",
            program, (long long)(count > 0 ? gears[count - 1] : batch), input);
    return 1;
}

int model_open(model* m, const char* program, const char* path, kes_mem_pool* pool) {
    memset(m, 0, sizeof *m);
    m->program = program;
    if (kes_model_load_from_file(path, KES_MODEL_LOAD_MMAP, &m->model) != KES_OK) return sample_fail(m->program, path);
    int64_t gear_list[16];
    size_t gears = 0;
    kes_model_batch_gears(m->model, gear_list, 16, &gears);
    const char* input = "?";
    kes_model_input_name(m->model, 0, &input);
    if (kes_model_context_create(m->model, NULL, 0, &m->ctx) != KES_OK) return sample_fail(m->program, "model context");
    if (gears > 0 && kes_model_context_set_batch(m->ctx, 1) != KES_OK)
        return batch_problem(program, path, input, 0, gear_list, gears);
    kes_tensor desc;
    const char* aipp = NULL;
    if (kes_model_input_aipp(m->model, 0, &aipp) != KES_OK) return sample_fail(m->program, "input AIPP");
    m->has_aipp = aipp != NULL;
    if (kes_model_context_input_desc(m->ctx, 0, &desc) != KES_OK) return sample_fail(m->program, "input description");
    if ((desc.ndim == 4 || desc.ndim == 2) && desc.shape[0] != 1)
        return batch_problem(program, path, input, desc.shape[0], NULL, 0);
    if (desc.ndim == 4) {
        const int nhwc = desc.layout == KES_LAYOUT_NHWC;
        m->in_height = (uint32_t)desc.shape[nhwc ? 1 : 2];
        m->in_width = (uint32_t)desc.shape[nhwc ? 2 : 3];
    } else if (m->has_aipp && desc.ndim == 2 && desc.dtype == KES_U8) {
        /* A .om's AIPP input, as ATC makes it: each image's NV12 bytes, w·h·3/2 (square images here). */
        const uint32_t side = (uint32_t)lround(sqrt((double)desc.shape[1] * 2.0 / 3.0));
        if ((int64_t)side * side * 3 / 2 == desc.shape[1]) m->in_height = m->in_width = side;
    }
    /* The layout kes-convert recorded (NHWC for both: MobileFaceNet is TFLite, BlazeFace a tf2onnx export
     * read through Transpose(0,3,1,2)); never guessed from the shape. A 4-d input it could not tell is
     * ND: NCHW, ATC's default input_format, as the engine takes an ND AIPP input (kestrel/engine.h). */
    if (desc.ndim == 4 && desc.layout == KES_LAYOUT_ND) desc.layout = KES_LAYOUT_NCHW;
    if (!m->has_aipp && kes_tensor_alloc(&m->in, pool, desc.dtype, desc.layout, desc.ndim, desc.shape) != KES_OK)
        return sample_fail(m->program, "input tensor");
    kes_model_output_count(m->model, &m->outputs);
    if (m->outputs > MODEL_MAX_OUTPUTS) m->outputs = MODEL_MAX_OUTPUTS;
    for (size_t i = 0; i < m->outputs; ++i) {
        if (kes_model_context_output_desc(m->ctx, i, &desc) != KES_OK)
            return sample_fail(m->program, "output description");
        if (desc.dtype != KES_F32) {
            fprintf(stderr, "%s: %s: output %zu is not float32\n", program, path, i);
            return 1;
        }
        m->out_elements[i] = 1;
        for (uint32_t d = 0; d < desc.ndim; ++d) m->out_elements[i] *= (size_t)desc.shape[d];
        if (kes_tensor_alloc(&m->out[i], pool, desc.dtype, desc.layout, desc.ndim, desc.shape) != KES_OK)
            return sample_fail(m->program, "output tensor");
    }
    return 0;
}

int model_run(model* m, const kes_aipp_params* aipp, const kes_image* image, const char* what) {
    if (m->has_aipp) {
        const kes_model_input in = {NULL, image, 1};
        if (kes_model_execute_images(m->ctx, &in, 1, m->out, m->outputs) != KES_OK)
            return sample_fail(m->program, what);
        return 0;
    }
    if (kes_aipp_execute(aipp, NULL, image, 1, &m->in) != KES_OK) return sample_fail(m->program, "AIPP");
    if (kes_model_execute(m->ctx, &m->in, 1, m->out, m->outputs) != KES_OK) return sample_fail(m->program, what);
    return 0;
}

void model_close(model* m) {
    for (size_t i = 0; i < m->outputs; ++i) kes_tensor_release(&m->out[i]);
    if (!m->has_aipp) kes_tensor_release(&m->in);
    kes_model_context_destroy(m->ctx);
    kes_model_unload(m->model);
}
