// Catch2 runner for MPI programs: every rank runs the same test cases; a test case fails when it
// fails on any rank. Rank 0 reports; other ranks write their report to a file that is shown only
// when that rank failed. The last line is "<name> -n <size>: N test cases passed, M failed";
// with CATCH2_TAP set, a TAP line per test case comes before it.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

struct CaseOutcome {
    std::string name;
    int failed;
};

std::vector<CaseOutcome>& outcomes() {
    static std::vector<CaseOutcome> all;
    return all;
}

class OutcomeRecorder : public Catch::TestEventListenerBase {
public:
    using TestEventListenerBase::TestEventListenerBase;
    void testCaseEnded(Catch::TestCaseStats const& stats) override {
        outcomes().push_back({stats.testInfo.name, stats.totals.assertions.failed > 0 ? 1 : 0});
    }
};
CATCH_REGISTER_LISTENER(OutcomeRecorder)

}  // namespace

int main(int argc, char* argv[]) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    Catch::Session session;
    if (session.applyCommandLine(argc, argv) != 0) {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const std::string report = "catch2-rank" + std::to_string(rank) + ".log";
    if (rank != 0) {
        session.configData().outputFilename = report;
    }
    session.run();

    std::vector<int> local;
    for (const auto& o : outcomes()) {
        local.push_back(o.failed);
    }
    int n = static_cast<int>(local.size()), n_min = 0, n_max = 0;
    MPI_Allreduce(&n, &n_min, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&n, &n_max, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    std::vector<int> global(local.size());
    int n_failed = 0;
    if (n_min == n_max) {
        MPI_Allreduce(local.data(), global.data(), n, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        for (int f : global) {
            n_failed += f;
        }
    } else {
        n_failed = n;  // ranks ran different test cases: nothing can be trusted
    }

    const bool failed_here = std::find(local.begin(), local.end(), 1) != local.end();
    for (int r = 1; r < size; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == r && failed_here) {
            std::ifstream in(report);
            std::cerr << "---- report of rank " << rank << " ----\n" << in.rdbuf() << std::flush;
        }
    }
    if (rank == 0) {
        if (n_min != n_max) {
            std::cout << "ranks ran different numbers of test cases (" << n_min << " to " << n_max
                      << ")\n";
        }
        for (int i = 0; i < n && n_min == n_max; i++) {
            if (global[i] && !local[i]) {
                std::cout << "test case failed on another rank: " << outcomes()[i].name << "\n";
            }
        }
        if (std::getenv("CATCH2_TAP") != nullptr) {
            // one TAP line per test case for Automake's test driver (tests/catch2/run-catch2)
            for (int i = 0; i < n; i++) {
                const bool bad = n_min != n_max || global[i];
                std::cout << (bad ? "not ok - " : "ok - ") << outcomes()[i].name << "\n";
            }
        }
        std::cout << argv[0] << " -n " << size << ": " << n - n_failed
                  << " test cases passed, " << n_failed << " failed" << std::endl;
    }
    MPI_Finalize();
    return n_failed > 0 ? 1 : 0;
}
