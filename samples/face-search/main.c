/* face-search — who is in this photo, this video, this camera? The whole Kestrel pipeline, from JPEG or
 * H.264 bytes to names drawn on the picture:
 *
 *   JPEGD / VDEC (NV12) → VPC letterbox 256×256 → BlazeFace (engine; AIPP in the model or the app's)
 *   → kestrel/detect.h: anchors, decode, NMS, back to source pixels → faces with 6 keypoints
 *   → aligned 112×112 NV12 crop → MobileFaceNet (engine) → 192-float embedding
 *   → fv: cosine top-1 over the enrolled people → name, or "unknown" below the threshold
 *   → OSD boxes and labels on the NV12 image → JPEGE (.jpg) / VENC (.mp4)
 *
 * usage: face-search DETECTOR.kom EMBEDDER.kom [options] [QUERY.jpg ...]
 *   --enroll NAME=PHOTO[:FACE]  enroll a face of PHOTO as NAME: face FACE (faces are numbered left to
 *                               right, as face-search prints them), or the largest face. Repeat it; a
 *                               name given twice gets every photo (more photos, better matches)
 *   --gallery DIR               enroll DIR/NAME/PHOTO.jpg: one sub-folder per person, the largest face of
 *                               each photo (a photo without a face is skipped with a warning)
 *   --load DB                   start from a saved database (before --enroll / --gallery add to it)
 *   --save DB                   save the database after enrolling: DB (the fv repository) and DB.names
 *   --threshold T               cosine from which a face gets a name (default 0.65, see below)
 *   --detect-threshold S        BlazeFace score from which a box is a face (default 0.65, see below)
 *   --out DIR                   where the annotated files go (default: beside each input; the current
 *                               directory for a camera)
 *   --no-annotate               print the results only
 *   --video FILE|rtsp://URL     search a video file or a camera; the annotated video is an H.264 MP4.
 *                               Repeat it for several, searched in turn
 *   --every N                   video: detect and search every Nth frame (default 1); the frames in
 *                               between keep the last boxes, so they stay on screen
 *   --max-frames N              video: stop after N frames (Ctrl-C also stops and finishes the MP4)
 *   --pairs                     also print the cosine of every pair of faces in the query photos,
 *                               best first: the numbers to choose a threshold for your photos from
 *   --stats                     say which calls the hardware served and which the CPU (stderr, at the
 *                               end): the DVPP channel's counts and where each model ran
 * e.g. face-search bf.kom mfn.kom --enroll zoe=party.jpg:2 --save faces.db   (enroll, save)
 *      face-search bf.kom mfn.kom --load faces.db group.jpg --video rtsp://cam/stream --every 3
 * Names are 1..63 bytes without control characters; the OSD font draws ASCII (other characters as boxes).
 *
 * For each query photo it prints each face (box, then the name and cosine, or "unknown" and the best
 * cosine) and writes <stem>_annotated.jpg; for a video, the frames where the names on screen change,
 * a summary per person and <stem>_annotated.mp4 with every frame. The per-stage timing (decode, detect,
 * align, embed, search, draw, encode) and the FPS go to stderr at the end, so stdout holds only results
 * (the same on every backend); KES_TRACE=trace.json records the same stages as spans for Perfetto.
 *
 * The database. Person i (in enrolment order) is fv library (id0, id1) = (i / 1024, i % 1024); its
 * offsets 0, 1, ... are its enrolled faces, so a top-1 search names the person directly. kes_fv_repo_save
 * writes DB; DB.names is a text file: the line "kestrel-face-names 1", then one line "id0 id1 name" per
 * person in order. --load checks the pair: every line well formed, ids consecutive, names unique, and
 * exactly one non-empty library per name, with the embedder's dimension and the cosine metric.
 *
 * Models: DETECTOR is BlazeFace 256 (the "back" model: 16×16×2 + 8×8×6 anchors) or BlazeFace 128 (the
 * "front" model, for faces near the camera), told apart by their input size; EMBEDDER MobileFaceNet
 * ([N,112,112,3] → [N,192]), converted with kes-convert (samples/face-search/demo.sh does it). Both run one
 * image at a time: MobileFaceNet's file has a fixed batch of 2, so it is converted with --dynamic-batch
 * 1,2 (face-search says so when it is not). Converted with --insert-op-conf aipp_rgb_centered.cfg a model
 * carries its AIPP and consumes the NV12 image itself (kes_model_execute_images), as on a board; otherwise
 * face-search runs the same AIPP itself. Both give the same bits.
 *
 * Exit status: 0 on success, 1 on an error (printed with kes_last_error()), 2 for usage. A query photo or
 * video that fails is reported and the others are still searched; the run then exits 1. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "kestrel/kestrel.h"

#define DETECTOR_ANCHORS 896 /* BlazeFace 256: 16×16×2 + 8×8×6; BlazeFace 128: the same counts */
#define MAX_DIM 1024         /* embedder output floats */
#define MAX_FACES 64         /* per image */
#define NAME_BYTES 64        /* names are 1..63 bytes */
#define PEOPLE_PER_ID0 (KES_FV_ID_MAX + 1)
#define MAX_PEOPLE (PEOPLE_PER_ID0 * PEOPLE_PER_ID0)
#define MAX_PAIR_FACES 512
#define NAMES_HEADER "kestrel-face-names 1"

/* The default threshold, measured with --pairs on the six face-api sample photos (960 px wide; BlazeFace
 * finds 22 faces at the default --detect-threshold, 231 pairs; make_demo_data.sh makes the JPEGs):
 *   the same woman in photo 1 (face 2) and photo 3 (face 1), another night, pose and light: 0.827;
 *   every other pair is lower than 0.53: the next are 0.527 (photo 1 face 1, photo 4 face 0: two
 *   dark-haired women, taken as different people), 0.499, 0.460 and 0.444 (pairs of faces in one photo,
 *   certainly different people); all the rest ≤ 0.417;
 *   a face and a copy of its photo shifted by (16, 8) pixels (check.sh): ≥ 0.94; a face in the demo
 *   video (zoomed, panned, re-encoded) and the photo it was enrolled from: up to 0.99.
 * 0.65 leaves 0.18 below the same-person pair and 0.12 above the best pair of different people.
 * Other cameras and lighting move both sides: measure yours with --pairs and set --threshold. */
#define DEFAULT_THRESHOLD 0.65f

/* BlazeFace's score (the sigmoid of its logit) from which a box is a face, before NMS. Measured on the
 * same six photos, which hold 22 faces, all frontal or three-quarter, 82 to 125 px in the letterbox:
 *   BlazeFace 256 (back): 0.75 finds 19 (it missed a face in photos 2, 3 and 4), 0.70 finds 21, 0.65 and
 *   below find all 22, and down to 0.50 nothing that is not a face;
 *   BlazeFace 128 (front, a short-range model for faces near the camera): 5 at 0.75, 15 at 0.50.
 * So 0.65, with the 256 model (demo.sh's): the 128 model does not fix the misses. */
#define DEFAULT_DETECT_THRESHOLD 0.65f
#define DEFAULT_DETECT_TEXT "0.65"

/* A failed system call on a file: "face-search: PATH: No such file or directory". */
static int sys_fail(const char* path) {
    fprintf(stderr, "face-search: %s: %s\n", path, strerror(errno));
    return 1;
}

static int fail(const char* what) {
    fprintf(stderr, "face-search: %s: %s (%s)\n", what, kes_last_error(), kes_status_str(kes_last_status()));
    return 1;
}

/* ---- timing: per-stage totals, and the same stages as trace spans ------------------------------ */

enum { ST_DECODE, ST_DETECT, ST_ALIGN, ST_EMBED, ST_SEARCH, ST_DRAW, ST_ENCODE, ST_COUNT };
static const char* const kStageName[ST_COUNT] = {"decode", "detect", "align", "embed", "search", "draw", "encode"};

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

typedef struct timing {
    double ms[ST_COUNT];
    unsigned long long calls[ST_COUNT];
    unsigned long long frames, images, faces, video_frames; /* decoded, searched */
    double video_ms;
} timing;

static double stage_begin(int stage) {
    if (kes_trace_enabled()) kes_trace_begin("face-search", kStageName[stage]);
    return now_ms();
}

