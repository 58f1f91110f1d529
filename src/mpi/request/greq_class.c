/*
 * Copyright (C) by the MPICH request engine extension authors.
 *     Under MPICH's license: see COPYRIGHT in top-level directory
 */

#include "mpiimpl.h"
#include "mpir_request_engine.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_GREQUEST_WAIT_TIMEOUT_MAX
      category    : REQUEST
      type        : double
      default     : 0.04
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        The longest time, in seconds, that a Wait-family call blocks in one wait_fn
        call of a generalized request class before it makes network progress again.
        After network traffic a call gets a quarter of it, doubled per quiet call.

    - name        : MPIR_CVAR_GREQUEST_WAIT_BATCH
      category    : REQUEST
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        If true, a Wait-family call that has to block hands every pending request
        of one generalized request class in its array to a single wait_fn call.
        If false, it hands wait_fn one request at a time.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

#define GREQ_WAIT_TIMEOUT_MIN 1e-5
/* after traffic a wait_fn call gets cap / 2^GREQ_WAIT_QUIET_DOUBLINGS, doubled per quiet call */
#define GREQ_WAIT_QUIET_DOUBLINGS 2
/* the cap while the same Wait-family call has requests that network progress completes */
#define GREQ_WAIT_TIMEOUT_SHARED 1e-3

/* The classes by creation order: element i of the greq_class_* performance variables */
static MPIR_Grequest_class **greq_classes = NULL;
static int greq_n_classes = 0;
static int greq_classes_capacity = 0;

/* The greq_class_* pvar getters read the table and statistics holding MPI_T's lock, so they
 * never take the global critical section (taken before MPI_T's lock); greq_stats_lock is a
 * leaf lock taken last by both sides. */
#if defined(MPICH_IS_THREADED)
static MPL_thread_mutex_t greq_stats_lock;
#define GREQ_STATS_LOCK()                                                       \
    do {                                                                        \
        int err_;                                                               \
        MPL_thread_mutex_lock(&greq_stats_lock, &err_, MPL_THREAD_PRIO_HIGH);   \
        MPIR_Assert(err_ == 0);                                                 \
    } while (0)
#define GREQ_STATS_UNLOCK()                               \
    do {                                                  \
        int err_;                                         \
        MPL_thread_mutex_unlock(&greq_stats_lock, &err_); \
        MPIR_Assert(err_ == 0);                           \
    } while (0)
#else
#define GREQ_STATS_LOCK() do {} while (0)
#define GREQ_STATS_UNLOCK() do {} while (0)
#endif

/* Pending generalized requests with a poll_fn (not of ordered classes), polled by a progress
 * hook while the list is not empty; polled_cursor moves on when its request leaves, so a
 * poll_fn may complete or free others. Under the global critical section. */
static MPIR_Request *polled_head = NULL;
static MPIR_Request *polled_cursor = NULL;
static int polled_hook_id = -1;
static int polled_hook_running = FALSE;
/* passes the progress hook made over the list: a request whose poll_fn was called since the
 * previous pass (by a Test or Wait call that names it) is left out of the next, so one call that
 * makes one progress poll calls each poll_fn once */
static unsigned int polled_passes = 0;
/* poll_fn and wait_fn calls running: while one runs, MPI calls it makes do not run the hook, so
 * no request's callbacks run inside another's (a ROMIO poll_fn calls MPI_Test) */
static int greq_callbacks_running = 0;

/* which class a Wait-family call waits on first, so that classes take turns */
static unsigned int greq_wait_turn = 0;
/* wait_fn calls in a row across which the device's progress moved nothing
 * (MPID_Progress_activity_count unchanged since the previous call began) */
static unsigned int greq_quiet_waits = 0;
static int greq_activity_at_wait = 0;

/* bits of MPIR_Grequest_fns.polled */
#define GREQ_POLLED_LISTED  1       /* on the list the progress hook polls */
#define GREQ_POLLED_IN_CALL 2       /* its poll_fn or wait_fn is running: a poll_fn that calls
                                     * MPI (and so the progress hook) must not re-enter itself
                                     * for the same request */
#define GREQ_POLLED_FRESH   4       /* allocated, and its library may not hold the handle yet:
                                     * the progress engine polls it only in the allocating
                                     * thread (see greq_pollable_here) */
#define GREQ_POLLED_HELD    8       /* completed from inside its own poll_fn or wait_fn call:
                                     * published when that call returns, after its error is
                                     * recorded (see greq_callback_return) */

