/*
 * Copyright (C) by the MPICH request engine extension authors.
 *     See COPYRIGHT in top-level directory
 */

#include "mpiimpl.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_COMM_ASSERT_VERIFY
      category    : COMMUNICATOR
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : |-
        Whether a call that breaks an assertion of its communicator fails
        through the communicator's error handler (builds with error checking):
        a receive or probe with MPI_ANY_SOURCE under mpi_assert_no_any_source
        (MPI_ERR_RANK), with MPI_ANY_TAG under mpi_assert_no_any_tag
        (MPI_ERR_TAG), a receive matched by a shorter message under
        mpi_assert_exact_length (MPI_ERR_COUNT in its status; a longer one is
        MPI_ERR_TRUNCATE as always). Off: the assertions are trusted.

    - name        : MPIR_CVAR_COMM_ASSERT_EXACT_MATCH
      category    : COMMUNICATOR
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : |-
        Whether a communicator created with both mpi_assert_no_any_source
        and mpi_assert_no_any_tag (or duplicated from one) has its receives
        matched by (source, tag) in queues of their own (ch4's active-message
        path) instead of in the process-wide queues. Such a communicator
        keeps both assertions for its life and refuses wildcards even with
        MPIR_CVAR_COMM_ASSERT_VERIFY off. Read when the communicator is
        created.

    - name        : MPIR_CVAR_COMM_ASSERT_DETECT
      category    : COMMUNICATOR
      type        : boolean
      default     : false
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : |-
        Record, per communicator, what the run did that would have broken
        each assertion: receives and probes with MPI_ANY_SOURCE or
        MPI_ANY_TAG, receives matched by a message of another length, and
        receives that took one of several queued messages from one source
        (only message order decided which). Read through the MPI_T
        performance variables comm_assert_* bound to a communicator, and
        summed over the processes of each communicator at MPI_Comm_free for
        the report (MPIR_CVAR_COMM_ASSERT_REPORT). Must be the same on all
        processes.

    - name        : MPIR_CVAR_COMM_ASSERT_REPORT
      category    : COMMUNICATOR
      type        : boolean
      default     : false
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : |-
        Turn on MPIR_CVAR_COMM_ASSERT_DETECT and print at MPI_Finalize, from
        rank 0 of MPI_COMM_WORLD, per communicator that received messages
        (named with MPI_Comm_set_name where the program did): which
        assertions held on every process for this run, and for the others
        how often and where they were broken, with the first offending call.

    - name        : MPIR_CVAR_COMM_ASSERT_REPORT_FILE
      category    : COMMUNICATOR
      type        : string
      default     : ""
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : |-
        Where the report of MPIR_CVAR_COMM_ASSERT_REPORT goes; empty: rank
        0's standard error. A %p in it is replaced by rank 0's process id,
        so one setting serves a suite of programs.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

static const char *const assertion_keys[MPIR_COMM_ASSERTION_COUNT] = {
    "mpi_assert_no_any_source", "mpi_assert_no_any_tag",
    "mpi_assert_exact_length", "mpi_assert_allow_overtaking"
};

static const int assertion_hints[MPIR_COMM_ASSERTION_COUNT] = {
    MPIR_COMM_HINT_NO_ANY_SOURCE, MPIR_COMM_HINT_NO_ANY_TAG,
    MPIR_COMM_HINT_EXACT_LENGTH, MPIR_COMM_HINT_ALLOW_OVERTAKING
};

/* Count one offence; the first one's description is kept. */
static void note(MPIR_Comm * comm, enum MPIR_Comm_assertion which, const char *fmt, ...)
{
    MPIR_Comm_assert_record_t *rec = &comm->assert_record;

    if (MPL_atomic_fetch_add_uint64(&rec->broken[which], 1) == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(rec->first[which], MPIR_COMM_ASSERT_DESC_LEN, fmt, ap);
        va_end(ap);
    }
}

/* A source or tag argument as the report prints it: the wildcard's name or the number. */
static const char *arg_str(int value, int wildcard, const char *wildcard_name, char *buf,
                           size_t len)
{
    if (value == wildcard) {
        return wildcard_name;
    }
    snprintf(buf, len, "%d", value);
    return buf;
}

