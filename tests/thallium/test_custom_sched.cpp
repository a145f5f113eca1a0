/*
 * Thallium's user-defined pools and schedulers (tl::pool::create<P, U>(),
 * tl::scheduler::create<S>()) over abt.h's ABT_pool_def / ABT_sched_def:
 * a LIFO pool and a scheduler that serves its last pool first, written as
 * Thallium's documentation shows. Work is queued before the stream that
 * runs it exists, so every order checked is deterministic; each check
 * counts what the program's own classes did, so a name that did nothing
 * fails.
 */
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "tl_test.hpp"

static std::atomic<int> units_alive{0}, pools_alive{0}, scheds_alive{0};
static std::atomic<int> sched_runs{0}, sched_events{0};

class lifo_unit
{
  public:
    explicit lifo_unit(const tl::thread &t)
        : m_thread(t), m_type(tl::unit_type::thread)
    {
        units_alive++;
    }
    explicit lifo_unit(const tl::task &t)
        : m_task(t), m_type(tl::unit_type::task)
    {
        units_alive++;
    }
    ~lifo_unit()
    {
        units_alive--;
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

  private:
    friend class lifo_pool;
    tl::thread m_thread;
    tl::task m_task;
    tl::unit_type m_type;
    bool m_in_pool = false;
};

class lifo_pool
{
  public:
    static const tl::pool::access access_type = tl::pool::access::mpmc;

    lifo_pool()
    {
        pools_alive++;
    }
    ~lifo_pool()
    {
        pools_alive--;
    }
    std::size_t get_size() const
    {
        std::lock_guard<tl::mutex> g(m_mutex);
        return m_units.size();
    }
    void push(lifo_unit *u)
    {
        std::lock_guard<tl::mutex> g(m_mutex);
        u->m_in_pool = true;
        m_units.push_back(u);
    }
    lifo_unit *pop()
    {
        std::lock_guard<tl::mutex> g(m_mutex);
        if (m_units.empty())
            return nullptr;
        lifo_unit *u = m_units.back();
        m_units.pop_back();
        u->m_in_pool = false;
        return u;
    }
    void remove(lifo_unit *u)
    {
        std::lock_guard<tl::mutex> g(m_mutex);
        for (auto it = m_units.begin(); it != m_units.end(); ++it)
            if (*it == u) {
                u->m_in_pool = false;
                m_units.erase(it);
                return;
            }
    }

