"""sdk: version, CPU features, board profiles, backend, logging, tracing, and the exception classes."""
import json

import pytest

import kestrel


def test_version_matches_the_build_info():
    assert kestrel.version() == "%d.%d.%d" % kestrel.version_info()
    assert kestrel.build_info().startswith("kestrel " + kestrel.version())


def test_cpu_features_are_named_and_queryable():
    features = kestrel.cpu_features()
    assert all(kestrel.cpu_has(f) for f in features)
    assert kestrel.cpu_arch() in ("x86_64", "aarch64")
    assert kestrel.cpu_count() >= 1
    with pytest.raises(kestrel.InvalidArgumentError):
        kestrel.cpu_has("no-such-feature")


def test_board_profiles_carry_the_rules():
    p310 = kestrel.board_profile("310")
    assert p310["board"] == "310" and p310["vpc_roi_parity"] == 1 and p310["jpegd_width_align"] == 128
    assert kestrel.board_profile()["board"] == kestrel.board()
    with pytest.raises(kestrel.InvalidArgumentError, match="not a board"):
        kestrel.board_profile("nope")


def test_set_board_switches_the_active_profile():
    before = kestrel.board()
    try:
        kestrel.set_board("host")
        assert kestrel.board() == "host"
    finally:
        kestrel.set_board(before)
    with pytest.raises(kestrel.InvalidArgumentError) as e:
        kestrel.set_board("nope")
    assert e.value.status == -1 and e.value.status_name == "KES_ERR_INVALID_ARGUMENT"
    assert "nope" in e.value.message and isinstance(e.value, ValueError)


def test_backend_info_and_self_check():
    info = kestrel.backend_info()
    assert info["requested"] in ("auto", "cpu", "ascend")
    assert info["active"] in ("cpu", "ascend", "none")
    if info["active"] != "none":
        assert kestrel.backend_check()["active"] == info["active"]
    assert kestrel.backend() == info["requested"]
    with pytest.raises(kestrel.InvalidArgumentError):
        kestrel.set_backend("quantum")


def test_log_level_by_name_and_number():
    before = kestrel.log_level()
    try:
        kestrel.set_log_level("debug")
        assert kestrel.log_level() == "debug"
        kestrel.set_log_level(1)
        assert kestrel.log_level() == "error"
        kestrel.log("error", "python", "a line from the test")
    finally:
        kestrel.set_log_level(before)
    for bad in (9, "loud", None):
        with pytest.raises(kestrel.InvalidArgumentError):
            kestrel.set_log_level(bad)


def test_trace_writes_chrome_json(tmp_path, channel):
    path = tmp_path / "trace.json"
    with kestrel.trace(path):
        assert kestrel.trace_enabled()
        with pytest.raises(kestrel.BusyError):
            kestrel.trace_start(tmp_path / "again.json")
        kestrel.Image.alloc("nv12", 64, 64).close()
    assert not kestrel.trace_enabled()
    assert "traceEvents" in json.loads(path.read_text())
    with pytest.raises(kestrel.NotFoundError):
        kestrel.trace_stop()


def test_every_status_kind_has_its_class():
    kinds = {-1: kestrel.InvalidArgumentError, -2: kestrel.UnsupportedError, -3: kestrel.OutOfMemoryError,
             -4: kestrel.IoError, -5: kestrel.CorruptDataError, -6: kestrel.NotFoundError, -7: kestrel.BusyError,
             -8: kestrel.TimeoutError, -9: kestrel.InternalError}
    for status, cls in kinds.items():
        assert issubclass(cls, kestrel.Error) and kestrel.status_name(status).startswith("KES_ERR_")
    assert issubclass(kestrel.ClosedError, kestrel.InvalidArgumentError)
    assert issubclass(kestrel.IoError, OSError) and issubclass(kestrel.OutOfMemoryError, MemoryError)
    assert kestrel.InvalidArgumentError.__module__ == "kestrel"
