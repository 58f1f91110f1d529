// MPI's non-overtaking rule, checked message by message: every rank sends numbered messages to
// every other rank from one thread, and receives its own through every receive form. A receive
// must match the earliest message of its source that it can match and that no receive posted
// before it took; with the schedule known on both sides, each receive has exactly one right
// message, and getting any other is a broken order (reported, exit 1). A lost message or
// wake-up shows as a hang, which the watchdog (SIGALRM) reports with what each rank waited for.
//
// Per (source, destination) stream: MESSAGES messages, tags from the source's own range (so a
// receive from MPI_ANY_SOURCE with a given tag has one source), sizes of 16 B to 1 MiB (eager and
// rendezvous), sent with MPI_Isend, MPI_Issend or MPI_Send_init + MPI_Start, all posted at once
// (MPI_Irsend needs a posted receive: not used). Receives: MPI_Recv, MPI_Irecv, persistent MPI_Recv_init +
// MPI_Start, MPI_Probe + MPI_Recv, MPI_Mprobe + MPI_Mrecv, MPI_Improbe + MPI_Imrecv, each with
// (source, tag), (source, MPI_ANY_TAG) or (MPI_ANY_SOURCE, tag); up to 16 posted at once and
// completed by MPI_Waitall, MPI_Waitany, MPI_Testsome or MPI_Wait in posting order or not.
//
// usage: mpiexec -n P message_order [MESSAGES [SEED [SECONDS]]]   (defaults 1000, 1, 300)
// MESSAGE_ORDER_SWAP=1 in the environment: each stream's first two messages of one tag are sent
// the other way round, so the run must report a broken order (the checker's own test).
// MESSAGE_ORDER_FORMS=digits: only those receive forms (0 MPI_Recv, 1 MPI_Irecv, 2 persistent,
// 3 MPI_Probe + MPI_Recv, 4 MPI_Mprobe, 5 MPI_Improbe), to narrow a failure down.
// prints "message_order: P ranks, N messages per stream, seed S: order kept" on rank 0 (exit 0);
// a wrong message is printed and ends the job with MPI_Abort (exit 1), a hang exits 3.
#include <mpi.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr int kTagsPerSource = 4;
constexpr int kMaxWindow = 16;
constexpr int kSizes[] = {16, 64, 1024, 16384, 65536, 262144, 1048576};    // each holds a Header
constexpr size_t kLargest = 1048576;

struct Message {
    int tag = 0;
    int bytes = 0;
    int send_form = 0;
};

struct Header {
    int32_t source;
    int32_t seq;    // position in its (source, destination) stream
    int32_t tag;
    int32_t bytes;
};

// The stream source -> dest, the same on both sides.
std::vector<Message> stream_of(int source, int dest, int messages, unsigned seed) {
    std::mt19937 rng(seed * 7919u + static_cast<unsigned>(source) * 131u + static_cast<unsigned>(dest));
    std::vector<Message> s(static_cast<size_t>(messages));
    for (auto& m : s) {
        m.tag = source * kTagsPerSource + static_cast<int>(rng() % kTagsPerSource);
        // mostly small: the large ones go by rendezvous, where an order slip would show
        const unsigned pick = rng() % 100;
        m.bytes = kSizes[pick < 70 ? pick % 3 : (pick < 95 ? 3 + pick % 2 : 5 + pick % 2)];
        m.send_form = static_cast<int>(rng() % 3);
    }
    return s;
}

unsigned char fill_byte(int source, int seq, size_t i) {
    return static_cast<unsigned char>((static_cast<unsigned>(source) * 31u + static_cast<unsigned>(seq) * 7u + i) & 0xff);
}

void fill(std::vector<unsigned char>& buf, int source, int seq, int tag) {
    const Header h{source, seq, tag, static_cast<int32_t>(buf.size())};
    std::memcpy(buf.data(), &h, sizeof h);
    for (size_t i = sizeof h; i < buf.size(); i++) {
        buf[i] = fill_byte(source, seq, i);
    }
}

// what the watchdog prints
volatile sig_atomic_t g_received = 0;
volatile sig_atomic_t g_waiting_source = -1;
volatile sig_atomic_t g_waiting_seq = -1;
int g_rank = 0;

