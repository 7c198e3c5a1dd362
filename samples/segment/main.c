/* segment — who is in front? MediaPipe's selfie segmentation on Kestrel's public API, drawn as a video
 * call's background blur, a solid background or a virtual background:
 *
 *   JPEGD / VDEC (NV12) → VPC resize of the whole frame to the model's input → AIPP (RGB in [0, 1])
 *   → model → the mask (foreground probability at the model's resolution)
 *   → kes_osd_blend_mask (upsampled bilinearly onto the frame) → JPEGE (.jpg) / VENC (.mp4)
 *
 * usage: segment MODEL.kom [options] [PHOTO.jpg ...]   (segment --help lists the options)
 *   MODEL: selfie_segmentation (256×256 → [1,256,256,1]) or selfie_segmentation_landscape (144×256 →
 *   [1,144,256,1]) from the @mediapipe/selfie_segmentation npm package, converted with kes-convert.
 *
 * Output: one JSON line per photo, raw input and video frame on stdout: the image, its size and the
 * share of the mask that is foreground (≥ 0.5); <stem>_segment.jpg / .mp4 with the background replaced.
 * --dump-mask DIR writes each photo's mask as raw float32 (<stem>_mask.f32), and --raw-input FILE runs
 * the model on a raw NHWC float32 input (as engine/tests/models/fetch_models.sh saves the reference's)
 * instead of a photo, so that the mask can be checked against another runtime on the same numbers.
 * Exit status: 0 on success, 1 on an error (the other inputs still run), 2 for usage. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kestrel/kestrel.h"
#include "sample_io.h"

static int fail(const char* what) {
    fprintf(stderr, "segment: %s: %s (%s)\n", what, kes_last_error(), kes_status_str(kes_last_status()));
    return 1;
}

typedef struct options {
    const char* model_path;
    const char* out_dir;
    const char* mask_dir;
    const char* background_image;
    kes_osd_mask_config mask_cfg;
    unsigned long max_frames;
    const char** photos;
    size_t photo_count;
    const char** videos;
    size_t video_count;
    const char** raw_inputs;
    size_t raw_count;
} options;

typedef struct app {
    const options* opt;
    kes_mem_pool* pool;
    kes_dvpp_channel* channel;
    kes_aipp_params aipp;
    kes_model* model;
    kes_model_context* ctx;
    kes_tensor in;                          /* NHWC [1, H, W, 3] float, written by AIPP */
    kes_tensor mask;                        /* [1, H, W, 1] float, the model's output seen as NHWC */
    kes_image background, sized_background; /* --background IMAGE.jpg: as decoded, and as last drawn */
    uint32_t width, height;
} app;

/* ---- the model ----------------------------------------------------------------------------------- */

