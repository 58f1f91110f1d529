// IMB-IO's nonblocking loop (P_IRead_Priv / P_IWrite_Priv) step by step: each process posts
// one MPI_File_iread_at or iwrite_at on its own file, runs a fixed amount of computation
// (IMB's CPU_Exploit: what takes SECS on an idle core), then MPI_Wait. As in IMB, the file is
// written just before it is read, so reads come from the page cache.
// Each iteration first runs the computation alone, then the I/O with it: on a machine whose
// CPU speed drifts (a VM), the difference of the two is what the I/O cost, the engine's figure.
// Per size, medians over the iterations of each iteration's slowest process:
//   steps <build> <procs> <read|write> <secs> <bytes> <MiB/s> <alone us> <excess us> <post us>
//         <compute us> <wait us> <wait cpu us> <other cpu us>
// where MiB/s = bytes / (post + compute + wait), alone is the computation without I/O, excess
// = post + compute + wait - alone, wait cpu the waiting thread's CPU time and other cpu the
// process's CPU outside its main thread (glibc's AIO helpers, io_uring's io-wq workers).
// usage: mpiexec -n P bench_io_steps DIR read|write SECS BYTES...
#include <mpi.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#ifndef BENCH_BUILD_NAME
#define BENCH_BUILD_NAME "custom"
#endif

namespace {

double cpu_seconds(clockid_t clock) {
    timespec ts{};
    clock_gettime(clock, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// IMB's CPU_Exploit: a 10x10 matrix-vector product repeated a fixed number of times
float matrix[10][10], vec_x[10], vec_y[10];
void exploit(long reps) {
    for (long r = 0; r < reps; r++)
        for (int i = 0; i < 10; i++)
            for (int j = 0; j < 10; j++) vec_x[i] += matrix[i][j] * vec_y[j];
}

long calibrate(double seconds) {
    for (auto& row : matrix) std::fill(std::begin(row), std::end(row), 1.0f);
    long reps = 1000;
    for (;;) {
        double t = MPI_Wtime();
        exploit(reps);
        t = MPI_Wtime() - t;
        if (t > 0.05) return std::max(1L, static_cast<long>(reps * seconds / t));
        reps *= 4;
    }
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n == 0 ? 0.0 : (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
}

void check(int err, const char* what) {
    if (err == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(err, text, &len);
    std::fprintf(stderr, "%s failed: %s\n", what, text);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

// One operation's steps, of the slowest process (as IMB reports the slowest), in seconds
enum Step { kTotal, kPost, kCompute, kWait, kWaitCpu, kOtherCpu, kSteps };

struct Loop {
    MPI_File fh;
    bool write;
    long bytes;
    long reps;
    std::vector<char>& buf;
};

// The computation alone, then post + the same computation + MPI_Wait; returns the second's
// steps and stores the first's time in *alone
std::vector<double> iterate(const Loop& loop, int rank, double* alone) {
    MPI_Barrier(MPI_COMM_WORLD);
    double mine_alone = MPI_Wtime();
    exploit(loop.reps);
    mine_alone = MPI_Wtime() - mine_alone;
    MPI_Allreduce(&mine_alone, alone, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

    MPI_Request req;
    const int count = static_cast<int>(loop.bytes);
    const char want = static_cast<char>('a' + rank);
    if (!loop.write) {
        loop.buf.front() = loop.buf.back() = '?';   // the read must bring this rank's bytes back
    }
    const double p0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID), m0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
    const double t0 = MPI_Wtime();
    if (loop.write)
        check(MPI_File_iwrite_at(loop.fh, 0, loop.buf.data(), count, MPI_BYTE, &req), "MPI_File_iwrite_at");
    else
        check(MPI_File_iread_at(loop.fh, 0, loop.buf.data(), count, MPI_BYTE, &req), "MPI_File_iread_at");
    const double t1 = MPI_Wtime();
    exploit(loop.reps);
    const double t2 = MPI_Wtime(), w0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
    MPI_Status status;
    check(MPI_Wait(&req, &status), "MPI_Wait");
    const double t3 = MPI_Wtime(), m1 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
    const double p1 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);

    int got = 0;
    MPI_Get_count(&status, MPI_BYTE, &got);
    if (got != count || loop.buf.front() != want || loop.buf.back() != want) {
        std::fprintf(stderr, "rank %d: %s moved %d of %ld bytes, or not this rank's\n", rank,
                     loop.write ? "write" : "read", got, loop.bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    // every step of the process whose operation took longest
    std::vector<double> steps = {t3 - t0, t1 - t0, t2 - t1, t3 - t2, m1 - w0, (p1 - p0) - (m1 - m0)};
    struct {
        double total;
        int rank;
    } mine{steps[kTotal], rank}, slowest{};
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    MPI_Bcast(steps.data(), kSteps, MPI_DOUBLE, slowest.rank, MPI_COMM_WORLD);
    return steps;
}

// Every iteration of one size on this rank's file (written first, as IMB does); prints its line
void measure(const std::string& dir, const char* op, double secs, long reps, long bytes, int rank, int procs) {
    const int iters = static_cast<int>(std::max(5L, std::min(50L, (16L << 20) / std::max(bytes, 1L))));
    std::vector<char> buf(bytes, static_cast<char>('a' + rank));
    const std::string path = dir + "/io_steps." + std::to_string(rank);
    Loop loop{MPI_FILE_NULL, std::string(op) == "write", bytes, reps, buf};
    check(MPI_File_open(MPI_COMM_SELF, path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &loop.fh),
          "MPI_File_open");
    check(MPI_File_write_at(loop.fh, 0, buf.data(), static_cast<int>(bytes), MPI_BYTE, MPI_STATUS_IGNORE),
          "MPI_File_write_at");
    std::vector<std::vector<double>> steps(kSteps);
    std::vector<double> alone, excess;
    for (int it = 0; it < iters; it++) {
        double alone_all = 0;
        const std::vector<double> all = iterate(loop, rank, &alone_all);
        for (int s = 0; s < kSteps; s++) steps[s].push_back(all[s]);
        alone.push_back(alone_all);
        excess.push_back(all[kTotal] - alone_all);
    }
    MPI_File_close(&loop.fh);
    unlink(path.c_str());
    if (rank != 0) return;
    std::printf("steps %s %d %s %g %ld %.1f %.0f %.0f %.0f %.0f %.0f %.0f %.0f\n", BENCH_BUILD_NAME, procs, op, secs,
                bytes, bytes / 1048576.0 / median(steps[kTotal]), 1e6 * median(alone), 1e6 * median(excess),
                1e6 * median(steps[kPost]), 1e6 * median(steps[kCompute]), 1e6 * median(steps[kWait]),
                1e6 * median(steps[kWaitCpu]), 1e6 * median(steps[kOtherCpu]));
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    if (argc < 5) {
        std::fprintf(stderr, "usage: %s DIR read|write SECS BYTES...\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank, procs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &procs);
    const double secs = std::atof(argv[3]);
    long reps = calibrate(secs);
    MPI_Bcast(&reps, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    for (int a = 4; a < argc; a++) measure(argv[1], argv[2], secs, reps, std::atol(argv[a]), rank, procs);
    MPI_Finalize();
    return 0;
}
