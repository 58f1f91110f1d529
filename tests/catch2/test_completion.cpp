// Receives on a ring, completed in two waves: the exact index sets, flags and statuses that
// get_status_all/_any/_some report, that they change nothing, and that the destructive forms then
// complete exactly what was reported, with the same statuses.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <set>

#include "mpi_test_support.hpp"

using namespace reqtest;

namespace {

constexpr int kRequests = 6;
const std::set<int> kFirstWave = {1, 4};
const std::set<int> kSecondWave = {0, 2, 3, 5};

int payload(int sender, int tag) { return 1000 * sender + tag; }

void send_wave(const std::set<int>& tags) {
    const int right = (world_rank() + 1) % world_size();
    for (int tag : tags) {
        int v = payload(world_rank(), tag);
        MPI_Send(&v, 1, MPI_INT, right, tag, MPI_COMM_WORLD);
    }
}

std::set<int> reported_by_some(const std::array<MPI_Request, kRequests>& reqs,
                               std::vector<MPI_Status>* statuses) {
    int outcount = -1;
    std::array<int, kRequests> indices{};
    MPI_Request_get_status_some(kRequests, reqs.data(), &outcount, indices.data(),
                                statuses ? statuses->data() : MPI_STATUSES_IGNORE);
    if (outcount == MPI_UNDEFINED) {
        return {-1};
    }
    return std::set<int>(indices.begin(), indices.begin() + outcount);
}

}  // namespace

