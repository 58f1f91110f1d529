// MPI_T events for the tests: a listener on one event of the request_engine source that records
// every instance it is given (its data element by element, timestamp, the safety level it was
// delivered at), the dropped handler's counts, and when its handle's free_cb ran.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace reqtest {

// request_complete data (element order of MPI_T_event_get_info)
struct CompleteEvent {
    int kind, request, comm, source, tag, error, call, index;
    MPI_Count count;
};

// MPIR_Request_kind_t and MPIR_Request_call_t values, as the event descriptions list them
enum RequestKind { kSend = 1, kRecv, kPersistentSend, kPersistentRecv, kGeneralized, kColl,
                   kPersistentColl, kPartSend, kPartRecv, kRma };
enum CompletionCall { kWait = 1, kTest, kGetStatus, kWaitall, kTestall, kGetStatusAll, kWaitany,
                      kTestany, kGetStatusAny, kWaitsome, kTestsome, kGetStatusSome };

inline int event_index_of(const char* name) {
    int index = -1;
    return MPI_T_event_get_index(name, &index) == MPI_SUCCESS ? index : -1;
}

class EventListener {
public:
    struct Instance {
        std::vector<int64_t> ints;     // every element as an integer (MPI_INT, MPI_COUNT, MPI_AINT)
        std::vector<double> doubles;   // MPI_DOUBLE elements, in order
        MPI_Count timestamp = 0;
        MPI_T_cb_safety safety = MPI_T_CB_REQUIRE_NONE;
        int source_index = -1;
    };

    // Listens to `event` (bound to *object when given) with a callback registered at `safety`.
    EventListener(const char* event, MPI_T_cb_safety safety, const void* object = nullptr) {
        int provided = 0;
        MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided);
        index_ = event_index_of(event);
        if (index_ < 0) {
            return;
        }
        int num = 0, verbosity = 0, bind = 0;
        char name[256], desc[1024];
        MPI_T_enum enumtype;
        MPI_Info info;
        int name_len = sizeof name, desc_len = sizeof desc;
        MPI_T_event_get_info(index_, name, &name_len, &verbosity, nullptr, nullptr, &num,
                             &enumtype, &info, desc, &desc_len, &bind);
        types_.resize(static_cast<size_t>(num));
        std::vector<MPI_Aint> displs(static_cast<size_t>(num));
        name_len = sizeof name;
        desc_len = sizeof desc;
        MPI_T_event_get_info(index_, name, &name_len, &verbosity, types_.data(), displs.data(),
                             &num, &enumtype, &info, desc, &desc_len, &bind);
        allocated_ = MPI_T_event_handle_alloc(index_, const_cast<void*>(object), MPI_INFO_NULL,
                                              &handle_) == MPI_SUCCESS;
        if (allocated_) {
            registered_ = MPI_T_event_register_callback(handle_, safety, MPI_INFO_NULL, this,
                                                        on_event) == MPI_SUCCESS &&
                          MPI_T_event_set_dropped_handler(handle_, on_dropped) == MPI_SUCCESS;
        }
    }
    ~EventListener() {
        free_handle();
        MPI_T_finalize();
    }
    EventListener(const EventListener&) = delete;
    EventListener& operator=(const EventListener&) = delete;

    bool ok() const { return index_ >= 0 && allocated_ && registered_; }
    MPI_T_event_registration handle() const { return handle_; }
    void free_handle() {
        if (allocated_ && !freed_in_callback_) {
            MPI_T_event_handle_free(handle_, this, on_free);
        }
        allocated_ = false;
    }
    // The next instance's callback frees the handle (then the listener records no more).
    void free_in_next_callback() { free_next_ = true; }
    // The next instance's callback runs `action` after recording the instance.
    void on_next_callback(std::function<void()> action) { next_action_ = std::move(action); }

    const std::vector<Instance>& instances() const { return instances_; }
    std::vector<CompleteEvent> completions() const {
        std::vector<CompleteEvent> out;
        for (const Instance& i : instances_) {
            if (i.ints.size() == 9) {
                out.push_back({int(i.ints[0]), int(i.ints[1]), int(i.ints[2]), int(i.ints[3]),
                               int(i.ints[4]), int(i.ints[5]), int(i.ints[6]), int(i.ints[7]),
                               MPI_Count(i.ints[8])});
            }
        }
        return out;
    }
    void clear() { instances_.clear(); dropped_.clear(); }
    const std::vector<MPI_Count>& dropped() const { return dropped_; }
    int frees() const { return frees_; }

private:
    static void on_event(MPI_T_event_instance instance, MPI_T_event_registration handle,
                         MPI_T_cb_safety safety, void* user_data) {
        auto* self = static_cast<EventListener*>(user_data);
        Instance rec;
        rec.safety = safety;
        MPI_T_event_get_timestamp(instance, &rec.timestamp);
        MPI_T_event_get_source(instance, &rec.source_index);
        for (size_t e = 0; e < self->types_.size(); e++) {
            MPI_Datatype t = self->types_[e];
            if (t == MPI_DOUBLE) {
                double d = 0;
                MPI_T_event_read(instance, int(e), &d);
                rec.doubles.push_back(d);
            } else if (t == MPI_COUNT) {
                MPI_Count c = 0;
                MPI_T_event_read(instance, int(e), &c);
                rec.ints.push_back(int64_t(c));
            } else if (t == MPI_AINT) {
                MPI_Aint a = 0;
                MPI_T_event_read(instance, int(e), &a);
                rec.ints.push_back(int64_t(a));
            } else {
                int v = 0;
                MPI_T_event_read(instance, int(e), &v);
                rec.ints.push_back(v);
            }
        }
        self->instances_.push_back(rec);
        if (self->next_action_) {
            auto action = std::move(self->next_action_);
            self->next_action_ = nullptr;
            action();
        }
        if (self->free_next_) {
            self->free_next_ = false;
            self->freed_in_callback_ = true;
            MPI_T_event_handle_free(handle, self, on_free);
        }
    }
    static void on_dropped(MPI_Count count, MPI_T_event_registration, int, MPI_T_cb_safety,
                           void* user_data) {
        static_cast<EventListener*>(user_data)->dropped_.push_back(count);
    }
    static void on_free(MPI_T_event_registration, MPI_T_cb_safety, void* user_data) {
        static_cast<EventListener*>(user_data)->frees_++;
    }

    int index_ = -1;
    std::vector<MPI_Datatype> types_;
    MPI_T_event_registration handle_{};
    bool allocated_ = false, registered_ = false, free_next_ = false, freed_in_callback_ = false;
    std::vector<Instance> instances_;
    std::vector<MPI_Count> dropped_;
    int frees_ = 0;
    std::function<void()> next_action_;
};

}  // namespace reqtest
