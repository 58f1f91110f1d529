// The fairness cursor shared by MPI_Testany/Waitany/Testsome/Waitsome and
// MPI_Request_get_status_any/_some (MPIR_CVAR_REQUEST_SCAN_ORDER). Rank-local: every rank runs
// the same cases on its own generalized requests, so every answer is exact.
#include <catch2/catch.hpp>

#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "mpi_test_support.hpp"
#include "scan_order_support.hpp"

using namespace reqtest;

namespace {

// The index MPI_Testany completes; the slot gets a fresh complete request.
int testany_and_repost(CompleteArray& a) {
    int index = -1, flag = 0;
    MPI_Testany(a.size(), a.data(), &index, &flag, MPI_STATUS_IGNORE);
    if (flag && index != MPI_UNDEFINED) {
        a.repost(index);
    }
    return index;
}

// The same through the tool pattern: get_status_any, then MPI_Test on the reported index.
int get_status_test_and_repost(CompleteArray& a) {
    int index = -1, flag = 0;
    MPI_Request_get_status_any(a.size(), a.data(), &index, &flag, MPI_STATUS_IGNORE);
    if (flag && index != MPI_UNDEFINED) {
        int done = 0;
        MPI_Test(&a[index], &done, MPI_STATUS_IGNORE);
        if (!done) {
            return -2;  // reported complete, but MPI_Test did not complete it
        }
        a.repost(index);
    }
    return index;
}

}  // namespace

TEST_CASE("scan cursor: under a flood every complete request is reported within count calls", "[scan]") {
    ScanOrder order;
    REQUIRE(order.found());
    REQUIRE(order.get() == kScanRotate);
    constexpr int n = 8;

    SECTION("MPI_Testany") {
        CompleteArray a(n);
        for (int call = 0; call < 4 * n; call++) {
            INFO("call " << call);
            REQUIRE(testany_and_repost(a) == call % n);
        }
    }
    SECTION("MPI_Request_get_status_any + MPI_Test") {
        CompleteArray a(n);
        for (int call = 0; call < 4 * n; call++) {
            INFO("call " << call);
            REQUIRE(get_status_test_and_repost(a) == call % n);
        }
    }
    SECTION("MPI_Waitany") {
        CompleteArray a(n);
        for (int call = 0; call < 4 * n; call++) {
            int index = -1;
            MPI_Waitany(n, a.data(), &index, MPI_STATUS_IGNORE);
            INFO("call " << call);
            REQUIRE(index == call % n);
            a.repost(index);
        }
    }
    SECTION("lowest first, as stock MPICH: slot 0 wins every call") {
        REQUIRE(order.set(kScanLowest) == MPI_SUCCESS);
        CompleteArray a(n);
        for (int call = 0; call < 4 * n; call++) {
            INFO("call " << call);
            REQUIRE(testany_and_repost(a) == 0);
            REQUIRE(get_status_test_and_repost(a) == 0);
        }
    }
}

TEST_CASE("scan cursor: a first call on a new array reports the lowest complete index", "[scan]") {
    CompleteArray a(8);
    REQUIRE(testany_and_repost(a) == 0);
    REQUIRE(testany_and_repost(a) == 1);
    REQUIRE(testany_and_repost(a) == 2);

    // another array, while a's cursor stands at 3
    CompleteArray b(6);
    b.drain();
    b.post_pending(0);
    b.repost(2);
    b.post_pending(3);
    b.repost(4);
    int index = -1, flag = 0;
    MPI_Request_get_status_any(6, b.data(), &index, &flag, MPI_STATUS_IGNORE);
    CHECK(flag == 1);
    CHECK(index == 2);
    MPI_Testany(6, b.data(), &index, &flag, MPI_STATUS_IGNORE);
    CHECK(index == 2);
    MPI_Testany(6, b.data(), &index, &flag, MPI_STATUS_IGNORE);
    CHECK(index == 4);

    // a kept its own cursor
    REQUIRE(testany_and_repost(a) == 3);

    // once a call has seen a all null, the array starts again at index 0
    a.drain();
    for (int i = 0; i < 8; i++) {
        a.repost(i);
    }
    REQUIRE(testany_and_repost(a) == 0);
}

