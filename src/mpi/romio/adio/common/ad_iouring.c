/*
 * Copyright (C) by the MPICH request engine extension authors.
 *     Under MPICH's license: see COPYRIGHT in top-level directory
 */

/* The io_uring engine of ROMIO's nonblocking contiguous I/O (ADIOI_GEN_aio): one ring per
 * process, one generalized request class; the kernel runs the transfers, no helper thread. */

#include "adio.h"
#include "../../mpi-io/mpioimpl.h"
#ifdef MPIO_BUILD_PROFILING
#include "../../mpi-io/mpioprof.h"
#endif
#include "mpiu_greq.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_ROMIO_NBIO_ENGINE
      category    : REQUEST
      type        : enum
      default     : auto
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : |-
        What performs ROMIO's nonblocking contiguous file I/O (a file's info key
        romio_nbio_engine says which):
        auto     - io_uring when the build has it and the kernel accepts it, else posix
        io_uring - Linux io_uring; operations fail with MPI_ERR_IO if the kernel refuses it
        posix    - POSIX AIO, on glibc's helper threads

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

#if defined(ROMIO_HAVE_WORKING_AIO) && defined(ROMIO_HAVE_LIBURING)

#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* the submission queue: entries one io_uring_submit call can take */
#define URING_SQ_ENTRIES 256
/* the completion queue: operations in flight at once; more wait for room. Kernels before 5.12
 * charge the rings to RLIMIT_MEMLOCK (64 KiB by default): smaller queues are tried on ENOMEM. */
static const unsigned uring_cq_sizes[] = { 8192, 1024, 128 };
/* the most one read or write moves (Linux MAX_RW_COUNT); a larger one is split */
#define URING_MAX_RW 0x7ffff000
/* A segment of at least this many bytes goes to the kernel's io-wq workers at once
 * (IOSQE_ASYNC), so a page-cache miss is copied on another core; smaller ones are tried
 * inline first. */
#define URING_ASYNC_MIN (1 << 20)
/* how many times in a row an interrupted or cancelled segment is submitted again before the
 * operation fails */
#define URING_MAX_RETRIES 64

enum uring_op_state {
    URING_OP_INFLIGHT,          /* a segment is in the ring, or queued for submission */
    URING_OP_DONE,              /* the result is recorded; the request is not complete yet */
    URING_OP_COMPLETED          /* MPI_Grequest_complete has been called */
};

typedef struct ADIOI_Uring_req {
    ADIOI_AIO_Request base;     /* req, nbytes, error_code: what ADIOI_GEN_aio_query_fn reports */
    ADIO_File fd;               /* NULL once the file is closed */
    char *buf;
    ADIO_Offset offset;
    MPI_Count len;
    MPI_Count done;             /* bytes moved so far */
    int fd_sys;
    int wr;
    int retries;                /* resubmissions in a row without progress */
    int err;                    /* errno of a failed operation, 0 */
    enum uring_op_state state;
    /* MPICH calls free_fn at MPI_Request_free even before the request completes, and keeps
     * polling the request until MPI_Grequest_complete: the state goes when both happened */
    int freed;                  /* free_fn was called */
    int completed;              /* MPI_Grequest_complete returned */
    int linked;
    struct ADIOI_Uring_req *prev, *next;        /* the ring's requests, until free_fn */
    struct ADIOI_Uring_req *again;      /* a reap's list of segments to submit again */
} ADIOI_Uring_req;

/* setup_mutex: the ring's setup and the class's creation; ring_mutex: the queues and each
 * request's state, nothing under it calls MPI. Order: ROMIO's mutex, setup_mutex, MPICH's
 * critical section, ring_mutex. ring_state: 0 untried, 1 set up, -errno refused. */
