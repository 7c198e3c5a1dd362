// kes-fv — command-line tool for Kestrel feature repositories (issue 6 §8).
//
//   kes-fv <command> [arguments] [--help]
//
// A command that changes a repository opens it with its append log (REPO.log, kestrel/fv.h "Append
// log"), so the change is synced to the log before it counts, and then checkpoints (temporary file +
// fsync + rename, then an empty log). A command killed between the two leaves the change in the log:
// every command replays a non-empty REPO.log when it opens the repository, so nothing acknowledged
// is lost and nothing half-written is read.
// Exit codes: 0 success, 1 failure (message from kes_last_error() on stderr), 2 usage error.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fv_internal.hpp"
#include "kes/error.hpp"
#include "kes/file.hpp"
#include "kes/npy.hpp"
#include "kestrel/fv.h"
#include "kestrel/trace.h"
#include "vector_files.hpp"

namespace {

constexpr int kOk = 0, kFailure = 1, kUsage = 2;

// A failure the user should read: printed as "kes-fv <cmd>: <message>", exit code `code`.
struct Exit {
    int code;
    std::string message;
};

[[noreturn]] void usage_error(const std::string& msg) {
    throw Exit{kUsage, msg};
}
[[noreturn]] void failure(const std::string& msg) {
    throw Exit{kFailure, msg};
}
void check(kes_status st, const char* what) {
    if (st != KES_OK) failure(std::string(what) + ": " + kes_last_error());
}

struct RepoDeleter {
    void operator()(kes_fv_repo* r) const { kes_fv_repo_destroy(r); }
};
using Repo = std::unique_ptr<kes_fv_repo, RepoDeleter>;
struct PqDeleter {
    void operator()(kes_fv_pq* p) const { kes_fv_pq_destroy(p); }
};
using Pq = std::unique_ptr<kes_fv_pq, PqDeleter>;

// ---- arguments --------------------------------------------------------------------------------

struct Args {
    std::vector<std::string> positional;
    std::map<std::string, std::string> options;  // "--k" → "10"; flags → ""
    bool help = false;

