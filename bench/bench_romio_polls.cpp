// How often ROMIO's poll function runs per completion call: each process reads its own file
// (page cache dropped first) with 256 MPI_File_iread_at of 256 KiB, then calls MPI_Testsome
// (or MPI_Request_get_status_some followed by MPI_Waitall on what it reported, as the
// reqstatus tool does) on the array until everything completed.
//
// ROMIO's POSIX AIO poll function asks aio_error once per pending operation it polls, so this
// program counts the calls of aio_error made inside the completion calls (it defines
// aio_error itself and forwards to glibc's; link with -rdynamic so that libmpi's calls find it).
//
// usage: mpiexec -n P bench_romio_polls DIR testsome|get_status_some
// prints (rank 0, summed over the processes):
//   polls <build> <form> <procs> <calls> <aio_error calls> <per call> <per pending request per call>
#include <aio.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace {
long g_aio_error_calls = 0;
}

extern "C" int aio_error(const struct aiocb* cb) {
    using Fn = int (*)(const struct aiocb*);
    static Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "aio_error"));
    g_aio_error_calls++;
    return real(cb);
}

namespace {

constexpr int kRequests = 256;
constexpr size_t kPiece = size_t{256} << 10;

void make_file(const std::string& path, size_t bytes) {
    const int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
    std::vector<char> chunk(kPiece, 'p');
    for (size_t done = 0; done < bytes; done += kPiece) {
        if (write(fd, chunk.data(), kPiece) != static_cast<ssize_t>(kPiece)) {
            std::perror("write");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    fsync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
}

}  // namespace

int main(int argc, char* argv[]) {
    MPI_Init(&argc, &argv);
    int rank = 0, procs = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &procs);
    if (argc < 3) {
        std::fprintf(stderr, "usage: bench_romio_polls DIR testsome|get_status_some\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const std::string path = std::string(argv[1]) + "/polls-rank" + std::to_string(rank) + ".dat";
    const std::string form = argv[2];
    make_file(path, kRequests * kPiece);
    std::vector<char> buf(kRequests * kPiece);
    MPI_File fh;
    MPI_File_open(MPI_COMM_SELF, path.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    MPI_Barrier(MPI_COMM_WORLD);

    std::vector<MPI_Request> reqs(kRequests);
    for (int i = 0; i < kRequests; i++) {
        MPI_File_iread_at(fh, static_cast<MPI_Offset>(i * kPiece), buf.data() + i * kPiece,
                          static_cast<int>(kPiece), MPI_BYTE, &reqs[i]);
    }
    long calls = 0, pending_sum = 0, during = 0, pending = kRequests;
    std::vector<int> idx(kRequests);
    while (pending > 0) {
        const long before = g_aio_error_calls;
        int out = 0;
        if (form == "get_status_some") {
#ifdef MPIX_HAVE_REQUEST_GET_STATUS_MULTIPLE
            MPI_Request_get_status_some(kRequests, reqs.data(), &out, idx.data(),
                                        MPI_STATUSES_IGNORE);
            // completes what it reported as the reqstatus tool does: one MPI_Waitall over it
            std::vector<MPI_Request> done(static_cast<size_t>(out > 0 ? out : 0));
            for (int k = 0; k < out; k++) {
                done[static_cast<size_t>(k)] = reqs[static_cast<size_t>(idx[static_cast<size_t>(k)])];
            }
            MPI_Waitall(out > 0 ? out : 0, done.data(), MPI_STATUSES_IGNORE);
            for (int k = 0; k < out; k++) {
                reqs[static_cast<size_t>(idx[static_cast<size_t>(k)])] = MPI_REQUEST_NULL;
            }
#else
            MPI_Abort(MPI_COMM_WORLD, 3);
#endif
        } else {
            MPI_Testsome(kRequests, reqs.data(), &out, idx.data(), MPI_STATUSES_IGNORE);
        }
        during += g_aio_error_calls - before;
        calls++;
        pending_sum += pending;
        pending = 0;
        for (MPI_Request r : reqs) {
            pending += (r != MPI_REQUEST_NULL);
        }
    }
    long mine[3] = {calls, during, pending_sum}, all[3] = {0, 0, 0};
    MPI_Reduce(mine, all, 3, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        std::printf("polls %s %s %d %ld %ld %.1f %.3f\n", bench::build_name().c_str(), form.c_str(),
                    procs, all[0], all[1], static_cast<double>(all[1]) / all[0],
                    static_cast<double>(all[1]) / all[2]);
    }
    MPI_File_close(&fh);
    std::remove(path.c_str());
    MPI_Finalize();
    return 0;
}
