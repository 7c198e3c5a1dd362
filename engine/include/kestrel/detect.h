/* kestrel/detect.h — detector post-processing: anchor grids, box decoding, non-maximum suppression and
 * the map back to source pixels (the CPU work every detector app writes after the model runs).
 *
 * The pipeline for one image (BlazeFace, SSD, RetinaFace, YOLO-style heads alike):
 *
 *   kes_detect_anchors_generate   once: the SSD anchor grid (MediaPipe's SsdAnchorsCalculator)
 *   kes_detect_decode             scores + regressors + anchors → detections above a score threshold
 *   kes_detect_nms                greedy hard or weighted (MediaPipe's "WEIGHTED", BlazeFace's) NMS,
 *                                 in place, optionally per class
 *   kes_detect_transform_apply    model-input coordinates → source-image pixels (letterbox undone)
 *   kes_detect_align_face         a face's keypoints → the aligned 112×112 crop face embedders expect
 *   kes_detect_roi_from_detection a detection → the rotated rectangle a landmark model crops (pose, hands)
 *   kes_detect_landmarks_decode   a landmark model's output → landmarks in source pixels
 *
 * Coordinates. Anchors from kes_detect_anchors_generate are normalised to the model input ([0, 1] across
 * its width and height, MediaPipe's and TF SSD's convention). Decoding adds regressor / scale · anchor
 * size to the anchor centre, so with x_scale = y_scale = w_scale = h_scale = the input size in pixels
 * (BlazeFace, whose regressors are pixels) or the inverse variances (SSD: 10, 10, 5, 5) the detections
 * are normalised too. Models whose boxes are already decoded (YOLOv5/v8 exports give centre and size in
 * input pixels) pass no anchors (every anchor is then cx = cy = 0, w = h = 1) and scales = the input
 * size. kes_detect_transform_letterbox builds the map from that normalised space to source pixels.
 *
 * Speed. The one pass over every anchor is the score threshold; it compares the raw values (logits,
 * when the scores go through a sigmoid: sigmoid(x) ≥ t ⇔ x ≥ log(t / (1 − t))) with AVX2 on x86-64 and
 * NEON on aarch64, chosen at run time (kestrel/cpu.h: KES_CPU_DISABLE=all forces the scalar path), and
 * decodes only the anchors that pass. NMS sorts once and tests the IoU of each kept box against all
 * later candidates with the same vector code. Both give the scalar reference's results bit for bit
 * (the kernels use the same operations in the same order; no fused multiply-add).
 *
 * Bad input. Every call checks its arguments and says which one is wrong (KES_ERR_INVALID_ARGUMENT, see
 * kes_last_error()). A NaN score never passes a threshold. A box or keypoint that decodes to NaN or
 * ±infinity (a NaN or huge regressor, an exp that overflows) is KES_ERR_CORRUPT_DATA naming the anchor:
 * a model that emits such values is broken, and silently dropping the detection would hide it. NMS
 * refuses detections with a non-finite coordinate or score.
 *
 * Thread-safety: every call is a pure function of its arguments and may run on any thread, concurrently
 * with any other, as long as no two calls write the same buffers.
 * Ownership: the caller owns every buffer; nothing is kept after a call returns. kes_detect_decode and
 * kes_detect_anchors_generate never allocate; kes_detect_nms allocates only when given no scratch;
 * kes_detect_align_face allocates the image it returns (the caller releases it: kes_image_release).
 */
#ifndef KESTREL_DETECT_H
#define KESTREL_DETECT_H

#include "kestrel/image.h"
#include "kestrel/status.h"

KES_BEGIN_DECLS

/* ---- anchors --------------------------------------------------------------------------------------- */

/* One prior box: centre and size (normalised to the model input for generated anchors). */
typedef struct kes_anchor {
    float cx, cy, w, h;
} kes_anchor;

