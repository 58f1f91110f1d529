/*
 * Copyright (C) by the MPICH request engine extension authors.
 *     Under MPICH's license: see COPYRIGHT in top-level directory
 */

/* Checks shared by the MPI_Request_get_status_{all,any,some} tests. */
#ifndef GETSTATUS_CHECK_H_INCLUDED
#define GETSTATUS_CHECK_H_INCLUDED

#include <stdio.h>
#include <string.h>
#include "mpi.h"
#include "mpitest.h"

static int errs = 0;

#define CHECK(cond_, ...)                                                       \
    do {                                                                        \
        if (!(cond_)) {                                                         \
            errs++;                                                             \
            fprintf(stderr, "%s:%d: failed: %s: ", __FILE__, __LINE__, #cond_); \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
        }                                                                       \
    } while (0)

#define POISON (-77)

/* A status no MPI call would produce, to see what a call writes. */
static void poison_status(MPI_Status * s)
{
    memset(s, 0x5a, sizeof(*s));
    s->MPI_SOURCE = POISON;
    s->MPI_TAG = POISON;
    s->MPI_ERROR = POISON;
}

static void poison_statuses(MPI_Status * s, int n)
{
    for (int i = 0; i < n; i++)
        poison_status(&s[i]);
}

/* The empty status of a null or inactive request, on a status poisoned beforehand:
 * MPI_ANY_SOURCE, MPI_ANY_TAG, count 0, not cancelled, MPI_ERROR = MPI_SUCCESS (every form
 * writes it, as MPICH does since 4.2). */
static int status_is_empty(const MPI_Status * s)
{
    int count = -1, cancelled = -1;
    MPI_Get_count(s, MPI_BYTE, &count);
    MPI_Test_cancelled(s, &cancelled);
    return s->MPI_SOURCE == MPI_ANY_SOURCE && s->MPI_TAG == MPI_ANY_TAG &&
        s->MPI_ERROR == MPI_SUCCESS && count == 0 && !cancelled;
}

static int status_count(const MPI_Status * s, MPI_Datatype type)
{
    int count = -1;
    MPI_Get_count(s, type, &count);
    return count;
}

static int error_class(int code)
{
    int cls = -1;
    MPI_Error_class(code, &cls);
    return cls;
}

#endif /* GETSTATUS_CHECK_H_INCLUDED */
