// Applications for the with/without-tool comparison: each scenario completes requests through one
// of MPI_Testany, Waitany, Testsome, Waitsome, Testall, Waitall and prints, on rank 0, one line per
// request it saw complete (index, status, return class). Built twice, plain and linked with the
// reqstatus tool; the two outputs must be identical, and equal to the tool's own log.
// Deterministic: every message a call may complete has arrived (checked with the non-destructive
// MPI_Request_get_status, which the tool does not wrap) before the call.
// Ranks work in pairs (an even world size): each odd rank sends to the even rank before it, every
// even rank completes its requests through the call; rank 0 prints.
// usage: tool_scenarios SCENARIO|all CALL|all   (mpiexec -n 2 or -n 4); with "all", every
// scenario or call in turn, in one process, each pair after a line " pair SCENARIO CALL".
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kSlots = 8;
constexpr int kRounds = 3;
int rank_ = 0;

int error_class_of(int code) {
    int cls = code;
    if (code != MPI_SUCCESS) {
        MPI_Error_class(code, &cls);
    }
    return cls;
}

int peer() { return rank_ ^ 1; }
bool is_sender() { return rank_ % 2 == 1; }

void print(const char* call, int index, const MPI_Status& s, int rc) {
    if (rank_ != 0) {
        return;
    }
    int count = -1, cancelled = -1;
    MPI_Get_count(&s, MPI_BYTE, &count);
    MPI_Test_cancelled(&s, &cancelled);
    // a cancelled request's source and tag are undefined (MPI 4.0 section 3.8.4): not printed
    std::printf("%s index %d source %d tag %d bytes %d cancelled %d return class %d\n", call, index,
                cancelled ? MPI_UNDEFINED : s.MPI_SOURCE, cancelled ? MPI_UNDEFINED : s.MPI_TAG,
                count, cancelled, error_class_of(rc));
}

void settle(std::vector<MPI_Request>& reqs, const std::vector<bool>& expect_complete) {
    for (size_t i = 0; i < reqs.size(); i++) {
        int flag = 0;
        while (expect_complete[i] && !flag) {
            MPI_Request_get_status(reqs[i], &flag, MPI_STATUS_IGNORE);
        }
    }
}

// Completes requests with the named call until `wanted` of them have been reported; prints each.
void complete_with(const std::string& call, std::vector<MPI_Request>& reqs, int wanted) {
    const int n = static_cast<int>(reqs.size());
    const char* name = call.c_str();
    int done = 0;
    while (done < wanted) {
        if (call == "MPI_Testany" || call == "MPI_Waitany") {
            int index = -1, flag = 1;
            MPI_Status st;
            const int rc = (call == "MPI_Testany") ? MPI_Testany(n, reqs.data(), &index, &flag, &st)
                                                   : MPI_Waitany(n, reqs.data(), &index, &st);
            if (flag && index != MPI_UNDEFINED) {
                print(name, index, st, rc);
                done++;
            }
        } else if (call == "MPI_Testsome" || call == "MPI_Waitsome") {
            int outcount = 0;
            std::vector<int> indices(static_cast<size_t>(n));
            std::vector<MPI_Status> st(static_cast<size_t>(n));
            const int rc = (call == "MPI_Testsome")
                               ? MPI_Testsome(n, reqs.data(), &outcount, indices.data(), st.data())
                               : MPI_Waitsome(n, reqs.data(), &outcount, indices.data(), st.data());
            for (int j = 0; j < outcount && outcount != MPI_UNDEFINED; j++) {
                print(name, indices[static_cast<size_t>(j)], st[static_cast<size_t>(j)], rc);
                if (rank_ == 0 && error_class_of(rc) == MPI_ERR_IN_STATUS) {
                    std::printf("  MPI_ERROR class %d\n",
                                error_class_of(st[static_cast<size_t>(j)].MPI_ERROR));
                }
                done++;
            }
        } else {
            int flag = 1;
            std::vector<MPI_Status> st(static_cast<size_t>(n));
            std::vector<bool> was_null;
            for (auto r : reqs) {
                was_null.push_back(r == MPI_REQUEST_NULL);
            }
            const int rc = (call == "MPI_Testall") ? MPI_Testall(n, reqs.data(), &flag, st.data())
                                                   : MPI_Waitall(n, reqs.data(), st.data());
            const bool in_status = error_class_of(rc) == MPI_ERR_IN_STATUS;
            for (int i = 0; i < n && (flag || in_status); i++) {
                if (was_null[static_cast<size_t>(i)] ||
                    (in_status && st[static_cast<size_t>(i)].MPI_ERROR == MPI_ERR_PENDING)) {
                    continue;
                }
                print(name, i, st[static_cast<size_t>(i)], rc);
                if (rank_ == 0 && in_status) {
                    std::printf("  MPI_ERROR class %d\n",
                                error_class_of(st[static_cast<size_t>(i)].MPI_ERROR));
                }
                done++;
            }
        }
    }
}

