/* face-search — who is in this photo, this video, this camera? The whole Kestrel pipeline, from JPEG or
 * H.264 bytes to names drawn on the picture:
 *
 *   JPEGD / VDEC (NV12) → VPC letterbox 256×256 → BlazeFace (engine; AIPP in the model or the app's)
 *   → kestrel/detect.h: anchors, decode, NMS, back to source pixels → faces with 6 keypoints
 *   → aligned 112×112 NV12 crop → MobileFaceNet (engine) → 192-float embedding
 *   → fv: cosine top-1 over the enrolled people → name, or "unknown" below the threshold
 *   → OSD boxes and labels on the NV12 image → JPEGE (.jpg) / VENC (.mp4)
 *
 * This file is the run from start to end: read the command line (args.c), open the pipeline
 * (pipeline.c), enrol or load people (photos.c, ../common/face_names.c), search the photos (photos.c) and videos
 * (video.c), then report the timing. README.md beside it gives the order to read the other files in.
 *
 * usage: face-search DETECTOR.kom EMBEDDER.kom [options] [QUERY.jpg ...] (args.h lists the options)
 *
 * For each query photo it prints each face (box, then the name and cosine, or "unknown" and the best
 * cosine) and writes <stem>_annotated.jpg; for a video, the frames where the names on screen change,
 * a summary per person and <stem>_annotated.mp4 with every frame. The per-stage timing (decode, detect,
 * align, embed, search, draw, encode) and the FPS go to stderr at the end, so stdout holds only results
 * (the same on every backend); KES_TRACE=trace.json records the same stages as spans for Perfetto.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate.h"
#include "args.h"
#include "face_names.h"
#include "kestrel/kestrel.h"
#include "photos.h"
#include "pipeline.h"
#include "video.h"

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
    const model* models[2] = {&p->det, &p->emb.net};
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

/* Several videos are searched in turn: two that would write one annotated MP4 are refused up front.
 * Returns 0, or 2 (a usage error) after saying which. */
static int check_video_outputs(const options* o) {
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
    return 0;
}

static int run_command(pipeline* p, const command* c) {
    const options* o = &c->o;
    if (o->out_dir && !is_directory(o->out_dir)) {
        fprintf(stderr, "face-search: --out %s: not a directory\n", o->out_dir);
        return 1;
    }
    if (check_video_outputs(o)) return 2;
    if (pipeline_open(p, c->models[0], c->models[1], c->detect_threshold)) return 1;
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
    if (!rc && c->load) rc = face_db_load(&p->db, c->load);
    for (int i = 0; i < c->nenrolls && !rc; ++i)
        rc = enroll_photo(p, c->enrolls[i].name, c->enrolls[i].photo, c->enrolls[i].face, 1, embeddings, faces);
    for (int i = 0; i < c->ngalleries && !rc; ++i) rc = enroll_gallery(p, c->galleries[i], embeddings, faces);
    if (!rc && c->save) rc = face_db_save(&p->db, c->save);
    if (!rc && p->db.count == 0 && (c->nqueries > 0 || o->nvideos > 0))
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
    int rc = command_init(&c, argc) ? 1 : parse_args(argc, argv, &c);
    if (rc < 0) {
        pipeline* p = calloc(1, sizeof *p); /* zeroed: pipeline_close frees whatever pipeline_open made */
        if (p) {
            p->threshold = c.threshold;
            rc = run_command(p, &c);
            pipeline_close(p);
            free(p);
        } else {
            rc = 1;
        }
    }
    command_free(&c);
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
