/* kestrel/status.h — status codes and the per-thread last-error message.
 *
 * Every fallible Kestrel call returns a kes_status. KES_OK is 0; failures are negative and grouped by
 * kind, so `if (st != KES_OK)` and `switch (st)` both read naturally. The code says what kind of thing
 * went wrong; kes_last_error() says exactly what: which call, which argument or limit, what was
 * expected. Example: "kes_mem_pool_alloc: pool is full: requested 4194304 bytes, largest free block
 * 1048576 (capacity 8388608, growth disabled)".
 *
 * Thread-safety: the last-error text is thread-local. A failing call overwrites this thread's text;
 * successful calls leave it as it was (like errno), so read it right after the failure you care about.
 * Ownership: kes_status_str() and kes_last_error() return pointers owned by Kestrel. The status string
 * is static; the last-error text stays valid until this thread's next failing Kestrel call.
 */
#ifndef KESTREL_STATUS_H
#define KESTREL_STATUS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define KES_BEGIN_DECLS extern "C" {
#define KES_END_DECLS }
#else
#define KES_BEGIN_DECLS
#define KES_END_DECLS
#endif

/* Kestrel ships static libraries; KES_API keeps the symbols visible if an app folds them into a .so. */
#if defined(__GNUC__)
#define KES_API __attribute__((visibility("default")))
#else
#define KES_API
#endif

KES_BEGIN_DECLS

typedef enum kes_status {
    KES_OK = 0,
    KES_ERR_INVALID_ARGUMENT = -1, /* an argument or a combination of them breaks a documented rule */
    KES_ERR_UNSUPPORTED = -2,      /* valid request the active board profile or this build cannot do */
    KES_ERR_OUT_OF_MEMORY = -3,    /* a pool or the system ran out of memory; nothing was changed */
    KES_ERR_IO = -4,               /* a file or stream could not be read or written */
    KES_ERR_CORRUPT_DATA = -5,     /* input data (image, stream, model, repository) is malformed */
    KES_ERR_NOT_FOUND = -6,        /* a named thing (file, tensor, feature, library) does not exist */
    KES_ERR_BUSY = -7,             /* the object is in use and cannot do this now; try again later */
    KES_ERR_TIMEOUT = -8,          /* a wait ran out of time */
    KES_ERR_INTERNAL = -9          /* a bug in Kestrel: please report it with kes_last_error() */
} kes_status;

/* A short constant name for a code: "KES_OK", "KES_ERR_INVALID_ARGUMENT", ...; "KES_ERR_UNKNOWN" for
 * values outside the enum. Never NULL. */
KES_API const char* kes_status_str(kes_status status);

/* The detailed message of this thread's last failure, or "" if this thread has had none. Never NULL. */
KES_API const char* kes_last_error(void);

/* The status of this thread's last failure (KES_OK if none). */
KES_API kes_status kes_last_status(void);

/* Forgets this thread's last failure: kes_last_error() returns "" and kes_last_status() KES_OK. */
KES_API void kes_clear_error(void);

KES_END_DECLS

#endif /* KESTREL_STATUS_H */
