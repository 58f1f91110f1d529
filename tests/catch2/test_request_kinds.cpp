// get_status_* on kinds of requests other than plain receives: cancelled receives, nonblocking and
// persistent collectives, generalized requests (status from query_fn, errors from query_fn).
#include <catch2/catch.hpp>

#include <array>

#include "grequest_support.hpp"
#include "mpi_test_support.hpp"

using namespace reqtest;

TEST_CASE("a cancelled receive is reported cancelled and still needs completing", "[scan]") {
    int buf = 0;
    std::array<MPI_Request, 2> reqs = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Irecv(&buf, 1, MPI_INT, 0, 999, MPI_COMM_SELF, &reqs[1]);
    MPI_Cancel(&reqs[1]);

    int flag = -1, index = -1;
    MPI_Status st = poisoned_status();
    REQUIRE(poll_until([&] {
        MPI_Request_get_status_any(2, reqs.data(), &index, &flag, &st);
        return flag == 1;
    }));
    CHECK(index == 1);
    CHECK(is_cancelled(st));
    CHECK(reqs[1] != MPI_REQUEST_NULL);

    auto all = poisoned_statuses(2);
    MPI_Request_get_status_all(2, reqs.data(), &flag, all.data());
    CHECK(flag == 1);
    CHECK(is_empty(all[0]));
    CHECK(is_cancelled(all[1]));

    MPI_Status w = poisoned_status();
    MPI_Wait(&reqs[1], &w);
    CHECK(is_cancelled(w));
    CHECK(reqs[1] == MPI_REQUEST_NULL);
}

TEST_CASE("a nonblocking collective stays pending until reported, then completes", "[scan]") {
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    const MPI_Request posted = req;
    int flag = -1;
    MPI_Status st = poisoned_status();
    REQUIRE(poll_until([&] {
        MPI_Request_get_status_all(1, &req, &flag, &st);
        return flag == 1;
    }));
    CHECK(req == posted);
    CHECK(st.MPI_ERROR == kPoison);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(req == MPI_REQUEST_NULL);
}

TEST_CASE("a persistent collective stays active after being reported, and restarts", "[scan]") {
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    const MPI_Request handle = req;
    for (int round = 0; round < 2; round++) {
        INFO("round " << round);
        MPI_Start(&req);
        int flag = -1, index = -1;
        REQUIRE(poll_until([&] {
            MPI_Request_get_status_any(1, &req, &index, &flag, MPI_STATUS_IGNORE);
            return flag == 1;
        }));
        CHECK(index == 0);
        MPI_Request_get_status_any(1, &req, &index, &flag, MPI_STATUS_IGNORE);
        CHECK(index == 0);  // still active
        CHECK(req == handle);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        CHECK(req == handle);
        MPI_Request_get_status_any(1, &req, &index, &flag, MPI_STATUS_IGNORE);
        CHECK(flag == 1);
        CHECK(index == MPI_UNDEFINED);  // inactive now
        MPI_Testany(1, &req, &index, &flag, MPI_STATUS_IGNORE);  // stock 4.0.2 said index 0
        CHECK(flag == 1);
        CHECK(index == MPI_UNDEFINED);
        CHECK(req == handle);
    }
    MPI_Request_free(&req);
}

namespace {

// A pending generalized request whose query_fn reports source 3, tag 17, 5 bytes.
GreqState& start_pending(GreqFactory& greqs, MPI_Request& req, int query_error = MPI_SUCCESS) {
    req = greqs.start(17, false, query_error);
    GreqState& g = greqs.last();
    g.source = 3;
    g.bytes = 5;
    return g;
}

}  // namespace

TEST_CASE("a generalized request: its status comes from query_fn, it is freed only by a wait", "[scan]") {
    GreqFactory greqs;
    MPI_Request req = MPI_REQUEST_NULL;
    GreqState& state = start_pending(greqs, req);

    int flag = -1, index = -1, outcount = -1, indices[1] = {-1};
    MPI_Request_get_status_any(1, &req, &index, &flag, MPI_STATUS_IGNORE);
    CHECK(flag == 0);
    CHECK(index == MPI_UNDEFINED);

    GreqFactory::complete(state);
    MPI_Status st = poisoned_status();
    MPI_Request_get_status_any(1, &req, &index, &flag, &st);
    CHECK(flag == 1);
    CHECK(index == 0);
    CHECK(st.MPI_SOURCE == 3);
    CHECK(st.MPI_TAG == 17);
    CHECK(count_of(st, MPI_BYTE) == 5);
    CHECK(state.queries == 1);

    MPI_Request_get_status_some(1, &req, &outcount, indices, &st);
    CHECK(outcount == 1);
    CHECK(indices[0] == 0);
    CHECK(state.queries == 2);  // once per call that reports it
    CHECK(state.frees == 0);
    CHECK(req != MPI_REQUEST_NULL);

    MPI_Status w = poisoned_status();
    MPI_Wait(&req, &w);
    CHECK(w.MPI_TAG == 17);
    CHECK(state.frees == 1);
    CHECK(req == MPI_REQUEST_NULL);
}

