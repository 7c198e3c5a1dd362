/* face-search — the whole Kestrel pipeline on photos, from JPEG bytes to a search result:
 *
 *   JPEGD (NV12) → VPC letterbox 256×256 → AIPP (RGB, (x−127.5)/128, NHWC f32) → BlazeFace (engine)
 *   → anchors → faces + keypoints → aligned 112×112 NV12 crop → AIPP → MobileFaceNet (engine) → embedding
 *   → fv: enroll the first photo's faces, search every other face (cosine, top-1)
 *
 *   face-search DETECTOR.kom EMBEDDER.kom GALLERY.jpg [QUERY.jpg ...] [--video FILE|URL [--every N]]
 *               [--threshold 0.5]
 *
 * DETECTOR is BlazeFace 256 (the "back" model: 16×16×2 + 8×8×6 anchors), EMBEDDER MobileFaceNet
 * ([N,112,112,3] → [N,192]), both converted with kes-convert (./kestrel.sh demo does it). Converted with
 * --insert-op-conf aipp_rgb_centered.cfg, a model carries its AIPP and consumes the NV12 image itself
 * (kes_model_execute_images), as on a board; otherwise face-search runs the same AIPP itself. Faces of the
 * gallery photo become features (id0 0, id1 0, offset = face number); each face of a query photo is
 * searched and reported with its best match and cosine similarity. With no query, the gallery photo
 * is searched against itself (every face must find itself at cosine 1). --video takes the queries
 * from every Nth frame (default 15) of a video file or an rtsp:// camera (VDEC → the same pipeline).
 * Exit status: 0 on success, 1 on an error (printed with kes_last_error()), 2 for usage. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kestrel/kestrel.h"

#define DETECTOR_SIZE 256
#define EMBED_SIZE 112
#define MAX_FACES 64
#define SCORE_THRESHOLD 0.75f
#define NMS_IOU 0.3f

typedef struct face {
    float score, cx, cy, w, h; /* in source-image pixels */
    float kp[6][2];            /* right eye, left eye, nose, mouth, right ear, left ear (source pixels) */
} face;

static int fail(const char* what) {
    fprintf(stderr, "face-search: %s: %s (%s)\n", what, kes_last_error(), kes_status_str(kes_last_status()));
    return 1;
}

static float iou(const face* a, const face* b) {
    const float ix = fminf(a->cx + a->w / 2, b->cx + b->w / 2) - fmaxf(a->cx - a->w / 2, b->cx - b->w / 2);
    const float iy = fminf(a->cy + a->h / 2, b->cy + b->h / 2) - fmaxf(a->cy - a->h / 2, b->cy - b->h / 2);
    if (ix <= 0 || iy <= 0) return 0.0f;
    return ix * iy / (a->w * a->h + b->w * b->h - ix * iy);
}

/* One loaded model with its context and I/O buffers (from the pool). */
typedef struct model {
    kes_model* model;
    kes_model_context* ctx;
    int has_aipp;  /* converted with --insert-op-conf: the model consumes the NV12 image itself */
    kes_tensor in; /* otherwise the app's AIPP writes this input tensor */
    kes_tensor out[4];
    size_t outputs;
} model;

