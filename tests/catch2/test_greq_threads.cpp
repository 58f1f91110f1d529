// Generalized request classes under MPI_THREAD_MULTIPLE: a class request is never polled before
// the library holds its handle, requests are completed from other threads while the progress
// engine polls, every completion call is used by several threads at once, and a completion made
// inside another thread's poll_fn is seen with that poll_fn's error.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "mpi_test_support.hpp"

using namespace reqtest;

namespace {

// The state a library keeps per operation, as ROMIO does: the handle MPIX_Grequest_class_allocate
// returned is stored in it afterwards, and poll_fn/wait_fn complete the request with it.
struct LibOp {
    std::atomic<MPI_Request> handle{MPI_REQUEST_NULL};
    std::atomic<int> polls{0};
    std::atomic<bool> completed{false};
    std::atomic<int> frees{0};
};

std::atomic<int> polled_without_handle{0};
std::atomic<int> complete_errors{0};

void complete_if_over(LibOp& op) {
    const MPI_Request h = op.handle.load();
    if (h == MPI_REQUEST_NULL) {
        // the progress engine called us before the allocation returned to our thread
        polled_without_handle++;
        return;
    }
    if (++op.polls >= 2 && !op.completed.exchange(true)) {
        if (MPI_Grequest_complete(h) != MPI_SUCCESS) {
            complete_errors++;
        }
    }
}

int lib_query(void*, MPI_Status* status) {
    MPI_Status_set_elements(status, MPI_BYTE, 0);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = 0;
    return MPI_SUCCESS;
}
int lib_free(void* extra) {
    static_cast<LibOp*>(extra)->frees++;
    return MPI_SUCCESS;
}
int lib_cancel(void*, int) { return MPI_SUCCESS; }
int lib_poll(void* extra, MPI_Status*) {
    complete_if_over(*static_cast<LibOp*>(extra));
    return MPI_SUCCESS;
}
int lib_wait(int count, void** states, double, MPI_Status*) {
    for (int i = 0; i < count; i++) {
        complete_if_over(*static_cast<LibOp*>(states[i]));
    }
    return MPI_SUCCESS;
}

MPIX_Grequest_class lib_class() {
    static MPIX_Grequest_class c = [] {
        MPIX_Grequest_class h = 0;
        MPIX_Grequest_class_create(lib_query, lib_free, lib_cancel, lib_poll, lib_wait, &h);
        return h;
    }();
    return c;
}

constexpr int kBatch = 16;
constexpr int kBatches = 60;

// One worker: batches of class requests, each completed by one completion call in turn.
void worker(int id, std::vector<LibOp>& ops, std::atomic<int>& wrong) {
    for (int b = 0; b < kBatches; b++) {
        std::vector<MPI_Request> reqs(kBatch);
        LibOp* batch = &ops[static_cast<size_t>(b * kBatch)];
        for (int i = 0; i < kBatch; i++) {
            MPI_Request h = MPI_REQUEST_NULL;
            MPIX_Grequest_class_allocate(lib_class(), &batch[i], &h);
            if (i % 4 == 0) {
                // widen the window between the allocation and the library's store
                std::this_thread::sleep_for(std::chrono::microseconds(50));
            }
            batch[i].handle.store(h);
            reqs[static_cast<size_t>(i)] = h;
        }
        int done = 0;
        switch ((id + b) % 5) {
            case 0:
                for (auto& r : reqs) {
                    MPI_Wait(&r, MPI_STATUS_IGNORE);
                    done++;
                }
                break;
            case 1:
                MPI_Waitall(kBatch, reqs.data(), MPI_STATUSES_IGNORE);
                done = kBatch;
                break;
            case 2:
                for (int k = 0; k < kBatch; k++) {
                    int index = -1;
                    MPI_Waitany(kBatch, reqs.data(), &index, MPI_STATUS_IGNORE);
                    done += (index != MPI_UNDEFINED) ? 1 : 0;
                }
                break;
            case 3:
                while (done < kBatch) {
                    int outcount = 0;
                    int idx[kBatch];
                    MPI_Testsome(kBatch, reqs.data(), &outcount, idx, MPI_STATUSES_IGNORE);
                    done += (outcount == MPI_UNDEFINED) ? 0 : outcount;
                }
                break;
            default:
                while (done < kBatch) {
                    int outcount = 0;
                    int idx[kBatch];
                    MPI_Request_get_status_some(kBatch, reqs.data(), &outcount, idx,
                                                MPI_STATUSES_IGNORE);
                    for (int j = 0; outcount != MPI_UNDEFINED && j < outcount; j++) {
                        MPI_Wait(&reqs[static_cast<size_t>(idx[j])], MPI_STATUS_IGNORE);
                        done++;
                    }
                }
                break;
        }
        if (done != kBatch) {
            wrong++;
        }
        for (auto r : reqs) {
            if (r != MPI_REQUEST_NULL) {
                wrong++;
            }
        }
    }
}

// A poll_fn that, called in the helper thread once armed, completes its request and then returns
// an error after a pause: the owner tests the request all through that pause.
struct SlowFailingOp {
    std::atomic<MPI_Request> handle{MPI_REQUEST_NULL};
    std::atomic<bool> armed{false};
    std::atomic<bool> fired{false};
    std::atomic<bool> returned{false};
    std::thread::id helper;
    std::atomic<int> frees{0};
};

int slow_failing_poll(void* extra, MPI_Status*) {
    auto* op = static_cast<SlowFailingOp*>(extra);
    if (!op->armed.load() || std::this_thread::get_id() != op->helper || op->fired.exchange(true)) {
        return MPI_SUCCESS;
    }
    MPI_Grequest_complete(op->handle.load());
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    op->returned = true;
    return MPI_ERR_IO;
}
int slow_failing_wait(int count, void** states, double, MPI_Status* status) {
    for (int i = 0; i < count; i++) {
        slow_failing_poll(states[i], status);
    }
    return MPI_SUCCESS;
}
int slow_failing_free(void* extra) {
    static_cast<SlowFailingOp*>(extra)->frees++;
    return MPI_SUCCESS;
}

}  // namespace