static int open_model(app* a) {
    const char* path = a->opt->model_path;
    if (kes_model_load_from_file(path, KES_MODEL_LOAD_MMAP, &a->model) != KES_OK) return fail(path);
    if (kes_model_context_create(a->model, NULL, 0, &a->ctx) != KES_OK) return fail("model context");
    kes_tensor in, out;
    size_t outputs = 0;
    kes_model_output_count(a->model, &outputs);
    if (kes_model_context_input_desc(a->ctx, 0, &in) != KES_OK ||
        (outputs == 1 && kes_model_context_output_desc(a->ctx, 0, &out) != KES_OK))
        return fail("model description");
    /* The input and the mask have the same height and width: the mask is per input pixel. */
    if (outputs != 1 || in.ndim != 4 || in.layout != KES_LAYOUT_NHWC || in.dtype != KES_F32 || in.shape[0] != 1 ||
        in.shape[3] != 3 || in.shape[1] < 2 || in.shape[2] < 2 || in.shape[1] > 4096 || in.shape[2] > 4096 ||
        out.ndim != 4 || out.dtype != KES_F32 || out.shape[0] != 1 || out.shape[1] != in.shape[1] ||
        out.shape[2] != in.shape[2] || out.shape[3] != 1) {
        fprintf(stderr,
                "segment: %s: not a selfie segmentation model (want one RGB float image NHWC [1,H,W,3] in and "
                "one float mask [1,H,W,1] out)\n",
                path);
        return 1;
    }
    a->height = (uint32_t)in.shape[1];
    a->width = (uint32_t)in.shape[2];
    if (kes_tensor_alloc(&a->in, a->pool, KES_F32, KES_LAYOUT_NHWC, 4, in.shape) != KES_OK ||
        kes_tensor_alloc(&a->mask, a->pool, KES_F32, KES_LAYOUT_NHWC, 4, out.shape) != KES_OK)
        return fail("tensors");
    /* RGB in [0, 1] from JPEGD's / VDEC's NV12: full-range BT.601, then x / 255. */
    kes_aipp_params_init(&a->aipp);
    if (kes_aipp_params_apply_recipe(&a->aipp, KES_AIPP_RECIPE_RGB_CENTERED, KES_AIPP_YUV420SP_U8,
                                     KES_AIPP_CSC_YUV2RGB_BT601_WIDE) != KES_OK)
        return fail("AIPP recipe");
    for (int c = 0; c < 3; ++c) {
        a->aipp.mean_chn[c] = 0;
        a->aipp.min_chn[c] = 0.0f;
        a->aipp.var_reci_chn[c] = 1.0f / 255.0f;
    }
    return kes_aipp_params_validate(&a->aipp) == KES_OK ? 0 : fail("AIPP");
}

/* The frame resized to the model's input → AIPP → the mask in a->mask. */
static int run_model(app* a, const kes_image* frame) {
    kes_image small;
    if (kes_vpc_crop_resize(a->channel, frame, NULL, a->width, a->height, KES_VPC_INTERP_BILINEAR, a->pool, &small) !=
        KES_OK)
        return fail("VPC resize");
    int rc = kes_aipp_execute(&a->aipp, NULL, &small, 1, &a->in) != KES_OK ? fail("AIPP") : 0;
    kes_image_release(&small);
    if (!rc && kes_model_execute(a->ctx, &a->in, 1, &a->mask, 1) != KES_OK) rc = fail("selfie segmentation");
    return rc;
}

static double foreground_share(const kes_tensor* mask) {
    const float* m = mask->data;
    const size_t n = mask->size / sizeof(float);
    size_t in_front = 0;
    for (size_t i = 0; i < n; ++i) in_front += m[i] >= 0.5f;
    return n ? (double)in_front / (double)n : 0.0;
}

/* ---- files --------------------------------------------------------------------------------------- */

static int write_file(const char* path, const void* data, size_t size) {
    FILE* f = fopen(path, "wb");
    int ok = f && fwrite(data, 1, size, f) == size;
    if (f && fclose(f) != 0) ok = 0;
    if (!ok) fprintf(stderr, "segment: %s: %s\n", path, strerror(errno));
    return ok ? 0 : 1;
}

static int dump_mask(const app* a, const char* input) {
    if (!a->opt->mask_dir) return 0;
    char path[4096];
    sample_output_path(input, a->opt->mask_dir, "_mask.f32", path, sizeof path);
    return write_file(path, a->mask.data, a->mask.size);
}

static void print_result(const app* a, const char* source, long long frame, uint32_t width, uint32_t height) {
    printf("{\"image\": ");
    sample_print_json_string(source);
    if (frame >= 0) printf(", \"frame\": %lld", frame);
    printf(", \"width\": %u, \"height\": %u, \"foreground\": %.4f}\n", width, height, foreground_share(&a->mask));
}

/* ---- drawing ------------------------------------------------------------------------------------- */

/* The virtual background (--background IMAGE.jpg), decoded once. */
static int open_background(app* a) {
    if (a->opt->mask_cfg.background != KES_OSD_BACKGROUND_IMAGE) return 0;
    if (kes_jpeg_decode_file(a->channel, a->opt->background_image, KES_PIXEL_NV12, a->pool, &a->background) != KES_OK)
        return fail(a->opt->background_image);
    return 0;
}

