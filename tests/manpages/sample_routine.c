/* A fixed doc comment for maint/make-manpages --check: sample_routine.3 is the page
 * doctext -man -quotefmt -nolocation sample_docnotes sample_routine.c writes for it
 * (dated 1/2/2024), but for the one deviation of manpages/, the apostrophe kept in
 * "request's". */

/*@
   MPIX_Sample_call - Test a sample of requests
   without changing them

Input Parameters:
+ count - length of 'array_of_requests'
  (non-negative integer)
- array_of_requests - array of requests (handle)

Input/Output Parameters:
. state - a state, see `Notes`

Output Parameters:
. flag - true when done (logical)

Notes:
'MPIX_Sample_call' works like 'MPI_Testall'.
It keeps the request's cursor.  Write '' for a quote, and \ as is.
.vb
    MPIX_Sample_call(n, reqs, &state, &flag);
.ve

An escaped colon\:
.N SampleSafe

.N fortran

.N Errors
.N MPI_SUCCESS

.N MPI_ERR_ARG

.seealso: MPI_Testall, MPI_Request_get_status
@*/
int MPIX_Sample_call(int count, MPI_Request array_of_requests[],
                     int *state, int *flag)
{
    return 0;
}
