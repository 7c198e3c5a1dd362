#!/usr/bin/env python3
"""face-search's Python twin: who is in these photos? The whole Kestrel pipeline on the public API:
JPEGD -> VPC letterbox 256x256 -> BlazeFace -> detect (anchors, decode, NMS, back to source pixels)
-> aligned 112x112 faces -> MobileFaceNet -> fv cosine top-1 -> OSD boxes and names -> JPEGE.

usage: face_search.py DETECTOR.kom EMBEDDER.kom [--enroll NAME=PHOTO[:FACE] ...] [--out DIR] [PHOTO ...]
The models are converted with their AIPP, as samples/face-search/demo.sh does (they take NV12 images).
It prints what samples/face-search prints for the same arguments: the same faces, names and cosines.
"""
import argparse
import math
import os
import sys

import numpy as np

import kestrel

SIZE, THRESHOLD = 256, 0.65  # BlazeFace's input; the cosine from which a face gets a name (args.h)
f32 = np.float32


def align(det, img):
    """The face warped onto ArcFace's 112x112 template (None: degenerate keypoints)."""
    try:
        return kestrel.detect.align_face(det, img)
    except kestrel.InvalidArgumentError:
        return None


class FaceSearch:
    def __init__(self, detector, embedder, detect_threshold):
        self.ch, self.detect_threshold = kestrel.Channel(), detect_threshold
        self.det, self.emb = kestrel.Model(detector), kestrel.Model(embedder)
        self.det_ctx, self.emb_ctx = self.det.context(), self.emb.context()
        if self.emb.batch_gears:
            self.emb_ctx.set_batch(1)
        self.anchors = kestrel.detect.anchors((SIZE, SIZE), [16, 32, 32, 32], min_scale=0.15625, max_scale=0.75,
                                              fixed_anchor_size=True)
        dim = self.emb_ctx.outputs[0].shape[-1]
        self.repo, self.names = kestrel.Repository(dim, metric="cosine"), []

    def close(self):
        for obj in (self.repo, self.emb_ctx, self.det_ctx, self.emb, self.det, self.ch):
            obj.close()

    def faces(self, img):
        """[(detection, embedding)] of one NV12 image, left to right."""
        boxed, (left, top, right, bottom) = self.ch.letterbox(img, (SIZE, SIZE))
        with boxed:
            scores16, scores8, boxes16, boxes8 = self.det_ctx.run_images([boxed])
        dets = kestrel.detect.decode([(scores16, boxes16), (scores8, boxes8)], self.anchors, score_threshold=self.detect_threshold,
                                     scales=[SIZE] * 4, num_keypoints=6)
        dets = kestrel.detect.nms(dets, iou_threshold=0.3, max_detections=64)
        paste_w, paste_h, src_w = f32(right - left + 1), f32(bottom - top + 1), f32(img.width & ~1)
        t = kestrel.detect.letterbox_transform((SIZE, SIZE), (left, top, paste_w, paste_h),
                                               (src_w, paste_h * src_w / paste_w))
        dets = sorted(kestrel.detect.transform(t, dets), key=lambda d: (d["x0"], d["y0"]))
        found = []
        for d in dets:
            face = align(d, img)
            if face is not None:
                with face:
                    found.append((d, self.emb_ctx.run_images([face])[0][0].copy()))
        return found

    def enroll(self, name, photo, which):
        with self.ch.decode_jpeg(photo) as img:
            faces = self.faces(img)
        if which is None:
            which = max(range(len(faces)), key=lambda i: area(faces[i][0]), default=None)
        if which is None or which >= len(faces):
            sys.exit(f"face_search.py: {photo}: no face {which if which is not None else ''} (of {len(faces)})")
        if name not in self.names:
            self.names.append(name)
        person = self.names.index(name)
        self.repo.add(person // 1024, person % 1024, faces[which][1])
        d = faces[which][0]
        print(f"enrolled {name}: {photo} face {which} of {len(faces)} at {box(d)}")

    def search(self, photo, out_dir):
        with self.ch.decode_jpeg(photo) as img:
            faces = self.faces(img)
            print(f"{photo}: {len(faces)} face{'' if len(faces) == 1 else 's'}")
            labels = []
            for i, (d, embedding) in enumerate(faces):
                hit = self.repo.search(embedding, k=1)
                who = self.names[hit[0]["id0"] * 1024 + hit[0]["id1"]] if len(hit) else None
                cos = hit[0]["distance"] if len(hit) else 0.0
                named = who is not None and cos >= THRESHOLD
                labels.append(f"{who} {cos:.2f}" if named else "unknown")
                what = f"{who}, cosine {cos:.3f}" if named else (
                    f"unknown (best {who}, cosine {cos:.3f})" if who else "unknown (nobody enrolled)")
                print(f"  face {i} at {box(d)}: {what}")
            if out_dir is not None:
                self.annotate(img, faces, labels, photo, out_dir)

    def annotate(self, img, faces, labels, photo, out_dir):
        w, h = img.width & ~1, img.height & ~1
        with kestrel.Image.alloc("nv12", w, h, stride_rule="jpege") as canvas:
            np.asarray(canvas.plane(0))[:] = np.asarray(img.plane(0))[:h, :w]
            np.asarray(canvas.plane(1))[:] = np.asarray(img.plane(1))[:h // 2, :w // 2]
            scale = 2 if w >= 800 else 1
            boxes = [(lround(d["x0"]), lround(d["y0"]), lround(d["x1"]) - lround(d["x0"]),
                      lround(d["y1"]) - lround(d["y0"]), (220, 60, 30) if label == "unknown" else (0, 170, 60), label)
                     for (d, _), label in zip(faces, labels)]
            kestrel.osd.draw_boxes(canvas, boxes, thickness=scale + 1, text_scale=scale)
            path = os.path.join(out_dir, os.path.splitext(os.path.basename(photo))[0] + "_annotated.jpg")
            with open(path, "wb") as f:
                f.write(self.ch.encode_jpeg(canvas, 90))
            print(f"wrote {path} ({w}x{h})")


def area(d):
    return (d["x1"] - d["x0"]) * (d["y1"] - d["y0"])


def box(d):
    return f"({d['x0']:.0f}, {d['y0']:.0f}) {d['x1'] - d['x0']:.0f}x{d['y1'] - d['y0']:.0f}"


def lround(v):  # C's lroundf: halves away from zero
    return int(math.copysign(math.floor(abs(float(v)) + 0.5), v))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("detector"), ap.add_argument("embedder"), ap.add_argument("photos", nargs="*")
    ap.add_argument("--enroll", action="append", default=[], metavar="NAME=PHOTO[:FACE]")
    ap.add_argument("--out", help="write <stem>_annotated.jpg here")
    ap.add_argument("--detect-threshold", type=float, default=0.65, help="BlazeFace score of a face (as face-search)")
    args = ap.parse_intermixed_args()
    app = FaceSearch(args.detector, args.embedder, args.detect_threshold)
    try:
        for spec in args.enroll:
            name, _, photo = spec.partition("=")
            stem, _, face = photo.rpartition(":")
            app.enroll(name, stem, int(face)) if face.isdigit() and stem else app.enroll(name, photo, None)
        for photo in args.photos:
            app.search(photo, args.out)
    except kestrel.Error as e:
        sys.exit(f"face_search.py: {e.message} ({e.status_name})")
    finally:
        app.close()


if __name__ == "__main__":
    main()
