// The request engine under MPI_THREAD_MULTIPLE, for a thread checker (maint/run-sanitized
// thread) and the test command: per process, concurrently,
//   - two threads each completing arrays of their own (point-to-point with the peer process),
//     in turn through every Wait, Test and get_status form;
//   - three threads on one shared array: all query it with the get_status forms at the same
//     time (the same array, so the same fairness cursor), then its owner completes it;
//   - a thread completing arrays of generalized requests (a class with poll_fn and wait_fn,
//     and plain ones) that another thread completes with MPI_Grequest_complete while the
//     progress engine polls the class requests;
//   - a thread doing ROMIO nonblocking file I/O (iwrite_at, iread_at, data read back);
//   - a thread driving progress all the time (MPI_Iprobe).
// usage: mpiexec -n 2 request_stress [ROUNDS [DEADLINE_SECONDS]]   (1 process: its own peer)
// Prints "request_stress: N completions ... 0 failures" and exits 0, or names each failure.
#include <mpi.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <thread>
#include <vector>

#include "../catch2/mpi_test_support.hpp"
#include "stress_support.hpp"

using namespace stress;

namespace {

struct Run {
    int rank = 0, peer = 0, rounds = 0;
    Failures failures;
    std::atomic<long> completions{0};
};

int code(int rank, int role, int round, int i) { return ((rank * 16 + role) * 100000 + round) * 64 + i; }

// Posts kPairs receives from and sends to the peer on comm, completes them with form f and
// checks the data.
constexpr int kPairs = 6;
struct Exchange {
    std::vector<int> sendbuf = std::vector<int>(kPairs), recvbuf = std::vector<int>(kPairs);
    std::vector<MPI_Request> reqs = std::vector<MPI_Request>(2 * kPairs, MPI_REQUEST_NULL);

