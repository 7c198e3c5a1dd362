// kestrel.Model and kestrel.Context (kes_model, kes_model_context): load a .kom, describe it, run it on
// NumPy arrays or DVPP images; kestrel.convert (kes-convert's converter).
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

#include "image.hpp"

namespace kespy {
namespace {

struct ContextState;

// A loaded model. Its contexts hold a share of it, so it is unloaded after them; close() destroys
// every context of the model first (waiting for running executions), then unloads it.
struct ModelState {
    std::mutex mu;  // guards `model` and `contexts`
    kes_model* model = nullptr;
    std::vector<std::weak_ptr<ContextState>> contexts;
    ~ModelState() { kes_model_unload(model); }
};

struct ContextState;

// The context whose run_async completion this thread is delivering (its worker thread, during the
// future's done-callbacks), else null. Such a callback must not wait for its own context's queue.
thread_local const ContextState* t_completing = nullptr;

// One execution state. Its mutex serialises executions (a context runs on one thread at a time) and
// the gear setters, and makes close() wait for a running execution.
struct ContextState {
    std::mutex mu;
    kes_model_context* context = nullptr;
    std::shared_ptr<ModelState> model;
    bool async_used = false;  // run_async was called (guarded by mu): the sync calls drain the queue first
    // Per input, the dynamic AIPP parameters the context borrows (copies of aipp.Dynamic objects).
    std::vector<std::shared_ptr<kes_aipp_dynamic>> dynamic_aipp;

    ~ContextState() {
        if (!context) return;
        if (t_completing == this) {
            // The last reference dropped in a done-callback, on the context's own worker: destroying
            // waits for (joins) that worker, so a thread of its own does it, keeping the model loaded.
            std::thread([c = context, m = model, params = std::move(dynamic_aipp)] {
                kes_model_context_destroy(c);
            }).detach();
            return;
        }
        // Destroying drains the queue, whose completions take the GIL: never wait for them holding it.
        if (PyGILState_Check()) {
            py::gil_scoped_release nogil;
            kes_model_context_destroy(context);
        } else {
            kes_model_context_destroy(context);
        }
    }
};

// Locks the context for a synchronous call, which the C API refuses while run_async jobs are queued:
// waits for them first (their failures went to their futures). Refused from a done-callback of the
// same context, which the queue would wait for.
std::unique_lock<std::mutex> lock_idle(ContextState& s) {
    if (t_completing == &s)
        invalid("a run_async done-callback runs on its context's worker: it cannot use that context (use another)");
    auto lk = lock_nogil(s.mu);
    if (!s.context) throw ClosedError("Context (or its Model)");
    if (s.async_used) {
        py::gil_scoped_release nogil;
        (void)kes_model_context_wait(s.context);
    }
    return lk;
}

struct TensorInfo {
    std::string name;
    std::vector<int64_t> shape;
    kes_dtype dtype;
    kes_layout layout;
    py::object aipp;  // str or None
    size_t nbytes;
};

TensorInfo info_of(const kes_tensor& desc, const char* name, const char* aipp) {
    TensorInfo t;
    t.name = name ? name : "";
    t.shape.assign(desc.shape, desc.shape + desc.ndim);
    t.dtype = desc.dtype;
    t.layout = desc.layout;
    t.aipp = aipp ? py::object(py::str(aipp)) : py::object(py::none());
    t.nbytes = desc.size;
    return t;
}

struct Context;

struct Model {
    std::shared_ptr<ModelState> state;
    std::shared_ptr<ContextState> default_context;  // Model.run's, created on first use

    // The model, locked against close(); ClosedError after it.
    std::unique_lock<std::mutex> lock() const {
        if (!state) throw ClosedError("Model");
        auto lk = lock_nogil(state->mu);
        if (!state->model) throw ClosedError("Model");
        return lk;
    }
    kes_model* handle() const { return state->model; }

    void close() {
        if (!state) return;
        for (auto& weak : state->contexts)
            if (auto c = weak.lock(); c && t_completing == c.get())
                invalid("a run_async done-callback cannot close the Model of its own context");
        py::gil_scoped_release nogil;  // destroying a context drains its queue, whose completions take the GIL
        std::lock_guard<std::mutex> lk(state->mu);
        for (auto& weak : state->contexts)
            if (auto c = weak.lock()) {
                std::lock_guard<std::mutex> ck(c->mu);
                kes_model_context_destroy(c->context);
                c->context = nullptr;
            }
        state->contexts.clear();
        kes_model_unload(state->model);
        state->model = nullptr;
    }

    std::shared_ptr<ContextState> new_context(uint32_t threads, const std::vector<int>& affinity) {
        kes_model_context_config cfg;
        kes_model_context_config_init(&cfg);
        cfg.threads = threads;
        cfg.cpu_affinity = affinity.empty() ? nullptr : affinity.data();
        cfg.affinity_count = static_cast<uint32_t>(affinity.size());
        auto c = std::make_shared<ContextState>();
        c->model = state;
        auto lk = lock();
        call_nogil("kes_model_context_create",
                   [&] { return kes_model_context_create_with_config(state->model, nullptr, 0, &cfg, &c->context); });
        state->contexts.push_back(c);
        return c;
    }

