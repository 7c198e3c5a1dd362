"""kestrel.detect: anchors, decode, NMS and the letterbox transform on NumPy arrays, and their errors."""
import numpy as np
import pytest

import kestrel
from kestrel import detect


def blazeface_anchors():
    return detect.anchors((256, 256), [16, 32, 32, 32], min_scale=0.15625, max_scale=0.75, fixed_anchor_size=True)


def test_blazeface_anchor_grid():
    a = blazeface_anchors()
    assert a.shape == (896, 4) and a.dtype == np.float32
    assert np.allclose(a[0], [0.5 / 16, 0.5 / 16, 1, 1]) and np.allclose(a[512], [0.5 / 8, 0.5 / 8, 1, 1])
    with pytest.raises(kestrel.InvalidArgumentError):
        detect.anchors((256, 256), [])
    with pytest.raises(kestrel.InvalidArgumentError):
        detect.anchors((256, 256), [16], feature_map_sizes=[(1, 1), (2, 2)])


def heads(hits):
    """BlazeFace-shaped heads with the given {anchor: (score logit, dx, dy, w, h)}."""
    scores = np.full(896, -10, np.float32)
    boxes = np.zeros((896, 16), np.float32)
    for i, (s, dx, dy, w, h) in hits.items():
        scores[i] = s
        boxes[i, :4] = (dx, dy, w, h)
    return [(scores[:512], boxes[:512]), (scores[512:], boxes[512:])]


def test_decode_nms_and_transform():
    anchors = blazeface_anchors()
    hs = heads({0: (5, 0, 0, 32, 32), 1: (4, 1, 1, 32, 32), 600: (3, 0, 0, 64, 64)})
    dets = detect.decode(hs, anchors, score_threshold=0.75, scales=[256] * 4, num_keypoints=6)
    assert dets.dtype == detect.DETECTION_DTYPE and len(dets) == 3
    assert list(dets["anchor"]) == [0, 1, 600]
    assert dets[0]["score"] == pytest.approx(1 / (1 + np.exp(-5)))
    assert dets[0]["x1"] - dets[0]["x0"] == pytest.approx(32 / 256)
    kept = detect.nms(dets, iou_threshold=0.3)
    assert list(kept["anchor"]) == [0, 600] and len(dets) == 3  # the input is not changed
    weighted = detect.nms(dets, iou_threshold=0.3, mode="weighted")
    assert len(weighted) == 2
    t = detect.letterbox_transform((256, 256), (0, 32, 256, 192), (640, 480))
    back = detect.transform(t, kept)
    assert back[0]["x0"] == pytest.approx(kept[0]["x0"] * 640, abs=1e-3)
    assert back[0]["y0"] == pytest.approx((kept[0]["y0"] * 256 - 32) * 480 / 192, abs=1e-3)
    assert len(detect.decode(hs, anchors, score_threshold=0.75, scales=[256] * 4, capacity=1)) == 1
    assert len(detect.nms(dets[:0])) == 0


def test_decode_refuses_arrays_too_small_for_their_anchors():
    anchors = blazeface_anchors()
    (s16, b16), (s8, b8) = heads({})
    with pytest.raises(kestrel.InvalidArgumentError, match="needs"):
        detect.decode([(s16, b16[:100]), (s8, b8)], anchors)
    with pytest.raises(kestrel.InvalidArgumentError, match="needs"):
        detect.decode([(s16, b16, 10_000), (s8, b8)], anchors)
    with pytest.raises(kestrel.InvalidArgumentError, match="rows"):
        detect.decode([(s16, b16), (s8, b8)], anchors[:10])
    with pytest.raises(kestrel.InvalidArgumentError, match="floating"):
        detect.decode([(s16.astype("U8"), b16)], None)
    with pytest.raises(kestrel.InvalidArgumentError):
        detect.decode([(s16, None)], None)
    with pytest.raises(kestrel.InvalidArgumentError):
        detect.decode([(s16, b16)], None, box_coding="polar")
    with pytest.raises(kestrel.InvalidArgumentError):
        detect.decode([(s16, b16)], None, num_keypoints=99)
    nan = b16.copy()
    nan[3, 0] = np.nan
    s = s16.copy()
    s[3] = 9
    with pytest.raises(kestrel.CorruptDataError, match="anchor"):
        detect.decode([(s, nan)], None, scales=[256] * 4, num_keypoints=6)


def test_nms_and_transform_errors():
    with pytest.raises(kestrel.InvalidArgumentError, match="DETECTION_DTYPE"):
        detect.nms(np.zeros((3, 4), np.float32))
    bad = np.zeros(2, detect.DETECTION_DTYPE)
    bad[0]["x1"] = np.inf
    with pytest.raises(kestrel.InvalidArgumentError):
        detect.nms(bad)
    with pytest.raises(kestrel.InvalidArgumentError):
        detect.nms(bad, iou_threshold=2)
    with pytest.raises(kestrel.InvalidArgumentError):
        detect.letterbox_transform((256, 256), (0, 0, 0, 0), (640, 480))
    with pytest.raises(kestrel.InvalidArgumentError):
        detect.transform((1, 1), bad)
    with pytest.raises(kestrel.InvalidArgumentError):
        detect.nms(None)


def test_roi_from_detection_and_landmarks_decode():
    d = np.zeros(1, detect.DETECTION_DTYPE)
    d["x0"], d["y0"], d["x1"], d["y1"] = 60, 80, 140, 220
    d["num_keypoints"] = 3
    d["keypoints"][0, :3] = [(100, 200), (0, 0), (200, 200)]  # fingers to the right
    rect = detect.roi_from_detection(d, rotate=True, end_keypoint=2, target_angle=np.pi / 2, scale=(2.6, 2.6),
                                     shift=(0, -0.5), square="long")
    assert np.allclose(rect, (170, 150, 364, 364, np.pi / 2), atol=1e-3)
    assert np.allclose(detect.roi_from_detection(d), (100, 150, 80, 140, 0))
    with pytest.raises(kestrel.InvalidArgumentError, match="square"):
        detect.roi_from_detection(d, square="round")
    m = kestrel.warp_matrix_from_rect(rect[:2], rect[2:4], rect[4], (224, 224))
    values = np.array([[112, 112, 8, 0, 2], [0, 0, 0, 0, 0]], np.float32)
    lm = detect.landmarks_decode(values, 2, values_per_landmark=5, to_image=m)
    assert lm.shape == (2, 5) and lm.dtype == np.float32
    assert np.allclose(lm[0, :3], (170, 150, 8 * 364 / 224), atol=1e-3)
    assert np.allclose(lm[0, 3:], (0.5, 1 / (1 + np.exp(-2))))
    assert np.allclose(lm[1, :2], (170 + 182, 150 - 182), atol=1e-3)  # the crop's top-left, turned clockwise
    with pytest.raises(kestrel.InvalidArgumentError, match="value_count"):
        detect.landmarks_decode(values, 3, values_per_landmark=5)
    with pytest.raises(kestrel.CorruptDataError):
        detect.landmarks_decode(np.array([np.nan, 0, 0], np.float32), 1)
