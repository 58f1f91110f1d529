// Tools calling MPI_T where MPI_T and MPICH allow it: callbacks registered at
// MPI_T_CB_REQUIRE_MPI_RESTRICTED that call MPI_T (MPI_T_event_read, MPI_T_pvar_read of the
// greq_class_* variables) while a tool thread samples those variables; a free_cb that calls MPI_T;
// the deferral of instances for MPI_T_CB_REQUIRE_NONE callbacks not shared with handles whose
// callbacks run where the event is raised. Every part that can deadlock runs under a watchdog,
// which names the case and aborts instead of hanging.
#include <catch2/catch.hpp>

#include "greq_class_support.hpp"
#include "mpi_test_support.hpp"
#include "mpit_events_support.hpp"
#include "mpit_support.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

using namespace reqtest;

namespace {

constexpr double kHangSeconds = 20.0;  // each case passes in well under 10 s

// MPI_T initialized for the scope with MPI_THREAD_MULTIPLE, so that MPI_T's own lock is taken
// (MPICH takes it only when the first MPI_T_init_thread asked for MPI_THREAD_MULTIPLE).
class MpitMultiple {
public:
    MpitMultiple() { MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided_); }
    ~MpitMultiple() { MPI_T_finalize(); }
    MpitMultiple(const MpitMultiple&) = delete;
    MpitMultiple& operator=(const MpitMultiple&) = delete;
    int provided() const { return provided_; }

private:
    int provided_ = -1;
};

// A session of its own with a handle on every greq_class_* variable; reads report MPI_T's
// return codes (GreqClassPvars of mpit_support.hpp does not).
class ClassPvarReader {
public:
    static constexpr const char* kNames[] = {
        "greq_class_polls",       "greq_class_waits",        "greq_class_waited_requests",
        "greq_class_completed",   "greq_class_wait_time",    "greq_class_mean_latency",
        "greq_class_wait_timeout", "greq_class_handle"};
    static constexpr int kVars = 8;
    static constexpr int kCompleted = 3;
    static constexpr int kHandle = 7;

    ClassPvarReader() {
        MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided_);
        ok_ = MPI_T_pvar_session_create(&session_) == MPI_SUCCESS;
        for (int v = 0; v < kVars && ok_; v++) {
            int index = -1;
            ok_ = MPI_T_pvar_get_index(kNames[v], MPI_T_PVAR_CLASS_COUNTER, &index) ==
                      MPI_SUCCESS ||
                  MPI_T_pvar_get_index(kNames[v], MPI_T_PVAR_CLASS_TIMER, &index) ==
                      MPI_SUCCESS ||
                  MPI_T_pvar_get_index(kNames[v], MPI_T_PVAR_CLASS_GENERIC, &index) ==
                      MPI_SUCCESS;
            int count = 0;
            ok_ = ok_ && MPI_T_pvar_handle_alloc(session_, index, nullptr, &handles_[v],
                                                 &count) == MPI_SUCCESS;
            count_ = count;
        }
    }
    ~ClassPvarReader() {
        for (auto& h : handles_) {
            if (h != MPI_T_PVAR_HANDLE_NULL) MPI_T_pvar_handle_free(session_, &h);
        }
        if (session_ != MPI_T_PVAR_SESSION_NULL) MPI_T_pvar_session_free(&session_);
        MPI_T_finalize();
    }
    ClassPvarReader(const ClassPvarReader&) = delete;
    ClassPvarReader& operator=(const ClassPvarReader&) = delete;

    bool ok() const { return ok_ && count_ > 0; }
    int classes() const { return count_; }

    // MPI_T_pvar_read of variable v into 8-byte slots (every greq_class_* element fits one).
    int read(int v, std::vector<unsigned long long>& out) {
        out.assign(size_t(count_) + 1, 0);
        return MPI_T_pvar_read(session_, handles_[v], out.data());
    }
    // Reads every variable; the number of reads that did not return MPI_SUCCESS.
    int read_all() {
        int bad = 0;
        std::vector<unsigned long long> buf;
        for (int v = 0; v < kVars; v++) bad += read(v, buf) == MPI_SUCCESS ? 0 : 1;
        return bad;
    }
    int element_of(MPIX_Grequest_class cls) {
        std::vector<unsigned long long> buf;
        if (read(kHandle, buf) != MPI_SUCCESS) return -1;
        const int* handles = reinterpret_cast<const int*>(buf.data());
        for (int i = 0; i < count_; i++) {
            if (handles[i] == int(cls)) return i;
        }
        return -1;
    }
    unsigned long long completed(int element) {
        std::vector<unsigned long long> buf;
        return read(kCompleted, buf) == MPI_SUCCESS ? buf[size_t(element)] : ~0ull;
    }

