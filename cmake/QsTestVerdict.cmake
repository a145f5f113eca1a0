# How every ctest case reaches its verdict (docs/conformance.md, "Verdicts").
#
# A case passes only if (a) its command exits 0, (b) its output carries no
# AddressSanitizer, LeakSanitizer, UndefinedBehaviorSanitizer or
# ThreadSanitizer report and (c) for a case added with qs_add_expect_test,
# its output has the expected line. Exit status 77 is a skip
# (SKIP_RETURN_CODE), and the case prints why.
#
# PASS_REGULAR_EXPRESSION is refused at configure time: with it, ctest
# ignores the exit status, so a case whose OK line is out passes after a
# crash, a ThreadSanitizer exit (66) or a LeakSanitizer report. A case that
# must print a line says so with qs_add_expect_test, whose wrapper
# (tests/expect.sh) checks the exit status and the line both.
#
# Included before the test directories; QsTestTimeouts.cmake's add_test
# calls qs_apply_test_verdict once the directory that added the case is
# processed (after its own set_tests_properties).

# The sanitizer runtimes make a report fatal, whichever build runs the
# case: the first report ends the process with a non-zero status. These
# come first in each variable, so a case's own settings (in its
# ENVIRONMENT, or a script's `X_OPTIONS=${X_OPTIONS:+$X_OPTIONS:}...`)
# override them. ENVIRONMENT replaces what the calling shell exported:
# the test definitions decide, not the CI shell.
set(QS_SANITIZER_ENV
  "ASAN_OPTIONS=halt_on_error=1:abort_on_error=0:detect_leaks=1"
  "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1"
  "TSAN_OPTIONS=halt_on_error=1:exitcode=66"
  # libfabric's own leaks (tests/lsan.supp says which).
  "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/lsan.supp")

# Output that fails a case whatever its exit status (a report printed by
# a child process a script did not check, for one).
set(QS_SANITIZER_REPORT_REGEX
  "(ERROR|WARNING|FATAL): (Address|Leak|Thread|UndefinedBehavior)Sanitizer"
  "SUMMARY: (Address|Leak|Thread|UndefinedBehavior)Sanitizer"
  ": runtime error: ")

set(QS_EXPECT_WRAPPER ${PROJECT_SOURCE_DIR}/tests/expect.sh)

# qs_add_expect_test(NAME name EXPECT regex COMMAND cmd [arg...])
# A ctest case that passes only if cmd exits 0 and prints a line matching
# regex (an extended regular expression, grep -E); cmd's exit status 77
# is passed through as a skip. A cmd that names an executable target runs
# that target's file, as with add_test.
function(qs_add_expect_test)
  cmake_parse_arguments(E "" "NAME;EXPECT" "COMMAND" ${ARGN})
  if(NOT E_NAME OR NOT E_EXPECT OR NOT E_COMMAND)
    message(FATAL_ERROR "qs_add_expect_test: NAME, EXPECT and COMMAND are required")
  endif()
  list(POP_FRONT E_COMMAND cmd)
  if(TARGET ${cmd})
    set(cmd $<TARGET_FILE:${cmd}>)
  endif()
  add_test(NAME ${E_NAME}
    COMMAND ${QS_EXPECT_WRAPPER} ${E_EXPECT} ${cmd} ${E_COMMAND})
endfunction()

# qs_add_valgrind_test(NAME name [EXPECT regex] COMMAND arg...)
# A ctest case that runs `valgrind -q --error-exitcode=99 arg...` (through
# qs_add_expect_test when EXPECT is given), so that any error the tool
# reports fails it, or, where valgrind is not installed, a case that skips
# and says so.
function(qs_add_valgrind_test)
  cmake_parse_arguments(V "" "NAME;EXPECT" "COMMAND" ${ARGN})
  find_program(QS_VALGRIND valgrind)
  if(NOT QS_VALGRIND)
    add_test(NAME ${V_NAME} COMMAND sh -c
      "echo 'valgrind is not installed (scripts/install-deps.sh installs it)' && exit 77")
  elseif(V_EXPECT)
    qs_add_expect_test(NAME ${V_NAME} EXPECT "${V_EXPECT}"
      COMMAND ${QS_VALGRIND} -q --error-exitcode=99 ${V_COMMAND})
  else()
    add_test(NAME ${V_NAME}
      COMMAND ${QS_VALGRIND} -q --error-exitcode=99 ${V_COMMAND})
  endif()
endfunction()

function(qs_apply_test_verdict name)
  get_test_property(${name} PASS_REGULAR_EXPRESSION pass_re)
  if(pass_re)
    message(FATAL_ERROR "ctest case ${name} sets PASS_REGULAR_EXPRESSION, "
      "which makes ctest ignore its exit status (and so sanitizer reports "
      "and crashes after the line); use qs_add_expect_test "
      "(cmake/QsTestVerdict.cmake) instead")
  endif()
  get_test_property(${name} SKIP_RETURN_CODE skip)
  if(NOT skip)
    set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77)
  endif()
  set_property(TEST ${name} APPEND PROPERTY FAIL_REGULAR_EXPRESSION
    ${QS_SANITIZER_REPORT_REGEX})
  get_test_property(${name} ENVIRONMENT env)
  if(NOT env)
    set(env "")
  endif()
  foreach(entry ${QS_SANITIZER_ENV})
    string(REGEX MATCH "^[A-Z_]+" var "${entry}")
    string(LENGTH "${var}=" plen)
    string(SUBSTRING "${entry}" ${plen} -1 defaults)
    set(found FALSE)
    set(out "")
    foreach(e ${env})
      if(e MATCHES "^${var}=(.*)$")
        # The case's own options come after the defaults, and win.
        list(APPEND out "${var}=${defaults}:${CMAKE_MATCH_1}")
        set(found TRUE)
      else()
        list(APPEND out "${e}")
      endif()
    endforeach()
    if(NOT found)
      list(APPEND out "${entry}")
    endif()
    set(env "${out}")
  endforeach()
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${env}")
endfunction()
