// kestrel.Repository (kes_fv_repo): aclfv-style feature libraries, 1:N and M:N search into NumPy arrays,
// save/load, FAISS export; kestrel.ProductQuantizer (kes_fv_pq).
#include <cstring>
#include <shared_mutex>

#include "common.hpp"

namespace kespy {
namespace {

// Searches and changes may run at once (the repository locks itself); close() must be the last call,
// so every call holds the shared side of this lock and close() the exclusive side.
struct RepoState {
    std::shared_mutex mu;
    kes_fv_repo* repo = nullptr;
    ~RepoState() { kes_fv_repo_destroy(repo); }
};

struct Repository {
    std::shared_ptr<RepoState> state;

    std::shared_lock<std::shared_mutex> lock() const {
        if (!state) throw ClosedError("Repository");
        auto lk = lock_nogil<std::shared_lock>(state->mu);
        if (!state->repo) throw ClosedError("Repository");
        return lk;
    }
    kes_fv_repo* handle() const { return state->repo; }
    void close() {
        if (!state) return;
        py::gil_scoped_release nogil;
        std::unique_lock<std::shared_mutex> lk(state->mu);
        kes_fv_repo_destroy(state->repo);
        state->repo = nullptr;
    }
    static Repository adopt(kes_fv_repo* repo) {
        auto st = std::make_shared<RepoState>();
        st->repo = repo;
        return Repository{st};
    }
};

py::dtype result_dtype() {
    static py::object dt;
    if (!dt) {
        py::dict spec;
        spec["names"] = py::make_tuple("id0", "id1", "offset", "distance");
        spec["formats"] = py::make_tuple("<u4", "<u4", "<u4", "<f4");
        spec["offsets"] = py::make_tuple(offsetof(kes_fv_result, id0), offsetof(kes_fv_result, id1),
                                         offsetof(kes_fv_result, offset), offsetof(kes_fv_result, distance));
        spec["itemsize"] = sizeof(kes_fv_result);
        dt = py::module_::import("numpy").attr("dtype")(spec);
        dt.inc_ref();
    }
    return dt.cast<py::dtype>();
}

kes_fv_range range_from(const py::object& obj) {
    if (obj.is_none()) return {0, KES_FV_ID_MAX, 0, KES_FV_ID_MAX};
    const auto v = obj.cast<std::vector<long long>>();
    if (v.size() != 4) invalid("range is (id0_min, id0_max, id1_min, id1_max), inclusive");
    for (long long x : v)
        if (x < 0 || x > 0xFFFFFFFFll) invalid("range bounds must be 0..1023");
    return {static_cast<uint32_t>(v[0]), static_cast<uint32_t>(v[1]), static_cast<uint32_t>(v[2]),
            static_cast<uint32_t>(v[3])};
}

kes_fv_search_params params_from(uint32_t k, const py::object& range, const py::object& threshold, uint32_t rerank) {
    kes_fv_search_params p;
    kes_fv_search_params_init(&p);
    p.k = k;
    p.range = range_from(range);
    if (!threshold.is_none()) {
        p.use_threshold = 1;
        p.threshold = threshold.cast<float>();
    }
    p.rerank = rerank;
    return p;
}

py::dict config_dict(const kes_fv_config& c) {
    py::dict d;
    d["kind"] = c.kind == KES_FV_PQ36 ? "pq36" : "dense";
    d["dim"] = c.dim;
    d["storage"] = kes_dtype_name(c.storage);
    d["metric"] = c.metric == KES_FV_METRIC_IP ? "ip" : c.metric == KES_FV_METRIC_COSINE ? "cosine" : "l2";
    d["max_topk"] = c.max_topk;
    d["capacity_hint"] = c.capacity_hint;
    d["keep_f32"] = c.keep_f32 != 0;
    return d;
}

// The bytes of `count` features as the repository takes them: dense rows of floats, or 36-byte PQ36
// records (uint8).
struct Features {
    py::array array;
    uint64_t count = 0;
    size_t bytes = 0;
};

kes_fv_config config_of(const Repository& r) {
    auto lk = r.lock();
    kes_fv_config c;
    kes_fv_config_init(&c);
    check(kes_fv_repo_get_config(r.handle(), &c), "kes_fv_repo_get_config");
    return c;
}

// Converted before the repository is locked: a conversion may run Python code.
Features features_for(const kes_fv_config& c, const py::handle& obj) {
    Features f;
    if (c.kind == KES_FV_PQ36) {
        if (obj.is_none()) invalid("features are None");
        py::module_ np = py::module_::import("numpy");
        py::object a = np.attr("asarray")(obj);
        if (!a.attr("dtype").cast<py::dtype>().equal(py::dtype("uint8")))
            invalid("PQ36 features are uint8 records of 36 bytes ([n, 36])");
        f.array = np.attr("ascontiguousarray")(a).cast<py::array>();
        if (f.array.size() % KES_FV_PQ36_BYTES) invalid("PQ36 features are whole 36-byte records");
        f.count = static_cast<uint64_t>(f.array.size()) / KES_FV_PQ36_BYTES;
    } else {
        f.array = float32_array(obj, "features");
        if (f.array.ndim() > 2) invalid("features are [n, dim] or one [dim] vector");
        if (f.array.size() % c.dim) invalid("features must hold whole vectors of " + std::to_string(c.dim) + " floats");
        f.count = static_cast<uint64_t>(f.array.size()) / c.dim;
    }
    f.bytes = static_cast<size_t>(f.array.nbytes());
    return f;
}

// ---- product quantiser -----------------------------------------------------------------------------------

// encode, decode, compute_table and the getters may run at once; train and set_codebook change the
// quantiser and must run alone (kestrel/fv.h), as must close(): a shared_mutex says which.
struct PqState {
    std::shared_mutex mu;
    kes_fv_pq* pq = nullptr;
    ~PqState() { kes_fv_pq_destroy(pq); }
};

struct ProductQuantizer {
    std::shared_ptr<PqState> state;