// appends text or a decimal number to line at n (async-signal-safe: no stdio)
void put(char* line, size_t& n, const char* text) {
    while (*text && n < 159) {
        line[n++] = *text++;
    }
}
void put(char* line, size_t& n, long value) {
    char digits[24];
    size_t k = 0;
    const bool negative = value < 0;
    unsigned long v = negative ? 0ul - static_cast<unsigned long>(value) : static_cast<unsigned long>(value);
    do {
        digits[k++] = static_cast<char>('0' + v % 10);
        v /= 10;
    } while (v && k < sizeof digits);
    if (negative && n < 159) {
        line[n++] = '-';
    }
    while (k && n < 159) {
        line[n++] = digits[--k];
    }
}

void on_alarm(int) {
    char line[160];
    size_t n = 0;
    put(line, n, "message_order: rank ");
    put(line, n, static_cast<long>(g_rank));
    put(line, n, " hangs: ");
    put(line, n, static_cast<long>(g_received));
    put(line, n, " received, waiting for source ");
    put(line, n, static_cast<long>(g_waiting_source));
    put(line, n, " message ");
    put(line, n, static_cast<long>(g_waiting_seq));
    put(line, n, " (or one posted after it)\n");
    (void) !write(2, line, n);
    _exit(3);
}

// Sends the first two messages of one tag the other way round: an overtaking the receiver must see.
void swap_first_pair_of_a_tag(const std::vector<Message>& s, std::vector<int>& order) {
    for (size_t j = 1; j < s.size(); j++) {
        if (s[j].tag == s[0].tag) {
            std::swap(order[0], order[j]);
            return;
        }
    }
}

class Sender {
public:
    Sender(int rank, int size, int messages, unsigned seed) {
        for (int dest = 0; dest < size; dest++) {
            if (dest == rank) {
                continue;
            }
            const auto s = stream_of(rank, dest, messages, seed);
            std::vector<int> order(static_cast<size_t>(messages));
            for (int seq = 0; seq < messages; seq++) {
                order[static_cast<size_t>(seq)] = seq;
            }
            if (std::getenv("MESSAGE_ORDER_SWAP")) {
                swap_first_pair_of_a_tag(s, order);    // the checker's own test: it must report
            }
            for (int seq : order) {
                const Message& m = s[static_cast<size_t>(seq)];
                bufs_.emplace_back(static_cast<size_t>(m.bytes));
                fill(bufs_.back(), rank, seq, m.tag);
                MPI_Request req;
                void* data = bufs_.back().data();
                if (m.send_form == 0) {
                    MPI_Isend(data, m.bytes, MPI_BYTE, dest, m.tag, MPI_COMM_WORLD, &req);
                } else if (m.send_form == 1) {
                    MPI_Issend(data, m.bytes, MPI_BYTE, dest, m.tag, MPI_COMM_WORLD, &req);
                } else {
                    MPI_Send_init(data, m.bytes, MPI_BYTE, dest, m.tag, MPI_COMM_WORLD, &req);
                    MPI_Start(&req);
                    persistent_.push_back(reqs_.size());
                }
                reqs_.push_back(req);
            }
        }
    }
    bool done() {
        int flag = 0;
        MPI_Testall(static_cast<int>(reqs_.size()), reqs_.data(), &flag, MPI_STATUSES_IGNORE);
        if (flag) {
            for (size_t i : persistent_) {
                MPI_Request_free(&reqs_[i]);
            }
            persistent_.clear();
        }
        return flag != 0;
    }

private:
    std::vector<std::vector<unsigned char>> bufs_;    // each message its own heap block: stays put when bufs_ grows
    std::vector<MPI_Request> reqs_;
    std::vector<size_t> persistent_;
};

enum Form { kRecv, kIrecv, kPersistent, kProbeRecv, kMprobe, kImprobe, kForms };
const char* const kFormNames[] = {"MPI_Recv", "MPI_Irecv", "MPI_Recv_init+MPI_Start", "MPI_Probe+MPI_Recv",
                                  "MPI_Mprobe+MPI_Mrecv", "MPI_Improbe+MPI_Imrecv"};

