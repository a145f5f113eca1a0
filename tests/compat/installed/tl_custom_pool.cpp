/*
 * A Thallium server whose RPC handlers run on a pool of the program's own
 * (a FIFO with a tl::mutex) served by a scheduler of its own, as
 * Thallium's documentation on custom pools and schedulers describes; it
 * calls itself, and each handler answers with the rank of the execution
 * stream it ran on.
 *   tl_custom_pool ADDRESS     (e.g. "sim://tlpool" or "ofi+tcp")
 */
#include <thallium.hpp>

#include <atomic>
#include <deque>
#include <iostream>
#include <mutex>
#include <string>

namespace tl = thallium;

static std::atomic<int> units_made{0}, sched_loops{0};

class my_unit
{
  public:
    my_unit(const tl::thread &t) : m_thread(t), m_type(tl::unit_type::thread)
    {
        units_made++;
    }
    my_unit(const tl::task &t) : m_task(t), m_type(tl::unit_type::task)
    {
        units_made++;
    }
    tl::unit_type get_type() const
    {
        return m_type;
    }
    const tl::thread &get_thread() const
    {
        return m_thread;
    }
    const tl::task &get_task() const
    {
        return m_task;
    }
    bool is_in_pool() const
    {
        return m_in_pool;
    }
    bool m_in_pool = false;

  private:
    tl::thread m_thread;
    tl::task m_task;
    tl::unit_type m_type;
};

class my_pool
{
  public:
    static const tl::pool::access access_type = tl::pool::access::mpmc;

    size_t get_size() const
    {
        std::lock_guard<tl::mutex> lock(m_mutex);
        return m_units.size();
    }
    void push(my_unit *u)
    {
        std::lock_guard<tl::mutex> lock(m_mutex);
        u->m_in_pool = true;
        m_units.push_back(u);
    }
    my_unit *pop()
    {
        std::lock_guard<tl::mutex> lock(m_mutex);
        if (m_units.empty())
            return nullptr;
        my_unit *u = m_units.front();
        m_units.pop_front();
        u->m_in_pool = false;
        return u;
    }
    void remove(my_unit *u)
    {
        std::lock_guard<tl::mutex> lock(m_mutex);
        for (auto it = m_units.begin(); it != m_units.end(); ++it)
            if (*it == u) {
                m_units.erase(it);
                break;
            }
    }

  private:
    mutable tl::mutex m_mutex;
    std::deque<my_unit *> m_units;
};

class my_scheduler : public tl::scheduler
{
  public:
    my_scheduler(ABT_sched s) : tl::scheduler(s)
    {
    }
    void run()
    {
        while (!has_to_stop()) {
            sched_loops++;
            if (my_unit *u = get_pool(0).pop<my_unit>())
                get_pool(0).run_unit(u);
            tl::xstream::check_events(*this);
        }
    }
    tl::pool get_migr_pool() const
    {
        return get_pool(0);
    }
};

int
main(int argc, char **argv)
{
    std::string addr = argc > 1 ? argv[1] : "sim://tlpool";
    tl::abt scope;
    tl::managed<tl::pool> pool = tl::pool::create<my_pool, my_unit>();
    tl::managed<tl::scheduler> sched =
        tl::scheduler::create<my_scheduler>(*pool);
    tl::managed<tl::xstream> es = tl::xstream::create(*sched);
    int ok = 1;
    {
        tl::engine server(addr, THALLIUM_SERVER_MODE,
                          tl::xstream::self().get_main_pools(1)[0], *pool);
        tl::remote_procedure where =
            server.define("where", [](const tl::request &req, int x) {
                req.respond(x + tl::xstream::self().get_rank());
            });
        {
            tl::endpoint self = server.self();
            int rank = es->get_rank();
            for (int i = 0; i < 5; i++)
                ok &= (int) where.on(self)(100 * i) == 100 * i + rank;
        }
        server.finalize();
    }
    es->join();
    ok &= units_made.load() >= 5 && sched_loops.load() > 0;
    std::cout << "tl_custom_pool: " << units_made.load()
              << " units: " << (ok ? "OK" : "FAILED") << std::endl;
    return ok ? 0 : 1;
}