static double greq_now(void)
{
    MPL_time_t t;
    double d;
    MPL_wtime(&t);
    MPL_wtime_todouble(&t, &d);
    return d;
}

static int engine_finalizer_registered = FALSE;

/* At MPI_Finalize: the class table, the progress hook and the list go. */
static int engine_finalize(void *extra_data ATTRIBUTE((unused)))
{
    /* the table first: a greq_class_* getter running now sees no class, not a freed one */
    GREQ_STATS_LOCK();
    MPL_free(greq_classes);
    greq_classes = NULL;
    greq_n_classes = 0;
    greq_classes_capacity = 0;
    GREQ_STATS_UNLOCK();
    if (polled_hook_id >= 0) {
        MPIR_Progress_hook_deregister(polled_hook_id);
        polled_hook_id = -1;
    }
    polled_head = NULL;
    polled_cursor = NULL;
    engine_finalizer_registered = FALSE;
    return MPI_SUCCESS;
}

/* Registers engine_finalize once; it runs before mpir_greq.c frees the class objects. */
static void engine_finalize_register(void)
{
    if (!engine_finalizer_registered) {
        MPIR_Add_finalize(engine_finalize, NULL, MPIR_FINALIZE_CALLBACK_HANDLE_CHECK_PRIO + 2);
        engine_finalizer_registered = TRUE;
    }
}

static void polled_remove(MPIR_Request * request_ptr)
{
    struct MPIR_Grequest_fns *fns = request_ptr->u.ureq.greq_fns;

    if (!(fns->polled & GREQ_POLLED_LISTED)) {
        return;
    }
    if (polled_cursor == request_ptr) {
        polled_cursor = fns->polled_next;
    }
    if (fns->polled_prev) {
        fns->polled_prev->u.ureq.greq_fns->polled_next = fns->polled_next;
    } else {
        polled_head = fns->polled_next;
    }
    if (fns->polled_next) {
        fns->polled_next->u.ureq.greq_fns->polled_prev = fns->polled_prev;
    }
    fns->polled_prev = fns->polled_next = NULL;
    fns->polled &= ~GREQ_POLLED_LISTED;
    if (polled_head == NULL && polled_hook_id >= 0) {
        MPIR_Progress_hook_deactivate(polled_hook_id);
    }
}

/* A poll_fn or wait_fn error, reported on a request that completed in that callback call: its
 * status and test or wait call report it (the first such error it gets). */
static void greq_report_error(MPIR_Request * request_ptr, int errorcode)
{
    if (request_ptr->u.ureq.greq_fns->failed_errno == MPI_SUCCESS) {
        request_ptr->u.ureq.greq_fns->failed_errno = errorcode;
    }
}

#if MPL_THREAD_PACKAGE_NAME != MPL_THREAD_PACKAGE_NONE
static int greq_is_this_thread(MPL_thread_id_t * thread)
{
    MPL_thread_id_t self;
    int same;
    MPL_thread_self(&self);
    MPL_thread_same(&self, thread, &same);
    return same;
}
#endif

/* Whether this thread's progress may poll the request: until the allocating thread's next
 * progress call, or a call naming the request, only that thread polls it, as the library may
 * not have stored the handle its poll_fn uses yet (MPI_THREAD_MULTIPLE). */
static int greq_pollable_here(struct MPIR_Grequest_fns *fns)
{
    if (!(fns->polled & GREQ_POLLED_FRESH) || fns->free_on_complete) {
        /* MPI_Request_free named it: any thread polls it */
        return TRUE;
    }
#if MPL_THREAD_PACKAGE_NAME != MPL_THREAD_PACKAGE_NONE
    if (!greq_is_this_thread(&fns->owner)) {
        return FALSE;
    }
#endif
    fns->polled &= ~GREQ_POLLED_FRESH;
    return TRUE;
}

/* Marks the engine's poll_fn or wait_fn call on the request as running in this thread. */
static void greq_call_begin(struct MPIR_Grequest_fns *fns)
{
    fns->polled |= GREQ_POLLED_IN_CALL;
#if MPL_THREAD_PACKAGE_NAME != MPL_THREAD_PACKAGE_NONE
    MPL_thread_self(&fns->call_thread);
#endif
}

/* Whether this thread runs the engine's poll_fn or wait_fn call on the request (an MPI call
 * made from inside that callback). */
