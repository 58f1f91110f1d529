// Small helpers shared by the benchmarks: timing, CPU time, and which MPICH this binary was built
// against.
#pragma once

#include <mpi.h>

#include <chrono>
#include <ctime>
#include <string>

namespace bench {

inline double now_ns() {
    return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// Seconds of CPU the calling thread has used, from the scheduler's exact runtime
// (CLOCK_THREAD_CPUTIME_ID). getrusage(RUSAGE_THREAD) is not used: it splits tick samples into
// user and system time and keeps the split monotonic, so the difference of two readings 0.1 s
// apart can carry CPU time spent before the first one (a computation) into the interval.
inline double thread_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// "custom" when built against the patched MPICH (it has the get_status_* forms), else "stock";
// BENCH_BUILD_NAME (a string, given by bench/run-bench) names the build instead: "debian".
inline std::string build_name() {
#if defined(BENCH_BUILD_NAME)
    return BENCH_BUILD_NAME;
#elif defined(MPIX_HAVE_REQUEST_GET_STATUS_MULTIPLE)
    return "custom";
#else
    return "stock";
#endif
}

}  // namespace bench