private:
    int provided_ = -1;
    bool ok_ = false;
    int count_ = 0;
    MPI_T_pvar_session session_ = MPI_T_PVAR_SESSION_NULL;
    MPI_T_pvar_handle handles_[kVars] = {MPI_T_PVAR_HANDLE_NULL, MPI_T_PVAR_HANDLE_NULL,
                                         MPI_T_PVAR_HANDLE_NULL, MPI_T_PVAR_HANDLE_NULL,
                                         MPI_T_PVAR_HANDLE_NULL, MPI_T_PVAR_HANDLE_NULL,
                                         MPI_T_PVAR_HANDLE_NULL, MPI_T_PVAR_HANDLE_NULL};
};

int query_tag(void* extra, MPI_Status* status) {
    MPI_Status_set_elements(status, MPI_BYTE, 0);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = int(reinterpret_cast<intptr_t>(extra));
    return MPI_SUCCESS;
}
int free_nothing(void*) { return MPI_SUCCESS; }
int cancel_nothing(void*, int) { return MPI_SUCCESS; }

// n plain generalized requests, already complete (MPI_Grequest_complete), tags 0..n-1.
std::vector<MPI_Request> complete_grequests(int n) {
    std::vector<MPI_Request> reqs(size_t(n), MPI_REQUEST_NULL);
    for (int i = 0; i < n; i++) {
        MPI_Grequest_start(query_tag, free_nothing, cancel_nothing,
                           reinterpret_cast<void*>(intptr_t(i)), &reqs[size_t(i)]);
    }
    for (MPI_Request r : std::vector<MPI_Request>(reqs)) MPI_Grequest_complete(r);
    return reqs;
}

const char* safety_name(MPI_T_cb_safety s) {
    switch (s) {
        case MPI_T_CB_REQUIRE_NONE: return "MPI_T_CB_REQUIRE_NONE";
        case MPI_T_CB_REQUIRE_MPI_RESTRICTED: return "MPI_T_CB_REQUIRE_MPI_RESTRICTED";
        case MPI_T_CB_REQUIRE_THREAD_SAFE: return "MPI_T_CB_REQUIRE_THREAD_SAFE";
        case MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE: return "MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE";
    }
    return "?";
}

MPI_Count sum(const std::vector<MPI_Count>& v) {
    return std::accumulate(v.begin(), v.end(), MPI_Count(0));
}

int deferred_count(const EventListener& l) {
    int n = 0;
    for (const auto& i : l.instances()) n += i.safety == MPI_T_CB_REQUIRE_NONE ? 1 : 0;
    return n;
}

int cvar_int(const char* name) {
    int index = -1, count = 0, value = -1;
    MPI_T_cvar_handle h;
    if (MPI_T_cvar_get_index(name, &index) != MPI_SUCCESS ||
        MPI_T_cvar_handle_alloc(index, nullptr, &h, &count) != MPI_SUCCESS) {
        return -1;
    }
    MPI_T_cvar_read(h, &value);
    MPI_T_cvar_handle_free(&h);
    return value;
}

// A request_complete handle at MPI_T_CB_REQUIRE_MPI_RESTRICTED whose callback reads a
// greq_class_* variable with MPI_T_pvar_read.
struct PvarReadingCallback {
    ClassPvarReader* reader = nullptr;
    int element = -1;
    int calls = 0, failures = 0;
    std::vector<unsigned long long> completed;
    std::vector<MPI_T_cb_safety> safeties;

