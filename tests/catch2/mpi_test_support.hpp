// Helpers shared by the Catch2 tests of MPI_Request_get_status_all/_any/_some.
#pragma once

#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace reqtest {

constexpr int kPoison = -77;
constexpr double kDeadlineSeconds = 30.0;

inline int world_rank() {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

inline int world_size() {
    int s = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    return s;
}

// A status no MPI call produces, to see what a call writes.
inline MPI_Status poisoned_status() {
    MPI_Status s;
    std::memset(&s, 0x5a, sizeof s);
    s.MPI_SOURCE = kPoison;
    s.MPI_TAG = kPoison;
    s.MPI_ERROR = kPoison;
    return s;
}

inline std::vector<MPI_Status> poisoned_statuses(int n) {
    return std::vector<MPI_Status>(static_cast<size_t>(n), poisoned_status());
}

// The text of an error code.
inline std::string error_text(int code) {
    char text[MPI_MAX_ERROR_STRING] = {0};
    int len = 0;
    MPI_Error_string(code, text, &len);
    return std::string(text, static_cast<size_t>(len));
}

inline int count_of(const MPI_Status& s, MPI_Datatype type) {
    int count = -1;
    MPI_Get_count(&s, type, &count);
    return count;
}

inline bool is_cancelled(const MPI_Status& s) {
    int flag = -1;
    MPI_Test_cancelled(&s, &flag);
    return flag != 0;
}

// The empty status of a null or inactive request, on a status poisoned beforehand:
// MPI_ANY_SOURCE, MPI_ANY_TAG, count 0, not cancelled, MPI_ERROR = MPI_SUCCESS (seed 001; every
// form writes it, as MPICH does since 4.2).
inline bool is_empty(const MPI_Status& s) {
    return s.MPI_SOURCE == MPI_ANY_SOURCE && s.MPI_TAG == MPI_ANY_TAG &&
           s.MPI_ERROR == MPI_SUCCESS && count_of(s, MPI_BYTE) == 0 && !is_cancelled(s);
}

inline int error_class(int code) {
    int cls = -1;
    MPI_Error_class(code, &cls);
    return cls;
}

// A hang fails with a message instead of a CI time-out: if the scope is not left within
// `seconds`, prints what hung and aborts the process (mpiexec then ends the others).
class Watchdog {
public:
    explicit Watchdog(std::string what, double seconds = kDeadlineSeconds)
        : what_(std::move(what)), thread_([this, seconds] { watch(seconds); }) {}
    ~Watchdog() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            done_ = true;
        }
        cv_.notify_one();
        thread_.join();
    }
    Watchdog(const Watchdog&) = delete;
    Watchdog& operator=(const Watchdog&) = delete;

private:
    void watch(double seconds) {
        std::unique_lock<std::mutex> lock(mutex_);
        const auto limit = std::chrono::duration<double>(seconds);
        if (!cv_.wait_for(lock, limit, [this] { return done_; })) {
            std::fprintf(stderr, "watchdog: %s did not return within %.0f s: hang\n",
                         what_.c_str(), seconds);
            std::fflush(stderr);
            std::abort();
        }
    }

    std::string what_;
    std::mutex mutex_;
    std::condition_variable cv_;
    bool done_ = false;
    std::thread thread_;
};

// Calls poll() until it returns true or the deadline passes; returns its last answer.
template <class Poll>
bool poll_until(Poll&& poll) {
    const double start = MPI_Wtime();
    while (!poll()) {
        if (MPI_Wtime() - start > kDeadlineSeconds) {
            return false;
        }
    }
    return true;
}

// An error handler on MPI_COMM_SELF and MPI_COMM_WORLD for the scope (errors of calls not tied
// to a communicator are raised on the former, in MPICH falling back to the latter's handler);
// the handlers found are put back.
class CommErrhandlers {
public:
    explicit CommErrhandlers(MPI_Errhandler handler) {
        MPI_Comm_get_errhandler(MPI_COMM_SELF, &self_);
        MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world_);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, handler);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, handler);
    }
    ~CommErrhandlers() {
        MPI_Comm_set_errhandler(MPI_COMM_SELF, self_);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, world_);
        MPI_Errhandler_free(&self_);
        MPI_Errhandler_free(&world_);
    }
    CommErrhandlers(const CommErrhandlers&) = delete;
    CommErrhandlers& operator=(const CommErrhandlers&) = delete;

private:
    MPI_Errhandler self_ = MPI_ERRHANDLER_NULL;
    MPI_Errhandler world_ = MPI_ERRHANDLER_NULL;
};

// MPI_ERRORS_RETURN on MPI_COMM_SELF and MPI_COMM_WORLD for the scope.
class ErrorsReturn : public CommErrhandlers {
public:
    ErrorsReturn() : CommErrhandlers(MPI_ERRORS_RETURN) {}
};

}  // namespace reqtest
