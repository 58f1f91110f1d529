// Every Test, Wait and get_status form at n = 1, 8, 64, 512, 4096 requests, the cost per request,
// for comparing builds (this series, stock 4.0.2 built the same way, Debian's mpich package).
// One process; the requests are receives from itself.
//   pending   nothing completes (n receives with a tag nobody sends), each form called over and
//             over on the same array: MPI_Test and MPI_Request_get_status in a loop over the n
//             requests (what single-request applications do), MPI_Testany/_some/_all, and the
//             get_status_any/_some/_all forms where the build has them. ns per request.
//   complete  n receives matched and complete before the clock starts; the form then completes
//             them all: MPI_Wait and MPI_Test one request at a time, MPI_Waitany/Testany and
//             MPI_Waitsome/Testsome called until the array is done, MPI_Waitall/Testall once;
//             4096 / n such arrays per round, so one clock reading covers 4096 requests.
//             ns per request completed.
// Each figure is the median of ROUNDS rounds. Statuses are *_IGNORE.
// usage: mpiexec -n 1 bench_forms [ROUNDS]
// prints: forms <build> <n> <pending|complete> <form> <ns per request>
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
using Form = std::function<void(Requests&, std::vector<int>&)>;
int g_sink = 0;  // keeps results alive
constexpr int kRequestsPerRound = 4096;
constexpr int kPendingTag = 1;
constexpr int kMatchedTag = 2;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

void report(int n, const char* state, const std::string& form, double ns_per_request) {
    std::printf("forms %s %d %s %s %.2f\n", bench::build_name().c_str(), n, state, form.c_str(),
                ns_per_request);
    std::fflush(stdout);
}

int count_of(const Requests& r) { return static_cast<int>(r.size()); }

// The forms that leave a pending array as it is.
std::vector<std::pair<std::string, Form>> pending_forms() {
    std::vector<std::pair<std::string, Form>> v = {
        {"Test", [](Requests& r, std::vector<int>&) {
             for (auto& req : r) {
                 int flag = 0;
                 MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
                 g_sink += flag;
             }
         }},
        {"Request_get_status", [](Requests& r, std::vector<int>&) {
             for (auto& req : r) {
                 int flag = 0;
                 MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE);
                 g_sink += flag;
             }
         }},
        {"Testany", [](Requests& r, std::vector<int>&) {
             int index = 0, flag = 0;
             MPI_Testany(count_of(r), r.data(), &index, &flag, MPI_STATUS_IGNORE);
             g_sink += flag;
         }},
        {"Testsome", [](Requests& r, std::vector<int>& idx) {
             int out = 0;
             MPI_Testsome(count_of(r), r.data(), &out, idx.data(), MPI_STATUSES_IGNORE);
             g_sink += out;
         }},
        {"Testall", [](Requests& r, std::vector<int>&) {
             int flag = 0;
             MPI_Testall(count_of(r), r.data(), &flag, MPI_STATUSES_IGNORE);
             g_sink += flag;
         }},
    };
#ifdef MPIX_HAVE_REQUEST_GET_STATUS_MULTIPLE
    v.push_back({"get_status_any", [](Requests& r, std::vector<int>&) {
                     int index = 0, flag = 0;
                     MPI_Request_get_status_any(count_of(r), r.data(), &index, &flag,
                                                MPI_STATUS_IGNORE);
                     g_sink += flag;
                 }});
    v.push_back({"get_status_some", [](Requests& r, std::vector<int>& idx) {
                     int out = 0;
                     MPI_Request_get_status_some(count_of(r), r.data(), &out, idx.data(),
                                                 MPI_STATUSES_IGNORE);
                     g_sink += out;
                 }});
    v.push_back({"get_status_all", [](Requests& r, std::vector<int>&) {
                     int flag = 0;
                     MPI_Request_get_status_all(count_of(r), r.data(), &flag, MPI_STATUSES_IGNORE);
                     g_sink += flag;
                 }});
#endif
    return v;
}