    static void on_event(MPI_T_event_instance ev, MPI_T_event_registration, MPI_T_cb_safety s,
                         void* user) {
        auto* self = static_cast<PvarReadingCallback*>(user);
        self->calls++;
        self->safeties.push_back(s);
        int kind = 0;
        if (MPI_T_event_read(ev, 0, &kind) != MPI_SUCCESS) self->failures++;
        std::vector<unsigned long long> buf;
        if (self->reader->read(ClassPvarReader::kCompleted, buf) != MPI_SUCCESS) {
            self->failures++;
        } else {
            self->completed.push_back(buf[size_t(self->element)]);
        }
    }
};

// free_cb that calls MPI_T functions and records what they returned.
struct FreeCbRecord {
    std::atomic<int> calls{0};
    std::atomic<int> failures{0};
    int events = -1, pvars = -1;
    static void on_free(MPI_T_event_registration, MPI_T_cb_safety, void* user) {
        auto* self = static_cast<FreeCbRecord*>(user);
        int n = -1, m = -1;
        if (MPI_T_event_get_num(&n) != MPI_SUCCESS) self->failures++;
        if (MPI_T_pvar_get_num(&m) != MPI_SUCCESS) self->failures++;
        self->events = n;
        self->pvars = m;
        self->calls++;
    }
};

void count_event(MPI_T_event_instance, MPI_T_event_registration, MPI_T_cb_safety, void* user) {
    (*static_cast<int*>(user))++;
}

}  // namespace

TEST_CASE("tool safety: a tool thread sampling greq_class pvars while MPI_T_CB_REQUIRE_MPI_RESTRICTED "
          "callbacks call MPI_T_event_read does not deadlock",
          "[events][mpit_tool_safety]") {
    MpitMultiple mpit;
    REQUIRE(mpit.provided() == MPI_THREAD_MULTIPLE);
    int thread_level = 0;
    MPI_Query_thread(&thread_level);
    REQUIRE(thread_level == MPI_THREAD_MULTIPLE);
    TestClass& cls = TestClass::get();
    ClassPvarReader tool_reader;
    REQUIRE(tool_reader.ok());
    const int element = tool_reader.element_of(cls.handle());
    REQUIRE(element >= 0);
    const unsigned long long completed_before = tool_reader.completed(element);

    // reads every element of every instance with MPI_T_event_read (takes MPI_T's lock)
    EventListener events("request_complete", MPI_T_CB_REQUIRE_MPI_RESTRICTED);
    REQUIRE(events.ok());

    const int batches = 300, batch = 100;  // 30 000 class request completions
    std::atomic<bool> stop{false};
    std::atomic<long> reads{0}, read_failures{0}, decreases{0};
    int completed = 0;
    {
        Watchdog dog("tool safety: tool thread reading greq_class pvars while the application "
                     "completes class requests with an MPI_RESTRICTED callback calling "
                     "MPI_T_event_read (MPI_T lock vs. MPICH's global lock)",
                     kHangSeconds);
        std::thread tool([&] {
            unsigned long long last = 0;
            while (!stop.load()) {
                read_failures += tool_reader.read_all();
                const unsigned long long now = tool_reader.completed(element);
                if (now < last) decreases++;
                last = now;
                reads++;
            }
        });
        for (int b = 0; b < batches; b++) {
            ClassOps ops;
            std::vector<MPI_Request> reqs;
            for (int i = 0; i < batch; i++) reqs.push_back(cls.allocate(ops.add(i)));
            MPI_Waitall(batch, reqs.data(), MPI_STATUSES_IGNORE);
            for (size_t i = 0; i < ops.size(); i++) completed += ops[i].frees;
        }
        stop = true;
        tool.join();
    }
    INFO("tool thread: " << reads.load() << " samplings");
    CHECK(completed == batches * batch);
    CHECK(events.completions().size() == size_t(batches * batch));
    CHECK(reads.load() > 0);
    CHECK(read_failures.load() == 0);
    CHECK(decreases.load() == 0);
    CHECK(tool_reader.completed(element) - completed_before ==
          (unsigned long long)(batches * batch));
}

