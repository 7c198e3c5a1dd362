/* pose — where is the person in this photo or video, and where is each body joint? MediaPipe's pose
 * pipeline (pose detection → rotated crop around the body → 33 pose landmarks) on Kestrel's public API;
 * the pipeline itself is samples/common/two_stage.c, this file the numbers of MediaPipe's
 * pose_detection_cpu and pose_landmark_by_roi_cpu graphs.
 *
 * usage: pose DETECTOR.kom LANDMARK.kom [options] [PHOTO.jpg ...]   (pose --help lists the options)
 *   DETECTOR: pose_detection (224×224 → [1,2254,12] boxes + 4 keypoints, [1,2254,1] scores);
 *   LANDMARK: pose_landmark_lite, _full or _heavy (256×256 → 39 × (x, y, z, visibility, presence), the
 *   pose flag, the segmentation mask, heatmaps, world landmarks); from the @mediapipe/pose npm package,
 *   converted with kes-convert (pose_detection's sparse DENSIFY weights are densified at conversion).
 *
 * Output: as hands' (samples/hands/main.c), with "poses" and landmarks [x, y, z, visibility] (33 of them:
 * the model's 6 auxiliary points are MediaPipe's tracking aid, not body joints). Exit status: 0 on
 * success, 1 on an error, 2 for usage. */
#include "two_stage.h"

/* MediaPipe's POSE_CONNECTIONS: face, arms and hands, torso, legs and feet. */
static const int kPoseBones[][2] = {{0, 1},   {1, 2},   {2, 3},   {3, 7},   {0, 4},   {4, 5},   {5, 6},
                                    {6, 8},   {9, 10},  {11, 12}, {11, 13}, {13, 15}, {15, 17}, {15, 19},
                                    {15, 21}, {17, 19}, {12, 14}, {14, 16}, {16, 18}, {16, 20}, {16, 22},
                                    {18, 20}, {11, 23}, {12, 24}, {23, 24}, {23, 25}, {24, 26}, {25, 27},
                                    {26, 28}, {27, 29}, {28, 30}, {29, 31}, {30, 32}, {27, 31}, {28, 32}};
static const uint32_t kPoseStrides[5] = {8, 16, 32, 32, 32};

int main(int argc, char** argv) {
    two_stage_spec s = {0};
    s.program = "pose";
    s.object = "pose";
    s.detector_name = "pose detection";
    s.landmark_name = "pose landmark";
    /* pose_detection_cpu: 224×224 in [-1, 1]; anchors 28×28×2 + 14×14×2 + 7×7×6; box + 4 keypoints (hip
     * centre, a point on the circle around the body, shoulder centre, a point on the circle around the
     * upper body). */
    s.detector_size = 224;
    s.detector_input_min = -1.0f;
    s.detector_input_max = 1.0f;
    kes_detect_anchor_config_init(&s.anchor_config);
    s.anchor_config.num_layers = 5;
    s.anchor_config.strides = kPoseStrides;
    s.anchor_config.min_scale = 0.1484375f;
    s.anchor_config.max_scale = 0.75f;
    s.anchor_config.fixed_anchor_size = 1;
    s.anchors = 2254;
    s.box_values = 12;
    s.keypoints = 4;
    s.nms_iou = 0.3f;
    /* pose_detection_to_roi: centred on the hips, a square of twice the hip → circle distance, upright
     * from hips to shoulders, 1.25 × that. */
    kes_detect_roi_config_init(&s.roi_config);
    s.roi_config.size_from = KES_DETECT_ROI_SIZE_KEYPOINTS;
    s.roi_config.rotate = 1;
    s.roi_config.start_keypoint = 0;
    s.roi_config.end_keypoint = 1;
    s.roi_config.target_angle = 1.57079632679f; /* π/2 */
    s.roi_config.scale_x = s.roi_config.scale_y = 1.25f;
    s.roi_config.square = KES_DETECT_ROI_SQUARE_LONG;
    /* pose_landmark_by_roi_cpu: 256×256 in [0, 1]; 39 × 5 values, of which the 33 body landmarks are
     * decoded (visibility is a logit); the pose flag. */
    s.landmark_size = 256;
    s.landmark_values = 195;
    kes_detect_landmark_config_init(&s.landmark_config);
    s.landmark_config.num_landmarks = 33;
    s.landmark_config.values_per_landmark = 5;
    s.landmark_config.visibility_mode = KES_DETECT_SCORE_SIGMOID;
    s.flag_output = 1;
    s.extra_output = -1;
    s.crop_border = KES_WARP_BORDER_REPLICATE;
    s.bones = kPoseBones;
    s.bone_count = sizeof kPoseBones / sizeof kPoseBones[0];
    s.default_threshold = 0.5f;
    s.default_max_objects = 1; /* MediaPipe Pose follows one person */
    return two_stage_main(&s, argc, argv);
}
