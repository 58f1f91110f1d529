// "request_events": a small QMPI tool built on the request_engine MPI_T event source. Per
// communicator it keeps a histogram of completion latency (from the call that posted the request,
// MPI_Isend ... MPI_Start, to the completion call that reported it) and counts by request kind;
// per completion call (MPI_Test ... MPI_Request_get_status_some) how often the application's
// call reported no new completion. At MPI_Finalize it writes a summary per rank to
// $MPI_REQUEST_EVENTS_SUMMARY.<rank> (stderr when unset). bin/mpi-request-profile runs a program
// under it. Load it (LD_PRELOAD=libqmpi_request_events.so) and list it
// (MPIR_CVAR_QMPI_TOOL_LIST=request_events); it stacks with other QMPI tools and PMPI tools.
#include <mpi.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>

#include "qmpi_support.hpp"
#include "request_events_summary.hpp"

namespace {

using qmpi_support::call_next;
using request_events::Clock;
using request_events::Summary;

Summary& summary() {
    static Summary s;
    return s;
}

// The completion call the application is in on this thread, and what its events reported.
thread_local int completions_in_call = 0;
thread_local int call_depth = 0;

struct Listener {
    bool active = false;
    MPI_T_event_registration handle{};
    int elements = 0;
};
Listener listener;

// request_complete: kind, request, comm, source, tag, error, call, index, count
void on_complete(MPI_T_event_instance instance, MPI_T_event_registration, MPI_T_cb_safety,
                 void*) {
    int v[8] = {0};
    for (int e = 0; e < 8; e++) {
        MPI_T_event_read(instance, e, &v[e]);
    }
    completions_in_call++;
    summary().completed(/*kind=*/v[0], /*request=*/v[1], /*comm=*/v[2], Clock::now());
}

// Instances MPI could not deliver to this handle: counted and printed with the summary, so a
// summary never shows fewer completions than the application saw without saying so.
void on_dropped(MPI_Count count, MPI_T_event_registration, int, MPI_T_cb_safety, void*) {
    summary().dropped(static_cast<uint64_t>(count));
}

void start_listening() {
    int provided = 0, index = -1;
    if (MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        return;
    }
    if (MPI_T_event_get_index("request_complete", &index) != MPI_SUCCESS ||
        MPI_T_event_handle_alloc(index, nullptr, MPI_INFO_NULL, &listener.handle) !=
            MPI_SUCCESS) {
        std::fprintf(stderr, "request_events: this MPI has no request_complete event\n");
        MPI_T_finalize();
        return;
    }
    // thread-safe (one lock), never calls MPI: it may run inside the progress engine
    MPI_T_event_register_callback(listener.handle, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL,
                                  nullptr, on_complete);
    MPI_T_event_set_dropped_handler(listener.handle, on_dropped);
    listener.active = true;
}

void stop_listening() {
    if (listener.active) {
        MPI_T_event_handle_free(listener.handle, nullptr, nullptr);
        MPI_T_finalize();
        listener.active = false;
    }
}

int init(QMPI_Context c, int id, int* argc, char*** argv) {
    const int rc = call_next<QMPI_Init_t>(c, id, MPI_INIT_T, argc, argv);
    if (rc == MPI_SUCCESS) start_listening();
    return rc;
}

int init_thread(QMPI_Context c, int id, int* argc, char*** argv, int required, int* provided) {
    const int rc =
        call_next<QMPI_Init_thread_t>(c, id, MPI_INIT_THREAD_T, argc, argv, required, provided);
    if (rc == MPI_SUCCESS) start_listening();
    return rc;
}

int finalize(QMPI_Context c, int id) {
    stop_listening();
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    summary().write(rank, std::getenv("MPI_REQUEST_EVENTS_SUMMARY"));
    return call_next<QMPI_Finalize_t>(c, id, MPI_FINALIZE_T);
}

int comm_set_name(QMPI_Context c, int id, MPI_Comm comm, const char* name) {
    summary().name(comm, name);
    return call_next<QMPI_Comm_set_name_t>(c, id, MPI_COMM_SET_NAME_T, comm, name);
}

// A call that posts one request (its last argument): the post time, keyed by the handle.
template <class Fn, QMPI_Functions_enum Which>
struct Posting;
template <QMPI_Functions_enum Which, class... Args>
struct Posting<int(QMPI_Context, int, Args...), Which> {
    static int wrapper(QMPI_Context c, int id, Args... args) {
        const auto t = Clock::now();
        const int rc = call_next<int(QMPI_Context, int, Args...)>(c, id, Which, args...);
        MPI_Request* request = std::get<sizeof...(Args) - 1>(std::tie(args...));
        if (rc == MPI_SUCCESS) summary().posted(*request, t);
        return rc;
    }
};

int startall(QMPI_Context c, int id, int count, MPI_Request reqs[]) {
    const auto t = Clock::now();
    const int rc = call_next<QMPI_Startall_t>(c, id, MPI_STARTALL_T, count, reqs);
    if (rc == MPI_SUCCESS) {
        for (int i = 0; i < count; i++) summary().posted(reqs[i], t);
    }
    return rc;
}

// A completion call: counted, and counted as empty when it reported no new completion.
template <class Fn, QMPI_Functions_enum Which, int Call>
struct Completing;
template <QMPI_Functions_enum Which, int Call, class... Args>
struct Completing<int(QMPI_Context, int, Args...), Which, Call> {
    static int wrapper(QMPI_Context c, int id, Args... args) {
        // a completion call made inside another (ROMIO's MPI_Test inside a poll_fn) is part of
        // the outer one: only the outermost is counted
        if (call_depth++ == 0) completions_in_call = 0;
        const int rc = call_next<int(QMPI_Context, int, Args...)>(c, id, Which, args...);
        if (--call_depth == 0) summary().call_made(Call, completions_in_call);
        return rc;
    }
};

template <class Fn, QMPI_Functions_enum Which>
void posting(int id) {
    qmpi_support::register_wrapper<Fn>(id, Which, &Posting<Fn, Which>::wrapper);
}

template <class Fn, QMPI_Functions_enum Which, int Call>
void completing(int id) {
    qmpi_support::register_wrapper<Fn>(id, Which, &Completing<Fn, Which, Call>::wrapper);
}

void init_tool(int id) {
    using qmpi_support::register_wrapper;
    register_wrapper<QMPI_Init_t>(id, MPI_INIT_T, init);
    register_wrapper<QMPI_Init_thread_t>(id, MPI_INIT_THREAD_T, init_thread);
    register_wrapper<QMPI_Finalize_t>(id, MPI_FINALIZE_T, finalize);
    register_wrapper<QMPI_Comm_set_name_t>(id, MPI_COMM_SET_NAME_T, comm_set_name);
    register_wrapper<QMPI_Startall_t>(id, MPI_STARTALL_T, startall);
    posting<QMPI_Isend_t, MPI_ISEND_T>(id);
    posting<QMPI_Issend_t, MPI_ISSEND_T>(id);
    posting<QMPI_Ibsend_t, MPI_IBSEND_T>(id);
    posting<QMPI_Irsend_t, MPI_IRSEND_T>(id);
    posting<QMPI_Irecv_t, MPI_IRECV_T>(id);
    posting<QMPI_Imrecv_t, MPI_IMRECV_T>(id);
    posting<QMPI_Start_t, MPI_START_T>(id);
    posting<QMPI_Ibarrier_t, MPI_IBARRIER_T>(id);
    posting<QMPI_Ibcast_t, MPI_IBCAST_T>(id);
    posting<QMPI_Ireduce_t, MPI_IREDUCE_T>(id);
    posting<QMPI_Iallreduce_t, MPI_IALLREDUCE_T>(id);
    posting<QMPI_Iallgather_t, MPI_IALLGATHER_T>(id);
    posting<QMPI_Ialltoall_t, MPI_IALLTOALL_T>(id);
    posting<QMPI_Igather_t, MPI_IGATHER_T>(id);
    posting<QMPI_Iscatter_t, MPI_ISCATTER_T>(id);
    posting<QMPI_Rput_t, MPI_RPUT_T>(id);
    posting<QMPI_Rget_t, MPI_RGET_T>(id);
    namespace CallId = request_events::CallId;
    completing<QMPI_Wait_t, MPI_WAIT_T, CallId::kWait>(id);
    completing<QMPI_Test_t, MPI_TEST_T, CallId::kTest>(id);
    completing<QMPI_Request_get_status_t, MPI_REQUEST_GET_STATUS_T, CallId::kGetStatus>(id);
    completing<QMPI_Waitall_t, MPI_WAITALL_T, CallId::kWaitall>(id);
    completing<QMPI_Testall_t, MPI_TESTALL_T, CallId::kTestall>(id);
    completing<QMPI_Request_get_status_all_t, MPI_REQUEST_GET_STATUS_ALL_T,
               CallId::kGetStatusAll>(id);
    completing<QMPI_Waitany_t, MPI_WAITANY_T, CallId::kWaitany>(id);
    completing<QMPI_Testany_t, MPI_TESTANY_T, CallId::kTestany>(id);
    completing<QMPI_Request_get_status_any_t, MPI_REQUEST_GET_STATUS_ANY_T,
               CallId::kGetStatusAny>(id);
    completing<QMPI_Waitsome_t, MPI_WAITSOME_T, CallId::kWaitsome>(id);
    completing<QMPI_Testsome_t, MPI_TESTSOME_T, CallId::kTestsome>(id);
    completing<QMPI_Request_get_status_some_t, MPI_REQUEST_GET_STATUS_SOME_T,
               CallId::kGetStatusSome>(id);
}

__attribute__((constructor)) void register_request_events_tool() {
    qmpi_support::register_tool("request_events", init_tool);
}

}  // namespace
