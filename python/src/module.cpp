// kestrel._kestrel: the extension module's entry point, its exceptions, the shared helpers and the sdk
// part (version, CPU features, board profiles, backend, logging, tracing).
#include <condition_variable>
#include <cstring>
#include <deque>
#include <thread>

#include "common.hpp"

namespace kespy {
namespace {

// The exception classes, created once at import and kept for the life of the process.
PyObject* g_error = nullptr;
PyObject* g_closed = nullptr;
PyObject* g_by_status[10] = {};  // index -status, 1..9

PyObject* new_error_class(py::module_& m, const char* name, const char* doc, PyObject* bases) {
    const std::string qualified = std::string("kestrel.") + name;
    PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
    if (!cls) throw py::error_already_set();
    m.add_object(name, py::handle(cls));  // the module keeps a reference; so does g_*
    Py_INCREF(cls);
    return cls;
}

PyObject* bases(std::initializer_list<PyObject*> classes) {
    PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(classes.size()));
    Py_ssize_t i = 0;
    for (PyObject* c : classes) {
        Py_INCREF(c);
        PyTuple_SET_ITEM(tuple, i++, c);
    }
    return tuple;
}

PyObject* class_for(kes_status st) {
    const int i = -static_cast<int>(st);
    return i >= 1 && i <= 9 && g_by_status[i] ? g_by_status[i] : g_error;
}

py::object error_instance(PyObject* cls, const Error& e) {
    py::object inst = py::reinterpret_borrow<py::object>(cls)(e.message);
    inst.attr("status") = static_cast<int>(e.status);
    inst.attr("status_name") = kes_status_str(e.status);
    inst.attr("message") = e.message;
    return inst;
}

void raise(PyObject* cls, const Error& e) {
    PyErr_SetObject(cls, error_instance(cls, e).ptr());
}

}  // namespace

py::object error_object(const Error& e) {
    return error_instance(class_for(e.status), e);
}

void register_errors(py::module_& m) {
    g_error = new_error_class(m, "Error",
                              "A Kestrel call failed. Attributes: status (the kes_status, a negative int), "
                              "status_name ('KES_ERR_...') and message (kes_last_error()'s text).",
                              bases({PyExc_Exception}));
    struct Kind {
        kes_status status;
        const char* name;
        PyObject* builtin;
        const char* doc;
    };
    const Kind kinds[] = {
        {KES_ERR_INVALID_ARGUMENT, "InvalidArgumentError", PyExc_ValueError,
         "KES_ERR_INVALID_ARGUMENT: an argument breaks a documented rule (also a ValueError)."},
        {KES_ERR_UNSUPPORTED, "UnsupportedError", PyExc_NotImplementedError,
         "KES_ERR_UNSUPPORTED: valid, but the board profile or this build cannot do it."},
        {KES_ERR_OUT_OF_MEMORY, "OutOfMemoryError", PyExc_MemoryError,
         "KES_ERR_OUT_OF_MEMORY: a pool or the system ran out of memory."},
        {KES_ERR_IO, "IoError", PyExc_OSError, "KES_ERR_IO: a file or stream could not be read or written."},
        {KES_ERR_CORRUPT_DATA, "CorruptDataError", PyExc_ValueError,
         "KES_ERR_CORRUPT_DATA: input data (image, stream, model, repository) is malformed."},
        {KES_ERR_NOT_FOUND, "NotFoundError", PyExc_LookupError,
         "KES_ERR_NOT_FOUND: a named thing (file, tensor, feature, library) does not exist."},
        {KES_ERR_BUSY, "BusyError", nullptr, "KES_ERR_BUSY: the object is in use; try again later."},
        {KES_ERR_TIMEOUT, "TimeoutError", PyExc_TimeoutError, "KES_ERR_TIMEOUT: a wait ran out of time."},
        {KES_ERR_INTERNAL, "InternalError", PyExc_RuntimeError,
         "KES_ERR_INTERNAL: a bug in Kestrel; please report it with the message."},
    };
    for (const Kind& k : kinds) {
        PyObject* b = k.builtin ? bases({g_error, k.builtin}) : bases({g_error});
        g_by_status[-static_cast<int>(k.status)] = new_error_class(m, k.name, k.doc, b);
        Py_DECREF(b);
    }
    PyObject* b = bases({g_by_status[1]});
    g_closed = new_error_class(m, "ClosedError",
                               "An object was used after close() (an InvalidArgumentError, status "
                               "KES_ERR_INVALID_ARGUMENT).",
                               b);
    Py_DECREF(b);

    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const ClosedError& e) {
            raise(g_closed, e);
        } catch (const Error& e) {
            raise(class_for(e.status), e);
        }
    });
}

