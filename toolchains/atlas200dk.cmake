# Atlas 200 DK (Ascend 310): 8 Cortex-A55-class application cores (BOARD-RULES §CPU, UNCONFIRMED count).
# Cortex-A55 implements armv8.2-a with dotprod and fp16, so -mcpu=cortex-a55 is safe on this board
# (and only on boards with such cores).
set(KES_TOOLCHAIN_CPU_FLAGS "-mcpu=cortex-a55" CACHE STRING "" FORCE)
set(KES_DEFAULT_BOARD "310" CACHE STRING "Board profile active at start-up" FORCE)
set(KES_EMULATED_BOARD "atlas200dk" CACHE STRING "" FORCE)
include(${CMAKE_CURRENT_LIST_DIR}/aarch64-linux-gnu.cmake)
