// Cost per call of MPI_Request_get_status_some/_any/_all against MPI_Testsome/_any/_all on the same
// requests, and against the user-level emulation loop over MPI_Request_get_status, for 1 to
// 65536 requests, none complete and all complete, with MPI_STATUSES_IGNORE / MPI_STATUS_IGNORE.
// One process; the requests are receives from itself. Prints one line per measurement:
//   cost <build> <n> <none|all> <function> <ns per call> <ns per request>
// Built against stock MPICH 4.0.2 it measures the Test forms and the emulation only.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace {

using Requests = std::vector<MPI_Request>;
int g_sink = 0;  // keeps results alive

void report(int n, const char* state, const char* fn, double ns_per_call) {
    std::printf("cost %s %d %s %s %.1f %.2f\n", bench::build_name().c_str(), n, state, fn,
                ns_per_call, ns_per_call / n);
    std::fflush(stdout);
}

// The emulation a tool writes without the get_status_* forms.
int emulate_some(Requests& r) {
    int found = 0;
    for (auto& req : r) {
        int flag = 0;
        MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE);
        found += flag;
    }
    return found;
}
int emulate_any(Requests& r) {
    for (size_t i = 0; i < r.size(); i++) {
        int flag = 0;
        MPI_Request_get_status(r[i], &flag, MPI_STATUS_IGNORE);
        if (flag) {
            return static_cast<int>(i);
        }
    }
    return -1;
}
int emulate_all(Requests& r) {
    int all = 1;
    for (auto& req : r) {
        int flag = 0;
        MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE);
        all &= flag;
    }
    return all;
}

struct NonDestructive {
    const char* name;
    std::function<int(Requests&, std::vector<int>&)> call;
};

std::vector<NonDestructive> non_destructive_calls() {
    std::vector<NonDestructive> v;
#ifdef MPIX_HAVE_REQUEST_GET_STATUS_MULTIPLE
    v.push_back({"get_status_some", [](Requests& r, std::vector<int>& idx) {
                     int out = 0;
                     MPI_Request_get_status_some(static_cast<int>(r.size()), r.data(), &out,
                                                 idx.data(), MPI_STATUSES_IGNORE);
                     return out;
                 }});
    v.push_back({"get_status_any", [](Requests& r, std::vector<int>&) {
                     int index = 0, flag = 0;
                     MPI_Request_get_status_any(static_cast<int>(r.size()), r.data(), &index, &flag,
                                                MPI_STATUS_IGNORE);
                     return index;
                 }});
    v.push_back({"get_status_all", [](Requests& r, std::vector<int>&) {
                     int flag = 0;
                     MPI_Request_get_status_all(static_cast<int>(r.size()), r.data(), &flag,
                                                MPI_STATUSES_IGNORE);
                     return flag;
                 }});
#endif
    v.push_back({"emulated_some", [](Requests& r, std::vector<int>&) { return emulate_some(r); }});
    v.push_back({"emulated_any", [](Requests& r, std::vector<int>&) { return emulate_any(r); }});
    v.push_back({"emulated_all", [](Requests& r, std::vector<int>&) { return emulate_all(r); }});
    return v;
}

int testsome(Requests& r, std::vector<int>& idx) {
    int out = 0;
    MPI_Testsome(static_cast<int>(r.size()), r.data(), &out, idx.data(), MPI_STATUSES_IGNORE);
    return out;
}
int testany(Requests& r, std::vector<int>&) {
    int index = 0, flag = 0;
    MPI_Testany(static_cast<int>(r.size()), r.data(), &index, &flag, MPI_STATUS_IGNORE);
    return index;
}
int testall(Requests& r, std::vector<int>&) {
    int flag = 0;
    MPI_Testall(static_cast<int>(r.size()), r.data(), &flag, MPI_STATUSES_IGNORE);
    return flag;
}

// ns per call: the best of three rounds of reps calls (the machine is shared).
template <class Call>
double best_of_3(int reps, Call&& call) {
    double best = 0;
    for (int round = 0; round < 3; round++) {
        const double t0 = bench::now_ns();
        for (int k = 0; k < reps; k++) {
            call();
        }
        const double per_call = (bench::now_ns() - t0) / reps;
        best = (round == 0) ? per_call : std::min(best, per_call);
    }
    return best;
}

const std::vector<std::pair<const char*, int (*)(Requests&, std::vector<int>&)>> kTests = {
    {"Testsome", testsome}, {"Testany", testany}, {"Testall", testall}};

// Nothing completes: n receives from self with a tag nobody sends. Every call sees the same state.
void none_complete(int n, int reps) {
    Requests r(static_cast<size_t>(n));
    std::vector<int> idx(static_cast<size_t>(n));
    std::vector<int> buf(static_cast<size_t>(n));
    for (int i = 0; i < n; i++) {
        MPI_Irecv(&buf[static_cast<size_t>(i)], 1, MPI_INT, 0, 1, MPI_COMM_SELF, &r[static_cast<size_t>(i)]);
    }
    auto time_calls = [&](const char* name, auto&& call) {
        g_sink += call(r, idx);  // warm
        report(n, "none", name, best_of_3(reps, [&] { g_sink += call(r, idx); }));
    };
    for (auto& [name, fn] : kTests) {
        time_calls(name, fn);
    }
    for (auto& c : non_destructive_calls()) {
        time_calls(c.name, c.call);
    }
    for (auto& req : r) {
        MPI_Cancel(&req);
    }
    MPI_Waitall(n, r.data(), MPI_STATUSES_IGNORE);
}

