/* kestrel/fv.h — feature-vector retrieval: aclfv-style libraries with 1:N and M:N top-k search.
 *
 * The 310 and 310B boards have no hardware feature search (AscendCL aclfv exists only on the 310P,
 * docs/BOARD-RULES.md §aclfv), so Kestrel does it on the CPU with aclfv's model:
 *
 *   - A repository holds libraries addressed by (id0, id1), each in [0, KES_FV_ID_MAX]. A feature is
 *     addressed by (id0, id1, offset); offset is its index in its library (BOARD-RULES §aclfv).
 *   - kes_fv_repo_add appends a batch with continuous offsets: the caller passes the offset it
 *     expects the first new feature to get, which must equal the library's current size, exactly as
 *     aclfvRepoAdd. kes_fv_repo_delete tombstones one feature (its offset stays taken; it never
 *     matches again), kes_fv_repo_modify rewrites one feature in place, kes_fv_repo_delete_range
 *     removes whole libraries (a later add to such a library starts again at offset 0).
 *
 * Two kinds of feature (fixed per repository by kes_fv_config.kind):
 *
 *   KES_FV_PQ36   aclfv's format, BOARD-RULES §aclfv: 36 bytes = 4 zero bytes + 32 uint8 PQ codes. A query is a
 *                 32 × 256 float ADC table (float table[32][256], 32 KB) and
 *                     distance = Σ_{m<32} table[m][code[m]]        smaller = closer (ascending).
 *                 A feature whose first 4 bytes are not zero is refused (KES_ERR_INVALID_ARGUMENT).
 *   KES_FV_DENSE  float embeddings of any dimension 1..KES_FV_DIM_MAX, passed as f32 and stored as
 *                 f32, f16 or int8 (kes_fv_config.storage), compared with a metric:
 *                     KES_FV_METRIC_IP      score = Σ q[i]·x[i]                larger = closer
 *                     KES_FV_METRIC_COSINE  score = Σ q̂[i]·x̂[i], in [−1, 1]    larger = closer
 *                                           (stored vectors are normalised at insert, queries at
 *                                           search; an all-zero vector stays zero and scores 0)
 *                     KES_FV_METRIC_L2      score = Σ (q[i] − x[i])², squared  smaller = closer
 *                 where x is the stored (dequantised) vector.
 *
 * Storage of dense vectors:
 *   f32   exact.
 *   f16   IEEE binary16, round to nearest even (kes_fp16_from_f32). Values beyond ±65504 would become
 *         infinite and are refused.
 *   int8  symmetric, per vector: scale = max|x| / 127, code[i] = round_half_even(x[i] / scale) in
 *         [−127, 127], dequantised x[i] = code[i] · scale (an all-zero vector has scale 0). Per vector
 *         rather than per repository because embeddings from different models, or unnormalised ones,
 *         differ in range; it costs 4 bytes per vector and keeps the relative error ≤ 1/254 of the
 *         vector's largest component. For cosine the normalised vector is quantised.
 *   Scores are computed in float from the stored values, so f16 results (and int8 L2 ones) are
 *   those of an exact search over the dequantised vectors.
 *   int8 storage: integer scores. For IP and cosine an int8 repository also quantises the query,
 *   once per search, to 16-bit fixed point: step = max|q| / 32639 and q[i] ≈ step · (256 · hi[i] +
 *   lo[i]) with hi, lo int8 (|error| ≤ step / 2 per component, i.e. ≤ 1/65278 of the query's largest
 *   component: negligible next to the codes' own 1/254). Then
 *       score = float( (256 · Σ hi[i]·code[i] + Σ lo[i]·code[i]) · step · scale )      (in double)
 *   where both sums are exact 32-bit integers: AVX-512 VNNI (VPDPBUSD), aarch64 SDOT (dotprod), or
 *   widening multiplies on CPUs without them (AVX2, AVX-512BW, NEON, scalar), chosen at run time,
 *   all give bit-identical int8 scores on every CPU and thread count. An all-zero query scores 0.
 *   With kes_fv_config.keep_f32 an f16/int8 repository also keeps each vector in f32 (cosine:
 *   normalised) and a search may ask for an f32 re-rank of its shortlist
 *   (kes_fv_search_params.rerank): the quantised scan stays the fast pass and the final k are ranked
 *   by exact scores. Float SIMD paths (f32, f16, int8 L2) sum in a different
 *   order than the scalar one, so such a score may differ in its last bits between CPUs (never in
 *   the ordering rules below).
 *   A score that overflows to NaN (+inf + −inf from huge inner products) ranks as the worst possible.
 *
 * Search: results are kes_fv_result {id0, id1, offset, distance}, "distance" being the metric's
 * score above, sorted best first (ascending for PQ36 and L2, descending for IP and cosine), ties
 * broken by (id0, id1, offset) ascending, so the result is the same on every CPU path and thread
 * count for equal scores. An optional threshold keeps only results at least that good (distance ≤
 * threshold when smaller is closer, ≥ threshold when larger is closer). Fewer than k results come
 * back when fewer features (live, in range, passing the threshold) exist; an empty repository gives 0.
 *
 * Thread-safety: any number of kes_fv_search / kes_fv_search_batch / kes_fv_repo_save / query calls
 * may run at once on one repository. Calls that change it (add, delete, modify, delete_range) take
 * an internal writer lock (a std::shared_mutex): one writer at a time, and a writer waits for
 * running searches, so a search sees each feature either entirely before or entirely after a
 * change, never half-written.
 * A waiting writer is not starved: searches that start after it wait until it is done.
 * With an append log open (kes_fv_repo_open_logged) a writer also writes and syncs its log record
 * while it holds the lock, so searches may wait for one fdatasync.
 * kes_fv_repo_destroy must be the last call on a repository. Searches spread their work over
 * kes_thread_pool_default().
 * Ownership: the caller owns every buffer it passes in (features are copied during the call) and
 * every result array it asks to be filled. Repositories come in create/destroy pairs; destroy accepts
 * NULL.
 * Errors: every fallible call returns a kes_status; kes_last_error() names the call, the argument,
 * the value and the rule. A failed call changes nothing.
 * PQ tools (bottom of this file): train a 32 × 256 product quantiser on float embeddings, encode them
 * to PQ36 records and turn a float query into the ADC table, so embeddings reach aclfv-format search
 * with Kestrel alone; the codebook can be kept in (and saved with) a PQ36 repository.
 * Snapshots load by mmap (copy-on-write; see "Loading by mmap" below) and export as FAISS index files
 * (kes_fv_repo_export_faiss: IndexFlatIP / IndexFlatL2 / IndexPQ plus an id map).
 * Command-line tool: kes-fv (fv/cli/kes_fv.cpp; `kes-fv --help`) creates, imports (.npy, .fvecs, raw
 * f32), trains PQ, encodes, searches, deletes and exports repository files.
 */
