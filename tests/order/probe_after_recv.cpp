// A probe must not find a message that a receive posted before it has matched (MPI 4.0, 3.8.1:
// the probe returns what a receive posted in its place would get). Rank 0 sends one message of
// tag 3 to rank 1, which sees it arrive unexpected (MPI_Iprobe), posts MPI_Irecv(0, 3) and at
// once probes (0, 3) again: the one message is the receive's, so the probe must find nothing
// (a program receiving what it probed would wait for it forever). libfabric's sockets provider
// (1.17 to 2.6) matches a posted receive with an unexpected message only at its next progress,
// and its FI_PEEK searches the unexpected messages without the posted receives: it fails here.
// usage: mpiexec -n 2 probe_after_recv; prints one line on rank 1, exit 0 if the order was kept
#include <mpi.h>

#include <cstdio>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, ok = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        const int value = 42;
        MPI_Send(&value, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
    } else if (rank == 1) {
        int flag = 0, found = 0, got = -1;
        MPI_Status st;
        while (!flag) {
            MPI_Iprobe(0, 3, MPI_COMM_WORLD, &flag, &st);
        }
        MPI_Request req;
        MPI_Irecv(&got, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &req);
        MPI_Iprobe(0, 3, MPI_COMM_WORLD, &found, &st);
        MPI_Wait(&req, &st);
        ok = !found && got == 42 && st.MPI_SOURCE == 0 && st.MPI_TAG == 3;
        std::printf("probe_after_recv: %s; the receive got %d from (%d, %d)\n",
                    found ? "the probe after MPI_Irecv found the receive's message"
                          : "the probe after MPI_Irecv found nothing",
                    got, st.MPI_SOURCE, st.MPI_TAG);
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Finalize();
    return ok ? 0 : 1;
}