// n receives from self, matched and complete (driven to completion without completing them).
void post_complete(Requests& r, Requests& sends, std::vector<int>& buf) {
    const int n = static_cast<int>(r.size());
    static const int payload = 42;
    for (int i = 0; i < n; i++) {
        MPI_Irecv(&buf[static_cast<size_t>(i)], 1, MPI_INT, 0, 2, MPI_COMM_SELF, &r[static_cast<size_t>(i)]);
    }
    for (int i = 0; i < n; i++) {
        MPI_Isend(&payload, 1, MPI_INT, 0, 2, MPI_COMM_SELF, &sends[static_cast<size_t>(i)]);
    }
    MPI_Waitall(n, sends.data(), MPI_STATUSES_IGNORE);
    for (auto& req : r) {
        int flag = 0;
        while (!flag) {
            MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE);
        }
    }
}

// All complete: the non-destructive calls are timed over repeated calls on one array; each
// destructive call consumes the array, so it is timed once per freshly completed array.
void all_complete(int n, int reps, int fresh_arrays) {
    Requests r(static_cast<size_t>(n)), sends(static_cast<size_t>(n));
    std::vector<int> idx(static_cast<size_t>(n)), buf(static_cast<size_t>(n));
    post_complete(r, sends, buf);
    for (auto& c : non_destructive_calls()) {
        g_sink += c.call(r, idx);
        report(n, "all", c.name, best_of_3(reps, [&] { g_sink += c.call(r, idx); }));
    }
    MPI_Waitall(n, r.data(), MPI_STATUSES_IGNORE);
    for (auto& [name, fn] : kTests) {
        double total = 0;
        for (int k = 0; k < fresh_arrays; k++) {
            post_complete(r, sends, buf);
            g_sink += emulate_all(r);  // the array in cache, as for the calls above
            const double t0 = bench::now_ns();
            g_sink += fn(r, idx);
            total += bench::now_ns() - t0;
            MPI_Waitall(n, r.data(), MPI_STATUSES_IGNORE);
        }
        report(n, "all", name, total / fresh_arrays);
    }
}

}  // namespace

// For a profiler (bench/run-bench profile): one form over n pending receives, called for the
// given number of seconds; prints the ns per request it measured.
int profile(const std::string& form, int n, double seconds) {
    Requests r(static_cast<size_t>(n));
    std::vector<int> idx(static_cast<size_t>(n)), buf(static_cast<size_t>(n));
    for (int i = 0; i < n; i++) {
        MPI_Irecv(&buf[static_cast<size_t>(i)], 1, MPI_INT, 0, 1, MPI_COMM_SELF, &r[static_cast<size_t>(i)]);
    }
    std::function<int(Requests&, std::vector<int>&)> call;
    for (auto& [name, fn] : kTests) {
        if (form == name) {
            call = fn;
        }
    }
    for (auto& c : non_destructive_calls()) {
        if (form == c.name) {
            call = c.call;
        }
    }
    if (!call) {
        std::fprintf(stderr, "bench_cost profile: unknown form %s\n", form.c_str());
        return 2;
    }
    long calls = 0;
    const double t0 = bench::now_ns();
    while (bench::now_ns() - t0 < seconds * 1e9) {
        for (int k = 0; k < 100; k++) {
            g_sink += call(r, idx);
        }
        calls += 100;
    }
    report(n, "none", form.c_str(), (bench::now_ns() - t0) / static_cast<double>(calls));
    for (auto& req : r) {
        MPI_Cancel(&req);
    }
    MPI_Waitall(n, r.data(), MPI_STATUSES_IGNORE);
    return 0;
}

int main(int argc, char* argv[]) {
    MPI_Init(&argc, &argv);
    if (argc == 5 && std::string(argv[1]) == "profile") {
        const int rc = profile(argv[2], std::atoi(argv[3]), std::atof(argv[4]));
        MPI_Finalize();
        return rc;
    }
    const int max_n = argc > 1 ? std::atoi(argv[1]) : 65536;
    for (int n = 1; n <= max_n; n *= 4) {
        for (int size : {n, n == 256 ? 512 : 0}) {
            if (size == 0 || size > max_n) {
                continue;
            }
            const int reps = std::max(10, 700000 / size);
            none_complete(size, std::min(reps, 70000));
            all_complete(size, std::min(reps, 70000), std::max(5, std::min(2000, 400000 / size)));
        }
    }
    MPI_Finalize();
    return g_sink == 0x7fffffff ? 1 : 0;
}
