// Communicator assertions (issue 14): what verification and detection cost on the receive path,
// and what the exact-match queues (0038) save in matching.
//   rate:  message rate of a windowed stream (rank 1 sends, rank 0 keeps WINDOW receives with a
//          named source and tag in flight) on communicators that differ only in their info and
//          control variables, phases alternating within one run:
//            plain     no assertions
//            asserted  mpi_assert_no_any_source, _no_any_tag, _exact_length: on stock the hints
//                      are accepted and ignored; on the custom build verified and matched in
//                      the exact-match queues
//            verified  the same assertions, verified, exact-match queues off  (custom only)
//            trusted   the same, MPIR_CVAR_COMM_ASSERT_VERIFY=0, queues off    (custom only)
//            detect    no assertions, MPIR_CVAR_COMM_ASSERT_DETECT=1          (custom only)
//   match: matching with many sources: rank 0 pre-posts DEPTH receives from each other rank
//          (tags 0..DEPTH-1), the senders send tags DEPTH-1..0, so in one process-wide queue
//          every message searches past the receives posted ahead of it; milliseconds per round
//          and nanoseconds per message, modes plain / asserted (/ verified on custom).
// usage: mpiexec -n 2 bench_comm_assert rate WINDOW MESSAGES
//        mpiexec -n N bench_comm_assert match DEPTH ROUNDS
// Prints "<build> <test> <mode> <figure> <unit>" lines, from rank 0.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "windowed_rate.hpp"

namespace {

constexpr long kPhase = bench::kPhase;

bool set_cvar(const char* name, int value);

// exact: whether the custom build may match the communicator in exact-match queues
MPI_Comm make_comm(bool asserted, bool exact = true) {
    set_cvar("MPIR_CVAR_COMM_ASSERT_EXACT_MATCH", exact ? 1 : 0);
    MPI_Info info;
    MPI_Info_create(&info);
    if (asserted) {
        for (const char* key :
             {"mpi_assert_no_any_source", "mpi_assert_no_any_tag", "mpi_assert_exact_length"}) {
            MPI_Info_set(info, key, "true");
        }
    }
    MPI_Comm comm;
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comm);
    MPI_Info_free(&info);
    set_cvar("MPIR_CVAR_COMM_ASSERT_EXACT_MATCH", 1);
    return comm;
}

// Writes an int control variable if this MPICH has it; false if not.
bool set_cvar(const char* name, int value) {
    int index = -1, count = 0;
    MPI_T_cvar_handle h;
    if (MPI_T_cvar_get_index(name, &index) != MPI_SUCCESS ||
        MPI_T_cvar_handle_alloc(index, nullptr, &h, &count) != MPI_SUCCESS) {
        return false;
    }
    bool ok = MPI_T_cvar_write(h, &value) == MPI_SUCCESS;
    MPI_T_cvar_handle_free(&h);
    return ok;
}

struct Mode {
    const char* name;
    MPI_Comm comm;
    int verify, detect;  // control variable values in the mode's phases
};

// One phase of `n` messages on comm (the flow-controlled window of windowed_rate.hpp).
void phase(int rank, MPI_Comm comm, long n, int window) {
    if (rank == 1) {
        bench::send_windowed(n, window, comm);
        return;
    }
    bench::receive_windowed(
        n, window, 1, [](int) {},
        [](int, int count, MPI_Request* reqs, int* outcount, int* indices) {
            MPI_Testsome(count, reqs, outcount, indices, MPI_STATUSES_IGNORE);
        },
        comm);
}

