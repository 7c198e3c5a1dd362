/* kestrel/engine.h — load a converted model (.kom) into memory you control and execute it.
 *
 * The engine is AscendCL's aclmdl* runtime re-imagined lean (docs/BOARD-RULES.md §Models): a model is converted once
 * into a .kom file (a FlatBuffer plus a 128-byte aligned weight blob, engine/schema/kom.fbs), loaded, and executed many
 * times without allocating. This build executes on the CPU: ONNX op semantics, with fast kernels (AVX2/AVX-512 on x86,
 * NEON on the boards) where they apply and reference kernels elsewhere; KES_KERNELS=reference runs the reference
 * kernels only (the oracle, to compare against).
 *
 * Dynamic batch (ATC --dynamic_batch_size): a model converted with batch gears describes its inputs
 * and outputs at the largest gear and plans its arena for it; kes_model_context_set_batch picks the
 * gear for the next executions (the tensors then have that batch as dim 0).
 * Dynamic image size (ATC --dynamic_image_size): a model converted with image size gears lists
 * (height, width) pairs for its image inputs, describes the graph at the gear of largest area and
 * reserves in its arena, per tensor, the most any gear needs; kes_model_context_set_image_size picks
 * the gear. Output shapes follow the gear: kes_model_context_input_desc / _output_desc describe the
 * tensors at the context's current gear (batch or image size). A model has batch gears or image size
 * gears, never both.
 * AIPP (ATC --insert_op_conf): a model may carry the aipp_op text for an input (kes_model_input_aipp).
 * As on a board, where the inserted AIPP runs inside the model, kes_model_execute_images feeds such an
 * input DVPP images (NV12, ...): the engine runs the model's static AIPP (the aipp module, parsed when
 * the model loads) straight into its arena. kes_model_execute takes the AIPP output tensor instead.
 * Dynamic AIPP (aipp_mode dynamic: the parameters come at run time, aclmdlSetInputAIPP on a board) takes
 * images too, once the context has the parameters: kes_model_context_set_dynamic_aipp (a kes_aipp_dynamic
 * of kestrel/aipp.h), then kes_model_execute_images. Both executors run it: the CPU through the aipp
 * module, the NPU (a .om) through aclmdlCreateAIPP / aclmdlSetAIPP* / aclmdlSetInputAIPP.
 * Data-dependent shapes are bounded, so the static plan holds them. NonMaxSuppression (ONNX's
 * selected_indices is [num_selected, 3]) outputs int64 [B × C × min(max_output_boxes_per_class,
 * num_boxes), 3]: the selected [batch, class, box] rows first, in ONNX's order, then rows of -1 (still
 * valid Gather indices for a post-processing graph). The valid rows end at the first row of -1; a node
 * given a second output gets that count as int64 [1] (ONNX graphs have one output). max_output_boxes_
 * per_class must be a constant (kes-convert --freeze-input NAME=FILE), else conversion says
 * KES_ERR_UNSUPPORTED.
 *
 * Memory. A model needs two regions, both queried before loading (kes_model_query_size, the
 *   aclmdlQuerySize analog; the sizes depend on the fast kernels this CPU runs):
 *   - weight memory: the read-only weights, shared by every context of the model, followed by the
 *     weights the fast kernels packed at load (once, for every gear and context). Loading from memory
 *     or a read file copies the weights there; loading with KES_MODEL_LOAD_MMAP uses the mapped file in
 *     place and puts the packed weights in engine memory.
 *   - work memory: ONE arena holding every activation, graph inputs and outputs included, at offsets
 *     fixed by the converter's static memory plan, followed by the kernels' scratch (the largest need
 *     of any node at KES_MODEL_MAX_THREADS threads). Each context executes in a work arena. When the
 *     load fuses layers (below), the plan is redone then without the tensors fused kernels keep in
 *     their scratch, so the arena shrinks (kes_model_get_memory_plan reports the plan in use).
 * Fused layers. Loading decides, from the fast kernels this CPU runs (so every .kom gains it, and
 *   KES_KERNELS=reference, the oracle, never fuses): a depthwise Conv whose output is read only by a
 *   1x1, stride-1, ungrouped Conv (and is no graph output) runs inside that Conv's kernel, a band of
 *   rows at a time through a cache-sized tile, and its output tensor is never written. The results are
 *   the bytes of the two layers run apart. Fusion never costs memory: when the tiles' scratch would
 *   outgrow what the smaller arena saves (the arena's peak lies elsewhere), every pair runs apart. The
 *   per-layer profile and the observer below say how they see such a pair.
 * The *_with_mem loads take caller memory (e.g. from a kes_mem_pool, the aclmdlLoadFromMemWithMem
 * analog): each pointer must be 128-byte aligned and hold at least the queried bytes, and must stay
 * valid until kes_model_unload. A NULL pointer (size 0) lets the engine allocate that region.
 *
 * Thread-safety: a loaded model is immutable; its weights are shared read-only, so any number of
 * contexts of one model may execute concurrently on different threads. One kes_model_context executes
 * on one thread at a time. Contexts sharing one work buffer (several contexts created without their
 * own work memory on a model loaded with caller work memory, or several contexts — of one model or of
 * several, e.g. a detector and an embedder loaded on one buffer sized for the larger — given the same
 * buffer) must run one after another, as aclmdl models sharing a workspace do; nothing one leaves in
 * the arena is read by the next. The description calls
 * (counts, names, descriptors) may run from any thread. Unloading a model while a context of it is
 * alive, or destroying a context while it executes, is the caller's bug.
 * Ownership: the caller owns the file bytes passed to kes_model_load_from_memory (they are not kept),
 * every kes_tensor it passes to kes_model_execute, and the memory it passes to the *_with_mem calls.
 * Strings returned by the name calls live as long as the model.
 */
