# Per-test time limits from tests/timeouts.txt.
#
# A test that hangs (a planted bug, a lost wake-up) should cost a few times
# its normal duration, not the 300 s or 600 s its directory declares.
# tests/timeouts.txt gives each ctest case a limit in seconds, set from
# its measured duration on a loaded machine (see the file's header); the
# limit is multiplied by QS_TEST_TIMEOUT_SCALE, which defaults to the
# slowdown of the build: 2 for coverage (-O0), 3 for AddressSanitizer, 8
# for ThreadSanitizer. A case the file does not list keeps the TIMEOUT its
# own CMakeLists.txt gives it.
#
# Included before the test directories: add_test is wrapped so that, once
# the directory that adds a test has been processed (and so after its own
# set_tests_properties), the listed limit replaces the declared one.

set(QS_TEST_TIMEOUT_SCALE "" CACHE STRING
  "Multiplier of the limits in tests/timeouts.txt (empty: by build type)")
if(QS_TEST_TIMEOUT_SCALE STREQUAL "")
  if(QS_SANITIZE STREQUAL "thread")
    set(QS_TIMEOUT_SCALE 8)
  elseif(QS_SANITIZE STREQUAL "address" OR QS_BUILD_FUZZ)
    # A fuzz build instruments the library with ASan and UBSan too.
    set(QS_TIMEOUT_SCALE 3)
  elseif(QS_COVERAGE)
    set(QS_TIMEOUT_SCALE 2)
  else()
    set(QS_TIMEOUT_SCALE 1)
  endif()
else()
  set(QS_TIMEOUT_SCALE ${QS_TEST_TIMEOUT_SCALE})
endif()

include(${CMAKE_CURRENT_LIST_DIR}/QsTestEnv.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/QsOneThread.cmake)

set(QS_TIMEOUT_FILE ${PROJECT_SOURCE_DIR}/tests/timeouts.txt)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  ${QS_TIMEOUT_FILE})
file(STRINGS ${QS_TIMEOUT_FILE} qs_timeout_lines REGEX "^[A-Za-z0-9_]+ +[0-9]+")
foreach(line ${qs_timeout_lines})
  string(REGEX REPLACE "^([A-Za-z0-9_]+) +([0-9]+).*" "\\1;\\2" pair "${line}")
  list(GET pair 0 qs_name)
  list(GET pair 1 qs_secs)
  math(EXPR qs_secs "${qs_secs} * ${QS_TIMEOUT_SCALE}")
  set_property(GLOBAL PROPERTY QS_TIMEOUT_${qs_name} ${qs_secs})
endforeach()

function(qs_apply_test_timeout name)
  get_property(secs GLOBAL PROPERTY QS_TIMEOUT_${name})
  if(secs)
    set_tests_properties(${name} PROPERTIES TIMEOUT ${secs})
  endif()
endfunction()

function(add_test)
  _add_test(${ARGV})
  if(ARGV0 STREQUAL "NAME")
    set(name ${ARGV1})
  else()
    set(name ${ARGV0})
  endif()
  # A deferred call's arguments are expanded when it runs: pass the name
  # as a literal.
  cmake_language(EVAL CODE
    "cmake_language(DEFER CALL qs_apply_test_timeout [[${name}]])
     cmake_language(DEFER CALL qs_apply_test_env [[${name}]])
     cmake_language(DEFER CALL qs_apply_one_thread [[${name}]])")
  # And its verdict rules (cmake/QsTestVerdict.cmake).
  cmake_language(EVAL CODE
    "cmake_language(DEFER CALL qs_apply_test_verdict [[${name}]])")
endfunction()
