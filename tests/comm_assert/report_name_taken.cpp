// A per-run report name (MPIR_CVAR_COMM_ASSERT_REPORT_FILE with %p) that another run's file
// already holds, as when a process id comes back: rank 0 writes that file before MPI_Finalize,
// whose report must go to NAME.1 and leave the other file whole.
// usage: REPORT_DIR=DIR mpiexec -n 2 report_name_taken; prints rank 0's process id
#include <mpi.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        const char* dir = std::getenv("REPORT_DIR");
        const std::string path = std::string(dir ? dir : ".") + "/report." + std::to_string(getpid());
        FILE* other = std::fopen(path.c_str(), "w");
        if (other == nullptr) {
            std::perror(path.c_str());
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        std::fputs("another run's report\n", other);
        std::fclose(other);
        std::printf("%d\n", static_cast<int>(getpid()));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
