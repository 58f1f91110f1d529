/*
 * Copyright (C) by the MPICH request engine extension authors.
 *     Under MPICH's license: see COPYRIGHT in top-level directory
 */

#ifndef MPIR_REQUEST_ENGINE_H_INCLUDED
#define MPIR_REQUEST_ENGINE_H_INCLUDED

/* The generalized request engine (greq_class.c), for MPICH's request code: how the callbacks
 * of generalized requests are called and how their errors reach the caller; the progress engine
 * polls pending requests with a poll_fn, the Wait family blocks in one bounded wait_fn call per
 * class. */

typedef enum {
    MPIR_GREQUEST_QUERY_FN,
    MPIR_GREQUEST_POLL_FN,
    MPIR_GREQUEST_WAIT_FN
} MPIR_Grequest_callback;

/* Calls the request's poll_fn, or returns the error the progress engine kept for it; an error
 * of a poll_fn call that completed the request is in its status instead. */
int MPIR_Grequest_poll(MPIR_Request * request_ptr, MPI_Status * status);
/* whether the progress engine's latest pass over the polled generalized requests called the
 * request's poll_fn: a Test form, which polls first, then leaves the request out (so each
 * pending request's poll_fn runs once per call) */
int MPIR_Grequest_polled_by_last_pass(MPIR_Request * request_ptr);

/* For the Wait family: hands the pending requests of one class with a wait_fn among
 * request_ptrs[0..count) (classes take turns) to a single bounded wait_fn call and sets
 * *waited; its error goes to the requests it completed, else is returned. */
int MPIR_Grequest_wait_batch(int count, MPIR_Request * request_ptrs[], int others_pending,
                             int *waited);
/* The error a callback's return rc becomes: a built-in class is kept, the callback stacked on
 * rc; a user-defined code comes back as rc itself ("**user", MPI_ERR_OTHER in a status). */
int MPIR_Grequest_callback_error(int rc, MPIR_Grequest_callback which);

/* registers the greq_class_* MPI_T performance variables */
void MPII_init_grequest_pvars(void);

/* -- the hooks of MPICH's generalized request code (mpir_greq.c) into the engine -- */

/* MPIR_Grequest_start_impl: sets the engine's fields of a new generalized request */
void MPIR_Grequest_engine_init(MPIR_Request * request_ptr);
/* Before a request of these callbacks is made (class_ptr NULL for MPIX_Grequest_start): fails
 * when the progress hook that would poll it cannot be registered. */
int MPIR_Grequest_engine_prepare(MPIX_Grequest_poll_function * poll_fn,
                                 MPIR_Grequest_class * class_ptr);
/* Once the request's callbacks are set: one with a poll_fn joins the polled list unless its
 * class is ordered. */
void MPIR_Grequest_engine_add(MPIR_Request * request_ptr, MPIR_Grequest_class * class_ptr);
/* Whether MPI_Grequest_complete was called on the request (its completion may be held while the
 * engine's poll_fn or wait_fn call on it runs). */
int MPIR_Grequest_engine_is_complete(MPIR_Request * request_ptr);
/* MPI_Grequest_complete of a pending request: the only way a generalized request completes; it
 * leaves the polled list and counts in its class's statistics. free_fn's error, when
 * MPI_Request_free came first. */
int MPIR_Grequest_engine_complete(MPIR_Request * request_ptr);
/* MPIX_Grequest_class_create: the engine's part of a new class (its statistics, its element of the
 * greq_class_* performance variables); MPI_ERR_OTHER when out of memory, and the engine keeps
 * nothing of the class */
int MPIR_Grequest_engine_add_class(MPIR_Grequest_class * class_ptr);

#endif /* MPIR_REQUEST_ENGINE_H_INCLUDED */
