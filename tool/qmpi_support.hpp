// QMPI plumbing shared by the QMPI tools: calling the next tool (or MPI) in the chain, and
// registering wrappers. A QMPI tool is a shared library loaded into the application
// (LD_PRELOAD or linking) whose constructor registers it by name; MPICH calls its wrappers when
// MPIR_CVAR_QMPI_TOOL_LIST names it, in the list's order.
#pragma once

#include <mpi.h>

#include <cstdio>

namespace qmpi_support {

// The implementation after tool `tool_id` of the call `which`, as type Fn (QMPI_Xxx_t).
template <class Fn>
Fn* next_of(int tool_id, QMPI_Functions_enum which, int* next_id) {
    void (*fn)(void) = nullptr;
    QMPI_Get_function(tool_id, which, &fn, next_id);
    return reinterpret_cast<Fn*>(fn);
}

// Calls the next implementation of `which` with the caller's context.
template <class Fn, class... Args>
int call_next(QMPI_Context context, int tool_id, QMPI_Functions_enum which, Args... args) {
    int next_id = 0;
    Fn* fn = next_of<Fn>(tool_id, which, &next_id);
    return fn(context, next_id, args...);
}

template <class Fn>
void register_wrapper(int tool_id, QMPI_Functions_enum which, Fn* wrapper) {
    if (QMPI_Register_function(tool_id, which, reinterpret_cast<void (*)(void)>(wrapper)) !=
        MPI_SUCCESS) {
        std::fprintf(stderr, "QMPI tool: could not register a wrapper (function %d)\n",
                     static_cast<int>(which));
    }
}

// Registers the tool under `name`; a tool loaded but not listed in MPIR_CVAR_QMPI_TOOL_LIST is
// told so by MPICH and stays inactive.
inline void register_tool(const char* name, void (*init)(int tool_id)) {
    QMPI_Register_tool_name(name, init);
}

}  // namespace qmpi_support