static struct io_uring ring;
static int ring_state = 0;
static int uring_chosen_by_auto = 0;
static int atfork_registered = 0;
static unsigned ring_inflight;  /* entries in the ring whose completion is not reaped */
static unsigned ring_capacity;
/* Waiting: one waiter at a time (the sleeper) sleeps on ring_efd, which the kernel signals for
 * every completion, without ring_mutex; the others on ring_cond, which every reap that records a
 * result, and the sleeper when it leaves, broadcasts. */
static int ring_sleeper;        /* a waiter sleeps on ring_efd, or is about to */
static int ring_efd = -1;       /* the eventfd registered with the ring */
static pthread_cond_t ring_cond = PTHREAD_COND_INITIALIZER;
static ADIOI_Uring_req *ring_reqs;
static pthread_mutex_t ring_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t setup_mutex = PTHREAD_MUTEX_INITIALIZER;
static MPIX_Grequest_class ADIOI_Uring_greq_class = 0;

static int uring_poll_fn(void *extra_state, MPI_Status * status);
static int uring_wait_fn(int count, void **array_of_states, double timeout, MPI_Status * status);
static int uring_free_fn(void *extra_state);

/* In a child forked after the ring was set up: the ring is the parent's (its mappings are not
 * inherited, io_uring_ring_dontfork); nonblocking I/O goes to POSIX AIO if auto chose io_uring. */
static void uring_atfork_child(void)
{
    /* another thread may have held one at the fork */
    pthread_mutex_init(&ring_mutex, NULL);
    pthread_mutex_init(&setup_mutex, NULL);
    pthread_cond_init(&ring_cond, NULL);
    ring_sleeper = 0;
    if (ring_state == 1) {
        ADIOI_Uring_req *r;

        /* the child's copies of the operations in the ring fail at their next poll */
        for (r = ring_reqs; r != NULL; r = r->next) {
            if (r->state == URING_OP_INFLIGHT) {
                r->err = ECANCELED;
                r->state = URING_OP_DONE;
            }
        }
        ring_state = -ECHILD;
        io_uring_queue_exit(&ring);
        close(ring_efd);
        ring_efd = -1;
#ifdef ROMIO_INSIDE_MPICH
        if (uring_chosen_by_auto) {
            MPIR_Ext_romio_nbio_engine_set(MPIR_EXT_NBIO_POSIX);
        }
#endif
    }
}

/* Sets the ring up (once per process; setup_mutex is held). Returns 0 or
 * -errno: what the kernel answered, -ENOSYS for a kernel without IORING_FEAT_EXT_ARG (5.11)
 * or IORING_FEAT_NODROP, -ECHILD in a child forked after the ring was set up. */
static int uring_setup(void)
{
    struct io_uring_params params;
    int ret = -ENOMEM;
    size_t i;

    if (ring_state != 0) {
        return ring_state == 1 ? 0 : ring_state;
    }
    if (!atfork_registered) {
        atfork_registered = 1;
        pthread_atfork(NULL, NULL, uring_atfork_child);
    }
    for (i = 0; i < sizeof(uring_cq_sizes) / sizeof(uring_cq_sizes[0]) && ret == -ENOMEM; i++) {
        memset(&params, 0, sizeof(params));
        params.flags = IORING_SETUP_CQSIZE;
        params.cq_entries = uring_cq_sizes[i];
        ret = io_uring_queue_init_params(URING_SQ_ENTRIES, &ring, &params);
    }
    if (ret == 0 && (!(params.features & IORING_FEAT_EXT_ARG) ||
                     !(params.features & IORING_FEAT_NODROP))) {
        io_uring_queue_exit(&ring);
        ret = -ENOSYS;
    }
    if (ret == 0) {
        ring_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        ret = ring_efd < 0 ? -errno : io_uring_register_eventfd(&ring, ring_efd);
        if (ret != 0) {
            if (ring_efd >= 0) {
                close(ring_efd);
                ring_efd = -1;
            }
            io_uring_queue_exit(&ring);
        }
    }
    if (ret == 0) {
        (void) io_uring_ring_dontfork(&ring);
        pthread_mutex_lock(&ring_mutex);
        ring_capacity = params.cq_entries;
        ring_inflight = 0;
        ring_sleeper = 0;
        ring_state = 1;
        pthread_mutex_unlock(&ring_mutex);
    } else {
        pthread_mutex_lock(&ring_mutex);
        ring_state = ret;
        pthread_mutex_unlock(&ring_mutex);
    }
    return ret;
}

