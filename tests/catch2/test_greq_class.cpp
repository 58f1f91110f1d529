// Generalized request classes (MPIX_Grequest_class_create): polled by the progress engine, one
// batched bounded wait_fn per class in the Wait family, callback errors that reach the caller,
// no deadlock when completion needs communication, and the greq_class_* MPI_T variables.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstring>
#include <chrono>
#include <thread>
#include <limits>
#include <vector>

#include "greq_class_support.hpp"
#include "mpi_test_support.hpp"
#include "mpit_support.hpp"

using namespace reqtest;

namespace {

constexpr double kDefaultTimeoutCap = 0.04;   // MPIR_CVAR_GREQUEST_WAIT_TIMEOUT_MAX's default
constexpr double kSharedTimeoutCap = 0.001;   // the cap while a Waitany also waits for messages

std::vector<MPI_Request> allocate_timed(ClassOps& ops, int n, double from_now) {
    std::vector<MPI_Request> reqs;
    const double deadline = MPI_Wtime() + from_now;
    for (int i = 0; i < n; i++) {
        ClassOp& op = ops.add(100 + i);
        op.deadline = deadline;
        reqs.push_back(TestClass::get().allocate(op));
    }
    return reqs;
}

}  // namespace

TEST_CASE("class requests are polled by the progress engine", "[greq]") {
    ClassOps ops;
    ClassOp& op = ops.add(7);
    op.complete_on_poll = 3;
    MPI_Request req = TestClass::get().allocate(op);

    SECTION("MPI_Iprobe on an unrelated communicator advances it") {
        // (MPICH's probes on a communicator of one process do not poll the progress engine)
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        REQUIRE(poll_until([&] {
            int flag = 0;
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE);
            return op.completed;
        }));
        CHECK(op.polls == 3);
        MPI_Comm_free(&comm);
    }
    SECTION("MPI_Test on an unrelated request advances it") {
        int buf = 0;
        MPI_Request recv;
        MPI_Irecv(&buf, 1, MPI_INT, 0, 99, MPI_COMM_SELF, &recv);
        REQUIRE(poll_until([&] {
            int flag = 0;
            MPI_Test(&recv, &flag, MPI_STATUS_IGNORE);
            return op.completed;
        }));
        CHECK(op.polls == 3);
        MPI_Cancel(&recv);
        MPI_Wait(&recv, MPI_STATUS_IGNORE);
    }
    SECTION("a loop on MPI_Request_get_status sees it complete") {
        int flag = 0;
        MPI_Status st = poisoned_status();
        REQUIRE(poll_until([&] {
            MPI_Request_get_status(req, &flag, &st);
            return flag != 0;
        }));
        CHECK(op.completed);
        CHECK(st.MPI_TAG == 7);
    }
    MPI_Status st = poisoned_status();
    CHECK(MPI_Wait(&req, &st) == MPI_SUCCESS);
    CHECK(req == MPI_REQUEST_NULL);
    CHECK(st.MPI_TAG == 7);
    CHECK(op.frees == 1);
}

