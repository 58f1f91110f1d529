// What the get_status forms and their destructive twins do with a generalized request's
// callbacks: query_fn once per reporting call, poll_fn called so a class request progresses,
// and never MPI_STATUSES_IGNORE handed to a callback as if it were an array.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "grequest_support.hpp"
#include "mpi_test_support.hpp"
#include "request_mix.hpp"

using namespace reqtest;

TEST_CASE("query_fn is called once per reporting get_status call", "[greq]") {
    GreqFactory greqs;
    std::vector<MPI_Request> reqs = {MPI_REQUEST_NULL, greqs.start(5)};
    GreqState& g = greqs.last();
    int flag = -1, index = -1, outcount = -1;
    std::vector<int> indices(2, -1);
    auto st = poisoned_statuses(2);

    MPI_Request_get_status_all(2, reqs.data(), &flag, st.data());
    CHECK(flag == 1);
    CHECK(st[1].MPI_TAG == 5);
    CHECK(g.queries == 1);
    MPI_Request_get_status_all(2, reqs.data(), &flag, MPI_STATUSES_IGNORE);
    CHECK(g.queries == 2);
    MPI_Request_get_status_any(2, reqs.data(), &index, &flag, &st[0]);
    CHECK(index == 1);
    CHECK(st[0].MPI_TAG == 5);
    CHECK(g.queries == 3);
    MPI_Request_get_status_some(2, reqs.data(), &outcount, indices.data(), st.data());
    CHECK(outcount == 1);
    CHECK(g.queries == 4);
    MPI_Request_get_status_some(2, reqs.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE);
    CHECK(g.queries == 5);
    CHECK(g.frees == 0);
    CHECK(reqs[1] != MPI_REQUEST_NULL);

    MPI_Wait(&reqs[1], MPI_STATUS_IGNORE);
    CHECK(g.frees == 1);
}

