/*
 * Copyright (C) by the MPICH request engine extension authors.
 *     Under MPICH's license: see COPYRIGHT in top-level directory
 */

/* Persistent requests: once get_status_* reports one complete it stays active, a later
 * MPI_Wait returns the same full status (source, tag, count) and only then makes it inactive,
 * and it can be started again. Rank 1 sends to rank 0, twice. */

#include "getstatus_check.h"

#define ROUNDS 2
#define DEADLINE 30.0

int main(int argc, char *argv[])
{
    MPI_Comm comm = MPI_COMM_WORLD;
    int rank, size, buf[3];

    MTest_Init(&argc, &argv);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);

    if (rank == 0) {
        MPI_Request reqs[2];
        MPI_Recv_init(buf, 3, MPI_INT, 1, MPI_ANY_TAG, comm, &reqs[0]);
        reqs[1] = MPI_REQUEST_NULL;
        for (int round = 0; round < ROUNDS; round++) {
            MPI_Status st[2], one, w;
            int flag = 0, idx = -1, outcount, indices[2];
            MPI_Request before = reqs[0];

            MPI_Start(&reqs[0]);
            MPI_Barrier(comm);  /* rank 1 sends */
            double t0 = MPI_Wtime();
            do {
                poison_status(&one);
                MPI_Request_get_status_any(2, reqs, &idx, &flag, &one);
            } while (!flag && MPI_Wtime() - t0 < DEADLINE);
            CHECK(flag && idx == 0, "round %d: any: flag %d index %d", round, flag, idx);
            CHECK(one.MPI_SOURCE == 1 && one.MPI_TAG == 10 + round &&
                  status_count(&one, MPI_INT) == 3, "round %d: any: source %d tag %d count %d",
                  round, one.MPI_SOURCE, one.MPI_TAG, status_count(&one, MPI_INT));

            /* still active: reported again by every form */
            poison_statuses(st, 2);
            MPI_Request_get_status_all(2, reqs, &flag, st);
            CHECK(flag && st[0].MPI_TAG == 10 + round && status_is_empty(&st[1]),
                  "round %d: all: flag %d tag %d", round, flag, st[0].MPI_TAG);
            MPI_Request_get_status_some(2, reqs, &outcount, indices, st);
            CHECK(outcount == 1 && indices[0] == 0 && st[0].MPI_TAG == 10 + round,
                  "round %d: some: outcount %d", round, outcount);
            MPI_Request_get_status_any(2, reqs, &idx, &flag, MPI_STATUS_IGNORE);
            CHECK(flag && idx == 0, "round %d: any again: index %d", round, idx);
            CHECK(reqs[0] == before, "round %d: the request handle changed", round);

            /* MPI_Wait returns the same full status, then the request is inactive */
            poison_status(&w);
            MPI_Wait(&reqs[0], &w);
            CHECK(w.MPI_SOURCE == 1 && w.MPI_TAG == 10 + round && status_count(&w, MPI_INT) == 3,
                  "round %d: wait: source %d tag %d count %d (an empty status means get_status "
                  "deactivated the request)", round, w.MPI_SOURCE, w.MPI_TAG,
                  status_count(&w, MPI_INT));
            CHECK(buf[0] == round && buf[2] == round + 2, "round %d: data %d %d", round, buf[0],
                  buf[2]);
            CHECK(reqs[0] == before, "round %d: MPI_Wait freed the persistent request", round);

            poison_status(&one);
            MPI_Request_get_status_any(2, reqs, &idx, &flag, &one);
            CHECK(flag && idx == MPI_UNDEFINED && status_is_empty(&one),
                  "round %d: inactive: any: flag %d index %d", round, flag, idx);
        }
        MPI_Request_free(&reqs[0]);
    } else if (rank == 1) {
        for (int round = 0; round < ROUNDS; round++) {
            MPI_Barrier(comm);
            for (int k = 0; k < 3; k++)
                buf[k] = round + k;
            MPI_Send(buf, 3, MPI_INT, 0, 10 + round, comm);
        }
    } else {
        for (int round = 0; round < ROUNDS; round++)
            MPI_Barrier(comm);
    }

    MTest_Finalize(errs);
    return MTestReturnValue(errs);
}