/* The virtual background at the canvas's size and strides (the blend wants the frame's layout), remade
 * only when the size changes: a video's frames all have one. */
static int sized_background(app* a, const kes_image* canvas) {
    if (a->sized_background.width == canvas->width && a->sized_background.height == canvas->height) return 0;
    kes_image_release(&a->sized_background);
    kes_image resized;
    if (kes_vpc_crop_resize(a->channel, &a->background, NULL, canvas->width, canvas->height, KES_VPC_INTERP_BILINEAR,
                            a->pool, &resized) != KES_OK)
        return fail("VPC resize of the background");
    const int rc = sample_canvas_from("segment", a->pool, &resized, &a->sized_background);
    kes_image_release(&resized);
    return rc;
}

/* Blends the mask onto a canvas of the frame, which the caller releases when this succeeds. */
static int draw(app* a, const kes_image* frame, kes_image* canvas) {
    if (sample_canvas_from("segment", a->pool, frame, canvas)) return 1;
    kes_osd_mask_config cfg = a->opt->mask_cfg;
    int rc = 0;
    if (cfg.background == KES_OSD_BACKGROUND_IMAGE) {
        rc = sized_background(a, canvas);
        cfg.image = &a->sized_background;
    }
    if (!rc && kes_osd_blend_mask(canvas, &a->mask, &cfg) != KES_OK) rc = fail("mask blend");
    if (rc) kes_image_release(canvas);
    return rc;
}

/* ---- photos, raw inputs and videos --------------------------------------------------------------- */

static int do_photo(app* a, const char* path) {
    kes_image img;
    if (kes_jpeg_decode_file(a->channel, path, KES_PIXEL_NV12, a->pool, &img) != KES_OK) return fail(path);
    int rc = run_model(a, &img);
    if (!rc) {
        print_result(a, path, -1, img.width, img.height);
        rc = dump_mask(a, path);
    }
    if (!rc) {
        kes_image canvas;
        char out[4096];
        sample_output_path(path, a->opt->out_dir, "_segment.jpg", out, sizeof out);
        rc = draw(a, &img, &canvas);
        if (!rc) {
            rc = sample_write_jpeg("segment", a->channel, &canvas, out);
            kes_image_release(&canvas);
        }
    }
    kes_image_release(&img);
    return rc;
}

/* A raw NHWC float32 file of exactly the model's input size, straight into the model (no image). */
static int do_raw_input(app* a, const char* path) {
    FILE* f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "segment: %s: %s\n", path, strerror(errno));
        return 1;
    }
    const size_t got = fread(a->in.data, 1, a->in.size, f);
    const int extra = fgetc(f) != EOF;
    fclose(f);
    if (got != a->in.size || extra) {
        fprintf(stderr, "segment: %s: want exactly %zu bytes (float32 NHWC [1,%u,%u,3])\n", path, a->in.size, a->height,
                a->width);
        return 1;
    }
    if (kes_model_execute(a->ctx, &a->in, 1, &a->mask, 1) != KES_OK) return fail(path);
    print_result(a, path, -1, a->width, a->height);
    return dump_mask(a, path);
}