// Rank 1 sends kRounds rounds of kSlots messages (tag 100 * round + slot, slot + 1 ints; in
// round 1 slot 3 gets one int more than posted: truncated); rank 0 completes each round.
void pt2pt_sender() {
    std::vector<int> payload(kSlots + 2, 7);
    for (int round = 0; round < kRounds; round++) {
        if (is_sender()) {
            for (int s = 0; s < kSlots; s++) {
                const int extra = (round == 1 && s == 3) ? 1 : 0;
                MPI_Send(payload.data(), s + 1 + extra, MPI_INT, peer(), 100 * round + s,
                         MPI_COMM_WORLD);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

void pt2pt_receiver(const std::string& call) {
    std::vector<std::vector<int>> bufs(kSlots, std::vector<int>(kSlots + 2));
    std::vector<MPI_Request> reqs(kSlots);
    for (int round = 0; round < kRounds; round++) {
        for (int s = 0; s < kSlots; s++) {
            MPI_Irecv(bufs[static_cast<size_t>(s)].data(), s + 1, MPI_INT, peer(), 100 * round + s,
                      MPI_COMM_WORLD, &reqs[static_cast<size_t>(s)]);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        settle(reqs, std::vector<bool>(kSlots, true));
        complete_with(call, reqs, kSlots);
    }
}

// Persistent receives: started each round, completed, started again.
void persistent(const std::string& call) {
    std::vector<int> payload(kSlots, 3);
    if (is_sender()) {
        for (int round = 0; round < kRounds; round++) {
            MPI_Barrier(MPI_COMM_WORLD);
            for (int s = 0; s < kSlots; s++) {
                MPI_Send(payload.data(), s + 1, MPI_INT, peer(), s, MPI_COMM_WORLD);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
        return;
    }
    std::vector<std::vector<int>> bufs(kSlots, std::vector<int>(kSlots));
    std::vector<MPI_Request> reqs(kSlots);
    for (int s = 0; s < kSlots; s++) {
        MPI_Recv_init(bufs[static_cast<size_t>(s)].data(), kSlots, MPI_INT, peer(), s,
                      MPI_COMM_WORLD, &reqs[static_cast<size_t>(s)]);
    }
    for (int round = 0; round < kRounds; round++) {
        MPI_Startall(kSlots, reqs.data());
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        settle(reqs, std::vector<bool>(kSlots, true));
        complete_with(call, reqs, kSlots);
    }
    for (auto& r : reqs) {
        MPI_Request_free(&r);
    }
}

// Half the receives are matched, half cancelled.
void cancelled(const std::string& call) {
    std::vector<int> payload(1, 5);
    if (is_sender()) {
        for (int s = 0; s < kSlots; s += 2) {
            MPI_Send(payload.data(), 1, MPI_INT, peer(), s, MPI_COMM_WORLD);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        return;
    }
    std::vector<int> bufs(kSlots);
    std::vector<MPI_Request> reqs(kSlots);
    for (int s = 0; s < kSlots; s++) {
        MPI_Irecv(&bufs[static_cast<size_t>(s)], 1, MPI_INT, peer(), s, MPI_COMM_WORLD,
                  &reqs[static_cast<size_t>(s)]);
        if (s % 2 == 1) {
            MPI_Cancel(&reqs[static_cast<size_t>(s)]);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    settle(reqs, std::vector<bool>(kSlots, true));
    complete_with(call, reqs, kSlots);
}

int failing_tag = 5;  // query_fn of this one fails

int greq_query(void* extra, MPI_Status* s) {
    const int tag = *static_cast<int*>(extra);
    MPI_Status_set_elements(s, MPI_BYTE, tag);
    MPI_Status_set_cancelled(s, 0);
    s->MPI_SOURCE = MPI_UNDEFINED;
    s->MPI_TAG = tag;
    return tag == failing_tag ? MPI_ERR_OTHER : MPI_SUCCESS;
}
int greq_free(void*) { return MPI_SUCCESS; }
int greq_cancel(void*, int) { return MPI_SUCCESS; }

// Generalized requests, one of which fails in query_fn; completed in a scrambled order.
void grequests(const std::string& call) {
    if (is_sender()) {
        return;
    }
    std::vector<int> tags(kSlots);
    std::vector<MPI_Request> reqs(kSlots);
    for (int s = 0; s < kSlots; s++) {
        tags[static_cast<size_t>(s)] = s;
        MPI_Grequest_start(greq_query, greq_free, greq_cancel, &tags[static_cast<size_t>(s)],
                           &reqs[static_cast<size_t>(s)]);
    }
    const bool all_form = call == "MPI_Testall" || call == "MPI_Waitall";
    std::vector<MPI_Request> handles = reqs;
    for (int s : {6, 2, 7, 0, 3, 5, 1, 4}) {
        MPI_Grequest_complete(handles[static_cast<size_t>(s)]);
        if (!all_form && (s == 7 || s == 5)) {
            complete_with(call, reqs, 1);
        }
    }
    int remaining = 0;
    for (auto r : reqs) {
        remaining += (r != MPI_REQUEST_NULL) ? 1 : 0;
    }
    complete_with(call, reqs, remaining);
}

const std::vector<std::string> kScenarios{"pt2pt", "persistent", "cancelled", "grequests"};
const std::vector<std::string> kCalls{"MPI_Testany",  "MPI_Waitany", "MPI_Testsome",
                                      "MPI_Waitsome", "MPI_Testall", "MPI_Waitall"};

// The names an argument stands for ("all": every one); empty if it names none.
std::vector<std::string> chosen(const char* arg, const std::vector<std::string>& known) {
    const std::string name = arg ? arg : "";
    if (name == "all") {
        return known;
    }
    for (const auto& k : known) {
        if (k == name) {
            return {k};
        }
    }
    return {};
}

void run_scenario(const std::string& scenario, const std::string& call) {
    if (scenario == "pt2pt") {
        if (!is_sender()) {
            pt2pt_receiver(call);
        } else {
            pt2pt_sender();
        }
    } else if (scenario == "persistent") {
        persistent(call);
    } else if (scenario == "cancelled") {
        cancelled(call);
    } else {
        grequests(call);
    }
}

}  // namespace

int main(int argc, char* argv[]) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    const auto scenarios = chosen(argc > 1 ? argv[1] : nullptr, kScenarios);
    const auto calls = chosen(argc > 2 ? argv[2] : nullptr, kCalls);
    if (scenarios.empty() || calls.empty()) {
        std::fprintf(stderr, "usage: tool_scenarios pt2pt|persistent|cancelled|grequests|all "
                             "MPI_Testany|MPI_Waitany|MPI_Testsome|MPI_Waitsome|MPI_Testall|"
                             "MPI_Waitall|all\n");
        MPI_Finalize();
        return 2;
    }
    const bool several = scenarios.size() * calls.size() > 1;
    for (const auto& scenario : scenarios) {
        for (const auto& call : calls) {
            if (several && rank_ == 0) {
                // a leading blank: not a completion (the tools' logs hold none of these)
                std::printf(" pair %s %s\n", scenario.c_str(), call.c_str());
            }
            run_scenario(scenario, call);
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    std::fflush(stdout);
    MPI_Finalize();
    return 0;
}
