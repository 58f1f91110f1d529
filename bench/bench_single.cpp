// The single-request completion calls most applications make, one process, requests to itself:
//   test_pending       MPI_Test on one receive nothing matches (flag 0)
//   get_status_pending MPI_Request_get_status on it
//   wait_complete      a persistent send and receive to self started, then MPI_Wait on each
//   test_complete      the same, then MPI_Test on each (both complete: flag 1)
// The complete cases include MPI_Start and the copy; what they compare across builds of the same
// series is the completion calls' own cost. Each case runs ROUNDS rounds of CALLS calls; printed
// per case: the median over rounds of ns per call.
// usage: mpiexec -n 1 bench_single [CALLS] [ROUNDS]
// prints: single <build> <case> <ns per call>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "bench_common.hpp"

namespace {

double median_ns_per_call(int calls, int rounds, const std::function<void(int)>& body) {
    std::vector<double> per_call;
    body(calls / 10 + 1);  // warm up
    for (int r = 0; r < rounds; r++) {
        const double t0 = bench::now_ns();
        body(calls);
        per_call.push_back((bench::now_ns() - t0) / calls);
    }
    std::sort(per_call.begin(), per_call.end());
    return per_call[per_call.size() / 2];
}

void print(const char* name, double ns) {
    std::printf("single %s %s %.1f\n", bench::build_name().c_str(), name, ns);
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    const int calls = argc > 1 ? std::atoi(argv[1]) : 1000000;
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 7;

    int buf = 0, flag = 0;
    MPI_Request pending;
    MPI_Irecv(&buf, 1, MPI_INT, 0, 99, MPI_COMM_SELF, &pending);
    print("test_pending", median_ns_per_call(calls, rounds, [&](int n) {
              for (int i = 0; i < n; i++) MPI_Test(&pending, &flag, MPI_STATUS_IGNORE);
          }));
    print("get_status_pending", median_ns_per_call(calls, rounds, [&](int n) {
              for (int i = 0; i < n; i++) MPI_Request_get_status(pending, &flag, MPI_STATUS_IGNORE);
          }));
    MPI_Cancel(&pending);
    MPI_Wait(&pending, MPI_STATUS_IGNORE);

    int out = 1, in = 0;
    MPI_Request pair[2];
    MPI_Recv_init(&in, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &pair[0]);
    MPI_Send_init(&out, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &pair[1]);
    // two completion calls per round of a pair
    const int pairs = calls / 2;
    print("wait_complete", median_ns_per_call(pairs, rounds, [&](int n) {
              for (int i = 0; i < n; i++) {
                  MPI_Startall(2, pair);
                  MPI_Wait(&pair[1], MPI_STATUS_IGNORE);
                  MPI_Wait(&pair[0], MPI_STATUS_IGNORE);
              }
          }) / 2);
    print("test_complete", median_ns_per_call(pairs, rounds, [&](int n) {
              for (int i = 0; i < n; i++) {
                  MPI_Startall(2, pair);
                  int done = 0;
                  while (!done) MPI_Test(&pair[1], &done, MPI_STATUS_IGNORE);
                  done = 0;
                  while (!done) MPI_Test(&pair[0], &done, MPI_STATUS_IGNORE);
              }
          }) / 2);
    MPI_Request_free(&pair[0]);
    MPI_Request_free(&pair[1]);
    MPI_Finalize();
    return 0;
}
