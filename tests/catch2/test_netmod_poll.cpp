// ch4-single-node-netmod-poll-interval: when every process is on this node, ch4 with a shared-memory module polls the
// netmod once in MPIR_CVAR_CH4_SINGLE_NODE_NETMOD_POLL_INTERVAL progress polls. What may still
// meet the netmod between processes of one node completes, each under a watchdog: any-source
// receives (posted to the netmod as well as to shared memory) and their cancellation,
// any-source probes and matched probes; and, in a hidden case run on its own
// (tests/catch2/netmod-switch.catch2) because it switches the process to polling the netmod at every poll for the rest of the run,
// accumulates on windows whose accumulates go through the netmod (disable_shm_accumulate, and a
// window of one process).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"

using namespace reqtest;

namespace {

constexpr const char* kIntervalCvar = "MPIR_CVAR_CH4_SINGLE_NODE_NETMOD_POLL_INTERVAL";

}  // namespace

TEST_CASE("the netmod poll interval is an int control variable, 64 unless the environment sets it",
          "[progress][netmod-poll]") {
    int provided = 0;
    REQUIRE(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS);
    int index = -1;
    REQUIRE(MPI_T_cvar_get_index(kIntervalCvar, &index) == MPI_SUCCESS);
    char name[128];
    char desc[2048];
    int name_len = sizeof name, desc_len = sizeof desc, verbosity = 0, bind = 0, scope = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_T_enum enumtype = MPI_T_ENUM_NULL;
    REQUIRE(MPI_T_cvar_get_info(index, name, &name_len, &verbosity, &type, &enumtype, desc,
                                &desc_len, &bind, &scope) == MPI_SUCCESS);
    CHECK(std::string(name) == kIntervalCvar);
    CHECK(type == MPI_INT);
    CHECK(bind == MPI_T_BIND_NO_OBJECT);
    MPI_T_cvar_handle handle = MPI_T_CVAR_HANDLE_NULL;
    int count = 0, value = -1;
    REQUIRE(MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) == MPI_SUCCESS);
    CHECK(count == 1);
    REQUIRE(MPI_T_cvar_read(handle, &value) == MPI_SUCCESS);
    const char* env = std::getenv(kIntervalCvar);
    CHECK(value == (env ? std::atoi(env) : 64));
    MPI_T_cvar_handle_free(&handle);
    MPI_T_finalize();
}

TEST_CASE("any-source receives, probes and cancels complete between processes of one node",
          "[progress][netmod-poll]") {
    const int rank = world_rank(), size = world_size();
    if (size < 2) {
        SUCCEED("needs two processes");
        return;
    }
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    Watchdog watchdog("any-source traffic with the netmod polled sparsely", 60.0);

    SECTION("MPI_Irecv(MPI_ANY_SOURCE) + MPI_Wait and MPI_Test loops") {
        for (int round = 0; round < 500; ++round) {
            long in = -1, out = 1000L * rank + round;
            MPI_Request recv, send;
            MPI_Irecv(&in, 1, MPI_LONG, MPI_ANY_SOURCE, round, MPI_COMM_WORLD, &recv);
            MPI_Isend(&out, 1, MPI_LONG, next, round, MPI_COMM_WORLD, &send);
            MPI_Status status;
            if (round % 2) {
                REQUIRE(MPI_Wait(&recv, &status) == MPI_SUCCESS);
            } else {
                int flag = 0;
                while (!flag) {
                    REQUIRE(MPI_Test(&recv, &flag, &status) == MPI_SUCCESS);
                }
            }
            REQUIRE(MPI_Wait(&send, MPI_STATUS_IGNORE) == MPI_SUCCESS);
            REQUIRE(recv == MPI_REQUEST_NULL);
            CHECK(status.MPI_SOURCE == prev);
            CHECK(status.MPI_TAG == round);
            CHECK(in == 1000L * prev + round);
        }
    }

    SECTION("MPI_Iprobe and MPI_Improbe(MPI_ANY_SOURCE) find a message a peer sent") {
        for (int round = 0; round < 100; ++round) {
            int out = rank * 100 + round, in = -1, flag = 0;
            MPI_Request send;
            MPI_Isend(&out, 1, MPI_INT, next, 7, MPI_COMM_WORLD, &send);
            MPI_Status status;
            if (round % 2) {
                while (!flag) {
                    REQUIRE(MPI_Iprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &flag, &status) ==
                            MPI_SUCCESS);
                }
                CHECK(status.MPI_SOURCE == prev);
                MPI_Recv(&in, 1, MPI_INT, status.MPI_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Message message = MPI_MESSAGE_NULL;
                while (!flag) {
                    REQUIRE(MPI_Improbe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &flag, &message,
                                        &status) == MPI_SUCCESS);
                }
                CHECK(status.MPI_SOURCE == prev);
                MPI_Mrecv(&in, 1, MPI_INT, &message, MPI_STATUS_IGNORE);
                CHECK(message == MPI_MESSAGE_NULL);
            }
            CHECK(in == prev * 100 + round);
            MPI_Wait(&send, MPI_STATUS_IGNORE);
        }
    }

    SECTION("a cancelled MPI_Irecv(MPI_ANY_SOURCE) that nothing matches reports cancelled") {
        for (int round = 0; round < 50; ++round) {
            int in = -1;
            MPI_Request recv;
            MPI_Irecv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &recv);
            REQUIRE(MPI_Cancel(&recv) == MPI_SUCCESS);
            MPI_Status status;
            REQUIRE(MPI_Wait(&recv, &status) == MPI_SUCCESS);
            CHECK(is_cancelled(status));
            CHECK(in == -1);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

// Hidden: run by itself (tests/catch2/netmod-switch.catch2), as the windows switch the
// process to polling the netmod at every poll.
TEST_CASE("accumulates that bypass shared memory complete with exact results",
          "[.][netmod-switch]") {
    const int rank = world_rank(), size = world_size();
    constexpr int kRounds = 500;
    Watchdog watchdog("accumulates through the netmod", 120.0);

    SECTION("disable_shm_accumulate: every process adds to rank 0's counter") {
        long counter = 0;
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "disable_shm_accumulate", "true");
        MPI_Win win;
        REQUIRE(MPI_Win_create(&counter, sizeof counter, sizeof counter, info, MPI_COMM_WORLD,
                               &win) == MPI_SUCCESS);
        MPI_Info_free(&info);
        long one = 1, previous = -1;
        for (int round = 0; round < kRounds; ++round) {
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
            if (round % 2) {
                MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win);
            } else {
                MPI_Fetch_and_op(&one, &previous, MPI_LONG, 0, 0, MPI_SUM, win);
            }
            MPI_Win_unlock(0, win);
            if (round % 2 == 0) {
                CHECK(previous >= 0);
                CHECK(previous < static_cast<long>(size) * kRounds);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
            CHECK(counter == static_cast<long>(size) * kRounds);
            MPI_Win_unlock(0, win);
        }
        MPI_Win_free(&win);
    }

    SECTION("a window of one process: accumulates to itself") {
        long counter = 0, one = 1;
        MPI_Win win;
        REQUIRE(MPI_Win_create(&counter, sizeof counter, sizeof counter, MPI_INFO_NULL,
                               MPI_COMM_SELF, &win) == MPI_SUCCESS);
        for (int round = 0; round < kRounds; ++round) {
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
            MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win);
            MPI_Win_unlock(0, win);
        }
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        CHECK(counter == kRounds);
        MPI_Win_unlock(0, win);
        MPI_Win_free(&win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}
