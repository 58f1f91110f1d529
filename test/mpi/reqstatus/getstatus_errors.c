/*
 * Copyright (C) by the MPICH request engine extension authors.
 *     Under MPICH's license: see COPYRIGHT in top-level directory
 */

/* Bad input with MPI_ERRORS_RETURN: the error class, MPICH's error string naming the
 * function, no crash, and the requests still usable afterwards. One process. */

#include "getstatus_check.h"

static void check_error(int rc, int expected_class, const char *func, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;

    CHECK(rc != MPI_SUCCESS, "%s: returned MPI_SUCCESS", what);
    if (rc == MPI_SUCCESS)
        return;
    CHECK(error_class(rc) == expected_class, "%s: error class %d, expected %d", what,
          error_class(rc), expected_class);
    MPI_Error_string(rc, msg, &len);
    CHECK(strstr(msg, func) != NULL, "%s: error string does not name %s: %s", what, func, msg);
}

/* All three functions on the same (bad) request array: each must fail with expected_class. */
static void check_all_three(int count, const MPI_Request reqs[], int expected_class,
                            const char *what)
{
    MPI_Status st[2], one;
    int flag, idx, outcount, indices[2], rc;
    char label[128];

    rc = MPI_Request_get_status_all(count, reqs, &flag, st);
    snprintf(label, sizeof(label), "all, %s", what);
    check_error(rc, expected_class, "MPI_Request_get_status_all", label);
    rc = MPI_Request_get_status_any(count, reqs, &idx, &flag, &one);
    snprintf(label, sizeof(label), "any, %s", what);
    check_error(rc, expected_class, "MPI_Request_get_status_any", label);
    rc = MPI_Request_get_status_some(count, reqs, &outcount, indices, st);
    snprintf(label, sizeof(label), "some, %s", what);
    check_error(rc, expected_class, "MPI_Request_get_status_some", label);
}

int main(int argc, char *argv[])
{
    MPI_Comm comm = MPI_COMM_WORLD;
    int rank, flag, idx, outcount, indices[2], buf = 0, rc;
    MPI_Request reqs[2];
    MPI_Status st[2];

    MTest_Init(&argc, &argv);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);

    MPI_Irecv(&buf, 1, MPI_INT, rank, 3, comm, &reqs[0]);
    reqs[1] = MPI_REQUEST_NULL;

    /* negative count: MPI_ERR_COUNT */
    check_all_three(-1, reqs, MPI_ERR_COUNT, "count -1");

    /* NULL arrays and outputs with count > 0: MPI_ERR_ARG */
    rc = MPI_Request_get_status_all(2, NULL, &flag, st);
    check_error(rc, MPI_ERR_ARG, "MPI_Request_get_status_all", "all, NULL requests");
    rc = MPI_Request_get_status_all(2, reqs, &flag, NULL);
    check_error(rc, MPI_ERR_ARG, "MPI_Request_get_status_all", "all, NULL statuses");
    rc = MPI_Request_get_status_all(2, reqs, NULL, st);
    check_error(rc, MPI_ERR_ARG, "MPI_Request_get_status_all", "all, NULL flag");
    rc = MPI_Request_get_status_any(2, NULL, &idx, &flag, &st[0]);
    check_error(rc, MPI_ERR_ARG, "MPI_Request_get_status_any", "any, NULL requests");
    rc = MPI_Request_get_status_any(2, reqs, NULL, &flag, &st[0]);
    check_error(rc, MPI_ERR_ARG, "MPI_Request_get_status_any", "any, NULL index");
    rc = MPI_Request_get_status_some(2, NULL, &outcount, indices, st);
    check_error(rc, MPI_ERR_ARG, "MPI_Request_get_status_some", "some, NULL requests");
    rc = MPI_Request_get_status_some(2, reqs, &outcount, NULL, st);
    check_error(rc, MPI_ERR_ARG, "MPI_Request_get_status_some", "some, NULL indices");
    rc = MPI_Request_get_status_some(2, reqs, NULL, indices, st);
    check_error(rc, MPI_ERR_ARG, "MPI_Request_get_status_some", "some, NULL outcount");

    /* a handle of another kind, and a value that is no handle at all: MPI_ERR_REQUEST */
    MPI_Request bad[2] = { reqs[0], (MPI_Request) MPI_COMM_WORLD };
    check_all_three(2, bad, MPI_ERR_REQUEST, "communicator handle");
    MPI_Request garbage[2] = { (MPI_Request) 0, reqs[0] };
    check_all_three(2, garbage, MPI_ERR_REQUEST, "handle value 0");

    /* an MPI_Message passed as a request: MPI_ERR_REQUEST */
    MPI_Message msg;
    MPI_Status pst;
    int other = 5;
    MPI_Request sreq;
    MPI_Isend(&other, 1, MPI_INT, rank, 9, comm, &sreq);
    MPI_Mprobe(rank, 9, comm, &msg, &pst);
    MPI_Request withmsg[2] = { MPI_REQUEST_NULL, (MPI_Request) msg };
    check_all_three(2, withmsg, MPI_ERR_REQUEST, "MPI_Message");
    int got = 0;
    MPI_Mrecv(&got, 1, MPI_INT, &msg, &pst);
    MPI_Wait(&sreq, MPI_STATUS_IGNORE);
    CHECK(got == 5 && msg == MPI_MESSAGE_NULL, "the message was disturbed: got %d", got);

    /* nothing was lost: the receive is still pending and completes normally */
    rc = MPI_Request_get_status_any(2, reqs, &idx, &flag, &st[0]);
    CHECK(rc == MPI_SUCCESS && !flag && idx == MPI_UNDEFINED, "after errors: any: rc %d flag %d",
          rc, flag);
    int val = 11;
    MPI_Send(&val, 1, MPI_INT, rank, 3, comm);
    rc = MPI_Wait(&reqs[0], &st[0]);
    CHECK(rc == MPI_SUCCESS && buf == 11 && st[0].MPI_TAG == 3, "after errors: wait rc %d buf %d",
          rc, buf);

    MTest_Finalize(errs);
    return MTestReturnValue(errs);
}
