"""main.c's face alignment in NumPy, for a Kestrel without kestrel.detect.align_face (kes_detect_align_face,
which lands in detect.h): the least-squares similarity onto ArcFace's 112x112 template and a bilinear warp
of the NV12 planes, computed in float32 in the C code's order so that the pixels are the C sample's.
face_search.py uses kestrel.detect.align_face when the library has it; then this file can go."""
import numpy as np

import kestrel

f32 = np.float32
TEMPLATE = np.array([[38.2946, 51.6963], [73.5318, 51.5014], [56.0252, 71.7366], [56.1396, 92.2848]], np.float32)


def bilinear(plane, w, h, x, y):
    """main.c's sample(): bilinear at (x, y), clamped to the plane, in float32 as the C code computes."""
    x, y = np.minimum(np.maximum(x, f32(0)), f32(w - 1)), np.minimum(np.maximum(y, f32(0)), f32(h - 1))
    x0, y0 = x.astype(np.uint32), y.astype(np.uint32)
    x1, y1 = np.where(x0 + 1 < w, x0 + 1, x0), np.where(y0 + 1 < h, y0 + 1, y0)
    fx, fy = x - x0.astype(f32), y - y0.astype(f32)
    top = plane[y0, x0].astype(f32) * (f32(1) - fx) + plane[y0, x1].astype(f32) * fx
    bottom = plane[y1, x0].astype(f32) * (f32(1) - fx) + plane[y1, x1].astype(f32) * fx
    return top * (f32(1) - fy) + bottom * fy


def align(det, img):
    """The face warped onto the template, or None for degenerate keypoints (main.c's align_face)."""
    kp, pm, qm = det["keypoints"][:4], [f32(0)] * 2, [f32(0)] * 2
    for i in range(4):
        for c in range(2):
            pm[c] += kp[i][c] / f32(4)
            qm[c] += TEMPLATE[i][c] / f32(4)
    num_a = num_b = den = f32(0)
    for i in range(4):
        px, py, qx, qy = kp[i][0] - pm[0], kp[i][1] - pm[1], TEMPLATE[i][0] - qm[0], TEMPLATE[i][1] - qm[1]
        num_a, num_b, den = num_a + (px * qx + py * qy), num_b + (px * qy - py * qx), den + (px * px + py * py)
    if den < f32(1e-3):
        return None
    a, b = num_a / den, num_b / den
    norm, tx, ty = a * a + b * b, qm[0] - (a * pm[0] - b * pm[1]), qm[1] - (b * pm[0] + a * pm[1])
    if norm < f32(1e-8):
        return None
    v, u = np.mgrid[0:112, 0:112].astype(f32)
    qx, qy = u - tx, v - ty
    x, y = (a * qx + b * qy) / norm, (-b * qx + a * qy) / norm
    out = kestrel.Image.alloc("nv12", 112, 112, stride_rule="vpc")
    ys, uvs = np.asarray(img.plane(0)), np.asarray(img.plane(1))
    np.asarray(out.plane(0))[:] = (bilinear(ys, img.width, img.height, x, y) + f32(0.5)).astype(np.uint8)
    cw, ch = (img.width + 1) // 2, (img.height + 1) // 2
    for c in range(2):
        xs, yc = x[::2, ::2] / f32(2), y[::2, ::2] / f32(2)
        np.asarray(out.plane(1))[:, :, c] = (bilinear(uvs[:, :, c], cw, ch, xs, yc) + f32(0.5)).astype(np.uint8)
    return out