TEST_CASE("tool safety: a request_complete callback at MPI_T_CB_REQUIRE_MPI_RESTRICTED may read a "
          "greq_class pvar",
          "[events][mpit_tool_safety]") {
    MpitMultiple mpit;
    REQUIRE(mpit.provided() == MPI_THREAD_MULTIPLE);
    TestClass& cls = TestClass::get();
    ClassPvarReader reader;
    REQUIRE(reader.ok());
    PvarReadingCallback cb;
    cb.reader = &reader;
    cb.element = reader.element_of(cls.handle());
    REQUIRE(cb.element >= 0);
    const unsigned long long before = reader.completed(cb.element);

    MPI_T_event_registration handle;
    REQUIRE(MPI_T_event_handle_alloc(event_index_of("request_complete"), nullptr, MPI_INFO_NULL,
                                     &handle) == MPI_SUCCESS);
    REQUIRE(MPI_T_event_register_callback(handle, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL,
                                          &cb, PvarReadingCallback::on_event) == MPI_SUCCESS);
    {
        Watchdog dog("tool safety: MPI_T_pvar_read(greq_class_completed) inside an "
                     "MPI_RESTRICTED request_complete callback (self-deadlock on MPICH's global "
                     "lock)",
                     kHangSeconds);
        // four class requests through MPI_Waitall, one through MPI_Wait
        ClassOps ops;
        std::vector<MPI_Request> reqs;
        for (int i = 0; i < 4; i++) reqs.push_back(cls.allocate(ops.add(i)));
        MPI_Waitall(4, reqs.data(), MPI_STATUSES_IGNORE);
        MPI_Request one = cls.allocate(ops.add(4));
        MPI_Wait(&one, MPI_STATUS_IGNORE);
        // a message to self and a plain generalized request
        const int me = world_rank();
        int in = -1;
        MPI_Request pair[2];
        MPI_Irecv(&in, 1, MPI_INT, me, 25, MPI_COMM_WORLD, &pair[0]);
        MPI_Isend(&me, 1, MPI_INT, me, 25, MPI_COMM_WORLD, &pair[1]);
        MPI_Waitall(2, pair, MPI_STATUSES_IGNORE);
        CHECK(in == me);
        std::vector<MPI_Request> g = complete_grequests(1);
        int flag = 0;
        MPI_Test(&g[0], &flag, MPI_STATUS_IGNORE);
        CHECK(flag == 1);
        MPI_T_event_handle_free(handle, nullptr, nullptr);
    }
    CHECK(cb.calls == 8);
    CHECK(cb.failures == 0);
    REQUIRE(cb.completed.size() == size_t(cb.calls));
    for (size_t i = 0; i < cb.completed.size(); i++) {
        INFO("read " << i);
        CHECK(cb.completed[i] >= before);
        CHECK(cb.completed[i] <= before + 5);
        if (i > 0) CHECK(cb.completed[i] >= cb.completed[i - 1]);
    }
    CHECK(reader.completed(cb.element) == before + 5);
}