void run_rate(int rank, int window, long messages) {
    std::vector<Mode> modes = {{"plain", make_comm(false), 1, 0},
                               {"asserted", make_comm(true), 1, 0}};
    const bool custom = bench::build_name() == "custom";
    if (custom) {
        modes.push_back({"verified", make_comm(true, false), 1, 0});
        modes.push_back({"trusted", make_comm(true, false), 0, 0});
        modes.push_back({"detect", make_comm(false), 1, 1});
    }
    std::vector<double> seconds(modes.size(), 0.0);
    std::vector<long> counts(modes.size(), 0);
    phase(rank, modes[0].comm, 4 * kPhase, window);  // warm-up
    for (long done = 0, m = 0; done < messages; done += kPhase, m = (m + 1) % long(modes.size())) {
        Mode& mode = modes[size_t(m)];
        if (custom) {
            set_cvar("MPIR_CVAR_COMM_ASSERT_VERIFY", mode.verify);
            set_cvar("MPIR_CVAR_COMM_ASSERT_DETECT", mode.detect);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        phase(rank, mode.comm, kPhase, window);
        seconds[size_t(m)] += MPI_Wtime() - t0;
        counts[size_t(m)] += kPhase;
    }
    if (custom) {
        set_cvar("MPIR_CVAR_COMM_ASSERT_VERIFY", 1);
        set_cvar("MPIR_CVAR_COMM_ASSERT_DETECT", 0);
    }
    if (rank == 0) {
        for (size_t m = 0; m < modes.size(); m++) {
            std::printf("%s rate %s %.0f msg/s\n", bench::build_name().c_str(), modes[m].name,
                        double(counts[m]) / seconds[m]);
        }
    }
    for (auto& mode : modes) {
        MPI_Comm_free(&mode.comm);
    }
}

// Rank 0 posts `depth` receives per sender (tags 0..depth-1), the senders send tags
// depth-1..0 after a barrier: the k-th message searches past the receives still posted ahead.
double match_round(int rank, int size, MPI_Comm comm, int depth) {
    std::vector<MPI_Request> reqs;
    std::vector<long> bufs;
    long v = 1;
    double t = 0;
    if (rank == 0) {
        reqs.resize(size_t(depth) * size_t(size - 1));
        bufs.resize(reqs.size());
        size_t k = 0;
        for (int tag = 0; tag < depth; tag++) {
            for (int src = 1; src < size; src++, k++) {
                MPI_Irecv(&bufs[k], 1, MPI_LONG, src, tag, comm, &reqs[k]);
            }
        }
        MPI_Barrier(comm);
        const double t0 = MPI_Wtime();
        MPI_Waitall(int(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
        t = MPI_Wtime() - t0;
    } else {
        MPI_Barrier(comm);
        for (int tag = depth - 1; tag >= 0; tag--) {
            MPI_Send(&v, 1, MPI_LONG, 0, tag, comm);
        }
    }
    MPI_Barrier(comm);
    return t;
}

void run_match(int rank, int size, int depth, int rounds) {
    std::vector<MPI_Comm> comms = {make_comm(false), make_comm(true)};
    std::vector<const char*> names = {"plain", "asserted"};
    if (bench::build_name() == "custom") {
        comms.push_back(make_comm(true, false));
        names.push_back("verified");
    }
    const int modes = int(comms.size());
    std::vector<double> total(comms.size(), 0.0);
    match_round(rank, size, comms[0], depth);
    for (int r = 0; r < rounds * modes; r++) {
        total[size_t(r % modes)] += match_round(rank, size, comms[size_t(r % modes)], depth);
    }
    if (rank == 0) {
        const double per_mode = rounds;
        const double messages = double(depth) * (size - 1);
        for (int m = 0; m < modes; m++) {
            std::printf("%s match %s %.3f ms/round %d-sources-x-%d\n", bench::build_name().c_str(),
                        names[size_t(m)], 1e3 * total[size_t(m)] / per_mode, size - 1, depth);
            std::printf("%s match %s %.1f ns/message %d-sources-x-%d\n",
                        bench::build_name().c_str(), names[size_t(m)],
                        1e9 * total[size_t(m)] / per_mode / messages, size - 1, depth);
        }
    }
    for (auto& c : comms) {
        MPI_Comm_free(&c);
    }
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int provided = 0, rank = 0, size = 0;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const std::string test = argc > 1 ? argv[1] : "";
    if (test == "rate" && argc == 4 && size == 2) {
        run_rate(rank, std::atoi(argv[2]), std::atol(argv[3]));
    } else if (test == "match" && argc == 4 && size >= 2) {
        run_match(rank, size, std::atoi(argv[2]), std::atoi(argv[3]));
    } else if (rank == 0) {
        std::fprintf(stderr, "usage: bench_comm_assert rate WINDOW MESSAGES (2 processes) | "
                             "match DEPTH ROUNDS (2 or more)\n");
    }
    MPI_T_finalize();
    MPI_Finalize();
    return 0;
}
