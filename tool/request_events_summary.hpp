// What the request_events tool accumulates and prints: per communicator, completions by request
// kind and a histogram of post-to-completion latency; per completion call, calls made and calls
// that reported no new completion. Thread-safe (one lock); never calls MPI, so its methods may be
// called from an MPI_T event callback inside the progress engine.
#pragma once

#include <mpi.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace request_events {

using Clock = std::chrono::steady_clock;

// The completion calls, numbered as the request_complete event's "call" element
namespace CallId {
enum : int {
    kWait = 1, kTest, kGetStatus, kWaitall, kTestall, kGetStatusAll, kWaitany, kTestany,
    kGetStatusAny, kWaitsome, kTestsome, kGetStatusSome, kCount
};
}

constexpr int kKinds = 11;      // request_complete "kind" 1..10
constexpr int kBuckets = 28;    // latency bucket b: [2^(b-1), 2^b) microseconds; 0: < 1 us

class Summary {
public:
    void posted(MPI_Request request, Clock::time_point when);
    void completed(int kind, int request, int comm, Clock::time_point when);
    void name(MPI_Comm comm, const char* name);
    void call_made(int call, int completions);
    // request_complete instances MPI dropped for this tool's handle (its dropped handler)
    void dropped(uint64_t count);
    // Writes the summary to <prefix>.<rank>, or to stderr when prefix is null or empty.
    void write(int rank, const char* prefix);

private:
    struct CommStats {
        uint64_t completions = 0;
        uint64_t not_posted = 0;  // completed requests whose post this tool did not see
        std::array<uint64_t, kKinds> by_kind{};
        std::array<uint64_t, kBuckets> latency{};
    };
    struct CallStats {
        uint64_t calls = 0, empty = 0;
    };
    std::string comm_name(int comm) const;
    std::string format(int rank) const;

    std::mutex lock_;
    std::unordered_map<int, Clock::time_point> posted_;
    std::map<int, CommStats> comms_;
    std::map<int, std::string> names_;
    std::array<CallStats, CallId::kCount> calls_{};
    uint64_t dropped_ = 0;
};

}  // namespace request_events
