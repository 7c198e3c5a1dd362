/* video-analytics — faces tracked across several camera streams at once, in one process:
 *
 *   per channel: VDEC (a file, looped or not, or an rtsp:// camera) → a bounded queue of 2 frames
 *   one detector for all: VPC letterbox of each channel's next frame → BlazeFace on the whole batch (one
 *     dynamic-batch gear) → kestrel/detect.h decode + NMS, back to each frame's pixels
 *   per channel: kestrel/track.h (ByteTrack) → enter/leave events and counts (JSON lines) → OSD boxes,
 *     track ids and trails → VENC (H.264 MP4)
 *   with --load: per track, not per frame, the face aligned (its keypoints) → MobileFaceNet → fv search
 *     of face-search's database → a name that sticks to the track id (samples/common/face_embed.h)
 *
 * usage: video-analytics DETECTOR.kom [options] INPUT...   (INPUT: a video file or rtsp://URL; up to 32)
 *   --out DIR              where <ch>_<stem>_annotated.mp4 and <ch>_<stem>.jsonl go (default: .)
 *   --loop                 play files again from the start when they end (cameras never end)
 *   --realtime             read files at their frame rate, as a camera sends them: when the detector
 *                          falls behind, a channel drops its oldest frame (counted) instead of waiting,
 *                          and a frame decoded more than a frame's time late is dropped (counted) too
 *   --max-frames N         stop each channel after N frames
 *   --duration S           stop every channel after S seconds
 *   --detect-threshold S   BlazeFace score from which a box is a face (default 0.5)
 *   --batch N              frames per detector run, at most (default: the model's largest gear)
 *   --threads N            threads of the detector's context (default: the pool's size)
 *   --reconnect-attempts N a camera that dropped gives up after N failed attempts in a row (default 0: never)
 *   --timeout-ms N         a camera's open and read timeout (default 5000)
 *   --no-video             JSON lines only: no annotated MP4
 *   --load DB              name the faces: the people of a face-search database (DB and DB.names, made
 *                          with face-search --save); needs --embedder
 *   --embedder MODEL.kom   the embedder that made DB (MobileFaceNet converted as face-search's demo.sh does)
 *   --threshold T          cosine from which a face gets a name (default 0.65: face-search's, measured in
 *                          samples/face-search/args.h)
 *   --recognise-every K    recognise a track again every K frames (default 10)
 *
 * Files are not live: by default a channel waits for the detector (backpressure, nothing dropped). A
 * camera is live (and so is a file with --realtime): its queue keeps the newest frames, so a slow detector
 * costs frames, never latency, and one dead camera never stalls the others (the detector takes whatever
 * channel has a frame; a reconnecting camera just has none).
 *
 * Recognition (--load) costs one alignment, embedding and search per recognised face, whatever the frame
 * rate: a track is recognised when it is confirmed, again every K frames while it is matched to a
 * detection, and at once when its face is 1.5 times better (detector score × box area) than the best it
 * had. Each recognition at or above the threshold is a vote for its person; the track's name is the
 * person with the most votes (ties: the higher best cosine), unknown while no recognition reached the
 * threshold. So a name sticks to the track id, one poor look does not rename it, and a face that turns
 * or comes nearer is named once its look is good enough. On the demo clip's first 50 frames: 15
 * recognitions for 5 tracks (2 ms of CPU per frame), where every tracked face of every frame is 116.
 *
 * JSON lines, one file per channel, one object per line:
 *   {"type":"frame","channel":C,"frame":F,"pts_ms":T,"count":N,"tracks":[{"id":I,"box":[x0,y0,x1,y1],"score":S}]}
 *       every processed frame: the tracks seen in it (count = how many)
 *   {"type":"enter","channel":C,"frame":F,"track":I}     a track is confirmed
 *   {"type":"leave","channel":C,"frame":F,"track":I,"frames":K}   a track ended (lost too long, or the stream
 *       ended), K frames after it entered
 *   with --load, each track record, enter and leave also holds "name":"zoe","cosine":0.912 (the track's
 *       name so far, its best cosine), or "name":null with the best cosine of any recognition (unknown),
 *       or "name":null,"cosine":null before its first recognition; leave's is the track's final name
 *   {"type":"health","channel":C,"seconds":T,"fps":R,"decoded":D,"processed":P,"dropped":X,"reconnects":R,
 *    "reconnect_attempts":A,"state":"running|reconnecting|stopped|ended","error":"..."}   every second and at
 *       the end: fps over the last interval; dropped = frames the queue dropped plus those VDEC dropped
 *
 * Models: BlazeFace full-range (MediaPipe's face_detection_full_range.tflite, 192×192, 2304 anchors) or the
 * short-range 256/128 models (896 anchors), told apart by their input size, converted with kes-convert
 * --insert-op-conf aipp_rgb_centered.cfg (the model consumes NV12, as on a board) and --dynamic-batch 1,2,4,8
 * (the batches the detector runs; one gear of 1 works too, more slowly).
 *
 * Exit status: 0 when every channel finished, 1 when one failed (the others still run to their end; the
 * failure is printed and in its JSON lines), 2 for usage. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "face_embed.h"
#include "face_names.h"
#include "kestrel/kestrel.h"

#define MAX_CHANNELS 32 /* the 310's VDEC channel limit */
#define QUEUE_DEPTH 2   /* frames waiting per channel: enough to decode while the detector runs */
#define MAX_BATCH 16
#define MAX_ANCHORS 2304 /* full-range: 48×48 */
#define MAX_FACES 64
#define MAX_TRACKS 64    /* per channel, with trails */
#define TRAIL 24         /* centre points kept per track */
#define MAX_CANDIDATES 4 /* people a track's recognitions voted for, kept per track */
/* A face recognised again before its K frames are up when it is this much better (score × box area) than
 * the best one recognised so far: a face that comes nearer, or turns to the camera, gets its better look. */
#define BETTER_FACE 1.5f

