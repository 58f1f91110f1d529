// Communicator assertions switched on and off under traffic: communicators whose
// mpi_assert_no_any_source / _no_any_tag / _exact_length are set and unset by
// MPI_Comm_set_info (collectively, the same sequence on every process, from a seeded RNG),
// sometimes freed and made again (MPI_Comm_dup or MPI_Comm_dup_with_info), while messages are
// in flight on them and on a plain communicator beside them: receives posted before the
// switch and messages sent before it, persistent receives (exact and wildcard ones, inactive
// across the switch; only exact ones active across it), wildcard receives pending across it
// (the process then keeps the process-wide queues), blocking and nonblocking probes, matched
// probes, every completion call. Every payload is checked, every message received once, and
// per (communicator, source, tag) the messages are received in the order they were sent
// (MPI's non-overtaking rule, for receives in the order this process posted them); what
// MPI_Comm_get_info reports must be the same on every process. A hang is caught by a
// watchdog that prints the seed and the round; a failure prints the seed.
// Reproduce one seed: COMM_ASSERT_SWITCH_SEED=N mpiexec -n 4 request_status_tests "[switch]"
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "comm_assert_support.hpp"

using namespace reqtest;

namespace {

constexpr int kInts = 4;        // every message and every receive: 4 ints (exact length)
constexpr int kTags = 3;        // tags 1..kTags
constexpr int kAsserting = 2;   // communicators whose assertions change
constexpr int kComms = kAsserting + 1;  // and a plain one (never asserts), the last
constexpr int kRounds = 24;
constexpr int kMaxPerBatch = 2;  // messages per (communicator, source, destination, batch)
constexpr int kMagic = 0x5a000000;

int tag_of(int t) { return t + 1; }

// ---- a watchdog that says which seed and round hung -----------------------------------------

std::atomic<long long> g_seed{0};
std::atomic<int> g_round{-1};
std::atomic<int> g_phase{0};
// the blocking call under way in "receives after the switch": which of them hung
std::atomic<const char*> g_call{""};
std::atomic<int> g_call_comm{-1}, g_call_src{0}, g_call_tag{0};
const char* const kPhases[] = {"start", "pre-posting receives", "first sends",
                               "MPI_Comm_set_info", "second sends", "receives after the switch",
                               "completion", "end of round", "recreating communicators"};

std::string call_text() {
    const char* call = g_call.load();
    if (!*call) {
        return "";
    }
    std::ostringstream out;
    out << ": " << call << "(" << g_call_src.load() << ", " << g_call_tag.load()
        << ") on communicator " << g_call_comm.load();
    return out.str();
}

// names the blocking call in progress for the watchdog; cleared when it returns
class CallUnderWay {
public:
    CallUnderWay(const char* call, int comm, int src, int tag) {
        g_call_comm = comm;
        g_call_src = src;
        g_call_tag = tag;
        g_call = call;
    }
    ~CallUnderWay() { g_call = ""; }
};

class SwitchWatchdog {
public:
    explicit SwitchWatchdog(double seconds) : thread_([this, seconds] { watch(seconds); }) {}
    ~SwitchWatchdog() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            done_ = true;
        }
        cv_.notify_one();
        thread_.join();
    }

private:
    void watch(double seconds) {
        std::unique_lock<std::mutex> lock(mutex_);
        if (!cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; })) {
            std::fprintf(stderr,
                         "watchdog: comm assertion switch test, rank %d, seed %lld, round %d "
                         "(%s%s) did not finish within %.0f s: hang (reproduce with "
                         "COMM_ASSERT_SWITCH_SEED=%lld)\n",
                         world_rank(), g_seed.load(), g_round.load(), kPhases[g_phase.load()],
                         call_text().c_str(), seconds,
                         g_seed.load());
            std::fflush(stderr);
            std::abort();
        }
    }
    std::mutex mutex_;
    std::condition_variable cv_;
    bool done_ = false;
    std::thread thread_;
};

// ---- state ----------------------------------------------------------------------------------

struct RecvOp;

struct Persistent {
    MPI_Request req = MPI_REQUEST_NULL;
    std::array<int, kInts> buf{};
    int src_arg = 0, tag_arg = 0;
    RecvOp* op = nullptr;  // the op it serves while active
};

struct Comm {
    int id = 0;
    bool plain = false;
    MPI_Comm comm = MPI_COMM_NULL;
    bool nas = false, nat = false, el = false;  // in force here (MPI_Comm_get_info)
    std::vector<Persistent> exact;              // [src * kTags + t]
    std::vector<Persistent> wild;               // (ANY, t) [t], (s, ANY) [kTags + s], (ANY, ANY)
};

