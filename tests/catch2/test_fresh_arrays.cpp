// The fairness cursor must not leak from one array to a fresh one that sits at the same address
// (a binding that copies the handles into one buffer per call, a loop reusing a stack array):
// a fresh array always starts at its lowest index, as in stock MPICH and every other MPI, while
// an array whose completed requests are re-posted in place keeps its fairness, even when the
// caller hands MPI a fresh copy of its handles at every call. Rank-local.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <vector>

#include "grequest_support.hpp"
#include "mpi_test_support.hpp"

using namespace reqtest;

namespace {

constexpr int kSlots = 6;

// One any-form call: the index it reports, the request at that index completed (the
// non-destructive forms are followed by MPI_Wait on it, the tools' pattern).
using AnyForm = std::function<int(MPI_Request*, int)>;
// One some-form call: the indices it reports, in the order reported, all completed.
using SomeForm = std::function<std::vector<int>(MPI_Request*, int)>;

int testany(MPI_Request* reqs, int n) {
    int index = -1, flag = 0;
    MPI_Testany(n, reqs, &index, &flag, MPI_STATUS_IGNORE);
    return flag ? index : -2;
}

int waitany(MPI_Request* reqs, int n) {
    int index = -1;
    Watchdog watchdog("MPI_Waitany on a fresh array");
    MPI_Waitany(n, reqs, &index, MPI_STATUS_IGNORE);
    return index;
}

int get_status_any_then_wait(MPI_Request* reqs, int n) {
    int index = -1, flag = 0;
    MPI_Request_get_status_any(n, reqs, &index, &flag, MPI_STATUS_IGNORE);
    if (!flag) {
        return -2;
    }
    if (index != MPI_UNDEFINED) {
        MPI_Wait(&reqs[index], MPI_STATUS_IGNORE);
    }
    return index;
}

std::vector<int> indices(const std::vector<int>& found, int outcount) {
    if (outcount == MPI_UNDEFINED) {
        return {};
    }
    return std::vector<int>(found.begin(), found.begin() + outcount);
}

std::vector<int> testsome(MPI_Request* reqs, int n) {
    std::vector<int> found(static_cast<size_t>(n), -1);
    int outcount = -1;
    MPI_Testsome(n, reqs, &outcount, found.data(), MPI_STATUSES_IGNORE);
    return indices(found, outcount);
}

std::vector<int> waitsome(MPI_Request* reqs, int n) {
    std::vector<int> found(static_cast<size_t>(n), -1);
    int outcount = -1;
    Watchdog watchdog("MPI_Waitsome on a fresh array");
    MPI_Waitsome(n, reqs, &outcount, found.data(), MPI_STATUSES_IGNORE);
    return indices(found, outcount);
}

std::vector<int> get_status_some_then_wait(MPI_Request* reqs, int n) {
    std::vector<int> found(static_cast<size_t>(n), -1);
    int outcount = -1;
    MPI_Request_get_status_some(n, reqs, &outcount, found.data(), MPI_STATUSES_IGNORE);
    std::vector<int> got = indices(found, outcount);
    for (int i : got) {
        MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
    }
    return got;
}

// Completes and frees whatever the buffer still holds, without any any/some call.
void abandon(MPI_Request* reqs, int n, GreqFactory& greqs) {
    for (int i = 0; i < n; i++) {
        GreqState* g = greqs.live(reqs[i]);
        if (g != nullptr && !g->completed) {
            GreqFactory::complete(*g);
        }
    }
    Watchdog watchdog("MPI_Waitall on complete generalized requests");
    MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
}

}  // namespace

TEST_CASE("fresh array in a reused buffer: the any forms report its lowest index", "[scan]") {
    auto form = GENERATE(as<std::string>{}, "MPI_Testany", "MPI_Waitany",
                         "MPI_Request_get_status_any + MPI_Wait");
    AnyForm call = (form == "MPI_Testany")   ? AnyForm(testany)
                   : (form == "MPI_Waitany") ? AnyForm(waitany)
                                             : AnyForm(get_status_any_then_wait);
    INFO(form);
    GreqFactory greqs;
    MPI_Request buf[kSlots];  // the one buffer every array of this test lives in

    for (int round = 0; round < 3; round++) {
        INFO("round " << round);
        for (int i = 0; i < kSlots; i++) {
            buf[i] = greqs.start(i);
        }
        // a fresh array: the lowest complete index, every round
        REQUIRE(call(buf, kSlots) == 0);
        // re-posted in place: the cursor walks on
        buf[0] = greqs.start(0);
        CHECK(call(buf, kSlots) == 1);
        buf[1] = greqs.start(1);
        CHECK(call(buf, kSlots) == 2);
        abandon(buf, kSlots, greqs);
    }
}