    std::vector<TensorInfo> describe(bool inputs) const {
        auto lk = lock();
        size_t n = 0;
        check(inputs ? kes_model_input_count(handle(), &n) : kes_model_output_count(handle(), &n), "count");
        std::vector<TensorInfo> out;
        for (size_t i = 0; i < n; ++i) {
            kes_tensor desc;
            const char* name = nullptr;
            const char* aipp = nullptr;
            if (inputs) {
                check(kes_model_input_desc(handle(), i, &desc), "kes_model_input_desc");
                check(kes_model_input_name(handle(), i, &name), "kes_model_input_name");
                check(kes_model_input_aipp(handle(), i, &aipp), "kes_model_input_aipp");
            } else {
                check(kes_model_output_desc(handle(), i, &desc), "kes_model_output_desc");
                check(kes_model_output_name(handle(), i, &name), "kes_model_output_name");
            }
            out.push_back(info_of(desc, name, aipp));
        }
        return out;
    }
};

struct Context {
    std::shared_ptr<ContextState> state;

    // The context, locked for one call with no run_async job queued; ClosedError after close() (its
    // own or its model's).
    std::unique_lock<std::mutex> lock() const {
        if (!state) throw ClosedError("Context");
        return lock_idle(*state);
    }
    kes_model_context* handle() const { return state->context; }
    void close() {
        if (!state) return;
        if (t_completing == state.get()) invalid("a run_async done-callback cannot close its own context");
        auto lk = lock_nogil(state->mu);
        py::gil_scoped_release nogil;  // destroying drains the queue, whose completions take the GIL
        kes_model_context_destroy(state->context);
        state->context = nullptr;
    }
};

// ---- inputs and outputs --------------------------------------------------------------------------------

// What a model input takes, known before the context is locked (dtypes and AIPP do not change with the
// gear), so that converting the caller's arrays (which may run Python code) happens unlocked.
struct InputSpec {
    std::string name;
    kes_dtype dtype;
    bool images;
};

std::vector<InputSpec> input_specs(const std::shared_ptr<ModelState>& model) {
    std::vector<InputSpec> specs;
    auto lk = lock_nogil(model->mu);
    if (!model->model) throw ClosedError("Model");
    size_t n = 0;
    check(kes_model_input_count(model->model, &n), "kes_model_input_count");
    for (size_t i = 0; i < n; ++i) {
        kes_tensor d;
        const char* name = nullptr;
        const char* aipp = nullptr;
        check(kes_model_input_desc(model->model, i, &d), "kes_model_input_desc");
        check(kes_model_input_name(model->model, i, &name), "kes_model_input_name");
        check(kes_model_input_aipp(model->model, i, &aipp), "kes_model_input_aipp");
        specs.push_back({name, d.dtype, aipp != nullptr});
    }
    return specs;
}

// The caller's inputs in model order: a sequence, a dict by name, or one value for a one-input model.
std::vector<py::object> order_inputs(const py::handle& inputs, const std::vector<InputSpec>& specs) {
    std::vector<py::object> out(specs.size());
    if (py::isinstance<py::dict>(inputs)) {
        auto d = py::reinterpret_borrow<py::dict>(inputs);
        for (size_t i = 0; i < specs.size(); ++i) {
            if (!d.contains(specs[i].name)) invalid("no value for input '" + specs[i].name + "'");
            out[i] = d[py::str(specs[i].name)];
        }
        if (py::len(d) != specs.size()) {
            for (const auto& kv : d) {
                const std::string key = py::str(kv.first);
                bool known = false;
                for (const auto& s : specs) known = known || s.name == key;
                if (!known) invalid("the model has no input named '" + key + "'");
            }
        }
        return out;
    }
    const bool sequence = (py::isinstance<py::list>(inputs) || py::isinstance<py::tuple>(inputs));
    if (!sequence) {
        if (specs.size() != 1)
            invalid("the model has " + std::to_string(specs.size()) + " inputs: pass a list or a dict by name");
        out[0] = py::reinterpret_borrow<py::object>(inputs);
        return out;
    }
    auto seq = py::reinterpret_borrow<py::sequence>(inputs);
    // One image list for a one-input image model is a batch, not a list of inputs.
    if (specs.size() == 1 && specs[0].images && py::len(seq) > 0 && py::isinstance<Image>(seq[0])) {
        out[0] = py::reinterpret_borrow<py::object>(inputs);
        return out;
    }
    if (py::len(seq) != specs.size())
        invalid("the model has " + std::to_string(specs.size()) + " inputs, got " + std::to_string(py::len(seq)));
    for (size_t i = 0; i < specs.size(); ++i) out[i] = seq[i];
    return out;
}

// An input array of the model's dtype, C-contiguous and aligned: the caller's own when it already is
// (no copy), else a converted copy; dtypes that cannot be cast within their kind are refused.
py::array input_array(const py::object& value, const InputSpec& spec) {
    if (value.is_none()) invalid("input '" + spec.name + "' is None");
    if (py::isinstance<Image>(value)) invalid("input '" + spec.name + "' takes an array, not an image (no AIPP)");
    const py::dtype want = numpy_dtype(spec.dtype);
    if (py::isinstance<py::array>(value)) {  // the common case, without numpy's Python-level require()
        auto a = py::reinterpret_borrow<py::array>(value);
        const int flags = a.flags();
        if (a.dtype().equal(want) && (flags & py::array::c_style) && (flags & py::detail::npy_api::NPY_ARRAY_ALIGNED_))
            return a;
    }
    py::module_ np = py::module_::import("numpy");
    py::object arr;
    try {
        arr = np.attr("asarray")(value);
    } catch (py::error_already_set& e) {
        invalid("input '" + spec.name + "' is not an array: " + std::string(e.what()));
    }
    const py::dtype have = arr.attr("dtype").cast<py::dtype>();
    if (!have.equal(want) && !np.attr("can_cast")(have, want, "same_kind").cast<bool>())
        invalid("input '" + spec.name + "' must be " + to_str(want) + ", got " + to_str(have) +
                " (not castable within its kind)");
    py::list req;
    req.append("C");
    req.append("A");
    return np.attr("require")(arr, want, req).cast<py::array>();
}

kes_tensor wrap_array(const py::array& a, kes_dtype dtype, const std::string& what) {
    if (a.ndim() > KES_TENSOR_MAX_DIMS)
        invalid(what + " has " + std::to_string(a.ndim()) + " dimensions; tensors have at most 8");
    int64_t shape[KES_TENSOR_MAX_DIMS];
    for (ssize_t d = 0; d < a.ndim(); ++d) shape[d] = a.shape(d);
    kes_tensor t;
    check(kes_tensor_wrap(&t, dtype, KES_LAYOUT_ND, static_cast<uint32_t>(a.ndim()), shape, const_cast<void*>(a.data()),
                          static_cast<size_t>(a.nbytes())),
          "kes_tensor_wrap");
    return t;
}

// Output arrays at the context's gear (called with the context locked): new ones, or the caller's,
// which must be writable, C-contiguous arrays of the output's dtype.
std::vector<py::array> output_arrays(const ContextState& state, const py::object& given) {
    size_t n = 0;
    check(kes_model_output_count(state.model->model, &n), "kes_model_output_count");
    std::vector<kes_tensor> descs(n);
    for (size_t i = 0; i < n; ++i)
        check(kes_model_context_output_desc(state.context, i, &descs[i]), "kes_model_context_output_desc");
    std::vector<py::array> out;
    if (given.is_none()) {
        for (const kes_tensor& d : descs) {
            std::vector<ssize_t> shape(d.shape, d.shape + d.ndim);
            out.emplace_back(numpy_dtype(d.dtype), shape);
        }
        return out;
    }
    if (!py::isinstance<py::sequence>(given) || py::len(given) != descs.size())
        invalid("outputs must be a list of " + std::to_string(descs.size()) + " arrays");
    auto seq = py::reinterpret_borrow<py::sequence>(given);
    for (size_t i = 0; i < descs.size(); ++i) {
        if (!py::isinstance<py::array>(seq[i])) invalid("outputs[" + std::to_string(i) + "] is not a NumPy array");
        py::array a = seq[i].cast<py::array>();
        const int flags = a.flags();
        if (!a.dtype().equal(numpy_dtype(descs[i].dtype)) || !(flags & py::array::c_style) || !a.writeable() ||
            !(flags & py::detail::npy_api::NPY_ARRAY_ALIGNED_))
            invalid("outputs[" + std::to_string(i) + "] must be a writable, aligned, C-contiguous " +
                    to_str(numpy_dtype(descs[i].dtype)) + " array");
        out.push_back(a);
    }
    return out;
}

// One execution's arguments as the C call takes them, with the Python objects owning their memory
// (destroy with the GIL held).
struct PreparedRun {
    bool images = false;
    std::vector<InputSpec> specs;
    std::vector<py::array> arrays;  // tensor inputs
    std::vector<std::unique_ptr<ImageList>> image_lists;
    std::vector<py::array> out_arrays;
    std::vector<kes_tensor> in, out;
    std::vector<kes_model_input> model_in;

