// The pieces every part of the kestrel extension module shares: Kestrel's statuses as Python exceptions,
// the GIL and lock discipline around C calls, and the NumPy <-> kes_dtype map.
//
// Only the public C API is used (kestrel/kestrel.h): the module is an app of the SDK like any other.
//
// Locking rule (no deadlock between the GIL and a handle's mutex): a handle's mutex is only ever
// acquired with the GIL released (lock_nogil). Holding the mutex, a call may take the GIL back, because
// every other thread waiting for that mutex has released the GIL first.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "kestrel/kestrel.h"

namespace py = pybind11;

namespace kespy {

// A failed Kestrel call: its status and this thread's kes_last_error() text, read on the thread that
// made the call (the text is thread-local; releasing and retaking the GIL never changes the thread).
struct Error : std::exception {
    Error(kes_status s, std::string m) : status(s), message(std::move(m)) {}
    const char* what() const noexcept override { return message.c_str(); }
    kes_status status;
    std::string message;
};

// A call on an object after its close(): an InvalidArgumentError of its own class, ClosedError.
struct ClosedError : Error {
    explicit ClosedError(const std::string& what) : Error(KES_ERR_INVALID_ARGUMENT, what + " is closed") {}
};

// The kestrel.Error subclass instance for `e` (by its status), for a failure reported other than by
// raising (a run_async future's exception).
py::object error_object(const Error& e);

// Throws Error for a failed status, naming the call when the library's text does not.
inline void check(kes_status st, const char* call) {
    if (st == KES_OK) return;
    std::string msg = kes_last_error();
    if (msg.empty()) msg = std::string(call) + ": " + kes_status_str(st);
    throw Error(st, msg);
}

// The library's own rules are checked by the library; these are the binding's (types, shapes, None).
[[noreturn]] inline void invalid(const std::string& message) {
    throw Error(KES_ERR_INVALID_ARGUMENT, message);
}

// Locks `mu` with the GIL released (see the locking rule above); lock_nogil<std::shared_lock>(mu) for
// the shared side of a shared_mutex.
template <template <class> class Lock = std::unique_lock, class Mutex>
Lock<Mutex> lock_nogil(Mutex& mu) {
    Lock<Mutex> lock(mu, std::defer_lock);
    py::gil_scoped_release nogil;
    lock.lock();
    return lock;
}

// Runs `call` (a Kestrel C call returning kes_status) with the GIL released and checks it on this thread.
template <class F>
void call_nogil(const char* name, F&& call) {
    kes_status st;
    {
        py::gil_scoped_release nogil;
        st = call();
    }
    check(st, name);
}

// True once the interpreter shuts down: a thread of Kestrel's must not take the GIL then (it would hang).
inline bool interpreter_finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing();
#else
    return _Py_IsFinalizing();
#endif
}

// str(obj) as UTF-8.
inline std::string to_str(const py::handle& obj) {
    PyObject* s = PyObject_Str(obj.ptr());
    if (!s) throw py::error_already_set();
    return py::reinterpret_steal<py::str>(s).cast<std::string>();
}

// kes_dtype <-> NumPy.
// A float32, C-contiguous view of obj, or a copy when its dtype or layout differ; `what` names the
// argument in the InvalidArgument error (None, or not floating point).
py::array float32_array(const py::handle& obj, const char* what);
py::dtype numpy_dtype(kes_dtype dtype);
kes_dtype kes_dtype_of(const py::dtype& dtype);  // throws InvalidArgument for dtypes Kestrel has not

// A path (str or os.PathLike) as a UTF-8 std::string; false if `obj` is neither (bytes are data).
bool as_path(const py::handle& obj, std::string* out);

// Bytes of a buffer-protocol object (bytes, bytearray, memoryview, a contiguous NumPy array), kept
// exported while this lives. Destroy it with the GIL held.
struct Bytes {
    explicit Bytes(const py::handle& obj, const char* what);
    const void* data() const { return info.ptr; }
    size_t size() const { return static_cast<size_t>(info.size) * static_cast<size_t>(info.itemsize); }
    py::buffer_info info;
};

// Names <-> enums for the string-valued options (case-insensitive).
kes_pixel_format pixel_format_from(const py::handle& obj);
std::string pixel_format_str(kes_pixel_format format);

// A copy of a kestrel.aipp.Dynamic's parameters (InvalidArgument for anything else), for a context to
// keep: the C API borrows them for every later execution, so the Python object stays free to change.
kes_aipp_dynamic* copy_dynamic(const py::handle& obj);

// Registration of each part of the module.
void register_errors(py::module_& m);
void register_sdk(py::module_& m);
void register_image(py::module_& m);
void register_dvpp(py::module_& m);
void register_video(py::module_& m);
void register_engine(py::module_& m);
void register_detect(py::module_& m);
void register_fv(py::module_& m);
void register_aipp(py::module_& m);

}  // namespace kespy
