"""kestrel.aipp: config text parse/serialise, validation, recipes, static and dynamic execution into NumPy, and
dynamic AIPP parameters given to a model's context."""
import importlib.util

import numpy as np
import pytest

import kestrel
from conftest import AIPP_CFG, gradient_nv12, need


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


def two_item_dynamic():
    """Batch item 0: an 8x8 crop; item 1: a padded 6x6 crop; each with its own normalisation."""
    d = kestrel.aipp.Dynamic(batch_size=2)
    d.set_input_format("yuv420sp_u8")
    d.set_src_image_size(16, 16)
    d.set_csc("yuv2rgb_bt601_wide")
    d.set_crop(2, 4, 8, 8, batch_index=0)
    d.set_crop(4, 2, 6, 6, batch_index=1)
    d.set_padding(1, 1, 1, 1, batch_index=1)
    for k in range(2):
        d.set_mean([100 + 10 * k, 110, 120], batch_index=k)
        d.set_min([0.5, 0.25], batch_index=k)
        d.set_var_reci([0.0078125, 0.01, 0.02], batch_index=k)
    return d


def test_dynamic_equals_static_with_the_same_parameters():
    static = kestrel.aipp.Params.recipe("imagenet").to_dict()
    with kestrel.aipp.Dynamic() as d, gradient_nv12(32, 16) as img:
        d.set_input_format("yuv420sp_u8")
        d.set_csc(matrix=static["matrix"], output_bias=static["output_bias"], input_bias=static["input_bias"])
        d.set_mean(static["mean_chn"])
        d.set_min(static["min_chn"])
        d.set_var_reci(static["var_reci_chn"])
        assert d.batch_size == 1 and d.params().to_dict()["aipp_mode"] == "dynamic"
        want = kestrel.aipp.Params.recipe("imagenet").execute(img)
        assert np.array_equal(d.execute(img), want)


def test_dynamic_per_item_parameters_and_errors():
    with two_item_dynamic() as d, gradient_nv12(16, 16) as img:
        p0, p1 = d.params(0).to_dict(), d.params(1).to_dict()
        assert (p0["crop_size_w"], p1["crop_size_w"], p1["left_padding_size"]) == (8, 6, 1)
        assert p0["mean_chn"] == (100, 110, 120, 0) and p1["mean_chn"][0] == 110 and p1["var_reci_chn"][3] == 1.0
        out = d.execute([img, img])
        assert out.shape == (2, 3, 8, 8) and not np.array_equal(out[0], out[1])
        for bad in (lambda: d.set_crop(0, 0, 8, 8, batch_index=2), lambda: d.set_padding(33, 0, 0, 0),
                    lambda: d.set_mean([1 << 16]), lambda: d.set_mean([]), lambda: d.set_csc(),
                    lambda: d.set_csc("yuv2rgb_bt601_wide", matrix=[[1, 0, 0]] * 3),
                    lambda: d.set_input_format("raw10"), lambda: d.execute([img, img, img])):
            with pytest.raises(kestrel.InvalidArgumentError):
                bad()
    with pytest.raises(kestrel.ClosedError):
        d.set_rbuv_swap(True)
    with pytest.raises(kestrel.InvalidArgumentError):
        kestrel.aipp.Dynamic(batch_size=0)
    with pytest.raises(kestrel.InvalidArgumentError):
        kestrel.aipp.Dynamic(base=kestrel.aipp.Params())  # a static block


def relu_model_with_dynamic_aipp(tmp_path):
    """x [2, 3, 8, 8] -> Relu -> y, converted with a dynamic aipp_op on x (its parameters come at run time)."""
    need(importlib.util.find_spec("onnx"), "python3-onnx")
    from onnx import TensorProto, helper
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 8, 8])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    cfg = tmp_path / "dynamic.cfg"
    cfg.write_text("aipp_op {\n  aipp_mode: dynamic\n  related_input_rank: 0\n  max_src_image_size: 1536\n}\n")
    return kestrel.convert(model.SerializeToString(), insert_op_conf=cfg)


def test_model_runs_images_with_dynamic_aipp(tmp_path):
    kom = relu_model_with_dynamic_aipp(tmp_path)
    with kestrel.Model(kom) as m, m.context() as ctx, two_item_dynamic() as d, \
            gradient_nv12(16, 16) as a, gradient_nv12(16, 16) as b:
        np.asarray(b.plane(0))[:] = 255 - np.asarray(b.plane(0))
        assert "dynamic" in m.inputs[0].aipp
        with pytest.raises(kestrel.InvalidArgumentError, match="set_dynamic_aipp"):
            ctx.run_images([[a, b]])
        ctx.set_dynamic_aipp(0, d)
        want = np.maximum(d.execute([a, b]), 0)
        (got,) = ctx.run_images([[a, b]])
        assert np.array_equal(got, want)
        d.set_mean([0, 0, 0], batch_index=1)  # the context keeps its copy until given the parameters again
        assert np.array_equal(ctx.run_images([[a, b]])[0], want)
        ctx.set_dynamic_aipp("x", d)
        changed = ctx.run_images_async([[a, b]]).result(timeout=30)[0]
        assert np.array_equal(changed[0], want[0]) and not np.array_equal(changed[1], want[1])
        assert np.array_equal(changed, np.maximum(d.execute([a, b]), 0))
        m.set_dynamic_aipp(0, d)
        assert np.array_equal(m.run_images([[a, b]])[0], changed)
        ctx.set_dynamic_aipp(0, None)
        with pytest.raises(kestrel.InvalidArgumentError, match="set_dynamic_aipp"):
            ctx.run_images([[a, b]])
        for bad in ((1, d), (0, "params"), ("nope", d)):
            with pytest.raises((kestrel.InvalidArgumentError, kestrel.NotFoundError)):
                ctx.set_dynamic_aipp(*bad)