#ifndef KESTREL_FV_H
#define KESTREL_FV_H

#include "kestrel/tensor.h"

KES_BEGIN_DECLS

#define KES_FV_ID_MAX 1023u   /* id0 and id1 are in [0, KES_FV_ID_MAX] (BOARD-RULES §aclfv) */
#define KES_FV_PQ36_BYTES 36u /* bytes per PQ36 feature: 4 zero bytes + 32 codes */
#define KES_FV_PQ36_HEADER_BYTES 4u
#define KES_FV_PQ36_SUBSPACES 32u      /* codes per feature = rows of the ADC table */
#define KES_FV_PQ36_CENTROIDS 256u     /* columns of the ADC table */
#define KES_FV_PQ36_TABLE_FLOATS 8192u /* 32 × 256 floats = aclfv's 32768-byte table */
#define KES_FV_DIM_MAX 65536u          /* largest dense dimension */
#define KES_FV_TOPK_DEFAULT_MAX 4800u  /* aclfv's RETR_TOPK_MAX (BOARD-RULES §aclfv) */
#define KES_FV_TOPK_LIMIT 1048576u     /* largest max_topk a repository may be configured with */

typedef enum kes_fv_kind {
    KES_FV_PQ36 = 0, /* aclfv short features + ADC tables */
    KES_FV_DENSE = 1 /* float embeddings */
} kes_fv_kind;

typedef enum kes_fv_metric {
    KES_FV_METRIC_IP = 0,     /* inner product, larger = closer */
    KES_FV_METRIC_COSINE = 1, /* cosine similarity, larger = closer */
    KES_FV_METRIC_L2 = 2      /* squared Euclidean distance, smaller = closer */
} kes_fv_metric;

typedef struct kes_fv_repo kes_fv_repo; /* opaque handle */

