/* two_stage.h — the part the hands and pose samples share: MediaPipe's two-stage landmark pipeline on
 * Kestrel's public API, driven by a description of the two models (two_stage_spec):
 *
 *   JPEGD / VDEC (NV12) → VPC letterbox → AIPP (RGB, the detector's range) → detector (engine)
 *   → kestrel/detect.h: SSD anchors, decode (box + keypoints), weighted NMS, back to source pixels
 *   → kes_detect_roi_from_detection: the rotated square around each detection
 *   → kes_warp_matrix_from_rect + kes_warp_affine: that square as the landmark model's input → AIPP
 *   → landmark model → kes_detect_landmarks_decode through the crop's matrix: landmarks in pixels
 *   → OSD skeleton on the NV12 image → JPEGE (.jpg) / VENC (.mp4)
 *
 * A sample is its spec (the numbers of MediaPipe's graphs for its models) and a main that calls
 * two_stage_main. Output: one JSON line per photo and per video frame on stdout (see two_stage_main). */
#ifndef KESTREL_SAMPLES_TWO_STAGE_H
#define KESTREL_SAMPLES_TWO_STAGE_H

#include "kestrel/kestrel.h"

typedef struct two_stage_spec {
    const char* program;                       /* "hands": messages, usage */
    const char* object;                        /* "hand": the JSON array is <object>s, dumps <stem>_<object><i>.f32 */
    const char *detector_name, *landmark_name; /* "palm detection", "hand landmarks": messages */
    /* The detector: a square input of detector_size pixels with values in [input_min, input_max], one
     * scores output of `anchors` floats and one boxes output of anchors × box_values floats. */
    uint32_t detector_size;
    float detector_input_min, detector_input_max;
    kes_detect_anchor_config anchor_config; /* input size filled in from detector_size */
    uint32_t anchors, box_values, keypoints;
    float nms_iou;
    kes_detect_roi_config roi_config;
    /* The landmark model: a square input of landmark_size pixels in [0, 1]; output 0 the landmarks
     * (landmark_values floats, at least num_landmarks · values_per_landmark of landmark_config), output
     * flag_output the object's presence (a probability), and optionally extra_output (≥ 0) one more
     * score printed as extra_name. */
    uint32_t landmark_size, landmark_values;
    kes_detect_landmark_config landmark_config;
    uint32_t flag_output;
    int32_t extra_output;
    const char* extra_name;
    kes_warp_border crop_border;
    /* The skeleton: pairs of landmark indices. */
    const int (*bones)[2];
    size_t bone_count;
    float default_threshold;
    uint32_t default_max_objects;
} two_stage_spec;

/* Parses the command line (DETECTOR.kom LANDMARK.kom [options] [PHOTO.jpg ...], see the usage text) and
 * runs the photos and videos. Returns the exit status: 0, 1 on an error (a photo or video that fails is
 * reported and the others still run), 2 for usage. */
int two_stage_main(const two_stage_spec* spec, int argc, char** argv);

#endif
