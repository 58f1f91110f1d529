/*
 * Copyright (C) by the MPICH request engine extension authors.
 *     Under MPICH's license: see COPYRIGHT in top-level directory
 */

#include "mpiimpl.h"

/* The "request_engine" MPI_T event source: request_complete (and its MPI_COMM and MPI_FILE
 * bound forms), grequest_poll, grequest_class_wait, request_scan_served; raised with
 * MPI_T_CB_REQUIRE_MPI_RESTRICTED, deferred to a safe point otherwise. */

/* request_complete data: one layout for the three */
typedef struct {
    int kind;                   /* public_kind: 1 send, 2 recv, 3 persistent send,
                                 * 4 persistent recv, 5 generalized, 6 collective, 7 persistent
                                 * collective, 8 partitioned send, 9 partitioned recv, 10 RMA */
    int request;                /* the MPI_Request handle value */
    int comm;                   /* its communicator (MPI_COMM_NULL for none) */
    int source;                 /* status: MPI_SOURCE, MPI_TAG (MPI_UNDEFINED but for receives and
                                 * generalized requests), the error the call reports */
    int tag;
    int error;
    int call;                   /* MPIR_Request_call_t: 1 MPI_Wait ... 12 get_status_some */
    int index;                  /* the request's index in the array; -1 for a single request */
    MPI_Count count;            /* bytes received (status count; 0 but for receives and
                                 * generalized requests) */
} complete_event_t;

typedef struct {
    int class_handle;           /* MPIX_Grequest_class; 0 for MPIX_Grequest_start requests */
    int request;
    int completed;              /* 1 when the request is complete after the call */
    int error;                  /* what poll_fn returned */
} poll_event_t;

typedef struct {
    int class_handle;
    int handed;                 /* requests given to this wait_fn call */
    int completed;              /* of them, complete after it */
    int error;                  /* what wait_fn returned */
    double timeout;             /* seconds, as handed to wait_fn */
    double blocked;             /* seconds spent in wait_fn */
} wait_event_t;

typedef struct {
    MPI_Aint array;             /* the array's address */
    int count;
    int index;                  /* the request served */
    int next;                   /* where the next call on this array starts */
} served_event_t;

enum {
    EV_COMPLETE, EV_COMPLETE_COMM, EV_COMPLETE_FILE, EV_POLL, EV_WAIT, EV_SERVED, EV_NUM
};
static int event_index[EV_NUM];

static void register_event(int source, int which, const char *name, MPI_Datatype types[],
                           MPI_Aint displs[], int n, const char *desc, MPIR_T_bind_t bind)
{
    MPIR_T_register_event(source, name, MPI_T_VERBOSITY_TUNER_DETAIL, types, displs, n, desc,
                          bind, "REQUEST_ENGINE", &event_index[which]);
}

