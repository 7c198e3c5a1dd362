/* kestrel/backend.h — which hardware serves device memory (and, later, models): the CPU or an Ascend NPU.
 *
 * Kestrel never links CANN. On first use it looks for AscendCL with dlopen (libascendcl.so, or CANN 9's
 * libacl_rt.so + libacl_mdl.so), in this order:
 *   1. the directory given by kes_backend_set_library_dir(), else the environment variable
 *      KES_ASCEND_LIB_DIR;
 *   2. $ASCEND_HOME_PATH/lib64, then $ASCEND_TOOLKIT_HOME/lib64 (exported by CANN's set_env.sh);
 *   3. the dynamic loader's default search (LD_LIBRARY_PATH, ld.so.cache);
 *   4. the standard install roots: /usr/local/Ascend/ascend-toolkit/latest/lib64,
 *      $HOME/Ascend/ascend-toolkit/latest/lib64, /usr/local/Ascend/cann/lib64,
 *      /usr/local/Ascend/nnrt/latest/lib64.
 * A link-only stub (CANN's lib64/stub/, where every call returns 100039) is recognised and refused with
 * "a stub library was loaded: fix LD_LIBRARY_PATH order". Kestrel's simulator (board/ascend-sim, a
 * libascendcl.so that runs on any Linux machine) is found the same way: point KES_ASCEND_LIB_DIR at it.
 *
 * Choice (environment variable KES_BACKEND=auto|cpu|ascend, or kes_backend_set):
 *   KES_BACKEND_AUTO   (default) Ascend when the runtime loads and a device answers, else the CPU.
 *   KES_BACKEND_CPU    never touch CANN; KES_MEM_DEVICE is host memory (as in every host build).
 *   KES_BACKEND_ASCEND Ascend or nothing: when it is unavailable, KES_MEM_DEVICE allocations and
 *                      kes_backend_query fail with the reason (never a silent CPU fallback).
 * The choice is resolved lazily, at the first KES_MEM_DEVICE allocation, kes_backend_query, or the first
 * read of the board profile (whose default follows the device's SoC: aclrtGetSocName "Ascend310" → the
 * 310 profile, "Ascend310B*" → 310B, unless the app chose a profile with KES_BOARD or kes_board_set).
 *
 * Lifecycle. Kestrel calls aclInit once per process, sets device KES_ASCEND_DEVICE (default 0) and
 * creates one context of its own, and makes that context current around every AscendCL call it makes on
 * any thread (restoring the thread's previous context afterwards). An app that called aclInit itself
 * keeps working: Kestrel treats aclInit's "repeat initialisation" (100002) as success, notes that the
 * app owns the runtime, and then never calls aclFinalize (whether every CANN version returns 100002 is
 * UNCONFIRMED: no board was available). kes_backend_shutdown releases what Kestrel created.
 *
 * Thread-safety: every call here may run on any thread; the backend state is behind one internal lock.
 * kes_backend_set, kes_backend_set_library_dir and kes_backend_shutdown are meant for start-up and exit,
 * not for racing with allocations on other threads.
 * Errors: calls return kes_status; kes_last_error() names the AscendCL call, its error code's name, a
 * hint, and the runtime's own message (aclGetRecentErrMsg) when it has one.
 */
#ifndef KESTREL_BACKEND_H
#define KESTREL_BACKEND_H

#include "kestrel/memory.h"

KES_BEGIN_DECLS

typedef enum kes_backend {
    KES_BACKEND_AUTO = 0,   /* Ascend if available, else CPU (the default) */
    KES_BACKEND_CPU = 1,    /* host CPU and host memory only */
    KES_BACKEND_ASCEND = 2, /* the Ascend NPU through AscendCL; fail when unavailable */
    KES_BACKEND_NONE = 3    /* only in kes_backend_info.active: the requested backend is unavailable */
} kes_backend;

