// Property tests: on any array state, the non-destructive answer equals the destructive one.
// get_status_any reports the index MPI_Testany then completes, get_status_some exactly the set
// (and order) MPI_Testsome completes, get_status_all the flag of MPI_Testall; return classes and
// statuses agree. Random arrays mix every kind the completion rules distinguish (request_mix.hpp);
// the same array object is kept across rounds, so the shared scan cursor is exercised too.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "mpi_test_support.hpp"
#include "request_mix.hpp"

using namespace reqtest;

namespace {

struct StatusView {
    int source, tag, error_class, count;
    bool cancelled;
    bool operator==(const StatusView& o) const {
        return source == o.source && tag == o.tag && error_class == o.error_class &&
               count == o.count && cancelled == o.cancelled;
    }
};

std::ostream& operator<<(std::ostream& os, const StatusView& s) {
    return os << "{source " << s.source << ", tag " << s.tag << ", error class " << s.error_class
              << ", count " << s.count << ", cancelled " << s.cancelled << "}";
}

StatusView view(const MPI_Status& s) {
    const int error = (s.MPI_ERROR == kPoison) ? kPoison : error_class(s.MPI_ERROR);
    return {s.MPI_SOURCE, s.MPI_TAG, error, count_of(s, MPI_BYTE), is_cancelled(s)};
}

std::vector<StatusView> views(const std::vector<MPI_Status>& st, int n) {
    std::vector<StatusView> v;
    for (int i = 0; i < n; i++) {
        v.push_back(view(st[static_cast<size_t>(i)]));
    }
    return v;
}

// A status the call filled for a request it reported: MPI_ERROR untouched unless
// MPI_ERR_IN_STATUS was returned.
bool error_field_untouched(const std::vector<MPI_Status>& st, int n) {
    for (int i = 0; i < n; i++) {
        if (st[static_cast<size_t>(i)].MPI_ERROR != kPoison) {
            return false;
        }
    }
    return true;
}

void compare_any(RequestMix& mix) {
    const int n = mix.size();
    int i1 = -1, f1 = -1, i2 = -1, f2 = -1;
    MPI_Status s1 = poisoned_status(), s2 = poisoned_status();
    const int rc1 = MPI_Request_get_status_any(n, mix.data(), &i1, &f1, &s1);
    const int rc2 = MPI_Testany(n, mix.data(), &i2, &f2, &s2);
    REQUIRE(error_class(rc1) == error_class(rc2));
    REQUIRE(f1 == f2);
    REQUIRE(i1 == i2);
    if (f1) {
        REQUIRE(view(s1) == view(s2));
    }
    if (i1 != MPI_UNDEFINED) {
        REQUIRE(s1.MPI_ERROR == kPoison);
        REQUIRE(s2.MPI_ERROR == kPoison);
    }
    if (f2 && i2 != MPI_UNDEFINED) {
        REQUIRE(is_complete_kind(mix.kind(i2)));
        mix.completed(i2);
    }
}

void compare_some(RequestMix& mix) {
    const int n = mix.size();
    int o1 = -1, o2 = -1;
    std::vector<int> x1(static_cast<size_t>(n), -1), x2(static_cast<size_t>(n), -1);
    auto st1 = poisoned_statuses(n), st2 = poisoned_statuses(n);
    const int rc1 = MPI_Request_get_status_some(n, mix.data(), &o1, x1.data(), st1.data());
    const int rc2 = MPI_Testsome(n, mix.data(), &o2, x2.data(), st2.data());
    REQUIRE(error_class(rc1) == error_class(rc2));
    REQUIRE(o1 == o2);
    if (o1 == MPI_UNDEFINED) {
        return;
    }
    x1.resize(static_cast<size_t>(o1));
    x2.resize(static_cast<size_t>(o2));
    REQUIRE(x1 == x2);
    const bool in_status = error_class(rc1) == MPI_ERR_IN_STATUS;
    REQUIRE(views(st1, o1) == views(st2, o2));
    if (!in_status) {
        REQUIRE(error_field_untouched(st1, o1));
    }
    int expected = 0;
    for (int i = 0; i < n; i++) {
        expected += is_complete_kind(mix.kind(i)) ? 1 : 0;
    }
    REQUIRE(o2 == expected);
    for (int i : x2) {
        mix.completed(i);
    }
}

void compare_all(RequestMix& mix) {
    const int n = mix.size();
    int f1 = -1, f2 = -1;
    auto st1 = poisoned_statuses(n), st2 = poisoned_statuses(n);
    std::vector<bool> was_complete;
    bool all_complete = true;
    for (int i = 0; i < n; i++) {
        was_complete.push_back(is_complete_kind(mix.kind(i)));
        if (!is_inactive_kind(mix.kind(i)) && !was_complete.back()) {
            all_complete = false;
        }
    }
    const int rc1 = MPI_Request_get_status_all(n, mix.data(), &f1, st1.data());
    const int rc2 = MPI_Testall(n, mix.data(), &f2, st2.data());
    REQUIRE(error_class(rc1) == error_class(rc2));
    REQUIRE(f1 == f2);
    REQUIRE(f1 == (all_complete ? 1 : 0));
    const bool in_status = error_class(rc1) == MPI_ERR_IN_STATUS;
    if (f1 || in_status) {
        REQUIRE(views(st1, n) == views(st2, n));
        for (int i = 0; i < n; i++) {
            if (was_complete[static_cast<size_t>(i)]) {
                mix.completed(i);
            }
        }
    }
}

}  // namespace