#ifndef KESTREL_ENGINE_H
#define KESTREL_ENGINE_H

#include "kestrel/image.h"
#include "kestrel/tensor.h"

KES_BEGIN_DECLS

struct kes_aipp_dynamic; /* kestrel/aipp.h: dynamic AIPP parameters (kes_model_context_set_dynamic_aipp) */

typedef struct kes_model kes_model;                 /* opaque: a loaded, immutable model */
typedef struct kes_model_context kes_model_context; /* opaque: one execution state (a work arena) */

/* Load flags for kes_model_load_from_file. */
#define KES_MODEL_LOAD_MMAP 1u /* map the file read-only; weights are used in place (zero copy) */
/* With KES_MODEL_LOAD_MMAP: skip the weights' checksum (below), which reads every page of the weights
 * at load; the cheapest mmap load, for a file the app trusts. Ignored by loads that copy the weights. */
#define KES_MODEL_LOAD_NO_VERIFY 2u

/* Work bytes (the activation arena) and weight bytes of a .kom image; both multiples of 128. The
 * image's structure is verified first: KES_ERR_CORRUPT_DATA (naming the problem) for a malformed file,
 * KES_ERR_UNSUPPORTED for a valid file this build cannot execute (newer format, unknown op; the ops it
 * knows: kes-convert --list-ops). Loading additionally checks every node's attributes and shapes against its op (same
 * errors). */
KES_API kes_status kes_model_query_size(const void* data, size_t size, size_t* out_work_bytes,
                                        size_t* out_weight_bytes);
KES_API kes_status kes_model_query_size_from_file(const char* path, size_t* out_work_bytes, size_t* out_weight_bytes);

/* Verifies and loads a .kom image. The bytes are not kept: weights are copied into engine-owned
 * weight memory. Errors as for kes_model_query_size, plus KES_ERR_OUT_OF_MEMORY.
 * Weight checksum: kes-convert records the CRC-32 of the weights in the file, and every load checks it
 * (an mmap load unless KES_MODEL_LOAD_NO_VERIFY): a damaged weight byte is KES_ERR_CORRUPT_DATA, "the
 * weights are damaged: their CRC-32 is ..., the file records ...", preceded by the path for the file
 * loads. The size queries do not read the weights. A file from a kes-convert older than the checksum
 * has none: it loads as before, unverified, and the load logs that at info level. */
KES_API kes_status kes_model_load_from_memory(const void* data, size_t size, kes_model** out_model);

/* Reads (flags 0) or maps (KES_MODEL_LOAD_MMAP) the file. KES_ERR_IO when it cannot be read. */
KES_API kes_status kes_model_load_from_file(const char* path, uint32_t flags, kes_model** out_model);

