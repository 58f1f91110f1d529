// Fairness under a flood: ranks 1..K keep every one of SLOTS receive slots of rank 0 supplied
// (DEPTH synchronous sends outstanding per slot, MESSAGES per slot in all); rank 0 serves with
// get_status_any + MPI_Test (or MPI_Testany on stock, which has no get_status_any) and
// re-posts the slot. Over the first SLOTS * MESSAGES / 2 services (while every slot still has
// messages coming) it reports Jain's fairness index of the services per slot and the worst wait:
// the most services between two services of one slot (or from the start, for a slot never
// served, up to the end of the window).
// usage: mpiexec -n K+1 bench_fairness SLOTS MESSAGES DEPTH LABEL
// prints: fairness <build> <label> <slots> <services> <jain> <worst wait> <services per slot...>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace {

void feed(int rank, int size, int slots, int messages, int depth) {
    std::vector<int> mine;
    for (int s = 0; s < slots; s++) {
        if (1 + s % (size - 1) == rank) {
            mine.push_back(s);
        }
    }
    const size_t n = mine.size() * static_cast<size_t>(depth);
    std::vector<MPI_Request> reqs(n, MPI_REQUEST_NULL);
    std::vector<int> sent(mine.size(), 0);
    int payload = rank;
    for (size_t k = 0; k < n; k++) {
        const size_t m = k / static_cast<size_t>(depth);
        if (sent[m] < messages) {
            MPI_Issend(&payload, 1, MPI_INT, 0, mine[m], MPI_COMM_WORLD, &reqs[k]);
            sent[m]++;
        }
    }
    for (;;) {
        int k = MPI_UNDEFINED;
        MPI_Waitany(static_cast<int>(n), reqs.data(), &k, MPI_STATUS_IGNORE);
        if (k == MPI_UNDEFINED) {
            break;
        }
        const size_t m = static_cast<size_t>(k) / static_cast<size_t>(depth);
        if (sent[m] < messages) {
            MPI_Issend(&payload, 1, MPI_INT, 0, mine[m], MPI_COMM_WORLD, &reqs[static_cast<size_t>(k)]);
            sent[m]++;
        }
    }
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
    const int depth = argc > 3 ? std::atoi(argv[3]) : 4;
    const std::string label = argc > 4 ? argv[4] : "default";
    if (size < 2) {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank > 0) {
        feed(rank, size, slots, messages, depth);
        MPI_Finalize();
        return 0;
    }
    std::vector<int> bufs(static_cast<size_t>(slots));
    std::vector<MPI_Request> reqs(static_cast<size_t>(slots));
    std::vector<int> received(static_cast<size_t>(slots), 0);
    for (int s = 0; s < slots; s++) {
        MPI_Irecv(&bufs[static_cast<size_t>(s)], 1, MPI_INT, MPI_ANY_SOURCE, s, MPI_COMM_WORLD, &reqs[static_cast<size_t>(s)]);
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
