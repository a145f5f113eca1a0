/*
 * AddressSanitizer's defaults for the libFuzzer binaries (not the replay
 * programs), linked into each of them by fuzz/CMakeLists.txt.
 *
 * ASan keeps freed blocks in a quarantine, 256 MB by default, so that a
 * use after free hits poisoned memory. A fuzzer frees millions of blocks,
 * so the quarantine fills, and a 30 s run of fuzz_sm_auto grew from 118 to
 * 580 MB of RSS while the library's own memory stayed flat (124 MB with
 * the quarantine off; a replay of the corpus stays at 75 MB). libFuzzer
 * drains it only past half of -rss_limit_mb (1 GB by default). That hid
 * the one thing the fuzzer's "rss:" column could show us: a decoder that
 * keeps something for each distinct input, as an address cache or
 * libfabric's address vector would if they never evicted.
 *
 * 16 MB still holds the blocks of tens of thousands of runs, many more
 * than a use after free in these decoders needs to be caught (a decoder's
 * objects live within one run). ASAN_OPTIONS in the environment still
 * overrides this.
 */
const char *__asan_default_options(void);

const char *
__asan_default_options(void)
{
    return "quarantine_size_mb=16";
}
