/* hands — where are the hands in this photo or video, and where is each joint? MediaPipe's two-stage hand
 * pipeline on Kestrel's public API:
 *
 *   JPEGD / VDEC (NV12) → VPC letterbox 192×192 → AIPP (RGB, [0, 1]) → palm detection (engine)
 *   → kestrel/detect.h: SSD anchors, decode (box + 7 keypoints), weighted NMS, back to source pixels
 *   → kes_detect_roi_from_detection: the rotated square around each palm (wrist → middle finger up)
 *   → kes_warp_matrix_from_rect + kes_warp_affine: that square as a 224×224 NV12 crop → AIPP
 *   → hand landmark model → kes_detect_landmarks_decode through the crop's matrix: 21 joints in pixels
 *   → OSD skeleton on the NV12 image → JPEGE (.jpg) / VENC (.mp4)
 *
 * usage: hands PALM.kom LANDMARK.kom [options] [PHOTO.jpg ...]
 *   --video FILE        also find hands in a video; writes <stem>_hands.mp4 (repeatable)
 *   --max-frames N      video: stop after N frames
 *   --threshold S       palm score from which a palm is a hand to look at (default 0.5, MediaPipe's)
 *   --max-hands N       at most N hands per image, the best palms (default 2, MediaPipe's num_hands)
 *   --out DIR           where annotated files go (default: beside each input)
 *   --dump DIR          write each hand's landmark-model input tensor, DIR/<stem>_hand<i>.f32 (224×224×3
 *                       float, NHWC), so another runtime can run the model on exactly the same crop
 *   --no-annotate       print the results only
 *
 * Output: one JSON object per line for each photo and each video frame, on stdout:
 *   {"image": PATH, "frame": N (video only), "width": W, "height": H, "hands": [{"palm_score": S,
 *    "rect": [cx, cy, w, h, rotation], "matrix": [6 floats], "presence": P, "handedness": L,
 *    "landmarks": [[x, y, z], ... 21]}]}
 * with landmarks in source pixels (z scaled as x), "matrix" the crop's map from the landmark model's input
 * pixels to source pixels (kes_warp_matrix), "presence" the landmark model's hand flag and "handedness"
 * its score (MediaPipe reads > 0.5 as its label "Left", which assumes a mirrored selfie image). A hand
 * whose presence is below 0.5 is not a hand (MediaPipe drops it too): it is printed without landmarks.
 *
 * Models: palm_detection_full / _lite (192×192 → [1,2016,18] boxes + [1,2016,1] scores) and hand_landmark_full
 * / _lite (224×224 → 63 landmark values, the hand flag, handedness, world landmarks), from MediaPipe's
 * @mediapipe/hands npm package, converted with kes-convert (no AIPP inserted: hands runs AIPP itself).
 * Exit status: 0 on success, 1 on an error, 2 for usage. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kestrel/kestrel.h"

#define PALM_SIZE 192     /* palm detection's input side */
#define PALM_ANCHORS 2016 /* 24×24×2 + 12×12×6 */
#define PALM_VALUES 18    /* box 4 + 7 keypoints × 2 */
#define LANDMARK_SIZE 224 /* hand landmark's input side */
#define HAND_JOINTS 21
#define MAX_HANDS 16

static int fail(const char* what) {
    fprintf(stderr, "hands: %s: %s (%s)\n", what, kes_last_error(), kes_status_str(kes_last_status()));
    return 1;
}

/* ---- models -------------------------------------------------------------------------------------- */

typedef struct model {
    kes_model* model;
    kes_model_context* ctx;
    kes_tensor in; /* NHWC float, written by AIPP */
    kes_tensor out[4];
    size_t outputs;
    size_t out_elements[4];
} model;

