// Senders that stay off the cores while rank 0 measures: they tell rank 0 through a
// shared-memory window that everything is sent (SentFlags), and wait for the end of a round in a
// nonblocking barrier polled between sleeps (quiet_barrier). With them several senders on 2 cores
// measure rank 0's work, not the scheduler's.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace bench {

// Rank 0 waits for the senders without calling MPI, so it makes no progress: their messages stay
// in the shared-memory cells until it works on them.
class SentFlags {
public:
    explicit SentFlags(int rank) {
        int size = 0;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        int* mine = nullptr;
        MPI_Win_allocate_shared(rank == 0 ? MPI_Aint(size * sizeof(int)) : 0, sizeof(int),
                                MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win_);
        MPI_Aint bytes = 0;
        int disp = 0;
        MPI_Win_shared_query(win_, 0, &bytes, &disp, &flags_);
        size_ = size;
        if (rank == 0) {
            std::fill(flags_, flags_ + size, 0);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    ~SentFlags() { MPI_Win_free(&win_); }
    SentFlags(const SentFlags&) = delete;
    SentFlags& operator=(const SentFlags&) = delete;

    void mark_sent(int rank, int round) {
        __atomic_store_n(&flags_[rank], round, __ATOMIC_RELEASE);
    }

    // Rank 0: until every sender marked `round`, or `timeout` seconds (then false: the senders
    // could not put all messages into the cells, and the round's time includes sending).
    bool wait_all_sent(int round, double timeout) const {
        const double t0 = MPI_Wtime();
        for (int r = 1; r < size_; r++) {
            while (__atomic_load_n(&flags_[r], __ATOMIC_ACQUIRE) != round) {
                if (MPI_Wtime() - t0 > timeout) {
                    return false;
                }
            }
        }
        return true;
    }

private:
    MPI_Win win_ = MPI_WIN_NULL;
    int* flags_ = nullptr;
    int size_ = 0;
};

// The end of a round: the senders wait without spinning on a core while rank 0 still matches.
// (A nonblocking barrier on every rank: a nonblocking one does not match a blocking one.)
inline void quiet_barrier(int rank, MPI_Comm comm) {
    MPI_Request req;
    MPI_Ibarrier(comm, &req);
    if (rank == 0) {
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        return;
    }
    for (int done = 0; !done;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (!done) {
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
    }
}

// A sender just out of the round's opening barrier: rank 0 may still be finishing it, let it
// reach its wait (SentFlags::wait_all_sent) before the messages come.
inline void let_rank0_reach_its_wait() {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

}  // namespace bench