TEST_CASE("scan cursor: get_status_any does not move it; completing the reported request does", "[scan]") {
    CompleteArray a(5);
    REQUIRE(testany_and_repost(a) == 0);

    int index = -1, flag = 0;
    for (int repeat = 0; repeat < 3; repeat++) {
        MPI_Request_get_status_any(5, a.data(), &index, &flag, MPI_STATUS_IGNORE);
        CHECK(index == 1);
    }
    int some = -1;
    std::vector<int> indices(5, -1);
    MPI_Request_get_status_some(5, a.data(), &some, indices.data(), MPI_STATUSES_IGNORE);
    CHECK(some == 5);
    CHECK(indices == std::vector<int>{1, 2, 3, 4, 0});

    // the application completes the reported request with MPI_Wait: the next call, of
    // either kind, reports what MPI_Testany would have reported after completing index 1
    MPI_Request_get_status_any(5, a.data(), &index, &flag, MPI_STATUS_IGNORE);
    REQUIRE(index == 1);
    MPI_Wait(&a[1], MPI_STATUS_IGNORE);
    a.repost(1);  // the recycled request object goes back into the same slot
    MPI_Request_get_status_any(5, a.data(), &index, &flag, MPI_STATUS_IGNORE);
    CHECK(index == 2);
    REQUIRE(testany_and_repost(a) == 2);
}

TEST_CASE("scan cursor: get_status_any + MPI_Test walks exactly as MPI_Testany does", "[scan]") {
    // Two arrays in identical states; one is driven by MPI_Testany, the other by the tool
    // pattern, with the same random completions and re-posts. Every answer must agree.
    constexpr int n = 7;
    CompleteArray plain(n), wrapped(n);
    plain.drain();
    wrapped.drain();
    std::mt19937 rng(20261122);
    std::vector<bool> complete(n);
    for (int i = 0; i < n; i++) {
        complete[static_cast<size_t>(i)] = (rng() % 2) != 0;
        if (complete[static_cast<size_t>(i)]) {
            plain.repost(i);
            wrapped.repost(i);
        } else {
            plain.post_pending(i);
            wrapped.post_pending(i);
        }
    }
    for (int step = 0; step < 400; step++) {
        INFO("step " << step);
        // sometimes a pending request completes, the same one in both arrays
        if (rng() % 3 == 0) {
            const int i = static_cast<int>(rng() % n);
            for (CompleteArray* a : {&plain, &wrapped}) {
                GreqState* g = a->greqs().live((*a)[i]);
                if (g != nullptr && !g->completed) {
                    GreqFactory::complete(*g);
                }
            }
        }
        int pi = -1, pflag = 0;
        MPI_Testany(n, plain.data(), &pi, &pflag, MPI_STATUS_IGNORE);
        int wi = -1, wflag = 0;
        MPI_Request_get_status_any(n, wrapped.data(), &wi, &wflag, MPI_STATUS_IGNORE);
        REQUIRE(wflag == pflag);
        REQUIRE(wi == pi);
        if (wflag && wi != MPI_UNDEFINED) {
            int done = 0;
            MPI_Test(&wrapped[wi], &done, MPI_STATUS_IGNORE);
            REQUIRE(done == 1);
            const bool next_complete = (rng() % 4) != 0;
            for (CompleteArray* a : {&plain, &wrapped}) {
                if (next_complete) {
                    a->repost(wi);
                } else {
                    a->post_pending(wi);
                }
            }
        }
    }
}

