// The scan order control variable (MPIR_CVAR_REQUEST_SCAN_ORDER) through MPI_T, and arrays of
// complete generalized requests for the fairness tests.
#pragma once

#include <mpi.h>

#include <vector>

#include "grequest_support.hpp"

namespace reqtest {

constexpr int kScanRotate = 0;  // enum value order of the CVAR's declaration
constexpr int kScanLowest = 1;

// Holds an MPI_T session and the CVAR's handle; restores the value it found.
class ScanOrder {
public:
    ScanOrder() {
        int provided = 0;
        MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
        found_ = MPI_T_cvar_get_index("MPIR_CVAR_REQUEST_SCAN_ORDER", &index_) == MPI_SUCCESS;
        if (found_) {
            int count = 0;
            MPI_T_cvar_handle_alloc(index_, nullptr, &handle_, &count);
            original_ = get();
        }
    }
    ~ScanOrder() {
        if (found_) {
            set(original_);
            MPI_T_cvar_handle_free(&handle_);
        }
        MPI_T_finalize();
    }
    ScanOrder(const ScanOrder&) = delete;
    ScanOrder& operator=(const ScanOrder&) = delete;

    bool found() const { return found_; }
    int index() const { return index_; }
    int get() const {
        int value = -1;
        MPI_T_cvar_read(handle_, &value);
        return value;
    }
    int set(int value) { return MPI_T_cvar_write(handle_, &value); }

private:
    bool found_ = false;
    int index_ = -1;
    int original_ = kScanRotate;
    MPI_T_cvar_handle handle_ = MPI_T_CVAR_HANDLE_NULL;
};

// An array of n slots, each holding a complete generalized request whose query_fn reports the
// slot as its tag; repost(i) puts a fresh complete one into slot i.
class CompleteArray {
public:
    explicit CompleteArray(int n) : reqs_(static_cast<size_t>(n), MPI_REQUEST_NULL) {
        for (int i = 0; i < n; i++) {
            repost(i);
        }
    }
    ~CompleteArray() { drain(); }
    CompleteArray(const CompleteArray&) = delete;
    CompleteArray& operator=(const CompleteArray&) = delete;

    void repost(int i) { reqs_.at(static_cast<size_t>(i)) = greqs_.start(i); }
    void post_pending(int i) { reqs_.at(static_cast<size_t>(i)) = greqs_.start(i, false); }
    MPI_Request* data() { return reqs_.data(); }
    MPI_Request& operator[](int i) { return reqs_.at(static_cast<size_t>(i)); }
    int size() const { return static_cast<int>(reqs_.size()); }
    GreqFactory& greqs() { return greqs_; }

    // Completes every request, then lets one call see the array all null: that is what makes
    // the engine forget the array's cursor, so a later array at this address starts afresh.
    void drain() {
        for (auto& r : reqs_) {
            if (r == MPI_REQUEST_NULL) {
                continue;
            }
            GreqState* g = greqs_.live(r);
            if (g != nullptr && !g->completed) {
                GreqFactory::complete(*g);
            }
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        int index = 0, flag = 0;
        MPI_Testany(size(), data(), &index, &flag, MPI_STATUS_IGNORE);
    }

private:
    std::vector<MPI_Request> reqs_;
    GreqFactory greqs_;
};

}  // namespace reqtest
