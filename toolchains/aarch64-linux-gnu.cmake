# Cross-compile Kestrel for 64-bit Arm Linux boards with Debian's cross toolchain:
#   apt-get install g++-aarch64-linux-gnu qemu-user-static   (+ arm64 multiarch -dev packages)
#   cmake --preset aarch64        (or -DCMAKE_TOOLCHAIN_FILE=toolchains/aarch64-linux-gnu.cmake)
# Baseline armv8-a code only: faster kernels (dotprod, fp16) are picked at run time, so the same
# binary runs on every 310-class board. Board files (atlas200dk.cmake, atlas200idka2.cmake) add
# CPU tuning and the default board profile.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(KES_CROSS_PREFIX "aarch64-linux-gnu-" CACHE STRING "Cross toolchain prefix")
set(CMAKE_C_COMPILER ${KES_CROSS_PREFIX}gcc)
set(CMAKE_CXX_COMPILER ${KES_CROSS_PREFIX}g++)

# Debian multiarch: arm64 libraries live in /usr/lib/aarch64-linux-gnu beside the amd64 ones.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)   # build tools (flatc, ...) run on the build machine
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# pkg-config must see only the arm64 .pc files, never the host's.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# The emulated board: ctest runs every test binary under qemu user mode through board/emulate.sh,
# with the CPU model of KES_EMULATED_BOARD (board/profiles/*.env).
set(KES_EMULATED_BOARD "generic" CACHE STRING "board/profiles/<name>.env used by ctest under qemu")
set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_CURRENT_LIST_DIR}/../board/emulate.sh --board ${KES_EMULATED_BOARD})

set(KES_TOOLCHAIN_CPU_FLAGS "" CACHE STRING "CPU flags added by board toolchain files")
set(CMAKE_C_FLAGS_INIT "${KES_TOOLCHAIN_CPU_FLAGS}")
set(CMAKE_CXX_FLAGS_INIT "${KES_TOOLCHAIN_CPU_FLAGS}")