// ---- shared helpers ------------------------------------------------------------------------------------

py::array float32_array(const py::handle& obj, const char* what) {
    if (obj.is_none()) invalid(std::string(what) + " is None");
    py::module_ np = py::module_::import("numpy");
    py::object a = np.attr("asarray")(obj);
    const py::dtype have = a.attr("dtype").cast<py::dtype>();
    if (!np.attr("can_cast")(have, py::dtype("float32"), "same_kind").cast<bool>())
        invalid(std::string(what) + " must be floating point, got " + to_str(have));
    py::list req;
    req.append("C");
    req.append("A");
    return np.attr("require")(a, py::dtype("float32"), req).cast<py::array>();
}

py::dtype numpy_dtype(kes_dtype dtype) {
    switch (dtype) {
        case KES_F32: return py::dtype("float32");
        case KES_F16: return py::dtype("float16");
        case KES_I8: return py::dtype("int8");
        case KES_I32: return py::dtype("int32");
        case KES_U8: return py::dtype("uint8");
        case KES_I16: return py::dtype("int16");
        case KES_U16: return py::dtype("uint16");
        case KES_U32: return py::dtype("uint32");
        case KES_I64: return py::dtype("int64");
        case KES_U64: return py::dtype("uint64");
        case KES_F64: return py::dtype("float64");
        case KES_BOOL: return py::dtype("bool");
    }
    invalid("unknown kes_dtype " + std::to_string(static_cast<int>(dtype)));
}

kes_dtype kes_dtype_of(const py::dtype& dtype) {
    static const kes_dtype all[] = {KES_F32, KES_F16, KES_I8,  KES_I32, KES_U8,  KES_I16,
                                    KES_U16, KES_U32, KES_I64, KES_U64, KES_F64, KES_BOOL};
    for (kes_dtype d : all)
        if (numpy_dtype(d).equal(dtype)) return d;
    invalid("dtype " + to_str(dtype) + " has no Kestrel tensor type");
}

// bytes are data (an encoded image, a model), never a path: paths are str or os.PathLike.
bool as_path(const py::handle& obj, std::string* out) {
    if (obj.is_none()) return false;
    py::object path;
    if (py::isinstance<py::str>(obj)) {
        path = py::reinterpret_borrow<py::object>(obj);
    } else if (py::hasattr(obj, "__fspath__")) {
        path = py::module_::import("os").attr("fspath")(obj);
    } else {
        return false;
    }
    *out = path.cast<std::string>();  // str, or the bytes a PathLike gives
    if (out->find('\0') != std::string::npos) invalid("a path must not contain NUL characters");
    return true;
}

Bytes::Bytes(const py::handle& obj, const char* what) {
    if (obj.is_none()) invalid(std::string(what) + " is None");
    if (!PyObject_CheckBuffer(obj.ptr()))
        invalid(std::string(what) + " must be bytes-like (bytes, bytearray, memoryview, a NumPy array), got " +
                py::str(py::type::handle_of(obj).attr("__name__")).cast<std::string>());
    py::buffer buf = py::reinterpret_borrow<py::buffer>(obj);
    info = buf.request();
    // A strided view (a NumPy slice) is refused rather than read wrongly.
    ssize_t expect = info.itemsize;
    for (ssize_t d = info.ndim - 1; d >= 0; --d) {
        if (info.shape[d] > 1 && info.strides[d] != expect)
            invalid(std::string(what) + " must be contiguous (use numpy.ascontiguousarray)");
        expect *= info.shape[d];
    }
}

