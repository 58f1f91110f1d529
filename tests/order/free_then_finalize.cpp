// Requests freed while active still complete when their process finalizes at once (MPI 4.0,
// 11.2.2: MPI_Request_free counts as completing one's part; MPI_Finalize must finish it).
// 1 MiB, a rendezvous message on every device; the peer's call comes a second later.
//   send        rank 0: MPI_Isend, MPI_Request_free, MPI_Finalize; rank 1 receives and checks
//   persistent  the same with MPI_Send_init and MPI_Start
//   recv        rank 1: MPI_Irecv, MPI_Request_free, MPI_Finalize, then checks the buffer;
//               rank 0 sends with MPI_Send
//   unmatched   rank 0 frees an MPI_Isend nobody receives: MPI_Finalize must still return,
//               with a warning, after MPIR_CVAR_FINALIZE_FREED_REQUEST_TIMEOUT (run it with 2)
// Before the fix, ch4:ofi on tcp;ofi_rxm lost the data ("OFI domain close failed"), and shared
// memory and ch4:ucx across hosts hung in MPI_Finalize.
// usage: mpiexec -n 2 free_then_finalize [send|persistent|recv|unmatched]; one line, exit 0 if
// the data arrived whole
#include <mpi.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

constexpr int kBytes = 1 << 20;
constexpr int kTag = 5;

unsigned char pattern(int i) { return static_cast<unsigned char>(i * 31 + 7); }

void fill(std::vector<unsigned char>& buf) {
    for (int i = 0; i < kBytes; i++) {
        buf[size_t(i)] = pattern(i);
    }
}

int wrong_bytes(const std::vector<unsigned char>& buf) {
    int wrong = 0;
    for (int i = 0; i < kBytes; i++) {
        wrong += buf[size_t(i)] != pattern(i);
    }
    return wrong;
}

}  // namespace

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "send";
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::vector<unsigned char> buf(kBytes);
    int ok = 1;
    auto start = std::chrono::steady_clock::now();
    MPI_Request req;
    if (std::strcmp(mode, "recv") == 0) {
        if (rank == 0) {
            sleep(1);
            fill(buf);
            MPI_Send(buf.data(), kBytes, MPI_BYTE, 1, kTag, MPI_COMM_WORLD);
        } else if (rank == 1) {
            MPI_Irecv(buf.data(), kBytes, MPI_BYTE, 0, kTag, MPI_COMM_WORLD, &req);
            MPI_Request_free(&req);
        }
    } else if (rank == 0) {
        fill(buf);
        if (std::strcmp(mode, "persistent") == 0) {
            MPI_Send_init(buf.data(), kBytes, MPI_BYTE, 1, kTag, MPI_COMM_WORLD, &req);
            MPI_Start(&req);
        } else {
            MPI_Isend(buf.data(), kBytes, MPI_BYTE, 1, kTag, MPI_COMM_WORLD, &req);
        }
        MPI_Request_free(&req);
    } else if (rank == 1 && std::strcmp(mode, "unmatched") != 0) {
        sleep(1);
        MPI_Status st;
        MPI_Recv(buf.data(), kBytes, MPI_BYTE, 0, kTag, MPI_COMM_WORLD, &st);
        int count = -1;
        MPI_Get_count(&st, MPI_BYTE, &count);
        int wrong = wrong_bytes(buf);
        ok = count == kBytes && wrong == 0;
        std::printf("free_then_finalize %s: %d bytes received, %d wrong\n", mode, count, wrong);
    }
    MPI_Finalize();
    if (std::strcmp(mode, "recv") == 0 && rank == 1) {
        int wrong = wrong_bytes(buf);
        ok = wrong == 0;
        std::printf("free_then_finalize recv: after MPI_Finalize %d of %d bytes wrong\n", wrong,
                    kBytes);
    }
    if (std::strcmp(mode, "unmatched") == 0 && rank == 0) {
        std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
        ok = seconds.count() < 30;
        std::printf("free_then_finalize unmatched: MPI_Finalize returned after %.1f s\n",
                    seconds.count());
    }
    return ok ? 0 : 1;
}
