// MPI_T tools against the request engine under MPI_THREAD_MULTIPLE: per process,
// concurrently,
//   - application threads completing every kind of request a user makes: point-to-point with the
//     peer process and with itself, persistent point-to-point and a persistent collective,
//     nonblocking collectives (each thread on a duplicated communicator of its own), plain
//     generalized requests (completed by their owner or by a completer thread) and requests of a
//     generalized request class (completed in their poll_fn/wait_fn), through every Wait, Test
//     and get_status form in turn;
//   - a tool thread that, over and over, reads every performance variable MPICH exposes (those
//     with no binding or bound to a communicator, on MPI_COMM_WORLD: a session, a handle each,
//     start, read, stop, read, free) and allocates and frees request_complete (and
//     request_complete_comm) event handles at every callback safety level, whose callbacks call
//     MPI_T (MPI_T_event_read, MPI_T_event_get_timestamp, MPI_T_event_get_source, and
//     MPI_T_pvar_read of greq_class_completed on a session of the handle's own) and whose free_cb
//     calls MPI_T (MPI_T_event_get_num, MPI_T_pvar_get_num, then frees that session);
//   - four request_complete handles alive for the whole run, one per safety level, which count
//     what they are given: the three whose callbacks can run where the event is raised must see
//     every completion the application made exactly once, there and then; the
//     MPI_T_CB_REQUIRE_NONE one gets instances later or is told they were dropped, and the two
//     add up to every completion;
//   - a watchdog that aborts with a message when the whole is not done by the deadline.
// usage: mpiexec -n 1|2 tool_stress [ROUNDS [DEADLINE_SECONDS]]   (1 process: its own peer)
// Prints one line "tool_stress: ... 0 failures" and exits 0, or names each failure.
// Build: mpicxx -std=c++17 -O1 -g -o tool_stress tests/stress/tool_stress.cpp
//        tests/stress/complete_forms.cpp
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "stress_support.hpp"

using namespace stress;

namespace {

Failures failures;

// ---------------------------------------------------------------------------------------------
// What completed, by communicator and request kind (the request_complete event's kind, 1-10)

constexpr int kKinds = 11;
enum Slot { kNullComm, kP2pComm, kPersistentComm, kCollComm, kOtherComm, kSlots };
const char* const kSlotNames[kSlots] = {"MPI_COMM_NULL", "point-to-point comm", "persistent comm",
                                        "collective comm", "another comm"};
const char* const kKindNames[kKinds] = {"?", "send", "recv", "persistent send", "persistent recv",
                                        "generalized", "collective", "persistent collective",
                                        "partitioned send", "partitioned recv", "RMA"};
enum Kind { kSend = 1, kRecv, kPSend, kPRecv, kGen, kColl, kPColl };

MPI_Comm app_comms[kSlots];  // kP2pComm .. kCollComm, set before any thread starts

int slot_of(int comm_value) {
    if (comm_value == int(MPI_COMM_NULL)) return kNullComm;
    for (int s = kP2pComm; s <= kCollComm; s++) {
        if (comm_value == int(app_comms[s])) return s;
    }
    return kOtherComm;
}

struct Tally {
    std::atomic<long> n[kSlots][kKinds] = {};
    void add(int slot, int kind, long count = 1) {
        if (kind < 0 || kind >= kKinds) kind = 0;
        n[slot][kind] += count;
    }
    long total() const {
        long t = 0;
        for (int s = 0; s < kSlots; s++)
            for (int k = 0; k < kKinds; k++) t += n[s][k].load();
        return t;
    }
};

// Generalized requests carry an id (query_fn's MPI_TAG): 0 .. gen_ids-1
int gen_ids = 0;

Tally app;  // what the application completed

// Where everyone is, for the watchdog's message
std::atomic<const char*> tool_step{"not started"};
std::atomic<const char*> main_step{"starting"};
enum Role { kP2pRole, kPersistentRole, kCollRole, kGreqRole, kRoles };
const char* const kRoleNames[kRoles] = {"point-to-point", "persistent", "collective", "generalized"};
std::atomic<int> rounds_done[kRoles] = {};

// Aborts with what every thread was doing when the run is not over by the deadline.
class Watchdog {
public:
    Watchdog(int rank, int rounds, double seconds)
        : thread_([this, rank, rounds, seconds] { watch(rank, rounds, seconds); }) {}
    ~Watchdog() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            done_ = true;
        }
        cv_.notify_one();
        thread_.join();
    }

private:
    void watch(int rank, int rounds, double seconds) {
        std::unique_lock<std::mutex> lock(mutex_);
        if (cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; })) {
            return;
        }
        std::fprintf(stderr,
                     "tool_stress: watchdog: rank %d not done after %.0f s (a deadlock between "
                     "MPI_T and the request engine?): main thread: %s; tool thread: %s; "
                     "application rounds done (of %d):",
                     rank, seconds, main_step.load(), tool_step.load(), rounds);
        for (int r = 0; r < kRoles; r++) {
            std::fprintf(stderr, " %s %d", kRoleNames[r], rounds_done[r].load());
        }
        std::fprintf(stderr, "; %ld completions so far\n", app.total());
        std::fflush(stderr);
        std::abort();
    }

    std::mutex mutex_;
    std::condition_variable cv_;
    bool done_ = false;
    std::thread thread_;
};

