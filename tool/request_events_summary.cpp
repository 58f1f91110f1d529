#include "request_events_summary.hpp"

#include <cstdio>
#include <sstream>

namespace request_events {

namespace {

const char* const kKindNames[kKinds] = {"?",
                                        "send",
                                        "recv",
                                        "persistent send",
                                        "persistent recv",
                                        "generalized",
                                        "collective",
                                        "persistent collective",
                                        "partitioned send",
                                        "partitioned recv",
                                        "RMA"};
const char* const kCallNames[CallId::kCount] = {"?",
                                                "MPI_Wait",
                                                "MPI_Test",
                                                "MPI_Request_get_status",
                                                "MPI_Waitall",
                                                "MPI_Testall",
                                                "MPI_Request_get_status_all",
                                                "MPI_Waitany",
                                                "MPI_Testany",
                                                "MPI_Request_get_status_any",
                                                "MPI_Waitsome",
                                                "MPI_Testsome",
                                                "MPI_Request_get_status_some"};

int bucket_of(double microseconds) {
    int b = 0;
    for (double bound = 1.0; microseconds >= bound && b < kBuckets - 1; bound *= 2) b++;
    return b;
}

std::string bucket_label(int b) {
    if (b == 0) return "< 1 us";
    std::ostringstream s;
    s << (1ull << (b - 1)) << "-" << (1ull << b) << " us";
    return s.str();
}

}  // namespace

void Summary::posted(MPI_Request request, Clock::time_point when) {
    std::lock_guard<std::mutex> g(lock_);
    posted_[static_cast<int>(request)] = when;
}

void Summary::completed(int kind, int request, int comm, Clock::time_point when) {
    std::lock_guard<std::mutex> g(lock_);
    CommStats& c = comms_[comm];
    c.completions++;
    c.by_kind[static_cast<size_t>(kind > 0 && kind < kKinds ? kind : 0)]++;
    auto it = posted_.find(request);
    if (it == posted_.end()) {
        c.not_posted++;
        return;
    }
    const double us = std::chrono::duration<double, std::micro>(when - it->second).count();
    c.latency[static_cast<size_t>(bucket_of(us))]++;
    posted_.erase(it);  // a persistent request is posted again by its next MPI_Start
}

void Summary::name(MPI_Comm comm, const char* name) {
    std::lock_guard<std::mutex> g(lock_);
    names_[static_cast<int>(comm)] = name;
}

void Summary::call_made(int call, int completions) {
    if (call <= 0 || call >= CallId::kCount) return;
    std::lock_guard<std::mutex> g(lock_);
    calls_[static_cast<size_t>(call)].calls++;
    if (completions == 0) calls_[static_cast<size_t>(call)].empty++;
}

void Summary::dropped(uint64_t count) {
    std::lock_guard<std::mutex> g(lock_);
    dropped_ += count;
}

std::string Summary::comm_name(int comm) const {
    auto it = names_.find(comm);
    if (it != names_.end()) return it->second;
    if (comm == static_cast<int>(MPI_COMM_WORLD)) return "MPI_COMM_WORLD";
    if (comm == static_cast<int>(MPI_COMM_SELF)) return "MPI_COMM_SELF";
    if (comm == static_cast<int>(MPI_COMM_NULL)) return "no communicator";
    char buf[32];
    std::snprintf(buf, sizeof buf, "communicator 0x%x", static_cast<unsigned>(comm));
    return buf;
}

std::string Summary::format(int rank) const {
    std::ostringstream out;
    uint64_t total = 0;
    for (const auto& [comm, c] : comms_) total += c.completions;
    out << "request_events: rank " << rank << ", " << total << " completions reported\n";
    if (dropped_ > 0) {
        out << "request_events: rank " << rank << ", " << dropped_
            << " completions not reported (MPI dropped them for this tool: "
               "MPIR_CVAR_T_EVENT_DEFER_LIMIT)\n";
    }
    for (const auto& [comm, c] : comms_) {
        out << "\n" << comm_name(comm) << ": " << c.completions << " completions (";
        bool first = true;
        for (int k = 1; k < kKinds; k++) {
            if (c.by_kind[size_t(k)] == 0) continue;
            out << (first ? "" : ", ") << kKindNames[k] << " " << c.by_kind[size_t(k)];
            first = false;
        }
        out << ")\n  latency from post to reported completion:\n";
        uint64_t peak = 1;
        for (uint64_t n : c.latency) peak = n > peak ? n : peak;
        for (int b = 0; b < kBuckets; b++) {
            const uint64_t n = c.latency[size_t(b)];
            if (n == 0) continue;
            char line[128];
            std::snprintf(line, sizeof line, "    %-18s %10llu ", bucket_label(b).c_str(),
                          static_cast<unsigned long long>(n));
            out << line << std::string(size_t(1 + 40 * n / peak), '#') << "\n";
        }
        if (c.not_posted > 0) {
            out << "    (" << c.not_posted << " posted by calls the tool does not wrap)\n";
        }
    }
    out << "\ncompletion calls (empty: reported no new completion):\n";
    for (int call = 1; call < CallId::kCount; call++) {
        const CallStats& s = calls_[size_t(call)];
        if (s.calls == 0) continue;
        char line[160];
        std::snprintf(line, sizeof line, "  %-28s %10llu calls %10llu empty (%.1f%%)\n",
                      kCallNames[call], static_cast<unsigned long long>(s.calls),
                      static_cast<unsigned long long>(s.empty),
                      100.0 * double(s.empty) / double(s.calls));
        out << line;
    }
    return out.str();
}

void Summary::write(int rank, const char* prefix) {
    std::string text;
    {
        std::lock_guard<std::mutex> g(lock_);
        text = format(rank);
    }
    if (prefix == nullptr || *prefix == '\0') {
        std::fputs(text.c_str(), stderr);
        return;
    }
    const std::string path = std::string(prefix) + "." + std::to_string(rank);
    FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) {
        std::fprintf(stderr, "request_events: cannot write %s\n", path.c_str());
        std::fputs(text.c_str(), stderr);
        return;
    }
    std::fputs(text.c_str(), f);
    std::fclose(f);
}

}  // namespace request_events
