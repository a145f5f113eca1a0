# The cases listed in tests/one_thread.txt: every program they run from
# this build keeps to one thread. They get the label "one_thread", which
# CI's ThreadSanitizer stage leaves out (.ci/run): in a process with one
# thread there is nothing to race, and the library's hot paths take no
# lock there (lib/util/qs_bias.h), so those runs only cost time.
#
# In a build without a sanitizer (CI's first stage among them) each listed
# case also runs with tests/one_thread/one_thread_shim.c preloaded, inside
# the fixture qs_one_thread: a program of the build that starts a thread
# is recorded, and the fixture's cleanup case one_thread_check fails,
# naming it. So a case cannot stay listed once it starts threads.
#
# Included before the test directories; the add_test wrapper of
# QsTestTimeouts.cmake defers qs_apply_one_thread to the end of the
# directory that adds the case.

set(QS_ONE_THREAD_FILE ${PROJECT_SOURCE_DIR}/tests/one_thread.txt)
set(QS_ONE_THREAD_DIR ${PROJECT_BINARY_DIR}/one-thread-records)
# The shim's file (tests/one_thread/CMakeLists.txt puts it there): the
# listed cases preload it and one_thread_selftest tries the same file, so
# a preload that would miss it fails the self-test.
set(QS_ONE_THREAD_SHIM
  ${PROJECT_BINARY_DIR}/tests/one_thread/${CMAKE_SHARED_LIBRARY_PREFIX}qs_one_thread_shim${CMAKE_SHARED_LIBRARY_SUFFIX})
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  ${QS_ONE_THREAD_FILE})
file(STRINGS ${QS_ONE_THREAD_FILE} qs_one_thread_lines
  REGEX "^[A-Za-z0-9_]+[ \t]*$")
foreach(line ${qs_one_thread_lines})
  string(STRIP "${line}" qs_name)
  set_property(GLOBAL PROPERTY QS_ONE_THREAD_${qs_name} TRUE)
endforeach()
if(QS_SANITIZE STREQUAL "" AND NOT QS_BUILD_FUZZ)
  set(QS_ONE_THREAD_CHECK ON)
else()
  set(QS_ONE_THREAD_CHECK OFF)
endif()

function(qs_apply_one_thread name)
  get_property(listed GLOBAL PROPERTY QS_ONE_THREAD_${name})
  if(NOT listed)
    return()
  endif()
  set_property(TEST ${name} APPEND PROPERTY LABELS one_thread)
  if(QS_ONE_THREAD_CHECK)
    set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT
      "LD_PRELOAD=${QS_ONE_THREAD_SHIM}"
      "QS_ONE_THREAD_LOG=${QS_ONE_THREAD_DIR}/${name}.log"
      "QS_ONE_THREAD_ROOT=${PROJECT_BINARY_DIR}")
    set_property(TEST ${name} APPEND PROPERTY FIXTURES_REQUIRED qs_one_thread)
  endif()
endfunction()
