// An array of requests of every kind and state the completion rules distinguish, on
// MPI_COMM_SELF, so that what is complete is known exactly and stays so between two calls:
// null, inactive persistent receives and collectives (never started, or completed), complete and
// pending generalized requests, a generalized request whose query_fn fails, a class request
// (poll_fn and wait_fn) that its first poll completes, receives pending, complete, truncated and
// cancelled, a send (its receive kept aside), persistent receives complete and pending, a started
// persistent collective, a nonblocking collective, an MPI_Rput and an MPI_Rget, a ROMIO
// MPI_File_iwrite_at, partitioned receives inactive, complete and active (the slot holds the
// MPI_Precv_init request; its MPI_Psend_init partner is kept aside), and a class request that
// stays pending until the test says its operation is over (then poll_fn or wait_fn completes
// it).
#pragma once

#include <mpi.h>

#include <unistd.h>

#include <array>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "greq_class_support.hpp"
#include "grequest_support.hpp"
#include "mpi_test_support.hpp"

namespace reqtest {

enum class Kind {
    // null and inactive
    Null,
    PersistInactive,
    PcollInactive,
    PartInactive,
    // complete once settled
    GreqDone,
    GreqError,
    RecvDone,
    RecvTrunc,
    RecvCancelled,
    PersistDone,
    PcollDone,
    NbcDone,
    RmaDone,
    ClassDone,
    RomioDone,
    PartDone,
    SendDone,
    RgetDone,
    // pending
    GreqPending,
    RecvPending,
    PersistPending,
    PartPending,
    ClassPending,
};
constexpr int kSettledKinds = 18;  // the null, inactive and complete kinds come first
constexpr int kKinds = 23;

inline bool is_inactive_kind(Kind k) {
    return k == Kind::Null || k == Kind::PersistInactive || k == Kind::PcollInactive ||
           k == Kind::PartInactive;
}
inline bool is_complete_kind(Kind k) {
    return !is_inactive_kind(k) && static_cast<int>(k) < kSettledKinds;
}
inline bool is_persistent_kind(Kind k) {
    return k == Kind::PersistInactive || k == Kind::PersistDone || k == Kind::PersistPending ||
           k == Kind::PcollInactive || k == Kind::PcollDone || k == Kind::PartInactive ||
           k == Kind::PartDone || k == Kind::PartPending;
}
inline bool is_partitioned_kind(Kind k) {
    return k == Kind::PartInactive || k == Kind::PartDone || k == Kind::PartPending;
}

class RequestMix {
public:
    explicit RequestMix(int n)
        : reqs_(static_cast<size_t>(n), MPI_REQUEST_NULL),
          kinds_(static_cast<size_t>(n), Kind::Null),
          bufs_(static_cast<size_t>(n)),
          psends_(static_cast<size_t>(n), MPI_REQUEST_NULL),
          tags_(static_cast<size_t>(n), 0),
          class_slot_ops_(static_cast<size_t>(n), nullptr) {
        MPI_Win_allocate(static_cast<MPI_Aint>(n * sizeof(int)), sizeof(int), MPI_INFO_NULL,
                         MPI_COMM_SELF, &win_base_, &win_);
        MPI_Win_lock_all(0, win_);
        static int mixes = 0;
        const std::string path = "/tmp/reqtest-mix." + std::to_string(getpid()) + "." +
                                 std::to_string(mixes++);
        MPI_File_open(MPI_COMM_SELF, path.c_str(),
                      MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                      &file_);
    }
    ~RequestMix() {
        clear();
        MPI_File_close(&file_);
        MPI_Win_unlock_all(win_);
        MPI_Win_free(&win_);
    }
    RequestMix(const RequestMix&) = delete;
    RequestMix& operator=(const RequestMix&) = delete;

    int size() const { return static_cast<int>(reqs_.size()); }
    MPI_Request* data() { return reqs_.data(); }
    Kind kind(int i) const { return kinds_.at(static_cast<size_t>(i)); }
    GreqFactory& greqs() { return greqs_; }