TEST_CASE("fresh array in a reused buffer: the some forms report from its lowest index", "[scan]") {
    auto form = GENERATE(as<std::string>{}, "MPI_Testsome", "MPI_Waitsome",
                         "MPI_Request_get_status_some + MPI_Wait");
    SomeForm call = (form == "MPI_Testsome")   ? SomeForm(testsome)
                    : (form == "MPI_Waitsome") ? SomeForm(waitsome)
                                               : SomeForm(get_status_some_then_wait);
    INFO(form);
    GreqFactory greqs;
    MPI_Request buf[kSlots];

    for (int round = 0; round < 3; round++) {
        INFO("round " << round);
        // slots 0 and 1 complete, the others pending: the call leaves the cursor at 2
        for (int i = 0; i < kSlots; i++) {
            buf[i] = greqs.start(i, i < 2);
        }
        REQUIRE(call(buf, kSlots) == std::vector<int>{0, 1});
        abandon(buf, kSlots, greqs);

        // a fresh array, all complete: ascending from 0, not from where the last one stopped
        for (int i = 0; i < kSlots; i++) {
            buf[i] = greqs.start(i);
        }
        CHECK(call(buf, kSlots) == std::vector<int>{0, 1, 2, 3, 4, 5});
    }
}

TEST_CASE("fresh array in a reused buffer: the issue's case, six sends to self, three received", "[scan]") {
    const int self = world_rank();
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_SELF, &comm);
    GreqFactory greqs;
    MPI_Request buf[kSlots];
    int payload[kSlots] = {0, 1, 2, 3, 4, 5};

    // an earlier array at this address, served twice under a flood: its cursor stands at 2
    for (int i = 0; i < kSlots; i++) {
        buf[i] = greqs.start(i);
    }
    REQUIRE(testany(buf, kSlots) == 0);
    buf[0] = greqs.start(0);
    REQUIRE(testany(buf, kSlots) == 1);
    abandon(buf, kSlots, greqs);

    for (int i = 0; i < kSlots; i++) {
        MPI_Isend(&payload[i], 1, MPI_INT, 0, i, comm, &buf[i]);
    }
    for (int i = 0; i < 3; i++) {
        int got = -1;
        MPI_Recv(&got, 1, MPI_INT, 0, i, comm, MPI_STATUS_IGNORE);
        CHECK(got == i);
    }
    // sends 0..2 are matched, so complete; 3..5 may be too (eager): 0 either way
    int index = -1, flag = 0;
    REQUIRE(poll_until([&] {
        MPI_Testany(kSlots, buf, &index, &flag, MPI_STATUS_IGNORE);
        return flag != 0;
    }));
    CHECK(index == 0);
    for (int i = 3; i < kSlots; i++) {
        int got = -1;
        MPI_Recv(&got, 1, MPI_INT, 0, i, comm, MPI_STATUS_IGNORE);
        CHECK(got == i);
    }
    {
        Watchdog watchdog("MPI_Waitall on the sends to self");
        MPI_Waitall(kSlots, buf, MPI_STATUSES_IGNORE);
    }
    (void) self;
    MPI_Comm_free(&comm);
}

TEST_CASE("fresh copy of one array per call (a binding's temporary): fairness is kept", "[scan]") {
    GreqFactory greqs;
    std::vector<MPI_Request> app(kSlots);
    for (int i = 0; i < kSlots; i++) {
        app[static_cast<size_t>(i)] = greqs.start(i);
    }
    MPI_Request tmp[kSlots];
    // the binding: copy in, call, copy back; the application re-posts what completed
    for (int call = 0; call < 2 * kSlots; call++) {
        INFO("call " << call);
        std::copy(app.begin(), app.end(), tmp);
        const int index = testany(tmp, kSlots);
        std::copy(tmp, tmp + kSlots, app.begin());
        REQUIRE(index == call % kSlots);
        app[static_cast<size_t>(index)] = greqs.start(index);
    }
    abandon(app.data(), kSlots, greqs);
}

TEST_CASE("two live arrays copied in turn into one buffer: each call starts at its lowest", "[scan]") {
    GreqFactory greqs;
    std::vector<MPI_Request> x(kSlots), y(kSlots);
    for (int i = 0; i < kSlots; i++) {
        x[static_cast<size_t>(i)] = greqs.start(i);
        y[static_cast<size_t>(i)] = greqs.start(10 + i);
    }
    MPI_Request tmp[kSlots];
    auto through_buffer = [&](std::vector<MPI_Request>& a) {
        std::copy(a.begin(), a.end(), tmp);
        const int index = testany(tmp, kSlots);
        std::copy(tmp, tmp + kSlots, a.begin());
        return index;
    };
    // stock's answer every time: the lowest complete index of the array handed over
    CHECK(through_buffer(x) == 0);
    CHECK(through_buffer(y) == 0);
    CHECK(through_buffer(x) == 1);
    CHECK(through_buffer(y) == 1);
    CHECK(through_buffer(y) == 2);
    CHECK(through_buffer(x) == 2);
    abandon(x.data(), kSlots, greqs);
    abandon(y.data(), kSlots, greqs);
}