/* The engine of nonblocking contiguous I/O (MPIR_CVAR_ROMIO_NBIO_ENGINE, 'auto' resolved
 * once), setting the ring up: ADIOI_NBIO_IO_URING, ADIOI_NBIO_POSIX, or -errno when io_uring is
 * asked for and the kernel refuses it. */
int ADIOI_Uring_engine(void)
{
    int ret, engine;

    pthread_mutex_lock(&setup_mutex);
#ifdef ROMIO_INSIDE_MPICH
    {
        int asked = MPIR_Ext_romio_nbio_engine();
        if (asked == MPIR_EXT_NBIO_POSIX) {
            engine = ADIOI_NBIO_POSIX;
        } else {
            ret = uring_setup();
            if (asked == MPIR_EXT_NBIO_IO_URING) {
                engine = ret == 0 ? ADIOI_NBIO_IO_URING : ret;
            } else {
                uring_chosen_by_auto = ret == 0;
                MPIR_Ext_romio_nbio_engine_set(ret == 0 ? MPIR_EXT_NBIO_IO_URING :
                                               MPIR_EXT_NBIO_POSIX);
                engine = ret == 0 ? ADIOI_NBIO_IO_URING : ADIOI_NBIO_POSIX;
            }
        }
    }
#else
    ret = uring_setup();
    engine = ret == 0 ? ADIOI_NBIO_IO_URING : ADIOI_NBIO_POSIX;
#endif
    pthread_mutex_unlock(&setup_mutex);
    return engine;
}

/* Takes an SQE (the mutex is held): when the submission queue is full, submits it first. */
static struct io_uring_sqe *uring_get_sqe_locked(void)
{
    struct io_uring_sqe *sqe;

    while ((sqe = io_uring_get_sqe(&ring)) == NULL) {
        /* the queue holds URING_SQ_ENTRIES unsubmitted entries: only a kernel short of memory
         * (EAGAIN) refuses them; the completion queue never overflows (ring_inflight) */
        if (io_uring_submit(&ring) < 0) {
            struct timespec pause = { 0, 100000 };
            nanosleep(&pause, NULL);
        }
    }
    return sqe;
}

/* Queues the next segment of r (the mutex is held) */
static void uring_queue_segment(ADIOI_Uring_req * r)
{
    struct io_uring_sqe *sqe = uring_get_sqe_locked();
    MPI_Count left = r->len - r->done;
    unsigned n = left > URING_MAX_RW ? URING_MAX_RW : (unsigned) left;

    if (r->wr) {
        io_uring_prep_write(sqe, r->fd_sys, r->buf + r->done, n, (__u64) (r->offset + r->done));
    } else {
        io_uring_prep_read(sqe, r->fd_sys, r->buf + r->done, n, (__u64) (r->offset + r->done));
    }
    io_uring_sqe_set_data(sqe, r);
    if (n >= URING_ASYNC_MIN) {
        io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
    }
}

/* Records the completion of r's segment that moved res bytes or failed with -res (the
 * mutex is held). Returns 1 if the operation goes on with another segment (to be queued). */
static int uring_segment_done(ADIOI_Uring_req * r, int res)
{
    if ((res == -EINTR || res == -EAGAIN || res == -ECANCELED) &&
        r->retries < URING_MAX_RETRIES) {
        /* interrupted, or cancelled because the thread that submitted it exited: the same
         * read or write again, at the same offset */
        r->retries++;
        return 1;
    }
    if (res < 0) {
        r->err = -res;
    } else if (res == 0) {
        if (r->wr && r->done < r->len) {
            r->err = EIO;       /* a write that moves nothing would never end */
        }
        /* a read at the end of the file: done, with the bytes read so far */
    } else {
        r->done += res;
        r->retries = 0;
        if (r->done < r->len) {
            return 1;   /* short: the rest */
        }
    }
    r->state = URING_OP_DONE;
    return 0;
}

