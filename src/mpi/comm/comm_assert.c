/*
 * Copyright (C) by the MPICH request engine extension authors.
 *     Under MPICH's license: see COPYRIGHT in top-level directory
 */

#include "mpiimpl.h"
#include <fcntl.h>

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
      description : >-
        Whether a call that breaks an assertion of its communicator (a wildcard
        under mpi_assert_no_any_source or _no_any_tag, a shorter message under
        mpi_assert_exact_length) fails through the communicator's error handler.

    - name        : MPIR_CVAR_COMM_ASSERT_EXACT_MATCH
      category    : COMMUNICATOR
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Whether the device matches by (source, tag) on a communicator asserting
        mpi_assert_no_any_source and _no_any_tag; wildcards are then refused even
        with MPIR_CVAR_COMM_ASSERT_VERIFY off. Read when the assertions are given.

    - name        : MPIR_CVAR_COMM_ASSERT_DETECT
      category    : COMMUNICATOR
      type        : boolean
      default     : false
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Record, per communicator, what the run did that would have broken each
        assertion, read through the comm_assert_* performance variables. Must be
        the same on all processes.

    - name        : MPIR_CVAR_COMM_ASSERT_REPORT
      category    : COMMUNICATOR
      type        : boolean
      default     : false
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Turn on MPIR_CVAR_COMM_ASSERT_DETECT and print at MPI_Finalize, from rank 0,
        which assertions held on every process of each communicator, and where the
        others were broken.

    - name        : MPIR_CVAR_COMM_ASSERT_REPORT_FILE
      category    : COMMUNICATOR
      type        : string
      default     : ""
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : |-
        Where the report of MPIR_CVAR_COMM_ASSERT_REPORT goes; empty: rank
        0's standard error. A %p in it is replaced by rank 0's process id, and a
        name in use gets a suffix (.1, ...), so one setting serves a suite of programs.

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

static int verify_wildcard(MPIR_Comm * comm_ptr, const char *call, int source, int tag);

int MPIR_Comm_assert_wildcard(MPIR_Comm * comm_ptr, const char *call, int source, int tag)
{
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
    return verify_wildcard(comm_ptr, call, source, tag);
}

/* Verification of a wildcard receive or probe (or the start of a persistent receive made
 * with one) */
