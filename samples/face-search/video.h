/* video.h — face-search on a video file or a live camera: VDEC frames through the same pipeline as a
 * photo, names printed when the faces on screen change, a summary per person, and every frame annotated
 * into an H.264 MP4 (VENC). Teaches reading a stream (kestrel/dvpp_video.h), searching every Nth frame,
 * and a camera that drops and comes back (VDEC reconnects it; the app only reports it). */
#ifndef FACE_SEARCH_VIDEO_H
#define FACE_SEARCH_VIDEO_H

#include <signal.h>

#include "args.h"
#include "pipeline.h"

/* Set by Ctrl-C while a video is searched: the video ends (its MP4 finished) and no other starts. */
extern volatile sig_atomic_t g_stop;

/* Searches one video or camera; embeddings: room for MAX_FACES. Returns 0 or 1. */
int search_video(pipeline* p, const options* o, const char* video, float* embeddings);

#endif /* FACE_SEARCH_VIDEO_H */