static int fail(const char* what) {
    fprintf(stderr, "video-analytics: %s: %s: %s\n", what, kes_status_str(kes_last_status()), kes_last_error());
    return 1;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double thread_cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct options {
    const char* detector;
    const char* inputs[MAX_CHANNELS];
    int count;
    const char* out_dir;
    int loop, realtime, video;
    unsigned long max_frames, duration_s, batch, threads, reconnect_attempts, timeout_ms;
    float detect_threshold;
    /* recognition: the people of a face-search database (--load), the embedder that made it */
    const char *database, *embedder;
    float threshold;
    unsigned long recognise_every;
} options;

/* ---- channels: one decoder thread each, feeding a bounded queue ------------------------------------ */

typedef struct queued {
    kes_vdec_frame frame;
    uint64_t seq; /* the channel's frame number, across loops */
} queued;

/* The recognitions of one track that named a person (cosine at or above the threshold). */
typedef struct vote {
    int64_t person;
    unsigned votes;
    float best; /* the best cosine among them */
} vote;

typedef struct trail {
    uint64_t id;
    uint64_t entered; /* frame of the enter event */
    int32_t x[TRAIL], y[TRAIL];
    unsigned n;
    int present; /* in this frame's tracker output */
    /* recognition (--load): when, how good the best face was, and the votes that name the track */
    unsigned recognitions;
    uint64_t recognised_at; /* frame of the last one */
    float best_face;        /* score × box area of the best face recognised */
    float best_cosine;      /* the best cosine of any recognition, named or not */
    vote votes[MAX_CANDIDATES];
    int64_t person; /* the track's name: the person with the most votes (ties: the best cosine), -1 unknown */
    float cosine;   /* that person's best cosine */
} trail;

typedef struct channel {
    int index;
    const char* source;
    int live;       /* drop the oldest frame rather than wait */
    kes_vdec* vdec; /* swapped under the lock when a file loops */
    kes_vdec_stream_info info;
    pthread_t thread;
    queued queue[QUEUE_DEPTH]; /* under the pipeline's lock */
    unsigned head, queued_count;
    int finished; /* the decoder thread is done */
    int failed;
    char error[512];
    uint64_t delivered, processed, processed_at_last_health;
    uint64_t drops; /* the queue's oldest frames dropped, and with --realtime frames decoded after their time */
    double cpu_decode_s;
    /* the detector thread's */
    kes_tracker* tracker;
    kes_venc* venc;
    FILE* events;
    char mp4_path[4096], jsonl_path[4096];
    trail trails[MAX_TRACKS];
    uint64_t tracks_entered;
    uint64_t next_seq; /* after the last frame processed: where the tracks still open leave at the end */
} channel;

typedef struct pipeline {
    const options* o;
    kes_mem_pool* pool;
    kes_dvpp_channel* vpc;
    pthread_mutex_t lock;
    pthread_cond_t changed; /* a frame queued, a slot freed, a channel finished, stop */
    int stop;
    channel ch[MAX_CHANNELS];
    int count;
    /* the detector */
    kes_model* model;
    kes_model_context* ctx;
    int64_t gears[8];
    size_t gear_count;
    kes_tensor out[8][4];                                    /* per gear, the model's outputs */
    size_t score_out[2], box_out[2], head_anchors[2], heads; /* output index and anchors of each head */
    uint32_t side;                                           /* the input's side: 192, 256 or 128 */
    kes_anchor anchors[MAX_ANCHORS];
    size_t anchor_count;
    kes_detect_decode_config decode_cfg;
    kes_detect_nms_config nms_cfg;
    kes_detection dets[MAX_ANCHORS];
    void* nms_scratch;
    size_t nms_scratch_size;
    double cpu_detect_s, cpu_track_s, cpu_draw_s, cpu_encode_s;
    uint64_t batches, batched_frames;
    /* recognition (--load): the detector thread's */
    int recognise;
    face_embedder emb;
    face_db db;
    float embedding[FACE_EMBED_MAX_DIM];
    double cpu_recognise_s;
    uint64_t recognitions;
} pipeline;

static volatile sig_atomic_t g_interrupted = 0;
static void on_interrupt(int sig) {
    (void)sig;
    g_interrupted = 1;
}

static kes_status open_source(channel* c, const options* o, kes_mem_pool* pool, kes_vdec** out) {
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.source = c->source;
    cfg.pool = pool;
    cfg.threads = 1; /* many channels share the cores: one thread each decodes them all best */
    cfg.timeout_ms = (uint32_t)o->timeout_ms;
    cfg.reconnect_max_attempts = (uint32_t)o->reconnect_attempts;
    return kes_vdec_create(&cfg, out);
}

static void channel_error(pipeline* p, channel* c, const char* what) {
    pthread_mutex_lock(&p->lock);
    snprintf(c->error, sizeof c->error, "%s: %s: %s", what, kes_status_str(kes_last_status()), kes_last_error());
    c->failed = 1;
    pthread_mutex_unlock(&p->lock);
}

/* Queues a frame; the caller holds the lock. A live channel drops its oldest frame when the queue is
 * full; a file waits for the detector. Returns 0 when stopped (the frame is released). */
static int enqueue(pipeline* p, channel* c, const kes_vdec_frame* f, uint64_t seq) {
    while (!c->live && c->queued_count == QUEUE_DEPTH && !p->stop) pthread_cond_wait(&p->changed, &p->lock);
    if (p->stop) return 0;
    if (c->queued_count == QUEUE_DEPTH) {
        kes_image_release(&c->queue[c->head].frame.image);
        c->head = (c->head + 1) % QUEUE_DEPTH;
        c->queued_count--;
        c->drops++;
    }
    queued* q = &c->queue[(c->head + c->queued_count) % QUEUE_DEPTH];
    q->frame = *f;
    q->seq = seq;
    c->queued_count++;
    pthread_cond_broadcast(&p->changed);
    return 1;
}

typedef struct decoder_arg {
    pipeline* p;
    channel* c;
} decoder_arg;

static void* decoder_main(void* arg) {
    pipeline* p = ((decoder_arg*)arg)->p;
    channel* c = ((decoder_arg*)arg)->c;
    free(arg);
    const options* o = p->o;
    const double fps = c->info.fps_num && c->info.fps_den ? (double)c->info.fps_num / c->info.fps_den : 25.0;
    const double start = now_s();
    uint64_t seq = 0;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        const int stop = p->stop;
        pthread_mutex_unlock(&p->lock);
        if (stop || (o->max_frames && seq >= o->max_frames)) break;
        kes_vdec_frame f;
        const double cpu0 = thread_cpu_s();
        kes_status st = kes_vdec_read_frame(c->vdec, &f);
        c->cpu_decode_s += thread_cpu_s() - cpu0;
        if (st == KES_ERR_TIMEOUT) continue; /* a camera reconnecting: its health says so */
        if (st != KES_OK) {
            channel_error(p, c, c->source);
            break;
        }
        if (f.end_of_stream) {
            if (!o->loop || strstr(c->source, "://")) break;
            kes_vdec* again = NULL;
            if (open_source(c, o, p->pool, &again) != KES_OK) {
                channel_error(p, c, c->source);
                break;
            }
            pthread_mutex_lock(&p->lock);
            kes_vdec* old = c->vdec;
            c->vdec = again;
            pthread_mutex_unlock(&p->lock);
            kes_vdec_destroy(old);
            continue;
        }
        if (o->realtime) { /* a file played as a camera would send it */
            const double due = start + (double)seq / fps - now_s();
            if (due < -1.0 / fps) { /* decoded after its time: a camera's frame would be gone by now */
                kes_image_release(&f.image);
                pthread_mutex_lock(&p->lock);
                c->drops++;
                pthread_mutex_unlock(&p->lock);
                seq++;
                continue;
            }
            if (due > 0) {
                const struct timespec ts = {(time_t)due, (long)((due - (double)(time_t)due) * 1e9)};
                nanosleep(&ts, NULL);
            }
        }
        pthread_mutex_lock(&p->lock);
        c->delivered++;
        const int queued_ok = enqueue(p, c, &f, seq++);
        pthread_mutex_unlock(&p->lock);
        if (!queued_ok) {
            kes_image_release(&f.image);
            break;
        }
    }
    pthread_mutex_lock(&p->lock);
    c->finished = 1;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* ---- the detector: BlazeFace over a batch of frames from different channels ------------------------ */

/* Each head is a score output of `anchors` floats and a box output of anchors × 16 floats per image. */
static int detector_open(pipeline* p) {
    const options* o = p->o;
    if (kes_model_load_from_file(o->detector, KES_MODEL_LOAD_MMAP, &p->model) != KES_OK) return fail(o->detector);
    const char* aipp = NULL;
    if (kes_model_input_aipp(p->model, 0, &aipp) != KES_OK) return fail("input AIPP");
    if (!aipp) {
        fprintf(stderr,
                "video-analytics: %s: the detector has no AIPP: convert it with kes-convert --insert-op-conf "
                "aipp_rgb_centered.cfg (it then consumes the decoder's NV12 frames)\n",
                o->detector);
        return 1;
    }
    kes_model_context_config cc;
    kes_model_context_config_init(&cc);
    cc.threads = (uint32_t)o->threads;
    if (kes_model_context_create_with_config(p->model, NULL, 0, &cc, &p->ctx) != KES_OK) return fail("model context");
    kes_model_batch_gears(p->model, p->gears, 8, &p->gear_count);
    if (p->gear_count == 0) { /* a fixed batch: it must be 1 */
        p->gears[0] = 1;
        p->gear_count = 1;
    }
    kes_tensor desc;
    size_t outputs = 0;
    kes_model_output_count(p->model, &outputs);
    for (size_t g = 0; g < p->gear_count; ++g) {
        if (p->gear_count > 1 && kes_model_context_set_batch(p->ctx, p->gears[g]) != KES_OK) return fail("batch gear");
        if (kes_model_context_input_desc(p->ctx, 0, &desc) != KES_OK) return fail("input description");
        if (g == 0 && desc.ndim == 4) {
            const int nhwc = desc.layout == KES_LAYOUT_NHWC;
            p->side = (uint32_t)desc.shape[nhwc ? 1 : 2];
            if (desc.shape[nhwc ? 2 : 3] != p->side) p->side = 0;
        }
        if (desc.shape[0] != p->gears[g]) {
            fprintf(stderr, "video-analytics: %s: batch %lld, not one image per batch item\n", o->detector,
                    (long long)desc.shape[0]);
            return 1;
        }
        if (outputs != 2 && outputs != 4) break;
        for (size_t i = 0; i < outputs; ++i) {
            if (kes_model_context_output_desc(p->ctx, i, &desc) != KES_OK) return fail("output description");
            if (kes_tensor_alloc(&p->out[g][i], p->pool, desc.dtype, desc.layout, desc.ndim, desc.shape) != KES_OK)
                return fail("output tensor");
        }
    }
    /* Full-range: outputs boxes [N,2304,16] and scores [N,2304,1] (in either order); short-range: scores
     * [N,512,1], [N,384,1], boxes [N,512,16], [N,384,16]. */
    if (p->side == 192 && outputs == 2) {
        const int boxes_first = p->out[0][0].shape[p->out[0][0].ndim - 1] == 16;
        p->heads = 1;
        p->box_out[0] = boxes_first ? 0 : 1;
        p->score_out[0] = boxes_first ? 1 : 0;
        p->head_anchors[0] = 2304;
    } else if ((p->side == 256 || p->side == 128) && outputs == 4) {
        p->heads = 2;
        p->score_out[0] = 0, p->score_out[1] = 1, p->box_out[0] = 2, p->box_out[1] = 3;
        p->head_anchors[0] = 512, p->head_anchors[1] = 384;
    } else {
        p->heads = 0;
    }
    for (size_t h = 0; h < p->heads; ++h) {
        const kes_tensor* s = &p->out[0][p->score_out[h]];
        const kes_tensor* b = &p->out[0][p->box_out[h]];
        if (s->ndim != 3 || b->ndim != 3 || s->shape[1] != (int64_t)p->head_anchors[h] || s->shape[2] != 1 ||
            b->shape[1] != (int64_t)p->head_anchors[h] || b->shape[2] != 16 || s->dtype != KES_F32 ||
            b->dtype != KES_F32)
            p->heads = 0;
    }
    if (p->heads == 0) {
        fprintf(stderr,
                "video-analytics: %s: not BlazeFace (want a 192x192 full-range model with 2304 anchors, or a "
                "256x256 / 128x128 short-range one with 896)\n",
                o->detector);
        return 1;
    }
    static const uint32_t strides_192[1] = {4}, strides_256[4] = {16, 32, 32, 32}, strides_128[4] = {8, 16, 16, 16};
    kes_detect_anchor_config ac;
    kes_detect_anchor_config_init(&ac);
    ac.input_width = ac.input_height = p->side;
    ac.num_layers = p->side == 192 ? 1 : 4;
    ac.strides = p->side == 192 ? strides_192 : p->side == 256 ? strides_256 : strides_128;
    ac.min_scale = p->side == 256 ? 0.15625f : 0.1484375f;
    ac.max_scale = 0.75f;
    ac.fixed_anchor_size = 1;                                      /* BlazeFace's regressors carry the size */
    if (p->side == 192) ac.interpolated_scale_aspect_ratio = 0.0f; /* one anchor per 4×4 cell */
    if (kes_detect_anchors_generate(&ac, p->anchors, MAX_ANCHORS, &p->anchor_count) != KES_OK)
        return fail("BlazeFace anchors");
    kes_detect_decode_config_init(&p->decode_cfg); /* sigmoid scores, centre-size boxes, x before y */
    p->decode_cfg.score_threshold = o->detect_threshold;
    p->decode_cfg.x_scale = p->decode_cfg.y_scale = p->decode_cfg.w_scale = p->decode_cfg.h_scale = (float)p->side;
    p->decode_cfg.num_keypoints = 6;
    kes_detect_nms_config_init(&p->nms_cfg);
    p->nms_cfg.mode = KES_DETECT_NMS_WEIGHTED; /* MediaPipe's, steadier boxes for the tracker */
    p->nms_cfg.iou_threshold = 0.3f;
    p->nms_cfg.max_detections = MAX_FACES;
    if (kes_detect_nms_scratch_size(MAX_ANCHORS, &p->nms_scratch_size) != KES_OK) return fail("NMS scratch");
    if (!(p->nms_scratch = malloc(p->nms_scratch_size))) return fail("NMS scratch");
    return 0;
}

/* The smallest gear that holds n frames (n ≤ the largest). */
static size_t gear_for(const pipeline* p, size_t n) {
    size_t best = p->gear_count - 1;
    for (size_t g = 0; g < p->gear_count; ++g)
        if (p->gears[g] >= (int64_t)n && p->gears[g] < p->gears[best]) best = g;
    return best;
}

/* Faces of frames[0..n) in each frame's pixels: faces[i][0..found[i]). */
static int detect_batch(pipeline* p, queued* const* frames, size_t n, kes_detection (*faces)[MAX_FACES],
                        size_t* found) {
    const size_t g = gear_for(p, n);
    const size_t batch = (size_t)p->gears[g];
    kes_image boxed[MAX_BATCH];
    kes_vpc_roi paste[MAX_BATCH];
    size_t made = 0;
    int rc = 0;
    for (; made < n; ++made)
        if (kes_vpc_letterbox(p->vpc, &frames[made]->frame.image, NULL, p->side, p->side, NULL, NULL, &boxed[made],
                              &paste[made]) != KES_OK) {
            rc = fail("VPC letterbox");
            break;
        }
    /* A gear larger than the batch is padded with the last frame again (its results are not read). */
    for (size_t i = n; !rc && i < batch; ++i) boxed[i] = boxed[n - 1];
    if (!rc && p->gear_count > 1 && kes_model_context_set_batch(p->ctx, (int64_t)batch) != KES_OK)
        rc = fail("batch gear");
    size_t outputs = 0;
    kes_model_output_count(p->model, &outputs);
    const kes_model_input in = {NULL, boxed, (uint32_t)batch};
    if (!rc && kes_model_execute_images(p->ctx, &in, 1, p->out[g], outputs) != KES_OK) rc = fail("BlazeFace");
    for (size_t i = 0; !rc && i < n; ++i) {
        kes_detect_head heads[2];
        for (size_t h = 0; h < p->heads; ++h) {
            heads[h].scores = (const float*)p->out[g][p->score_out[h]].data + i * p->head_anchors[h];
            heads[h].boxes = (const float*)p->out[g][p->box_out[h]].data + i * p->head_anchors[h] * 16;
            heads[h].count = p->head_anchors[h];
        }
        size_t decoded = 0, kept = 0;
        if (kes_detect_decode(&p->decode_cfg, heads, p->heads, p->anchors, p->anchor_count, p->dets, MAX_ANCHORS,
                              &decoded) != KES_OK)
            rc = fail("BlazeFace decode");
        else if (kes_detect_nms(&p->nms_cfg, p->dets, decoded, p->nms_scratch, p->nms_scratch_size, &kept) != KES_OK)
            rc = fail("NMS");
        /* The letterbox scaled both axes by paste width / even source width (see face-search). */
        const kes_image* img = &frames[i]->frame.image;
        const float paste_w = (float)(paste[i].right - paste[i].left + 1);
        const float paste_h = (float)(paste[i].bottom - paste[i].top + 1);
        const float src_w = (float)(img->width & ~1u), src_h = paste_h * src_w / paste_w;
        kes_detect_transform t;
        if (!rc && (kes_detect_transform_letterbox((float)p->side, (float)p->side, (float)paste[i].left,
                                                   (float)paste[i].top, paste_w, paste_h, src_w, src_h, &t) != KES_OK ||
                    kes_detect_transform_apply(&t, p->dets, kept) != KES_OK))
            rc = fail("letterbox transform");
        if (!rc) {
            memcpy(faces[i], p->dets, kept * sizeof(kes_detection));
            found[i] = kept;
        }
    }
    for (size_t i = 0; i < made; ++i) kes_image_release(&boxed[i]);
    return rc;
}

/* ---- per channel: tracks, events, drawing ----------------------------------------------------------- */

static trail* find_trail(channel* c, uint64_t id) {
    for (int i = 0; i < MAX_TRACKS; ++i)
        if (c->trails[i].id == id) return &c->trails[i];
    return NULL;
}

static void json_text(FILE* f, const char* s);

/* ,"name":N,"cosine":C of a track when recognition is on: the voted name (null: unknown) with its best
 * cosine, or null and the best cosine of any recognition; both null before the first. */
static void print_name(FILE* f, const pipeline* p, const trail* t) {
    if (!p->recognise) return;
    if (t->person >= 0) {
        fputs(",\"name\":\"", f);
        json_text(f, p->db.names[t->person]);
        fprintf(f, "\",\"cosine\":%.3f", t->cosine);
    } else if (t->recognitions > 0) {
        fprintf(f, ",\"name\":null,\"cosine\":%.3f", t->best_cosine);
    } else {
        fputs(",\"name\":null,\"cosine\":null", f);
    }
}

static void leave(const pipeline* p, channel* c, trail* t, uint64_t frame) {
    fprintf(c->events, "{\"type\":\"leave\",\"channel\":%d,\"frame\":%llu,\"track\":%llu,\"frames\":%llu", c->index,
            (unsigned long long)frame, (unsigned long long)t->id, (unsigned long long)(frame - t->entered));
    print_name(c->events, p, t);
    fputs("}\n", c->events);
    t->id = 0;
}

/* Adds one recognition to the track's votes and names it again: a cosine below the threshold votes for
 * nobody. With MAX_CANDIDATES people voted for already, the weakest (fewest votes, then lowest cosine)
 * makes room. */
static void vote_for(const pipeline* p, trail* t, int64_t person, float cosine) {
    t->recognitions++;
    if (t->recognitions == 1 || cosine > t->best_cosine) t->best_cosine = cosine;
    if (!face_db_name(&p->db, person, cosine, p->o->threshold)) return;
    vote* slot = NULL;
    for (int i = 0; i < MAX_CANDIDATES && !slot; ++i)
        if (t->votes[i].votes && t->votes[i].person == person) slot = &t->votes[i];
    if (!slot) {
        slot = &t->votes[0];
        for (int i = 1; i < MAX_CANDIDATES; ++i)
            if (t->votes[i].votes < slot->votes || (t->votes[i].votes == slot->votes && t->votes[i].best < slot->best))
                slot = &t->votes[i];
        *slot = (vote){person, 0, cosine};
    }
    slot->votes++;
    if (cosine > slot->best) slot->best = cosine;
    const vote* winner = NULL;
    for (int i = 0; i < MAX_CANDIDATES; ++i) {
        const vote* v = &t->votes[i];
        if (v->votes && (!winner || v->votes > winner->votes || (v->votes == winner->votes && v->best > winner->best)))
            winner = v;
    }
    t->person = winner->person;
    t->cosine = winner->best;
}

/* Recognition runs per track, not per frame, so its cost stays bounded with many streams: when the track
 * is confirmed, again every --recognise-every frames (more votes), and when its face is BETTER_FACE times
 * better than the best one recognised so far. Only a track matched to a detection in this frame has a face
 * (its keypoints) to align. Returns 0, or 1 after printing the error. */
static int recognise_track(pipeline* p, trail* t, const kes_track* track, const kes_detection* faces, const queued* q) {
    if (track->state != KES_TRACK_TRACKED || track->detection < 0) return 0;
    const kes_detection* face = &faces[track->detection];
    const float quality = face->score * (face->x1 - face->x0) * (face->y1 - face->y0);
    if (t->recognitions > 0 && q->seq - t->recognised_at < p->o->recognise_every &&
        quality <= t->best_face * BETTER_FACE)
        return 0;
    const double cpu0 = thread_cpu_s();
    int64_t person = -1;
    float cosine = 0;
    const int rc = face_identify(&p->emb, &p->db, face, &q->frame.image, p->pool, p->embedding, &person, &cosine);
    t->recognised_at = q->seq;
    if (rc > 0) {
        if (quality > t->best_face) t->best_face = quality;
        vote_for(p, t, person, cosine);
        p->recognitions++;
    }
    p->cpu_recognise_s += thread_cpu_s() - cpu0;
    return rc < 0;
}

static int track_frame(pipeline* p, channel* c, const queued* q, const kes_detection* faces, size_t found,
                       kes_track* tracks, size_t* count) {
    double cpu0 = thread_cpu_s();
    /* The tracker holds at most MAX_TRACKS tracks (tracked and lost), so every one has a trail slot. */
    if (kes_tracker_update(c->tracker, faces, found, NULL, 0, tracks, MAX_TRACKS, count) != KES_OK)
        return fail("tracker");
    /* Leave events (tracks the tracker removed), then enter events (tracks it confirmed), then the frame:
     * a reader sees each id enter before it is counted and leave after its last frame. */
    trail* trail_at[MAX_TRACKS];
    for (int i = 0; i < MAX_TRACKS; ++i) c->trails[i].present = 0;
    for (size_t i = 0; i < *count; ++i)
        if ((trail_at[i] = find_trail(c, tracks[i].id))) trail_at[i]->present = 1;
    for (int i = 0; i < MAX_TRACKS; ++i)
        if (c->trails[i].id && !c->trails[i].present) leave(p, c, &c->trails[i], q->seq);
    int entering[MAX_TRACKS] = {0};
    for (size_t i = 0; i < *count; ++i) {
        if (trail_at[i]) continue;
        if (!(trail_at[i] = find_trail(c, 0))) continue; /* never: the tracker holds at most MAX_TRACKS */
        memset(trail_at[i], 0, sizeof *trail_at[i]);
        trail_at[i]->id = tracks[i].id;
        trail_at[i]->entered = q->seq;
        trail_at[i]->person = -1;
        entering[i] = 1;
    }
    /* Recognised before the enter event is written, so that it carries the name. */
    p->cpu_track_s += thread_cpu_s() - cpu0;
    for (size_t i = 0; p->recognise && i < *count; ++i)
        if (trail_at[i] && recognise_track(p, trail_at[i], &tracks[i], faces, q)) return 1;
    cpu0 = thread_cpu_s();
    for (size_t i = 0; i < *count; ++i) {
        if (!entering[i]) continue;
        fprintf(c->events, "{\"type\":\"enter\",\"channel\":%d,\"frame\":%llu,\"track\":%llu", c->index,
                (unsigned long long)q->seq, (unsigned long long)tracks[i].id);
        print_name(c->events, p, trail_at[i]);
        fputs("}\n", c->events);
        c->tracks_entered++;
    }
    size_t visible = 0;
    const int64_t pts_ms = q->frame.pts == KES_VIDEO_NO_PTS ? -1 : q->frame.pts / 1000;
    fprintf(c->events, "{\"type\":\"frame\",\"channel\":%d,\"frame\":%llu,\"pts_ms\":%lld,\"tracks\":[", c->index,
            (unsigned long long)q->seq, (long long)pts_ms);
    for (size_t i = 0; i < *count; ++i) {
        const kes_track* t = &tracks[i];
        trail* tr = trail_at[i];
        if (t->state != KES_TRACK_TRACKED) continue; /* LOST: kept (its id stays entered), not seen */
        fprintf(c->events, "%s{\"id\":%llu,\"box\":[%.1f,%.1f,%.1f,%.1f],\"score\":%.3f", visible ? "," : "",
                (unsigned long long)t->id, t->x0, t->y0, t->x1, t->y1, t->score);
        if (tr) print_name(c->events, p, tr);
        fputc('}', c->events);
        visible++;
        if (tr) {
            memmove(tr->x + 1, tr->x, sizeof tr->x - sizeof tr->x[0]);
            memmove(tr->y + 1, tr->y, sizeof tr->y - sizeof tr->y[0]);
            tr->x[0] = (int32_t)lroundf((t->x0 + t->x1) / 2), tr->y[0] = (int32_t)lroundf((t->y0 + t->y1) / 2);
            if (tr->n < TRAIL) tr->n++;
        }
    }
    fprintf(c->events, "],\"count\":%zu}\n", visible);
    p->cpu_track_s += thread_cpu_s() - cpu0;
    return 0;
}

/* A host copy with JPEGE strides (which VENC takes too), even-sized: the canvas the boxes are drawn on. */
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

/* Ids get one of eight colours, so neighbours differ and a track keeps its colour. */
static kes_osd_color track_color(uint64_t id) {
    static const uint8_t rgb[8][3] = {{230, 25, 75},  {60, 180, 75},  {255, 225, 25}, {0, 130, 200},
                                      {245, 130, 48}, {145, 30, 180}, {70, 240, 240}, {240, 50, 230}};
    const uint8_t* c = rgb[id % 8];
    return kes_osd_color_rgb(c[0], c[1], c[2]);
}

static int draw_and_encode(pipeline* p, channel* c, const kes_image* frame, const kes_track* tracks, size_t count) {
    double cpu0 = thread_cpu_s();
    kes_image canvas;
    if (canvas_from(p, frame, &canvas)) return 1;
    kes_osd_box boxes[MAX_TRACKS];
    char labels[MAX_TRACKS][24 + NAME_BYTES];
    uint32_t n = 0;
    for (size_t i = 0; i < count; ++i) {
        const kes_track* t = &tracks[i];
        if (t->state != KES_TRACK_TRACKED) continue;
        const trail* tr = find_trail(c, t->id);
        for (unsigned k = 1; tr && k < tr->n; ++k)
            kes_osd_draw_line(&canvas, tr->x[k - 1], tr->y[k - 1], tr->x[k], tr->y[k], 2, track_color(t->id));
        /* "#id name" once recognised ("unknown" below the threshold); the OSD font draws ASCII. */
        const char* name = tr && p->recognise && tr->person >= 0 ? p->db.names[tr->person]
                           : tr && tr->recognitions              ? "unknown"
                                                                 : "";
        snprintf(labels[n], sizeof labels[n], "#%llu%s%s", (unsigned long long)t->id, *name ? " " : "", name);
        /* The filter's box may reach past the frame; the OSD takes boxes inside it. */
        const float x0 = fmaxf(t->x0, 0), y0 = fmaxf(t->y0, 0);
        const float x1 = fminf(t->x1, (float)canvas.width - 1), y1 = fminf(t->y1, (float)canvas.height - 1);
        if (x1 - x0 < 2 || y1 - y0 < 2) continue;
        boxes[n] = (kes_osd_box){(int32_t)x0,        (int32_t)y0,        (int32_t)(x1 - x0),
                                 (int32_t)(y1 - y0), track_color(t->id), labels[n]};
        n++;
    }
    int rc = kes_osd_draw_boxes(&canvas, boxes, n, NULL) != KES_OK ? fail("OSD") : 0;
    p->cpu_draw_s += thread_cpu_s() - cpu0;
    cpu0 = thread_cpu_s();
    if (!rc && !c->venc) {
        kes_venc_config vc;
        kes_venc_config_init(&vc);
        vc.path = c->mp4_path;
        vc.width = canvas.width;
        vc.height = canvas.height;
        vc.threads = 1;
        if (c->info.fps_num > 0 && c->info.fps_den > 0) vc.fps_num = c->info.fps_num, vc.fps_den = c->info.fps_den;
        if (kes_venc_create(&vc, &c->venc) != KES_OK) rc = fail(c->mp4_path);
    }
    if (!rc && kes_venc_encode_frame(c->venc, &canvas) != KES_OK) rc = fail("VENC");
    kes_image_release(&canvas);
    p->cpu_encode_s += thread_cpu_s() - cpu0;
    return rc;
}

/* ---- health --------------------------------------------------------------------------------------- */

static const char* state_name(kes_vdec_state s) {
    switch (s) {
        case KES_VDEC_STATE_RUNNING: return "running";
        case KES_VDEC_STATE_RECONNECTING: return "reconnecting";
        case KES_VDEC_STATE_STOPPED: return "stopped";
        case KES_VDEC_STATE_ENDED: return "ended";
    }
    return "unknown";
}

/* JSON string contents: quotes, backslashes and control characters escaped. */
static void json_text(FILE* f, const char* s) {
    for (; *s; ++s) {
        const unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
}

/* The caller holds the lock (the vdec is swapped under it when a file loops). */
static void report_health(channel* c, double seconds, double interval) {
    kes_vdec_health h;
    memset(&h, 0, sizeof h);
    h.struct_size = sizeof h;
    kes_vdec_get_health(c->vdec, &h);
    const double fps = interval > 0 ? (double)(c->processed - c->processed_at_last_health) / interval : 0;
    c->processed_at_last_health = c->processed;
    fprintf(c->events,
            "{\"type\":\"health\",\"channel\":%d,\"seconds\":%.2f,\"fps\":%.1f,\"decoded\":%llu,\"processed\":%llu,"
            "\"dropped\":%llu,\"reconnects\":%llu,\"reconnect_attempts\":%llu,\"state\":\"%s\",\"error\":\"",
            c->index, seconds, fps, (unsigned long long)c->delivered, (unsigned long long)c->processed,
            (unsigned long long)(c->drops + h.frames_dropped), (unsigned long long)h.reconnects,
            (unsigned long long)h.reconnect_attempts, c->failed ? "failed" : state_name(h.state));
    json_text(c->events, c->failed ? c->error : h.last_error_text);
    fprintf(c->events, "\"}\n");
    fflush(c->events);
}

/* ---- the run ---------------------------------------------------------------------------------------- */

/* out_dir/<index>_<stem><suffix>: stem = the input's file name without its extension (a URL's last part,
 * other characters than [A-Za-z0-9._-] made '_'); the index keeps one input given twice apart. */
static void output_path(const options* o, int index, const char* input, const char* suffix, char* path, size_t size) {
    const char* slash = strrchr(input, '/');
    char stem[200];
    snprintf(stem, sizeof stem, "%s", slash && slash[1] ? slash + 1 : input);
    char* dot = strrchr(stem, '.');
    if (dot && dot != stem) *dot = '\0';
    for (char* s = stem; *s; ++s)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-' ||
              *s == '_' || *s == '.'))
            *s = '_';
    snprintf(path, size, "%s/ch%d_%s%s", o->out_dir, index, stem, suffix);
}