/* As above with caller memory (see "Memory"): weights are copied into `weight`; `work` becomes the
 * arena of every context created without its own work memory. KES_ERR_INVALID_ARGUMENT for a
 * misaligned pointer or a region smaller than kes_model_query_size reports. */
KES_API kes_status kes_model_load_from_memory_with_mem(const void* data, size_t size, void* work, size_t work_size,
                                                       void* weight, size_t weight_size, kes_model** out_model);
KES_API kes_status kes_model_load_from_file_with_mem(const char* path, void* work, size_t work_size, void* weight,
                                                     size_t weight_size, kes_model** out_model);

/* Frees the model (and unmaps its file). Its contexts must be destroyed first. NULL is a no-op. */
KES_API void kes_model_unload(kes_model* model);

/* Work and weight bytes of a loaded model (as kes_model_query_size reported). */
KES_API kes_status kes_model_get_size(const kes_model* model, size_t* out_work_bytes, size_t* out_weight_bytes);

/* The activation arena of the static memory plan and its ideal: the most bytes (each tensor rounded up
 * to 128) live at any one step, a lower bound no plan can beat. arena ≥ ideal for plans Kestrel writes. */
KES_API kes_status kes_model_get_memory_plan(const kes_model* model, size_t* out_arena_bytes, size_t* out_ideal_bytes);

/* ---- description ------------------------------------------------------------------------------- */

/* What a .kom file records about its origin. The strings live as long as the model. */
typedef struct kes_model_metadata {
    uint32_t struct_size;          /* set by the caller to sizeof(kes_model_metadata) */
    uint32_t format_version;       /* of the .kom file */
    const char* source_format;     /* "onnx", "tflite" or "builder" */
    const char* source_hash;       /* sha256 of the source model file, hex ("" if none) */
    const char* converter_version; /* e.g. "kes-convert 0.1.0" */
    const char* target_board;      /* the --board profile: "310", "310B" or "host" */
} kes_model_metadata;

KES_API kes_status kes_model_get_metadata(const kes_model* model, kes_model_metadata* out_metadata);

KES_API kes_status kes_model_input_count(const kes_model* model, size_t* out_count);
KES_API kes_status kes_model_output_count(const kes_model* model, size_t* out_count);

/* The tensor name of input/output `index` (KES_ERR_INVALID_ARGUMENT when index ≥ the count). */
KES_API kes_status kes_model_input_name(const kes_model* model, size_t index, const char** out_name);
KES_API kes_status kes_model_output_name(const kes_model* model, size_t index, const char** out_name);

/* Describes input/output `index` as a contiguous kes_tensor with data NULL and size the bytes a
 * buffer for it needs: wrap or alloc a tensor of this dtype, layout and shape to execute. */
KES_API kes_status kes_model_input_desc(const kes_model* model, size_t index, kes_tensor* out_desc);
KES_API kes_status kes_model_output_desc(const kes_model* model, size_t index, kes_tensor* out_desc);

/* Index of the input/output named `name`; KES_ERR_NOT_FOUND if none. */
KES_API kes_status kes_model_find_input(const kes_model* model, const char* name, size_t* out_index);
KES_API kes_status kes_model_find_output(const kes_model* model, const char* name, size_t* out_index);

/* ---- execution ----------------------------------------------------------------------------------- */

/* Creates an execution context. `work` (128-byte aligned, ≥ the model's work bytes) is the context's
 * arena; NULL (work_size 0) uses the model's caller work memory if it was loaded with some, else
 * allocates the arena now, so executing never allocates. It runs each node on the shared thread pool
 * (kes_thread_pool_default(), at most KES_MODEL_MAX_THREADS threads), except a model whose arena is
 * under 256 KiB, whose layers are too small to split: it runs on the calling thread.
 * kes_model_context_create_with_config chooses otherwise. */
KES_API kes_status kes_model_context_create(const kes_model* model, void* work, size_t work_size,
                                            kes_model_context** out_context);

/* A node never runs on more threads than this: the work bytes hold scratch for this many. */
#define KES_MODEL_MAX_THREADS 8

/* How a context executes. Results never depend on the thread count: every kernel splits its work by
 * the shapes, not by the threads, so 1 and 8 threads give the same bytes. */