TEST_CASE("tool safety: a handle whose callback runs where the event is raised gets every instance "
          "at once, beside a MPI_T_CB_REQUIRE_NONE handle that fills the deferral queue",
          "[events][mpit_tool_safety]") {
    MpitMultiple mpit;
    REQUIRE(mpit.provided() == MPI_THREAD_MULTIPLE);
    const int limit = cvar_int("MPIR_CVAR_T_EVENT_DEFER_LIMIT");
    REQUIRE(limit > 0);
    const int n = 1500;
    REQUIRE(n > limit);  // the NONE handle loses instances, the other must not
    TestClass& cls = TestClass::get();

    for (MPI_T_cb_safety safety : {MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_T_CB_REQUIRE_MPI_RESTRICTED,
                                   MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE}) {
        for (bool none_first : {false, true}) {
            INFO("immediate handle at " << safety_name(safety) << ", allocated "
                                        << (none_first ? "after" : "before")
                                        << " the MPI_T_CB_REQUIRE_NONE handle; defer limit "
                                        << limit);
            Watchdog dog("tool safety: event deferral beside an immediate handle", kHangSeconds);
            std::unique_ptr<EventListener> immediate, deferred;
            if (none_first) {
                deferred.reset(new EventListener("request_complete", MPI_T_CB_REQUIRE_NONE));
            }
            immediate.reset(new EventListener("request_complete", safety));
            if (!none_first) {
                deferred.reset(new EventListener("request_complete", MPI_T_CB_REQUIRE_NONE));
            }
            REQUIRE(immediate->ok());
            REQUIRE(deferred->ok());

            const bool class_requests = safety == MPI_T_CB_REQUIRE_MPI_RESTRICTED;
            INFO((class_requests ? "class requests" : "plain generalized requests")
                 << " completed in one MPI_Waitall");
            ClassOps ops;
            std::vector<MPI_Request> reqs;
            if (class_requests) {
                for (int i = 0; i < n; i++) reqs.push_back(cls.allocate(ops.add(i)));
            } else {
                reqs = complete_grequests(n);
            }
            MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE);

            // the immediate handle: every instance once, delivered where it was raised
            auto got = immediate->completions();
            CHECK(got.size() == size_t(n));
            CHECK(deferred_count(*immediate) == 0);
            std::vector<int> per_index(size_t(n), 0);
            for (const CompleteEvent& e : got) {
                if (e.index >= 0 && e.index < n) per_index[size_t(e.index)]++;
            }
            CHECK(std::count(per_index.begin(), per_index.end(), 1) == n);
            CHECK(immediate->dropped().empty());

            // the NONE handle: the queue's worth after the call, the rest counted as dropped
            const auto& late = deferred->instances();
            CHECK(late.size() == size_t(limit));
            CHECK(deferred_count(*deferred) == int(late.size()));
            CHECK(sum(deferred->dropped()) == MPI_Count(n) - MPI_Count(late.size()));
            auto late_c = deferred->completions();
            for (size_t i = 0; i < late_c.size(); i++) {
                if (late_c[i].index != int(i)) {
                    FAIL_CHECK("deferred instance " << i << " has index " << late_c[i].index);
                    break;
                }
            }
        }
    }
}

TEST_CASE("tool safety: MPIR_CVAR_T_EVENT_DEFER_LIMIT=4 with 20 completions: the immediate handle "
          "gets 20, the MPI_T_CB_REQUIRE_NONE handle 4 and is told of 16",
          "[events][mpit_tool_safety]") {
    MpitMultiple mpit;
    REQUIRE(mpit.provided() == MPI_THREAD_MULTIPLE);
    Watchdog dog("tool safety: defer limit 4", kHangSeconds);
    CvarSetting<int> setting("MPIR_CVAR_T_EVENT_DEFER_LIMIT", 4);
    REQUIRE(setting.ok());
    REQUIRE(cvar_int("MPIR_CVAR_T_EVENT_DEFER_LIMIT") == 4);
    EventListener immediate("request_complete", MPI_T_CB_REQUIRE_THREAD_SAFE);
    EventListener deferred("request_complete", MPI_T_CB_REQUIRE_NONE);
    REQUIRE(immediate.ok());
    REQUIRE(deferred.ok());
    const int n = 20;
    for (int round = 0; round < 3; round++) {
        INFO("round " << round);
        immediate.clear();
        deferred.clear();
        std::vector<MPI_Request> reqs = complete_grequests(n);
        MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE);
        CHECK(immediate.completions().size() == size_t(n));
        CHECK(deferred_count(immediate) == 0);
        CHECK(immediate.dropped().empty());
        CHECK(deferred.instances().size() == 4);
        CHECK(deferred_count(deferred) == int(deferred.instances().size()));
        CHECK(sum(deferred.dropped()) == MPI_Count(n - 4));
    }
}

