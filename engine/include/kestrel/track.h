/* kestrel/track.h — multi-object tracking across the frames of one stream (ByteTrack-style): a detector's
 * boxes (kestrel/detect.h) in, boxes with stable ids out.
 *
 * One call per frame:
 *
 *   kes_tracker_create     once per stream: a config (thresholds, ages, capacities)
 *   kes_tracker_update     per frame: this frame's detections (+ optional embeddings) → tracks
 *   kes_tracker_reset      a scene cut or a new video: forget every track (ids keep counting)
 *   kes_tracker_destroy
 *
 * What a frame does (ByteTrack, Zhang et al. 2022, with BoT-SORT's box state and appearance cost):
 *  1. Every track's Kalman filter predicts its box in this frame.
 *  2. Detections split by score: high (≥ high_score) and low (in [low_score, high_score)); detections
 *     below low_score are ignored.
 *  3. Round 1: confirmed tracks (tracked and lost) against the high detections.
 *  4. Round 2: the tracks still unmatched that were matched in the previous frame against the low
 *     detections, by IoU alone (a low score is typically an occluded or blurred object, whose embedding
 *     is unreliable; as in ByteTrack, a track already lost is not taken back by one). Low detections
 *     never start a track.
 *  5. Round 3: tentative tracks against the high detections round 1 left; a tentative track that misses
 *     a frame is removed.
 *  6. Each high detection still unmatched with score ≥ new_track_score starts a tentative track.
 *  7. A confirmed track unmatched for more than max_lost_frames consecutive frames is removed.
 * Each round is an optimal assignment (Jonker–Volgenant shortest augmenting paths on the cost matrix),
 * among pairs that pass the round's gate: of the assignments with the most pairs, the one with the lowest
 * total cost (a greedy matcher can take a pair that leaves two others unmatched).
 *
 * Cost of a (track, detection) pair: 1 − s, where s = IoU(predicted track box, detection box), in rounds
 * 1 and 3 with fuse_score multiplied by the detection's score clamped to [0, 1] (ByteTrack's default: a
 * confident detection wins a tie). With embeddings (rounds 1 and 3), when both the track and the
 * detection have one, cost = (1 − appearance_weight) · (1 − s) + appearance_weight · cosine distance
 * between the detection's embedding and the track's (an exponential moving average of its matched
 * detections' embeddings, L2-normalised: e ← momentum · e + (1 − momentum) · new). Gate: the pair is
 * refused when s < the round's threshold (match_iou, low_match_iou, tentative_match_iou) or s = 0, when
 * their cosine distance exceeds max_appearance_distance, and with per_class when the class_ids differ.
 *
 * Motion model. Each track's state is the box centre, width and height and their velocities per frame,
 * (cx, cy, w, h, vcx, vcy, vw, vh), under a constant-velocity Kalman filter (the detection measures cx,
 * cy, w, h). Width and height rather than SORT's aspect ratio (BoT-SORT's choice): with coordinates
 * normalised to a non-square image the aspect ratio means nothing, and a face turning or a person
 * bending changes one side only. The noise scales with the box, so one config suits pixels and
 * normalised coordinates alike (ByteTrack's std weights, σp = position_noise, σv = velocity_noise):
 *   process noise, per frame:  std of cx and w = σp · w, of cy and h = σp · h, of their velocities σv · w / σv · h
 *   measurement noise:         std of cx and w = σp · w, of cy and h = σp · h
 *   a new track:               std 2σp · side for the box, 10σv · side for the velocities (unknown)
 * The four coordinates never mix (F, H, Q and R are per-coordinate), so the 8 × 8 covariance is four
 * independent 2 × 2 blocks: the filter runs as four 2-state filters, the same numbers as the full one.
 * A track that was not matched in the previous frame has its size velocities zeroed before the
 * prediction (ByteTrack: a lost box keeps moving but stops growing or shrinking).
 *
 * Track life (ages in frames, i.e. update calls):
 *   TENTATIVE  born from an unmatched high detection; becomes CONFIRMED after confirm_hits consecutive
 *              matched frames (its first included), removed at its first miss. With confirm_hits = 1, and
 *              in the first update after create or reset (ByteTrack's rule: nothing to doubt it against),
 *              a track is confirmed (TRACKED) at birth.
 *   TRACKED    confirmed and matched in this frame.
 *   LOST       confirmed, not matched in this frame: kept, predicted, matched again by rounds 1 and 2 (with
 *              its id) for up to max_lost_frames frames, then removed.
 * Ids: 1, 2, 3, … in order of birth (a tentative track takes its id at birth; ids of tentative tracks
 * removed unconfirmed are not given again, so confirmed ids can have gaps). Never reused by a tracker,
 * kes_tracker_reset included (an app keying names or trails by id sees no collision); create a new
 * tracker to start again at 1.
 *
 * Capacity. max_tracks bounds the tracks a tracker holds (all states). A birth with the table full takes
 * the slot of the LOST track unmatched longest, else is dropped (the existing tracks are kept).
 * max_detections bounds the detections of one update.
 *
 * Memory. kes_tracker_create allocates the track table (and the embeddings, when config.embedding_dim is
 * set). An update grows scratch (cost matrices of tracks × detections) to the largest frame seen so far
 * and the embedding store at the first update with embeddings when embedding_dim is 0; after that
 * warm-up an update allocates nothing. The scratch is about 12 · max_tracks · n bytes for the busiest
 * frame's n detections (3 MB at the default limits), plus 4 · (max_tracks + n) · embedding_dim.
 *
 * Bad input. Every argument is checked before the tracker changes: a NaN or ±infinite coordinate, score
 * or embedding value, an inverted or empty box (x1 ≤ x0 or y1 ≤ y0), a coordinate beyond ±1e6 (not an
 * image coordinate: the filter's squares would lose their precision), more than max_detections
 * detections, or an embedding_dim other than the tracker's, is KES_ERR_INVALID_ARGUMENT naming the
 * detection (or the limit), and the tracker is as it was; *out_count is not written.
 *
 * Thread-safety: a tracker is one stream's state: calls on one tracker must not overlap (one tracker per
 * stream, updated by one thread at a time). Different trackers are independent and may be updated on
 * different threads at once.
 * Ownership: the caller owns the detections, embeddings and output array; nothing is kept after a call
 * returns (embeddings are copied into the tracks' averages).
 */
