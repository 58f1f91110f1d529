// ROMIO's nonblocking writes of 4 KiB to a file in the page cache, for counting the instructions
// the calling thread spends in them under valgrind's callgrind (bench/run-bench aio-instructions:
// --toggle-collect on the calls below, per thread, so glibc's AIO helper threads and the kernel
// are not counted; deterministic, unlike times on a shared 2-core machine).
//   single  ROUNDS times: one MPI_File_iwrite_at, then MPI_Wait on it
//   depth   ROUNDS times: DEPTH MPI_File_iwrite_at at once, then MPI_Waitall on them
// How often a wait polls before the writes end depends on the schedule (valgrind runs one thread
// at a time), so its count varies from run to run. With "-settled" (single-settled,
// depth-settled) the calling thread sleeps 5 ms (not counted) before the wait, which then finds
// every write ended: the fixed cost of an operation, issue to free.
// Every byte is read back at the end (a mismatch exits 1, outside the counted calls).
// usage: bench_aio_instructions single|depth[-settled] DEPTH ROUNDS FILE
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kBlock = 4096;

char byte_of(MPI_Offset offset, int round) { return static_cast<char>((offset / kBlock + round) % 251); }

int verify(MPI_File fh, int depth, int last_round) {
    std::vector<char> got(kBlock);
    for (int i = 0; i < depth; i++) {
        const MPI_Offset offset = static_cast<MPI_Offset>(i) * kBlock;
        MPI_File_read_at(fh, offset, got.data(), kBlock, MPI_BYTE, MPI_STATUS_IGNORE);
        for (char c : got) {
            if (c != byte_of(offset, last_round)) {
                std::fprintf(stderr, "block %d holds %d, not round %d's data\n", i, c, last_round);
                return 1;
            }
        }
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: bench_aio_instructions single|depth[-settled] DEPTH ROUNDS FILE\n");
        return 2;
    }
    const std::string mode = argv[1];
    const bool single = mode.rfind("single", 0) == 0;
    const bool settled = mode.find("-settled") != std::string::npos;
    const int depth = single ? 1 : std::atoi(argv[2]);
    const int rounds = std::atoi(argv[3]);
    MPI_Init(&argc, &argv);
    MPI_File fh;
    MPI_File_open(MPI_COMM_SELF, argv[4], MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                  MPI_INFO_NULL, &fh);
    std::vector<std::vector<char>> bufs(depth, std::vector<char>(kBlock));
    std::vector<MPI_Request> reqs(depth);
    for (int round = 0; round < rounds; round++) {
        for (int i = 0; i < depth; i++) {
            const MPI_Offset offset = static_cast<MPI_Offset>(i) * kBlock;
            std::fill(bufs[i].begin(), bufs[i].end(), byte_of(offset, round));
            MPI_File_iwrite_at(fh, offset, bufs[i].data(), kBlock, MPI_BYTE, &reqs[i]);
        }
        if (settled) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        if (single) {
            MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
        } else {
            MPI_Waitall(depth, reqs.data(), MPI_STATUSES_IGNORE);
        }
    }
    const int bad = verify(fh, depth, rounds - 1);
    MPI_File_close(&fh);
    MPI_Finalize();
    return bad;
}
