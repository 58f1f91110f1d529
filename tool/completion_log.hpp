// What the tool saw complete, in order: one line per request completed through a wrapped
// MPI_Test*/MPI_Wait* call, written to $MPI_REQSTATUS_TOOL_LOG.<rank> when that variable is set.
// Each thread formats its records into its own buffer (no lock, no allocation once warm) and
// appends the buffer to the file in blocks, at MPI_Finalize and when the thread exits; without the
// variable, record() returns after one test.
#pragma once

#include <mpi.h>

namespace reqstatus_tool {

// Whether $MPI_REQSTATUS_TOOL_LOG asked for a log (read once, before the first record).
extern const bool logging;

void record_line(const char* call, int index, const MPI_Status& status, int error);

// call: the application's call, e.g. "MPI_Testsome"; index: the request's index in the
// application's array; status: as MPI_Request_get_status_* reported it; error: the return code of
// that get_status call.
inline void record(const char* call, int index, const MPI_Status& status, int error) {
    if (logging) {
        record_line(call, index, status, error);
    }
}

// Writes what the calling thread has buffered (called by the MPI_Finalize wrapper).
void flush_log();

}  // namespace reqstatus_tool