/* An SSD anchor grid, field for field MediaPipe's SsdAnchorsCalculatorOptions (ssd_anchors_calculator.cc):
 * layer l has a feature map of ceil(input / strides[l]) cells (or feature_map_*[l]); consecutive layers
 * with the same stride are merged into one grid whose cells hold all their anchors. Each layer adds one
 * anchor per aspect ratio at scale(l) = min_scale + (max_scale − min_scale) · l / (num_layers − 1), and,
 * when interpolated_scale_aspect_ratio > 0, one more of that ratio at sqrt(scale(l) · scale(l + 1))
 * (1 after the last layer). Anchors are ordered row of cells, cell, anchor in the cell — the order of
 * the model's outputs. Anchor size = scale / sqrt(ratio) high and scale · sqrt(ratio) wide, or 1 × 1
 * with fixed_anchor_size (BlazeFace: its regressors carry the size). */
typedef struct kes_detect_anchor_config {
    uint32_t struct_size;                   /* sizeof(kes_detect_anchor_config) (_init sets it) */
    uint32_t input_width, input_height;     /* model input in pixels */
    uint32_t num_layers;                    /* entries in strides (≤ 16) */
    const uint32_t* strides;                /* per layer, pixels per cell */
    const float* aspect_ratios;             /* NULL: {1.0} */
    uint32_t num_aspect_ratios;             /* ≤ 16 */
    float min_scale, max_scale;             /* default 0.2, 0.95 (MediaPipe's proto has no default) */
    float anchor_offset_x, anchor_offset_y; /* centre within the cell; default 0.5 */
    float interpolated_scale_aspect_ratio;  /* default 1.0; 0 adds no interpolated anchor */
    int32_t fixed_anchor_size;              /* non-zero: every anchor is 1 × 1 (default 0) */
    int32_t reduce_boxes_in_lowest_layer;   /* non-zero: layer 0 has ratios {1, 2, 0.5} at scales {0.1,
                                               scale(0), scale(0)} and no interpolated anchor (default 0) */
    const uint32_t* feature_map_widths;     /* optional (both or neither): per layer, instead of */
    const uint32_t* feature_map_heights;    /* ceil(input / stride) */
} kes_detect_anchor_config;

KES_API void kes_detect_anchor_config_init(kes_detect_anchor_config* config);

/* Writes the grid's anchors to out[0 .. *out_count). out NULL (capacity 0) only reports the count.
 * KES_ERR_INVALID_ARGUMENT for a bad config, or when capacity is below the count (*out_count then holds
 * the count needed and nothing is written). BlazeFace-256 ("back"): strides {16, 32, 32, 32},
 * min_scale 0.15625, max_scale 0.75, fixed_anchor_size 1 → 896 anchors (16×16×2, then 8×8×6). */
KES_API kes_status kes_detect_anchors_generate(const kes_detect_anchor_config* config, kes_anchor* out, size_t capacity,
                                               size_t* out_count);

/* ---- detections ------------------------------------------------------------------------------------ */

/* Keypoints a detection carries: 17, COCO's person keypoints (YOLOv8-pose); BlazeFace has 6, RetinaFace 5,
 * MediaPipe's palm detector 7. */
#define KES_DETECT_MAX_KEYPOINTS 17

typedef struct kes_detection {
    float x0, y0, x1, y1;   /* corners (x0 < x1 and y0 < y1 unless the model predicted a negative size) */
    float score;            /* after the configured activation */
    int32_t class_id;       /* score channel (first_class included: SSD's first real class is 1) */
    uint32_t anchor;        /* index of its anchor over all heads (for per-anchor data such as masks) */
    uint32_t num_keypoints; /* valid entries of keypoints; the rest are 0 */
    float keypoints[KES_DETECT_MAX_KEYPOINTS][2]; /* x, y */
} kes_detection;

/* ---- decoding -------------------------------------------------------------------------------------- */

typedef enum kes_detect_score_mode {
    KES_DETECT_SCORE_SIGMOID = 0, /* scores are logits: score = 1 / (1 + e^-x) (BlazeFace, RetinaNet) */
    KES_DETECT_SCORE_RAW = 1      /* scores are already probabilities (or any value the threshold suits) */
} kes_detect_score_mode;