void MPII_request_events_init(void)
{
    int source;
    name2index_hash_t *found;

    /* once per MPI_T tables: again when MPI_Finalize freed them (MPI_Session_init after it) */
    HASH_FIND_STR(cat_hash, "REQUEST_ENGINE", found);
    if (found) {
        return;
    }
    MPIR_T_register_source("request_engine", "MPICH's request engine: completions reported to "
                           "the application, generalized request polls and class waits, the "
                           "fairness cursor", MPI_T_SOURCE_ORDERED, NULL, -1, -1, &source);
    MPIR_T_cat_add_desc("REQUEST_ENGINE", "events of MPICH's request engine");

    MPI_Datatype ctypes[9] = { MPI_INT, MPI_INT, MPI_INT, MPI_INT, MPI_INT, MPI_INT, MPI_INT,
        MPI_INT, MPI_COUNT
    };
    MPI_Aint cdispls[9] = {
        offsetof(complete_event_t, kind), offsetof(complete_event_t, request),
        offsetof(complete_event_t, comm), offsetof(complete_event_t, source),
        offsetof(complete_event_t, tag), offsetof(complete_event_t, error),
        offsetof(complete_event_t, call), offsetof(complete_event_t, index),
        offsetof(complete_event_t, count)
    };
    const char *cdesc = "a completion call reported a completed request: kind (1 send, 2 recv, "
        "3 persistent send, 4 persistent recv, 5 generalized, 6 collective, 7 persistent "
        "collective, 8 partitioned send, 9 partitioned recv, 10 RMA), request, comm, source, "
        "tag, error, call (1 Wait, 2 Test, 3 Request_get_status, 4 Waitall, 5 Testall, "
        "6 get_status_all, 7 Waitany, 8 Testany, 9 get_status_any, 10 Waitsome, 11 Testsome, "
        "12 get_status_some), index (-1 for a single request), count (bytes received); "
        "source, tag and count are MPI_UNDEFINED, MPI_UNDEFINED, 0 but for receives and "
        "generalized requests; once per completion";
    register_event(source, EV_COMPLETE, "request_complete", ctypes, cdispls, 9, cdesc,
                   MPI_T_BIND_NO_OBJECT);
    register_event(source, EV_COMPLETE_COMM, "request_complete_comm", ctypes, cdispls, 9,
                   "request_complete for the requests of one communicator", MPI_T_BIND_MPI_COMM);
    register_event(source, EV_COMPLETE_FILE, "request_complete_file", ctypes, cdispls, 9,
                   "request_complete for the nonblocking I/O requests of one file",
                   MPI_T_BIND_MPI_FILE);

    MPI_Datatype ptypes[4] = { MPI_INT, MPI_INT, MPI_INT, MPI_INT };
    MPI_Aint pdispls[4] = {
        offsetof(poll_event_t, class_handle), offsetof(poll_event_t, request),
        offsetof(poll_event_t, completed), offsetof(poll_event_t, error)
    };
    register_event(source, EV_POLL, "grequest_poll", ptypes, pdispls, 4,
                   "a generalized request's poll_fn was called: class (0 for MPIX_Grequest_start), "
                   "request, completed (1 if complete after it), error (what poll_fn returned)",
                   MPI_T_BIND_NO_OBJECT);

    MPI_Datatype wtypes[6] = { MPI_INT, MPI_INT, MPI_INT, MPI_INT, MPI_DOUBLE, MPI_DOUBLE };
    MPI_Aint wdispls[6] = {
        offsetof(wait_event_t, class_handle), offsetof(wait_event_t, handed),
        offsetof(wait_event_t, completed), offsetof(wait_event_t, error),
        offsetof(wait_event_t, timeout), offsetof(wait_event_t, blocked)
    };
    register_event(source, EV_WAIT, "grequest_class_wait", wtypes, wdispls, 6,
                   "one wait_fn call for a batch of generalized requests returned: class "
                   "(0 for MPIX_Grequest_start), handed (requests given to it), completed (of "
                   "them, complete after it), error (what wait_fn returned), timeout (seconds "
                   "handed to it), blocked (seconds spent in it)", MPI_T_BIND_NO_OBJECT);

    MPI_Datatype stypes[4] = { MPI_AINT, MPI_INT, MPI_INT, MPI_INT };
    MPI_Aint sdispls[4] = {
        offsetof(served_event_t, array), offsetof(served_event_t, count),
        offsetof(served_event_t, index), offsetof(served_event_t, next)
    };
    register_event(source, EV_SERVED, "request_scan_served", stypes, sdispls, 4,
                   "an any/some completion call served a request and the array's fairness cursor "
                   "moved past it: array (address), count, index (served), next (where the next "
                   "call starts)", MPI_T_BIND_NO_OBJECT);
}

/* The request whose status a completion reports: the persistent request's running operation;
 * NULL when the request is inactive (no event: nothing completed) */
static MPIR_Request *status_holder(MPIR_Request * req)
{
    switch (req->kind) {
        case MPIR_REQUEST_KIND__PREQUEST_SEND:
        case MPIR_REQUEST_KIND__PREQUEST_RECV:
            return req->u.persist.real_request;
        case MPIR_REQUEST_KIND__PREQUEST_COLL:
            return req->u.persist_coll.real_request;
        case MPIR_REQUEST_KIND__PART_SEND:
        case MPIR_REQUEST_KIND__PART_RECV:
            return MPIR_Part_request_is_active(req) ? req : NULL;
        default:
            return req;
    }
}

/* The kind as the event reports it: a numbering of its own, documented in the event's
 * description, that does not follow MPICH's internal enum */
static int public_kind(MPIR_Request_kind_t kind)
{
    switch (kind) {
        case MPIR_REQUEST_KIND__SEND:
            return 1;
        case MPIR_REQUEST_KIND__RECV:
            return 2;
        case MPIR_REQUEST_KIND__PREQUEST_SEND:
            return 3;
        case MPIR_REQUEST_KIND__PREQUEST_RECV:
            return 4;
        case MPIR_REQUEST_KIND__GREQUEST:
            return 5;
        case MPIR_REQUEST_KIND__COLL:
            return 6;
        case MPIR_REQUEST_KIND__PREQUEST_COLL:
            return 7;
        case MPIR_REQUEST_KIND__PART_SEND:
            return 8;
        case MPIR_REQUEST_KIND__PART_RECV:
            return 9;
        case MPIR_REQUEST_KIND__RMA:
            return 10;
        default:
            return 0;
    }
}

/* receives, and generalized requests (whose query_fn fills the status) */
static bool reports_message(MPIR_Request * req)
{
    return req->kind == MPIR_REQUEST_KIND__RECV || req->kind == MPIR_REQUEST_KIND__PREQUEST_RECV ||
        req->kind == MPIR_REQUEST_KIND__PART_RECV || req->kind == MPIR_REQUEST_KIND__GREQUEST;
}