#define SOURCE_STR(v_, buf_) arg_str(v_, MPI_ANY_SOURCE, "MPI_ANY_SOURCE", buf_, sizeof(buf_))
#define TAG_STR(v_, buf_) arg_str(v_, MPI_ANY_TAG, "MPI_ANY_TAG", buf_, sizeof(buf_))

/* How a message names a communicator: the name the program gave it, else its handle. */
static const char *comm_label(MPIR_Comm * comm, char *buf, size_t len)
{
    if (comm->name[0] != '\0') {
        return comm->name;
    }
    snprintf(buf, len, "comm=0x%x", (unsigned) comm->handle);
    return buf;
}

int MPIR_Comm_assert_wildcard(MPIR_Comm * comm_ptr, const char *call, int source, int tag)
{
    int mpi_errno = MPI_SUCCESS;

    if (MPIR_CVAR_COMM_ASSERT_DETECT) {
        char s[16], t[16];
        if (source == MPI_ANY_SOURCE) {
            note(comm_ptr, MPIR_COMM_ASSERTION_NO_ANY_SOURCE, "%s(source=MPI_ANY_SOURCE, tag=%s)",
                 call, TAG_STR(tag, t));
        }
        if (tag == MPI_ANY_TAG) {
            note(comm_ptr, MPIR_COMM_ASSERTION_NO_ANY_TAG, "%s(source=%s, tag=MPI_ANY_TAG)", call,
                 SOURCE_STR(source, s));
        }
    }
    char label[32];

    /* the device matches such a communicator's receives by (source, tag) and would never
     * match a wildcard: refused whatever the build and MPIR_CVAR_COMM_ASSERT_VERIFY */
    if (!comm_ptr->assert_exact_match) {
#ifndef HAVE_ERROR_CHECKING
        return MPI_SUCCESS;
#else
        if (!MPIR_CVAR_COMM_ASSERT_VERIFY) {
            return MPI_SUCCESS;
        }
#endif
    }
    if (source == MPI_ANY_SOURCE && comm_ptr->hints[MPIR_COMM_HINT_NO_ANY_SOURCE]) {
        mpi_errno = MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                         MPI_ERR_RANK, "**assertnoanysource",
                                         "**assertnoanysource %s %s", call,
                                         comm_label(comm_ptr, label, sizeof(label)));
    } else if (tag == MPI_ANY_TAG && comm_ptr->hints[MPIR_COMM_HINT_NO_ANY_TAG]) {
        mpi_errno = MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                         MPI_ERR_TAG, "**assertnoanytag",
                                         "**assertnoanytag %s %s", call,
                                         comm_label(comm_ptr, label, sizeof(label)));
    }
    return mpi_errno;
}

/* req posted the receive (its recv_expected_bytes is the buffer's size), status_req holds the
 * status: the same request, or the real request of a persistent receive's round. */
void MPIR_Comm_assert_recv_length(MPIR_Request * req, MPIR_Request * status_req)
{
    MPI_Aint expected = req->recv_expected_bytes;
    MPI_Aint received = MPIR_STATUS_GET_COUNT(status_req->status);
    MPIR_Comm *comm = req->comm;

    status_req->recv_expected_bytes = MPIR_RECV_LENGTH_CHECKED;
    if (MPIR_STATUS_GET_CANCEL_BIT(status_req->status)) {
        return;
    }
    if (MPIR_CVAR_COMM_ASSERT_DETECT && comm != NULL) {
        int err = status_req->status.MPI_ERROR;
        bool truncated = (err != MPI_SUCCESS && MPIR_ERR_GET_CLASS(err) == MPI_ERR_TRUNCATE);
        MPL_atomic_fetch_add_uint64(&comm->assert_record.receives, 1);
        if (truncated || (err == MPI_SUCCESS && received != expected)) {
            note(comm, MPIR_COMM_ASSERTION_EXACT_LENGTH,
                 "receive of %lld bytes matched %s%lld bytes (source %d, tag %d)",
                 (long long) expected, truncated ? "a message longer than " : "a message of ",
                 (long long) (truncated ? expected : received), status_req->status.MPI_SOURCE,
                 status_req->status.MPI_TAG);
        }
    }
    if (status_req->status.MPI_ERROR != MPI_SUCCESS || received == expected) {
        /* failed (a longer message is MPI_ERR_TRUNCATE already) or exact */
        return;
    }
#ifdef HAVE_ERROR_CHECKING
    if (MPIR_CVAR_COMM_ASSERT_VERIFY && comm != NULL &&
        comm->hints[MPIR_COMM_HINT_EXACT_LENGTH]) {
        char label[32];
        status_req->status.MPI_ERROR =
            MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                 MPI_ERR_COUNT, "**assertexactlen",
                                 "**assertexactlen %L %d %d %L %s", (long long) received,
                                 status_req->status.MPI_SOURCE, status_req->status.MPI_TAG,
                                 (long long) expected, comm_label(comm, label, sizeof(label)));
    }
