// The reqstatus tool on QMPI (tool name "reqstatus"): the completion wrappers of
// completion_wrappers.hpp, reached through the QMPI chain, so it stacks with other QMPI tools and
// with a PMPI tool. Load it (LD_PRELOAD=libqmpi_reqstatus_tool.so) and list it:
// MPIR_CVAR_QMPI_TOOL_LIST=reqstatus. Its log: $MPI_REQSTATUS_QMPI_LOG.<rank>.
#include <mpi.h>

#include "completion_log.hpp"
#include "completion_wrappers.hpp"
#include "qmpi_support.hpp"

namespace {

using qmpi_support::call_next;

// The next implementation of each call, for the tool at `tool_id` in this call's context.
struct QmpiNext {
    QMPI_Context context;
    int tool_id;

    int get_status_any(int n, MPI_Request r[], int* i, int* f, MPI_Status* s) {
        return call_next<QMPI_Request_get_status_any_t>(context, tool_id,
                                                        MPI_REQUEST_GET_STATUS_ANY_T, n, r, i, f,
                                                        s);
    }
    int get_status_some(int n, MPI_Request r[], int* o, int i[], MPI_Status s[]) {
        return call_next<QMPI_Request_get_status_some_t>(context, tool_id,
                                                         MPI_REQUEST_GET_STATUS_SOME_T, n, r, o,
                                                         i, s);
    }
    int get_status_all(int n, MPI_Request r[], int* f, MPI_Status s[]) {
        return call_next<QMPI_Request_get_status_all_t>(context, tool_id,
                                                        MPI_REQUEST_GET_STATUS_ALL_T, n, r, f, s);
    }
    int wait(MPI_Request* r, MPI_Status* s) {
        return call_next<QMPI_Wait_t>(context, tool_id, MPI_WAIT_T, r, s);
    }
    int waitall(int n, MPI_Request r[], MPI_Status s[]) {
        return call_next<QMPI_Waitall_t>(context, tool_id, MPI_WAITALL_T, n, r, s);
    }
    int waitany(int n, MPI_Request r[], int* i, MPI_Status* s) {
        return call_next<QMPI_Waitany_t>(context, tool_id, MPI_WAITANY_T, n, r, i, s);
    }
    int waitsome(int n, MPI_Request r[], int* o, int i[], MPI_Status s[]) {
        return call_next<QMPI_Waitsome_t>(context, tool_id, MPI_WAITSOME_T, n, r, o, i, s);
    }
    int error_class(int code) {
        int cls = MPI_SUCCESS;
        PMPI_Error_class(code, &cls);
        return cls;
    }
};

int testany(QMPI_Context c, int id, int count, MPI_Request reqs[], int* indx, int* flag,
            MPI_Status* status) {
    QmpiNext next{c, id};
    return reqstatus_tool::testany(next, "MPI_Testany", count, reqs, indx, flag, status);
}

int waitany(QMPI_Context c, int id, int count, MPI_Request reqs[], int* indx, MPI_Status* status) {
    QmpiNext next{c, id};
    return reqstatus_tool::waitany(next, count, reqs, indx, status);
}

int testsome(QMPI_Context c, int id, int incount, MPI_Request reqs[], int* outcount,
             int indices[], MPI_Status statuses[]) {
    QmpiNext next{c, id};
    return reqstatus_tool::testsome(next, "MPI_Testsome", incount, reqs, outcount, indices,
                                    statuses);
}

int waitsome(QMPI_Context c, int id, int incount, MPI_Request reqs[], int* outcount,
             int indices[], MPI_Status statuses[]) {
    QmpiNext next{c, id};
    return reqstatus_tool::waitsome(next, incount, reqs, outcount, indices, statuses);
}

int testall(QMPI_Context c, int id, int count, MPI_Request reqs[], int* flag,
            MPI_Status statuses[]) {
    QmpiNext next{c, id};
    return reqstatus_tool::testall(next, "MPI_Testall", count, reqs, flag, statuses);
}

int waitall(QMPI_Context c, int id, int count, MPI_Request reqs[], MPI_Status statuses[]) {
    QmpiNext next{c, id};
    return reqstatus_tool::waitall(next, count, reqs, statuses);
}

int finalize(QMPI_Context c, int id) {
    reqstatus_tool::flush_log();
    return call_next<QMPI_Finalize_t>(c, id, MPI_FINALIZE_T);
}

void init_tool(int tool_id) {
    using qmpi_support::register_wrapper;
    register_wrapper<QMPI_Testany_t>(tool_id, MPI_TESTANY_T, testany);
    register_wrapper<QMPI_Waitany_t>(tool_id, MPI_WAITANY_T, waitany);
    register_wrapper<QMPI_Testsome_t>(tool_id, MPI_TESTSOME_T, testsome);
    register_wrapper<QMPI_Waitsome_t>(tool_id, MPI_WAITSOME_T, waitsome);
    register_wrapper<QMPI_Testall_t>(tool_id, MPI_TESTALL_T, testall);
    register_wrapper<QMPI_Waitall_t>(tool_id, MPI_WAITALL_T, waitall);
    register_wrapper<QMPI_Finalize_t>(tool_id, MPI_FINALIZE_T, finalize);
}

__attribute__((constructor)) void register_reqstatus_tool() {
    qmpi_support::register_tool("reqstatus", init_tool);
}

}  // namespace
