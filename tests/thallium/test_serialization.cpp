/*
 * Serialization: every STL header of thallium/serialization/stl, user
 * types (member serialize, free serialize, split load/save, enums, nested),
 * round-tripped both through a bare hg_proc and as RPC arguments and
 * responses; hostile bytes (counts larger than the message, truncation)
 * give tl::exception, never a crash or a huge allocation.
 */
#include "tl_test.hpp"

#include <cstdint>

#include <thallium/serialization/stl/array.hpp>
#include <thallium/serialization/stl/complex.hpp>
#include <thallium/serialization/stl/deque.hpp>
#include <thallium/serialization/stl/forward_list.hpp>
#include <thallium/serialization/stl/list.hpp>
#include <thallium/serialization/stl/map.hpp>
#include <thallium/serialization/stl/multimap.hpp>
#include <thallium/serialization/stl/multiset.hpp>
#include <thallium/serialization/stl/optional.hpp>
#include <thallium/serialization/stl/pair.hpp>
#include <thallium/serialization/stl/set.hpp>
#include <thallium/serialization/stl/string.hpp>
#include <thallium/serialization/stl/tuple.hpp>
#include <thallium/serialization/stl/unordered_map.hpp>
#include <thallium/serialization/stl/unordered_set.hpp>
#include <thallium/serialization/stl/vector.hpp>

struct point {
    double x = 0, y = 0;
    template <typename A> void serialize(A &ar)
    {
        ar &x;
        ar &y;
    }
    bool operator==(const point &o) const
    {
        return x == o.x && y == o.y;
    }
};

enum class color : std::uint8_t { red = 1, green = 2, blue = 3 };

struct record {
    std::string name;
    std::vector<point> pts;
    color c = color::red;
    std::int64_t id = 0;
    bool operator==(const record &o) const
    {
        return name == o.name && pts == o.pts && c == o.c && id == o.id;
    }
};
/* A free serialize function. */
template <typename A>
void
serialize(A &ar, record &r)
{
    ar(r.name, r.pts, r.c, r.id);
}

/* Split save / load. */
class split
{
  public:
    split() = default;
    split(int a, std::string s) : m_a(a), m_s(std::move(s))
    {
    }
    template <typename A> void save(A &ar) const
    {
        ar(m_a, m_s);
    }
    template <typename A> void load(A &ar)
    {
        ar(m_a, m_s);
        m_loaded = true;
    }
    bool operator==(const split &o) const
    {
        return m_a == o.m_a && m_s == o.m_s;
    }
    bool m_loaded = false;

  private:
    int m_a = 0;
    std::string m_s;
};

/* Bytes written and read in place through save_ptr / restore_ptr. */
struct in_place {
    std::string letters;
    template <typename A> void save(A &ar) const
    {
        char *p = static_cast<char *>(ar.save_ptr(26));
        for (int i = 0; i < 26; i++)
            p[i] = letters.size() == 26 ? letters[(size_t) i] : '?';
        ar.restore_ptr(p, 26);
    }
    template <typename A> void load(A &ar)
    {
        const char *p = static_cast<const char *>(ar.save_ptr(26));
        letters.assign(p, 26);
        ar.restore_ptr(const_cast<char *>(p), 26);
    }
    bool operator==(const in_place &o) const
    {
        return letters == o.letters;
    }
};

/* A type that needs a serialization context: a scale (by reference, and
 * bumped on every save to show it is the caller's variable) and an
 * offset. */
struct scaled {
    double v = 0;
};
template <typename A>
void
save(A &ar, const scaled &s)
{
    double &k = std::get<0>(ar.get_context());
    int off = std::get<1>(ar.get_context());
    double w = s.v * k + off;
    ar(w);
    k += 1;
}
template <typename A>
void
load(A &ar, scaled &s)
{
    double k = std::get<0>(ar.get_context());
    int off = std::get<1>(ar.get_context());
    double w = 0;
    ar(w);
    s.v = (w - off) / k;
}