    bool has(const std::string& k) const { return options.count(k) != 0; }
    std::string get(const std::string& k, const std::string& def = "") const {
        const auto it = options.find(k);
        return it == options.end() ? def : it->second;
    }
    // The range in the message is the one enforced: --k said [0, max] and then refused 0.
    uint64_t number(const std::string& k, uint64_t def, uint64_t max, uint64_t min = 0) const {
        if (!has(k)) return def;
        const std::string& s = options.at(k);
        char* end = nullptr;
        errno = 0;
        const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
        if (s.empty() || s[0] == '-' || *end != '\0' || errno != 0 || v < min || v > max)
            usage_error(k + " must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "] (got '" +
                        s + "')");
        return v;
    }
};

// flags: options that take no value.
Args parse(int argc, char** argv, int first, const std::vector<std::string>& valued,
           const std::vector<std::string>& flags) {
    Args a;
    for (int i = first; i < argc; ++i) {
        const std::string s = argv[i];
        if (s == "--help" || s == "-h") {
            a.help = true;
        } else if (s.rfind("--", 0) == 0) {
            bool known = false;
            for (const auto& f : flags)
                if (f == s) {
                    a.options[s] = "";
                    known = true;
                }
            for (const auto& v : valued)
                if (v == s) {
                    if (i + 1 >= argc) usage_error(s + " needs a value");
                    a.options[s] = argv[++i];
                    known = true;
                }
            if (!known) usage_error("unknown option " + s);
        } else {
            a.positional.push_back(s);
        }
    }
    return a;
}

// "5" or "2:9" (inclusive) within [0, 1023].
void id_range(const Args& a, const std::string& key, uint32_t* lo, uint32_t* hi) {
    if (!a.has(key)) return;
    const std::string s = a.get(key);
    const size_t colon = s.find(':');
    auto num = [&](const std::string& t) {
        char* end = nullptr;
        const unsigned long v = std::strtoul(t.c_str(), &end, 10);
        if (t.empty() || *end != '\0' || t[0] == '-' || v > KES_FV_ID_MAX)
            usage_error(key + " must be an id or a range a:b of ids in [0, 1023] (got '" + s + "')");
        return static_cast<uint32_t>(v);
    };
    *lo = num(s.substr(0, colon));
    *hi = colon == std::string::npos ? *lo : num(s.substr(colon + 1));
    if (*lo > *hi) usage_error(key + " range " + s + " has min > max");
}

// ---- files ------------------------------------------------------------------------------------

bool ends_with(const std::string& s, const char* suffix) {
    const size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// A float matrix file: format from --format or the extension (.npy, .fvecs; raw f32 needs --dim).
struct Matrix {
    std::unique_ptr<kes::MappedFile> file;
    kes::fv::MatrixLayout layout;

    void rows(uint64_t first, uint64_t count, float* out) const {
        kes::fv::copy_rows(file->data(), layout, first, count, out);
    }
    std::vector<float> all() const {
        std::vector<float> v(static_cast<size_t>(layout.rows) * layout.cols);
        rows(0, layout.rows, v.data());
        return v;
    }
};

Matrix open_matrix(const std::string& path, const Args& a) {
    std::string fmt = a.get("--format");
    if (fmt.empty()) fmt = ends_with(path, ".npy") ? "npy" : ends_with(path, ".fvecs") ? "fvecs" : "";
    if (fmt.empty()) usage_error("cannot tell the format of " + path + ": use --format npy|fvecs|f32");
    Matrix m;
    try {
        m.file = std::make_unique<kes::MappedFile>(path);
    } catch (const kes::Error& e) {
        failure(e.what());  // names the path
    }
    try {
        if (fmt == "npy")
            m.layout = kes::fv::parse_npy(m.file->data(), m.file->size());
        else if (fmt == "fvecs")
            m.layout = kes::fv::parse_fvecs(m.file->data(), m.file->size());
        else if (fmt == "f32") {
            if (!a.has("--dim")) usage_error("--format f32 needs --dim");
            m.layout =
                kes::fv::parse_raw_f32(m.file->size(), static_cast<uint32_t>(a.number("--dim", 0, KES_FV_DIM_MAX, 1)));
        } else
            usage_error("--format must be npy, fvecs or f32 (got '" + fmt + "')");
    } catch (const kes::Error& e) {
        failure(path + ": " + e.what());
    }
    if (a.has("--dim") && a.number("--dim", 0, KES_FV_DIM_MAX, 1) != m.layout.cols)
        failure(path + " has dim " + std::to_string(m.layout.cols) + ", --dim says " + a.get("--dim"));
    return m;
}

// An output file (export, encode, id maps) written through kes::AtomicFile, the sdk's one file
// writer: buffered, and in place only once close() succeeds, so a command that fails half-way leaves
// the previous file (or none), never half of a new one.
class OutFile {
public:
    explicit OutFile(const std::string& path) : file_(path) {}
    OutFile(const OutFile&) = delete;
    OutFile& operator=(const OutFile&) = delete;
    void write(const void* p, size_t n) {
        const auto* b = static_cast<const uint8_t*>(p);
        buffer_.insert(buffer_.end(), b, b + n);
        if (buffer_.size() >= kFlushBytes) flush();
    }
    void print(const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
        char line[256];
        va_list ap;
        va_start(ap, fmt);
        const int n = std::vsnprintf(line, sizeof line, fmt, ap);
        va_end(ap);
        write(line, static_cast<size_t>(std::min<int>(n, sizeof line - 1)));
    }
    void close() {
        flush();
        file_.commit();
    }

private:
    static constexpr size_t kFlushBytes = size_t{1} << 20;
    void flush() {
        file_.write(buffer_.data(), buffer_.size());
        buffer_.clear();
    }
    kes::AtomicFile file_;
    std::vector<uint8_t> buffer_;
};

std::string log_path(const std::string& repo_path) {
    return repo_path + ".log";
}

// For reading: the snapshot, plus the changes a command that was cut short left in the log.
Repo load_repo(const std::string& path) {
    kes_fv_repo* r = nullptr;
    struct stat st;
    const std::string log = log_path(path);
    if (::stat(log.c_str(), &st) == 0 && st.st_size > 0)
        check(kes_fv_repo_open_logged(path.c_str(), log.c_str(), &r), ("replaying the append log " + log).c_str());
    else
        check(kes_fv_repo_load(path.c_str(), &r), "loading the repository");
    return Repo(r);
}

// For changing: every add, delete and modify is in the log (synced) before it returns; commit() below
// folds them into the snapshot.
Repo open_logged_repo(const std::string& path) {
    kes_fv_repo* r = nullptr;
    check(kes_fv_repo_open_logged(path.c_str(), log_path(path).c_str(), &r), "opening the repository and its log");
    return Repo(r);
}

void commit(kes_fv_repo* r, const std::string& path) {
    check(kes_fv_repo_checkpoint(r, path.c_str()), "saving the repository");
}

kes_fv_config config_of(const kes_fv_repo* r) {
    kes_fv_config c;
    kes_fv_config_init(&c);
    check(kes_fv_repo_get_config(r, &c), "reading the configuration");
    return c;
}

Pq repo_pq(const kes_fv_repo* r, const char* why) {
    kes_fv_pq* pq = nullptr;
    if (kes_fv_repo_get_pq(r, &pq) != KES_OK)
        failure(std::string("the repository has no PQ codebook (") + why + "): run kes-fv train-pq first");
    return Pq(pq);
}

// ---- progress ---------------------------------------------------------------------------------

class Progress {
public:
    Progress(const char* what, uint64_t total) : what_(what), total_(total), on_(isatty(STDERR_FILENO) == 1) {}
    void update(uint64_t done) {
        if (!on_ || total_ == 0) return;
        const int pct = static_cast<int>(done * 100 / total_);
        if (pct == last_) return;
        last_ = pct;
        char bar[41];
        const int fill = pct * 40 / 100;
        for (int i = 0; i < 40; ++i) bar[i] = i < fill ? '#' : '.';
        bar[40] = '\0';
        std::fprintf(stderr, "\r%s [%s] %3d%% %" PRIu64 "/%" PRIu64, what_, bar, pct, done, total_);
        if (done == total_) std::fputc('\n', stderr);
        std::fflush(stderr);
    }

private:
    const char* what_;
    uint64_t total_;
    bool on_;
    int last_ = -1;
};

// ---- commands ---------------------------------------------------------------------------------

struct Command {
    const char* name;
    const char* summary;
    const char* help;
    int (*run)(int argc, char** argv);
};

int cmd_create(int argc, char** argv);
int cmd_import(int argc, char** argv);
int cmd_train_pq(int argc, char** argv);
int cmd_encode(int argc, char** argv);
int cmd_search(int argc, char** argv);
int cmd_stats(int argc, char** argv);
int cmd_delete(int argc, char** argv);
int cmd_modify(int argc, char** argv);
int cmd_export(int argc, char** argv);

const char kFileOpts[] =
    "  --format npy|fvecs|f32   input format (default: from the extension .npy / .fvecs)\n"
    "  --dim D                  vector dimension (required for f32; checked otherwise)\n";

const Command kCommands[] = {
    {"create", "create an empty repository file",
     "usage: kes-fv create REPO --kind pq36|dense [options]\n"
     "  --kind pq36|dense        aclfv PQ36 codes, or float embeddings\n"
     "  --dim D                  dense: dimension 1..65536\n"
     "  --storage f32|f16|int8   dense: how vectors are stored (default f32)\n"
     "  --metric ip|cosine|l2    dense: similarity (default ip)\n"
     "  --max-topk K             largest k a search may ask for (default 4800)\n"
     "  --keep-f32               dense f16/int8: also keep f32 copies (for search --rerank)\n"
     "  --force                  replace an existing file\n",
     cmd_create},
    {"import", "add vectors from a .npy / .fvecs / raw f32 file to one library",
     "usage: kes-fv import REPO FILE [options]\n"
     "Appends every row of FILE to library (id0, id1) at its next offsets. A PQ36 repository encodes\n"
     "the floats with its codebook (train-pq first).\n"
     "  --id0 N --id1 N          library (default 0 0)\n",
     cmd_import},
    {"train-pq", "train the PQ36 codebook of a PQ36 repository from float vectors",
     "usage: kes-fv train-pq REPO FILE [options]\n"
     "Trains a 32 x 256 product quantiser (dim a multiple of 32; at least 256 vectors) and keeps it in\n"
     "the repository. Refused when the repository already holds features (their codes would no longer\n"
     "match) unless --force.\n"
     "  --seed S                 k-means seed (default 1); same data + seed = same codebook\n"
     "  --iterations N           Lloyd iterations at most (default 25)\n"
     "  --max-train N            subsample larger inputs to N vectors, at least 256 (default 65536)\n"
     "  --force                  replace the codebook even though features exist\n",
     cmd_train_pq},
    {"encode", "encode float vectors to PQ36 records with the repository's codebook",
     "usage: kes-fv encode REPO FILE OUT\n"
     "Writes one 36-byte record (4 zero bytes + 32 codes) per row of FILE to OUT.\n",
     cmd_encode},
    {"search", "top-k search for every row of a query file",
     "usage: kes-fv search REPO QUERIES [options]\n"
     "Prints CSV: query,rank,id0,id1,offset,distance. For a PQ36 repository the queries are floats,\n"
     "turned into ADC tables with the codebook (or ADC tables of 8192 floats with --tables).\n"
     "  --k K                    results per query (default 10)\n"
     "  --id0 A[:B] --id1 C[:D]  libraries searched (default all)\n"
     "  --threshold T            keep only results at least this close\n"
     "  --rerank N               re-rank a shortlist of N >= K by the f32 copies (needs --keep-f32)\n"
     "  --tables                 PQ36: the rows are ready 32x256 ADC tables\n",
     cmd_search},
    {"stats", "print the configuration, libraries and counts", "usage: kes-fv stats REPO\n", cmd_stats},
    {"delete", "delete one feature, or whole libraries",
     "usage: kes-fv delete REPO --id0 A[:B] --id1 C[:D] [--offset O]\n"
     "With --offset (single ids only): tombstones feature (id0, id1, O). Without: removes every library\n"
     "in the range.\n",
     cmd_delete},
    {"modify", "replace the vector of one feature",
     "usage: kes-fv modify REPO FILE --id0 N --id1 N --offset O [--row R] [options]\n"
     "Replaces feature (id0, id1, O), which must exist and not be deleted, with row R (default 0) of\n"
     "FILE. A PQ36 repository encodes it with its codebook.\n"
     "  --row R                  the row of FILE to use (default 0)\n",
     cmd_modify},
    {"export", "write live vectors as .npy, .fvecs or a FAISS index, plus an id map",
     "usage: kes-fv export REPO OUT.npy|OUT.fvecs|OUT.faiss [options]\n"
     "Row i of OUT.npy / OUT.fvecs is the stored vector (dense: dequantised; PQ36: decoded with the\n"
     "codebook) of line i+1 of the id map. OUT.faiss (or .index) is a FAISS index for\n"
     "faiss.read_index: IndexFlatIP (ip, cosine: normalise the queries), IndexFlatL2 (l2) or\n"
     "IndexPQ (pq36, with the codebook); FAISS label i is line i+1 of the id map.\n"
     "The id map is a CSV 'id0,id1,offset', or a uint32 (n, 3) array when PATH ends in .npy.\n"
     "Deleted features are skipped.\n"
     "  --ids PATH               id map (default OUT.ids.csv)\n"
     "  --id0 A[:B] --id1 C[:D]  libraries exported (default all)\n",
     cmd_export},
};

void print_help(const char* name) {
    for (const auto& c : kCommands)
        if (std::strcmp(c.name, name) == 0) {
            std::fputs(c.help, stdout);
            if (std::strcmp(name, "import") == 0 || std::strcmp(name, "train-pq") == 0 ||
                std::strcmp(name, "encode") == 0 || std::strcmp(name, "search") == 0 ||
                std::strcmp(name, "modify") == 0)
                std::fputs(kFileOpts, stdout);
        }
}

void print_usage(FILE* out) {
    std::fputs("usage: kes-fv <command> [arguments]   (kes-fv <command> --help for details)\n\ncommands:\n", out);
    for (const auto& c : kCommands) std::fprintf(out, "  %-9s %s\n", c.name, c.summary);
    std::fputs("\nexit codes: 0 success, 1 failure, 2 usage error\n", out);
}

void need_positional(const Args& a, size_t n, const char* cmd) {
    if (a.positional.size() != n)
        usage_error(std::string("expected ") + std::to_string(n) + " argument(s), got " +
                    std::to_string(a.positional.size()) + " (kes-fv " + cmd + " --help)");
}

void save(const kes_fv_repo* r, const std::string& path) {
    check(kes_fv_repo_save(r, path.c_str()), "saving the repository");
}

int cmd_create(int argc, char** argv) {
    const Args a =
        parse(argc, argv, 2, {"--kind", "--dim", "--storage", "--metric", "--max-topk"}, {"--force", "--keep-f32"});
    if (a.help) return print_help("create"), kOk;
    need_positional(a, 1, "create");
    kes_fv_config c;
    kes_fv_config_init(&c);
    const std::string kind = a.get("--kind");
    if (kind == "pq36") {
        c.kind = KES_FV_PQ36;
    } else if (kind == "dense") {
        c.kind = KES_FV_DENSE;
        if (!a.has("--dim")) usage_error("--kind dense needs --dim");
        c.dim = static_cast<uint32_t>(a.number("--dim", 0, KES_FV_DIM_MAX, 1));
        const std::string st = a.get("--storage", "f32"), me = a.get("--metric", "ip");
        if (st == "f32")
            c.storage = KES_F32;
        else if (st == "f16")
            c.storage = KES_F16;
        else if (st == "int8")
            c.storage = KES_I8;
        else
            usage_error("--storage must be f32, f16 or int8 (got '" + st + "')");
        if (me == "ip")
            c.metric = KES_FV_METRIC_IP;
        else if (me == "cosine")
            c.metric = KES_FV_METRIC_COSINE;
        else if (me == "l2")
            c.metric = KES_FV_METRIC_L2;
        else
            usage_error("--metric must be ip, cosine or l2 (got '" + me + "')");
        c.keep_f32 = a.has("--keep-f32") ? 1 : 0;
    } else {
        usage_error("--kind must be pq36 or dense");
    }
    c.max_topk = static_cast<uint32_t>(a.number("--max-topk", KES_FV_TOPK_DEFAULT_MAX, KES_FV_TOPK_LIMIT, 1));
    const std::string& path = a.positional[0];
    struct stat st;
    if (!a.has("--force") && ::stat(path.c_str(), &st) == 0) failure(path + " exists (use --force to replace it)");
    kes_fv_repo* r = nullptr;
    check(kes_fv_repo_create(&c, &r), "creating the repository");
    Repo repo(r);
    // A log left beside a replaced file belongs to the old repository: replayed into this one it would
    // re-add the old features.
    if (::unlink(log_path(path).c_str()) != 0 && errno != ENOENT)
        failure("cannot remove the old append log " + log_path(path) + ": " + std::strerror(errno));
    save(repo.get(), path);
    return kOk;
}

int cmd_import(int argc, char** argv) {
    const Args a = parse(argc, argv, 2, {"--format", "--dim", "--id0", "--id1"}, {});
    if (a.help) return print_help("import"), kOk;
    need_positional(a, 2, "import");
    const uint32_t id0 = static_cast<uint32_t>(a.number("--id0", 0, KES_FV_ID_MAX));
    const uint32_t id1 = static_cast<uint32_t>(a.number("--id1", 0, KES_FV_ID_MAX));
    Repo repo = open_logged_repo(a.positional[0]);
    const kes_fv_config c = config_of(repo.get());
    const Matrix m = open_matrix(a.positional[1], a);
    Pq pq;
    uint32_t dim = c.dim;
    if (c.kind == KES_FV_PQ36) {
        pq = repo_pq(repo.get(), "needed to encode floats");
        kes_fv_pq_dim(pq.get(), &dim);
    }
    if (m.layout.rows > 0 && m.layout.cols != dim)
        failure(a.positional[1] + " has dim " + std::to_string(m.layout.cols) + ", the repository " +
                std::to_string(dim));
    // Chunks bound the memory to one chunk of floats and codes beyond the mapped input.
    const uint64_t chunk = 65536;
    std::vector<float> rows;
    std::vector<uint8_t> codes;
    Progress progress("import", m.layout.rows);
    uint32_t offset = 0;
    check(kes_fv_repo_library_size(repo.get(), id0, id1, &offset), "reading the library size");
    for (uint64_t first = 0; first < m.layout.rows; first += chunk) {
        const uint64_t n = std::min<uint64_t>(chunk, m.layout.rows - first);
        rows.resize(static_cast<size_t>(n) * dim);
        m.rows(first, n, rows.data());
        if (pq) {
            codes.resize(static_cast<size_t>(n) * KES_FV_PQ36_BYTES);
            check(kes_fv_pq_encode(pq.get(), rows.data(), n, rows.size(), codes.data(), codes.size()),
                  ("encoding rows from " + std::to_string(first)).c_str());
            check(kes_fv_repo_add(repo.get(), id0, id1, offset, codes.data(), n, codes.size()), "adding features");
        } else {
            check(kes_fv_repo_add(repo.get(), id0, id1, offset, rows.data(), n, rows.size() * 4),
                  ("adding rows from " + std::to_string(first)).c_str());
        }
        offset += static_cast<uint32_t>(n);
        progress.update(first + n);
    }
    commit(repo.get(), a.positional[0]);
    std::fprintf(stderr, "imported %" PRIu64 " vectors into library (%u, %u)\n", m.layout.rows, id0, id1);
    return kOk;
}

int cmd_train_pq(int argc, char** argv) {
    const Args a = parse(argc, argv, 2, {"--format", "--dim", "--seed", "--iterations", "--max-train"}, {"--force"});
    if (a.help) return print_help("train-pq"), kOk;
    need_positional(a, 2, "train-pq");
    // Usage errors first: nothing is opened for a command line that cannot run.
    kes_fv_pq_train_params p;
    kes_fv_pq_train_params_init(&p);
    p.seed = a.number("--seed", 1, UINT64_MAX);
    p.iterations = static_cast<uint32_t>(a.number("--iterations", 25, 1000, 1));
    p.max_training_vectors = a.number("--max-train", 65536, UINT64_MAX, KES_FV_PQ36_CENTROIDS);
    Repo repo = open_logged_repo(a.positional[0]);
    if (config_of(repo.get()).kind != KES_FV_PQ36) failure("train-pq needs a PQ36 repository (this one is dense)");
    uint64_t live = 0;
    check(kes_fv_repo_count(repo.get(), &live, nullptr), "counting features");
    kes_fv_pq* existing = nullptr;
    const bool had = kes_fv_repo_get_pq(repo.get(), &existing) == KES_OK;
    kes_fv_pq_destroy(existing);
    if (had && live > 0 && !a.has("--force"))
        failure("the repository holds " + std::to_string(live) +
                " features encoded with its current codebook; use --force to replace it anyway");
    const Matrix m = open_matrix(a.positional[1], a);
    kes_fv_pq* raw = nullptr;
    check(kes_fv_pq_create(m.layout.cols, &raw), "creating the quantiser");
    Pq pq(raw);
    const std::vector<float> x = m.all();
    check(kes_fv_pq_train(pq.get(), x.data(), m.layout.rows, x.size(), &p), "training");
    check(kes_fv_repo_set_pq(repo.get(), pq.get()), "storing the codebook");
    commit(repo.get(), a.positional[0]);
    std::fprintf(stderr, "trained a 32 x 256 codebook for dim %u from %" PRIu64 " vectors\n", m.layout.cols,
                 m.layout.rows);
    return kOk;
}

int cmd_encode(int argc, char** argv) {
    const Args a = parse(argc, argv, 2, {"--format", "--dim"}, {});
    if (a.help) return print_help("encode"), kOk;
    need_positional(a, 3, "encode");
    Repo repo = load_repo(a.positional[0]);
    Pq pq = repo_pq(repo.get(), "needed to encode");
    const Matrix m = open_matrix(a.positional[1], a);
    OutFile out(a.positional[2]);
    std::vector<float> rows;
    std::vector<uint8_t> codes;
    for (uint64_t first = 0; first < m.layout.rows; first += 65536) {
        const uint64_t n = std::min<uint64_t>(65536, m.layout.rows - first);
        rows.resize(static_cast<size_t>(n) * m.layout.cols);
        m.rows(first, n, rows.data());
        codes.resize(static_cast<size_t>(n) * KES_FV_PQ36_BYTES);
        check(kes_fv_pq_encode(pq.get(), rows.data(), n, rows.size(), codes.data(), codes.size()), "encoding");
        out.write(codes.data(), codes.size());
    }
    out.close();
    return kOk;
}

int cmd_search(int argc, char** argv) {
    const Args a =
        parse(argc, argv, 2, {"--format", "--dim", "--k", "--id0", "--id1", "--threshold", "--rerank"}, {"--tables"});
    if (a.help) return print_help("search"), kOk;
    need_positional(a, 2, "search");
    Repo repo = load_repo(a.positional[0]);
    const kes_fv_config c = config_of(repo.get());
    kes_fv_search_params p;
    kes_fv_search_params_init(&p);
    p.k = static_cast<uint32_t>(a.number("--k", 10, c.max_topk, 1));
    p.rerank = static_cast<uint32_t>(a.number("--rerank", 0, KES_FV_TOPK_LIMIT));
    if (p.rerank != 0 && p.rerank < p.k)
        usage_error("--rerank must be 0 (off) or a shortlist of at least --k = " + std::to_string(p.k) + " (got '" +
                    a.get("--rerank") + "')");
    id_range(a, "--id0", &p.range.id0_min, &p.range.id0_max);
    id_range(a, "--id1", &p.range.id1_min, &p.range.id1_max);
    if (a.has("--threshold")) {
        char* end = nullptr;
        const std::string t = a.get("--threshold");
        p.threshold = std::strtof(t.c_str(), &end);
        if (t.empty() || *end != '\0' || std::isnan(p.threshold))
            usage_error("--threshold must be a number (got '" + t + "')");
        p.use_threshold = 1;
    }
    const Matrix m = open_matrix(a.positional[1], a);
    const std::vector<float> q = m.all();
    std::vector<float> queries;
    if (c.kind == KES_FV_PQ36 && !a.has("--tables")) {
        Pq pq = repo_pq(repo.get(), "needed to turn float queries into ADC tables; or pass --tables");
        uint32_t dim = 0;
        kes_fv_pq_dim(pq.get(), &dim);
        if (m.layout.rows && m.layout.cols != dim)
            failure("queries have dim " + std::to_string(m.layout.cols) + ", the codebook " + std::to_string(dim));
        queries.resize(static_cast<size_t>(m.layout.rows) * KES_FV_PQ36_TABLE_FLOATS);
        for (uint64_t i = 0; i < m.layout.rows; ++i)
            check(kes_fv_pq_compute_table(pq.get(), q.data() + i * dim, dim,
                                          queries.data() + i * KES_FV_PQ36_TABLE_FLOATS, KES_FV_PQ36_TABLE_FLOATS),
                  "building the ADC table");
    } else {
        // Said in dims: the library would report the query buffer's size in floats.
        const uint32_t dim = c.kind == KES_FV_PQ36 ? KES_FV_PQ36_TABLE_FLOATS : c.dim;
        if (m.layout.rows && m.layout.cols != dim)
            failure("queries have dim " + std::to_string(m.layout.cols) + ", the repository " + std::to_string(dim));
        queries = q;
    }
    if (m.layout.rows > UINT32_MAX) failure("too many queries");
    const uint32_t nq = static_cast<uint32_t>(m.layout.rows);
    size_t entries = 0;
    check(kes_fv_search_result_entries(nq, p.k, &entries), "sizing the results");
    std::vector<kes_fv_result> res(entries);
    std::vector<uint32_t> counts(nq);
    check(
        kes_fv_search_batch(repo.get(), queries.data(), nq, queries.size(), &p, res.data(), res.size(), counts.data()),
        "searching");
    std::printf("query,rank,id0,id1,offset,distance\n");
    for (uint32_t i = 0; i < nq; ++i)
        for (uint32_t r = 0; r < counts[i]; ++r) {
            const kes_fv_result& e = res[size_t{i} * p.k + r];
            std::printf("%u,%u,%u,%u,%u,%.9g\n", i, r, e.id0, e.id1, e.offset, static_cast<double>(e.distance));
        }
    if (std::fflush(stdout) != 0) failure(std::string("writing the results: ") + std::strerror(errno));
    return kOk;
}

int cmd_stats(int argc, char** argv) {
    const Args a = parse(argc, argv, 2, {}, {});
    if (a.help) return print_help("stats"), kOk;
    need_positional(a, 1, "stats");
    Repo repo = load_repo(a.positional[0]);
    const kes_fv_config c = config_of(repo.get());
    uint64_t live = 0;
    uint32_t libs = 0;
    check(kes_fv_repo_count(repo.get(), &live, &libs), "counting");
    static const char* kStorage[] = {"f32", "f16", "int8"};
    static const char* kMetric[] = {"ip", "cosine", "l2"};
    if (c.kind == KES_FV_PQ36) {
        std::printf("kind: pq36\n");
        kes_fv_pq* pq = nullptr;
        if (kes_fv_repo_get_pq(repo.get(), &pq) == KES_OK) {
            uint32_t dim = 0;
            kes_fv_pq_dim(pq, &dim);
            std::printf("codebook: 32 x 256, dim %u\n", dim);
            kes_fv_pq_destroy(pq);
        } else {
            std::printf("codebook: none\n");
        }
    } else {
        std::printf("kind: dense\ndim: %u\nstorage: %s\nmetric: %s\n", c.dim,
                    kStorage[c.storage == KES_F32   ? 0
                             : c.storage == KES_F16 ? 1
                                                    : 2],
                    kMetric[c.metric == KES_FV_METRIC_IP       ? 0
                            : c.metric == KES_FV_METRIC_COSINE ? 1
                                                               : 2]);
        std::printf("f32 copies: %s\n", c.keep_f32 ? "yes" : "no");
    }
    std::printf("max_topk: %u\nlibraries: %u\nlive features: %" PRIu64 "\n", c.max_topk, libs, live);
    for (const auto& l : kes::fv::library_list(repo.get()))
        std::printf("library %u %u: size %u, live %u\n", l.id0, l.id1, l.size, l.live);
    return kOk;
}

int cmd_delete(int argc, char** argv) {
    const Args a = parse(argc, argv, 2, {"--id0", "--id1", "--offset"}, {});
    if (a.help) return print_help("delete"), kOk;
    need_positional(a, 1, "delete");
    if (!a.has("--id0") || !a.has("--id1")) usage_error("delete needs --id0 and --id1");
    kes_fv_range range{0, 0, 0, 0};
    id_range(a, "--id0", &range.id0_min, &range.id0_max);
    id_range(a, "--id1", &range.id1_min, &range.id1_max);
    Repo repo = open_logged_repo(a.positional[0]);
    if (a.has("--offset")) {
        if (range.id0_min != range.id0_max || range.id1_min != range.id1_max)
            usage_error("--offset needs single ids, not ranges");
        const uint32_t off = static_cast<uint32_t>(a.number("--offset", 0, UINT32_MAX));
        check(kes_fv_repo_delete(repo.get(), range.id0_min, range.id1_min, off), "deleting");
        std::fprintf(stderr, "deleted feature (%u, %u, %u)\n", range.id0_min, range.id1_min, off);
    } else {
        uint32_t n = 0;
        check(kes_fv_repo_delete_range(repo.get(), &range, &n), "deleting libraries");
        std::fprintf(stderr, "deleted %u libraries\n", n);
    }
    commit(repo.get(), a.positional[0]);
    return kOk;
}

int cmd_modify(int argc, char** argv) {
    const Args a = parse(argc, argv, 2, {"--format", "--dim", "--id0", "--id1", "--offset", "--row"}, {});
    if (a.help) return print_help("modify"), kOk;
    need_positional(a, 2, "modify");
    if (!a.has("--id0") || !a.has("--id1") || !a.has("--offset")) usage_error("modify needs --id0, --id1 and --offset");
    const uint32_t id0 = static_cast<uint32_t>(a.number("--id0", 0, KES_FV_ID_MAX));
    const uint32_t id1 = static_cast<uint32_t>(a.number("--id1", 0, KES_FV_ID_MAX));
    const uint32_t off = static_cast<uint32_t>(a.number("--offset", 0, UINT32_MAX));
    const uint64_t row = a.number("--row", 0, UINT64_MAX);
    Repo repo = open_logged_repo(a.positional[0]);
    const kes_fv_config c = config_of(repo.get());
    const Matrix m = open_matrix(a.positional[1], a);
    Pq pq;
    uint32_t dim = c.dim;
    if (c.kind == KES_FV_PQ36) {
        pq = repo_pq(repo.get(), "needed to encode floats");
        kes_fv_pq_dim(pq.get(), &dim);
    }
    if (m.layout.cols != dim)
        failure(a.positional[1] + " has dim " + std::to_string(m.layout.cols) + ", the repository " +
                std::to_string(dim));
    if (row >= m.layout.rows)
        usage_error("--row " + std::to_string(row) + " is past the " + std::to_string(m.layout.rows) + " rows of " +
                    a.positional[1]);
    std::vector<float> v(dim);
    m.rows(row, 1, v.data());
    if (pq) {
        uint8_t code[KES_FV_PQ36_BYTES];
        check(kes_fv_pq_encode(pq.get(), v.data(), 1, v.size(), code, sizeof code), "encoding");
        check(kes_fv_repo_modify(repo.get(), id0, id1, off, code, sizeof code), "modifying");
    } else {
        check(kes_fv_repo_modify(repo.get(), id0, id1, off, v.data(), v.size() * 4), "modifying");
    }
    commit(repo.get(), a.positional[0]);
    std::fprintf(stderr, "modified feature (%u, %u, %u)\n", id0, id1, off);
    return kOk;
}

// The id map: line i+1 of a CSV ("id0,id1,offset" header) or row i of a uint32 (n, 3) .npy is the
// address of exported row / FAISS label i.
void write_id_map(const std::string& path, const std::vector<kes_fv_feature_id>& ids) {
    OutFile out(path);
    if (ends_with(path, ".npy")) {
        const auto h = kes::npy::header(KES_U32, {static_cast<int64_t>(ids.size()), 3});
        out.write(h.data(), h.size());
        static_assert(sizeof(kes_fv_feature_id) == 12, "kes_fv_feature_id is three packed uint32");
        out.write(ids.data(), ids.size() * sizeof(kes_fv_feature_id));
    } else {
        out.print("id0,id1,offset\n");
        for (const auto& id : ids) out.print("%u,%u,%u\n", id.id0, id.id1, id.offset);
    }
    out.close();
}

int cmd_export(int argc, char** argv) {
    const Args a = parse(argc, argv, 2, {"--ids", "--id0", "--id1"}, {});
    if (a.help) return print_help("export"), kOk;
    need_positional(a, 2, "export");
    const std::string& out_path = a.positional[1];
    const bool npy = ends_with(out_path, ".npy");
    const bool faiss = ends_with(out_path, ".faiss") || ends_with(out_path, ".index");
    if (!npy && !faiss && !ends_with(out_path, ".fvecs")) usage_error("export writes OUT.npy, OUT.fvecs or OUT.faiss");
    kes_fv_range range{0, KES_FV_ID_MAX, 0, KES_FV_ID_MAX};
    id_range(a, "--id0", &range.id0_min, &range.id0_max);
    id_range(a, "--id1", &range.id1_min, &range.id1_max);
    const std::string ids_path = a.get("--ids", out_path + ".ids.csv");
    Repo repo = load_repo(a.positional[0]);
    const kes_fv_config c = config_of(repo.get());
    uint64_t rows = 0;
    check(kes_fv_repo_count_range(repo.get(), &range, &rows), "counting features");
    std::vector<kes_fv_feature_id> ids;
    if (faiss) {
        ids.resize(static_cast<size_t>(rows));
        check(kes_fv_repo_export_faiss(repo.get(), &range, out_path.c_str(), ids.data(), ids.size(), &rows),
              "exporting");
        write_id_map(ids_path, ids);
        std::fprintf(stderr, "exported %" PRIu64 " vectors as a FAISS index\n", rows);
        return kOk;
    }
    Pq pq;
    uint32_t dim = c.dim;
    if (c.kind == KES_FV_PQ36) {
        pq = repo_pq(repo.get(), "needed to decode PQ36 codes");
        kes_fv_pq_dim(pq.get(), &dim);
    }
    std::vector<kes::fv::LibraryInfo> libs;
    for (const auto& l : kes::fv::library_list(repo.get()))
        if (l.id0 >= range.id0_min && l.id0 <= range.id0_max && l.id1 >= range.id1_min && l.id1 <= range.id1_max)
            libs.push_back(l);
    OutFile out(out_path);
    if (npy) {
        const auto h = kes::npy::header(KES_F32, {static_cast<int64_t>(rows), static_cast<int64_t>(dim)});
        out.write(h.data(), h.size());
    }
    std::vector<float> v(dim);
    uint8_t code[KES_FV_PQ36_BYTES] = {};
    const int32_t d32 = static_cast<int32_t>(dim);
    for (const auto& l : libs)
        for (uint32_t off = 0; off < l.size; ++off) {
            std::vector<float> s;
            try {
                s = kes::fv::stored_vector(repo.get(), l.id0, l.id1, off);
            } catch (const kes::Error& e) {
                if (e.status() == KES_ERR_NOT_FOUND) continue;  // deleted
                throw;
            }
            if (pq) {
                for (size_t m = 0; m < 32; ++m) code[4 + m] = static_cast<uint8_t>(s[m]);
                check(kes_fv_pq_decode(pq.get(), code, 1, sizeof code, v.data(), v.size()), "decoding");
            } else {
                v = s;
            }
            if (!npy) out.write(&d32, 4);
            out.write(v.data(), v.size() * 4);
            ids.push_back({l.id0, l.id1, off});
        }
    out.close();
    write_id_map(ids_path, ids);
    std::fprintf(stderr, "exported %" PRIu64 " vectors\n", rows);
    return kOk;
}

}  // namespace

namespace {

int run(int argc, char** argv) {
    if (argc < 2) {
        print_usage(stderr);
        return kUsage;
    }
    const std::string cmd = argv[1];
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
        print_usage(stdout);
        return kOk;
    }
    for (const auto& c : kCommands) {
        if (cmd != c.name) continue;
        try {
            return c.run(argc, argv);
        } catch (const Exit& e) {
            std::fprintf(stderr, "kes-fv %s: %s\n", c.name, e.message.c_str());
            return e.code;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "kes-fv %s: %s\n", c.name, e.what());
            return kFailure;
        }
    }
    std::fprintf(stderr, "kes-fv: unknown command '%s'\n\n", cmd.c_str());
    print_usage(stderr);
    return kUsage;
}

}  // namespace

int main(int argc, char** argv) {
    int rc = run(argc, argv);
    // KES_TRACE=trace.json is written at exit, too late to change the exit status; stopping here makes
    // a trace that cannot be written fail the run instead of passing unnoticed.
    if (kes_trace_enabled() && kes_trace_stop() != KES_OK) {
        std::fprintf(stderr, "kes-fv: KES_TRACE: %s\n", kes_last_error());
        if (rc == kOk) rc = kFailure;
    }
    return rc;
}
