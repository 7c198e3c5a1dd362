"""kestrel.aipp: config text parse/serialise, validation, recipes and static execution into NumPy."""
import numpy as np
import pytest

import kestrel
from conftest import AIPP_CFG, gradient_nv12


def test_parse_serialize_round_trip():
    (params,) = kestrel.aipp.load(AIPP_CFG)
    d = params.to_dict()
    assert d["aipp_mode"] == "static" and d["input_format"] == "yuv420sp_u8" and d["csc_switch"] == 1
    (again,) = kestrel.aipp.parse(params.serialize())
    assert again.to_dict() == d
    with pytest.raises(kestrel.InvalidArgumentError, match="line"):
        kestrel.aipp.parse("aipp_op {\n aipp_mode : static\n no_such_field : 1\n}\n", "mine.cfg")
    with pytest.raises(kestrel.NotFoundError):
        kestrel.aipp.load("/nonexistent/aipp.cfg")


def test_recipe_and_execute_into_numpy():
    p = kestrel.aipp.Params.recipe("rgb_centered")
    p.validate()
    with gradient_nv12(64, 32) as img:
        assert p.predict_output(64, 32) == (64, 32, 3)
        out = p.execute(img)
        assert out.shape == (1, 3, 32, 64) and out.dtype == np.float32
        assert -1.01 <= out.min() and out.max() <= 1.01
        nhwc = p.execute([img, img], dtype="uint8", layout="NHWC")
        assert nhwc.shape == (2, 32, 64, 3) and nhwc.dtype == np.uint8 and np.array_equal(nhwc[0], nhwc[1])
        with pytest.raises(kestrel.InvalidArgumentError):
            p.execute(img, layout="CHWN")
        with pytest.raises(kestrel.InvalidArgumentError):
            p.execute(img, dtype="complex64")


def test_fields_by_name_and_their_rules():
    p = kestrel.aipp.Params(input_format="rgb888_u8", crop=1, load_start_pos_w=2, crop_size_w=8, crop_size_h=4)
    p.validate()
    assert p.predict_output(16, 16) == (8, 4, 3)
    p.update(input_format="yuv420sp_u8", load_start_pos_w=3)
    with pytest.raises(kestrel.InvalidArgumentError, match="even"):
        p.validate()
    with pytest.raises(kestrel.InvalidArgumentError):
        kestrel.aipp.Params(no_such_field=1)
    with pytest.raises(kestrel.InvalidArgumentError):
        kestrel.aipp.Params(input_format="jpeg")
    with pytest.raises(kestrel.InvalidArgumentError):
        kestrel.aipp.Params(matrix=[[1, 2]])