/* Takes one frame from each channel that has one, round robin from *next, up to max frames. With none
 * queued, waits (on the lock the caller holds) up to 200 ms for one and returns 0. */
static size_t take_batch(pipeline* p, queued* taken, channel** from, size_t max, int* next) {
    size_t n = 0;
    int any_running = 0;
    for (int k = 0; k < p->count && n < max; ++k) {
        channel* c = &p->ch[(*next + k) % p->count];
        any_running |= !c->finished;
        if (c->queued_count == 0) continue;
        taken[n] = c->queue[c->head];
        from[n++] = c;
        c->head = (c->head + 1) % QUEUE_DEPTH;
        c->queued_count--;
    }
    if (n) {
        *next = (*next + 1) % p->count; /* the next batch starts one channel later: no channel always waits */
        pthread_cond_broadcast(&p->changed);
        return n;
    }
    if (any_running) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 200 * 1000 * 1000; /* wake up for the health reports */
        if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&p->changed, &p->lock, &until);
    }
    return 0;
}

static int process(pipeline* p) {
    const options* o = p->o;
    const size_t max_batch = o->batch ? o->batch : (size_t)p->gears[p->gear_count - 1];
    queued taken[MAX_BATCH];
    queued* frames[MAX_BATCH];
    channel* from[MAX_BATCH];
    static kes_detection faces[MAX_BATCH][MAX_FACES];
    size_t found[MAX_BATCH];
    kes_track tracks[MAX_TRACKS];
    int next = 0, rc = 0;
    const double start = now_s();
    double last_health = start;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        const double t = now_s();
        if (g_interrupted || (o->duration_s && t - start >= (double)o->duration_s)) p->stop = 1;
        if (p->stop) pthread_cond_broadcast(&p->changed);
        if (t - last_health >= 1.0) {
            for (int k = 0; k < p->count; ++k) report_health(&p->ch[k], t - start, t - last_health);
            last_health = t;
        }
        const size_t n = take_batch(p, taken, from, max_batch, &next);
        int all_done = 1;
        for (int k = 0; k < p->count; ++k) all_done &= p->ch[k].finished && p->ch[k].queued_count == 0;
        pthread_mutex_unlock(&p->lock);
        if (n == 0) {
            if (all_done) break;
            continue;
        }
        for (size_t i = 0; i < n; ++i) frames[i] = &taken[i];
        const double cpu0 = thread_cpu_s();
        if (!rc) rc = detect_batch(p, frames, n, faces, found);
        p->cpu_detect_s += thread_cpu_s() - cpu0;
        p->batches++;
        p->batched_frames += n;
        for (size_t i = 0; i < n; ++i) {
            channel* c = from[i];
            size_t count = 0;
            if (!rc) rc = track_frame(p, c, &taken[i], faces[i], found[i], tracks, &count);
            c->next_seq = taken[i].seq + 1;
            if (!rc && o->video) rc = draw_and_encode(p, c, &taken[i].frame.image, tracks, count);
            kes_image_release(&taken[i].frame.image);
            pthread_mutex_lock(&p->lock);
            c->processed++;
            pthread_mutex_unlock(&p->lock);
        }
        if (rc) { /* the detector or an output broke: every channel stops */
            pthread_mutex_lock(&p->lock);
            p->stop = 1;
            pthread_cond_broadcast(&p->changed);
            pthread_mutex_unlock(&p->lock);
        }
    }
    const double wall = now_s() - start;
    pthread_mutex_lock(&p->lock);
    for (int k = 0; k < p->count; ++k) {
        channel* c = &p->ch[k];
        for (int i = 0; i < MAX_TRACKS; ++i)
            if (c->trails[i].id) leave(p, c, &c->trails[i], c->next_seq);
        report_health(c, wall, wall - (last_health - start));
    }
    pthread_mutex_unlock(&p->lock);
    return rc;
}