TEST_CASE("scan cursor: get_status_some + MPI_Test on each reported walks exactly as MPI_Testsome does", "[scan]") {
    // The _some twin of the case above: the tool pattern reports every complete request, then
    // completes each with MPI_Test; the cursor must end where MPI_Testsome leaves it.
    constexpr int n = 6;
    CompleteArray plain(n), wrapped(n);
    plain.drain();
    wrapped.drain();
    std::mt19937 rng(20261125);
    for (int i = 0; i < n; i++) {
        const bool complete = (rng() % 2) != 0;
        for (CompleteArray* a : {&plain, &wrapped}) {
            if (complete) {
                a->repost(i);
            } else {
                a->post_pending(i);
            }
        }
    }
    for (int step = 0; step < 400; step++) {
        INFO("step " << step);
        for (int c = static_cast<int>(rng() % 3); c > 0; c--) {
            const int i = static_cast<int>(rng() % n);
            for (CompleteArray* a : {&plain, &wrapped}) {
                GreqState* g = a->greqs().live((*a)[i]);
                if (g != nullptr && !g->completed) {
                    GreqFactory::complete(*g);
                }
            }
        }
        int pout = -1, wout = -1;
        std::vector<int> pidx(n, -1), widx(n, -1);
        MPI_Testsome(n, plain.data(), &pout, pidx.data(), MPI_STATUSES_IGNORE);
        MPI_Request_get_status_some(n, wrapped.data(), &wout, widx.data(), MPI_STATUSES_IGNORE);
        REQUIRE(wout == pout);
        for (int j = 0; j < wout; j++) {
            REQUIRE(widx[static_cast<size_t>(j)] == pidx[static_cast<size_t>(j)]);
            int done = 0;
            MPI_Test(&wrapped[widx[static_cast<size_t>(j)]], &done, MPI_STATUS_IGNORE);
            REQUIRE(done == 1);
        }
        for (int j = 0; j < wout; j++) {
            const int i = widx[static_cast<size_t>(j)];
            const bool next_complete = (rng() % 3) != 0;
            for (CompleteArray* a : {&plain, &wrapped}) {
                if (next_complete) {
                    a->repost(i);
                } else {
                    a->post_pending(i);
                }
            }
        }
    }
}

TEST_CASE("scan cursor: a flood on a sparse array reports each of its requests in turn", "[scan]") {
    // Two requests in 16 slots, far apart, both complete at every call: the cursor must find
    // the other one to remember the array by, wherever it sits, or slot 0 would win every call.
    constexpr int n = 16;
    for (const int far : {12, 9, 15}) {
        for (const bool tool_pattern : {false, true}) {
            INFO("second request at " << far << (tool_pattern ? ", get_status_any + MPI_Test"
                                                               : ", MPI_Testany"));
            CompleteArray a(n);
            for (int i = 0; i < n; i++) {
                if (i != 0 && i != far) {
                    MPI_Wait(&a[i], MPI_STATUS_IGNORE);
                }
            }
            int at_zero = 0, at_far = 0;
            for (int call = 0; call < 20; call++) {
                const int index = tool_pattern ? get_status_test_and_repost(a) : testany_and_repost(a);
                at_zero += index == 0;
                at_far += index == far;
            }
            CHECK(at_zero == 10);
            CHECK(at_far == 10);
        }
    }
}

TEST_CASE("scan cursor: a fresh array of requests complete at creation starts at index 0", "[scan]") {
    // Sends to MPI_PROC_NULL complete at creation; MPICH may give them all one shared object,
    // which must never be taken for the request an earlier array left in the same slot.
    for (int round = 0; round < 4; round++) {
        INFO("round " << round);
        MPI_Request r[4];
        const int payload = 0;
        for (auto& req : r) {
            MPI_Isend(&payload, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_SELF, &req);
        }
        int index = -1;
        MPI_Waitany(4, r, &index, MPI_STATUS_IGNORE);
        CHECK(index == 0);
        for (int i = 0; i < 4; i++) {
            if (i != index && r[i] != MPI_REQUEST_NULL) {
                MPI_Request_free(&r[i]);
            }
        }
    }
}

