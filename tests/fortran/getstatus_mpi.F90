! MPI_Request_get_status_all/_any/_some through `include 'mpif.h'`, or through `use mpi` when
! compiled with -DUSE_MPI_MODULE (run.sh builds it both ways: getstatus_mpif, getstatus_usempi).
!
! The same scenario and checks as getstatus_f08.f90 (read its header), with INTEGER handles
! and INTEGER status arrays; with mpif.h every call goes to the C wrappers of
! src/binding/fortran/mpif_h with no interface checking at all, with `use mpi` through the
! module's interfaces.  Run on exactly 2 processes.  Rank 0's array is
!     reqs(1..4) = MPI_Irecv(tag 1..4 from rank 1),  reqs(5) = MPI_REQUEST_NULL
! Once rank 0 has checked each state, rank 1 sends tag 3; then tag 1; then tags 2 and 4.
! Message t carries t integers 100*t+1 .. 100*t+t.  Fortran indices are 1-based.
!
! Every choice buffer is passed as an INTEGER array element, and each external routine gets
! arguments of one type and rank in every call, so that gfortran (10 and later) accepts the
! calls without -fallow-argument-mismatch.
!
! Prints "PASS getstatus_mpif" on success; on any failed check it writes
! "FAIL getstatus_mpif (rank R): <check>" to standard error and calls MPI_Abort.
#ifdef USE_MPI_MODULE
program getstatus_usempi
    use mpi
#else
program getstatus_mpif
#endif
    implicit none
#ifndef USE_MPI_MODULE
    include 'mpif.h'
#endif

#ifdef USE_MPI_MODULE
    character(len=*), parameter :: prog = 'getstatus_usempi'
#else
    character(len=*), parameter :: prog = 'getstatus_mpif'
