// The flow-controlled message-rate loop shared by bench_tool_rate and bench_event_cost: rank 1
// sends, rank 0 keeps WINDOW receives in flight and completes them with an MPI_Testsome of the
// caller's choice, re-posting each completed slot in place, in phases of kPhase messages.
//
// Flow control keeps the run repeatable: the sender never has more than WINDOW messages in flight
// and every message finds its receive posted. It sends WINDOW messages, then CHUNK (WINDOW / 2)
// more for each credit; the receiver sends a credit after every CHUNK completions, each slot
// re-posted first. Without it (a free MPI_Send flood) the receiver alternates between posted and
// unexpected messages and the rate of one build varied 2x from run to run. The sender uses only
// MPI_Send and MPI_Recv. Both run on MPI_COMM_WORLD unless given another communicator.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <vector>

namespace bench {

constexpr int kDataTag = 0;
constexpr int kCreditTag = 1;
constexpr long kPhase = 8192;

inline void send_windowed(long messages, int window, MPI_Comm comm = MPI_COMM_WORLD) {
    const long chunk = std::max(1, window / 2);
    const long payload = 1;
    long sent = 0;
    for (; sent < std::min<long>(window, messages); sent++) {
        MPI_Send(&payload, 1, MPI_LONG, 0, kDataTag, comm);
    }
    while (sent < messages) {
        MPI_Recv(nullptr, 0, MPI_BYTE, 0, kCreditTag, comm, MPI_STATUS_IGNORE);
        for (long j = 0; j < chunk && sent < messages; j++, sent++) {
            MPI_Send(&payload, 1, MPI_LONG, 0, kDataTag, comm);
        }
    }
}

// Time and messages of each mode's phases.
struct PhaseTotals {
    std::vector<double> seconds;
    std::vector<long> messages;
    explicit PhaseTotals(int modes) : seconds(size_t(modes), 0.0), messages(size_t(modes), 0) {}
    double rate(int mode) const { return double(messages[size_t(mode)]) / seconds[size_t(mode)]; }
};

// Receives `messages` on rank 0, phases taking turns over `modes` modes: enter(mode) starts a
// phase (untimed), testsome(mode, n, reqs, &outcount, indices) completes receives in it.
template <class Enter, class Testsome>
PhaseTotals receive_windowed(long messages, int window, int modes, Enter&& enter,
                             Testsome&& testsome, MPI_Comm comm = MPI_COMM_WORLD) {
    PhaseTotals totals(modes);
    int mode = 0;
    const long chunk = std::max(1, window / 2);
    std::vector<MPI_Request> reqs(static_cast<size_t>(window), MPI_REQUEST_NULL);
    std::vector<long> bufs(static_cast<size_t>(window));
    std::vector<int> indices(static_cast<size_t>(window));
    long posted = 0, received = 0, since_credit = 0, credited = std::min<long>(window, messages);
    for (int i = 0; i < window && posted < messages; i++, posted++) {
        MPI_Irecv(&bufs[size_t(i)], 1, MPI_LONG, 1, kDataTag, comm, &reqs[size_t(i)]);
    }
    enter(mode);
    long phase_start_count = 0;
    double phase_start = MPI_Wtime();
    while (received < messages) {
        int outcount = 0;
        testsome(mode, window, reqs.data(), &outcount, indices.data());
        for (int j = 0; j < outcount && outcount != MPI_UNDEFINED; j++, received++) {
            const size_t i = size_t(indices[size_t(j)]);
            if (posted < messages) {
                MPI_Irecv(&bufs[i], 1, MPI_LONG, 1, kDataTag, comm, &reqs[i]);
                posted++;
            }
            if (++since_credit == chunk && credited < messages) {
                MPI_Send(nullptr, 0, MPI_BYTE, 1, kCreditTag, comm);
                credited += chunk;
                since_credit = 0;
            }
        }
        if (received - phase_start_count >= kPhase || received >= messages) {
            totals.seconds[size_t(mode)] += MPI_Wtime() - phase_start;
            totals.messages[size_t(mode)] += received - phase_start_count;
            mode = (mode + 1) % modes;
            enter(mode);
            phase_start = MPI_Wtime();
            phase_start_count = received;
        }
    }
    return totals;
}

}  // namespace bench