// The forms that complete (and free) a whole array of complete requests.
std::vector<std::pair<std::string, Form>> completing_forms() {
    return {
        {"Wait", [](Requests& r, std::vector<int>&) {
             for (auto& req : r) {
                 MPI_Wait(&req, MPI_STATUS_IGNORE);
             }
         }},
        {"Test", [](Requests& r, std::vector<int>&) {
             for (auto& req : r) {
                 int flag = 0;
                 MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
                 g_sink += flag;
             }
         }},
        {"Waitany", [](Requests& r, std::vector<int>&) {
             for (int k = 0; k < count_of(r); k++) {
                 int index = 0;
                 MPI_Waitany(count_of(r), r.data(), &index, MPI_STATUS_IGNORE);
                 g_sink += index;
             }
         }},
        {"Testany", [](Requests& r, std::vector<int>&) {
             for (int k = 0; k < count_of(r); k++) {
                 int index = 0, flag = 0;
                 MPI_Testany(count_of(r), r.data(), &index, &flag, MPI_STATUS_IGNORE);
                 g_sink += flag;
             }
         }},
        {"Waitsome", [](Requests& r, std::vector<int>& idx) {
             int out = 0;
             while (out != MPI_UNDEFINED) {
                 MPI_Waitsome(count_of(r), r.data(), &out, idx.data(), MPI_STATUSES_IGNORE);
             }
         }},
        {"Testsome", [](Requests& r, std::vector<int>& idx) {
             int out = 0;
             while (out != MPI_UNDEFINED) {
                 MPI_Testsome(count_of(r), r.data(), &out, idx.data(), MPI_STATUSES_IGNORE);
             }
         }},
        {"Waitall", [](Requests& r, std::vector<int>&) {
             MPI_Waitall(count_of(r), r.data(), MPI_STATUSES_IGNORE);
         }},
        {"Testall", [](Requests& r, std::vector<int>&) {
             int flag = 0;
             MPI_Testall(count_of(r), r.data(), &flag, MPI_STATUSES_IGNORE);
             g_sink += flag;
         }},
    };
}

void pending(int n, int rounds) {
    Requests r(static_cast<size_t>(n));
    std::vector<int> idx(static_cast<size_t>(n)), buf(static_cast<size_t>(n));
    for (int i = 0; i < n; i++) {
        MPI_Irecv(&buf[static_cast<size_t>(i)], 1, MPI_INT, 0, kPendingTag, MPI_COMM_SELF,
                  &r[static_cast<size_t>(i)]);
    }
    // about 2 million requests looked at per round, at least 1000 calls
    const int calls = std::max(1000, 2000000 / n);
    for (auto& [name, form] : pending_forms()) {
        std::vector<double> per_request;
        form(r, idx);  // warm
        for (int round = 0; round < rounds; round++) {
            const double t0 = bench::now_ns();
            for (int c = 0; c < calls; c++) {
                form(r, idx);
            }
            per_request.push_back((bench::now_ns() - t0) / (static_cast<double>(calls) * n));
        }
        report(n, "pending", name, median(per_request));
    }
    for (auto& req : r) {
        MPI_Cancel(&req);
    }
    MPI_Waitall(n, r.data(), MPI_STATUSES_IGNORE);
}

// Arrays of n receives, matched by sends to self and complete, the sends completed.
void make_complete(std::vector<Requests>& arrays, std::vector<int>& buf) {
    static const int payload = 42;
    size_t slot = 0;
    Requests sends;
    for (auto& r : arrays) {
        for (auto& req : r) {
            MPI_Irecv(&buf[slot++], 1, MPI_INT, 0, kMatchedTag, MPI_COMM_SELF, &req);
        }
    }
    sends.resize(slot);
    for (auto& req : sends) {
        MPI_Isend(&payload, 1, MPI_INT, 0, kMatchedTag, MPI_COMM_SELF, &req);
    }
    MPI_Waitall(count_of(sends), sends.data(), MPI_STATUSES_IGNORE);
    for (auto& r : arrays) {
        for (auto& req : r) {
            int flag = 0;
            while (!flag) {
                MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE);
            }
        }
    }
}

void complete(int n, int rounds) {
    std::vector<Requests> arrays(static_cast<size_t>(kRequestsPerRound / n),
                                 Requests(static_cast<size_t>(n)));
    std::vector<int> idx(static_cast<size_t>(n)), buf(kRequestsPerRound);
    for (auto& [name, form] : completing_forms()) {
        std::vector<double> per_request;
        for (int round = 0; round <= rounds; round++) {  // round 0 warms
            make_complete(arrays, buf);
            const double t0 = bench::now_ns();
            for (auto& r : arrays) {
                form(r, idx);
            }
            const double ns = (bench::now_ns() - t0) / kRequestsPerRound;
            for (auto& r : arrays) {  // every form must have completed everything
                for (auto req : r) {
                    if (req != MPI_REQUEST_NULL) {
                        std::fprintf(stderr, "bench_forms: %s left a request active\n", name.c_str());
                        MPI_Abort(MPI_COMM_WORLD, 1);
                    }
                }
            }
            if (round > 0) {
                per_request.push_back(ns);
            }
        }
        report(n, "complete", name, median(per_request));
    }
}

}  // namespace

int main(int argc, char* argv[]) {
    MPI_Init(&argc, &argv);
    const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
    for (int n : {1, 8, 64, 512, 4096}) {
        pending(n, rounds);
        complete(n, rounds);
    }
    MPI_Finalize();
    return g_sink == 0x7fffffff ? 1 : 0;
}