#endif
    integer, parameter :: N = 5, NMSG = 4, GO_TAG = 99, GARBAGE = 12345
    double precision, parameter :: WAIT_LIMIT = 30.0d0

    integer :: reqs(N), saved(N), reqs0(1), nulls(3), mixed(2)
    integer :: stats(MPI_STATUS_SIZE, N), allstats(MPI_STATUS_SIZE, N)
    integer :: wstats(MPI_STATUS_SIZE, N), st(MPI_STATUS_SIZE)
    integer, asynchronous :: rbuf(NMSG, NMSG), pbuf(1)
    integer :: sbuf(NMSG), token(1)
    integer :: rank, nprocs, i, j, t, idx, outcount, inds(N), ierr
    logical :: flag
    double precision :: deadline

    rank = -1
    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    if (nprocs /= 2) call fail('must run on exactly 2 processes (mpiexec -n 2)')

    ! ---- empty cases, on both ranks --------------------------------------------------
    ! count 0
    flag = .false.
    call MPI_Request_get_status_all(0, reqs0, flag, stats, ierr)
    call expect_ok(ierr, 'get_status_all, count 0')
    call expect_true(flag, 'get_status_all, count 0: flag')
    flag = .false.
    call MPI_Request_get_status_all(0, reqs0, flag, MPI_STATUSES_IGNORE, ierr)
    call expect_true(flag, 'get_status_all, count 0, MPI_STATUSES_IGNORE: flag')
    call preset(st)
    idx = -7
    flag = .false.
    call MPI_Request_get_status_any(0, reqs0, idx, flag, st, ierr)
    call expect_ok(ierr, 'get_status_any, count 0')
    call expect_true(flag, 'get_status_any, count 0: flag')
    call expect_int(idx, MPI_UNDEFINED, 'get_status_any, count 0: index')
    call expect_empty(st, 'get_status_any, count 0: status')
    idx = -7
    flag = .false.
    call MPI_Request_get_status_any(0, reqs0, idx, flag, MPI_STATUS_IGNORE, ierr)
    call expect_true(flag, 'get_status_any, count 0, MPI_STATUS_IGNORE: flag')
    call expect_int(idx, MPI_UNDEFINED, 'get_status_any, count 0, MPI_STATUS_IGNORE: index')
    outcount = -7
    call MPI_Request_get_status_some(0, reqs0, outcount, inds, stats, ierr)
    call expect_ok(ierr, 'get_status_some, count 0')
    call expect_int(outcount, MPI_UNDEFINED, 'get_status_some, count 0: outcount')
    outcount = -7
    call MPI_Request_get_status_some(0, reqs0, outcount, inds, MPI_STATUSES_IGNORE, ierr)
    call expect_int(outcount, MPI_UNDEFINED, 'get_status_some, count 0, MPI_STATUSES_IGNORE: outcount')

    ! only null requests
    nulls = MPI_REQUEST_NULL
    call check_null_or_inactive(nulls, 3, 'three null requests')

    ! a null and an inactive (never started) persistent request
    call MPI_Recv_init(pbuf(1), 1, MPI_INTEGER, rank, 77, MPI_COMM_WORLD, mixed(2), ierr)
    mixed(1) = MPI_REQUEST_NULL
    call check_null_or_inactive(mixed, 2, 'null + inactive persistent request')
    if (mixed(2) == MPI_REQUEST_NULL) call fail('inactive persistent request: freed by a get_status call')
    call MPI_Request_free(mixed(2), ierr)

    ! ---- messages --------------------------------------------------------------------
    if (rank == 1) then
        call MPI_Recv(token(1), 1, MPI_INTEGER, 0, GO_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        call send_msg(3)
        call MPI_Recv(token(1), 1, MPI_INTEGER, 0, GO_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        call send_msg(1)
        call MPI_Recv(token(1), 1, MPI_INTEGER, 0, GO_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        call send_msg(2)
        call send_msg(4)
    else
        rbuf = -1
        do t = 1, NMSG
            call MPI_Irecv(rbuf(1, t), t, MPI_INTEGER, 1, t, MPI_COMM_WORLD, reqs(t), ierr)
        end do
        reqs(N) = MPI_REQUEST_NULL
        saved = reqs

        ! -- step 0: rank 1 has sent nothing yet, every receive is pending
        idx = -7
        flag = .true.
        call MPI_Request_get_status_any(N, reqs, idx, flag, st, ierr)
        call expect_false(flag, 'step 0, get_status_any (all pending): flag')
        call expect_int(idx, MPI_UNDEFINED, 'step 0, get_status_any (all pending): index')
        outcount = -7
        call MPI_Request_get_status_some(N, reqs, outcount, inds, stats, ierr)
        call expect_int(outcount, 0, 'step 0, get_status_some (all pending): outcount')
        outcount = -7
        call MPI_Request_get_status_some(N, reqs, outcount, inds, MPI_STATUSES_IGNORE, ierr)
        call expect_int(outcount, 0, 'step 0, get_status_some (all pending), MPI_STATUSES_IGNORE: outcount')
        flag = .true.
        call MPI_Request_get_status_all(N, reqs, flag, stats, ierr)
        call expect_false(flag, 'step 0, get_status_all (all pending): flag')
        call expect_unchanged('step 0')
        token = 1
        call MPI_Send(token(1), 1, MPI_INTEGER, 1, GO_TAG, MPI_COMM_WORLD, ierr)

        ! -- step 1: only tag 3 (index 3) can complete
        deadline = MPI_Wtime() + WAIT_LIMIT
        do
            call preset(st)
            idx = -7
            call MPI_Request_get_status_any(N, reqs, idx, flag, st, ierr)
            call expect_ok(ierr, 'step 1, get_status_any')
            if (flag) exit
            call expect_false(flag, 'step 1, get_status_any while pending: flag')
            call expect_int(idx, MPI_UNDEFINED, 'step 1, get_status_any while pending: index')
            if (MPI_Wtime() > deadline) call fail('step 1: message with tag 3 never reported')
        end do
        call expect_true(flag, 'step 1, get_status_any: flag')
        call expect_int(idx, 3, 'step 1, get_status_any: index (1-based)')
        call expect_msg_status(st, 3, 'step 1, get_status_any: status')
        call expect_unchanged('step 1, after get_status_any')
        ! not freed, not deactivated: reported again
        idx = -7
        call MPI_Request_get_status_any(N, reqs, idx, flag, MPI_STATUS_IGNORE, ierr)
        call expect_true(flag, 'step 1, get_status_any again, MPI_STATUS_IGNORE: flag')
        call expect_int(idx, 3, 'step 1, get_status_any again, MPI_STATUS_IGNORE: index')
        flag = .true.
        call MPI_Request_get_status_all(N, reqs, flag, stats, ierr)
        call expect_ok(ierr, 'step 1, get_status_all')
        call expect_false(flag, 'step 1, get_status_all (2 of 4 pending): flag')
        flag = .true.
        call MPI_Request_get_status_all(N, reqs, flag, MPI_STATUSES_IGNORE, ierr)
        call expect_false(flag, 'step 1, get_status_all, MPI_STATUSES_IGNORE: flag')
        call preset_all(stats)
        inds = -7
        call MPI_Request_get_status_some(N, reqs, outcount, inds, stats, ierr)
        call expect_ok(ierr, 'step 1, get_status_some')
        call expect_int(outcount, 1, 'step 1, get_status_some: outcount')
        call expect_int(inds(1), 3, 'step 1, get_status_some: index (1-based)')
        call expect_msg_status(stats(:, 1), 3, 'step 1, get_status_some: status')
        inds = -7
        call MPI_Request_get_status_some(N, reqs, outcount, inds, MPI_STATUSES_IGNORE, ierr)
        call expect_int(outcount, 1, 'step 1, get_status_some, MPI_STATUSES_IGNORE: outcount')
        call expect_int(inds(1), 3, 'step 1, get_status_some, MPI_STATUSES_IGNORE: index')
        call expect_unchanged('step 1, after all get_status calls')

        ! -- step 2: tag 1 (index 1) completes too
        call MPI_Send(token(1), 1, MPI_INTEGER, 1, GO_TAG, MPI_COMM_WORLD, ierr)
        deadline = MPI_Wtime() + WAIT_LIMIT
        do
            call preset_all(stats)
            inds = -7
            call MPI_Request_get_status_some(N, reqs, outcount, inds, stats, ierr)
            if (outcount /= 1 .and. outcount /= 2) &
                call fail_int('step 2, get_status_some: outcount not 1 or 2', outcount)
            if (outcount == 2) exit
            call expect_int(inds(1), 3, 'step 2, get_status_some before tag 1: index')
            if (MPI_Wtime() > deadline) call fail('step 2: message with tag 1 never reported')
        end do
        call expect_index_set(inds, outcount, [1, 3], 'step 2, get_status_some')
        do j = 1, outcount
            call expect_msg_status(stats(:, j), inds(j), 'step 2, get_status_some: status')
        end do
        call preset(st)
        call MPI_Request_get_status_any(N, reqs, idx, flag, st, ierr)
        call expect_true(flag, 'step 2, get_status_any: flag')
        if (idx /= 1 .and. idx /= 3) call fail_int('step 2, get_status_any: index not 1 or 3', idx)
        call expect_msg_status(st, idx, 'step 2, get_status_any: status')
        flag = .true.
        call MPI_Request_get_status_all(N, reqs, flag, stats, ierr)
        call expect_false(flag, 'step 2, get_status_all (2 of 4 pending): flag')
        call expect_unchanged('step 2')

        ! -- step 3: tags 2 and 4 complete; all four are complete
        call MPI_Send(token(1), 1, MPI_INTEGER, 1, GO_TAG, MPI_COMM_WORLD, ierr)
        deadline = MPI_Wtime() + WAIT_LIMIT
        do
            call preset_all(stats)
            call MPI_Request_get_status_all(N, reqs, flag, stats, ierr)
            call expect_ok(ierr, 'step 3, get_status_all')
            if (flag) exit
            if (MPI_Wtime() > deadline) call fail('step 3: get_status_all never set flag')
        end do
        call expect_true(flag, 'step 3, get_status_all: flag')
        do i = 1, NMSG
            call expect_msg_status(stats(:, i), i, 'step 3, get_status_all: status of a receive')
        end do
        call expect_empty(stats(:, N), 'step 3, get_status_all: status of MPI_REQUEST_NULL')
        allstats = stats
        flag = .false.
        call MPI_Request_get_status_all(N, reqs, flag, MPI_STATUSES_IGNORE, ierr)
        call expect_true(flag, 'step 3, get_status_all, MPI_STATUSES_IGNORE: flag')
        call preset_all(stats)
        call MPI_Request_get_status_some(N, reqs, outcount, inds, stats, ierr)
        call expect_index_set(inds, outcount, [1, 2, 3, 4], 'step 3, get_status_some')
        do j = 1, outcount
            call expect_msg_status(stats(:, j), inds(j), 'step 3, get_status_some: status')
        end do
        call MPI_Request_get_status_some(N, reqs, outcount, inds, MPI_STATUSES_IGNORE, ierr)
        call expect_index_set(inds, outcount, [1, 2, 3, 4], 'step 3, get_status_some, MPI_STATUSES_IGNORE')
        call preset(st)
        call MPI_Request_get_status_any(N, reqs, idx, flag, st, ierr)
        call expect_true(flag, 'step 3, get_status_any: flag')
        if (idx < 1 .or. idx > NMSG) call fail_int('step 3, get_status_any: index not in 1..4', idx)
        call expect_msg_status(st, idx, 'step 3, get_status_any: status')
        call expect_unchanged('step 3, requests still active after every get_status form')

        ! -- step 4: MPI_Waitall completes them, with the same statuses and the data
        call preset_all(wstats)
        call MPI_Waitall(N, reqs, wstats, ierr)
        call expect_ok(ierr, 'step 4, MPI_Waitall')
        do i = 1, N
            if (reqs(i) /= MPI_REQUEST_NULL) call fail_int('step 4, MPI_Waitall: request not freed, index', i)
        end do
        do i = 1, NMSG
            call expect_int(wstats(MPI_SOURCE, i), allstats(MPI_SOURCE, i), &
                            'step 4, MPI_Waitall vs get_status_all: MPI_SOURCE')
            call expect_int(wstats(MPI_TAG, i), allstats(MPI_TAG, i), &
                            'step 4, MPI_Waitall vs get_status_all: MPI_TAG')
            call expect_msg_status(wstats(:, i), i, 'step 4, MPI_Waitall: status')
            do j = 1, i
                call expect_int(rbuf(j, i), 100 * i + j, 'step 4, received data')
            end do
            do j = i + 1, NMSG
                call expect_int(rbuf(j, i), -1, 'step 4, receive buffer beyond the message')
            end do
        end do
        call expect_empty(wstats(:, N), 'step 4, MPI_Waitall: status of MPI_REQUEST_NULL')
        ! the completed array is all null now
        call check_null_or_inactive(reqs, N, 'array after MPI_Waitall')
        ! -- step 5 (patch 0046): MPI_Testany/Waitany/Testsome on the same bindings answer
        !    MPI_UNDEFINED on an array with no active request, and 1-based indices
        call MPI_Testany(N, reqs, idx, flag, st, ierr)
        call expect_true(flag, 'step 5, MPI_Testany on null requests: flag')
        call expect_int(idx, MPI_UNDEFINED, 'step 5, MPI_Testany on null requests: index')
        call MPI_Waitany(N, reqs, idx, MPI_STATUS_IGNORE, ierr)
        call expect_int(idx, MPI_UNDEFINED, 'step 5, MPI_Waitany on null requests: index')
        call MPI_Testsome(N, reqs, outcount, inds, MPI_STATUSES_IGNORE, ierr)
        call expect_int(outcount, MPI_UNDEFINED, 'step 5, MPI_Testsome on null requests: outcount')
        ! one receive from itself at index 2, complete before the calls
        call MPI_Irecv(pbuf, 1, MPI_INTEGER, 0, 77, MPI_COMM_WORLD, reqs(2), ierr)
        call MPI_Send(token, 1, MPI_INTEGER, 0, 77, MPI_COMM_WORLD, ierr)
        deadline = MPI_Wtime() + WAIT_LIMIT
        do
            call MPI_Request_get_status_any(N, reqs, idx, flag, MPI_STATUS_IGNORE, ierr)
            if (flag) exit
            if (MPI_Wtime() > deadline) call fail('step 5: receive from itself never complete')
        end do
        call expect_int(idx, 2, 'step 5, get_status_any: index')
        call MPI_Testsome(N, reqs, outcount, inds, MPI_STATUSES_IGNORE, ierr)
        call expect_int(outcount, 1, 'step 5, MPI_Testsome: outcount')
        call expect_int(inds(1), 2, 'step 5, MPI_Testsome: index')
        call MPI_Irecv(pbuf, 1, MPI_INTEGER, 0, 78, MPI_COMM_WORLD, reqs(4), ierr)
        call MPI_Send(token, 1, MPI_INTEGER, 0, 78, MPI_COMM_WORLD, ierr)
        call MPI_Waitany(N, reqs, idx, MPI_STATUS_IGNORE, ierr)
        call expect_int(idx, 4, 'step 5, MPI_Waitany: index')
    end if

    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 0) print '(a)', 'PASS ' // prog
    call MPI_Finalize(ierr)

contains

    subroutine send_msg(tag)
        integer, intent(in) :: tag
        integer :: k, e
        do k = 1, tag
            sbuf(k) = 100 * tag + k
        end do
        call MPI_Send(sbuf(1), tag, MPI_INTEGER, 0, tag, MPI_COMM_WORLD, e)
    end subroutine send_msg

    ! The three forms on an array with no active request (count > 0).
    subroutine check_null_or_inactive(r, n, what)
        integer, intent(in) :: n
        integer, intent(in) :: r(n)
        character(len=*), intent(in) :: what
        integer :: before(n), s(MPI_STATUS_SIZE, n), s1(MPI_STATUS_SIZE)
        integer :: k, ix, oc, ind(n), e
        logical :: f

        before = r
        call preset_all(s)
        f = .false.
        call MPI_Request_get_status_all(n, r, f, s, e)
        call expect_ok(e, 'get_status_all, ' // what)
        call expect_true(f, 'get_status_all, ' // what // ': flag')
        do k = 1, n
            call expect_empty(s(:, k), 'get_status_all, ' // what // ': status')
        end do
        f = .false.
        call MPI_Request_get_status_all(n, r, f, MPI_STATUSES_IGNORE, e)
        call expect_true(f, 'get_status_all, ' // what // ', MPI_STATUSES_IGNORE: flag')
        call preset(s1)
        ix = -7
        f = .false.
        call MPI_Request_get_status_any(n, r, ix, f, s1, e)
        call expect_ok(e, 'get_status_any, ' // what)
        call expect_true(f, 'get_status_any, ' // what // ': flag')
        call expect_int(ix, MPI_UNDEFINED, 'get_status_any, ' // what // ': index')
        call expect_empty(s1, 'get_status_any, ' // what // ': status')
        ix = -7
        f = .false.
        call MPI_Request_get_status_any(n, r, ix, f, MPI_STATUS_IGNORE, e)
        call expect_true(f, 'get_status_any, ' // what // ', MPI_STATUS_IGNORE: flag')
        call expect_int(ix, MPI_UNDEFINED, 'get_status_any, ' // what // ', MPI_STATUS_IGNORE: index')
        oc = -7
        call MPI_Request_get_status_some(n, r, oc, ind, s, e)
        call expect_ok(e, 'get_status_some, ' // what)
        call expect_int(oc, MPI_UNDEFINED, 'get_status_some, ' // what // ': outcount')
        oc = -7
        call MPI_Request_get_status_some(n, r, oc, ind, MPI_STATUSES_IGNORE, e)
        call expect_int(oc, MPI_UNDEFINED, 'get_status_some, ' // what // ', MPI_STATUSES_IGNORE: outcount')
        do k = 1, n
            if (r(k) /= before(k)) call fail('get_status calls changed a request handle: ' // what)
        end do
    end subroutine check_null_or_inactive

    subroutine expect_unchanged(what)
        character(len=*), intent(in) :: what
        integer :: k
        do k = 1, N
            if (reqs(k) /= saved(k)) call fail_int(what // ': request handle changed, index', k)
        end do
    end subroutine expect_unchanged

    ! inds(1:oc) must be exactly the set want (any order: the order is the implementation's)
    subroutine expect_index_set(ind, oc, want, what)
        integer, intent(in) :: ind(:), oc, want(:)
        character(len=*), intent(in) :: what
        integer :: k
        call expect_int(oc, size(want), what // ': outcount')
        do k = 1, size(want)
            if (count(ind(1:oc) == want(k)) /= 1) &
                call fail_int(what // ': index missing or repeated (1-based)', want(k))
        end do
    end subroutine expect_index_set

    subroutine expect_msg_status(s, tag, what)
        integer, intent(in) :: s(MPI_STATUS_SIZE)
        integer, intent(in) :: tag
        character(len=*), intent(in) :: what
        integer :: c, e
        call expect_int(s(MPI_SOURCE), 1, what // ': MPI_SOURCE')
        call expect_int(s(MPI_TAG), tag, what // ': MPI_TAG')
        call MPI_Get_count(s, MPI_INTEGER, c, e)
        call expect_int(c, tag, what // ': MPI_Get_count')
    end subroutine expect_msg_status

    subroutine expect_empty(s, what)
        integer, intent(in) :: s(MPI_STATUS_SIZE)
        character(len=*), intent(in) :: what
        integer :: c, e
        call expect_int(s(MPI_SOURCE), MPI_ANY_SOURCE, what // ' not empty: MPI_SOURCE')
        call expect_int(s(MPI_TAG), MPI_ANY_TAG, what // ' not empty: MPI_TAG')
        call expect_int(s(MPI_ERROR), MPI_SUCCESS, what // ' not empty: MPI_ERROR')
        call MPI_Get_count(s, MPI_INTEGER, c, e)
        call expect_int(c, 0, what // ' not empty: MPI_Get_count')
    end subroutine expect_empty

    subroutine preset(s)
        integer, intent(out) :: s(MPI_STATUS_SIZE)
        s = GARBAGE
    end subroutine preset

    subroutine preset_all(s)
        integer, intent(out) :: s(:, :)
        s = GARBAGE
    end subroutine preset_all

    subroutine expect_ok(e, what)
        integer, intent(in) :: e
        character(len=*), intent(in) :: what
        call expect_int(e, MPI_SUCCESS, what // ': ierror')
    end subroutine expect_ok

    ! LOGICAL results: the value and its representation (the one of the literal)
    subroutine expect_true(f, what)
        logical, intent(in) :: f
        character(len=*), intent(in) :: what
        if (.not. f) call fail(what // ' is .false., expected .true.')
        if (transfer(f, 0) /= transfer(.true., 0)) &
            call fail_int(what // ' is not the canonical .true., bits', transfer(f, 0))
    end subroutine expect_true

    subroutine expect_false(f, what)
        logical, intent(in) :: f
        character(len=*), intent(in) :: what
        if (transfer(f, 0) /= transfer(.false., 0)) &
            call fail_int(what // ' is not .false., bits', transfer(f, 0))
    end subroutine expect_false

    subroutine expect_int(got, want, what)
        integer, intent(in) :: got, want
        character(len=*), intent(in) :: what
        character(len=64) :: buf
        if (got /= want) then
            write (buf, '(a,i0,a,i0)') ' = ', got, ', expected ', want
            call fail(what // trim(buf))
        end if
    end subroutine expect_int

    subroutine fail_int(what, v)
        character(len=*), intent(in) :: what
        integer, intent(in) :: v
        character(len=32) :: buf
        write (buf, '(a,i0)') ' ', v
        call fail(what // trim(buf))
    end subroutine fail_int

    subroutine fail(what)
        use, intrinsic :: iso_fortran_env, only: error_unit
        character(len=*), intent(in) :: what
        integer :: e
        double precision :: t0
        write (error_unit, '(a,i0,a)') 'FAIL ' // prog // ' (rank ', rank, '): ' // what
        flush (error_unit)
        ! give mpiexec time to forward the line before MPI_Abort ends the job
        t0 = MPI_Wtime()
        do while (MPI_Wtime() - t0 < 0.5d0)
        end do
        call MPI_Abort(MPI_COMM_WORLD, 1, e)
        stop 1
    end subroutine fail

end program