static int model_open(model* m, const char* path, kes_mem_pool* pool) {
    memset(m, 0, sizeof *m);
    if (kes_model_load_from_file(path, KES_MODEL_LOAD_MMAP, &m->model) != KES_OK) return fail(path);
    size_t gears = 0;
    kes_model_batch_gears(m->model, NULL, 0, &gears);
    if (kes_model_context_create(m->model, NULL, 0, &m->ctx) != KES_OK) return fail("model context");
    if (gears > 0 && kes_model_context_set_batch(m->ctx, 1) != KES_OK) return fail("batch gear 1");
    kes_tensor desc;
    const char* aipp = NULL;
    if (kes_model_input_aipp(m->model, 0, &aipp) != KES_OK) return fail("input AIPP");
    m->has_aipp = aipp != NULL;
    if (kes_model_context_input_desc(m->ctx, 0, &desc) != KES_OK) return fail("input description");
    /* An ONNX file does not say its layout: images with 3 channels last are NHWC (BlazeFace, MobileFaceNet). */
    if (desc.ndim == 4 && desc.layout == KES_LAYOUT_ND)
        desc.layout = desc.shape[3] == 3 ? KES_LAYOUT_NHWC : KES_LAYOUT_NCHW;
    if (!m->has_aipp && kes_tensor_alloc(&m->in, pool, desc.dtype, desc.layout, desc.ndim, desc.shape) != KES_OK)
        return fail("input tensor");
    kes_model_output_count(m->model, &m->outputs);
    if (m->outputs > 4) m->outputs = 4;
    for (size_t i = 0; i < m->outputs; ++i) {
        if (kes_model_context_output_desc(m->ctx, i, &desc) != KES_OK) return fail("output description");
        if (kes_tensor_alloc(&m->out[i], pool, desc.dtype, desc.layout, desc.ndim, desc.shape) != KES_OK)
            return fail("output tensor");
    }
    return 0;
}

/* One image through the model: as on a board when the model carries AIPP (kes_model_execute_images),
 * else the app's own AIPP into the input tensor, then kes_model_execute. Both give the same bits. */
static int model_run(model* m, const kes_aipp_params* aipp, const kes_image* image, const char* what) {
    if (m->has_aipp) {
        const kes_model_input in = {NULL, image, 1};
        if (kes_model_execute_images(m->ctx, &in, 1, m->out, m->outputs) != KES_OK) return fail(what);
        return 0;
    }
    if (kes_aipp_execute(aipp, NULL, image, 1, &m->in) != KES_OK) return fail("AIPP");
    if (kes_model_execute(m->ctx, &m->in, 1, m->out, m->outputs) != KES_OK) return fail(what);
    return 0;
}

static void model_close(model* m) {
    for (size_t i = 0; i < m->outputs; ++i) kes_tensor_release(&m->out[i]);
    if (!m->has_aipp) kes_tensor_release(&m->in);
    kes_model_context_destroy(m->ctx);
    kes_model_unload(m->model);
}

/* BlazeFace outputs: scores [1,512,1], [1,384,1] and boxes [1,512,16], [1,384,16] (dx, dy, w, h and 6
 * keypoints, in 256-pixel units). Boxes go back to source pixels through the letterbox paste area. */
static size_t decode_faces(const model* det, const kes_vpc_roi* paste, float scale, face* faces) {
    const struct {
        int cells, per;
        const float* scores;
        const float* boxes;
    } grids[2] = {{16, 2, det->out[0].data, det->out[2].data}, {8, 6, det->out[1].data, det->out[3].data}};
    face found[1024];
    size_t n = 0;
    for (int g = 0; g < 2; ++g) {
        for (int i = 0; i < grids[g].cells * grids[g].cells * grids[g].per && n < 1024; ++i) {
            const float score = 1.0f / (1.0f + expf(-grids[g].scores[i]));
            if (score < SCORE_THRESHOLD) continue;
            const int cell = i / grids[g].per;
            const float* b = grids[g].boxes + (size_t)i * 16;
            const float cx = ((float)(cell % grids[g].cells) + 0.5f) / grids[g].cells * DETECTOR_SIZE + b[0];
            const float cy = ((float)(cell / grids[g].cells) + 0.5f) / grids[g].cells * DETECTOR_SIZE + b[1];
            face f = {
                score, (cx - (float)paste->left) / scale, (cy - (float)paste->top) / scale, b[2] / scale, b[3] / scale,
                {{0}}};
            for (int k = 0; k < 6; ++k) {
                const float ax = ((float)(cell % grids[g].cells) + 0.5f) / grids[g].cells * DETECTOR_SIZE;
                const float ay = ((float)(cell / grids[g].cells) + 0.5f) / grids[g].cells * DETECTOR_SIZE;
                f.kp[k][0] = (ax + b[4 + 2 * k] - (float)paste->left) / scale;
                f.kp[k][1] = (ay + b[5 + 2 * k] - (float)paste->top) / scale;
            }
            found[n++] = f;
        }
    }
    /* Non-maximum suppression, highest score first. */
    size_t kept = 0;
    while (kept < MAX_FACES) {
        size_t best = n;
        for (size_t i = 0; i < n; ++i)
            if (found[i].score > 0 && (best == n || found[i].score > found[best].score)) best = i;
        if (best == n) break;
        int overlaps = 0;
        for (size_t k = 0; k < kept && !overlaps; ++k) overlaps = iou(&faces[k], &found[best]) >= NMS_IOU;
        if (!overlaps) faces[kept++] = found[best];
        found[best].score = 0;
    }
    return kept;
}