    // Puts a new request of kind k into slot i, which must be null (or inactive persistent,
    // which is freed first).
    void post(int i, Kind k) {
        MPI_Request& r = reqs_.at(static_cast<size_t>(i));
        if (kind(i) == Kind::PersistInactive || kind(i) == Kind::PcollInactive) {
            MPI_Request_free(&r);
        } else if (kind(i) == Kind::PartInactive) {
            free_partitioned(i);
        }
        int* buf = bufs_.at(static_cast<size_t>(i)).data();
        const int tag = next_tag_++;
        tags_.at(static_cast<size_t>(i)) = tag;
        switch (k) {
            case Kind::Null: r = MPI_REQUEST_NULL; break;
            case Kind::GreqDone: r = greqs_.start(tag); break;
            case Kind::GreqError: r = greqs_.start(tag, true, MPI_ERR_OTHER); break;
            case Kind::GreqPending: r = greqs_.start(tag, false); break;
            case Kind::RecvPending: MPI_Irecv(buf, 1, MPI_INT, 0, tag, MPI_COMM_SELF, &r); break;
            case Kind::RecvDone:
                MPI_Irecv(buf, 1, MPI_INT, 0, tag, MPI_COMM_SELF, &r);
                send(tag, 1);
                break;
            case Kind::RecvTrunc:
                MPI_Irecv(buf, 1, MPI_INT, 0, tag, MPI_COMM_SELF, &r);
                send(tag, 2);
                break;
            case Kind::RecvCancelled:
                MPI_Irecv(buf, 1, MPI_INT, 0, tag, MPI_COMM_SELF, &r);
                MPI_Cancel(&r);
                break;
            case Kind::PersistInactive:
                MPI_Recv_init(buf, 1, MPI_INT, 0, tag, MPI_COMM_SELF, &r);
                break;
            case Kind::PersistDone:
                MPI_Recv_init(buf, 1, MPI_INT, 0, tag, MPI_COMM_SELF, &r);
                MPI_Start(&r);
                send(tag, 1);
                break;
            case Kind::PersistPending:
                MPI_Recv_init(buf, 1, MPI_INT, 0, tag, MPI_COMM_SELF, &r);
                MPI_Start(&r);
                break;
            case Kind::PcollInactive:
                MPI_Bcast_init(buf, 1, MPI_INT, 0, MPI_COMM_SELF, MPI_INFO_NULL, &r);
                break;
            case Kind::PcollDone:
                MPI_Bcast_init(buf, 1, MPI_INT, 0, MPI_COMM_SELF, MPI_INFO_NULL, &r);
                MPI_Start(&r);
                break;
            case Kind::NbcDone: MPI_Ibarrier(MPI_COMM_SELF, &r); break;
            case Kind::RmaDone:
                MPI_Rput(&rma_payload_, 1, MPI_INT, 0, i, 1, MPI_INT, win_, &r);
                break;
            case Kind::RgetDone:
                MPI_Rget(buf, 1, MPI_INT, 0, i, 1, MPI_INT, win_, &r);
                break;
            case Kind::SendDone:
                side_recvs_.emplace_back(MPI_REQUEST_NULL);
                side_recv_bufs_.emplace_back(-1);
                MPI_Irecv(&side_recv_bufs_.back(), 1, MPI_INT, 0, tag, MPI_COMM_SELF,
                          &side_recvs_.back());
                MPI_Isend(&rma_payload_, 1, MPI_INT, 0, tag, MPI_COMM_SELF, &r);
                break;
            case Kind::RomioDone:
                MPI_File_iwrite_at(file_, static_cast<MPI_Offset>(i * sizeof(int)), &rma_payload_,
                                   1, MPI_INT, &r);
                break;
            case Kind::PartInactive: init_partitioned(i, tag); break;
            case Kind::PartDone:
                init_partitioned(i, tag);
                start_partitioned(i);
                ready_partitioned(i);
                break;
            case Kind::PartPending:
                init_partitioned(i, tag);
                start_partitioned(i);
                break;
            case Kind::ClassDone: {
                ClassOp& op = class_ops_.add(tag);
                op.complete_on_poll = 1;
                r = TestClass::get().allocate(op);
                break;
            }
            case Kind::ClassPending: {
                ClassOp& op = class_ops_.add(tag);
                op.deadline = 1e300;  // over when class_over() says so
                class_slot_ops_[static_cast<size_t>(i)] = &op;
                r = TestClass::get().allocate(op);
                break;
            }
        }
        kinds_.at(static_cast<size_t>(i)) = k;
    }

