"""Shared fixtures of the kestrel pytest suite (run by ctest: python.<file>; see python/CMakeLists.txt).

Data the tests need beyond the package: the real models and photos of engine/tests/models/fetch_models.sh
(KES_MODEL_CACHE, default ~/.cache/kestrel/models) and Debian's ONNX node tests (libonnx-testdata). A
missing one skips its tests on a developer's machine and fails them under CI (KES_REQUIRE_TEST_DEPS=1).
"""
import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

import kestrel

CACHE = pathlib.Path(os.environ.get("KES_MODEL_CACHE", pathlib.Path.home() / ".cache/kestrel/models")) / "files"
ONNX_NODE = pathlib.Path("/usr/share/libonnx-testdata/data/node")
SOURCE = pathlib.Path(os.environ.get("KES_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
AIPP_CFG = SOURCE / "samples/face-search/aipp_rgb_centered.cfg"


def need(condition, what):
    """Skips (or, under CI, fails) a test whose dependency is missing."""
    if condition:
        return
    if os.environ.get("KES_REQUIRE_TEST_DEPS", "0") not in ("", "0"):
        pytest.fail(f"test dependency missing: {what}")
    pytest.skip(f"test dependency missing: {what}")


@pytest.fixture(scope="session")
def work():
    d = pathlib.Path(os.environ.get("KES_TEST_TMP", "/tmp/kestrel-python-tests")) / f"w{os.getpid()}"
    d.mkdir(parents=True, exist_ok=True)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def add_model():
    """ONNX's test_add (x + y, float32 [3, 4, 5]) converted to .kom bytes."""
    path = ONNX_NODE / "test_add/model.onnx"
    need(path.exists(), path)
    return kestrel.convert(str(path))


@pytest.fixture(scope="session")
def blazeface128():
    path = CACHE / "blazeface_128.onnx"
    need(path.exists(), f"{path} (engine/tests/models/fetch_models.sh)")
    return kestrel.convert(path)


@pytest.fixture(scope="session")
def face_models(work):
    """BlazeFace 256 and MobileFaceNet converted as demo.sh does (their AIPP inserted: NV12 in)."""
    bf, mfn = CACHE / "blazeface_256.onnx", CACHE / "mobilefacenet.tflite"
    need(bf.exists() and mfn.exists(), f"{bf}, {mfn} (engine/tests/models/fetch_models.sh)")
    kestrel.convert(bf, work / "bf.kom", insert_op_conf=AIPP_CFG)
    kestrel.convert(mfn, work / "mfn.kom", dynamic_batch=[1, 2], insert_op_conf=AIPP_CFG)
    return work / "bf.kom", work / "mfn.kom"


@pytest.fixture(scope="session")
def photos(work):
    """The face-api sample photos as JPEG (cjpeg -quality 92, as make_demo_data.sh makes them)."""
    need(shutil.which("cjpeg"), "cjpeg (libjpeg-turbo-progs)")
    out = []
    for i in range(1, 7):
        ppm = CACHE / f"photo{i}.ppm"
        need(ppm.exists(), f"{ppm} (engine/tests/models/fetch_models.sh)")
        jpg = work / f"photo{i}.jpg"
        if not jpg.exists():
            subprocess.run(["cjpeg", "-quality", "92", "-outfile", str(jpg), str(ppm)], check=True)
        out.append(jpg)
    return out


@pytest.fixture
def channel():
    with kestrel.Channel() as ch:
        yield ch


def gradient_nv12(width, height):
    """A tight NV12 image with a luma ramp and constant chroma."""
    img = kestrel.Image.alloc("nv12", width, height)
    y = np.asarray(img.plane(0))
    y[:] = (np.arange(width)[None, :] + np.arange(height)[:, None]) % 256
    np.asarray(img.plane(1))[:] = (100, 160)
    return img