TEST_CASE("tool safety: an event handle's free_cb may call MPI_T functions", "[events][mpit_tool_safety]") {
    MpitMultiple mpit;
    REQUIRE(mpit.provided() == MPI_THREAD_MULTIPLE);
    int num_events = -1, num_pvars = -1;
    MPI_T_event_get_num(&num_events);
    MPI_T_pvar_get_num(&num_pvars);
    const int index = event_index_of("request_complete");
    REQUIRE(index >= 0);
    for (MPI_T_cb_safety safety : {MPI_T_CB_REQUIRE_NONE, MPI_T_CB_REQUIRE_MPI_RESTRICTED,
                                   MPI_T_CB_REQUIRE_THREAD_SAFE}) {
        for (bool used : {false, true}) {
            INFO("callback at " << safety_name(safety)
                                << (used ? ", after two events" : ", no event seen"));
            MPI_T_event_registration handle;
            REQUIRE(MPI_T_event_handle_alloc(index, nullptr, MPI_INFO_NULL, &handle) ==
                    MPI_SUCCESS);
            int seen = 0;
            REQUIRE(MPI_T_event_register_callback(handle, safety, MPI_INFO_NULL, &seen,
                                                  count_event) == MPI_SUCCESS);
            if (used) {
                std::vector<MPI_Request> reqs = complete_grequests(2);
                MPI_Waitall(2, reqs.data(), MPI_STATUSES_IGNORE);
                CHECK(seen == 2);
            }
            FreeCbRecord rec;
            {
                Watchdog dog("tool safety: MPI_T_event_handle_free whose free_cb calls "
                             "MPI_T_event_get_num and MPI_T_pvar_get_num (MPI_T lock held)",
                             kHangSeconds);
                CHECK(MPI_T_event_handle_free(handle, &rec, FreeCbRecord::on_free) ==
                      MPI_SUCCESS);
                if (rec.calls.load() == 0) {
                    // no callback of the handle runs, so free_cb is due now; should MPICH keep
                    // it for its next safe point, a completion call is one
                    MPI_Request none = MPI_REQUEST_NULL;
                    MPI_Wait(&none, MPI_STATUS_IGNORE);
                }
            }
            CHECK(rec.calls.load() == 1);
            CHECK(rec.failures.load() == 0);
            CHECK(rec.events == num_events);
            CHECK(rec.pvars == num_pvars);
        }
    }
}

namespace {

// What one MPI_T_CB_REQUIRE_NONE handle was told, in order: 'c' per instance, 'd' per drop
// report (with its count). Its callback makes a completion call of its own (a safe point).
struct OrderLog {
    std::mutex lock;
    std::string order;
    MPI_Count dropped = 0;
};

void order_callback(MPI_T_event_instance, MPI_T_event_registration, MPI_T_cb_safety, void* user) {
    auto* log = static_cast<OrderLog*>(user);
    {
        std::lock_guard<std::mutex> g(log->lock);
        log->order += 'c';
    }
    MPI_Request null_request = MPI_REQUEST_NULL;
    int flag = 0;
    MPI_Test(&null_request, &flag, MPI_STATUS_IGNORE);
}

void order_dropped(MPI_Count count, MPI_T_event_registration, int, MPI_T_cb_safety, void* user) {
    auto* log = static_cast<OrderLog*>(user);
    std::lock_guard<std::mutex> g(log->lock);
    log->order += 'd';
    log->dropped += count;
}

}  // namespace