static void stage_end(timing* t, int stage, double start) {
    t->ms[stage] += now_ms() - start;
    t->calls[stage]++;
    if (kes_trace_enabled()) kes_trace_end();
}

/* ---- models -------------------------------------------------------------------------------------- */

/* One loaded model with its context and I/O buffers (from the pool). */
typedef struct model {
    kes_model* model;
    kes_model_context* ctx;
    int has_aipp;       /* converted with --insert-op-conf: the model consumes the NV12 image itself */
    kes_tensor in;      /* otherwise the app's AIPP writes this input tensor */
    uint32_t in_height; /* the input image's size (NHWC dims 1, 2; NCHW dims 2, 3) */
    uint32_t in_width;
    kes_tensor out[4];
    size_t outputs;
    size_t out_elements[4];
} model;

/* face-search runs one image (a frame, a face) at a time: a model whose input takes a batch of N > 1
 * cannot run it. Said here, with the conversion that fixes it; later it surfaced as an AIPP error ("output
 * N is 2 but 1 images") or, through the embedding's size (N x 192 floats), as a database that "holds no
 * 384-float embeddings". MobileFaceNet's TFLite file has a fixed batch of 2. */
static int batch_problem(const char* path, const char* input, int64_t batch, const int64_t* gears, size_t count) {
    fprintf(stderr, "face-search: %s: input '%s' ", path, input);
    if (count > 0) {
        fprintf(stderr, "has batch gears");
        for (size_t g = 0; g < count && g < 16; ++g) fprintf(stderr, "%s%lld", g ? "," : " ", (long long)gears[g]);
        fprintf(stderr, " and no gear 1");
    } else {
        fprintf(stderr, "takes a fixed batch of %lld images", (long long)batch);
    }
    fprintf(stderr,
            ", but face-search gives it one image at a time: convert the model again with --dynamic-batch 1,%lld "
            "(or --input-shape '%s:1,...')\n",
            (long long)(count > 0 ? gears[count - 1] : batch), input);
    return 1;
}

