// ROMIO's nonblocking I/O under MPI_THREAD_MULTIPLE: one thread sleeps in MPI_Wait on its writes
// while the others poll theirs with MPI_Test, for SECONDS. Prints the operations done; run under
// `perf stat -e io_uring:io_uring_complete` (bench/run-bench wakeups), the completions per
// operation tell how many wake-up no-ops the io_uring engine posted (1.0: none).
//
// usage: bench_uring_wakeups DIR THREADS SECONDS
// prints: wakeups <engine> <threads> <seconds> <operations> <waits> <polled operations>
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Counts {
    std::atomic<long> waited{0};
    std::atomic<long> polled{0};
};

std::string engine_of(MPI_File fh) {
    MPI_Info info = MPI_INFO_NULL;
    MPI_File_get_info(fh, &info);
    char value[MPI_MAX_INFO_VAL + 1] = {0};
    int flag = 0;
    MPI_Info_get(info, "romio_nbio_engine", MPI_MAX_INFO_VAL, value, &flag);
    MPI_Info_free(&info);
    return flag ? value : "stock";
}

// Writes `bytes` at a time into a region of its own until `stop`; the sleeper waits, the others
// poll.
void writer(MPI_File fh, int index, size_t bytes, bool sleeper, const std::atomic<bool>& stop,
            Counts& counts) {
    std::vector<char> block(bytes, static_cast<char>('a' + index));
    const MPI_Offset base = static_cast<MPI_Offset>(index) << 24;
    long ops = 0;
    while (!stop.load(std::memory_order_relaxed)) {
        MPI_Request req = MPI_REQUEST_NULL;
        const MPI_Offset offset = base + static_cast<MPI_Offset>((ops % 64) * bytes);
        if (MPI_File_iwrite_at(fh, offset, block.data(), static_cast<int>(bytes), MPI_CHAR, &req) !=
            MPI_SUCCESS) {
            std::fprintf(stderr, "MPI_File_iwrite_at failed\n");
            std::exit(1);
        }
        if (sleeper) {
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            int flag = 0;
            while (!flag) {
                MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
            }
        }
        ops++;
    }
    (sleeper ? counts.waited : counts.polled) += ops;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s DIR THREADS SECONDS\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    const int threads = std::atoi(argv[2]);
    const double seconds = std::atof(argv[3]);
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided != MPI_THREAD_MULTIPLE || threads < 2) {
        std::fprintf(stderr, "needs MPI_THREAD_MULTIPLE and at least 2 threads\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const std::string path = dir + "/wakeups." + std::to_string(rank);
    MPI_File fh = MPI_FILE_NULL;
    MPI_File_open(MPI_COMM_SELF, path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                  MPI_INFO_NULL, &fh);
    Counts counts;
    std::atomic<bool> stop{false};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++) {
        // the sleeper's writes are larger: it is in the kernel while the pollers reap
        pool.emplace_back(writer, fh, t, t == 0 ? 65536 : 4096, t == 0, std::cref(stop),
                          std::ref(counts));
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop = true;
    for (std::thread& t : pool) {
        t.join();
    }
    const std::string engine = engine_of(fh);
    MPI_File_close(&fh);
    std::printf("wakeups %s %d %.1f %ld %ld %ld\n", engine.c_str(), threads, seconds,
                counts.waited.load() + counts.polled.load(), counts.waited.load(),
                counts.polled.load());
    MPI_Finalize();
    return 0;
}
