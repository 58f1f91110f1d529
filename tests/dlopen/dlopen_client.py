#!/usr/bin/env python3
"""An interpreter that loads libmpi after it started, as mpi4py does: libmpi.so.12 opened with
ctypes (RTLD_GLOBAL), two threads of the process in it at once. Rank 0 posts two receives, a
second thread waits for one in MPI_Wait, and rank 0 tells rank 1 to send only once it has seen
the other incomplete through MPI_Request_get_status_any (MPI_Testany on stock); then both
check status fields and data, and the second thread makes an erroneous call that must return
MPI_ERR_COUNT through MPI_ERRORS_RETURN.
usage: dlopen_client.py PREFIX series|stock"""
import ctypes
import os
import re
import sys
import threading

PREFIX, MODE = sys.argv[1], sys.argv[2]
HEADER = open(os.path.join(PREFIX, "include", "mpi.h")).read()


def handle(name):
    """A predefined handle's value, as mpi.h defines it: #define NAME ((TYPE)0x...)."""
    return int(re.search(r"#define %s +\(\(\w+\)(0x[0-9a-f]+)\)" % name, HEADER).group(1), 16)


def constant(name):
    return int(re.search(r"#define %s +(-?\d+)" % name, HEADER).group(1))


class Status(ctypes.Structure):
    _fields_ = [("count_lo", ctypes.c_int), ("count_hi_and_cancelled", ctypes.c_int),
                ("MPI_SOURCE", ctypes.c_int), ("MPI_TAG", ctypes.c_int),
                ("MPI_ERROR", ctypes.c_int)]


COMM_WORLD, INT = handle("MPI_COMM_WORLD"), handle("MPI_INT")
REQUEST_NULL, ERRORS_RETURN = handle("MPI_REQUEST_NULL"), handle("MPI_ERRORS_RETURN")
ERR_COUNT, THREAD_MULTIPLE = constant("MPI_ERR_COUNT"), 3
mpi = ctypes.CDLL(os.path.join(PREFIX, "lib", "libmpi.so.12"), mode=ctypes.RTLD_GLOBAL)
failures = []
waiting = threading.Event()  # set by the second thread as it calls MPI_Wait


def expect(what, got, wanted):
    if got != wanted:
        failures.append("%s: %r, expected %r" % (what, got, wanted))


def count_of(status):
    count = ctypes.c_int()
    mpi.MPI_Get_count(ctypes.byref(status), INT, ctypes.byref(count))
    return count.value


def wait_second(request, data):
    try:
        check_second(request, data)
    except Exception as e:  # a dead thread must not pass for a quiet one
        failures.append("second thread: %r" % e)


def check_second(request, data):
    status = Status()
    waiting.set()
    expect("MPI_Wait in the second thread", mpi.MPI_Wait(ctypes.byref(request),
                                                       ctypes.byref(status)), 0)
    expect("second message's source, tag, count", (status.MPI_SOURCE, status.MPI_TAG,
                                                    count_of(status)), (1, 8, 4))
    expect("second message's data", list(data), [5, 6, 7, 8])
    expect("second request after MPI_Wait", request.value, REQUEST_NULL)
    index, flag = ctypes.c_int(), ctypes.c_int()
    requests = (ctypes.c_int * 1)(REQUEST_NULL)
    err = mpi.MPI_Request_get_status_any(-1, requests, ctypes.byref(index), ctypes.byref(flag),
                                         ctypes.byref(status)) if MODE == "series" else \
        mpi.MPI_Testany(-1, requests, ctypes.byref(index), ctypes.byref(flag),
                        ctypes.byref(status))
    error_class = ctypes.c_int()
    mpi.MPI_Error_class(err, ctypes.byref(error_class))
    expect("error class of a negative count", error_class.value, ERR_COUNT)


