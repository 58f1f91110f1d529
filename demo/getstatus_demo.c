/*
 * Copyright (C) by the MPICH request engine extension authors.
 *     See COPYRIGHT in top-level directory
 */

/* The three non-destructive completion checks at work: rank 0 receives from every other rank
 * in staggered waves, watches them with MPI_Request_get_status_any/_some/_all without
 * completing anything, then lets MPI_Testsome/MPI_Waitall complete what was reported and
 * checks that they agree. Prints what it observed; exits non-zero if anything disagrees. */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef MPIX_HAVE_REQUEST_GET_STATUS_MULTIPLE
#error "this MPI has no MPI_Request_get_status_all/_any/_some"
#endif

#define PER_PEER 2
#define LEN 8

static int failures = 0;

static void expect(int ok, const char *what)
{
    if (!ok) {
        failures++;
        printf("  MISMATCH: %s\n", what);
    }
}

static void print_indices(const char *label, int n, const int idx[])
{
    printf("  %s [", label);
    for (int k = 0; k < n; k++)
        printf(k ? " %d" : "%d", idx[k]);
    printf("]\n");
}

static void receiver(int size)
{
    int n = (size - 1) * PER_PEER;
    int *bufs = calloc((size_t) n * LEN, sizeof(int));
    int *idx = malloc(n * sizeof(int)), *tidx = malloc(n * sizeof(int));
    MPI_Request *reqs = malloc(n * sizeof(MPI_Request)), *saved = malloc(n * sizeof(MPI_Request));
    MPI_Status *st = malloc(n * sizeof(MPI_Status)), one;
    int flag, index, outcount, toutcount, completed = 0;

    /* request i: from rank 1 + i / PER_PEER, wave i % PER_PEER */
    for (int i = 0; i < n; i++)
        MPI_Irecv(&bufs[i * LEN], LEN, MPI_INT, 1 + i / PER_PEER, i % PER_PEER, MPI_COMM_WORLD,
                  &reqs[i]);
    printf("rank 0 posted %d receives from %d ranks\n", n, size - 1);

    MPI_Request_get_status_all(n, reqs, &flag, MPI_STATUSES_IGNORE);
    printf("before any send: get_status_all flag=%d\n", flag);
    expect(!flag, "get_status_all reported completion before anything was sent");

    for (int wave = 0; wave < PER_PEER; wave++) {
        MPI_Barrier(MPI_COMM_WORLD);    /* the senders send wave `wave` */
        printf("wave %d sent\n", wave);
        int expected = (size - 1) * (wave + 1) - completed;
        do {
            MPI_Request_get_status_some(n, reqs, &outcount, idx, st);
        } while (outcount != MPI_UNDEFINED && outcount < expected);
        memcpy(saved, reqs, n * sizeof(MPI_Request));
        MPI_Request_get_status_any(n, reqs, &index, &flag, &one);
        printf("  get_status_any: flag=%d index=%d (source %d, tag %d)\n", flag, index,
               one.MPI_SOURCE, one.MPI_TAG);
        MPI_Request_get_status_some(n, reqs, &outcount, idx, st);
        print_indices("get_status_some: complete, still active:", outcount, idx);
        for (int k = 0; k < outcount; k++) {
            int count;
            MPI_Get_count(&st[k], MPI_INT, &count);
            expect(st[k].MPI_SOURCE == 1 + idx[k] / PER_PEER && st[k].MPI_TAG == wave &&
                   count == LEN, "a status from get_status_some");
        }
        expect(memcmp(saved, reqs, n * sizeof(MPI_Request)) == 0,
               "get_status_* changed the request array");
        expect(outcount == expected, "get_status_some did not report the whole wave");
        expect(flag && index == idx[0],
               "get_status_any did not report the first of the set in scan order");

        MPI_Testsome(n, reqs, &toutcount, tidx, MPI_STATUSES_IGNORE);
        print_indices("MPI_Testsome then completed:      ", toutcount, tidx);
        expect(toutcount == outcount && memcmp(tidx, idx, outcount * sizeof(int)) == 0,
               "MPI_Testsome completed a different set");
        completed += toutcount;
    }

    MPI_Request_get_status_all(n, reqs, &flag, st);
    printf("after all waves: get_status_all flag=%d (completed requests are MPI_REQUEST_NULL now:"
           " empty statuses)\n", flag);
    expect(flag, "get_status_all flag false when every request is null");
    MPI_Request_get_status_any(n, reqs, &index, &flag, MPI_STATUS_IGNORE);
    printf("  get_status_any on an all-null array: flag=%d index=%s\n", flag,
           index == MPI_UNDEFINED ? "MPI_UNDEFINED" : "defined");
    expect(flag && index == MPI_UNDEFINED, "get_status_any on an all-null array");
    MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);

    for (int i = 0; i < n; i++)
        for (int k = 0; k < LEN; k++)
            expect(bufs[i * LEN + k] == 1000 * (1 + i / PER_PEER) + 100 * (i % PER_PEER) + k,
                   "received data");
    printf("received data verified: %d messages of %d ints\n", n, LEN);
    free(bufs); free(idx); free(tidx); free(reqs); free(saved); free(st);
}

static void sender(int rank)
{
    int buf[LEN];
    for (int wave = 0; wave < PER_PEER; wave++) {
        MPI_Barrier(MPI_COMM_WORLD);
        for (int k = 0; k < LEN; k++)
            buf[k] = 1000 * rank + 100 * wave + k;
        MPI_Send(buf, LEN, MPI_INT, 0, wave, MPI_COMM_WORLD);
    }
}

int main(int argc, char *argv[])
{
    int rank, size, len;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        fprintf(stderr, "run with at least 2 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == 0) {
        MPI_Get_library_version(version, &len);
        printf("%.*s", (int) strcspn(version, "\n"), version);
        printf(" with MPI_Request_get_status_all/_any/_some, %d processes\n", size);
        receiver(size);
    } else {
        sender(rank);
    }
    MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf(failures ? "demo: %d mismatches\n" : "demo: all observations as expected\n",
               failures);
    MPI_Finalize();
    return failures ? 1 : 0;
}