typedef struct kes_fv_config {
    uint32_t struct_size;   /* sizeof(kes_fv_config): lets the struct grow without breaking the ABI */
    kes_fv_kind kind;       /* KES_FV_PQ36 or KES_FV_DENSE */
    uint32_t dim;           /* dense: 1..KES_FV_DIM_MAX; PQ36: ignored */
    kes_dtype storage;      /* dense: KES_F32, KES_F16 or KES_I8; PQ36: ignored (codes are uint8) */
    kes_fv_metric metric;   /* dense only; PQ36 always uses the ADC distance */
    uint32_t max_topk;      /* largest k a search may ask for: 1..KES_FV_TOPK_LIMIT (default 4800) */
    uint64_t capacity_hint; /* features to reserve room for in the first library added to; the
                               store grows past it (0 = none) */
    uint32_t keep_f32;      /* dense f16/int8 only: 1 also keeps every vector as f32 (4 × dim more
                               bytes per feature, saved with the repository) so a search can re-rank
                               a shortlist exactly (kes_fv_search_params.rerank); default 0. Added
                               after the first version of the struct: a smaller struct_size means 0 */
} kes_fv_config;

/* Defaults: PQ36, dim 0, KES_F32, KES_FV_METRIC_IP, max_topk 4800, capacity_hint 0, keep_f32 0,
 * struct_size set.
 * NULL is a no-op. */
KES_API void kes_fv_config_init(kes_fv_config* config);

/* Creates an empty repository. config->struct_size must be at least the size of the first version
 * of the struct (fields beyond struct_size take their defaults).
 * KES_ERR_INVALID_ARGUMENT: NULL config/out_repo, bad struct_size, unknown kind, metric or storage,
 * dense dim outside 1..KES_FV_DIM_MAX, max_topk outside 1..KES_FV_TOPK_LIMIT, keep_f32 not 0 or 1, or
 * 1 for a repository that is not dense f16/int8.
 * KES_ERR_OUT_OF_MEMORY: the capacity hint cannot be reserved. On failure *out_repo is NULL. */
KES_API kes_status kes_fv_repo_create(const kes_fv_config* config, kes_fv_repo** out_repo);

/* Frees the repository. NULL is a no-op. No other call may be running on it. */
KES_API void kes_fv_repo_destroy(kes_fv_repo* repo);

/* The configuration the repository was created with (defaults filled in, struct_size as given by
 * the caller's out_config->struct_size if set, else sizeof; a newer, larger struct gets the fields this
 * library does not know zeroed). KES_ERR_INVALID_ARGUMENT on NULL or a struct_size below the first
 * kes_fv_config's. */
KES_API kes_status kes_fv_repo_get_config(const kes_fv_repo* repo, kes_fv_config* out_config);

/* Bytes of one feature passed to add/modify: 36 for PQ36, dim × 4 (f32) for dense.
 * Floats of one query passed to search: KES_FV_PQ36_TABLE_FLOATS for PQ36, dim for dense.
 * 1 if a larger distance is closer (IP, cosine), 0 if smaller is closer (PQ36, L2).
 * KES_ERR_INVALID_ARGUMENT on NULL arguments. */
KES_API kes_status kes_fv_repo_feature_bytes(const kes_fv_repo* repo, size_t* out_bytes);
KES_API kes_status kes_fv_repo_query_floats(const kes_fv_repo* repo, size_t* out_floats);
KES_API kes_status kes_fv_repo_larger_is_closer(const kes_fv_repo* repo, int* out_larger_is_closer);

/* Appends `count` features to library (id0, id1), creating it if needed. `offset` must equal the
 * library's current size (kes_fv_repo_library_size; 0 for a new or deleted library) and the new
 * features get offsets offset .. offset+count−1. `features` holds count × feature_bytes bytes
 * (PQ36: packed 36-byte records; dense: count × dim floats, row-major) and `features_bytes` must
 * equal that product (aclfv's featureDataLen rule). count 0 is a valid no-op.
 * KES_ERR_INVALID_ARGUMENT: NULL repo or features (with count > 0), id0/id1 > 1023, offset ≠ current
 * size (message: "... expected 1000, got 998"), features_bytes ≠ count × feature_bytes, a library growing
 * past UINT32_MAX features, a PQ36 record whose 4 header bytes are not zero, a dense value that is
 * NaN or infinite (or beyond ±65504 for f16 storage). Every record is checked before any is stored.
 * KES_ERR_OUT_OF_MEMORY: the store cannot grow; nothing was added. */
