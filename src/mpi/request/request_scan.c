/*
 * Copyright (C) by the MPICH request engine extension authors.
 *     See COPYRIGHT in top-level directory
 */

#include "mpiimpl.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_REQUEST_SCAN_ORDER
      category    : REQUEST
      type        : enum
      default     : rotate
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : |-
        Where MPI_Testany, MPI_Waitany, MPI_Testsome, MPI_Waitsome and
        MPI_Request_get_status_any and _some start scanning an array of
        requests, and so which complete request an any form reports.
        rotate - just after the index the last of these calls on the same
                 array (same address and count) reported, so under a flood
                 every complete request is reported within count calls; a
                 new array starts at index 0, and a non-destructive call
                 moves the cursor only when the application completes the
                 request it reported
        lowest - always at index 0, as MPICH 4.0.2 does: the lowest
                 complete index is reported first, every time

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* The fairness cursor shared by the any and some families.
 *
 * One cursor per array of requests, identified by its address and count, kept in a small
 * set-associative table (SCAN_SETS sets of SCAN_WAYS cursors, least recently used one
 * replaced): any SCAN_WAYS arrays in use at the same time keep their cursors, and an array
 * whose cursor was replaced starts again at index 0, which costs fairness for a while,
 * never correctness.  A destructive call moves
 * the cursor just past the last index it completed, as a scan in that order naturally
 * would.  A non-destructive call (MPI_Request_get_status_any/_some) leaves it where it is
 * and records the request it reported last; the next scan of the array moves the cursor
 * past that index once the application has completed the request, whichever way
 * (MPI_Test, MPI_Wait, ...): a tool that turns MPI_Testany into get_status_any + MPI_Test
 * leaves the cursor where MPI_Testany would have.  "Completed" is read from the request's
 * completion_seq, which changes when a request completes or is freed, so a slot re-posted
 * with a recycled request object is not mistaken for the one reported.  (Builds with memory
 * tracing, --enable-g=mem or all, poison pooled objects on allocation and free, which resets
 * completion_seq: there a recycled object can pass for the earlier request, costing a fresh
 * array its start at index 0, never correctness.  Builtin requests, one object shared by every
 * request complete at creation, never serve as witnesses.)
 *
 * Address and count do not tell a re-posted array from a fresh one that sits where an earlier
 * one sat (a binding that copies the handles into one buffer per call, a loop that reuses a
 * stack array): a fresh array must start at index 0, as in every MPI.  So each cursor also
 * keeps a witness: another request of the array, the first one after the index reported,
 * that the call left in place (its slot, handle and completion_seq).  An array that still
 * holds that very request, not completed since, in that slot is the same array (a flood loop
 * re-posts only what completed); any other array starts at 0 and the cursor is dropped.  A
 * call that leaves no other request in the array keeps no cursor: the next one starts at 0.
 *
 * When MPI is threaded a spin lock protects the table, whatever the thread granularity: it
 * is held for a few loads and stores, never across a callback or progress. */

#define SCAN_SET_BITS 6
#define SCAN_SETS (1 << SCAN_SET_BITS)
#define SCAN_WAYS 4

typedef struct scan_cursor {
    const MPI_Request *array;   /* with count, identifies the array; NULL: free slot */
    int count;
    int start;                  /* where the next scan of the array starts */
    int pending_indx;           /* last index a non-destructive call reported, or -1 */
    MPIR_Request *pending_req;  /* the request it reported there */
    unsigned int pending_seq;   /* that request's completion_seq then */
    int witness_indx;           /* the witness: a slot the call left holding a request, */
    MPI_Request witness_handle; /* that request, */
    unsigned int witness_seq;   /* and its completion_seq then */
    MPIR_Request *witness_req;  /* the object of witness_handle (a handle names one pool
                                 * object for as long as MPI is initialized; the table is
                                 * cleared at finalize, cursors_clear) */
    uint64_t last_use;          /* for replacement: least recently used goes first */
} scan_cursor;

static scan_cursor scan_cursors[SCAN_SETS][SCAN_WAYS];
static uint64_t scan_clock;     /* 64 bits: never wraps */
/* the cursor found or taken last: a loop over one array (the common case) finds it at once */
static scan_cursor *recent_cursor;
static int cursors_clear_registered;    /* cursors_clear is a finalize callback */
static MPL_atomic_int_t scan_cursors_lock;

static void cursors_lock(void)
{
    if (MPIR_ThreadInfo.isThreaded) {
        while (MPL_atomic_cas_int(&scan_cursors_lock, 0, 1) != 0) {
            /* held for a few instructions only */
        }
    }
}

