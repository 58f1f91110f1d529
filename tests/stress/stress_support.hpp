// Shared pieces of the MPI_THREAD_MULTIPLE stress program: failure accounting, the completion
// forms a thread drives an array through, and a rendezvous for threads sharing one array.
#pragma once

#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <deque>
#include <mutex>
#include <vector>

namespace stress {

// Counts failed checks; prints the first few with their context.
class Failures {
public:
    void report(const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
        if (count_.fetch_add(1) < 20) {
            std::va_list ap;
            va_start(ap, fmt);
            std::vfprintf(stderr, fmt, ap);
            va_end(ap);
            std::fputc('\n', stderr);
        }
    }
    int count() const { return count_.load(); }

private:
    std::atomic<int> count_{0};
};

// Every form a program can complete (or observe, then complete) an array with. The get_status
// forms are followed by the completion MPI requires; each checks what seed 001 says of it.
enum class Form { Waitall, Waitany, Waitsome, Testall, Testany, Testsome, StatusAll, StatusSome, StatusAny };
constexpr int kForms = 9;
const char* form_name(Form f);

// Completes every request of reqs (statuses written into statuses, one per request, in array
// order) with form f; checks that each request is reported exactly once and ends as
// MPI_REQUEST_NULL. Returns the number of completions seen.
int complete_all(Form f, std::vector<MPI_Request>& reqs, std::vector<MPI_Status>& statuses,
                 Failures& failures, const char* who);

// Threads that share one array of requests: the owner posts a generation, every observer (the
// owner included) only reads the array until all have finished with it, then the owner
// completes it. The mutex orders the owner's writes of the array before the observers' reads.
class Rendezvous {
public:
    explicit Rendezvous(int observers) : observers_(observers) {}
    // owner: the array of generation g is ready
    void publish(int g) {
        std::lock_guard<std::mutex> lock(mutex_);
        generation_ = g;
        finished_ = 0;
        cv_.notify_all();
    }
    // observer: waits for generation g (returns false once the owner has stopped)
    bool await(int g) {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return generation_ >= g || stopped_; });
        return generation_ >= g;
    }
    // observer: done reading generation g
    void finish() {
        std::lock_guard<std::mutex> lock(mutex_);
        finished_++;
        cv_.notify_all();
    }
    // owner: waits until every observer has finished reading
    void await_observers() {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return finished_ == observers_; });
    }
    void stop() {
        std::lock_guard<std::mutex> lock(mutex_);
        stopped_ = true;
        cv_.notify_all();
    }

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    int observers_;
    int generation_ = -1;
    int finished_ = 0;
    bool stopped_ = false;
};

// Hands plain generalized requests to the completer thread.
class CompleterQueue {
public:
    void push(MPI_Request h) {
        std::lock_guard<std::mutex> lock(mutex_);
        queue_.push_back(h);
        cv_.notify_one();
    }
    void close() {
        std::lock_guard<std::mutex> lock(mutex_);
        closed_ = true;
        cv_.notify_one();
    }
    // the next request, or MPI_REQUEST_NULL once closed and drained
    MPI_Request pop() {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return !queue_.empty() || closed_; });
        if (queue_.empty()) return MPI_REQUEST_NULL;
        const MPI_Request h = queue_.front();
        queue_.pop_front();
        return h;
    }

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<MPI_Request> queue_;
    bool closed_ = false;
};

}  // namespace stress