KES_API kes_status kes_fv_repo_add(kes_fv_repo* repo, uint32_t id0, uint32_t id1, uint32_t offset, const void* features,
                                   uint64_t count, size_t features_bytes);

/* Tombstones feature (id0, id1, offset): it is never returned again and its offset stays taken.
 * KES_ERR_INVALID_ARGUMENT: NULL repo, id0/id1 > 1023.
 * KES_ERR_NOT_FOUND: no such library, offset ≥ library size, or the feature was already deleted. */
KES_API kes_status kes_fv_repo_delete(kes_fv_repo* repo, uint32_t id0, uint32_t id1, uint32_t offset);

/* Replaces feature (id0, id1, offset) with one new feature of feature_bytes bytes (same format and
 * checks as add); the next search sees the new value.
 * KES_ERR_INVALID_ARGUMENT: as for add (feature_bytes must equal the feature size).
 * KES_ERR_NOT_FOUND: no such library, offset ≥ library size, or the feature was deleted. */
KES_API kes_status kes_fv_repo_modify(kes_fv_repo* repo, uint32_t id0, uint32_t id1, uint32_t offset,
                                      const void* feature, size_t feature_bytes);

/* An inclusive (id0, id1) rectangle, as aclfvCreateRepoRange: id0_min ≤ id0_max ≤ 1023 and
 * id1_min ≤ id1_max ≤ 1023. {0, 1023, 0, 1023} is every library. */
typedef struct kes_fv_range {
    uint32_t id0_min, id0_max;
    uint32_t id1_min, id1_max;
} kes_fv_range;

/* Removes every library (id0, id1) inside `range`, with all its features. Libraries that do not
 * exist are skipped; *out_deleted (optional) gets the number of libraries removed.
 * KES_ERR_INVALID_ARGUMENT: NULL repo or range, a bound > 1023, min > max. */
KES_API kes_status kes_fv_repo_delete_range(kes_fv_repo* repo, const kes_fv_range* range, uint32_t* out_deleted);

/* Size of library (id0, id1) = the offset the next add must pass (deleted features included);
 * 0 if the library does not exist. KES_ERR_INVALID_ARGUMENT: NULL, id0/id1 > 1023. */
KES_API kes_status kes_fv_repo_library_size(const kes_fv_repo* repo, uint32_t id0, uint32_t id1, uint32_t* out_size);

/* Live (not deleted) features in the whole repository, and the number of libraries. Either output
 * may be NULL. KES_ERR_INVALID_ARGUMENT on a NULL repo. */
KES_API kes_status kes_fv_repo_count(const kes_fv_repo* repo, uint64_t* out_live_features, uint32_t* out_libraries);

/* One hit. distance is the metric's score (see the top of this file). */
typedef struct kes_fv_result {
    uint32_t id0;
    uint32_t id1;
    uint32_t offset;
    float distance;
} kes_fv_result;

typedef struct kes_fv_search_params {
    uint32_t struct_size;   /* sizeof(kes_fv_search_params) */
    kes_fv_range range;     /* libraries searched (default: all) */
    uint32_t k;             /* results wanted per query: 1..max_topk of the repository (default 10) */
    uint32_t use_threshold; /* 1: keep only results at least as close as `threshold` (default 0) */
    float threshold;        /* distance ≤ threshold (PQ36, L2) or ≥ threshold (IP, cosine) */
    uint32_t rerank;        /* f32 re-rank (repositories with keep_f32 only): 0 = none (default);
                               else a shortlist of the `rerank` best features by the stored f16/int8
                               scores is re-scored from the f32 copies (in double, rounded to float)
                               and the best k of it returned, threshold applied to the new scores.
                               k ≤ rerank ≤ KES_FV_TOPK_LIMIT. Added after the first version of the
                               struct: a smaller struct_size means 0 */
} kes_fv_search_params;

/* Defaults: all libraries, k = 10, no threshold, no re-rank, struct_size set. NULL is a no-op. */
KES_API void kes_fv_search_params_init(kes_fv_search_params* params);

/* Entries a batch result array needs: query_count × k (checked against overflow).
 * KES_ERR_INVALID_ARGUMENT: NULL out_entries, k = 0, or the product overflows size_t. */