static int model_open(model* m, const char* path, uint32_t side, kes_mem_pool* pool) {
    memset(m, 0, sizeof *m);
    if (kes_model_load_from_file(path, KES_MODEL_LOAD_MMAP, &m->model) != KES_OK) return fail(path);
    if (kes_model_context_create(m->model, NULL, 0, &m->ctx) != KES_OK) return fail("model context");
    kes_tensor desc;
    if (kes_model_context_input_desc(m->ctx, 0, &desc) != KES_OK) return fail("input description");
    if (desc.ndim != 4 || desc.layout != KES_LAYOUT_NHWC || desc.dtype != KES_F32 || desc.shape[0] != 1 ||
        desc.shape[1] != side || desc.shape[2] != side || desc.shape[3] != 3) {
        fprintf(stderr, "hands: %s: the model does not take one %ux%u RGB float image (NHWC [1,%u,%u,3])\n", path, side,
                side, side, side);
        return 1;
    }
    if (kes_tensor_alloc(&m->in, pool, desc.dtype, desc.layout, desc.ndim, desc.shape) != KES_OK)
        return fail("input tensor");
    kes_model_output_count(m->model, &m->outputs);
    if (m->outputs > 4) m->outputs = 4;
    for (size_t i = 0; i < m->outputs; ++i) {
        if (kes_model_context_output_desc(m->ctx, i, &desc) != KES_OK) return fail("output description");
        if (desc.dtype != KES_F32) {
            fprintf(stderr, "hands: %s: output %zu is not float32\n", path, i);
            return 1;
        }
        m->out_elements[i] = 1;
        for (uint32_t d = 0; d < desc.ndim; ++d) m->out_elements[i] *= (size_t)desc.shape[d];
        if (kes_tensor_alloc(&m->out[i], pool, desc.dtype, desc.layout, desc.ndim, desc.shape) != KES_OK)
            return fail("output tensor");
    }
    return 0;
}

static int model_run(model* m, const kes_aipp_params* aipp, const kes_image* image, const char* what) {
    if (kes_aipp_execute(aipp, NULL, image, 1, &m->in) != KES_OK) return fail("AIPP");
    if (kes_model_execute(m->ctx, &m->in, 1, m->out, m->outputs) != KES_OK) return fail(what);
    return 0;
}

static void model_close(model* m) {
    for (size_t i = 0; i < m->outputs; ++i) kes_tensor_release(&m->out[i]);
    kes_tensor_release(&m->in);
    kes_model_context_destroy(m->ctx);
    kes_model_unload(m->model);
}

/* ---- the pipeline -------------------------------------------------------------------------------- */

typedef struct hand {
    kes_detection palm; /* source pixels; keypoints: wrist, index/middle/ring/pinky bases, thumb (2) */
    kes_detect_rect rect;
    kes_warp_matrix to_image; /* landmark model input pixels → source pixels */
    float presence, handedness;
    kes_landmark joints[HAND_JOINTS];
} hand;

typedef struct pipeline {
    kes_mem_pool* pool;
    kes_dvpp_channel* channel;
    kes_aipp_params aipp;
    model palm, landmark;
    kes_anchor anchors[PALM_ANCHORS];
    kes_detect_decode_config decode_cfg;
    kes_detect_nms_config nms_cfg;
    kes_detect_roi_config roi_cfg;
    kes_detect_landmark_config landmark_cfg;
    kes_warp_config warp_cfg;
    kes_detection* dets; /* PALM_ANCHORS */
    const char* dump_dir;
} pipeline;

