/* track_demo_video.c — kestrel/track.h on real detections: BlazeFace over every frame of the face-search
 * demo video (samples/face-search/make_demo_data.sh), each frame's faces into one tracker, and the check
 * that the same person keeps one id while visible. Public API only, as an app writes it.
 *
 * Ground truth without labels: the video is three still photos (3, 1 and 6) under ffmpeg's zoompan, whose
 * crop window is a known function of the frame number (make_demo_data.sh's expressions). Mapping a face
 * found in frame k back through frame k's window puts it where it is in the photo, where a person does
 * not move: detections that land on the same spot of the same photo are one person.
 *
 * Two trackers see the same detections: one by IoU alone, one also given each face's MobileFaceNet
 * embedding (a plain crop of the box, 112 × 112). For both, per person seen in 10 frames or more: every
 * track reported on it has the same id (one id while visible), no two people share an id, and it is
 * reported in at least 90 % of the frames it was detected in after the first confirm_hits − 1. With
 * embeddings, also no id crosses a cut between photos onto someone else; by IoU alone that happens (a face
 * of the next photo lands where a face of the last one was) and is printed, not failed: it is what the
 * appearance cost is for.
 *
 *   track_demo_video BLAZEFACE_256.kom MOBILEFACENET.kom DEMO.mp4 SECONDS_PER_PHOTO
 * Both models converted with --insert-op-conf aipp_rgb_centered.cfg (they take NV12 images), MobileFaceNet
 * with --dynamic-batch 1,2 (as face-search's check.sh does).
 * Exit 0: passed; 1: a check failed or a call did; 2: usage. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kestrel/kestrel.h"

#define DET_SIZE 256
#define ANCHORS 896
#define MAX_FACES 64
#define MAX_PEOPLE 64
#define MAX_IDS 1024
#define EMB_SIZE 112
#define MAX_DIM 512

enum { IOU_ONLY, WITH_EMBEDDINGS, MODES };
static const char* const kModeName[MODES] = {"IoU only", "IoU + embeddings"};

typedef struct person {
    int segment;
    float cx, cy, size;     /* in the 1280 × 960 photo the segment zooms into: the mean of its sightings */
    int sightings;          /* frames it was detected in */
    int reported[MODES];    /* of those, frames a confirmed track was reported on it */
    uint64_t ids[MODES][8]; /* distinct track ids reported on it */
    int id_count[MODES];
} person;

typedef struct mode {
    kes_tracker* tracker;
    int id_segment[MAX_IDS]; /* 1 + the segment an id was first reported in; −1 once it crossed a cut */
    int crossed;
} mode;

static int fail(const char* what) {
    fprintf(stderr, "track_demo_video: %s: %s (%s)\n", what, kes_last_error(), kes_status_str(kes_last_status()));
    return 1;
}

/* make_demo_data.sh's zoompan window for output frame `on` (0 .. n − 1) of segment `seg`: zoom z and the
 * top-left (x, y) in the 1280 × 960 picture; the frame shows 1280/z × 960/z of it at 640 × 480. */
static void window(int seg, int on, int n, double* z, double* x, double* y) {
    const double last = n - 1, iw = 1280, ih = 960;
    switch (seg) {
        case 0: /* photo 3: zoom in to 1.5x towards the upper middle */
            *z = 1 + 0.5 * on / last;
            *x = (iw - iw / *z) * 0.55;
            *y = (ih - ih / *z) * 0.2;
            break;
        case 1: /* photo 1: pan at 1.4x from the left edge to the right edge */
            *z = 1.4;
            *x = (iw - iw / *z) * on / last;
            *y = (ih - ih / *z) * 0.3;
            break;
        default: /* photo 6: zoom out from 1.5x */
            *z = 1.5 - 0.5 * on / last;
            *x = (iw - iw / *z) / 2;
            *y = (ih - ih / *z) * 0.3;
            break;
    }
    /* zoompan places its window in whole pixels */
    *x = floor(*x);
    *y = floor(*y);
}

