// Communicator assertions: what verification and detection cost on the receive path,
// and what the exact-match queues (ch4-exact-match-queues) save in matching.
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
//   match: matching with one or many sources: every other rank sends DEPTH messages, tags
//          DEPTH-1..0, rank 0 receives tags 0..DEPTH-1 from each, so in one process-wide queue
//          every match searches past what is queued ahead of it; rank 0's receives posted
//          before the messages arrive (match-posted) or after they are queued (match-unexp).
//          The senders wait without spinning while rank 0 matches (SentFlags), so N processes
//          on 2 cores measure rank 0's matching; nanoseconds per message, modes plain /
//          asserted (/ verified on custom). Every sender's messages must fit in the
//          shared-memory cells at once (MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_NUM_CELLS >= DEPTH + a
//          few; bench/run-bench sets it).
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
#include "idle_senders.hpp"
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

// Where rank 0's receives meet the messages: "posted", its receives are posted before the
// messages arrive (each message searches the posted queue); "unexp", the messages are queued
// before its receives are posted (each receive searches the unexpected queue).
enum class Queue { posted, unexp };

struct MatchRound {
    int rank, size, depth;
    bench::SentFlags& flags;
    int round = 0;
    int late = 0;  // rounds whose senders did not finish before rank 0 matched

    // One round on comm: rank 0's matching time in seconds (0 elsewhere). Every sender sends
    // tags depth-1..0; rank 0 receives tags 0..depth-1 from each, so in one process-wide queue
    // each match searches past everything queued ahead of it.
    double run(MPI_Comm comm, Queue queue) {
        round++;
        const size_t n = size_t(depth) * size_t(size - 1);
        std::vector<MPI_Request> reqs(rank == 0 ? n : 0);
        std::vector<long> bufs(reqs.size());
        double t = 0;
        auto post = [&] {
            size_t k = 0;
            for (int tag = 0; tag < depth; tag++) {
                for (int src = 1; src < size; src++, k++) {
                    MPI_Irecv(&bufs[k], 1, MPI_LONG, src, tag, comm, &reqs[k]);
                }
            }
        };
        if (rank == 0) {
            if (queue == Queue::posted) {
                post();
            }
            MPI_Barrier(comm);
            late += !flags.wait_all_sent(round, 10.0);
            if (queue == Queue::unexp) {
                drain_into_unexpected_queue(comm);
            }
            const double t0 = MPI_Wtime();
            if (queue == Queue::unexp) {
                post();
            }
            MPI_Waitall(int(n), reqs.data(), MPI_STATUSES_IGNORE);
            t = MPI_Wtime() - t0;
        } else {
            MPI_Barrier(comm);
            bench::let_rank0_reach_its_wait();
            long v = rank;
            for (int tag = depth - 1; tag >= 0; tag--) {
                MPI_Send(&v, 1, MPI_LONG, 0, tag, comm);
            }
            flags.mark_sent(rank, round);
        }
        bench::quiet_barrier(rank, comm);
        return t;
    }

    // Rank 0 (untimed): progress until every sender's last message (tag 0) is queued.
    void drain_into_unexpected_queue(MPI_Comm comm) const {
        for (int src = 1; src < size; src++) {
            for (int found = 0; !found;) {
                MPI_Iprobe(src, 0, comm, &found, MPI_STATUS_IGNORE);
            }
        }
    }
};

void run_match(int rank, int size, int depth, int rounds) {
    std::vector<MPI_Comm> comms = {make_comm(false), make_comm(true)};
    std::vector<const char*> names = {"plain", "asserted"};
    if (bench::build_name() == "custom") {
        comms.push_back(make_comm(true, false));
        names.push_back("verified");
    }
    const size_t modes = comms.size();
    bench::SentFlags flags(rank);
    MatchRound match{rank, size, depth, flags};
    for (Queue queue : {Queue::posted, Queue::unexp}) {
        const char* qname = queue == Queue::posted ? "posted" : "unexp";
        std::vector<double> total(modes, 0.0);
        match.run(comms[0], queue);  // warm-up
        for (int r = 0; r < rounds * int(modes); r++) {
            total[size_t(r) % modes] += match.run(comms[size_t(r) % modes], queue);
        }
        if (rank != 0) {
            continue;
        }
        const double messages = double(depth) * (size - 1);
        for (size_t m = 0; m < modes; m++) {
            std::printf("%s match-%s %s %.1f ns/message %d-sources-x-%d\n",
                        bench::build_name().c_str(), qname, names[m],
                        1e9 * total[m] / rounds / messages, size - 1, depth);
        }
    }
    if (rank == 0 && match.late > 0) {
        std::printf("%s match: in %d rounds the senders had not sent everything after 10 s "
                    "(too few shared-memory cells?): those rounds include sending\n",
                    bench::build_name().c_str(), match.late);
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
