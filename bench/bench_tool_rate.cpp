// Message rate between two ranks with WINDOW receives in flight, completed by MPI_Testsome, which
// re-posts each completed slot in place.
//
// MODE plain: every call is PMPI_Testsome (what an application without a tool runs).
// MODE alternate (linked with the reqstatus tool library, tool/, whose MPI_Testsome is
// get_status_some + one MPI_Waitall over the reported requests): the receiver alternates phases of
// PHASE messages completed through MPI_Testsome (the tool) and through PMPI_Testsome (plain) in
// one run, and prints the rate of each. Rates on this 2-core VM vary by +-20% from run to run
// (steal time, where the scheduler puts the ranks), far more than the difference measured; phases
// a few milliseconds long within one run see the same conditions.
// The message loop, with its flow control: windowed_rate.hpp.
// usage: mpiexec -n 2 bench_tool_rate WINDOW MESSAGES plain|alternate
// prints, per mode measured: rate <build> <plain|tool> <window> <messages> <seconds> <messages/s>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "windowed_rate.hpp"

namespace {

using TestsomeFn = int (*)(int, MPI_Request[], int*, int[], MPI_Status[]);

}  // namespace

int main(int argc, char* argv[]) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const int window = argc > 1 ? std::atoi(argv[1]) : 64;
    const long messages = argc > 2 ? std::atol(argv[2]) : 200000;
    const bool alternate = argc > 3 && std::string(argv[3]) == "alternate";
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        bench::send_windowed(messages, window);
    } else if (rank == 0) {
        // mode 0 plain (PMPI_Testsome), mode 1 through the tool (MPI_Testsome)
        const TestsomeFn testsome[2] = {PMPI_Testsome, MPI_Testsome};
        const bench::PhaseTotals t = bench::receive_windowed(
            messages, window, alternate ? 2 : 1, [](int) {},
            [&](int mode, int n, MPI_Request reqs[], int* outcount, int indices[]) {
                testsome[mode](n, reqs, outcount, indices, MPI_STATUSES_IGNORE);
            });
        const char* mode_name[2] = {"plain", "tool"};
        for (int mode = 0; mode < (alternate ? 2 : 1); mode++) {
            std::printf("rate %s %s %d %ld %.3f %.0f\n", bench::build_name().c_str(),
                        mode_name[mode], window, t.messages[size_t(mode)], t.seconds[size_t(mode)],
                        t.rate(mode));
        }
    }
    MPI_Finalize();
    return 0;
}