static int model_open(model* m, const char* path, kes_mem_pool* pool) {
    memset(m, 0, sizeof *m);
    if (kes_model_load_from_file(path, KES_MODEL_LOAD_MMAP, &m->model) != KES_OK) return fail(path);
    int64_t gear_list[16];
    size_t gears = 0;
    kes_model_batch_gears(m->model, gear_list, 16, &gears);
    const char* input = "?";
    kes_model_input_name(m->model, 0, &input);
    if (kes_model_context_create(m->model, NULL, 0, &m->ctx) != KES_OK) return fail("model context");
    if (gears > 0 && kes_model_context_set_batch(m->ctx, 1) != KES_OK)
        return batch_problem(path, input, 0, gear_list, gears);
    kes_tensor desc;
    const char* aipp = NULL;
    if (kes_model_input_aipp(m->model, 0, &aipp) != KES_OK) return fail("input AIPP");
    m->has_aipp = aipp != NULL;
    if (kes_model_context_input_desc(m->ctx, 0, &desc) != KES_OK) return fail("input description");
    if ((desc.ndim == 4 || desc.ndim == 2) && desc.shape[0] != 1)
        return batch_problem(path, input, desc.shape[0], NULL, 0);
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
        return fail("input tensor");
    kes_model_output_count(m->model, &m->outputs);
    if (m->outputs > 4) m->outputs = 4;
    for (size_t i = 0; i < m->outputs; ++i) {
        if (kes_model_context_output_desc(m->ctx, i, &desc) != KES_OK) return fail("output description");
        if (desc.dtype != KES_F32) {
            fprintf(stderr, "face-search: %s: output %zu is not float32\n", path, i);
            return 1;
        }
        m->out_elements[i] = 1;
        for (uint32_t d = 0; d < desc.ndim; ++d) m->out_elements[i] *= (size_t)desc.shape[d];
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

/* ---- the pipeline -------------------------------------------------------------------------------- */

typedef struct face {
    kes_detection det; /* box and keypoints (right eye, left eye, nose, mouth, right ear, left ear) in
                          source pixels */
    int64_t person;    /* best match, -1 when nobody is enrolled */
    float cosine;      /* its cosine */
} face;

typedef struct people {
    char (*names)[NAME_BYTES];
    size_t count, capacity;
} people;

typedef struct pipeline {
    kes_mem_pool* pool;
    kes_dvpp_channel* channel;
    kes_aipp_params aipp;
    model det, emb;
    size_t dim; /* embedding floats */
    kes_anchor anchors[DETECTOR_ANCHORS];
    kes_detect_anchor_config anchor_cfg;
    kes_detect_decode_config decode_cfg;
    kes_detect_nms_config nms_cfg;
    uint32_t det_size;      /* the detector's input side: 256 (BlazeFace back) or 128 (front) */
    float detect_threshold; /* BlazeFace score from which a box is a face */
    kes_detection* dets;    /* DETECTOR_ANCHORS */
    void* nms_scratch;
    size_t nms_scratch_size;
    kes_fv_repo* repo;
    people who;
    float threshold;
    timing time;
} pipeline;

/* BlazeFace as MediaPipe ships it, in two sizes with the same 896 anchors: the 256 "back" model (16×16×2 +
 * 8×8×6, strides 16 and 32) and the 128 "front" model (strides 8 and 16), each with its anchor scales. */
static int detector_init(pipeline* p, const char* path) {
    static const uint32_t strides_256[4] = {16, 32, 32, 32}, strides_128[4] = {8, 16, 16, 16};
    p->det_size = p->det.in_height;
    if (p->det.in_width != p->det.in_height || (p->det_size != 256 && p->det_size != 128)) {
        fprintf(stderr, "face-search: %s: the detector takes %ux%u images, not BlazeFace's 256x256 or 128x128\n", path,
                p->det.in_width, p->det.in_height);
        return 1;
    }
    kes_detect_anchor_config_init(&p->anchor_cfg);
    p->anchor_cfg.input_width = p->anchor_cfg.input_height = p->det_size;
    p->anchor_cfg.num_layers = 4;
    p->anchor_cfg.strides = p->det_size == 256 ? strides_256 : strides_128;
    p->anchor_cfg.min_scale = p->det_size == 256 ? 0.15625f : 0.1484375f;
    p->anchor_cfg.max_scale = 0.75f;
    p->anchor_cfg.fixed_anchor_size = 1; /* BlazeFace's regressors carry the size */
    size_t n = 0;
    if (kes_detect_anchors_generate(&p->anchor_cfg, p->anchors, DETECTOR_ANCHORS, &n) != KES_OK)
        return fail("BlazeFace anchors");
    kes_detect_decode_config_init(&p->decode_cfg); /* sigmoid scores, centre-size boxes, x before y */
    p->decode_cfg.score_threshold = p->detect_threshold;
    p->decode_cfg.x_scale = p->decode_cfg.y_scale = p->decode_cfg.w_scale = p->decode_cfg.h_scale = (float)p->det_size;
    p->decode_cfg.num_keypoints = 6;
    kes_detect_nms_config_init(&p->nms_cfg);
    p->nms_cfg.iou_threshold = 0.3f;
    p->nms_cfg.max_detections = MAX_FACES;
    /* Outputs: scores [1,512,1], [1,384,1]; boxes [1,512,16], [1,384,16] (a wrong model fails here). */
    const size_t want[4] = {512, 384, 512 * 16, 384 * 16};
    for (size_t i = 0; i < 4; ++i)
        if (p->det.outputs != 4 || p->det.out_elements[i] != want[i]) {
            fprintf(stderr,
                    "face-search: %s: the detector is not BlazeFace (want outputs of 512, 384, 8192 and 6144 floats)\n",
                    path);
            return 1;
        }
    p->dets = malloc(sizeof(kes_detection) * DETECTOR_ANCHORS);
    if (kes_detect_nms_scratch_size(DETECTOR_ANCHORS, &p->nms_scratch_size) != KES_OK) return fail("NMS scratch");
    p->nms_scratch = malloc(p->nms_scratch_size);
    if (!p->dets || !p->nms_scratch) {
        fprintf(stderr, "face-search: out of memory\n");
        return 1;
    }
    return 0;
}

/* Faces sorted left to right (then top to bottom): the numbers --enroll NAME=PHOTO:FACE uses. */
static int by_position(const void* a, const void* b) {
    const kes_detection* x = &((const face*)a)->det;
    const kes_detection* y = &((const face*)b)->det;
    if (x->x0 != y->x0) return x->x0 < y->x0 ? -1 : 1;
    if (x->y0 != y->y0) return x->y0 < y->y0 ? -1 : 1;
    return 0;
}

static int detect_faces(pipeline* p, const kes_image* img, face* faces, size_t* count) {
    *count = 0;
    const double t0 = stage_begin(ST_DETECT);
    kes_image boxed;
    kes_vpc_roi paste;
    if (kes_vpc_letterbox(p->channel, img, NULL, p->det_size, p->det_size, NULL, NULL, &boxed, &paste) != KES_OK) {
        stage_end(&p->time, ST_DETECT, t0);
        return fail("VPC letterbox");
    }
    int rc = model_run(&p->det, &p->aipp, &boxed, "BlazeFace");
    kes_image_release(&boxed);
    const kes_detect_head heads[2] = {{p->det.out[0].data, p->det.out[2].data, 512},
                                      {p->det.out[1].data, p->det.out[3].data, 384}};
    size_t found = 0, kept = 0;
    if (!rc && kes_detect_decode(&p->decode_cfg, heads, 2, p->anchors, DETECTOR_ANCHORS, p->dets, DETECTOR_ANCHORS,
                                 &found) != KES_OK)
        rc = fail("BlazeFace decode");
    if (!rc && kes_detect_nms(&p->nms_cfg, p->dets, found, p->nms_scratch, p->nms_scratch_size, &kept) != KES_OK)
        rc = fail("NMS");
    /* The letterbox scaled both axes by one factor, paste width / even source width; the source height
     * in that scale keeps it (the paste height is rounded to even). */
    const float paste_w = (float)(paste.right - paste.left + 1), paste_h = (float)(paste.bottom - paste.top + 1);
    const float src_w = (float)(img->width & ~1u), src_h = paste_h * src_w / paste_w;
    kes_detect_transform t;
    if (!rc && (kes_detect_transform_letterbox(p->det_size, p->det_size, (float)paste.left, (float)paste.top, paste_w,
                                               paste_h, src_w, src_h, &t) != KES_OK ||
                kes_detect_transform_apply(&t, p->dets, kept) != KES_OK))
        rc = fail("letterbox transform");
    if (!rc) {
        for (size_t i = 0; i < kept; ++i) {
            faces[i].det = p->dets[i];
            faces[i].person = -1;
            faces[i].cosine = 0;
        }
        qsort(faces, kept, sizeof *faces, by_position);
        *count = kept;
    }
    stage_end(&p->time, ST_DETECT, t0);
    return rc;
}

/* MobileFaceNet wants faces aligned as in training (ArcFace's 112×112 template); a plain box crop loses
 * about 0.3 of same-face cosine. kes_detect_align_face (kestrel/detect.h) maps the eyes, nose and mouth
 * centre BlazeFace found onto the template and samples the NV12 image there (VPC has no affine warp).
 * Returns 1 with *out filled, 0 for keypoints that define no face (nothing to embed), -1 on an error. */
static int align_face(const kes_detection* f, const kes_image* img, kes_mem_pool* pool, kes_image* out) {
    kes_detect_similarity t;
    if (kes_detect_align_similarity(f, &t) != KES_OK) return 0;
    return kes_detect_align_face(f, img, pool, out) == KES_OK ? 1 : -1;
}

/* Detects the faces of one NV12 image and embeds each (p->dim floats per face, in embeddings). A face
 * whose keypoints are degenerate is dropped. */
static int process_image(pipeline* p, const kes_image* img, face* faces, float* embeddings, size_t* count) {
    size_t n = 0;
    *count = 0;
    p->time.images++;
    if (detect_faces(p, img, faces, &n)) return 1;
    size_t used = 0;
    for (size_t i = 0; i < n; ++i) {
        double t0 = stage_begin(ST_ALIGN);
        kes_image aligned;
        const int rc = align_face(&faces[i].det, img, p->pool, &aligned);
        stage_end(&p->time, ST_ALIGN, t0);
        if (rc < 0) return fail("aligned face image");
        if (rc == 0) continue;
        t0 = stage_begin(ST_EMBED);
        const int rc_run = model_run(&p->emb, &p->aipp, &aligned, "MobileFaceNet");
        kes_image_release(&aligned);
        if (!rc_run) memcpy(embeddings + used * p->dim, p->emb.out[0].data, p->dim * sizeof(float));
        stage_end(&p->time, ST_EMBED, t0);
        if (rc_run) return 1;
        faces[used++] = faces[i];
    }
    p->time.faces += used;
    *count = used;
    return 0;
}

static int decode_photo(pipeline* p, const char* path, kes_image* img) {
    const double t0 = stage_begin(ST_DECODE);
    const kes_status st = kes_jpeg_decode_file(p->channel, path, KES_PIXEL_NV12, NULL, img);
    stage_end(&p->time, ST_DECODE, t0);
    p->time.frames++;
    return st == KES_OK ? 0 : fail(path);
}

/* ---- people: names ↔ fv libraries ---------------------------------------------------------------- */

/* NULL if the name is fine, else what is wrong with it. */
static const char* name_problem(const char* name) {
    const size_t n = strlen(name);
    if (n == 0) return "is empty";
    if (n >= NAME_BYTES) return "is longer than 63 bytes";
    for (size_t i = 0; i < n; ++i)
        if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f) return "has a control character";
    return NULL;
}

static int64_t person_find(const people* who, const char* name) {
    for (size_t i = 0; i < who->count; ++i)
        if (strcmp(who->names[i], name) == 0) return (int64_t)i;
    return -1;
}

static int64_t person_add(people* who, const char* name) {
    if (who->count == MAX_PEOPLE) return -1;
    if (who->count == who->capacity) {
        const size_t cap = who->capacity ? who->capacity * 2 : 16;
        void* grown = realloc(who->names, cap * NAME_BYTES);
        if (!grown) return -1;
        who->names = grown;
        who->capacity = cap;
    }
    snprintf(who->names[who->count], NAME_BYTES, "%s", name);
    return (int64_t)who->count++;
}

/* Adds one embedding to NAME's library, creating the person on their first face. */
static int enroll_embedding(pipeline* p, const char* name, const float* embedding) {
    int64_t person = person_find(&p->who, name);
    if (person < 0 && (person = person_add(&p->who, name)) < 0) {
        fprintf(stderr, "face-search: cannot add '%s': out of memory or more than %d people\n", name, MAX_PEOPLE);
        return 1;
    }
    const uint32_t id0 = (uint32_t)person / PEOPLE_PER_ID0, id1 = (uint32_t)person % PEOPLE_PER_ID0;
    uint32_t offset = 0;
    if (kes_fv_repo_library_size(p->repo, id0, id1, &offset) != KES_OK ||
        kes_fv_repo_add(p->repo, id0, id1, offset, embedding, 1, p->dim * sizeof(float)) != KES_OK)
        return fail("enroll");
    return 0;
}

static int names_save(const people* who, const char* db) {
    char path[4096], tmp[4096 + 8];
    snprintf(path, sizeof path, "%s.names", db);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE* f = fopen(tmp, "w");
    if (!f) return sys_fail(tmp);
    fprintf(f, "%s\n", NAMES_HEADER);
    for (size_t i = 0; i < who->count; ++i)
        fprintf(f, "%zu %zu %s\n", i / PEOPLE_PER_ID0, i % PEOPLE_PER_ID0, who->names[i]);
    if (ferror(f) | fclose(f) || rename(tmp, path) != 0) {
        sys_fail(path);
        remove(tmp);
        return 1;
    }
    return 0;
}

static int db_save(pipeline* p, const char* db) {
    if (kes_fv_repo_save(p->repo, db) != KES_OK) return fail(db);
    if (names_save(&p->who, db)) return 1;
    printf("saved %zu people to %s and %s.names\n", p->who.count, db, db);
    return 0;
}

static int names_error(const char* path, unsigned line, const char* what) {
    fprintf(stderr, "face-search: %s line %u: %s\n", path, line, what);
    return 1;
}

/* DB.names is outside data: every line is checked, and nothing it says is trusted until it matches the
 * repository. */
static int names_load(people* who, const char* db) {
    char path[4096];
    snprintf(path, sizeof path, "%s.names", db);
    FILE* f = fopen(path, "r");
    if (!f) return sys_fail(path);
    char line[256];
    unsigned number = 0;
    int rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        ++number;
        size_t len = strlen(line);
        if (len > 0 && line[len - 1] == '\n')
            line[--len] = '\0';
        else if (!feof(f)) {
            rc = names_error(path, number, "longer than 255 bytes");
            break;
        }
        if (number == 1) {
            if (strcmp(line, NAMES_HEADER) != 0) rc = names_error(path, number, "not \"" NAMES_HEADER "\"");
            continue;
        }
        /* "id0 id1 name": the ids are this person's position, checked rather than believed. */
        const size_t person = who->count;
        char want[32];
        snprintf(want, sizeof want, "%zu %zu ", person / PEOPLE_PER_ID0, person % PEOPLE_PER_ID0);
        if (strncmp(line, want, strlen(want)) != 0) {
            char msg[96];
            snprintf(msg, sizeof msg, "want \"id0 id1 name\" starting with \"%s\" (person %zu)", want, person);
            rc = names_error(path, number, msg);
            break;
        }
        const char* name = line + strlen(want);
        const char* problem = name_problem(name);
        if (problem) {
            char msg[64];
            snprintf(msg, sizeof msg, "the name %s", problem);
            rc = names_error(path, number, msg);
        } else if (person_find(who, name) >= 0)
            rc = names_error(path, number, "the name is given twice");
        else if (person_add(who, name) < 0)
            rc = names_error(path, number, "too many people");
    }
    if (!rc && ferror(f)) {
        sys_fail(path);
        rc = 1;
    }
    if (!rc && number == 0) rc = names_error(path, 1, "empty file (no \"" NAMES_HEADER "\" line)");
    fclose(f);
    return rc;
}