static int do_video(app* a, const char* video) {
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.source = video;
    cfg.pool = a->pool;
    kes_vdec* vdec = NULL;
    kes_venc* venc = NULL;
    char out[4096];
    sample_output_path(video, a->opt->out_dir, "_segment.mp4", out, sizeof out);
    int rc = kes_vdec_create(&cfg, &vdec) != KES_OK ? fail(video) : 0;
    kes_vdec_stream_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    if (!rc && kes_vdec_get_stream_info(vdec, &info) != KES_OK) rc = fail("stream info");
    unsigned long long frames = 0;
    while (!rc && (a->opt->max_frames == 0 || frames < a->opt->max_frames)) {
        kes_vdec_frame frame;
        if (kes_vdec_read_frame(vdec, &frame) != KES_OK) {
            rc = fail("VDEC");
            break;
        }
        if (frame.end_of_stream) break;
        kes_image canvas;
        rc = run_model(a, &frame.image);
        if (!rc) print_result(a, video, (long long)frames, frame.image.width, frame.image.height);
        if (!rc) rc = draw(a, &frame.image, &canvas);
        if (!rc) {
            rc = sample_encode_frame("segment", &venc, out, &info, &canvas);
            kes_image_release(&canvas);
        }
        kes_image_release(&frame.image);
        if (!rc) ++frames;
    }
    if (venc && kes_venc_finish(venc) != KES_OK && !rc) rc = fail("VENC finish");
    if (!rc) fprintf(stderr, "segment: %s: %llu frames, wrote %s\n", video, frames, venc ? out : "nothing");
    kes_venc_destroy(venc);
    kes_vdec_destroy(vdec);
    return rc;
}

/* ---- command line -------------------------------------------------------------------------------- */

static void print_usage(FILE* to) {
    fprintf(to,
            "usage: segment MODEL.kom [options] [PHOTO.jpg ...]\n"
            "  (MODEL is MediaPipe's selfie_segmentation or selfie_segmentation_landscape, converted with "
            "kes-convert)\n"
            "  --background B      blur (default), colour:RRGGBB (hex), or IMAGE.jpg (resized to each frame)\n"
            "  --blur-radius R     blur: the box's radius in pixels, 1 to 255 (default 12)\n"
            "  --video FILE        also segment a video; writes <stem>_segment.mp4 (repeatable)\n"
            "  --max-frames N      video: stop after N frames\n"
            "  --out DIR           where <stem>_segment.jpg / .mp4 go (default: beside each input)\n"
            "  --dump-mask DIR     write each photo's and raw input's mask, DIR/<stem>_mask.f32 (float32)\n"
            "  --raw-input FILE    run the model on a raw float32 NHWC input of its exact size instead of a\n"
            "                      photo (no image is written; repeatable)\n"
            "Prints one JSON line per photo, raw input and video frame: its size and the mask's foreground "
            "share.\n");
}

static int usage_error(const char* message, const char* arg) {
    fprintf(stderr, "segment: %s%s%s\n", message, arg ? ": " : "", arg ? arg : "");
    print_usage(stderr);
    return 2;
}

/* "blur", "colour:RRGGBB" (or "color:") or a JPEG's path. */
static int parse_background(const char* value, options* o) {
    if (!strcmp(value, "blur")) {
        o->mask_cfg.background = KES_OSD_BACKGROUND_BLUR;
        return 0;
    }
    const char* hex = !strncmp(value, "colour:", 7) ? value + 7 : !strncmp(value, "color:", 6) ? value + 6 : NULL;
    if (hex) {
        char* end = NULL;
        if (strlen(hex) != 6 || strspn(hex, "0123456789abcdefABCDEF") != 6) return 1;
        const unsigned long rgb = strtoul(hex, &end, 16);
        o->mask_cfg.background = KES_OSD_BACKGROUND_COLOR;
        o->mask_cfg.color = kes_osd_color_rgb((uint8_t)(rgb >> 16), (uint8_t)(rgb >> 8), (uint8_t)rgb);
        return 0;
    }
    if (!*value) return 1;
    o->mask_cfg.background = KES_OSD_BACKGROUND_IMAGE;
    o->background_image = value;
    return 0;
}

