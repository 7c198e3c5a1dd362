"""Kestrel for Python: the public C API of the Kestrel edge-inference SDK (Ascend 310-class boards).

    import kestrel, numpy as np
    with kestrel.Channel() as ch, kestrel.Model(kestrel.convert("model.onnx")) as model:
        img = ch.decode_jpeg("photo.jpg")                 # NV12 with the JPEGD strides
        y = np.asarray(img.plane(0))                     # zero-copy view of the luma plane
        boxed, paste = ch.letterbox(img, (256, 256))     # VPC
        outputs = model.run(np.zeros((1, 256, 256, 3), np.float32))

Objects own their C handles and free them when closed (close() or a with block); using one afterwards
raises ClosedError. Every failure raises a kestrel.Error subclass by status kind (InvalidArgumentError,
UnsupportedError, OutOfMemoryError, IoError, CorruptDataError, NotFoundError, BusyError, TimeoutError,
InternalError) carrying .status, .status_name and .message (kes_last_error()). The GIL is released while
Kestrel decodes, converts, executes and searches, so Python threads run those in parallel.

Zero copy: Image.plane(i) is a view NumPy reads and writes in place, with the board's strides. Model
inputs of the input's dtype that are C-contiguous and aligned are read in place; other arrays are
converted (within their kind: float64 -> float32, not float -> int) into a copy. Outputs are new arrays
unless run(..., outputs=[...]) gives arrays to fill.

run_async (run_images_async) queues a run on the context's worker thread and returns a
concurrent.futures.Future. aipp.Dynamic holds dynamic AIPP parameters (Context.set_dynamic_aipp);
ProductQuantizer trains PQ for PQ36 repositories; set_log_callback routes Kestrel's log lines to Python.
"""

import contextlib as _contextlib
import threading as _threading

from . import _kestrel
from ._kestrel import *  # noqa: F401,F403  (the C API; names listed in __all__)
from ._kestrel import aipp, detect, osd  # noqa: F401  (sub-modules)
import sys as _sys

for _m in (aipp, detect, osd):  # so that `import kestrel.detect` works too
    _sys.modules[__name__ + "." + _m.__name__.rsplit(".", 1)[-1]] = _m

__all__ = [name for name in dir(_kestrel) if not name.startswith("_")] + ["trace", "default_channel"]


@_contextlib.contextmanager
def trace(path):
    """Records Kestrel's spans (and kestrel.log lines' callers' own) into a Chrome trace JSON file at path
    for the duration of the with block (trace_start / trace_stop)."""
    trace_start(path)  # noqa: F405
    try:
        yield
    finally:
        trace_stop()  # noqa: F405


_local = _threading.local()


def default_channel():
    """This thread's DVPP channel (a channel is used by one thread at a time), created on first use with
    the defaults; it lives as long as the thread. For control over board, strictness or lifetime, make a
    kestrel.Channel yourself."""
    ch = getattr(_local, "channel", None)
    if ch is None or ch.closed:
        ch = _local.channel = Channel()  # noqa: F405
    return ch
