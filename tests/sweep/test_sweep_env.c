/*
 * What qs-sweep relies on in the library: QS_NA_INFO moves a program onto
 * the simulated fabric, QS_SIM_TRACE_OUT writes every world's trace as it
 * goes, and na_sim_fault_draw() draws valid profiles from seeds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <na.h>
#include <na_sim.h>

static void
test_fault_draw(void **state)
{
    char a[512], b[512], err[160];
    unsigned empty = 0, partitions = 0, crashes = 0;

    (void) state;
    for (uint64_t seed = 1; seed <= 2000; seed++) {
        assert_int_equal(na_sim_fault_draw(seed, 3, a, sizeof(a)), NA_SUCCESS);
        assert_int_equal(na_sim_fault_draw(seed, 3, b, sizeof(b)), NA_SUCCESS);
        assert_string_equal(a, b);
        if (na_sim_fault_validate(a, err, sizeof(err)) != NA_SUCCESS)
            fail_msg("seed %llu: \"%s\": %s", (unsigned long long) seed, a,
                     err);
        assert_null(strstr(a, "corrupt"));
        empty += a[0] == '\0';
        partitions += strstr(a, "partition:") != NULL;
        crashes += strstr(a, "crash@") != NULL;
        if (strstr(a, "crash@") != NULL)
            assert_non_null(strstr(a, "restart@"));
    }
    /* A quarter without faults, and every kind of event drawn. */
    assert_in_range(empty, 400, 600);
    assert_true(partitions > 100);
    assert_true(crashes > 100);
    assert_int_equal(na_sim_fault_draw(2, 3, a, sizeof(a)), NA_SUCCESS);
    assert_int_equal(na_sim_fault_draw(5, 3, b, sizeof(b)), NA_SUCCESS);
    assert_string_not_equal(a, b);
    /* Bad arguments and a short buffer. */
    assert_int_equal(na_sim_fault_draw(1, 2, NULL, 10), NA_INVALID_ARG);
    assert_int_equal(na_sim_fault_draw(1, 0, a, sizeof(a)), NA_INVALID_ARG);
    assert_int_equal(na_sim_fault_draw(1, 2, a, 0), NA_INVALID_ARG);
    for (uint64_t seed = 1;; seed++) {
        assert_int_equal(na_sim_fault_draw(seed, 2, a, sizeof(a)), NA_SUCCESS);
        if (strlen(a) > 20) {
            assert_int_equal(na_sim_fault_draw(seed, 2, b, 10), NA_OVERFLOW);
            assert_string_equal(b, "");
            break;
        }
    }
}

static size_t
count_lines(const char *path, const char *prefix)
{
    char line[512];
    size_t n = 0;
    FILE *f = fopen(path, "r");

    assert_non_null(f);
    while (fgets(line, sizeof(line), f) != NULL)
        n += strncmp(line, prefix, strlen(prefix)) == 0;
    fclose(f);
    return n;
}

static void
test_trace_out(void **state)
{
    char path[] = "/tmp/qs_trace_out_XXXXXX";
    int fd = mkstemp(path);
    na_class_t *cls;

    (void) state;
    assert_true(fd >= 0);
    close(fd);
    setenv(NA_SIM_TRACE_OUT_ENV, path, 1);
    setenv(NA_SIM_SEED_ENV, "77", 1);
    /* Two worlds one after the other: both traces, in order. */
    for (int i = 0; i < 2; i++) {
        cls = NA_Initialize("sim://traced", true);
        assert_non_null(cls);
        /* Written as it goes: the line is there before the world ends. */
        assert_int_equal(count_lines(path, "0 1 node_up traced"),
                         (size_t) i + 1);
        assert_int_equal(NA_Finalize(cls), NA_SUCCESS);
        assert_false(na_sim_world_exists());
    }
    unsetenv(NA_SIM_TRACE_OUT_ENV);
    unsetenv(NA_SIM_SEED_ENV);
    assert_int_equal(
        count_lines(path, "# quicksilver sim trace, QS_SIM_SEED=77"), 2);
    assert_int_equal(count_lines(path, "# 2 lines, hash 0x"), 2);
    unlink(path);
}

static void
test_na_info_override(void **state)
{
    na_class_t *cls;
    na_addr_t self;
    char name[128];
    size_t size = sizeof(name);

    (void) state;
    setenv(NA_INFO_ENV, "sim", 1);
    /* Another protocol is replaced: a "tcp" program runs on sim. */
    cls = NA_Initialize("ofi+tcp://127.0.0.1:0", true);
    assert_non_null(cls);
    assert_string_equal(NA_Get_class_name(cls), "sim");
    assert_int_equal(NA_Finalize(cls), NA_SUCCESS);
    /* The same protocol is left alone: the node keeps its name. */
    cls = NA_Initialize("sim://keepme", true);
    assert_non_null(cls);
    assert_int_equal(NA_Addr_self(cls, &self), NA_SUCCESS);
    assert_int_equal(NA_Addr_to_string(cls, name, &size, self), NA_SUCCESS);
    assert_string_equal(name, "sim://keepme");
    NA_Addr_free(cls, self);
    assert_int_equal(NA_Finalize(cls), NA_SUCCESS);
    /* A malformed override is reported and ignored. */
    setenv(NA_INFO_ENV, "no spaces allowed://", 1);
    cls = NA_Initialize("sim://again", true);
    assert_non_null(cls);
    assert_int_equal(NA_Finalize(cls), NA_SUCCESS);
    unsetenv(NA_INFO_ENV);
    /* Without it, nothing changes: tcp is not sim. */
    cls = NA_Initialize("tcp", false);
    if (cls != NULL) {
        assert_string_not_equal(NA_Get_class_name(cls), "sim");
        NA_Finalize(cls);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fault_draw),
        cmocka_unit_test(test_trace_out),
        cmocka_unit_test(test_na_info_override),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