KES_API kes_status kes_fv_search_result_entries(uint32_t query_count, uint32_t k, size_t* out_entries);

/* 1:N search: one query against the libraries of params->range. The query is query_floats floats
 * (kes_fv_repo_query_floats: the 32×256 ADC table for PQ36, dim floats for dense; all finite).
 * results must hold results_capacity ≥ params->k entries; the first *out_count are filled, best
 * first.
 * KES_ERR_INVALID_ARGUMENT: NULL repo/query/params/results/out_count, bad params->struct_size,
 * query_floats ≠ the query size, a non-finite query value, k = 0 or > max_topk, a bad range,
 * results_capacity < k, a NaN threshold, rerank < k or > KES_FV_TOPK_LIMIT, rerank on a repository
 * without keep_f32. */
KES_API kes_status kes_fv_search(const kes_fv_repo* repo, const float* query, size_t query_floats,
                                 const kes_fv_search_params* params, kes_fv_result* results, size_t results_capacity,
                                 uint32_t* out_count);

/* M:N search: query_count queries (packed, query_count × query size floats = queries_floats) against
 * the libraries of params->range, top-k per query. Query i's results are results[i·k .. i·k +
 * out_counts[i] − 1], best first; results_capacity must be ≥ query_count × k
 * (kes_fv_search_result_entries) and out_counts must hold query_count entries. query_count 0 is a
 * valid no-op. Errors as for kes_fv_search, plus queries_floats ≠ query_count × query size. */
KES_API kes_status kes_fv_search_batch(const kes_fv_repo* repo, const float* queries, uint32_t query_count,
                                       size_t queries_floats, const kes_fv_search_params* params,
                                       kes_fv_result* results, size_t results_capacity, uint32_t* out_counts);

/* Persistence. The file holds the configuration, every library with its tombstones, and CRC-32
 * checksums over every part (layout: fv/src/fv_persist.cpp). kes_fv_repo_save writes a temporary file
 * beside `path`, fsyncs it, renames it over `path` and fsyncs the directory, so a crash or a full disk
 * at any instant leaves the previous file intact or the new one complete, never a mix, and no
 * temporary file behind. It holds the reader lock: searches continue while it writes, writers wait.
 * Save errors: KES_ERR_INVALID_ARGUMENT (NULL or empty path), KES_ERR_IO (cannot create, write, fsync,
 * close or rename the temporary file, or open or fsync the directory; the message names the
 * operation, the file and the system error, e.g. "writing /d/r.kfv.tmp.4242.0 (new /d/r.kfv): No
 * space left on device"). Before the rename `path` is untouched; only when the directory's fsync
 * fails is the new file already in place, whole, but not known to survive a power loss (the message
 * says so). The repository is unchanged either way and a later save may simply be retried.
 * kes_fv_repo_load reads such a file into a new repository; kes_fv_repo_load_memory reads the same
 * bytes from memory. A truncated, corrupted or hostile file gives KES_ERR_CORRUPT_DATA naming what is
 * wrong, never a crash; the loader never allocates more than the input's size. Load errors also:
 * KES_ERR_NOT_FOUND (no such file), KES_ERR_IO (cannot read), KES_ERR_INVALID_ARGUMENT (NULL).
 * A PQ36 repository's codebook (kes_fv_repo_set_pq) is saved with it, CRC'd like the rest; files of
 * format version 1 (no codebook) still load.
 * On failure *out_repo is NULL.
 * Loading by mmap: kes_fv_repo_load maps the file privately (MAP_PRIVATE) and each library whose
 * feature bytes start at an offset aligned for their type (always the first library; later ones
 * unless an earlier one's byte-sized parts leave them misaligned) uses them in place instead of a
 * copy: a loaded repository costs page cache, shared with other readers of the file, not heap. Every
 * checksum and value is still verified at load (which reads the whole file once). Changes are
 * copy-on-write: a modify writes into a private copy of the page it touches, an add copies that
 * library into memory first (tombstones and int8 scales are always in memory); the file itself
 * never changes. The mapping lives until kes_fv_repo_destroy. Because every
 * Kestrel writer replaces files by rename, saving over the loaded path (kes_fv_repo_save,
 * kes_fv_repo_checkpoint, another process) is safe; truncating or rewriting the file in place while
 * a repository is loaded from it is not (reads past the new end would fault, SIGBUS). When the file
 * cannot be mapped it is read into memory as before. kes_fv_repo_load_memory always copies. */