    void post_random(int i, std::mt19937& rng) { post(i, static_cast<Kind>(rng() % kKinds)); }

    // Every request of a complete kind really is complete afterwards (progress, non-destructive).
    bool settle() {
        for (int i = 0; i < size(); i++) {
            if (!is_complete_kind(kind(i))) {
                continue;
            }
            int flag = 0;
            const bool done = poll_until([&] {
                MPI_Request_get_status(reqs_[static_cast<size_t>(i)], &flag, MPI_STATUS_IGNORE);
                return flag != 0;
            });
            if (!done) {
                std::fprintf(stderr, "settle: slot %d of kind %d never completes\n", i,
                             static_cast<int>(kind(i)));
                return false;
            }
        }
        return true;
    }

    // A pending generalized request becomes complete.
    void complete_some_pending(std::mt19937& rng) {
        for (int i = 0; i < size(); i++) {
            if (kind(i) == Kind::GreqPending && rng() % 3 == 0) {
                GreqFactory::complete(*greqs_.live(reqs_[static_cast<size_t>(i)]));
                kinds_[static_cast<size_t>(i)] = Kind::GreqDone;
            } else if (kind(i) == Kind::PartPending && rng() % 3 == 0) {
                ready_partitioned(i);
                kinds_[static_cast<size_t>(i)] = Kind::PartDone;
            } else if (kind(i) == Kind::ClassPending && rng() % 3 == 0) {
                class_over(i);
                kinds_[static_cast<size_t>(i)] = Kind::ClassDone;
            }
        }
    }

    // Every pending request becomes complete: its message is sent, its library completes it,
    // its partner marks its partition ready.
    void complete_all_pending() {
        for (int i = 0; i < size(); i++) {
            Kind& k = kinds_[static_cast<size_t>(i)];
            switch (k) {
                case Kind::GreqPending:
                    GreqFactory::complete(*greqs_.live(reqs_[static_cast<size_t>(i)]));
                    k = Kind::GreqDone;
                    break;
                case Kind::RecvPending:
                    send(tags_[static_cast<size_t>(i)], 1);
                    k = Kind::RecvDone;
                    break;
                case Kind::PersistPending:
                    send(tags_[static_cast<size_t>(i)], 1);
                    k = Kind::PersistDone;
                    break;
                case Kind::PartPending:
                    ready_partitioned(i);
                    k = Kind::PartDone;
                    break;
                case Kind::ClassPending:
                    class_over(i);
                    k = Kind::ClassDone;
                    break;
                default: break;
            }
        }
    }

    // After a destructive call completed slot i: null, or inactive if persistent.
    void completed(int i) {
        Kind& k = kinds_.at(static_cast<size_t>(i));
        k = (k == Kind::PcollDone || k == Kind::PcollInactive) ? Kind::PcollInactive
            : is_partitioned_kind(k)                           ? Kind::PartInactive
            : is_persistent_kind(k)                            ? Kind::PersistInactive
                                                               : Kind::Null;
        if (k == Kind::Null && reqs_[static_cast<size_t>(i)] != MPI_REQUEST_NULL) {
            wrong_after_completion_++;
        }
    }
    int wrong_after_completion() const { return wrong_after_completion_; }