// ---------------------------------------------------------------------------------------------
// The handles alive for the whole run

struct Permanent {
    MPI_T_cb_safety level = MPI_T_CB_REQUIRE_NONE;
    MPI_T_event_registration handle{};
    Tally seen;
    std::vector<std::atomic<int>> per_id;  // generalized request ids
    std::atomic<long> instances{0}, delivered_at_none{0}, mpit_errors{0};
    std::atomic<long> dropped{0}, dropped_calls{0};
    std::atomic<int> frees{0}, free_errors{0};
};

void read_instance(MPI_T_event_instance ev, int* kind, int* comm, int* tag, std::atomic<long>& errors,
                   MPI_Count* ts) {
    int source = -1;
    if (MPI_T_event_read(ev, 0, kind) != MPI_SUCCESS) errors++;
    if (MPI_T_event_read(ev, 2, comm) != MPI_SUCCESS) errors++;
    if (MPI_T_event_read(ev, 4, tag) != MPI_SUCCESS) errors++;
    if (MPI_T_event_get_timestamp(ev, ts) != MPI_SUCCESS) errors++;
    if (MPI_T_event_get_source(ev, &source) != MPI_SUCCESS || source < 0) errors++;
}

void permanent_cb(MPI_T_event_instance ev, MPI_T_event_registration, MPI_T_cb_safety safety,
                  void* user) {
    auto* p = static_cast<Permanent*>(user);
    int kind = 0, comm = 0, tag = 0;
    MPI_Count ts = 0;
    read_instance(ev, &kind, &comm, &tag, p->mpit_errors, &ts);
    const int slot = slot_of(comm);
    p->seen.add(slot, kind);
    if (kind == kGen && slot == kNullComm) {
        if (tag >= 0 && tag < gen_ids) {
            p->per_id[size_t(tag)]++;
        } else {
            p->mpit_errors++;
        }
    }
    p->instances++;
    if (safety == MPI_T_CB_REQUIRE_NONE) p->delivered_at_none++;
}

void permanent_dropped(MPI_Count count, MPI_T_event_registration, int, MPI_T_cb_safety, void* user) {
    auto* p = static_cast<Permanent*>(user);
    p->dropped += count;
    p->dropped_calls++;
}


// ---------------------------------------------------------------------------------------------
// The tool thread's short-lived handles

struct Dynamic {
    int id = 0;
    int kind = 0;  // what was registered (see alloc_dynamic)
    MPI_T_event_registration handle{};
    MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;
    MPI_T_pvar_handle pvar = MPI_T_PVAR_HANDLE_NULL;
    int pvar_count = 0;
    std::atomic<long> calls{0}, errors{0}, dropped{0};
    std::atomic<int> running{0};  // callbacks of the handle running now
    std::atomic<int> frees{0};
    std::atomic<int> free_errors{0};
};

std::atomic<long> dynamic_calls{0};
int engine_source = -1;  // the request_engine event source

// Sessions of handles whose free_cb ran where only MPI_T_CB_REQUIRE_MPI_RESTRICTED-safe calls are
// allowed: freed later by the tool thread (or at the end).
std::mutex graveyard_mutex;
std::vector<Dynamic*> graveyard;

void release_session(Dynamic* d) {
    if (d->pvar != MPI_T_PVAR_HANDLE_NULL &&
        MPI_T_pvar_handle_free(d->session, &d->pvar) != MPI_SUCCESS) {
        d->free_errors++;
    }
    if (d->session != MPI_T_PVAR_SESSION_NULL && MPI_T_pvar_session_free(&d->session) != MPI_SUCCESS) {
        d->free_errors++;
    }
}

void bury_all() {
    std::vector<Dynamic*> dead;
    {
        std::lock_guard<std::mutex> lock(graveyard_mutex);
        dead.swap(graveyard);
    }
    for (Dynamic* d : dead) release_session(d);
}

// What a free_cb calls: the source's clock always; where MPI_T_CB_REQUIRE_NONE allows anything,
// MPI_T_event_get_num and MPI_T_pvar_get_num as well. Returns the failed calls.
int mpit_calls_in_free_cb(MPI_T_cb_safety safety) {
    int bad = 0, n = 0;
    MPI_Count ts = 0;
    if (MPI_T_source_get_timestamp(engine_source, &ts) != MPI_SUCCESS) bad++;
    if (safety == MPI_T_CB_REQUIRE_NONE) {
        if (MPI_T_event_get_num(&n) != MPI_SUCCESS || n <= 0) bad++;
        if (MPI_T_pvar_get_num(&n) != MPI_SUCCESS || n <= 0) bad++;
    }
    return bad;
}

void dynamic_cb(MPI_T_event_instance ev, MPI_T_event_registration, MPI_T_cb_safety, void* user) {
    auto* d = static_cast<Dynamic*>(user);
    d->running++;
    int kind = 0, comm = 0, tag = 0;
    MPI_Count ts = 0;
    read_instance(ev, &kind, &comm, &tag, d->errors, &ts);
    if (kind < 1 || kind >= kKinds) d->errors++;
    if (d->pvar != MPI_T_PVAR_HANDLE_NULL) {
        std::vector<unsigned long long> buf(size_t(d->pvar_count) + 1);
        if (MPI_T_pvar_read(d->session, d->pvar, buf.data()) != MPI_SUCCESS) d->errors++;
    }
    d->calls++;
    dynamic_calls++;
    d->running--;
}

