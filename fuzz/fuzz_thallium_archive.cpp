/*
 * The Thallium layer's input archive over hostile bytes: the input is
 * decoded as several argument lists an RPC handler might declare (STL
 * containers, nested user types, enums). Decoding may fail, but only by
 * throwing tl::exception (turned into an error code here): never a crash,
 * an out-of-bounds read or an allocation larger than a bounded multiple of
 * the input.
 *
 * The replay fails unless some argument list decodes with more than its
 * first count or length read, and some is refused after a count or length
 * was read (a count or length larger than what follows, a bad value
 * further in), not merely for lacking its first 8 bytes.
 */
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <thallium.hpp>
#include <thallium/serialization/stl/map.hpp>
#include <thallium/serialization/stl/pair.hpp>
#include <thallium/serialization/stl/set.hpp>
#include <thallium/serialization/stl/string.hpp>
#include <thallium/serialization/stl/tuple.hpp>
#include <thallium/serialization/stl/vector.hpp>

namespace tl = thallium;

/* The fuzz_replay_check() hook of replay.c. */
extern "C" const char *fuzz_replay_check(void);

namespace
{

unsigned long lists_decoded, lists_refused_deep;

struct item {
    std::string name;
    std::vector<double> values;
    std::map<std::string, std::int32_t> tags;
    template <typename A> void serialize(A &ar)
    {
        ar(name, values, tags);
    }
};

enum class kind : std::uint16_t { a, b };

template <typename... T>
void
decode_as(const std::uint8_t *data, std::size_t size)
{
    hg_proc_t proc;
    if (hg_proc_create_set(nullptr, const_cast<std::uint8_t *>(data),
                           (hg_size_t) size, HG_DECODE, HG_NOHASH,
                           &proc) != HG_SUCCESS)
        return;
    tl::detail::input_proc<T...> in(MARGO_INSTANCE_NULL);
    hg_return_t ret = tl::detail::proc_object_cb(proc, &in);
    /* Every list starts with a u64 count or length. */
    if (hg_proc_get_size_used(proc) > 8 && ret == HG_SUCCESS)
        lists_decoded++;
    else if (hg_proc_get_size_used(proc) >= 8 && ret != HG_SUCCESS)
        lists_refused_deep++;
    hg_proc_free(proc);
}

} // namespace

extern "C" const char *
fuzz_replay_check(void)
{
    if (std::getenv("QS_FUZZ_TALLY") != nullptr)
        std::fprintf(stderr,
                     "argument lists: %lu decoded, %lu refused after "
                     "a count\n",
                     lists_decoded, lists_refused_deep);
    if (lists_decoded == 0)
        return "no argument list decoded past its first count";
    if (lists_refused_deep == 0)
        return "no argument list was refused after its first count";
    return nullptr;
}

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    /* hg_proc_create_set refuses a NULL buffer with a size; an empty
     * input is a valid case of its own. */
    static const std::uint8_t empty = 0;
    if (size == 0)
        data = &empty;
    decode_as<std::string, std::vector<std::string>>(data, size);
    decode_as<std::map<std::string, double>>(data, size);
    decode_as<std::vector<item>, kind>(data, size);
    decode_as<std::tuple<int, std::set<std::string>>,
              std::vector<std::pair<std::uint64_t, std::string>>>(data, size);
    decode_as<std::vector<std::vector<std::uint64_t>>>(data, size);
    return 0;
}