static int db_load(pipeline* p, const char* db) {
    kes_fv_repo* loaded = NULL;
    if (kes_fv_repo_load(db, &loaded) != KES_OK) return fail(db);
    kes_fv_repo_destroy(p->repo);
    p->repo = loaded;
    if (names_load(&p->who, db)) return 1;
    kes_fv_config cfg;
    kes_fv_config_init(&cfg);
    uint64_t features = 0;
    uint32_t libraries = 0;
    if (kes_fv_repo_get_config(p->repo, &cfg) != KES_OK || kes_fv_repo_count(p->repo, &features, &libraries) != KES_OK)
        return fail(db);
    if (cfg.kind != KES_FV_DENSE || cfg.dim != p->dim || cfg.metric != KES_FV_METRIC_COSINE) {
        fprintf(stderr,
                "face-search: %s holds no %zu-float cosine embeddings (not made by face-search with this "
                "embedder)\n",
                db, p->dim);
        return 1;
    }
    for (size_t i = 0; i < p->who.count; ++i) {
        uint32_t size = 0;
        kes_fv_repo_library_size(p->repo, (uint32_t)(i / PEOPLE_PER_ID0), (uint32_t)(i % PEOPLE_PER_ID0), &size);
        if (size == 0) {
            fprintf(stderr, "face-search: %s.names names '%s' (library %zu %zu), which %s does not hold: not a pair\n",
                    db, p->who.names[i], i / PEOPLE_PER_ID0, i % PEOPLE_PER_ID0, db);
            return 1;
        }
    }
    if (libraries != p->who.count) {
        fprintf(stderr, "face-search: %s holds %u people, %s.names names %zu: not a pair\n", db, libraries, db,
                p->who.count);
        return 1;
    }
    printf("loaded %zu people (%llu faces) from %s\n", p->who.count, (unsigned long long)features, db);
    return 0;
}

/* ---- enrolment ----------------------------------------------------------------------------------- */

typedef struct enroll_spec {
    char name[NAME_BYTES];
    const char* photo; /* points into a copy the spec owns */
    char* buffer;
    long face; /* -1: the largest */
} enroll_spec;

/* NAME=PHOTO[:FACE]: a trailing ":digits" is the face number. Returns NULL if fine, else the problem. */
static const char* enroll_parse(const char* arg, enroll_spec* spec) {
    memset(spec, 0, sizeof *spec);
    spec->face = -1;
    const char* eq = strchr(arg, '=');
    if (!eq) return "no '='";
    if ((size_t)(eq - arg) >= NAME_BYTES) return "the name is longer than 63 bytes";
    memcpy(spec->name, arg, (size_t)(eq - arg));
    const char* problem = name_problem(spec->name);
    if (problem) return strcmp(problem, "is empty") == 0 ? "no name before '='" : "the name has a control character";
    if (eq[1] == '\0') return "no photo after '='";
    spec->buffer = malloc(strlen(eq + 1) + 1);
    if (!spec->buffer) return "out of memory";
    strcpy(spec->buffer, eq + 1);
    spec->photo = spec->buffer;
    char* colon = strrchr(spec->buffer, ':');
    if (colon && colon[1] != '\0' && strspn(colon + 1, "0123456789") == strlen(colon + 1) && colon != spec->buffer) {
        if (strlen(colon + 1) > 4) return "the face number is above 9999";
        spec->face = strtol(colon + 1, NULL, 10);
        *colon = '\0';
    }
    return NULL;
}

static float area(const kes_detection* d) {
    return (d->x1 - d->x0) * (d->y1 - d->y0);
}

/* Enrolls face `which` of the photo (-1: the largest) as `name`. A photo without a face is an error for
 * --enroll (strict) and a warning for --gallery. */
static int enroll_photo(pipeline* p, const char* name, const char* path, long which, int strict, float* embeddings,
                        face* faces) {
    kes_image img;
    if (decode_photo(p, path, &img)) return 1;
    size_t n = 0;
    const int rc = process_image(p, &img, faces, embeddings, &n);
    kes_image_release(&img);
    if (rc) return 1;
    if (n == 0 || which >= (long)n) {
        if (n == 0)
            fprintf(stderr, "face-search: %s: no face found%s\n", path, strict ? "" : "; skipped");
        else
            fprintf(stderr, "face-search: %s has %zu faces (0..%zu, left to right); face %ld asked for\n", path, n,
                    n - 1, which);
        return strict ? 1 : 0;
    }
    size_t pick = (size_t)which;
    if (which < 0) {
        pick = 0;
        for (size_t i = 1; i < n; ++i)
            if (area(&faces[i].det) > area(&faces[pick].det)) pick = i;
    }
    if (enroll_embedding(p, name, embeddings + pick * p->dim)) return 1;
    const kes_detection* d = &faces[pick].det;
    printf("enrolled %s: %s face %zu of %zu at (%.0f, %.0f) %.0fx%.0f\n", name, path, pick, n, d->x0, d->y0,
           d->x1 - d->x0, d->y1 - d->y0);
    return 0;
}

static int has_jpeg_extension(const char* file) {
    const char* dot = strrchr(file, '.');
    return dot && (strcasecmp(dot, ".jpg") == 0 || strcasecmp(dot, ".jpeg") == 0);
}