void dynamic_dropped(MPI_Count count, MPI_T_event_registration, int, MPI_T_cb_safety, void* user) {
    static_cast<Dynamic*>(user)->dropped += count;
}

void dynamic_free(MPI_T_event_registration, MPI_T_cb_safety safety, void* user) {
    auto* d = static_cast<Dynamic*>(user);
    d->free_errors += mpit_calls_in_free_cb(safety);
    if (d->running.load() != 0) d->free_errors++;  // free_cb while a callback of it runs
    // no callback of the handle runs any more: its session can go
    if (safety == MPI_T_CB_REQUIRE_NONE) {
        release_session(d);
    } else {
        std::lock_guard<std::mutex> lock(graveyard_mutex);
        graveyard.push_back(d);
    }
    d->frees++;
}

void permanent_free(MPI_T_event_registration, MPI_T_cb_safety safety, void* user) {
    auto* p = static_cast<Permanent*>(user);
    p->free_errors += mpit_calls_in_free_cb(safety);
    p->frees++;
}

int index_of_pvar(const char* name) {
    for (int cls : {MPI_T_PVAR_CLASS_COUNTER, MPI_T_PVAR_CLASS_TIMER, MPI_T_PVAR_CLASS_GENERIC}) {
        int index = -1;
        if (MPI_T_pvar_get_index(name, cls, &index) == MPI_SUCCESS) return index;
    }
    return -1;
}

constexpr int kDynamicKinds = 6;
const char* const kDynamicNames[kDynamicKinds] = {
    "NONE", "MPI_RESTRICTED", "THREAD_SAFE", "ASYNC_SIGNAL_SAFE", "NONE+MPI_RESTRICTED",
    "request_complete_comm (bound)"};

// kind 0-3: one callback at that level; 4: callbacks at NONE and MPI_RESTRICTED; 5: a handle
// bound to one of the application's communicators, at a level chosen by id.
std::unique_ptr<Dynamic> alloc_dynamic(int id, int kind) {
    auto d = std::make_unique<Dynamic>();
    d->id = id;
    d->kind = kind;
    int index = -1;
    MPI_T_event_get_index(kind == 5 ? "request_complete_comm" : "request_complete", &index);
    const int pvar_index = index_of_pvar("greq_class_completed");
    if (MPI_T_pvar_session_create(&d->session) != MPI_SUCCESS ||
        pvar_index < 0 ||
        MPI_T_pvar_handle_alloc(d->session, pvar_index, nullptr, &d->pvar, &d->pvar_count) !=
            MPI_SUCCESS) {
        failures.report("tool: dynamic handle %d: no session or greq_class_completed handle", id);
    }
    MPI_Comm bound = app_comms[kP2pComm + id % 3];
    if (MPI_T_event_handle_alloc(index, kind == 5 ? &bound : nullptr, MPI_INFO_NULL, &d->handle) !=
        MPI_SUCCESS) {
        failures.report("tool: MPI_T_event_handle_alloc failed (dynamic %d, %s)", id,
                        kDynamicNames[kind]);
        return nullptr;
    }
    std::vector<MPI_T_cb_safety> levels;
    switch (kind) {
        case 0: levels = {MPI_T_CB_REQUIRE_NONE}; break;
        case 1: levels = {MPI_T_CB_REQUIRE_MPI_RESTRICTED}; break;
        case 2: levels = {MPI_T_CB_REQUIRE_THREAD_SAFE}; break;
        case 3: levels = {MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE}; break;
        case 4: levels = {MPI_T_CB_REQUIRE_NONE, MPI_T_CB_REQUIRE_MPI_RESTRICTED}; break;
        default: levels = {MPI_T_cb_safety(id / kDynamicKinds % 4)}; break;
    }
    for (MPI_T_cb_safety level : levels) {
        if (MPI_T_event_register_callback(d->handle, level, MPI_INFO_NULL, d.get(), dynamic_cb) !=
            MPI_SUCCESS) {
            failures.report("tool: MPI_T_event_register_callback failed (dynamic %d)", id);
        }
    }
    if (MPI_T_event_set_dropped_handler(d->handle, dynamic_dropped) != MPI_SUCCESS) {
        failures.report("tool: MPI_T_event_set_dropped_handler failed (dynamic %d)", id);
    }
    return d;
}

// ---------------------------------------------------------------------------------------------
// Every performance variable MPICH exposes

struct PvarInfo {
    int index;
    std::string name;
    MPI_Datatype type;
    int bind, readonly, continuous;
    int type_size;
};