static int parse_args(int argc, char** argv, options* o) {
    memset(o, 0, sizeof *o);
    kes_osd_mask_config_init(&o->mask_cfg);
    o->photos = calloc((size_t)argc, sizeof *o->photos);
    o->videos = calloc((size_t)argc, sizeof *o->videos);
    o->raw_inputs = calloc((size_t)argc, sizeof *o->raw_inputs);
    if (!o->photos || !o->videos || !o->raw_inputs) return usage_error("out of memory", NULL);
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        const char* value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            print_usage(stdout);
            return -1;
        } else if (!strcmp(a, "--video") || !strcmp(a, "--max-frames") || !strcmp(a, "--out") ||
                   !strcmp(a, "--dump-mask") || !strcmp(a, "--raw-input") || !strcmp(a, "--background") ||
                   !strcmp(a, "--blur-radius")) {
            if (!value) return usage_error("missing value after", a);
            ++i;
            unsigned long radius = 0;
            if (!strcmp(a, "--video")) {
                o->videos[o->video_count++] = value;
            } else if (!strcmp(a, "--raw-input")) {
                o->raw_inputs[o->raw_count++] = value;
            } else if (!strcmp(a, "--out")) {
                o->out_dir = value;
            } else if (!strcmp(a, "--dump-mask")) {
                o->mask_dir = value;
            } else if (!strcmp(a, "--max-frames")) {
                if (sample_parse_count(value, 1ul << 30, &o->max_frames))
                    return usage_error("--max-frames must be a whole number from 1", value);
            } else if (!strcmp(a, "--blur-radius")) {
                if (sample_parse_count(value, KES_OSD_MAX_BLUR_RADIUS, &radius))
                    return usage_error("--blur-radius must be a whole number from 1 to 255", value);
                o->mask_cfg.blur_radius = (uint32_t)radius;
            } else if (parse_background(value, o)) {
                return usage_error("--background must be blur, colour:RRGGBB or a JPEG file", value);
            }
        } else if (a[0] == '-' && a[1] == '-') {
            return usage_error("unknown option", a);
        } else if (!o->model_path) {
            o->model_path = a;
        } else {
            o->photos[o->photo_count++] = a;
        }
    }
    if (!o->model_path) return usage_error("want the selfie segmentation model", NULL);
    if (o->photo_count + o->video_count + o->raw_count == 0)
        return usage_error("nothing to do: give photos, --video or --raw-input", NULL);
    return 0;
}

int main(int argc, char** argv) {
    options o;
    int rc = parse_args(argc, argv, &o);
    if (rc == 0) {
        app a;
        memset(&a, 0, sizeof a);
        a.opt = &o;
        kes_mem_pool_config pool_cfg;
        kes_mem_pool_config_init(&pool_cfg);
        pool_cfg.initial_bytes = 32u << 20;
        pool_cfg.grow_bytes = 32u << 20;
        pool_cfg.name = "segment";
        kes_dvpp_channel_config ch_cfg;
        kes_dvpp_channel_config_init(&ch_cfg);
        size_t failures = 0;
        if (kes_mem_pool_create(&pool_cfg, &a.pool) != KES_OK) {
            failures = (size_t)fail("pool");
        } else {
            ch_cfg.pool = a.pool; /* host memory: the CPU blends the mask */
            failures = kes_dvpp_channel_create(&ch_cfg, &a.channel) != KES_OK ? (size_t)fail("DVPP channel")
                                                                              : (size_t)open_model(&a);
            if (!failures) failures = (size_t)open_background(&a);
        }
        /* An input that fails is reported, and the others still run. */
        if (!failures) {
            for (size_t i = 0; i < o.raw_count; ++i) failures += do_raw_input(&a, o.raw_inputs[i]) != 0;
            for (size_t i = 0; i < o.photo_count; ++i) failures += do_photo(&a, o.photos[i]) != 0;
            for (size_t i = 0; i < o.video_count; ++i) failures += do_video(&a, o.videos[i]) != 0;
        }
        rc = failures ? 1 : 0;
        kes_image_release(&a.sized_background);
        kes_image_release(&a.background);
        kes_tensor_release(&a.mask);
        kes_tensor_release(&a.in);
        kes_model_context_destroy(a.ctx);
        kes_model_unload(a.model);
        kes_dvpp_channel_destroy(a.channel);
        kes_mem_pool_destroy(a.pool);
    }
    free(o.photos);
    free(o.videos);
    free(o.raw_inputs);
    return rc < 0 ? 0 : rc;
}
