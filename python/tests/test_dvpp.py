"""kestrel.Channel: JPEG/PNG decode (bytes and paths), JPEG encode, VPC, OSD, and their errors."""
import struct
import threading
import zlib

import numpy as np
import pytest

import kestrel
from conftest import gradient_nv12


def png_bytes(rgb):
    """A minimal RGB PNG of an [h, w, 3] uint8 array (zlib and struct only)."""
    h, w, _ = rgb.shape
    raw = b"".join(b"\0" + rgb[y].tobytes() for y in range(h))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def encoded(channel, width=96, height=64):
    with kestrel.Image.alloc("nv12", width, height, stride_rule="jpege") as img:
        np.asarray(img.plane(0))[:] = 128
        np.asarray(img.plane(1))[:] = 128
        np.asarray(img.plane(0))[:, : width // 2] = 30
        return channel.encode_jpeg(img, 95)


def test_jpeg_round_trip_from_bytes_and_path(channel, tmp_path):
    jpeg = encoded(channel)
    assert jpeg[:2] == b"\xff\xd8"
    info = channel.jpeg_info(jpeg, "nv12")
    assert (info["width"], info["height"], info["subsampling"]) == (96, 64, "420")
    path = tmp_path / "a.jpg"
    path.write_bytes(jpeg)
    for source in (jpeg, bytearray(jpeg), memoryview(jpeg), np.frombuffer(jpeg, np.uint8), path, str(path)):
        with channel.decode_jpeg(source) as img:
            y = np.asarray(img.plane(0))
            assert img.format == "nv12" and (img.width, img.height) == (96, 64)
            assert img.width_stride == info["width_stride"]
            assert abs(int(y[10, 10]) - 30) <= 3 and abs(int(y[10, 80]) - 128) <= 3
    with channel.decode_jpeg(jpeg, "rgb888") as rgb:
        assert np.asarray(rgb.plane(0)).shape == (64, 96, 3)
    with channel.decode_jpeg(jpeg, scale_to=(24, 16)) as small:
        assert (small.width, small.height) == (24, 16)


def test_decode_errors_are_typed(channel, tmp_path):
    with pytest.raises(kestrel.CorruptDataError):
        channel.decode_jpeg(b"\xff\xd8" + bytes(200))
    with pytest.raises(kestrel.NotFoundError):
        channel.decode_jpeg(tmp_path / "missing.jpg")
    with pytest.raises(kestrel.InvalidArgumentError, match="None"):
        channel.decode_jpeg(None)
    with pytest.raises(kestrel.InvalidArgumentError, match="bytes-like"):
        channel.decode_jpeg(12345)
    with pytest.raises(kestrel.InvalidArgumentError, match="contiguous"):
        channel.decode_jpeg(np.frombuffer(encoded(channel), np.uint8)[::2])
    with pytest.raises(kestrel.InvalidArgumentError):
        channel.decode_jpeg(encoded(channel), "nv13")


def test_png_decode(channel, tmp_path):
    rgb = np.zeros((40, 50, 3), np.uint8)
    rgb[:, :, 0] = 200
    rgb[5, 7] = (1, 2, 3)
    data = png_bytes(rgb)
    with channel.decode_png(data) as img:
        got = np.asarray(img.plane(0))
        assert img.format == "rgb888" and got.shape == (40, 50, 3)
        assert (got == rgb).all()
    (tmp_path / "a.png").write_bytes(data)
    with channel.decode_png(tmp_path / "a.png", "rgba8888") as img:
        assert np.asarray(img.plane(0))[5, 7].tolist() == [1, 2, 3, 255]
    with pytest.raises(kestrel.CorruptDataError):
        channel.decode_png(data[:-20] + bytes(20))


def test_vpc_crop_resize_letterbox_batch_and_colour(channel):
    with gradient_nv12(128, 96) as img:
        with channel.crop_resize(img, (64, 48)) as half:
            assert (half.width, half.height) == (64, 48)
        boxed, paste = channel.letterbox(img, (64, 64), fill=(0, 128, 128))
        with boxed:
            left, top, right, bottom = paste
            assert (right - left + 1, bottom - top + 1) == (64, 48)
            assert np.asarray(boxed.plane(0))[0].max() == 0  # the padding row
        crops = channel.batch_crop([img], [(0, (0, 0, 63, 47), (32, 24)), (0, (64, 48, 127, 95), (16, 12))])
        assert [(c.width, c.height) for c in crops] == [(32, 24), (16, 12)]
        for c in crops:
            c.close()
        with channel.convert_color(img, "rgb888") as rgb:
            assert np.asarray(rgb.plane(0)).shape == (96, 128, 3)
        with kestrel.Image.alloc("nv12", 128, 96, stride_rule="vpc") as canvas:
            np.asarray(canvas.plane(0))[:] = 0
            channel.crop_and_paste(img, canvas, paste=(64, 48, 127, 95))
            assert np.asarray(canvas.plane(0))[:48].max() == 0 and np.asarray(canvas.plane(0))[60:, 70:].max() > 0


def test_vpc_rules_raise(channel):
    with gradient_nv12(128, 96) as img:
        with pytest.raises(kestrel.InvalidArgumentError):
            channel.crop_resize(img, (64, 48), roi=(0, 0, 500, 500))
        with pytest.raises(kestrel.InvalidArgumentError, match="left, top, right, bottom"):
            channel.crop_resize(img, (64, 48), roi=(0, 0))
        with pytest.raises(kestrel.InvalidArgumentError):
            channel.crop_resize(img, (1 << 31, 48))
        with pytest.raises(kestrel.InvalidArgumentError):
            channel.crop_resize(img, (64, 48), interp="cubic")
        with pytest.raises(kestrel.UnsupportedError):
            with channel.convert_color(img, "rgb888") as rgb:
                channel.crop_resize(rgb, (64, 48))
        with pytest.raises(TypeError):
            channel.crop_resize(None, (64, 48))
    with kestrel.Channel(board="310") as ch310, gradient_nv12(128, 96) as img:
        assert ch310.board == "310"
        with pytest.raises(kestrel.InvalidArgumentError, match="odd|even|parity"):
            ch310.crop_resize(img, (64, 48), roi=(1, 0, 64, 47))  # 310: left must be even


def test_osd_draws_boxes_lines_and_text():
    with kestrel.Image.alloc("nv12", 160, 120) as img:
        y = np.asarray(img.plane(0))
        y[:] = 0
        np.asarray(img.plane(1))[:] = 128
        kestrel.osd.draw_boxes(img, [(20, 40, 60, 40, (255, 255, 255), "zoe 0.83")])
        assert y[40:80, 20].min() == 255 and y[50, 50] == 0 and y[24:40, 20:80].max() == 255  # label plate
        kestrel.osd.draw_line(img, 0, 110, 159, 110, (255, 255, 255))
        assert y[110].min() == 255
        kestrel.osd.draw_text(img, 100, 0, "A", (255, 255, 255))
        assert y[0:16, 100:108].max() == 255
        assert kestrel.osd.text_size("ab", 2) == (32, 32)
        assert kestrel.osd.color((255, 0, 0)) == (76, 85, 255, 255)
        with pytest.raises(kestrel.InvalidArgumentError, match="boxes\\[0\\]|thickness"):
            kestrel.osd.draw_boxes(img, [(0, 0, 10, 10, (0, 0, 0))], thickness=0)
        with pytest.raises(kestrel.InvalidArgumentError):
            kestrel.osd.draw_rect(img, 0, 0, 5, 5, (300, 0, 0))
    with kestrel.Image.alloc("rgb888", 16, 16) as rgb:
        with pytest.raises(kestrel.UnsupportedError):
            kestrel.osd.draw_rect(rgb, 0, 0, 5, 5, (255, 0, 0))


def test_closed_channel_raises_and_close_waits_for_a_running_call(channel):
    jpeg = encoded(channel, 1024, 768)
    ch = kestrel.Channel()
    results = []

    def decode_many():
        try:
            for _ in range(20):
                ch.decode_jpeg(jpeg).close()
            results.append("done")
        except kestrel.ClosedError:
            results.append("closed")
    t = threading.Thread(target=decode_many)
    t.start()
    ch.close()  # never frees the channel under a running decode
    t.join()
    assert results and results[0] in ("done", "closed")
    with pytest.raises(kestrel.ClosedError):
        ch.decode_jpeg(jpeg)
    assert ch.closed


def test_default_channel_is_per_thread():
    mine = kestrel.default_channel()
    assert kestrel.default_channel() is mine
    other = []
    t = threading.Thread(target=lambda: other.append(kestrel.default_channel()))
    t.start()
    t.join()
    assert other[0] is not mine


def test_warp_affine_crops_and_turns(channel):
    with gradient_nv12(64, 48) as img:
        # A whole-pixel translation is a crop.
        with channel.warp_affine(img, (1, 0, 10, 0, 1, 6), (20, 12)) as out:
            assert (out.width, out.height) == (20, 12)
            assert np.array_equal(np.asarray(out.plane(0)), np.asarray(img.plane(0))[6:18, 10:30])
            assert np.array_equal(np.asarray(out.plane(1)), np.asarray(img.plane(1))[3:9, 5:15])
        # A quarter turn clockwise of the 16x16 square centred at (32, 24): output (i, j) is input (39 - j, 16 + i).
        m = kestrel.warp_matrix_from_rect((32, 24), (16, 16), np.pi / 2, (16, 16))
        with channel.warp_affine(img, m, (16, 16)) as out:
            src = np.asarray(img.plane(0))
            assert np.array_equal(np.asarray(out.plane(0)), src[16:32, 24:40][:, ::-1].T)
        inv = kestrel.warp_matrix_invert(m)
        def full(t):
            return np.array([t[:3], t[3:], (0, 0, 1)])
        assert np.allclose(full(inv) @ full(m), np.eye(3), atol=1e-5)
        # Outside the image: the fill, or the edge.
        with channel.warp_affine(img, (1, 0, 500, 0, 1, 0), (16, 16), fill=(9, 20, 30)) as out:
            assert (np.asarray(out.plane(0)) == 9).all()
            assert (np.asarray(out.plane(1)) == (20, 30)).all()
        with channel.warp_affine(img, (1, 0, 500, 0, 1, 0), (16, 16), border="replicate") as out:
            assert (np.asarray(out.plane(0))[0] == np.asarray(img.plane(0))[0, -1]).all()
        with pytest.raises(kestrel.InvalidArgumentError, match="singular"):
            channel.warp_affine(img, (1, 2, 0, 2, 4, 0), (16, 16))
        with pytest.raises(kestrel.InvalidArgumentError, match="six numbers"):
            channel.warp_affine(img, (1, 0, 0), (16, 16))
        with pytest.raises(kestrel.InvalidArgumentError, match="border"):
            channel.warp_affine(img, (1, 0, 0, 0, 1, 0), (16, 16), border="wrap")


def test_osd_blend_mask_backgrounds():
    with gradient_nv12(64, 48) as img:
        ones = np.ones((1, 24, 32, 1), np.float32)  # MediaPipe's [1, H, W, 1]
        before = np.asarray(img.plane(0)).copy()
        kestrel.osd.blend_mask(img, ones)
        assert np.array_equal(np.asarray(img.plane(0)), before)
        # Left half person (kept), right half background (red): the mask is upsampled over the whole frame.
        mask = np.zeros((24, 32), np.uint8)
        mask[:, :16] = 255
        kestrel.osd.blend_mask(img, mask, background=(255, 0, 0))
        y = np.asarray(img.plane(0))
        assert np.array_equal(y[:, :31], before[:, :31])
        assert (y[:, 33:] == kestrel.osd.color((255, 0, 0))[0]).all()
        with gradient_nv12(64, 48) as other:
            kestrel.osd.blend_mask(img, np.zeros((24, 32), np.float32), background=other)
            assert np.array_equal(np.asarray(img.plane(0)), np.asarray(other.plane(0)))
        with pytest.raises(kestrel.CorruptDataError):
            kestrel.osd.blend_mask(img, np.full((4, 4), np.nan, np.float32))
        with pytest.raises(kestrel.InvalidArgumentError, match="height, width"):
            kestrel.osd.blend_mask(img, np.zeros((2, 4, 4), np.float32))
        with pytest.raises(kestrel.InvalidArgumentError, match="blur_radius"):
            kestrel.osd.blend_mask(img, ones, blur_radius=0)
