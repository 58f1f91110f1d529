// The series' performance variables are found by name in a second initialization of MPI (an
// MPI session after MPI_Finalize, MPI 4.0 11.3), whether MPI_Finalize freed MPI_T's tables
// (no tool held MPI_T) or a tool kept them (MPI_T initialized throughout).
// (MPICH 4.0.2 cannot initialize again: tests/mpit-reinit.sh skips it there.)
// usage: pvars_after_reinit [freed|kept]; prints one line per variable, exit 0 if all found
#include <mpi.h>

#include <cstdio>
#include <cstring>

namespace {

const char* const kNames[] = {"greq_class_polls", "greq_class_waits", "comm_assert_receives",
                              "comm_assert_any_source"};

// 0 when every name is a counter MPI_T finds, after printing each
int find_all(const char* when)
{
    int missing = 0;
    for (const char* name : kNames) {
        int index = -1;
        int rc = MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &index);
        std::printf("%s: %s %s (index %d)\n", when, name, rc == MPI_SUCCESS ? "found" : "MISSING",
                    index);
        missing += rc != MPI_SUCCESS;
    }
    return missing;
}

}  // namespace

int main(int argc, char** argv)
{
    const bool kept = argc > 1 && std::strcmp(argv[1], "kept") == 0;
    int provided = 0, missing = 0;

    if (kept) {
        MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    }
    MPI_Init(&argc, &argv);
    MPI_Finalize();

    MPI_Session session = MPI_SESSION_NULL;
    if (MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session) != MPI_SUCCESS) {
        std::printf("MPI_Session_init after MPI_Finalize failed\n");
        return 2;
    }
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    missing += find_all("in the session");
    MPI_T_finalize();
    MPI_Session_finalize(&session);
    if (kept) {
        MPI_T_finalize();
    }
    std::printf("%s\n", missing == 0 ? "all found" : "some MISSING");
    return missing == 0 ? 0 : 1;
}
