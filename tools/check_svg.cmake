# ctest helper: run one fault scenario with its trace written out, render
# the trace with trace2svg, and check that the SVG is well-formed.
# Inputs: SCENARIO (test binary), TOOL (trace2svg), OUT (path prefix).
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env QS_SIM_TRACE_OUT=${OUT}.trace
          ${SCENARIO} crash_restart
  RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "scenario crash_restart failed (${rc})")
endif()
execute_process(COMMAND ${TOOL} ${OUT}.trace ${OUT}.svg RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "trace2svg failed (${rc})")
endif()
file(READ ${OUT}.svg svg)
foreach(needle "<svg" "</svg>" ">n0<" ">n1<" "CRASH" "RESTART" "crashed_peer")
  string(FIND "${svg}" "${needle}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${OUT}.svg lacks ${needle}")
  endif()
endforeach()
find_program(XMLLINT xmllint)
if(XMLLINT)
  execute_process(COMMAND ${XMLLINT} --noout ${OUT}.svg RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "xmllint rejects ${OUT}.svg")
  endif()
else()
  # Without xmllint: every element that opens must close. Count opening
  # tags that are not self-closing against closing tags.
  string(REGEX MATCHALL "<[a-zA-Z][^>]*[^/]>" opens "${svg}")
  string(REGEX MATCHALL "</[a-zA-Z]+>" closes "${svg}")
  string(REGEX MATCHALL "<\\?xml[^>]*>" decl "${svg}")
  list(LENGTH opens n_open)
  list(LENGTH closes n_close)
  list(LENGTH decl n_decl)
  math(EXPR n_open "${n_open} - ${n_decl}")
  if(NOT n_open EQUAL n_close)
    message(FATAL_ERROR "${OUT}.svg: ${n_open} opening tags, ${n_close} closing")
  endif()
endif()
message(STATUS "rendered ${OUT}.svg")