static int is_directory(const char* path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* DIR/NAME/PHOTO.jpg (.jpg, .jpeg), in name order (the same database on every machine). */
static int enroll_gallery(pipeline* p, const char* dir, float* embeddings, face* faces) {
    struct dirent** persons = NULL;
    const int n = scandir(dir, &persons, NULL, alphasort);
    if (n < 0) {
        return sys_fail(dir);
    }
    int rc = 0;
    for (int i = 0; i < n; ++i) {
        char sub[4096];
        const char* name = persons[i]->d_name;
        snprintf(sub, sizeof sub, "%s/%s", dir, name);
        if (!rc && name[0] != '.' && is_directory(sub)) {
            if (name_problem(name)) {
                fprintf(stderr, "face-search: %s: the folder name %s; skipped\n", sub, name_problem(name));
            } else {
                struct dirent** photos = NULL;
                const int m = scandir(sub, &photos, NULL, alphasort);
                if (m < 0) {
                    sys_fail(sub);
                    rc = 1;
                }
                for (int j = 0; j < m; ++j) {
                    char file[8192];
                    snprintf(file, sizeof file, "%s/%s", sub, photos[j]->d_name);
                    if (!rc && photos[j]->d_name[0] != '.' && has_jpeg_extension(photos[j]->d_name))
                        rc = enroll_photo(p, name, file, -1, 0, embeddings, faces);
                    free(photos[j]);
                }
                free(photos);
            }
        }
        free(persons[i]);
    }
    free(persons);
    return rc;
}

/* ---- search and drawing -------------------------------------------------------------------------- */

static int search_faces(pipeline* p, const float* embeddings, face* faces, size_t count) {
    const double t0 = stage_begin(ST_SEARCH);
    int rc = 0;
    kes_fv_search_params sp;
    kes_fv_search_params_init(&sp);
    sp.k = 1;
    for (size_t i = 0; i < count && !rc; ++i) {
        kes_fv_result best;
        uint32_t found = 0;
        faces[i].person = -1;
        faces[i].cosine = 0;
        if (kes_fv_search(p->repo, embeddings + i * p->dim, p->dim, &sp, &best, 1, &found) != KES_OK) {
            rc = fail("search");
        } else if (found == 1) {
            faces[i].person = (int64_t)best.id0 * PEOPLE_PER_ID0 + best.id1;
            faces[i].cosine = best.distance;
        }
    }
    stage_end(&p->time, ST_SEARCH, t0);
    return rc;
}

static const char* face_name(const pipeline* p, const face* f) {
    return f->person >= 0 && f->cosine >= p->threshold ? p->who.names[f->person] : NULL;
}

static void print_face(const pipeline* p, size_t i, const face* f) {
    const kes_detection* d = &f->det;
    printf("  face %zu at (%.0f, %.0f) %.0fx%.0f: ", i, d->x0, d->y0, d->x1 - d->x0, d->y1 - d->y0);
    const char* name = face_name(p, f);
    if (name)
        printf("%s, cosine %.3f\n", name, f->cosine);
    else if (f->person >= 0)
        printf("unknown (best %s, cosine %.3f)\n", p->who.names[f->person], f->cosine);
    else
        printf("unknown (nobody enrolled)\n");
}

/* A host copy of the image with JPEGE strides (which VENC takes too), even-sized: the canvas the
 * boxes are drawn on, whatever unit and memory the frame came from. */
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

static int draw_faces(pipeline* p, kes_image* canvas, const face* faces, size_t count) {
    const double t0 = stage_begin(ST_DRAW);
    kes_osd_box boxes[MAX_FACES];
    char labels[MAX_FACES][NAME_BYTES + 16];
    const int32_t scale = canvas->width >= 800 ? 2 : 1; /* labels readable on a photo, compact on VGA video */
    for (size_t i = 0; i < count; ++i) {
        const kes_detection* d = &faces[i].det;
        const char* name = face_name(p, &faces[i]);
        if (name)
            snprintf(labels[i], sizeof labels[i], "%s %.2f", name, faces[i].cosine);
        else
            snprintf(labels[i], sizeof labels[i], "unknown");
        boxes[i].x = (int32_t)lroundf(d->x0);
        boxes[i].y = (int32_t)lroundf(d->y0);
        boxes[i].width = (int32_t)lroundf(d->x1) - boxes[i].x;
        boxes[i].height = (int32_t)lroundf(d->y1) - boxes[i].y;
        boxes[i].color = name ? kes_osd_color_rgb(0, 170, 60) : kes_osd_color_rgb(220, 60, 30);
        boxes[i].label = labels[i];
    }
    kes_osd_box_style style;
    kes_osd_box_style_init(&style);
    style.thickness = scale + 1;
    style.text_scale = scale;
    const kes_status st = kes_osd_draw_boxes(canvas, boxes, (uint32_t)count, &style);
    stage_end(&p->time, ST_DRAW, t0);
    return st == KES_OK ? 0 : fail("OSD");
}

/* out_dir/stem + suffix, stem = the input's file name without its extension (a camera URL's last path
 * part); out_dir NULL: beside the input (the current directory for a URL). */
static void output_path(const char* input, const char* out_dir, const char* suffix, char* path, size_t size) {
    const int url = strstr(input, "://") != NULL;
    const char* slash = strrchr(input, '/');
    const char* base = slash ? slash + 1 : input;
    char stem[256];
    size_t n = 0;
    for (const char* c = base; *c && n + 1 < sizeof stem; ++c) {
        const int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' ||
                       *c == '_' || *c == '.';
        stem[n++] = url && !ok ? '_' : *c;
    }
    stem[n] = '\0';
    char* dot = strrchr(stem, '.');
    if (dot && dot != stem) *dot = '\0';
    if (stem[0] == '\0') snprintf(stem, sizeof stem, "camera");
    if (out_dir)
        snprintf(path, size, "%s/%s%s", out_dir, stem, suffix);
    else if (!url && slash)
        snprintf(path, size, "%.*s/%s%s", (int)(slash - input), input, stem, suffix);
    else
        snprintf(path, size, "%s%s", stem, suffix);
}

static int write_jpeg(pipeline* p, const kes_image* canvas, const char* path) {
    const double t0 = stage_begin(ST_ENCODE);
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
        if (!written) rc = sys_fail(path);
    }
    free(jpeg);
    stage_end(&p->time, ST_ENCODE, t0);
    return rc;
}

/* ---- queries --------------------------------------------------------------------------------------- */

typedef struct options {
    const char* out_dir;
    int annotate;
    const char** videos; /* --video, in the order given */
    int nvideos;
    uint32_t every;
    unsigned long long max_frames;
    int pairs;
    int stats;
} options;

/* The faces of every query photo, for --pairs. */
typedef struct pair_face {
    const char* photo;
    size_t index;
} pair_face;

typedef struct pair_set {
    pair_face who[MAX_PAIR_FACES];
    float* embeddings;
    size_t count;
} pair_set;

static int search_photo(pipeline* p, const options* o, const char* path, float* embeddings, face* faces,
                        pair_set* pairs) {
    kes_image img;
    if (decode_photo(p, path, &img)) return 1;
    size_t n = 0;
    int rc = process_image(p, &img, faces, embeddings, &n);
    if (!rc) rc = search_faces(p, embeddings, faces, n);
    if (!rc) {
        printf("%s: %zu face%s\n", path, n, n == 1 ? "" : "s");
        for (size_t i = 0; i < n; ++i) print_face(p, i, &faces[i]);
        for (size_t i = 0; i < n && pairs && pairs->count < MAX_PAIR_FACES; ++i, ++pairs->count) {
            pairs->who[pairs->count] = (pair_face){path, i};
            memcpy(pairs->embeddings + pairs->count * p->dim, embeddings + i * p->dim, p->dim * sizeof(float));
        }
    }
    if (!rc && o->annotate) {
        kes_image canvas;
        char out[4096];
        output_path(path, o->out_dir, "_annotated.jpg", out, sizeof out);
        rc = canvas_from(p, &img, &canvas);
        if (!rc) rc = draw_faces(p, &canvas, faces, n);
        if (!rc) rc = write_jpeg(p, &canvas, out);
        if (!rc) printf("wrote %s (%ux%u)\n", out, canvas.width, canvas.height);
        kes_image_release(&canvas);
    }
    kes_image_release(&img);
    return rc;
}

static float cosine(const float* a, const float* b, size_t dim) {
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < dim; ++i) ab += (double)a[i] * b[i], aa += (double)a[i] * a[i], bb += (double)b[i] * b[i];
    return aa > 0 && bb > 0 ? (float)(ab / sqrt(aa * bb)) : 0.0f;
}

typedef struct pair {
    size_t a, b;
    float cosine;
} pair;

static int by_cosine(const void* x, const void* y) {
    const pair* a = x;
    const pair* b = y;
    if (a->cosine != b->cosine) return a->cosine > b->cosine ? -1 : 1;
    return a->a != b->a ? (a->a < b->a ? -1 : 1) : (a->b < b->b ? -1 : a->b > b->b);
}