// MESSAGE_ORDER_FORMS: the receive forms to draw from, by their numbers in kFormNames (e.g.
// "01" for MPI_Recv and MPI_Irecv only); default all
std::vector<int> forms_in_use() {
    std::vector<int> forms;
    const char* only = std::getenv("MESSAGE_ORDER_FORMS");
    for (int f = 0; f < kForms; f++) {
        if (!only || std::strchr(only, '0' + f)) {
            forms.push_back(f);
        }
    }
    if (forms.empty()) {
        std::fprintf(stderr, "message_order: MESSAGE_ORDER_FORMS=%s names no form (digits 0-%d)\n", only,
                     kForms - 1);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return forms;
}

// Posted receives live in a std::vector whose elements move: each one's buffer is its own heap
// block, which a move keeps in place, so MPI's pointer into it stays valid.
struct Posted {
    int source = 0;    // the stream the receive must take its message from
    int seq = 0;       // and which one
    int form = 0;
    int src_arg = 0;   // what it was posted with
    int tag_arg = 0;
    std::vector<unsigned char> buf;
    MPI_Request req = MPI_REQUEST_NULL;
};

class Receiver {
public:
    Receiver(int rank, int size, int messages, unsigned seed) : rank_(rank), rng_(seed * 104729u + static_cast<unsigned>(rank)) {
        streams_.resize(static_cast<size_t>(size));
        claimed_.resize(static_cast<size_t>(size));
        next_.assign(static_cast<size_t>(size), 0);
        for (int src = 0; src < size; src++) {
            if (src != rank) {
                streams_[static_cast<size_t>(src)] = stream_of(src, rank, messages, seed);
                claimed_[static_cast<size_t>(src)].assign(static_cast<size_t>(messages), false);
                left_ += messages;
            }
        }
    }

    // Posts and completes receives until every message arrived (a wrong one ends the job).
    void run(Sender& sender) {
        std::vector<Posted> window;
        bool sends_done = false;
        while (left_ > 0 || !window.empty()) {
            const int target = left_ > 0 ? static_cast<int>(rng_() % kMaxWindow) + 1 : 0;
            while (left_ > 0 && static_cast<int>(window.size()) < target) {
                Posted p = claim();
                post(p);
                if (p.req != MPI_REQUEST_NULL) {
                    window.push_back(std::move(p));
                }
            }
            complete(window);
            if (!sends_done) {
                sends_done = sender.done();
            }
        }
        while (!sender.done()) {
        }
    }

private:
    // The next receive: a stream with messages left and a pattern; its message is the earliest
    // unclaimed one of the stream that the pattern matches (a tag may skip messages of others).
    Posted claim() {
        Posted p;
        do {
            p.source = static_cast<int>(rng_() % streams_.size());
        } while (p.source == rank_ || next_[static_cast<size_t>(p.source)] >= static_cast<int>(streams_[static_cast<size_t>(p.source)].size()));
        const auto& stream = streams_[static_cast<size_t>(p.source)];
        auto& claimed = claimed_[static_cast<size_t>(p.source)];
        const int first = next_[static_cast<size_t>(p.source)];
        const int pattern = static_cast<int>(rng_() % 3);    // (src, tag), (src, ANY_TAG), (ANY_SOURCE, tag)
        p.seq = first;
        p.src_arg = pattern == 2 ? MPI_ANY_SOURCE : p.source;
        p.tag_arg = MPI_ANY_TAG;
        if (pattern != 1) {
            const int tag = p.source * kTagsPerSource + static_cast<int>(rng_() % kTagsPerSource);
            p.tag_arg = stream[static_cast<size_t>(first)].tag;
            for (int seq = first; seq < static_cast<int>(stream.size()); seq++) {
                if (!claimed[static_cast<size_t>(seq)] && stream[static_cast<size_t>(seq)].tag == tag) {
                    p.seq = seq;
                    p.tag_arg = tag;
                    break;
                }
            }
        }
        claimed[static_cast<size_t>(p.seq)] = true;
        int& next = next_[static_cast<size_t>(p.source)];
        while (next < static_cast<int>(stream.size()) && claimed[static_cast<size_t>(next)]) {
            next++;
        }
        left_--;
        p.form = forms_[rng_() % forms_.size()];
        p.buf.assign(kLargest, 0xa5);    // larger than any message: a wrong one is reported, not
                                         // truncated; poisoned: a receive that wrote nothing fails
        return p;
    }

    void post(Posted& p) {
        const int bytes = static_cast<int>(p.buf.size());
        MPI_Status st;
        MPI_Message msg;
        g_waiting_source = p.source;
        g_waiting_seq = p.seq;
        switch (p.form) {
        case kRecv:
            MPI_Recv(p.buf.data(), bytes, MPI_BYTE, p.src_arg, p.tag_arg, MPI_COMM_WORLD, &st);
            check(p, st);
            return;
        case kIrecv:
            MPI_Irecv(p.buf.data(), bytes, MPI_BYTE, p.src_arg, p.tag_arg, MPI_COMM_WORLD, &p.req);
            return;
        case kPersistent:
            MPI_Recv_init(p.buf.data(), bytes, MPI_BYTE, p.src_arg, p.tag_arg, MPI_COMM_WORLD, &p.req);
            MPI_Start(&p.req);
            return;
        case kProbeRecv:
            // the probe must find the claimed message itself: the receive after it could
            // take the right one even when the probe saw another
            MPI_Probe(p.src_arg, p.tag_arg, MPI_COMM_WORLD, &st);
            check_status(p, st, "MPI_Probe");
            MPI_Recv(p.buf.data(), bytes, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
            check(p, st);
            return;
        case kMprobe:
            MPI_Mprobe(p.src_arg, p.tag_arg, MPI_COMM_WORLD, &msg, &st);
            MPI_Mrecv(p.buf.data(), bytes, MPI_BYTE, &msg, &st);
            check(p, st);
            return;
        default: {
            int flag = 0;
            while (!flag) {
                MPI_Improbe(p.src_arg, p.tag_arg, MPI_COMM_WORLD, &flag, &msg, &st);
            }
            MPI_Imrecv(p.buf.data(), bytes, MPI_BYTE, &msg, &p.req);
            return;
        }
        }
    }

    void complete(std::vector<Posted>& window) {
        if (window.empty()) {
            return;
        }
        std::vector<MPI_Request> reqs;
        for (auto& p : window) {
            reqs.push_back(p.req);
        }
        std::vector<MPI_Status> st(window.size());
        g_waiting_source = window.front().source;
        g_waiting_seq = window.front().seq;
        const int n = static_cast<int>(window.size());
        const int how = static_cast<int>(rng_() % 4);
        std::vector<int> done;
        if (how == 0) {
            MPI_Waitall(n, reqs.data(), st.data());
            for (int i = 0; i < n; i++) {
                done.push_back(i);
            }
        } else if (how == 1) {
            int index = MPI_UNDEFINED;
            MPI_Waitany(n, reqs.data(), &index, &st[0]);
            if (index != MPI_UNDEFINED) {
                st[static_cast<size_t>(index)] = st[0];
                done.push_back(index);
            }
        } else if (how == 2) {
            std::vector<int> indices(window.size());
            int outcount = 0;
            MPI_Testsome(n, reqs.data(), &outcount, indices.data(), st.data());
            std::vector<MPI_Status> by_index(window.size());
            for (int k = 0; k < outcount; k++) {
                by_index[static_cast<size_t>(indices[static_cast<size_t>(k)])] = st[static_cast<size_t>(k)];
                done.push_back(indices[static_cast<size_t>(k)]);
            }
            st = by_index;
        } else {
            MPI_Wait(&reqs[0], &st[0]);
            done.push_back(0);
        }
        std::sort(done.begin(), done.end());
        for (int i : done) {
            auto& p = window[static_cast<size_t>(i)];
            if (p.form == kPersistent) {
                MPI_Request_free(&reqs[static_cast<size_t>(i)]);
            }
            check(p, st[static_cast<size_t>(i)]);
        }
        for (size_t i = 0; i < window.size(); i++) {
            window[i].req = reqs[i];
        }
        for (auto it = done.rbegin(); it != done.rend(); ++it) {
            window.erase(window.begin() + *it);
        }
    }

    const Message& wanted(const Posted& p) const {
        return streams_[static_cast<size_t>(p.source)][static_cast<size_t>(p.seq)];
    }

    // a status that is not the claimed message's ends the job (the other ranks' sends are
    // still in flight)
    void check_status(const Posted& p, const MPI_Status& st, const char* call) const {
        int count = -1;
        MPI_Get_count(&st, MPI_BYTE, &count);
        const Message& want = wanted(p);
        if (st.MPI_SOURCE != p.source || st.MPI_TAG != want.tag || count != want.bytes) {
            report(p, call, -1, -1, st, count);
        }
    }

    void check(const Posted& p, const MPI_Status& st) {
        g_received = g_received + 1;
        Header h{};
        int count = -1;
        MPI_Get_count(&st, MPI_BYTE, &count);
        std::memcpy(&h, p.buf.data(), sizeof h);
        const Message& want = wanted(p);
        bool good = st.MPI_SOURCE == p.source && st.MPI_TAG == want.tag && count == want.bytes &&
                    h.source == p.source && h.seq == p.seq && h.tag == want.tag && h.bytes == want.bytes;
        for (size_t i = sizeof h; good && i < static_cast<size_t>(want.bytes); i++) {
            good = p.buf[i] == fill_byte(p.source, p.seq, i);
        }
        if (!good) {
            report(p, kFormNames[p.form], h.seq, h.source, st, count);
        }
    }

    [[noreturn]] void report(const Posted& p, const char* call, int got_seq, int got_source, const MPI_Status& st,
                             int count) const {
        const Message& want = wanted(p);
        const std::string src = p.src_arg == MPI_ANY_SOURCE ? "MPI_ANY_SOURCE" : std::to_string(p.src_arg);
        const std::string tag = p.tag_arg == MPI_ANY_TAG ? "MPI_ANY_TAG" : std::to_string(p.tag_arg);
        std::fprintf(stderr,
                     "message_order: rank %d, %s (%s, %s): expected message %d of source %d (tag %d, %d B), "
                     "got message %d of source %d (status: source %d, tag %d, %d B)\n",
                     rank_, call, src.c_str(), tag.c_str(), p.seq, p.source, want.tag, want.bytes, got_seq,
                     got_source, st.MPI_SOURCE, st.MPI_TAG, count);
        MPI_Abort(MPI_COMM_WORLD, 1);
        std::abort();
    }

    int rank_;
    std::mt19937 rng_;
    std::vector<std::vector<Message>> streams_;
    std::vector<int> next_;    // per source: its first unclaimed message
    std::vector<std::vector<bool>> claimed_;
    int left_ = 0;
    std::vector<int> forms_ = forms_in_use();
};

// argv[i] as a number in [low, high], fallback when absent; anything else ends the job
long argument(int argc, char** argv, int i, long fallback, long low, long high) {
    if (argc <= i) {
        return fallback;
    }
    char* end = nullptr;
    const long value = std::strtol(argv[i], &end, 10);
    if (end == argv[i] || *end != '\0' || value < low || value > high) {
        std::fprintf(stderr, "usage: message_order [MESSAGES [SEED [SECONDS]]]: '%s' is not in [%ld, %ld]\n",
                     argv[i], low, high);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return value;
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const long messages = argument(argc, argv, 1, 1000, 1, 1000000);
    const auto seed = static_cast<unsigned>(argument(argc, argv, 2, 1, 0, 1L << 30));
    const long seconds = argument(argc, argv, 3, 300, 1, 86400);
    if (size < 2) {
        if (g_rank == 0) {
            std::fprintf(stderr, "message_order: needs at least 2 processes\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    struct sigaction on_timeout {};
    on_timeout.sa_handler = on_alarm;
    sigaction(SIGALRM, &on_timeout, nullptr);
    alarm(static_cast<unsigned>(seconds));
    {
        Receiver receiver(g_rank, size, static_cast<int>(messages), seed);
        Sender sender(g_rank, size, static_cast<int>(messages), seed);
        receiver.run(sender);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    alarm(0);
    if (g_rank == 0) {
        std::printf("message_order: %d ranks, %ld messages per stream, seed %u: order kept\n", size, messages, seed);
    }
    MPI_Finalize();
    return 0;
}