std::vector<PvarInfo> readable_pvars() {
    std::vector<PvarInfo> out;
    int num = 0;
    MPI_T_pvar_get_num(&num);
    for (int i = 0; i < num; i++) {
        char name[256], desc[1024];
        int name_len = sizeof name, desc_len = sizeof desc;
        int verbosity = 0, var_class = 0, bind = 0, readonly = 0, continuous = 0, atomic = 0;
        MPI_Datatype type;
        MPI_T_enum enumtype;
        if (MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &var_class, &type, &enumtype,
                                desc, &desc_len, &bind, &readonly, &continuous, &atomic) !=
            MPI_SUCCESS) {
            continue;  // an index without a variable
        }
        if (bind != MPI_T_BIND_NO_OBJECT && bind != MPI_T_BIND_MPI_COMM) continue;
        int size = 0;
        MPI_Type_size(type, &size);
        out.push_back({i, name, type, bind, readonly, continuous, size});
    }
    return out;
}

struct ToolStats {
    long sweeps = 0, reads = 0;
    int dynamic_handles = 0;
    int variables = 0;
};

// One pass over every variable: a session, a handle each, start, read, stop, read, free.
void pvar_sweep(const std::vector<PvarInfo>& vars, ToolStats& stats) {
    MPI_T_pvar_session session;
    if (MPI_T_pvar_session_create(&session) != MPI_SUCCESS) {
        failures.report("tool: MPI_T_pvar_session_create failed");
        return;
    }
    struct Open {
        const PvarInfo* info;
        MPI_T_pvar_handle handle;
        int count;
    };
    std::vector<Open> open;
    MPI_Comm world = MPI_COMM_WORLD;
    for (const PvarInfo& v : vars) {
        Open o{&v, MPI_T_PVAR_HANDLE_NULL, 0};
        int rc = MPI_T_pvar_handle_alloc(session, v.index,
                                         v.bind == MPI_T_BIND_MPI_COMM ? &world : nullptr,
                                         &o.handle, &o.count);
        if (rc != MPI_SUCCESS) {
            failures.report("tool: MPI_T_pvar_handle_alloc(%s) returned %d", v.name.c_str(), rc);
            continue;
        }
        open.push_back(o);
    }
    std::vector<char> buf;
    for (int pass = 0; pass < 2; pass++) {
        for (Open& o : open) {
            // a continuous variable cannot be started or stopped: MPI_T_ERR_PVAR_NO_STARTSTOP
            int rc = pass == 0 ? MPI_T_pvar_start(session, o.handle)
                               : MPI_T_pvar_stop(session, o.handle);
            if (rc != MPI_SUCCESS && !(o.info->continuous && rc == MPI_T_ERR_PVAR_NO_STARTSTOP)) {
                failures.report("tool: MPI_T_pvar_%s(%s) returned %d", pass ? "stop" : "start",
                                o.info->name.c_str(), rc);
            }
            buf.assign(size_t(o.count) * size_t(o.info->type_size) + 64, 0);
            rc = MPI_T_pvar_read(session, o.handle, buf.data());
            if (rc != MPI_SUCCESS) {
                failures.report("tool: MPI_T_pvar_read(%s) returned %d", o.info->name.c_str(), rc);
            }
            stats.reads++;
        }
    }
    for (Open& o : open) MPI_T_pvar_handle_free(session, &o.handle);
    MPI_T_pvar_session_free(&session);
    stats.sweeps++;
}

// The tool thread: sweeps, and dynamic handles allocated and freed in between (at most four
// alive), until the application is done.
void tool_thread(std::atomic<bool>& app_done, ToolStats& stats,
                 std::vector<std::unique_ptr<Dynamic>>& all_dynamic) {
    int provided = 0;
    MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided);
    const std::vector<PvarInfo> vars = readable_pvars();
    stats.variables = int(vars.size());
    std::deque<Dynamic*> live;
    for (int it = 0; !app_done.load() || it < 8; it++) {
        if (live.size() < 4) {
            tool_step = "allocating an event handle (and a greq_class_completed handle)";
            auto d = alloc_dynamic(it, it % kDynamicKinds);
            if (d) {
                live.push_back(d.get());
                all_dynamic.push_back(std::move(d));
            }
        }
        tool_step = "sweeping the performance variables";
        pvar_sweep(vars, stats);
        tool_step = "between steps";
        int num = 0;
        MPI_T_event_get_num(&num);
        if (live.size() >= 3 || (it % 3 == 0 && !live.empty())) {
            Dynamic* d = live.front();
            live.pop_front();
            tool_step = "MPI_T_event_handle_free (its free_cb calls MPI_T)";
            if (MPI_T_event_handle_free(d->handle, d, dynamic_free) != MPI_SUCCESS) {
                failures.report("tool: MPI_T_event_handle_free failed (dynamic %d)", d->id);
            }
        }
        tool_step = "freeing sessions of freed handles";
        bury_all();
        tool_step = "between steps";
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    tool_step = "MPI_T_event_handle_free of the last handles (their free_cb calls MPI_T)";
    for (Dynamic* d : live) {
        if (MPI_T_event_handle_free(d->handle, d, dynamic_free) != MPI_SUCCESS) {
            failures.report("tool: MPI_T_event_handle_free failed (dynamic %d)", d->id);
        }
    }
    stats.dynamic_handles = int(all_dynamic.size());
    MPI_T_finalize();
    tool_step = "done";
}

// ---------------------------------------------------------------------------------------------
// The application

struct Run {
    int rank = 0, size = 1, peer = 0, rounds = 0;
};

int code(int rank, int round, int i) { return (rank * 100000 + round) * 64 + i; }

