// Generalized requests whose callbacks count their calls: complete ones stand for "a request that
// is done" without any message traffic, so the tests control exactly what is complete.
#pragma once

#include <mpi.h>

#include <deque>

namespace reqtest {

struct GreqState {
    int tag = 0;                     // the MPI_TAG query_fn reports
    int source = MPI_UNDEFINED;      // ... its MPI_SOURCE
    int bytes = 0;                   // ... its count of MPI_BYTE
    int query_error = MPI_SUCCESS;   // what query_fn returns
    bool complete_on_poll = false;   // poll_fn completes the request
    bool completed = false;          // MPI_Grequest_complete was called
    int queries = 0;
    int polls = 0;
    int frees = 0;
    MPI_Status* last_poll_status = nullptr;  // the status pointer poll_fn was handed
    MPI_Request request = MPI_REQUEST_NULL;  // the handle, for poll_fn
};

inline int counting_query(void* extra, MPI_Status* status) {
    auto* g = static_cast<GreqState*>(extra);
    g->queries++;
    MPI_Status_set_elements(status, MPI_BYTE, g->bytes);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = g->source;
    status->MPI_TAG = g->tag;
    return g->query_error;
}

inline int counting_free(void* extra) {
    static_cast<GreqState*>(extra)->frees++;
    return MPI_SUCCESS;
}

inline int counting_cancel(void*, int) { return MPI_SUCCESS; }

inline int counting_poll(void* extra, MPI_Status* status) {
    auto* g = static_cast<GreqState*>(extra);
    g->polls++;
    g->last_poll_status = status;
    if (g->complete_on_poll && !g->completed) {
        g->completed = true;
        MPI_Grequest_complete(g->request);
    }
    return MPI_SUCCESS;
}

// MPIX_Grequest_start wants a wait_fn too: complete each request it is given, as its poll would.
inline int counting_wait(int count, void** states, double, MPI_Status* status) {
    for (int i = 0; i < count; i++) {
        counting_poll(states[i], status);
    }
    return MPI_SUCCESS;
}

// Owns the states of the generalized requests a test starts (their addresses stay valid).
class GreqFactory {
public:
    // A generalized request, completed at once unless complete is false.
    MPI_Request start(int tag, bool complete = true, int query_error = MPI_SUCCESS) {
        GreqState& g = states_.emplace_back();
        g.tag = tag;
        g.query_error = query_error;
        MPI_Grequest_start(counting_query, counting_free, counting_cancel, &g, &g.request);
        if (complete) {
            this->complete(g);
        }
        return g.request;
    }

    static void complete(GreqState& g) {
        g.completed = true;
        MPI_Grequest_complete(g.request);
    }

    // The live (not yet freed) request behind a handle, or nullptr.
    GreqState* live(MPI_Request handle) {
        for (auto& g : states_) {
            if (g.request == handle && g.frees == 0) {
                return &g;
            }
        }
        return nullptr;
    }

    // An extended generalized request (MPIX) with a poll_fn, completed by its first poll.
    MPI_Request start_polled(int tag) {
        GreqState& g = states_.emplace_back();
        g.tag = tag;
        g.complete_on_poll = true;
        MPIX_Grequest_start(counting_query, counting_free, counting_cancel, counting_poll,
                            counting_wait, &g, &g.request);
        return g.request;
    }

    GreqState& last() { return states_.back(); }
    GreqState& at(size_t i) { return states_.at(i); }
    size_t size() const { return states_.size(); }

private:
    std::deque<GreqState> states_;
};

}  // namespace reqtest
