/* args.h — face-search's command line: what each option means, its default and why, and how a typo
 * becomes a usage error (exit 2) before anything is loaded rather than a silent 0.
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
 * Names are 1..63 bytes without control characters; the OSD font draws ASCII (other characters as boxes). */
#ifndef FACE_SEARCH_ARGS_H
#define FACE_SEARCH_ARGS_H

#include <stdint.h>

#include "face_names.h"

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

/* What to do with the query photos and videos. */
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

/* One --enroll NAME=PHOTO[:FACE]. */
typedef struct enroll_spec {
    char name[NAME_BYTES];
    const char* photo; /* points into a copy the spec owns */
    char* buffer;
    long face; /* -1: the largest */
} enroll_spec;

typedef struct command {
    const char* models[2]; /* the detector, the embedder */
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

/* Fills c with the defaults and arrays for argc arguments. Returns 0, or 1 out of memory. */
int command_init(command* c, int argc);

/* Returns -1 when the command line is fine, else the exit status (0 after --help, 2 for usage, with the
 * problem and the usage on stderr). */
int parse_args(int argc, char** argv, command* c);

/* Frees what command_init and parse_args allocated. */
void command_free(command* c);

#endif /* FACE_SEARCH_ARGS_H */