// point-to-point with the peer and with this process itself
constexpr int kPairs = 6;
void p2p_thread(const Run& run) {
    MPI_Comm comm = app_comms[kP2pComm];
    std::vector<int> out(kPairs + 1), in(kPairs + 1);
    std::vector<MPI_Request> reqs(2 * (kPairs + 1));
    std::vector<MPI_Status> statuses;
    for (int r = 0; r < run.rounds; r++) {
        for (int i = 0; i <= kPairs; i++) {
            const int partner = i == kPairs ? run.rank : run.peer;
            const int tag = i == kPairs ? 100 : i;
            in[size_t(i)] = -1;
            out[size_t(i)] = code(run.rank, r, i);
            MPI_Irecv(&in[size_t(i)], 1, MPI_INT, partner, tag, comm, &reqs[size_t(2 * i)]);
            MPI_Isend(&out[size_t(i)], 1, MPI_INT, partner, tag, comm, &reqs[size_t(2 * i + 1)]);
        }
        const Form f = static_cast<Form>(r % kForms);
        complete_all(f, reqs, statuses, failures, "p2p thread");
        rounds_done[kP2pRole]++;
        app.add(kP2pComm, kSend, kPairs + 1);
        app.add(kP2pComm, kRecv, kPairs + 1);
        for (int i = 0; i <= kPairs; i++) {
            const int partner = i == kPairs ? run.rank : run.peer;
            if (in[size_t(i)] != code(partner, r, i)) {
                failures.report("p2p thread round %d (%s): message %d got %d, expected %d", r,
                                form_name(f), i, in[size_t(i)], code(partner, r, i));
            }
        }
    }
}

// Completes an array of persistent requests (inactive ones count as null); the completions seen.
int complete_persistent(int form, std::vector<MPI_Request>& reqs) {
    const int n = int(reqs.size());
    std::vector<int> idx(reqs.size());
    int flag = 0, index = 0, outcount = 0, seen = 0;
    switch (form % 6) {
        case 0:
            MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE);
            return n;
        case 1:
            do {
                MPI_Testall(n, reqs.data(), &flag, MPI_STATUSES_IGNORE);
            } while (!flag);
            return n;
        case 2:
            for (;;) {
                MPI_Waitany(n, reqs.data(), &index, MPI_STATUS_IGNORE);
                if (index == MPI_UNDEFINED) return seen;
                seen++;
            }
        case 3:
            for (;;) {
                MPI_Testsome(n, reqs.data(), &outcount, idx.data(), MPI_STATUSES_IGNORE);
                if (outcount == MPI_UNDEFINED) return seen;
                seen += outcount;
            }
        case 4:
            for (;;) {
                MPI_Waitsome(n, reqs.data(), &outcount, idx.data(), MPI_STATUSES_IGNORE);
                if (outcount == MPI_UNDEFINED) return seen;
                seen += outcount;
            }
        default:
            do {
                MPI_Request_get_status_all(n, reqs.data(), &flag, MPI_STATUSES_IGNORE);
            } while (!flag);
            MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE);
            return n;
    }
}

// persistent sends and receives with the peer, and a persistent allreduce
void persistent_thread(const Run& run) {
    MPI_Comm comm = app_comms[kPersistentComm];
    int out[2] = {0, 0}, in[2] = {-1, -1}, value = 0, sum = 0;
    std::vector<MPI_Request> reqs(5);
    for (int i = 0; i < 2; i++) {
        MPI_Recv_init(&in[i], 1, MPI_INT, run.peer, i, comm, &reqs[size_t(i)]);
        MPI_Send_init(&out[i], 1, MPI_INT, run.peer, i, comm, &reqs[size_t(2 + i)]);
    }
    MPI_Allreduce_init(&value, &sum, 1, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &reqs[4]);
    for (int r = 0; r < run.rounds; r++) {
        out[0] = code(run.rank, r, 0);
        out[1] = code(run.rank, r, 1);
        in[0] = in[1] = -1;
        value = r + run.rank;
        MPI_Startall(5, reqs.data());
        const int seen = complete_persistent(r, reqs);
        if (seen != 5) failures.report("persistent thread round %d: %d completions of 5", r, seen);
        rounds_done[kPersistentRole]++;
        app.add(kPersistentComm, kPRecv, 2);
        app.add(kPersistentComm, kPSend, 2);
        app.add(kPersistentComm, kPColl, 1);
        const int want_sum = run.size * r + run.size * (run.size - 1) / 2;
        if (in[0] != code(run.peer, r, 0) || in[1] != code(run.peer, r, 1) || sum != want_sum) {
            failures.report("persistent thread round %d: got %d %d sum %d", r, in[0], in[1], sum);
        }
    }
    for (MPI_Request& q : reqs) MPI_Request_free(&q);
}