typedef enum kes_detect_class_mode {
    KES_DETECT_CLASS_MAX = 0, /* one detection per anchor: its best class (ties: the lower class) */
    KES_DETECT_CLASS_EACH = 1 /* one detection per anchor and class above the threshold (SSD, ORT) */
} kes_detect_class_mode;

/* How an anchor's four box regressors r0..r3 (in `order`) become corners; a = the anchor,
 * r/s = regressor / its scale:
 *   CENTER_SIZE      cx = a.cx + rx/sx·a.w, cy = a.cy + ry/sy·a.h, w = rw/sw·a.w, h = rh/sh·a.h
 *                    (MediaPipe TensorsToDetections; YOLO centre/size with no anchors)
 *   CENTER_SIZE_EXP  as CENTER_SIZE with w = e^(rw/sw)·a.w, h = e^(rh/sh)·a.h (SSD, RetinaFace: the
 *                    scales are 1 / variance, e.g. 10, 10, 5, 5)
 *   CORNERS          x0 = a.cx + rx0/sx·a.w, y0 = a.cy + ry0/sy·a.h, x1, y1 likewise (decoded corners)
 *   DISTANCES        x0 = a.cx − l/sx·a.w, y0 = a.cy − t/sy·a.h, x1 = a.cx + r/sx·a.w, y1 = a.cy + b/sy·a.h
 *                    (anchor-free FCOS / YOLOv8 distances: l, t, r, b in XY order)
 * Keypoint k: x = a.cx + r[keypoint_offset + k·keypoint_values + 0]/sx·a.w, y likewise with 1, sy, a.h
 * (swapped in YX order). */
typedef enum kes_detect_box_coding {
    KES_DETECT_BOX_CENTER_SIZE = 0,
    KES_DETECT_BOX_CENTER_SIZE_EXP = 1,
    KES_DETECT_BOX_CORNERS = 2,
    KES_DETECT_BOX_DISTANCES = 3
} kes_detect_box_coding;

typedef enum kes_detect_order {
    KES_DETECT_ORDER_XY = 0, /* x, y, w, h and keypoints x, y (MediaPipe reverse_output_order: true) */
    KES_DETECT_ORDER_YX = 1  /* y, x, h, w and keypoints y, x (TF Object Detection API) */
} kes_detect_order;

/* The layout and meaning of a detector's outputs. Element strides let one config read [N, C] and
 * [C, N] tensors and values inside one combined tensor (YOLOv8's [4 + C, N]); 0 selects the default. */
typedef struct kes_detect_decode_config {
    uint32_t struct_size;                     /* sizeof(kes_detect_decode_config) (_init sets it) */
    float score_threshold;                    /* keep score ≥ this (after the activation); default 0.5 */
    kes_detect_score_mode score_mode;         /* default SIGMOID */
    kes_detect_class_mode class_mode;         /* default MAX */
    uint32_t num_classes;                     /* score channels per anchor; default 1 */
    uint32_t first_class;                     /* channels below are ignored (1 skips SSD's background); default 0 */
    kes_detect_box_coding box_coding;         /* default CENTER_SIZE */
    kes_detect_order order;                   /* default XY */
    float x_scale, y_scale, w_scale, h_scale; /* divide the regressors; default 1 */
    uint32_t box_offset;                      /* first box regressor of an anchor; default 0 */
    uint32_t num_keypoints;                   /* ≤ KES_DETECT_MAX_KEYPOINTS; default 0 */
    uint32_t keypoint_offset;                 /* first keypoint regressor; default 4 */
    uint32_t keypoint_values;                 /* regressors per keypoint (3 with a visibility); default 2 */
    size_t score_anchor_stride;               /* floats from one anchor's scores to the next; 0: num_classes */
    size_t score_class_stride;                /* floats from one class to the next; 0: 1 */
    size_t box_anchor_stride;                 /* floats from one anchor's regressors to the next; 0: the values
                                                 an anchor has, max(box_offset + 4, keypoint_offset +
                                                 num_keypoints · keypoint_values) (BlazeFace: 16) */
    size_t box_value_stride;                  /* floats from one regressor to the next; 0: 1 */
} kes_detect_decode_config;

