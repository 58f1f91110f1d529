// How much progress one Test or get_status call makes (test-forms-one-progress-poll, grequest-poll-progress), the network quiet:
// exactly one progress poll per call (more only while polls move data), made before the call
// looks at its requests (so it reports what that
// poll completed, and a non-destructive call that finds something complete still makes
// progress: test_completion.cpp's two waves wait with get_status_some for a second request
// while the first stays complete); the any forms none when their first look finds a complete
// request; and each pending generalized request's poll_fn called once per call.
//
// The progress polls of a call are counted with a "probe": a class request in no array, which
// the progress engine's hook polls once per progress poll (it is never named by a call, so the
// hook never leaves it out). Its poll count across one call is the call's progress polls.
#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "greq_class_support.hpp"
#include "mpi_test_support.hpp"

using namespace reqtest;

namespace {

constexpr double kNever = 3600.0;  // a deadline no test reaches

// One completion call on an array; the destructive forms only ever see arrays in which they
// complete nothing, or whose completions the test expects.
struct Form {
    std::string name;
    std::function<void(std::vector<MPI_Request>&)> call;
};

std::vector<Form> test_and_get_status_forms() {
    return {
        {"MPI_Testany", [](std::vector<MPI_Request>& r) {
             int index = -7, flag = -7;
             MPI_Status st;
             REQUIRE(MPI_Testany(static_cast<int>(r.size()), r.data(), &index, &flag, &st) ==
                     MPI_SUCCESS);
         }},
        {"MPI_Testsome", [](std::vector<MPI_Request>& r) {
             int out = -7;
             std::vector<int> idx(r.size());
             std::vector<MPI_Status> st(r.size());
             REQUIRE(MPI_Testsome(static_cast<int>(r.size()), r.data(), &out, idx.data(),
                                  st.data()) == MPI_SUCCESS);
         }},
        {"MPI_Testall", [](std::vector<MPI_Request>& r) {
             int flag = -7;
             std::vector<MPI_Status> st(r.size());
             REQUIRE(MPI_Testall(static_cast<int>(r.size()), r.data(), &flag, st.data()) ==
                     MPI_SUCCESS);
         }},
        {"MPI_Request_get_status_any", [](std::vector<MPI_Request>& r) {
             int index = -7, flag = -7;
             MPI_Status st;
             REQUIRE(MPI_Request_get_status_any(static_cast<int>(r.size()), r.data(), &index,
                                                &flag, &st) == MPI_SUCCESS);
         }},
        {"MPI_Request_get_status_some", [](std::vector<MPI_Request>& r) {
             int out = -7;
             std::vector<int> idx(r.size());
             std::vector<MPI_Status> st(r.size());
             REQUIRE(MPI_Request_get_status_some(static_cast<int>(r.size()), r.data(), &out,
                                                 idx.data(), st.data()) == MPI_SUCCESS);
         }},
        {"MPI_Request_get_status_all", [](std::vector<MPI_Request>& r) {
             int flag = -7;
             std::vector<MPI_Status> st(r.size());
             REQUIRE(MPI_Request_get_status_all(static_cast<int>(r.size()), r.data(), &flag,
                                                st.data()) == MPI_SUCCESS);
         }},
    };
}

// n receives on MPI_COMM_SELF that nothing matches
std::vector<MPI_Request> pending_receives(int n, std::vector<int>& bufs) {
    bufs.assign(n, 0);
    std::vector<MPI_Request> reqs(n);
    for (int i = 0; i < n; i++) {
        MPI_Irecv(&bufs[i], 1, MPI_INT, 0, 1000 + i, MPI_COMM_SELF, &reqs[i]);
    }
    return reqs;
}

void cancel_all(std::vector<MPI_Request>& reqs) {
    for (MPI_Request& r : reqs) {
        if (r != MPI_REQUEST_NULL) {
            MPI_Cancel(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
    }
}

// Completes reqs[i] (a receive of pending_receives) by a send to self, and waits with the
// non-destructive MPI_Request_get_status until it is complete.
void complete_receive(std::vector<MPI_Request>& reqs, int i) {
    int value = 42;
    MPI_Send(&value, 1, MPI_INT, 0, 1000 + i, MPI_COMM_SELF);
    int flag = 0;
    REQUIRE(poll_until([&] {
        MPI_Request_get_status(reqs[i], &flag, MPI_STATUS_IGNORE);
        return flag != 0;
    }));
}

// Lets what is still in flight from earlier tests (another rank's late message, this rank's
// queued sends) land first: a Test form polls again while its polls move data, and these
// tests count the polls of a call over a quiet network.
void settle() {
    for (int k = 0; k < 16; k++) {
        int flag = 0;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
    }
}

// Progress polls made by `call`: the probe's poll_fn calls across it.
int progress_polls(ClassOp& probe, const std::function<void()>& call) {
    settle();
    const int before = probe.polls;
    call();
    return probe.polls - before;
}

// The same for a call that leaves its requests as they were, measured again (up to 5 times)
// while it made more polls than `expected`: another rank's message that lands during the call
// (the ranks run other tests meanwhile) makes the call poll again, as it should. A call that
// always polls more than expected still fails.
// `measure` returns the progress polls of one call; it is run again (up to 5 times) while it
// gives more than `expected`.
int measured_quietly(const std::function<int()>& measure, int expected) {
    int polls = 0;
    for (int attempt = 0; attempt < 5; attempt++) {
        polls = measure();
        if (polls <= expected) {
            break;
        }
    }
    return polls;
}

int quiet_progress_polls(ClassOp& probe, const std::function<void()>& call, int expected) {
    return measured_quietly([&] { return progress_polls(probe, call); }, expected);
}

}  // namespace

TEST_CASE("a Test or get_status call that finds nothing makes exactly one progress poll", "[scan][progress]") {
    ClassOps ops;
    ClassOp& probe = ops.add(1);
    probe.deadline = MPI_Wtime() + kNever;
    TestClass::get().allocate(probe);

    for (int n : {1, 8, 64, 65, 512}) {
        std::vector<int> bufs;
        std::vector<MPI_Request> reqs = pending_receives(n, bufs);
        for (const Form& form : test_and_get_status_forms()) {
            INFO(form.name << " over " << n << " pending receives");
            CHECK(quiet_progress_polls(probe, [&] { form.call(reqs); }, 1) == 1);
        }
        INFO("MPI_Test on one pending receive");
        CHECK(quiet_progress_polls(probe, [&] {
                  int flag = -7;
                  MPI_Test(&reqs[0], &flag, MPI_STATUS_IGNORE);
                  CHECK(flag == 0);
              }, 1) == 1);
        cancel_all(reqs);
    }
    probe.deadline = 0;
}

TEST_CASE("a Test or get_status call that finds something to report makes its one progress poll", "[scan][progress]") {
    ClassOps ops;
    ClassOp& probe = ops.add(1);
    probe.deadline = MPI_Wtime() + kNever;
    TestClass::get().allocate(probe);
    const int n = 512;

    SECTION("any and some forms: one complete receive among pending ones") {
        for (const Form& form : test_and_get_status_forms()) {
            if (form.name.find("all") != std::string::npos) {
                continue;  // checked in the next sections
            }
            INFO(form.name << " over " << n << " receives, index 300 complete");
            // the any forms keep MPI_Testany's first look of 4.0.2: a complete request is
            // reported without a poll (a non-destructive loop gets the same index until the
            // application completes it, polled or not); the some forms poll first. The
            // destructive forms change the array: each measurement starts from a fresh one.
            const int expected = form.name.find("any") != std::string::npos ? 0 : 1;
            CHECK(measured_quietly([&] {
                      std::vector<int> bufs;
                      std::vector<MPI_Request> reqs = pending_receives(n, bufs);
                      complete_receive(reqs, 300);
                      const int polls = progress_polls(probe, [&] { form.call(reqs); });
                      cancel_all(reqs);
                      return polls;
                  }, expected) == expected);
        }
    }
    SECTION("all forms: every receive complete") {
        for (const char* name : {"MPI_Request_get_status_all", "MPI_Testall"}) {
            for (const Form& form : test_and_get_status_forms()) {
                if (form.name == name) {
                    INFO(form.name << " over " << n << " complete receives");
                    CHECK(measured_quietly([&] {
                              std::vector<int> bufs;
                              std::vector<MPI_Request> reqs = pending_receives(n, bufs);
                              for (int i = 0; i < n; i++) {
                                  complete_receive(reqs, i);
                              }
                              const int polls = progress_polls(probe, [&] { form.call(reqs); });
                              cancel_all(reqs);
                              return polls;
                          }, 1) == 1);
                }
            }
        }
    }
    SECTION("all forms: one receive pending in the last batch: one poll for the whole call") {
        for (const char* name : {"MPI_Request_get_status_all", "MPI_Testall"}) {
            std::vector<int> bufs;
            std::vector<MPI_Request> reqs = pending_receives(n, bufs);
            for (int i = 0; i < n - 1; i++) {
                complete_receive(reqs, i);
            }
            for (const Form& form : test_and_get_status_forms()) {
                if (form.name == name) {
                    INFO(form.name << " over " << n << " receives, the last one pending");
                    CHECK(quiet_progress_polls(probe, [&] { form.call(reqs); }, 1) == 1);
                }
            }
            cancel_all(reqs);
        }
    }
    probe.deadline = 0;
}

TEST_CASE("a Test or get_status call reports what its own progress poll completed", "[scan][progress]") {
    // Rank 1 sends rank 0 one message per form while rank 0, its receive posted, makes no MPI
    // call; so the message waits in rank 0's shared-memory queue, and only the call's progress
    // poll completes it: the call must look at the request after that poll and report it. The
    // two ranks use a communicator of their own, and the other ranks send rank 0 nothing until
    // the pair is done (they wait for rank 0's word in a receive, which sends nothing), so no
    // other message can be queued before it: one poll handles one message. (Ranks 2 and up going
    // on to the runner's collectives put their messages ahead of rank 1's under -n 4.)
    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank() < 2 ? 0 : MPI_UNDEFINED, world_rank(), &pair);
    constexpr int kPairDoneTag = 4242;
    if (pair == MPI_COMM_NULL) {
        // ranks 2 and up take no part
        MPI_Recv(nullptr, 0, MPI_BYTE, 0, kPairDoneTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return;
    }
    const int rank = world_rank();
    struct PairDone {  // rank 0 releases the others however the case ends
        int rank;
        ~PairDone() {
            for (int r = 2; rank == 0 && r < world_size(); r++) {
                MPI_Send(nullptr, 0, MPI_BYTE, r, kPairDoneTag, MPI_COMM_WORLD);
            }
        }
    } pair_done{rank};
    std::vector<Form> forms = test_and_get_status_forms();
    for (int with_others = 0; with_others < 2; with_others++) {
        for (size_t f = 0; f < forms.size(); f++) {
            const Form& form = forms[f];
            const bool all_form = form.name.find("all") != std::string::npos;
            if (with_others && all_form) {
                continue;  // an _all form reports nothing while other receives are pending
            }
            const int tag = static_cast<int>(f);
            int value = -1;
            std::vector<int> bufs;
            std::vector<MPI_Request> reqs;
            int target = 0;
            if (rank == 0) {
                if (with_others) {
                    reqs = pending_receives(16, bufs);
                    target = 9;
                    MPI_Cancel(&reqs[target]);
                    MPI_Wait(&reqs[target], MPI_STATUS_IGNORE);
                } else {
                    reqs.resize(1);
                }
                MPI_Irecv(&value, 1, MPI_INT, 1, tag, pair, &reqs[target]);
            }
            MPI_Barrier(pair);  // the receive is posted before the message is sent
            if (rank == 1) {
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                const int sent = 7000 + tag;
                MPI_Send(&sent, 1, MPI_INT, 0, tag, pair);
            } else {
                std::this_thread::sleep_for(std::chrono::milliseconds(300));
                INFO(form.name << (with_others ? " over 16 receives, the 10th from rank 1"
                                               : " over one receive from rank 1"));
                const MPI_Request before = reqs[target];
                form.call(reqs);
                const bool destructive = form.name.rfind("MPI_Test", 0) == 0;
                // a destructive form frees what it reports; get_status leaves it as it was
                CHECK((reqs[target] == MPI_REQUEST_NULL) == destructive);
                if (!destructive) {
                    CHECK(reqs[target] == before);
                    int flag = 0;
                    MPI_Request_get_status(reqs[target], &flag, MPI_STATUS_IGNORE);
                    CHECK(flag == 1);
                    MPI_Wait(&reqs[target], MPI_STATUS_IGNORE);
                }
                CHECK(value == 7000 + tag);
                cancel_all(reqs);
            }
            MPI_Barrier(pair);
        }
    }
    MPI_Comm_free(&pair);
}

TEST_CASE("each pending class request's poll_fn runs once per Test or get_status call", "[scan][progress]") {
    constexpr int n = 256;  // four MPI_Testall batches
    ClassOps ops;
    ClassOp& probe = ops.add(1);
    probe.deadline = MPI_Wtime() + kNever;
    TestClass::get().allocate(probe);
    std::vector<MPI_Request> reqs;
    for (int i = 0; i < n; i++) {
        ClassOp& op = ops.add(100 + i);
        op.deadline = MPI_Wtime() + kNever;
        reqs.push_back(TestClass::get().allocate(op));
    }
    auto polls_of = [&] {
        std::vector<int> polls;
        for (size_t i = 1; i < ops.size(); i++) {
            polls.push_back(ops[i].polls);
        }
        return polls;
    };

    for (const Form& form : test_and_get_status_forms()) {
        INFO(form.name << " over " << n << " pending class requests");
        std::vector<int> before, after;
        const int call_polls = quiet_progress_polls(probe, [&] {
            before = polls_of();
            form.call(reqs);
            after = polls_of();
        }, 1);
        int not_once = 0;
        for (int i = 0; i < n; i++) {
            if (after[i] - before[i] != 1 && not_once++ == 0) {
                UNSCOPED_INFO("request " << i << ": " << after[i] - before[i] << " polls");
            }
        }
        CHECK(not_once == 0);
        CHECK(call_polls == 1);  // the call made its one progress poll
    }
    {
        INFO("MPI_Test on one of them");
        int own_polls = 0, flag = -7;
        const int call_polls = quiet_progress_polls(probe, [&] {
            const int before = ops[1].polls;
            MPI_Test(&reqs[0], &flag, MPI_STATUS_IGNORE);
            own_polls = ops[1].polls - before;
        }, 1);
        CHECK(flag == 0);
        CHECK(own_polls == 1);
        CHECK(call_polls == 1);
    }
    for (size_t i = 0; i < ops.size(); i++) {
        ops[i].deadline = 0;
    }
}
