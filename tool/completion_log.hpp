// What the tool saw complete, in order: one line per request completed through a wrapped
// MPI_Test*/MPI_Wait* call. Written at MPI_Finalize to $MPI_REQSTATUS_TOOL_LOG.<rank> when that
// variable is set.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace reqstatus_tool {

struct Completion {
    const char* call;  // the application's call, e.g. "MPI_Testsome"
    int index;         // the request's index in the application's array
    MPI_Status status; // as MPI_Request_get_status_* reported it
    int error;         // the return code of the get_status call
};

void record(const char* call, int index, const MPI_Status& status, int error);
std::string format(const Completion& c);
const std::vector<Completion>& completions();
void write_log_if_asked();

}  // namespace reqstatus_tool