#ifndef KESTREL_TRACK_H
#define KESTREL_TRACK_H

#include "kestrel/detect.h"
#include "kestrel/status.h"

KES_BEGIN_DECLS

typedef struct kes_tracker kes_tracker; /* opaque handle */

typedef enum kes_track_state {
    KES_TRACK_TENTATIVE = 0, /* born, not yet confirm_hits frames old */
    KES_TRACK_TRACKED = 1,   /* confirmed, matched in this frame */
    KES_TRACK_LOST = 2       /* confirmed, not matched in this frame (box = the filter's prediction) */
} kes_track_state;

/* Bits of kes_tracker_config.report: which tracks an update writes out. */
#define KES_TRACK_REPORT_TENTATIVE (1u << KES_TRACK_TENTATIVE)
#define KES_TRACK_REPORT_TRACKED (1u << KES_TRACK_TRACKED)
#define KES_TRACK_REPORT_LOST (1u << KES_TRACK_LOST)
#define KES_TRACK_REPORT_ALL (KES_TRACK_REPORT_TENTATIVE | KES_TRACK_REPORT_TRACKED | KES_TRACK_REPORT_LOST)

/* Default limits (kes_tracker_config_init). */
#define KES_TRACK_DEFAULT_MAX_TRACKS 256
#define KES_TRACK_DEFAULT_MAX_DETECTIONS 1024
/* Upper bounds a config may ask for. */
#define KES_TRACK_MAX_TRACKS 65536
#define KES_TRACK_MAX_DETECTIONS 65536
#define KES_TRACK_MAX_EMBEDDING_DIM 4096