    void post(Run& run, MPI_Comm comm, int role, int round) {
        for (int i = 0; i < kPairs; i++) {
            recvbuf[static_cast<size_t>(i)] = -1;
            sendbuf[static_cast<size_t>(i)] = code(run.rank, role, round, i);
            MPI_Irecv(&recvbuf[static_cast<size_t>(i)], 1, MPI_INT, run.peer, i, comm, &reqs[static_cast<size_t>(2 * i)]);
            MPI_Isend(&sendbuf[static_cast<size_t>(i)], 1, MPI_INT, run.peer, i, comm, &reqs[static_cast<size_t>(2 * i + 1)]);
        }
    }
    void check(Run& run, const std::vector<MPI_Status>& statuses, int role, int round, const char* who) {
        for (int i = 0; i < kPairs; i++) {
            const MPI_Status& s = statuses[static_cast<size_t>(2 * i)];
            if (recvbuf[static_cast<size_t>(i)] != code(run.peer, role, round, i) || s.MPI_TAG != i ||
                s.MPI_SOURCE != run.peer) {
                run.failures.report("%s round %d: receive %d got %d (tag %d, source %d), expected %d",
                                    who, round, i, recvbuf[static_cast<size_t>(i)], s.MPI_TAG,
                                    s.MPI_SOURCE, code(run.peer, role, round, i));
            }
        }
    }
};

// Roles 0 and 1: arrays of this thread's own.
void own_arrays(Run& run, MPI_Comm comm, int role) {
    const std::string who = "own-array thread " + std::to_string(role);
    Exchange ex;
    std::vector<MPI_Status> statuses;
    for (int r = 0; r < run.rounds; r++) {
        ex.post(run, comm, role, r);
        const Form f = static_cast<Form>((r + role * 4) % kForms);
        run.completions += complete_all(f, ex.reqs, statuses, run.failures, who.c_str());
        ex.check(run, statuses, role, r, who.c_str());
    }
}

// Role 2: one shared array, queried by three threads at once, then completed by its owner.
constexpr int kObservers = 3;  // the owner and two others
void observe(Run& run, const std::vector<MPI_Request>& reqs, int observer, int round) {
    const int n = static_cast<int>(reqs.size());
    std::vector<int> idx(reqs.size());
    std::vector<MPI_Status> statuses(reqs.size());
    const std::string who = "shared-array observer " + std::to_string(observer);
    int flag = 0, index = 0, outcount = 0, last = 0;
    switch ((round + observer) % 3) {
        case 0:
            do {
                MPI_Request_get_status_all(n, reqs.data(), &flag, statuses.data());
            } while (!flag);
            break;
        case 1:
            // the number of complete requests never goes down: nothing is completed twice or lost
            do {
                MPI_Request_get_status_some(n, reqs.data(), &outcount, idx.data(), statuses.data());
                if (outcount < last) {
                    run.failures.report("%s round %d: get_status_some reported %d, then %d", who.c_str(), round, last, outcount);
                }
                last = outcount;
            } while (outcount != n);
            break;
        default:
            for (int i = 0; i < n; i++) {
                do {
                    MPI_Request_get_status(reqs[static_cast<size_t>(i)], &flag, MPI_STATUS_IGNORE);
                } while (!flag);
            }
            do {
                MPI_Request_get_status_any(n, reqs.data(), &index, &flag, MPI_STATUS_IGNORE);
            } while (!flag);
            if (index < 0 || index >= n) {
                run.failures.report("%s round %d: get_status_any on a complete array gave index %d", who.c_str(), round, index);
            }
            break;
    }
}

void shared_array_owner(Run& run, MPI_Comm comm, Rendezvous& rv, Exchange& ex) {
    std::vector<MPI_Status> statuses;
    for (int r = 0; r < run.rounds; r++) {
        ex.post(run, comm, 2, r);
        rv.publish(r);
        observe(run, ex.reqs, 0, r);
        rv.finish();
        rv.await_observers();
        const Form f = static_cast<Form>(r % kForms);
        run.completions += complete_all(f, ex.reqs, statuses, run.failures, "shared-array owner");
        ex.check(run, statuses, 2, r, "shared-array owner");
    }
    rv.stop();
}

void shared_array_observer(Run& run, Rendezvous& rv, const Exchange& ex, int observer) {
    for (int r = 0; rv.await(r); r++) {
        observe(run, ex.reqs, observer, r);
        rv.finish();
    }
}

// Role 3: generalized requests. Class requests complete in their own poll_fn/wait_fn after a
// few polls (the handle stored after the allocation returns, as ROMIO does); plain ones are
// completed by the completer thread.
struct GreqOp {
    std::atomic<MPI_Request> handle{MPI_REQUEST_NULL};
    std::atomic<int> polls{0}, frees{0};
    std::atomic<bool> completed{false};
    int tag = 0;
};
std::atomic<int> greq_polled_without_handle{0};

int greq_query(void* extra, MPI_Status* s) {
    MPI_Status_set_elements(s, MPI_BYTE, 0);
    MPI_Status_set_cancelled(s, 0);
    s->MPI_SOURCE = MPI_UNDEFINED;
    s->MPI_TAG = static_cast<GreqOp*>(extra)->tag;
    return MPI_SUCCESS;
}
int greq_free(void* extra) {
    static_cast<GreqOp*>(extra)->frees++;
    return MPI_SUCCESS;
}
int greq_cancel(void*, int) { return MPI_SUCCESS; }
void greq_advance(GreqOp& op) {
    const MPI_Request h = op.handle.load();
    if (h == MPI_REQUEST_NULL) {
        greq_polled_without_handle++;
        return;
    }
    if (++op.polls >= 3 && !op.completed.exchange(true)) {
        MPI_Grequest_complete(h);
    }
}
int greq_poll(void* extra, MPI_Status*) {
    greq_advance(*static_cast<GreqOp*>(extra));
    return MPI_SUCCESS;
}
int greq_wait(int count, void** states, double, MPI_Status*) {
    for (int i = 0; i < count; i++) greq_advance(*static_cast<GreqOp*>(states[i]));
    return MPI_SUCCESS;
}

constexpr int kGreqs = 8;  // per round: half class, half plain
void greq_owner(Run& run, MPIX_Grequest_class cls, CompleterQueue& queue) {
    std::vector<MPI_Status> statuses;
    for (int r = 0; r < run.rounds; r++) {
        std::vector<GreqOp> ops(kGreqs);
        std::vector<MPI_Request> reqs(kGreqs, MPI_REQUEST_NULL);
        for (int i = 0; i < kGreqs; i++) {
            ops[static_cast<size_t>(i)].tag = r * kGreqs + i;
            MPI_Request h = MPI_REQUEST_NULL;
            if (i % 2 == 0) {
                MPIX_Grequest_class_allocate(cls, &ops[static_cast<size_t>(i)], &h);
                ops[static_cast<size_t>(i)].handle.store(h);
            } else {
                MPI_Grequest_start(greq_query, greq_free, greq_cancel, &ops[static_cast<size_t>(i)], &h);
                queue.push(h);
            }
            reqs[static_cast<size_t>(i)] = h;
        }
        const Form f = static_cast<Form>((r * 2 + 1) % kForms);
        run.completions += complete_all(f, reqs, statuses, run.failures, "greq owner");
        for (int i = 0; i < kGreqs; i++) {
            const GreqOp& op = ops[static_cast<size_t>(i)];
            if (op.frees.load() != 1 || statuses[static_cast<size_t>(i)].MPI_TAG != op.tag) {
                run.failures.report("greq owner round %d (%s): request %d freed %d times, status tag %d (expected %d)",
                                    r, form_name(f), i, op.frees.load(), statuses[static_cast<size_t>(i)].MPI_TAG, op.tag);
            }
        }
    }
    queue.close();
}

void greq_completer(CompleterQueue& queue) {
    for (MPI_Request h; (h = queue.pop()) != MPI_REQUEST_NULL;) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        MPI_Grequest_complete(h);
    }
}

