// A generalized request class of the tests' own (MPIX_Grequest_class_create), whose callbacks
// record how MPICH calls them: poll_fn calls, and the count and timeout of every wait_fn call.
// A request completes when its deadline passes (poll_fn or wait_fn sees it), or when its
// message arrives (a receive it tests), or on its n-th poll; any callback can be told to fail,
// and a request can be made to fail when over (completed, and the callback returns an error).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <thread>
#include <vector>

namespace reqtest {

struct ClassOp {
    MPI_Request request = MPI_REQUEST_NULL;  // the generalized request, for MPI_Grequest_complete
    int id = 0;                              // reported as the status's MPI_TAG
    double deadline = 0;                     // MPI_Wtime() at which the operation is over
    int complete_on_poll = 0;                // > 0: the operation is over at that poll
    MPI_Request message = MPI_REQUEST_NULL;  // != NULL: over when this receive completes
    int poll_error = MPI_SUCCESS;            // poll_fn returns it instead of polling
    int wait_error = MPI_SUCCESS;            // wait_fn returns it when handed this request
    int query_error = MPI_SUCCESS;           // query_fn returns it
    int error_when_over = MPI_SUCCESS;       // poll_fn/wait_fn complete it, then return this
    int polls = 0;
    bool completed = false;
    int frees = 0;
};

struct WaitCall {
    int count;
    double timeout;
};

// One class for the whole test binary (MPI has no call to free a class); its callbacks record
// into the current recorder.
class TestClass {
public:
    static TestClass& get() {
        static TestClass c;
        return c;
    }
    MPIX_Grequest_class handle() const { return handle_; }
    std::vector<WaitCall> wait_calls;

    // A request of the class; the op lives in the test's ClassOps.
    MPI_Request allocate(ClassOp& op) {
        MPIX_Grequest_class_allocate(handle_, &op, &op.request);
        return op.request;
    }

private:
    TestClass() { MPIX_Grequest_class_create(query, free_op, cancel, poll, wait, &handle_); }

    static bool over(ClassOp& op) {
        if (op.message != MPI_REQUEST_NULL) {
            int flag = 0;
            MPI_Test(&op.message, &flag, MPI_STATUS_IGNORE);
            return flag != 0;
        }
        if (op.complete_on_poll > 0) {
            return op.polls >= op.complete_on_poll;
        }
        return MPI_Wtime() >= op.deadline;
    }
    static void complete(ClassOp& op) {
        op.completed = true;
        MPI_Grequest_complete(op.request);
    }
    static int query(void* extra, MPI_Status* status) {
        auto& op = *static_cast<ClassOp*>(extra);
        MPI_Status_set_elements(status, MPI_BYTE, op.id);
        MPI_Status_set_cancelled(status, 0);
        status->MPI_SOURCE = MPI_UNDEFINED;
        status->MPI_TAG = op.id;
        return op.query_error;
    }
    static int free_op(void* extra) {
        static_cast<ClassOp*>(extra)->frees++;
        return MPI_SUCCESS;
    }
    static int cancel(void*, int) { return MPI_SUCCESS; }
    static int poll(void* extra, MPI_Status*) {
        auto& op = *static_cast<ClassOp*>(extra);
        if (op.poll_error != MPI_SUCCESS) {
            return op.poll_error;
        }
        op.polls++;
        if (!op.completed && over(op)) {
            complete(op);
            return op.error_when_over;
        }
        return MPI_SUCCESS;
    }
    // Blocks until the first of the ops given is over or the timeout passes, then completes
    // those that are over.
    static int wait(int count, void** states, double timeout, MPI_Status*) {
        get().wait_calls.push_back({count, timeout});
        const double start = MPI_Wtime();
        for (;;) {
            int over_now = 0, rc = MPI_SUCCESS;
            for (int i = 0; i < count; i++) {
                auto& op = *static_cast<ClassOp*>(states[i]);
                if (op.wait_error != MPI_SUCCESS) {
                    return op.wait_error;
                }
                if (!op.completed && over(op)) {
                    complete(op);
                    if (op.error_when_over != MPI_SUCCESS) {
                        rc = op.error_when_over;
                    }
                }
                over_now += op.completed ? 1 : 0;
            }
            if (rc != MPI_SUCCESS) {
                return rc;
            }
            if (over_now > 0 || MPI_Wtime() - start >= timeout) {
                return MPI_SUCCESS;
            }
            std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
    }

    MPIX_Grequest_class handle_ = 0;
};

// The ops of one test, at stable addresses. Whatever a failed check left pending is completed
// at the end, so no pending request points at a destroyed op.
class ClassOps {
public:
    ClassOps() = default;
    ~ClassOps() {
        for (ClassOp& op : ops_) {
            if (op.request != MPI_REQUEST_NULL && !op.completed && op.frees == 0) {
                op.poll_error = op.wait_error = op.query_error = MPI_SUCCESS;
                op.error_when_over = MPI_SUCCESS;
                op.complete_on_poll = 0;
                op.deadline = 0;
                if (op.message != MPI_REQUEST_NULL) {
                    MPI_Cancel(&op.message);
                    MPI_Wait(&op.message, MPI_STATUS_IGNORE);
                }
                MPI_Request req = op.request;
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
        }
    }
    ClassOps(const ClassOps&) = delete;
    ClassOps& operator=(const ClassOps&) = delete;

    ClassOp& add(int id) {
        ops_.emplace_back();
        ops_.back().id = id;
        return ops_.back();
    }
    ClassOp& operator[](size_t i) { return ops_[i]; }
    size_t size() const { return ops_.size(); }

private:
    std::deque<ClassOp> ops_;
};

}  // namespace reqtest