/* MobileFaceNet wants faces aligned as in training (ArcFace's 112×112 template); a plain box crop
 * loses about 0.3 of same-face cosine. VPC has no affine warp, so the alignment is done here on the
 * NV12 planes: a least-squares similarity transform maps the eyes, nose and mouth centre BlazeFace
 * found onto the template, and each output pixel is sampled bilinearly from the source. */
static const float kTemplate[4][2] = {{38.2946f, 51.6963f},  /* eye on the image's left (BlazeFace keypoint 0) */
                                      {73.5318f, 51.5014f},  /* eye on the image's right (keypoint 1) */
                                      {56.0252f, 71.7366f},  /* nose tip */
                                      {56.1396f, 92.2848f}}; /* mouth centre (mean of ArcFace's corners) */

static float sample(const uint8_t* plane, uint32_t stride, uint32_t w, uint32_t h, float x, float y, int step,
                    int channel) {
    if (x < 0) x = 0;
    if (y < 0) y = 0;
    if (x > (float)(w - 1)) x = (float)(w - 1);
    if (y > (float)(h - 1)) y = (float)(h - 1);
    const uint32_t x0 = (uint32_t)x, y0 = (uint32_t)y;
    const uint32_t x1 = x0 + 1 < w ? x0 + 1 : x0, y1 = y0 + 1 < h ? y0 + 1 : y0;
    const float fx = x - (float)x0, fy = y - (float)y0;
    const uint8_t* r0 = plane + (size_t)y0 * stride;
    const uint8_t* r1 = plane + (size_t)y1 * stride;
    const float top = r0[x0 * step + channel] * (1 - fx) + r0[x1 * step + channel] * fx;
    const float bottom = r1[x0 * step + channel] * (1 - fx) + r1[x1 * step + channel] * fx;
    return top * (1 - fy) + bottom * fy;
}