/* AscendCL run modes (aclrtRunMode), plus "unknown" when no runtime is loaded. */
#define KES_ASCEND_RUN_MODE_UNKNOWN (-1)
#define KES_ASCEND_RUN_MODE_DEVICE 0 /* app on the board's CPU: device memory is CPU-addressable */
#define KES_ASCEND_RUN_MODE_HOST 1   /* PCIe card: device memory is NOT CPU-addressable */

typedef struct kes_backend_info {
    uint32_t struct_size;      /* sizeof(kes_backend_info): lets the struct grow without breaking the ABI */
    kes_backend requested;     /* what KES_BACKEND / kes_backend_set asked for */
    kes_backend active;        /* what serves KES_MEM_DEVICE now: CPU, ASCEND, or NONE */
    uint32_t runtime_loaded;   /* 1 when AscendCL was loaded and initialised */
    uint32_t app_owns_runtime; /* 1 when the app had called aclInit before Kestrel (100002) */
    int32_t run_mode;          /* KES_ASCEND_RUN_MODE_* */
    uint32_t device_count;     /* aclrtGetDeviceCount, 0 when unknown */
    int32_t device_id;         /* the device Kestrel uses, -1 when none */
    uint32_t host_accessible;  /* 1 when the CPU may read and write KES_MEM_DEVICE memory */
    char soc_name[64];         /* aclrtGetSocName ("Ascend310B4"), "" when unknown */
    char library[512];         /* path of the loaded library (or "a + b" for the CANN 9 pair), or "" */
    char reason[512];          /* when active is not ASCEND: why (missing library, stub, no device, ...) */
} kes_backend_info;

/* Chooses the backend. KES_BACKEND_ASCEND loads and initialises the runtime now and returns its error
 * (KES_ERR_NOT_FOUND: no library or no device; KES_ERR_UNSUPPORTED: a stub library; or the mapped
 * AscendCL error), leaving the previous choice in place. Memory already allocated stays with the
 * backend that made it and is freed there. KES_ERR_INVALID_ARGUMENT for KES_BACKEND_NONE or a value
 * outside the enum. */
KES_API kes_status kes_backend_set(kes_backend backend);

/* The requested backend (KES_BACKEND env at start-up, or the last successful kes_backend_set). */
KES_API kes_backend kes_backend_get(void);

/* The backend serving KES_MEM_DEVICE now (resolving the choice if not done yet): KES_BACKEND_CPU,
 * KES_BACKEND_ASCEND, or KES_BACKEND_NONE when Ascend was required and is unavailable. */
KES_API kes_backend kes_backend_active(void);

/* Resolves the choice and describes it. Returns KES_OK when a backend serves (info->active CPU or
 * ASCEND), or the error that makes a required Ascend backend unavailable (info is still filled).
 * KES_ERR_INVALID_ARGUMENT for NULL or a wrong struct_size. */
KES_API kes_status kes_backend_query(kes_backend_info* out_info);

/* The directory to look in first for libascendcl.so (overrides KES_ASCEND_LIB_DIR; NULL or "" clears
 * it). Applies to the next load: KES_ERR_BUSY once the runtime is loaded (kes_backend_shutdown first). */
KES_API kes_status kes_backend_set_library_dir(const char* dir);

/* Releases what Kestrel created on the device (its context, the device, and — only if Kestrel made the
 * aclInit call — aclFinalize), unloads the library and forgets the resolved choice, so the next use
 * resolves afresh. KES_ERR_BUSY (nothing released) while KES_MEM_DEVICE buffers or pools from the
 * Ascend backend are alive; the mapped AscendCL error if releasing fails (aclFinalize of Kestrel's
 * simulator reports leaked device objects this way). KES_OK when nothing was loaded. Optional at exit. */
KES_API kes_status kes_backend_shutdown(void);

/* "auto", "cpu", "ascend", "none"; "unknown" otherwise. */
KES_API const char* kes_backend_name(kes_backend backend);

/* Parses "auto", "cpu", "ascend" (also "npu"), case-insensitive. KES_ERR_INVALID_ARGUMENT otherwise. */
KES_API kes_status kes_backend_from_name(const char* name, kes_backend* out_backend);

KES_END_DECLS

#endif /* KESTREL_BACKEND_H */