kes_pixel_format pixel_format_from(const py::handle& obj) {
    if (obj.is_none()) return KES_PIXEL_UNKNOWN;
    if (py::isinstance<py::int_>(obj)) {
        const int v = obj.cast<int>();
        if (kes_pixel_format_planes(static_cast<kes_pixel_format>(v)) == 0)
            invalid("unknown pixel format " + std::to_string(v));
        return static_cast<kes_pixel_format>(v);
    }
    if (!py::isinstance<py::str>(obj)) invalid("a pixel format is a name such as 'nv12' or 'rgb888'");
    std::string name = obj.cast<std::string>();
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (name == "RGB") name = "RGB888";
    if (name == "BGR") name = "BGR888";
    if (name == "RGBA") name = "RGBA8888";
    if (name == "GRAY" || name == "GREY") name = "YUV400";
    static const kes_pixel_format all[] = {
        KES_PIXEL_YUV400,   KES_PIXEL_NV12,     KES_PIXEL_NV21,     KES_PIXEL_YUV422SP, KES_PIXEL_YVU422SP,
        KES_PIXEL_YUV444SP, KES_PIXEL_YVU444SP, KES_PIXEL_YUYV422,  KES_PIXEL_UYVY422,  KES_PIXEL_YVYU422,
        KES_PIXEL_VYUY422,  KES_PIXEL_YUV444,   KES_PIXEL_RGB888,   KES_PIXEL_BGR888,   KES_PIXEL_ARGB8888,
        KES_PIXEL_ABGR8888, KES_PIXEL_RGBA8888, KES_PIXEL_BGRA8888, KES_PIXEL_YUV440SP, KES_PIXEL_YVU440SP,
        KES_PIXEL_I420,     KES_PIXEL_UNKNOWN};
    for (kes_pixel_format f : all)
        if (name == kes_pixel_format_name(f)) return f;
    invalid("unknown pixel format '" + obj.cast<std::string>() + "'");
}

