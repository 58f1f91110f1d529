/*
 * Copyright (C) by the MPICH request engine extension authors.
 *     Under MPICH's license: see COPYRIGHT in top-level directory
 */

/* Null and inactive requests, and count 0: all-null/inactive arrays give flag true, index
 * MPI_UNDEFINED, outcount MPI_UNDEFINED and empty statuses; in a mixed array only the active
 * request counts and the others get empty statuses from _all. One process. */

#include "getstatus_check.h"

static void check_all_inactive(int n, MPI_Request reqs[], const char *what)
{
    MPI_Status st[4], one;
    int flag = -1, idx = -1, outcount = -1, indices[4];

    poison_statuses(st, 4);
    MPI_Request_get_status_all(n, reqs, &flag, st);
    CHECK(flag == 1, "%s: all: flag %d", what, flag);
    for (int i = 0; i < n; i++)
        CHECK(status_is_empty(&st[i]), "%s: all: status %d not empty", what, i);
    CHECK(n == 4 || st[n].MPI_SOURCE == POISON, "%s: all: status beyond count written", what);

    poison_status(&one);
    MPI_Request_get_status_any(n, reqs, &idx, &flag, &one);
    CHECK(flag == 1 && idx == MPI_UNDEFINED, "%s: any: flag %d index %d", what, flag, idx);
    CHECK(status_is_empty(&one), "%s: any: status not empty", what);

    MPI_Request_get_status_some(n, reqs, &outcount, indices, st);
    CHECK(outcount == MPI_UNDEFINED, "%s: some: outcount %d", what, outcount);

    /* the IGNORE forms must not be dereferenced */
    MPI_Request_get_status_all(n, reqs, &flag, MPI_STATUSES_IGNORE);
    CHECK(flag == 1, "%s: all, MPI_STATUSES_IGNORE: flag %d", what, flag);
    MPI_Request_get_status_any(n, reqs, &idx, &flag, MPI_STATUS_IGNORE);
    CHECK(flag == 1 && idx == MPI_UNDEFINED, "%s: any, MPI_STATUS_IGNORE", what);
    MPI_Request_get_status_some(n, reqs, &outcount, indices, MPI_STATUSES_IGNORE);
    CHECK(outcount == MPI_UNDEFINED, "%s: some, MPI_STATUSES_IGNORE: outcount %d", what, outcount);
}

int main(int argc, char *argv[])
{
    MPI_Comm comm = MPI_COMM_WORLD;
    int rank, buf[4] = { 0 }, sbuf = 42;
    MPI_Request reqs[4];

    MTest_Init(&argc, &argv);
    MPI_Comm_rank(comm, &rank);

    /* count 0, with NULL arrays as the standard allows */
    check_all_inactive(0, NULL, "count 0");

    for (int i = 0; i < 4; i++)
        reqs[i] = MPI_REQUEST_NULL;
    check_all_inactive(4, reqs, "all null");

    /* inactive persistent requests, alone and mixed with null ones */
    MPI_Recv_init(&buf[0], 1, MPI_INT, rank, 0, comm, &reqs[0]);
    MPI_Send_init(&sbuf, 1, MPI_INT, rank, 0, comm, &reqs[2]);
    check_all_inactive(4, reqs, "inactive persistent and null");
    MPI_Request saved[4];
    memcpy(saved, reqs, sizeof(reqs));
    CHECK(memcmp(saved, reqs, sizeof(reqs)) == 0, "request array changed");

    /* one active receive among them, not yet matched */
    MPI_Irecv(&buf[3], 1, MPI_INT, rank, 7, comm, &reqs[3]);
    MPI_Status st[4], one;
    int flag, idx, outcount, indices[4];
    MPI_Request_get_status_all(4, reqs, &flag, MPI_STATUSES_IGNORE);
    CHECK(!flag, "mixed, pending: all: flag %d", flag);
    MPI_Request_get_status_any(4, reqs, &idx, &flag, &one);
    CHECK(!flag && idx == MPI_UNDEFINED, "mixed, pending: any: flag %d index %d", flag, idx);
    MPI_Request_get_status_some(4, reqs, &outcount, indices, st);
    CHECK(outcount == 0, "mixed, pending: some: outcount %d", outcount);

    /* now matched */
    MPI_Send(&sbuf, 1, MPI_INT, rank, 7, comm);
    poison_statuses(st, 4);
    MPI_Request_get_status_all(4, reqs, &flag, st);
    CHECK(flag, "mixed, complete: all: flag %d", flag);
    for (int i = 0; i < 3; i++)
        CHECK(status_is_empty(&st[i]), "mixed, complete: all: status %d not empty", i);
    CHECK(st[3].MPI_SOURCE == rank && st[3].MPI_TAG == 7 && status_count(&st[3], MPI_INT) == 1,
          "mixed, complete: all: status 3: source %d tag %d", st[3].MPI_SOURCE, st[3].MPI_TAG);
    MPI_Request_get_status_any(4, reqs, &idx, &flag, &one);
    CHECK(flag && idx == 3, "mixed, complete: any: flag %d index %d", flag, idx);
    MPI_Request_get_status_some(4, reqs, &outcount, indices, st);
    CHECK(outcount == 1 && indices[0] == 3, "mixed, complete: some: outcount %d index %d",
          outcount, indices[0]);
    CHECK(reqs[3] != MPI_REQUEST_NULL && memcmp(saved, reqs, 3 * sizeof(MPI_Request)) == 0,
          "request array changed");

    MPI_Wait(&reqs[3], &one);
    CHECK(buf[3] == 42 && one.MPI_TAG == 7, "received %d tag %d", buf[3], one.MPI_TAG);
    check_all_inactive(4, reqs, "after the wait");

    MPI_Request_free(&reqs[0]);
    MPI_Request_free(&reqs[2]);
    MTest_Finalize(errs);
    return MTestReturnValue(errs);
}