/* MediaPipe's palm_detection_cpu graph and hand_landmark_cpu graph, field for field. */
static int pipeline_configure(pipeline* p, const char* palm_path, const char* landmark_path, float threshold,
                              uint32_t max_hands) {
    if (p->palm.outputs != 2 || p->palm.out_elements[0] != PALM_ANCHORS * PALM_VALUES ||
        p->palm.out_elements[1] != PALM_ANCHORS) {
        fprintf(stderr, "hands: %s: not MediaPipe's palm detection (want outputs of %d and %d floats)\n", palm_path,
                PALM_ANCHORS * PALM_VALUES, PALM_ANCHORS);
        return 1;
    }
    if (p->landmark.outputs < 3 || p->landmark.out_elements[0] != HAND_JOINTS * 3 || p->landmark.out_elements[1] != 1 ||
        p->landmark.out_elements[2] != 1) {
        fprintf(stderr, "hands: %s: not MediaPipe's hand landmark model (want 63 floats, the hand flag, handedness)\n",
                landmark_path);
        return 1;
    }
    static const uint32_t strides[4] = {8, 16, 16, 16};
    kes_detect_anchor_config anchor_cfg;
    kes_detect_anchor_config_init(&anchor_cfg);
    anchor_cfg.input_width = anchor_cfg.input_height = PALM_SIZE;
    anchor_cfg.num_layers = 4;
    anchor_cfg.strides = strides;
    anchor_cfg.min_scale = 0.1484375f;
    anchor_cfg.max_scale = 0.75f;
    anchor_cfg.fixed_anchor_size = 1; /* the regressors carry the size */
    size_t n = 0;
    if (kes_detect_anchors_generate(&anchor_cfg, p->anchors, PALM_ANCHORS, &n) != KES_OK) return fail("palm anchors");
    kes_detect_decode_config_init(&p->decode_cfg); /* sigmoid scores, centre-size boxes, x before y */
    p->decode_cfg.score_threshold = threshold;
    p->decode_cfg.x_scale = p->decode_cfg.y_scale = p->decode_cfg.w_scale = p->decode_cfg.h_scale = PALM_SIZE;
    p->decode_cfg.num_keypoints = 7;
    kes_detect_nms_config_init(&p->nms_cfg);
    p->nms_cfg.mode = KES_DETECT_NMS_WEIGHTED;
    p->nms_cfg.iou_threshold = 0.3f;
    p->nms_cfg.max_detections = max_hands;
    kes_detect_roi_config_init(&p->roi_cfg); /* palm_detection_detection_to_roi */
    p->roi_cfg.size_from = KES_DETECT_ROI_SIZE_BOX;
    p->roi_cfg.rotate = 1;
    p->roi_cfg.start_keypoint = 0;            /* the wrist */
    p->roi_cfg.end_keypoint = 2;              /* the middle finger's base */
    p->roi_cfg.target_angle = 1.57079632679f; /* π/2: the wrist below the fingers */
    p->roi_cfg.scale_x = p->roi_cfg.scale_y = 2.6f;
    p->roi_cfg.shift_y = -0.5f;
    p->roi_cfg.square = KES_DETECT_ROI_SQUARE_LONG;
    kes_detect_landmark_config_init(&p->landmark_cfg);
    p->landmark_cfg.num_landmarks = HAND_JOINTS;
    p->landmark_cfg.values_per_landmark = 3;
    kes_warp_config_init(&p->warp_cfg);
    p->warp_cfg.border = KES_WARP_BORDER_REPLICATE; /* ImageToTensorCalculator's default */
    p->dets = malloc(sizeof(kes_detection) * PALM_ANCHORS);
    if (!p->dets) {
        fprintf(stderr, "hands: out of memory\n");
        return 1;
    }
    return 0;
}

/* The palms of one NV12 image, best first, in source pixels. */
static int detect_palms(pipeline* p, const kes_image* img, hand* hands, size_t* count) {
    *count = 0;
    kes_image boxed;
    kes_vpc_roi paste;
    if (kes_vpc_letterbox(p->channel, img, NULL, PALM_SIZE, PALM_SIZE, NULL, NULL, &boxed, &paste) != KES_OK)
        return fail("VPC letterbox");
    int rc = model_run(&p->palm, &p->aipp, &boxed, "palm detection");
    kes_image_release(&boxed);
    const kes_detect_head head = {p->palm.out[1].data, p->palm.out[0].data, PALM_ANCHORS};
    size_t found = 0, kept = 0;
    if (!rc &&
        kes_detect_decode(&p->decode_cfg, &head, 1, p->anchors, PALM_ANCHORS, p->dets, PALM_ANCHORS, &found) != KES_OK)
        rc = fail("palm decode");
    if (!rc &&
        kes_detect_nms(&p->nms_cfg, p->dets, found < PALM_ANCHORS ? found : PALM_ANCHORS, NULL, 0, &kept) != KES_OK)
        rc = fail("NMS");
    /* The letterbox scaled both axes by one factor, paste width / even source width. */
    const float paste_w = (float)(paste.right - paste.left + 1), paste_h = (float)(paste.bottom - paste.top + 1);
    const float src_w = (float)(img->width & ~1u), src_h = paste_h * src_w / paste_w;
    kes_detect_transform t;
    if (!rc && (kes_detect_transform_letterbox(PALM_SIZE, PALM_SIZE, (float)paste.left, (float)paste.top, paste_w,
                                               paste_h, src_w, src_h, &t) != KES_OK ||
                kes_detect_transform_apply(&t, p->dets, kept) != KES_OK))
        rc = fail("letterbox transform");
    for (size_t i = 0; !rc && i < kept && i < MAX_HANDS; ++i) {
        memset(&hands[i], 0, sizeof hands[i]);
        hands[i].palm = p->dets[i];
        *count = i + 1;
    }
    return rc;
}

