/*
 * main() for building a fuzz target without libFuzzer (gcc, or any CI):
 * replay inputs, then run a bounded number of mutated ones.
 */
#include <qs_fuzz.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
main(int argc, char **argv)
{
    return qs_fuzz_driver_main(argc, argv, LLVMFuzzerTestOneInput);
}