std::string pixel_format_str(kes_pixel_format format) {
    std::string s = kes_pixel_format_name(format);
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// ---- sdk -------------------------------------------------------------------------------------------

namespace {

py::dict profile_dict(const kes_board_profile* p) {
    py::dict d;
    d["board"] = p->name;
    d["description"] = p->description;
#define KES_PROFILE_FIELD(f) d[#f] = p->f;
    KES_PROFILE_FIELD(cpu_cores)
    KES_PROFILE_FIELD(jpegd_width_align)
    KES_PROFILE_FIELD(jpegd_height_align)
    KES_PROFILE_FIELD(jpegd_min_dim)
    KES_PROFILE_FIELD(jpegd_max_dim)
    KES_PROFILE_FIELD(jpege_width_align)
    KES_PROFILE_FIELD(jpege_min_dim)
    KES_PROFILE_FIELD(jpege_max_dim)
    KES_PROFILE_FIELD(pngd_width_align)
    KES_PROFILE_FIELD(pngd_height_align)
    KES_PROFILE_FIELD(pngd_min_dim)
    KES_PROFILE_FIELD(pngd_max_dim)
    KES_PROFILE_FIELD(vpc_width_align)
    KES_PROFILE_FIELD(vpc_height_align)
    KES_PROFILE_FIELD(vpc_min_width)
    KES_PROFILE_FIELD(vpc_min_height)
    KES_PROFILE_FIELD(vpc_max_input_dim)
    KES_PROFILE_FIELD(vpc_max_input_dim_nv12)
    KES_PROFILE_FIELD(vpc_max_output_width)
    KES_PROFILE_FIELD(vpc_max_output_height)
    KES_PROFILE_FIELD(vpc_roi_parity)
    KES_PROFILE_FIELD(vpc_paste_left_align)
    KES_PROFILE_FIELD(vpc_max_batch_rois)
    KES_PROFILE_FIELD(vpc_scale_min_den)
    KES_PROFILE_FIELD(vpc_scale_max)
    KES_PROFILE_FIELD(vdec_width_align)
    KES_PROFILE_FIELD(vdec_height_align)
    KES_PROFILE_FIELD(vdec_min_dim)
    KES_PROFILE_FIELD(vdec_max_dim)
    KES_PROFILE_FIELD(vdec_max_channels)
    KES_PROFILE_FIELD(venc_min_dim)
    KES_PROFILE_FIELD(venc_max_dim)
    KES_PROFILE_FIELD(aipp_max_src_dim)
    KES_PROFILE_FIELD(aipp_dynamic_max_out_width)
    KES_PROFILE_FIELD(aipp_supports_resize)
    KES_PROFILE_FIELD(jpegd_even_420)
    KES_PROFILE_FIELD(vpc_output_420sp_only)
    KES_PROFILE_FIELD(vpc_csc_bt601_wide_only)
    KES_PROFILE_FIELD(venc_width_stride_align)
    KES_PROFILE_FIELD(vdec_h265_max_width)
#undef KES_PROFILE_FIELD
    return d;
}

kes_board board_from(const std::string& name) {
    kes_board b;
    check(kes_board_from_name(name.c_str(), &b), "kes_board_from_name");
    return b;
}

kes_backend backend_from(const std::string& name) {
    kes_backend b;
    check(kes_backend_from_name(name.c_str(), &b), "kes_backend_from_name");
    return b;
}

py::dict backend_dict(const kes_backend_info& i) {
    py::dict d;
    d["requested"] = kes_backend_name(i.requested);
    d["active"] = kes_backend_name(i.active);
    d["runtime_loaded"] = i.runtime_loaded != 0;
    d["app_owns_runtime"] = i.app_owns_runtime != 0;
    d["run_mode"] = i.run_mode == KES_ASCEND_RUN_MODE_DEVICE ? "device"
                    : i.run_mode == KES_ASCEND_RUN_MODE_HOST ? "host"
                                                             : "unknown";
    d["device_count"] = i.device_count;
    d["device_id"] = i.device_id;
    d["host_accessible"] = i.host_accessible != 0;
    d["soc_name"] = i.soc_name;
    d["library"] = i.library;
    d["reason"] = i.reason;
    return d;
}

kes_log_level log_level_from(const py::handle& obj) {
    if (py::isinstance<py::int_>(obj)) {
        const long v = obj.cast<long>();
        if (v < KES_LOG_OFF || v > KES_LOG_TRACE) invalid("log level must be 0..5, got " + std::to_string(v));
        return static_cast<kes_log_level>(v);
    }
    if (!py::isinstance<py::str>(obj)) invalid("log level must be a name ('off' .. 'trace') or 0..5");
    kes_log_level level;
    check(kes_log_level_from_name(obj.cast<std::string>().c_str(), &level), "kes_log_level_from_name");
    return level;
}

}  // namespace

namespace {

// ---- log callback --------------------------------------------------------------------------------------
//
// Kestrel calls its log callback holding the sink's mutex, on any thread. Taking the GIL there could
// deadlock against a thread that holds the GIL and logs (waiting for that mutex). So the C callback
// only queues a copy of the line, and a relay thread of its own calls the Python function, with the
// GIL, in the order the lines were logged.

struct LogLine {
    kes_log_level level;
    std::string module;
    std::string message;
};

constexpr size_t kMaxQueuedLogLines = 10000;  // beyond: counted as dropped, reported with the next line

struct LogRelay {
    std::mutex mu;  // guards the fields below; never held while taking the GIL
    std::condition_variable cv;
    std::deque<LogLine> lines;
    uint64_t dropped = 0;
    bool delivering = false;
    bool stop = false;
    bool relaying = false;  // the relay thread runs (`worker` itself is only touched by start and stop)
    std::thread worker;
    PyObject* fn = nullptr;  // the Python callback (a strong reference), guarded by the GIL
};

// Never destroyed: Kestrel's threads may still log while the process exits.
LogRelay& log_relay() {
    static LogRelay* relay = new LogRelay;
    return *relay;
}

thread_local bool t_in_log_callback = false;  // on the relay thread, inside the Python callback

void queue_log_line(kes_log_level level, const char* module, const char* message, void*) {
    LogRelay& r = log_relay();
    {
        std::lock_guard<std::mutex> lk(r.mu);
        if (r.lines.size() >= kMaxQueuedLogLines)
            ++r.dropped;
        else
            r.lines.push_back({level, module ? module : "app", message ? message : ""});
    }
    r.cv.notify_all();
}

void call_log_callback(const LogLine& line) {
    LogRelay& r = log_relay();
    if (!r.fn) return;
    py::object fn = py::reinterpret_borrow<py::object>(r.fn);  // set_log_callback may replace it meanwhile
    t_in_log_callback = true;
    try {
        fn(kes_log_level_name(line.level), line.module, line.message);
    } catch (py::error_already_set& e) {
        e.discard_as_unraisable(fn);  // sys.unraisablehook reports it; logging goes on
    } catch (const std::exception& e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
        PyErr_WriteUnraisable(fn.ptr());
    }
    t_in_log_callback = false;
}

void relay_log_lines() {
    LogRelay& r = log_relay();
    std::unique_lock<std::mutex> lk(r.mu);
    for (;;) {
        r.cv.wait(lk, [&] { return r.stop || !r.lines.empty() || r.dropped; });
        if (r.lines.empty() && !r.dropped) return;  // stopped, and everything was delivered
        std::deque<LogLine> batch;
        batch.swap(r.lines);
        const uint64_t dropped = r.dropped;
        r.dropped = 0;
        r.delivering = true;
        lk.unlock();
        if (!interpreter_finalizing()) {
            py::gil_scoped_acquire gil;
            if (dropped)
                call_log_callback({KES_LOG_WARN, "python",
                                   std::to_string(dropped) + " log lines dropped: the callback fell behind (" +
                                       std::to_string(kMaxQueuedLogLines) + " queued)"});
            for (const LogLine& line : batch) call_log_callback(line);
        }
        lk.lock();
        r.delivering = false;
        r.cv.notify_all();
    }
}

// Waits (GIL released) until every queued line has been delivered. Not from the callback itself,
// which the wait would wait for.
void flush_log_lines() {
    if (t_in_log_callback) return;
    LogRelay& r = log_relay();
    py::gil_scoped_release nogil;
    std::unique_lock<std::mutex> lk(r.mu);
    r.cv.wait(lk, [&] { return (r.lines.empty() && !r.dropped && !r.delivering) || !r.relaying; });
}

void set_log_callback(const py::object& fn) {
    if (!fn.is_none() && !PyCallable_Check(fn.ptr()))
        invalid("the log callback must be callable (level, module, message), or None");
    LogRelay& r = log_relay();
    if (fn.is_none()) {
        {
            py::gil_scoped_release nogil;
            kes_log_set_callback(nullptr, nullptr);
        }
        flush_log_lines();  // lines logged while the callback was set still reach it
        PyObject* old = r.fn;
        r.fn = nullptr;
        Py_XDECREF(old);
        return;
    }
    {
        std::lock_guard<std::mutex> lk(r.mu);
        if (!r.relaying) {
            r.stop = false;
            r.relaying = true;
            r.worker = std::thread(relay_log_lines);
        }
    }
    PyObject* old = r.fn;
    r.fn = fn.inc_ref().ptr();
    Py_XDECREF(old);
    py::gil_scoped_release nogil;
    kes_log_set_callback(queue_log_line, nullptr);
}

// At exit (atexit, before the interpreter shuts down): stderr again, the last lines delivered, the
// relay thread joined.
void stop_log_relay() {
    if (t_in_log_callback) return;
    set_log_callback(py::none());
    LogRelay& r = log_relay();
    py::gil_scoped_release nogil;
    {
        std::lock_guard<std::mutex> lk(r.mu);
        r.stop = true;
    }
    r.cv.notify_all();
    if (r.worker.joinable()) r.worker.join();
    std::lock_guard<std::mutex> lk(r.mu);
    r.relaying = false;
}

}  // namespace

void register_sdk(py::module_& m) {
    m.def(
        "version", [] { return std::string(kes_version_string()); },
        "The linked library's version string, e.g. '0.1.0' (kes_version_string).");
    m.def(
        "version_info",
        [] {
            const int v = kes_version();
            return py::make_tuple(v / 10000, v / 100 % 100, v % 100);
        },
        "(major, minor, patch) of the linked library (kes_version).");
    m.def(
        "build_info", [] { return std::string(kes_build_info()); },
        "One line describing the build: version, target CPU, compiler, build type, default board.");
    m.def(
        "status_name", [](int status) { return std::string(kes_status_str(static_cast<kes_status>(status))); },
        py::arg("status"), "'KES_OK', 'KES_ERR_INVALID_ARGUMENT', ... for a kes_status value.");

    m.def(
        "cpu_features",
        [] {
            std::vector<std::string> names;
            const uint32_t f = kes_cpu_features();
            for (int bit = 0; bit < 32; ++bit)
                if (f & (1u << bit)) {
                    const char* n = kes_cpu_feature_name(static_cast<kes_cpu_feature>(1u << bit));
                    if (n) names.emplace_back(n);
                }
            return names;
        },
        "Names of the CPU features Kestrel dispatches on ('avx2', 'neon', ...), minus KES_CPU_DISABLE's.");
    m.def(
        "cpu_has",
        [](const std::string& name) {
            for (int bit = 0; bit < 32; ++bit) {
                const char* n = kes_cpu_feature_name(static_cast<kes_cpu_feature>(1u << bit));
                if (n && name == n) return kes_cpu_has(1u << bit) != 0;
            }
            invalid("unknown CPU feature '" + name + "'");
        },
        py::arg("feature"), "True if the CPU has the named feature (and KES_CPU_DISABLE does not remove it).");
    m.def(
        "cpu_arch", [] { return std::string(kes_cpu_arch()); }, "The architecture this library was built for.");
    m.def(
        "cpu_count", [] { return kes_cpu_count(); }, "Online CPUs.");

    m.def(
        "board", [] { return std::string(kes_board_name(kes_board_get())); },
        "The active board profile: '310', '310B' or 'host'.");
    m.def(
        "set_board", [](const std::string& name) { check(kes_board_set(board_from(name)), "kes_board_set"); },
        py::arg("name"),
        "Makes a board profile active ('310', '310B', 'host', 'atlas200dk', ...). Call at start-up: objects "
        "created earlier keep theirs.");
    m.def(
        "board_profile",
        [](const py::object& name) {
            const kes_board_profile* p = name.is_none() ? kes_board_active_profile()
                                                        : kes_board_get_profile(board_from(name.cast<std::string>()));
            if (!p) invalid("no such board profile");
            return profile_dict(p);
        },
        py::arg("name") = py::none(), "The rules of a board profile (the active one by default) as a dict.");

    m.def(
        "backend", [] { return std::string(kes_backend_name(kes_backend_get())); },
        "The requested backend: 'auto', 'cpu' or 'ascend'.");
    m.def(
        "set_backend",
        [](const std::string& name) {
            call_nogil("kes_backend_set", [b = backend_from(name)] { return kes_backend_set(b); });
        },
        py::arg("name"), "Chooses the backend ('auto', 'cpu', 'ascend'); 'ascend' loads the runtime now or raises.");
    m.def(
        "backend_info",
        [] {
            kes_backend_info info;
            std::memset(&info, 0, sizeof info);
            info.struct_size = sizeof info;
            {
                py::gil_scoped_release nogil;
                kes_backend_query(&info);
            }
            return backend_dict(info);
        },
        "What serves device memory and models now (kes_backend_query), as a dict; never raises for an "
        "unavailable Ascend: 'active' is then 'none' and 'reason' says why.");
    m.def(
        "backend_check",
        [] {
            kes_backend_info info;
            std::memset(&info, 0, sizeof info);
            info.struct_size = sizeof info;
            call_nogil("kes_backend_query", [&] { return kes_backend_query(&info); });
            return backend_dict(info);
        },
        "As backend_info, but raises the error that makes a required Ascend backend unavailable (self-check).");
    m.def(
        "backend_shutdown", [] { call_nogil("kes_backend_shutdown", [] { return kes_backend_shutdown(); }); },
        "Releases what Kestrel created on the device (BusyError while device buffers are alive).");
    m.def(
        "set_backend_library_dir",
        [](const py::object& dir) {
            std::string d;
            const bool given = as_path(dir, &d);
            if (!given && !dir.is_none()) invalid("the library directory must be a path or None");
            check(kes_backend_set_library_dir(given ? d.c_str() : nullptr), "kes_backend_set_library_dir");
        },
        py::arg("dir"), "The directory to look in first for libascendcl.so (None clears it).");

    m.def(
        "log_level", [] { return std::string(kes_log_level_name(kes_log_get_level())); },
        "The current log level name ('off', 'error', 'warn', 'info', 'debug', 'trace').");
    m.def(
        "set_log_level",
        [](const py::object& level) { check(kes_log_set_level(log_level_from(level)), "kes_log_set_level"); },
        py::arg("level"), "Sets the log level by name or number 0..5.");
    m.def(
        "log",
        [](const py::object& level, const std::string& module, const std::string& message) {
            kes_log_write(log_level_from(level), module.c_str(), "%s", message.c_str());
        },
        py::arg("level"), py::arg("module"), py::arg("message"), "Writes one line into Kestrel's log stream.");

    m.def("set_log_callback", &set_log_callback, py::arg("callback"),
          "Routes Kestrel's log lines (at or above log_level()) to callback(level, module, message) instead of "
          "stderr; None restores stderr. The callback runs on a relay thread of the module's, with the GIL, "
          "one line at a time in the order they were logged, from whichever thread logged them (a line "
          "may arrive after the call that logged it returns: flush_log waits). Its exceptions go to "
          "sys.unraisablehook; logging goes on.");
    m.def("flush_log", &flush_log_lines,
          "Waits until every line logged so far has reached the log callback (no-op without one, or from it).");
    py::module_::import("atexit").attr("register")(py::cpp_function(&stop_log_relay));

    m.def(
        "trace_start",
        [](const py::object& path) {
            std::string p;
            if (!as_path(path, &p)) invalid("trace_start needs a path");
            check(kes_trace_start(p.c_str()), "kes_trace_start");
        },
        py::arg("path"), "Starts recording spans (Chrome trace JSON written by trace_stop). BusyError if on.");
    m.def(
        "trace_stop", [] { call_nogil("kes_trace_stop", [] { return kes_trace_stop(); }); },
        "Stops recording and writes the file. NotFoundError if tracing was not on, IoError if unwritable.");
    m.def(
        "trace_enabled", [] { return kes_trace_enabled() != 0; }, "True while recording.");
}

}  // namespace kespy

PYBIND11_MODULE(_kestrel, m) {
    m.doc() = "Kestrel's public C API for Python (the kestrel package re-exports it; see kestrel/__init__.py).";
    kespy::register_errors(m);
    kespy::register_sdk(m);
    kespy::register_image(m);
#if KES_HAVE_DVPP
    kespy::register_dvpp(m);
    kespy::register_video(m);
#endif
#if KES_HAVE_ENGINE
    kespy::register_engine(m);
    kespy::register_detect(m);
#endif
#if KES_HAVE_FV
    kespy::register_fv(m);
#endif
#if KES_HAVE_AIPP
    kespy::register_aipp(m);
#endif
}