KES_API void kes_detect_decode_config_init(kes_detect_decode_config* config);

/* One output group of the model: `count` anchors whose scores and regressors start at these pointers
 * (laid out by the config's strides). A model with one output pair is one head; BlazeFace has two (the
 * 16×16 and 8×8 grids), YOLOv5's un-concatenated export three. Heads take consecutive anchors. */
typedef struct kes_detect_head {
    const float* scores;
    const float* boxes;
    size_t count;
} kes_detect_head;

/* Decodes every anchor of the heads whose score passes the threshold into out, in anchor order (then
 * class order). anchors holds anchor_count = Σ heads[i].count anchors, or is NULL (anchor_count 0): every
 * anchor is then cx = cy = 0, w = h = 1, for models that decode boxes themselves.
 * *out_found = the detections that passed, also when more than capacity: out then holds the capacity
 * best by score (ties: lower anchor, then lower class), still in anchor order, and *out_found > capacity
 * says that some were dropped. out NULL with capacity 0 counts only.
 * Errors: KES_ERR_INVALID_ARGUMENT (config, NULL pointers, anchor count), KES_ERR_CORRUPT_DATA (a box
 * or keypoint that decodes to a non-finite value; nothing useful is in out then). */
KES_API kes_status kes_detect_decode(const kes_detect_decode_config* config, const kes_detect_head* heads,
                                     size_t head_count, const kes_anchor* anchors, size_t anchor_count,
                                     kes_detection* out, size_t capacity, size_t* out_found);

/* ---- non-maximum suppression --------------------------------------------------------------------- */

typedef enum kes_detect_nms_mode {
    /* Greedy: visit by score (ties: lower index first), keep a detection unless a kept one overlaps it
     * with IoU > iou_threshold (torchvision, OpenCV NMSBoxes, ONNX Runtime). */
    KES_DETECT_NMS_HARD = 0,
    /* MediaPipe's WEIGHTED (BlazeFace, palm detection): as HARD, but each kept detection becomes the
     * score-weighted mean of itself and the detections it suppresses (corners and keypoints; its score,
     * class and anchor stay its own). Scores must be ≥ 0. */
    KES_DETECT_NMS_WEIGHTED = 1
} kes_detect_nms_mode;

typedef struct kes_detect_nms_config {
    uint32_t struct_size;     /* sizeof(kes_detect_nms_config) (_init sets it) */
    kes_detect_nms_mode mode; /* default HARD */
    float iou_threshold;      /* in [0, 1]; suppress when IoU > this; default 0.5 */
    uint32_t max_detections;  /* keep at most this many (the best); 0: no limit; default 0 */
    int32_t per_class;        /* non-zero: only detections of one class_id suppress each other; default 0 */
    uint32_t max_per_class;   /* with per_class: at most this many per class; 0: no limit; default 0 */
} kes_detect_nms_config;

KES_API void kes_detect_nms_config_init(kes_detect_nms_config* config);

/* Scratch bytes kes_detect_nms needs for `count` detections (44 per detection + 640). */
KES_API kes_status kes_detect_nms_scratch_size(size_t count, size_t* out_bytes);

/* Suppresses in place: dets[0 .. *out_kept) become the kept detections, by score descending (ties: the
 * lower input index first); the rest of dets is left in an unspecified order. IoU = intersection /
 * union of the corner boxes, a box with x1 ≤ x0 or y1 ≤ y0 having no area (it overlaps nothing and is
 * kept unless max_detections stops it); "IoU > t" is evaluated as intersection > t · union in float
 * (no division: the same decisions up to the rounding of one product). scratch (any alignment) of at least
 * kes_detect_nms_scratch_size bytes keeps the call from allocating; NULL (scratch_size 0) allocates it for this call.
 * Errors: KES_ERR_INVALID_ARGUMENT (config, a non-finite coordinate or score, a negative score in
 * WEIGHTED mode, scratch too small; dets unchanged), KES_ERR_OUT_OF_MEMORY (no scratch, none left). */