#endif
}

void MPIR_Comm_assert_order_dependent(MPIR_Comm * comm, int source, int tag, int from,
                                      int queued)
{
    char s[16], t[16];
    note(comm, MPIR_COMM_ASSERTION_ALLOW_OVERTAKING,
         "receive (source=%s, tag=%s) with %d messages from rank %d queued that it matches",
         SOURCE_STR(source, s), TAG_STR(tag, t), queued, from);
}

/* -- MPI_T performance variables bound to a communicator ---------------------------------- */

static MPIR_Comm *pvar_comm(void *obj_handle)
{
    MPIR_Comm *comm = NULL;
    if (obj_handle != NULL) {
        MPIR_Comm_get_ptr(*(MPI_Comm *) obj_handle, comm);
    }
    return comm;
}

static void pvar_receives(void *addr, void *obj_handle, int count, void *buf)
{
    MPIR_Comm *comm = pvar_comm(obj_handle);
    *(unsigned long long *) buf =
        comm ? MPL_atomic_relaxed_load_uint64(&comm->assert_record.receives) : 0;
}

#define ASSERT_PVAR_GETTER(name_, which_)                                               \
    static void name_(void *addr, void *obj_handle, int count, void *buf)               \
    {                                                                                   \
        MPIR_Comm *comm = pvar_comm(obj_handle);                                        \
        *(unsigned long long *) buf =                                                   \
            comm ? MPL_atomic_relaxed_load_uint64(&comm->assert_record.broken[which_]) : 0; \
    }

ASSERT_PVAR_GETTER(pvar_any_source, MPIR_COMM_ASSERTION_NO_ANY_SOURCE)
ASSERT_PVAR_GETTER(pvar_any_tag, MPIR_COMM_ASSERTION_NO_ANY_TAG)
ASSERT_PVAR_GETTER(pvar_length, MPIR_COMM_ASSERTION_EXACT_LENGTH)
ASSERT_PVAR_GETTER(pvar_order, MPIR_COMM_ASSERTION_ALLOW_OVERTAKING)

static void register_pvar(const char *name, MPIR_T_pvar_get_value_cb * get_value, const char *desc)
{
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, name, NULL, 1,
                              MPI_T_ENUM_NULL, MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_MPI_COMM,
                              MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS,
                              get_value, NULL, "COMMUNICATOR", desc);
}

/* MPI_Init (MPIR_Comm_hint_init) */
void MPIR_Comm_assert_init(void)
{
    static int registered = FALSE;

    if (MPIR_CVAR_COMM_ASSERT_REPORT) {
        MPIR_CVAR_COMM_ASSERT_DETECT = TRUE;
    }
    if (registered) {
        return;
    }
    registered = TRUE;
    register_pvar("comm_assert_receives", pvar_receives,
                  "receives on the communicator completed while MPIR_CVAR_COMM_ASSERT_DETECT "
                  "was on (the run the comm_assert_* counts describe)");
    register_pvar("comm_assert_any_source", pvar_any_source,
                  "receives and probes on the communicator with MPI_ANY_SOURCE "
                  "(mpi_assert_no_any_source would not hold)");
    register_pvar("comm_assert_any_tag", pvar_any_tag,
                  "receives and probes on the communicator with MPI_ANY_TAG "
                  "(mpi_assert_no_any_tag would not hold)");
    register_pvar("comm_assert_length_mismatches", pvar_length,
                  "receives on the communicator matched by a message of another length "
                  "(mpi_assert_exact_length would not hold)");
    register_pvar("comm_assert_order_dependent", pvar_order,
                  "receives on the communicator that took one of several queued messages from "
                  "one source they could match (mpi_assert_allow_overtaking would not hold)");
}

/* -- the report ----------------------------------------------------------------------------- */