// Role 4: ROMIO nonblocking I/O on a private file: write blocks, read them back, compare.
constexpr int kBlocks = 4, kBlockInts = 1024;
void romio_io(Run& run, const std::string& path) {
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_SELF, path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
        run.failures.report("romio: cannot open %s", path.c_str());
        return;
    }
    std::vector<int> out(kBlocks * kBlockInts), in(kBlocks * kBlockInts);
    std::vector<MPI_Request> reqs(kBlocks);
    std::vector<MPI_Status> statuses;
    const int rounds = run.rounds / 4 + 1;
    for (int r = 0; r < rounds; r++) {
        for (size_t k = 0; k < out.size(); k++) out[k] = code(run.rank, 4, r, 0) + static_cast<int>(k);
        std::fill(in.begin(), in.end(), -1);
        for (int b = 0; b < kBlocks; b++) {
            MPI_File_iwrite_at(fh, static_cast<MPI_Offset>(b) * kBlockInts * 4, &out[static_cast<size_t>(b * kBlockInts)],
                               kBlockInts, MPI_INT, &reqs[static_cast<size_t>(b)]);
        }
        run.completions += complete_all(static_cast<Form>((2 * r) % kForms), reqs, statuses, run.failures, "romio write");
        for (int b = 0; b < kBlocks; b++) {
            MPI_File_iread_at(fh, static_cast<MPI_Offset>(b) * kBlockInts * 4, &in[static_cast<size_t>(b * kBlockInts)],
                              kBlockInts, MPI_INT, &reqs[static_cast<size_t>(b)]);
        }
        run.completions += complete_all(static_cast<Form>((2 * r + 1) % kForms), reqs, statuses, run.failures, "romio read");
        for (int b = 0; b < kBlocks; b++) {
            int count = -1;
            MPI_Get_count(&statuses[static_cast<size_t>(b)], MPI_INT, &count);
            if (count != kBlockInts) {
                run.failures.report("romio round %d: block %d read count %d", r, b, count);
            }
        }
        if (in != out) run.failures.report("romio round %d: data read back differs", r);
    }
    MPI_File_close(&fh);
    std::remove(path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    Run run;
    MPI_Comm_rank(MPI_COMM_WORLD, &run.rank);
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided != MPI_THREAD_MULTIPLE || size > 2) {
        if (run.rank == 0) std::fprintf(stderr, "request_stress: needs MPI_THREAD_MULTIPLE and 1 or 2 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    run.peer = size == 2 ? 1 - run.rank : 0;
    run.rounds = argc > 1 ? std::atoi(argv[1]) : 200;
    const double deadline = argc > 2 ? std::atof(argv[2]) : 300.0;

    std::vector<MPI_Comm> comms(4);
    for (auto& c : comms) MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPIX_Grequest_class cls = 0;
    MPIX_Grequest_class_create(greq_query, greq_free, greq_cancel, greq_poll, greq_wait, &cls);
    char dir[] = "/tmp/request-stress-XXXXXX";
    if (mkdtemp(dir) == nullptr) MPI_Abort(MPI_COMM_WORLD, 2);
    const std::string path = std::string(dir) + "/rank" + std::to_string(run.rank);

    {
        reqtest::Watchdog watchdog("request_stress (" + std::to_string(run.rounds) + " rounds)", deadline);
        std::atomic<bool> stop{false};
        Rendezvous rv(kObservers);
        Exchange shared;
        CompleterQueue queue;
        std::vector<std::thread> threads;
        threads.emplace_back(own_arrays, std::ref(run), comms[0], 0);
        threads.emplace_back(own_arrays, std::ref(run), comms[1], 1);
        threads.emplace_back(shared_array_owner, std::ref(run), comms[2], std::ref(rv), std::ref(shared));
        threads.emplace_back(shared_array_observer, std::ref(run), std::ref(rv), std::cref(shared), 1);
        threads.emplace_back(shared_array_observer, std::ref(run), std::ref(rv), std::cref(shared), 2);
        threads.emplace_back(greq_owner, std::ref(run), cls, std::ref(queue));
        threads.emplace_back(greq_completer, std::ref(queue));
        threads.emplace_back(romio_io, std::ref(run), path);
        std::thread prober([&] {
            while (!stop.load()) {
                int flag = 0;
                MPI_Iprobe(MPI_ANY_SOURCE, 999, comms[3], &flag, MPI_STATUS_IGNORE);
            }
        });
        for (auto& t : threads) t.join();
        stop = true;
        prober.join();
    }
    rmdir(dir);
    if (greq_polled_without_handle.load() != 0) {
        run.failures.report("a class request was polled %d times before its allocation returned", greq_polled_without_handle.load());
    }
    for (auto& c : comms) MPI_Comm_free(&c);

    long total = 0;
    int failures = run.failures.count();
    const long mine = run.completions.load();
    MPI_Allreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int all_failures = 0;
    MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (run.rank == 0) {
        std::printf("request_stress: %d process(es), 9 threads each, %d rounds: %ld completions, %d failures\n",
                    size, run.rounds, total, all_failures);
    }
    MPI_Finalize();
    return all_failures == 0 ? 0 : 1;
}