static int print_pairs(const pipeline* p, const pair_set* s) {
    const size_t total = s->count * (s->count > 0 ? s->count - 1 : 0) / 2;
    pair* all = malloc((total ? total : 1) * sizeof *all);
    if (!all) {
        fprintf(stderr, "face-search: out of memory\n");
        return 1;
    }
    size_t k = 0;
    for (size_t a = 0; a < s->count; ++a)
        for (size_t b = a + 1; b < s->count; ++b)
            all[k++] = (pair){a, b, cosine(s->embeddings + a * p->dim, s->embeddings + b * p->dim, p->dim)};
    qsort(all, k, sizeof *all, by_cosine);
    printf("pairs: %zu faces, %zu pairs, best first\n", s->count, k);
    for (size_t i = 0; i < k; ++i)
        printf("  %.3f  %s face %zu  %s face %zu\n", all[i].cosine, s->who[all[i].a].photo, s->who[all[i].a].index,
               s->who[all[i].b].photo, s->who[all[i].b].index);
    free(all);
    return 0;
}

static volatile sig_atomic_t g_stop = 0;
static void on_interrupt(int sig) {
    (void)sig;
    g_stop = 1;
}

/* Names on screen, left to right, e.g. "cleo 0.84, unknown": printed when it changes. */
static void describe(const pipeline* p, const face* faces, size_t n, char* text, size_t size) {
    size_t used = 0;
    text[0] = '\0';
    for (size_t i = 0; i < n && used < size; ++i) {
        const char* name = face_name(p, &faces[i]);
        int w = name ? snprintf(text + used, size - used, "%s%s", i ? ", " : "", name)
                     : snprintf(text + used, size - used, "%sunknown", i ? ", " : "");
        if (w > 0) used += (size_t)w;
    }
    if (n == 0) snprintf(text, size, "no face");
}

typedef struct seen {
    unsigned long long frames; /* searched frames in which the person was named */
    float best;
} seen;

/* A camera that drops is reconnected inside kes_vdec_read_frame (with backoff); meanwhile a read times
 * out with KES_ERR_TIMEOUT. Says so once per outage and keeps reading; 0 when the channel is not
 * reconnecting (the timeout is then the stream's error). */
static int camera_reconnecting(const kes_vdec* vdec, int* outage) {
    kes_vdec_health h;
    memset(&h, 0, sizeof h);
    h.struct_size = sizeof h;
    if (kes_vdec_get_health(vdec, &h) != KES_OK || h.state != KES_VDEC_STATE_RECONNECTING) return 0;
    if (!*outage) printf("  camera lost (%s): reconnecting\n", h.last_error_text);
    *outage = 1;
    return 1;
}

static void camera_back(const kes_vdec* vdec, int* outage) {
    kes_vdec_health h;
    memset(&h, 0, sizeof h);
    h.struct_size = sizeof h;
    if (kes_vdec_get_health(vdec, &h) == KES_OK)
        printf("  camera back (%llu reconnects so far, %llu frames dropped)\n", (unsigned long long)h.reconnects,
               (unsigned long long)h.frames_dropped);
    *outage = 0;
}

static int search_video(pipeline* p, const options* o, const char* video, float* embeddings) {
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.source = video;
    cfg.pool = p->pool;
    kes_vdec* vdec = NULL;
    kes_venc* venc = NULL;
    seen* per_person = calloc(p->who.count ? p->who.count : 1, sizeof *per_person);
    face* last = malloc(sizeof(face) * MAX_FACES);
    if (!per_person || !last) {
        free(per_person);
        free(last);
        fprintf(stderr, "face-search: out of memory\n");
        return 1;
    }
    size_t last_count = 0;
    int outage = 0; /* a live camera is down and being reconnected */
    unsigned long long frames = 0, searched = 0, unknown = 0;
    char out[4096], shown[1024] = "", now[1024];
    output_path(video, o->out_dir, "_annotated.mp4", out, sizeof out);
    void (*previous)(int) = signal(SIGINT, on_interrupt);
    const double start = now_ms();
    double t0 = stage_begin(ST_DECODE);
    int rc = kes_vdec_create(&cfg, &vdec) != KES_OK ? fail(video) : 0;
    stage_end(&p->time, ST_DECODE, t0);
    kes_vdec_stream_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    if (!rc && kes_vdec_get_stream_info(vdec, &info) != KES_OK) rc = fail("stream info");
    if (!rc) printf("video %s: %ux%u\n", video, info.width, info.height);
    while (!rc && !g_stop && (o->max_frames == 0 || frames < o->max_frames)) {
        kes_vdec_frame frame;
        t0 = stage_begin(ST_DECODE);
        const kes_status st = kes_vdec_read_frame(vdec, &frame);
        stage_end(&p->time, ST_DECODE, t0);
        if (st == KES_ERR_TIMEOUT && camera_reconnecting(vdec, &outage)) continue; /* the camera dropped */
        if (st != KES_OK) {
            rc = fail("VDEC");
            break;
        }
        if (frame.end_of_stream) break;
        if (outage) camera_back(vdec, &outage);
        p->time.frames++;
        if (frames % o->every == 0) {
            size_t n = 0;
            rc = process_image(p, &frame.image, last, embeddings, &n);
            if (!rc) rc = search_faces(p, embeddings, last, n);
            if (!rc) {
                last_count = n;
                ++searched;
                for (size_t i = 0; i < n; ++i) {
                    if (!face_name(p, &last[i])) {
                        ++unknown;
                        continue;
                    }
                    seen* s = &per_person[last[i].person];
                    if (s->frames++ == 0 || last[i].cosine > s->best) s->best = last[i].cosine;
                }
                describe(p, last, n, now, sizeof now);
                if (searched == 1 || strcmp(now, shown) != 0) {
                    const double at = frame.pts == KES_VIDEO_NO_PTS ? 0.0 : (double)frame.pts / 1e6;
                    printf("  frame %llu (%.2f s): %s\n", (unsigned long long)frame.frame_index, at, now);
                    snprintf(shown, sizeof shown, "%s", now);
                }
            }
        }
        if (!rc && o->annotate) {
            kes_image canvas;
            rc = canvas_from(p, &frame.image, &canvas);
            if (!rc) rc = draw_faces(p, &canvas, last, last_count);
            if (!rc && !venc) {
                kes_venc_config vc;
                kes_venc_config_init(&vc);
                vc.path = out;
                vc.width = canvas.width;
                vc.height = canvas.height;
                if (info.fps_num > 0 && info.fps_den > 0) vc.fps_num = info.fps_num, vc.fps_den = info.fps_den;
                if (kes_venc_create(&vc, &venc) != KES_OK) rc = fail(out);
            }
            if (!rc) {
                t0 = stage_begin(ST_ENCODE);
                if (kes_venc_encode_frame(venc, &canvas) != KES_OK) rc = fail("VENC");
                stage_end(&p->time, ST_ENCODE, t0);
            }
            kes_image_release(&canvas);
        }
        kes_image_release(&frame.image);
        if (!rc) ++frames;
    }
    if (venc) {
        t0 = stage_begin(ST_ENCODE);
        if (kes_venc_finish(venc) != KES_OK && !rc) rc = fail("VENC finish");
        stage_end(&p->time, ST_ENCODE, t0);
    }
    p->time.video_frames += frames;
    p->time.video_ms += now_ms() - start;
    if (!rc) {
        printf("video %s: %llu frames, %llu searched%s\n", video, frames, searched, g_stop ? " (interrupted)" : "");
        for (size_t i = 0; i < p->who.count; ++i)
            if (per_person[i].frames > 0)
                printf("  %s: in %llu searched frames, best cosine %.3f\n", p->who.names[i], per_person[i].frames,
                       per_person[i].best);
        printf("  unknown: %llu faces\n", unknown);
        kes_vdec_health h;
        memset(&h, 0, sizeof h);
        h.struct_size = sizeof h;
        if (kes_vdec_get_health(vdec, &h) == KES_OK && (h.reconnects || h.reconnect_attempts))
            printf("  camera: %llu reconnects (%llu attempts), %llu frames dropped\n", (unsigned long long)h.reconnects,
                   (unsigned long long)h.reconnect_attempts, (unsigned long long)h.frames_dropped);
        if (venc) {
            uint64_t written = 0, bytes = 0;
            kes_venc_get_counts(venc, &written, &bytes);
            printf("wrote %s (%llu frames)\n", out, (unsigned long long)written);
        }
    }
    signal(SIGINT, previous);
    kes_venc_destroy(venc);
    kes_vdec_destroy(vdec);
    free(per_person);
    free(last);
    return rc;
}