typedef struct net {
    kes_model* model;
    kes_model_context* ctx;
    kes_tensor out[4];
    size_t outputs, elements[4];
} net;

static int net_open(net* n, const char* path, kes_mem_pool* pool) {
    if (kes_model_load_from_file(path, KES_MODEL_LOAD_MMAP, &n->model) != KES_OK) return fail(path);
    if (kes_model_context_create(n->model, NULL, 0, &n->ctx) != KES_OK) return fail("model context");
    size_t gears = 0; /* MobileFaceNet's export has batch 2: converted with batch gears, run at 1 */
    kes_model_batch_gears(n->model, NULL, 0, &gears);
    if (gears > 0 && kes_model_context_set_batch(n->ctx, 1) != KES_OK) return fail("batch gear 1");
    kes_model_output_count(n->model, &n->outputs);
    if (n->outputs > 4) n->outputs = 4;
    for (size_t i = 0; i < n->outputs; ++i) {
        kes_tensor d;
        if (kes_model_context_output_desc(n->ctx, i, &d) != KES_OK ||
            kes_tensor_alloc(&n->out[i], pool, d.dtype, d.layout, d.ndim, d.shape) != KES_OK)
            return fail("output tensor");
        n->elements[i] = 1;
        for (uint32_t k = 0; k < d.ndim; ++k) n->elements[i] *= (size_t)d.shape[k];
    }
    return 0;
}

static int net_run(net* n, const kes_image* image, const char* what) {
    const kes_model_input in = {NULL, image, 1};
    return kes_model_execute_images(n->ctx, &in, 1, n->out, n->outputs) != KES_OK ? fail(what) : 0;
}

static void net_close(net* n) {
    for (size_t i = 0; i < n->outputs; ++i) kes_tensor_release(&n->out[i]);
    kes_model_context_destroy(n->ctx);
    kes_model_unload(n->model);
}

/* The face's embedding into emb (dim floats), or zeros ("no embedding": the tracker then uses IoU alone
 * for it) when the box is too small to crop. */
static int embed(kes_dvpp_channel* ch, net* e, const kes_image* frame, const kes_detection* d, float* emb, size_t dim) {
    memset(emb, 0, dim * sizeof *emb);
    const float w = (float)frame->width, h = (float)frame->height;
    const float x0 = d->x0 < 0 ? 0 : d->x0, y0 = d->y0 < 0 ? 0 : d->y0;
    const float x1 = d->x1 > w - 1 ? w - 1 : d->x1, y1 = d->y1 > h - 1 ? h - 1 : d->y1;
    if (x1 - x0 < 16 || y1 - y0 < 16) return 0;
    kes_vpc_roi roi = {(uint32_t)x0 & ~1u, (uint32_t)y0 & ~1u, (uint32_t)x1 | 1u, (uint32_t)y1 | 1u};
    if (roi.right > frame->width - 1) roi.right = (frame->width - 1) | 1u;
    if (roi.bottom > frame->height - 1) roi.bottom = (frame->height - 1) | 1u;
    kes_image face;
    if (kes_vpc_crop_resize(ch, frame, &roi, EMB_SIZE, EMB_SIZE, KES_VPC_INTERP_BILINEAR, NULL, &face) != KES_OK)
        return fail("face crop");
    const int rc = net_run(e, &face, "MobileFaceNet");
    kes_image_release(&face);
    if (!rc) memcpy(emb, e->out[0].data, dim * sizeof *emb);
    return rc;
}

