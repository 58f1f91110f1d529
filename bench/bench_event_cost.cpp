// What a tool listening to the request_engine MPI_T events costs per completion: message rate
// between two ranks (the flow-controlled window of bench_tool_rate.cpp, MPI_Testsome on the
// receiver), with the receiver alternating phases of PHASE messages:
//   none      no event handle exists (the state of every run without a tool)
//   listen    one handle on request_complete with an empty callback that may run where the event
//             is raised (registered at MPI_T_CB_REQUIRE_THREAD_SAFE)
//   deferred  one handle whose callback needs MPI_T_CB_REQUIRE_NONE: every instance is copied,
//             queued, and delivered when the completion call returns
// Each receive completion raises one event; the sender's calls are blocking and raise none. The
// message loop and its flow control: windowed_rate.hpp.
// Phases a few milliseconds long within one run see the same machine (this VM's rate drifts
// +-20% from run to run), so the cost is taken from the rates of one run:
// ns per completion = 1e9 / rate(mode) - 1e9 / rate(none).
// usage: mpiexec -n 2 bench_event_cost WINDOW MESSAGES
// prints per mode: event_rate <mode> <window> <messages> <seconds> <messages/s> <ns per completion>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "windowed_rate.hpp"

namespace {

constexpr int kModes = 3;
const char* const kModeNames[kModes] = {"none", "listen", "deferred"};

void empty_callback(MPI_T_event_instance, MPI_T_event_registration, MPI_T_cb_safety, void*) {}

// The event handle of a phase: none, or one with its callback at the mode's safety level.
class PhaseListener {
public:
    explicit PhaseListener(int event_index) : index_(event_index) {}
    void enter(int mode) {
        leave();
        if (mode == 0) return;
        MPI_T_event_handle_alloc(index_, nullptr, MPI_INFO_NULL, &handle_);
        MPI_T_event_register_callback(
            handle_, mode == 1 ? MPI_T_CB_REQUIRE_THREAD_SAFE : MPI_T_CB_REQUIRE_NONE,
            MPI_INFO_NULL, nullptr, empty_callback);
        active_ = true;
    }
    void leave() {
        if (active_) MPI_T_event_handle_free(handle_, nullptr, nullptr);
        active_ = false;
    }

private:
    int index_;
    MPI_T_event_registration handle_{};
    bool active_ = false;
};

}  // namespace

int main(int argc, char* argv[]) {
    MPI_Init(&argc, &argv);
    int provided = 0;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const int window = argc > 1 ? std::atoi(argv[1]) : 64;
    const long messages = argc > 2 ? std::atol(argv[2]) : 600000;
    int index = -1;
    if (MPI_T_event_get_index("request_complete", &index) != MPI_SUCCESS) {
        if (rank == 0) std::fprintf(stderr, "bench_event_cost: no request_complete event\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    PhaseListener listener(index);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        bench::send_windowed(messages, window);
    } else if (rank == 0) {
        const bench::PhaseTotals t = bench::receive_windowed(
            messages, window, kModes, [&](int mode) { listener.enter(mode); },
            [](int, int n, MPI_Request reqs[], int* outcount, int indices[]) {
                MPI_Testsome(n, reqs, outcount, indices, MPI_STATUSES_IGNORE);
            });
        listener.leave();
        for (int mode = 0; mode < kModes; mode++) {
            std::printf("event_rate %s %d %ld %.3f %.0f %.1f\n", kModeNames[mode], window,
                        t.messages[size_t(mode)], t.seconds[size_t(mode)], t.rate(mode),
                        1e9 / t.rate(mode) - 1e9 / t.rate(0));
        }
    }
    MPI_T_finalize();
    MPI_Finalize();
    return 0;
}
