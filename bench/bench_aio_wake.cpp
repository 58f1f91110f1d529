// What a wake-up from aio_suspend costs the waiting thread on this machine, without MPI: the
// floor under the CPU share of MPI_Wait on ROMIO's AIO requests (bench_aio). P processes each
// read their own file (page cache dropped first, as bench_aio does) with one aio_read and wait
// for it with aio_suspend in slices of SLICE seconds, as MPICH's Wait family does with the AIO
// class's wait_fn.
//
// usage: bench_aio_wake DIR SIZE_MIB PROCS SLICE_S...
// prints per slice and process:
//   wake <procs> <slice s> <wall s> <thread cpu s> <cpu % of wall> <wakes> <us cpu per wake>
#include <aio.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

double seconds(clockid_t clock) {
    timespec t{};
    clock_gettime(clock, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

[[noreturn]] void fail(const std::string& what) {
    std::perror(what.c_str());
    std::exit(1);
}

// Makes path hold `bytes` bytes (written once, kept between runs).
void make_file(const std::string& path, size_t bytes) {
    const int fd = open(path.c_str(), O_CREAT | O_WRONLY, 0600);
    if (fd < 0) {
        fail(path);
    }
    if (static_cast<size_t>(lseek(fd, 0, SEEK_END)) != bytes) {
        if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0) {
            fail(path);
        }
        std::vector<char> chunk(size_t{8} << 20, 'w');
        for (size_t done = 0; done < bytes;) {
            const size_t n = std::min(chunk.size(), bytes - done);
            if (write(fd, chunk.data(), n) != static_cast<ssize_t>(n)) {
                fail(path);
            }
            done += n;
        }
    }
    fsync(fd);
    close(fd);
}

// One process's read, waited for in slices; prints its line.
void read_in_slices(const std::string& path, int procs, double slice) {
    const int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) {
        fail(path);
    }
    const off_t size = lseek(fd, 0, SEEK_END);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    std::vector<char> buffer(static_cast<size_t>(size), 0);  // touched here, not in the wait

    aiocb cb{};
    cb.aio_fildes = fd;
    cb.aio_buf = buffer.data();
    cb.aio_nbytes = buffer.size();
    if (aio_read(&cb) != 0) {
        fail("aio_read");
    }
    const aiocb* list[1] = {&cb};
    timespec timeout{};
    timeout.tv_sec = static_cast<time_t>(slice);
    timeout.tv_nsec = static_cast<long>((slice - static_cast<double>(timeout.tv_sec)) * 1e9);
    int wakes = 0;
    const double wall0 = seconds(CLOCK_MONOTONIC), cpu0 = seconds(CLOCK_THREAD_CPUTIME_ID);
    while (aio_error(&cb) == EINPROGRESS) {
        aio_suspend(list, 1, &timeout);
        wakes++;
    }
    const double wall = seconds(CLOCK_MONOTONIC) - wall0;
    const double cpu = seconds(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    if (aio_return(&cb) != size) {
        fail("aio_return");
    }
    std::printf("wake %d %.3f %.4f %.5f %.1f %d %.0f\n", procs, slice, wall, cpu,
                100.0 * cpu / wall, wakes, wakes > 0 ? 1e6 * cpu / wakes : 0.0);
    std::fflush(stdout);
    close(fd);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 5) {
        std::fprintf(stderr, "usage: %s DIR SIZE_MIB PROCS SLICE_S...\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    const size_t bytes = static_cast<size_t>(std::atol(argv[2])) << 20;
    const int procs = std::atoi(argv[3]);
    for (int p = 0; p < procs; p++) {
        make_file(dir + "/wake" + std::to_string(p) + ".dat", bytes);
    }
    for (int a = 4; a < argc; a++) {
        const double slice = std::atof(argv[a]);
        for (int p = 0; p < procs; p++) {
            if (fork() == 0) {
                read_in_slices(dir + "/wake" + std::to_string(p) + ".dat", procs, slice);
                std::_Exit(0);
            }
        }
        while (wait(nullptr) > 0) {
        }
    }
    return 0;
}