/* Writes the landmark model's input tensor, the exact crop the model saw, for a reference run elsewhere. */
static int dump_input(const pipeline* p, const char* stem, size_t index) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s_hand%zu.f32", p->dump_dir, stem, index);
    FILE* f = fopen(path, "wb");
    const size_t bytes = (size_t)LANDMARK_SIZE * LANDMARK_SIZE * 3 * sizeof(float);
    int ok = f && fwrite(p->landmark.in.data, 1, bytes, f) == bytes;
    if (f && fclose(f) != 0) ok = 0;
    if (!ok) fprintf(stderr, "hands: %s: %s\n", path, strerror(errno));
    return ok ? 0 : 1;
}

/* The rotated crop around one palm → the landmark model → 21 joints in source pixels. */
static int find_joints(pipeline* p, const kes_image* img, hand* h, const char* stem, size_t index) {
    if (kes_detect_roi_from_detection(&p->roi_cfg, &h->palm, &h->rect) != KES_OK) return fail("hand region");
    if (kes_warp_matrix_from_rect(h->rect.cx, h->rect.cy, h->rect.width, h->rect.height, h->rect.rotation,
                                  LANDMARK_SIZE, LANDMARK_SIZE, &h->to_image) != KES_OK)
        return fail("crop matrix");
    kes_image crop;
    if (kes_warp_affine(p->channel, img, &h->to_image, LANDMARK_SIZE, LANDMARK_SIZE, &p->warp_cfg, p->pool, &crop) !=
        KES_OK)
        return fail("warp");
    int rc = model_run(&p->landmark, &p->aipp, &crop, "hand landmarks");
    kes_image_release(&crop);
    if (rc) return rc;
    if (p->dump_dir && dump_input(p, stem, index)) return 1;
    /* The hand flag and handedness are probabilities already (the model ends in a sigmoid). */
    h->presence = *(const float*)p->landmark.out[1].data;
    h->handedness = *(const float*)p->landmark.out[2].data;
    if (kes_detect_landmarks_decode(&p->landmark_cfg, p->landmark.out[0].data, p->landmark.out_elements[0],
                                    h->to_image.m, h->joints, HAND_JOINTS) != KES_OK)
        return fail("landmark decode");
    return 0;
}

static int process_image(pipeline* p, const kes_image* img, const char* stem, hand* hands, size_t* count) {
    if (detect_palms(p, img, hands, count)) return 1;
    for (size_t i = 0; i < *count; ++i)
        if (find_joints(p, img, &hands[i], stem, i)) return 1;
    return 0;
}

/* ---- output -------------------------------------------------------------------------------------- */

static void print_json_string(const char* s) {
    putchar('"');
    for (; *s; ++s) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", (unsigned char)*s);
        else
            putchar(*s);
    }
    putchar('"');
}