def rank0():
    first, second = (ctypes.c_int * 4)(), (ctypes.c_int * 4)()
    requests = (ctypes.c_int * 1)()
    request2 = ctypes.c_int()
    mpi.MPI_Irecv(first, 4, INT, 1, 7, COMM_WORLD, ctypes.byref(requests, 0))
    mpi.MPI_Irecv(second, 4, INT, 1, 8, COMM_WORLD, ctypes.byref(request2))
    waiter = threading.Thread(target=wait_second, args=(request2, second))
    waiter.start()
    index, flag, status = ctypes.c_int(-2), ctypes.c_int(0), Status()
    expect("second thread started", waiting.wait(timeout=60), True)
    poll(requests, index, flag, status)
    expect("flag before rank 1 sends", flag.value, 0)
    go = ctypes.c_int(1)
    expect("MPI_Send of the go", mpi.MPI_Send(ctypes.byref(go), 1, INT, 1, 9, COMM_WORLD), 0)
    while not flag.value:
        poll(requests, index, flag, status)
    finish_first(requests, index, status, first)
    waiter.join(timeout=60)
    expect("second thread finished", waiter.is_alive(), False)


def poll(requests, index, flag, status):
    if MODE == "series":
        err = mpi.MPI_Request_get_status_any(1, requests, ctypes.byref(index),
                                             ctypes.byref(flag), ctypes.byref(status))
    else:
        err = mpi.MPI_Testany(1, requests, ctypes.byref(index), ctypes.byref(flag),
                              ctypes.byref(status))
    expect("polling call's return", err, 0)


def finish_first(requests, index, status, first):
    expect("index reported", index.value, 0)
    expect("first message's source, tag, count", (status.MPI_SOURCE, status.MPI_TAG,
                                                   count_of(status)), (1, 7, 4))
    if MODE == "series":
        expect("request left in the array", requests[0] != REQUEST_NULL, True)
        expect("MPI_Wait after get_status_any", mpi.MPI_Wait(ctypes.byref(requests, 0),
                                                              ctypes.c_void_p(1)), 0)
    expect("first request at the end", requests[0], REQUEST_NULL)
    expect("first message's data", list(first), [1, 2, 3, 4])


def rank1():
    requests = (ctypes.c_int * 2)()
    first, second = (ctypes.c_int * 4)(1, 2, 3, 4), (ctypes.c_int * 4)(5, 6, 7, 8)
    go = ctypes.c_int(0)
    expect("MPI_Recv of the go", mpi.MPI_Recv(ctypes.byref(go), 1, INT, 0, 9, COMM_WORLD,
                                              ctypes.c_void_p(1)), 0)
    for i, (data, tag) in enumerate([(first, 7), (second, 8)]):
        expect("MPI_Isend of tag %d" % tag, mpi.MPI_Isend(data, 4, INT, 0, tag, COMM_WORLD,
                                                          ctypes.byref(requests, 4 * i)), 0)
    expect("MPI_Waitall", mpi.MPI_Waitall(2, requests, ctypes.c_void_p(1)), 0)


def main():
    provided, rank = ctypes.c_int(), ctypes.c_int()
    expect("MPI_Init_thread", mpi.MPI_Init_thread(None, None, THREAD_MULTIPLE,
                                                  ctypes.byref(provided)), 0)
    expect("thread level provided", provided.value, THREAD_MULTIPLE)
    mpi.MPI_Comm_set_errhandler(COMM_WORLD, ERRORS_RETURN)
    mpi.MPI_Comm_rank(COMM_WORLD, ctypes.byref(rank))
    rank0() if rank.value == 0 else rank1()
    expect("MPI_Finalize", mpi.MPI_Finalize(), 0)
    # one write: the two ranks' lines reach mpiexec's output whole
    lines = ["rank %d: %s" % (rank.value, f) for f in failures]
    lines.append("rank %d: %d failures" % (rank.value, len(failures)))
    os.write(1, ("\n".join(lines) + "\n").encode())
    return 1 if failures else 0


sys.exit(main())
