// Generalized request classes under MPI_THREAD_MULTIPLE: a class request is never polled before
// the library holds its handle, requests are completed from other threads while the progress
// engine polls, every completion call is used by several threads at once, and a completion a
// poll_fn makes in another thread is seen with that poll_fn's error, without hiding it from the
// thread that completes it or from the poll_fn itself.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
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

// A thread that makes progress until it is stopped: MPI_Request_get_status on a pending
// generalized request of its own (on one process, a probe makes no progress in ch4).
class ProgressThread {
public:
    ProgressThread() {
        MPI_Grequest_start(lib_query, noop_free, lib_cancel, nullptr, &dummy_);
        thread_ = std::thread([this] {
            while (!stop_.load()) {
                int flag = 0;
                MPI_Request_get_status(dummy_, &flag, MPI_STATUS_IGNORE);
            }
        });
    }
    ~ProgressThread() {
        stop_ = true;
        thread_.join();
        MPI_Grequest_complete(dummy_);
        MPI_Wait(&dummy_, MPI_STATUS_IGNORE);
    }
    ProgressThread(const ProgressThread&) = delete;
    ProgressThread& operator=(const ProgressThread&) = delete;
    std::thread::id id() const { return thread_.get_id(); }

private:
    static int noop_free(void*) { return MPI_SUCCESS; }
    MPI_Request dummy_ = MPI_REQUEST_NULL;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

// MPICH's global mutex is not fair: a thread that loops on MPI calls leaves others a turn
void leave_a_turn() { std::this_thread::sleep_for(std::chrono::microseconds(200)); }

// A library operation whose poll_fn acts only in the progress thread, once armed, and once.
struct ThreadedOp {
    std::atomic<MPI_Request> handle{MPI_REQUEST_NULL};
    std::atomic<bool> armed{false};
    std::atomic<bool> fired{false};
    std::atomic<bool> in_poll{false};
    std::atomic<bool> returned{false};
    std::atomic<bool> release{false};
    std::thread::id helper;
    std::atomic<int> frees{0};
    // what poll_fn does once fired
    enum class Action { CompleteThenFail, WaitForRelease, TakeLibraryMutex, CompleteThenWait };
    Action action = Action::CompleteThenFail;
    std::mutex* library_mutex = nullptr;
    std::atomic<int> flag_inside{-1};
    std::atomic<int> wait_rc_inside{-1};

    bool fire_here() {
        return armed.load() && std::this_thread::get_id() == helper && !fired.exchange(true);
    }
};

int threaded_poll(void* extra, MPI_Status*) {
    auto* op = static_cast<ThreadedOp*>(extra);
    if (!op->fire_here()) {
        return MPI_SUCCESS;
    }
    op->in_poll = true;
    int rc = MPI_SUCCESS;
    switch (op->action) {
        case ThreadedOp::Action::CompleteThenFail:
            MPI_Grequest_complete(op->handle.load());
            std::this_thread::sleep_for(std::chrono::milliseconds(30));
            rc = MPI_ERR_IO;
            break;
        case ThreadedOp::Action::WaitForRelease:
            while (!op->release.load()) {
                std::this_thread::sleep_for(std::chrono::microseconds(100));
            }
            break;
        case ThreadedOp::Action::TakeLibraryMutex: {
            // the library's poll_fn reads state the library guards with its own mutex
            std::lock_guard<std::mutex> guard(*op->library_mutex);
            break;
        }
        case ThreadedOp::Action::CompleteThenWait: {
            MPI_Request h = op->handle.load();
            MPI_Grequest_complete(h);
            int flag = -1;
            MPI_Request_get_status(h, &flag, MPI_STATUS_IGNORE);
            op->flag_inside = flag;
            op->wait_rc_inside = MPI_Wait(&h, MPI_STATUS_IGNORE);
            break;
        }
    }
    op->returned = true;
    return rc;
}
int threaded_wait(int count, void** states, double, MPI_Status* status) {
    for (int i = 0; i < count; i++) {
        threaded_poll(states[i], status);
    }
    return MPI_SUCCESS;
}
int threaded_free(void* extra) {
    static_cast<ThreadedOp*>(extra)->frees++;
    return MPI_SUCCESS;
}

// Starts op's request and tests it once, so that any thread's progress may poll it.
MPI_Request start_threaded(ThreadedOp& op) {
    MPI_Request req = MPI_REQUEST_NULL;
    MPIX_Grequest_start(lib_query, threaded_free, lib_cancel, threaded_poll, threaded_wait, &op,
                        &req);
    op.handle = req;
    int flag = -1;
    MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    return req;
}

// Waits, without MPI calls, until pred holds; false after 30 s.
template <class Pred>
bool wait_without_mpi(Pred&& pred) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!pred()) {
        if (std::chrono::steady_clock::now() > end) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    return true;
}

}  // namespace

