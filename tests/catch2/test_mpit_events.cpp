// The request_engine MPI_T event source (request-engine-events) and the event delivery it relies on (the mpit-event-* patches):
// each completion raises one event with the right data, for every request kind a user creates;
// bound handles see only their object; deferred delivery keeps order; a full buffer drops and
// says how many; handles freed in callbacks; MPI_T init/finalize cycles.
#include <catch2/catch.hpp>

#include "greq_class_support.hpp"
#include "mpi_test_support.hpp"
#include "mpit_events_support.hpp"
#include "mpit_support.hpp"

#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

using namespace reqtest;

namespace {

int peer() { return world_rank() ^ 1; }

// A pair of messages with the peer (world size is even): one send, one receive, `bytes` long.
struct Exchange {
    std::vector<char> out, in;
    MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    Exchange(int bytes, int tag, MPI_Comm comm = MPI_COMM_WORLD)
        : out(size_t(bytes), 'x'), in(size_t(bytes), 0) {
        MPI_Irecv(in.data(), bytes, MPI_CHAR, peer(), tag, comm, &reqs[0]);
        MPI_Isend(out.data(), bytes, MPI_CHAR, peer(), tag, comm, &reqs[1]);
    }
};

MPI_Comm handle_value(MPI_Comm c) { return c; }

std::vector<CompleteEvent> of_call(const std::vector<CompleteEvent>& all, int call) {
    std::vector<CompleteEvent> out;
    for (const CompleteEvent& e : all) {
        if (e.call == call) out.push_back(e);
    }
    return out;
}

// Empty callbacks of a plain generalized request: query_fn reports tag 77 and 5 bytes.
int query_tag77(void*, MPI_Status* status) {
    MPI_Status_set_elements(status, MPI_BYTE, 5);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = 77;
    return MPI_SUCCESS;
}
int free_nothing(void*) { return MPI_SUCCESS; }
int cancel_nothing(void*, int) { return MPI_SUCCESS; }

}  // namespace

TEST_CASE("request_engine events are registered with their layouts and bindings", "[events][mpit_events]") {
    int provided = 0;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    struct Expect {
        const char* name;
        int elements;
        int bind;
    };
    for (Expect e : {Expect{"request_complete", 9, MPI_T_BIND_NO_OBJECT},
                     Expect{"request_complete_comm", 9, MPI_T_BIND_MPI_COMM},
                     Expect{"request_complete_file", 9, MPI_T_BIND_MPI_FILE},
                     Expect{"grequest_poll", 4, MPI_T_BIND_NO_OBJECT},
                     Expect{"grequest_class_wait", 6, MPI_T_BIND_NO_OBJECT},
                     Expect{"request_scan_served", 4, MPI_T_BIND_NO_OBJECT}}) {
        INFO(e.name);
        int index = event_index_of(e.name);
        REQUIRE(index >= 0);
        int num = 0, verbosity = 0, bind = -1;
        char name[256], desc[1024];
        MPI_T_enum enumtype;
        MPI_Info info;
        int name_len = sizeof name, desc_len = sizeof desc;
        REQUIRE(MPI_T_event_get_info(index, name, &name_len, &verbosity, nullptr, nullptr, &num,
                                     &enumtype, &info, desc, &desc_len, &bind) == MPI_SUCCESS);
        CHECK(std::string(name) == e.name);
        CHECK(num == e.elements);
        CHECK(bind == e.bind);
        CHECK(std::strlen(desc) > 20);
    }
    // the source
    int sources = 0;
    MPI_T_source_get_num(&sources);
    bool found = false;
    for (int s = 0; s < sources; s++) {
        char name[64], desc[512];
        int name_len = sizeof name, desc_len = sizeof desc;
        MPI_T_source_order order;
        MPI_Count ticks = 0, max_ticks = 0;
        MPI_T_source_get_info(s, name, &name_len, desc, &desc_len, &order, &ticks, &max_ticks,
                              nullptr);
        if (std::string(name) == "request_engine") {
            found = true;
            CHECK(order == MPI_T_SOURCE_ORDERED);
            CHECK(ticks > 0);
        }
    }
    CHECK(found);
    MPI_T_finalize();
}

