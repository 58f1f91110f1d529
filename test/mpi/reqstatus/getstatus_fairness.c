/*
 * Copyright (C) by the MPICH request engine extension authors.
 *     Under MPICH's license: see COPYRIGHT in top-level directory
 */

/* The fairness cursor of the any/some forms on 8 always-complete slots (generalized requests
 * re-posted in place): each call reports the next slot in turn, whichever form serves it; with
 * MPIR_CVAR_REQUEST_SCAN_ORDER=lowest set through MPI_T, slot 0 wins, as in stock. One process. */
#include <stdlib.h>
#include "getstatus_check.h"

#define SLOTS 8
#define CALLS (6 * SLOTS)

static int query_fn(void *extra, MPI_Status * status)
{
    MPI_Status_set_elements(status, MPI_BYTE, 0);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = *(int *) extra;
    return MPI_SUCCESS;
}

static int free_fn(void *extra)
{
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    return MPI_SUCCESS;
}

static int slot_tags[SLOTS];

static void repost(MPI_Request * reqs, int i)
{
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &slot_tags[i], &reqs[i]);
    MPI_Grequest_complete(reqs[i]);
}

/* Serves one request in the given way; returns the index reported and re-posts it. */
static int serve(MPI_Request * reqs, int way)
{
    int idx = -1, flag = 0, done = 0;
    MPI_Status st;

    poison_status(&st);
    if (way == 0) {
        MPI_Testany(SLOTS, reqs, &idx, &flag, &st);
    } else if (way == 1) {
        MPI_Waitany(SLOTS, reqs, &idx, &st);
        flag = 1;
    } else {
        MPI_Request_get_status_any(SLOTS, reqs, &idx, &flag, &st);
        if (flag && idx >= 0) {
            MPI_Test(&reqs[idx], &done, MPI_STATUS_IGNORE);
            CHECK(done, "MPI_Test did not complete the reported request %d", idx);
        }
    }
    CHECK(flag && idx >= 0 && idx < SLOTS && st.MPI_TAG == idx,
          "way %d: flag %d index %d tag %d", way, flag, idx, st.MPI_TAG);
    if (flag && idx >= 0 && idx < SLOTS)
        repost(reqs, idx);
    return idx;
}

static void drain(MPI_Request * reqs)
{
    int idx, flag;
    MPI_Waitall(SLOTS, reqs, MPI_STATUSES_IGNORE);
    /* seen all null: the array's cursor is forgotten */
    MPI_Testany(SLOTS, reqs, &idx, &flag, MPI_STATUS_IGNORE);
    CHECK(flag && idx == MPI_UNDEFINED, "all null: flag %d index %d", flag, idx);
}

int main(int argc, char *argv[])
{
    MPI_Request reqs[SLOTS];
    int provided, cvar_index, count, value;
    MPI_T_cvar_handle handle;

    MTest_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    for (int i = 0; i < SLOTS; i++)
        slot_tags[i] = i;

    /* rotation, with the three ways of serving mixed */
    for (int i = 0; i < SLOTS; i++)
        repost(reqs, i);
    for (int call = 0; call < CALLS; call++) {
        int idx = serve(reqs, call % 3);
        CHECK(idx == call % SLOTS, "rotate: call %d reported %d", call, idx);
    }

    /* MPI_Testsome reports all eight, in scan order from the cursor */
    {
        int outcount, indices[SLOTS];
        MPI_Status st[SLOTS];
        serve(reqs, 0);
        serve(reqs, 0);
        serve(reqs, 0);         /* the cursor stands at 3 */
        MPI_Testsome(SLOTS, reqs, &outcount, indices, st);
        CHECK(outcount == SLOTS, "testsome: outcount %d", outcount);
        for (int j = 0; j < outcount && j < SLOTS; j++) {
            CHECK(indices[j] == (3 + j) % SLOTS && st[j].MPI_TAG == indices[j],
                  "testsome: position %d index %d tag %d", j, indices[j], st[j].MPI_TAG);
            repost(reqs, indices[j]);
        }
        /* every request was served and re-posted: nothing tells the array from a fresh one,
         * which starts at its lowest index */
        CHECK(serve(reqs, 2) == 0, "after testsome");
    }
    drain(reqs);

    /* lowest first, as stock MPICH, selected through MPI_T */
    CHECK(MPI_T_cvar_get_index("MPIR_CVAR_REQUEST_SCAN_ORDER", &cvar_index) == MPI_SUCCESS,
          "no MPIR_CVAR_REQUEST_SCAN_ORDER");
    MPI_T_cvar_handle_alloc(cvar_index, NULL, &handle, &count);
    MPI_T_cvar_read(handle, &value);
    CHECK(value == 0, "default scan order %d, not 0 (rotate)", value);
    value = 1;
    MPI_T_cvar_write(handle, &value);
    for (int i = 0; i < SLOTS; i++)
        repost(reqs, i);
    for (int call = 0; call < CALLS; call++) {
        int idx = serve(reqs, call % 3);
        CHECK(idx == 0, "lowest: call %d reported %d", call, idx);
    }
    drain(reqs);
    value = 0;
    MPI_T_cvar_write(handle, &value);
    MPI_T_cvar_handle_free(&handle);
    MPI_T_finalize();

    MTest_Finalize(errs);
    return MTestReturnValue(errs);
}
