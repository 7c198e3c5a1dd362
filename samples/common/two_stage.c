/* two_stage.c — MediaPipe's two-stage landmark pipeline for the hands and pose samples (two_stage.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "two_stage.h"

#include "sample_io.h"

#define MAX_OBJECTS 16
#define MAX_LANDMARKS 64
#define MAX_ANCHORS 4096
#define MAX_OUTPUTS 8

static const two_stage_spec* g_spec; /* the sample's: its name in every message */

static int fail(const char* what) {
    fprintf(stderr, "%s: %s: %s (%s)\n", g_spec->program, what, kes_last_error(), kes_status_str(kes_last_status()));
    return 1;
}

/* ---- timing: per-stage totals (stderr at the end), and the same stages as trace spans --------------- */

enum { ST_DECODE, ST_DETECT, ST_CROP, ST_LANDMARKS, ST_DRAW, ST_ENCODE, ST_COUNT };
static const char* const kStageName[ST_COUNT] = {"decode", "detect", "crop", "landmarks", "draw", "encode"};

typedef struct timing {
    double ms[ST_COUNT];
    unsigned long long calls[ST_COUNT];
    unsigned long long images, objects;
} timing;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double stage_begin(int stage) {
    if (kes_trace_enabled()) kes_trace_begin(g_spec->program, kStageName[stage]);
    return now_ms();
}

static void stage_end(timing* t, int stage, double start) {
    t->ms[stage] += now_ms() - start;
    t->calls[stage]++;
    if (kes_trace_enabled()) kes_trace_end();
}

static void print_timing(const timing* t, double wall_ms) {
    const double images = t->images ? (double)t->images : 1.0;
    fprintf(stderr, "%s timing: %llu images (photos and video frames), %llu %ss, %.2f s\n", g_spec->program, t->images,
            t->objects, g_spec->object, wall_ms / 1e3);
    fprintf(stderr, "  %-9s %10s %10s %8s\n", "stage", "total ms", "ms/image", "calls");
    for (int s = 0; s < ST_COUNT; ++s)
        fprintf(stderr, "  %-9s %10.1f %10.2f %8llu\n", kStageName[s], t->ms[s], t->ms[s] / images, t->calls[s]);
}

/* ---- models -------------------------------------------------------------------------------------- */

typedef struct model {
    kes_model* model;
    kes_model_context* ctx;
    kes_tensor in; /* NHWC float, written by AIPP */
    kes_tensor out[MAX_OUTPUTS];
    size_t outputs;
    size_t out_elements[MAX_OUTPUTS];
} model;