static void print_hands(const char* source, long long frame, const kes_image* img, const hand* hands, size_t count) {
    printf("{\"image\": ");
    print_json_string(source);
    if (frame >= 0) printf(", \"frame\": %lld", frame);
    printf(", \"width\": %u, \"height\": %u, \"hands\": [", img->width, img->height);
    for (size_t i = 0; i < count; ++i) {
        const hand* h = &hands[i];
        printf("%s{\"palm_score\": %.6f, \"rect\": [%.3f, %.3f, %.3f, %.3f, %.6f], \"matrix\": [", i ? ", " : "",
               h->palm.score, h->rect.cx, h->rect.cy, h->rect.width, h->rect.height, h->rect.rotation);
        for (int k = 0; k < 6; ++k) printf("%s%.9g", k ? ", " : "", h->to_image.m[k]);
        printf("], \"presence\": %.6f, \"handedness\": %.6f", h->presence, h->handedness);
        if (h->presence >= 0.5f) {
            printf(", \"landmarks\": [");
            for (int j = 0; j < HAND_JOINTS; ++j)
                printf("%s[%.3f, %.3f, %.3f]", j ? ", " : "", h->joints[j].x, h->joints[j].y, h->joints[j].z);
            putchar(']');
        }
        putchar('}');
    }
    printf("]}\n");
}

/* The bones MediaPipe's HAND_CONNECTIONS draws: the palm and each finger from the wrist out. */
static const int kBones[][2] = {{0, 1},   {1, 2},   {2, 3},   {3, 4},   {0, 5},   {5, 6},   {6, 7},
                                {7, 8},   {5, 9},   {9, 10},  {10, 11}, {11, 12}, {9, 13},  {13, 14},
                                {14, 15}, {15, 16}, {13, 17}, {0, 17},  {17, 18}, {18, 19}, {19, 20}};

static int draw_hands(kes_image* canvas, const hand* hands, size_t count) {
    const int32_t pen = canvas->width >= 800 ? 3 : 2, dot = pen * 2 + 1;
    const kes_osd_color bone = kes_osd_color_rgb(40, 220, 60), joint = kes_osd_color_rgb(230, 40, 40);
    for (size_t i = 0; i < count; ++i) {
        const kes_landmark* j = hands[i].joints;
        if (hands[i].presence < 0.5f) continue;
        for (size_t b = 0; b < sizeof kBones / sizeof kBones[0]; ++b)
            if (kes_osd_draw_line(canvas, (int32_t)lroundf(j[kBones[b][0]].x), (int32_t)lroundf(j[kBones[b][0]].y),
                                  (int32_t)lroundf(j[kBones[b][1]].x), (int32_t)lroundf(j[kBones[b][1]].y), pen,
                                  bone) != KES_OK)
                return fail("OSD");
        for (int k = 0; k < HAND_JOINTS; ++k)
            if (kes_osd_fill_rect(canvas, (int32_t)lroundf(j[k].x) - dot / 2, (int32_t)lroundf(j[k].y) - dot / 2, dot,
                                  dot, joint) != KES_OK)
                return fail("OSD");
    }
    return 0;
}

/* A copy of the image with JPEGE's strides (even size), to draw on and encode. */
static int canvas_from(pipeline* p, const kes_image* img, kes_image* canvas) {
    const uint32_t w = img->width & ~1u, h = img->height & ~1u;
    uint32_t ws = 0, hs = 0;
    if (kes_image_strides(KES_PIXEL_NV12, w, h, KES_STRIDE_JPEGE, kes_board_get(), &ws, &hs) != KES_OK ||
        kes_image_alloc(canvas, p->pool, KES_PIXEL_NV12, w, h, ws, hs) != KES_OK)
        return fail("canvas");
    const uint8_t* src = img->data;
    uint8_t* dst = canvas->data;
    for (uint32_t y = 0; y < h; ++y) memcpy(dst + (size_t)y * ws, src + (size_t)y * img->width_stride, w);
    src += (size_t)img->width_stride * img->height_stride;
    dst += (size_t)ws * hs;
    for (uint32_t y = 0; y < h / 2; ++y) memcpy(dst + (size_t)y * ws, src + (size_t)y * img->width_stride, w);
    return 0;
}