TEST_CASE("MPI_Waitall hands all pending requests of a class to one bounded wait_fn call", "[greq]") {
    constexpr int n = 100;
    TestClass& cls = TestClass::get();
    GreqClassPvars pvars;
    REQUIRE(pvars.found("greq_class_completed"));
    const int element = pvars.element_of(cls.handle());
    REQUIRE(element >= 0);
    const size_t e = static_cast<size_t>(element);
    const auto polls_before = pvars.read<unsigned long long>("greq_class_polls")[e];
    const auto waits_before = pvars.read<unsigned long long>("greq_class_waits")[e];
    const auto handed_before = pvars.read<unsigned long long>("greq_class_waited_requests")[e];
    const auto completed_before = pvars.read<unsigned long long>("greq_class_completed")[e];
    const auto wait_time_before = pvars.read<double>("greq_class_wait_time")[e];

    ClassOps ops;
    // 50 ms: longer than the default cap, so the Waitall must come back to wait_fn
    std::vector<MPI_Request> reqs = allocate_timed(ops, n, 0.05);
    cls.wait_calls.clear();
    const double start = MPI_Wtime();
    std::vector<MPI_Status> st = poisoned_statuses(n);
    REQUIRE(MPI_Waitall(n, reqs.data(), st.data()) == MPI_SUCCESS);
    const double elapsed = MPI_Wtime() - start;

    // stock MPICH 4.0.2: 100 calls, each with count 1 and timeout 0
    REQUIRE(cls.wait_calls.size() >= 2);
    CHECK(cls.wait_calls.size() <= 12);
    CHECK(cls.wait_calls.front().count == n);
    int handed = 0;
    for (const WaitCall& call : cls.wait_calls) {
        CHECK(call.count > 1);
        CHECK(call.timeout > 0.0);
        CHECK(call.timeout <= kDefaultTimeoutCap);
        handed += call.count;
    }
    for (int i = 0; i < n; i++) {
        INFO("request " << i);
        CHECK(reqs[static_cast<size_t>(i)] == MPI_REQUEST_NULL);
        CHECK(st[static_cast<size_t>(i)].MPI_TAG == 100 + i);
        CHECK(ops[static_cast<size_t>(i)].completed);
        CHECK(ops[static_cast<size_t>(i)].frees == 1);
    }

    SECTION("the class's MPI_T performance variables tell the same") {
        unsigned long long polls = 0;
        for (size_t i = 0; i < ops.size(); i++) {
            polls += static_cast<unsigned long long>(ops[i].polls);
        }
        CHECK(pvars.read<unsigned long long>("greq_class_completed")[e] - completed_before == n);
        CHECK(pvars.read<unsigned long long>("greq_class_waits")[e] - waits_before ==
              cls.wait_calls.size());
        CHECK(pvars.read<unsigned long long>("greq_class_waited_requests")[e] - handed_before ==
              static_cast<unsigned long long>(handed));
        CHECK(pvars.read<unsigned long long>("greq_class_polls")[e] - polls_before == polls);
        const double wait_time = pvars.read<double>("greq_class_wait_time")[e] - wait_time_before;
        CHECK(wait_time > 0.0);
        CHECK(wait_time <= elapsed);
        const double latency = pvars.read<double>("greq_class_mean_latency")[e];
        CHECK(latency >= 0.004);  // mean over the class: mostly the 50 ms deadlines
        CHECK(latency <= elapsed + 0.001);
        const double timeout = pvars.read<double>("greq_class_wait_timeout")[e];
        CHECK(timeout >= 1e-5);
        CHECK(timeout <= kDefaultTimeoutCap);
    }
}