TEST_CASE("threads: a request its poll_fn completed is seen complete only with that poll_fn's error",
          "[greq]") {
    int provided = 0;
    MPI_Query_thread(&provided);
    REQUIRE(provided == MPI_THREAD_MULTIPLE);
    ErrorsReturn errors_return;
    for (int round = 0; round < 5; round++) {
        ThreadedOp op;
        MPI_Request req = start_threaded(op);
        MPI_Status st;
        int rc = MPI_SUCCESS, flag = 0;
        bool returned_before_seen = false;
        {
            Watchdog watchdog("a test loop beside a slow failing poll_fn", 60.0);
            ProgressThread progress;
            op.helper = progress.id();
            op.armed = true;
            while (!flag) {
                rc = MPI_Test(&req, &flag, &st);
                if (rc != MPI_SUCCESS) {
                    break;
                }
                leave_a_turn();
            }
            returned_before_seen = op.returned.load();
        }
        CHECK(op.fired.load());
        CHECK(returned_before_seen);
        CHECK(error_class(rc) == MPI_ERR_IO);
        CHECK(flag == 1);
        CHECK(req == MPI_REQUEST_NULL);
        CHECK(op.frees.load() == 1);
    }
}

TEST_CASE("threads: the thread that completes a request sees it complete while a poll_fn runs",
          "[greq]") {
    int provided = 0;
    MPI_Query_thread(&provided);
    REQUIRE(provided == MPI_THREAD_MULTIPLE);
    ErrorsReturn errors_return;
    SECTION("MPI_Test and MPI_Request_get_status right after MPI_Grequest_complete") {
        ThreadedOp op;
        op.action = ThreadedOp::Action::WaitForRelease;
        MPI_Request req = start_threaded(op);
        Watchdog watchdog("a test after this thread's MPI_Grequest_complete", 60.0);
        ProgressThread progress;
        op.helper = progress.id();
        op.armed = true;
        REQUIRE(wait_without_mpi([&] { return op.in_poll.load(); }));
        CHECK(MPI_Grequest_complete(req) == MPI_SUCCESS);
        int flag = -1;
        CHECK(MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        CHECK(flag == 1);
        flag = -1;
        CHECK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        CHECK(flag == 1);
        CHECK(req == MPI_REQUEST_NULL);
        op.release = true;
        REQUIRE(wait_without_mpi([&] { return op.returned.load(); }));
        REQUIRE(wait_without_mpi([&] { return op.frees.load() == 1; }));
    }
    SECTION("MPI_Wait with the library's mutex held, which the running poll_fn waits for") {
        std::mutex library_mutex;
        ThreadedOp op;
        op.action = ThreadedOp::Action::TakeLibraryMutex;
        op.library_mutex = &library_mutex;
        MPI_Request req = start_threaded(op);
        Watchdog watchdog("MPI_Wait on a request this thread completed, library mutex held", 60.0);
        ProgressThread progress;
        op.helper = progress.id();
        {
            std::lock_guard<std::mutex> guard(library_mutex);
            op.armed = true;
            REQUIRE(wait_without_mpi([&] { return op.in_poll.load(); }));
            CHECK(MPI_Grequest_complete(req) == MPI_SUCCESS);
            CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS);
            CHECK(req == MPI_REQUEST_NULL);
        }
        REQUIRE(wait_without_mpi([&] { return op.returned.load(); }));
        REQUIRE(wait_without_mpi([&] { return op.frees.load() == 1; }));
    }
}

TEST_CASE("threads: a poll_fn that completes its own request sees it complete in its MPI calls",
          "[greq]") {
    int provided = 0;
    MPI_Query_thread(&provided);
    REQUIRE(provided == MPI_THREAD_MULTIPLE);
    ErrorsReturn errors_return;
    ThreadedOp op;
    op.action = ThreadedOp::Action::CompleteThenWait;
    start_threaded(op);  // the poll_fn releases the request with its MPI_Wait
    {
        Watchdog watchdog("MPI_Wait inside the poll_fn that completed the request", 60.0);
        ProgressThread progress;
        op.helper = progress.id();
        op.armed = true;
        REQUIRE(wait_without_mpi([&] { return op.returned.load(); }));
    }
    CHECK(op.flag_inside.load() == 1);
    CHECK(op.wait_rc_inside.load() == MPI_SUCCESS);
    CHECK(op.frees.load() == 1);
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