/* One process's record as it travels to rank 0 of its communicator. */
typedef struct {
    uint64_t receives;
    uint64_t broken[MPIR_COMM_ASSERTION_COUNT];
    char first[MPIR_COMM_ASSERTION_COUNT][MPIR_COMM_ASSERT_DESC_LEN];
} record_copy_t;

/* Report text of the communicators summarized on this process (it was their rank 0). */
static char *report_text;
static size_t report_len;

static void report_append(const char *fmt, ...)
{
    va_list ap;
    char line[1024];
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    if (n >= (int) sizeof(line)) {
        n = sizeof(line) - 1;
    }
    char *grown = MPL_realloc(report_text, report_len + n + 1, MPL_MEM_OTHER);
    if (grown == NULL) {
        return;
    }
    report_text = grown;
    memcpy(report_text + report_len, line, n + 1);
    report_len += n;
}

/* Rank 0 of comm: the lines for one communicator from all its processes' records. */
static void report_comm(MPIR_Comm * comm, const record_copy_t * all, int size, const char *how)
{
    uint64_t receives = 0, broken[MPIR_COMM_ASSERTION_COUNT] = { 0 };
    int procs[MPIR_COMM_ASSERTION_COUNT] = { 0 }, first_rank[MPIR_COMM_ASSERTION_COUNT];
    char label[64];

    for (int a = 0; a < MPIR_COMM_ASSERTION_COUNT; a++) {
        first_rank[a] = -1;
    }
    for (int r = 0; r < size; r++) {
        receives += all[r].receives;
        for (int a = 0; a < MPIR_COMM_ASSERTION_COUNT; a++) {
            if (all[r].broken[a] > 0) {
                broken[a] += all[r].broken[a];
                procs[a]++;
                if (first_rank[a] < 0) {
                    first_rank[a] = r;
                }
            }
        }
    }
    bool anything = receives > 0;
    for (int a = 0; a < MPIR_COMM_ASSERTION_COUNT; a++) {
        anything = anything || broken[a] > 0;
    }
    if (!anything) {
        return; /* no receive, no probe: nothing to say */
    }

    if (comm->name[0] != '\0') {
        snprintf(label, sizeof(label), "\"%s\"", comm->name);
    } else {
        snprintf(label, sizeof(label), "0x%x", (unsigned) comm->handle);
    }
    report_append("communicator %s (%d processes, %s): %llu receives\n", label, size, how,
                  (unsigned long long) receives);
    report_append("  these assertions held for this run:");
    int held = 0;
    for (int a = 0; a < MPIR_COMM_ASSERTION_COUNT; a++) {
        if (broken[a] == 0) {
            report_append("%s %s%s", held++ ? "," : "", assertion_keys[a],
                          comm->hints[assertion_hints[a]] ? " (asserted)" : "");
        }
    }
    report_append("%s\n", held ? "" : " none");
    for (int a = 0; a < MPIR_COMM_ASSERTION_COUNT; a++) {
        if (broken[a] > 0) {
            /* given and still broken: calls refused by verification, or (verification off)
             * a program that does not keep its promise */
            report_append("  %s: broken %llu times on %d of %d processes%s; first on rank %d: %s\n",
                          assertion_keys[a], (unsigned long long) broken[a], procs[a], size,
                          comm->hints[assertion_hints[a]] ? " although asserted" : "",
                          first_rank[a], all[first_rank[a]].first[a]);
        }
    }
}

static int summarize(MPIR_Comm * comm, const char *how)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    record_copy_t mine, *all = NULL;
    int size = comm->local_size;

    if (comm->comm_kind != MPIR_COMM_KIND__INTRACOMM) {
        return MPI_SUCCESS;     /* see README: intercommunicators are not summarized */
    }
    mine.receives = MPL_atomic_relaxed_load_uint64(&comm->assert_record.receives);
    for (int a = 0; a < MPIR_COMM_ASSERTION_COUNT; a++) {
        mine.broken[a] = MPL_atomic_relaxed_load_uint64(&comm->assert_record.broken[a]);
        memcpy(mine.first[a], comm->assert_record.first[a], MPIR_COMM_ASSERT_DESC_LEN);
    }
    if (comm->rank == 0) {
        all = MPL_malloc(sizeof(record_copy_t) * size, MPL_MEM_OTHER);
        MPIR_ERR_CHKANDJUMP(all == NULL, mpi_errno, MPI_ERR_OTHER, "**nomem");
    }
    mpi_errno = MPIR_Gather(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine), MPI_BYTE, 0, comm,
                            &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    if (comm->rank == 0) {
        report_comm(comm, all, size, how);
    }

  fn_exit:
    MPL_free(all);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIR_Comm_assert_summarize(MPIR_Comm * comm)
{
    if (!MPIR_CVAR_COMM_ASSERT_DETECT) {
        return MPI_SUCCESS;
    }
    return summarize(comm, "freed by MPI_Comm_free");
}