  private:
    mutable tl::mutex m_mutex;
    std::vector<lifo_unit *> m_units;
};

/* Serves its last pool first. Every pool of this test is a lifo_pool. */
class last_first : public tl::scheduler
{
  public:
    explicit last_first(ABT_sched s) : tl::scheduler(s)
    {
        scheds_alive++;
    }
    ~last_first()
    {
        scheds_alive--;
    }
    void run()
    {
        sched_runs++;
        int n = (int) num_pools();
        while (!has_to_stop()) {
            for (int i = n - 1; i >= 0; i--) {
                lifo_unit *u = get_pool(i).pop<lifo_unit>();
                if (u) {
                    get_pool(i).run_unit(u);
                    break;
                }
            }
            sched_events++;
            tl::xstream::check_events(*this);
        }
    }
    tl::pool get_migr_pool() const
    {
        return get_pool(0);
    }
};

static std::mutex order_m;
static std::vector<int> order;

static void
note(int i)
{
    std::lock_guard<std::mutex> g(order_m);
    order.push_back(i);
}

static void
test_user_pool_on_predefined_sched()
{
    order.clear();
    {
        tl::managed<tl::pool> p = tl::pool::create<lifo_pool, lifo_unit>();
        CHECK_EQ(pools_alive.load(), 1);
        std::vector<tl::managed<tl::thread>> ths;
        for (int i = 0; i < 4; i++)
            ths.push_back(p->make_thread([i]() { note(i); }));
        tl::managed<tl::task> tk = p->make_task([]() { note(4); });
        CHECK_EQ(units_alive.load(), 5);
        CHECK_EQ(p->size(), 5u);
        tl::managed<tl::xstream> es =
            tl::xstream::create(tl::scheduler::predef::basic, *p);
        for (auto &t : ths)
            t->join();
        tk->join();
        es->join();
        CHECK_EQ(units_alive.load(), 0);
        CHECK_EQ(order.size(), 5u);
        for (int i = 0; i < 5; i++)
            CHECK_EQ(order[i], 4 - i);
    }
    CHECK_EQ(pools_alive.load(), 0);
}

static void
test_user_scheduler()
{
    order.clear();
    {
        std::vector<tl::managed<tl::pool>> pools;
        pools.push_back(tl::pool::create<lifo_pool, lifo_unit>());
        pools.push_back(tl::pool::create<lifo_pool, lifo_unit>());
        std::vector<tl::pool> ps = {*pools[0], *pools[1]};
        for (int i = 0; i < 3; i++) {
            pools[0]->make_thread([i]() { note(i); }, tl::anonymous());
            pools[1]->make_thread([i]() { note(10 + i); }, tl::anonymous());
        }
        tl::managed<tl::scheduler> s =
            tl::scheduler::create<last_first>(ps.begin(), ps.end());
        CHECK_EQ(scheds_alive.load(), 1);
        CHECK_EQ(s->num_pools(), 2u);
        CHECK(!s->has_to_stop());
        tl::managed<tl::xstream> es = tl::xstream::create(*s);
        /* Work the program adds once the queued work has run runs too. */
        for (;;) {
            {
                std::lock_guard<std::mutex> g(order_m);
                if (order.size() == 6)
                    break;
            }
            std::this_thread::yield();
        }
        tl::managed<tl::thread> late =
            pools[0]->make_thread([]() { note(99); });
        late->join();
        es->join();
        CHECK_EQ(sched_runs.load(), 1);
        CHECK(sched_events.load() > 0);
        CHECK_EQ(order.size(), 7u);
        const int want[6] = {12, 11, 10, 2, 1, 0};
        for (int i = 0; i < 6; i++)
            CHECK_EQ(order[i], want[i]);
        CHECK_EQ(order[6], 99);
        CHECK_EQ(units_alive.load(), 0);
        es.release();
        CHECK_EQ(scheds_alive.load(), 0); /* freed with its stream */
    }
    CHECK_EQ(pools_alive.load(), 0);
}

static void
test_pool_unit_calls()
{
    order.clear();
    tl::managed<tl::pool> p = tl::pool::create<lifo_pool, lifo_unit>();
    p->make_thread([]() { note(1); }, tl::anonymous());
    p->make_thread([]() { note(2); }, tl::anonymous());
    lifo_unit *u = p->pop<lifo_unit>();
    CHECK(u != nullptr && !u->is_in_pool());
    CHECK_EQ(p->size(), 1u);
    p->push(u);
    CHECK(u->is_in_pool());
    p->remove(u);
    CHECK_EQ(p->size(), 1u);
    p->push(u);
    /* Run both on this (the primary) stream, as a scheduler would. */
    while (lifo_unit *v = p->pop<lifo_unit>())
        p->run_unit(v);
    CHECK_EQ(order.size(), 2u);
    CHECK_EQ(order[0], 2);
    CHECK_EQ(order[1], 1);
    tl::managed<tl::scheduler> s =
        tl::scheduler::create(tl::scheduler::predef::basic, *p);
    CHECK_THROWS(tl::pool_exception, p->add_sched(*s), (void) 0);
}

int
main(int argc, char **argv)
{
    (void) argc;
    (void) argv;
    tl::abt scope;
    test_user_pool_on_predefined_sched();
    test_user_scheduler();
    test_pool_unit_calls();
    std::printf("test_custom_sched: OK\n");
    return 0;
}