static void uring_submit_locked(void);
static void uring_unlink_locked(ADIOI_Uring_req * r);

/* Reaps every completion in the queue, without a system call unless the completion queue
 * overflowed (the mutex is held, the ring is set up); then queues again the segments that go
 * on; wakes ring_cond's waiters when it recorded a result. Returns how many it recorded. */
static unsigned uring_reap_locked(void)
{
    struct io_uring_cqe *cqe;
    ADIOI_Uring_req *again = NULL, **again_tail = &again, *r;
    unsigned head, n = 0, recorded = 0;

    if (io_uring_cq_has_overflow(&ring)) {
        (void) io_uring_get_events(&ring);
    }
    io_uring_for_each_cqe(&ring, head, cqe) {
        r = (ADIOI_Uring_req *) io_uring_cqe_get_data(cqe);
        n++;
        if (uring_segment_done(r, cqe->res)) {
            r->again = NULL;
            *again_tail = r;
            again_tail = &r->again;
        } else {
            ring_inflight--;
            recorded++;
        }
    }
    io_uring_cq_advance(&ring, n);
    for (r = again; r != NULL; r = r->again) {
        uring_queue_segment(r);
    }
    if (recorded > 0) {
        pthread_cond_broadcast(&ring_cond);
    }
    if (io_uring_sq_ready(&ring) > 0) {
        uring_submit_locked();
    }
    return recorded;
}

/* Submits what is queued (the mutex is held). What the kernel cannot take now (EAGAIN: short
 * of memory) stays queued for the next reap, poll or wait. */
static void uring_submit_locked(void)
{
    int ret;

    do {
        ret = io_uring_submit(&ring);
    } while (ret == -EINTR);
}

static double uring_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

/* MPL_wait_slice(timeout) from now on CLOCK_REALTIME, for pthread_cond_timedwait */
static void uring_deadline(double timeout, struct timespec *ts)
{
    struct timespec rel;

    MPL_wait_slice_timespec(timeout, &rel);
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += rel.tv_sec;
    ts->tv_nsec += rel.tv_nsec;
    if (ts->tv_nsec >= 1000000000) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000;
    }
}

/* Waits for a result to be recorded, at most `left` seconds (the mutex is held, the ring is set
 * up; returns with it held): as the sleeper, on ring_efd without the mutex, if there is none;
 * else on ring_cond. The caller reaps and checks again. */
static void uring_wait_locked(double left)
{
    if (!ring_sleeper) {
        uint64_t signals;
        ring_sleeper = 1;
        if (io_uring_sq_ready(&ring) > 0) {
            uring_submit_locked();
        }
        /* a completion after this read wakes the sleeper, whoever reaps it; one before, this
         * reap takes */
        (void) read(ring_efd, &signals, sizeof(signals));
        if (uring_reap_locked() == 0) {
            struct pollfd pfd = { ring_efd, POLLIN, 0 };
            struct timespec slice;
            MPL_wait_slice_timespec(left, &slice);
            pthread_mutex_unlock(&ring_mutex);
            /* the timeout and a signal (EINTR) end the wait too */
            (void) ppoll(&pfd, 1, &slice, NULL);
            pthread_mutex_lock(&ring_mutex);
        }
        ring_sleeper = 0;
        pthread_cond_broadcast(&ring_cond);     /* another waiter may become the sleeper */
    } else {
        struct timespec abstime;
        uring_deadline(left, &abstime);
        (void) pthread_cond_timedwait(&ring_cond, &ring_mutex, &abstime);
    }
}

