// Generalized request classes in the Wait family, the two figures that need no disk:
//
// cross   2 ranks. Rank 0 posts a 64 MiB MPI_Isend to rank 1, then spends 1 s in MPI_Wait on a
//         class request (poll_fn and wait_fn, done after 1 s). Printed: how long rank 1 took to
//         receive the message. Stock 4.0.2 spins on poll_fn without network progress, so the
//         message waits for the class request.
// waitall 1 rank. MPI_Waitall on 100 class requests that are all done 20 ms after allocation.
//         Printed: wait_fn calls, the largest count handed to one, the calling thread's CPU
//         seconds in the wait and its wall time.
//
// The class's wait_fn follows the documented contract: block until one of the given requests
// is done or the timeout passes (0: do not block).
// usage: mpiexec -n 2 bench_greq_class cross | mpiexec -n 1 bench_greq_class waitall
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench_common.hpp"

namespace {

struct TimedOp {
    MPI_Request request = MPI_REQUEST_NULL;
    double deadline = 0;
    bool done = false;
};

int wait_calls = 0, largest_count = 0;

void complete_if_over(TimedOp& op) {
    if (!op.done && MPI_Wtime() >= op.deadline) {
        op.done = true;
        MPI_Grequest_complete(op.request);
    }
}

int query(void*, MPI_Status* status) {
    MPI_Status_set_elements(status, MPI_BYTE, 0);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
int free_op(void*) { return MPI_SUCCESS; }
int cancel(void*, int) { return MPI_SUCCESS; }
int poll(void* extra, MPI_Status*) {
    complete_if_over(*static_cast<TimedOp*>(extra));
    return MPI_SUCCESS;
}
int wait(int count, void** states, double timeout, MPI_Status*) {
    wait_calls++;
    largest_count = std::max(largest_count, count);
    double earliest = 1e300;
    for (int i = 0; i < count; i++) {
        earliest = std::min(earliest, static_cast<TimedOp*>(states[i])->deadline);
    }
    const double until = std::min(earliest, MPI_Wtime() + std::max(timeout, 0.0));
    const double left = until - MPI_Wtime();
    if (left > 0) {
        std::this_thread::sleep_for(std::chrono::duration<double>(left));
    }
    for (int i = 0; i < count; i++) {
        complete_if_over(*static_cast<TimedOp*>(states[i]));
    }
    return MPI_SUCCESS;
}

MPIX_Grequest_class make_class() {
    MPIX_Grequest_class cls;
    MPIX_Grequest_class_create(query, free_op, cancel, poll, wait, &cls);
    return cls;
}

void cross(MPIX_Grequest_class cls) {
    constexpr int kBytes = 64 << 20;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::vector<char> data(kBytes, 'm');
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Request send;
        MPI_Isend(data.data(), kBytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD, &send);
        TimedOp op;
        op.deadline = MPI_Wtime() + 1.0;
        MPIX_Grequest_class_allocate(cls, &op, &op.request);
        const double t0 = MPI_Wtime();
        MPI_Wait(&op.request, MPI_STATUS_IGNORE);
        const double waited = MPI_Wtime() - t0;
        MPI_Wait(&send, MPI_STATUS_IGNORE);
        double landed = 0;
        MPI_Recv(&landed, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        std::printf("cross %s %.4f %.4f\n", bench::build_name().c_str(), landed, waited);
    } else {
        const double t0 = MPI_Wtime();
        MPI_Recv(data.data(), kBytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        const double landed = MPI_Wtime() - t0;
        MPI_Send(&landed, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
    }
}

void waitall(MPIX_Grequest_class cls) {
    constexpr int n = 100;
    std::vector<TimedOp> ops(n);
    std::vector<MPI_Request> reqs(n);
    const double deadline = MPI_Wtime() + 0.02;
    for (int i = 0; i < n; i++) {
        ops[static_cast<size_t>(i)].deadline = deadline;
        MPIX_Grequest_class_allocate(cls, &ops[static_cast<size_t>(i)], &reqs[static_cast<size_t>(i)]);
        ops[static_cast<size_t>(i)].request = reqs[static_cast<size_t>(i)];
    }
    const double c0 = bench::thread_cpu_seconds(), t0 = MPI_Wtime();
    MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE);
    const double cpu = bench::thread_cpu_seconds() - c0, wall = MPI_Wtime() - t0;
    std::printf("waitall %s %d %d %.4f %.4f\n", bench::build_name().c_str(), wait_calls,
                largest_count, cpu, wall);
}

}  // namespace

int main(int argc, char* argv[]) {
    MPI_Init(&argc, &argv);
    const std::string what = argc > 1 ? argv[1] : "waitall";
    MPIX_Grequest_class cls = make_class();
    if (what == "cross") {
        cross(cls);
    } else {
        waitall(cls);
    }
    MPI_Finalize();
    return 0;
}