// nonblocking collectives on a communicator of its own
void coll_thread(const Run& run) {
    MPI_Comm comm = app_comms[kCollComm];
    std::vector<MPI_Request> reqs(3);
    std::vector<MPI_Status> statuses;
    for (int r = 0; r < run.rounds; r++) {
        int value = run.rank + r, sum = -1, root = r % run.size, b = run.rank == root ? r : -1;
        MPI_Ibarrier(comm, &reqs[0]);
        MPI_Iallreduce(&value, &sum, 1, MPI_INT, MPI_SUM, comm, &reqs[1]);
        MPI_Ibcast(&b, 1, MPI_INT, root, comm, &reqs[2]);
        const Form f = static_cast<Form>((r + 3) % kForms);
        complete_all(f, reqs, statuses, failures, "collective thread");
        rounds_done[kCollRole]++;
        app.add(kCollComm, kColl, 3);
        if (sum != run.size * r + run.size * (run.size - 1) / 2 || b != r) {
            failures.report("collective thread round %d (%s): sum %d bcast %d", r, form_name(f), sum, b);
        }
    }
}

// generalized requests: a class whose poll_fn/wait_fn complete a request at its second poll (the
// handle stored after the allocation returns, as ROMIO does), and plain ones completed by their
// owner or by the completer thread
struct GreqOp {
    std::atomic<MPI_Request> handle{MPI_REQUEST_NULL};
    std::atomic<int> polls{0}, frees{0};
    std::atomic<bool> completed{false};
    int id = 0;
};

int greq_query(void* extra, MPI_Status* s) {
    MPI_Status_set_elements(s, MPI_BYTE, 0);
    MPI_Status_set_cancelled(s, 0);
    s->MPI_SOURCE = MPI_UNDEFINED;
    s->MPI_TAG = static_cast<GreqOp*>(extra)->id;
    return MPI_SUCCESS;
}
int greq_free(void* extra) {
    static_cast<GreqOp*>(extra)->frees++;
    return MPI_SUCCESS;
}
int greq_cancel(void*, int) { return MPI_SUCCESS; }
void greq_advance(GreqOp& op) {
    const MPI_Request h = op.handle.load();
    if (h != MPI_REQUEST_NULL && ++op.polls >= 2 && !op.completed.exchange(true)) {
        MPI_Grequest_complete(h);
    }
}
int greq_poll(void* extra, MPI_Status*) {
    greq_advance(*static_cast<GreqOp*>(extra));
    return MPI_SUCCESS;
}
int greq_wait(int count, void** states, double, MPI_Status*) {
    for (int i = 0; i < count; i++) greq_advance(*static_cast<GreqOp*>(states[i]));
    return MPI_SUCCESS;
}

constexpr int kGreqs = 12;  // per round: 6 class requests, 3 plain completed here, 3 by the completer
std::atomic<long> class_completions{0};

void greq_thread(const Run& run, MPIX_Grequest_class cls, CompleterQueue& queue) {
    std::vector<MPI_Status> statuses;
    for (int r = 0; r < run.rounds; r++) {
        std::vector<GreqOp> ops(kGreqs);
        std::vector<MPI_Request> reqs(kGreqs, MPI_REQUEST_NULL);
        std::vector<MPI_Request> mine;
        for (int i = 0; i < kGreqs; i++) {
            GreqOp& op = ops[size_t(i)];
            op.id = r * kGreqs + i;
            MPI_Request h = MPI_REQUEST_NULL;
            if (i % 2 == 0) {
                MPIX_Grequest_class_allocate(cls, &op, &h);
                op.handle.store(h);
            } else {
                MPI_Grequest_start(greq_query, greq_free, greq_cancel, &op, &h);
                if (i % 4 == 1) {
                    mine.push_back(h);
                } else {
                    queue.push(h);
                }
            }
            reqs[size_t(i)] = h;
        }
        for (MPI_Request h : mine) MPI_Grequest_complete(h);
        const Form f = static_cast<Form>((r * 2 + 1) % kForms);
        complete_all(f, reqs, statuses, failures, "greq thread");
        rounds_done[kGreqRole]++;
        app.add(kNullComm, kGen, kGreqs);
        class_completions += kGreqs / 2;
        for (int i = 0; i < kGreqs; i++) {
            const GreqOp& op = ops[size_t(i)];
            if (op.frees.load() != 1 || statuses[size_t(i)].MPI_TAG != op.id) {
                failures.report("greq thread round %d (%s): request %d freed %d times, tag %d (expected %d)",
                                r, form_name(f), i, op.frees.load(), statuses[size_t(i)].MPI_TAG, op.id);
            }
        }
    }
    queue.close();
}

void completer_thread(CompleterQueue& queue) {
    for (MPI_Request h; (h = queue.pop()) != MPI_REQUEST_NULL;) {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        MPI_Grequest_complete(h);
    }
}

unsigned long long class_completed_pvar(MPIX_Grequest_class cls) {
    MPI_T_pvar_session session;
    MPI_T_pvar_session_create(&session);
    MPI_T_pvar_handle hh, hc;
    int count = 0;
    unsigned long long result = ~0ull;
    if (MPI_T_pvar_handle_alloc(session, index_of_pvar("greq_class_handle"), nullptr, &hh, &count) == MPI_SUCCESS &&
        MPI_T_pvar_handle_alloc(session, index_of_pvar("greq_class_completed"), nullptr, &hc, &count) == MPI_SUCCESS) {
        std::vector<int> handles(size_t(count) + 1);
        std::vector<unsigned long long> completed(size_t(count) + 1);
        MPI_T_pvar_read(session, hh, handles.data());
        MPI_T_pvar_read(session, hc, completed.data());
        for (int i = 0; i < count; i++) {
            if (handles[size_t(i)] == int(cls)) result = completed[size_t(i)];
        }
        MPI_T_pvar_handle_free(session, &hh);
        MPI_T_pvar_handle_free(session, &hc);
    }
    MPI_T_pvar_session_free(&session);
    return result;
}

