/*
 * Copyright (C) by the MPICH request engine extension authors.
 *     Under MPICH's license: see COPYRIGHT in top-level directory
 */

/* A truncated receive: get_status_all and _some return MPI_ERR_IN_STATUS with each MPI_ERROR
 * exactly as MPI_Testall/MPI_Testsome then set it on the same requests; _any returns the
 * request's own error. Rank 1 sends 4 ints to a 1-int receive (tag 5) and 1 int (tag 6). */

#include "getstatus_check.h"

#define DEADLINE 30.0

int main(int argc, char *argv[])
{
    MPI_Comm comm = MPI_COMM_WORLD;
    int rank, small = 0, fits = 0, data[4] = { 1, 2, 3, 4 };

    MTest_Init(&argc, &argv);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);

    if (rank == 0) {
        MPI_Request reqs[2];
        MPI_Status st[2], ts[2], one;
        int flag = 0, rc, idx, outcount, indices[2], tindices[2], toutcount;

        MPI_Irecv(&small, 1, MPI_INT, 1, 5, comm, &reqs[0]);
        MPI_Irecv(&fits, 1, MPI_INT, 1, 6, comm, &reqs[1]);
        MPI_Barrier(comm);

        /* wait until both are complete without completing them */
        double t0 = MPI_Wtime();
        do {
            MPI_Request_get_status_all(2, reqs, &flag, MPI_STATUSES_IGNORE);
        } while (!flag && MPI_Wtime() - t0 < DEADLINE);
        CHECK(flag, "all: never complete");

        poison_statuses(st, 2);
        rc = MPI_Request_get_status_all(2, reqs, &flag, st);
        CHECK(rc == MPI_ERR_IN_STATUS, "all: returned %d, expected MPI_ERR_IN_STATUS", rc);
        CHECK(flag, "all: flag %d", flag);
        CHECK(error_class(st[0].MPI_ERROR) == MPI_ERR_TRUNCATE, "all: status 0 error class %d",
              error_class(st[0].MPI_ERROR));
        CHECK(st[1].MPI_ERROR == MPI_SUCCESS && st[1].MPI_TAG == 6, "all: status 1 error %d",
              st[1].MPI_ERROR);

        poison_status(&one);
        rc = MPI_Request_get_status_any(2, reqs, &idx, &flag, &one);
        CHECK(error_class(rc) == MPI_ERR_TRUNCATE, "any: returned class %d, expected "
              "MPI_ERR_TRUNCATE", error_class(rc));
        CHECK(flag && idx == 0 && one.MPI_TAG == 5, "any: flag %d index %d tag %d", flag, idx,
              one.MPI_TAG);

        poison_statuses(st, 2);
        rc = MPI_Request_get_status_some(2, reqs, &outcount, indices, st);
        CHECK(rc == MPI_ERR_IN_STATUS, "some: returned %d, expected MPI_ERR_IN_STATUS", rc);
        CHECK(outcount == 2 && indices[0] == 0 && indices[1] == 1, "some: outcount %d", outcount);
        CHECK(error_class(st[0].MPI_ERROR) == MPI_ERR_TRUNCATE && st[1].MPI_ERROR == MPI_SUCCESS,
              "some: errors %d %d", st[0].MPI_ERROR, st[1].MPI_ERROR);

        /* the destructive form on the same requests: the same answer */
        poison_statuses(ts, 2);
        rc = MPI_Testsome(2, reqs, &toutcount, tindices, ts);
        CHECK(rc == MPI_ERR_IN_STATUS && toutcount == outcount, "testsome: rc %d outcount %d", rc,
              toutcount);
        for (int k = 0; k < 2 && k < toutcount; k++) {
            CHECK(tindices[k] == indices[k], "testsome: index %d is %d, get_status_some said %d",
                  k, tindices[k], indices[k]);
            CHECK(ts[k].MPI_ERROR == st[k].MPI_ERROR && ts[k].MPI_TAG == st[k].MPI_TAG &&
                  ts[k].MPI_SOURCE == st[k].MPI_SOURCE,
                  "testsome: status %d (error %d tag %d) differs from get_status_some's (%d %d)",
                  k, ts[k].MPI_ERROR, ts[k].MPI_TAG, st[k].MPI_ERROR, st[k].MPI_TAG);
        }
        CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL,
              "testsome did not free the requests");
        CHECK(fits == 9, "data of tag 6: %d", fits);
    } else if (rank == 1) {
        int one = 9;
        MPI_Barrier(comm);
        MPI_Send(data, 4, MPI_INT, 0, 5, comm);
        MPI_Send(&one, 1, MPI_INT, 0, 6, comm);
    } else {
        MPI_Barrier(comm);
    }

    MTest_Finalize(errs);
    return MTestReturnValue(errs);
}