/* Completes r, whose result is recorded (state URING_OP_COMPLETED now; never with the mutex
 * held); frees its state if free_fn was called already. Returns MPI_SUCCESS or the error of
 * MPI_Grequest_complete. */
static int uring_complete(ADIOI_Uring_req * r, const char *myname)
{
    int rc, gone;

    if (r->err == 0) {
        r->base.nbytes = r->done;
    } else {
        r->base.nbytes = 0;
        r->base.error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname,
                                                  __LINE__, MPI_ERR_IO, "**io", "**io %s",
                                                  strerror(r->err));
    }
    rc = MPI_Grequest_complete(r->base.req);
    pthread_mutex_lock(&ring_mutex);
    r->completed = 1;
    gone = r->freed;
    if (gone) {
        uring_unlink_locked(r);
    }
    pthread_mutex_unlock(&ring_mutex);
    if (gone) {
        ADIOI_Free(r);
    }
    if (rc != MPI_SUCCESS) {
        /* --BEGIN ERROR HANDLING-- */
        return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                    MPI_ERR_IO, "**mpi_grequest_complete", 0);
        /* --END ERROR HANDLING-- */
    }
    return MPI_SUCCESS;
}

/* Takes r for completion if its result is recorded (the mutex is held): returns 1 once. */
static int uring_take_done_locked(ADIOI_Uring_req * r)
{
    if (r->state == URING_OP_DONE) {
        r->state = URING_OP_COMPLETED;
        return 1;
    }
    return 0;
}

static int uring_poll_fn(void *extra_state, MPI_Status * status)
{
    ADIOI_Uring_req *r = (ADIOI_Uring_req *) extra_state;
    int take;

    pthread_mutex_lock(&ring_mutex);
    if (ring_state == 1) {
        (void) uring_reap_locked();
    }
    take = uring_take_done_locked(r);
    pthread_mutex_unlock(&ring_mutex);
    return take ? uring_complete(r, "ADIOI_Uring_poll_fn") : MPI_SUCCESS;
}

/* Wait for any of count requests to complete, at most timeout seconds (0: do not block):
 * reap; while none of them is over, one wait on the ring for the time left; then complete
 * every one that is over. A completion may be another request's: then wait again. */
static int uring_wait_fn(int count, void **array_of_states, double timeout, MPI_Status * status)
{
    ADIOI_Uring_req **reqs = (ADIOI_Uring_req **) array_of_states;
    double deadline = timeout > 0 ? uring_now() + timeout : 0;
    int i, any_done, errcode = MPI_SUCCESS;

    pthread_mutex_lock(&ring_mutex);
    for (;;) {
        double left;

        if (ring_state == 1) {
            (void) uring_reap_locked();
        }
        any_done = 0;
        for (i = 0; i < count && !any_done; i++) {
            any_done = reqs[i]->state != URING_OP_INFLIGHT;
        }
        if (any_done || timeout <= 0 || ring_state != 1) {
            break;
        }
        left = deadline - uring_now();
        if (left <= 0) {
            break;
        }
        uring_wait_locked(left);
    }
    pthread_mutex_unlock(&ring_mutex);

    for (i = 0; i < count; i++) {
        pthread_mutex_lock(&ring_mutex);
        any_done = uring_take_done_locked(reqs[i]);
        pthread_mutex_unlock(&ring_mutex);
        if (any_done && (errcode = uring_complete(reqs[i], "ADIOI_Uring_wait_fn")) != MPI_SUCCESS) {
            break;
        }
    }
    return errcode;
}

static void uring_unlink_locked(ADIOI_Uring_req * r)
{
    if (!r->linked) {
        return;
    }
    if (r->prev != NULL) {
        r->prev->next = r->next;
    } else {
        ring_reqs = r->next;
    }
    if (r->next != NULL) {
        r->next->prev = r->prev;
    }
    r->prev = r->next = NULL;
    r->linked = 0;
}