KES_API kes_status kes_detect_nms(const kes_detect_nms_config* config, kes_detection* dets, size_t count, void* scratch,
                                  size_t scratch_size, size_t* out_kept);

/* ---- back to source pixels ------------------------------------------------------------------------ */

/* p' = p · scale + offset per axis, for corners and keypoints. */
typedef struct kes_detect_transform {
    float scale_x, scale_y, offset_x, offset_y;
} kes_detect_transform;

/* The map from coordinates normalised to a model input of input_width × input_height pixels, into which
 * a source image of source_width × source_height pixels was pasted (letterboxed, resized) at
 * paste_x, paste_y with size paste_width × paste_height (input pixels), back to source pixels:
 *   x_src = (x · input_width − paste_x) · source_width / paste_width   (y likewise)
 * With kes_vpc_letterbox's kes_vpc_roi paste: paste_x = left, paste_width = right − left + 1.
 * KES_ERR_INVALID_ARGUMENT for a zero or non-finite size. */
KES_API kes_status kes_detect_transform_letterbox(float input_width, float input_height, float paste_x, float paste_y,
                                                  float paste_width, float paste_height, float source_width,
                                                  float source_height, kes_detect_transform* out_transform);

/* Applies the transform to dets[0 .. count) (corners and their num_keypoints keypoints); a negative
 * scale swaps the corners so that x0 ≤ x1 still holds for boxes that had it. */
KES_API kes_status kes_detect_transform_apply(const kes_detect_transform* transform, kes_detection* dets, size_t count);

/* ---- rotated regions and landmarks (MediaPipe's pose and hand pipelines) ---------------------------- */

/* The second stage of a two-stage pipeline: the detector finds the object (pose detection, palm
 * detection), a rotated rectangle around it is cropped at the landmark model's input size, the landmark
 * model runs on the crop, and its landmarks go back to the image through the crop's own matrix:
 *
 *   detection (source pixels) ──kes_detect_roi_from_detection──► kes_detect_rect
 *   rect ──kes_warp_matrix_from_rect (kestrel/warp.h, dvpp)──► 2×3 matrix, model input → source pixels
 *   source image + matrix ──kes_warp_affine──► crop ──► landmark model ──► landmark tensor
 *   landmark tensor + matrix ──kes_detect_landmarks_decode──► landmarks in source pixels
 *
 * The matrix is six floats, m[0..5]: x' = m[0]·x + m[1]·y + m[2], y' = m[3]·x + m[4]·y + m[5] (the
 * layout of kes_warp_matrix.m). Coordinates are continuous pixels (pixel i spans [i, i + 1)), as for
 * kes_detection. */

/* A rotated rectangle in source pixels: centre, size along its own axes, and rotation in radians,
 * clockwise on the image (whose y axis points down), in [−π, π): MediaPipe's Rect. */
typedef struct kes_detect_rect {
    float cx, cy, width, height, rotation;
} kes_detect_rect;

/* Where the rectangle's centre and size come from. */
typedef enum kes_detect_roi_size {
    KES_DETECT_ROI_SIZE_BOX = 0,      /* the detection's box: its centre and size (DetectionsToRects) */
    KES_DETECT_ROI_SIZE_KEYPOINTS = 1 /* centre at start_keypoint, a square of side 2·|end − start|
                                         (AlignmentPointsRects: pose detection's hip centre and the point
                                         on the circle around the body) */
} kes_detect_roi_size;