TEST_CASE("scan cursor: MPI_Testsome and MPI_Waitsome report from it, in scan order", "[scan]") {
    CompleteArray a(8);
    REQUIRE(testany_and_repost(a) == 0);
    REQUIRE(testany_and_repost(a) == 1);

    std::vector<int> indices(8, -1);
    int outcount = -1;
    MPI_Testsome(8, a.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE);
    REQUIRE(outcount == 8);
    CHECK(indices == std::vector<int>{2, 3, 4, 5, 6, 7, 0, 1});
    for (int i : indices) {
        a.repost(i);
    }
    // every request was served and re-posted: nothing tells this array from a fresh one, which
    // starts at 0 (test_fresh_arrays.cpp)
    REQUIRE(testany_and_repost(a) == 0);

    // the array seen all null starts afresh: three complete, at 1, 4 and 6
    a.drain();
    for (int i = 0; i < 8; i++) {
        a.post_pending(i);
    }
    for (int i : {1, 4, 6}) {
        GreqFactory::complete(*a.greqs().live(a[i]));
    }
    int index = -1, flag = 0;
    MPI_Testany(8, a.data(), &index, &flag, MPI_STATUS_IGNORE);
    REQUIRE(index == 1);  // lowest first; the cursor now stands at 2
    a.post_pending(1);
    GreqFactory::complete(*a.greqs().live(a[1]));
    std::vector<MPI_Status> statuses(8);
    MPI_Waitsome(8, a.data(), &outcount, indices.data(), statuses.data());
    REQUIRE(outcount == 3);
    CHECK(std::vector<int>(indices.begin(), indices.begin() + 3) == std::vector<int>{4, 6, 1});
    CHECK(statuses[0].MPI_TAG == 4);
    CHECK(statuses[1].MPI_TAG == 6);
    CHECK(statuses[2].MPI_TAG == 1);
}

TEST_CASE("scan cursor: the policy is an MPI_T control variable", "[scan]") {
    ScanOrder order;
    REQUIRE(order.found());
    char name[128], desc[1024];
    int name_len = sizeof name, desc_len = sizeof desc;
    int verbosity = -1, bind = -1, scope = -1;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_T_enum enumtype;
    REQUIRE(MPI_T_cvar_get_info(order.index(), name, &name_len, &verbosity, &type, &enumtype, desc,
                                &desc_len, &bind, &scope) == MPI_SUCCESS);
    CHECK(std::string(name) == "MPIR_CVAR_REQUEST_SCAN_ORDER");
    CHECK(type == MPI_INT);
    CHECK(bind == MPI_T_BIND_NO_OBJECT);
    CHECK(std::string(desc).find("rotate") != std::string::npos);
    CHECK(std::string(desc).find("lowest") != std::string::npos);
    CHECK(order.get() == kScanRotate);

    REQUIRE(order.set(kScanLowest) == MPI_SUCCESS);
    CHECK(order.get() == kScanLowest);
    {
        CompleteArray a(4);
        CHECK(testany_and_repost(a) == 0);
        CHECK(testany_and_repost(a) == 0);
    }
    REQUIRE(order.set(kScanRotate) == MPI_SUCCESS);
    {
        CompleteArray a(4);
        CHECK(testany_and_repost(a) == 0);
        CHECK(testany_and_repost(a) == 1);
    }
}

TEST_CASE("scan cursor: threads polling their own arrays and one shared array", "[scan]") {
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    REQUIRE(provided == MPI_THREAD_MULTIPLE);
    constexpr int n = 6, calls = 300, threads = 3;

    SECTION("each thread its own array: each sees its own rotation") {
        std::vector<int> wrong(threads, 0);
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; t++) {
            pool.emplace_back([t, &wrong] {
                CompleteArray a(n);
                for (int call = 0; call < calls; call++) {
                    const int index = (t % 2 == 0) ? testany_and_repost(a)
                                                   : get_status_test_and_repost(a);
                    if (index != call % n) {
                        wrong[static_cast<size_t>(t)]++;
                    }
                }
            });
        }
        for (auto& th : pool) {
            th.join();
        }
        CHECK(wrong == std::vector<int>(threads, 0));
    }
    SECTION("one array shared, each step under the application's lock") {
        CompleteArray a(n);
        std::mutex lock;
        std::vector<int> served;
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; t++) {
            pool.emplace_back([t, &a, &lock, &served] {
                for (int call = 0; call < calls; call++) {
                    std::lock_guard<std::mutex> guard(lock);
                    served.push_back(t % 2 == 0 ? testany_and_repost(a)
                                                : get_status_test_and_repost(a));
                }
            });
        }
        for (auto& th : pool) {
            th.join();
        }
        REQUIRE(served.size() == static_cast<size_t>(threads * calls));
        int out_of_turn = 0;
        for (size_t k = 0; k < served.size(); k++) {
            if (served[k] != static_cast<int>(k % n)) {
                out_of_turn++;
            }
        }
        CHECK(out_of_turn == 0);
    }
}

