// Fairness under a flood: ranks 1..K send MESSAGES small messages to each of SLOTS receive slots
// of rank 0 up front (eager: they wait in rank 0's unexpected queue), then a "done" message; once
// rank 0 has the done message of every sender (messages from one sender arrive in order), every
// slot has a message ready whenever it is re-posted: a flood. Rank 0 serves with get_status_any +
// MPI_Test (MPI_Testany on stock, which has no get_status_any) and re-posts the slot. Over the
// first SLOTS * MESSAGES / 2 services (every slot still has messages waiting) it reports Jain's
// fairness index of the services per slot and the worst wait: the most services a ready slot
// waited between two of its services (or from the start, or until the end of the window).
// usage: mpiexec -n K+1 bench_fairness SLOTS MESSAGES LABEL
// prints: fairness <build> <label> <slots> <services> <jain> <worst wait> <services per slot...>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace {

constexpr int kDoneTag = 1 << 20;

void feed(int rank, int size, int slots, int messages) {
    std::vector<MPI_Request> reqs;
    int payload = rank;
    for (int s = 0; s < slots; s++) {
        if (1 + s % (size - 1) != rank) {
            continue;
        }
        for (int m = 0; m < messages; m++) {
            reqs.emplace_back(MPI_REQUEST_NULL);
            MPI_Isend(&payload, 1, MPI_INT, 0, s, MPI_COMM_WORLD, &reqs.back());
        }
    }
    MPI_Send(&payload, 1, MPI_INT, 0, kDoneTag, MPI_COMM_WORLD);
    MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
}

int serve_one(std::vector<MPI_Request>& reqs) {
    int index = MPI_UNDEFINED, flag = 0;
#ifdef MPIX_HAVE_REQUEST_GET_STATUS_MULTIPLE
    MPI_Request_get_status_any(static_cast<int>(reqs.size()), reqs.data(), &index, &flag,
                               MPI_STATUS_IGNORE);
    if (flag && index != MPI_UNDEFINED) {
        int done = 0;
        MPI_Test(&reqs[static_cast<size_t>(index)], &done, MPI_STATUS_IGNORE);
    }
#else
    MPI_Testany(static_cast<int>(reqs.size()), reqs.data(), &index, &flag, MPI_STATUS_IGNORE);
#endif
    return (flag && index != MPI_UNDEFINED) ? index : -1;
}

}  // namespace

int main(int argc, char* argv[]) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int slots = argc > 1 ? std::atoi(argv[1]) : 8;
    const int messages = argc > 2 ? std::atoi(argv[2]) : 100;
    const std::string label = argc > 3 ? argv[3] : "default";
    if (size < 2) {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank > 0) {
        feed(rank, size, slots, messages);
        MPI_Finalize();
        return 0;
    }
    std::vector<int> bufs(static_cast<size_t>(slots));
    std::vector<MPI_Request> reqs(static_cast<size_t>(slots));
    std::vector<int> received(static_cast<size_t>(slots), 0);
    for (int s = 0; s < slots; s++) {
        MPI_Irecv(&bufs[static_cast<size_t>(s)], 1, MPI_INT, MPI_ANY_SOURCE, s, MPI_COMM_WORLD, &reqs[static_cast<size_t>(s)]);
    }
    for (int k = 1; k < size; k++) {
        int done = 0;
        MPI_Recv(&done, 1, MPI_INT, k, kDoneTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    const long window = static_cast<long>(slots) * messages / 2;
    std::vector<long> served(static_cast<size_t>(slots), 0), last(static_cast<size_t>(slots), 0);
    long services = 0, worst = 0;
    const long total = static_cast<long>(slots) * messages;
    while (services < total) {
        const int s = serve_one(reqs);
        if (s < 0) {
            continue;
        }
        const size_t i = static_cast<size_t>(s);
        services++;
        if (services <= window) {
            served[i]++;
            worst = std::max(worst, services - last[i]);
            last[i] = services;
        }
        if (++received[i] < messages) {
            MPI_Irecv(&bufs[i], 1, MPI_INT, MPI_ANY_SOURCE, s, MPI_COMM_WORLD, &reqs[i]);
        }
    }
    for (size_t i = 0; i < served.size(); i++) {
        worst = std::max(worst, window - last[i]);  // waiting at the end of the window
    }
    double sum = 0, sum_sq = 0;
    for (long x : served) {
        sum += static_cast<double>(x);
        sum_sq += static_cast<double>(x) * static_cast<double>(x);
    }
    const double jain = sum * sum / (static_cast<double>(slots) * sum_sq);
    std::printf("fairness %s %s %d %ld %.3f %ld", bench::build_name().c_str(), label.c_str(), slots,
                window, jain, worst);
    for (long x : served) {
        std::printf(" %ld", x);
    }
    std::printf("\n");
    MPI_Finalize();
    return 0;
}