    py::list results() const {
        py::list result;
        for (const auto& a : out_arrays) result.append(a);
        return result;
    }
};

// Converts the caller's inputs (may run Python code, so the context is not locked yet).
void prepare_inputs(const std::shared_ptr<ContextState>& state, const py::object& inputs, bool images, PreparedRun& r) {
    if (!state) throw ClosedError("Context");
    r.specs = input_specs(state->model);
    const auto& specs = r.specs;
    const auto values = order_inputs(inputs, specs);
    r.images = images;
    r.arrays.resize(specs.size());
    r.image_lists.resize(specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
        if (images && specs[i].images)
            r.image_lists[i] =
                std::make_unique<ImageList>(values[i], ("images of input '" + specs[i].name + "'").c_str());
        else if (specs[i].images && !images)
            invalid("input '" + specs[i].name + "' carries AIPP and takes images: use run_images");
        else
            r.arrays[i] = input_array(values[i], specs[i]);
    }
}

// The C structs for a prepared run and its output arrays at the context's gear (context locked).
void bind_run(const ContextState& state, const py::object& outputs, PreparedRun& r) {
    const size_t n = r.arrays.size();
    r.in.resize(n);
    r.model_in.resize(n);
    for (size_t i = 0; i < n; ++i) {
        if (r.image_lists[i]) {
            r.model_in[i] = {nullptr, r.image_lists[i]->images.data(),
                             static_cast<uint32_t>(r.image_lists[i]->images.size())};
        } else {
            r.in[i] = wrap_array(r.arrays[i], r.specs[i].dtype, "input '" + r.specs[i].name + "'");
            r.model_in[i] = {&r.in[i], nullptr, 0};
        }
    }
    r.out_arrays = output_arrays(state, outputs);
    r.out.resize(r.out_arrays.size());
    for (size_t i = 0; i < r.out.size(); ++i)
        r.out[i] =
            wrap_array(r.out_arrays[i], kes_dtype_of(r.out_arrays[i].dtype()), "outputs[" + std::to_string(i) + "]");
}

py::object run(const std::shared_ptr<ContextState>& state, const py::object& inputs, const py::object& outputs,
               bool images) {
    PreparedRun r;
    prepare_inputs(state, inputs, images, r);
    auto lk = lock_idle(*state);
    bind_run(*state, outputs, r);
    kes_model_context* ctx = state->context;
    call_nogil(images ? "kes_model_execute_images" : "kes_model_execute", [&] {
        return images ? kes_model_execute_images(ctx, r.model_in.data(), r.model_in.size(), r.out.data(), r.out.size())
                      : kes_model_execute(ctx, r.in.data(), r.in.size(), r.out.data(), r.out.size());
    });
    lk.unlock();
    return r.results();
}

// ---- run_async -----------------------------------------------------------------------------------------

// A queued execution: its arguments, kept alive until it finishes, and the future it resolves.
struct AsyncJob {
    PreparedRun run;
    py::object future;            // a concurrent.futures.Future
    const ContextState* context;  // only compared (t_completing), never dereferenced
};

// kes_model_callback, on the context's worker thread: resolves the job's future (whose done-callbacks
// run here, as with concurrent.futures executors) and frees the job. Nothing escapes into C.
void complete_async(kes_status status, const char* message, void* user) {
    auto* job = static_cast<AsyncJob*>(user);
    if (interpreter_finalizing()) return;  // no Python left to tell (or to free the arrays): the job leaks
    py::gil_scoped_acquire gil;
    std::unique_ptr<AsyncJob> owned(job);
    const ContextState* previous = t_completing;
    t_completing = job->context;
    try {
        if (status == KES_OK) {
            job->future.attr("set_result")(job->run.results());
        } else {
            const std::string text = message && *message ? message : kes_status_str(status);
            job->future.attr("set_exception")(error_object(Error(status, text)));
        }
    } catch (py::error_already_set& e) {
        e.discard_as_unraisable("kestrel run_async completion");
    } catch (const std::exception& e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
        PyErr_WriteUnraisable(nullptr);
    }
    owned.reset();  // the arrays, with the GIL
    t_completing = previous;
}

py::object run_async(const std::shared_ptr<ContextState>& state, const py::object& inputs, const py::object& outputs,
                     bool images) {
    auto job = std::make_unique<AsyncJob>();
    prepare_inputs(state, inputs, images, job->run);
    if (t_completing == state.get())
        invalid("a run_async done-callback runs on its context's worker: it cannot use that context (use another)");
    auto lk = lock_nogil(state->mu);
    if (!state->context) throw ClosedError("Context (or its Model)");
    bind_run(*state, outputs, job->run);
    job->future = py::module_::import("concurrent.futures").attr("Future")();
    job->future.attr("set_running_or_notify_cancel")();  // running from now on: cancel() returns False
    job->context = state.get();
    py::object future = job->future;
    kes_model_context* ctx = state->context;
    PreparedRun& r = job->run;
    auto submit = [&] {
        return images ? kes_model_execute_images_async(ctx, r.model_in.data(), r.model_in.size(), r.out.data(),
                                                       r.out.size(), complete_async, job.get())
                      : kes_model_execute_async(ctx, r.in.data(), r.in.size(), r.out.data(), r.out.size(),
                                                complete_async, job.get());
    };
    kes_status st = submit();
    if (st == KES_ERR_BUSY) {
        // A full queue (KES_MODEL_ASYNC_QUEUE_DEPTH jobs) makes the caller wait, as a bounded executor would.
        py::gil_scoped_release nogil;
        (void)kes_model_context_wait(ctx);  // the jobs' failures went to their futures
        st = submit();
    }
    check(st, images ? "kes_model_execute_images_async" : "kes_model_execute_async");
    state->async_used = true;
    job.release();  // complete_async owns it now
    return future;
}

std::vector<TensorInfo> context_describe(const Context& c, bool inputs) {
    auto lk = c.lock();  // the model outlives a locked, open context: Model.close() takes this lock
    const kes_model* model = c.state->model->model;
    size_t n = 0;
    check(inputs ? kes_model_input_count(model, &n) : kes_model_output_count(model, &n), "count");
    std::vector<TensorInfo> out;
    for (size_t i = 0; i < n; ++i) {
        kes_tensor d;
        const char* name = nullptr;
        const char* aipp = nullptr;
        if (inputs) {
            check(kes_model_context_input_desc(c.handle(), i, &d), "kes_model_context_input_desc");
            check(kes_model_input_name(model, i, &name), "kes_model_input_name");
            check(kes_model_input_aipp(model, i, &aipp), "kes_model_input_aipp");
        } else {
            check(kes_model_context_output_desc(c.handle(), i, &d), "kes_model_context_output_desc");
            check(kes_model_output_name(model, i, &name), "kes_model_output_name");
        }
        out.push_back(info_of(d, name, aipp));
    }
    return out;
}

const char* layout_str(kes_layout l) {
    return kes_layout_name(l);
}

// ---- converter ---------------------------------------------------------------------------------------

std::string join_list(const py::object& obj, const char* sep, bool pairs) {
    if (obj.is_none()) return "";
    if (py::isinstance<py::str>(obj)) return obj.cast<std::string>();
    std::string s;
    for (const py::handle item : obj) {
        if (!s.empty()) s += sep;
        if (pairs) {
            auto t = item.cast<std::vector<long long>>();
            if (t.size() != 2) invalid("dynamic_image_size takes (height, width) pairs");
            s += std::to_string(t[0]) + "," + std::to_string(t[1]);
        } else {
            s += std::to_string(item.cast<long long>());
        }
    }
    return s;
}

std::string shapes_str(const py::object& obj) {
    if (obj.is_none()) return "";
    if (py::isinstance<py::str>(obj)) return obj.cast<std::string>();
    if (!py::isinstance<py::dict>(obj)) invalid("input_shape is 'name:1,3,224,224;...' or {name: shape}");
    std::string s;
    for (const auto& kv : obj.cast<py::dict>()) {
        if (!s.empty()) s += ";";
        s += to_str(kv.first) + ":";
        std::string dims;
        for (const py::handle d : kv.second) dims += (dims.empty() ? "" : ",") + std::to_string(d.cast<long long>());
        s += dims;
    }
    return s;
}

std::string freeze_str(const py::object& obj) {
    if (obj.is_none()) return "";
    if (py::isinstance<py::str>(obj)) return obj.cast<std::string>();
    if (!py::isinstance<py::dict>(obj)) invalid("freeze_input is 'name=file.npy;...' or {name: path}");
    std::string s;
    for (const auto& kv : obj.cast<py::dict>()) {
        std::string path;
        if (!as_path(kv.second, &path)) invalid("freeze_input values are paths");
        s += (s.empty() ? "" : ";") + to_str(kv.first) + "=" + path;
    }
    return s;
}

py::dict summary_dict(const kes_convert_summary& s) {
    py::dict d;
    d["ops"] = s.ops;
    d["parameters"] = s.parameters;
    d["arena_bytes"] = s.arena_bytes;
    d["ideal_bytes"] = s.ideal_bytes;
    d["weight_bytes"] = s.weight_bytes;
    d["file_bytes"] = s.file_bytes;
    d["nodes_folded"] = s.nodes_folded;
    d["nodes_fused"] = s.nodes_fused;
    d["nodes_removed"] = s.nodes_removed;
    return d;
}

}  // namespace

constexpr const char* RUN_ASYNC_DOC =
    "Queues run(inputs, outputs) on the context's worker thread (kes_model_execute_async) and returns a "
    "concurrent.futures.Future at once: result() gives the outputs, or raises the run's kestrel.Error. The "
    "runs of a context go in order; with 16 queued, the call waits for the queue. The input arrays are held "
    "(not copied) until the run ends: do not change them meanwhile. Done-callbacks run on the worker thread "
    "and must not use the same context (InvalidArgumentError). run, the gear setters and close() wait for "
    "the queued runs first.";

#if KES_HAVE_AIPP
constexpr const char* SET_DYNAMIC_AIPP_DOC =
    "Gives the input (index or name) whose AIPP is 'aipp_mode : dynamic' a copy of a kestrel.aipp.Dynamic's "
    "parameters for the next run_images (image k with batch item k); None clears them. Later changes to the "
    "Dynamic do not reach the context until it is given again.";

void set_dynamic_aipp(const Context& c, const py::object& input, const py::object& params) {
    std::shared_ptr<kes_aipp_dynamic> copy;
    if (!params.is_none()) copy.reset(copy_dynamic(params), kes_aipp_dynamic_destroy);
    auto lk = c.lock();
    size_t index = 0;
    if (py::isinstance<py::str>(input)) {
        const std::string name = input.cast<std::string>();
        check(kes_model_find_input(c.state->model->model, name.c_str(), &index), "kes_model_find_input");
    } else if (py::isinstance<py::int_>(input)) {
        const auto i = input.cast<long long>();
        if (i < 0) invalid("input index " + std::to_string(i) + " is negative");
        index = static_cast<size_t>(i);
    } else {
        invalid("input is an index or a name");
    }
    check(kes_model_context_set_dynamic_aipp(c.handle(), index, copy.get()), "kes_model_context_set_dynamic_aipp");
    auto& held = c.state->dynamic_aipp;
    if (held.size() <= index) held.resize(index + 1);
    held[index] = std::move(copy);  // the one replaced is no longer borrowed
}
#endif

void register_engine(py::module_& m) {
    py::class_<TensorInfo>(m, "TensorInfo", "A model input or output: name, shape, dtype, layout, AIPP config.")
        .def_readonly("name", &TensorInfo::name)
        .def_property_readonly("shape", [](const TensorInfo& t) { return py::tuple(py::cast(t.shape)); })
        .def_property_readonly("dtype", [](const TensorInfo& t) { return numpy_dtype(t.dtype); })
        .def_property_readonly("layout", [](const TensorInfo& t) { return std::string(layout_str(t.layout)); })
        .def_readonly("aipp", &TensorInfo::aipp,
                      "The aipp_op text converted into the model (None: none); an "
                      "input with AIPP takes images (run_images).")
        .def_readonly("nbytes", &TensorInfo::nbytes)
        .def("__repr__", [](const TensorInfo& t) {
            std::string s = "<kestrel.TensorInfo '" + t.name + "' " + to_str(numpy_dtype(t.dtype)) + " (";
            for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
            return s + ") " + layout_str(t.layout) + (t.aipp.is_none() ? "" : " aipp") + ">";
        });

    py::class_<Context>(m, "Context",
                        "One execution state of a Model (a work arena): runs on one thread at a time (calls from "
                        "several threads wait for each other); make one per thread to run in parallel. The GIL "
                        "is released while the model runs.")
        .def(
            "run",
            [](const Context& c, const py::object& inputs, const py::object& outputs) {
                return run(c.state, inputs, outputs, false);
            },
            py::arg("inputs"), py::arg("outputs") = py::none(),
            "Runs the model: inputs as a list in model order, a dict by name, or one array for a one-input model; "
            "returns the outputs as a list of NumPy arrays (or fills `outputs`). Arrays of the input's dtype, "
            "C-contiguous and aligned are read in place; others are converted (within their kind: float64 to "
            "float32 yes, float to int no) into a copy.")
        .def(
            "run_images",
            [](const Context& c, const py::object& inputs, const py::object& outputs) {
                return run(c.state, inputs, outputs, true);
            },
            py::arg("inputs"), py::arg("outputs") = py::none(),
            "As run, with each AIPP input given an Image or a list of Images (one per batch item): the model's "
            "AIPP turns them into the input tensor, as on a board.")
        .def(
            "run_async",
            [](const Context& c, const py::object& inputs, const py::object& outputs) {
                return run_async(c.state, inputs, outputs, false);
            },
            py::arg("inputs"), py::arg("outputs") = py::none(), RUN_ASYNC_DOC)
        .def(
            "run_images_async",
            [](const Context& c, const py::object& inputs, const py::object& outputs) {
                return run_async(c.state, inputs, outputs, true);
            },
            py::arg("inputs"), py::arg("outputs") = py::none(), "run_images on the context's queue, as run_async.")
        .def(
            "wait", [](const Context& c) { auto lk = c.lock(); },
            "Waits until every run_async job of the context has finished (and its future is resolved).")
#if KES_HAVE_AIPP
        .def("set_dynamic_aipp", &set_dynamic_aipp, py::arg("input"), py::arg("params"), SET_DYNAMIC_AIPP_DOC)
#endif
        .def(
            "set_batch",
            [](const Context& c, int64_t batch) {
                auto lk = c.lock();
                check(kes_model_context_set_batch(c.handle(), batch), "kes_model_context_set_batch");
            },
            py::arg("batch"), "Selects the batch gear (0: the largest).")
        .def(
            "set_image_size",
            [](const Context& c, int64_t height, int64_t width) {
                auto lk = c.lock();
                check(kes_model_context_set_image_size(c.handle(), height, width), "kes_model_context_set_image_size");
            },
            py::arg("height"), py::arg("width"), "Selects the image size gear ((0, 0): the largest).")
        .def_property_readonly(
            "inputs", [](const Context& c) { return context_describe(c, true); }, "The inputs at the context's gear.")
        .def_property_readonly(
            "outputs", [](const Context& c) { return context_describe(c, false); },
            "The outputs at the context's gear.")
        .def_property_readonly("threads",
                               [](const Context& c) {
                                   auto lk = c.lock();
                                   uint32_t t = 0;
                                   check(kes_model_context_threads(c.handle(), &t), "kes_model_context_threads");
                                   return t;
                               })
        .def(
            "set_profiling",
            [](const Context& c, bool on) {
                auto lk = c.lock();
                check(kes_model_context_set_profiling(c.handle(), on), "kes_model_context_set_profiling");
            },
            py::arg("enabled"), "Times every layer of the next runs (layer_profile).")
        .def(
            "layer_profile",
            [](const Context& c) {
                auto lk = c.lock();
                size_t n = 0;
                check(kes_model_layer_count(c.state->model->model, &n), "kes_model_layer_count");
                py::list out;
                for (size_t i = 0; i < n; ++i) {
                    kes_model_layer_profile p;
                    std::memset(&p, 0, sizeof p);
                    p.struct_size = sizeof p;
                    check(kes_model_context_layer_profile(c.handle(), i, &p), "kes_model_context_layer_profile");
                    py::dict d;
                    d["name"] = p.name ? p.name : "";
                    d["op"] = p.op ? p.op : "";
                    d["impl"] = p.impl ? p.impl : "";
                    d["time_ns"] = p.time_ns;
                    d["flops"] = p.flops;
                    d["output_shape"] =
                        py::tuple(py::cast(std::vector<int64_t>(p.output_shape, p.output_shape + p.output_ndim)));
                    d["weight_bytes"] = p.weight_bytes;
                    d["packed_bytes"] = p.packed_bytes;
                    out.append(d);
                }
                return out;
            },
            "Each layer as the context last ran it: name, op, kernel, time (after set_profiling(True)).")
        .def("close", &Context::close, "Destroys the context now (waits for a running execution). Idempotent.")
        .def_property_readonly("closed", [](const Context& c) { return !c.state || !c.state->context; })
        .def("__enter__", [](py::object self) { return self; })
        .def("__exit__", [](Context& self, const py::args&) { self.close(); });

    py::class_<Model>(m, "Model",
                      "A loaded .kom model (kes_model). Model(path_or_bytes, mmap=False). close() (or a with block) "
                      "destroys its contexts and unloads it now.")
        .def(py::init([](const py::object& source, bool mmap) {
                 auto st = std::make_shared<ModelState>();
                 std::string path;
                 if (as_path(source, &path)) {
                     call_nogil("kes_model_load_from_file", [&] {
                         return kes_model_load_from_file(path.c_str(), mmap ? KES_MODEL_LOAD_MMAP : 0u, &st->model);
                     });
                 } else {
                     if (mmap) invalid("mmap=True needs a path");
                     Bytes bytes(source, "the model");
                     call_nogil("kes_model_load_from_memory",
                                [&] { return kes_model_load_from_memory(bytes.data(), bytes.size(), &st->model); });
                 }
                 return Model{st, nullptr};
             }),
             py::arg("source"), py::arg("mmap") = false)
        .def("close", &Model::close,
             "Destroys every context of the model (waiting for running ones), then "
             "unloads it. Idempotent.")
        .def_property_readonly("closed", [](const Model& s) { return !s.state || !s.state->model; })
        .def("__enter__", [](py::object self) { return self; })
        .def("__exit__", [](Model& self, const py::args&) { self.close(); })
        .def_property_readonly("inputs", [](const Model& s) { return s.describe(true); })
        .def_property_readonly("outputs", [](const Model& s) { return s.describe(false); })
        .def_property_readonly(
            "metadata",
            [](const Model& s) {
                auto lk = s.lock();
                kes_model_metadata md;
                std::memset(&md, 0, sizeof md);
                md.struct_size = sizeof md;
                check(kes_model_get_metadata(s.handle(), &md), "kes_model_get_metadata");
                py::dict d;
                d["format_version"] = md.format_version;
                d["source_format"] = md.source_format ? md.source_format : "";
                d["source_hash"] = md.source_hash ? md.source_hash : "";
                d["converter_version"] = md.converter_version ? md.converter_version : "";
                d["target_board"] = md.target_board ? md.target_board : "";
                return d;
            },
            "What the .kom records about its origin.")
        .def_property_readonly(
            "memory",
            [](const Model& s) {
                auto lk = s.lock();
                size_t work = 0, weight = 0, arena = 0, ideal = 0;
                check(kes_model_get_size(s.handle(), &work, &weight), "kes_model_get_size");
                check(kes_model_get_memory_plan(s.handle(), &arena, &ideal), "kes_model_get_memory_plan");
                py::dict d;
                d["work_bytes"] = work;
                d["weight_bytes"] = weight;
                d["arena_bytes"] = arena;
                d["ideal_bytes"] = ideal;
                return d;
            },
            "Work (arena + scratch) and weight bytes, and the memory plan's arena and ideal.")
        .def_property_readonly(
            "batch_gears",
            [](const Model& s) {
                auto lk = s.lock();
                size_t n = 0;
                check(kes_model_batch_gears(s.handle(), nullptr, 0, &n), "kes_model_batch_gears");
                std::vector<int64_t> g(n);
                check(kes_model_batch_gears(s.handle(), g.data(), n, &n), "kes_model_batch_gears");
                return g;
            },
            "The batch gears, ascending ([] for a static batch).")
        .def_property_readonly(
            "image_sizes",
            [](const Model& s) {
                auto lk = s.lock();
                size_t n = 0;
                check(kes_model_image_sizes(s.handle(), nullptr, 0, &n), "kes_model_image_sizes");
                std::vector<int64_t> g(2 * n);
                check(kes_model_image_sizes(s.handle(), g.data(), n, &n), "kes_model_image_sizes");
                std::vector<std::pair<int64_t, int64_t>> out;
                for (size_t i = 0; i < n; ++i) out.emplace_back(g[2 * i], g[2 * i + 1]);
                return out;
            },
            "The image size gears as (height, width), ascending ([] for a static size).")
        .def_property_readonly("layer_count",
                               [](const Model& s) {
                                   auto lk = s.lock();
                                   size_t n = 0;
                                   check(kes_model_layer_count(s.handle(), &n), "kes_model_layer_count");
                                   return n;
                               })
        .def(
            "context",
            [](Model& s, uint32_t threads, const std::vector<int>& affinity) {
                return Context{s.new_context(threads, affinity)};
            },
            py::arg("threads") = 0, py::arg("cpu_affinity") = std::vector<int>(),
            "A new execution context: threads per layer (0: the shared pool's, up to 8; 1: the calling thread), "
            "optionally pinned to cpu_affinity.")
        .def(
            "run",
            [](Model& s, const py::object& inputs, const py::object& outputs) {
                if (!s.default_context || !s.default_context->context) s.default_context = s.new_context(0, {});
                return run(s.default_context, inputs, outputs, false);
            },
            py::arg("inputs"), py::arg("outputs") = py::none(),
            "Context.run on the model's own context (created on first use; serialised across threads).")
        .def(
            "run_images",
            [](Model& s, const py::object& inputs, const py::object& outputs) {
                if (!s.default_context || !s.default_context->context) s.default_context = s.new_context(0, {});
                return run(s.default_context, inputs, outputs, true);
            },
            py::arg("inputs"), py::arg("outputs") = py::none(), "Context.run_images on the model's own context.")
#if KES_HAVE_AIPP
        .def(
            "set_dynamic_aipp",
            [](Model& s, const py::object& input, const py::object& params) {
                if (!s.default_context || !s.default_context->context) s.default_context = s.new_context(0, {});
                set_dynamic_aipp(Context{s.default_context}, input, params);
            },
            py::arg("input"), py::arg("params"), "Context.set_dynamic_aipp on the model's own context.")
#endif
        .def(
            "run_async",
            [](Model& s, const py::object& inputs, const py::object& outputs) {
                if (!s.default_context || !s.default_context->context) s.default_context = s.new_context(0, {});
                return run_async(s.default_context, inputs, outputs, false);
            },
            py::arg("inputs"), py::arg("outputs") = py::none(), "Context.run_async on the model's own context.")
        .def(
            "run_images_async",
            [](Model& s, const py::object& inputs, const py::object& outputs) {
                if (!s.default_context || !s.default_context->context) s.default_context = s.new_context(0, {});
                return run_async(s.default_context, inputs, outputs, true);
            },
            py::arg("inputs"), py::arg("outputs") = py::none(), "Context.run_images_async on the model's own context.")
        .def("__repr__", [](const Model& s) {
            return std::string(!s.state || !s.state->model ? "<kestrel.Model closed>" : "<kestrel.Model>");
        });

    m.def(
        "convert",
        [](const py::object& model, const py::object& output, const py::object& input_shape,
           const py::object& dynamic_batch, const py::object& dynamic_image_size, const py::object& insert_op_conf,
           const std::string& weight_type, const py::object& board, const py::object& freeze_input,
           const py::object& input_format, const std::string& format) {
            kes_convert_options o;
            check(kes_convert_options_init(&o), "kes_convert_options_init");
            if (format == "onnx")
                o.format = KES_CONVERT_FORMAT_ONNX;
            else if (format == "tflite")
                o.format = KES_CONVERT_FORMAT_TFLITE;
            else if (format != "auto")
                invalid("format must be 'auto', 'onnx' or 'tflite'");
            if (weight_type == "f16")
                o.weight_type = KES_CONVERT_WEIGHTS_F16;
            else if (weight_type != "f32")
                invalid("weight_type must be 'f32' or 'f16'");
            const std::string shapes = shapes_str(input_shape), batch = join_list(dynamic_batch, ",", false),
                              sizes = join_list(dynamic_image_size, ";", true), freeze = freeze_str(freeze_input);
            std::string aipp, board_s, layout;
            if (!insert_op_conf.is_none() && !as_path(insert_op_conf, &aipp)) invalid("insert_op_conf is a path");
            if (!board.is_none()) board_s = board.cast<std::string>();
            if (!input_format.is_none()) layout = input_format.cast<std::string>();
            o.input_shape = shapes.empty() ? nullptr : shapes.c_str();
            o.dynamic_batch = batch.empty() ? nullptr : batch.c_str();
            o.dynamic_image_size = sizes.empty() ? nullptr : sizes.c_str();
            o.freeze_input = freeze.empty() ? nullptr : freeze.c_str();
            o.insert_op_conf = aipp.empty() ? nullptr : aipp.c_str();
            o.board = board_s.empty() ? nullptr : board_s.c_str();
            o.input_format = layout.empty() ? nullptr : layout.c_str();
            kes_convert_summary summary;
            std::memset(&summary, 0, sizeof summary);
            summary.struct_size = sizeof summary;
            std::string src, dst;
            const bool to_file = as_path(output, &dst);
            if (!to_file && !output.is_none()) invalid("output must be a path or None");
            std::string file_bytes;
            const bool from_file = as_path(model, &src);
            if (from_file && to_file) {
                call_nogil("kes_convert_file",
                           [&] { return kes_convert_file(src.c_str(), dst.c_str(), &o, &summary); });
                return py::object(summary_dict(summary));
            }
            std::unique_ptr<Bytes> held;
            if (from_file) {
                std::ifstream in(src, std::ios::binary);
                if (!in) throw Error(KES_ERR_NOT_FOUND, "convert: cannot open " + src + ": " + std::strerror(errno));
                file_bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
                if (in.bad()) throw Error(KES_ERR_IO, "convert: cannot read " + src);
            } else {
                held = std::make_unique<Bytes>(model, "the model");
            }
            const void* data = held ? held->data() : file_bytes.data();
            const size_t data_size = held ? held->size() : file_bytes.size();
            void* kom = nullptr;
            size_t size = 0;
            call_nogil("kes_convert_memory",
                       [&] { return kes_convert_memory(data, data_size, &o, &kom, &size, &summary); });
            py::bytes result(static_cast<const char*>(kom), size);
            kes_convert_free(kom);
            if (to_file) {
                py::module_::import("pathlib").attr("Path")(dst).attr("write_bytes")(result);
                return py::object(summary_dict(summary));
            }
            return py::object(result);
        },
        py::arg("model"), py::arg("output") = py::none(), py::kw_only(), py::arg("input_shape") = py::none(),
        py::arg("dynamic_batch") = py::none(), py::arg("dynamic_image_size") = py::none(),
        py::arg("insert_op_conf") = py::none(), py::arg("weight_type") = "f32", py::arg("board") = py::none(),
        py::arg("freeze_input") = py::none(), py::arg("input_format") = py::none(), py::arg("format") = "auto",
        "Converts an ONNX or TFLite model (a path or its bytes) into a .kom, with kes-convert's options: "
        "input_shape ('name:1,3,224,224;...' or {name: shape}), dynamic_batch ([1, 2, 4] or '1,2,4'), "
        "dynamic_image_size ([(h, w), ...]), insert_op_conf (an aipp_op config path), weight_type ('f32', "
        "'f16'), board ('310', '310B', 'host'), freeze_input ({name: 'file.npy'}), input_format ('NCHW', "
        "'NHWC', 'ND'), format ('auto', 'onnx', 'tflite'). Returns the .kom bytes, or with `output` a path, "
        "writes it there (atomically) and returns the summary dict.");
}

}  // namespace kespy