static int align_face(const face* f, const kes_image* img, kes_mem_pool* pool, kes_image* out) {
    /* Source points p (the face's), template points q; q ≈ [a −b; b a]·p + t. */
    const int src_index[4] = {0, 1, 2, 3};
    float pm[2] = {0, 0}, qm[2] = {0, 0};
    for (int i = 0; i < 4; ++i)
        for (int c = 0; c < 2; ++c) pm[c] += f->kp[src_index[i]][c] / 4, qm[c] += kTemplate[i][c] / 4;
    float num_a = 0, num_b = 0, den = 0;
    for (int i = 0; i < 4; ++i) {
        const float px = f->kp[src_index[i]][0] - pm[0], py = f->kp[src_index[i]][1] - pm[1];
        const float qx = kTemplate[i][0] - qm[0], qy = kTemplate[i][1] - qm[1];
        num_a += px * qx + py * qy;
        num_b += px * qy - py * qx;
        den += px * px + py * py;
    }
    if (den < 1e-3f) return 0;
    const float a = num_a / den, b = num_b / den, norm = a * a + b * b;
    if (norm < 1e-8f) return 0;
    const float tx = qm[0] - (a * pm[0] - b * pm[1]), ty = qm[1] - (b * pm[0] + a * pm[1]);
    uint32_t ws = 0, hs = 0;
    if (kes_image_strides(KES_PIXEL_NV12, EMBED_SIZE, EMBED_SIZE, KES_STRIDE_VPC, kes_board_get(), &ws, &hs) !=
            KES_OK ||
        kes_image_alloc(out, pool, KES_PIXEL_NV12, EMBED_SIZE, EMBED_SIZE, ws, hs) != KES_OK)
        return -1;
    const uint8_t* y_src = img->data;
    const uint8_t* uv_src = y_src + (size_t)img->width_stride * img->height_stride;
    uint8_t* y_dst = out->data;
    uint8_t* uv_dst = y_dst + (size_t)ws * hs;
    /* Inverse map: p = A⁻¹(q − t), A⁻¹ = [a b; −b a] / (a² + b²). */
    for (uint32_t v = 0; v < EMBED_SIZE; ++v)
        for (uint32_t u = 0; u < EMBED_SIZE; ++u) {
            const float qx = (float)u - tx, qy = (float)v - ty;
            const float x = (a * qx + b * qy) / norm, y = (-b * qx + a * qy) / norm;
            y_dst[(size_t)v * ws + u] =
                (uint8_t)(sample(y_src, img->width_stride, img->width, img->height, x, y, 1, 0) + 0.5f);
            if ((u & 1) == 0 && (v & 1) == 0) {
                /* Chroma sits at even luma positions (MPEG-2 siting): sample at half the luma coordinate. */
                for (int c = 0; c < 2; ++c)
                    uv_dst[(size_t)(v / 2) * ws + u + c] =
                        (uint8_t)(sample(uv_src, img->width_stride, (img->width + 1) / 2, (img->height + 1) / 2, x / 2,
                                         y / 2, 2, c) +
                                  0.5f);
            }
        }
    return 1;
}

typedef struct pipeline {
    kes_mem_pool* pool;
    kes_dvpp_channel* channel;
    kes_aipp_params aipp;
    model det, emb;
    kes_fv_repo* repo;
} pipeline;

/* Faces of one NV12 image → embeddings (192 floats each; the repository's cosine metric normalises). */
static int process_image(pipeline* p, const kes_image* image, float* embeddings, face* faces, size_t* count) {
    const kes_image img = *image;
    kes_image boxed;
    kes_vpc_roi paste;
    *count = 0;
    if (kes_vpc_letterbox(p->channel, &img, NULL, DETECTOR_SIZE, DETECTOR_SIZE, NULL, NULL, &boxed, &paste) != KES_OK)
        return fail("VPC letterbox");
    const float scale = (float)(paste.right - paste.left + 1) / (float)(img.width & ~1u);
    if (model_run(&p->det, &p->aipp, &boxed, "BlazeFace")) return 1;
    face found[MAX_FACES];
    const size_t n = decode_faces(&p->det, &paste, scale, found);

    size_t used = 0;
    for (size_t i = 0; i < n; ++i) {
        kes_image aligned;
        const int rc = align_face(&found[i], &img, p->pool, &aligned);
        if (rc < 0) return fail("aligned face image");
        if (rc == 0) continue; /* degenerate keypoints */
        faces[used] = found[i];
        const int rc_run = model_run(&p->emb, &p->aipp, &aligned, "MobileFaceNet");
        kes_image_release(&aligned);
        if (rc_run) return 1;
        memcpy(embeddings + used * 192, p->emb.out[0].data, 192 * sizeof(float));
        ++used;
    }
    *count = used;
    kes_image_release(&boxed);
    return 0;
}

static int process_photo(pipeline* p, const char* path, float* embeddings, face* faces, size_t* count) {
    kes_image img;
    if (kes_jpeg_decode_file(p->channel, path, KES_PIXEL_NV12, NULL, &img) != KES_OK) return fail(path);
    const int rc = process_image(p, &img, embeddings, faces, count);
    kes_image_release(&img);
    return rc;
}

