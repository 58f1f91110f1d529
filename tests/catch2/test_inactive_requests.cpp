// Inactive and null requests behave as seed 001 says, in every completion call: flag true and an
// empty status (MPI_ANY_SOURCE, MPI_ANY_TAG, count 0, not cancelled, MPI_ERROR = MPI_SUCCESS),
// waits return at once, the any/some forms skip them. Persistent collectives never started,
// started and completed, freed while inactive; partitioned requests never started; null
// handles. Every wait is under a watchdog: stock MPICH 4.0.2 hangs on the first of these.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"

using namespace reqtest;

namespace {

// An inactive request of one kind, freed at the end of the scope.
struct InactiveRequest {
    std::string kind;
    MPI_Request req = MPI_REQUEST_NULL;
    int buf[4] = {1, 2, 3, 4};
    int out[4] = {0, 0, 0, 0};

    explicit InactiveRequest(const std::string& k, MPI_Comm comm) : kind(k) {
        if (kind == "MPI_Bcast_init") {
            MPI_Bcast_init(buf, 4, MPI_INT, 0, comm, MPI_INFO_NULL, &req);
        } else if (kind == "MPI_Allreduce_init") {
            MPI_Allreduce_init(buf, out, 4, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &req);
        } else if (kind == "MPI_Barrier_init") {
            MPI_Barrier_init(comm, MPI_INFO_NULL, &req);
        } else if (kind == "MPI_Alltoall_init") {
            // one element per process: buf holds 4, enough for -n 4
            MPI_Alltoall_init(buf, 1, MPI_INT, out, 1, MPI_INT, comm, MPI_INFO_NULL, &req);
        } else if (kind == "MPI_Recv_init") {
            MPI_Recv_init(out, 4, MPI_INT, MPI_ANY_SOURCE, 0, comm, &req);
        } else {
            FAIL("unknown kind " << kind);
        }
    }
    ~InactiveRequest() {
        if (req != MPI_REQUEST_NULL) {
            MPI_Request_free(&req);
        }
    }
    InactiveRequest(const InactiveRequest&) = delete;
    InactiveRequest& operator=(const InactiveRequest&) = delete;
};

const char* const kInactiveKinds[] = {"MPI_Bcast_init", "MPI_Allreduce_init", "MPI_Barrier_init",
                                      "MPI_Alltoall_init", "MPI_Recv_init"};

// MPI_Test, MPI_Request_get_status and MPI_Wait on an inactive request: flag true, an empty
// status, the handle kept; each under a watchdog.
void check_single_forms_treat_it_as_inactive(MPI_Request& req) {
    const MPI_Request handle = req;
    int flag = -1;
    MPI_Status st = poisoned_status();
    {
        Watchdog watchdog("MPI_Test on an inactive request");
        CHECK(MPI_Test(&req, &flag, &st) == MPI_SUCCESS);
    }
    CHECK(flag == 1);
    CHECK(is_empty(st));
    CHECK(req == handle);  // a persistent request stays allocated

    st = poisoned_status();
    flag = -1;
    CHECK(MPI_Request_get_status(req, &flag, &st) == MPI_SUCCESS);
    CHECK(flag == 1);
    CHECK(is_empty(st));

    st = poisoned_status();
    {
        Watchdog watchdog("MPI_Wait on an inactive request");
        CHECK(MPI_Wait(&req, &st) == MPI_SUCCESS);
    }
    CHECK(is_empty(st));
    CHECK(req == handle);
}

// Every completion call on {null, inactive}: what seed 001 says, each under a watchdog.
void check_every_call_treats_it_as_inactive(MPI_Request& req) {
    check_single_forms_treat_it_as_inactive(req);
    const MPI_Request handle = req;
    int flag = -1;
    MPI_Status st = poisoned_status();

    MPI_Request two[2] = {MPI_REQUEST_NULL, req};
    auto sts = poisoned_statuses(2);
    flag = -1;
    CHECK(MPI_Testall(2, two, &flag, sts.data()) == MPI_SUCCESS);
    CHECK(flag == 1);
    CHECK(is_empty(sts[0]));
    CHECK(is_empty(sts[1]));

    sts = poisoned_statuses(2);
    flag = -1;
    CHECK(MPI_Request_get_status_all(2, two, &flag, sts.data()) == MPI_SUCCESS);
    CHECK(flag == 1);
    CHECK(is_empty(sts[0]));
    CHECK(is_empty(sts[1]));

    sts = poisoned_statuses(2);
    {
        Watchdog watchdog("MPI_Waitall on null + inactive");
        CHECK(MPI_Waitall(2, two, sts.data()) == MPI_SUCCESS);
    }
    CHECK(is_empty(sts[0]));
    CHECK(is_empty(sts[1]));

    int index = -2;
    st = poisoned_status();
    flag = -1;
    CHECK(MPI_Testany(2, two, &index, &flag, &st) == MPI_SUCCESS);
    CHECK(flag == 1);
    CHECK(index == MPI_UNDEFINED);
    CHECK(is_empty(st));

    index = -2;
    st = poisoned_status();
    flag = -1;
    CHECK(MPI_Request_get_status_any(2, two, &index, &flag, &st) == MPI_SUCCESS);
    CHECK(flag == 1);
    CHECK(index == MPI_UNDEFINED);
    CHECK(is_empty(st));

    index = -2;
    st = poisoned_status();
    {
        Watchdog watchdog("MPI_Waitany on null + inactive");
        CHECK(MPI_Waitany(2, two, &index, &st) == MPI_SUCCESS);
    }
    CHECK(index == MPI_UNDEFINED);
    CHECK(is_empty(st));

    int outcount = -2;
    int indices[2] = {-1, -1};
    CHECK(MPI_Testsome(2, two, &outcount, indices, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    CHECK(outcount == MPI_UNDEFINED);
    outcount = -2;
    CHECK(MPI_Request_get_status_some(2, two, &outcount, indices, MPI_STATUSES_IGNORE) ==
          MPI_SUCCESS);
    CHECK(outcount == MPI_UNDEFINED);
    outcount = -2;
    {
        Watchdog watchdog("MPI_Waitsome on null + inactive");
        CHECK(MPI_Waitsome(2, two, &outcount, indices, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    }
    CHECK(outcount == MPI_UNDEFINED);
    CHECK(two[1] == handle);
}

}  // namespace

TEST_CASE("inactive persistent requests never started behave as null ones in every call", "[scan]") {
    ErrorsReturn errors_return;
    const std::string kind = GENERATE(from_range(std::begin(kInactiveKinds),
                                                 std::end(kInactiveKinds)));
    INFO(kind);
    // every process of the communicator, as a collective *_init wants
    InactiveRequest r(kind, MPI_COMM_WORLD);
    check_every_call_treats_it_as_inactive(r.req);
}

TEST_CASE("a persistent collective started, completed and not restarted is inactive again", "[scan]") {
    ErrorsReturn errors_return;
    int value = world_rank() == 0 ? 42 : -1;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Bcast_init(&value, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    for (int round = 0; round < 2; round++) {
        INFO("round " << round);
        if (world_rank() == 0) {
            value = 42 + round;
        }
        MPI_Start(&req);
        MPI_Status st = poisoned_status();
        {
            Watchdog watchdog("MPI_Wait on a started MPI_Bcast_init");
            CHECK(MPI_Wait(&req, &st) == MPI_SUCCESS);
        }
        CHECK(value == 42 + round);
        check_every_call_treats_it_as_inactive(req);
    }
    CHECK(MPI_Request_free(&req) == MPI_SUCCESS);
    CHECK(req == MPI_REQUEST_NULL);
}

TEST_CASE("a persistent collective freed while inactive, never started", "[scan]") {
    ErrorsReturn errors_return;
    MPI_Request req = MPI_REQUEST_NULL;
    int value = 0;
    MPI_Bcast_init(&value, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    CHECK(MPI_Request_free(&req) == MPI_SUCCESS);
    CHECK(req == MPI_REQUEST_NULL);
    // the communicator is still fine for collectives
    int sum = 0, one = 1;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == world_size());
}

TEST_CASE("inactive partitioned requests (never started) give an empty status", "[scan]") {
    ErrorsReturn errors_return;
    const int rank = world_rank();
    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
    if (pair == MPI_COMM_NULL) {
        return;
    }
    int data[8] = {0};
    MPI_Request req = MPI_REQUEST_NULL;
    if (rank == 0) {
        MPI_Psend_init(data, 2, 4, MPI_INT, 1, 7, pair, MPI_INFO_NULL, &req);
    } else {
        MPI_Precv_init(data, 2, 4, MPI_INT, 0, 7, pair, MPI_INFO_NULL, &req);
    }
    check_single_forms_treat_it_as_inactive(req);
    MPI_Request_free(&req);
    MPI_Comm_free(&pair);
}

TEST_CASE("empty statuses carry MPI_SUCCESS, whatever the caller's status held", "[scan]") {
    auto preset = GENERATE(MPI_ERR_OTHER, MPI_ERR_TRUNCATE, kPoison);
    INFO("preset MPI_ERROR " << preset);
    MPI_Request nulls[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    auto fresh = [preset] {
        MPI_Status s = poisoned_status();
        s.MPI_ERROR = preset;
        return s;
    };
    int flag = -1, index = -2;
    MPI_Status st = fresh();
    MPI_Request_get_status_any(3, nulls, &index, &flag, &st);
    CHECK(index == MPI_UNDEFINED);
    CHECK(is_empty(st));
    st = fresh();
    MPI_Testany(3, nulls, &index, &flag, &st);
    CHECK(is_empty(st));
    st = fresh();
    MPI_Waitany(3, nulls, &index, &st);
    CHECK(is_empty(st));
    st = fresh();
    MPI_Test(&nulls[0], &flag, &st);
    CHECK(is_empty(st));
    st = fresh();
    MPI_Wait(&nulls[0], &st);
    CHECK(is_empty(st));
    st = fresh();
    MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st);
    CHECK(is_empty(st));
    std::vector<MPI_Status> sts(3, fresh());
    MPI_Testall(3, nulls, &flag, sts.data());
    for (const auto& s : sts) {
        CHECK(is_empty(s));
    }
    sts.assign(3, fresh());
    MPI_Request_get_status_all(3, nulls, &flag, sts.data());
    for (const auto& s : sts) {
        CHECK(is_empty(s));
    }
    sts.assign(3, fresh());
    MPI_Waitall(3, nulls, sts.data());
    for (const auto& s : sts) {
        CHECK(is_empty(s));
    }
}