/* The input's file name without its extension. */
static void stem_of(const char* path, char* stem, size_t size) {
    const char* slash = strrchr(path, '/');
    snprintf(stem, size, "%s", slash ? slash + 1 : path);
    char* dot = strrchr(stem, '.');
    if (dot && dot != stem) *dot = '\0';
}

/* out_dir/<stem><suffix>, or beside the input. */
static void output_path(const char* input, const char* out_dir, const char* suffix, char* path, size_t size) {
    char stem[1024];
    stem_of(input, stem, sizeof stem);
    const char* slash = strrchr(input, '/');
    if (out_dir)
        snprintf(path, size, "%s/%s%s", out_dir, stem, suffix);
    else if (slash)
        snprintf(path, size, "%.*s/%s%s", (int)(slash - input), input, stem, suffix);
    else
        snprintf(path, size, "%s%s", stem, suffix);
}

static int write_jpeg(pipeline* p, const kes_image* canvas, const char* path) {
    size_t capacity = 0, size = 0;
    int rc = 0;
    void* jpeg = NULL;
    if (kes_jpeg_predict_encode_size(p->channel, canvas, &capacity) != KES_OK || !(jpeg = malloc(capacity)) ||
        kes_jpeg_encode(p->channel, canvas, 90, jpeg, capacity, &size) != KES_OK) {
        rc = fail("JPEGE");
    } else {
        FILE* f = fopen(path, "wb");
        int written = f && fwrite(jpeg, 1, size, f) == size;
        if (f && fclose(f) != 0) written = 0;
        if (!written) {
            fprintf(stderr, "hands: %s: %s\n", path, strerror(errno));
            rc = 1;
        }
    }
    free(jpeg);
    return rc;
}

/* ---- photos and videos --------------------------------------------------------------------------- */

typedef struct options {
    const char* models[2];
    const char* out_dir;
    const char* dump_dir;
    int annotate;
    float threshold;
    unsigned long max_hands, max_frames;
    const char** photos;
    size_t photo_count;
    const char** videos;
    size_t video_count;
} options;

static int do_photo(pipeline* p, const options* o, const char* path) {
    kes_image img;
    if (kes_jpeg_decode_file(p->channel, path, KES_PIXEL_NV12, NULL, &img) != KES_OK) return fail(path);
    hand hands[MAX_HANDS];
    size_t count = 0;
    char stem[1024];
    stem_of(path, stem, sizeof stem);
    int rc = process_image(p, &img, stem, hands, &count);
    if (!rc) print_hands(path, -1, &img, hands, count);
    if (!rc && o->annotate) {
        kes_image canvas;
        char out[4096];
        output_path(path, o->out_dir, "_hands.jpg", out, sizeof out);
        rc = canvas_from(p, &img, &canvas);
        if (!rc) rc = draw_hands(&canvas, hands, count);
        if (!rc) rc = write_jpeg(p, &canvas, out);
        kes_image_release(&canvas);
    }
    kes_image_release(&img);
    return rc;
}

