// Seed 003's experiment (Latham et al., section 6; IMB's P_IreadPriv): each process reads its
// own file with nonblocking MPI-IO while a fixed 0.1 s of computation runs, then waits.
//   effective bandwidth = bytes / (time to post + 0.1 s compute + time to wait)
// and the calling thread's CPU seconds inside the wait (CLOCK_THREAD_CPUTIME_ID).
//
// The I/O is real: before every read each process fsyncs its file and drops it from the page
// cache with posix_fadvise(POSIX_FADV_DONTNEED), then checks with mincore() how much of it is
// still resident (printed; it should be 0%).
//
// usage: mpiexec -n P bench_aio DIR MODE SIZE_MIB... where MODE is
//   wait     one MPI_File_iread_at of SIZE, completed by MPI_Wait (the seed's benchmark)
//   waitall  the same bytes as 8 MPI_File_iread_at requests, completed by MPI_Waitall
//   phase    seed 003's fully subscribed case, 2 processes out of phase: one posts its read,
//            computes, then waits; the other posts its read and waits at once, then computes;
//            then the other way round. The computation is a fixed amount of work (what takes
//            0.1 s on an idle core, measured first), so a wait that spins on the core the other
//            process computes on shows as a longer computation.
// prints per size (rank 0, the slowest process's figures):
//   aio <build> <mode> <procs> <MiB> <effective MiB/s> <wait s> <wait cpu s> <resident %>
// and in phase mode
//   phase <build> <procs> <MiB> <effective MiB/s> <wait s> <wait cpu s> <compute s> <helper cpu s> <resident %>
// where helper cpu is the process's CPU time outside its main thread (glibc's AIO threads).
#include <fcntl.h>
#include <mpi.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace {

constexpr double kComputeSeconds = 0.1;
constexpr int kPieces = 8;

// The synthetic CPU-heavy workload: keeps this core busy for the given time.
double compute(double seconds) {
    const double end = MPI_Wtime() + seconds;
    double x = 1.0;
    while (MPI_Wtime() < end) {
        for (int i = 0; i < 1000; i++) {
            x = x * 1.0000001 + 1e-9;
        }
    }
    return x;
}

// Iterations of compute_work's loop that take `seconds` on this core while nothing else runs.
long calibrate_work(double seconds) {
    long iterations = 0;
    const double end = MPI_Wtime() + seconds;
    double x = 1.0;
    while (MPI_Wtime() < end) {
        for (int i = 0; i < 1000; i++) {
            x = x * 1.0000001 + 1e-9;
        }
        iterations++;
    }
    volatile double sink = x;
    (void) sink;
    return iterations;
}

// A fixed amount of work: its duration grows when something else takes the core.
double compute_work(long iterations) {
    double x = 1.0;
    for (long k = 0; k < iterations; k++) {
        for (int i = 0; i < 1000; i++) {
            x = x * 1.0000001 + 1e-9;
        }
        MPI_Wtime();  // the same loop body as calibrate_work's
    }
    volatile double sink = x;  // else the compiler drops the arithmetic (its result is unused)
    return sink;
}