typedef enum kes_detect_roi_square {
    KES_DETECT_ROI_SQUARE_NONE = 0,
    KES_DETECT_ROI_SQUARE_LONG = 1, /* both sides become the longer one (square_long) */
    KES_DETECT_ROI_SQUARE_SHORT = 2 /* both sides become the shorter one (square_short) */
} kes_detect_roi_square;

/* MediaPipe's DetectionsToRectsCalculator (or AlignmentPointsRectsCalculator) followed by its
 * RectTransformationCalculator, field for field, in pixels. MediaPipe's values:
 *   pose (pose_detection_to_roi): size_from KEYPOINTS, rotate 1, start 0, end 1, target_angle π/2,
 *     scale 1.25 × 1.25, shift 0, square LONG;
 *   hands (palm_detection_detection_to_roi): size_from BOX, rotate 1, start 0 (wrist), end 2 (middle
 *     finger's base), target_angle π/2, scale 2.6 × 2.6, shift_y −0.5, square LONG. */
typedef struct kes_detect_roi_config {
    uint32_t struct_size;          /* sizeof(kes_detect_roi_config) (_init sets it) */
    kes_detect_roi_size size_from; /* default BOX */
    int32_t rotate;                /* non-zero: rotation from the keypoints below; 0 (default): 0 */
    uint32_t start_keypoint;       /* rotation_vector_start_keypoint_index; default 0 */
    uint32_t end_keypoint;         /* rotation_vector_end_keypoint_index; default 1 */
    float target_angle;            /* radians, rotation_vector_target_angle; default 0 */
    float scale_x, scale_y;        /* the final size's factors; default 1 */
    float shift_x, shift_y;        /* the centre's shift, in the rectangle's sizes along its own
                                      (rotated) axes, before squaring; default 0 */
    kes_detect_roi_square square;  /* default NONE */
} kes_detect_roi_config;

KES_API void kes_detect_roi_config_init(kes_detect_roi_config* config);

/* The rectangle to crop for `detection` (in source pixels: after kes_detect_transform_apply):
 *   rotation = normalise(target_angle − atan2(−(y_end − y_start), x_end − x_start)) into [−π, π)
 *              (rotate ≠ 0; else 0), with the start and end keypoints;
 *   centre, size from size_from; then centre += R(rotation)·(shift_x·width, shift_y·height);
 *   square: width = height = max (or min) of the two; width ·= scale_x, height ·= scale_y.
 * config NULL: defaults (the box itself). KES_ERR_INVALID_ARGUMENT for NULL pointers, a bad config
 * (unknown enum, non-finite or non-positive scale, non-finite shift or angle), a keypoint index the
 * detection does not have (num_keypoints), non-finite coordinates, or a resulting size that is not
 * positive and finite (a box with x1 ≤ x0, two equal alignment keypoints). */
KES_API kes_status kes_detect_roi_from_detection(const kes_detect_roi_config* config, const kes_detection* detection,
                                                 kes_detect_rect* out_rect);

/* One landmark in source pixels. */
typedef struct kes_landmark {
    float x, y;       /* source pixels */
    float z;          /* depth, scaled as x: the model's value times the crop's pixel size in source pixels */
    float visibility; /* after the configured activation; 1 when the tensor has no visibility value */
    float presence;   /* likewise, 1 when the tensor has none */
} kes_landmark;

typedef struct kes_detect_landmark_config {
    uint32_t struct_size;                  /* sizeof(kes_detect_landmark_config) (_init sets it) */
    uint32_t num_landmarks;                /* landmarks to decode (1..4096): 33 pose (39 with the auxiliary
                                              ones), 21 hand; default 0, which the call refuses: set it */
    uint32_t values_per_landmark;          /* 3..5: x, y, z[, visibility[, presence]] (pose: 5, hand: 3);
                                              default 3 */
    kes_detect_score_mode visibility_mode; /* SIGMOID (default: logits, MediaPipe's pose) or RAW */
} kes_detect_landmark_config;

KES_API void kes_detect_landmark_config_init(kes_detect_landmark_config* config);