static int do_video(pipeline* p, const options* o, const char* video) {
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.source = video;
    cfg.pool = p->pool;
    kes_vdec* vdec = NULL;
    kes_venc* venc = NULL;
    char out[4096], stem[1024];
    output_path(video, o->out_dir, "_hands.mp4", out, sizeof out);
    stem_of(video, stem, sizeof stem);
    int rc = kes_vdec_create(&cfg, &vdec) != KES_OK ? fail(video) : 0;
    kes_vdec_stream_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    if (!rc && kes_vdec_get_stream_info(vdec, &info) != KES_OK) rc = fail("stream info");
    unsigned long long frames = 0, with_hands = 0;
    while (!rc && (o->max_frames == 0 || frames < o->max_frames)) {
        kes_vdec_frame frame;
        if (kes_vdec_read_frame(vdec, &frame) != KES_OK) {
            rc = fail("VDEC");
            break;
        }
        if (frame.end_of_stream) break;
        hand hands[MAX_HANDS];
        size_t count = 0;
        char frame_stem[1100];
        snprintf(frame_stem, sizeof frame_stem, "%s_%llu", stem, frames);
        rc = process_image(p, &frame.image, frame_stem, hands, &count);
        if (!rc) {
            print_hands(video, (long long)frames, &frame.image, hands, count);
            with_hands += count > 0;
        }
        if (!rc && o->annotate) {
            kes_image canvas;
            rc = canvas_from(p, &frame.image, &canvas);
            if (!rc) rc = draw_hands(&canvas, hands, count);
            if (!rc && !venc) {
                kes_venc_config vc;
                kes_venc_config_init(&vc);
                vc.path = out;
                vc.width = canvas.width;
                vc.height = canvas.height;
                if (info.fps_num > 0 && info.fps_den > 0) vc.fps_num = info.fps_num, vc.fps_den = info.fps_den;
                if (kes_venc_create(&vc, &venc) != KES_OK) rc = fail(out);
            }
            if (!rc && kes_venc_encode_frame(venc, &canvas) != KES_OK) rc = fail("VENC");
            kes_image_release(&canvas);
        }
        kes_image_release(&frame.image);
        if (!rc) ++frames;
    }
    if (venc && kes_venc_finish(venc) != KES_OK && !rc) rc = fail("VENC finish");
    if (!rc) {
        fprintf(stderr, "hands: %s: %llu frames, %llu with hands", video, frames, with_hands);
        if (venc) fprintf(stderr, ", wrote %s", out);
        fprintf(stderr, "\n");
    }
    kes_venc_destroy(venc);
    kes_vdec_destroy(vdec);
    return rc;
}

/* ---- command line -------------------------------------------------------------------------------- */

static const char kUsage[] =
    "usage: hands PALM.kom LANDMARK.kom [options] [PHOTO.jpg ...]\n"
    "  --video FILE        also find hands in a video; writes <stem>_hands.mp4 (repeatable)\n"
    "  --max-frames N      video: stop after N frames\n"
    "  --threshold S       palm score from which a palm is looked at (default 0.5)\n"
    "  --max-hands N       at most N hands per image (default 2, at most 16)\n"
    "  --out DIR           where annotated files go (default: beside each input)\n"
    "  --dump DIR          write each hand's landmark-model input, DIR/<stem>_hand<i>.f32\n"
    "  --no-annotate       print the results only\n"
    "Prints one JSON line per photo and video frame: palms, rotated crops, and 21 joints in pixels.\n";

static int usage_error(const char* message, const char* arg) {
    fprintf(stderr, "hands: %s%s%s\n%s", message, arg ? ": " : "", arg ? arg : "", kUsage);
    return 2;
}

static int parse_count(const char* arg, unsigned long max, unsigned long* out) {
    char* end = NULL;
    errno = 0;
    const unsigned long v = strtoul(arg, &end, 10);
    if (errno || end == arg || *end || v == 0 || v > max || arg[0] == '-') return 1;
    *out = v;
    return 0;
}

static int parse_args(int argc, char** argv, options* o) {
    memset(o, 0, sizeof *o);
    o->annotate = 1;
    o->threshold = 0.5f;
    o->max_hands = 2;
    o->photos = calloc((size_t)argc, sizeof *o->photos);
    o->videos = calloc((size_t)argc, sizeof *o->videos);
    if (!o->photos || !o->videos) return usage_error("out of memory", NULL);
    size_t models = 0;
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        const char* value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(kUsage, stdout);
            return -1;
        } else if (!strcmp(a, "--no-annotate")) {
            o->annotate = 0;
        } else if (!strcmp(a, "--video") || !strcmp(a, "--max-frames") || !strcmp(a, "--threshold") ||
                   !strcmp(a, "--max-hands") || !strcmp(a, "--out") || !strcmp(a, "--dump")) {
            if (!value) return usage_error("missing value after", a);
            ++i;
            if (!strcmp(a, "--video")) {
                o->videos[o->video_count++] = value;
            } else if (!strcmp(a, "--out")) {
                o->out_dir = value;
            } else if (!strcmp(a, "--dump")) {
                o->dump_dir = value;
            } else if (!strcmp(a, "--max-frames")) {
                if (parse_count(value, 1ul << 30, &o->max_frames))
                    return usage_error("--max-frames must be a whole number from 1", value);
            } else if (!strcmp(a, "--max-hands")) {
                if (parse_count(value, MAX_HANDS, &o->max_hands))
                    return usage_error("--max-hands must be a whole number from 1 to 16", value);
            } else {
                char* end = NULL;
                const double t = strtod(value, &end);
                if (end == value || *end || !(t >= 0.0 && t <= 1.0))
                    return usage_error("--threshold must be a score between 0 and 1", value);
                o->threshold = (float)t;
            }
        } else if (a[0] == '-' && a[1] == '-') {
            return usage_error("unknown option", a);
        } else if (models < 2) {
            o->models[models++] = a;
        } else {
            o->photos[o->photo_count++] = a;
        }
    }
    if (models < 2) return usage_error("want the palm detection and hand landmark models", NULL);
    if (o->photo_count == 0 && o->video_count == 0) return usage_error("nothing to do: give photos or --video", NULL);
    return 0;
}

