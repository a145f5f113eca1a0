/*
 * The Thallium layer's input archive over hostile bytes: the input is
 * decoded as several argument lists an RPC handler might declare (STL
 * containers, nested user types, enums). Decoding may fail, but only by
 * throwing tl::exception (turned into an error code here): never a crash,
 * an out-of-bounds read or an allocation larger than a bounded multiple of
 * the input.
 */
#include <cstddef>
#include <cstdint>
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

namespace
{

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
    (void) tl::detail::proc_object_cb(proc, &in);
    hg_proc_free(proc);
}

} // namespace

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
