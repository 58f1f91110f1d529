// Property test of the Wait forms on arrays mixing every request kind (request_mix.hpp): once
// every request is complete, MPI_Waitall, MPI_Waitsome and MPI_Waitany return at once, complete
// each active request exactly once, skip the null and inactive ones, and give the statuses and
// return class get_status_all reported just before (MPI_Waitall stops at a failed request, as
// stock MPICH does: those after it are MPI_ERR_PENDING and the call is repeated). Every wait runs
// under a watchdog.
#include <catch2/catch.hpp>

#include <random>
#include <set>
#include <vector>

#include "mpi_test_support.hpp"
#include "request_mix.hpp"

using namespace reqtest;

namespace {

struct Seen {
    int source, tag, count;
    bool cancelled;
    bool operator==(const Seen& o) const {
        return source == o.source && tag == o.tag && count == o.count && cancelled == o.cancelled;
    }
};

Seen seen(const MPI_Status& s) { return {s.MPI_SOURCE, s.MPI_TAG, count_of(s, MPI_BYTE), is_cancelled(s)}; }

std::set<int> active_slots(const RequestMix& mix) {
    std::set<int> active;
    for (int i = 0; i < mix.size(); i++) {
        if (!is_inactive_kind(mix.kind(i))) {
            active.insert(i);
        }
    }
    return active;
}

}  // namespace

TEST_CASE("property: the Wait forms on every request kind complete each active one exactly once", "[scan]") {
    ErrorsReturn errors_return;
    std::mt19937 rng(0xa17 + static_cast<unsigned>(world_rank()));
    int waitall = 0, waitsome = 0, waitany = 0, in_status = 0;
    for (int trial = 0; trial < 60; trial++) {
        const int n = 1 + static_cast<int>(rng() % 14);
        RequestMix mix(n);
        for (int i = 0; i < n; i++) {
            mix.post_random(i, rng);
        }
        mix.complete_all_pending();
        REQUIRE(mix.settle());
        const std::set<int> active = active_slots(mix);
        INFO("trial " << trial << " (count " << n << ", " << active.size() << " active)");

        int flag = -1;
        auto peeked = poisoned_statuses(n);
        const int peek_rc = MPI_Request_get_status_all(n, mix.data(), &flag, peeked.data());
        REQUIRE(flag == 1);
        const bool peek_in_status = error_class(peek_rc) == MPI_ERR_IN_STATUS;
        in_status += peek_in_status ? 1 : 0;

        Watchdog watchdog("a Wait form on a mix whose requests are all complete");
        switch (rng() % 3) {
            case 0: {
                // MPICH's MPI_Waitall stops at the first request that fails: the requests after
                // it are reported MPI_ERR_PENDING and stay in the array, so it is called again
                std::set<int> left = active;
                for (int call = 0; call <= n && !left.empty(); call++) {
                    auto st = poisoned_statuses(n);
                    const int rc = MPI_Waitall(n, mix.data(), st.data());
                    const bool failed = error_class(rc) == MPI_ERR_IN_STATUS;
                    if (call == 0) {
                        CHECK(error_class(rc) == error_class(peek_rc));
                    }
                    for (int i : std::set<int>(left)) {
                        const MPI_Status& s = st[static_cast<size_t>(i)];
                        if (failed && s.MPI_ERROR == MPI_ERR_PENDING) {
                            continue;
                        }
                        CHECK(seen(s) == seen(peeked[static_cast<size_t>(i)]));
                        if (failed) {
                            CHECK(error_class(s.MPI_ERROR) ==
                                  error_class(peeked[static_cast<size_t>(i)].MPI_ERROR));
                        }
                        mix.completed(i);
                        left.erase(i);
                    }
                }
                CHECK(left.empty());
                waitall++;
                break;
            }
            case 1: {
                int outcount = -1;
                std::vector<int> idx(static_cast<size_t>(n), -1);
                auto st = poisoned_statuses(n);
                MPI_Waitsome(n, mix.data(), &outcount, idx.data(), st.data());
                if (active.empty()) {
                    CHECK(outcount == MPI_UNDEFINED);
                } else {
                    REQUIRE(outcount == static_cast<int>(active.size()));
                    const std::set<int> reported(idx.begin(), idx.begin() + outcount);
                    CHECK(reported == active);
                    for (int k = 0; k < outcount; k++) {
                        const int i = idx[static_cast<size_t>(k)];
                        CHECK(seen(st[static_cast<size_t>(k)]) == seen(peeked[static_cast<size_t>(i)]));
                        mix.completed(i);
                    }
                }
                waitsome++;
                break;
            }
            default: {
                std::set<int> reported;
                for (size_t k = 0; k <= active.size(); k++) {
                    int index = -2;
                    MPI_Status st = poisoned_status();
                    MPI_Waitany(n, mix.data(), &index, &st);
                    if (k == active.size()) {
                        CHECK(index == MPI_UNDEFINED);  // nothing active is left
                        break;
                    }
                    REQUIRE(active.count(index) == 1);
                    CHECK(reported.insert(index).second);
                    CHECK(seen(st) == seen(peeked[static_cast<size_t>(index)]));
                    mix.completed(index);
                }
                CHECK(reported == active);
                waitany++;
                break;
            }
        }
        CHECK(mix.wrong_after_completion() == 0);
        // every slot is now null or inactive: a second get_status_all sees nothing active
        auto after = poisoned_statuses(n);
        flag = -1;
        MPI_Request_get_status_all(n, mix.data(), &flag, after.data());
        CHECK(flag == 1);
        for (int i = 0; i < n; i++) {
            CHECK(is_empty(after[static_cast<size_t>(i)]));
        }
    }
    CHECK(waitall > 10);
    CHECK(waitsome > 10);
    CHECK(waitany > 10);
    CHECK(in_status > 5);
}