// A completion call after everything else: its safe point delivers what is still deferred and
// reports what was dropped.
void flush(int id) {
    GreqOp op;
    op.id = id;
    MPI_Request h;
    MPI_Grequest_start(greq_query, greq_free, greq_cancel, &op, &h);
    MPI_Grequest_complete(h);
    MPI_Wait(&h, MPI_STATUS_IGNORE);
    app.add(kNullComm, kGen, 1);
}

const char* level_name(MPI_T_cb_safety s) {
    switch (s) {
        case MPI_T_CB_REQUIRE_NONE: return "NONE";
        case MPI_T_CB_REQUIRE_MPI_RESTRICTED: return "MPI_RESTRICTED";
        case MPI_T_CB_REQUIRE_THREAD_SAFE: return "THREAD_SAFE";
        case MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE: return "ASYNC_SIGNAL_SAFE";
    }
    return "?";
}

void check_permanent(Permanent& p) {
    const char* lv = level_name(p.level);
    if (p.frees.load() != 1 || p.free_errors.load() != 0) {
        failures.report("handle at %s: free_cb ran %d times, %d MPI_T calls in it failed", lv,
                        p.frees.load(), p.free_errors.load());
    }
    if (p.mpit_errors.load() != 0) {
        failures.report("handle at %s: %ld MPI_T calls in its callback failed (or bad data)", lv,
                        p.mpit_errors.load());
    }
    const long total = app.total();
    if (p.level != MPI_T_CB_REQUIRE_NONE) {
        // every completion, once, where it was raised
        for (int s = 0; s < kSlots; s++) {
            for (int k = 0; k < kKinds; k++) {
                if (p.seen.n[s][k].load() != app.n[s][k].load()) {
                    failures.report("handle at %s: %ld %s completions on the %s, the application made %ld",
                                    lv, p.seen.n[s][k].load(), kKindNames[k], kSlotNames[s],
                                    app.n[s][k].load());
                }
            }
        }
        int missing = 0, twice = 0;
        for (auto& c : p.per_id) {
            missing += c.load() == 0 ? 1 : 0;
            twice += c.load() > 1 ? 1 : 0;
        }
        if (missing || twice) {
            failures.report("handle at %s: %d generalized requests never seen, %d seen more than once",
                            lv, missing, twice);
        }
        if (p.delivered_at_none.load() != 0) {
            failures.report("handle at %s: %ld of %ld instances deferred instead of delivered where raised",
                            lv, p.delivered_at_none.load(), p.instances.load());
        }
        if (p.dropped_calls.load() != 0) {
            failures.report("handle at %s: its dropped handler was called %ld times (%ld instances)",
                            lv, p.dropped_calls.load(), p.dropped.load());
        }
    } else {
        if (p.instances.load() + p.dropped.load() != total) {
            failures.report("handle at NONE: %ld delivered + %ld dropped != %ld completions",
                            p.instances.load(), p.dropped.load(), total);
        }
        if (p.delivered_at_none.load() != p.instances.load()) {
            failures.report("handle at NONE: %ld of %ld instances not delivered at a safe point",
                            p.instances.load() - p.delivered_at_none.load(), p.instances.load());
        }
        long twice = 0;
        for (auto& c : p.per_id) twice += c.load() > 1 ? 1 : 0;
        if (twice) failures.report("handle at NONE: %ld generalized requests delivered twice", twice);
    }
}

}  // namespace