static int run(const options* o) {
    pipeline* p = calloc(1, sizeof *p);
    if (!p) return fail("pipeline");
    p->o = o;
    p->count = o->count;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->changed, NULL);
    int rc = 0;
    kes_mem_pool_config pool_cfg;
    kes_mem_pool_config_init(&pool_cfg);
    pool_cfg.initial_bytes = 64u << 20;
    pool_cfg.grow_bytes = 64u << 20;
    pool_cfg.name = "video-analytics";
    kes_dvpp_channel_config vpc_cfg;
    kes_dvpp_channel_config_init(&vpc_cfg);
    if (kes_mem_pool_create(&pool_cfg, &p->pool) != KES_OK)
        rc = fail("pool");
    else if ((vpc_cfg.pool = p->pool), kes_dvpp_channel_create(&vpc_cfg, &p->vpc) != KES_OK)
        rc = fail("DVPP channel");
    if (!rc) rc = detector_open(p);
    /* Recognition: the embedder that made the database (its size is checked against it) and the people. */
    if (!rc && o->database) {
        p->recognise = 1;
        rc = face_embedder_open(&p->emb, "video-analytics", o->embedder, p->pool) ||
             face_db_create(&p->db, "video-analytics", p->emb.dim) || face_db_load(&p->db, o->database);
        if (!rc && p->db.count == 0)
            fprintf(stderr, "video-analytics: %s holds nobody: every face is unknown\n", o->database);
    }
    kes_tracker_config tc;
    kes_tracker_config_init(&tc);
    tc.report = KES_TRACK_REPORT_TRACKED | KES_TRACK_REPORT_LOST;
    tc.max_tracks = MAX_TRACKS;
    if (!rc && mkdir(o->out_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "video-analytics: %s: %s\n", o->out_dir, strerror(errno));
        rc = 1;
    }
    /* Every source is opened before any thread starts: a bad input fails the run at once, clearly. */
    for (int k = 0; !rc && k < p->count; ++k) {
        channel* c = &p->ch[k];
        c->index = k;
        c->source = o->inputs[k];
        c->live = o->realtime || strstr(c->source, "://") != NULL;
        c->info.struct_size = sizeof c->info;
        output_path(o, k, c->source, "_annotated.mp4", c->mp4_path, sizeof c->mp4_path);
        output_path(o, k, c->source, ".jsonl", c->jsonl_path, sizeof c->jsonl_path);
        char what[4200];
        snprintf(what, sizeof what, "channel %d (%s)", k, c->source);
        if (open_source(c, o, p->pool, &c->vdec) != KES_OK || kes_vdec_get_stream_info(c->vdec, &c->info) != KES_OK)
            rc = fail(what);
        else if (kes_tracker_create(&tc, &c->tracker) != KES_OK)
            rc = fail("tracker");
        else if (!(c->events = fopen(c->jsonl_path, "w"))) {
            fprintf(stderr, "video-analytics: %s: %s\n", c->jsonl_path, strerror(errno));
            rc = 1;
        } else {
            printf("channel %d: %s, %ux%u\n", k, c->source, c->info.width, c->info.height);
        }
    }
    int started = 0;
    for (; !rc && started < p->count; ++started) {
        decoder_arg* a = malloc(sizeof *a);
        if (!a || (a->p = p, a->c = &p->ch[started], pthread_create(&p->ch[started].thread, NULL, decoder_main, a))) {
            free(a);
            rc = fail("decoder thread");
            break;
        }
    }
    fflush(stdout);
    void (*previous)(int) = signal(SIGINT, on_interrupt);
    const double start = now_s();
    if (!rc) rc = process(p);
    const double wall = now_s() - start;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    for (int k = 0; k < started; ++k) pthread_join(p->ch[k].thread, NULL);
    signal(SIGINT, previous);
    double cpu_decode = 0;
    uint64_t frames = 0, decoded = 0, tracks = 0;
    for (int k = 0; k < p->count; ++k) {
        channel* c = &p->ch[k];
        for (unsigned i = 0; i < c->queued_count; ++i)
            kes_image_release(&c->queue[(c->head + i) % QUEUE_DEPTH].frame.image);
        if (c->venc && kes_venc_finish(c->venc) != KES_OK && !rc) rc = fail(c->mp4_path);
        cpu_decode += c->cpu_decode_s;
        frames += c->processed;
        tracks += c->tracks_entered;
        decoded += c->delivered;
        if (c->events && started) {
            printf("channel %d: %llu frames, %llu tracks, %llu dropped%s%s\n", k, (unsigned long long)c->processed,
                   (unsigned long long)c->tracks_entered, (unsigned long long)c->drops, c->failed ? ", failed: " : "",
                   c->failed ? c->error : "");
            if (c->venc) {
                uint64_t written = 0, bytes = 0;
                kes_venc_get_counts(c->venc, &written, &bytes);
                printf("wrote %s (%llu frames)\n", c->mp4_path, (unsigned long long)written);
            }
            printf("wrote %s\n", c->jsonl_path);
        }
        if (c->failed) rc = rc ? rc : 1;
        kes_venc_destroy(c->venc);
        kes_vdec_destroy(c->vdec);
        kes_tracker_destroy(c->tracker);
        if (c->events && fclose(c->events) != 0 && !rc) rc = fail(c->jsonl_path);
    }
    if (started) {
        const double per = frames ? 1e3 / (double)frames : 0;
        fprintf(
            stderr,
            "video-analytics: %llu frames from %d channels in %.2f s (%.1f fps); %llu detector runs (%.2f frames "
            "each)\n  CPU ms per frame: decode %.2f (per frame decoded: dropped ones were decoded too), detect %.2f, "
            "track %.3f, draw %.2f, encode %.2f\n",
            (unsigned long long)frames, p->count, wall, wall > 0 ? (double)frames / wall : 0,
            (unsigned long long)p->batches, p->batches ? (double)p->batched_frames / (double)p->batches : 0,
            decoded ? cpu_decode * 1e3 / (double)decoded : 0, p->cpu_detect_s * per, p->cpu_track_s * per,
            p->cpu_draw_s * per, p->cpu_encode_s * per);
        if (p->recognise)
            fprintf(stderr, "  recognition: %llu faces embedded and searched (%.2f per track), CPU ms per frame %.2f\n",
                    (unsigned long long)p->recognitions, tracks ? (double)p->recognitions / (double)tracks : 0,
                    p->cpu_recognise_s * per);
    }
    for (size_t g = 0; g < p->gear_count; ++g)
        for (size_t i = 0; i < 2 * p->heads; ++i) kes_tensor_release(&p->out[g][i]);
    free(p->nms_scratch);
    face_db_destroy(&p->db);
    face_embedder_close(&p->emb);
    kes_model_context_destroy(p->ctx);
    kes_model_unload(p->model);
    kes_dvpp_channel_destroy(p->vpc);
    kes_mem_pool_destroy(p->pool);
    pthread_cond_destroy(&p->changed);
    pthread_mutex_destroy(&p->lock);
    free(p);
    return rc;
}

