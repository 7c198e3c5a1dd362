"""samples/python/face_search.py, face-search's Python twin, prints what the C sample prints on the demo
photos (faces, boxes, names, cosines) and writes the same annotated JPEGs, byte for byte."""
import os
import subprocess
import sys

import pytest

from conftest import SOURCE, need

ENROLL = ["ava=photo1.jpg:0", "mia=photo1.jpg:1", "zoe=photo1.jpg:2", "lea=photo2.jpg:0", "ivy=photo2.jpg:1"]
QUERIES = ["photo3.jpg", "photo4.jpg", "photo5.jpg", "photo6.jpg"]


def args(work, models, out):
    a = [str(m) for m in models]
    for e in ENROLL:
        a += ["--enroll", e.replace("=", "=" + str(work) + "/")]
    return a + ["--out", str(out)] + [str(work / q) for q in QUERIES]


def test_python_face_search_matches_the_c_sample(work, face_models, photos):
    c_app = os.environ.get("KES_FACE_SEARCH")
    need(c_app and os.path.exists(c_app), "the face-search sample (KES_FACE_SEARCH)")
    c_out, py_out = work / "c", work / "py"
    c_out.mkdir(exist_ok=True)
    py_out.mkdir(exist_ok=True)
    c = subprocess.run([c_app] + args(work, face_models, c_out), capture_output=True, text=True, check=True)
    py = subprocess.run([sys.executable, str(SOURCE / "samples/python/face_search.py")]
                        + args(work, face_models, py_out), capture_output=True, text=True, check=True)
    expected = c.stdout.replace(str(c_out), "OUT").splitlines()
    got = py.stdout.replace(str(py_out), "OUT").splitlines()
    assert got == expected
    # zoe (enrolled from photo 1) in photo 3 at face-search's cosine, whatever the other faces found.
    assert any(line.startswith(f"{work}/photo3.jpg: ") for line in got)
    assert any(line.endswith(": zoe, cosine 0.827") for line in got), got
    for q in QUERIES:
        name = q.replace(".jpg", "_annotated.jpg")
        assert (py_out / name).read_bytes() == (c_out / name).read_bytes(), name


def test_a_kestrel_error_is_reported_not_raised(work, face_models):
    py = subprocess.run([sys.executable, str(SOURCE / "samples/python/face_search.py"), *map(str, face_models),
                         str(work / "no-such-photo.jpg")], capture_output=True, text=True)
    assert py.returncode == 1 and "no-such-photo.jpg" in py.stderr and "KES_ERR_NOT_FOUND" in py.stderr
    assert "Traceback" not in py.stderr


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