/* Searches each face against the gallery and prints the best match. */
static int search_faces(pipeline* p, const float* embeddings, const face* faces, size_t count, float threshold) {
    for (size_t i = 0; i < count; ++i) {
        kes_fv_search_params sp;
        kes_fv_search_params_init(&sp);
        sp.k = 1;
        kes_fv_result best;
        uint32_t found = 0;
        if (kes_fv_search(p->repo, embeddings + i * 192, 192, &sp, &best, 1, &found) != KES_OK) return fail("search");
        if (found == 0 || best.distance < threshold)
            printf("  face %zu at (%.0f, %.0f): no match above %.2f\n", i, faces[i].cx, faces[i].cy, threshold);
        else
            printf("  face %zu at (%.0f, %.0f): gallery face %u, cosine %.3f\n", i, faces[i].cx, faces[i].cy,
                   best.offset, best.distance);
    }
    return 0;
}

/* Every `every`-th frame of a video file or rtsp:// stream is a query. */
static int search_video(pipeline* p, const char* source, uint32_t every, float threshold, float* embeddings,
                        face* faces) {
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.source = source;
    cfg.frame_interval = every;
    cfg.pool = p->pool;
    kes_vdec* vdec = NULL;
    if (kes_vdec_create(&cfg, &vdec) != KES_OK) return fail(source);
    for (;;) {
        kes_vdec_frame frame;
        if (kes_vdec_read_frame(vdec, &frame) != KES_OK) {
            kes_vdec_destroy(vdec);
            return fail("VDEC");
        }
        if (frame.end_of_stream) break;
        size_t count = 0;
        const int rc = process_image(p, &frame.image, embeddings, faces, &count);
        kes_image_release(&frame.image);
        if (rc) {
            kes_vdec_destroy(vdec);
            return rc;
        }
        printf("frame %llu (pts %lld us): %zu faces\n", (unsigned long long)frame.frame_index, (long long)frame.pts,
               count);
        if (search_faces(p, embeddings, faces, count, threshold)) {
            kes_vdec_destroy(vdec);
            return 1;
        }
    }
    kes_vdec_destroy(vdec);
    return 0;
}

