/* hands — where are the hands in this photo or video, and where is each joint? MediaPipe's hand pipeline
 * (palm detection → rotated crop → 21 hand landmarks) on Kestrel's public API; the pipeline itself is
 * samples/common/two_stage.c, this file the numbers of MediaPipe's palm_detection_cpu and
 * hand_landmark_cpu graphs.
 *
 * usage: hands PALM.kom LANDMARK.kom [options] [PHOTO.jpg ...]   (hands --help lists the options)
 *   PALM: palm_detection_full or _lite (192×192 → [1,2016,18] boxes + 7 keypoints, [1,2016,1] scores);
 *   LANDMARK: hand_landmark_full or _lite (224×224 → 63 landmark values, the hand flag, handedness, world
 *   landmarks); from the @mediapipe/hands npm package, converted with kes-convert (no AIPP inserted).
 *
 * Output: one JSON object per line for each photo and each video frame, on stdout:
 *   {"image": PATH, "frame": N (video only), "width": W, "height": H, "hands": [{"detection_score": S,
 *    "rect": [cx, cy, w, h, rotation], "matrix": [6 floats], "presence": P, "handedness": L,
 *    "landmarks": [[x, y, z], ... 21]}]}
 * with landmarks in source pixels (z scaled as x), "matrix" the crop's map from the landmark model's input
 * pixels to source pixels (kes_warp_matrix), "presence" the hand flag and "handedness" the model's score
 * (MediaPipe reads > 0.5 as its label "Left", which assumes a mirrored selfie image). A crop whose flag
 * is below 0.5 holds no hand (MediaPipe drops it too): it is printed without landmarks. <stem>_hands.jpg
 * / .mp4 get the skeletons. Exit status: 0 on success, 1 on an error, 2 for usage. */
#include "two_stage.h"

/* MediaPipe's HAND_CONNECTIONS: the palm and each finger from the wrist out. */
static const int kHandBones[][2] = {{0, 1},   {1, 2},   {2, 3},   {3, 4},   {0, 5},   {5, 6},   {6, 7},
                                    {7, 8},   {5, 9},   {9, 10},  {10, 11}, {11, 12}, {9, 13},  {13, 14},
                                    {14, 15}, {15, 16}, {13, 17}, {0, 17},  {17, 18}, {18, 19}, {19, 20}};
static const uint32_t kPalmStrides[4] = {8, 16, 16, 16};

int main(int argc, char** argv) {
    two_stage_spec s = {0};
    s.program = "hands";
    s.object = "hand";
    s.detector_name = "palm detection";
    s.landmark_name = "hand landmark";
    /* palm_detection_cpu: 192×192 in [0, 1]; anchors 24×24×2 + 12×12×6; box + 7 keypoints in pixels. */
    s.detector_size = 192;
    s.detector_input_min = 0.0f;
    s.detector_input_max = 1.0f;
    kes_detect_anchor_config_init(&s.anchor_config);
    s.anchor_config.num_layers = 4;
    s.anchor_config.strides = kPalmStrides;
    s.anchor_config.min_scale = 0.1484375f;
    s.anchor_config.max_scale = 0.75f;
    s.anchor_config.fixed_anchor_size = 1; /* the regressors carry the size */
    s.anchors = 2016;
    s.box_values = 18;
    s.keypoints = 7; /* wrist, index/middle/ring/pinky bases, two on the thumb */
    s.nms_iou = 0.3f;
    /* palm_detection_detection_to_roi: wrist → middle finger's base pointing up, 2.6 × the box, shifted
     * half a box towards the fingers. */
    kes_detect_roi_config_init(&s.roi_config);
    s.roi_config.size_from = KES_DETECT_ROI_SIZE_BOX;
    s.roi_config.rotate = 1;
    s.roi_config.start_keypoint = 0;
    s.roi_config.end_keypoint = 2;
    s.roi_config.target_angle = 1.57079632679f; /* π/2 */
    s.roi_config.scale_x = s.roi_config.scale_y = 2.6f;
    s.roi_config.shift_y = -0.5f;
    s.roi_config.square = KES_DETECT_ROI_SQUARE_LONG;
    /* hand_landmark_cpu: 224×224 in [0, 1]; 21 × (x, y, z); the hand flag; handedness. */
    s.landmark_size = 224;
    s.landmark_values = 63;
    kes_detect_landmark_config_init(&s.landmark_config);
    s.landmark_config.num_landmarks = 21;
    s.landmark_config.values_per_landmark = 3;
    s.flag_output = 1;
    s.extra_output = 2;
    s.extra_name = "handedness";
    s.crop_border = KES_WARP_BORDER_REPLICATE; /* ImageToTensorCalculator's default */
    s.bones = kHandBones;
    s.bone_count = sizeof kHandBones / sizeof kHandBones[0];
    s.default_threshold = 0.5f; /* min_score_thresh */
    s.default_max_objects = 2;  /* num_hands */
    return two_stage_main(&s, argc, argv);
}