typedef struct kes_tracker_config {
    uint32_t struct_size;          /* sizeof(kes_tracker_config) (_init sets it) */
    float high_score;              /* round 1 takes detections with score ≥ this; default 0.5 */
    float low_score;               /* round 2 takes those in [low_score, high_score); default 0.1 */
    float new_track_score;         /* an unmatched high detection ≥ this starts a track; default 0.6 */
    float match_iou;               /* round 1 gate: s ≥ this (see "Cost"; ByteTrack's match_thresh 0.8 is
                                      this 0.2); default 0.2 */
    float low_match_iou;           /* round 2 gate (s = IoU); default 0.5 */
    float tentative_match_iou;     /* round 3 gate (tentative tracks); default 0.3 */
    int32_t fuse_score;            /* non-zero: rounds 1 and 3 weigh IoU by the detection's score; default 1 */
    int32_t per_class;             /* non-zero: a track matches only detections of its class_id; default 0 */
    uint32_t confirm_hits;         /* consecutive matched frames to confirm a track (≥ 1); default 3 */
    uint32_t max_lost_frames;      /* frames a confirmed track survives unmatched; default 30 */
    uint32_t max_tracks;           /* tracks held at once, 1 .. KES_TRACK_MAX_TRACKS; default 256 */
    uint32_t max_detections;       /* detections per update, 1 .. KES_TRACK_MAX_DETECTIONS; default 1024 */
    uint32_t embedding_dim;        /* floats per embedding, ≤ KES_TRACK_MAX_EMBEDDING_DIM; 0: set by the
                                      first update with embeddings; default 0 */
    float appearance_weight;       /* weight of the cosine distance in rounds 1 and 3, in [0, 1]; default 0.5 */
    float max_appearance_distance; /* gate: cosine distance ≤ this, in [0, 2]; default 0.6 */
    float embedding_momentum;      /* a track's embedding average keeps this much, in [0, 1); default 0.9 */
    float position_noise;          /* σp (see "Motion model"), in (0, 1]; default 1/20 */
    float velocity_noise;          /* σv, in (0, 1]; default 1/160 */
    uint32_t report;               /* KES_TRACK_REPORT_* bits; default TRACKED (ByteTrack's output) */
} kes_tracker_config;

KES_API void kes_tracker_config_init(kes_tracker_config* config);

/* One track after an update. */
typedef struct kes_track {
    uint64_t id; /* ≥ 1, stable for the track's life, never reused by this tracker */
    kes_track_state state;
    float x0, y0, x1, y1;       /* the filter's box: after this frame's detection when matched, else its
                                   prediction for this frame */
    float vx, vy;               /* the box centre's velocity, units per frame */
    float score;                /* score of the last detection matched */
    int32_t class_id;           /* class_id of the last detection matched */
    int32_t detection;          /* index into this update's dets of the detection matched, −1 if none */
    uint32_t hits;              /* frames matched since birth */
    uint32_t age;               /* frames since birth (0 in its birth frame) */
    uint32_t frames_since_seen; /* 0 when matched in this frame */
} kes_track;

/* Creates a tracker with no tracks. KES_ERR_INVALID_ARGUMENT names a bad config field (thresholds
 * outside [0, 1] or low_score > high_score, confirm_hits 0, limits out of range, noise ≤ 0, ...);
 * KES_ERR_OUT_OF_MEMORY. */
KES_API kes_status kes_tracker_create(const kes_tracker_config* config, kes_tracker** out_tracker);
KES_API void kes_tracker_destroy(kes_tracker* tracker); /* NULL is a no-op */

/* Advances the tracker by one frame with dets[0 .. count) (boxes in any one coordinate system, the same
 * every frame: source pixels after kes_detect_transform_apply, or normalised). embeddings: NULL, or
 * count × embedding_dim floats, row i for dets[i] (any scale: they are L2-normalised; an all-zero row
 * means "no embedding for this detection" and its pairs are costed by IoU alone). An update without
 * embeddings (embedding_dim is then ignored) associates by IoU alone and leaves the tracks' embeddings
 * as they were.
 * Writes the tracks the config's report bits select to out_tracks[0 .. min(*out_count, capacity)), by id
 * ascending; *out_count = how many there are, also when more than capacity (then out_tracks holds the
 * lowest ids and the call still returns KES_OK: the tracker advanced). capacity ≥ max_tracks never cuts.
 * out_tracks NULL with capacity 0 only counts. dets may be NULL when count is 0 (a frame with nothing
 * detected: tracks are predicted and age).
 * Errors (the tracker unchanged): KES_ERR_INVALID_ARGUMENT — see "Bad input" above;
 * KES_ERR_OUT_OF_MEMORY while growing scratch during warm-up. */
KES_API kes_status kes_tracker_update(kes_tracker* tracker, const kes_detection* dets, size_t count,
                                      const float* embeddings, size_t embedding_dim, kes_track* out_tracks,
                                      size_t capacity, size_t* out_count);

/* Forgets every track (and, when config.embedding_dim was 0, the embedding dimension), keeping the
 * scratch memory and the id counter: the next track gets the next id. */
KES_API kes_status kes_tracker_reset(kes_tracker* tracker);

/* The number of tracks the tracker holds now, in every state (≤ config.max_tracks). */
KES_API kes_status kes_tracker_track_count(const kes_tracker* tracker, size_t* out_count);

KES_END_DECLS

#endif /* KESTREL_TRACK_H */