struct RecvOp {
    int comm = 0;
    long order = 0;  // when this process posted it (matched it, for probe + receive)
    int src_arg = 0, tag_arg = 0;
    const char* kind = "";
    std::array<int, kInts> data{-1, -1, -1, -1};
    MPI_Request req = MPI_REQUEST_NULL;
    Persistent* p = nullptr;
    bool complete = false, have_status = false;
    MPI_Status status{};
    int probe_source = -100, probe_tag = -100;  // what a probe before the receive said
};

struct Msg {
    int comm, src, dst, tag, seq, batch;
};

struct Pattern {
    bool active = false;
    int src = MPI_ANY_SOURCE, tag = MPI_ANY_TAG;
    bool covers(const std::pair<int, int>& slot) const {
        return active && (src == MPI_ANY_SOURCE || src == slot.first) &&
               (tag == MPI_ANY_TAG || tag == slot.second);
    }
};

class SwitchTest {
public:
    explicit SwitchTest(unsigned long long seed)
        : global_(seed), local_(seed * 7919 + unsigned(world_rank()) * 104729 + 1),
          me_(world_rank()), size_(world_size()),
          seq_(size_t(kComms * size_ * size_ * kTags), 0) {}

    std::vector<std::string> run() {
        for (int c = 0; c < kComms; c++) {
            comms_[c].id = c;
            comms_[c].plain = (c == kComms - 1);
            create(comms_[c], MPI_INFO_NULL);
        }
        for (int round = 0; round < kRounds; round++) {
            g_round = round;
            one_round(round);
        }
        for (auto& c : comms_) {
            destroy(c);
        }
        return std::move(fails_);
    }

private:
    // ---- helpers ---------------------------------------------------------------------------
    template <class... A>
    void fail(A&&... parts) {
        std::ostringstream out;
        out << "rank " << me_ << ", round " << g_round.load() << ": ";
        (out << ... << parts);
        if (fails_.size() < 50) {
            fails_.push_back(out.str());
        }
    }

    int grand(int n) { return int(global_() % unsigned(n)); }
    int lrand(int n) { return int(local_() % unsigned(n)); }

    static bool flag_of(MPI_Comm comm, const char* key) { return info_value(comm, key) == "true"; }

    void read_in_force(Comm& c) {
        c.nas = flag_of(c.comm, "mpi_assert_no_any_source");
        c.nat = flag_of(c.comm, "mpi_assert_no_any_tag");
        c.el = flag_of(c.comm, "mpi_assert_exact_length");
    }

    void create(Comm& c, MPI_Info info) {
        const int rc = (info == MPI_INFO_NULL) ? MPI_Comm_dup(MPI_COMM_WORLD, &c.comm)
                                               : MPI_Comm_dup_with_info(MPI_COMM_WORLD, info,
                                                                        &c.comm);
        if (rc != MPI_SUCCESS || c.comm == MPI_COMM_NULL) {
            fail("creating communicator ", c.id, " failed: ", error_text(rc));
            MPI_Comm_dup(MPI_COMM_WORLD, &c.comm);
        }
        MPI_Comm_set_errhandler(c.comm, MPI_ERRORS_RETURN);
        read_in_force(c);
        c.exact.assign(size_t(size_ * kTags), Persistent{});
        for (int s = 0; s < size_; s++) {
            for (int t = 0; t < kTags; t++) {
                Persistent& p = c.exact[size_t(s * kTags + t)];
                p.src_arg = s;
                p.tag_arg = tag_of(t);
                if (MPI_Recv_init(p.buf.data(), kInts, MPI_INT, s, tag_of(t), c.comm, &p.req) !=
                    MPI_SUCCESS) {
                    fail("MPI_Recv_init(", s, ", ", tag_of(t), ") failed");
                }
            }
        }
        c.wild.assign(size_t(kTags + size_ + 1), Persistent{});
        for (int i = 0; i < kTags + size_ + 1; i++) {
            Persistent& p = c.wild[size_t(i)];
            p.src_arg = i < kTags ? MPI_ANY_SOURCE : (i < kTags + size_ ? i - kTags : MPI_ANY_SOURCE);
            p.tag_arg = i < kTags ? tag_of(i) : MPI_ANY_TAG;
        }
        // wildcard persistent receives, made while the communicator allows them; under an
        // assertion MPI_Recv_init refuses them
        for (auto& p : c.wild) {
            const int rc2 = MPI_Recv_init(p.buf.data(), kInts, MPI_INT, p.src_arg, p.tag_arg,
                                          c.comm, &p.req);
            const bool refused = (p.src_arg == MPI_ANY_SOURCE && c.nas) ||
                                 (p.tag_arg == MPI_ANY_TAG && c.nat);
            if (refused) {
                const int want = (p.src_arg == MPI_ANY_SOURCE && c.nas) ? MPI_ERR_RANK : MPI_ERR_TAG;
                if (error_class(rc2) != want) {
                    fail("wildcard MPI_Recv_init on an asserting communicator gave ",
                         error_class(rc2), ", expected ", want);
                }
                p.req = MPI_REQUEST_NULL;
            } else if (rc2 != MPI_SUCCESS) {
                fail("wildcard MPI_Recv_init failed: ", error_text(rc2));
                p.req = MPI_REQUEST_NULL;
            }
        }
    }