static void cursors_unlock(void)
{
    if (MPIR_ThreadInfo.isThreaded) {
        MPL_atomic_release_store_int(&scan_cursors_lock, 0);
    }
}

/* Forgets every cursor at MPI_Finalize: the request objects the witnesses name go with it. */
static int cursors_clear(void *extra)
{
    memset(scan_cursors, 0, sizeof(scan_cursors));
    recent_cursor = NULL;
    cursors_clear_registered = FALSE;
    return MPI_SUCCESS;
}

/* The slot an array that cursor_find found no cursor for may take over (cursors lock held): a
 * file variable rather than an out-parameter, so that the callers take no local's address, which
 * would cost them a stack-protector canary in hardened builds (Debian's). */
static scan_cursor *slot_to_take;

/* The cursor of an array in its set, or NULL, slot_to_take then set. */
static scan_cursor *cursor_find_in_set(const MPI_Request array_of_requests[], int count)
{
    uint64_t key = ((uint64_t) (uintptr_t) array_of_requests >> 3) ^ ((uint64_t) count << 40);
    key *= UINT64_C(0x9e3779b97f4a7c15);        /* Fibonacci hashing */
    scan_cursor *set = scan_cursors[key >> (64 - SCAN_SET_BITS)];
    scan_cursor *oldest = &set[0];

    for (int w = 0; w < SCAN_WAYS; w++) {
        scan_cursor *c = &set[w];
        if (c->array == array_of_requests && c->count == count) {
            c->last_use = ++scan_clock;
            recent_cursor = c;
            return c;
        }
        if (c->array == NULL || (oldest->array != NULL && c->last_use < oldest->last_use)) {
            oldest = c;
        }
    }
    slot_to_take = oldest;
    return NULL;
}

/* The cursor of an array, or NULL (see cursor_find_in_set).  The cursor found or taken last
 * comes first, without touching the clock: it got the latest tick when it became the recent
 * one, and no other cursor has had one since, so the replacement order stays as it is. */
MPL_STATIC_INLINE_PREFIX scan_cursor *cursor_find(const MPI_Request array_of_requests[], int count)
{
    scan_cursor *r = recent_cursor;
    if (r != NULL && r->array == array_of_requests && r->count == count) {
        return r;
    }
    return cursor_find_in_set(array_of_requests, count);
}

static void cursor_take(scan_cursor * c, const MPI_Request array_of_requests[], int count)
{
    c->array = array_of_requests;
    c->count = count;
    c->start = 0;
    c->pending_indx = -1;
    c->pending_req = NULL;
    c->witness_indx = -1;
    c->last_use = ++scan_clock;
    recent_cursor = c;
    if (!cursors_clear_registered) {
        MPIR_Add_finalize(cursors_clear, NULL, MPIR_FINALIZE_CALLBACK_PRIO - 1);
        cursors_clear_registered = TRUE;
    }
}

/* The request at i when it may be a witness, else NULL: not MPI_REQUEST_NULL and not a builtin
 * request (one object shared by every request complete at creation, such as a send to
 * MPI_PROC_NULL, whose completion_seq never changes). */
MPL_STATIC_INLINE_PREFIX MPIR_Request *witness_candidate(const MPI_Request array_of_requests[],
                                                         int i)
{
    MPI_Request h = array_of_requests[i];
    MPIR_Request *req;

    if (h == MPI_REQUEST_NULL || HANDLE_IS_BUILTIN(h)) {
        return NULL;
    }
    MPIR_Request_get_ptr(h, req);
    return req;
}

static void witness_set(scan_cursor * c, const MPI_Request array_of_requests[], int i,
                        MPIR_Request * req)
{
    c->witness_indx = i;
    c->witness_handle = array_of_requests[i];
    c->witness_seq = req->completion_seq;
    c->witness_req = req;
}

/* Whether the cursor's witness still serves after a call completed or reported the request at
 * indx: still in its slot, not that request, not completed since (and, after a non-destructive
 * call, not complete: see witness_take).  Inline: a loop over one array passes here each call. */
MPL_STATIC_INLINE_PREFIX int witness_fits(const scan_cursor * c,
                                          const MPI_Request array_of_requests[], int count,
                                          int indx, int reported)
{
    int w = c->witness_indx;

    return w >= 0 && w < count && w != indx && array_of_requests[w] == c->witness_handle &&
        c->witness_req->completion_seq == c->witness_seq &&
        (!reported || !MPIR_Request_is_complete(c->witness_req));
}

