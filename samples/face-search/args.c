/* args.c — the command line (args.h lists the options). Every value is checked here, before a model is
 * loaded: --threshold abc used to become 0, where every stranger matches. */
#include "args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int command_init(command* c, int argc) {
    memset(c, 0, sizeof *c);
    c->threshold = DEFAULT_THRESHOLD;
    c->o.annotate = 1;
    c->o.every = 1;
    c->detect_threshold = DEFAULT_DETECT_THRESHOLD;
    /* argc bounds every list: each argument is at most one query, --enroll or --video. */
    c->queries = calloc((size_t)argc, sizeof *c->queries);
    c->enrolls = calloc((size_t)argc, sizeof *c->enrolls);
    c->o.videos = calloc((size_t)argc, sizeof *c->o.videos);
    return c->queries && c->enrolls && c->o.videos ? 0 : 1;
}

void command_free(command* c) {
    for (int i = 0; i < c->nenrolls; ++i) free(c->enrolls[i].buffer);
    free(c->enrolls);
    free(c->queries);
    free(c->o.videos);
}

int parse_args(int argc, char** argv, command* c) {
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
