/*
 * Copyright (C) by the MPICH request engine extension authors.
 *     Under MPICH's license: see COPYRIGHT in top-level directory
 */

#include "mpiimpl.h"

/* MPI_Request_get_status_all, _any and _some: MPI_Testall, _any and _some with the same
 * progress and the same fairness cursor, but MPIR_Request_status_peek where they complete:
 * nothing here writes array_of_requests. */

/* Converts and validates the handles of one batch in one pass, as MPIR_Testall does, and
 * returns its requests_property; an MPI_Message is refused as MPI_Waitall refuses it. */
static int convert_batch(int first, int count, const MPI_Request array_of_requests[],
                         MPIR_Request * request_ptrs[], int *property)
{
    int mpi_errno = MPI_SUCCESS;

    *property = MPIR_REQUESTS_PROPERTY__OPT_ALL;
    for (int i = first; i < first + count; i++) {
        if (array_of_requests[i] == MPI_REQUEST_NULL) {
            request_ptrs[i] = NULL;
            *property &= ~MPIR_REQUESTS_PROPERTY__NO_NULL;
            continue;
        }
        MPIR_Request_get_ptr(array_of_requests[i], request_ptrs[i]);
#ifdef HAVE_ERROR_CHECKING
        MPID_BEGIN_ERROR_CHECKS;
        {
            MPIR_Request_valid_ptr(request_ptrs[i], mpi_errno);
            MPIR_ERR_CHECK(mpi_errno);
            MPIR_ERR_CHKANDJUMP1(request_ptrs[i]->kind == MPIR_REQUEST_KIND__MPROBE, mpi_errno,
                                 MPI_ERR_REQUEST, "**msgnotreq", "**msgnotreq %d", i);
        }
        MPID_END_ERROR_CHECKS;
#endif
        if (request_ptrs[i]->kind != MPIR_REQUEST_KIND__RECV &&
            request_ptrs[i]->kind != MPIR_REQUEST_KIND__SEND) {
            *property &= ~MPIR_REQUESTS_PROPERTY__SEND_RECV_ONLY;
            if (request_ptrs[i]->kind == MPIR_REQUEST_KIND__GREQUEST) {
                *property &= ~MPIR_REQUESTS_PROPERTY__NO_GREQUESTS;
            }
        }
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Null handles become NULL pointers (counted in *n_null); an MPI_Message is refused by the
 * binding's check of each request, as MPI_Waitall refuses it. */
static void prepare_request_ptrs(int count, const MPI_Request array_of_requests[],
                                 MPIR_Request * request_ptrs[], int *n_null)
{
    *n_null = 0;
    for (int i = 0; i < count; i++) {
        if (array_of_requests[i] == MPI_REQUEST_NULL) {
            request_ptrs[i] = NULL;
            (*n_null)++;
        }
    }
}

#define NOT_QUERIED (-1)     /* error codes are never negative */

/* MPI_T request_complete events of a get_status_all call that found every request complete:
 * one per active request, with its index (the looks at the requests raise none, since the call
 * reports nothing while one is pending) */
static void report_all_completions(int count, MPIR_Request * request_ptrs[],
                                   const int queried_rc[])
{
    for (int i = 0; i < count; i++) {
        MPIR_Request *req = request_ptrs[i];
        if (req == NULL || !MPIR_Request_is_active(req)) {
            continue;
        }
        MPIR_REQUEST_USER_INDEX(i);
        MPIR_REQUEST_COMPLETE_EVENT(req, (req->kind == MPIR_REQUEST_KIND__GREQUEST) ?
                                    queried_rc[i] : MPIR_Request_get_error(req));
    }
}

int MPIR_Request_get_status_all_impl(int count, const MPI_Request array_of_requests[],
                                     int *flag, MPI_Status array_of_statuses[])
{
    int mpi_errno = MPI_SUCCESS;
    int all_complete = FALSE;
    /* events only once the flag is known (report_all_completions): the looks raise none */
    int reporting_call = MPIR_Request_call_record.call;
    if (reporting_call != MPIR_REQUEST_CALL__CALLBACK) {
        MPIR_Request_call_record.call = MPIR_REQUEST_CALL__NONE;
    }
    int n_completed = 0;
    int proc_failure = FALSE;
    int progress_made = 0;
    int ignoring_status = (array_of_statuses == MPI_STATUSES_IGNORE);
    MPIR_Request *request_ptr_array[MPIR_REQUEST_PTR_ARRAY_SIZE];
    MPIR_Request **request_ptrs = request_ptr_array;
    /* the error of each generalized request its batch found complete, or NOT_QUERIED */
    int *queried_rc = NULL;
    MPIR_CHKLMEM_DECL(2);

    /* As MPI_Testall, the handles are converted batch by batch, just before the device sees
     * the batch (the binding leaves them alone) */
    if (count > MPIR_REQUEST_PTR_ARRAY_SIZE) {
        MPIR_CHKLMEM_MALLOC(request_ptrs, MPIR_Request **, count * sizeof(MPIR_Request *),
                            mpi_errno, "request pointers", MPL_MEM_OBJECT);
    }

    for (int ii = 0; ii < count; ii += MPIR_CVAR_REQUEST_BATCH_SIZE) {
        int icount = MPL_MIN(count - ii, MPIR_CVAR_REQUEST_BATCH_SIZE);
        int batch_flag;
        int property;

        mpi_errno = convert_batch(ii, icount, array_of_requests, request_ptrs, &property);
        MPIR_ERR_CHECK(mpi_errno);
        mpi_errno = MPID_Testall(icount, &request_ptrs[ii], &batch_flag,
                                 ignoring_status ? MPI_STATUSES_IGNORE : &array_of_statuses[ii],
                                 property | progress_made);
        MPIR_ERR_CHECK(mpi_errno);
        /* the first batch made the call's one progress poll, as in MPI_Testall */
        progress_made = MPIR_REQUESTS_PROPERTY__PROGRESS_MADE;
        if (!(property & MPIR_REQUESTS_PROPERTY__NO_GREQUESTS) && queried_rc == NULL) {
            MPIR_CHKLMEM_MALLOC(queried_rc, int *, count * sizeof(int), mpi_errno,
                                "generalized request errors", MPL_MEM_OBJECT);
            for (int i = 0; i < count; i++) {
                queried_rc[i] = NOT_QUERIED;
            }
        }

        for (int i = ii; i < ii + icount; i++) {
            MPIR_Request *req = request_ptrs[i];

            if (req == NULL) {
                n_completed++;
            } else if (MPIR_Request_is_complete(req)) {
                int rc;
                if (req->kind == MPIR_REQUEST_KIND__GREQUEST) {
                    /* Its error comes from query_fn, which fills the status too: call it
                     * once per call and keep both (the statuses are undefined unless the
                     * flag is true or MPI_ERR_IN_STATUS is returned). */
                    MPI_Status scratch;
                    rc = MPIR_Request_status_peek(req, ignoring_status ? &scratch :
                                                  &array_of_statuses[i]);
                    queried_rc[i] = rc;
                } else {
                    rc = MPIR_Request_get_error(req);
                    if (rc != MPI_SUCCESS) {
                        /* in index order with the generalized requests' failures */
                        MPIR_Request_note_failure(req);
                    }
                }
                n_completed++;
                if (rc != MPI_SUCCESS) {
                    if (MPIR_ERR_GET_CLASS(rc) == MPIX_ERR_PROC_FAILED ||
                        MPIR_ERR_GET_CLASS(rc) == MPIX_ERR_PROC_FAILED_PENDING) {
                        proc_failure = TRUE;
                    }
                    mpi_errno = MPI_ERR_IN_STATUS;
                }
            } else if (unlikely(MPIR_Request_is_anysrc_mismatched(req))) {
                proc_failure = TRUE;
                mpi_errno = MPI_ERR_IN_STATUS;
            }
        }
    }

    *flag = (n_completed == count) ? TRUE : FALSE;
    all_complete = *flag;

    /* As MPI_Testall: statuses are written only when all are complete or one failed. */
    if (ignoring_status || !(*flag || mpi_errno == MPI_ERR_IN_STATUS)) {
        goto fn_exit;
    }

    for (int i = 0; i < count; i++) {
        MPIR_Request *req = request_ptrs[i];
        MPI_Status *status = &array_of_statuses[i];

        if (req == NULL || (MPIR_Request_is_complete(req) && !MPIR_Request_is_active(req))) {
            /* null and inactive requests */
            MPIR_Status_set_empty(status);
        } else if (MPIR_Request_is_complete(req) &&
                   (req->kind != MPIR_REQUEST_KIND__GREQUEST || queried_rc[i] != NOT_QUERIED)) {
            /* a generalized request that completed after its batch was looked at (progress in
             * a later batch, another thread) is reported pending, as the flag says */
            int rc = (req->kind == MPIR_REQUEST_KIND__GREQUEST) ? queried_rc[i] :
                MPIR_Request_status_peek(req, status);
            if (mpi_errno == MPI_ERR_IN_STATUS) {
                status->MPI_ERROR = rc;
            }
        } else if (mpi_errno == MPI_ERR_IN_STATUS) {
            status->MPI_ERROR = proc_failure ? MPIX_ERR_PROC_FAILED_PENDING : MPI_ERR_PENDING;
        }
    }

  fn_exit:
    MPIR_Request_call_record.call = reporting_call;
    if (all_complete && MPIR_T_events_listening()) {
        report_all_completions(count, request_ptrs, queried_rc);
    }
    MPIR_CHKLMEM_FREEALL();
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIR_Request_get_status_any_impl(int count, const MPI_Request array_of_requests[],
                                     MPIR_Request * request_ptrs[], int *indx, int *flag,
                                     MPI_Status * status)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Request_first_pass_t pass;
    int start;

    /* the scan visits index MPIR_Request_scan_index(k, start, count) at its k-th step */
    start = MPIR_Request_scan_begin(array_of_requests, request_ptrs, count);

    /* As MPI_Testany: a request that is already complete is reported without progress;
     * complete but inactive (persistent) requests are skipped. */
    MPIR_Request_scan_first_pass(count, array_of_requests, request_ptrs, start, &pass);
    *indx = pass.indx;
    *flag = (pass.indx != MPI_UNDEFINED);

    if (*indx == MPI_UNDEFINED && pass.n_null == count) {
        *flag = TRUE;
        MPIR_Status_set_empty(status);
        MPIR_Request_scan_forget(array_of_requests, count);
        goto fn_exit;
    }

    if (*indx == MPI_UNDEFINED) {
        mpi_errno = MPIR_Request_scan_device_any(count, request_ptrs, start, pass.first_pending,
                                                 indx, flag, status);
        MPIR_ERR_CHECK(mpi_errno);
    }

    if (*indx != MPI_UNDEFINED) {
        MPIR_Request_scan_reported(array_of_requests, count, *indx, request_ptrs[*indx]);
        /* the request's own error, as MPI_Testany returns it */
        MPIR_REQUEST_USER_INDEX(*indx);
        mpi_errno = MPIR_Request_status_peek(request_ptrs[*indx], status);
        MPIR_ERR_CHECK(mpi_errno);
    } else if (*flag) {
        /* no active request */
        MPIR_Status_set_empty(status);
        MPIR_Request_scan_forget(array_of_requests, count);
    } else if (unlikely(pass.last_disabled_anysource != -1)) {
        MPIR_ERR_SET(mpi_errno, MPIX_ERR_PROC_FAILED_PENDING, "**failure_pending");
        if (status != MPI_STATUS_IGNORE) {
            status->MPI_ERROR = mpi_errno;
        }
        *flag = TRUE;
        goto fn_fail;
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIR_Request_get_status_some_impl(int incount, const MPI_Request array_of_requests[],
                                      MPIR_Request * request_ptrs[], int *outcount,
                                      int array_of_indices[], MPI_Status array_of_statuses[])
{
    int mpi_errno = MPI_SUCCESS;
    int ignoring_status = (array_of_statuses == MPI_STATUSES_IGNORE);
    int n_null;
    int start;

    *outcount = 0;
    prepare_request_ptrs(incount, array_of_requests, request_ptrs, &n_null);
    if (n_null == incount) {
        *outcount = MPI_UNDEFINED;
        MPIR_Request_scan_forget(array_of_requests, incount);
        goto fn_exit;
    }

    /* where the fairness cursor stands: the order the complete requests are reported in */
    start = MPIR_Request_scan_begin(array_of_requests, request_ptrs, incount);

    if (unlikely(MPIR_CVAR_ENABLE_FT)) {
        for (int i = 0; i < incount; i++) {
            if (request_ptrs[i] != NULL && MPIR_Request_is_anysrc_mismatched(request_ptrs[i])) {
                int rc = MPI_SUCCESS;
                MPIR_ERR_SET(rc, MPIX_ERR_PROC_FAILED_PENDING, "**failure_pending");
                if (!ignoring_status) {
                    /* where MPI_Testsome writes it: at the array index */
                    array_of_statuses[i].MPI_ERROR = rc;
                }
                mpi_errno = MPI_ERR_IN_STATUS;
            }
        }
    }

    {
        int rc = MPID_Testsome(incount, request_ptrs, outcount, array_of_indices,
                               array_of_statuses);
        if (rc != MPI_SUCCESS) {
            mpi_errno = rc;
            goto fn_fail;
        }
    }
    if (*outcount == MPI_UNDEFINED) {
        MPIR_Request_scan_forget(array_of_requests, incount);
        goto fn_exit;
    }
    MPIR_Request_scan_order(array_of_indices, *outcount, start);
    if (*outcount > 0) {
        int last = array_of_indices[*outcount - 1];
        MPIR_Request_scan_reported(array_of_requests, incount, last, request_ptrs[last]);
    }

    /* As MPI_Testsome: the status of each reported request; MPI_ERROR is written only
     * when MPI_ERR_IN_STATUS is returned, then for every reported request. */
    for (int j = 0; j < *outcount; j++) {
        int k = array_of_indices[j];
        MPI_Status *status = ignoring_status ? MPI_STATUS_IGNORE : &array_of_statuses[j];
        MPIR_REQUEST_USER_INDEX(k);
        int rc = MPIR_Request_status_peek(request_ptrs[k], status);
        if (rc == MPI_SUCCESS) {
            request_ptrs[k] = NULL;     /* scratch: marks success for the pass below */
        } else {
            mpi_errno = MPI_ERR_IN_STATUS;
            if (status != MPI_STATUS_IGNORE) {
                status->MPI_ERROR = rc;
            }
        }
    }
    if (mpi_errno == MPI_ERR_IN_STATUS && !ignoring_status) {
        for (int j = 0; j < *outcount; j++) {
            if (request_ptrs[array_of_indices[j]] == NULL) {
                array_of_statuses[j].MPI_ERROR = MPI_SUCCESS;
            }
        }
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