TEST_CASE("property: the non-destructive forms answer what the destructive forms then do", "[scan]") {
    ErrorsReturn errors_return;
    std::mt19937 rng(0x5eed + static_cast<unsigned>(world_rank()));
    int rounds = 0, reported_any = 0, reported_some = 0, all_true = 0;
    for (int trial = 0; trial < 40; trial++) {
        const int n = 1 + static_cast<int>(rng() % 12);
        RequestMix mix(n);
        for (int i = 0; i < n; i++) {
            mix.post_random(i, rng);
        }
        for (int round = 0; round < 30; round++) {
            INFO("trial " << trial << " (count " << n << "), round " << round);
            mix.complete_some_pending(rng);
            REQUIRE(mix.settle());
            switch (rng() % 3) {
                case 0: compare_any(mix); reported_any++; break;
                case 1: compare_some(mix); reported_some++; break;
                default: compare_all(mix); all_true++; break;
            }
            REQUIRE(mix.wrong_after_completion() == 0);
            for (int i = 0; i < n; i++) {
                const Kind k = mix.kind(i);
                if (is_inactive_kind(k) && rng() % 2 == 0) {
                    mix.post_random(i, rng);
                }
            }
            rounds++;
        }
    }
    CHECK(rounds == 40 * 30);
    CHECK(reported_any > 300);
    CHECK(reported_some > 300);
    CHECK(all_true > 300);
}

TEST_CASE("property: get_status_all reports every status as MPI_Testall does, errors included", "[scan]") {
    // arrays where everything is complete: get_status_all must then give, status for status,
    // what MPI_Testall gives (truncation and failed query_fn make it MPI_ERR_IN_STATUS)
    ErrorsReturn errors_return;
    std::mt19937 rng(77);
    int in_status_count = 0;
    for (int trial = 0; trial < 60; trial++) {
        const int n = 1 + static_cast<int>(rng() % 10);
        RequestMix mix(n);
        for (int i = 0; i < n; i++) {
            // null, inactive and complete kinds
            mix.post(i, static_cast<Kind>(rng() % kSettledKinds));
        }
        REQUIRE(mix.settle());
        int f1 = -1, f2 = -1;
        auto st1 = poisoned_statuses(n), st2 = poisoned_statuses(n);
        const int rc1 = MPI_Request_get_status_all(n, mix.data(), &f1, st1.data());
        const int rc2 = MPI_Testall(n, mix.data(), &f2, st2.data());
        INFO("trial " << trial);
        REQUIRE(f1 == 1);
        REQUIRE(f2 == 1);
        REQUIRE(error_class(rc1) == error_class(rc2));
        const bool in_status = error_class(rc1) == MPI_ERR_IN_STATUS;
        REQUIRE(views(st1, n) == views(st2, n));
        in_status_count += in_status ? 1 : 0;
        for (int i = 0; i < n; i++) {
            if (is_complete_kind(mix.kind(i))) {
                mix.completed(i);
            }
        }
    }
    CHECK(in_status_count > 10);
}
