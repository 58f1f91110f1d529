// Communicators with mpi_assert_* info hints for the tests of verification, consistency and
// detection (comm-dup-keeps-assertions, mpit-pvar-handle-object-copy, comm-assert-*), and the comm_assert_* performance variables bound to one.
#pragma once

#include <mpi.h>

#include <map>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"

namespace reqtest {

// A duplicate of MPI_COMM_WORLD with the given assertions set to "true" (MPI_Comm_dup_with_info)
// and MPI_ERRORS_RETURN, freed at the end of the scope.
class AssertedComm {
public:
    explicit AssertedComm(std::vector<std::string> keys, const char* name = nullptr) {
        MPI_Info info;
        MPI_Info_create(&info);
        for (const auto& key : keys) {
            MPI_Info_set(info, key.c_str(), "true");
        }
        MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comm_);
        MPI_Info_free(&info);
        MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
        if (name) {
            MPI_Comm_set_name(comm_, name);
        }
    }
    ~AssertedComm() {
        if (comm_ != MPI_COMM_NULL) {
            MPI_Comm_free(&comm_);
        }
    }
    AssertedComm(const AssertedComm&) = delete;
    AssertedComm& operator=(const AssertedComm&) = delete;
    MPI_Comm get() const { return comm_; }

private:
    MPI_Comm comm_ = MPI_COMM_NULL;
};

// The value MPI_Comm_get_info reports for key ("" when absent).
inline std::string info_value(MPI_Comm comm, const char* key) {
    MPI_Info info;
    MPI_Comm_get_info(comm, &info);
    char value[MPI_MAX_INFO_VAL + 1] = {0};
    int flag = 0;
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
    MPI_Info_free(&info);
    return flag ? std::string(value) : std::string();
}

// Whether this MPICH is built for ch4:ucx (MPICH 4.0.2 builds it without the shm module: UCX
// matches every message, intra-node too), from MPI_Get_library_version's "MPICH Device:" line.
inline bool device_is_ucx() {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    return std::string(version, static_cast<size_t>(len)).find("ch4:ucx") != std::string::npos;
}

// Whether no_any_source + no_any_tag switch the communicator to exact-match queues (ch4-exact-match-queues): not
// on ch4:ucx, where the queues would hold nothing and MPID_Comm_exact_match declines.
inline bool device_has_exact_match_queues() { return !device_is_ucx(); }

// Whether the device sees the order of queued messages on comm, so that detection can count
// what would break mpi_assert_allow_overtaking: on ch4:ofi when every member shares this node
// (the shm module's active-message queues match), never on ch4:ucx (MPICH 4.0.2 builds UCX
// without the shm module: UCX matches every message, intra-node too).
inline bool device_sees_message_order(MPI_Comm comm) {
    if (device_is_ucx()) {
        return false;
    }
    MPI_Comm node;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int on_node = 0, all = 0;
    MPI_Comm_size(node, &on_node);
    MPI_Comm_size(comm, &all);
    MPI_Comm_free(&node);
    int everywhere = on_node == all;
    MPI_Allreduce(MPI_IN_PLACE, &everywhere, 1, MPI_INT, MPI_LAND, comm);
    return everywhere != 0;
}

// The comm_assert_* performance variables bound to one communicator.
class CommAssertPvars {
public:
    explicit CommAssertPvars(MPI_Comm comm) {
        int provided = 0;
        MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
        MPI_T_pvar_session_create(&session_);
        for (const char* name : {"comm_assert_receives", "comm_assert_any_source",
                                 "comm_assert_any_tag", "comm_assert_length_mismatches",
                                 "comm_assert_order_dependent", "comm_assert_order_unseen"}) {
            Var v;
            int count = 0;
            // a copy that dies here: the handle must keep the communicator, not the pointer
            MPI_Comm transient = comm;
            v.found = MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &v.index) ==
                          MPI_SUCCESS &&
                      MPI_T_pvar_handle_alloc(session_, v.index, &transient, &v.handle, &count) ==
                          MPI_SUCCESS;
            transient = MPI_COMM_NULL;
            vars_[name] = v;
        }
    }
    ~CommAssertPvars() {
        for (auto& [name, v] : vars_) {
            if (v.found) {
                MPI_T_pvar_handle_free(session_, &v.handle);
            }
        }
        MPI_T_pvar_session_free(&session_);
        MPI_T_finalize();
    }
    CommAssertPvars(const CommAssertPvars&) = delete;
    CommAssertPvars& operator=(const CommAssertPvars&) = delete;

    bool found(const std::string& name) const { return vars_.at(name).found; }
    // -1 when the variable does not exist
    long long read(const std::string& name) {
        Var& v = vars_.at(name);
        if (!v.found) {
            return -1;
        }
        unsigned long long value = 0;
        MPI_T_pvar_read(session_, v.handle, &value);
        return static_cast<long long>(value);
    }

private:
    struct Var {
        bool found = false;
        int index = -1;
        MPI_T_pvar_handle handle = MPI_T_PVAR_HANDLE_NULL;
    };
    MPI_T_pvar_session session_ = MPI_T_PVAR_SESSION_NULL;
    std::map<std::string, Var> vars_;
};

}  // namespace reqtest