static int verify_wildcard(MPIR_Comm * comm_ptr, const char *call, int source, int tag)
{
    int mpi_errno = MPI_SUCCESS;
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
        MPIR_ERR_SETANDJUMP2(mpi_errno, MPI_ERR_RANK, "**assertnoanysource",
                             "**assertnoanysource %s %s", call,
                             comm_label(comm_ptr, label, sizeof(label)));
    }
    if (tag == MPI_ANY_TAG && comm_ptr->hints[MPIR_COMM_HINT_NO_ANY_TAG]) {
        MPIR_ERR_SETANDJUMP2(mpi_errno, MPI_ERR_TAG, "**assertnoanytag",
                             "**assertnoanytag %s %s", call,
                             comm_label(comm_ptr, label, sizeof(label)));
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIR_Comm_assert_start(int count, MPIR_Request * requests[], const char *call,
                           MPIR_Comm ** comm_ptr)
{
    for (int i = 0; i < count; i++) {
        MPIR_Request *req = requests[i];
        if (req->kind != MPIR_REQUEST_KIND__PREQUEST_RECV || req->comm == NULL) {
            continue;
        }
        int source = req->u.persist.recv_source, tag = req->u.persist.recv_tag;
        if (source == MPI_ANY_SOURCE || tag == MPI_ANY_TAG) {
            int mpi_errno = verify_wildcard(req->comm, call, source, tag);
            if (mpi_errno != MPI_SUCCESS) {
                *comm_ptr = req->comm;
                return mpi_errno;
            }
        }
    }
    return MPI_SUCCESS;
}

/* req posted the receive (its recv_expected_bytes is the buffer's size), status_req holds the
 * status: the same request, or the real request of a persistent receive's round. */
void MPIR_Comm_assert_recv_length(MPIR_Request * req, MPIR_Request * status_req)
{
    MPI_Aint expected = req->recv_expected_bytes;
    MPI_Aint received = MPIR_STATUS_GET_COUNT(status_req->status);
    MPIR_Comm *comm = req->comm;

    status_req->recv_length_state = MPIR_RECV_LENGTH_CHECKED;
    if (MPIR_STATUS_GET_CANCEL_BIT(status_req->status)) {
        return;
    }
    if (MPIR_CVAR_COMM_ASSERT_DETECT && comm != NULL) {
        int err = status_req->status.MPI_ERROR;
        bool truncated = (err != MPI_SUCCESS && MPIR_ERR_GET_CLASS(err) == MPI_ERR_TRUNCATE);
        MPL_atomic_fetch_add_uint64(&comm->assert_record.receives, 1);
        if (status_req->match_unseen) {
            /* the network library matched it: its order is not seen */
            MPL_atomic_fetch_add_uint64(&comm->assert_record.order_unseen, 1);
        }
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

static void pvar_order_unseen(void *addr, void *obj_handle, int count, void *buf)
{
    MPIR_Comm *comm = pvar_comm(obj_handle);
    *(unsigned long long *) buf =
        comm ? MPL_atomic_relaxed_load_uint64(&comm->assert_record.order_unseen) : 0;
}

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
    name2index_hash_t *found;

    if (MPIR_CVAR_COMM_ASSERT_REPORT) {
        MPIR_CVAR_COMM_ASSERT_DETECT = TRUE;
    }
    /* again when MPI_Finalize freed the MPI_T tables (MPI_Session_init after it) */
    HASH_FIND_STR(pvar_hashs[MPI_T_PVAR_CLASS_COUNTER - MPIR_T_PVAR_CLASS_FIRST],
                  "comm_assert_receives", found);
    if (found) {
        return;
    }
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
    register_pvar("comm_assert_order_unseen", pvar_order_unseen,
                  "receives on the communicator matched inside the network library (ch4:ucx, "
                  "ch4:ofi between nodes), where the order of queued messages is not seen: "
                  "comm_assert_order_dependent does not count them");
}

/* -- the report ----------------------------------------------------------------------------- */

/* What one communicator met on this process, for the report MPI_Finalize gathers to rank 0:
 * known by context id, members and name, and by generation when unnamed, so communicators
 * reusing a context id are not summed. */
typedef struct {
    uint32_t context_id;
    uint32_t members;           /* hash of the members' lpids in rank order */
    uint32_t handle;
    uint32_t generation;        /* unnamed: 1 + earlier ones with this context id and members */
    int32_t size, rank;         /* the communicator's size, this process's rank in it */
    int32_t world_rank;         /* this process's rank in MPI_COMM_WORLD */
    int32_t instances;          /* freed here this many times (MPI_Finalize: 1) */
    int32_t at_finalize;        /* MPI_COMM_WORLD, MPI_COMM_SELF */
    int32_t asserted[MPIR_COMM_ASSERTION_COUNT];
    uint64_t receives;
    uint64_t order_unseen;      /* of them matched where message order is not seen */
    uint64_t broken[MPIR_COMM_ASSERTION_COUNT];
    char name[MPI_MAX_OBJECT_NAME];
    char first[MPIR_COMM_ASSERTION_COUNT][MPIR_COMM_ASSERT_DESC_LEN];
} record_t;

static record_t *records;
static int n_records, records_cap;

/* the generation of the entry that sums a process's quiet unnamed communicators */
#define QUIET_GENERATION UINT32_MAX

/* The generations of unnamed communicators freed on this process, per context id and members */
typedef struct {
    uint32_t context_id, members, freed;
} generation_t;
static generation_t *generations;
static int n_generations, generations_cap;

/* The generation of an unnamed communicator being freed (0: no memory to count it) */
static uint32_t next_generation(uint32_t context_id, uint32_t members)
{
    for (int i = 0; i < n_generations; i++) {
        if (generations[i].context_id == context_id && generations[i].members == members) {
            return ++generations[i].freed;
        }
    }
    if (n_generations == generations_cap) {
        int cap = generations_cap ? 2 * generations_cap : 16;
        generation_t *grown = MPL_realloc(generations, sizeof(generation_t) * cap, MPL_MEM_OTHER);
        if (grown == NULL) {
            return 0;
        }
        generations = grown;
        generations_cap = cap;
    }
    generations[n_generations].context_id = context_id;
    generations[n_generations].members = members;
    generations[n_generations].freed = 1;
    return generations[n_generations++].freed;
}

static bool same_comm(const record_t * a, const record_t * b)
{
    return a->context_id == b->context_id && a->members == b->members &&
        a->generation == b->generation && a->at_finalize == b->at_finalize &&
        strcmp(a->name, b->name) == 0;
}

static uint32_t members_hash(MPIR_Comm * comm)
{
    uint32_t h = 2166136261u;
    for (int r = 0; r < comm->local_size; r++) {
        uint64_t lpid = 0;
        MPID_Comm_get_lpid(comm, r, &lpid, FALSE);
        for (int b = 0; b < 8; b++) {
            h = (h ^ (uint32_t) ((lpid >> (8 * b)) & 0xff)) * 16777619u;
        }
    }
    return h;
}

/* Adds comm's record to this process's entry for that communicator. */
static int keep_record(MPIR_Comm * comm, int at_finalize)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Comm_assert_record_t *live = &comm->assert_record;
    uint64_t receives = MPL_atomic_relaxed_load_uint64(&live->receives);
    uint64_t order_unseen = MPL_atomic_relaxed_load_uint64(&live->order_unseen);
    uint64_t broken[MPIR_COMM_ASSERTION_COUNT];

    for (int a = 0; a < MPIR_COMM_ASSERTION_COUNT; a++) {
        broken[a] = MPL_atomic_relaxed_load_uint64(&live->broken[a]);
    }
    if (comm->comm_kind != MPIR_COMM_KIND__INTRACOMM) {
        /* intercommunicators are not summarized */
        return MPI_SUCCESS;
    }

    record_t key;
    key.context_id = comm->context_id;
    key.members = members_hash(comm);
    key.at_finalize = at_finalize;
    MPL_strncpy(key.name, comm->name, MPI_MAX_OBJECT_NAME);
    /* counted for every communicator freed, named or not: a name is local (MPI_Comm_set_name), so
     * a communicator named on some processes only must not shift the others' count */
    key.generation = at_finalize ? 0 : next_generation(key.context_id, key.members);
    if (key.name[0] != '\0') {
        /* instances of a named communicator are summed by name */
        key.generation = 0;
    }

    bool quiet = receives == 0;
    for (int a = 0; a < MPIR_COMM_ASSERTION_COUNT; a++) {
        quiet = quiet && broken[a] == 0;
    }
    if (key.generation > 0 && quiet) {
        /* unnamed, nothing received, nothing broken: counted in one entry per members (a program
         * may create and free thousands, as MPICH's comm/ctxalloc does) */
        key.context_id = 0;
        key.generation = QUIET_GENERATION;
    }

    record_t *rec = NULL;
    /* an unnamed communicator's generation is new: nothing to add it to */
    for (int i = 0; i < n_records && rec == NULL && (key.generation == 0 ||
                                                     key.generation == QUIET_GENERATION); i++) {
        if (same_comm(&records[i], &key)) {
            rec = &records[i];
        }
    }
    if (rec == NULL) {
        if (n_records == records_cap) {
            int cap = records_cap ? 2 * records_cap : 16;
            record_t *grown = MPL_realloc(records, sizeof(record_t) * cap, MPL_MEM_OTHER);
            MPIR_ERR_CHKANDJUMP(grown == NULL, mpi_errno, MPI_ERR_OTHER, "**nomem");
            records = grown;
            records_cap = cap;
        }
        rec = &records[n_records++];
        memset(rec, 0, sizeof(*rec));
        rec->context_id = key.context_id;
        rec->members = key.members;
        rec->at_finalize = key.at_finalize;
        rec->generation = key.generation;
        memcpy(rec->name, key.name, MPI_MAX_OBJECT_NAME);
        rec->handle = (uint32_t) comm->handle;
        rec->size = comm->local_size;
        rec->rank = comm->rank;
        rec->world_rank = MPIR_Process.rank;
    }
    rec->instances++;
    rec->receives += receives;
    rec->order_unseen += order_unseen;
    for (int a = 0; a < MPIR_COMM_ASSERTION_COUNT; a++) {
        /* an entry of several quiet communicators does not say which asserted what */
        rec->asserted[a] = key.generation != QUIET_GENERATION &&
            (rec->asserted[a] || comm->hints[assertion_hints[a]]);
        if (broken[a] > 0 && rec->broken[a] == 0) {
            memcpy(rec->first[a], live->first[a], MPIR_COMM_ASSERT_DESC_LEN);
        }
        rec->broken[a] += broken[a];
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* MPI_Comm_free: local, no communication */
int MPIR_Comm_assert_summarize(MPIR_Comm * comm)
{
    if (!MPIR_CVAR_COMM_ASSERT_DETECT) {
        return MPI_SUCCESS;
    }
    return keep_record(comm, 0);
}

/* The report text, appended to as rank 0 of MPI_COMM_WORLD writes it. */
static char *report_text;
static size_t report_len, report_cap;

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
    if (report_len + n + 1 > report_cap) {
        size_t cap = MPL_MAX(2 * report_cap, report_len + n + 1);
        char *grown = MPL_realloc(report_text, cap, MPL_MEM_OTHER);
        if (grown == NULL) {
            return;
        }
        report_text = grown;
        report_cap = cap;
    }
    memcpy(report_text + report_len, line, n + 1);
    report_len += n;
}

/* Rank 0 of MPI_COMM_WORLD: the lines for the communicator of all[first] from the records of
 * all its processes (same_comm). */
static void report_comm(const record_t * all, int n, int first)
{
    const record_t *c = &all[first];
    uint64_t receives = 0, order_unseen = 0, broken[MPIR_COMM_ASSERTION_COUNT] = { 0 };
    int procs[MPIR_COMM_ASSERTION_COUNT] = { 0 };
    /* processes that gave the assertion (they may differ: MPII_Comm_check_hints), among all
     * and among those that broke it */
    int asserted[MPIR_COMM_ASSERTION_COUNT] = { 0 };
    int broken_asserted[MPIR_COMM_ASSERTION_COUNT] = { 0 };
    int n_procs = 0;
    const record_t *first_rec[MPIR_COMM_ASSERTION_COUNT] = { NULL };
    int instances = 0;
    char label[MPI_MAX_OBJECT_NAME + 48], how[64];

    for (int i = first; i < n; i++) {
        const record_t *r = &all[i];
        if (!same_comm(r, c)) {
            continue;
        }
        receives += r->receives;
        order_unseen += r->order_unseen;
        instances = MPL_MAX(instances, r->instances);
        n_procs++;
        for (int a = 0; a < MPIR_COMM_ASSERTION_COUNT; a++) {
            asserted[a] += r->asserted[a] != 0;
            if (r->broken[a] > 0) {
                broken[a] += r->broken[a];
                procs[a]++;
                broken_asserted[a] += r->asserted[a] != 0;
                if (first_rec[a] == NULL || r->rank < first_rec[a]->rank) {
                    first_rec[a] = r;
                }
            }
        }
    }

    if (c->generation == QUIET_GENERATION) {
        snprintf(label, sizeof(label), "<unnamed, nothing received>");
    } else if (c->name[0] != '\0') {
        snprintf(label, sizeof(label), "\"%s\"", c->name);
    } else if (c->generation > 1) {
        /* its handle and context id were another communicator's before */
        snprintf(label, sizeof(label), "0x%x#%u", (unsigned) c->handle, (unsigned) c->generation);
    } else {
        snprintf(label, sizeof(label), "0x%x", (unsigned) c->handle);
    }
    if (c->size == 1 && c->generation != QUIET_GENERATION) {
        /* one per process (MPI_COMM_SELF, a split into singletons): say whose */
        size_t len = strlen(label);
        snprintf(label + len, sizeof(label) - len, " of world rank %d", (int) c->world_rank);
    }
    if (c->at_finalize) {
        snprintf(how, sizeof(how), "at MPI_Finalize");
    } else if (c->generation == QUIET_GENERATION) {
        snprintf(how, sizeof(how), "freed by MPI_Comm_free, up to %d per process", instances);
    } else if (instances > 1) {
        snprintf(how, sizeof(how), "freed by MPI_Comm_free, %d instances summed", instances);
    } else {
        snprintf(how, sizeof(how), "freed by MPI_Comm_free");
    }
    report_append("communicator %s (%d process%s, %s): %llu receives\n", label, (int) c->size,
                  c->size == 1 ? "" : "es", how, (unsigned long long) receives);
    report_append("  these assertions held for this run:");
    int held = 0;
    /* allow_overtaking is known to hold only where the device saw every match */
    bool order_unknown = order_unseen > 0 && broken[MPIR_COMM_ASSERTION_ALLOW_OVERTAKING] == 0;
    for (int a = 0; a < MPIR_COMM_ASSERTION_COUNT; a++) {
        if (a == MPIR_COMM_ASSERTION_ALLOW_OVERTAKING && order_unknown) {
            continue;
        }
        if (broken[a] == 0) {
            char given[48] = "";
            if (asserted[a] == n_procs) {
                snprintf(given, sizeof(given), " (asserted)");
            } else if (asserted[a] > 0) {
                snprintf(given, sizeof(given), " (asserted on %d of %d processes)", asserted[a],
                         n_procs);
            }
            report_append("%s %s%s", held++ ? "," : "", assertion_keys[a], given);
        }
    }
    report_append("%s\n", held ? "" : " none");
    if (order_unknown) {
        report_append("  not observable on this device: %s (%llu of %llu receives matched inside "
                      "the network library, which does not show the order of queued messages)\n",
                      assertion_keys[MPIR_COMM_ASSERTION_ALLOW_OVERTAKING],
                      (unsigned long long) order_unseen, (unsigned long long) receives);
    }
    for (int a = 0; a < MPIR_COMM_ASSERTION_COUNT; a++) {
        if (broken[a] > 0) {
            /* given and still broken: calls refused by verification, or (verification off)
             * a program that does not keep its promise */
            report_append("  %s: broken %llu times on %d of %d processes%s; first on rank %d: %s\n",
                          assertion_keys[a], (unsigned long long) broken[a], procs[a],
                          (int) c->size, broken_asserted[a] > 0 ? " although asserted" : "",
                          (int) first_rec[a]->rank, first_rec[a]->first[a]);
        }
    }
}

/* MPIR_CVAR_COMM_ASSERT_REPORT_FILE with each %p replaced by the process id; *per_run when
 * it has one */
static void report_path(char *path, size_t len, int *per_run)
{
    const char *in = MPIR_CVAR_COMM_ASSERT_REPORT_FILE;
    size_t n = 0;

    *per_run = FALSE;

    for (; *in != '\0' && n + 1 < len; in++) {
        if (in[0] == '%' && in[1] == 'p') {
            *per_run = TRUE;
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

/* A per-run name never replaces another run's report (process ids are reused): a name in
 * use gets the first free suffix .1, .2, ... */
static FILE *report_open(const char *path, int per_run)
{
    char alt[4096 + 16];
    int fd;

    if (!per_run) {
        return fopen(path, "w");
    }
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    for (int k = 1; fd < 0 && errno == EEXIST && k < 10000; k++) {
        snprintf(alt, sizeof(alt), "%s.%d", path, k);
        fd = open(alt, O_WRONLY | O_CREAT | O_EXCL, 0644);
    }
    return fd < 0 ? NULL : fdopen(fd, "w");
}

/* The order same_comm groups by: records of one communicator end up next to each other. */
static int record_order(const void *pa, const void *pb)
{
    const record_t *a = pa, *b = pb;
    if (a->at_finalize != b->at_finalize)
        return a->at_finalize < b->at_finalize ? -1 : 1;
    if (a->generation != b->generation)
        return a->generation < b->generation ? -1 : 1;
    if (a->context_id != b->context_id)
        return a->context_id < b->context_id ? -1 : 1;
    /* one process's communicators (MPI_COMM_SELF) in world rank order */
    int a_rank = a->size == 1 ? a->world_rank : -1, b_rank = b->size == 1 ? b->world_rank : -1;
    if (a_rank != b_rank)
        return a_rank < b_rank ? -1 : 1;
    if (a->members != b->members)
        return a->members < b->members ? -1 : 1;
    return strcmp(a->name, b->name);
}

static void write_report(record_t * all, int n)
{
    FILE *out = stderr;

    qsort(all, n, sizeof(record_t), record_order);
    for (int i = 0, end; i < n; i = end) {
        for (end = i + 1; end < n && same_comm(&all[i], &all[end]); end++) {
        }
        report_comm(all, end, i);
    }
    if (MPIR_CVAR_COMM_ASSERT_REPORT_FILE && MPIR_CVAR_COMM_ASSERT_REPORT_FILE[0] != '\0') {
        char path[4096];
        int per_run;
        report_path(path, sizeof(path), &per_run);
        out = report_open(path, per_run);
        if (out == NULL) {
            fprintf(stderr, "MPICH: cannot write the communicator assertions report to %s: %s\n",
                    path, strerror(errno));
            out = stderr;
        }
    }
    fprintf(out, "== MPI communicator assertions: what this run did "
            "(MPIR_CVAR_COMM_ASSERT_REPORT) ==\n%s", report_text ? report_text : "");
    if (n == 0) {
        fprintf(out, "no communicator was recorded\n");
    }
    fprintf(out, "== end of report ==\n");
    if (out != stderr) {
        fclose(out);
    } else {
        fflush(out);
    }
}

/* MPI_Finalize: MPI_COMM_WORLD's and MPI_COMM_SELF's records join the freed ones, every
 * process's records go to rank 0 of MPI_COMM_WORLD, which writes the report. */
int MPIR_Comm_assert_finalize(void)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    MPIR_Comm *world = MPIR_Process.comm_world;
    int *counts = NULL;
    MPI_Aint *lens = NULL, *displs = NULL;
    record_t *all = NULL;
    int total = 0;

    if (!MPIR_CVAR_COMM_ASSERT_REPORT || world == NULL) {
        goto fn_exit;
    }
    mpi_errno = keep_record(world, 1);
    MPIR_ERR_CHECK(mpi_errno);
    if (MPIR_Process.comm_self) {
        mpi_errno = keep_record(MPIR_Process.comm_self, 1);
        MPIR_ERR_CHECK(mpi_errno);
    }

    if (world->rank == 0) {
        counts = MPL_malloc(sizeof(int) * world->local_size, MPL_MEM_OTHER);
        lens = MPL_malloc(sizeof(MPI_Aint) * world->local_size * 2, MPL_MEM_OTHER);
        MPIR_ERR_CHKANDJUMP(counts == NULL || lens == NULL, mpi_errno, MPI_ERR_OTHER, "**nomem");
        displs = lens + world->local_size;
    }
    mpi_errno = MPIR_Gather(&n_records, 1, MPI_INT, counts, 1, MPI_INT, 0, world, &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    if (world->rank == 0) {
        for (int r = 0; r < world->local_size; r++) {
            lens[r] = (MPI_Aint) counts[r] * sizeof(record_t);
            displs[r] = (MPI_Aint) total * sizeof(record_t);
            total += counts[r];
        }
        all = MPL_malloc(sizeof(record_t) * MPL_MAX(total, 1), MPL_MEM_OTHER);
        MPIR_ERR_CHKANDJUMP(all == NULL, mpi_errno, MPI_ERR_OTHER, "**nomem");
    }
    mpi_errno = MPIR_Gatherv(records, (MPI_Aint) n_records * sizeof(record_t), MPI_BYTE, all,
                             lens, displs, MPI_BYTE, 0, world, &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    if (world->rank == 0) {
        write_report(all, total);
    }

  fn_exit:
    MPL_free(counts);
    MPL_free(lens);
    MPL_free(all);
    MPL_free(records);
    records = NULL;
    n_records = records_cap = 0;
    MPL_free(generations);
    generations = NULL;
    n_generations = generations_cap = 0;
    MPL_free(report_text);
    report_text = NULL;
    report_len = report_cap = 0;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