TEST_CASE("threads: a request completed inside another thread's poll_fn carries its error",
          "[greq]") {
    int provided = 0;
    MPI_Query_thread(&provided);
    REQUIRE(provided == MPI_THREAD_MULTIPLE);
    ErrorsReturn errors_return;
    MPI_Comm probe_comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &probe_comm);
    for (int round = 0; round < 5; round++) {
        SlowFailingOp op;
        MPI_Request req = MPI_REQUEST_NULL;
        MPIX_Grequest_start(lib_query, slow_failing_free, lib_cancel, slow_failing_poll,
                            slow_failing_wait, &op, &req);
        op.handle = req;
        int flag = -1;
        // the owner's first test: the request is no longer only the owner's to poll
        REQUIRE(MPI_Test(&req, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        REQUIRE(flag == 0);
        std::atomic<bool> stop{false};
        MPI_Status st;
        int rc = MPI_SUCCESS;
        bool returned_before_seen = false;
        {
            Watchdog watchdog("a test loop beside a slow failing poll_fn", 60.0);
            std::thread helper_thread([&] {
                while (!stop.load()) {
                    int f = 0;
                    MPI_Iprobe(MPI_ANY_SOURCE, 12346, probe_comm, &f, MPI_STATUS_IGNORE);
                }
            });
            op.helper = helper_thread.get_id();
            op.armed = true;
            flag = 0;
            while (!flag) {
                rc = MPI_Test(&req, &flag, &st);
                if (rc != MPI_SUCCESS) {
                    break;
                }
                // MPICH's global mutex is not fair: leave the helper thread a turn
                std::this_thread::sleep_for(std::chrono::microseconds(200));
            }
            returned_before_seen = op.returned.load();
            stop = true;
            helper_thread.join();
        }
        CHECK(op.fired.load());
        // seen complete only once poll_fn returned, and with its error
        CHECK(returned_before_seen);
        CHECK(error_class(rc) == MPI_ERR_IO);
        CHECK(flag == 1);
        CHECK(req == MPI_REQUEST_NULL);
        CHECK(op.frees.load() == 1);
    }
    MPI_Comm_free(&probe_comm);
}

TEST_CASE("threads: class requests are never polled before the library holds their handle", "[greq]") {
    int provided = 0;
    MPI_Query_thread(&provided);
    REQUIRE(provided == MPI_THREAD_MULTIPLE);
    constexpr int kWorkers = 4;
    polled_without_handle = 0;
    complete_errors = 0;
    std::vector<std::vector<LibOp>> ops(kWorkers);
    for (auto& v : ops) {
        v = std::vector<LibOp>(kBatch * kBatches);
    }
    MPI_Comm probe_comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &probe_comm);
    std::atomic<int> wrong{0};
    std::atomic<bool> stop{false};
    {
        Watchdog watchdog("4 threads completing class requests, one probing", 120.0);
        // a fifth thread drives progress all the time: it polls every listed request
        std::thread prober([&] {
            while (!stop.load()) {
                int flag = 0;
                MPI_Iprobe(MPI_ANY_SOURCE, 12345, probe_comm, &flag, MPI_STATUS_IGNORE);
            }
        });
        std::vector<std::thread> workers;
        for (int t = 0; t < kWorkers; t++) {
            workers.emplace_back(worker, t, std::ref(ops[static_cast<size_t>(t)]),
                                 std::ref(wrong));
        }
        for (auto& w : workers) {
            w.join();
        }
        stop = true;
        prober.join();
    }
    CHECK(polled_without_handle.load() == 0);
    CHECK(complete_errors.load() == 0);
    CHECK(wrong.load() == 0);
    int freed = 0;
    for (auto& v : ops) {
        for (auto& op : v) {
            freed += op.frees.load();
            CHECK(op.frees.load() == 1);
        }
    }
    CHECK(freed == kWorkers * kBatch * kBatches);
    MPI_Comm_free(&probe_comm);
}