TEST_CASE("scan cursor: get_status_any + completion walks as MPI_Testany over requests complete at creation", "[scan]") {
    // Sends to and receives from MPI_PROC_NULL are builtin requests (one object shared by all,
    // complete at creation). The tool pattern must move the cursor past the request it completed
    // whichever completion call and status argument it uses (the fast path of sends and
    // receives with MPI_STATUS_IGNORE included), as MPI_Testany does.
    const bool sends = GENERATE(true, false);
    const int completion = GENERATE(0, 1, 2, 3);  // MPI_Test/MPI_Wait x ignored/given status
    constexpr int n = 4, kSteps = 24, kNeverSentTag = 4713;
    CAPTURE(sends, completion);
    int payload = 7, sink = 0, pending_buffer[2] = {0, 0};
    auto post = [&](MPI_Request& r) {
        if (sends) {
            MPI_Isend(&payload, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_SELF, &r);
        } else {
            MPI_Irecv(&sink, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_SELF, &r);
        }
    };
    std::vector<MPI_Request> plain(n), wrapped(n);
    for (int i = 0; i < n - 1; i++) {
        post(plain[static_cast<size_t>(i)]);
        post(wrapped[static_cast<size_t>(i)]);
    }
    MPI_Irecv(&pending_buffer[0], 1, MPI_INT, 0, kNeverSentTag, MPI_COMM_SELF, &plain[n - 1]);
    MPI_Irecv(&pending_buffer[1], 1, MPI_INT, 0, kNeverSentTag, MPI_COMM_SELF, &wrapped[n - 1]);

    std::vector<int> seen(n, 0);
    for (int step = 0; step < kSteps; step++) {
        INFO("step " << step);
        int pi = -1, pflag = 0;
        MPI_Testany(n, plain.data(), &pi, &pflag, MPI_STATUS_IGNORE);
        int wi = -1, wflag = 0;
        MPI_Request_get_status_any(n, wrapped.data(), &wi, &wflag, MPI_STATUS_IGNORE);
        REQUIRE(pflag == 1);
        REQUIRE(wflag == 1);
        REQUIRE(wi == pi);
        REQUIRE(pi >= 0);
        REQUIRE(pi < n - 1);
        seen[static_cast<size_t>(pi)]++;
        MPI_Status status;
        MPI_Status* status_arg = (completion % 2 == 0) ? MPI_STATUS_IGNORE : &status;
        if (completion < 2) {
            int done = 0;
            MPI_Test(&wrapped[static_cast<size_t>(wi)], &done, status_arg);
            REQUIRE(done == 1);
        } else {
            MPI_Wait(&wrapped[static_cast<size_t>(wi)], status_arg);
        }
        REQUIRE(wrapped[static_cast<size_t>(wi)] == MPI_REQUEST_NULL);
        post(plain[static_cast<size_t>(pi)]);
        post(wrapped[static_cast<size_t>(wi)]);
    }
    // a flood of n - 1 complete requests: each reported kSteps / (n - 1) times
    for (int i = 0; i < n - 1; i++) {
        CHECK(seen[static_cast<size_t>(i)] == kSteps / (n - 1));
    }
    for (auto* a : {&plain, &wrapped}) {
        MPI_Cancel(&(*a)[n - 1]);
        MPI_Waitall(n, a->data(), MPI_STATUSES_IGNORE);
    }
}