TEST_CASE("an error returned by query_fn reaches the caller", "[scan]") {
    ErrorsReturn errors_return;
    GreqFactory greqs;
    std::array<MPI_Request, 1> reqs{};
    GreqState& state = start_pending(greqs, reqs[0], MPI_ERR_OTHER);
    GreqFactory::complete(state);

    int flag = -1, index = -1, outcount = -1, indices[1] = {-1};
    MPI_Status st = poisoned_status();
    int rc = MPI_Request_get_status_any(1, reqs.data(), &index, &flag, &st);
    CHECK(error_class(rc) == MPI_ERR_OTHER);
    CHECK(flag == 1);
    CHECK(index == 0);

    st = poisoned_status();
    rc = MPI_Request_get_status_some(1, reqs.data(), &outcount, indices, &st);
    CHECK(rc == MPI_ERR_IN_STATUS);
    CHECK(outcount == 1);
    CHECK(error_class(st.MPI_ERROR) == MPI_ERR_OTHER);

    st = poisoned_status();
    rc = MPI_Request_get_status_all(1, reqs.data(), &flag, &st);
    CHECK(rc == MPI_ERR_IN_STATUS);
    CHECK(flag == 1);
    CHECK(error_class(st.MPI_ERROR) == MPI_ERR_OTHER);
    CHECK(state.frees == 0);

    rc = MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    CHECK(error_class(rc) == MPI_ERR_OTHER);
    CHECK(state.frees == 1);
}

TEST_CASE("a partitioned receive stays active after being reported; MPI_Wait gets its status", "[scan]") {
    constexpr int partitions = 4, per_partition = 2, tag = 31;
    const int rank = world_rank();
    if (rank > 1) {
        return;  // ranks 0 and 1 only
    }
    std::array<int, partitions * per_partition> buf{};
    MPI_Request req = MPI_REQUEST_NULL;
    if (rank == 0) {
        MPI_Psend_init(buf.data(), partitions, per_partition, MPI_INT, 1, tag, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &req);
    } else {
        MPI_Precv_init(buf.data(), partitions, per_partition, MPI_INT, 0, tag, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &req);
    }
    const MPI_Request handle = req;
    for (int round = 0; round < 2; round++) {
        INFO("round " << round);
        if (rank == 0) {
            for (int i = 0; i < partitions * per_partition; i++) {
                buf[static_cast<size_t>(i)] = 100 * round + i;
            }
        }
        MPI_Start(&req);
        if (rank == 0) {
            MPI_Pready_range(0, partitions - 1, req);
        }
        int flag = 0, index = -1;
        MPI_Status st = poisoned_status();
        REQUIRE(poll_until([&] {
            MPI_Request_get_status_any(1, &req, &index, &flag, &st);
            return flag != 0;
        }));
        CHECK(index == 0);
        CHECK(req == handle);
        MPI_Status again = poisoned_status();
        MPI_Request_get_status_all(1, &req, &flag, &again);
        CHECK(flag == 1);
        MPI_Status w = poisoned_status();
        MPI_Wait(&req, &w);
        CHECK(req == handle);
        if (rank == 1) {
            CHECK(st.MPI_SOURCE == 0);
            CHECK(st.MPI_TAG == tag);
            CHECK(count_of(st, MPI_INT) == partitions * per_partition);
            CHECK(again.MPI_TAG == tag);
            CHECK(w.MPI_SOURCE == 0);
            CHECK(w.MPI_TAG == tag);
            CHECK(count_of(w, MPI_INT) == partitions * per_partition);
            CHECK(buf[7] == 100 * round + 7);
        }
        // inactive now: the any form skips it
        MPI_Request_get_status_any(1, &req, &index, &flag, MPI_STATUS_IGNORE);
        CHECK(flag == 1);
        CHECK(index == MPI_UNDEFINED);
    }
    MPI_Request_free(&req);
}
