# Install the names other projects' build systems look for.
#
# Always: quicksilver.pc and a CMake package "quicksilver" whose
# find_package(quicksilver) gives the imported target quicksilver::quicksilver.
#
# With QS_INSTALL_MERCURY_NAMES (default ON): the names of the libraries
# Quicksilver stands in for, all resolving to libquicksilver:
#   pkg-config: mercury.pc, na.pc, mercury_util.pc, margo.pc,
#               margo-hg-shim.pc, argobots.pc (abt.h)
#   CMake:      find_package(mercury) -> targets mercury, na, mercury_util
#               find_package(margo)   -> target margo
# Turn it OFF on systems that also have the real Mercury or Margo installed
# in the same prefix.
# (The option itself is declared in the top-level CMakeLists.txt, before
# the test directories, whose install checks depend on it.)

include(CMakePackageConfigHelpers)

# Versions of the APIs implemented (include/mercury_types.h, na_types.h).
set(QS_MERCURY_VERSION 2.4.1)
set(QS_NA_VERSION 6.0.0)
set(QS_MERCURY_UTIL_VERSION 4.0.0)
# Margo's version is the one include/margo-version.h states.
file(STRINGS ${PROJECT_SOURCE_DIR}/include/margo-version.h qs_margo_version_line
  REGEX "^#define MARGO_VERSION \"")
string(REGEX REPLACE ".*\"(.*)\".*" "\\1" QS_MARGO_VERSION "${qs_margo_version_line}")
set(QS_ARGOBOTS_VERSION 1.2)

# The .pc files find their prefix from where they are installed, so an
# install with `cmake --install --prefix DIR` works wherever DIR is.
set(QS_PC_REQUIRES "")
file(RELATIVE_PATH QS_PC_RELATIVE_PREFIX
  "/qs/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/qs")
set(qs_pc_files quicksilver)
configure_file(${PROJECT_SOURCE_DIR}/quicksilver.pc.in
  ${PROJECT_BINARY_DIR}/pkgconfig/quicksilver.pc @ONLY)

set(qs_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake)
install(EXPORT QuicksilverTargets NAMESPACE quicksilver::
  FILE quicksilver-targets.cmake DESTINATION ${qs_cmake_dir}/quicksilver)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/quicksilver-config.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/quicksilver-config.cmake
  INSTALL_DESTINATION ${qs_cmake_dir}/quicksilver)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/quicksilver-config-version.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/quicksilver-config.cmake
  ${PROJECT_BINARY_DIR}/cmake/quicksilver-config-version.cmake
  DESTINATION ${qs_cmake_dir}/quicksilver)

if(QS_INSTALL_MERCURY_NAMES)
  # name;version;description for each stand-in pkg-config file.
  set(qs_alias_mercury ${QS_MERCURY_VERSION} "Mercury RPC API (HG, HG_Bulk, proc)")
  set(qs_alias_na ${QS_NA_VERSION} "Mercury network abstraction (NA) API")
  set(qs_alias_mercury_util ${QS_MERCURY_UTIL_VERSION} "Mercury utilities (request helper)")
  set(qs_alias_margo ${QS_MARGO_VERSION} "Margo API over Mercury")
  set(qs_alias_margo-hg-shim ${QS_MARGO_VERSION} "Margo's HG shim (margo-hg-shim.h)")
  set(qs_alias_argobots ${QS_ARGOBOTS_VERSION} "Argobots API on POSIX threads (abt.h)")
  foreach(name mercury na mercury_util margo margo-hg-shim argobots)
    list(GET qs_alias_${name} 0 QS_ALIAS_VERSION)
    list(GET qs_alias_${name} 1 QS_ALIAS_DESCRIPTION)
    set(QS_ALIAS_NAME ${name})
    # Margo's own margo.pc requires json-c, and programs that read
    # margo_get_config()'s JSON with json-c link it through margo alone
    # (mochi-margo's tests/unit-tests/margo-config.c does).
    if(name STREQUAL "margo")
      set(QS_ALIAS_REQUIRES "quicksilver json-c")
    else()
      set(QS_ALIAS_REQUIRES "quicksilver")
    endif()
    configure_file(${CMAKE_CURRENT_LIST_DIR}/alias.pc.in
      ${PROJECT_BINARY_DIR}/pkgconfig/${name}.pc @ONLY)
    list(APPEND qs_pc_files ${name})
  endforeach()

  # find_package(mercury) and find_package(margo): version and config files.
  foreach(pkg mercury margo)
    string(TOUPPER ${pkg} PKGU)
    configure_file(${CMAKE_CURRENT_LIST_DIR}/${pkg}-config.cmake.in
      ${PROJECT_BINARY_DIR}/cmake/${pkg}-config.cmake @ONLY)
    write_basic_package_version_file(
      ${PROJECT_BINARY_DIR}/cmake/${pkg}-config-version.cmake
      VERSION ${QS_${PKGU}_VERSION} COMPATIBILITY SameMajorVersion)
    install(FILES ${PROJECT_BINARY_DIR}/cmake/${pkg}-config.cmake
      ${PROJECT_BINARY_DIR}/cmake/${pkg}-config-version.cmake
      DESTINATION ${qs_cmake_dir}/${pkg})
  endforeach()
endif()

foreach(pc ${qs_pc_files})
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/${pc}.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
