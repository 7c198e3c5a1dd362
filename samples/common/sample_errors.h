/* sample_errors.h — how the samples report a failure: every Kestrel call returns a kes_status, and on
 * failure kes_last_error() (this thread's message, naming the call, the argument and the rule) says why.
 * Each helper prints "<program>: <what>: ..." on stderr and returns 1, so a caller writes
 * `return sample_fail(program, "what");`. Header-only: the fuzz targets link no sample library. */
#ifndef KESTREL_SAMPLES_SAMPLE_ERRORS_H
#define KESTREL_SAMPLES_SAMPLE_ERRORS_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kestrel/status.h"

/* A failed Kestrel call: "<program>: WHAT: <kes_last_error()> (<status>)". */
static inline int sample_fail(const char* program, const char* what) {
    fprintf(stderr, "%s: %s: %s (%s)\n", program, what, kes_last_error(), kes_status_str(kes_last_status()));
    return 1;
}

/* A failed system call on a file: "<program>: PATH: No such file or directory". */
static inline int sample_sys_fail(const char* program, const char* path) {
    fprintf(stderr, "%s: %s: %s\n", program, path, strerror(errno));
    return 1;
}

#endif
