"""kestrel.Image: allocation with the boards' stride rules, wrapping caller memory, zero-copy plane views,
deterministic release and its errors."""
import gc
import weakref

import numpy as np
import pytest

import kestrel


def test_alloc_uses_the_board_strides():
    ws, hs = kestrel.Image.strides("nv12", 1000, 600, rule="vpc", board="310")
    assert (ws, hs) == (1008, 600)
    assert kestrel.Image.strides("nv12", 1920, 1080, rule="jpegd", board="310") == (1920, 1088)
    with kestrel.Image.alloc("nv12", 1000, 600, width_stride=ws, height_stride=hs) as img:
        assert (img.format, img.width, img.height, img.width_stride, img.planes) == ("nv12", 1000, 600, 1008, 2)
        assert img.size >= 1008 * 600 * 3 // 2 and img.memory == "host"


def test_plane_views_show_the_strides_without_copying():
    with kestrel.Image.alloc("nv12", 100, 60, width_stride=128, height_stride=64) as img:
        y, uv = np.asarray(img.plane(0)), np.asarray(img.plane(1))
        assert y.shape == (60, 100) and y.strides == (128, 1)
        assert uv.shape == (30, 50, 2) and uv.strides == (128, 2, 1)
        whole = np.asarray(img.buffer())
        assert whole.shape == (img.size,)
        y[3, 5] = 77  # written through NumPy ...
        assert whole[3 * 128 + 5] == 77  # ... is the image's byte
        assert np.shares_memory(y, whole)
    with kestrel.Image.alloc("rgb888", 10, 4) as rgb:
        assert np.asarray(rgb.plane(0)).shape == (4, 10, 3)


def test_a_pixel_written_through_numpy_is_seen_by_c(channel):
    with kestrel.Image.alloc("nv12", 64, 64) as img:
        np.asarray(img.plane(0))[:] = 0
        np.asarray(img.plane(1))[:] = 128
        np.asarray(img.plane(0))[10:12, 20:22] = 255
        with channel.crop_resize(img, (32, 32), roi=(20, 10, 21, 11), interp="nearest") as crop:
            assert (np.asarray(crop.plane(0)) == 255).all()  # VPC read the pixels NumPy wrote


def test_a_pixel_written_by_c_is_seen_through_numpy():
    with kestrel.Image.alloc("nv12", 64, 64) as img:
        y = np.asarray(img.plane(0))
        y[:] = 0
        kestrel.osd.draw_rect(img, 8, 8, 16, 16, (255, 255, 255), fill=True)
        assert (y[8:24, 8:24] == 255).all() and y[7].max() == 0 and y[:, 24].max() == 0


def test_wrap_borrows_a_numpy_buffer():
    buf = np.zeros(32 * 16 * 3 // 2, np.uint8)
    img = kestrel.Image.wrap(buf, "nv12", 32, 16)
    kestrel.osd.draw_rect(img, 0, 0, 2, 2, (255, 255, 255), fill=True)
    assert buf[0] == 255  # drawn into the caller's array
    img.close()
    with pytest.raises(kestrel.InvalidArgumentError, match="writable"):
        kestrel.Image.wrap(bytes(768), "nv12", 32, 16)
    with pytest.raises(kestrel.InvalidArgumentError, match="contiguous"):
        kestrel.Image.wrap(np.zeros((48, 64), np.uint8)[:, ::2], "nv12", 32, 16)
    with pytest.raises(kestrel.InvalidArgumentError):
        kestrel.Image.wrap(np.zeros(100, np.uint8), "nv12", 32, 16)  # too small for the planes
    with pytest.raises(kestrel.InvalidArgumentError):
        kestrel.Image.wrap(None, "nv12", 32, 16)


def test_close_frees_now_and_later_use_raises():
    img = kestrel.Image.alloc("nv12", 64, 64)
    img.close()
    img.close()  # idempotent
    assert img.closed and "closed" in repr(img)
    for use in (lambda: img.width, lambda: img.plane(0), lambda: img.copy(), lambda: img.buffer()):
        with pytest.raises(kestrel.ClosedError):
            use()


def test_a_view_keeps_the_pixels_after_close():
    img = kestrel.Image.alloc("nv12", 64, 64)
    y = np.asarray(img.plane(0))
    y[:] = 9
    img.close()
    assert (y == 9).all()  # still valid memory: the view holds its share
    view = img  # noqa: F841  the Image object itself no longer owns anything
    del y
    gc.collect()


def test_the_image_object_is_released_without_the_gc():
    img = kestrel.Image.alloc("nv12", 64, 64)
    ref = weakref.ref(img)
    del img
    assert ref() is None  # reference counting alone frees it


def test_bad_arguments_raise_instead_of_crashing():
    with pytest.raises(kestrel.InvalidArgumentError):
        kestrel.Image.alloc("nv12", 0, 16)
    with pytest.raises(kestrel.InvalidArgumentError):
        kestrel.Image.alloc("nv12", 1 << 20, 1 << 20)
    with pytest.raises(kestrel.InvalidArgumentError, match="unknown pixel format"):
        kestrel.Image.alloc("nv13", 16, 16)
    with pytest.raises(kestrel.InvalidArgumentError):
        kestrel.Image.alloc("nv12", 16, 16, width_stride=15)
    with pytest.raises(kestrel.InvalidArgumentError):
        kestrel.Image.alloc("nv12", 16, 16, stride_rule="sideways")
    with kestrel.Image.alloc("nv12", 16, 16) as img:
        with pytest.raises(kestrel.InvalidArgumentError):
            img.plane(2)
    with pytest.raises(TypeError):
        kestrel.Image.alloc("nv12", -1, 16)