static bool is_get_status_call(int call)
{
    return call == MPIR_REQUEST_CALL__GET_STATUS || call == MPIR_REQUEST_CALL__GET_STATUS_ALL ||
        call == MPIR_REQUEST_CALL__GET_STATUS_ANY || call == MPIR_REQUEST_CALL__GET_STATUS_SOME;
}

void MPIR_Request_complete_event(MPIR_Request * req, int mpi_errno)
{
    MPIR_Request *holder = status_holder(req);
    if (holder == NULL) {
        return;
    }
    if (HANDLE_IS_BUILTIN(req->handle)) {
        /* a shared request handed out while nobody listened: no state of its own to mark, so
         * only the call that frees it reports it */
        if (is_get_status_call(MPIR_Request_call_record.call))
            return;
    } else {
        if (req->events_seq == req->completion_seq + 1)
            return;     /* reported already (by a get_status form) */
        req->events_seq = req->completion_seq + 1;
    }

    complete_event_t ev;
    ev.kind = public_kind(req->kind);
    ev.request = req->handle;
    ev.comm = req->comm ? req->comm->handle : MPI_COMM_NULL;
    if (reports_message(req)) {
        ev.source = holder->status.MPI_SOURCE;
        ev.tag = holder->status.MPI_TAG;
        ev.count = MPIR_STATUS_GET_COUNT(holder->status);
    } else {
        /* a send's, a collective's or an RMA operation's status has no source, tag or count */
        ev.source = MPI_UNDEFINED;
        ev.tag = MPI_UNDEFINED;
        ev.count = 0;
    }
    ev.error = mpi_errno;
    ev.call = MPIR_Request_call_record.call;
    ev.index = MPIR_Request_call_record.index;

    MPIR_T_DO_EVENT(event_index[EV_COMPLETE], MPI_T_CB_REQUIRE_MPI_RESTRICTED, &ev);
    if (req->comm) {
        MPIR_T_DO_EVENT_OBJ(event_index[EV_COMPLETE_COMM], MPI_T_CB_REQUIRE_MPI_RESTRICTED, &ev,
                            (intptr_t) req->comm->handle);
    }
    MPI_File file = MPIR_Request_err_file(req);
    if (file != MPI_FILE_NULL) {
        MPIR_T_DO_EVENT_OBJ(event_index[EV_COMPLETE_FILE], MPI_T_CB_REQUIRE_MPI_RESTRICTED, &ev,
                            (intptr_t) file);
    }
}

void MPIR_Grequest_poll_event(MPIR_Request * req, int rc)
{
    struct MPIR_Grequest_fns *fns = req->u.ureq.greq_fns;
    poll_event_t ev;
    ev.class_handle = fns->class_ptr ? fns->class_ptr->handle : 0;
    ev.request = req->handle;
    ev.completed = MPIR_Request_is_complete(req);
    ev.error = rc;
    MPIR_T_DO_EVENT(event_index[EV_POLL], MPI_T_CB_REQUIRE_MPI_RESTRICTED, &ev);
}

void MPIR_Grequest_wait_event(MPIR_Grequest_class * class_ptr, MPIR_Request * batch[], int n,
                              int rc, double timeout, double blocked)
{
    wait_event_t ev;
    ev.class_handle = class_ptr ? class_ptr->handle : 0;
    ev.handed = n;
    ev.completed = 0;
    for (int j = 0; j < n; j++) {
        if (MPIR_Request_is_complete(batch[j]))
            ev.completed++;
    }
    ev.error = rc;
    ev.timeout = timeout;
    ev.blocked = blocked;
    MPIR_T_DO_EVENT(event_index[EV_WAIT], MPI_T_CB_REQUIRE_MPI_RESTRICTED, &ev);
}

void MPIR_Request_served_event(const MPI_Request array_of_requests[], int count, int indx,
                               int next)
{
    served_event_t ev;
    ev.array = (MPI_Aint) (intptr_t) array_of_requests;
    ev.count = count;
    ev.index = indx;
    ev.next = next;
    MPIR_T_DO_EVENT(event_index[EV_SERVED], MPI_T_CB_REQUIRE_MPI_RESTRICTED, &ev);
}

/* MPIR_Request_create_complete while a tool listens: a complete request of its own */
MPIR_Request *MPIR_Request_create_complete_listened(MPIR_Request_kind_t kind, MPIR_Comm * comm)
{
    MPIR_Request *req = MPIR_Request_create(kind);
    if (req == NULL) {
        return NULL;
    }
    MPIR_cc_set(&req->cc, 0);
    /* what the application sees is what the shared request would have shown */
    req->status = MPIR_Request_builtins[kind].status;
    if (comm != NULL) {
        req->comm = comm;
        MPIR_Comm_add_ref(comm);
    }
    return req;
}