    void destroy(Comm& c) {
        for (auto* pool : {&c.exact, &c.wild}) {
            for (auto& p : *pool) {
                if (p.req != MPI_REQUEST_NULL) {
                    MPI_Request_free(&p.req);
                }
            }
        }
        MPI_Comm_free(&c.comm);
    }

    MPI_Info random_assertions() {
        MPI_Info info;
        MPI_Info_create(&info);
        bool nas = false, nat = false;
        switch (grand(5)) {
            case 0: nas = nat = true; break;
            case 1: break;
            case 2: nas = true; break;
            case 3: nat = true; break;
            default: nas = grand(2); nat = grand(2); break;
        }
        MPI_Info_set(info, "mpi_assert_no_any_source", nas ? "true" : "false");
        MPI_Info_set(info, "mpi_assert_no_any_tag", nat ? "true" : "false");
        MPI_Info_set(info, "mpi_assert_exact_length", grand(2) ? "true" : "false");
        return info;
    }

    // exact_length in force must be the same everywhere (the same values were given
    // everywhere). no_any_source and no_any_tag may differ: a process whose communicator switched
    // to exact-match queues keeps both (MPI 4.0, 7.4.4 lets set_info ignore such a hint) while
    // one that declined (a wildcard receive pending there) has what the program gave.
    void check_agreement(Comm& c, const char* when) {
        int mine[3] = {c.nas, c.nat, c.el}, lo[3], hi[3];
        MPI_Allreduce(mine, lo, 3, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(mine, hi, 3, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        for (int i = 2; i < 3; i++) {
            if (lo[i] != hi[i]) {
                fail(when, ": communicator ", c.id, " assertion ", i,
                     " in force differs across processes (here ", mine[i], ")");
            }
        }
    }

    // a nonconsuming probe on a communicator: a wildcard it asserted away is refused, one it
    // allows (or a named source and tag) is answered
    void side_probe(Comm& c) {
        const int t = tag_of(lrand(kTags));
        int flag = 0;
        switch (lrand(3)) {
            case 0: {
                const int rc = MPI_Iprobe(MPI_ANY_SOURCE, t, c.comm, &flag, MPI_STATUS_IGNORE);
                if (c.nas ? error_class(rc) != MPI_ERR_RANK : rc != MPI_SUCCESS) {
                    fail("MPI_Iprobe(MPI_ANY_SOURCE) on communicator ", c.id, " (no_any_source ",
                         c.nas, ") returned ", error_text(rc));
                }
                break;
            }
            case 1: {
                const int rc = MPI_Iprobe(lrand(size_), MPI_ANY_TAG, c.comm, &flag,
                                          MPI_STATUS_IGNORE);
                if (c.nat ? error_class(rc) != MPI_ERR_TAG : rc != MPI_SUCCESS) {
                    fail("MPI_Iprobe(MPI_ANY_TAG) on communicator ", c.id, " (no_any_tag ", c.nat,
                         ") returned ", error_text(rc));
                }
                break;
            }
            default: {
                const int rc = MPI_Iprobe(lrand(size_), t, c.comm, &flag, MPI_STATUS_IGNORE);
                if (rc != MPI_SUCCESS) {
                    fail("MPI_Iprobe(source, tag) on communicator ", c.id, ": ", error_text(rc));
                }
            }
        }
    }

    // ---- posting receive operations -------------------------------------------------------
    RecvOp& new_op(int comm, int src_arg, int tag_arg, const char* kind) {
        ops_.emplace_back();
        RecvOp& op = ops_.back();
        op.comm = comm;
        op.src_arg = src_arg;
        op.tag_arg = tag_arg;
        op.kind = kind;
        op.order = next_order_++;
        return op;
    }

    Persistent* pool_entry(Comm& c, int src_arg, int tag_arg) {
        if (src_arg != MPI_ANY_SOURCE && tag_arg != MPI_ANY_TAG) {
            return &c.exact[size_t(src_arg * kTags + (tag_arg - 1))];
        }
        if (src_arg == MPI_ANY_SOURCE && tag_arg != MPI_ANY_TAG) {
            return &c.wild[size_t(tag_arg - 1)];
        }
        if (src_arg != MPI_ANY_SOURCE) {
            return &c.wild[size_t(kTags + src_arg)];
        }
        return &c.wild[size_t(kTags + size_)];
    }

    void post_irecv(Comm& c, int src, int tag) {
        RecvOp& op = new_op(c.id, src, tag, "MPI_Irecv");
        const int rc = MPI_Irecv(op.data.data(), kInts, MPI_INT, src, tag, c.comm, &op.req);
        if (rc != MPI_SUCCESS) {
            fail("MPI_Irecv(", src, ", ", tag, ") on communicator ", c.id, ": ", error_text(rc));
            op.complete = true;
        }
    }

    // starts the persistent receive for (src, tag) if it exists and is inactive
    bool start_persistent(Comm& c, int src, int tag) {
        Persistent* p = pool_entry(c, src, tag);
        if (p == nullptr || p->req == MPI_REQUEST_NULL || p->op != nullptr) {
            return false;
        }
        const bool all = lrand(2) != 0;
        RecvOp& op = new_op(c.id, src, tag, all ? "MPI_Startall" : "MPI_Start");
        op.p = p;
        p->op = &op;
        std::fill(p->buf.begin(), p->buf.end(), -1);
        const int rc = all ? MPI_Startall(1, &p->req) : MPI_Start(&p->req);
        if (rc != MPI_SUCCESS) {
            fail(op.kind, " of persistent receive (", src, ", ", tag, ") on communicator ", c.id,
                 ": ", error_text(rc));
            op.complete = true;
            p->op = nullptr;
        }
        return true;
    }

    void blocking_done(RecvOp& op, int rc, const MPI_Status& st) {
        op.complete = true;
        op.have_status = true;
        op.status = st;
        if (rc != MPI_SUCCESS) {
            fail(op.kind, "(", op.src_arg, ", ", op.tag_arg, ") on communicator ", op.comm, ": ",
                 error_text(rc));
        }
    }

    // one receive operation for a message matching (src, tag) (either may be a wildcard),
    // of a random kind; `pre`: before the switch, nonblocking kinds only
    void receive_op(Comm& c, int src, int tag, bool pre) {
        const bool wildcard = src == MPI_ANY_SOURCE || tag == MPI_ANY_TAG;
        int kind = pre ? (wildcard ? 0 : lrand(2)) : lrand(7);
        if (kind == 1 && start_persistent(c, src, tag)) {
            return;
        }
        if (kind == 1) {
            kind = 0;
        }
        MPI_Status st;
        static const char* const kCalls[] = {"MPI_Irecv", "MPI_Irecv", "MPI_Recv", "MPI_Probe",
                                             "MPI_Iprobe loop", "MPI_Mprobe", "MPI_Improbe loop"};
        CallUnderWay under_way(kCalls[kind], c.id, src, tag);
        switch (kind) {
            case 0:
                post_irecv(c, src, tag);
                return;
            case 2: {
                RecvOp& op = new_op(c.id, src, tag, "MPI_Recv");
                const int rc = MPI_Recv(op.data.data(), kInts, MPI_INT, src, tag, c.comm, &st);
                blocking_done(op, rc, st);
                return;
            }
            case 3:
            case 4: {
                int rc = MPI_SUCCESS;
                if (kind == 3) {
                    rc = MPI_Probe(src, tag, c.comm, &st);
                } else {
                    int flag = 0;
                    while (rc == MPI_SUCCESS && !flag) {
                        rc = MPI_Iprobe(src, tag, c.comm, &flag, &st);
                    }
                }
                RecvOp& op = new_op(c.id, src, tag, kind == 3 ? "MPI_Probe + MPI_Recv"
                                                              : "MPI_Iprobe + MPI_Recv");
                if (rc != MPI_SUCCESS) {
                    blocking_done(op, rc, st);
                    return;
                }
                op.probe_source = st.MPI_SOURCE;
                op.probe_tag = st.MPI_TAG;
                CallUnderWay recv_under_way("MPI_Recv of the probed message", c.id, st.MPI_SOURCE,
                                            st.MPI_TAG);
                rc = MPI_Recv(op.data.data(), kInts, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, c.comm,
                              &st);
                blocking_done(op, rc, st);
                return;
            }
            case 5: {
                MPI_Message m = MPI_MESSAGE_NULL;
                RecvOp& op = new_op(c.id, src, tag, "MPI_Mprobe + MPI_Mrecv");
                int rc = MPI_Mprobe(src, tag, c.comm, &m, &st);
                if (rc == MPI_SUCCESS) {
                    op.probe_source = st.MPI_SOURCE;
                    op.probe_tag = st.MPI_TAG;
                    rc = MPI_Mrecv(op.data.data(), kInts, MPI_INT, &m, &st);
                }
                blocking_done(op, rc, st);
                return;
            }
            default: {
                MPI_Message m = MPI_MESSAGE_NULL;
                int flag = 0, rc = MPI_SUCCESS;
                while (rc == MPI_SUCCESS && !flag) {
                    rc = MPI_Improbe(src, tag, c.comm, &flag, &m, &st);
                }
                RecvOp& op = new_op(c.id, src, tag, "MPI_Improbe + MPI_Imrecv");
                if (rc != MPI_SUCCESS) {
                    blocking_done(op, rc, st);
                    return;
                }
                op.probe_source = st.MPI_SOURCE;
                op.probe_tag = st.MPI_TAG;
                rc = MPI_Imrecv(op.data.data(), kInts, MPI_INT, &m, &op.req);
                if (rc != MPI_SUCCESS) {
                    blocking_done(op, rc, st);
                }
                return;
            }
        }
    }

    // ---- completing -----------------------------------------------------------------------
    void finish(std::vector<RecvOp*>& pend, size_t i, MPI_Request handle, const MPI_Status* st) {
        RecvOp* op = pend[i];
        if (op->complete) {
            fail(op->kind, ": reported complete twice");
            return;
        }
        op->complete = true;
        if (st != nullptr) {
            op->have_status = true;
            op->status = *st;
        }
        if (op->p != nullptr) {
            op->data = op->p->buf;
            op->p->req = handle;  // the inactive persistent request
            op->p->op = nullptr;
            if (handle == MPI_REQUEST_NULL) {
                fail(op->kind, ": a persistent request became MPI_REQUEST_NULL");
            }
        } else {
            op->req = MPI_REQUEST_NULL;
            if (handle != MPI_REQUEST_NULL) {
                fail(op->kind, ": a completed request was not set to MPI_REQUEST_NULL");
            }
        }
    }

    void complete_all() {
        std::vector<RecvOp*> pend;
        std::vector<MPI_Request> reqs;
        for (auto& op : ops_) {
            if (!op.complete) {
                pend.push_back(&op);
                reqs.push_back(op.p ? op.p->req : op.req);
            }
        }
        const int n = int(pend.size());
        std::vector<MPI_Status> sts(size_t(std::max(n, 1)));
        std::vector<int> idx(size_t(std::max(n, 1)));
        int rc = MPI_SUCCESS;
        const int form = lrand(7);
        const char* const names[] = {"MPI_Waitall", "MPI_Waitall(MPI_STATUSES_IGNORE)",
                                     "MPI_Testall", "MPI_Waitany", "MPI_Testany", "MPI_Waitsome",
                                     "MPI_Testsome"};
        int left = n;
        switch (form) {
            case 0:
            case 1:
                rc = MPI_Waitall(n, reqs.data(), form == 0 ? sts.data() : MPI_STATUSES_IGNORE);
                for (int i = 0; i < n; i++) {
                    finish(pend, size_t(i), reqs[size_t(i)], form == 0 ? &sts[size_t(i)] : nullptr);
                }
                left = 0;
                break;
            case 2: {
                int flag = 0;
                while (rc == MPI_SUCCESS && !flag) {
                    rc = MPI_Testall(n, reqs.data(), &flag, sts.data());
                }
                for (int i = 0; i < n && flag; i++) {
                    finish(pend, size_t(i), reqs[size_t(i)], &sts[size_t(i)]);
                }
                left = flag ? 0 : left;
                break;
            }
            case 3:
            case 4:
                while (rc == MPI_SUCCESS && left > 0) {
                    int index = MPI_UNDEFINED, flag = 1;
                    MPI_Status st;
                    rc = form == 3 ? MPI_Waitany(n, reqs.data(), &index, &st)
                                   : MPI_Testany(n, reqs.data(), &index, &flag, &st);
                    if (flag && index == MPI_UNDEFINED) {
                        break;
                    }
                    if (flag && index >= 0) {
                        finish(pend, size_t(index), reqs[size_t(index)], &st);
                        left--;
                    }
                }
                break;
            default:
                while (rc == MPI_SUCCESS && left > 0) {
                    int out = 0;
                    rc = form == 5 ? MPI_Waitsome(n, reqs.data(), &out, idx.data(), sts.data())
                                   : MPI_Testsome(n, reqs.data(), &out, idx.data(), sts.data());
                    if (out == MPI_UNDEFINED) {
                        break;
                    }
                    for (int k = 0; k < out; k++) {
                        const size_t i = size_t(idx[size_t(k)]);
                        finish(pend, i, reqs[i], &sts[size_t(k)]);
                        left--;
                    }
                }
        }
        if (rc != MPI_SUCCESS) {
            fail(names[form], " over ", n, " receives: ", error_text(rc));
        }
        if (left != 0) {
            fail(names[form], ": ", left, " of ", n, " receives not reported complete");
        }
    }

    // ---- checking -------------------------------------------------------------------------
    void check_round(int round, const std::vector<Msg>& incoming) {
        // expected: per (comm, src, tag) the seqs in send order
        std::map<std::array<int, 3>, std::vector<int>> expected, got;
        for (const auto& m : incoming) {
            expected[{m.comm, m.src, m.tag}].push_back(m.seq);
        }
        std::vector<const RecvOp*> sorted;
        for (const auto& op : ops_) {
            sorted.push_back(&op);
        }
        std::sort(sorted.begin(), sorted.end(),
                  [](const RecvOp* a, const RecvOp* b) { return a->order < b->order; });
        for (const RecvOp* op : sorted) {
            const auto& d = op->data;
            const int magic = kMagic | (op->comm << 16) | round;
            if (!op->complete) {
                fail(op->kind, "(", op->src_arg, ", ", op->tag_arg, ") on communicator ",
                     op->comm, " never completed");
                continue;
            }
            if (d[0] != magic) {
                fail(op->kind, "(", op->src_arg, ", ", op->tag_arg, ") on communicator ",
                     op->comm, " received a payload not of this communicator and round: ",
                     std::hex, d[0], " expected ", magic, std::dec, " (source ", d[1], ", tag ",
                     d[2], ", seq ", d[3], ")");
                continue;
            }
            if ((op->src_arg != MPI_ANY_SOURCE && op->src_arg != d[1]) ||
                (op->tag_arg != MPI_ANY_TAG && op->tag_arg != d[2])) {
                fail(op->kind, "(", op->src_arg, ", ", op->tag_arg,
                     ") received a message it does not match: source ", d[1], ", tag ", d[2]);
            }
            if (op->have_status) {
                if (op->status.MPI_SOURCE != d[1] || op->status.MPI_TAG != d[2]) {
                    fail(op->kind, ": status (", op->status.MPI_SOURCE, ", ", op->status.MPI_TAG,
                         ") but payload from (", d[1], ", ", d[2], ")");
                }
                if (count_of(op->status, MPI_INT) != kInts) {
                    fail(op->kind, ": count ", count_of(op->status, MPI_INT));
                }
            }
            if (op->probe_source != -100 &&
                (op->probe_source != d[1] || op->probe_tag != d[2])) {
                fail(op->kind, ": the probe said (", op->probe_source, ", ", op->probe_tag,
                     "), the receive got (", d[1], ", ", d[2], ")");
            }
            got[{op->comm, d[1], d[2]}].push_back(d[3]);
        }
        for (const auto& [key, seqs] : expected) {
            const auto it = got.find(key);
            const std::vector<int> none;
            const std::vector<int>& g = it == got.end() ? none : it->second;
            if (g != seqs) {
                std::ostringstream e, r;
                for (int s : seqs) e << s << " ";
                for (int s : g) r << s << " ";
                fail("communicator ", key[0], ", source ", key[1], ", tag ", key[2],
                     ": sent seqs [ ", e.str(), "], received in posting order [ ", r.str(), "]");
            }
        }
        for (const auto& [key, seqs] : got) {
            if (expected.find(key) == expected.end()) {
                fail("communicator ", key[0], ", source ", key[1], ", tag ", key[2], ": ",
                     seqs.size(), " messages received that nobody sent");
            }
        }
    }

    // ---- one round ------------------------------------------------------------------------
    void one_round(int round) {
        g_phase = 0;
        ops_.clear();
        next_order_ = 0;
        // the schedule, the same on every process
        std::vector<Msg> all;
        for (int batch = 0; batch < 2; batch++) {
            for (int c = 0; c < kComms; c++) {
                for (int s = 0; s < size_; s++) {
                    for (int d = 0; d < size_; d++) {
                        const int k = grand(kMaxPerBatch + 1);
                        for (int i = 0; i < k; i++) {
                            const int t = grand(kTags);
                            int& seq = seq_[size_t(((c * size_ + s) * size_ + d) * kTags + t)];
                            all.push_back({c, s, d, tag_of(t), seq++, batch});
                        }
                    }
                }
            }
        }
        std::array<bool, kComms> set_this_round{};
        std::array<bool, kComms> recreate{};
        for (int c = 0; c < kAsserting; c++) {
            set_this_round[size_t(c)] = grand(2) == 0;
            recreate[size_t(c)] = grand(4) == 0;
        }

        std::vector<Msg> incoming;
        for (const auto& m : all) {
            if (m.dst == me_) {
                incoming.push_back(m);
            }
        }
        // per communicator: how many messages per (src, tag), and the plan
        struct Plan {
            std::map<std::pair<int, int>, int> left;  // (src, tag) -> messages without a receive
            int wild_kind = 0;  // 0 exact, 1 wildcards posted before the switch, 2 after
            Pattern pattern;    // the wildcard receives' (source, tag)
        };
        std::array<Plan, kComms> plan;
        for (const auto& m : incoming) {
            plan[size_t(m.comm)].left[{m.src, m.tag}]++;
        }

        // ---- before the switch: receives posted, some of them wildcards -------------------
        g_phase = 1;
        for (auto& c : comms_) {
            Plan& p = plan[size_t(c.id)];
            const int choice = lrand(10);
            if (choice < 3 && !(c.nas && c.nat)) {
                // wildcard receives pending across the switch, for every message they cover
                p.wild_kind = 1;
                p.pattern = pick_pattern(c);
                for (auto& [slot, n] : p.left) {
                    if (p.pattern.covers(slot)) {
                        for (; n > 0; n--) {
                            receive_op(c, p.pattern.src, p.pattern.tag, true);
                        }
                    }
                }
            } else if (choice < 7) {
                p.wild_kind = 2;
            }
            // exact receives posted early for messages outside the pattern
            for (auto& [slot, n] : p.left) {
                if (p.wild_kind == 1 && p.pattern.covers(slot)) {
                    continue;
                }
                for (int k = lrand(n + 1); k > 0; k--, n--) {
                    receive_op(c, slot.first, slot.second, true);
                }
            }
            if (lrand(2)) {
                side_probe(c);
            }
        }

        // ---- messages sent before the switch ---------------------------------------------
        g_phase = 2;
        std::deque<std::array<int, kInts>> sendbufs;
        std::vector<MPI_Request> sends;
        auto send_batch = [&](int batch) {
            for (const auto& m : all) {
                if (m.src != me_ || m.batch != batch) {
                    continue;
                }
                sendbufs.push_back({kMagic | (m.comm << 16) | round, m.src, m.tag, m.seq});
                sends.emplace_back();
                const int rc = MPI_Isend(sendbufs.back().data(), kInts, MPI_INT, m.dst, m.tag,
                                         comms_[size_t(m.comm)].comm, &sends.back());
                if (rc != MPI_SUCCESS) {
                    fail("MPI_Isend to ", m.dst, " on communicator ", m.comm, ": ",
                         error_text(rc));
                }
            }
        };
        send_batch(0);
        for (auto& c : comms_) {
            if (lrand(2)) {
                side_probe(c);
            }
        }

        // ---- the switch ------------------------------------------------------------------
        g_phase = 3;
        for (int ci = 0; ci < kAsserting; ci++) {
            if (!set_this_round[size_t(ci)]) {
                continue;
            }
            Comm& c = comms_[size_t(ci)];
            MPI_Info info = random_assertions();
            bool asked[3] = {flag_in(info, "mpi_assert_no_any_source"),
                             flag_in(info, "mpi_assert_no_any_tag"),
                             flag_in(info, "mpi_assert_exact_length")};
            const int rc = MPI_Comm_set_info(c.comm, info);
            MPI_Info_free(&info);
            if (rc != MPI_SUCCESS) {
                fail("MPI_Comm_set_info(no_any_source=", asked[0], ", no_any_tag=", asked[1],
                     ", exact_length=", asked[2], ") on communicator ", c.id, ": ",
                     error_text(rc));
            }
            read_in_force(c);
            if (rc == MPI_SUCCESS && ((asked[0] && !c.nas) || (asked[1] && !c.nat) ||
                                      (asked[2] && !c.el))) {
                fail("after MPI_Comm_set_info(", asked[0], ", ", asked[1], ", ", asked[2],
                     ") communicator ", c.id, " has (", c.nas, ", ", c.nat, ", ", c.el,
                     ") in force");
            }
            check_agreement(c, "after MPI_Comm_set_info");
        }

        // ---- messages sent after it, and the other receives --------------------------------
        g_phase = 4;
        send_batch(1);
        g_phase = 5;
        // the remaining receives, in a random order across communicators
        std::vector<std::pair<int, std::pair<int, int>>> todo;  // (comm, (src, tag)) per message
        for (auto& c : comms_) {
            Plan& p = plan[size_t(c.id)];
            if (p.wild_kind == 2) {
                p.pattern = pick_pattern(c);  // what the communicator allows now
            }
            for (auto& [slot, n] : p.left) {
                for (int k = 0; k < n; k++) {
                    if (p.wild_kind == 2 && p.pattern.covers(slot)) {
                        todo.push_back({c.id, {p.pattern.src, p.pattern.tag}});
                    } else {
                        todo.push_back({c.id, slot});
                    }
                }
            }
        }
        std::shuffle(todo.begin(), todo.end(), local_);
        for (const auto& [ci, pattern] : todo) {
            receive_op(comms_[size_t(ci)], pattern.first, pattern.second, false);
            if (lrand(8) == 0) {
                side_probe(comms_[size_t(lrand(kComms))]);
            }
        }

        // ---- completion and checks --------------------------------------------------------
        g_phase = 6;
        complete_all();
        const int src = MPI_Waitall(int(sends.size()), sends.data(), MPI_STATUSES_IGNORE);
        if (src != MPI_SUCCESS) {
            fail("MPI_Waitall over the sends: ", error_text(src));
        }
        check_round(round, incoming);
        g_phase = 7;
        MPI_Barrier(MPI_COMM_WORLD);  // no message of this round is left anywhere

        g_phase = 8;
        for (int ci = 0; ci < kAsserting; ci++) {
            if (recreate[size_t(ci)]) {
                Comm& c = comms_[size_t(ci)];
                destroy(c);
                if (grand(2)) {
                    create(c, MPI_INFO_NULL);
                } else {
                    MPI_Info info = random_assertions();
                    create(c, info);
                    MPI_Info_free(&info);
                }
                check_agreement(c, "after recreating");
            }
        }
    }

    static bool flag_in(MPI_Info info, const char* key) {
        char v[16] = {0};
        int flag = 0;
        MPI_Info_get(info, key, 15, v, &flag);
        return flag && std::string(v) == "true";
    }

    // a wildcard pattern the communicator allows now: (MPI_ANY_SOURCE, t), (s, MPI_ANY_TAG) or
    // both wildcards; none when it asserts both away. Wildcard receives of one communicator
    // and round all have one pattern and take every message it covers, exact ones the others:
    // whatever the matching order, no receive is left without a message.
    Pattern pick_pattern(const Comm& c) {
        std::vector<int> kinds;
        if (!c.nas) kinds.push_back(0);
        if (!c.nat) kinds.push_back(1);
        if (!c.nas && !c.nat) kinds.push_back(2);
        Pattern p;
        if (kinds.empty()) {
            return p;
        }
        p.active = true;
        switch (kinds[size_t(lrand(int(kinds.size())))]) {
            case 0: p.tag = tag_of(lrand(kTags)); break;  // (ANY, t)
            case 1: p.src = lrand(size_); break;          // (s, ANY)
            default: break;                               // (ANY, ANY)
        }
        return p;
    }

    std::mt19937_64 global_, local_;
    int me_, size_;
    std::vector<int> seq_;
    std::array<Comm, kComms> comms_;
    std::deque<RecvOp> ops_;
    long next_order_ = 0;
    std::vector<std::string> fails_;
};

}  // namespace

TEST_CASE("comm assertions switched on and off by MPI_Comm_set_info under traffic: every "
          "message once, in order per (source, tag), randomized", "[assert][switch]") {
    ErrorsReturn errors_return;
    std::vector<unsigned long long> seeds = {1, 2, 3};
    if (const char* env = std::getenv("COMM_ASSERT_SWITCH_SEED")) {
        seeds = {std::strtoull(env, nullptr, 0)};
    }
    for (unsigned long long seed : seeds) {
        MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
        g_seed = static_cast<long long>(seed);
        g_round = -1;
        SwitchWatchdog dog(30.0);
        SwitchTest test(seed);
        const std::vector<std::string> fails = test.run();
        std::ostringstream text;
        for (const auto& f : fails) {
            text << "\n  " << f;
        }
        INFO("seed " << seed << " (reproduce with COMM_ASSERT_SWITCH_SEED=" << seed << "), "
                     << fails.size() << " failures (at most 50 listed):" << text.str());
        CHECK(fails.empty());
        MPI_Barrier(MPI_COMM_WORLD);
    }
}