/* Encode `v` into a bare proc and decode it back. */
template <typename T>
static T
roundtrip(const T &v)
{
    char buf[256];
    hg_proc_t proc;
    CHECK(hg_proc_create_set(nullptr, buf, sizeof(buf), HG_ENCODE, HG_NOHASH,
                             &proc) == HG_SUCCESS);
    tl::detail::output_proc<T> out(MARGO_INSTANCE_NULL, v);
    CHECK(tl::detail::proc_object_cb(proc, &out) == HG_SUCCESS);
    hg_size_t used = hg_proc_get_size_used(proc);
    std::vector<char> bytes(used);
    const char *src =
        used > sizeof(buf)
            ? static_cast<const char *>(hg_proc_get_extra_buf(proc))
            : buf;
    std::memcpy(bytes.data(), src, used);
    hg_proc_free(proc);

    CHECK(hg_proc_create_set(nullptr, bytes.data(), used, HG_DECODE, HG_NOHASH,
                             &proc) == HG_SUCCESS);
    tl::detail::input_proc<T> in(MARGO_INSTANCE_NULL);
    hg_return_t ret = tl::detail::proc_object_cb(proc, &in);
    in.rethrow();
    CHECK(ret == HG_SUCCESS);
    CHECK_EQ(hg_proc_get_size_left(proc), 0u);
    hg_proc_free(proc);
    return std::get<0>(in.values());
}

/* Decode hostile bytes as T: must fail cleanly. */
template <typename T>
static void
decode_must_fail(const std::vector<unsigned char> &bytes)
{
    hg_proc_t proc;
    std::vector<unsigned char> b = bytes;
    CHECK(hg_proc_create_set(nullptr, b.empty() ? nullptr : b.data(), b.size(),
                             HG_DECODE, HG_NOHASH, &proc) == HG_SUCCESS);
    tl::detail::input_proc<T> in(MARGO_INSTANCE_NULL);
    hg_return_t ret = tl::detail::proc_object_cb(proc, &in);
    CHECK(ret != HG_SUCCESS);
    CHECK_THROWS(tl::exception, in.rethrow(), CHECK(e.code() != HG_SUCCESS));
    hg_proc_free(proc);
}

static std::vector<unsigned char>
le64(std::uint64_t v)
{
    std::vector<unsigned char> b(8);
    std::memcpy(b.data(), &v, 8);
    return b;
}

template <typename T>
static void
check_rt(const T &v)
{
    CHECK(roundtrip(v) == v);
}

static record
sample_record()
{
    record r;
    r.name = "rec";
    r.pts = {{1, 2}, {3.5, -4}};
    r.c = color::blue;
    r.id = -123456789012345LL;
    return r;
}

static void
local_checks()
{
    check_rt(std::string("hello"));
    check_rt(std::string());
    check_rt(std::string(5000, 'x')); /* past the proc's buffer */
    check_rt(std::vector<int>{1, -2, 3});
    check_rt(std::vector<std::string>{"a", "", "ccc"});
    check_rt(std::map<std::string, double>{{"a", 1.5}, {"b", -2}});
    /* cereal may reorder the values of equal keys: compare as sets. */
    auto mm = roundtrip(std::multimap<int, int>{{1, 2}, {1, 3}, {0, 1}});
    CHECK((std::multiset<std::pair<int, int>>(mm.begin(), mm.end())) ==
          (std::multiset<std::pair<int, int>>{{1, 2}, {1, 3}, {0, 1}}));
    check_rt(std::unordered_map<int, std::string>{{1, "x"}, {2, "y"}});
    check_rt(std::set<int>{3, 1, 2});
    check_rt(std::multiset<int>{1, 1, 2});
    check_rt(std::unordered_set<std::string>{"p", "q"});
    check_rt(std::pair<int, std::string>(4, "four"));
    check_rt(std::tuple<int, double, std::string>(1, 2.5, "t"));
    check_rt(std::list<int>{5, 6});
    check_rt(std::deque<char>{'a', 'b'});
    check_rt(std::array<int, 3>{{7, 8, 9}});
    check_rt(std::complex<double>(1.0, -1.0));
    check_rt(std::forward_list<int>{1, 2, 3});
    check_rt(std::optional<int>(5));
    check_rt(std::optional<int>());
    check_rt(color::green);
    check_rt(point{1.25, -8});
    check_rt(sample_record());
    check_rt(std::vector<record>{sample_record(), record()});
    split s = roundtrip(split(3, "three"));
    CHECK(s == split(3, "three"));
    CHECK(s.m_loaded);
    check_rt(in_place{"ABCDEFGHIJKLMNOPQRSTUVWXYZ"});
    check_rt(
        std::pair<in_place, int>(in_place{"abcdefghijklmnopqrstuvwxyz"}, -1));
    /* save_ptr past the end of a received message throws. */
    decode_must_fail<in_place>(std::vector<unsigned char>(25, 'x'));
    check_rt((std::uint64_t) 0xfeedfacecafebeefULL);
    check_rt(true);

    /* A count of 2^40 strings in 16 bytes: refused, nothing allocated. */
    auto huge = le64(1ULL << 40);
    huge.resize(16, 0);
    decode_must_fail<std::vector<std::string>>(huge);
    decode_must_fail<std::string>(huge);
    decode_must_fail<std::map<int, int>>(huge);
    /* Counts that fit but the elements are cut short. */
    auto cut = le64(4);
    cut.push_back('a');
    decode_must_fail<std::string>(cut);
    decode_must_fail<std::vector<std::uint64_t>>(cut);
    decode_must_fail<record>(cut);
    decode_must_fail<int>({1, 2});
    decode_must_fail<point>({});
}

