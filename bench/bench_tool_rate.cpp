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
//
// Flow control keeps the run repeatable: the sender never has more than WINDOW messages in flight
// and every message finds its receive posted. It sends WINDOW messages, then CHUNK (WINDOW / 2)
// more for each credit; the receiver sends a credit after every CHUNK completions, each slot
// re-posted first. Without it (a free MPI_Send flood) the receiver alternates between posted and
// unexpected messages and the rate of one build varied 2x from run to run. The sender uses only
// MPI_Send and MPI_Recv, which the tool does not wrap: the two builds differ in the receiver's
// MPI_Testsome alone.
// usage: mpiexec -n 2 bench_tool_rate WINDOW MESSAGES plain|alternate
// prints, per mode measured: rate <build> <plain|tool> <window> <messages> <seconds> <messages/s>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace {

constexpr int kDataTag = 0;
constexpr int kCreditTag = 1;
constexpr long kPhase = 8192;

using TestsomeFn = int (*)(int, MPI_Request[], int*, int[], MPI_Status[]);

struct Phases {
    double seconds[2] = {0, 0};  // [0] plain (PMPI_Testsome), [1] through the tool (MPI_Testsome)
    long messages[2] = {0, 0};
};

void send_messages(long messages, int window) {
    const long chunk = std::max(1, window / 2);
    const long payload = 1;
    long sent = 0;
    for (; sent < std::min<long>(window, messages); sent++) {
        MPI_Send(&payload, 1, MPI_LONG, 0, kDataTag, MPI_COMM_WORLD);
    }
    while (sent < messages) {
        MPI_Recv(nullptr, 0, MPI_BYTE, 0, kCreditTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (long j = 0; j < chunk && sent < messages; j++, sent++) {
            MPI_Send(&payload, 1, MPI_LONG, 0, kDataTag, MPI_COMM_WORLD);
        }
    }
}

Phases receive_messages(long messages, int window, bool alternate) {
    Phases phases;
    int mode = 0;
    long phase_start_count = 0;
    double phase_start = MPI_Wtime();
    const TestsomeFn testsome[2] = {PMPI_Testsome, MPI_Testsome};
    const long chunk = std::max(1, window / 2);
    std::vector<MPI_Request> reqs(static_cast<size_t>(window), MPI_REQUEST_NULL);
    std::vector<long> bufs(static_cast<size_t>(window));
    std::vector<int> indices(static_cast<size_t>(window));
    long posted = 0, received = 0, since_credit = 0, credited = std::min<long>(window, messages);
    for (int i = 0; i < window && posted < messages; i++, posted++) {
        MPI_Irecv(&bufs[static_cast<size_t>(i)], 1, MPI_LONG, 1, kDataTag, MPI_COMM_WORLD,
                  &reqs[static_cast<size_t>(i)]);
    }
    while (received < messages) {
        int outcount = 0;
        testsome[mode](window, reqs.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE);
        for (int j = 0; j < outcount && outcount != MPI_UNDEFINED; j++, received++) {
            const size_t i = static_cast<size_t>(indices[static_cast<size_t>(j)]);
            if (posted < messages) {
                MPI_Irecv(&bufs[i], 1, MPI_LONG, 1, kDataTag, MPI_COMM_WORLD, &reqs[i]);
                posted++;
            }
            if (++since_credit == chunk && credited < messages) {
                MPI_Send(nullptr, 0, MPI_BYTE, 1, kCreditTag, MPI_COMM_WORLD);
                credited += chunk;
                since_credit = 0;
            }
        }
        if (received - phase_start_count >= kPhase || received >= messages) {
            const double now = MPI_Wtime();
            phases.seconds[mode] += now - phase_start;
            phases.messages[mode] += received - phase_start_count;
            phase_start = now;
            phase_start_count = received;
            mode = alternate ? 1 - mode : 0;
        }
    }
    return phases;
}

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
        send_messages(messages, window);
    } else if (rank == 0) {
        const Phases phases = receive_messages(messages, window, alternate);
        const char* mode_name[2] = {"plain", "tool"};
        for (int mode = 0; mode < (alternate ? 2 : 1); mode++) {
            std::printf("rate %s %s %d %ld %.3f %.0f\n", bench::build_name().c_str(),
                        mode_name[mode], window, phases.messages[mode], phases.seconds[mode],
                        static_cast<double>(phases.messages[mode]) / phases.seconds[mode]);
        }
    }
    MPI_Finalize();
    return 0;
}