static int model_open(model* m, const char* path, uint32_t side, kes_mem_pool* pool) {
    memset(m, 0, sizeof *m);
    if (kes_model_load_from_file(path, KES_MODEL_LOAD_MMAP, &m->model) != KES_OK) return fail(path);
    if (kes_model_context_create(m->model, NULL, 0, &m->ctx) != KES_OK) return fail("model context");
    kes_tensor desc;
    if (kes_model_context_input_desc(m->ctx, 0, &desc) != KES_OK) return fail("input description");
    if (desc.ndim != 4 || desc.layout != KES_LAYOUT_NHWC || desc.dtype != KES_F32 || desc.shape[0] != 1 ||
        desc.shape[1] != side || desc.shape[2] != side || desc.shape[3] != 3) {
        fprintf(stderr, "%s: %s: the model does not take one %ux%u RGB float image (NHWC [1,%u,%u,3])\n",
                g_spec->program, path, side, side, side, side);
        return 1;
    }
    if (kes_tensor_alloc(&m->in, pool, desc.dtype, desc.layout, desc.ndim, desc.shape) != KES_OK)
        return fail("input tensor");
    kes_model_output_count(m->model, &m->outputs);
    if (m->outputs > MAX_OUTPUTS) m->outputs = MAX_OUTPUTS;
    for (size_t i = 0; i < m->outputs; ++i) {
        if (kes_model_context_output_desc(m->ctx, i, &desc) != KES_OK) return fail("output description");
        if (desc.dtype != KES_F32) {
            fprintf(stderr, "%s: %s: output %zu is not float32\n", g_spec->program, path, i);
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

typedef struct object {
    kes_detection detection; /* source pixels, with the detector's keypoints */
    kes_detect_rect rect;
    kes_warp_matrix to_image; /* landmark model input pixels → source pixels */
    float presence, extra;
    kes_landmark landmarks[MAX_LANDMARKS];
} object;

typedef struct pipeline {
    const two_stage_spec* spec;
    kes_mem_pool* pool;
    kes_dvpp_channel* channel;
    kes_aipp_params detector_aipp, landmark_aipp;
    model detector, landmark;
    size_t scores_output, boxes_output;
    kes_anchor anchors[MAX_ANCHORS];
    kes_detect_decode_config decode_cfg;
    kes_detect_nms_config nms_cfg;
    kes_warp_config warp_cfg;
    kes_detection* dets; /* spec->anchors */
    const char* dump_dir;
    timing time;
} pipeline;

/* AIPP for RGB in [lo, hi] from JPEGD's / VDEC's NV12: the centred recipe's colour conversion (full-range
 * BT.601), then (x − mean) · scale with mean = −lo · 255 / (hi − lo) split into AIPP's integer mean and
 * fractional min, scale = (hi − lo) / 255. */
static int aipp_for_range(kes_aipp_params* aipp, float lo, float hi) {
    kes_aipp_params_init(aipp);
    if (kes_aipp_params_apply_recipe(aipp, KES_AIPP_RECIPE_RGB_CENTERED, KES_AIPP_YUV420SP_U8,
                                     KES_AIPP_CSC_YUV2RGB_BT601_WIDE) != KES_OK)
        return fail("AIPP recipe");
    const float mean = -lo * 255.0f / (hi - lo);
    for (int c = 0; c < 3; ++c) {
        aipp->mean_chn[c] = (int32_t)floorf(mean);
        aipp->min_chn[c] = mean - floorf(mean);
        aipp->var_reci_chn[c] = (hi - lo) / 255.0f;
    }
    return kes_aipp_params_validate(aipp) == KES_OK ? 0 : fail("AIPP");
}

static int wrong_model(const char* path, const char* what) {
    fprintf(stderr, "%s: %s: not %s\n", g_spec->program, path, what);
    return 1;
}

/* Checks the two models against the spec and prepares the detector's anchors and post-processing. */
static int pipeline_configure(pipeline* p, const char* detector_path, const char* landmark_path, float threshold,
                              uint32_t max_objects) {
    const two_stage_spec* s = p->spec;
    /* The scores and the boxes are told apart by their sizes, not by their order in the file. */
    char want[256];
    snprintf(want, sizeof want, "MediaPipe's %s (want outputs of %u and %u floats)", s->detector_name, s->anchors,
             s->anchors * s->box_values);
    if (p->detector.outputs != 2) return wrong_model(detector_path, want);
    p->scores_output = p->detector.out_elements[0] == s->anchors ? 0 : 1;
    p->boxes_output = 1 - p->scores_output;
    if (p->detector.out_elements[p->scores_output] != s->anchors ||
        p->detector.out_elements[p->boxes_output] != (size_t)s->anchors * s->box_values)
        return wrong_model(detector_path, want);
    snprintf(want, sizeof want, "MediaPipe's %s (want %u landmark floats and a presence flag)", s->landmark_name,
             s->landmark_values);
    if (p->landmark.outputs <= s->flag_output || p->landmark.out_elements[0] != s->landmark_values ||
        p->landmark.out_elements[s->flag_output] != 1 ||
        (s->extra_output >= 0 &&
         (p->landmark.outputs <= (size_t)s->extra_output || p->landmark.out_elements[s->extra_output] != 1)))
        return wrong_model(landmark_path, want);
    if (s->landmark_config.num_landmarks > MAX_LANDMARKS || s->keypoints > KES_DETECT_MAX_KEYPOINTS) {
        fprintf(stderr, "%s: the spec asks for more than %d landmarks or %d keypoints\n", s->program, MAX_LANDMARKS,
                KES_DETECT_MAX_KEYPOINTS);
        return 1;
    }
    kes_detect_anchor_config anchor_cfg = s->anchor_config;
    anchor_cfg.input_width = anchor_cfg.input_height = s->detector_size;
    size_t n = 0;
    if (s->anchors > MAX_ANCHORS || kes_detect_anchors_generate(&anchor_cfg, p->anchors, MAX_ANCHORS, &n) != KES_OK ||
        n != s->anchors)
        return fail("anchors");
    kes_detect_decode_config_init(&p->decode_cfg); /* sigmoid scores, centre-size boxes, x before y */
    p->decode_cfg.score_threshold = threshold;
    p->decode_cfg.x_scale = p->decode_cfg.y_scale = p->decode_cfg.w_scale = p->decode_cfg.h_scale =
        (float)s->detector_size;
    p->decode_cfg.num_keypoints = s->keypoints;
    kes_detect_nms_config_init(&p->nms_cfg);
    p->nms_cfg.mode = KES_DETECT_NMS_WEIGHTED;
    p->nms_cfg.iou_threshold = s->nms_iou;
    p->nms_cfg.max_detections = max_objects;
    kes_warp_config_init(&p->warp_cfg);
    p->warp_cfg.border = s->crop_border;
    p->dets = malloc(sizeof(kes_detection) * s->anchors);
    if (!p->dets) {
        fprintf(stderr, "%s: out of memory\n", s->program);
        return 1;
    }
    return 0;
}

/* The detections of one NV12 image, best first, in source pixels. */
static int detect(pipeline* p, const kes_image* img, object* objects, size_t* count) {
    const two_stage_spec* s = p->spec;
    *count = 0;
    kes_image boxed;
    kes_vpc_roi paste;
    if (kes_vpc_letterbox(p->channel, img, NULL, s->detector_size, s->detector_size, NULL, NULL, &boxed, &paste) !=
        KES_OK)
        return fail("VPC letterbox");
    int rc = model_run(&p->detector, &p->detector_aipp, &boxed, s->detector_name);
    kes_image_release(&boxed);
    const kes_detect_head head = {p->detector.out[p->scores_output].data, p->detector.out[p->boxes_output].data,
                                  s->anchors};
    size_t found = 0, kept = 0;
    if (!rc &&
        kes_detect_decode(&p->decode_cfg, &head, 1, p->anchors, s->anchors, p->dets, s->anchors, &found) != KES_OK)
        rc = fail("decode");
    if (!rc && kes_detect_nms(&p->nms_cfg, p->dets, found < s->anchors ? found : s->anchors, NULL, 0, &kept) != KES_OK)
        rc = fail("NMS");
    /* The letterbox scaled both axes by one factor, paste width / even source width. */
    const float paste_w = (float)(paste.right - paste.left + 1), paste_h = (float)(paste.bottom - paste.top + 1);
    const float src_w = (float)(img->width & ~1u), src_h = paste_h * src_w / paste_w;
    const float side = (float)s->detector_size;
    kes_detect_transform t;
    if (!rc && (kes_detect_transform_letterbox(side, side, (float)paste.left, (float)paste.top, paste_w, paste_h, src_w,
                                               src_h, &t) != KES_OK ||
                kes_detect_transform_apply(&t, p->dets, kept) != KES_OK))
        rc = fail("letterbox transform");
    for (size_t i = 0; !rc && i < kept && i < MAX_OBJECTS; ++i) {
        memset(&objects[i], 0, sizeof objects[i]);
        objects[i].detection = p->dets[i];
        *count = i + 1;
    }
    return rc;
}

/* Writes the landmark model's input tensor, the exact crop the model saw, for a reference run elsewhere. */
static int dump_input(const pipeline* p, const char* stem, size_t index) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s_%s%zu.f32", p->dump_dir, stem, p->spec->object, index);
    FILE* f = fopen(path, "wb");
    const size_t bytes = p->landmark.in.size;
    int ok = f && fwrite(p->landmark.in.data, 1, bytes, f) == bytes;
    if (f && fclose(f) != 0) ok = 0;
    if (!ok) fprintf(stderr, "%s: %s: %s\n", p->spec->program, path, strerror(errno));
    return ok ? 0 : 1;
}

/* The rotated crop around one detection → the landmark model → landmarks in source pixels. */
static int find_landmarks(pipeline* p, const kes_image* img, object* o, const char* stem, size_t index) {
    const two_stage_spec* s = p->spec;
    double t0 = stage_begin(ST_CROP);
    kes_image crop;
    int rc = 0;
    if (kes_detect_roi_from_detection(&s->roi_config, &o->detection, &o->rect) != KES_OK)
        rc = fail("region");
    else if (kes_warp_matrix_from_rect(o->rect.cx, o->rect.cy, o->rect.width, o->rect.height, o->rect.rotation,
                                       s->landmark_size, s->landmark_size, &o->to_image) != KES_OK)
        rc = fail("crop matrix");
    else if (kes_warp_affine(p->channel, img, &o->to_image, s->landmark_size, s->landmark_size, &p->warp_cfg, p->pool,
                             &crop) != KES_OK)
        rc = fail("warp");
    stage_end(&p->time, ST_CROP, t0);
    if (rc) return rc;
    t0 = stage_begin(ST_LANDMARKS);
    rc = model_run(&p->landmark, &p->landmark_aipp, &crop, s->landmark_name);
    kes_image_release(&crop);
    if (!rc && p->dump_dir) rc = dump_input(p, stem, index);
    if (!rc) {
        /* The presence flag and the extra score are probabilities already (the models end in a sigmoid). */
        o->presence = *(const float*)p->landmark.out[s->flag_output].data;
        if (s->extra_output >= 0) o->extra = *(const float*)p->landmark.out[s->extra_output].data;
        if (kes_detect_landmarks_decode(&s->landmark_config, p->landmark.out[0].data, p->landmark.out_elements[0],
                                        o->to_image.m, o->landmarks, MAX_LANDMARKS) != KES_OK)
            rc = fail("landmark decode");
    }
    stage_end(&p->time, ST_LANDMARKS, t0);
    return rc;
}

static int process_image(pipeline* p, const kes_image* img, const char* stem, object* objects, size_t* count) {
    const double t0 = stage_begin(ST_DETECT);
    const int rc = detect(p, img, objects, count);
    stage_end(&p->time, ST_DETECT, t0);
    if (rc) return rc;
    p->time.images++;
    p->time.objects += *count;
    for (size_t i = 0; i < *count; ++i)
        if (find_landmarks(p, img, &objects[i], stem, i)) return 1;
    return 0;
}

/* ---- output -------------------------------------------------------------------------------------- */

/* A landmark model's flag from which its object is there (MediaPipe's thresholds are 0.5 too). */
#define PRESENT 0.5f

static void print_objects(const two_stage_spec* s, const char* source, long long frame, const kes_image* img,
                          const object* objects, size_t count) {
    printf("{\"image\": ");
    sample_print_json_string(source);
    if (frame >= 0) printf(", \"frame\": %lld", frame);
    printf(", \"width\": %u, \"height\": %u, \"%ss\": [", img->width, img->height, s->object);
    const int with_visibility = s->landmark_config.values_per_landmark >= 4;
    for (size_t i = 0; i < count; ++i) {
        const object* o = &objects[i];
        printf("%s{\"detection_score\": %.6f, \"rect\": [%.3f, %.3f, %.3f, %.3f, %.6f], \"matrix\": [", i ? ", " : "",
               o->detection.score, o->rect.cx, o->rect.cy, o->rect.width, o->rect.height, o->rect.rotation);
        for (int k = 0; k < 6; ++k) printf("%s%.9g", k ? ", " : "", o->to_image.m[k]);
        printf("], \"presence\": %.6f", o->presence);
        if (s->extra_output >= 0) printf(", \"%s\": %.6f", s->extra_name, o->extra);
        if (o->presence >= PRESENT) {
            printf(", \"landmarks\": [");
            for (uint32_t j = 0; j < s->landmark_config.num_landmarks; ++j) {
                const kes_landmark* l = &o->landmarks[j];
                printf("%s[%.3f, %.3f, %.3f", j ? ", " : "", l->x, l->y, l->z);
                if (with_visibility) printf(", %.4f", l->visibility);
                putchar(']');
            }
            putchar(']');
        }
        putchar('}');
    }
    printf("]}\n");
}

static int draw_objects(const two_stage_spec* s, kes_image* canvas, const object* objects, size_t count) {
    const int32_t pen = canvas->width >= 800 ? 3 : 2, dot = pen * 2 + 1;
    const kes_osd_color bone = kes_osd_color_rgb(40, 220, 60), joint = kes_osd_color_rgb(230, 40, 40);
    for (size_t i = 0; i < count; ++i) {
        const kes_landmark* l = objects[i].landmarks;
        if (objects[i].presence < PRESENT) continue;
        for (size_t b = 0; b < s->bone_count; ++b) {
            const kes_landmark* from = &l[s->bones[b][0]];
            const kes_landmark* to = &l[s->bones[b][1]];
            if (kes_osd_draw_line(canvas, (int32_t)lroundf(from->x), (int32_t)lroundf(from->y), (int32_t)lroundf(to->x),
                                  (int32_t)lroundf(to->y), pen, bone) != KES_OK)
                return fail("OSD");
        }
        for (uint32_t k = 0; k < s->landmark_config.num_landmarks; ++k)
            if (kes_osd_fill_rect(canvas, (int32_t)lroundf(l[k].x) - dot / 2, (int32_t)lroundf(l[k].y) - dot / 2, dot,
                                  dot, joint) != KES_OK)
                return fail("OSD");
    }
    return 0;
}

/* ---- photos and videos --------------------------------------------------------------------------- */

typedef struct options {
    const char* models[2];
    const char* out_dir;
    const char* dump_dir;
    int annotate;
    float threshold;
    unsigned long max_objects, max_frames;
    const char** photos;
    size_t photo_count;
    const char** videos;
    size_t video_count;
} options;

static int do_photo(pipeline* p, const options* o, const char* path) {
    kes_image img;
    const double t0 = stage_begin(ST_DECODE);
    const kes_status decoded = kes_jpeg_decode_file(p->channel, path, KES_PIXEL_NV12, NULL, &img);
    stage_end(&p->time, ST_DECODE, t0);
    if (decoded != KES_OK) return fail(path);
    object objects[MAX_OBJECTS];
    size_t count = 0;
    char stem[1024], suffix[64];
    sample_stem_of(path, stem, sizeof stem);
    int rc = process_image(p, &img, stem, objects, &count);
    if (!rc) print_objects(p->spec, path, -1, &img, objects, count);
    if (!rc && o->annotate) {
        kes_image canvas;
        char out[4096];
        snprintf(suffix, sizeof suffix, "_%s.jpg", p->spec->program);
        sample_output_path(path, o->out_dir, suffix, out, sizeof out);
        double t = stage_begin(ST_DRAW);
        rc = sample_canvas_from(g_spec->program, p->pool, &img, &canvas);
        if (!rc) rc = draw_objects(p->spec, &canvas, objects, count);
        stage_end(&p->time, ST_DRAW, t);
        t = stage_begin(ST_ENCODE);
        if (!rc) rc = sample_write_jpeg(g_spec->program, p->channel, &canvas, out);
        stage_end(&p->time, ST_ENCODE, t);
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
    char out[4096], stem[1024], suffix[64];
    snprintf(suffix, sizeof suffix, "_%s.mp4", p->spec->program);
    sample_output_path(video, o->out_dir, suffix, out, sizeof out);
    sample_stem_of(video, stem, sizeof stem);
    int rc = kes_vdec_create(&cfg, &vdec) != KES_OK ? fail(video) : 0;
    kes_vdec_stream_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    if (!rc && kes_vdec_get_stream_info(vdec, &info) != KES_OK) rc = fail("stream info");
    unsigned long long frames = 0, with_objects = 0;
    while (!rc && (o->max_frames == 0 || frames < o->max_frames)) {
        kes_vdec_frame frame;
        const double t0 = stage_begin(ST_DECODE);
        const kes_status read = kes_vdec_read_frame(vdec, &frame);
        stage_end(&p->time, ST_DECODE, t0);
        if (read != KES_OK) {
            rc = fail("VDEC");
            break;
        }
        if (frame.end_of_stream) break;
        object objects[MAX_OBJECTS];
        size_t count = 0;
        char frame_stem[1100];
        snprintf(frame_stem, sizeof frame_stem, "%s_%llu", stem, frames);
        rc = process_image(p, &frame.image, frame_stem, objects, &count);
        if (!rc) {
            print_objects(p->spec, video, (long long)frames, &frame.image, objects, count);
            with_objects += count > 0;
        }
        if (!rc && o->annotate) {
            kes_image canvas;
            double t = stage_begin(ST_DRAW);
            rc = sample_canvas_from(g_spec->program, p->pool, &frame.image, &canvas);
            if (!rc) rc = draw_objects(p->spec, &canvas, objects, count);
            stage_end(&p->time, ST_DRAW, t);
            t = stage_begin(ST_ENCODE);
            if (!rc) rc = sample_encode_frame(g_spec->program, &venc, out, &info, &canvas);
            stage_end(&p->time, ST_ENCODE, t);
            kes_image_release(&canvas);
        }
        kes_image_release(&frame.image);
        if (!rc) ++frames;
    }
    if (venc && kes_venc_finish(venc) != KES_OK && !rc) rc = fail("VENC finish");
    if (!rc) {
        fprintf(stderr, "%s: %s: %llu frames, %llu with %ss", p->spec->program, video, frames, with_objects,
                p->spec->object);
        if (venc) fprintf(stderr, ", wrote %s", out);
        fprintf(stderr, "\n");
    }
    kes_venc_destroy(venc);
    kes_vdec_destroy(vdec);
    return rc;
}

/* ---- command line -------------------------------------------------------------------------------- */

static void print_usage(const two_stage_spec* s, FILE* to) {
    fprintf(to,
            "usage: %s DETECTOR.kom LANDMARK.kom [options] [PHOTO.jpg ...]\n"
            "  (DETECTOR is MediaPipe's %s model, LANDMARK its %s model, converted with kes-convert)\n"
            "  --video FILE        also find %ss in a video; writes <stem>_%s.mp4 (repeatable)\n"
            "  --max-frames N      video: stop after N frames\n"
            "  --threshold S       detection score from which a %s is looked at (default %.2f)\n"
            "  --max-%ss N%*s at most N %ss per image (default %u, at most %d)\n"
            "  --out DIR           where annotated files go (default: beside each input)\n"
            "  --dump DIR          write each %s's landmark-model input, DIR/<stem>_%s<i>.f32\n"
            "  --no-annotate       print the results only\n"
            "Prints one JSON line per photo and video frame: detections, rotated crops, landmarks in pixels.\n",
            s->program, s->detector_name, s->landmark_name, s->object, s->program, s->object,
            (double)s->default_threshold, s->object, (int)(10 - strlen(s->object)), "", s->object,
            s->default_max_objects, MAX_OBJECTS, s->object, s->object);
}

static int usage_error(const char* message, const char* arg) {
    fprintf(stderr, "%s: %s%s%s\n", g_spec->program, message, arg ? ": " : "", arg ? arg : "");
    print_usage(g_spec, stderr);
    return 2;
}

static int parse_args(const two_stage_spec* s, int argc, char** argv, options* o) {
    memset(o, 0, sizeof *o);
    o->annotate = 1;
    o->threshold = s->default_threshold;
    o->max_objects = s->default_max_objects;
    o->photos = calloc((size_t)argc, sizeof *o->photos);
    o->videos = calloc((size_t)argc, sizeof *o->videos);
    if (!o->photos || !o->videos) return usage_error("out of memory", NULL);
    char max_option[64], max_problem[128];
    snprintf(max_option, sizeof max_option, "--max-%ss", s->object);
    snprintf(max_problem, sizeof max_problem, "%s must be a whole number from 1 to %d", max_option, MAX_OBJECTS);
    size_t models = 0;
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        const char* value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            print_usage(s, stdout);
            return -1;
        } else if (!strcmp(a, "--no-annotate")) {
            o->annotate = 0;
        } else if (!strcmp(a, "--video") || !strcmp(a, "--max-frames") || !strcmp(a, "--threshold") ||
                   !strcmp(a, max_option) || !strcmp(a, "--out") || !strcmp(a, "--dump")) {
            if (!value) return usage_error("missing value after", a);
            ++i;
            if (!strcmp(a, "--video")) {
                o->videos[o->video_count++] = value;
            } else if (!strcmp(a, "--out")) {
                o->out_dir = value;
            } else if (!strcmp(a, "--dump")) {
                o->dump_dir = value;
            } else if (!strcmp(a, "--max-frames")) {
                if (sample_parse_count(value, 1ul << 30, &o->max_frames))
                    return usage_error("--max-frames must be a whole number from 1", value);
            } else if (!strcmp(a, max_option)) {
                if (sample_parse_count(value, MAX_OBJECTS, &o->max_objects)) return usage_error(max_problem, value);
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
    if (models < 2) return usage_error("want the detector and the landmark model", NULL);
    if (o->photo_count == 0 && o->video_count == 0) return usage_error("nothing to do: give photos or --video", NULL);
    return 0;
}

static int open_pipeline(pipeline* p, const options* o) {
    const two_stage_spec* s = p->spec;
    kes_mem_pool_config pool_cfg;
    kes_mem_pool_config_init(&pool_cfg);
    pool_cfg.initial_bytes = 32u << 20;
    pool_cfg.grow_bytes = 32u << 20;
    pool_cfg.name = s->program;
    if (kes_mem_pool_create(&pool_cfg, &p->pool) != KES_OK) return fail("pool");
    kes_dvpp_channel_config ch_cfg;
    kes_dvpp_channel_config_init(&ch_cfg);
    ch_cfg.pool = p->pool; /* host memory: the CPU warps the crops and draws the skeletons */
    if (kes_dvpp_channel_create(&ch_cfg, &p->channel) != KES_OK) return fail("DVPP channel");
    if (aipp_for_range(&p->detector_aipp, s->detector_input_min, s->detector_input_max) ||
        aipp_for_range(&p->landmark_aipp, 0.0f, 1.0f))
        return 1;
    p->dump_dir = o->dump_dir;
    if (model_open(&p->detector, o->models[0], s->detector_size, p->pool) ||
        model_open(&p->landmark, o->models[1], s->landmark_size, p->pool))
        return 1;
    return pipeline_configure(p, o->models[0], o->models[1], o->threshold, (uint32_t)o->max_objects);
}

static void close_pipeline(pipeline* p) {
    free(p->dets);
    model_close(&p->landmark);
    model_close(&p->detector);
    kes_dvpp_channel_destroy(p->channel);
    kes_mem_pool_destroy(p->pool);
}

int two_stage_main(const two_stage_spec* spec, int argc, char** argv) {
    g_spec = spec;
    options o;
    int rc = parse_args(spec, argc, argv, &o);
    if (rc == 0) {
        pipeline* p = calloc(1, sizeof *p); /* its anchor table is large for a stack */
        size_t failures = !p;
        if (p) {
            p->spec = spec;
            failures = open_pipeline(p, &o) != 0;
        }
        /* A photo or video that fails is reported, and the others still run. */
        if (!failures) {
            const double start = now_ms();
            for (size_t i = 0; i < o.photo_count; ++i) failures += do_photo(p, &o, o.photos[i]) != 0;
            for (size_t i = 0; i < o.video_count; ++i) failures += do_video(p, &o, o.videos[i]) != 0;
            print_timing(&p->time, now_ms() - start);
        }
        rc = failures ? 1 : 0;
        if (p) close_pipeline(p);
        free(p);
    }
    free(o.photos);
    free(o.videos);
    return rc < 0 ? 0 : rc;
}