int main(int argc, char** argv) {
    if (argc != 5 || atoi(argv[4]) < 1) {
        fprintf(stderr, "usage: track_demo_video BLAZEFACE_256.kom MOBILEFACENET.kom DEMO.mp4 SECONDS_PER_PHOTO\n");
        return 2;
    }
    const int per_segment = atoi(argv[4]) * 25;
    int rc = 0;
    kes_mem_pool* pool = NULL;
    kes_dvpp_channel* ch = NULL;
    kes_vdec* vdec = NULL;
    static net det, emb;
    static mode modes[MODES];
    static kes_anchor anchors[ANCHORS];
    static kes_detection dets[ANCHORS];
    static float embeddings[MAX_FACES * MAX_DIM];
    static unsigned char nms_scratch[64 << 10];
    static person people[MAX_PEOPLE];
    int npeople = 0;

    kes_mem_pool_config pc;
    kes_mem_pool_config_init(&pc);
    pc.initial_bytes = 32u << 20;
    pc.grow_bytes = 32u << 20;
    pc.name = "track_demo_video";
    if (kes_mem_pool_create(&pc, &pool) != KES_OK) return fail("pool");
    kes_dvpp_channel_config cc;
    kes_dvpp_channel_config_init(&cc);
    cc.pool = pool;
    if (kes_dvpp_channel_create(&cc, &ch) != KES_OK) rc = fail("DVPP channel");
    if (!rc) rc = net_open(&det, argv[1], pool);
    if (!rc) rc = net_open(&emb, argv[2], pool);
    const size_t want[4] = {512, 384, 512 * 16, 384 * 16};
    for (size_t i = 0; !rc && i < 4; ++i)
        if (det.outputs != 4 || det.elements[i] != want[i]) {
            fprintf(stderr, "track_demo_video: %s is not BlazeFace 256\n", argv[1]);
            rc = 1;
        }
    const size_t dim = emb.elements[0];
    if (!rc && (emb.outputs < 1 || dim < 8 || dim > MAX_DIM)) {
        fprintf(stderr, "track_demo_video: %s gives %zu floats, not an embedding\n", argv[2], dim);
        rc = 1;
    }

    /* BlazeFace-256 as face-search runs it. */
    static const uint32_t strides[4] = {16, 32, 32, 32};
    kes_detect_anchor_config ac;
    kes_detect_anchor_config_init(&ac);
    ac.input_width = ac.input_height = DET_SIZE;
    ac.num_layers = 4;
    ac.strides = strides;
    ac.min_scale = 0.15625f;
    ac.max_scale = 0.75f;
    ac.fixed_anchor_size = 1;
    size_t na = 0;
    if (!rc && kes_detect_anchors_generate(&ac, anchors, ANCHORS, &na) != KES_OK) rc = fail("anchors");
    kes_detect_decode_config dc;
    kes_detect_decode_config_init(&dc);
    dc.score_threshold = 0.5f; /* lower than face-search's 0.75: the tracker's low-score round uses the rest */
    dc.x_scale = dc.y_scale = dc.w_scale = dc.h_scale = DET_SIZE;
    dc.num_keypoints = 6;
    kes_detect_nms_config nc;
    kes_detect_nms_config_init(&nc);
    nc.mode = KES_DETECT_NMS_WEIGHTED;
    nc.iou_threshold = 0.3f;
    nc.max_detections = MAX_FACES;
    size_t scratch_need = 0;
    kes_detect_nms_scratch_size(ANCHORS, &scratch_need);
    if (!rc && scratch_need > sizeof nms_scratch) rc = fail("NMS scratch");

    kes_tracker_config tc;
    kes_tracker_config_init(&tc); /* the defaults: ByteTrack's thresholds, confirmed after 3 frames */
    tc.high_score = 0.75f;        /* face-search's detection threshold */
    tc.new_track_score = 0.8f;
    for (int m = 0; !rc && m < MODES; ++m)
        if (kes_tracker_create(&tc, &modes[m].tracker) != KES_OK) rc = fail("tracker");

    kes_vdec_config vc;
    kes_vdec_config_init(&vc);
    vc.source = argv[3];
    vc.pool = pool;
    if (!rc && kes_vdec_create(&vc, &vdec) != KES_OK) rc = fail(argv[3]);

    int frame_no = 0, total_faces = 0;
    while (!rc) {
        kes_vdec_frame f;
        if (kes_vdec_read_frame(vdec, &f) != KES_OK) {
            rc = fail("VDEC");
            break;
        }
        if (f.end_of_stream) break;
        const int seg = frame_no / per_segment, on = frame_no % per_segment;
        kes_image boxed;
        kes_vpc_roi paste;
        size_t found = 0, kept = 0;
        if (kes_vpc_letterbox(ch, &f.image, NULL, DET_SIZE, DET_SIZE, NULL, NULL, &boxed, &paste) != KES_OK) {
            rc = fail("letterbox");
        } else {
            rc = net_run(&det, &boxed, "BlazeFace");
            kes_image_release(&boxed);
        }
        const kes_detect_head heads[2] = {{det.out[0].data, det.out[2].data, 512},
                                          {det.out[1].data, det.out[3].data, 384}};
        if (!rc && kes_detect_decode(&dc, heads, 2, anchors, ANCHORS, dets, ANCHORS, &found) != KES_OK)
            rc = fail("decode");
        if (!rc && kes_detect_nms(&nc, dets, found < ANCHORS ? found : ANCHORS, nms_scratch, sizeof nms_scratch,
                                  &kept) != KES_OK)
            rc = fail("NMS");
        const float pw = (float)(paste.right - paste.left + 1), ph = (float)(paste.bottom - paste.top + 1);
        const float sw = (float)(f.image.width & ~1u), sh = ph * sw / pw;
        kes_detect_transform t;
        if (!rc && (kes_detect_transform_letterbox(DET_SIZE, DET_SIZE, (float)paste.left, (float)paste.top, pw, ph, sw,
                                                   sh, &t) != KES_OK ||
                    kes_detect_transform_apply(&t, dets, kept) != KES_OK))
            rc = fail("transform");
        for (size_t i = 0; !rc && i < kept; ++i) rc = embed(ch, &emb, &f.image, &dets[i], embeddings + i * dim, dim);
        kes_track tracks[MODES][MAX_FACES];
        size_t ntracks[MODES] = {0, 0};
        for (int m = 0; !rc && m < MODES; ++m)
            if (kes_tracker_update(modes[m].tracker, dets, kept, m == WITH_EMBEDDINGS ? embeddings : NULL, dim,
                                   tracks[m], MAX_FACES, &ntracks[m]) != KES_OK)
                rc = fail("kes_tracker_update");
        kes_image_release(&f.image);
        if (rc) break;

        /* Each face above the tracker's high score, where it is in the photo. */
        double z, wx, wy;
        window(seg, on, per_segment, &z, &wx, &wy);
        int owner[MAX_FACES];
        for (size_t i = 0; i < kept; ++i) {
            owner[i] = -1;
            if (dets[i].score < tc.high_score) continue;
            const float cx = (float)(wx + (dets[i].x0 + dets[i].x1) / z),
                        cy = (float)(wy + (dets[i].y0 + dets[i].y1) / z);
            const float size = (float)((dets[i].x1 - dets[i].x0) * 2 / z);
            int best = -1;
            float best_d = 0;
            for (int p = 0; p < npeople; ++p) {
                if (people[p].segment != seg) continue;
                const float d = hypotf(people[p].cx - cx, people[p].cy - cy);
                if (d < 0.5f * people[p].size && (best < 0 || d < best_d)) best = p, best_d = d;
            }
            if (best < 0) {
                if (npeople == MAX_PEOPLE) continue;
                best = npeople++;
                people[best].segment = seg;
                people[best].cx = cx, people[best].cy = cy, people[best].size = size;
            } else {
                const float k = (float)people[best].sightings;
                people[best].cx = (people[best].cx * k + cx) / (k + 1);
                people[best].cy = (people[best].cy * k + cy) / (k + 1);
                people[best].size = (people[best].size * k + size) / (k + 1);
            }
            people[best].sightings++;
            owner[i] = best;
            ++total_faces;
        }
        for (int m = 0; m < MODES; ++m)
            for (size_t k = 0; k < ntracks[m] && k < MAX_FACES; ++k) {
                const kes_track* tr = &tracks[m][k];
                mode* md = &modes[m];
                if (tr->id >= MAX_IDS) continue;
                if (md->id_segment[tr->id] == 0) md->id_segment[tr->id] = seg + 1;
                if (md->id_segment[tr->id] > 0 && md->id_segment[tr->id] != seg + 1) {
                    printf("  %s, frame %d: id %llu of photo segment %d is on a face of segment %d\n", kModeName[m],
                           frame_no, (unsigned long long)tr->id, md->id_segment[tr->id] - 1, seg);
                    md->id_segment[tr->id] = -1;
                    ++md->crossed;
                }
                if (tr->detection < 0 || owner[tr->detection] < 0) continue;
                person* p = &people[owner[tr->detection]];
                p->reported[m]++;
                int known = 0;
                for (int j = 0; j < p->id_count[m]; ++j) known |= p->ids[m][j] == tr->id;
                if (!known && p->id_count[m] < 8) p->ids[m][p->id_count[m]++] = tr->id;
            }
        ++frame_no;
    }

    if (!rc) {
        printf("track_demo_video: %d frames, %d faces above %.2f\n", frame_no, total_faces, (double)tc.high_score);
        if (frame_no != 3 * per_segment) {
            printf("FAIL: the video has %d frames, not 3 × %d\n", frame_no, per_segment);
            rc = 1;
        }
        int checked = 0;
        for (int p = 0; p < npeople; ++p) {
            const person* q = &people[p];
            printf("  segment %d, person at (%4.0f, %4.0f) size %3.0f: detected in %3d frames", q->segment,
                   (double)q->cx, (double)q->cy, (double)q->size, q->sightings);
            for (int m = 0; m < MODES; ++m) {
                printf("; %s: reported in %3d, ids", kModeName[m], q->reported[m]);
                for (int j = 0; j < q->id_count[m]; ++j) printf(" %llu", (unsigned long long)q->ids[m][j]);
            }
            printf("\n");
            if (q->sightings < 10) continue; /* a passing false detection or a face at the frame's edge */
            ++checked;
            for (int m = 0; m < MODES; ++m) {
                if (q->id_count[m] != 1) {
                    printf("FAIL: %s: that person had %d ids while visible\n", kModeName[m], q->id_count[m]);
                    rc = 1;
                }
                for (int o = 0; o < p; ++o)
                    for (int a = 0; a < q->id_count[m]; ++a)
                        for (int b = 0; b < people[o].id_count[m]; ++b)
                            if (people[o].sightings >= 10 && q->ids[m][a] == people[o].ids[m][b])
                                printf("  %s: id %llu is on two people\n", kModeName[m],
                                       (unsigned long long)q->ids[m][a]);
                /* A new track is reported from its confirm_hits-th frame (ByteTrack's confirmation). */
                const int after_birth = q->sightings - (int)(tc.confirm_hits - 1);
                if (q->reported[m] < after_birth * 9 / 10) {
                    printf(
                        "FAIL: %s: reported in %d of the %d frames it was detected in after its first %u "
                        "(want 90 %%)\n",
                        kModeName[m], q->reported[m], after_birth, tc.confirm_hits - 1);
                    rc = 1;
                }
            }
        }
        printf("  ids that crossed a cut onto someone else: %d by IoU only (its known limit), %d with embeddings\n",
               modes[IOU_ONLY].crossed, modes[WITH_EMBEDDINGS].crossed);
        if (modes[WITH_EMBEDDINGS].crossed) {
            printf("FAIL: with embeddings, an id crossed a cut between photos\n");
            rc = 1;
        }
        if (checked < 8) {
            printf("FAIL: only %d people seen in 10 frames or more (the three photos have 10)\n", checked);
            rc = 1;
        }
        if (!rc) printf("track_demo_video: %d people, each kept one id while visible\n", checked);
    }

    kes_vdec_destroy(vdec);
    for (int m = 0; m < MODES; ++m) kes_tracker_destroy(modes[m].tracker);
    net_close(&emb);
    net_close(&det);
    kes_dvpp_channel_destroy(ch);
    kes_mem_pool_destroy(pool);
    return rc;
}
