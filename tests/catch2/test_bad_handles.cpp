// A handle that is not a request in an array of requests: every array form returns
// MPI_ERR_REQUEST through the error handler and leaves the array's other requests as they were.
// Arrays longer than MPIR_REQUEST_PTR_ARRAY_SIZE (64) made stock 4.0.2 (and Debian's
// 4.0.2-3) free its on-stack pointer array there: "free(): invalid pointer", abort.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"

using namespace reqtest;

namespace {

using ArrayForm = std::function<int(std::vector<MPI_Request>&)>;

struct NamedForm {
    const char* name;
    ArrayForm call;
};

std::vector<NamedForm> array_forms() {
    return {
        {"MPI_Testany", [](std::vector<MPI_Request>& r) {
             int index = -1, flag = -1;
             return MPI_Testany(static_cast<int>(r.size()), r.data(), &index, &flag, MPI_STATUS_IGNORE);
         }},
        {"MPI_Waitany", [](std::vector<MPI_Request>& r) {
             int index = -1;
             return MPI_Waitany(static_cast<int>(r.size()), r.data(), &index, MPI_STATUS_IGNORE);
         }},
        {"MPI_Testsome", [](std::vector<MPI_Request>& r) {
             std::vector<int> indices(r.size());
             int outcount = -1;
             return MPI_Testsome(static_cast<int>(r.size()), r.data(), &outcount, indices.data(),
                                 MPI_STATUSES_IGNORE);
         }},
        {"MPI_Waitsome", [](std::vector<MPI_Request>& r) {
             std::vector<int> indices(r.size());
             int outcount = -1;
             return MPI_Waitsome(static_cast<int>(r.size()), r.data(), &outcount, indices.data(),
                                 MPI_STATUSES_IGNORE);
         }},
        {"MPI_Testall", [](std::vector<MPI_Request>& r) {
             int flag = -1;
             return MPI_Testall(static_cast<int>(r.size()), r.data(), &flag, MPI_STATUSES_IGNORE);
         }},
        {"MPI_Waitall", [](std::vector<MPI_Request>& r) {
             return MPI_Waitall(static_cast<int>(r.size()), r.data(), MPI_STATUSES_IGNORE);
         }},
        {"MPI_Request_get_status_any", [](std::vector<MPI_Request>& r) {
             int index = -1, flag = -1;
             return MPI_Request_get_status_any(static_cast<int>(r.size()), r.data(), &index, &flag,
                                               MPI_STATUS_IGNORE);
         }},
        {"MPI_Request_get_status_some", [](std::vector<MPI_Request>& r) {
             std::vector<int> indices(r.size());
             int outcount = -1;
             return MPI_Request_get_status_some(static_cast<int>(r.size()), r.data(), &outcount,
                                                indices.data(), MPI_STATUSES_IGNORE);
         }},
        {"MPI_Request_get_status_all", [](std::vector<MPI_Request>& r) {
             int flag = -1;
             return MPI_Request_get_status_all(static_cast<int>(r.size()), r.data(), &flag,
                                               MPI_STATUSES_IGNORE);
         }},
    };
}

}  // namespace

TEST_CASE("a handle of another kind in a request array: MPI_ERR_REQUEST, the other requests kept", "[scan]") {
    ErrorsReturn errors_return;
    const int count = GENERATE(3, 64, 65, 100, 1000);
    const int bad_at = GENERATE(0, 2);   // 0: before the pending receive, 2: after it
    constexpr int kNeverSentTag = 4711;
    for (const auto& form : array_forms()) {
        CAPTURE(form.name, count, bad_at);
        std::vector<MPI_Request> r(count, MPI_REQUEST_NULL);
        int buffer = -1;
        MPI_Irecv(&buffer, 1, MPI_INT, 0, kNeverSentTag, MPI_COMM_SELF, &r[1]);
        const MPI_Request pending = r[1];
        // a communicator handle where a request belongs
        r[bad_at == 0 ? 0 : count - 1] = static_cast<MPI_Request>(MPI_COMM_WORLD);
        const int rc = form.call(r);
        CHECK(error_class(rc) == MPI_ERR_REQUEST);
        CHECK(r[1] == pending);
        // the receive is still pending and still completes as a receive
        int flag = -1;
        MPI_Status status;
        MPI_Cancel(&r[1]);
        REQUIRE(MPI_Wait(&r[1], &status) == MPI_SUCCESS);
        MPI_Test_cancelled(&status, &flag);
        CHECK(flag == 1);
        CHECK(r[1] == MPI_REQUEST_NULL);
    }
}

TEST_CASE("MPI_Startall on more than 64 handles, one not a persistent request: MPI_ERR_REQUEST", "[scan]") {
    ErrorsReturn errors_return;
    const int count = GENERATE(3, 100);
    std::vector<MPI_Request> r(count);
    std::vector<int> buffer(count, -1);
    for (int i = 0; i < count; i++) {
        MPI_Recv_init(&buffer[i], 1, MPI_INT, 0, 4712, MPI_COMM_SELF, &r[i]);
    }
    MPI_Request_free(&r[count - 1]);   // MPI_REQUEST_NULL: not allowed in MPI_Startall
    CHECK(error_class(MPI_Startall(count, r.data())) == MPI_ERR_REQUEST);
    // nothing was started: every other request is still inactive (MPI_Test: flag at once)
    for (int i = 0; i < count - 1; i++) {
        int flag = 0;
        REQUIRE(MPI_Test(&r[i], &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        CHECK(flag == 1);
        MPI_Request_free(&r[i]);
    }
}