TEST_CASE("request_complete: one event per completion with the request's data, every kind",
          "[events][mpit_events]") {
    Watchdog dog("request_complete every kind");
    EventListener events("request_complete", MPI_T_CB_REQUIRE_MPI_RESTRICTED);
    REQUIRE(events.ok());
    const int me = world_rank();

    SECTION("send and receive through MPI_Waitall: kind, handle, comm, source, tag, count, index") {
        Exchange x(40, 5);
        MPI_Request before[2] = {x.reqs[0], x.reqs[1]};
        events.clear();
        MPI_Waitall(2, x.reqs, MPI_STATUSES_IGNORE);
        auto got = events.completions();
        REQUIRE(got.size() == 2);
        for (const CompleteEvent& e : got) {
            CHECK(e.call == kWaitall);
            CHECK(e.comm == int(handle_value(MPI_COMM_WORLD)));
            CHECK(e.error == MPI_SUCCESS);
            REQUIRE((e.index == 0 || e.index == 1));
            CHECK(e.request == int(before[e.index]));
            if (e.index == 0) {
                CHECK(e.kind == kRecv);
                CHECK(e.source == peer());
                CHECK(e.tag == 5);
                CHECK(e.count == 40);
            } else {
                CHECK(e.kind == kSend);
                CHECK(e.source == MPI_UNDEFINED);
                CHECK(e.count == 0);
            }
        }
        CHECK(got[0].index != got[1].index);
    }

    SECTION("get_status reports first, the MPI_Test that frees it raises nothing more") {
        Exchange x(8, 6);
        MPI_Waitall(1, &x.reqs[1], MPI_STATUSES_IGNORE);
        events.clear();
        int flag = 0;
        MPI_Status st;
        REQUIRE(poll_until([&] {
            MPI_Request_get_status(x.reqs[0], &flag, &st);
            return flag != 0;
        }));
        MPI_Request_get_status(x.reqs[0], &flag, &st);  // again: no second event
        MPI_Test(&x.reqs[0], &flag, &st);
        CHECK(flag == 1);
        auto got = events.completions();
        REQUIRE(got.size() == 1);
        CHECK(got[0].call == kGetStatus);
        CHECK(got[0].index == -1);
        CHECK(got[0].kind == kRecv);
        CHECK(got[0].tag == 6);
    }

    SECTION("get_status_all raises only once its flag is true, one event per request") {
        int token = 0;
        MPI_Request reqs[3];
        MPI_Irecv(&token, 1, MPI_INT, peer(), 7, MPI_COMM_WORLD, &reqs[0]);
        MPI_Isend(&me, 1, MPI_INT, me, 8, MPI_COMM_WORLD, &reqs[1]);
        int self_in = -1;
        MPI_Irecv(&self_in, 1, MPI_INT, me, 8, MPI_COMM_WORLD, &reqs[2]);
        events.clear();
        int flag = 0;
        // the peer sends only after our first look: the flag is false then
        MPI_Request_get_status_all(3, reqs, &flag, MPI_STATUSES_IGNORE);
        CHECK(flag == 0);
        CHECK(events.completions().empty());
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Send(&me, 1, MPI_INT, peer(), 7, MPI_COMM_WORLD);
        REQUIRE(poll_until([&] {
            MPI_Request_get_status_all(3, reqs, &flag, MPI_STATUSES_IGNORE);
            return flag != 0;
        }));
        auto got = events.completions();
        REQUIRE(got.size() == 3);
        for (int i = 0; i < 3; i++) {
            CHECK(got[size_t(i)].call == kGetStatusAll);
            CHECK(got[size_t(i)].index == i);
        }
        MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE);
        CHECK(events.completions().size() == 3);
        CHECK(token == peer());
        CHECK(self_in == me);
    }

    SECTION("persistent requests: one event per round, none for an inactive request") {
        int in = -1, out = me;
        MPI_Request reqs[2];
        MPI_Recv_init(&in, 1, MPI_INT, peer(), 9, MPI_COMM_WORLD, &reqs[0]);
        MPI_Send_init(&out, 1, MPI_INT, peer(), 9, MPI_COMM_WORLD, &reqs[1]);
        events.clear();
        for (int round = 0; round < 3; round++) {
            MPI_Startall(2, reqs);
            if (round == 1) {
                int flag = 0;
                REQUIRE(poll_until([&] {
                    MPI_Testall(2, reqs, &flag, MPI_STATUSES_IGNORE);
                    return flag != 0;
                }));
            } else {
                MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
            }
        }
        MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);  // inactive: nothing completes
        auto got = events.completions();
        REQUIRE(got.size() == 6);
        CHECK(of_call(got, kTestall).size() == 2);
        CHECK(of_call(got, kWaitall).size() == 4);
        for (const CompleteEvent& e : got) {
            CHECK((e.kind == kPersistentRecv || e.kind == kPersistentSend));
            if (e.kind == kPersistentRecv) {
                CHECK(e.source == peer());
                CHECK(e.count == int(sizeof(int)));
            }
        }
        MPI_Request_free(&reqs[0]);
        MPI_Request_free(&reqs[1]);
    }

    SECTION("a generalized request through MPI_Testany: its index and query_fn's status") {
        MPI_Request reqs[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        MPI_Grequest_start(query_tag77, free_nothing, cancel_nothing, nullptr, &reqs[1]);
        MPI_Grequest_complete(reqs[1]);
        MPI_Request handle = reqs[1];
        events.clear();
        int indx = -1, flag = 0;
        MPI_Testany(3, reqs, &indx, &flag, MPI_STATUS_IGNORE);
        CHECK(flag == 1);
        CHECK(indx == 1);
        auto got = events.completions();
        REQUIRE(got.size() == 1);
        CHECK(got[0].kind == kGeneralized);
        CHECK(got[0].call == kTestany);
        CHECK(got[0].index == 1);
        CHECK(got[0].request == int(handle));
        CHECK(got[0].tag == 77);
        CHECK(got[0].count == 5);
        CHECK(got[0].comm == int(MPI_COMM_NULL));
    }

    SECTION("requests complete at creation carry their communicator: self send, MPI_COMM_SELF "
            "collective, MPI_PROC_NULL") {
        int in = -1;
        MPI_Request reqs[4];
        MPI_Irecv(&in, 1, MPI_INT, me, 3, MPI_COMM_WORLD, &reqs[0]);
        MPI_Isend(&me, 1, MPI_INT, me, 3, MPI_COMM_WORLD, &reqs[1]);  // its receive is posted
        MPI_Ibarrier(MPI_COMM_SELF, &reqs[2]);
        MPI_Irecv(&in, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &reqs[3]);
        events.clear();
        MPI_Status st[4];
        MPI_Waitall(4, reqs, st);
        CHECK(in == me);
        CHECK(st[3].MPI_SOURCE == MPI_PROC_NULL);
        auto got = events.completions();
        REQUIRE(got.size() == 4);
        for (const CompleteEvent& e : got) {
            INFO("index " << e.index);
            switch (e.index) {
                case 0: CHECK(e.kind == kRecv); CHECK(e.comm == int(MPI_COMM_WORLD)); break;
                case 1: CHECK(e.kind == kSend); CHECK(e.comm == int(MPI_COMM_WORLD)); break;
                case 2: CHECK(e.kind == kColl); CHECK(e.comm == int(MPI_COMM_SELF)); break;
                case 3:
                    CHECK(e.kind == kRecv);
                    CHECK(e.source == MPI_PROC_NULL);
                    CHECK(e.comm == int(MPI_COMM_WORLD));
                    break;
                default: FAIL("unexpected index");
            }
        }
    }

    SECTION("a nonblocking collective and an RMA request") {
        int value = me, sum = 0;
        MPI_Request coll;
        MPI_Iallreduce(&value, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &coll);
        MPI_Win win;
        int target = -1;
        MPI_Win_create(&target, sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        MPI_Win_lock_all(0, win);
        MPI_Request rma;
        MPI_Rput(&value, 1, MPI_INT, peer(), 0, 1, MPI_INT, win, &rma);
        events.clear();
        MPI_Wait(&coll, MPI_STATUS_IGNORE);
        MPI_Wait(&rma, MPI_STATUS_IGNORE);
        MPI_Win_unlock_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(target == peer());
        MPI_Win_free(&win);
        auto got = events.completions();
        REQUIRE(got.size() == 2);
        CHECK(got[0].kind == kColl);
        CHECK(got[0].call == kWait);
        CHECK(got[0].comm == int(MPI_COMM_WORLD));
        CHECK(got[1].kind == kRma);
        CHECK(got[1].call == kWait);
    }

    SECTION("a persistent collective and partitioned requests: one event per round") {
        MPI_Request barrier;
        MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &barrier);
        const int partitions = 4;
        std::vector<int> out(partitions * 2, me), in(partitions * 2, -1);
        MPI_Request part[2];
        MPI_Precv_init(in.data(), partitions, 2, MPI_INT, peer(), 12, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &part[0]);
        MPI_Psend_init(out.data(), partitions, 2, MPI_INT, peer(), 12, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &part[1]);
        events.clear();
        for (int round = 0; round < 2; round++) {
            MPI_Start(&barrier);
            MPI_Wait(&barrier, MPI_STATUS_IGNORE);
            MPI_Startall(2, part);
            for (int p = 0; p < partitions; p++) MPI_Pready(p, part[1]);
            MPI_Waitall(2, part, MPI_STATUSES_IGNORE);
        }
        CHECK(in == std::vector<int>(partitions * 2, peer()));
        auto got = events.completions();
        REQUIRE(got.size() == 6);
        int colls = 0, precv = 0, psend = 0;
        for (const CompleteEvent& e : got) {
            if (e.kind == kPersistentColl) {
                colls++;
                CHECK(e.call == kWait);
                CHECK(e.comm == int(MPI_COMM_WORLD));
            } else if (e.kind == kPartRecv) {
                precv++;
                CHECK(e.index == 0);
                CHECK(e.source == peer());
                CHECK(e.count == int(sizeof(int)) * partitions * 2);
            } else if (e.kind == kPartSend) {
                psend++;
                CHECK(e.index == 1);
            }
        }
        CHECK(colls == 2);
        CHECK(precv == 2);
        CHECK(psend == 2);
        MPI_Request_free(&barrier);
        MPI_Request_free(&part[0]);
        MPI_Request_free(&part[1]);
    }

    SECTION("blocking calls and collectives raise nothing") {
        int v = me, w = -1;
        events.clear();
        MPI_Sendrecv(&v, 1, MPI_INT, peer(), 11, &w, 1, MPI_INT, peer(), 11, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_Allreduce(&v, &w, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(events.completions().empty());
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

TEST_CASE("request_complete_comm: a handle bound to a communicator sees only it",
          "[events][mpit_events]") {
    Watchdog dog("comm-bound events");
    MPI_Comm a, b;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    {
        EventListener on_a("request_complete_comm", MPI_T_CB_REQUIRE_MPI_RESTRICTED, &a);
        EventListener on_b("request_complete_comm", MPI_T_CB_REQUIRE_MPI_RESTRICTED, &b);
        REQUIRE(on_a.ok());
        REQUIRE(on_b.ok());
        Exchange xa(4, 1, a), xb1(4, 2, b), xb2(4, 3, b);
        MPI_Waitall(2, xa.reqs, MPI_STATUSES_IGNORE);
        MPI_Waitall(2, xb1.reqs, MPI_STATUSES_IGNORE);
        MPI_Waitall(2, xb2.reqs, MPI_STATUSES_IGNORE);
        // a self message on b, complete at creation
        int v = 1, w = 0;
        MPI_Request r[2];
        MPI_Irecv(&w, 1, MPI_INT, world_rank(), 4, b, &r[0]);
        MPI_Isend(&v, 1, MPI_INT, world_rank(), 4, b, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        auto got_a = on_a.completions();
        auto got_b = on_b.completions();
        CHECK(got_a.size() == 2);
        CHECK(got_b.size() == 6);
        for (const CompleteEvent& e : got_a) CHECK(e.comm == int(a));
        for (const CompleteEvent& e : got_b) CHECK(e.comm == int(b));
    }
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
}

TEST_CASE("a callback that needs MPI_T_CB_REQUIRE_NONE gets its events after the call, in order",
          "[events][mpit_events]") {
    Watchdog dog("deferred delivery");
    EventListener events("request_complete", MPI_T_CB_REQUIRE_NONE);
    REQUIRE(events.ok());
    const int n = 12;
    std::vector<int> in(n), out(n, world_rank());
    std::vector<MPI_Request> reqs(2 * n);
    for (int i = 0; i < n; i++) {
        MPI_Irecv(&in[size_t(i)], 1, MPI_INT, peer(), 100 + i, MPI_COMM_WORLD, &reqs[size_t(i)]);
    }
    for (int i = 0; i < n; i++) {
        MPI_Isend(&out[size_t(i)], 1, MPI_INT, peer(), 100 + i, MPI_COMM_WORLD,
                  &reqs[size_t(n + i)]);
    }
    events.clear();
    MPI_Waitall(2 * n, reqs.data(), MPI_STATUSES_IGNORE);
    const auto& got = events.instances();
    REQUIRE(got.size() == size_t(2 * n));
    for (size_t i = 0; i < got.size(); i++) {
        CHECK(got[i].safety == MPI_T_CB_REQUIRE_NONE);  // delivered at the safe point
        if (i > 0) CHECK(got[i].timestamp >= got[i - 1].timestamp);
    }
    // MPI_Waitall reports in index order
    auto c = events.completions();
    for (size_t i = 0; i < c.size(); i++) CHECK(c[i].index == int(i));
    CHECK(events.dropped().empty());
}

TEST_CASE("a full deferral buffer drops and tells the dropped handler how many",
          "[events][mpit_events]") {
    Watchdog dog("dropped events");
    CvarSetting<int> limit("MPIR_CVAR_T_EVENT_DEFER_LIMIT", 4);
    REQUIRE(limit.ok());
    EventListener events("request_complete", MPI_T_CB_REQUIRE_NONE);
    REQUIRE(events.ok());
    const int n = 10;
    std::vector<int> in(n), out(n, 1);
    std::vector<MPI_Request> reqs(2 * n);
    for (int i = 0; i < n; i++) {
        MPI_Irecv(&in[size_t(i)], 1, MPI_INT, peer(), 200 + i, MPI_COMM_WORLD, &reqs[size_t(i)]);
        MPI_Isend(&out[size_t(i)], 1, MPI_INT, peer(), 200 + i, MPI_COMM_WORLD,
                  &reqs[size_t(n + i)]);
    }
    events.clear();
    MPI_Waitall(2 * n, reqs.data(), MPI_STATUSES_IGNORE);
    CHECK(events.instances().size() == 4);
    REQUIRE(events.dropped().size() == 1);
    CHECK(events.dropped()[0] == 2 * n - 4);
    // the next completions are delivered again
    events.clear();
    Exchange x(4, 300);
    MPI_Waitall(2, x.reqs, MPI_STATUSES_IGNORE);
    CHECK(events.instances().size() == 2);
    CHECK(events.dropped().empty());
}

namespace {
// the dropped handler of a handle with no callback left gets no user data: recorded here
std::vector<MPI_Count> g_orphan_drops;
void record_orphan_drop(MPI_Count count, MPI_T_event_registration, int, MPI_T_cb_safety, void*) {
    g_orphan_drops.push_back(count);
}

// Both listeners registered; the deferring one's drops go to g_orphan_drops, emptied.
void listen_for_orphan_drops(EventListener& deferred, EventListener& acting) {
    REQUIRE(deferred.ok());
    REQUIRE(acting.ok());
    REQUIRE(MPI_T_event_set_dropped_handler(deferred.handle(), record_orphan_drop) ==
            MPI_SUCCESS);
    g_orphan_drops.clear();
}
}  // namespace

TEST_CASE("a deferred instance whose handle lost its callback before delivery is counted as dropped",
          "[events][mpit_events]") {
    Watchdog dog("callback removed before delivery");
    EventListener deferred("request_complete", MPI_T_CB_REQUIRE_NONE);
    EventListener remover("request_complete", MPI_T_CB_REQUIRE_MPI_RESTRICTED);
    listen_for_orphan_drops(deferred, remover);
    // the first completion is queued for `deferred`; then its only callback goes, while that
    // instance waits for the safe point (MPI_Waitall's return)
    remover.on_next_callback([&deferred] {
        MPI_T_event_register_callback(deferred.handle(), MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL,
                                      nullptr, nullptr);
    });
    Exchange x(4, 450);
    MPI_Waitall(2, x.reqs, MPI_STATUSES_IGNORE);
    CHECK(remover.instances().size() == 2);
    CHECK(deferred.instances().empty());
    MPI_Count dropped = 0;
    for (MPI_Count c : g_orphan_drops) dropped += c;
    // both completions: the queued one found no callback at delivery, the second none when raised
    CHECK(dropped == 2);
}

TEST_CASE("instances still queued for a handle the tool frees are counted as dropped at the free",
          "[events][mpit_events]") {
    Watchdog dog("handle freed with queued instances");
    EventListener deferred("request_complete", MPI_T_CB_REQUIRE_NONE);
    EventListener freer("request_complete", MPI_T_CB_REQUIRE_MPI_RESTRICTED);
    listen_for_orphan_drops(deferred, freer);
    // `deferred` (registered first) queues the first completion; `freer`'s callback for that
    // same completion frees `deferred` while its instance waits for MPI_Waitall's return
    freer.on_next_callback([&deferred] { deferred.free_handle(); });
    Exchange x(4, 455);
    MPI_Waitall(2, x.reqs, MPI_STATUSES_IGNORE);
    CHECK(freer.instances().size() == 2);
    CHECK(deferred.instances().empty());
    CHECK(deferred.frees() == 1);
    // told once, at the free, of the one instance it will never get; the second completion
    // came after the free and is nobody's drop
    REQUIRE(g_orphan_drops.size() == 1);
    CHECK(g_orphan_drops[0] == 1);
}

TEST_CASE("a free reports the queued instances and those past the limit as one count",
          "[events][mpit_events]") {
    Watchdog dog("handle freed with queued and overflowed instances");
    CvarSetting<int> limit("MPIR_CVAR_T_EVENT_DEFER_LIMIT", 1);
    REQUIRE(limit.ok());
    EventListener deferred("request_complete", MPI_T_CB_REQUIRE_NONE);
    EventListener freer("request_complete", MPI_T_CB_REQUIRE_MPI_RESTRICTED);
    listen_for_orphan_drops(deferred, freer);
    // the first completion fills `deferred`'s queue (limit 1), the second goes past the limit;
    // `freer`'s callback for that second completion frees `deferred` before MPI_Waitall returns
    freer.on_next_callback([&] { freer.on_next_callback([&] { deferred.free_handle(); }); });
    Exchange x(4, 457);
    MPI_Waitall(2, x.reqs, MPI_STATUSES_IGNORE);
    CHECK(freer.instances().size() == 2);
    CHECK(deferred.instances().empty());
    CHECK(deferred.frees() == 1);
    // one report at the free: the queued instance and the one past the limit together
    CHECK(g_orphan_drops == std::vector<MPI_Count>{2});
}

TEST_CASE("a handle freed inside its own callback: free_cb once, no more events, others unaffected",
          "[events][mpit_events]") {
    Watchdog dog("free in callback");
    for (MPI_T_cb_safety safety : {MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_T_CB_REQUIRE_NONE}) {
        INFO("callback safety " << int(safety));
        EventListener first("request_complete", safety);
        EventListener second("request_complete", safety);
        REQUIRE(first.ok());
        REQUIRE(second.ok());
        first.free_in_next_callback();
        Exchange x(4, 400), y(4, 401);
        MPI_Waitall(2, x.reqs, MPI_STATUSES_IGNORE);
        MPI_Waitall(2, y.reqs, MPI_STATUSES_IGNORE);
        CHECK(first.instances().size() == 1);
        CHECK(first.frees() == 1);
        // deferred: x's second completion was still queued at the free and is reported there;
        // immediate: nothing was queued, and later completions find no handle
        if (safety == MPI_T_CB_REQUIRE_NONE) {
            CHECK(first.dropped() == std::vector<MPI_Count>{1});
        } else {
            CHECK(first.dropped().empty());
        }
        CHECK(second.instances().size() == 4);
        second.free_handle();
        CHECK(second.frees() == 1);
    }
}

TEST_CASE("MPI_T_init_thread/MPI_T_finalize cycles keep the events and their indices",
          "[events][mpit_events]") {
    Watchdog dog("MPI_T cycles");
    int first_num = -1, first_index = -1;
    for (int cycle = 0; cycle < 4; cycle++) {
        INFO("cycle " << cycle);
        EventListener events("request_complete", MPI_T_CB_REQUIRE_MPI_RESTRICTED);
        REQUIRE(events.ok());
        int num = 0;
        MPI_T_event_get_num(&num);
        int index = event_index_of("request_complete");
        if (cycle == 0) {
            first_num = num;
            first_index = index;
        }
        CHECK(num == first_num);
        CHECK(index == first_index);
        Exchange x(4, 500 + cycle);
        MPI_Waitall(2, x.reqs, MPI_STATUSES_IGNORE);
        CHECK(events.completions().size() == 2);
    }
    // a nested MPI_T_init_thread asking for more than the outer one keeps working
    int provided = -1, nested = -1;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_init_thread(MPI_THREAD_MULTIPLE, &nested);
    CHECK(nested == provided);
    int num = 0;
    CHECK(MPI_T_event_get_num(&num) == MPI_SUCCESS);
    MPI_T_finalize();
    MPI_T_finalize();
}

TEST_CASE("grequest_class_wait and grequest_poll match the class's own record", "[events][mpit_events]") {
    Watchdog dog("class events");
    EventListener waits("grequest_class_wait", MPI_T_CB_REQUIRE_MPI_RESTRICTED);
    EventListener polls("grequest_poll", MPI_T_CB_REQUIRE_MPI_RESTRICTED);
    REQUIRE(waits.ok());
    REQUIRE(polls.ok());
    TestClass& cls = TestClass::get();
    cls.wait_calls.clear();
    const int n = 4;
    std::vector<ClassOp> ops(n);
    std::vector<MPI_Request> reqs(n);
    for (int i = 0; i < n; i++) {
        ops[size_t(i)].id = i;
        ops[size_t(i)].deadline = MPI_Wtime() + 0.03;
        reqs[size_t(i)] = cls.allocate(ops[size_t(i)]);
    }
    MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE);
    REQUIRE(!cls.wait_calls.empty());
    REQUIRE(waits.instances().size() == cls.wait_calls.size());
    int completed = 0;
    for (size_t k = 0; k < cls.wait_calls.size(); k++) {
        const auto& ev = waits.instances()[k];
        CHECK(ev.ints[0] == int64_t(cls.handle()));
        CHECK(ev.ints[1] == cls.wait_calls[k].count);
        CHECK(ev.ints[3] == MPI_SUCCESS);
        CHECK(ev.doubles[0] == Approx(cls.wait_calls[k].timeout));
        CHECK(ev.doubles[1] >= 0.0);
        completed += int(ev.ints[2]);
    }
    int polled_complete = 0;
    for (const auto& ev : polls.instances()) {
        CHECK(ev.ints[0] == int64_t(cls.handle()));
        polled_complete += int(ev.ints[2]);
    }
    CHECK(completed + polled_complete == n);
}

TEST_CASE("request_complete_file: ROMIO's nonblocking I/O seen on its file", "[events][mpit_events]") {
    Watchdog dog("file events");
    char path[] = "/tmp/mpit_events_XXXXXX";
    int fd = -1;
    if (world_rank() == 0) fd = mkstemp(path);
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_File fh, other;
    REQUIRE(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh) == MPI_SUCCESS);
    REQUIRE(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &other) ==
            MPI_SUCCESS);
    {
        EventListener on_file("request_complete_file", MPI_T_CB_REQUIRE_MPI_RESTRICTED, &fh);
        REQUIRE(on_file.ok());
        std::vector<int> data(64, world_rank()), back(64, -1);
        MPI_Request w, r;
        MPI_File_iwrite_at(fh, MPI_Offset(world_rank()) * 256, data.data(), 64, MPI_INT, &w);
        MPI_Wait(&w, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_File_iread_at(other, MPI_Offset(world_rank()) * 256, back.data(), 64, MPI_INT, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        CHECK(back == data);
        auto got = on_file.completions();
        REQUIRE(got.size() == 1);  // the write on fh; the read is on the other file
        CHECK(got[0].kind == kGeneralized);
        CHECK(got[0].call == kWait);
        CHECK(got[0].count == 64 * int(sizeof(int)));
    }
    MPI_File_close(&other);
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) {
        close(fd);
        unlink(path);
    }
}

TEST_CASE("request_scan_served: each request MPI_Testany serves, and where the cursor goes next",
          "[events][mpit_events]") {
    Watchdog dog("served events");
    EventListener served("request_scan_served", MPI_T_CB_REQUIRE_MPI_RESTRICTED);
    REQUIRE(served.ok());
    const int n = 4;
    std::vector<MPI_Request> reqs(n);
    for (int i = 0; i < n; i++) {
        MPI_Grequest_start(query_tag77, free_nothing, cancel_nothing, nullptr, &reqs[size_t(i)]);
    }
    std::vector<MPI_Request> handles = reqs;
    for (MPI_Request h : handles) MPI_Grequest_complete(h);
    std::vector<int> order;
    for (int k = 0; k < n; k++) {
        int indx = -1, flag = 0;
        MPI_Testany(n, reqs.data(), &indx, &flag, MPI_STATUS_IGNORE);
        REQUIRE(flag == 1);
        order.push_back(indx);
    }
    const auto& got = served.instances();
    REQUIRE(got.size() == size_t(n));
    for (size_t k = 0; k < got.size(); k++) {
        INFO("call " << k);
        CHECK(got[k].ints[0] == int64_t(reinterpret_cast<intptr_t>(reqs.data())));
        CHECK(got[k].ints[1] == n);
        CHECK(got[k].ints[2] == order[k]);
        CHECK(got[k].ints[3] == (order[k] + 1) % n);
    }
}
