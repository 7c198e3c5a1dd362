"""kestrel.Model / Context / convert: loading, description, run on NumPy arrays and images, gears, profiles,
argument errors and deterministic release."""
import concurrent.futures
import threading
import weakref

import numpy as np
import pytest

import kestrel
from conftest import ONNX_NODE, gradient_nv12, need


def test_convert_to_bytes_and_to_a_file(tmp_path, add_model):
    assert isinstance(add_model, bytes) and len(add_model) > 0
    summary = kestrel.convert(ONNX_NODE / "test_add/model.onnx", tmp_path / "add.kom", board="310B")
    assert summary["ops"] == 1 and summary["file_bytes"] == (tmp_path / "add.kom").stat().st_size
    onnx = (ONNX_NODE / "test_add/model.onnx").read_bytes()
    assert kestrel.convert(onnx, input_shape={"x": [3, 4, 5]}, format="onnx")[:8] == add_model[:8]


def test_convert_errors(tmp_path):
    with pytest.raises(kestrel.CorruptDataError):
        kestrel.convert(b"definitely not a model")
    with pytest.raises(kestrel.NotFoundError):
        kestrel.convert(tmp_path / "missing.onnx", tmp_path / "out.kom")
    with pytest.raises(kestrel.InvalidArgumentError):
        kestrel.convert(b"x", weight_type="f8")
    with pytest.raises(kestrel.InvalidArgumentError):
        kestrel.convert(None)
    need((ONNX_NODE / "test_add/model.onnx").exists(), "libonnx-testdata")
    with pytest.raises(kestrel.InvalidArgumentError, match="nope"):
        kestrel.convert(ONNX_NODE / "test_add/model.onnx", input_shape="nope:1,2")


def test_model_from_bytes_and_path_describes_itself(tmp_path, add_model):
    (tmp_path / "add.kom").write_bytes(add_model)
    for source, mmap in ((add_model, False), (tmp_path / "add.kom", False), (str(tmp_path / "add.kom"), True)):
        with kestrel.Model(source, mmap=mmap) as m:
            assert [i.name for i in m.inputs] == ["x", "y"] and [o.name for o in m.outputs] == ["sum"]
            assert m.inputs[0].shape == (3, 4, 5) and m.inputs[0].dtype == np.float32 and m.inputs[0].aipp is None
            assert m.metadata["source_format"] == "onnx" and m.batch_gears == [] and m.image_sizes == []
            assert m.layer_count == 1 and m.memory["work_bytes"] > 0
    with pytest.raises(kestrel.CorruptDataError):
        kestrel.Model(add_model[:40])
    with pytest.raises(kestrel.NotFoundError):
        kestrel.Model(tmp_path / "missing.kom")
    with pytest.raises(kestrel.InvalidArgumentError):
        kestrel.Model(add_model, mmap=True)


def test_run_takes_lists_dicts_and_fills_outputs(add_model):
    x = np.random.default_rng(1).standard_normal((3, 4, 5)).astype(np.float32)
    y = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    with kestrel.Model(add_model) as m:
        (out,) = m.run([x, y])
        assert out.dtype == np.float32 and out.shape == (3, 4, 5) and np.array_equal(out, x + y)
        assert np.array_equal(m.run({"y": y, "x": x})[0], x + y)
        assert np.array_equal(m.run([x.astype(np.float64), y.tolist()])[0], x + y)  # converted copies
        xt = np.asfortranarray(x)
        assert np.array_equal(m.run([xt, y])[0], x + y)  # non-contiguous: copied
        mine = np.empty((3, 4, 5), np.float32)
        assert m.run([x, y], outputs=[mine])[0] is mine and np.array_equal(mine, x + y)