/* Decodes a landmark model's output, values[0 .. value_count) laid out landmark after landmark
 * (x, y, z, ... in the model input's pixels, MediaPipe's TensorsToLandmarks layout; value_count may exceed
 * num_landmarks · values_per_landmark, the rest is ignored), into out[0 .. num_landmarks):
 *   (x, y) = to_image·(x, y); z = z · |(to_image[0], to_image[3])|; visibility, presence through the
 *   activation.
 * to_image is the crop's matrix (kes_warp_matrix.m of the warp that made the model's input); NULL keeps
 * model-input pixels. With a square crop this is MediaPipe's LandmarkProjectionCalculator.
 * Errors: KES_ERR_INVALID_ARGUMENT for NULL pointers, a bad config, value_count or capacity below what
 * num_landmarks needs, or a non-finite matrix entry; KES_ERR_CORRUPT_DATA naming the landmark when a
 * model value is not finite or maps beyond float's range (out is then unspecified). */
KES_API kes_status kes_detect_landmarks_decode(const kes_detect_landmark_config* config, const float* values,
                                               size_t value_count, const float* to_image, kes_landmark* out,
                                               size_t capacity);

/* ---- face alignment -------------------------------------------------------------------------------- */

/* Face embedders (ArcFace, MobileFaceNet, InsightFace's models) were trained on faces warped onto one
 * 112×112 template of eyes, nose and mouth; a plain box crop, unrotated and at another scale, loses
 * about 0.3 of same-person cosine (MobileFaceNet on the face-api photos). The template used here is
 * ArcFace's (insightface's arcface_dst), its two mouth corners replaced by their mean, for BlazeFace's
 * keypoints 0..3 in source pixels (after kes_detect_transform_apply): the eye on the image's left, the
 * eye on its right, the nose tip, the mouth centre. */
#define KES_DETECT_ALIGN_SIZE 112

/* A similarity transform (rotation, one scale, shift) from source pixels (x, y) to aligned pixels:
 *   x' = a·x − b·y + tx,   y' = b·x + a·y + ty */
typedef struct kes_detect_similarity {
    float a, b, tx, ty;
} kes_detect_similarity;

/* The least-squares similarity mapping the face's keypoints 0..3 onto the template.
 * KES_ERR_INVALID_ARGUMENT for fewer than 4 keypoints, non-finite ones, or keypoints too close together
 * to define a face (all within a few hundredths of a pixel of their mean). */
KES_API kes_status kes_detect_align_similarity(const kes_detection* face, kes_detect_similarity* out_transform);

/* The aligned face: a KES_DETECT_ALIGN_SIZE × KES_DETECT_ALIGN_SIZE image in the source's format (NV12
 * or NV21) with the active board's VPC strides, allocated from `pool` (NULL: kes_mem_alloc), each pixel
 * sampled bilinearly from the source at the inverse of kes_detect_align_similarity (chroma at half the
 * luma coordinate; coordinates outside the source are clamped to its edge). The board's VPC has no
 * affine warp, so this runs on the CPU: the source must be memory the CPU reads (kes_image_memory; a
 * PCIe card's DVPP output is refused with KES_ERR_UNSUPPORTED: decode into a host pool). Feed the result
 * to an embedder converted with --insert-op-conf (kes_model_execute_images). Errors: those of
 * kes_detect_align_similarity, KES_ERR_INVALID_ARGUMENT for an invalid source image,
 * KES_ERR_UNSUPPORTED for another pixel format, KES_ERR_OUT_OF_MEMORY from the pool; *out_face is then
 * zeroed (releasing it is harmless). */
KES_API kes_status kes_detect_align_face(const kes_detection* face, const kes_image* source, kes_mem_pool* pool,
                                         kes_image* out_face);

/* The kernel table kes_detect_decode and kes_detect_nms use on this CPU: "avx2", "neon" or "scalar"
 * (chosen on first use; see kestrel/cpu.h). */
KES_API const char* kes_detect_kernels_name(void);

KES_END_DECLS

#endif /* KESTREL_DETECT_H */