double process_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Makes path hold `bytes` bytes (written once, kept between runs).
void make_file(const std::string& path, size_t bytes) {
    struct stat st {};
    if (stat(path.c_str(), &st) == 0 && static_cast<size_t>(st.st_size) == bytes) {
        return;
    }
    const int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
    if (fd < 0) {
        std::perror(path.c_str());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    std::vector<char> chunk(size_t{8} << 20, 'r');
    for (size_t done = 0; done < bytes;) {
        const size_t n = std::min(chunk.size(), bytes - done);
        if (write(fd, chunk.data(), n) != static_cast<ssize_t>(n)) {
            std::perror("write");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        done += n;
    }
    close(fd);
}

// Drops the file from the page cache; returns the percentage still resident.
double evict(const std::string& path, size_t bytes) {
    const int fd = open(path.c_str(), O_RDONLY);
    fsync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    void* map = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> resident((bytes + page - 1) / page);
    size_t in_core = 0;
    if (map != MAP_FAILED && mincore(map, bytes, resident.data()) == 0) {
        for (unsigned char r : resident) {
            in_core += r & 1u;
        }
        munmap(map, bytes);
    }
    close(fd);
    return 100.0 * static_cast<double>(in_core) / static_cast<double>(resident.size());
}

struct Run {
    double total, wait, wait_cpu, resident;
};

Run read_once(const std::string& path, size_t bytes, bool pieces, std::vector<char>& buf) {
    Run r{};
    r.resident = evict(path, bytes);  // the whole file; reports on the part read
    MPI_File fh;
    MPI_File_open(MPI_COMM_SELF, path.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    std::vector<MPI_Request> reqs;
    const int n = pieces ? kPieces : 1;
    const size_t piece = bytes / static_cast<size_t>(n);
    for (int i = 0; i < n; i++) {
        reqs.emplace_back();
        MPI_File_iread_at(fh, static_cast<MPI_Offset>(piece * static_cast<size_t>(i)),
                          buf.data() + piece * static_cast<size_t>(i), static_cast<int>(piece),
                          MPI_BYTE, &reqs.back());
    }
    compute(kComputeSeconds);
    const double w0 = MPI_Wtime();
    const double c0 = bench::thread_cpu_seconds();
    if (pieces) {
        MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE);
    } else {
        MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    }
    r.wait_cpu = bench::thread_cpu_seconds() - c0;
    const double t1 = MPI_Wtime();
    r.wait = t1 - w0;
    r.total = t1 - t0;
    MPI_File_close(&fh);
    return r;
}

struct PhaseRun {
    double total, wait, wait_cpu, compute, helper_cpu, resident;
};

// One read in the out-of-phase pattern: computing first, or waiting first.
PhaseRun read_out_of_phase(const std::string& path, size_t bytes, bool compute_first,
                           long work, std::vector<char>& buf) {
    PhaseRun r{};
    r.resident = evict(path, bytes);
    MPI_File fh;
    MPI_File_open(MPI_COMM_SELF, path.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    MPI_Barrier(MPI_COMM_WORLD);
    const double p0 = process_cpu_seconds(), m0 = bench::thread_cpu_seconds();
    const double t0 = MPI_Wtime();
    MPI_Request req;
    MPI_File_iread_at(fh, 0, buf.data(), static_cast<int>(bytes), MPI_BYTE, &req);
    auto timed_compute = [&] {
        const double c = MPI_Wtime();
        compute_work(work);
        r.compute = MPI_Wtime() - c;
    };
    auto timed_wait = [&] {
        const double w = MPI_Wtime(), c = bench::thread_cpu_seconds();
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        r.wait_cpu = bench::thread_cpu_seconds() - c;
        r.wait = MPI_Wtime() - w;
    };
    if (compute_first) {
        timed_compute();
        timed_wait();
        r.total = MPI_Wtime() - t0;
    } else {
        timed_wait();
        r.total = MPI_Wtime() - t0;  // its read is done: what follows is its computation
        timed_compute();
    }
    r.helper_cpu = (process_cpu_seconds() - p0) - (bench::thread_cpu_seconds() - m0);
    MPI_File_close(&fh);
    return r;
}

void out_of_phase(const std::string& path, int rank, int procs, const std::vector<size_t>& mibs,
                  std::vector<char>& buf) {
    const long work = calibrate_work(kComputeSeconds);
    for (size_t mib : mibs) {
        const size_t bytes = mib << 20;
        std::vector<PhaseRun> runs;
        for (int rep = 0; rep < 3; rep++) {
            for (int turn = 0; turn < 2; turn++) {
                const bool compute_first = ((rank + turn) % 2) == 0;
                PhaseRun mine = read_out_of_phase(path, bytes, compute_first, work, buf), worst{};
                MPI_Reduce(&mine, &worst, 6, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
                runs.push_back(worst);
            }
        }
        std::sort(runs.begin(), runs.end(),
                  [](const PhaseRun& x, const PhaseRun& y) { return x.total < y.total; });
        const PhaseRun& m = runs[runs.size() / 2];
        if (rank == 0) {
            std::printf("phase %s %d %zu %.1f %.4f %.4f %.4f %.4f %.1f\n",
                        bench::build_name().c_str(), procs, mib,
                        static_cast<double>(mib) / m.total, m.wait, m.wait_cpu, m.compute,
                        m.helper_cpu, m.resident);
            std::fflush(stdout);
        }
    }
}

}  // namespace

int main(int argc, char* argv[]) {
    MPI_Init(&argc, &argv);
    int rank = 0, procs = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &procs);
    if (argc < 4) {
        if (rank == 0) {
            std::fprintf(stderr, "usage: bench_aio DIR wait|waitall|phase SIZE_MIB...\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const std::string dir = argv[1];
    const std::string mode = argv[2];
    const std::string path = dir + "/aio-rank" + std::to_string(rank) + ".dat";
    size_t max_mib = 0;
    for (int a = 3; a < argc; a++) {
        max_mib = std::max(max_mib, static_cast<size_t>(std::atol(argv[a])));
    }
    make_file(path, max_mib << 20);  // each size reads the front of it
    std::vector<char> buf(max_mib << 20);
    if (mode == "phase") {
        std::vector<size_t> mibs;
        for (int a = 3; a < argc; a++) {
            mibs.push_back(static_cast<size_t>(std::atol(argv[a])));
        }
        out_of_phase(path, rank, procs, mibs, buf);
        std::remove(path.c_str());
        MPI_Finalize();
        return 0;
    }
    for (int a = 3; a < argc; a++) {
        const size_t mib = static_cast<size_t>(std::atol(argv[a]));
        const size_t bytes = mib << 20;
        // the median of three runs, each figure taken from the slowest process
        std::vector<Run> runs;
        for (int rep = 0; rep < 3; rep++) {
            Run mine = read_once(path, bytes, mode == "waitall", buf), worst{};
            MPI_Reduce(&mine, &worst, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            runs.push_back(worst);
        }
        std::sort(runs.begin(), runs.end(),
                  [](const Run& x, const Run& y) { return x.total < y.total; });
        const Run& m = runs[1];
        if (rank == 0) {
            std::printf("aio %s %s %d %zu %.1f %.4f %.4f %.1f\n", bench::build_name().c_str(),
                        mode.c_str(), procs, mib, static_cast<double>(mib) / m.total, m.wait,
                        m.wait_cpu, m.resident);
            std::fflush(stdout);
        }
    }
    std::remove(path.c_str());
    MPI_Finalize();
    return 0;
}
