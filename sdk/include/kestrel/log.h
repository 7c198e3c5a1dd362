/* kestrel/log.h — leveled logging with an application callback.
 *
 * Kestrel logs through one process-wide sink. By default lines go to stderr as
 *     [kestrel W dvpp] jpeg decode: progressive JPEG, using the software path
 * and only messages at or above the current level are formatted at all (a disabled level costs one
 * relaxed atomic load). The initial level is KES_LOG_WARN, or the value of the environment variable
 * KES_LOG_LEVEL read once at first use: "off", "error", "warn", "info", "debug", "trace", or 0..5.
 *
 * Thread-safety: every function here may be called from any thread. The callback is called on the
 * thread that logs, possibly from several threads at once; it must be thread-safe itself, must not
 * call back into Kestrel's logging, and must copy `message` if it keeps it.
 */
#ifndef KESTREL_LOG_H
#define KESTREL_LOG_H

#include "kestrel/status.h"

KES_BEGIN_DECLS

typedef enum kes_log_level {
    KES_LOG_OFF = 0,
    KES_LOG_ERROR = 1,
    KES_LOG_WARN = 2,
    KES_LOG_INFO = 3,
    KES_LOG_DEBUG = 4,
    KES_LOG_TRACE = 5
} kes_log_level;

/* `module` is the short name of the Kestrel module that logs ("sdk", "dvpp", "engine", ...). */
typedef void (*kes_log_callback)(kes_log_level level, const char* module, const char* message, void* user_data);

/* Messages with level <= `level` are emitted. Returns KES_ERR_INVALID_ARGUMENT for values outside
 * KES_LOG_OFF..KES_LOG_TRACE. */
KES_API kes_status kes_log_set_level(kes_log_level level);
KES_API kes_log_level kes_log_get_level(void);

/* Routes messages to `callback` instead of stderr; NULL restores the stderr sink. */
KES_API void kes_log_set_callback(kes_log_callback callback, void* user_data);

/* Logs one printf-style message; for samples and apps that want one log stream with Kestrel's. */
KES_API void kes_log_write(kes_log_level level, const char* module, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* "off", "error", "warn", "info", "debug", "trace"; "unknown" otherwise. */
KES_API const char* kes_log_level_name(kes_log_level level);

/* Parses a level name (case-insensitive) or a digit 0..5. */
KES_API kes_status kes_log_level_from_name(const char* name, kes_log_level* out_level);

KES_END_DECLS

#endif /* KESTREL_LOG_H */