/* MPIR_CVAR_COMM_ASSERT_REPORT_FILE with each %p replaced by the process id */
static void report_path(char *path, size_t len)
{
    const char *in = MPIR_CVAR_COMM_ASSERT_REPORT_FILE;
    size_t n = 0;

    for (; *in != '\0' && n + 1 < len; in++) {
        if (in[0] == '%' && in[1] == 'p') {
            n += snprintf(path + n, len - n, "%d", (int) getpid());
            if (n >= len) {
                n = len - 1;
            }
            in++;
        } else {
            path[n++] = *in;
        }
    }
    path[n] = '\0';
}

/* MPI_Finalize: MPI_COMM_WORLD's and MPI_COMM_SELF's records, then every process's text to
 * rank 0 of MPI_COMM_WORLD, which writes the report. */
int MPIR_Comm_assert_finalize(void)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    MPIR_Comm *world = MPIR_Process.comm_world;
    int *ilens = NULL;
    MPI_Aint *lens = NULL, *displs = NULL;
    char *text = NULL;
    int len;

    if (!MPIR_CVAR_COMM_ASSERT_REPORT || world == NULL) {
        goto fn_exit;
    }
    mpi_errno = summarize(world, "at MPI_Finalize");
    MPIR_ERR_CHECK(mpi_errno);
    if (MPIR_Process.comm_self) {
        mpi_errno = summarize(MPIR_Process.comm_self, "at MPI_Finalize");
        MPIR_ERR_CHECK(mpi_errno);
    }

    len = (int) report_len;
    if (world->rank == 0) {
        ilens = MPL_malloc(sizeof(int) * world->local_size, MPL_MEM_OTHER);
        lens = MPL_malloc(sizeof(MPI_Aint) * world->local_size * 2, MPL_MEM_OTHER);
        MPIR_ERR_CHKANDJUMP(ilens == NULL || lens == NULL, mpi_errno, MPI_ERR_OTHER, "**nomem");
        displs = lens + world->local_size;
    }
    mpi_errno = MPIR_Gather(&len, 1, MPI_INT, ilens, 1, MPI_INT, 0, world, &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    MPI_Aint total = 0;
    if (world->rank == 0) {
        for (int r = 0; r < world->local_size; r++) {
            lens[r] = ilens[r];
            displs[r] = total;
            total += ilens[r];
        }
        text = MPL_malloc(total + 1, MPL_MEM_OTHER);
        MPIR_ERR_CHKANDJUMP(text == NULL, mpi_errno, MPI_ERR_OTHER, "**nomem");
    }
    mpi_errno = MPIR_Gatherv(report_text ? report_text : "", len, MPI_CHAR, text, lens, displs,
                             MPI_CHAR, 0, world, &errflag);
    MPIR_ERR_CHECK(mpi_errno);

    if (world->rank == 0) {
        FILE *out = stderr;
        text[total] = '\0';
        if (MPIR_CVAR_COMM_ASSERT_REPORT_FILE && MPIR_CVAR_COMM_ASSERT_REPORT_FILE[0] != '\0') {
            char path[4096];
            report_path(path, sizeof(path));
            out = fopen(path, "w");
            if (out == NULL) {
                fprintf(stderr, "MPICH: cannot write the communicator assertions report to "
                        "%s: %s\n", path, strerror(errno));
                out = stderr;
            }
        }
        fprintf(out, "== MPI communicator assertions: what this run did "
                "(MPIR_CVAR_COMM_ASSERT_REPORT) ==\n%s", text);
        if (total == 0) {
            fprintf(out, "no communicator received a message\n");
        }
        fprintf(out, "== end of report ==\n");
        if (out != stderr) {
            fclose(out);
        } else {
            fflush(out);
        }
    }

  fn_exit:
    MPL_free(ilens);
    MPL_free(lens);
    MPL_free(text);
    MPL_free(report_text);
    report_text = NULL;
    report_len = 0;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