KES_API kes_status kes_fv_repo_save(const kes_fv_repo* repo, const char* path);
KES_API kes_status kes_fv_repo_load(const char* path, kes_fv_repo** out_repo);
KES_API kes_status kes_fv_repo_load_memory(const void* data, size_t size, kes_fv_repo** out_repo);

/* ---- FAISS export (issue 6 §8) ----------------------------------------------------------------
 *
 * kes_fv_repo_export_faiss writes the live features of the libraries in `range` (NULL = all) as a
 * FAISS index file that faiss.read_index opens (FAISS's 1.7.x serialisation, layout in
 * fv/src/fv_export.cpp; tested against Debian's python3-faiss 1.7.3), so a deployment that
 * outgrows one board takes its data to a server-side engine:
 *   dense IP       IndexFlatIP of the stored vectors as f32 (f16 widened exactly, int8 as code ·
 *                  scale, as the search sees them)
 *   dense cosine   IndexFlatIP of the stored unit vectors: FAISS does not normalise queries, so pass
 *                  it normalised ones (faiss.normalize_L2) to get kes_fv_search's scores
 *   dense L2       IndexFlatL2 (squared distances, as here)
 *   PQ36           IndexPQ(d, 32, 8), metric L2, with the repository's codebook (kes_fv_repo_set_pq;
 *                  its float[32][256][d/32] layout is FAISS's centroid table) and each feature's 32
 *                  codes (the 4 zero header bytes dropped). FAISS's ADC distance for a float query is
 *                  the PQ36 distance for the table kes_fv_pq_compute_table builds from that query.
 * FAISS labels are 0 .. n−1 in export order, which is (id0, id1, offset) ascending; ids[label] (when
 * ids is not NULL) gets the feature's address: that array is the id map. Scores agree with
 * kes_fv_search up to float summation order (int8 inner products: and the query's 16-bit rounding),
 * so top-k lists agree except among near-equal scores.
 * The file is written like a snapshot (temporary file, fsync, rename): an interrupted export leaves
 * the previous file. Holds the reader lock (searches go on, writers wait).
 * *out_count (optional) gets n — also when ids_capacity is too small, as the size to allocate
 * (kes_fv_repo_count_range gives it beforehand).
 * Errors: KES_ERR_INVALID_ARGUMENT (NULL repo or path, empty path, bad range, ids_capacity < n),
 * KES_ERR_NOT_FOUND (PQ36 repository without a codebook), KES_ERR_IO (as kes_fv_repo_save). */
typedef struct kes_fv_feature_id {
    uint32_t id0;
    uint32_t id1;
    uint32_t offset;
} kes_fv_feature_id;

/* Live features in the libraries of `range`. KES_ERR_INVALID_ARGUMENT on NULL or a bad range. */
KES_API kes_status kes_fv_repo_count_range(const kes_fv_repo* repo, const kes_fv_range* range, uint64_t* out_live);
KES_API kes_status kes_fv_repo_export_faiss(const kes_fv_repo* repo, const kes_fv_range* range, const char* path,
                                            kes_fv_feature_id* ids, uint64_t ids_capacity, uint64_t* out_count);

/* Append log: changes between snapshots survive a crash.
 *
 * kes_fv_repo_open_logged loads the snapshot at snapshot_path (written by kes_fv_repo_save or
 * kes_fv_repo_checkpoint; to start, create a repository and save it), replays the log at log_path
 * (created empty if missing) and keeps the log open: from then on every add, delete, modify and
 * delete_range on this repository is appended to the log as a CRC-32'd record and fdatasync'ed
 * before the call returns (one sync per call: batch adds). If the log cannot be written the call
 * fails with KES_ERR_IO (the message names the log, the operation and the system error), changes
 * nothing and cuts the partial record back off the log, so the next call may simply retry. Should
 * that cut fail as well (a disk that refuses every write), the record may stay in the log — whole, a
 * reopen would replay that change — and the repository refuses further changes with KES_ERR_IO until
 * a kes_fv_repo_checkpoint succeeds, which writes the state in memory and empties the log.
 * kes_fv_repo_checkpoint saves a snapshot (as kes_fv_repo_save) and then empties the log, only once the
 * snapshot is durable (its directory fsynced); it holds the reader lock throughout, so searches go on
 * and writers wait. Snapshots record the last log record they contain, so a crash between the two
 * steps replays nothing twice, and a checkpoint that fails at any step (KES_ERR_IO) leaves snapshot
 * and log that reopen to the same state; it may be retried. Log layout and the torn-record rule:
 * fv/src/fv_log.cpp — a record cut short by a crash at the end of the log is ignored and cut off,
 * with a warning through kes_log naming the log and the byte; damage anywhere else is
 * KES_ERR_CORRUPT_DATA, as is a record that does not apply to the snapshot (wrong snapshot). A log
 * opened empty (just created) has its directory fsynced, so its name survives a power loss.
 * One process at a time may have a log open (no file locking is done).
 * open_logged errors: those of kes_fv_repo_load, KES_ERR_IO (cannot open, read, repair or sync the log),
 * KES_ERR_CORRUPT_DATA (log damaged). On failure *out_repo is NULL. */
