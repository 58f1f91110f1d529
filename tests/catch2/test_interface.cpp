// The interface itself: MPI 4.1 signatures with const request arrays, the PMPI entry points, the
// feature macro, and MPI_VERSION still 4.0.
#include <catch2/catch.hpp>

#include <type_traits>

#include "mpi_test_support.hpp"

using namespace reqtest;

static_assert(std::is_same_v<decltype(&MPI_Request_get_status_all),
                             int (*)(int, const MPI_Request*, int*, MPI_Status*)>,
              "MPI_Request_get_status_all has the MPI 4.1 signature");
static_assert(std::is_same_v<decltype(&MPI_Request_get_status_any),
                             int (*)(int, const MPI_Request*, int*, int*, MPI_Status*)>,
              "MPI_Request_get_status_any has the MPI 4.1 signature");
static_assert(std::is_same_v<decltype(&MPI_Request_get_status_some),
                             int (*)(int, const MPI_Request*, int*, int*, MPI_Status*)>,
              "MPI_Request_get_status_some has the MPI 4.1 signature");
static_assert(std::is_same_v<decltype(&PMPI_Request_get_status_all),
                             decltype(&MPI_Request_get_status_all)>,
              "PMPI_Request_get_status_all is declared like MPI_Request_get_status_all");

TEST_CASE("the feature macro says the functions exist, MPI_VERSION still says 4.0", "[scan]") {
#ifdef MPIX_HAVE_REQUEST_GET_STATUS_MULTIPLE
    CHECK(MPIX_HAVE_REQUEST_GET_STATUS_MULTIPLE == 1);
#else
    FAIL("mpi.h does not define MPIX_HAVE_REQUEST_GET_STATUS_MULTIPLE");
#endif
    CHECK(MPI_VERSION == 4);
    CHECK(MPI_SUBVERSION == 0);
    int version = 0, subversion = 0;
    MPI_Get_version(&version, &subversion);
    CHECK(version == 4);
    CHECK(subversion == 0);
}

TEST_CASE("the PMPI entry points work like the MPI ones", "[scan]") {
    int value = 0;
    const int sent = 31;
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Irecv(&value, 1, MPI_INT, 0, 44, MPI_COMM_SELF, &req[1]);

    int flag = -1, index = -1, outcount = -1, indices[2] = {-1, -1};
    MPI_Status st[2] = {poisoned_status(), poisoned_status()};
    REQUIRE(PMPI_Request_get_status_all(2, req, &flag, st) == MPI_SUCCESS);
    CHECK(flag == 0);
    REQUIRE(PMPI_Request_get_status_any(2, req, &index, &flag, st) == MPI_SUCCESS);
    CHECK(flag == 0);
    CHECK(index == MPI_UNDEFINED);

    MPI_Send(&sent, 1, MPI_INT, 0, 44, MPI_COMM_SELF);
    REQUIRE(poll_until([&] {
        PMPI_Request_get_status_some(2, req, &outcount, indices, st);
        return outcount == 1;
    }));
    CHECK(indices[0] == 1);
    CHECK(st[0].MPI_TAG == 44);
    CHECK(st[0].MPI_SOURCE == 0);  // rank in MPI_COMM_SELF
    CHECK(req[1] != MPI_REQUEST_NULL);
    MPI_Wait(&req[1], MPI_STATUS_IGNORE);
    CHECK(value == sent);
}
