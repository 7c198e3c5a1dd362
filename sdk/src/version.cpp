// Run-time version and build description.
#include <cstdio>

#include "kestrel/version.h"

#ifndef KES_BUILD_TYPE
#define KES_BUILD_TYPE "unknown"
#endif
#ifndef KES_TARGET_PROCESSOR
#define KES_TARGET_PROCESSOR "unknown"
#endif
#ifndef KES_DEFAULT_BOARD_NAME
#define KES_DEFAULT_BOARD_NAME "310B"
#endif

#if defined(__clang__)
#define KES_COMPILER "Clang " __clang_version__
#elif defined(__GNUC__)
#define KES_COMPILER "GNU " __VERSION__
#else
#define KES_COMPILER "unknown compiler"
#endif

extern "C" {

int kes_version(void) {
    return KES_VERSION;
}

const char* kes_version_string(void) {
    return KES_VERSION_STRING;
}

const char* kes_build_info(void) {
    return "kestrel " KES_VERSION_STRING " (" KES_TARGET_PROCESSOR ", " KES_COMPILER ", " KES_BUILD_TYPE
           ", default board " KES_DEFAULT_BOARD_NAME ")";
}

}  // extern "C"