static void print_timing(const pipeline* p, double wall_ms) {
    const timing* t = &p->time;
    const double frames = t->frames ? (double)t->frames : 1.0;
    fprintf(stderr, "face-search timing: %llu frames (photos and video), %llu searched, %llu faces, %.2f s\n",
            t->frames, t->images, t->faces, wall_ms / 1e3);
    fprintf(stderr, "  %-7s %10s %10s %8s\n", "stage", "total ms", "ms/frame", "calls");
    for (int s = 0; s < ST_COUNT; ++s)
        fprintf(stderr, "  %-7s %10.1f %10.2f %8llu\n", kStageName[s], t->ms[s], t->ms[s] / frames, t->calls[s]);
    if (wall_ms > 0)
        fprintf(stderr, "  %.1f FPS over the whole run (models loaded; enrolment included)\n",
                (double)t->frames * 1e3 / wall_ms);
    if (t->video_ms > 0)
        fprintf(stderr, "  video: %llu frames in %.2f s = %.1f FPS (decode, search, draw, encode)\n", t->video_frames,
                t->video_ms / 1e3, (double)t->video_frames * 1e3 / t->video_ms);
}

/* With the Ascend backend, which calls the hardware served: the DVPP channel's counts (a call the hardware
 * refuses, e.g. a progressive JPEG, falls back to the CPU) and where each model ran (a .om on the NPU). */
static void print_stats(const pipeline* p, const char* const* paths) {
    kes_dvpp_channel_stats s;
    s.struct_size = sizeof s;
    if (kes_dvpp_channel_get_stats(p->channel, &s) == KES_OK)
        fprintf(stderr,
                "face-search stats: DVPP channel %s: %llu calls served by the DVPP hardware, %llu by the CPU (%llu "
                "refused by the hardware)\n",
                s.backend == KES_BACKEND_ASCEND ? "with the hardware" : "without hardware (the CPU path)",
                (unsigned long long)s.hardware_calls, (unsigned long long)s.cpu_calls, (unsigned long long)s.fallbacks);
    const model* models[2] = {&p->det, &p->emb};
    for (int i = 0; i < 2; ++i) {
        kes_model_metadata md;
        memset(&md, 0, sizeof md);
        md.struct_size = sizeof md;
        const int npu = kes_model_get_metadata(models[i]->model, &md) == KES_OK && strcmp(md.source_format, "om") == 0;
        fprintf(stderr, "  %s %s: %s\n", i == 0 ? "detector" : "embedder", paths[i],
                npu ? "the NPU (a .om, AIPP inside it)" : "the CPU engine (a .kom)");
    }
    fprintf(stderr, "  face alignment, search, drawing and VENC: the CPU\n");
}

/* ---- command line ---------------------------------------------------------------------------------- */

static const char kUsage[] =
    "usage: face-search DETECTOR.kom EMBEDDER.kom [options] [QUERY.jpg ...]\n"
    "  --enroll NAME=PHOTO[:FACE]  enroll face FACE of PHOTO (numbered left to right) or its largest face\n"
    "  --gallery DIR               enroll DIR/NAME/*.jpg, one sub-folder per person\n"
    "  --load DB                   start from a saved database (DB and DB.names)\n"
    "  --save DB                   save the database after enrolling (DB and DB.names)\n"
    "  --threshold T               cosine from which a face gets a name (default 0.65)\n"
    "  --detect-threshold S        BlazeFace score from which a box is a face (default " DEFAULT_DETECT_TEXT
    ")\n"
    "  --out DIR                   write <stem>_annotated.jpg/.mp4 here (default: beside the input)\n"
    "  --no-annotate               print the results only\n"
    "  --video FILE|rtsp://URL     search a video or camera, write an annotated H.264 MP4; repeatable\n"
    "  --every N                   video: search every Nth frame (default 1)\n"
    "  --max-frames N              video: stop after N frames\n"
    "  --pairs                     print the cosine of every pair of query faces, best first\n"
    "  --stats                     say which calls the hardware served and which the CPU\n"
    "e.g.  face-search bf.kom mfn.kom --enroll zoe=party.jpg:2 --save faces.db\n"
    "      face-search bf.kom mfn.kom --load faces.db group.jpg --video clip.mp4\n"
    "Timing goes to stderr at the end; KES_TRACE=trace.json records the stages for Perfetto.\n";

static int usage_error(const char* message, const char* arg) {
    if (message)
        fprintf(stderr, "face-search: %s%s%s%s\n", message, arg ? " (got '" : "", arg ? arg : "", arg ? "')" : "");
    fputs(kUsage, stderr);
    return 2;
}

/* A typo must not become 0 (a threshold where every stranger matches, or a frame count of 0). */
static int parse_count(const char* arg, unsigned long max, unsigned long* out) {
    char* end = NULL;
    const unsigned long v = strtoul(arg, &end, 10);
    if (arg[0] == '\0' || arg[0] == '-' || arg[0] == '+' || *end != '\0' || v < 1 || v > max) return 0;
    *out = v;
    return 1;
}

typedef struct command {
    const char* models[2];
    const char** queries;
    int nqueries;
    enroll_spec* enrolls;
    int nenrolls;
    const char* galleries[16];
    int ngalleries;
    const char *load, *save;
    float threshold;
    float detect_threshold;
    options o;
} command;

/* Returns -1 when the command line is fine, else the exit status (0 after --help, 2 for usage). */
static int parse_args(int argc, char** argv, command* c) {
    int nmodels = 0;
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        const int has_value = i + 1 < argc;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(kUsage, stdout);
            return 0;
        } else if (strcmp(a, "--threshold") == 0 && has_value) {
            char* end = NULL;
            const char* arg = argv[++i];
            c->threshold = strtof(arg, &end);
            if (arg[0] == '\0' || *end != '\0' || !(c->threshold >= -1.0f && c->threshold <= 1.0f))
                return usage_error("--threshold must be a cosine in -1..1", arg);
        } else if (strcmp(a, "--detect-threshold") == 0 && has_value) {
            char* end = NULL;
            const char* arg = argv[++i];
            c->detect_threshold = strtof(arg, &end);
            if (arg[0] == '\0' || *end != '\0' || !(c->detect_threshold > 0.0f && c->detect_threshold < 1.0f))
                return usage_error("--detect-threshold must be a score between 0 and 1", arg);
        } else if (strcmp(a, "--every") == 0 && has_value) {
            unsigned long v = 0;
            if (!parse_count(argv[++i], 1000000, &v))
                return usage_error("--every must be a frame count in 1..1000000", argv[i]);
            c->o.every = (uint32_t)v;
        } else if (strcmp(a, "--max-frames") == 0 && has_value) {
            unsigned long v = 0;
            if (!parse_count(argv[++i], 1000000000ul, &v))
                return usage_error("--max-frames must be a frame count in 1..1000000000", argv[i]);
            c->o.max_frames = v;
        } else if (strcmp(a, "--enroll") == 0 && has_value) {
            const char* problem = enroll_parse(argv[++i], &c->enrolls[c->nenrolls++]);
            if (problem) {
                char msg[128];
                snprintf(msg, sizeof msg, "--enroll wants NAME=PHOTO[:FACE]: %s", problem);
                return usage_error(msg, argv[i]);
            }
        } else if (strcmp(a, "--gallery") == 0 && has_value) {
            if (c->ngalleries == 16) return usage_error("at most 16 --gallery folders", NULL);
            c->galleries[c->ngalleries++] = argv[++i];
        } else if (strcmp(a, "--load") == 0 && has_value) {
            c->load = argv[++i];
        } else if (strcmp(a, "--save") == 0 && has_value) {
            c->save = argv[++i];
        } else if (strcmp(a, "--out") == 0 && has_value) {
            c->o.out_dir = argv[++i];
        } else if (strcmp(a, "--video") == 0 && has_value) {
            c->o.videos[c->o.nvideos++] = argv[++i]; /* each is searched, in order (a second replaced the first) */
        } else if (strcmp(a, "--no-annotate") == 0) {
            c->o.annotate = 0;
        } else if (strcmp(a, "--pairs") == 0) {
            c->o.pairs = 1;
        } else if (strcmp(a, "--stats") == 0) {
            c->o.stats = 1;
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error("unknown option or missing value", a);
        } else if (nmodels < 2) {
            c->models[nmodels++] = a;
        } else {
            c->queries[c->nqueries++] = a;
        }
    }
    if (nmodels < 2) return usage_error("give the detector and the embedder models", NULL);
    if (c->nqueries == 0 && c->o.nvideos == 0 && !c->save)
        return usage_error("nothing to do: give query photos, --video or --save", NULL);
    return -1;
}