typedef struct kes_model_context_config {
    uint32_t struct_size;    /* sizeof(kes_model_context_config) (kes_model_context_config_init sets it) */
    uint32_t threads;        /* threads per node: 0 = the pool's size (capped at KES_MODEL_MAX_THREADS),
                                1 = the calling thread only */
    const int* cpu_affinity; /* optional: the context gets a pool of its own pinned to these CPUs (the
                                boards keep cores for the AI CPU: e.g. {1, 2, 3} on a 310B) */
    uint32_t affinity_count;
} kes_model_context_config;

KES_API void kes_model_context_config_init(kes_model_context_config* config);

/* kes_model_context_create with a config (NULL: the defaults above). KES_ERR_INVALID_ARGUMENT for
 * threads > KES_MODEL_MAX_THREADS, an affinity count without a list, or an unknown struct_size. */
KES_API kes_status kes_model_context_create_with_config(const kes_model* model, void* work, size_t work_size,
                                                        const kes_model_context_config* config,
                                                        kes_model_context** out_context);

/* The threads the context runs each node on. */
KES_API kes_status kes_model_context_threads(const kes_model_context* context, uint32_t* out_threads);

/* ---- per-layer profile (the msprof analog; the seam an NPU backend reports through) ------------------ */

/* Layers are the model's nodes in execution order. */
KES_API kes_status kes_model_layer_count(const kes_model* model, size_t* out_count);

/* Turns timing of every node on or off for the context's next executions (off by default: timing costs
 * two clock reads per node). With KES_TRACE recording, each timed node is also one span, named after
 * the node (the names are kept for the process's life, so a trace written at exit stays valid after
 * the model is unloaded). KES_ERR_INVALID_ARGUMENT while asynchronous work is queued. */
KES_API kes_status kes_model_context_set_profiling(kes_model_context* context, int enabled);

typedef struct kes_model_layer_profile {
    uint32_t struct_size; /* set by the caller to sizeof(kes_model_layer_profile) */
    const char* name;     /* the node's name (lives as long as the model) */
    const char* op;       /* "Conv", "Add", ... */
    const char* impl;     /* the kernel that ran it: "reference", "igemm-avx512", "dwconv-neon", ...;
                             a fused pair (see "Fused layers"): "dwconv+igemm-avx512" on the 1x1 Conv,
                             "fused into <that layer's name>" on the depthwise Conv */
    uint64_t time_ns;     /* its time in the context's last profiled execution (a fused pair's time is
                             the 1x1 Conv's; the depthwise layer reports 0) */
    double flops;         /* floating-point operations at the context's gear (0 when not counted; a
                             fused pair counts both layers' on the 1x1 Conv and 0 on the other) */
    int32_t output_index; /* the model tensor of its first output */
    uint32_t output_ndim; /* and that output's shape at the context's gear */
    int64_t output_shape[KES_TENSOR_MAX_DIMS];
    uint64_t weight_bytes; /* bytes of the layer's constant inputs (weights, bias) in the model file */
    uint64_t packed_bytes; /* bytes its kernel packed them into at load (0: it reads them as they are) */
} kes_model_layer_profile;

/* Called after each node of the context's executions (on the executing thread) with that node's name
 * and outputs (their tensor names, as in the source model, and descriptors): `outputs[k].data` points into the work
 * arena and is valid during the call only (later nodes reuse the bytes). This is how kes-model-bench --dump writes
 * every tensor of a run (the msaccucmp dump). The observer may change the outputs it is given, e.g. to inject an error
 * into one layer and check that kes-compare finds it; nothing else of the arena may be touched.
 * A context with an observer runs fused layers apart (same bytes), so it sees every node's output: the
 * tensor a fused pair keeps out of the arena then lives in a buffer the context allocates when the
 * observer is first set (kes_model_context_set_observer; executing still allocates nothing) and frees
 * when it is destroyed, and `outputs[k].data` of that node points there. */
typedef void (*kes_model_node_observer)(size_t layer, const char* name, const char* const* output_names,
                                        kes_tensor* outputs, size_t output_count, void* user_data);

/* Sets (or, with NULL, removes) the context's observer. KES_ERR_INVALID_ARGUMENT while asynchronous
 * work is queued; KES_ERR_OUT_OF_MEMORY when the model has fused layers and the buffer for their
 * tensors (the largest set live at once) cannot be allocated. */
KES_API kes_status kes_model_context_set_observer(kes_model_context* context, kes_model_node_observer observer,
                                                  void* user_data);

