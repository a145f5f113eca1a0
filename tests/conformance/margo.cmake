# The Margo layer's tests (tests/conformance/test_margo.c), included by the
# conformance CMakeLists.txt. On the simulated fabric by default; with the
# ofi plugin built, the same program also runs over ofi+tcp on loopback
# (QS_TEST_INFO), where the virtual-time and replay checks do not apply.
qs_add_test(test_margo SOURCES test_margo.c LABELS conformance margo sim)
if(QS_PLUGIN_OFI_ENABLED)
  add_test(NAME test_margo_ofi_tcp COMMAND test_margo)
  set_tests_properties(test_margo_ofi_tcp PROPERTIES
    LABELS "conformance;margo;ofi"
    ENVIRONMENT "QS_TEST_INFO=ofi+tcp://127.0.0.1:0"
    TIMEOUT 300)
endif()