    // Completes and frees everything, leaving every slot null; one call then sees the array all
    // null, so the engine forgets its cursor.
    void clear() {
        for (int i = 0; i < size(); i++) {
            MPI_Request& r = reqs_[static_cast<size_t>(i)];
            switch (kind(i)) {
                case Kind::Null: break;
                case Kind::GreqPending:
                    GreqFactory::complete(*greqs_.live(r));
                    MPI_Wait(&r, MPI_STATUS_IGNORE);
                    break;
                case Kind::RecvPending:
                    MPI_Cancel(&r);
                    MPI_Wait(&r, MPI_STATUS_IGNORE);
                    break;
                case Kind::PersistPending:
                    MPI_Cancel(&r);
                    MPI_Wait(&r, MPI_STATUS_IGNORE);
                    MPI_Request_free(&r);
                    break;
                case Kind::PersistDone:
                case Kind::PcollDone:
                    MPI_Wait(&r, MPI_STATUS_IGNORE);
                    MPI_Request_free(&r);
                    break;
                case Kind::PersistInactive:
                case Kind::PcollInactive: MPI_Request_free(&r); break;
                case Kind::PartPending:
                    ready_partitioned(i);
                    MPI_Wait(&r, MPI_STATUS_IGNORE);
                    free_partitioned(i);
                    break;
                case Kind::PartDone:
                    MPI_Wait(&r, MPI_STATUS_IGNORE);
                    free_partitioned(i);
                    break;
                case Kind::PartInactive: free_partitioned(i); break;
                case Kind::ClassPending:
                    class_over(i);
                    MPI_Wait(&r, MPI_STATUS_IGNORE);
                    break;
                default: MPI_Wait(&r, MPI_STATUS_IGNORE); break;
            }
            kinds_[static_cast<size_t>(i)] = Kind::Null;
        }
        for (auto& s : sends_) {
            MPI_Wait(&s, MPI_STATUS_IGNORE);
        }
        sends_.clear();
        for (auto& s : side_recvs_) {
            MPI_Wait(&s, MPI_STATUS_IGNORE);
        }
        side_recvs_.clear();
        side_recv_bufs_.clear();
        int index = 0, flag = 0;
        MPI_Testany(size(), data(), &index, &flag, MPI_STATUS_IGNORE);
    }

private:
    // The operation of the pending class request in slot i is over: its next poll_fn or wait_fn
    // completes it.
    void class_over(int i) {
        ClassOp*& op = class_slot_ops_.at(static_cast<size_t>(i));
        op->deadline = 0;
        op = nullptr;
    }

    // A partitioned receive in slot i (one partition of one int) with its send partner.
    void init_partitioned(int i, int tag) {
        MPI_Precv_init(bufs_.at(static_cast<size_t>(i)).data(), 1, 1, MPI_INT, 0, tag,
                       MPI_COMM_SELF, MPI_INFO_NULL, &reqs_.at(static_cast<size_t>(i)));
        MPI_Psend_init(&rma_payload_, 1, 1, MPI_INT, 0, tag, MPI_COMM_SELF, MPI_INFO_NULL,
                       &psends_.at(static_cast<size_t>(i)));
    }
    void start_partitioned(int i) {
        MPI_Start(&reqs_.at(static_cast<size_t>(i)));
        MPI_Start(&psends_.at(static_cast<size_t>(i)));
    }
    // The send side marks its partition ready and completes; the receive then completes.
    void ready_partitioned(int i) {
        MPI_Pready(0, psends_.at(static_cast<size_t>(i)));
        MPI_Wait(&psends_.at(static_cast<size_t>(i)), MPI_STATUS_IGNORE);
    }
    // Both sides inactive: freed.
    void free_partitioned(int i) {
        MPI_Request_free(&reqs_.at(static_cast<size_t>(i)));
        MPI_Request_free(&psends_.at(static_cast<size_t>(i)));
    }

    void send(int tag, int count) {
        static const int payload[2] = {7, 8};
        sends_.emplace_back(MPI_REQUEST_NULL);
        MPI_Isend(payload, count, MPI_INT, 0, tag, MPI_COMM_SELF, &sends_.back());
    }

    std::vector<MPI_Request> reqs_;
    std::vector<Kind> kinds_;
    std::vector<std::array<int, 2>> bufs_;
    std::vector<MPI_Request> psends_;
    std::vector<int> tags_;
    std::vector<MPI_Request> sends_;
    std::vector<MPI_Request> side_recvs_;  // the receives of SendDone slots
    std::deque<int> side_recv_bufs_;        // their buffers (a deque: they never move)
    std::vector<ClassOp*> class_slot_ops_;  // the op of each ClassPending slot
    GreqFactory greqs_;
    ClassOps class_ops_;
    MPI_Win win_ = MPI_WIN_NULL;
    MPI_File file_ = MPI_FILE_NULL;
    int* win_base_ = nullptr;
    int rma_payload_ = 5;
    int next_tag_ = 100;
    int wrong_after_completion_ = 0;
};

}  // namespace reqtest
