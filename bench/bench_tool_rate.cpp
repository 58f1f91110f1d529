// Message rate between two ranks with WINDOW receives in flight, completed by MPI_Testsome, which
// re-posts each completed slot. Built twice by bench/run-bench: plain and linked with the
// reqstatus tool library (tool/), whose MPI_Testsome is get_status_some + MPI_Test per request.
// usage: mpiexec -n 2 bench_tool_rate WINDOW MESSAGES LABEL
// prints: rate <build> <label> <window> <messages> <seconds> <messages per second>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_common.hpp"

int main(int argc, char* argv[]) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const int window = argc > 1 ? std::atoi(argv[1]) : 64;
    const long messages = argc > 2 ? std::atol(argv[2]) : 200000;
    const std::string label = argc > 3 ? argv[3] : "plain";
    std::vector<MPI_Request> reqs(static_cast<size_t>(window), MPI_REQUEST_NULL);
    std::vector<long> bufs(static_cast<size_t>(window));
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    if (rank == 1) {
        long payload = 1;
        for (long sent = 0; sent < messages;) {
            int batch = 0;
            for (; batch < window && sent < messages; batch++, sent++) {
                MPI_Isend(&payload, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD, &reqs[static_cast<size_t>(batch)]);
            }
            MPI_Waitall(batch, reqs.data(), MPI_STATUSES_IGNORE);
        }
    } else if (rank == 0) {
        long posted = 0, received = 0;
        for (int i = 0; i < window && posted < messages; i++, posted++) {
            MPI_Irecv(&bufs[static_cast<size_t>(i)], 1, MPI_LONG, 1, 0, MPI_COMM_WORLD, &reqs[static_cast<size_t>(i)]);
        }
        std::vector<int> indices(static_cast<size_t>(window));
        while (received < messages) {
            int outcount = 0;
            MPI_Testsome(window, reqs.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE);
            for (int j = 0; j < outcount && outcount != MPI_UNDEFINED; j++, received++) {
                const size_t i = static_cast<size_t>(indices[static_cast<size_t>(j)]);
                if (posted < messages) {
                    MPI_Irecv(&bufs[i], 1, MPI_LONG, 1, 0, MPI_COMM_WORLD, &reqs[i]);
                    posted++;
                }
            }
        }
        const double t = MPI_Wtime() - t0;
        std::printf("rate %s %s %d %ld %.3f %.0f\n", bench::build_name().c_str(), label.c_str(),
                    window, messages, t, static_cast<double>(messages) / t);
    }
    MPI_Finalize();
    return 0;
}