def test_run_argument_errors(add_model):
    x = np.zeros((3, 4, 5), np.float32)
    with kestrel.Model(add_model) as m:
        cases = [
            ([x], "2 inputs"),
            (x, "2 inputs"),
            ([x, None], "None"),
            ([x, np.zeros((3, 4, 6), np.float32)], "y|shape"),
            ([x, np.zeros((3, 4, 5), np.complex64)], "float32"),
            ([x, np.array(["a"] * 60).reshape(3, 4, 5)], "float32"),
            ([x, [[1, 2], [3]]], "not an array|float32"),
            ({"x": x}, "'y'"),
            ({"x": x, "y": x, "z": x}, "'z'"),
            ([x, np.zeros((1,) * 9, np.float32)], "at most 8"),
            ([x, kestrel.Image.alloc("nv12", 16, 16)], "image"),
        ]
        for inputs, message in cases:
            with pytest.raises(kestrel.InvalidArgumentError, match=message):
                m.run(inputs)
        for outputs in ([np.empty((3, 4, 5), np.float64)], [np.empty((3, 4, 5), np.float32)[::1].T],
                        [], [None], "nope"):
            with pytest.raises(kestrel.InvalidArgumentError):
                m.run([x, x], outputs=outputs)


def test_close_destroys_contexts_and_later_use_raises(add_model):
    x = np.zeros((3, 4, 5), np.float32)
    m = kestrel.Model(add_model)
    ctx = m.context(threads=1)
    assert ctx.threads == 1 and ctx.inputs[1].name == "y"
    ctx.run([x, x])
    m.close()
    assert m.closed and ctx.closed
    for use in (lambda: ctx.run([x, x]), lambda: m.run([x, x]), lambda: m.inputs, lambda: m.context(),
                lambda: ctx.set_batch(1)):
        with pytest.raises(kestrel.ClosedError):
            use()
    m.close()
    ctx.close()
    m2 = kestrel.Model(add_model)
    ref = weakref.ref(m2)
    del m2
    assert ref() is None


def test_close_waits_for_a_running_execution(blazeface128):
    m = kestrel.Model(blazeface128)
    ctx = m.context(threads=1)
    x = np.zeros(ctx.inputs[0].shape, np.float32)
    outcome = []

    def runs():
        try:
            for _ in range(50):
                ctx.run(x)
            outcome.append("done")
        except kestrel.ClosedError:
            outcome.append("closed")
    t = threading.Thread(target=runs)
    t.start()
    m.close()
    t.join()
    assert outcome and outcome[0] in ("done", "closed")


def test_blazeface_runs_with_profiling(blazeface128):
    with kestrel.Model(blazeface128) as m, m.context(threads=1) as ctx:
        shape = m.inputs[0].shape
        assert len(m.outputs) == 4
        ctx.set_profiling(True)
        outs = ctx.run(np.zeros(shape, np.float32))
        assert [o.shape for o in outs] == [o.shape for o in m.outputs]
        layers = ctx.layer_profile()
        assert len(layers) == m.layer_count and sum(layer["time_ns"] for layer in layers) > 0
        assert all(layer["op"] for layer in layers)


def test_run_images_through_the_models_aipp(face_models):
    bf, mfn = face_models
    with kestrel.Model(bf) as det, kestrel.Model(mfn) as emb, gradient_nv12(256, 256) as img:
        assert det.inputs[0].aipp is not None and emb.batch_gears == [1, 2]
        with pytest.raises(kestrel.InvalidArgumentError, match="run_images"):
            det.run(np.zeros((1, 256, 256, 3), np.float32))
        a = det.run_images([img])
        b = det.run_images(img)
        assert all(np.array_equal(p, q) for p, q in zip(a, b))
        c = det.run_images_async(img).result(timeout=30)
        assert all(np.array_equal(p, q) for p, q in zip(a, c))
        with emb.context() as ctx, gradient_nv12(112, 112) as face:
            ctx.set_batch(2)
            assert ctx.outputs[0].shape == (2, 192)
            (pair,) = ctx.run_images([[face, face]])
            assert pair.shape == (2, 192) and np.array_equal(pair[0], pair[1])
            with pytest.raises(kestrel.InvalidArgumentError):
                ctx.run_images([[face]])  # one image for a batch of 2
            with pytest.raises(kestrel.InvalidArgumentError):
                ctx.set_batch(3)
            with pytest.raises(kestrel.InvalidArgumentError):
                ctx.run_images([["not an image"]])


