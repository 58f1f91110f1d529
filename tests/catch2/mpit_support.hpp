// MPI_T for the tests: a control variable set for a scope, and the greq_class_* performance
// variables read back element by element.
#pragma once

#include <mpi.h>

#include <map>
#include <string>
#include <vector>

namespace reqtest {

// Sets the control variable `name` (of C type T: int or double) for the scope, then puts back
// the value it found.
template <class T>
class CvarSetting {
public:
    CvarSetting(const char* name, T value) {
        int provided = 0;
        MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
        int index = -1, count = 0;
        found_ = MPI_T_cvar_get_index(name, &index) == MPI_SUCCESS &&
                 MPI_T_cvar_handle_alloc(index, nullptr, &handle_, &count) == MPI_SUCCESS;
        if (found_) {
            MPI_T_cvar_read(handle_, &original_);
            written_ = MPI_T_cvar_write(handle_, &value) == MPI_SUCCESS;
        }
    }
    ~CvarSetting() {
        if (found_) {
            MPI_T_cvar_write(handle_, &original_);
            MPI_T_cvar_handle_free(&handle_);
        }
        MPI_T_finalize();
    }
    CvarSetting(const CvarSetting&) = delete;
    CvarSetting& operator=(const CvarSetting&) = delete;
    bool ok() const { return found_ && written_; }

private:
    bool found_ = false, written_ = false;
    T original_{};
    MPI_T_cvar_handle handle_ = MPI_T_CVAR_HANDLE_NULL;
};

// A pvar session with a handle on each greq_class_* variable (one element per generalized
// request class existing when it is made). The counters are totals since each class was
// created: take differences.
class GreqClassPvars {
public:
    GreqClassPvars() {
        int provided = 0;
        MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
        MPI_T_pvar_session_create(&session_);
        for (const char* name :
             {"greq_class_polls", "greq_class_waits", "greq_class_waited_requests",
              "greq_class_completed", "greq_class_wait_time", "greq_class_mean_latency",
              "greq_class_wait_timeout", "greq_class_handle"}) {
            Var v;
            v.found = MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &v.index) ==
                          MPI_SUCCESS ||
                      MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_TIMER, &v.index) ==
                          MPI_SUCCESS ||
                      MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_GENERIC, &v.index) ==
                          MPI_SUCCESS;
            if (v.found) {
                MPI_T_pvar_handle_alloc(session_, v.index, nullptr, &v.handle, &v.count);
                count_ = v.count;
            }
            vars_[name] = v;
        }
    }
    ~GreqClassPvars() {
        for (auto& [name, v] : vars_) {
            if (v.found) {
                MPI_T_pvar_handle_free(session_, &v.handle);
            }
        }
        MPI_T_pvar_session_free(&session_);
        MPI_T_finalize();
    }
    GreqClassPvars(const GreqClassPvars&) = delete;
    GreqClassPvars& operator=(const GreqClassPvars&) = delete;

    bool found(const std::string& name) const { return vars_.at(name).found; }
    int classes() const { return count_; }

    // The element of the class with this handle, or -1.
    int element_of(MPIX_Grequest_class cls) {
        std::vector<int> handles = read<int>("greq_class_handle");
        for (size_t i = 0; i < handles.size(); i++) {
            if (handles[i] == cls) {
                return static_cast<int>(i);
            }
        }
        return -1;
    }

    template <class T>
    std::vector<T> read(const std::string& name) {
        Var& v = vars_.at(name);
        std::vector<T> values(static_cast<size_t>(v.count));
        if (v.found && v.count > 0) {
            MPI_T_pvar_read(session_, v.handle, values.data());
        }
        return values;
    }

private:
    struct Var {
        bool found = false;
        int index = -1;
        int count = 0;
        MPI_T_pvar_handle handle = MPI_T_PVAR_HANDLE_NULL;
    };
    MPI_T_pvar_session session_ = MPI_T_PVAR_SESSION_NULL;
    std::map<std::string, Var> vars_;
    int count_ = 0;
};

}  // namespace reqtest