/* Makes sure the cursor has a witness after a call completed (destructive) or reported
 * (non-destructive: reported) the request at indx: another request the array holds, not
 * completed since it was recorded.  After a destructive call any such request will do; after
 * a non-destructive one a pending request is preferred, since MPI_Request_get_status_some
 * reports every complete request and the application completes them next.  Where it looks: the
 * last call's witness, kept while it still fits (witness_fits, which the callers try first: a
 * loop over one array pays a few loads per call there, not a search); the request just before
 * indx, which a loop that re-posts what it completed filled last and the scan reaches last; the
 * one half the array away (a loop that drains the array leaves the slots before indx empty);
 * then the WITNESS_SLOTS slots after indx; only when none of these holds a request, the rest of
 * the array (a sparse array: without a witness the next call starts at 0, and a flood would
 * report the request at 0 every time).
 * The first fitting request found is the fallback when no pending one is.  Returns FALSE when
 * the array holds no other request but builtin ones (then the next call starts at 0: an array
 * of sends to MPI_PROC_NULL cannot be told from a fresh one). */
#define WITNESS_SLOTS 8

static int witness_take(scan_cursor * c, const MPI_Request array_of_requests[], int count,
                        int indx, int reported)
{
    int fallback = -1;
    MPIR_Request *req, *fallback_req = NULL;

    /* t = -2: the slot before indx, -1: the one half away, then the slots after indx in order;
     * past the first WITNESS_SLOTS of those only while nothing fitting was seen (a sparse
     * array: dropping the cursor while another request is there would let the request at 0
     * win every call of a flood) */
    for (int t = -2; t < count - 1; t++) {
        int i;
        if (t == -2) {
            i = (indx == 0) ? count - 1 : indx - 1;
        } else if (t == -1) {
            if (count <= 2) {
                continue;
            }
            i = (indx + count / 2) % count;
        } else {
            if (t >= WITNESS_SLOTS && fallback >= 0) {
                break;
            }
            i = (indx + 1 + t) % count;
        }
        if (i == indx || (req = witness_candidate(array_of_requests, i)) == NULL) {
            continue;
        }
        if (!reported || !MPIR_Request_is_complete(req)) {
            witness_set(c, array_of_requests, i, req);
            return TRUE;
        }
        if (fallback < 0) {
            fallback = i;
            fallback_req = req;
        }
    }
    if (fallback < 0) {
        c->witness_indx = -1;
        return FALSE;
    }
    witness_set(c, array_of_requests, fallback, fallback_req);
    return TRUE;
}

/* Whether array_of_requests is the array the cursor was left on: it still holds the witness,
 * not completed since, in its slot. */
static int witness_holds(const scan_cursor * c, const MPI_Request array_of_requests[],
                         MPIR_Request * request_ptrs[])
{
    int w = c->witness_indx;

    if (w < 0 || array_of_requests[w] != c->witness_handle) {
        return FALSE;
    }
    /* the binding decoded the handle (the witness's: neither MPI_REQUEST_NULL nor builtin) */
    return request_ptrs[w]->completion_seq == c->witness_seq;
}

static void reverse_ptrs(MPIR_Request * ptrs[], int lo, int hi)
{
    for (hi--; lo < hi; lo++, hi--) {
        MPIR_Request *tmp = ptrs[lo];
        ptrs[lo] = ptrs[hi];
        ptrs[hi] = tmp;
    }
}

static void reverse_ints(int a[], int lo, int hi)
{
    for (hi--; lo < hi; lo++, hi--) {
        int tmp = a[lo];
        a[lo] = a[hi];
        a[hi] = tmp;
    }
}

/* The entry points (MPIR_Request_scan_begin, _served, _reported, _forget in mpir_request.h) call
 * these only when MPIR_Request_scan_rotating(count). */
int MPIR_Request_scan_begin_cursor(const MPI_Request array_of_requests[],
                                   MPIR_Request * request_ptrs[], int count)
{
    int start = 0;

    cursors_lock();
    scan_cursor *c = cursor_find(array_of_requests, count);
    if (c != NULL && !witness_holds(c, array_of_requests, request_ptrs)) {
        /* a fresh array where an earlier one sat: it starts at 0 */
        c->array = NULL;
        c = NULL;
    }
    if (c != NULL) {
        int r = c->pending_indx;
        if (r >= 0) {
            MPIR_Request *req = (array_of_requests[r] == MPI_REQUEST_NULL) ? NULL : request_ptrs[r];
            if (req != c->pending_req || req->completion_seq != c->pending_seq) {
                /* the application completed the reported request since */
                c->start = (r + 1 == count) ? 0 : r + 1;
                c->pending_indx = -1;
                c->pending_req = NULL;
            }
        }
        start = c->start;
    }
    cursors_unlock();
    return start;
}