/* ---- command line ------------------------------------------------------------------------------------ */

static const char kUsage[] =
    "usage: video-analytics DETECTOR.kom [options] INPUT...   (a video file or rtsp://URL each, up to 32)\n"
    "  --out DIR               where the annotated MP4s and JSON lines go (default: .)\n"
    "  --loop                  play files again when they end\n"
    "  --realtime              read files at their frame rate; drop frames when behind (as a camera)\n"
    "  --max-frames N          stop each channel after N frames\n"
    "  --duration S            stop every channel after S seconds\n"
    "  --detect-threshold S    BlazeFace score from which a box is a face (default 0.5)\n"
    "  --batch N               frames per detector run, at most (default: the model's largest gear)\n"
    "  --threads N             the detector's threads (default: all)\n"
    "  --reconnect-attempts N  a camera gives up after N failed reconnects in a row (default 0: never)\n"
    "  --timeout-ms N          a camera's open and read timeout (default 5000)\n"
    "  --no-video              JSON lines only\n"
    "  --load DB               name the faces: the people of a face-search database (DB and DB.names, made\n"
    "                          with face-search --save); needs --embedder\n"
    "  --embedder MODEL.kom    the embedder that made DB (MobileFaceNet, converted as face-search's)\n"
    "  --threshold T           cosine from which a face gets a name (default 0.65, face-search's)\n"
    "  --recognise-every K     recognise a track again every K frames (default 10; and when its face gets\n"
    "                          better); it is named by the majority of its recognitions\n";

