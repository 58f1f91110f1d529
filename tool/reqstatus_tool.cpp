// A PMPI tool that sees every request the application completes through MPI_Testany, Waitany,
// Testsome, Waitsome, Testall and Waitall, without changing what the application sees: the
// pattern of figures 4 and 5 of Williams, Hermanns, Jenke (EuroMPI 2023), in
// completion_wrappers.hpp. This library reaches MPI through PMPI_ (one PMPI tool per process);
// reqstatus_qmpi_tool.cpp is the same tool on QMPI, which stacks.
#include <mpi.h>

#include "completion_log.hpp"
#include "completion_wrappers.hpp"

namespace {

struct PmpiNext {
    int get_status_any(int n, MPI_Request r[], int* i, int* f, MPI_Status* s) {
        return PMPI_Request_get_status_any(n, r, i, f, s);
    }
    int get_status_some(int n, MPI_Request r[], int* o, int i[], MPI_Status s[]) {
        return PMPI_Request_get_status_some(n, r, o, i, s);
    }
    int get_status_all(int n, MPI_Request r[], int* f, MPI_Status s[]) {
        return PMPI_Request_get_status_all(n, r, f, s);
    }
    int wait(MPI_Request* r, MPI_Status* s) { return PMPI_Wait(r, s); }
    int waitall(int n, MPI_Request r[], MPI_Status s[]) { return PMPI_Waitall(n, r, s); }
    int waitany(int n, MPI_Request r[], int* i, MPI_Status* s) { return PMPI_Waitany(n, r, i, s); }
    int waitsome(int n, MPI_Request r[], int* o, int i[], MPI_Status s[]) {
        return PMPI_Waitsome(n, r, o, i, s);
    }
    int error_class(int code) {
        int cls = MPI_SUCCESS;
        PMPI_Error_class(code, &cls);
        return cls;
    }
};

PmpiNext next;

}  // namespace

extern "C" {

int MPI_Testany(int count, MPI_Request reqs[], int* indx, int* flag, MPI_Status* status) {
    return reqstatus_tool::testany(next, "MPI_Testany", count, reqs, indx, flag, status);
}

int MPI_Waitany(int count, MPI_Request reqs[], int* indx, MPI_Status* status) {
    return reqstatus_tool::waitany(next, count, reqs, indx, status);
}

int MPI_Testsome(int incount, MPI_Request reqs[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
    return reqstatus_tool::testsome(next, "MPI_Testsome", incount, reqs, outcount, indices,
                                    statuses);
}

int MPI_Waitsome(int incount, MPI_Request reqs[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
    return reqstatus_tool::waitsome(next, incount, reqs, outcount, indices, statuses);
}

int MPI_Testall(int count, MPI_Request reqs[], int* flag, MPI_Status statuses[]) {
    return reqstatus_tool::testall(next, "MPI_Testall", count, reqs, flag, statuses);
}

int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[]) {
    return reqstatus_tool::waitall(next, count, reqs, statuses);
}

int MPI_Finalize(void) {
    reqstatus_tool::flush_log();
    return PMPI_Finalize();
}

}  // extern "C"
