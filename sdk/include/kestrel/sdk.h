/* kestrel/sdk.h — Kestrel's core runtime, one include: status and last error, logging, version, board
 * profiles, the CPU / Ascend backend choice, memory (buffers and pools), image and tensor descriptors,
 * CPU features, the shared thread pool and tracing. Every other module builds on these; each header below is the manual
 * of its part.
 */
#ifndef KESTREL_SDK_H
#define KESTREL_SDK_H

#include "kestrel/backend.h"
#include "kestrel/board.h"
#include "kestrel/cpu.h"
#include "kestrel/image.h"
#include "kestrel/log.h"
#include "kestrel/memory.h"
#include "kestrel/status.h"
#include "kestrel/tensor.h"
#include "kestrel/thread_pool.h"
#include "kestrel/trace.h"
#include "kestrel/version.h"

#endif /* KESTREL_SDK_H */