static int usage_error(const char* message, const char* arg) {
    fprintf(stderr, "video-analytics: %s%s%s\n%s", message, arg ? ": " : "", arg ? arg : "", kUsage);
    return 2;
}

/* A typo must not become 0 ("--max-frames abc" is not "no limit"). */
static int parse_count(const char* arg, unsigned long min, unsigned long max, unsigned long* out) {
    char* end = NULL;
    errno = 0;
    const unsigned long v = strtoul(arg, &end, 10);
    if (errno || end == arg || *end || arg[0] == '-' || v < min || v > max) return 0;
    *out = v;
    return 1;
}

static int parse_args(int argc, char** argv, options* o) {
    memset(o, 0, sizeof *o);
    o->out_dir = ".";
    o->video = 1;
    o->detect_threshold = 0.5f;
    o->timeout_ms = 5000;
    o->threshold = 0.65f;
    o->recognise_every = 10;
    static const struct {
        const char* name;
        unsigned long min, max;
        size_t offset;
    } counts[] = {{"--max-frames", 1, 1000000000ul, offsetof(options, max_frames)},
                  {"--duration", 1, 86400, offsetof(options, duration_s)},
                  {"--batch", 1, MAX_BATCH, offsetof(options, batch)},
                  {"--threads", 1, KES_MODEL_MAX_THREADS, offsetof(options, threads)},
                  {"--reconnect-attempts", 0, 1000000, offsetof(options, reconnect_attempts)},
                  {"--timeout-ms", 100, 600000, offsetof(options, timeout_ms)},
                  {"--recognise-every", 1, 1000000, offsetof(options, recognise_every)}};
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(kUsage, stdout);
            return 0;
        }
        if (!strcmp(a, "--loop")) {
            o->loop = 1;
            continue;
        }
        if (!strcmp(a, "--realtime")) {
            o->realtime = 1;
            continue;
        }
        if (!strcmp(a, "--no-video")) {
            o->video = 0;
            continue;
        }
        int matched = 0;
        for (size_t k = 0; k < sizeof counts / sizeof counts[0]; ++k) {
            if (strcmp(a, counts[k].name)) continue;
            matched = 1;
            if (i + 1 >= argc) return usage_error("missing value", a);
            if (!parse_count(argv[++i], counts[k].min, counts[k].max, (unsigned long*)((char*)o + counts[k].offset))) {
                fprintf(stderr, "video-analytics: %s must be a whole number in %lu..%lu, not '%s'\n", a, counts[k].min,
                        counts[k].max, argv[i]);
                return 2;
            }
        }
        if (matched) continue;
        const char** path = !strcmp(a, "--out")        ? &o->out_dir
                            : !strcmp(a, "--load")     ? &o->database
                            : !strcmp(a, "--embedder") ? &o->embedder
                                                       : NULL;
        if (path) {
            if (i + 1 >= argc) return usage_error("missing value", a);
            *path = argv[++i];
            continue;
        }
        if (!strcmp(a, "--detect-threshold") || !strcmp(a, "--threshold")) {
            if (i + 1 >= argc) return usage_error("missing value", a);
            const char* v = argv[++i];
            char* end = NULL;
            const float s = strtof(v, &end);
            /* A detector's score is a probability; a cosine is at most 1 (a threshold of 1 names only an
             * identical face, one of 0 or less names every face). */
            const int detect = a[2] == 'd';
            if (end == v || *end || !(detect ? s > 0.0f && s < 1.0f : s > -1.0f && s <= 1.0f)) {
                fprintf(stderr, "video-analytics: %s must be %s, not '%s'\n", a,
                        detect ? "a score between 0 and 1" : "a cosine in (-1, 1]", v);
                return 2;
            }
            *(detect ? &o->detect_threshold : &o->threshold) = s;
            continue;
        }
        if (a[0] == '-' && a[1] == '-') return usage_error("unknown option", a);
        if (!o->detector) {
            o->detector = a;
        } else {
            if (o->count == MAX_CHANNELS) return usage_error("more than 32 inputs (the VDEC channel limit)", a);
            o->inputs[o->count++] = a;
        }
    }
    if (!o->detector || o->count == 0) return usage_error("a detector model and at least one input are needed", NULL);
    if (!o->database != !o->embedder)
        return usage_error(o->database ? "--load needs --embedder (the model that made the database)"
                                       : "--embedder needs --load (the people to recognise)",
                           NULL);
    return -1;
}

int main(int argc, char** argv) {
    options o;
    const int usage = parse_args(argc, argv, &o);
    if (usage >= 0) return usage;
    setvbuf(stdout, NULL, _IOLBF, 0); /* a line at a time into a pipe too: channels report as they go */
    return run(&o);
}