/* Rotates left by start: request_ptrs[k] becomes the old request_ptrs[start + k], the k-th
 * request of the scan; rotating by count - start undoes it. */
void MPIR_Request_scan_rotate(MPIR_Request * request_ptrs[], int count, int start)
{
    if (start > 0 && start < count) {
        reverse_ptrs(request_ptrs, 0, start);
        reverse_ptrs(request_ptrs, start, count);
        reverse_ptrs(request_ptrs, 0, count);
    }
}

int MPIR_Request_scan_device_any(int count, MPIR_Request * request_ptrs[], int start, int first,
                                 int *indx, int *flag, MPI_Status * status)
{
    int mpi_errno;
    int found = MPI_UNDEFINED;

    if (start > 0) {
        MPIR_Request_scan_rotate(request_ptrs, count, start);
    }
    if (flag != NULL) {
        mpi_errno = MPID_Testany(count - first, &request_ptrs[first], &found, flag, status);
    } else {
        mpi_errno = MPID_Waitany(count - first, &request_ptrs[first], &found, status);
    }
    if (start > 0) {
        /* back in array order, whatever the device returned */
        MPIR_Request_scan_rotate(request_ptrs, count, count - start);
    }
    *indx = (found == MPI_UNDEFINED) ? MPI_UNDEFINED :
        MPIR_Request_scan_index(found + first, start, count);
    return mpi_errno;
}

/* Puts ascending indices in scan order: those from start on first. */
void MPIR_Request_scan_order(int array_of_indices[], int outcount, int start)
{
    int first = 0;

    if (start == 0) {
        return;
    }
    while (first < outcount && array_of_indices[first] < start) {
        first++;
    }
    if (first > 0 && first < outcount) {
        reverse_ints(array_of_indices, 0, first);
        reverse_ints(array_of_indices, first, outcount);
        reverse_ints(array_of_indices, 0, outcount);
    }
}

void MPIR_Request_scan_served_cursor(const MPI_Request array_of_requests[], int count, int indx)
{
    int next = (indx + 1 == count) ? 0 : indx + 1;
    if (MPIR_T_events_listening()) {
        MPIR_Request_served_event(array_of_requests, count, indx, next);
    }
    cursors_lock();
    scan_cursor *c = cursor_find(array_of_requests, count);
    if (next == 0) {
        /* the next scan starts at 0, as one of an array without a cursor does: no cursor
         * needed, so no witness to look for (a loop that drains the array ends here) */
        if (c != NULL) {
            c->array = NULL;
        }
        goto fn_exit;
    }
    if (c == NULL) {
        c = slot_to_take;
        cursor_take(c, array_of_requests, count);
    }
    c->start = next;
    c->pending_indx = -1;
    c->pending_req = NULL;
    if (!witness_fits(c, array_of_requests, count, indx, FALSE) &&
        !witness_take(c, array_of_requests, count, indx, FALSE)) {
        /* nothing left to tell this array from a fresh one: the next call starts at 0 */
        c->array = NULL;
    }
  fn_exit:
    cursors_unlock();
}

void MPIR_Request_scan_reported_cursor(const MPI_Request array_of_requests[], int count,
                                       int indx, MPIR_Request * request_ptr)
{
    cursors_lock();
    scan_cursor *c = cursor_find(array_of_requests, count);
    if (c == NULL) {
        if (indx + 1 == count) {
            /* once completed, the cursor would go back to 0: nothing to remember */
            goto fn_exit;
        }
        c = slot_to_take;
        cursor_take(c, array_of_requests, count);
    }
    c->pending_indx = indx;
    c->pending_req = request_ptr;
    c->pending_seq = request_ptr->completion_seq;
    if (!witness_fits(c, array_of_requests, count, indx, TRUE) &&
        !witness_take(c, array_of_requests, count, indx, TRUE)) {
        c->array = NULL;
    }
  fn_exit:
    cursors_unlock();
}

void MPIR_Request_scan_forget_cursor(const MPI_Request array_of_requests[], int count)
{
    cursors_lock();
    scan_cursor *c = cursor_find(array_of_requests, count);
    if (c != NULL) {
        c->array = NULL;
    }
    cursors_unlock();
}
