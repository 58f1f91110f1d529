// MPI_Request_free on nonblocking collective and request-based RMA requests, as MPICH accepts it
// since 4.2: a complete one (reported by MPI_Request_get_status*) is freed; an active one is
// refused with MPI_ERR_REQUEST and stays usable.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <thread>

#include "mpi_test_support.hpp"

using namespace reqtest;

TEST_CASE("MPI_Request_free: a nonblocking collective reported complete by get_status", "[scan]") {
    ErrorsReturn errors_return;
    int value = world_rank() == 0 ? 17 : 0;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Ibcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD, &req);
    int flag = 0;
    REQUIRE(poll_until([&] {
        MPI_Request_get_status_all(1, &req, &flag, MPI_STATUSES_IGNORE);
        return flag != 0;
    }));
    CHECK(MPI_Request_free(&req) == MPI_SUCCESS);
    CHECK(req == MPI_REQUEST_NULL);
    CHECK(value == 17);

    // a derived datatype the collective held is released with it (no leak, still usable)
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    int two[2] = {world_rank(), world_rank()};
    int all[8] = {0};
    MPI_Iallgather(two, 1, pair, all, 1, pair, MPI_COMM_WORLD, &req);
    MPI_Type_free(&pair);
    REQUIRE(poll_until([&] {
        int index = -1;
        MPI_Request_get_status_any(1, &req, &index, &flag, MPI_STATUS_IGNORE);
        return flag != 0;
    }));
    CHECK(MPI_Request_free(&req) == MPI_SUCCESS);
    for (int r = 0; r < world_size() && r < 4; r++) {
        CHECK(all[2 * r] == r);
        CHECK(all[2 * r + 1] == r);
    }
}

TEST_CASE("MPI_Request_free: an active nonblocking collective is refused, and still completes", "[scan]") {
    ErrorsReturn errors_return;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Request req = MPI_REQUEST_NULL;
    if (world_rank() == 0) {
        // the others enter the barrier 300 ms later: it cannot be complete yet
        MPI_Ibarrier(comm, &req);
        const int rc = MPI_Request_free(&req);
        CHECK(error_class(rc) == MPI_ERR_REQUEST);
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        CHECK(std::strstr(text, "cannot be freed") != nullptr);
        REQUIRE(req != MPI_REQUEST_NULL);
        Watchdog watchdog("MPI_Wait on the refused MPI_Ibarrier");
        CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        MPI_Ibarrier(comm, &req);
        Watchdog watchdog("MPI_Wait on MPI_Ibarrier");
        CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    }
    CHECK(req == MPI_REQUEST_NULL);
    MPI_Comm_free(&comm);
}

TEST_CASE("MPI_Request_free: a complete MPI_Rput request", "[scan]") {
    ErrorsReturn errors_return;
    int* base = nullptr;
    MPI_Win win;
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    *base = -1;
    MPI_Barrier(MPI_COMM_WORLD);  // no put may land before its target has set -1
    MPI_Win_lock_all(0, win);
    const int target = (world_rank() + 1) % world_size();
    int value = world_rank();
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Rput(&value, 1, MPI_INT, target, 0, 1, MPI_INT, win, &req);
    int flag = 0;
    REQUIRE(poll_until([&] {
        MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE);
        return flag != 0;
    }));
    CHECK(MPI_Request_free(&req) == MPI_SUCCESS);
    CHECK(req == MPI_REQUEST_NULL);
    MPI_Win_flush_all(win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(*base == (world_rank() + world_size() - 1) % world_size());
    MPI_Win_free(&win);
}