/* Layer `index` as the context ran it last (time 0 before a profiled execution). */
KES_API kes_status kes_model_context_layer_profile(const kes_model_context* context, size_t index,
                                                   kes_model_layer_profile* out_layer);
KES_API void kes_model_context_destroy(kes_model_context* context); /* NULL is a no-op */

/* The aipp_op configuration text converted into the model for input `index`, or *out_config = NULL
 * when that input has none. The string lives as long as the model. A .om (the NPU) compiles its AIPP
 * in and does not give the text back: an input that takes images reports "aipp_op { aipp_mode :
 * static }", or "aipp_mode : dynamic" with its max_src_image_size when the model has dynamic AIPP, so
 * non-NULL always means "feed this input images" (kes_model_execute_images; dynamic: after
 * kes_model_context_set_dynamic_aipp). */
KES_API kes_status kes_model_input_aipp(const kes_model* model, size_t index, const char** out_config);

/* Gives input `index` dynamic AIPP parameters (the aclmdlSetInputAIPP analog) for the context's next
 * kes_model_execute_images calls: image k of the input uses batch item k of `params`. An input takes
 * them when kes_model_input_aipp reports "aipp_mode : dynamic" for it. `params` is borrowed, not copied
 * (nothing is allocated): it must stay valid until it is replaced, cleared (NULL) or the context is
 * destroyed, and unchanged while an execution that uses it runs or is queued. Its batch size must be at
 * least the input's batch at the gear of each execution (else that execution fails). Errors:
 * KES_ERR_INVALID_ARGUMENT for an index out of range, an input without dynamic AIPP, or while
 * asynchronous work is queued; KES_ERR_UNSUPPORTED in a build without the aipp module. */
KES_API kes_status kes_model_context_set_dynamic_aipp(kes_model_context* context, size_t index,
                                                      const struct kes_aipp_dynamic* params);

/* The model's batch gears, ascending (*out_count 0 for a static batch). Copies at most `capacity`. */
KES_API kes_status kes_model_batch_gears(const kes_model* model, int64_t* out_gears, size_t capacity,
                                         size_t* out_count);

/* Selects the batch gear for the context's next executions (0: the largest, the default). Input and
 * output tensors must then have `batch` as dim 0. KES_ERR_INVALID_ARGUMENT for a batch that is not
 * a gear, or while asynchronous work is queued. Allocates nothing. */
KES_API kes_status kes_model_context_set_batch(kes_model_context* context, int64_t batch);

/* The model's image size gears as (height, width) pairs, ascending by area then height: out_sizes
 * receives 2 values per gear, at most `capacity` gears (*out_count 0 for a static image size). */
KES_API kes_status kes_model_image_sizes(const kes_model* model, int64_t* out_sizes, size_t capacity,
                                         size_t* out_count);

/* Selects the image size gear for the context's next executions (0, 0: the largest, the default). The
 * image inputs then have this height and width, and every tensor the shapes the graph gives it there
 * (auto-padding included, resolved per gear when loading). KES_ERR_INVALID_ARGUMENT for a size that
 * is not a gear, or while asynchronous work is queued. Allocates nothing. */
KES_API kes_status kes_model_context_set_image_size(kes_model_context* context, int64_t height, int64_t width);

/* As kes_model_input_desc / kes_model_output_desc, at the context's current gear. */
KES_API kes_status kes_model_context_input_desc(const kes_model_context* context, size_t index, kes_tensor* out_desc);
KES_API kes_status kes_model_context_output_desc(const kes_model_context* context, size_t index, kes_tensor* out_desc);

/* Runs the model synchronously. inputs[i] / outputs[i] follow the model's input/output order and must
 * match kes_model_context_*_desc (the context's gear) in dtype and shape (layout ND matches anything);
 * inputs are read, outputs written; both must be contiguous. Nothing is allocated.
 * KES_ERR_INVALID_ARGUMENT names the first mismatching tensor. */
KES_API kes_status kes_model_execute(kes_model_context* context, const kes_tensor* inputs, size_t input_count,
                                     kes_tensor* outputs, size_t output_count);

/* One graph input for kes_model_execute_images: a tensor, or the images of an input that carries AIPP. */
typedef struct kes_model_input {
    const kes_tensor* tensor; /* inputs without AIPP (NULL for AIPP inputs) */
    const kes_image* images;  /* AIPP inputs: one image per batch item (NULL otherwise) */
    uint32_t image_count;     /* the input's batch at the context's gear */
} kes_model_input;