def test_run_async_resolves_futures_in_order(add_model):
    rng = np.random.default_rng(2)
    xs = [rng.standard_normal((3, 4, 5)).astype(np.float32) for _ in range(40)]  # > the queue's 16
    y = np.ones((3, 4, 5), np.float32)
    with kestrel.Model(add_model) as m, m.context(threads=1) as ctx:
        futures = [ctx.run_async([x, y]) for x in xs]
        assert all(isinstance(f, concurrent.futures.Future) for f in futures)
        finished = []
        futures[-1].add_done_callback(lambda f: finished.append(f.result()[0]))
        for x, f in zip(xs, futures):
            (out,) = f.result(timeout=30)
            assert np.array_equal(out, x + y)
        ctx.wait()
        assert len(finished) == 1 and np.array_equal(finished[0], xs[-1] + y)
        mine = np.empty((3, 4, 5), np.float32)
        assert m.run_async([xs[0], y], outputs=[mine]).result(timeout=30)[0] is mine
        assert np.array_equal(mine, xs[0] + y)


def test_run_async_errors(add_model):
    x = np.zeros((3, 4, 5), np.float32)
    with kestrel.Model(add_model) as m, m.context() as ctx:
        with pytest.raises(kestrel.InvalidArgumentError, match="2 inputs"):
            ctx.run_async([x])  # found before queuing: raised by the call
        bad = ctx.run_async([x, np.zeros((3, 4, 6), np.float32)])  # found when the job runs: in the future
        good = ctx.run_async([x, x])
        error = bad.exception(timeout=30)
        assert isinstance(error, kestrel.InvalidArgumentError) and error.status == -1 and "y" in error.message
        assert not bad.cancel() and np.array_equal(good.result(timeout=30)[0], x)
        with pytest.raises(kestrel.InvalidArgumentError):
            bad.result()
        ctx.run([x, x])  # the failure stays in its future, not in the next call
    with pytest.raises(kestrel.ClosedError):
        ctx.run_async([x, x])


def test_sync_calls_and_close_wait_for_queued_runs(blazeface128):
    m = kestrel.Model(blazeface128)
    ctx = m.context(threads=1)
    x = np.zeros(ctx.inputs[0].shape, np.float32)
    expected = ctx.run(x)
    futures = [ctx.run_async(x) for _ in range(4)]
    ctx.set_profiling(False)  # refused by the C API while jobs are queued: waits for them instead
    assert all(f.done() for f in futures)
    futures = [ctx.run_async(x) for _ in range(4)]
    assert all(np.array_equal(a, b) for a, b in zip(ctx.run(x), expected))
    assert all(f.done() for f in futures)
    futures = [ctx.run_async(x) for _ in range(4)]
    m.close()  # destroys the context: its queued runs finish first
    assert all(f.done() and all(np.array_equal(a, b) for a, b in zip(f.result(), expected)) for f in futures)


def test_done_callback_cannot_use_its_own_context_and_may_drop_it(blazeface128):
    with kestrel.Model(blazeface128) as m:
        ctx = m.context(threads=1)
        x = np.zeros(ctx.inputs[0].shape, np.float32)
        seen, holder = [], [ctx]

        def uses_own_context(future):
            if threading.current_thread() is threading.main_thread():
                seen.append("finished before add_done_callback")  # not on the worker: nothing to check
                return
            for use in (lambda: ctx.run(x), lambda: ctx.run_async(x), ctx.wait, ctx.close, m.close):
                try:
                    use()
                    seen.append("ran")
                except kestrel.InvalidArgumentError as e:
                    seen.append(e.message)
        futures = [ctx.run_async(x) for _ in range(3)]
        futures[-1].add_done_callback(uses_own_context)
        ctx.wait()
        if seen == ["finished before add_done_callback"]:
            pytest.skip("the runs finished before the callback was added")
        assert len(seen) == 5 and all("done-callback" in s for s in seen), seen
        assert not ctx.closed and np.array_equal(ctx.run(x)[0], futures[0].result()[0])
        # Dropping the last reference to a context in its own done-callback destroys it off its worker.
        future = ctx.run_async(x)
        future.add_done_callback(lambda f: holder.clear())
        del ctx
        future.result(timeout=30)
        assert not m.closed
