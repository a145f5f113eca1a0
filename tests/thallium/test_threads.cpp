/*
 * Thallium's threading names over abt.h: tl::managed, tl::pool,
 * tl::scheduler, tl::xstream, tl::thread, tl::task. No fabric involved.
 * Every check counts work that actually ran, so a name that did nothing
 * fails.
 */
#include <atomic>
#include <set>
#include <vector>

#include "tl_test.hpp"

static void
test_xstreams_and_threads()
{
    std::vector<tl::managed<tl::xstream>> ess;
    for (int i = 0; i < 3; i++)
        ess.push_back(tl::xstream::create());
    std::set<int> ranks;
    for (auto &es : ess)
        ranks.insert(es->get_rank());
    CHECK_EQ(ranks.size(), 3u);
    CHECK(ranks.count(0) == 0); /* rank 0 is the primary stream */
    CHECK(tl::xstream::self().is_primary());
    CHECK(!ess[0]->is_primary());
    CHECK(*ess[0] == *ess[0] && *ess[0] != *ess[1]);
    CHECK(ess[0]->state() == tl::xstream_state::running);
    CHECK_EQ(ess[1]->get_main_pools().size(), 1u);

    std::atomic<int> ran{0};
    std::atomic<int> wrong_rank{0};
    std::vector<tl::managed<tl::thread>> ths;
    for (int i = 0; i < 12; i++) {
        int want = ess[i % 3]->get_rank();
        ths.push_back(ess[i % 3]->make_thread([&ran, &wrong_rank, want]() {
            if (tl::xstream::self().get_rank() != want)
                wrong_rank++;
            CHECK(tl::thread::self_id() == tl::thread::self().id());
            ran++;
        }));
    }
    std::set<std::uint64_t> ids;
    for (auto &t : ths) {
        t->join();
        CHECK(t->state() == tl::thread_state::terminated);
        ids.insert(t->id());
    }
    CHECK_EQ(ran.load(), 12);
    CHECK_EQ(wrong_rank.load(), 0);
    CHECK_EQ(ids.size(), 12u);

    /* Anonymous ULTs free themselves; count them through an eventual. */
    tl::eventual<int> done;
    std::atomic<int> left{4};
    for (int i = 0; i < 4; i++)
        ess[0]->make_thread(
            [&]() {
                if (--left == 0)
                    done.set_value(7);
            },
            tl::anonymous());
    CHECK_EQ(done.wait(), 7);

    /* Tasks. */
    std::atomic<int> tasks{0};
    std::vector<tl::managed<tl::task>> tsks;
    for (int i = 0; i < 6; i++)
        tsks.push_back(ess[i % 3]->make_task([&tasks]() {
            CHECK(tl::task::self_id() == tl::task::self().id());
            tasks++;
        }));
    for (auto &t : tsks) {
        t->join();
        CHECK(t->state() == tl::task_state::terminated);
    }
    CHECK_EQ(tasks.load(), 6);
    /* A ULT is not a tasklet. */
    CHECK_THROWS(tl::task_exception, tl::task::self(), (void) e);

    for (auto &es : ess) {
        es->join();
        CHECK(es->state() == tl::xstream_state::terminated);
    }
}

/* One shared pool served by several streams (Thallium's 12_shared_pool),
 * with a mutex guarding a plain counter. */
static void
test_shared_pool()
{
    tl::managed<tl::pool> p = tl::pool::create(tl::pool::access::spmc);
    CHECK(p->get_access() == tl::pool::access::spmc);
    CHECK(!p->is_null() && p->id() >= 0);
    {
        std::vector<tl::managed<tl::xstream>> ess;
        for (int i = 0; i < 3; i++)
            ess.push_back(
                tl::xstream::create(tl::scheduler::predef::deflt, *p));
        CHECK(ess[2]->get_main_pools()[0] == *p);
        tl::mutex mtx;
        int counter = 0;
        std::vector<tl::managed<tl::thread>> ths;
        for (int i = 0; i < 16; i++)
            ths.push_back(ess[i % 3]->make_thread([&]() {
                std::lock_guard<tl::mutex> g(mtx);
                counter++;
            }));
        /* Work pushed straight to the pool runs on one of its streams. */
        std::atomic<int> direct{0};
        tl::managed<tl::thread> t = p->make_thread([&]() {
            CHECK(tl::thread::self().get_last_pool() == *p);
            direct++;
        });
        t->join();
        CHECK_EQ(direct.load(), 1);
        for (auto &th : ths)
            th->join();
        CHECK_EQ(counter, 16);
        CHECK_EQ(p->size(), 0u);
        for (auto &es : ess)
            es->join();
    }
    /* managed<pool> frees it: the handle is null afterwards. */
    p.release();
    CHECK(p->is_null());
}

/* A scheduler over two pools, handed to a stream that owns it. */
static void
test_scheduler()
{
    tl::managed<tl::pool> a = tl::pool::create(tl::pool::access::mpmc);
    tl::managed<tl::pool> b =
        tl::pool::create(tl::pool::access::mpmc, tl::pool::kind::fifo_wait);
    std::vector<tl::pool> ps{*a, *b};
    {
        tl::managed<tl::scheduler> s = tl::scheduler::create(
            tl::scheduler::predef::basic_wait, ps.begin(), ps.end());
        CHECK_EQ(s->num_pools(), 2u);
        CHECK(s->get_pool(1) == *b);
        tl::managed<tl::xstream> es = tl::xstream::create(*s);
        CHECK(es->get_main_sched() == *s);
        std::atomic<int> n{0};
        tl::managed<tl::thread> t1 = b->make_thread([&]() { n++; });
        tl::managed<tl::task> t2 = a->make_task([&]() { n++; });
        t1->join();
        t2->join();
        CHECK_EQ(n.load(), 2);
        CHECK_EQ(s->size(), 0u);
        es->join();
        /* es goes first and frees the scheduler; s then frees nothing. */
    }
    {
        /* A scheduler never given to a stream is freed by its managed. */
        tl::managed<tl::scheduler> s =
            tl::scheduler::create(tl::scheduler::predef::basic, *a);
        CHECK_EQ(s->num_pools(), 1u);
    }
    /* managed<> moves. */
    tl::managed<tl::pool> moved = std::move(a);
    CHECK(a->is_null() && !moved->is_null());
}

/* Thread attributes and the calling ULT. */
static void
test_thread_misc()
{
    tl::thread::attribute attr;
    static char stack[1 << 16];
    attr.set_stack(stack, sizeof(stack));
    CHECK_EQ(attr.get_stack_size(), sizeof(stack));
    CHECK(attr.get_stack_address() == (void *) stack);
    tl::managed<tl::xstream> es = tl::xstream::create();
    std::atomic<int> n{0};
    tl::managed<tl::thread> t = es->make_thread(
        [&]() {
            tl::thread::yield();
            n++;
        },
        attr);
    t->join();
    CHECK_EQ(n.load(), 1);
    CHECK(!t->is_migratable());
    CHECK(tl::thread::self().is_primary());
    CHECK(!t->is_primary());
    es->join();
}

int
main(int argc, char **argv)
{
    (void) argc;
    (void) argv;
    tl::abt scope;
    CHECK(tl::abt::initialized());
    test_xstreams_and_threads();
    test_shared_pool();
    test_scheduler();
    test_thread_misc();
    std::printf("test_threads: OK\n");
    return 0;
}
