"""sdk: version, CPU features, board profiles, backend, logging (and the log callback), tracing, and the exception
classes."""
import json
import subprocess
import sys
import threading

import numpy as np
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


@pytest.fixture
def log_lines():
    """Kestrel's log lines at level info and above, as the callback received them, with its threads."""
    lines, before = [], kestrel.log_level()

    def receive(level, module, message):
        lines.append((level, module, message, threading.current_thread().ident))
    kestrel.set_log_level("info")
    kestrel.set_log_callback(receive)
    try:
        yield lines
    finally:
        kestrel.set_log_callback(None)
        kestrel.set_log_level(before)


def test_log_callback_receives_lines_in_order_from_every_thread(log_lines):
    kestrel.log("warn", "python", "first")
    kestrel.log("debug", "python", "below the level")
    kestrel.log("error", "python", "second")
    kestrel.flush_log()
    assert [line[:3] for line in log_lines] == [("warn", "python", "first"), ("error", "python", "second")]
    log_lines.clear()

    def writes(t):
        for i in range(200):
            kestrel.log("info", f"t{t}", str(i))
    threads = [threading.Thread(target=writes, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    kestrel.flush_log()
    assert len(log_lines) == 800
    for t in range(4):
        assert [int(line[2]) for line in log_lines if line[1] == f"t{t}"] == list(range(200))


def test_log_callback_gets_lines_kestrel_logs_with_the_gil_released(log_lines, tmp_path):
    # A torn record at the end of an fv append log is cut off with a warning, logged inside
    # kes_fv_repo_open_logged, which runs with the GIL released.
    snapshot, log = tmp_path / "r.kfv", tmp_path / "r.log"
    with kestrel.Repository(8) as repo:
        repo.save(snapshot)
    with kestrel.Repository.open_logged(snapshot, log) as repo:
        repo.add(0, 0, np.ones((2, 8), np.float32))
    with open(log, "ab") as f:
        f.write(b"\x07torn")
    with kestrel.Repository.open_logged(snapshot, log) as repo:
        assert len(repo) == 2
    kestrel.flush_log()
    assert any(module == "fv" and "torn record" in message for _, module, message, _ in log_lines), log_lines


def test_log_callback_errors_never_crash(monkeypatch, capfd):
    reported, before = [], kestrel.log_level()
    monkeypatch.setattr(sys, "unraisablehook", lambda u: reported.append(u.exc_value))

    def fails(level, module, message):
        kestrel.flush_log()  # from the callback itself: returns at once
        raise RuntimeError("callback failed on " + message)
    try:
        kestrel.set_log_level("warn")
        kestrel.set_log_callback(fails)
        kestrel.log("warn", "python", "one")
        kestrel.log("warn", "python", "two")
        kestrel.flush_log()
        assert [str(e) for e in reported] == ["callback failed on one", "callback failed on two"]
        with pytest.raises(kestrel.InvalidArgumentError):
            kestrel.set_log_callback("not callable")
        kestrel.set_log_callback(lambda: None)  # the wrong signature is a TypeError, reported the same way
        kestrel.log("warn", "python", "three")
        kestrel.flush_log()
        assert len(reported) == 3 and isinstance(reported[2], TypeError)
    finally:
        kestrel.set_log_callback(None)
        kestrel.set_log_level(before)
    capfd.readouterr()
    kestrel.log("error", "python", "back on stderr")
    assert "[kestrel E python] back on stderr" in capfd.readouterr().err


def test_lines_logged_just_before_exit_reach_the_callback():
    script = ("import kestrel\n"
              "kestrel.set_log_callback(lambda level, module, message: print(level, module, message, flush=True))\n"
              "for i in range(3):\n"
              "    kestrel.log('warn', 'exit', str(i))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["warn exit 0", "warn exit 1", "warn exit 2"]
