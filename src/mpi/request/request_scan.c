/*
 * Copyright (C) by the MPICH request engine extension authors.
 *     Under MPICH's license: see COPYRIGHT in top-level directory
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
        Where the any and some forms of the completion calls start scanning an array.
        rotate - just after the index the last such call on the array reported
        lowest - always at index 0 (MPICH 4.0.2's order)

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* The fairness cursor shared by the any and some families: one cursor per array (address and
 * count) in a small set-associative table, each with a witness request that tells a re-posted
 * array from a fresh one at the same address. */

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
static MPL_initlock_t scan_cursors_lock = MPL_INITLOCK_INITIALIZER;

static void cursors_lock(void)
{
    if (MPIR_ThreadInfo.isThreaded) {
        MPL_initlock_lock(&scan_cursors_lock);
    }
}

static void cursors_unlock(void)
{
    if (MPIR_ThreadInfo.isThreaded) {
        MPL_initlock_unlock(&scan_cursors_lock);
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

/* Makes sure the cursor has a witness after a call completed or reported the request at indx:
 * another request of the array, pending preferred after a non-destructive call. Returns FALSE
 * when the array holds no other request but builtin ones (the next call then starts at 0). */
#define WITNESS_SLOTS 8

static int witness_take(scan_cursor * c, const MPI_Request array_of_requests[], int count,
                        int indx, int reported)
{
    int fallback = -1;
    MPIR_Request *req, *fallback_req = NULL;

    /* t = -2: the slot before indx, -1: the one half away, then the slots after indx; past
     * WITNESS_SLOTS of those only while nothing fitting was seen (a sparse array) */
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