KES_API kes_status kes_fv_repo_open_logged(const char* snapshot_path, const char* log_path, kes_fv_repo** out_repo);
KES_API kes_status kes_fv_repo_checkpoint(kes_fv_repo* repo, const char* snapshot_path);

/* ---- PQ tools (issue 6 §4) ---------------------------------------------------------------------
 *
 * A kes_fv_pq is a product quantiser for float vectors of dimension d, d a multiple of 32 in
 * [32, KES_FV_DIM_MAX]: a vector is cut into 32 consecutive sub-vectors of dsub = d / 32 floats, and
 * sub-space m has 256 centroids of dsub floats. The codebook is float[32][256][dsub] (8192 · dsub
 * floats). d must be a multiple of 32 because aclfv's format fixes 32 codes per feature and the
 * sub-spaces are equal slices (no padding rule to agree on with other tools).
 *
 *   encode       code[m] = the centroid of sub-space m nearest (squared L2) to sub-vector m, ties to
 *                the lower index; the PQ36 record is 4 zero bytes + code[0..31].
 *   decode       x̂ = the concatenated centroids of the codes.
 *   ADC table    table[m][c] = Σ_{j<dsub} (q[m·dsub + j] − centroid[m][c][j])², so the PQ36 distance
 *                Σ_m table[m][code[m]] = ||q − x̂||² (squared L2 to the reconstruction, smaller = closer).
 *
 * Training: k-means with k = 256 in each sub-space, k-means++ seeding, at most `iterations` Lloyd
 * iterations, stopping early once no assignment changes. An empty cluster takes the training
 * vector farthest from its centroid among clusters of two or more (ties: lowest index). Inputs
 * larger than max_training_vectors are subsampled with the seed. The random numbers come from
 * Kestrel's own SplitMix64 and all arithmetic has a fixed order without fused multiply-add, so the
 * same vectors and seed give the same codebook bytes on every run, thread count and CPU (x86-64 and
 * aarch64 are tested against the same checksum). Cost ≈ 3 × iterations × n × 256 × d operations,
 * the 32 sub-spaces in parallel on kes_thread_pool_default() (measured here: 8192 × 128-d, 5
 * iterations, 0.35 s on 2 x86 cores, so 65536 × 512-d with the defaults takes about a minute).
 *
 * Thread-safety: encode, decode, compute_table and the getters may run concurrently on one handle;
 * train and set_codebook change it and must not run concurrently with any other call on it.
 */
typedef struct kes_fv_pq kes_fv_pq; /* opaque handle */

#define KES_FV_PQ_TRAIN_MIN 256u /* fewest training vectors: one per centroid */

typedef struct kes_fv_pq_train_params {
    uint32_t struct_size;          /* sizeof(kes_fv_pq_train_params) */
    uint32_t iterations;           /* Lloyd iterations at most, 1..1000 (default 25) */
    uint64_t seed;                 /* any value (default 1) */
    uint64_t max_training_vectors; /* ≥ 256; larger inputs are subsampled (default 65536) */
} kes_fv_pq_train_params;

/* Defaults as above, struct_size set. NULL is a no-op. */
KES_API void kes_fv_pq_train_params_init(kes_fv_pq_train_params* params);

/* An untrained quantiser for dimension `dim`.
 * KES_ERR_INVALID_ARGUMENT: NULL out_pq, dim not a multiple of 32 or outside [32, KES_FV_DIM_MAX].
 * On failure *out_pq is NULL. */