static int greq_in_own_call(struct MPIR_Grequest_fns *fns)
{
    if (!(fns->polled & GREQ_POLLED_IN_CALL)) {
        return FALSE;
    }
#if MPL_THREAD_PACKAGE_NAME != MPL_THREAD_PACKAGE_NONE
    return greq_is_this_thread(&fns->call_thread);
#else
    return TRUE;
#endif
}

/* Completes a generalized request; free_fn's error when MPI_Request_free came first. */
static int greq_complete_now(MPIR_Request * request_ptr)
{
    int mpi_errno = MPI_SUCCESS;
    struct MPIR_Grequest_fns *fns = request_ptr->u.ureq.greq_fns;

    if (fns->deferred_errno != MPI_SUCCESS) {
        /* a kept poll_fn error no call took yet: now the completed request's */
        greq_report_error(request_ptr,
                          MPIR_Grequest_callback_error(fns->deferred_errno, MPIR_GREQUEST_POLL_FN));
        fns->deferred_errno = MPI_SUCCESS;
    }
    if (fns->class_ptr) {
        double latency = greq_now() - fns->start_time;
        GREQ_STATS_LOCK();
        fns->class_ptr->completed++;
        fns->class_ptr->latency_seconds += latency;
        GREQ_STATS_UNLOCK();
    }
    if (fns->free_on_complete) {
        /* free_fn now, once the request left the polled list */
        MPIR_Request_add_ref(request_ptr);
        MPIR_Request_complete(request_ptr);
        mpi_errno = MPIR_Grequest_free(request_ptr);
        MPIR_Request_free(request_ptr);
    } else {
        MPIR_Request_complete(request_ptr);
    }
    return mpi_errno;
}

/* After the engine's poll_fn or wait_fn call on the request returned: the call's error
 * (errorcode) is the request's if it completed during the call, and a completion the callback
 * made itself is published now. Returns whether the request is complete. */
static int greq_callback_return(MPIR_Request * request_ptr, int errorcode)
{
    struct MPIR_Grequest_fns *fns = request_ptr->u.ureq.greq_fns;
    int held = (fns->polled & GREQ_POLLED_HELD) != 0;

    fns->polled &= ~(GREQ_POLLED_IN_CALL | GREQ_POLLED_HELD);
    if (!held && !MPIR_Request_is_complete(request_ptr)) {
        return FALSE;
    }
    if (errorcode != MPI_SUCCESS) {
        greq_report_error(request_ptr, errorcode);
    }
    if (held) {
        /* MPI_Request_free came meanwhile: free_fn's error has no call to take it */
        (void) greq_complete_now(request_ptr);
    }
    return TRUE;
}

/* A call made from inside the request's own callback, after that callback completed it: the
 * request is complete for it (its poll_fn may wait for it) */
static int greq_publish_in_own_call(MPIR_Request * request_ptr)
{
    struct MPIR_Grequest_fns *fns = request_ptr->u.ureq.greq_fns;

    if (!(fns->polled & GREQ_POLLED_HELD) || !greq_in_own_call(fns)) {
        return MPI_SUCCESS;
    }
    fns->polled &= ~GREQ_POLLED_HELD;
    return greq_complete_now(request_ptr);
}

/* Calls poll_fn; an error is reported on the request when it completed in that call, else
 * returned (the request stays pending). */