TEST_CASE("a ring of receives completed in two waves", "[scan]") {
    const int rank = world_rank();
    const int left = (rank + world_size() - 1) % world_size();
    std::array<int, kRequests> buf{};
    std::array<MPI_Request, kRequests> reqs{};
    for (int i = 0; i < kRequests; i++) {
        MPI_Irecv(&buf[i], 1, MPI_INT, left, i, MPI_COMM_WORLD, &reqs[i]);
    }
    const auto posted = reqs;

    int flag = -1, index = -1;
    MPI_Request_get_status_all(kRequests, reqs.data(), &flag, MPI_STATUSES_IGNORE);
    CHECK(flag == 0);
    MPI_Request_get_status_any(kRequests, reqs.data(), &index, &flag, MPI_STATUS_IGNORE);
    CHECK(flag == 0);
    CHECK(index == MPI_UNDEFINED);
    CHECK(reported_by_some(reqs, nullptr).empty());

    MPI_Barrier(MPI_COMM_WORLD);
    send_wave(kFirstWave);
    REQUIRE(poll_until([&] { return reported_by_some(reqs, nullptr) == kFirstWave; }));

    auto st = poisoned_statuses(kRequests);
    CHECK(reported_by_some(reqs, &st) == kFirstWave);
    for (int k = 0; k < 2; k++) {
        CHECK(st[k].MPI_SOURCE == left);
        CHECK(kFirstWave.count(st[k].MPI_TAG) == 1);
        CHECK(count_of(st[k], MPI_INT) == 1);
        CHECK(st[k].MPI_ERROR == kPoison);  // written only with MPI_ERR_IN_STATUS
    }
    CHECK(st[2].MPI_SOURCE == kPoison);

    MPI_Status one = poisoned_status();
    MPI_Request_get_status_any(kRequests, reqs.data(), &index, &flag, &one);
    CHECK(flag == 1);
    CHECK(index == 1);
    CHECK(one.MPI_TAG == 1);
    MPI_Request_get_status_all(kRequests, reqs.data(), &flag, st.data());
    CHECK(flag == 0);
    CHECK(reqs == posted);

    SECTION("MPI_Testany then completes the index get_status_any reported") {
        MPI_Status tst = poisoned_status();
        int tindex = -1, tflag = -1;
        MPI_Testany(kRequests, reqs.data(), &tindex, &tflag, &tst);
        CHECK(tflag == 1);
        CHECK(tindex == index);
        CHECK(tst.MPI_TAG == one.MPI_TAG);
        CHECK(tst.MPI_SOURCE == one.MPI_SOURCE);
        CHECK(reqs[1] == MPI_REQUEST_NULL);
        CHECK(reported_by_some(reqs, nullptr) == std::set<int>{4});
    }
    SECTION("MPI_Testsome then completes the set get_status_some reported") {
        int toutcount = -1;
        std::array<int, kRequests> tindices{};
        MPI_Testsome(kRequests, reqs.data(), &toutcount, tindices.data(), MPI_STATUSES_IGNORE);
        CHECK(std::set<int>(tindices.begin(), tindices.begin() + toutcount) == kFirstWave);
        CHECK(reported_by_some(reqs, nullptr).empty());
    }
    for (int i : kFirstWave) {
        if (reqs[i] != MPI_REQUEST_NULL) {
            MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
        }
        CHECK(buf[i] == payload(left, i));
    }

    MPI_Barrier(MPI_COMM_WORLD);
    send_wave(kSecondWave);
    REQUIRE(poll_until([&] {
        MPI_Request_get_status_all(kRequests, reqs.data(), &flag, MPI_STATUSES_IGNORE);
        return flag == 1;
    }));
    st = poisoned_statuses(kRequests);
    MPI_Request_get_status_all(kRequests, reqs.data(), &flag, st.data());
    REQUIRE(flag == 1);
    for (int i = 0; i < kRequests; i++) {
        INFO("request " << i);
        if (kFirstWave.count(i)) {
            CHECK(is_empty(st[i]));  // completed in the first wave: MPI_REQUEST_NULL now
        } else {
            CHECK(st[i].MPI_SOURCE == left);
            CHECK(st[i].MPI_TAG == i);
            CHECK(st[i].MPI_ERROR == kPoison);
        }
    }
    auto wst = poisoned_statuses(kRequests);
    int tflag = -1;
    MPI_Testall(kRequests, reqs.data(), &tflag, wst.data());
    CHECK(tflag == 1);
    for (int i : kSecondWave) {
        INFO("request " << i);
        CHECK(reqs[i] == MPI_REQUEST_NULL);
        CHECK(wst[i].MPI_TAG == st[i].MPI_TAG);
        CHECK(wst[i].MPI_SOURCE == st[i].MPI_SOURCE);
        CHECK(count_of(wst[i], MPI_INT) == count_of(st[i], MPI_INT));
        CHECK(buf[i] == payload(left, i));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

TEST_CASE("count 0, all null and all inactive arrays", "[scan]") {
    int dummy = 0;
    std::array<MPI_Request, 3> reqs = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    SECTION("all null") {}
    SECTION("inactive persistent requests among null ones") {
        MPI_Recv_init(&dummy, 1, MPI_INT, 0, 0, MPI_COMM_SELF, &reqs[0]);
        MPI_Send_init(&dummy, 1, MPI_INT, 0, 0, MPI_COMM_SELF, &reqs[2]);
    }
    for (int n : {0, 3}) {
        INFO("count " << n);
        int flag = -1, index = -1, outcount = -1;
        std::array<int, 3> indices{};
        auto st = poisoned_statuses(3);
        MPI_Request_get_status_all(n, reqs.data(), &flag, st.data());
        CHECK(flag == 1);
        for (int i = 0; i < n; i++) {
            CHECK(is_empty(st[i]));
        }
        MPI_Status one = poisoned_status();
        MPI_Request_get_status_any(n, reqs.data(), &index, &flag, &one);
        CHECK(flag == 1);
        CHECK(index == MPI_UNDEFINED);
        CHECK(is_empty(one));
        MPI_Request_get_status_some(n, reqs.data(), &outcount, indices.data(), st.data());
        CHECK(outcount == MPI_UNDEFINED);
    }
    for (auto& r : reqs) {
        if (r != MPI_REQUEST_NULL) {
            MPI_Request_free(&r);
        }
    }
}
