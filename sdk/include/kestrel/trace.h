/* kestrel/trace.h — scoped spans written as Chrome trace-event JSON (opens in Perfetto / chrome://tracing).
 *
 * Set KES_TRACE=trace.json before starting the program, and Kestrel records a span for each traced
 * stage (decode, resize, AIPP, model execute, search) on every thread and writes the file at exit.
 * Or drive it yourself: kes_trace_start(path) … kes_trace_stop(). Apps can add their own spans with
 * kes_trace_begin/kes_trace_end to see their pipeline beside Kestrel's.
 *
 * One recorder per process: the copy of Kestrel inside the AscendCL simulator (board/ascend-sim) records
 * into the app's, so the file also shows what the simulated NPU ran, and is written once.
 *
 * Cost: with tracing off, a span is two atomic loads. With tracing on, events go to per-thread
 * buffers (no lock on the hot path); the file holds at most KES_TRACE_MAX_EVENTS per thread and says
 * so in its metadata when events were dropped.
 *
 * Thread-safety: begin/end from any thread; spans nest per thread and must end on the thread that
 * began them. start/stop may be called from any thread; spans running on other threads while stop
 * writes the file are either in it whole or not at all.
 */
#ifndef KESTREL_TRACE_H
#define KESTREL_TRACE_H

#include "kestrel/status.h"

KES_BEGIN_DECLS

#define KES_TRACE_MAX_EVENTS 1000000u

/* Starts recording; the file is written by kes_trace_stop() or at process exit. `path` is copied.
 * KES_ERR_BUSY if tracing is already on. */
KES_API kes_status kes_trace_start(const char* path);

/* Stops recording and writes the JSON file. KES_ERR_IO if it cannot be written, KES_ERR_NOT_FOUND if
 * tracing was not on. */
KES_API kes_status kes_trace_stop(void);

/* 1 while recording. */
KES_API int kes_trace_enabled(void);

/* Opens a span on this thread. `name` and `category` must be string literals or otherwise outlive the
 * trace (they are stored by pointer). */
KES_API void kes_trace_begin(const char* category, const char* name);
/* Closes this thread's innermost open span. */
KES_API void kes_trace_end(void);

KES_END_DECLS

#ifdef __cplusplus
namespace kes {
/* RAII span: `kes::TraceScope span("dvpp", "jpeg_decode");` */
class TraceScope {
public:
    TraceScope(const char* category, const char* name) : active_(kes_trace_enabled() != 0) {
        if (active_) kes_trace_begin(category, name);
    }
    ~TraceScope() {
        if (active_) kes_trace_end();
    }
    TraceScope(const TraceScope&) = delete;
    TraceScope& operator=(const TraceScope&) = delete;

private:
    bool active_;
};
}  // namespace kes
#endif

#endif /* KESTREL_TRACE_H */