    template <template <class> class Lock>
    Lock<std::shared_mutex> lock() const {
        if (!state) throw ClosedError("ProductQuantizer");
        auto lk = lock_nogil<Lock>(state->mu);
        if (!state->pq) throw ClosedError("ProductQuantizer");
        return lk;
    }
    std::shared_lock<std::shared_mutex> reader() const { return lock<std::shared_lock>(); }
    std::unique_lock<std::shared_mutex> writer() const { return lock<std::unique_lock>(); }
    kes_fv_pq* handle() const { return state->pq; }
    uint32_t dim() const {
        uint32_t d = 0;
        check(kes_fv_pq_dim(handle(), &d), "kes_fv_pq_dim");
        return d;
    }
    void close() {
        if (!state) return;
        py::gil_scoped_release nogil;
        std::unique_lock<std::shared_mutex> lk(state->mu);
        kes_fv_pq_destroy(state->pq);
        state->pq = nullptr;
    }
    static ProductQuantizer adopt(kes_fv_pq* pq) {
        auto st = std::make_shared<PqState>();
        st->pq = pq;
        return ProductQuantizer{st};
    }
};

// Float vectors for the quantiser: [n, dim] or one [dim] vector (float32, C-contiguous; a copy if not).
py::array pq_vectors(const py::handle& obj, uint32_t dim, const char* what) {
    py::array a = float32_array(obj, what);
    if (a.ndim() == 0 || a.ndim() > 2 || a.shape(a.ndim() - 1) != static_cast<ssize_t>(dim))
        invalid(std::string(what) + " must be [n, " + std::to_string(dim) + "] (or one [" + std::to_string(dim) +
                "] vector) floats");
    return a;
}

uint64_t rows_of(const py::array& a) {
    return a.ndim() == 2 ? static_cast<uint64_t>(a.shape(0)) : 1u;
}

void register_pq(py::module_& m) {
    py::class_<ProductQuantizer>(
        m, "ProductQuantizer",
        "A 32 x 256 product quantiser (kes_fv_pq) for float vectors of dim floats (a multiple of 32): train it "
        "(deterministic k-means), encode vectors into aclfv's PQ36 records, build the ADC table a PQ36 "
        "Repository searches with. encode/decode/compute_table run in parallel; train waits for them.")
        .def(py::init([](uint32_t dim) {
                 kes_fv_pq* pq = nullptr;
                 check(kes_fv_pq_create(dim, &pq), "kes_fv_pq_create");
                 return ProductQuantizer::adopt(pq);
             }),
             py::arg("dim"))
        .def_property_readonly("dim",
                               [](const ProductQuantizer& q) {
                                   auto lk = q.reader();
                                   return q.dim();
                               })
        .def_property_readonly("trained",
                               [](const ProductQuantizer& q) {
                                   auto lk = q.reader();
                                   int trained = 0;
                                   check(kes_fv_pq_is_trained(q.handle(), &trained), "kes_fv_pq_is_trained");
                                   return trained != 0;
                               })
        .def(
            "train",
            [](const ProductQuantizer& q, const py::object& vectors, uint32_t iterations, uint64_t seed,
               uint64_t max_training_vectors) {
                kes_fv_pq_train_params p;
                kes_fv_pq_train_params_init(&p);
                p.iterations = iterations;
                p.seed = seed;
                p.max_training_vectors = max_training_vectors;
                uint32_t dim = 0;
                {
                    auto lk = q.reader();
                    dim = q.dim();
                }
                py::array v = pq_vectors(vectors, dim, "training vectors");
                auto lk = q.writer();
                call_nogil("kes_fv_pq_train", [&] {
                    return kes_fv_pq_train(q.handle(), static_cast<const float*>(v.data()), rows_of(v),
                                           static_cast<size_t>(v.size()), &p);
                });
            },
            py::arg("vectors"), py::kw_only(), py::arg("iterations") = 25, py::arg("seed") = 1,
            py::arg("max_training_vectors") = 65536,
            "Trains the codebook on [n, dim] vectors (n >= 256; more than max_training_vectors are subsampled "
            "with the seed): the same vectors and seed give the same codebook on every CPU. GIL released.")
        .def(
            "encode",
            [](const ProductQuantizer& q, const py::object& vectors) {
                auto lk = q.reader();
                py::array v = pq_vectors(vectors, q.dim(), "vectors");
                const uint64_t n = rows_of(v);
                py::array_t<uint8_t> codes(std::vector<ssize_t>{static_cast<ssize_t>(n), KES_FV_PQ36_BYTES});
                call_nogil("kes_fv_pq_encode", [&] {
                    return kes_fv_pq_encode(q.handle(), static_cast<const float*>(v.data()), n,
                                            static_cast<size_t>(v.size()), codes.mutable_data(),
                                            static_cast<size_t>(codes.size()));
                });
                return codes;
            },
            py::arg("vectors"), "PQ36 records ([n, 36] uint8: 4 zero bytes + 32 codes) for [n, dim] vectors.")
        .def(
            "decode",
            [](const ProductQuantizer& q, const py::object& codes) {
                py::module_ np = py::module_::import("numpy");
                py::object a = np.attr("asarray")(codes);
                if (!a.attr("dtype").cast<py::dtype>().equal(py::dtype("uint8")) || a.attr("ndim").cast<int>() != 2 ||
                    a.attr("shape")[py::int_(1)].cast<size_t>() != KES_FV_PQ36_BYTES)
                    invalid("codes must be [n, 36] uint8 PQ36 records");
                py::array c = np.attr("ascontiguousarray")(a).cast<py::array>();
                auto lk = q.reader();
                const uint64_t n = static_cast<uint64_t>(c.shape(0));
                py::array_t<float> out(std::vector<ssize_t>{static_cast<ssize_t>(n), static_cast<ssize_t>(q.dim())});
                call_nogil("kes_fv_pq_decode", [&] {
                    return kes_fv_pq_decode(q.handle(), static_cast<const uint8_t*>(c.data()), n,
                                            static_cast<size_t>(c.nbytes()), out.mutable_data(),
                                            static_cast<size_t>(out.size()));
                });
                return out;
            },
            py::arg("codes"), "The reconstructions ([n, dim] float32) of PQ36 records.")
        .def(
            "compute_table",
            [](const ProductQuantizer& q, const py::object& queries) {
                auto lk = q.reader();
                const uint32_t dim = q.dim();
                py::array v = pq_vectors(queries, dim, "queries");
                const uint64_t n = rows_of(v);
                std::vector<ssize_t> shape{KES_FV_PQ36_SUBSPACES, KES_FV_PQ36_CENTROIDS};
                if (v.ndim() == 2) shape.insert(shape.begin(), static_cast<ssize_t>(n));
                py::array_t<float> tables(shape);
                const float* in = static_cast<const float*>(v.data());
                float* out = tables.mutable_data();
                call_nogil("kes_fv_pq_compute_table", [&] {
                    for (uint64_t i = 0; i < n; ++i) {
                        const kes_status st =
                            kes_fv_pq_compute_table(q.handle(), in + i * dim, dim, out + i * KES_FV_PQ36_TABLE_FLOATS,
                                                    KES_FV_PQ36_TABLE_FLOATS);
                        if (st != KES_OK) return st;
                    }
                    return KES_OK;
                });
                return tables;
            },
            py::arg("queries"),
            "The ADC table ([32, 256] float32) of a [dim] query, or [m, 32, 256] for [m, dim] queries: what "
            "Repository.search / search_batch take on a PQ36 repository (distance = ||q - decode(code)||^2).")
        .def_property_readonly(
            "codebook",
            [](const ProductQuantizer& q) {
                auto lk = q.reader();
                const uint32_t dim = q.dim();
                py::array_t<float> out(std::vector<ssize_t>{KES_FV_PQ36_SUBSPACES, KES_FV_PQ36_CENTROIDS,
                                                            static_cast<ssize_t>(dim / KES_FV_PQ36_SUBSPACES)});
                check(kes_fv_pq_get_codebook(q.handle(), out.mutable_data(), static_cast<size_t>(out.size())),
                      "kes_fv_pq_get_codebook");
                return out;
            },
            "A copy of the codebook: [32, 256, dim / 32] float32 (InvalidArgumentError before training).")
        .def(
            "set_codebook",
            [](const ProductQuantizer& q, const py::object& codebook) {
                py::array c = float32_array(codebook, "codebook");
                auto lk = q.writer();
                check(kes_fv_pq_set_codebook(q.handle(), static_cast<const float*>(c.data()),
                                             static_cast<size_t>(c.size())),
                      "kes_fv_pq_set_codebook");
            },
            py::arg("codebook"), "Sets a saved codebook (256 x dim floats, every value finite): trained from then on.")
        .def("close", &ProductQuantizer::close, "Frees the quantiser now (waits for running calls). Idempotent.")
        .def_property_readonly("closed", [](const ProductQuantizer& q) { return !q.state || !q.state->pq; })
        .def("__enter__", [](py::object self) { return self; })
        .def("__exit__", [](ProductQuantizer& self, const py::args&) { self.close(); });
}

}  // namespace

void register_fv(py::module_& m) {
    register_pq(m);
    m.attr("FV_RESULT_DTYPE") = result_dtype();
    m.attr("FV_ID_MAX") = KES_FV_ID_MAX;

    py::class_<Repository>(m, "Repository",
                           "An fv repository (kes_fv_repo): libraries addressed by (id0, id1), features by (id0, id1, "
                           "offset); dense float embeddings (f32/f16/int8 storage; ip, cosine or l2) or aclfv's "
                           "PQ36. Searches run in parallel from any threads, with the GIL released.")
        .def(py::init([](uint32_t dim, const std::string& kind, const std::string& storage, const std::string& metric,
                         uint32_t max_topk, uint64_t capacity_hint, bool keep_f32) {
                 kes_fv_config c;
                 kes_fv_config_init(&c);
                 if (kind == "dense")
                     c.kind = KES_FV_DENSE;
                 else if (kind == "pq36")
                     c.kind = KES_FV_PQ36;
                 else
                     invalid("kind must be 'dense' or 'pq36'");
                 c.dim = dim;
                 if (storage == "f32")
                     c.storage = KES_F32;
                 else if (storage == "f16")
                     c.storage = KES_F16;
                 else if (storage == "int8" || storage == "i8")
                     c.storage = KES_I8;
                 else
                     invalid("storage must be 'f32', 'f16' or 'int8'");
                 if (metric == "ip")
                     c.metric = KES_FV_METRIC_IP;
                 else if (metric == "cosine")
                     c.metric = KES_FV_METRIC_COSINE;
                 else if (metric == "l2")
                     c.metric = KES_FV_METRIC_L2;
                 else
                     invalid("metric must be 'ip', 'cosine' or 'l2'");
                 c.max_topk = max_topk;
                 c.capacity_hint = capacity_hint;
                 c.keep_f32 = keep_f32;
                 kes_fv_repo* repo = nullptr;
                 check(kes_fv_repo_create(&c, &repo), "kes_fv_repo_create");
                 return Repository::adopt(repo);
             }),
             py::arg("dim") = 0, py::kw_only(), py::arg("kind") = "dense", py::arg("storage") = "f32",
             py::arg("metric") = "cosine", py::arg("max_topk") = KES_FV_TOPK_DEFAULT_MAX, py::arg("capacity_hint") = 0,
             py::arg("keep_f32") = false)
        .def_static(
            "load",
            [](const py::object& source) {
                kes_fv_repo* repo = nullptr;
                std::string path;
                if (as_path(source, &path)) {
                    call_nogil("kes_fv_repo_load", [&] { return kes_fv_repo_load(path.c_str(), &repo); });
                } else {
                    Bytes bytes(source, "the repository");
                    call_nogil("kes_fv_repo_load_memory",
                               [&] { return kes_fv_repo_load_memory(bytes.data(), bytes.size(), &repo); });
                }
                return Repository::adopt(repo);
            },
            py::arg("source"), "Loads a saved repository from a path (mapped) or its bytes.")
        .def_static(
            "open_logged",
            [](const py::object& snapshot, const py::object& log) {
                std::string s, l;
                if (!as_path(snapshot, &s) || !as_path(log, &l)) invalid("open_logged takes two paths");
                kes_fv_repo* repo = nullptr;
                call_nogil("kes_fv_repo_open_logged",
                           [&] { return kes_fv_repo_open_logged(s.c_str(), l.c_str(), &repo); });
                return Repository::adopt(repo);
            },
            py::arg("snapshot"), py::arg("log"),
            "Loads a snapshot, replays and keeps an append log: every change is durable when its call returns.")
        .def(
            "save",
            [](const Repository& r, const py::object& path) {
                std::string p;
                if (!as_path(path, &p)) invalid("save needs a path");
                auto lk = r.lock();
                call_nogil("kes_fv_repo_save", [&] { return kes_fv_repo_save(r.handle(), p.c_str()); });
            },
            py::arg("path"), "Saves atomically (temporary file, fsync, rename).")
        .def(
            "checkpoint",
            [](const Repository& r, const py::object& path) {
                std::string p;
                if (!as_path(path, &p)) invalid("checkpoint needs a path");
                auto lk = r.lock();
                call_nogil("kes_fv_repo_checkpoint", [&] { return kes_fv_repo_checkpoint(r.handle(), p.c_str()); });
            },
            py::arg("snapshot"), "Saves a snapshot and empties the append log.")
        .def_property_readonly("config",
                               [](const Repository& r) {
                                   auto lk = r.lock();
                                   kes_fv_config c;
                                   kes_fv_config_init(&c);
                                   check(kes_fv_repo_get_config(r.handle(), &c), "kes_fv_repo_get_config");
                                   return config_dict(c);
                               })
        .def(
            "add",
            [](const Repository& r, uint32_t id0, uint32_t id1, const py::object& features, const py::object& offset) {
                Features f = features_for(config_of(r), features);
                auto lk = r.lock();
                uint32_t off = 0;
                if (offset.is_none())
                    check(kes_fv_repo_library_size(r.handle(), id0, id1, &off), "kes_fv_repo_library_size");
                else
                    off = offset.cast<uint32_t>();
                call_nogil("kes_fv_repo_add", [&] {
                    return kes_fv_repo_add(r.handle(), id0, id1, off, f.array.data(), f.count, f.bytes);
                });
                return off;
            },
            py::arg("id0"), py::arg("id1"), py::arg("features"), py::arg("offset") = py::none(),
            "Appends features ([n, dim] floats, or [n, 36] uint8 PQ36 records) to library (id0, id1); offset "
            "None: the library's size (else it must equal it, as aclfvRepoAdd). Returns the first new offset.")
        .def(
            "delete",
            [](const Repository& r, uint32_t id0, uint32_t id1, uint32_t offset) {
                auto lk = r.lock();
                call_nogil("kes_fv_repo_delete", [&] { return kes_fv_repo_delete(r.handle(), id0, id1, offset); });
            },
            py::arg("id0"), py::arg("id1"), py::arg("offset"), "Tombstones one feature.")
        .def(
            "modify",
            [](const Repository& r, uint32_t id0, uint32_t id1, uint32_t offset, const py::object& feature) {
                Features f = features_for(config_of(r), feature);
                auto lk = r.lock();
                if (f.count != 1) invalid("modify takes exactly one feature");
                call_nogil("kes_fv_repo_modify",
                           [&] { return kes_fv_repo_modify(r.handle(), id0, id1, offset, f.array.data(), f.bytes); });
            },
            py::arg("id0"), py::arg("id1"), py::arg("offset"), py::arg("feature"), "Rewrites one feature in place.")
        .def(
            "delete_range",
            [](const Repository& r, const py::object& range) {
                const kes_fv_range rg = range_from(range);
                uint32_t deleted = 0;
                auto lk = r.lock();
                call_nogil("kes_fv_repo_delete_range",
                           [&] { return kes_fv_repo_delete_range(r.handle(), &rg, &deleted); });
                return deleted;
            },
            py::arg("range"), "Removes every library in (id0_min, id0_max, id1_min, id1_max); returns how many.")
        .def(
            "library_size",
            [](const Repository& r, uint32_t id0, uint32_t id1) {
                auto lk = r.lock();
                uint32_t n = 0;
                check(kes_fv_repo_library_size(r.handle(), id0, id1, &n), "kes_fv_repo_library_size");
                return n;
            },
            py::arg("id0"), py::arg("id1"), "The offset the next add to (id0, id1) gets (deleted features included).")
        .def(
            "count",
            [](const Repository& r, const py::object& range) {
                auto lk = r.lock();
                uint64_t live = 0;
                uint32_t libs = 0;
                if (range.is_none()) {
                    check(kes_fv_repo_count(r.handle(), &live, &libs), "kes_fv_repo_count");
                    return py::make_tuple(live, libs);
                }
                const kes_fv_range rg = range_from(range);
                check(kes_fv_repo_count_range(r.handle(), &rg, &live), "kes_fv_repo_count_range");
                return py::make_tuple(live, py::none());
            },
            py::arg("range") = py::none(), "(live features, libraries) (with a range: (live features, None)).")
        .def("__len__",
             [](const Repository& r) {
                 auto lk = r.lock();
                 uint64_t live = 0;
                 check(kes_fv_repo_count(r.handle(), &live, nullptr), "kes_fv_repo_count");
                 return live;
             })
        .def(
            "search",
            [](const Repository& r, const py::object& query, uint32_t k, const py::object& range,
               const py::object& threshold, uint32_t rerank) {
                const kes_fv_search_params p = params_from(k, range, threshold, rerank);
                py::array q = float32_array(query, "query");
                auto lk = r.lock();
                py::array out(result_dtype(), std::vector<ssize_t>{static_cast<ssize_t>(k)});
                uint32_t found = 0;
                call_nogil("kes_fv_search", [&] {
                    return kes_fv_search(r.handle(), static_cast<const float*>(q.data()), static_cast<size_t>(q.size()),
                                         &p, static_cast<kes_fv_result*>(out.mutable_data()), k, &found);
                });
                return out[py::slice(0, found, 1)].cast<py::array>();
            },
            py::arg("query"), py::arg("k") = 10, py::kw_only(), py::arg("range") = py::none(),
            py::arg("threshold") = py::none(), py::arg("rerank") = 0,
            "1:N top-k: a FV_RESULT_DTYPE array (id0, id1, offset, distance), best first, at most k long.")
        .def(
            "search_batch",
            [](const Repository& r, const py::object& queries, uint32_t k, const py::object& range,
               const py::object& threshold, uint32_t rerank) {
                const kes_fv_search_params p = params_from(k, range, threshold, rerank);
                py::array q = float32_array(queries, "queries");
                if (q.ndim() == 3)  // PQ36 tables as ProductQuantizer.compute_table gives them: [m, 32, 256]
                    q = q.reshape(std::vector<ssize_t>{q.shape(0), q.shape(1) * q.shape(2)});
                auto lk = r.lock();
                size_t per = 0;
                check(kes_fv_repo_query_floats(r.handle(), &per), "kes_fv_repo_query_floats");
                if (q.ndim() != 2 || static_cast<size_t>(q.shape(1)) != per)
                    invalid("queries must be [m, " + std::to_string(per) + "]");
                const uint64_t mq = static_cast<uint64_t>(q.shape(0));
                if (mq > 0xFFFFFFFFull) invalid("too many queries");
                size_t entries = 0;
                check(kes_fv_search_result_entries(static_cast<uint32_t>(mq), k, &entries),
                      "kes_fv_search_result_entries");
                if (k == 0) invalid("k must be at least 1");
                py::array out(result_dtype(), std::vector<ssize_t>{static_cast<ssize_t>(mq), static_cast<ssize_t>(k)});
                std::memset(out.mutable_data(), 0xff, static_cast<size_t>(out.nbytes()));
                py::array_t<uint32_t> counts(static_cast<ssize_t>(mq));
                call_nogil("kes_fv_search_batch", [&] {
                    return kes_fv_search_batch(r.handle(), static_cast<const float*>(q.data()),
                                               static_cast<uint32_t>(mq), static_cast<size_t>(q.size()), &p,
                                               static_cast<kes_fv_result*>(out.mutable_data()), entries,
                                               counts.mutable_data());
                });
                return py::make_tuple(out, counts);
            },
            py::arg("queries"), py::arg("k") = 10, py::kw_only(), py::arg("range") = py::none(),
            py::arg("threshold") = py::none(), py::arg("rerank") = 0,
            "M:N top-k: (results [m, k] FV_RESULT_DTYPE, counts [m] uint32); row i's first counts[i] entries are "
            "its results, best first (the rest have every id 0xFFFFFFFF and a NaN distance).")
        .def(
            "export_faiss",
            [](const Repository& r, const py::object& path, const py::object& range) {
                std::string p;
                if (!as_path(path, &p)) invalid("export_faiss needs a path");
                const kes_fv_range rg = range_from(range);
                auto lk = r.lock();
                uint64_t n = 0;
                check(kes_fv_repo_count_range(r.handle(), &rg, &n), "kes_fv_repo_count_range");
                py::list fields;
                for (const char* name : {"id0", "id1", "offset"}) fields.append(py::make_tuple(name, "<u4"));
                py::array ids(py::module_::import("numpy").attr("dtype")(fields).cast<py::dtype>(),
                              std::vector<ssize_t>{static_cast<ssize_t>(n)});
                call_nogil("kes_fv_repo_export_faiss", [&] {
                    return kes_fv_repo_export_faiss(r.handle(), &rg, p.c_str(),
                                                    static_cast<kes_fv_feature_id*>(ids.mutable_data()), n, &n);
                });
                return ids;
            },
            py::arg("path"), py::arg("range") = py::none(),
            "Writes the live features as a FAISS index file; returns the id map (label -> (id0, id1, offset)).")
        .def(
            "set_pq",
            [](const Repository& r, const py::object& pq) {
                if (pq.is_none()) {
                    auto lk = r.lock();
                    check(kes_fv_repo_set_pq(r.handle(), nullptr), "kes_fv_repo_set_pq");
                    return;
                }
                if (!py::isinstance<ProductQuantizer>(pq)) invalid("set_pq takes a ProductQuantizer (or None)");
                const ProductQuantizer& q = pq.cast<const ProductQuantizer&>();
                auto qlk = q.reader();
                auto lk = r.lock();
                check(kes_fv_repo_set_pq(r.handle(), q.handle()), "kes_fv_repo_set_pq");
            },
            py::arg("pq"),
            "Keeps a copy of a trained quantiser's codebook in this PQ36 repository (saved with it; FAISS "
            "export needs it); None removes it.")
        .def(
            "pq",
            [](const Repository& r) {
                auto lk = r.lock();
                kes_fv_pq* pq = nullptr;
                check(kes_fv_repo_get_pq(r.handle(), &pq), "kes_fv_repo_get_pq");
                return ProductQuantizer::adopt(pq);
            },
            "A new ProductQuantizer with the repository's codebook (NotFoundError: none).")
        .def("close", &Repository::close, "Frees the repository now (waits for running calls). Idempotent.")
        .def_property_readonly("closed", [](const Repository& r) { return !r.state || !r.state->repo; })
        .def("__enter__", [](py::object self) { return self; })
        .def("__exit__", [](Repository& self, const py::args&) { self.close(); });
}

}  // namespace kespy