TEST_CASE("an error from query_fn reaches the get_status_all caller, query_fn called once", "[greq]") {
    ErrorsReturn errors_return;
    GreqFactory greqs;
    std::vector<MPI_Request> reqs = {greqs.start(1), greqs.start(2, true, MPI_ERR_OTHER)};
    auto st = poisoned_statuses(2);
    int flag = -1;
    const int rc = MPI_Request_get_status_all(2, reqs.data(), &flag, st.data());
    CHECK(error_class(rc) == MPI_ERR_IN_STATUS);
    CHECK(flag == 1);
    CHECK(st[0].MPI_ERROR == MPI_SUCCESS);
    CHECK(error_class(st[1].MPI_ERROR) == MPI_ERR_OTHER);
    CHECK(st[1].MPI_TAG == 2);
    CHECK(greqs.at(0).queries == 1);
    CHECK(greqs.at(1).queries == 1);
    for (auto& r : reqs) {
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
}

TEST_CASE("poll_fn is called, so a class request completes inside get_status_*", "[greq]") {
    GreqFactory greqs;
    int flag = -1, index = -1, outcount = -1;

    SECTION("get_status_any") {
        MPI_Request req = greqs.start_polled(11);
        MPI_Status st = poisoned_status();
        MPI_Request_get_status_any(1, &req, &index, &flag, &st);
        CHECK(flag == 1);
        CHECK(index == 0);
        CHECK(st.MPI_TAG == 11);
        CHECK(greqs.last().polls == 1);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    SECTION("get_status_all") {
        MPI_Request req = greqs.start_polled(12);
        MPI_Request_get_status_all(1, &req, &flag, MPI_STATUSES_IGNORE);
        CHECK(flag == 1);
        CHECK(greqs.last().polls == 1);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    SECTION("get_status_some") {
        MPI_Request req = greqs.start_polled(13);
        MPI_Status st = poisoned_status();
        MPI_Request_get_status_some(1, &req, &outcount, &index, &st);
        CHECK(outcount == 1);
        CHECK(index == 0);
        CHECK(st.MPI_TAG == 13);
        CHECK(greqs.last().polls == 1);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    CHECK(greqs.last().frees == 1);
}

TEST_CASE("MPI_STATUSES_IGNORE is never handed to poll_fn as an array", "[greq]") {
    constexpr int n = 3;
    GreqFactory greqs;
    std::vector<MPI_Request> reqs;
    for (int i = 0; i < n; i++) {
        reqs.push_back(greqs.start_polled(i));
    }
    int flag = -1, outcount = -1;
    std::vector<int> indices(n, -1);

    SECTION("MPI_Testall") { MPI_Testall(n, reqs.data(), &flag, MPI_STATUSES_IGNORE); }
    SECTION("MPI_Testsome") {
        MPI_Testsome(n, reqs.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE);
    }
    SECTION("MPI_Waitsome") {
        MPI_Waitsome(n, reqs.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE);
    }
    SECTION("MPI_Request_get_status_all") {
        MPI_Request_get_status_all(n, reqs.data(), &flag, MPI_STATUSES_IGNORE);
    }
    SECTION("MPI_Request_get_status_some") {
        MPI_Request_get_status_some(n, reqs.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE);
    }
    for (int i = 0; i < n; i++) {
        INFO("request " << i);
        CHECK(greqs.at(static_cast<size_t>(i)).polls == 1);
        CHECK(greqs.at(static_cast<size_t>(i)).last_poll_status == MPI_STATUS_IGNORE);
    }
    MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE);
    for (int i = 0; i < n; i++) {
        CHECK(greqs.at(static_cast<size_t>(i)).frees == 1);
    }
}

TEST_CASE("a user-defined error class returned by a callback reaches the caller unchanged", "[greq]") {
    ErrorsReturn errors_return;
    int user_class = -1, user_code = -1;
    MPI_Add_error_class(&user_class);
    MPI_Add_error_code(user_class, &user_code);
    MPI_Add_error_string(user_code, "the library's own error");
    const int returned = GENERATE_COPY(user_class, user_code);
    INFO("callback returns " << returned);

    SECTION("query_fn, through MPI_Wait") {
        GreqFactory greqs;
        MPI_Request req = greqs.start(1, true, returned);
        const int rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        CHECK(error_class(rc) == user_class);
        CHECK(rc == returned);
    }
    SECTION("query_fn, through MPI_Testany and MPI_Waitany: the call returns it") {
        GreqFactory greqs;
        std::vector<MPI_Request> reqs = {greqs.start(1, true, returned), MPI_REQUEST_NULL};
        int index = -1, flag = 0;
        const int rc = MPI_Testany(2, reqs.data(), &index, &flag, MPI_STATUS_IGNORE);
        CHECK(index == 0);
        CHECK(rc == returned);
        reqs[0] = greqs.start(1, true, returned);
        CHECK(MPI_Waitany(2, reqs.data(), &index, MPI_STATUS_IGNORE) == returned);
    }
    SECTION("query_fn, in MPI_Waitall's status: MPI_ERR_OTHER with the code in its text") {
        // an MPICH code cannot carry a user-defined class; the call's own return can (above)
        GreqFactory greqs;
        std::vector<MPI_Request> reqs = {greqs.start(1, true, returned), greqs.start(2)};
        auto st = poisoned_statuses(2);
        CHECK(error_class(MPI_Waitall(2, reqs.data(), st.data())) == MPI_ERR_IN_STATUS);
        CHECK(error_class(st[0].MPI_ERROR) == MPI_ERR_OTHER);
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(st[0].MPI_ERROR, text, &len);
        CHECK(std::string(text).find(std::to_string(returned)) != std::string::npos);
        // MPICH's MPI_Waitall stops at the failed request
        CHECK(st[1].MPI_ERROR == MPI_ERR_PENDING);
        CHECK(MPI_Wait(&reqs[1], MPI_STATUS_IGNORE) == MPI_SUCCESS);
    }
}

namespace {

// query_fn of a request that, when asked, completes another pending generalized request and
// fails: the other request completes between get_status_all's pass over the requests and its
// pass over the statuses.
MPI_Request completed_by_query = MPI_REQUEST_NULL;
int completing_query(void*, MPI_Status* status) {
    MPI_Status_set_elements(status, MPI_BYTE, 0);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = 9;
    if (completed_by_query != MPI_REQUEST_NULL) {
        MPI_Grequest_complete(completed_by_query);
        completed_by_query = MPI_REQUEST_NULL;
    }
    return MPI_ERR_OTHER;
}

}  // namespace

TEST_CASE("get_status_all: a request completing between its passes is reported as found", "[greq]") {
    ErrorsReturn errors_return;
    GreqFactory greqs;
    MPI_Request pending = greqs.start(1, false);
    MPI_Request failing = MPI_REQUEST_NULL;
    GreqState failing_state;
    MPI_Grequest_start(completing_query, counting_free, counting_cancel, &failing_state, &failing);
    MPI_Grequest_complete(failing);
    completed_by_query = pending;
    std::vector<MPI_Request> reqs = {pending, failing};
    auto st = poisoned_statuses(2);
    int flag = -1;
    const int rc = MPI_Request_get_status_all(2, reqs.data(), &flag, st.data());
    CHECK(error_class(rc) == MPI_ERR_IN_STATUS);
    // found pending by the pass that counted it: pending in its status too, never a stale value
    CHECK(flag == 0);
    CHECK(st[0].MPI_ERROR == MPI_ERR_PENDING);
    CHECK(error_class(st[1].MPI_ERROR) == MPI_ERR_OTHER);
    CHECK(completed_by_query == MPI_REQUEST_NULL);
    greqs.at(0).completed = true;
    CHECK(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(error_class(MPI_Wait(&reqs[1], MPI_STATUS_IGNORE)) == MPI_ERR_OTHER);
    CHECK(failing_state.frees == 1);
}

TEST_CASE("a second MPI_Grequest_complete fails with MPI_ERR_REQUEST and frees nothing", "[greq]") {
    ErrorsReturn errors_return;
    GreqFactory greqs;
    MPI_Request req = greqs.start(4);  // completed once already
    GreqState& g = greqs.last();
    CHECK(error_class(MPI_Grequest_complete(req)) == MPI_ERR_REQUEST);
    CHECK(g.frees == 0);
    CHECK(req != MPI_REQUEST_NULL);
    // the request is still the application's: the wait reports it and frees it once
    MPI_Status st = poisoned_statuses(1)[0];
    CHECK(MPI_Wait(&req, &st) == MPI_SUCCESS);
    CHECK(st.MPI_TAG == 4);
    CHECK(req == MPI_REQUEST_NULL);
    CHECK(g.queries == 1);
    CHECK(g.frees == 1);
}

// MPI 4.0, 13.2: free_fn of a request freed by MPI_Request_free runs in MPI_Request_free or in
// MPI_Grequest_complete, whichever is last (MPICH 4.0.2 called it at once, state still in use).
TEST_CASE("MPI_Request_free on a pending generalized request: free_fn runs at its completion", "[greq]") {
    GreqFactory greqs;
    MPI_Request req = greqs.start(3, false);
    GreqState& g = greqs.last();
    CHECK(MPI_Request_free(&req) == MPI_SUCCESS);
    CHECK(req == MPI_REQUEST_NULL);
    CHECK(g.frees == 0);
    g.completed = true;
    CHECK(MPI_Grequest_complete(g.request) == MPI_SUCCESS);
    CHECK(g.frees == 1);
    CHECK(g.queries == 0);
}

TEST_CASE("a freed pending MPIX request keeps being polled, then is freed once", "[greq]") {
    GreqFactory greqs;
    MPI_Request req = greqs.start_polled(8);
    GreqState& g = greqs.last();
    g.complete_on_poll = false;
    CHECK(MPI_Request_free(&req) == MPI_SUCCESS);
    CHECK(g.frees == 0);
    g.complete_on_poll = true;
    // any progress polls it (a test of another request); bounded, in case it never completes
    MPI_Request other = greqs.start(9, false);
    GreqState& o = greqs.last();
    for (int i = 0; i < 1000 && !g.completed; i++) {
        int flag = 0;
        MPI_Test(&other, &flag, MPI_STATUS_IGNORE);
    }
    GreqFactory::complete(o);
    MPI_Wait(&other, MPI_STATUS_IGNORE);
    CHECK(g.completed);
    CHECK(g.polls >= 1);
    CHECK(g.frees == 1);
    CHECK(g.queries == 0);
}

namespace {

// An MPIX request whose poll_fn fails once with fail_next, without completing it.
struct FailingPoll {
    MPI_Request request = MPI_REQUEST_NULL;
    int fail_next = MPI_SUCCESS;
    int polls = 0;
    int frees = 0;
};

int failing_query(void*, MPI_Status* status) {
    MPI_Status_set_elements(status, MPI_BYTE, 0);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = 6;
    return MPI_SUCCESS;
}
int failing_free(void* extra) {
    static_cast<FailingPoll*>(extra)->frees++;
    return MPI_SUCCESS;
}
int failing_poll(void* extra, MPI_Status*) {
    auto* f = static_cast<FailingPoll*>(extra);
    f->polls++;
    const int rc = f->fail_next;
    f->fail_next = MPI_SUCCESS;
    return rc;
}
int failing_wait(int count, void** states, double, MPI_Status* status) {
    for (int i = 0; i < count; i++) failing_poll(states[i], status);
    return MPI_SUCCESS;
}

// The progress engine's pass polls f (a test of another request), its poll_fn fails; then
// 200 other errors go through MPICH's error ring, which a kept code would not survive.
void fail_in_progress_then_other_errors(FailingPoll& f, GreqFactory& greqs) {
    f.fail_next = MPI_ERR_IO;
    MPIX_Grequest_start(failing_query, failing_free, counting_cancel, failing_poll, failing_wait,
                        &f, &f.request);
    MPI_Request other = greqs.start(1, false);
    int flag = -1;
    CHECK(MPI_Test(&other, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(flag == 0);
    CHECK(f.polls == 1);
    for (int i = 0; i < 200; i++) {
        MPI_Send(nullptr, -1, MPI_INT, 0, 0, MPI_COMM_SELF);  // MPI_ERR_COUNT
    }
    GreqFactory::complete(greqs.last());
    MPI_Wait(&other, MPI_STATUS_IGNORE);
}

}  // namespace

TEST_CASE("a poll_fn error the progress engine kept is the next test's, class kept", "[greq]") {
    ErrorsReturn errors_return;
    GreqFactory greqs;
    FailingPoll f;
    fail_in_progress_then_other_errors(f, greqs);
    MPI_Request req = f.request;
    int flag = -1;
    CHECK(error_class(MPI_Test(&req, &flag, MPI_STATUS_IGNORE)) == MPI_ERR_IO);
    CHECK(req == f.request);  // still pending
    CHECK(f.frees == 0);
    MPI_Grequest_complete(f.request);
    MPI_Status st;
    CHECK(MPI_Wait(&req, &st) == MPI_SUCCESS);  // the error was the test's
    CHECK(st.MPI_TAG == 6);
    CHECK(f.frees == 1);
}

TEST_CASE("a kept poll_fn error no call took is the completed request's, in every wait form",
          "[greq]") {
    ErrorsReturn errors_return;
    for (const char* form : {"MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Testany"}) {
        SECTION(form) {
            GreqFactory greqs;
            FailingPoll f;
            fail_in_progress_then_other_errors(f, greqs);
            MPI_Grequest_complete(f.request);  // the library completes it, no call named it
            MPI_Request req = f.request;
            MPI_Status st;
            st.MPI_ERROR = -1;
            int rc = MPI_SUCCESS, index = -1, flag = -1;
            const std::string name = form;
            if (name == "MPI_Wait") {
                rc = MPI_Wait(&req, &st);
                CHECK(error_class(rc) == MPI_ERR_IO);
            } else if (name == "MPI_Waitall") {
                rc = MPI_Waitall(1, &req, &st);
                CHECK(error_class(rc) == MPI_ERR_IN_STATUS);
                CHECK(error_class(st.MPI_ERROR) == MPI_ERR_IO);
            } else if (name == "MPI_Waitany") {
                rc = MPI_Waitany(1, &req, &index, &st);
                CHECK(error_class(rc) == MPI_ERR_IO);
                CHECK(index == 0);
            } else {
                rc = MPI_Testany(1, &req, &index, &flag, &st);
                CHECK(error_class(rc) == MPI_ERR_IO);
                CHECK(flag == 1);
                CHECK(index == 0);
            }
            CHECK(req == MPI_REQUEST_NULL);
            CHECK(f.frees == 1);
        }
    }
}
