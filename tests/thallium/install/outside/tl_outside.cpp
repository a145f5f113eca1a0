// A program written against Thallium's API, built from an installed tree
// only (find_package(thallium) or pkg-config thallium): a provider with
// std::vector<std::string> and std::map<std::string, double> arguments,
// called over the simulated fabric in one process.
#include <iostream>
#include <map>
#include <string>
#include <thallium.hpp>
#include <thallium/serialization/stl/map.hpp>
#include <thallium/serialization/stl/string.hpp>
#include <thallium/serialization/stl/vector.hpp>
#include <vector>

namespace tl = thallium;

class weights : public tl::provider<weights>
{
  public:
    weights(tl::engine &e, uint16_t id) : tl::provider<weights>(e, id)
    {
        define("total", &weights::total);
    }
    double total(const std::vector<std::string> &keys,
                 const std::map<std::string, double> &w) const
    {
        double t = 0;
        for (auto &k : keys)
            t += w.count(k) ? w.at(k) : 0.0;
        return t;
    }
};

int
main()
{
    tl::engine server("sim://tl-outside", THALLIUM_SERVER_MODE);
    weights prov(server, 4);
    double t = 0;
    {
        tl::engine client("sim", THALLIUM_CLIENT_MODE);
        tl::provider_handle ph(client.lookup("sim://tl-outside"), 4);
        t = client.define("total").on(ph)(
            std::vector<std::string>{"a", "c"},
            std::map<std::string, double>{{"a", 1.5}, {"b", 9}, {"c", 2.25}});
    }
    server.finalize();
    if (t != 3.75) {
        std::cerr << "tl_outside: got " << t << std::endl;
        return 1;
    }
    std::cout << "tl_outside: OK" << std::endl;
    return 0;
}
