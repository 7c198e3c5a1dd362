/* errors.h — how face-search reports a failure. Teaches: every Kestrel call returns a kes_status, and on
 * failure kes_last_error() (this thread's message, naming the call, the argument and the rule) says why;
 * print it with kes_status_str(kes_last_status()) and the thing that failed. Each helper returns 1, so
 * a caller writes `return fail("what");`. */
#ifndef FACE_SEARCH_ERRORS_H
#define FACE_SEARCH_ERRORS_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kestrel/status.h"

/* A failed Kestrel call: "face-search: WHAT: <kes_last_error()> (<status>)". */
static inline int fail(const char* what) {
    fprintf(stderr, "face-search: %s: %s (%s)\n", what, kes_last_error(), kes_status_str(kes_last_status()));
    return 1;
}

/* A failed system call on a file: "face-search: PATH: No such file or directory". */
static inline int sys_fail(const char* path) {
    fprintf(stderr, "face-search: %s: %s\n", path, strerror(errno));
    return 1;
}

#endif /* FACE_SEARCH_ERRORS_H */
