# kestrel.detect: detector post-processing (kestrel/detect.h). Detections are DETECTION_DTYPE arrays.
from typing import Any, Sequence

import numpy as np
import numpy.typing as npt

from . import Image

DETECTION_DTYPE: np.dtype[Any]  # x0 y0 x1 y1 score class_id anchor num_keypoints keypoints[17, 2]
MAX_KEYPOINTS: int
ALIGN_SIZE: int  # only when the library has kes_detect_align_face

def anchors(input_size: tuple[int, int], strides: Sequence[int], *, min_scale: float = 0.2, max_scale: float = 0.95,
            aspect_ratios: Sequence[float] = ..., anchor_offset: tuple[float, float] = (0.5, 0.5),
            interpolated_scale_aspect_ratio: float = 1.0, fixed_anchor_size: bool = False,
            reduce_boxes_in_lowest_layer: bool = False,
            feature_map_sizes: Sequence[tuple[int, int]] | None = None) -> npt.NDArray[np.float32]: ...
def decode(heads: Sequence[tuple[Any, Any] | tuple[Any, Any, int]], anchors: npt.ArrayLike | None = None, *,
           score_threshold: float = 0.5, score_mode: str = "sigmoid", class_mode: str = "max", num_classes: int = 1,
           first_class: int = 0, box_coding: str = "center_size", order: str = "xy",
           scales: Sequence[float] = (1, 1, 1, 1), box_offset: int = 0, num_keypoints: int = 0,
           keypoint_offset: int = 4, keypoint_values: int = 2, score_anchor_stride: int = 0,
           score_class_stride: int = 0, box_anchor_stride: int = 0, box_value_stride: int = 0,
           capacity: int | None = None) -> npt.NDArray[Any]: ...
def nms(detections: npt.ArrayLike, *, iou_threshold: float = 0.5, mode: str = "hard", max_detections: int = 0,
        per_class: bool = False, max_per_class: int = 0) -> npt.NDArray[Any]: ...
def letterbox_transform(input_size: tuple[float, float], paste: Sequence[float],
                        source_size: tuple[float, float]) -> tuple[float, float, float, float]: ...
def transform(transform: Sequence[float], detections: npt.ArrayLike) -> npt.NDArray[Any]: ...
def roi_from_detection(detection: Any, *, size_from: str = "box", rotate: bool = False, start_keypoint: int = 0,
                       end_keypoint: int = 1, target_angle: float = 0.0, scale: tuple[float, float] = (1.0, 1.0),
                       shift: tuple[float, float] = (0.0, 0.0),
                       square: str = "none") -> tuple[float, float, float, float, float]: ...
def landmarks_decode(values: npt.ArrayLike, num_landmarks: int, *, values_per_landmark: int = 3,
                     to_image: Sequence[float] | None = None,
                     visibility: str = "sigmoid") -> npt.NDArray[np.float32]: ...
def align_similarity(detection: Any) -> tuple[float, float, float, float]: ...
def align_face(detection: Any, source: Image) -> Image: ...