TEST_CASE("tool safety: a handle's drops are reported after the instances deferred before them, "
          "even when its callback reaches a safe point itself",
          "[events][mpit_tool_safety]") {
    MpitMultiple mpit;
    REQUIRE(mpit.provided() == MPI_THREAD_MULTIPLE);
    Watchdog dog("tool safety: drop report order", kHangSeconds);
    CvarSetting<int> setting("MPIR_CVAR_T_EVENT_DEFER_LIMIT", 3);
    REQUIRE(setting.ok());
    int index = -1;
    REQUIRE(MPI_T_event_get_index("request_complete", &index) == MPI_SUCCESS);
    OrderLog log;
    MPI_T_event_registration handle;
    REQUIRE(MPI_T_event_handle_alloc(index, nullptr, MPI_INFO_NULL, &handle) == MPI_SUCCESS);
    REQUIRE(MPI_T_event_register_callback(handle, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, &log,
                                          order_callback) == MPI_SUCCESS);
    REQUIRE(MPI_T_event_set_dropped_handler(handle, order_dropped) == MPI_SUCCESS);
    const int n = 12;
    std::vector<MPI_Request> reqs = complete_grequests(n);
    MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE);
    {
        std::lock_guard<std::mutex> g(log.lock);
        CHECK(log.order == "cccd");
        CHECK(log.dropped == MPI_Count(n - 3));
    }
    REQUIRE(MPI_T_event_handle_free(handle, nullptr, nullptr) == MPI_SUCCESS);
}

namespace {

// A THREAD_SAFE callback that frees another handle (once): that handle's free_cb runs inside the
// callback's context and must be told so (it may not call MPI there), not MPI_T_CB_REQUIRE_NONE.
struct FreeInside {
    MPI_T_event_registration other{};
    std::atomic<bool> freed{false};
    std::atomic<int> told{-1};
    std::atomic<int> free_cb_calls{0};
};

void free_inside_free_cb(MPI_T_event_registration, MPI_T_cb_safety safety, void* user) {
    auto* f = static_cast<FreeInside*>(user);
    f->told = int(safety);
    f->free_cb_calls++;
}

void free_inside_callback(MPI_T_event_instance, MPI_T_event_registration, MPI_T_cb_safety,
                          void* user) {
    auto* f = static_cast<FreeInside*>(user);
    if (!f->freed.exchange(true)) {
        MPI_T_event_handle_free(f->other, f, free_inside_free_cb);
    }
}

void ignore_instance(MPI_T_event_instance, MPI_T_event_registration, MPI_T_cb_safety, void*) {}

}  // namespace

TEST_CASE("tool safety: a free_cb run inside another handle's callback is told that callback's "
          "safety",
          "[events][mpit_tool_safety]") {
    MpitMultiple mpit;
    REQUIRE(mpit.provided() == MPI_THREAD_MULTIPLE);
    Watchdog dog("tool safety: free inside a callback", kHangSeconds);
    int index = -1, other_index = -1;
    REQUIRE(MPI_T_event_get_index("request_complete", &index) == MPI_SUCCESS);
    // a handle of another event: nothing but this handle holds it when it is freed
    REQUIRE(MPI_T_event_get_index("request_scan_served", &other_index) == MPI_SUCCESS);
    FreeInside f;
    MPI_T_event_registration freer;
    REQUIRE(MPI_T_event_handle_alloc(other_index, nullptr, MPI_INFO_NULL, &f.other) ==
            MPI_SUCCESS);
    REQUIRE(MPI_T_event_register_callback(f.other, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL,
                                          nullptr, ignore_instance) == MPI_SUCCESS);
    REQUIRE(MPI_T_event_handle_alloc(index, nullptr, MPI_INFO_NULL, &freer) == MPI_SUCCESS);
    REQUIRE(MPI_T_event_register_callback(freer, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, &f,
                                          free_inside_callback) == MPI_SUCCESS);
    std::vector<MPI_Request> reqs = complete_grequests(1);
    MPI_Waitall(1, reqs.data(), MPI_STATUSES_IGNORE);
    CHECK(f.freed.load());
    CHECK(f.free_cb_calls.load() == 1);
    // raised with MPI_T_CB_REQUIRE_MPI_RESTRICTED, run in a THREAD_SAFE callback
    CHECK(f.told.load() >= int(MPI_T_CB_REQUIRE_MPI_RESTRICTED));
    REQUIRE(MPI_T_event_handle_free(freer, nullptr, nullptr) == MPI_SUCCESS);
}