int main(int argc, char** argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    Run run;
    MPI_Comm_rank(MPI_COMM_WORLD, &run.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &run.size);
    if (provided != MPI_THREAD_MULTIPLE) {
        if (run.rank == 0) std::fprintf(stderr, "tool_stress: needs MPI_THREAD_MULTIPLE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    run.peer = (run.rank ^ 1) < run.size ? (run.rank ^ 1) : run.rank;
    run.rounds = argc > 1 ? std::atoi(argv[1]) : 2000;
    const double deadline = argc > 2 ? std::atof(argv[2]) : 120.0;
    gen_ids = run.rounds * kGreqs + 1;  // and the flush's

    int mpit_provided = 0;
    MPI_T_init_thread(MPI_THREAD_MULTIPLE, &mpit_provided);  // first: MPI_T takes its lock
    if (mpit_provided != MPI_THREAD_MULTIPLE) {
        std::fprintf(stderr, "tool_stress: MPI_T_init_thread gave thread level %d\n", mpit_provided);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int sources = 0;
    MPI_T_source_get_num(&sources);
    for (int i = 0; i < sources; i++) {
        char name[64], desc[256];
        int name_len = sizeof name, desc_len = sizeof desc;
        MPI_T_source_order order;
        MPI_Count ticks = 0, max_ticks = 0;
        if (MPI_T_source_get_info(i, name, &name_len, desc, &desc_len, &order, &ticks, &max_ticks,
                                  nullptr) == MPI_SUCCESS &&
            std::strcmp(name, "request_engine") == 0) {
            engine_source = i;
        }
    }
    app_comms[kNullComm] = MPI_COMM_NULL;
    app_comms[kOtherComm] = MPI_COMM_NULL;
    for (int s = kP2pComm; s <= kCollComm; s++) MPI_Comm_dup(MPI_COMM_WORLD, &app_comms[s]);
    MPIX_Grequest_class cls = 0;
    MPIX_Grequest_class_create(greq_query, greq_free, greq_cancel, greq_poll, greq_wait, &cls);
    const unsigned long long class_before = class_completed_pvar(cls);

    ToolStats stats;
    std::vector<std::unique_ptr<Dynamic>> dynamic;
    std::vector<std::unique_ptr<Permanent>> permanent;
    long completions = 0, deferred = 0, dropped = 0, seen[3] = {0, 0, 0};
    {
        Watchdog watchdog(run.rank, run.rounds, deadline);
        int index = -1;
        MPI_T_event_get_index("request_complete", &index);
        for (MPI_T_cb_safety level : {MPI_T_CB_REQUIRE_NONE, MPI_T_CB_REQUIRE_MPI_RESTRICTED,
                                      MPI_T_CB_REQUIRE_THREAD_SAFE,
                                      MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE}) {
            auto p = std::make_unique<Permanent>();
            p->level = level;
            p->per_id = std::vector<std::atomic<int>>(size_t(gen_ids));
            if (MPI_T_event_handle_alloc(index, nullptr, MPI_INFO_NULL, &p->handle) != MPI_SUCCESS ||
                MPI_T_event_register_callback(p->handle, level, MPI_INFO_NULL, p.get(),
                                              permanent_cb) != MPI_SUCCESS ||
                MPI_T_event_set_dropped_handler(p->handle, permanent_dropped) != MPI_SUCCESS) {
                std::fprintf(stderr, "tool_stress: cannot listen to request_complete\n");
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            permanent.push_back(std::move(p));
        }

        main_step = "waiting for the application threads";
        std::atomic<bool> app_done{false};
        std::thread tool(tool_thread, std::ref(app_done), std::ref(stats), std::ref(dynamic));
        CompleterQueue queue;
        std::vector<std::thread> threads;
        threads.emplace_back(p2p_thread, std::cref(run));
        threads.emplace_back(persistent_thread, std::cref(run));
        threads.emplace_back(coll_thread, std::cref(run));
        threads.emplace_back(greq_thread, std::cref(run), cls, std::ref(queue));
        threads.emplace_back(completer_thread, std::ref(queue));
        for (auto& t : threads) t.join();
        app_done = true;
        main_step = "waiting for the tool thread";
        tool.join();
        main_step = "flushing deferred events, freeing the permanent handles (free_cb calls MPI_T)";

        flush(gen_ids - 1);
        for (auto& p : permanent) {
            if (MPI_T_event_handle_free(p->handle, p.get(), permanent_free) != MPI_SUCCESS) {
                failures.report("MPI_T_event_handle_free failed (handle at %s)", level_name(p->level));
            }
        }
        main_step = "checking";
        for (auto& p : permanent) check_permanent(*p);
        bury_all();
        for (auto& d : dynamic) {
            if (d->frees.load() != 1 || d->free_errors.load() != 0 || d->errors.load() != 0) {
                failures.report("dynamic handle %d (%s): free_cb ran %d times (%d MPI_T calls in it failed), "
                                "%ld MPI_T calls in its callback failed",
                                d->id, kDynamicNames[d->kind], d->frees.load(), d->free_errors.load(),
                                d->errors.load());
            }
        }
        const unsigned long long class_after = class_completed_pvar(cls);
        if (class_after - class_before != (unsigned long long)class_completions.load()) {
            failures.report("greq_class_completed went from %llu to %llu, %ld class requests completed",
                            class_before, class_after, class_completions.load());
        }
        completions = app.total();
        for (int k = 0; k < 3; k++) {
            const Permanent& p = *permanent[size_t(k + 1)];
            seen[k] = p.instances.load() - p.delivered_at_none.load();
        }
        deferred = permanent[0]->instances.load();
        dropped = permanent[0]->dropped.load();
    }
    for (int s = kP2pComm; s <= kCollComm; s++) MPI_Comm_free(&app_comms[s]);
    MPI_T_finalize();

    long mine[9] = {completions, seen[0], seen[1], seen[2], deferred, dropped, stats.sweeps,
                    stats.dynamic_handles, dynamic_calls.load()};
    long all[9];
    MPI_Reduce(mine, all, 9, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    int f = failures.count(), all_failures = 0;
    MPI_Allreduce(&f, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (run.rank == 0) {
        std::printf("tool_stress: %d process(es), %d rounds: %ld completions; seen where raised by "
                    "the MPI_RESTRICTED/THREAD_SAFE/ASYNC_SIGNAL_SAFE handles %ld/%ld/%ld, the NONE "
                    "handle got %ld deferred + %ld dropped; tool thread: %ld sweeps of %d performance "
                    "variables, %ld short-lived event handles (%ld callbacks); %d failures\n",
                    run.size, run.rounds, all[0], all[1], all[2], all[3], all[4], all[5], all[6],
                    stats.variables, all[7], all[8], all_failures);
    }
    MPI_Finalize();
    return all_failures == 0 ? 0 : 1;
}
