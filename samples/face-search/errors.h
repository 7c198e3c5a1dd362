/* errors.h — how face-search reports a failure (samples/common/sample_errors.h, with the program's name).
 * Each helper returns 1, so a caller writes `return fail("what");`. */
#ifndef FACE_SEARCH_ERRORS_H
#define FACE_SEARCH_ERRORS_H

#include "sample_errors.h"

/* A failed Kestrel call: "face-search: WHAT: <kes_last_error()> (<status>)". */
static inline int fail(const char* what) {
    return sample_fail("face-search", what);
}

/* A failed system call on a file: "face-search: PATH: No such file or directory". */
static inline int sys_fail(const char* path) {
    return sample_sys_fail("face-search", path);
}

#endif /* FACE_SEARCH_ERRORS_H */
