"""kestrel.VideoWriter and kestrel.VideoReader: NV12 frames to H.264 and back, as an iterator and in packet
mode, with health and errors."""
import numpy as np
import pytest

import kestrel


def write_clip(path, frames=12, container="mp4"):
    with kestrel.VideoWriter(path, 160, 128, fps=(25, 1), container=container, gop=4) as venc:
        for i in range(frames):
            with kestrel.Image.alloc("nv12", 160, 128, stride_rule="jpege") as img:
                np.asarray(img.plane(0))[:] = 16 + 16 * i
                np.asarray(img.plane(1))[:] = 128
                venc.write(img)
        assert venc.counts[0] == frames
    return path


def test_write_then_iterate_frames(tmp_path):
    clip = write_clip(tmp_path / "clip.mp4")
    with kestrel.VideoReader(clip) as vdec:
        info = vdec.info
        assert (info["codec"], info["width"], info["height"], info["fps"]) == ("h264", 160, 128, (25, 1))
        lumas = []
        for frame in vdec:
            with frame:
                assert frame.image.format == "nv12" and frame.pts is not None
                lumas.append(int(np.asarray(frame.image.plane(0)).mean()))
        assert len(lumas) == 12 and abs(lumas[0] - 16) <= 3 and abs(lumas[-1] - 192) <= 3
        assert vdec.read() is None  # the end stays the end
        assert vdec.health()["state"] == "ended" and vdec.stats()["frames_delivered"] == 12


def test_packet_mode(tmp_path):
    stream = write_clip(tmp_path / "clip.h264", frames=6, container="annexb").read_bytes()
    with kestrel.VideoReader(None, codec="h264") as vdec:
        got = []
        for i in range(0, len(stream), 500):
            vdec.send(stream[i:i + 500])
            while (f := vdec.receive()) is not None:
                got.append(f)
        vdec.send(None)
        while (f := vdec.receive()) is not None:
            got.append(f)
        assert len(got) == 6 and got[0].image.width == 160
        with pytest.raises(kestrel.InvalidArgumentError):
            vdec.send(b"\0\0\1")  # after the end


def test_errors_and_close(tmp_path):
    with pytest.raises(kestrel.NotFoundError):
        kestrel.VideoReader(tmp_path / "missing.mp4")
    (tmp_path / "junk.mp4").write_bytes(b"\0" * 4096)
    with pytest.raises((kestrel.CorruptDataError, kestrel.UnsupportedError, kestrel.IoError)):
        kestrel.VideoReader(tmp_path / "junk.mp4")
    with pytest.raises(kestrel.InvalidArgumentError):
        kestrel.VideoReader(None)  # packet mode needs a codec
    with pytest.raises(kestrel.InvalidArgumentError):
        kestrel.VideoWriter(tmp_path / "odd.mp4", 161, 128)
    venc = kestrel.VideoWriter(tmp_path / "a.mp4", 160, 128)
    with kestrel.Image.alloc("nv12", 64, 64) as small:
        with pytest.raises(kestrel.InvalidArgumentError):
            venc.write(small)
    venc.close()
    with pytest.raises(kestrel.ClosedError):
        venc.counts
    vdec = kestrel.VideoReader(write_clip(tmp_path / "b.mp4", frames=2))
    vdec.close()
    with pytest.raises(kestrel.ClosedError):
        next(iter(vdec))
    with pytest.raises(kestrel.ClosedError):
        vdec.health()