static int open_pipeline(pipeline* p, const command* c) {
    kes_mem_pool_config pool_cfg;
    kes_mem_pool_config_init(&pool_cfg);
    pool_cfg.initial_bytes = 64u << 20;
    pool_cfg.grow_bytes = 64u << 20;
    pool_cfg.name = "face-search";
    if (kes_mem_pool_create(&pool_cfg, &p->pool) != KES_OK) return fail("pool");
    kes_dvpp_channel_config ch_cfg;
    kes_dvpp_channel_config_init(&ch_cfg);
    ch_cfg.pool = p->pool; /* host memory: the CPU aligns the faces and draws the boxes */
    if (kes_dvpp_channel_create(&ch_cfg, &p->channel) != KES_OK) return fail("DVPP channel");
    kes_aipp_params_init(&p->aipp);
    /* Both models take RGB (x − 127.5) / 128; JPEGD output is full-range BT.601 (JFIF). */
    if (kes_aipp_params_apply_recipe(&p->aipp, KES_AIPP_RECIPE_RGB_CENTERED, KES_AIPP_YUV420SP_U8,
                                     KES_AIPP_CSC_YUV2RGB_BT601_WIDE) != KES_OK)
        return fail("AIPP recipe");
    if (model_open(&p->det, c->models[0], p->pool) || model_open(&p->emb, c->models[1], p->pool)) return 1;
    if (detector_init(p, c->models[0])) return 1;
    p->dim = p->emb.outputs >= 1 ? p->emb.out_elements[0] : 0;
    if (p->dim < 8 || p->dim > MAX_DIM) {
        fprintf(stderr, "face-search: %s: the embedder gives %zu floats, not an embedding of 8..%d\n", c->models[1],
                p->dim, MAX_DIM);
        return 1;
    }
    kes_fv_config fv_cfg;
    kes_fv_config_init(&fv_cfg);
    fv_cfg.kind = KES_FV_DENSE;
    fv_cfg.dim = (uint32_t)p->dim;
    fv_cfg.storage = KES_F32;
    fv_cfg.metric = KES_FV_METRIC_COSINE;
    if (kes_fv_repo_create(&fv_cfg, &p->repo) != KES_OK) return fail("fv repository");
    return 0;
}

/* Every handle may be missing (a failed open): each destroy call takes NULL. */
static void close_pipeline(pipeline* p) {
    free(p->who.names);
    free(p->dets);
    free(p->nms_scratch);
    kes_fv_repo_destroy(p->repo);
    model_close(&p->emb);
    model_close(&p->det);
    kes_dvpp_channel_destroy(p->channel);
    kes_mem_pool_destroy(p->pool);
}

static int run_command(pipeline* p, const command* c) {
    const options* o = &c->o;
    if (o->out_dir && !is_directory(o->out_dir)) {
        fprintf(stderr, "face-search: --out %s: not a directory\n", o->out_dir);
        return 1;
    }
    /* Several videos are searched in turn: two that would write one annotated MP4 are refused up front. */
    for (int i = 0; o->annotate && i < o->nvideos; ++i)
        for (int j = 0; j < i; ++j) {
            char a[4096], b[4096];
            output_path(o->videos[i], o->out_dir, "_annotated.mp4", a, sizeof a);
            output_path(o->videos[j], o->out_dir, "_annotated.mp4", b, sizeof b);
            if (strcmp(a, b) == 0) {
                fprintf(stderr,
                        "face-search: --video %s and --video %s would both write %s (give --out another place for one "
                        "of them, or --no-annotate)\n",
                        o->videos[j], o->videos[i], a);
                return 2;
            }
        }
    if (open_pipeline(p, c)) return 1;
    float* embeddings = malloc(sizeof(float) * MAX_FACES * p->dim);
    face* faces = malloc(sizeof(face) * MAX_FACES);
    pair_set* pairs = o->pairs ? calloc(1, sizeof *pairs) : NULL;
    if (pairs) pairs->embeddings = malloc(sizeof(float) * MAX_PAIR_FACES * p->dim);
    int rc = 0;
    if (!embeddings || !faces || (o->pairs && (!pairs || !pairs->embeddings))) {
        fprintf(stderr, "face-search: out of memory\n");
        rc = 1;
    }
    const double start = now_ms();
    if (!rc && c->load) rc = db_load(p, c->load);
    for (int i = 0; i < c->nenrolls && !rc; ++i)
        rc = enroll_photo(p, c->enrolls[i].name, c->enrolls[i].photo, c->enrolls[i].face, 1, embeddings, faces);
    for (int i = 0; i < c->ngalleries && !rc; ++i) rc = enroll_gallery(p, c->galleries[i], embeddings, faces);
    if (!rc && c->save) rc = db_save(p, c->save);
    if (!rc && p->who.count == 0 && (c->nqueries > 0 || o->nvideos > 0))
        fprintf(stderr, "face-search: nobody enrolled (--enroll, --gallery, --load): every face is unknown\n");
    /* A photo or video that fails (missing, not a JPEG, ...) is reported and the others are still
     * searched; the run then exits 1. The first bad photo used to end the run. */
    int failed_photos = 0, failed_videos = 0;
    for (int i = 0; i < c->nqueries && !rc; ++i)
        failed_photos += search_photo(p, o, c->queries[i], embeddings, faces, pairs) != 0;
    for (int i = 0; i < o->nvideos && !rc && !g_stop; ++i)
        failed_videos += search_video(p, o, o->videos[i], embeddings) != 0;
    if (!rc && pairs) rc = print_pairs(p, pairs);
    if (!rc) print_timing(p, now_ms() - start);
    if (!rc && (failed_photos || failed_videos)) {
        fprintf(stderr, "face-search: %d of %d photos and %d of %d videos failed (the errors are above)\n",
                failed_photos, c->nqueries, failed_videos, o->nvideos);
        rc = 1;
    }
    if (!rc && o->stats) print_stats(p, c->models);
    if (pairs) free(pairs->embeddings);
    free(pairs);
    free(faces);
    free(embeddings);
    return rc;
}

static int run(int argc, char** argv) {
    command c;
    memset(&c, 0, sizeof c);
    c.threshold = DEFAULT_THRESHOLD;
    c.o.annotate = 1;
    c.o.every = 1;
    c.detect_threshold = DEFAULT_DETECT_THRESHOLD;
    c.queries = calloc((size_t)argc, sizeof *c.queries);
    c.enrolls = calloc((size_t)argc, sizeof *c.enrolls);
    c.o.videos = calloc((size_t)argc, sizeof *c.o.videos);
    int rc = c.queries && c.enrolls && c.o.videos ? parse_args(argc, argv, &c) : 1;
    if (rc < 0) {
        pipeline* p = calloc(1, sizeof *p);
        if (p) {
            p->threshold = c.threshold;
            p->detect_threshold = c.detect_threshold;
            rc = run_command(p, &c);
            close_pipeline(p);
            free(p);
        } else {
            rc = 1;
        }
    }
    for (int i = 0; i < c.nenrolls; ++i) free(c.enrolls[i].buffer);
    free(c.enrolls);
    free(c.queries);
    free(c.o.videos);
    return rc;
}

int main(int argc, char** argv) {
    /* A line at a time even into a file or a pipe: a video or camera run reports as it goes. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    int rc = run(argc, argv);
    /* KES_TRACE=trace.json is written at exit, too late to change the exit status; stopping here
     * makes a trace that cannot be written fail the run instead of passing unnoticed. */
    if (kes_trace_enabled() && kes_trace_stop() != KES_OK) {
        fprintf(stderr, "face-search: KES_TRACE: %s\n", kes_last_error());
        if (rc == 0) rc = 1;
    }
    return rc;
}