namespace {

// A message from each rank to the next: the network moves data (the shared-memory cells count
// as progress activity).
void ring_traffic() {
    const int next = (world_rank() + 1) % world_size();
    const int prev = (world_rank() + world_size() - 1) % world_size();
    int out = world_rank(), in = -1;
    REQUIRE(MPI_Sendrecv(&out, 1, MPI_INT, next, 31, &in, 1, MPI_INT, prev, 31, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(in == prev);
}

// MPI_Wait on a class request that is over `lead` seconds after the call starts and is already
// older than the class's mean completion latency (so every wait_fn timeout is the slice bound,
// not the time left until the usual latency); returns the timeouts wait_fn got.
std::vector<double> wait_timeouts_for_late_request(double lead) {
    TestClass& cls = TestClass::get();
    GreqClassPvars pvars;
    const int element = pvars.element_of(cls.handle());
    REQUIRE(element >= 0);
    const double mean = pvars.read<double>("greq_class_mean_latency")[static_cast<size_t>(element)];
    ClassOps ops;
    ClassOp& op = ops.add(5);
    op.deadline = MPI_Wtime() + mean + 0.01 + lead;
    MPI_Request req = cls.allocate(op);
    std::this_thread::sleep_for(std::chrono::duration<double>(mean + 0.01));
    cls.wait_calls.clear();
    REQUIRE(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(op.completed);
    std::vector<double> timeouts;
    for (const WaitCall& call : cls.wait_calls) {
        CHECK(call.count == 1);
        timeouts.push_back(call.timeout);
    }
    return timeouts;
}

}  // namespace

TEST_CASE("wait_fn slices: a quarter of the cap after traffic, doubled while the network is quiet", "[greq]") {
    const double cap = kDefaultTimeoutCap;
    ring_traffic();
    // 10 ms, 20 ms, then 40 ms until the request is over after 100 ms
    std::vector<double> t = wait_timeouts_for_late_request(0.1);
    REQUIRE(t.size() >= 3);
    CHECK(t[0] == Approx(cap / 4).epsilon(1e-9));
    CHECK(t[1] == Approx(cap / 2).epsilon(1e-9));
    for (size_t k = 2; k < t.size(); k++) {
        CHECK(t[k] == Approx(cap).epsilon(1e-9));
    }
    // nothing moved since: the next wait sleeps the whole cap at once
    t = wait_timeouts_for_late_request(0.05);
    REQUIRE_FALSE(t.empty());
    CHECK(t[0] == Approx(cap).epsilon(1e-9));
    // traffic again: back to a quarter
    ring_traffic();
    t = wait_timeouts_for_late_request(0.05);
    REQUIRE(t.size() >= 2);
    CHECK(t[0] == Approx(cap / 4).epsilon(1e-9));
    CHECK(t[1] == Approx(cap / 2).epsilon(1e-9));
}

TEST_CASE("MPIR_CVAR_GREQUEST_WAIT_BATCH and _TIMEOUT_MAX through MPI_T", "[greq]") {
    constexpr int n = 10;
    TestClass& cls = TestClass::get();
    ClassOps ops;

    SECTION("batching off: one request per wait_fn call") {
        CvarSetting<int> batch("MPIR_CVAR_GREQUEST_WAIT_BATCH", 0);
        REQUIRE(batch.ok());
        // due in 30 ms, so they are still pending when MPI_Waitall starts even on a busy machine
        std::vector<MPI_Request> reqs = allocate_timed(ops, n, 0.030);
        cls.wait_calls.clear();
        REQUIRE(MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
        REQUIRE_FALSE(cls.wait_calls.empty());
        for (const WaitCall& call : cls.wait_calls) {
            CHECK(call.count == 1);
        }
    }
    SECTION("a smaller cap bounds every timeout") {
        CvarSetting<double> cap("MPIR_CVAR_GREQUEST_WAIT_TIMEOUT_MAX", 0.0002);
        REQUIRE(cap.ok());
        // due in 30 ms, 150 times the cap: several calls even when the machine is busy
        std::vector<MPI_Request> reqs = allocate_timed(ops, n, 0.030);
        cls.wait_calls.clear();
        REQUIRE(MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
        REQUIRE(cls.wait_calls.size() >= 2);
        for (const WaitCall& call : cls.wait_calls) {
            CHECK(call.timeout <= 0.0002);
            CHECK(call.timeout >= 1e-5);
        }
    }
    SECTION("an infinite or huge cap reaches wait_fn as one slice of 60 s at most") {
        for (const double huge : {std::numeric_limits<double>::infinity(), 1e20}) {
            CvarSetting<double> cap("MPIR_CVAR_GREQUEST_WAIT_TIMEOUT_MAX", huge);
            REQUIRE(cap.ok());
            // later than the class's mean latency: the wait gets the cap
            std::vector<MPI_Request> reqs = allocate_timed(ops, 1, 0.3);
            cls.wait_calls.clear();
            REQUIRE(MPI_Waitall(1, reqs.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
            REQUIRE_FALSE(cls.wait_calls.empty());
            for (const WaitCall& call : cls.wait_calls) {
                INFO("cap " << huge << ", wait_fn timeout " << call.timeout);
                CHECK(call.timeout <= 60.0);
                CHECK(call.timeout >= 1e-5);
            }
        }
    }
}

TEST_CASE("Waitany and Waitsome return as soon as one class request completes", "[greq]") {
    constexpr int n = 6;
    ClassOps ops;
    std::vector<MPI_Request> reqs;
    const double now = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        ClassOp& op = ops.add(i);
        // slot 2 first, the others long after
        op.deadline = now + ((i == 2) ? 0.003 : 30.0);
        reqs.push_back(TestClass::get().allocate(op));
    }
    SECTION("MPI_Waitany") {
        int index = -1;
        MPI_Status st = poisoned_status();
        REQUIRE(MPI_Waitany(n, reqs.data(), &index, &st) == MPI_SUCCESS);
        CHECK(index == 2);
        CHECK(st.MPI_TAG == 2);
    }
    SECTION("MPI_Waitsome") {
        int outcount = -1;
        std::vector<int> indices(n, -1);
        REQUIRE(MPI_Waitsome(n, reqs.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE) ==
                MPI_SUCCESS);
        CHECK(outcount == 1);
        CHECK(indices[0] == 2);
    }
    CHECK(MPI_Wtime() - now < 20.0);
    CHECK(reqs[2] == MPI_REQUEST_NULL);
    for (int i = 0; i < n; i++) {
        CHECK(ops[static_cast<size_t>(i)].completed == (i == 2));
    }
    // finish the others now
    for (int i = 0; i < n; i++) {
        ops[static_cast<size_t>(i)].deadline = 0;
    }
    REQUIRE(MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
}

TEST_CASE("a Waitany or Waitsome that also waits for a message blocks at most 1 ms per wait_fn", "[greq]") {
    const int rank = world_rank();
    REQUIRE(world_size() % 2 == 0);
    const int peer = rank ^ 1;
    constexpr int kTag = 31;
    TestClass& cls = TestClass::get();
    const bool waitsome = GENERATE(false, true);
    INFO((waitsome ? "MPI_Waitsome" : "MPI_Waitany"));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank % 2 == 1) {
        // the message comes 20 ms after the waiter started waiting
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        int value = 1000 + rank;
        MPI_Send(&value, 1, MPI_INT, peer, kTag, MPI_COMM_WORLD);
        return;
    }
    ClassOps ops;
    std::vector<MPI_Request> reqs = allocate_timed(ops, 1, 10.0);
    int value = -1;
    MPI_Request recv;
    MPI_Irecv(&value, 1, MPI_INT, peer, kTag, MPI_COMM_WORLD, &recv);
    reqs.push_back(recv);
    cls.wait_calls.clear();
    int done = -1;
    if (waitsome) {
        int outcount = -1;
        std::vector<int> indices(2, -1);
        REQUIRE(MPI_Waitsome(2, reqs.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE) ==
                MPI_SUCCESS);
        REQUIRE(outcount == 1);
        done = indices[0];
    } else {
        REQUIRE(MPI_Waitany(2, reqs.data(), &done, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    }
    CHECK(done == 1);
    CHECK(value == 1000 + peer);
    CHECK_FALSE(ops[0].completed);
    REQUIRE_FALSE(cls.wait_calls.empty());
    for (const WaitCall& call : cls.wait_calls) {
        CHECK(call.count == 1);
        CHECK(call.timeout <= kSharedTimeoutCap);
    }
    ops[0].deadline = 0;
    CHECK(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(ops[0].frees == 1);
}

TEST_CASE("a failing poll_fn, wait_fn or query_fn reaches the caller, nothing hangs", "[greq]") {
    // The rule: MPI completes and frees only requests whose library called
    // MPI_Grequest_complete; a callback error is reported on the requests completed in that
    // callback call, or, when none was, is the call's error with every request still pending.
    ErrorsReturn errors_return;
    ClassOps ops;

    SECTION("poll_fn error that completes nothing: MPI_Waitall returns it, nothing freed") {
        std::vector<MPI_Request> reqs = allocate_timed(ops, 3, 0.002);
        ops[1].poll_error = MPI_ERR_IO;
        const std::vector<MPI_Request> posted = reqs;
        auto st = poisoned_statuses(3);
        int rc;
        {
            Watchdog watchdog("MPI_Waitall with a failing poll_fn");
            rc = MPI_Waitall(3, reqs.data(), st.data());
        }
        CHECK(error_class(rc) == MPI_ERR_IO);
        CHECK(reqs == posted);
        for (size_t i = 0; i < 3; i++) {
            CHECK(ops[i].frees == 0);
        }
        CHECK_FALSE(ops[1].completed);
        // the library recovers: the same requests complete normally
        ops[1].poll_error = MPI_SUCCESS;
        {
            Watchdog watchdog("MPI_Waitall after the poll_fn recovered");
            CHECK(MPI_Waitall(3, reqs.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
        }
        for (size_t i = 0; i < 3; i++) {
            CHECK(reqs[i] == MPI_REQUEST_NULL);
            CHECK(ops[i].frees == 1);
        }
    }
    SECTION("poll_fn error in MPI_Wait: the call returns it, the request stays pending") {
        ClassOp& op = ops.add(1);
        op.deadline = MPI_Wtime() + 30.0;
        op.poll_error = MPI_ERR_FILE;
        MPI_Request req = TestClass::get().allocate(op);
        const MPI_Request posted = req;
        int rc;
        {
            Watchdog watchdog("MPI_Wait with a failing poll_fn");
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        CHECK(error_class(rc) == MPI_ERR_FILE);
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        CHECK(std::strstr(text, "poll function returned error code") != nullptr);
        CHECK(req == posted);
        CHECK(op.frees == 0);
        op.poll_error = MPI_SUCCESS;
        op.deadline = 0;
        {
            Watchdog watchdog("MPI_Wait after the poll_fn recovered");
            CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        }
        CHECK(req == MPI_REQUEST_NULL);
        CHECK(op.frees == 1);
    }
    SECTION("wait_fn error that completes nothing: the call returns it, both stay pending") {
        std::vector<MPI_Request> reqs = allocate_timed(ops, 2, 30.0);
        ops[0].wait_error = MPI_ERR_OTHER;
        const std::vector<MPI_Request> posted = reqs;
        int rc;
        {
            Watchdog watchdog("MPI_Waitall with a failing wait_fn");
            rc = MPI_Waitall(2, reqs.data(), MPI_STATUSES_IGNORE);
        }
        CHECK(error_class(rc) == MPI_ERR_OTHER);
        CHECK(reqs == posted);
        CHECK_FALSE(ops[0].completed);
        CHECK_FALSE(ops[1].completed);
        CHECK(ops[0].frees == 0);
        CHECK(ops[1].frees == 0);
        ops[0].wait_error = MPI_SUCCESS;
        ops[0].deadline = ops[1].deadline = 0;
        {
            Watchdog watchdog("MPI_Waitall after the wait_fn recovered");
            CHECK(MPI_Waitall(2, reqs.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
        }
        CHECK(ops[0].frees == 1);
        CHECK(ops[1].frees == 1);
    }
    SECTION("A fails at 20 ms, B succeeds at 300 ms: Waitall never frees the running B") {
        ClassOp& a = ops.add(1);
        a.deadline = MPI_Wtime() + 0.020;
        a.error_when_over = MPI_ERR_OTHER;  // completed by the library, and the callback fails
        a.query_error = MPI_ERR_IO;
        ClassOp& b = ops.add(2);
        b.deadline = MPI_Wtime() + 0.300;
        std::vector<MPI_Request> reqs = {TestClass::get().allocate(a),
                                         TestClass::get().allocate(b)};
        const MPI_Request b_handle = reqs[1];
        auto st = poisoned_statuses(2);
        int rc;
        {
            Watchdog watchdog("MPI_Waitall on A (fails) and B (succeeds)");
            rc = MPI_Waitall(2, reqs.data(), st.data());
        }
        CHECK(error_class(rc) == MPI_ERR_IN_STATUS);
        // A's status: the callback error of the call it completed in
        CHECK(error_class(st[0].MPI_ERROR) == MPI_ERR_OTHER);
        CHECK(reqs[0] == MPI_REQUEST_NULL);
        CHECK(a.frees == 1);
        // B: MPICH's Waitall stops at the first failure and leaves it; never freed behind the
        // library's back
        CHECK(error_class(st[1].MPI_ERROR) == MPI_ERR_PENDING);
        CHECK(reqs[1] == b_handle);
        CHECK(b.frees == 0);
        MPI_Status bst = poisoned_status();
        {
            Watchdog watchdog("MPI_Wait on B");
            CHECK(MPI_Wait(&reqs[1], &bst) == MPI_SUCCESS);
        }
        CHECK(b.completed);
        CHECK(bst.MPI_TAG == 2);
        CHECK(b.frees == 1);
    }
    SECTION("a callback error on a request completed in MPI_Wait is that request's error") {
        ClassOp& op = ops.add(3);
        op.deadline = MPI_Wtime() + 0.005;
        op.error_when_over = MPI_ERR_IO;
        MPI_Request req = TestClass::get().allocate(op);
        int rc;
        {
            Watchdog watchdog("MPI_Wait on a request failing when over");
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        CHECK(error_class(rc) == MPI_ERR_IO);
        CHECK(req == MPI_REQUEST_NULL);
        CHECK(op.frees == 1);
    }
    SECTION("query_fn's error class reaches MPI_Waitany") {
        std::vector<MPI_Request> reqs = allocate_timed(ops, 1, 0.001);
        ops[0].query_error = MPI_ERR_IO;
        int index = -1;
        const int rc = MPI_Waitany(1, reqs.data(), &index, MPI_STATUS_IGNORE);
        CHECK(error_class(rc) == MPI_ERR_IO);
        CHECK(index == 0);
    }
}

TEST_CASE("a class request that completes by a message from another rank does not deadlock Wait", "[greq]") {
    const int rank = world_rank();
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, (rank < 2) ? 0 : MPI_UNDEFINED, rank, &comm);
    if (world_size() < 2 || rank > 1) {
        return;
    }
    // rank 0 waits on a class request that completes only when rank 1 acknowledges a 64 MiB
    // message rank 0 sent before waiting: the message needs rank 0's progress inside MPI_Wait
    constexpr size_t kBytes = size_t{64} << 20;
    std::vector<char> data(kBytes);
    alarm(120);  // a deadlock ends the test run instead of hanging it
    if (rank == 0) {
        for (size_t i = 0; i < kBytes; i += 4096) {
            data[i] = static_cast<char>(i >> 12);
        }
        MPI_Request send;
        MPI_Isend(data.data(), static_cast<int>(kBytes), MPI_CHAR, 1, 7, comm, &send);
        ClassOps ops;
        ClassOp& op = ops.add(8);
        int ack = 0;
        MPI_Irecv(&ack, 1, MPI_INT, 1, 8, comm, &op.message);
        MPI_Request req = TestClass::get().allocate(op);
        CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        CHECK(op.completed);
        CHECK(ack == 42);
        MPI_Wait(&send, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(data.data(), static_cast<int>(kBytes), MPI_CHAR, 0, 7, comm, MPI_STATUS_IGNORE);
        bool intact = true;
        for (size_t i = 0; i < kBytes; i += 4096) {
            intact = intact && data[i] == static_cast<char>(i >> 12);
        }
        CHECK(intact);
        int ack = 42;
        MPI_Send(&ack, 1, MPI_INT, 0, 8, comm);
    }
    alarm(0);
    MPI_Comm_free(&comm);
}