static int run(int argc, char** argv) {
    const char* paths[64];
    int npaths = 0;
    float threshold = 0.5f;
    const char* video = NULL;
    uint32_t every = 15;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--threshold") == 0 && i + 1 < argc) {
            /* A typo must not become 0, where every stranger "matches". */
            char* end = NULL;
            const char* arg = argv[++i];
            threshold = strtof(arg, &end);
            if (arg[0] == '\0' || *end != '\0' || !(threshold >= -1.0f && threshold <= 1.0f)) {
                fprintf(stderr, "face-search: --threshold must be a cosine in -1..1 (got '%s')\n", arg);
                return 2;
            }
        } else if (strcmp(argv[i], "--video") == 0 && i + 1 < argc) {
            video = argv[++i];
        } else if (strcmp(argv[i], "--every") == 0 && i + 1 < argc) {
            char* end = NULL;
            const char* arg = argv[++i];
            const unsigned long v = strtoul(arg, &end, 10);
            if (arg[0] == '\0' || arg[0] == '-' || *end != '\0' || v < 1 || v > 1000000) {
                fprintf(stderr, "face-search: --every must be a frame count in 1..1000000 (got '%s')\n", arg);
                return 2;
            }
            every = (uint32_t)v;
        } else if (argv[i][0] == '-' || npaths == 64) {
            fprintf(stderr,
                    "usage: face-search DETECTOR.kom EMBEDDER.kom GALLERY.jpg [QUERY.jpg ...] [--video FILE|URL "
                    "[--every N]]\n"
                    "       [--threshold 0.5]\n");
            return 2;
        } else {
            paths[npaths++] = argv[i];
        }
    }
    if (npaths < 3) {
        fprintf(
            stderr,
            "usage: face-search DETECTOR.kom EMBEDDER.kom GALLERY.jpg [QUERY.jpg ...] [--video FILE|URL [--every N]]\n"
            "       [--threshold 0.5]\n");
        return 2;
    }

    pipeline p;
    memset(&p, 0, sizeof p);
    kes_mem_pool_config pool_cfg;
    kes_mem_pool_config_init(&pool_cfg);
    pool_cfg.initial_bytes = 64u << 20;
    pool_cfg.grow_bytes = 64u << 20;
    pool_cfg.name = "face-search";
    if (kes_mem_pool_create(&pool_cfg, &p.pool) != KES_OK) return fail("pool");
    kes_dvpp_channel_config ch_cfg;
    kes_dvpp_channel_config_init(&ch_cfg);
    ch_cfg.pool = p.pool;
    if (kes_dvpp_channel_create(&ch_cfg, &p.channel) != KES_OK) return fail("DVPP channel");
    kes_aipp_params_init(&p.aipp);
    /* Both models take RGB (x − 127.5) / 128; JPEGD output is full-range BT.601 (JFIF). */
    if (kes_aipp_params_apply_recipe(&p.aipp, KES_AIPP_RECIPE_RGB_CENTERED, KES_AIPP_YUV420SP_U8,
                                     KES_AIPP_CSC_YUV2RGB_BT601_WIDE) != KES_OK)
        return fail("AIPP recipe");
    if (model_open(&p.det, paths[0], p.pool) || model_open(&p.emb, paths[1], p.pool)) return 1;

    kes_fv_config fv_cfg;
    kes_fv_config_init(&fv_cfg);
    fv_cfg.kind = KES_FV_DENSE;
    fv_cfg.dim = 192;
    fv_cfg.storage = KES_F32;
    fv_cfg.metric = KES_FV_METRIC_COSINE;
    if (kes_fv_repo_create(&fv_cfg, &p.repo) != KES_OK) return fail("fv repository");

    static float embeddings[MAX_FACES * 192];
    face faces[MAX_FACES];
    size_t count = 0;
    if (process_photo(&p, paths[2], embeddings, faces, &count)) return 1;
    printf("gallery %s: %zu faces\n", paths[2], count);
    for (size_t i = 0; i < count; ++i) {
        printf("  face %zu: score %.2f, centre (%.0f, %.0f), size %.0fx%.0f\n", i, faces[i].score, faces[i].cx,
               faces[i].cy, faces[i].w, faces[i].h);
        if (kes_fv_repo_add(p.repo, 0, 0, (uint32_t)i, embeddings + i * 192, 1, 192 * sizeof(float)) != KES_OK)
            return fail("enroll");
    }
    /* No query photo and no video: search the gallery against itself. */
    const int queries_from = npaths > 3 || video ? 3 : 2;
    for (int q = queries_from; q < npaths; ++q) {
        if (process_photo(&p, paths[q], embeddings, faces, &count)) return 1;
        printf("query %s: %zu faces\n", paths[q], count);
        if (search_faces(&p, embeddings, faces, count, threshold)) return 1;
    }
    if (video && search_video(&p, video, every, threshold, embeddings, faces)) return 1;
    kes_fv_repo_destroy(p.repo);
    model_close(&p.emb);
    model_close(&p.det);
    kes_dvpp_channel_destroy(p.channel);
    kes_mem_pool_destroy(p.pool);
    return 0;
}

int main(int argc, char** argv) {
    int rc = run(argc, argv);
    /* KES_TRACE=trace.json is written at exit, too late to change the exit status; stopping here
     * makes a trace that cannot be written fail the run instead of passing unnoticed. */
    if (kes_trace_enabled() && kes_trace_stop() != KES_OK) {
        fprintf(stderr, "face-search: KES_TRACE: %s\n", kes_last_error());
        if (rc == 0) rc = 1;
    }
    return rc;
}