template <typename T>
static void
define_echo(tl::engine &e, const std::string &name)
{
    e.define(name, [](const tl::request &req, const T &v) { req.respond(v); });
}

void
define_server(tl::engine &server)
{
    define_echo<record>(server, "echo_record");
    define_echo<std::vector<std::string>>(server, "echo_vs");
    define_echo<std::map<std::string, double>>(server, "echo_msd");
    define_echo<split>(server, "echo_split");
    define_echo<std::string>(server, "echo_string");
    define_echo<in_place>(server, "echo_in_place");
    /* Input and response through serialization contexts. */
    server.define("ctx_scale", [](const tl::request &req) {
        double k = 10;
        scaled a = req.get_input()
                       .with_serialization_context(std::ref(k), 1)
                       .as<scaled>();
        double k2 = 100;
        req.with_serialization_context(std::ref(k2), 0)
            .respond(scaled{a.v + 1});
    });
    server.define("mixed", [](const tl::request &req, const point &p,
                              const std::vector<point> &v, color c) {
        req.respond(p.x + p.y, (int) v.size(), c);
    });
}

void
run_client(tl::engine &client, const tl::endpoint &server, bool sim)
{
    (void) sim;
    local_checks();
    record r = sample_record();
    record back = client.define("echo_record").on(server)(r);
    CHECK(back == r);
    std::vector<std::string> vs{"x", "yy", std::string(100000, 'z')};
    std::vector<std::string> vs2 = client.define("echo_vs").on(server)(vs);
    CHECK(vs2 == vs);
    std::map<std::string, double> m{{"pi", 3.14159}, {"e", 2.71828}};
    std::map<std::string, double> m2 = client.define("echo_msd").on(server)(m);
    CHECK(m2 == m);
    split s = client.define("echo_split").on(server)(split(9, "nine"));
    CHECK(s == split(9, "nine"));
    in_place ip = client.define("echo_in_place")
                      .on(server)(in_place{"QWERTYUIOPASDFGHJKLZXCVBNM"});
    CHECK_EQ(ip.letters, "QWERTYUIOPASDFGHJKLZXCVBNM");
    double k = 10;
    auto resp = client.define("ctx_scale")
                    .on(server)
                    .with_serialization_context(std::ref(k), 1)(scaled{4.5});
    CHECK_EQ(k, 11.0); /* the caller's variable, not a copy */
    double k2 = 100;
    scaled y = resp.with_serialization_context(std::ref(k2), 0);
    CHECK_EQ(y.v, 5.5);
    /* A context given by value is a copy. */
    double k3 = 10;
    client.define("ctx_scale")
        .on(server)
        .with_serialization_context(k3, 1)(scaled{1});
    CHECK_EQ(k3, 10.0);
    /* A large argument and response (they travel through overflow bulk). */
    std::string big(1 << 20, 'b');
    std::string big2 = client.define("echo_string").on(server)(big);
    CHECK(big2 == big);
    auto t = client.define("mixed")
                 .on(server)(point{1, 2}, std::vector<point>(3), color::blue)
                 .as<double, int, color>();
    CHECK(std::get<0>(t) == 3.0 && std::get<1>(t) == 3 &&
          std::get<2>(t) == color::blue);
}

int
main(int argc, char **argv)
{
    return tl_test_main(argc, argv);
}
