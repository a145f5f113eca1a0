# Environment every ctest case starts with, before its own ENVIRONMENT
# (a case's own setting wins: these entries come first):
#  - FI_TCP_IFACE=lo: a plain "tcp" listens and is named on the loopback
#    interface, so no case sends to a host address by accident (tests send
#    only to loopback or to a network namespace they made);
#  - QS_OFI_TCP=libfabric on the cases labelled "ofi": there, every TCP
#    spelling is libfabric's tcp provider, the explicit opt-in of
#    docs/architecture.md ("Transport names"), so the ofi plugin's suite
#    keeps running while the native plugin serves TCP everywhere else.
# It also adds the label "ofi_repeat" to the cases labelled "ofi" that
# repeat an upper layer's suite over libfabric (every "ofi" case that is
# not also "na", "unit" or "faults"): CI's sanitizer stages leave those
# out and keep the ofi plugin's own tests, its conformance at the NA
# layer and its fault scenarios (.ci/run).
# Called for each case once its directory is processed (the add_test
# wrapper of QsTestTimeouts.cmake defers it).
function(qs_apply_test_env name)
  get_test_property(${name} LABELS labels)
  get_test_property(${name} ENVIRONMENT env)
  set(pre "FI_TCP_IFACE=lo")
  if(labels AND "ofi" IN_LIST labels)
    list(APPEND pre "QS_OFI_TCP=libfabric")
    if(NOT "na" IN_LIST labels AND NOT "unit" IN_LIST labels
       AND NOT "faults" IN_LIST labels)
      set_property(TEST ${name} APPEND PROPERTY LABELS ofi_repeat)
    endif()
  endif()
  if(env)
    list(APPEND pre ${env})
  endif()
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${pre}")
endfunction()