static int open_pipeline(pipeline* p, const options* o) {
    kes_mem_pool_config pool_cfg;
    kes_mem_pool_config_init(&pool_cfg);
    pool_cfg.initial_bytes = 32u << 20;
    pool_cfg.grow_bytes = 32u << 20;
    pool_cfg.name = "hands";
    if (kes_mem_pool_create(&pool_cfg, &p->pool) != KES_OK) return fail("pool");
    kes_dvpp_channel_config ch_cfg;
    kes_dvpp_channel_config_init(&ch_cfg);
    ch_cfg.pool = p->pool; /* host memory: the CPU warps the crops and draws the joints */
    if (kes_dvpp_channel_create(&ch_cfg, &p->channel) != KES_OK) return fail("DVPP channel");
    /* Both models take RGB in [0, 1]: the centred recipe's colour conversion (JPEGD output is full-range
     * BT.601), with no mean and a scale of 1/255. */
    kes_aipp_params_init(&p->aipp);
    if (kes_aipp_params_apply_recipe(&p->aipp, KES_AIPP_RECIPE_RGB_CENTERED, KES_AIPP_YUV420SP_U8,
                                     KES_AIPP_CSC_YUV2RGB_BT601_WIDE) != KES_OK)
        return fail("AIPP recipe");
    for (int c = 0; c < 3; ++c) {
        p->aipp.mean_chn[c] = 0;
        p->aipp.min_chn[c] = 0.0f;
        p->aipp.var_reci_chn[c] = 1.0f / 255.0f;
    }
    if (kes_aipp_params_validate(&p->aipp) != KES_OK) return fail("AIPP");
    p->dump_dir = o->dump_dir;
    if (model_open(&p->palm, o->models[0], PALM_SIZE, p->pool) ||
        model_open(&p->landmark, o->models[1], LANDMARK_SIZE, p->pool))
        return 1;
    return pipeline_configure(p, o->models[0], o->models[1], o->threshold, (uint32_t)o->max_hands);
}

static void close_pipeline(pipeline* p) {
    free(p->dets);
    model_close(&p->landmark);
    model_close(&p->palm);
    kes_dvpp_channel_destroy(p->channel);
    kes_mem_pool_destroy(p->pool);
}

int main(int argc, char** argv) {
    options o;
    int rc = parse_args(argc, argv, &o);
    if (rc == 0) {
        pipeline p;
        memset(&p, 0, sizeof p);
        size_t failures = open_pipeline(&p, &o) != 0;
        /* A photo or video that fails is reported, and the others still run. */
        if (!failures) {
            for (size_t i = 0; i < o.photo_count; ++i) failures += do_photo(&p, &o, o.photos[i]) != 0;
            for (size_t i = 0; i < o.video_count; ++i) failures += do_video(&p, &o, o.videos[i]) != 0;
        }
        rc = failures ? 1 : 0;
        close_pipeline(&p);
    }
    free(o.photos);
    free(o.videos);
    return rc < 0 ? 0 : rc;
}
