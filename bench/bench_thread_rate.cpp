// Message rate with threads (MPI_THREAD_MULTIPLE): on each of 2 processes, T threads, each on a
// communicator of its own, stream windows of 64 small messages (rank 0 sends, rank 1 receives,
// MPI_Waitall per window) for a fixed time. What the progress engine does per completion
// (grequest-wait-while-network-moves's activity count among it) shows as a lower rate than stock's.
//
// usage: mpiexec -n 2 bench_thread_rate THREADS SECONDS
// prints (rank 0): threads <build> <threads> <messages per second, all threads>
#include <mpi.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "bench_common.hpp"

namespace {

constexpr int kWindow = 64;

long stream(MPI_Comm comm, int rank, double seconds) {
    std::vector<MPI_Request> reqs(kWindow);
    std::vector<int> bufs(kWindow, 7);
    long windows = 0;
    const double end = MPI_Wtime() + seconds;
    for (;;) {
        // rank 0 decides when to stop and tells rank 1 in the window's first message's tag
        int go = 1;
        if (rank == 0) {
            go = MPI_Wtime() < end ? 1 : 0;
        }
        MPI_Bcast(&go, 1, MPI_INT, 0, comm);
        if (!go) {
            break;
        }
        for (int i = 0; i < kWindow; i++) {
            if (rank == 0) {
                MPI_Isend(&bufs[i], 1, MPI_INT, 1, i, comm, &reqs[i]);
            } else {
                MPI_Irecv(&bufs[i], 1, MPI_INT, 0, i, comm, &reqs[i]);
            }
        }
        MPI_Waitall(kWindow, reqs.data(), MPI_STATUSES_IGNORE);
        windows++;
    }
    return windows * kWindow;
}

}  // namespace

int main(int argc, char* argv[]) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
    const double seconds = argc > 2 ? std::atof(argv[2]) : 1.0;
    if (provided < MPI_THREAD_MULTIPLE) {
        std::fprintf(stderr, "no MPI_THREAD_MULTIPLE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    std::vector<MPI_Comm> comms(threads);
    for (auto& c : comms) {
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
    }
    std::atomic<long> messages{0};
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++) {
        pool.emplace_back([&, t] { messages += stream(comms[t], rank, seconds); });
    }
    for (auto& th : pool) {
        th.join();
    }
    const double elapsed = MPI_Wtime() - t0;
    if (rank == 0) {
        std::printf("threads %s %d %.0f\n", bench::build_name().c_str(), threads,
                    static_cast<double>(messages.load()) / elapsed);
    }
    for (auto& c : comms) {
        MPI_Comm_free(&c);
    }
    MPI_Finalize();
    return 0;
}
