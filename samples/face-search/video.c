/* video.c — a video file or an RTSP camera through the pipeline (video.h). */
#include "video.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate.h"
#include "errors.h"

volatile sig_atomic_t g_stop = 0;
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

int search_video(pipeline* p, const options* o, const char* video, float* embeddings) {
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.source = video;
    cfg.pool = p->pool;
    kes_vdec* vdec = NULL;
    kes_venc* venc = NULL;
    seen* per_person = calloc(p->db.count ? p->db.count : 1, sizeof *per_person);
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
            rc = pipeline_process_image(p, &frame.image, last, embeddings, &n);
            if (!rc) rc = pipeline_search_faces(p, embeddings, last, n);
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
        for (size_t i = 0; i < p->db.count; ++i)
            if (per_person[i].frames > 0)
                printf("  %s: in %llu searched frames, best cosine %.3f\n", p->db.names[i], per_person[i].frames,
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