/* Called once a completed request is waited or tested, or by MPI_Request_free, before the
 * request completes too: then the state stays (the ring and MPICH's progress still use it)
 * until uring_complete. */
static int uring_free_fn(void *extra_state)
{
    ADIOI_Uring_req *r = (ADIOI_Uring_req *) extra_state;
    int gone;

    pthread_mutex_lock(&ring_mutex);
    r->freed = 1;
    gone = r->completed;
    if (gone) {
        uring_unlink_locked(r);
    }
    pthread_mutex_unlock(&ring_mutex);
    if (gone) {
        ADIOI_Free(r);
    }
    return MPI_SUCCESS;
}

/* ADIOI_GEN_aio on the ring (the engine is io_uring: the ring is set up). Returns 0, or an
 * errno when the operation cannot be issued (*request is MPI_REQUEST_NULL then). */
int ADIOI_Uring_aio(ADIO_File fd, void *buf, int count, MPI_Datatype type,
                    ADIO_Offset offset, int wr, MPI_Request * request)
{
    ADIOI_Uring_req *r;
    MPI_Count len, typesize;
    MPIX_Grequest_class greq_class;

    *request = MPI_REQUEST_NULL;
    MPI_Type_size_x(type, &typesize);
    len = typesize * count;
    if (offset < 0) {
        return EINVAL;
    }

    r = (ADIOI_Uring_req *) ADIOI_Calloc(sizeof(ADIOI_Uring_req), 1);
    r->fd = fd;
    r->buf = (char *) buf;
    r->offset = offset;
    r->len = len;
    r->fd_sys = fd->fd_sys;
    r->wr = wr;
    r->state = URING_OP_INFLIGHT;

    /* the request exists before its operation is submitted: a reaper in another thread may
     * record the result at once */
    pthread_mutex_lock(&setup_mutex);
    if (ADIOI_Uring_greq_class == 0 &&
        MPIX_Grequest_class_create(ADIOI_GEN_aio_query_fn, uring_free_fn, MPIU_Greq_cancel_fn,
                                   uring_poll_fn, uring_wait_fn,
                                   &ADIOI_Uring_greq_class) != MPI_SUCCESS) {
        ADIOI_Uring_greq_class = 0;
    }
    greq_class = ADIOI_Uring_greq_class;
    pthread_mutex_unlock(&setup_mutex);
    if (greq_class == 0) {
        ADIOI_Free(r);
        return ENOMEM;
    }
    if (MPIX_Grequest_class_allocate(greq_class, r, request) != MPI_SUCCESS) {
        *request = MPI_REQUEST_NULL;
        ADIOI_Free(r);
        return ENOMEM;
    }
#ifdef ROMIO_INSIDE_MPICH
    /* MPI_Wait and MPI_Test raise its errors on the file's error handler */
    MPIR_Ext_grequest_set_file(*request, fd);
#endif
    r->base.req = *request;

    pthread_mutex_lock(&ring_mutex);
    r->next = ring_reqs;
    if (ring_reqs != NULL) {
        ring_reqs->prev = r;
    }
    ring_reqs = r;
    r->linked = 1;
    if (len == 0) {
        r->state = URING_OP_DONE;
    } else {
        /* back-pressure: room in the completion queue for this operation's completion */
        while (ring_inflight >= ring_capacity) {
            if (uring_reap_locked() == 0) {
                uring_wait_locked(0.1); /* the kernel completes what is in flight */
            }
        }
        ring_inflight++;
        uring_queue_segment(r);
        uring_submit_locked();
    }
    pthread_mutex_unlock(&ring_mutex);
    return 0;
}

/* Waits, without a timeout, until no operation of fd (every operation if fd is NULL) is in
 * the ring (the ring is set up). */
