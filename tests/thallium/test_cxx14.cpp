/*
 * Built with -std=c++14 (see CMakeLists.txt): the layer's headers, with
 * every STL serialization header that does not need C++17, compile there,
 * and a typed RPC with a provider runs on sim.
 */
#include <cstdio>

#include <thallium.hpp>
#include <thallium/serialization/stl/array.hpp>
#include <thallium/serialization/stl/complex.hpp>
#include <thallium/serialization/stl/deque.hpp>
#include <thallium/serialization/stl/forward_list.hpp>
#include <thallium/serialization/stl/list.hpp>
#include <thallium/serialization/stl/map.hpp>
#include <thallium/serialization/stl/multimap.hpp>
#include <thallium/serialization/stl/multiset.hpp>
#include <thallium/serialization/stl/pair.hpp>
#include <thallium/serialization/stl/set.hpp>
#include <thallium/serialization/stl/string.hpp>
#include <thallium/serialization/stl/tuple.hpp>
#include <thallium/serialization/stl/unordered_map.hpp>
#include <thallium/serialization/stl/unordered_multimap.hpp>
#include <thallium/serialization/stl/unordered_multiset.hpp>
#include <thallium/serialization/stl/unordered_set.hpp>
#include <thallium/serialization/stl/vector.hpp>

namespace tl = thallium;

#if __cplusplus != 201402L
#error "this test must be compiled as C++14"
#endif

class adder : public tl::provider<adder>
{
  public:
    adder(tl::engine &e) : tl::provider<adder>(e, 3)
    {
        define("add", &adder::add);
    }

  private:
    int add(const std::vector<int> &v)
    {
        int s = 0;
        for (int x : v)
            s += x;
        return s;
    }
};

int
main()
{
    tl::engine server("sim://cxx14", THALLIUM_SERVER_MODE);
    int total = 0;
    {
        adder a(server);
        tl::engine client("sim", THALLIUM_CLIENT_MODE);
        tl::provider_handle ph(client.lookup("sim://cxx14"), 3);
        total = client.define("add").on(ph)(std::vector<int>{1, 2, 3, 4});
    }
    server.finalize();
    if (total != 10) {
        std::fprintf(stderr, "test_cxx14: got %d, want 10\n", total);
        return 1;
    }
    std::printf("test_cxx14: OK (C++ %ld)\n", (long) __cplusplus);
    return 0;
}
