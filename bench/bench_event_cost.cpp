// What a tool listening to the request_engine MPI_T events costs per completion: message rate
// between two ranks (the flow-controlled window of bench_tool_rate.cpp, MPI_Testsome on the
// receiver), with the receiver alternating phases of PHASE messages:
//   none      no event handle exists (the state of every run without a tool)
//   listen    one handle on request_complete with an empty callback that may run where the event
//             is raised (registered at MPI_T_CB_REQUIRE_THREAD_SAFE)
//   deferred  one handle whose callback needs MPI_T_CB_REQUIRE_NONE: every instance is copied,
//             queued, and delivered when the completion call returns
// Each receive completion raises one event; the sender's calls are blocking and raise none.
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

namespace {

constexpr int kDataTag = 0;
constexpr int kCreditTag = 1;
constexpr long kPhase = 8192;
constexpr int kModes = 3;
const char* const kModeNames[kModes] = {"none", "listen", "deferred"};

void empty_callback(MPI_T_event_instance, MPI_T_event_registration, MPI_T_cb_safety, void*) {}

// The event handle of a phase: none, or one with its callback at the mode's safety level.
class PhaseListener {
public:
    explicit PhaseListener(int event_index) : index_(event_index) {}
    void enter(int mode) {
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

void send_messages(long messages, int window) {
    const long chunk = std::max(1, window / 2);
    const long payload = 1;
    long sent = 0;
    for (; sent < std::min<long>(window, messages); sent++) {
        MPI_Send(&payload, 1, MPI_LONG, 0, kDataTag, MPI_COMM_WORLD);
    }
    while (sent < messages) {
        MPI_Recv(nullptr, 0, MPI_BYTE, 0, kCreditTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (long j = 0; j < chunk && sent < messages; j++, sent++) {
            MPI_Send(&payload, 1, MPI_LONG, 0, kDataTag, MPI_COMM_WORLD);
        }
    }
}

struct Totals {
    double seconds[kModes] = {0, 0, 0};
    long messages[kModes] = {0, 0, 0};
};

Totals receive_messages(long messages, int window, PhaseListener& listener) {
    Totals totals;
    int mode = 0;
    const long chunk = std::max(1, window / 2);
    std::vector<MPI_Request> reqs(static_cast<size_t>(window), MPI_REQUEST_NULL);
    std::vector<long> bufs(static_cast<size_t>(window));
    std::vector<int> indices(static_cast<size_t>(window));
    long posted = 0, received = 0, since_credit = 0, credited = std::min<long>(window, messages);
    for (int i = 0; i < window && posted < messages; i++, posted++) {
        MPI_Irecv(&bufs[size_t(i)], 1, MPI_LONG, 1, kDataTag, MPI_COMM_WORLD, &reqs[size_t(i)]);
    }
    listener.enter(mode);
    long phase_start_count = 0;
    double phase_start = MPI_Wtime();
    while (received < messages) {
        int outcount = 0;
        MPI_Testsome(window, reqs.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE);
        for (int j = 0; j < outcount && outcount != MPI_UNDEFINED; j++, received++) {
            const size_t i = static_cast<size_t>(indices[size_t(j)]);
            if (posted < messages) {
                MPI_Irecv(&bufs[i], 1, MPI_LONG, 1, kDataTag, MPI_COMM_WORLD, &reqs[i]);
                posted++;
            }
            if (++since_credit == chunk && credited < messages) {
                MPI_Send(nullptr, 0, MPI_BYTE, 1, kCreditTag, MPI_COMM_WORLD);
                credited += chunk;
                since_credit = 0;
            }
        }
        if (received - phase_start_count >= kPhase || received >= messages) {
            const double now = MPI_Wtime();
            totals.seconds[mode] += now - phase_start;
            totals.messages[mode] += received - phase_start_count;
            listener.leave();
            mode = (mode + 1) % kModes;
            listener.enter(mode);
            phase_start = MPI_Wtime();
            phase_start_count = received;
        }
    }
    listener.leave();
    return totals;
}

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
        send_messages(messages, window);
    } else if (rank == 0) {
        const Totals t = receive_messages(messages, window, listener);
        const double base = double(t.messages[0]) / t.seconds[0];
        for (int mode = 0; mode < kModes; mode++) {
            const double rate = double(t.messages[mode]) / t.seconds[mode];
            std::printf("event_rate %s %d %ld %.3f %.0f %.1f\n", kModeNames[mode], window,
                        t.messages[mode], t.seconds[mode], rate, 1e9 / rate - 1e9 / base);
        }
    }
    MPI_T_finalize();
    MPI_Finalize();
    return 0;
}
