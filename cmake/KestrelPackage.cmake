# cmake --build <dir> --target package (CPack): kestrel-<version>-<arch>.tar.gz holding the install tree
# (cmake/KestrelInstall.cmake) under one top directory of the same name. <arch> is the target's
# (x86_64, aarch64), not the build machine's. Relocatable: kestrel.pc and KestrelConfig.cmake find their
# prefix from where they are unpacked. tests/consumer/check.sh --package builds an app against it.
set(kes_arch ${CMAKE_SYSTEM_PROCESSOR})
if(kes_arch MATCHES "^(AMD64|amd64|x64)$")
  set(kes_arch x86_64)
elseif(kes_arch MATCHES "^(arm64|ARM64)$")
  set(kes_arch aarch64)
endif()

set(CPACK_GENERATOR TGZ)
set(CPACK_PACKAGE_NAME kestrel)
set(CPACK_PACKAGE_VENDOR "Kestrel")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_SYSTEM_NAME ${kes_arch})
set(CPACK_PACKAGE_FILE_NAME kestrel-${PROJECT_VERSION}-${kes_arch})
set(CPACK_INCLUDE_TOPLEVEL_DIRECTORY ON)
set(CPACK_PACKAGE_CHECKSUM SHA256)  # kestrel-<version>-<arch>.tar.gz.sha256 beside the tarball
# Tools and the simulator are stripped (with the target's strip: aarch64-linux-gnu-strip when cross);
# install(TARGETS) never strips the static libraries, which keep their symbols for linking.
set(CPACK_STRIP_FILES ON)
set(CPACK_SOURCE_GENERATOR "")
include(CPack)
