// A send freed while it is pending still delivers its data when the sender finalizes at once
// (MPI 4.0, 3.7.3: MPI_Request_free lets the operation complete; MPI_Finalize completes it).
// Rank 0 sends 1 MiB (a rendezvous message on every device) with MPI_Isend, frees the request
// and calls MPI_Finalize; rank 1 posts its receive only a second later and checks every byte.
// ch4:ucx's MPI_Finalize once waited in a barrier before rank 0's data had gone out: a hang.
// usage: mpiexec -n 2 free_then_finalize; prints one line on rank 1, exit 0 if the data arrived
#include <mpi.h>

#include <unistd.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, ok = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    constexpr int kBytes = 1 << 20;
    std::vector<unsigned char> buf(kBytes);
    if (rank == 0) {
        for (int i = 0; i < kBytes; i++) {
            buf[size_t(i)] = static_cast<unsigned char>(i * 31 + 7);
        }
        MPI_Request req;
        MPI_Isend(buf.data(), kBytes, MPI_BYTE, 1, 5, MPI_COMM_WORLD, &req);
        MPI_Request_free(&req);
    } else if (rank == 1) {
        sleep(1);
        MPI_Status st;
        MPI_Recv(buf.data(), kBytes, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &st);
        int count = -1, wrong = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        for (int i = 0; i < kBytes; i++) {
            wrong += buf[size_t(i)] != static_cast<unsigned char>(i * 31 + 7);
        }
        ok = count == kBytes && wrong == 0;
        std::printf("free_then_finalize: %d bytes received, %d wrong\n", count, wrong);
    }
    MPI_Finalize();
    return ok ? 0 : 1;
}
