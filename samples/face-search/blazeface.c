/* blazeface.c — BlazeFace as MediaPipe ships it, decoded with kestrel/detect.h (blazeface.h says what
 * each step is). The numbers here are the model's: its anchor grid and the layout of its four outputs. */
#include "blazeface.h"

#include <stdio.h>
#include <stdlib.h>

#include "errors.h"

/* Two sizes with the same 896 anchors: the 256 "back" model (16×16×2 + 8×8×6, strides 16 and 32) and the
 * 128 "front" model (strides 8 and 16), each with its anchor scales. */
int blazeface_init(blazeface* b, const model* net, const char* path, float score_threshold, size_t max_faces) {
    static const uint32_t strides_256[4] = {16, 32, 32, 32}, strides_128[4] = {8, 16, 16, 16};
    b->size = net->in_height;
    if (net->in_width != net->in_height || (b->size != 256 && b->size != 128)) {
        fprintf(stderr, "face-search: %s: the detector takes %ux%u images, not BlazeFace's 256x256 or 128x128\n", path,
                net->in_width, net->in_height);
        return 1;
    }
    kes_detect_anchor_config anchor_cfg;
    kes_detect_anchor_config_init(&anchor_cfg);
    anchor_cfg.input_width = anchor_cfg.input_height = b->size;
    anchor_cfg.num_layers = 4;
    anchor_cfg.strides = b->size == 256 ? strides_256 : strides_128;
    anchor_cfg.min_scale = b->size == 256 ? 0.15625f : 0.1484375f;
    anchor_cfg.max_scale = 0.75f;
    anchor_cfg.fixed_anchor_size = 1; /* BlazeFace's regressors carry the size */
    size_t n = 0;
    if (kes_detect_anchors_generate(&anchor_cfg, b->anchors, BLAZEFACE_ANCHORS, &n) != KES_OK)
        return fail("BlazeFace anchors");
    kes_detect_decode_config_init(&b->decode_cfg); /* sigmoid scores, centre-size boxes, x before y */
    b->decode_cfg.score_threshold = score_threshold;
    b->decode_cfg.x_scale = b->decode_cfg.y_scale = b->decode_cfg.w_scale = b->decode_cfg.h_scale = (float)b->size;
    b->decode_cfg.num_keypoints = 6;
    kes_detect_nms_config_init(&b->nms_cfg);
    b->nms_cfg.iou_threshold = 0.3f;
    b->nms_cfg.max_detections = max_faces;
    /* Outputs: scores [1,512,1], [1,384,1]; boxes [1,512,16], [1,384,16] (a wrong model fails here). */
    const size_t want[4] = {512, 384, 512 * 16, 384 * 16};
    for (size_t i = 0; i < 4; ++i)
        if (net->outputs != 4 || net->out_elements[i] != want[i]) {
            fprintf(stderr,
                    "face-search: %s: the detector is not BlazeFace (want outputs of 512, 384, 8192 and 6144 floats)\n",
                    path);
            return 1;
        }
    b->dets = malloc(sizeof(kes_detection) * BLAZEFACE_ANCHORS);
    if (kes_detect_nms_scratch_size(BLAZEFACE_ANCHORS, &b->nms_scratch_size) != KES_OK) return fail("NMS scratch");
    b->nms_scratch = malloc(b->nms_scratch_size);
    if (!b->dets || !b->nms_scratch) {
        fprintf(stderr, "face-search: out of memory\n");
        return 1;
    }
    return 0;
}

int blazeface_decode(blazeface* b, const model* net, const kes_vpc_roi* paste, const kes_image* source,
                     const kes_detection** faces, size_t* count) {
    *faces = b->dets;
    *count = 0;
    const kes_detect_head heads[2] = {{net->out[0].data, net->out[2].data, 512},
                                      {net->out[1].data, net->out[3].data, 384}};
    size_t found = 0, kept = 0;
    if (kes_detect_decode(&b->decode_cfg, heads, 2, b->anchors, BLAZEFACE_ANCHORS, b->dets, BLAZEFACE_ANCHORS,
                          &found) != KES_OK)
        return fail("BlazeFace decode");
    if (kes_detect_nms(&b->nms_cfg, b->dets, found, b->nms_scratch, b->nms_scratch_size, &kept) != KES_OK)
        return fail("NMS");
    /* The letterbox scaled both axes by one factor, paste width / even source width; the source height
     * in that scale keeps it (the paste height is rounded to even). */
    const float paste_w = (float)(paste->right - paste->left + 1), paste_h = (float)(paste->bottom - paste->top + 1);
    const float src_w = (float)(source->width & ~1u), src_h = paste_h * src_w / paste_w;
    kes_detect_transform t;
    if (kes_detect_transform_letterbox((float)b->size, (float)b->size, (float)paste->left, (float)paste->top, paste_w,
                                       paste_h, src_w, src_h, &t) != KES_OK ||
        kes_detect_transform_apply(&t, b->dets, kept) != KES_OK)
        return fail("letterbox transform");
    *count = kept;
    return 0;
}

void blazeface_free(blazeface* b) {
    free(b->dets);
    free(b->nms_scratch);
}
