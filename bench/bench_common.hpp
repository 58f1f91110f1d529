// Small helpers shared by the benchmarks: timing, and which MPICH this binary was built against.
#pragma once

#include <mpi.h>

#include <chrono>
#include <string>

namespace bench {

inline double now_ns() {
    return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// "custom" when built against the patched MPICH (it has the get_status_* forms), else "stock".
inline std::string build_name() {
#ifdef MPIX_HAVE_REQUEST_GET_STATUS_MULTIPLE
    return "custom";
#else
    return "stock";
#endif
}

}  // namespace bench