static void uring_drain(ADIO_File fd)
{
    ADIOI_Uring_req *r;
    int busy;

    pthread_mutex_lock(&ring_mutex);
    for (;;) {
        (void) uring_reap_locked();
        busy = 0;
        for (r = ring_reqs; r != NULL && !busy; r = r->next) {
            busy = r->state == URING_OP_INFLIGHT && (fd == NULL || r->fd == fd);
        }
        if (!busy) {
            break;
        }
        uring_wait_locked(0.1);
    }
    pthread_mutex_unlock(&ring_mutex);
}

/* Waits until no operation of fd is in the ring (ADIOI_GEN_aio_file_close, without ROMIO's lock) */
void ADIOI_Uring_file_drain(ADIO_File fd)
{
    int up;

    pthread_mutex_lock(&ring_mutex);
    up = ring_state == 1;
    pthread_mutex_unlock(&ring_mutex);
    if (up) {
        uring_drain(fd);
    }
}

/* MPI_File_close (ADIOI_GEN_aio_file_close, before the descriptor closes): the file's operations
 * in the ring finish first, and every request of the file that is not freed yet forgets it. */
void ADIOI_Uring_file_close(ADIO_File fd)
{
    ADIOI_Uring_req *r;
    int up;

    pthread_mutex_lock(&ring_mutex);
    up = ring_state == 1;
    pthread_mutex_unlock(&ring_mutex);
    if (up) {
        uring_drain(fd);
    }
    /* also in a forked child, whose requests may still name the file */
    pthread_mutex_lock(&ring_mutex);
    for (r = ring_reqs; r != NULL; r = r->next) {
        if (r->fd == fd) {
            r->fd = NULL;
#ifdef ROMIO_INSIDE_MPICH
            MPIR_Ext_grequest_set_file(r->base.req, MPI_FILE_NULL);
#endif
        }
    }
    pthread_mutex_unlock(&ring_mutex);
}

/* MPI_Finalize (ADIO_End): every operation finishes and every request whose result is recorded
 * completes (MPI_Finalize's own progress would poll it after the ring is gone); then the ring
 * and the class are gone, and a later MPI initialization sets them up again. */
void ADIOI_Uring_finalize(void)
{
    ADIOI_Uring_req *r, *next, **done = NULL;
    int n = 0, i, up;

    pthread_mutex_lock(&setup_mutex);
    pthread_mutex_lock(&ring_mutex);
    up = ring_state == 1;
    pthread_mutex_unlock(&ring_mutex);
    if (up) {
        uring_drain(NULL);
        pthread_mutex_lock(&ring_mutex);
        for (r = ring_reqs; r != NULL; r = r->next) {
            n++;
        }
        done = (ADIOI_Uring_req **) ADIOI_Malloc((n + 1) * sizeof(ADIOI_Uring_req *));
        n = 0;
        for (r = ring_reqs; r != NULL; r = r->next) {
            if (uring_take_done_locked(r)) {
                done[n++] = r;
            }
        }
        pthread_mutex_unlock(&ring_mutex);
        for (i = 0; i < n; i++) {
            (void) uring_complete(done[i], "ADIOI_Uring_finalize");
        }
        ADIOI_Free(done);
        pthread_mutex_lock(&ring_mutex);
        io_uring_queue_exit(&ring);
        close(ring_efd);
        ring_efd = -1;
        ring_state = 0;
        /* requests not freed yet stay allocated; their free_fn finds them unlinked (those
         * neither completed nor freed, whose free_fn never comes, were erroneous) */
        for (r = ring_reqs; r != NULL; r = next) {
            next = r->next;
            r->prev = r->next = NULL;
            r->linked = 0;
        }
        ring_reqs = NULL;
        pthread_mutex_unlock(&ring_mutex);
    } else {
        pthread_mutex_lock(&ring_mutex);
        ring_state = 0;
        pthread_mutex_unlock(&ring_mutex);
    }
    uring_chosen_by_auto = 0;
    ADIOI_Uring_greq_class = 0;
    pthread_mutex_unlock(&setup_mutex);
}

#endif /* ROMIO_HAVE_WORKING_AIO && ROMIO_HAVE_LIBURING */