static int greq_poll(MPIR_Request * request_ptr, MPI_Status * status, int *rc_out)
{
    int rc;
    int mpi_errno = MPI_SUCCESS;
    struct MPIR_Grequest_fns *fns = request_ptr->u.ureq.greq_fns;

    *rc_out = MPI_SUCCESS;
    if (MPIR_Request_is_complete(request_ptr)) {
        /* completed by another thread, say */
        return MPI_SUCCESS;
    }
    if (fns->polled & GREQ_POLLED_IN_CALL) {
        /* polled from inside a callback, its own or another thread's */
        return greq_publish_in_own_call(request_ptr);
    }
    if (fns->class_ptr) {
        GREQ_STATS_LOCK();
        fns->class_ptr->polls++;
        GREQ_STATS_UNLOCK();
    }
    greq_call_begin(fns);
    fns->polled_pass = polled_passes;
    greq_callbacks_running++;
    MPIR_Request_call_record_t outer = MPIR_Request_call_begin(MPIR_REQUEST_CALL__CALLBACK);
    MPID_THREAD_CS_EXIT(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
    rc = (fns->poll_fn) (fns->grequest_extra_state, status);
    MPID_THREAD_CS_ENTER(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
    MPIR_Request_call_end(outer);
    greq_callbacks_running--;
    *rc_out = rc;
    if (rc != MPI_SUCCESS) {
        mpi_errno = MPIR_Grequest_callback_error(rc, MPIR_GREQUEST_POLL_FN);
    }
    if (greq_callback_return(request_ptr, mpi_errno)) {
        mpi_errno = MPI_SUCCESS;
    }
    if (MPIR_T_events_listening()) {
        MPIR_Grequest_poll_event(request_ptr, rc);
    }
    return mpi_errno;
}

/* The progress hook: polls every pending request with a poll_fn but those a completion call
 * polled since the last pass. A poll_fn error of a request that did not complete is kept for
 * the next call that polls that request. */
static int polled_progress_hook(int *made_progress)
{
    *made_progress = FALSE;
    if (polled_hook_running || greq_callbacks_running > 0) {
        return MPI_SUCCESS;
    }
    polled_hook_running = TRUE;
    for (MPIR_Request * req = polled_head; req != NULL; req = polled_cursor) {
        struct MPIR_Grequest_fns *fns = req->u.ureq.greq_fns;
        polled_cursor = fns->polled_next;
        if (fns->deferred_errno != MPI_SUCCESS && fns->free_on_complete) {
            /* its handle was freed: no call can take the error, and polling goes on */
            fns->deferred_errno = MPI_SUCCESS;
        }
        if (fns->deferred_errno != MPI_SUCCESS || fns->polled_pass == polled_passes ||
            !greq_pollable_here(fns)) {
            continue;
        }
        /* The lock is released around poll_fn: another thread may complete and free the
         * request meanwhile (its owner's MPI_Wait), so hold a reference across the call. */
        MPIR_Request_add_ref(req);
        fns->hook_pass = polled_passes;
        int rc_fn;
        int rc = greq_poll(req, MPI_STATUS_IGNORE, &rc_fn);
        if (rc != MPI_SUCCESS && !fns->free_on_complete) {
            /* no call of the application's is running on it: the next one gets the error.
             * Kept as poll_fn's class (or user code): a code of the error ring would not last. */
            fns->deferred_errno = (rc_fn & ERROR_DYN_MASK) ? rc_fn : MPIR_ERR_GET_CLASS(rc_fn);
        }
        MPIR_Request_free(req);
    }
    polled_cursor = NULL;
    polled_passes++;
    polled_hook_running = FALSE;
    return MPI_SUCCESS;
}

/* Registers the progress hook of the list before a request joins it: the one step of adding a
 * request that can fail, taken before the request exists. */
static int polled_prepare(void)
{
    int mpi_errno = MPI_SUCCESS;

    if (polled_hook_id < 0) {
        mpi_errno = MPIR_Progress_hook_register(polled_progress_hook, &polled_hook_id);
        MPIR_ERR_CHECK(mpi_errno);
        engine_finalize_register();
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static void polled_add(MPIR_Request * request_ptr)
{
    struct MPIR_Grequest_fns *fns = request_ptr->u.ureq.greq_fns;

    MPIR_Assert(polled_hook_id >= 0);
    fns->polled |= GREQ_POLLED_FRESH;
#if MPL_THREAD_PACKAGE_NAME != MPL_THREAD_PACKAGE_NONE
    MPL_thread_self(&fns->owner);
#endif
    fns->polled_pass = polled_passes - 1;       /* not polled yet */
    fns->hook_pass = polled_passes - 2;
    fns->polled_prev = NULL;
    fns->polled_next = polled_head;
    if (polled_head) {
        polled_head->u.ureq.greq_fns->polled_prev = request_ptr;
    }
    polled_head = request_ptr;
    fns->polled |= GREQ_POLLED_LISTED;
    MPIR_Progress_hook_activate(polled_hook_id);
}

int MPIR_Grequest_engine_is_complete(MPIR_Request * request_ptr)
{
    return MPIR_Request_is_complete(request_ptr) ||
        (request_ptr->u.ureq.greq_fns->polled & GREQ_POLLED_HELD);
}

/* MPI_Grequest_complete: made from inside the engine's poll_fn or wait_fn call on a request the
 * application still holds, the completion waits for that call's return */
int MPIR_Grequest_engine_complete(MPIR_Request * request_ptr)
{
    struct MPIR_Grequest_fns *fns = request_ptr->u.ureq.greq_fns;

    polled_remove(request_ptr);
    if (greq_in_own_call(fns) && !fns->free_on_complete) {
        fns->polled |= GREQ_POLLED_HELD;
        return MPI_SUCCESS;
    }
    return greq_complete_now(request_ptr);
}

int MPIR_Grequest_callback_error(int rc, MPIR_Grequest_callback which)
{
    /* a user-defined code is not in the error ring and its class fits no MPICH code: an
     * MPI_ERR_OTHER "**user" code, for which the error handler hands back rc itself */
    int dynamic = (rc & ERROR_DYN_MASK) != 0;
    int lastcode = dynamic ? MPI_SUCCESS : rc;
    int errclass = dynamic ? MPI_ERR_OTHER : MPIR_ERR_GET_CLASS(rc);

    switch (which) {
        case MPIR_GREQUEST_QUERY_FN:
            return MPIR_Err_create_code(lastcode, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                        errclass, "**user", "**userquery %d", rc);
        case MPIR_GREQUEST_POLL_FN:
            if (dynamic) {
                return MPIR_Err_create_code(lastcode, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                            errclass, "**user", "**userpoll %d", rc);
            }
            return MPIR_Err_create_code(lastcode, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                        errclass, "**userpoll", "**userpoll %d", rc);
        default:
            if (dynamic) {
                return MPIR_Err_create_code(lastcode, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                            errclass, "**user", "**userwait %d", rc);
            }
            return MPIR_Err_create_code(lastcode, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                        errclass, "**userwait", "**userwait %d", rc);
    }
}

int MPIR_Grequest_poll(MPIR_Request * request_ptr, MPI_Status * status)
{
    struct MPIR_Grequest_fns *fns = request_ptr->u.ureq.greq_fns;
    int kept = fns->deferred_errno;
    int rc_fn;

    /* a call names the request: its library has the handle */
    fns->polled &= ~GREQ_POLLED_FRESH;
    if (kept != MPI_SUCCESS) {
        fns->deferred_errno = MPI_SUCCESS;
        return MPIR_Grequest_callback_error(kept, MPIR_GREQUEST_POLL_FN);
    }
    return greq_poll(request_ptr, status, &rc_fn);
}

int MPIR_Grequest_polled_by_last_pass(MPIR_Request * request_ptr)
{
    /* while a callback runs the hook makes no pass, so the last one may be an earlier call's;
     * an error the pass kept is this call's (MPIR_Grequest_poll returns it) */
    return greq_callbacks_running == 0 &&
        request_ptr->u.ureq.greq_fns->deferred_errno == MPI_SUCCESS &&
        request_ptr->u.ureq.greq_fns->hook_pass + 1 == polled_passes;
}

/* The timeout of a class's wait_fn call: the cap, a quarter of it after network traffic and
 * doubled per quiet call; at most 1 ms beside network requests; within that, the time left to
 * the class's mean completion latency. */
static double greq_wait_timeout(MPIR_Grequest_class * class_ptr, double age, int others_pending,
                                unsigned int quiet)
{
    double cap = MPIR_CVAR_GREQUEST_WAIT_TIMEOUT_MAX;

    if (quiet < GREQ_WAIT_QUIET_DOUBLINGS) {
        cap /= (double) (1u << (GREQ_WAIT_QUIET_DOUBLINGS - quiet));
    }
    if (others_pending && cap > GREQ_WAIT_TIMEOUT_SHARED) {
        cap = GREQ_WAIT_TIMEOUT_SHARED;
    }

    if (class_ptr && class_ptr->completed > 0) {
        double left = class_ptr->latency_seconds / (double) class_ptr->completed - age;
        if (left >= GREQ_WAIT_TIMEOUT_MIN && left < cap) {
            return MPL_wait_slice(left);
        }
    }
    /* inf or 1e20 reaches wait_fn as one slice at most (MPI_Wait calls it again); NaN as MIN */
    return (cap >= GREQ_WAIT_TIMEOUT_MIN) ? MPL_wait_slice(cap) : GREQ_WAIT_TIMEOUT_MIN;
}

static int greq_pending_wait(MPIR_Request * req)
{
    return req != NULL && MPIR_Request_has_wait_fn(req) && !MPIR_Request_is_complete(req) &&
        !(req->u.ureq.greq_fns->polled & GREQ_POLLED_IN_CALL);
}

int MPIR_Grequest_wait_batch(int count, MPIR_Request * request_ptrs[], int others_pending,
                             int *waited)
{
    int mpi_errno = MPI_SUCCESS;
    int first = -1, n = 0, rc;
    void **states = NULL;
    MPIR_Request **batch = NULL;
    MPIX_Grequest_wait_function *wait_fn;
    MPIR_Grequest_class *class_ptr;
    double t0;
    MPIR_CHKLMEM_DECL(2);

    *waited = FALSE;
    if (count <= 0) {
        goto fn_exit;
    }

    /* the class to wait on: classes present in the array take turns */
    int start = (int) (greq_wait_turn++ % (unsigned int) count);
    for (int k = 0, i = start; k < count; k++, i = (i + 1 == count) ? 0 : i + 1) {
        MPIR_Request *req = request_ptrs[i];
        if (req != NULL && MPIR_Request_has_wait_fn(req) &&
            (req->u.ureq.greq_fns->polled & GREQ_POLLED_HELD)) {
            /* a Wait call from inside the callback that completed the request */
            mpi_errno = greq_publish_in_own_call(req);
            MPIR_ERR_CHECK(mpi_errno);
        }
        if (greq_pending_wait(req)) {
            first = i;
            break;
        }
    }
    if (first < 0) {
        goto fn_exit;
    }

    class_ptr = request_ptrs[first]->u.ureq.greq_fns->class_ptr;
    wait_fn = request_ptrs[first]->u.ureq.greq_fns->wait_fn;
    MPIR_CHKLMEM_MALLOC(states, void **, count * sizeof(void *), mpi_errno, "wait_fn states",
                        MPL_MEM_OTHER);
    MPIR_CHKLMEM_MALLOC(batch, MPIR_Request **, count * sizeof(MPIR_Request *), mpi_errno,
                        "wait_fn requests", MPL_MEM_OTHER);
    /* the states in array order: a class that is ordered (its requests must progress in the
     * same order in every process) gets them so */
    for (int i = 0; i < count; i++) {
        MPIR_Request *req = request_ptrs[i];
        if (!greq_pending_wait(req)) {
            continue;
        }
        /* requests of one class, or the requests of MPIX_Grequest_start with this wait_fn */
        if (req->u.ureq.greq_fns->class_ptr != class_ptr ||
            req->u.ureq.greq_fns->wait_fn != wait_fn) {
            continue;
        }
        /* marked at once: a request that appears twice in the array is handed over once */
        greq_call_begin(req->u.ureq.greq_fns);
        batch[n] = req;
        states[n] = req->u.ureq.greq_fns->grequest_extra_state;
        n++;
        if (!MPIR_CVAR_GREQUEST_WAIT_BATCH) {
            break;
        }
    }

    double oldest = batch[0]->u.ureq.greq_fns->start_time;
    for (int j = 1; j < n; j++) {
        if (batch[j]->u.ureq.greq_fns->start_time < oldest) {
            oldest = batch[j]->u.ureq.greq_fns->start_time;
        }
    }
    int activity = MPID_Progress_activity_count();
    if (activity == greq_activity_at_wait) {
        if (greq_quiet_waits < GREQ_WAIT_QUIET_DOUBLINGS) {
            greq_quiet_waits++;
        }
    } else {
        greq_quiet_waits = 0;
        greq_activity_at_wait = activity;
    }
    t0 = greq_now();
    GREQ_STATS_LOCK();
    double timeout = greq_wait_timeout(class_ptr, t0 - oldest, others_pending, greq_quiet_waits);
    GREQ_STATS_UNLOCK();
    greq_callbacks_running++;
    MPIR_Request_call_record_t outer = MPIR_Request_call_begin(MPIR_REQUEST_CALL__CALLBACK);
    MPID_THREAD_CS_EXIT(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
    rc = wait_fn(n, states, timeout, MPI_STATUS_IGNORE);
    MPID_THREAD_CS_ENTER(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
    MPIR_Request_call_end(outer);
    greq_callbacks_running--;
    if (rc != MPI_SUCCESS) {
        mpi_errno = MPIR_Grequest_callback_error(rc, MPIR_GREQUEST_WAIT_FN);
    }
    /* reported on those it completed (all were pending when it was called); the others stay
     * pending, and when it completed none, the error is the caller's */
    int n_completed = 0;
    for (int j = 0; j < n; j++) {
        n_completed += greq_callback_return(batch[j], mpi_errno);
    }
    if (n_completed > 0) {
        mpi_errno = MPI_SUCCESS;
    }
    double blocked = greq_now() - t0;
    if (class_ptr) {
        GREQ_STATS_LOCK();
        class_ptr->waits++;
        class_ptr->waited_requests += (unsigned long long) n;
        class_ptr->wait_seconds += blocked;
        GREQ_STATS_UNLOCK();
    }
    if (MPIR_T_events_listening()) {
        MPIR_Grequest_wait_event(class_ptr, batch, n, rc, timeout, blocked);
    }
    *waited = TRUE;

  fn_exit:
    MPIR_CHKLMEM_FREEALL();
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* -- the hooks mpir_greq.c calls (mpir_request_engine.h) ------------------------------------ */

void MPIR_Grequest_engine_init(MPIR_Request * request_ptr)
{
    struct MPIR_Grequest_fns *fns = request_ptr->u.ureq.greq_fns;

    fns->class_ptr = NULL;
    fns->polled_prev = NULL;
    fns->polled_next = NULL;
    fns->polled = FALSE;
    fns->failed_errno = MPI_SUCCESS;
    fns->deferred_errno = MPI_SUCCESS;
    /* not polled yet, by a call or by the hook (requests of ordered classes never are) */
    fns->polled_pass = polled_passes - 1;
    fns->hook_pass = polled_passes - 2;
    fns->start_time = greq_now();
}

/* whether the progress engine polls requests of these callbacks: an ordered class's requests
 * progress only in the application's calls */
static int greq_is_polled(MPIX_Grequest_poll_function * poll_fn, MPIR_Grequest_class * class_ptr)
{
    return poll_fn != NULL && !(class_ptr != NULL && class_ptr->ordered);
}

int MPIR_Grequest_engine_prepare(MPIX_Grequest_poll_function * poll_fn,
                                 MPIR_Grequest_class * class_ptr)
{
    return greq_is_polled(poll_fn, class_ptr) ? polled_prepare() : MPI_SUCCESS;
}

void MPIR_Grequest_engine_add(MPIR_Request * request_ptr, MPIR_Grequest_class * class_ptr)
{
    struct MPIR_Grequest_fns *fns = request_ptr->u.ureq.greq_fns;

    fns->class_ptr = class_ptr;
    if (greq_is_polled(fns->poll_fn, class_ptr)) {
        polled_add(request_ptr);
    }
}

int MPIR_Grequest_engine_add_class(MPIR_Grequest_class * class_ptr)
{
    int mpi_errno = MPI_SUCCESS;

    GREQ_STATS_LOCK();
    class_ptr->polls = 0;
    class_ptr->waits = 0;
    class_ptr->waited_requests = 0;
    class_ptr->completed = 0;
    class_ptr->wait_seconds = 0.0;
    class_ptr->latency_seconds = 0.0;

    if (greq_n_classes == greq_classes_capacity) {
        int capacity = greq_classes_capacity ? 2 * greq_classes_capacity : 8;
        MPIR_Grequest_class **grown = MPL_realloc(greq_classes, capacity * sizeof(*grown),
                                                  MPL_MEM_OTHER);
        if (!grown) {
            GREQ_STATS_UNLOCK();
            MPIR_ERR_SETANDJUMP1(mpi_errno, MPI_ERR_OTHER, "**nomem", "**nomem %s",
                                 "MPIX_Grequest_class");
        }
        greq_classes = grown;
        greq_classes_capacity = capacity;
    }
    class_ptr->index = greq_n_classes;
    greq_classes[greq_n_classes++] = class_ptr;
    GREQ_STATS_UNLOCK();
    engine_finalize_register();

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* MPI_T performance variables: one element per class, in creation order (the class handle of
 * each element is in greq_class_handle). Counters and the timer are totals since the class was
 * created. */
static void greq_pvar_count(void *addr, void *obj_handle, int *count)
{
    GREQ_STATS_LOCK();
    *count = greq_n_classes;
    GREQ_STATS_UNLOCK();
}

/* MPI_T calls hold MPI_T's lock, and may run inside an event callback that holds the global
 * critical section: only the leaf greq_stats_lock, which class creation (which may move the
 * table) and the statistics' updates hold. */
#define GREQ_PVAR_GETTER(name_, type_, expr_)                                   \
    static void name_(void *addr, void *obj_handle, int count, void *buf)       \
    {                                                                           \
        type_ *out = (type_ *) buf;                                             \
        GREQ_STATS_LOCK();                                                      \
        for (int i = 0; i < count && i < greq_n_classes; i++) {                 \
            MPIR_Grequest_class *c = greq_classes[i];                           \
            out[i] = (expr_);                                                   \
        }                                                                       \
        GREQ_STATS_UNLOCK();                                                    \
    }

GREQ_PVAR_GETTER(greq_pvar_polls, unsigned long long, c->polls)
GREQ_PVAR_GETTER(greq_pvar_waits, unsigned long long, c->waits)
GREQ_PVAR_GETTER(greq_pvar_waited_requests, unsigned long long, c->waited_requests)
GREQ_PVAR_GETTER(greq_pvar_completed, unsigned long long, c->completed)
GREQ_PVAR_GETTER(greq_pvar_wait_time, double, c->wait_seconds)
GREQ_PVAR_GETTER(greq_pvar_mean_latency, double,
                 c->completed ? c->latency_seconds / (double) c->completed : 0.0)
GREQ_PVAR_GETTER(greq_pvar_wait_timeout, double, greq_wait_timeout(c, 0.0, FALSE, 0))
GREQ_PVAR_GETTER(greq_pvar_handle, int, c->handle)

void MPII_init_grequest_pvars(void)
{
    const int flags = MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS;
    name2index_hash_t *found;

#if defined(MPICH_IS_THREADED)
    static int lock_created = FALSE;
    if (!lock_created) {
        int err;
        MPL_thread_mutex_create(&greq_stats_lock, &err);
        MPIR_Assert(err == 0);
        lock_created = TRUE;
    }
#endif
    /* again when MPI_Finalize freed the MPI_T tables (MPI_Session_init after it) */
    HASH_FIND_STR(pvar_hashs[MPI_T_PVAR_CLASS_COUNTER - MPIR_T_PVAR_CLASS_FIRST],
                  "greq_class_polls", found);
    if (found) {
        return;
    }
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
                              "greq_class_polls", NULL, 0, MPI_T_ENUM_NULL,
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT, flags,
                              greq_pvar_polls, greq_pvar_count, "REQUEST",
                              "poll_fn calls, per generalized request class");
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
                              "greq_class_waits", NULL, 0, MPI_T_ENUM_NULL,
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT, flags,
                              greq_pvar_waits, greq_pvar_count, "REQUEST",
                              "wait_fn calls, per generalized request class");
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
                              "greq_class_waited_requests", NULL, 0, MPI_T_ENUM_NULL,
                              MPI_T_VERBOSITY_USER_DETAIL, MPI_T_BIND_NO_OBJECT, flags,
                              greq_pvar_waited_requests, greq_pvar_count, "REQUEST",
                              "requests handed to wait_fn calls (the sum of their count "
                              "arguments), per generalized request class");
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
                              "greq_class_completed", NULL, 0, MPI_T_ENUM_NULL,
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT, flags,
                              greq_pvar_completed, greq_pvar_count, "REQUEST",
                              "requests completed, per generalized request class");
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_TIMER, MPI_DOUBLE,
                              "greq_class_wait_time", NULL, 0, MPI_T_ENUM_NULL,
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT, flags,
                              greq_pvar_wait_time, greq_pvar_count, "REQUEST",
                              "seconds spent blocked in wait_fn, per generalized request class");
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_GENERIC, MPI_DOUBLE,
                              "greq_class_mean_latency", NULL, 0, MPI_T_ENUM_NULL,
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT, flags,
                              greq_pvar_mean_latency, greq_pvar_count, "REQUEST",
                              "mean seconds from allocation to completion of the requests "
                              "completed so far, per generalized request class");
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_GENERIC, MPI_DOUBLE,
                              "greq_class_wait_timeout", NULL, 0, MPI_T_ENUM_NULL,
                              MPI_T_VERBOSITY_USER_DETAIL, MPI_T_BIND_NO_OBJECT, flags,
                              greq_pvar_wait_timeout, greq_pvar_count, "REQUEST",
                              "the timeout (seconds) a wait_fn call on a request allocated "
                              "now gets after network traffic, per generalized request class "
                              "(MPIR_CVAR_GREQUEST_WAIT_TIMEOUT_MAX)");
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_GENERIC, MPI_INT,
                              "greq_class_handle", NULL, 0, MPI_T_ENUM_NULL,
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT, flags,
                              greq_pvar_handle, greq_pvar_count, "REQUEST",
                              "the MPIX_Grequest_class handle of each element of the "
                              "greq_class_* variables");
}
