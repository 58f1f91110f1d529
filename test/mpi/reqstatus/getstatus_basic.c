/*
 * Copyright (C) by the MPICH request engine extension authors.
 *     Under MPICH's license: see COPYRIGHT in top-level directory
 */

/* get_status_all/_any/_some on receives with nothing, some and all complete: exact flags,
 * indices, counts and statuses, the array unchanged, what a later MPI_Test/MPI_Waitall returns.
 * Even ranks receive from the next rank; an odd last rank only joins the barriers. */

#include "getstatus_check.h"

#define N 4
#define DEADLINE 30.0

static void receiver(MPI_Comm comm, int peer)
{
    int bufs[N][N];
    MPI_Request reqs[N], saved[N];
    MPI_Status st[N], one;
    int flag, idx, outcount, indices[N];

    for (int i = 0; i < N; i++)
        MPI_Irecv(bufs[i], i + 1, MPI_INT, peer, i, comm, &reqs[i]);
    memcpy(saved, reqs, sizeof(reqs));

    /* nothing complete */
    poison_statuses(st, N);
    MPI_Request_get_status_all(N, reqs, &flag, st);
    CHECK(!flag, "all: flag %d with nothing complete", flag);
    CHECK(st[0].MPI_SOURCE == POISON && st[N - 1].MPI_TAG == POISON,
          "all: statuses written although not all complete");
    poison_status(&one);
    MPI_Request_get_status_any(N, reqs, &idx, &flag, &one);
    CHECK(!flag && idx == MPI_UNDEFINED, "any: flag %d index %d with nothing complete", flag, idx);
    CHECK(one.MPI_SOURCE == POISON, "any: status written with nothing complete");
    MPI_Request_get_status_some(N, reqs, &outcount, indices, st);
    CHECK(outcount == 0, "some: outcount %d with nothing complete", outcount);
    CHECK(memcmp(saved, reqs, sizeof(reqs)) == 0, "request array changed");

    MPI_Barrier(comm);  /* the peer sends tag 2 */

    /* one complete: index 2 */
    double t0 = MPI_Wtime();
    do {
        poison_status(&one);
        MPI_Request_get_status_any(N, reqs, &idx, &flag, &one);
    } while (!flag && MPI_Wtime() - t0 < DEADLINE);
    CHECK(flag && idx == 2, "any: flag %d index %d, expected index 2", flag, idx);
    CHECK(one.MPI_SOURCE == peer && one.MPI_TAG == 2 && status_count(&one, MPI_INT) == 3,
          "any: status source %d tag %d count %d", one.MPI_SOURCE, one.MPI_TAG,
          status_count(&one, MPI_INT));
    CHECK(one.MPI_ERROR == POISON, "any: MPI_ERROR written (%d) on success", one.MPI_ERROR);

    MPI_Request_get_status_any(N, reqs, &idx, &flag, &one);
    CHECK(flag && idx == 2, "any, again: flag %d index %d", flag, idx);

    poison_statuses(st, N);
    MPI_Request_get_status_some(N, reqs, &outcount, indices, st);
    CHECK(outcount == 1 && indices[0] == 2, "some: outcount %d first index %d", outcount,
          indices[0]);
    CHECK(st[0].MPI_SOURCE == peer && st[0].MPI_TAG == 2 && status_count(&st[0], MPI_INT) == 3,
          "some: status source %d tag %d", st[0].MPI_SOURCE, st[0].MPI_TAG);
    CHECK(st[0].MPI_ERROR == POISON, "some: MPI_ERROR written on success");
    CHECK(st[1].MPI_SOURCE == POISON, "some: status beyond outcount written");

    poison_statuses(st, N);
    MPI_Request_get_status_all(N, reqs, &flag, st);
    CHECK(!flag, "all: flag %d with one of four complete", flag);
    CHECK(st[2].MPI_SOURCE == POISON, "all: statuses written although not all complete");

    MPI_Request_get_status_any(N, reqs, &idx, &flag, MPI_STATUS_IGNORE);
    CHECK(flag && idx == 2, "any, MPI_STATUS_IGNORE: flag %d index %d", flag, idx);
    MPI_Request_get_status_some(N, reqs, &outcount, indices, MPI_STATUSES_IGNORE);
    CHECK(outcount == 1 && indices[0] == 2, "some, MPI_STATUSES_IGNORE: outcount %d", outcount);
    MPI_Request_get_status_all(N, reqs, &flag, MPI_STATUSES_IGNORE);
    CHECK(!flag, "all, MPI_STATUSES_IGNORE: flag %d", flag);
    CHECK(memcmp(saved, reqs, sizeof(reqs)) == 0, "request array changed");

    /* the destructive form completes what was reported, with the same status */
    poison_status(&one);
    MPI_Test(&reqs[2], &flag, &one);
    CHECK(flag && reqs[2] == MPI_REQUEST_NULL, "MPI_Test after get_status: flag %d", flag);
    CHECK(one.MPI_SOURCE == peer && one.MPI_TAG == 2 && status_count(&one, MPI_INT) == 3,
          "MPI_Test status differs: source %d tag %d", one.MPI_SOURCE, one.MPI_TAG);
    CHECK(bufs[2][0] == 200 && bufs[2][2] == 202, "data of tag 2: %d %d", bufs[2][0], bufs[2][2]);
    memcpy(saved, reqs, sizeof(reqs));

    MPI_Barrier(comm);  /* the peer sends tags 0, 1, 3 */

    /* all complete; reqs[2] is now MPI_REQUEST_NULL and gets an empty status */
    t0 = MPI_Wtime();
    do {
        poison_statuses(st, N);
        MPI_Request_get_status_all(N, reqs, &flag, st);
    } while (!flag && MPI_Wtime() - t0 < DEADLINE);
    CHECK(flag, "all: never complete");
    for (int i = 0; i < N; i++) {
        if (i == 2) {
            CHECK(status_is_empty(&st[i]), "all: status of the null request is not empty");
        } else {
            CHECK(st[i].MPI_SOURCE == peer && st[i].MPI_TAG == i &&
                  status_count(&st[i], MPI_INT) == i + 1 && st[i].MPI_ERROR == POISON,
                  "all: status %d: source %d tag %d count %d error %d", i, st[i].MPI_SOURCE,
                  st[i].MPI_TAG, status_count(&st[i], MPI_INT), st[i].MPI_ERROR);
        }
    }
    CHECK(memcmp(saved, reqs, sizeof(reqs)) == 0, "request array changed");

    MPI_Request_get_status_some(N, reqs, &outcount, indices, MPI_STATUSES_IGNORE);
    int seen = 0;
    for (int k = 0; k < outcount; k++)
        seen |= 1 << indices[k];
    CHECK(outcount == 3 && seen == 0xb, "some: outcount %d, index set 0x%x, expected {0,1,3}",
          outcount, seen);
    /* the fairness cursor: get_status_any reported 2 and MPI_Test completed it, so the scan
     * starts at 3, as after MPI_Testany had completed 2 */
    MPI_Request_get_status_any(N, reqs, &idx, &flag, MPI_STATUS_IGNORE);
    CHECK(flag && idx == 3, "any: flag %d index %d, expected 3, just past the last served", flag,
          idx);

    MPI_Status wst[N];
    MPI_Waitall(N, reqs, wst);
    for (int i = 0; i < N; i++) {
        CHECK(reqs[i] == MPI_REQUEST_NULL, "request %d not freed by MPI_Waitall", i);
        if (i != 2) {
            CHECK(wst[i].MPI_SOURCE == st[i].MPI_SOURCE && wst[i].MPI_TAG == st[i].MPI_TAG &&
                  status_count(&wst[i], MPI_INT) == status_count(&st[i], MPI_INT),
                  "MPI_Waitall status %d differs from get_status_all's", i);
            for (int k = 0; k <= i; k++)
                CHECK(bufs[i][k] == 100 * i + k, "data %d[%d] = %d", i, k, bufs[i][k]);
        }
    }
    MPI_Barrier(comm);
}

static void sender(MPI_Comm comm, int peer)
{
    int buf[N];

    MPI_Barrier(comm);
    for (int k = 0; k < 3; k++)
        buf[k] = 200 + k;
    MPI_Send(buf, 3, MPI_INT, peer, 2, comm);
    MPI_Barrier(comm);
    for (int i = 0; i < N; i++) {
        if (i == 2)
            continue;
        for (int k = 0; k <= i; k++)
            buf[k] = 100 * i + k;
        MPI_Send(buf, i + 1, MPI_INT, peer, i, comm);
    }
    MPI_Barrier(comm);
}

int main(int argc, char *argv[])
{
    int rank, size;

    MTest_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        fprintf(stderr, "getstatus_basic needs at least 2 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    if (rank % 2 == 0 && rank + 1 < size) {
        receiver(MPI_COMM_WORLD, rank + 1);
    } else if (rank % 2 == 1) {
        sender(MPI_COMM_WORLD, rank - 1);
    } else {
        for (int b = 0; b < 3; b++)
            MPI_Barrier(MPI_COMM_WORLD);
    }

    MTest_Finalize(errs);
    return MTestReturnValue(errs);
}
