// The completion wrappers of the reqstatus tool, written once for its PMPI library and its QMPI
// library: each Test wrapper asks the non-destructive MPI_Request_get_status_* form first (the
// same progress, the same fairness cursor, the same answer as the destructive form), records which
// request completed with which status, then completes exactly those requests; each Wait wrapper
// calls the Wait form itself (so a blocking wait blocks where MPI blocks) and records what it
// completed. `Next` is how the tool reaches the next implementation of a call: PMPI_ for the PMPI
// library, the QMPI chain for the QMPI one. It provides get_status_any/_some/_all, wait, waitall,
// waitany, waitsome (the MPI signatures) and error_class(code).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

#include "completion_log.hpp"

namespace reqstatus_tool {

// Completes a request get_status reported complete. It is complete, so MPI_Wait returns at
// once without making progress (MPI_Test would poll the network once per request: more progress
// than the destructive call makes, and slower); the status it writes is the one the destructive
// array form would have written.
template <class Next>
void complete_reported(Next& next, MPI_Request* request, MPI_Status* status) {
    next.wait(request, status);
}

// Completes the n requests reqs[indices[j]], all reported complete, with one Waitall on a
// compacted copy of their handles (it returns at once, as they are complete, and costs one call
// instead of n), then puts back what MPI_Waitall leaves in each handle (MPI_REQUEST_NULL, or the
// persistent request); one request with Wait directly. Only when none failed: on a failed
// request MPICH's MPI_Waitall stops and leaves the others pending.
template <class Next>
void complete_all_reported(Next& next, MPI_Request reqs[], const int indices[], int n) {
    if (n == 1) {
        complete_reported(next, &reqs[indices[0]], MPI_STATUS_IGNORE);
        return;
    }
    thread_local std::vector<MPI_Request> handles;
    handles.resize(static_cast<size_t>(n));
    for (int j = 0; j < n; j++) {
        handles[static_cast<size_t>(j)] = reqs[indices[j]];
    }
    next.waitall(n, handles.data(), MPI_STATUSES_IGNORE);
    for (int j = 0; j < n; j++) {
        reqs[indices[j]] = handles[static_cast<size_t>(j)];
    }
}

// Statuses for the calls whose caller passed MPI_STATUSES_IGNORE: the tool needs them. One
// buffer per thread, grown as needed, never cleared (get_status writes what is read).
inline MPI_Status* scratch_statuses(int n) {
    thread_local std::vector<MPI_Status> buffer;
    if (buffer.size() < static_cast<size_t>(n)) {
        buffer.resize(static_cast<size_t>(n));
    }
    return buffer.data();
}

template <class Next>
int testany(Next& next, const char* call, int count, MPI_Request reqs[], int* indx, int* flag,
            MPI_Status* status) {
    MPI_Status local;
    MPI_Status* seen = (status == MPI_STATUS_IGNORE) ? &local : status;
    const int rc = next.get_status_any(count, reqs, indx, flag, seen);
    if (*flag && *indx != MPI_UNDEFINED) {
        record(call, *indx, *seen, rc);
        complete_reported(next, &reqs[*indx], status);
    }
    return rc;
}

template <class Next>
int testsome(Next& next, const char* call, int incount, MPI_Request reqs[], int* outcount,
             int indices[], MPI_Status statuses[]) {
    // the statuses are needed only for the application or the log
    MPI_Status* seen = statuses;
    if (statuses == MPI_STATUSES_IGNORE && reqstatus_tool::logging) {
        seen = scratch_statuses(incount);
    }
    const int rc = next.get_status_some(incount, reqs, outcount, indices, seen);
    if (*outcount != MPI_UNDEFINED && *outcount > 0) {
        if (reqstatus_tool::logging) {
            for (int j = 0; j < *outcount; j++) {
                record(call, indices[j], seen[j], rc);
            }
        }
        if (rc == MPI_SUCCESS) {
            complete_all_reported(next, reqs, indices, *outcount);
        } else {
            for (int j = 0; j < *outcount; j++) {
                complete_reported(next, &reqs[indices[j]], MPI_STATUS_IGNORE);
            }
        }
    }
    return rc;
}

// MPI_Testall completes every request when all are complete, and the complete ones when one of
// them failed (MPI_ERR_IN_STATUS; the pending ones have MPI_ERR_PENDING in their status).
template <class Next>
int testall(Next& next, const char* call, int count, MPI_Request reqs[], int* flag,
            MPI_Status statuses[]) {
    MPI_Status* seen = (statuses == MPI_STATUSES_IGNORE) ? scratch_statuses(count) : statuses;
    const int rc = next.get_status_all(count, reqs, flag, seen);
    const bool in_status = rc != MPI_SUCCESS && next.error_class(rc) == MPI_ERR_IN_STATUS;
    if (!*flag && !in_status) {
        return rc;
    }
    if (rc == MPI_SUCCESS) {
        for (int i = 0; i < count; i++) {
            if (reqs[i] != MPI_REQUEST_NULL) {
                record(call, i, seen[i], rc);
            }
        }
        next.waitall(count, reqs, MPI_STATUSES_IGNORE);  // all complete: returns at once
        return rc;
    }
    for (int i = 0; i < count; i++) {
        if (reqs[i] == MPI_REQUEST_NULL || (in_status && seen[i].MPI_ERROR == MPI_ERR_PENDING)) {
            continue;
        }
        record(call, i, seen[i], rc);
        complete_reported(next, &reqs[i], MPI_STATUS_IGNORE);
    }
    return rc;
}

template <class Next>
int waitany(Next& next, int count, MPI_Request reqs[], int* indx, MPI_Status* status) {
    MPI_Status local;
    MPI_Status* seen = (status == MPI_STATUS_IGNORE) ? &local : status;
    const int rc = next.waitany(count, reqs, indx, seen);
    if (*indx != MPI_UNDEFINED) {
        record("MPI_Waitany", *indx, *seen, rc);
    }
    return rc;
}

template <class Next>
int waitsome(Next& next, int incount, MPI_Request reqs[], int* outcount, int indices[],
             MPI_Status statuses[]) {
    MPI_Status* seen = statuses;
    if (statuses == MPI_STATUSES_IGNORE && reqstatus_tool::logging) {
        seen = scratch_statuses(incount);
    }
    const int rc = next.waitsome(incount, reqs, outcount, indices, seen);
    if (reqstatus_tool::logging && *outcount != MPI_UNDEFINED) {
        for (int j = 0; j < *outcount; j++) {
            record("MPI_Waitsome", indices[j], seen[j], rc);
        }
    }
    return rc;
}

template <class Next>
int waitall(Next& next, int count, MPI_Request reqs[], MPI_Status statuses[]) {
    MPI_Status* seen = (statuses == MPI_STATUSES_IGNORE) ? scratch_statuses(count) : statuses;
    // which requests were there: MPI_Waitall leaves MPI_REQUEST_NULL in those it freed
    thread_local std::vector<MPI_Request> before;
    before.assign(reqs, reqs + count);
    const int rc = next.waitall(count, reqs, seen);
    const bool in_status = rc != MPI_SUCCESS && next.error_class(rc) == MPI_ERR_IN_STATUS;
    if (rc != MPI_SUCCESS && !in_status) {
        return rc;
    }
    for (int i = 0; i < count; i++) {
        // with MPI_ERR_IN_STATUS, MPICH's MPI_Waitall leaves the requests after the failed one
        // (MPI_ERR_PENDING in their status): not completed
        if (before[static_cast<size_t>(i)] == MPI_REQUEST_NULL ||
            (in_status && seen[i].MPI_ERROR == MPI_ERR_PENDING)) {
            continue;
        }
        record("MPI_Waitall", i, seen[i], rc);
    }
    return rc;
}

}  // namespace reqstatus_tool
