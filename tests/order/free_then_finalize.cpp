// Requests freed while active still complete when their process finalizes at once (MPI 4.0,
// 11.2.2: MPI_Request_free counts as completing one's part; MPI_Finalize must finish it).
// 1 MiB, a rendezvous message on every device; the peer's call comes a second later.
//   send        rank 0: MPI_Isend, MPI_Request_free, MPI_Finalize; rank 1 receives and checks
//   persistent  the same with MPI_Send_init and MPI_Start
//   recv        rank 1: MPI_Irecv, MPI_Request_free, MPI_Finalize, then checks the buffer;
//               rank 0 sends with MPI_Send
//   self_attr   the send is made and freed by MPI_COMM_SELF's delete callback, inside
//               MPI_Finalize (MPI 4.0, 11.2.4), and received by rank 1's
//   many        rank 0 frees 1000 sends of 256 KiB and computes 2 s; rank 1 receives them all
//               and finalizes at once (ch4:ucx: its acknowledgements must leave before the
//               barrier of MPI_Finalize); no warning may be printed
//   unmatched   rank 0 frees an MPI_Isend nobody receives: MPI_Finalize must still return,
//               with a warning, after MPIR_CVAR_FINALIZE_FREED_REQUEST_TIMEOUT (run it with 2)
// Before the fix, ch4:ofi on tcp;ofi_rxm lost the data ("OFI domain close failed"), and shared
// memory and ch4:ucx across hosts hung in MPI_Finalize.
// usage: mpiexec -n 2 free_then_finalize [send|persistent|recv|self_attr|many|unmatched]; exit 0 if
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

std::vector<unsigned char> g_attr_buf;
bool g_attr_ok = true;

// MPI_COMM_SELF's delete callback: rank 0 sends and frees, rank 1 receives a second later
int send_from_delete_callback(MPI_Comm, int, void*, void*) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    g_attr_buf.resize(kBytes);
    if (rank == 0) {
        fill(g_attr_buf);
        MPI_Request req;
        MPI_Isend(g_attr_buf.data(), kBytes, MPI_BYTE, 1, kTag, MPI_COMM_WORLD, &req);
        MPI_Request_free(&req);
    } else if (rank == 1) {
        sleep(1);
        MPI_Recv(g_attr_buf.data(), kBytes, MPI_BYTE, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int wrong = wrong_bytes(g_attr_buf);
        g_attr_ok = wrong == 0;
        std::printf("free_then_finalize self_attr: %d bytes received, %d wrong\n", kBytes, wrong);
    }
    return MPI_SUCCESS;
}

// rank 0 frees many rendezvous sends and computes; rank 1 takes them and finalizes at once
bool many_freed_sends(int rank) {
    constexpr int kCount = 1000;
    constexpr int kSize = 256 * 1024;
    static std::vector<unsigned char> msg(kSize);  // the freed sends use it until MPI_Finalize
    if (rank == 0) {
        for (int i = 0; i < kCount; i++) {
            MPI_Request req;
            MPI_Isend(msg.data(), kSize, MPI_BYTE, 1, kTag, MPI_COMM_WORLD, &req);
            MPI_Request_free(&req);
        }
        sleep(2);
        return true;
    }
    if (rank == 1) {
        int received = 0;
        for (int i = 0; i < kCount; i++) {
            MPI_Status st;
            MPI_Recv(msg.data(), kSize, MPI_BYTE, 0, kTag, MPI_COMM_WORLD, &st);
            int count = -1;
            MPI_Get_count(&st, MPI_BYTE, &count);
            received += count == kSize;
        }
        std::printf("free_then_finalize many: %d of %d messages received, %d wrong\n", received,
                    kCount, kCount - received);
        return received == kCount;
    }
    return true;
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
    if (std::strcmp(mode, "self_attr") == 0) {
        int keyval = MPI_KEYVAL_INVALID;
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, send_from_delete_callback, &keyval,
                               nullptr);
        MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr);
    } else if (std::strcmp(mode, "many") == 0) {
        ok = many_freed_sends(rank);
    } else if (std::strcmp(mode, "recv") == 0) {
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
    if (std::strcmp(mode, "self_attr") == 0) {
        ok = g_attr_ok;
    }
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
