# Orange Pi AIpro (Ascend 310B): same SoC and CPU as the Atlas 200I DK A2; see atlas200idka2.cmake.
# Which Armv8.x extensions TaiShan V200M has is UNCONFIRMED (docs/BOARD-RULES.md §CPU), so this file only
# tunes scheduling (-mtune) and keeps the armv8-a ISA baseline; dotprod/fp16 kernels are chosen at
# run time from HWCAP (kes_cpu_features) instead of being assumed at compile time.
set(KES_TOOLCHAIN_CPU_FLAGS "-march=armv8-a -mtune=cortex-a76" CACHE STRING "" FORCE)
set(KES_DEFAULT_BOARD "310B" CACHE STRING "Board profile active at start-up" FORCE)
set(KES_EMULATED_BOARD "atlas200idka2" CACHE STRING "" FORCE)
include(${CMAKE_CURRENT_LIST_DIR}/aarch64-linux-gnu.cmake)