KES_API kes_status kes_fv_pq_create(uint32_t dim, kes_fv_pq** out_pq);
/* NULL is a no-op. */
KES_API void kes_fv_pq_destroy(kes_fv_pq* pq);

/* Trains the codebook on `count` vectors (count × dim floats, row-major; vectors_floats must equal
 * that product). params may be NULL for the defaults. Replaces any previous codebook; on failure
 * the previous one (or none) stays.
 * KES_ERR_INVALID_ARGUMENT: NULL pq/vectors, count < KES_FV_PQ_TRAIN_MIN ("needs at least 256
 * training vectors"), vectors_floats ≠ count × dim, a non-finite value, bad params.
 * KES_ERR_OUT_OF_MEMORY. */
KES_API kes_status kes_fv_pq_train(kes_fv_pq* pq, const float* vectors, uint64_t count, size_t vectors_floats,
                                   const kes_fv_pq_train_params* params);

/* Dimension; 1 if trained (or given a codebook), else 0. KES_ERR_INVALID_ARGUMENT on NULL. */
KES_API kes_status kes_fv_pq_dim(const kes_fv_pq* pq, uint32_t* out_dim);
KES_API kes_status kes_fv_pq_is_trained(const kes_fv_pq* pq, int* out_trained);

/* Encodes `count` vectors (count × dim floats) to count PQ36 records of KES_FV_PQ36_BYTES bytes.
 * codes_bytes must equal count × 36. count 0 is a no-op. Spread over kes_thread_pool_default().
 * KES_ERR_INVALID_ARGUMENT: NULL arguments (with count > 0), size mismatches, non-finite values, the
 * quantiser not trained yet ("pq is not trained"). */
KES_API kes_status kes_fv_pq_encode(const kes_fv_pq* pq, const float* vectors, uint64_t count, size_t vectors_floats,
                                    uint8_t* codes, size_t codes_bytes);

/* Reconstructs `count` vectors from PQ36 records (header bytes must be 0). Errors as for encode. */
KES_API kes_status kes_fv_pq_decode(const kes_fv_pq* pq, const uint8_t* codes, uint64_t count, size_t codes_bytes,
                                    float* vectors, size_t vectors_floats);

/* The 32 × 256 ADC table for one query of dim floats (table_floats must be KES_FV_PQ36_TABLE_FLOATS),
 * ready for kes_fv_search on a PQ36 repository. Errors as for encode. */
KES_API kes_status kes_fv_pq_compute_table(const kes_fv_pq* pq, const float* query, size_t query_floats, float* table,
                                           size_t table_floats);

/* Codebook for serialisation: float[32][256][dim / 32], 256 × dim floats (kes_fv_pq_codebook_floats).
 * get: not trained → KES_ERR_INVALID_ARGUMENT; floats must equal the size. set: every value finite,
 * floats must equal the size; the quantiser is then trained. KES_ERR_INVALID_ARGUMENT otherwise. */
KES_API kes_status kes_fv_pq_codebook_floats(const kes_fv_pq* pq, size_t* out_floats);
KES_API kes_status kes_fv_pq_get_codebook(const kes_fv_pq* pq, float* codebook, size_t floats);
KES_API kes_status kes_fv_pq_set_codebook(kes_fv_pq* pq, const float* codebook, size_t floats);

/* Keeps a copy of pq's codebook in a PQ36 repository (saved and loaded with it), or removes it when
 * pq is NULL. The repository does not use it itself: it is there so the tool that encodes features
 * and builds tables finds the codebook they were made with. Takes the writer lock.
 * KES_ERR_INVALID_ARGUMENT: NULL repo, a dense repository, pq not trained. */
KES_API kes_status kes_fv_repo_set_pq(kes_fv_repo* repo, const kes_fv_pq* pq);
/* A new quantiser (the caller destroys it) holding the repository's codebook.
 * KES_ERR_INVALID_ARGUMENT: NULL arguments. KES_ERR_NOT_FOUND: the repository has no codebook.
 * On failure *out_pq is NULL. */
KES_API kes_status kes_fv_repo_get_pq(const kes_fv_repo* repo, kes_fv_pq** out_pq);

/* The scan table searches use on this CPU: "avx512vnni", "avx512", "avx2", "neon_dotprod", "neon" or
 * "scalar" (chosen on first use; see kestrel/cpu.h). */
KES_API const char* kes_fv_kernels_name(void);

KES_END_DECLS

#endif /* KESTREL_FV_H */