/* As kes_model_execute, with each AIPP input (kes_model_input_aipp non-NULL) fed DVPP images through the
 * model's static AIPP, or the dynamic AIPP parameters the context was given for it
 * (kes_model_context_set_dynamic_aipp): crop, colour conversion, padding and normalisation write the input tensor in
 * the arena in the input's layout (kes_model_context_input_desc). kes-convert records a definite layout for
 * every AIPP input: --input-format if given, else NHWC for a TFLite input or an ONNX input the graph
 * reads through Transpose(perm=0,3,1,2) (a tf2onnx export's, e.g. BlazeFace [1,256,256,3]), else NCHW,
 * ATC's default input_format; never from the shape. An ND 4-d AIPP input (a .kom from an older
 * converter) is NCHW, ATC's default: convert such a channels-last model again. The images must suit the
 * config (input_format, src_image_size, crop; the aipp module's rules name any mismatch). Errors:
 * KES_ERR_INVALID_ARGUMENT naming the input (a tensor for an AIPP input or the reverse, an image count
 * other than the batch, an image AIPP refuses, a dynamic-AIPP input without parameters — naming
 * kes_model_context_set_dynamic_aipp — or with fewer batch items than images, an image larger than
 * the input's max_src_image_size), KES_ERR_UNSUPPORTED for a build without the aipp module or, on the
 * NPU, a runtime without the dynamic AIPP calls (named). On the NPU a dynamic-AIPP image is read as the
 * board reads it: tightly packed at the parameters' src_image_size (0: the image's size), in the byte
 * order of their input_format (NV12 for YUV420SP_U8). Allocates nothing, on any thread (AIPP spreads rows over the
 * default thread pool). */
KES_API kes_status kes_model_execute_images(kes_model_context* context, const kes_model_input* inputs,
                                            size_t input_count, kes_tensor* outputs, size_t output_count);

/* ---- asynchronous execution ------------------------------------------------------------------------ */

/* Called on the context's worker thread when a queued execution finishes: status KES_OK or the error,
 * message "" or the error text (valid during the call only). */
typedef void (*kes_model_callback)(kes_status status, const char* message, void* user_data);

#define KES_MODEL_ASYNC_QUEUE_DEPTH 16 /* jobs a context queues before execute_async reports BUSY */

/* Queues an execution on the context's worker thread (started by the first call; the only allocation)
 * and returns at once. The kes_tensor structs are copied; the buffers they point to must stay valid,
 * inputs unchanged, until the callback runs or kes_model_context_wait returns. Jobs run in order.
 * KES_ERR_BUSY when KES_MODEL_ASYNC_QUEUE_DEPTH jobs are pending. Argument errors found when the job
 * runs go to the callback and to kes_model_context_wait. While jobs are queued the context must not
 * be used by kes_model_execute, set_batch or set_image_size; destroying it waits for the queue to drain. */
KES_API kes_status kes_model_execute_async(kes_model_context* context, const kes_tensor* inputs, size_t input_count,
                                           kes_tensor* outputs, size_t output_count, kes_model_callback callback,
                                           void* user_data);

/* kes_model_execute_images on the context's queue, as kes_model_execute_async. The kes_model_input
 * structs are copied; the tensors and image arrays they point to, and the image buffers, must stay
 * valid and unchanged until the callback runs or kes_model_context_wait returns. */
KES_API kes_status kes_model_execute_images_async(kes_model_context* context, const kes_model_input* inputs,
                                                  size_t input_count, kes_tensor* outputs, size_t output_count,
                                                  kes_model_callback callback, void* user_data);

/* Blocks until every queued execution of the context has finished; returns the first failure since the
 * last wait (its status, with the message in kes_last_error()), else KES_OK. */
KES_API kes_status kes_model_context_wait(kes_model_context* context);

/* The microkernel table the CPU executor's fast kernels use on this CPU: "avx512", "avx2", "neon" or
 * "scalar"; "reference" when KES_KERNELS=reference keeps every op on the reference kernels (chosen on
 * first use; see kestrel/cpu.h). */
KES_API const char* kes_engine_kernels_name(void);

KES_END_DECLS

#endif /* KESTREL_ENGINE_H */
