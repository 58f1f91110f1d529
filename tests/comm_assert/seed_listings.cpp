// The programs of the listings in "Automatic detection of MPI assertions" (Jammer, Iwainsky,
// Bischof, C3PO'20; ../shared/seeds/004), run with MPIR_CVAR_COMM_ASSERT_REPORT so the run-time
// detection can be compared with what the paper's static analysis concludes
// (tests/comm_assert/check-report holds the expected verdicts). Run under mpiexec -n 2:
//   seed_listings LISTING      LISTING: one of the names in kListings below
// A receiver that is slow to receive lets the messages arrive first (let_messages_arrive): the
// run-time twin can only see an order dependence that happened in the run.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

namespace {

constexpr int kTag = 42;

int rank() {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

// What a busy receiver does before it gets to its receives: the messages sent meanwhile arrive
// and wait in its queue of unexpected messages.
void let_messages_arrive() {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    for (int i = 0; i < 1000; i++) {
        int flag = 0;
        // a tag nobody uses, from the other process: no wildcard, and a progress poll
        MPI_Iprobe(1 - rank(), 32000, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    }
}

void recv_int(int source, int tag, MPI_Comm comm = MPI_COMM_WORLD) {
    int buffer = 0;
    MPI_Recv(&buffer, 1, MPI_INT, source, tag, comm, MPI_STATUS_IGNORE);
}

void send_int(int dest, int tag, MPI_Comm comm = MPI_COMM_WORLD) {
    int buffer = 1;
    MPI_Send(&buffer, 1, MPI_INT, dest, tag, comm);
}

// Listing 1: two sends with one tag to one target, nothing between them: they may overtake.
void listing1() {
    if (rank() == 0) {
        let_messages_arrive();
        recv_int(1, kTag);
        recv_int(1, kTag);
    } else {
        send_int(0, kTag);
        send_int(0, kTag);
    }
}

// Listing 3: the sends differ in tag or target: no pair conflicts.
void listing3() {
    if (rank() == 0) {
        send_int(1, kTag);
        let_messages_arrive();
        recv_int(1, kTag);
        recv_int(1, kTag + 1);
    } else {
        send_int(0, kTag);
        send_int(0, kTag + 1);
        recv_int(0, kTag);
    }
}

// Listing 4: only one send per process on each path (a ping-pong).
void listing4() {
    if (rank() % 2 == 0) {
        send_int(1, kTag);
        recv_int(1, kTag);
    } else {
        recv_int(0, kTag);
        send_int(0, kTag);
    }
}

// Listing 5: the two sends are separated by a barrier, the receives by the same barrier.
void listing5() {
    if (rank() == 0) {
        let_messages_arrive();
        recv_int(1, kTag);
        MPI_Barrier(MPI_COMM_WORLD);
        let_messages_arrive();
        recv_int(1, kTag);
    } else {
        send_int(0, kTag);
        MPI_Barrier(MPI_COMM_WORLD);
        send_int(0, kTag);
    }
}

// Listing 6: 4 ints received, 2 sent: exact_length does not hold.
void listing6() {
    if (rank() == 0) {
        int buffer[4];
        MPI_Recv(buffer, 4, MPI_INT, 1, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        int buffer[2] = {1, 2};
        MPI_Send(buffer, 2, MPI_INT, 0, kTag, MPI_COMM_WORLD);
    }
}

// Listing 7: a receive with both wildcards.
void listing7() {
    if (rank() == 0) {
        recv_int(MPI_ANY_SOURCE, MPI_ANY_TAG);
    } else {
        send_int(0, kTag);
    }
}

// A loop whose send can overtake itself (the paper: "an operation can conflict with itself").
void loop_overtakes_itself() {
    for (int i = 0; i < 4; i++) {
        if (rank() == 1) {
            send_int(0, kTag);
        }
    }
    if (rank() == 0) {
        let_messages_arrive();
        for (int i = 0; i < 4; i++) {
            recv_int(1, kTag);
        }
    }
}

// A duplicate of MPI_COMM_WORLD with info (MPI_INFO_NULL: none) and a name.
MPI_Comm named_dup(const char* name, MPI_Info info = MPI_INFO_NULL) {
    MPI_Comm comm;
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comm);
    MPI_Comm_set_name(comm, name);
    return comm;
}

// One message from rank 1 that rank 0 receives with MPI_ANY_TAG.
void wildcard_tag_message(MPI_Comm comm, int tag) {
    if (rank() == 0) {
        recv_int(1, MPI_ANY_TAG, comm);
    } else {
        send_int(0, tag, comm);
    }
}

// A named duplicate with a wildcard tag, freed: its record is kept at MPI_Comm_free and summed
// over the processes at MPI_Finalize.
void named_communicator() {
    MPI_Comm halo = named_dup("halo");
    wildcard_tag_message(halo, 7);
    MPI_Comm_free(&halo);
    listing4();
}

// A communicator that promised no_any_source and a receive that breaks the promise: verification
// refuses it (MPI_ERR_RANK under MPI_ERRORS_RETURN), the receive is made again with the source
// named, and the report says the assertion was broken although asserted.
void broken_promise() {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_source", "true");
    MPI_Comm promised = named_dup("promised", info);
    MPI_Info_free(&info);
    MPI_Comm_set_errhandler(promised, MPI_ERRORS_RETURN);
    if (rank() == 0) {
        int buffer = 0;
        int rc = MPI_Recv(&buffer, 1, MPI_INT, MPI_ANY_SOURCE, kTag, promised, MPI_STATUS_IGNORE);
        int cls = MPI_SUCCESS;
        MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_RANK) {
            std::fprintf(stderr, "broken_promise: MPI_ANY_SOURCE gave error class %d\n", cls);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        recv_int(1, kTag, promised);
    } else {
        send_int(0, kTag, promised);
    }
    MPI_Comm_free(&promised);
}

// A communicator freed at different points on the two processes (as MPICH's comm/cmfree does):
// rank 0 frees it before a barrier on MPI_COMM_WORLD, rank 1 after it. Detection must not
// make MPI_Comm_free wait for the other process. Then one communicator duplicated, used with a
// wildcard tag and freed three times: its instances are summed in one entry.
void freed_apart() {
    MPI_Comm apart = named_dup("apart");
    wildcard_tag_message(apart, kTag);
    if (rank() == 0) {
        MPI_Comm_free(&apart);
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Comm_free(&apart);
    }
    for (int i = 0; i < 3; i++) {
        MPI_Comm looped = named_dup("looped");
        wildcard_tag_message(looped, kTag);
        MPI_Comm_free(&looped);
    }
}

// Two libraries, one after the other, each with an unnamed duplicate of MPI_COMM_WORLD (the
// second gets the context id the first freed, with the same members): library A receives with
// MPI_ANY_SOURCE on a communicator that asserted nothing, library B asserted
// mpi_assert_no_any_source and kept it. Two communicators, two entries: A's wildcard is not
// B's broken promise, and they are not instances of one communicator.
void reused_context() {
    MPI_Comm a;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    if (rank() == 0) {
        recv_int(MPI_ANY_SOURCE, kTag, a);
    } else {
        send_int(0, kTag, a);
    }
    MPI_Comm_free(&a);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_source", "true");
    MPI_Comm b;
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &b);
    MPI_Info_free(&info);
    if (rank() == 0) {
        recv_int(1, kTag, b);
    } else {
        send_int(0, kTag, b);
    }
    MPI_Comm_free(&b);
}

// MPI_Comm_set_name is local: rank 0 alone names the first of two duplicates (the same context
// id and members), and uses MPI_ANY_SOURCE only on the second. The wildcard must be reported on
// the second communicator, never on a mix of rank 0's second and rank 1's first.
void partly_named() {
    for (int i = 0; i < 2; i++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        if (i == 0 && rank() == 0) {
            MPI_Comm_set_name(c, "first_on_rank0");
        }
        if (rank() == 0) {
            recv_int(i == 1 ? MPI_ANY_SOURCE : 1, kTag, c);
        } else {
            send_int(0, kTag, c);
        }
        MPI_Comm_free(&c);
    }
}

// Communicators that received nothing and broke nothing are still listed (doc/assertions.md: every freed
// communicator and MPI_COMM_WORLD): a named and an unnamed duplicate freed without use, and
// MPI_COMM_WORLD, which no call receives on.
void quiet() {
    MPI_Comm named = named_dup("quiet");
    MPI_Comm unnamed;
    MPI_Comm_dup(MPI_COMM_WORLD, &unnamed);
    MPI_Comm_free(&unnamed);
    MPI_Comm_free(&named);
}

struct Listing {
    const char* name;
    void (*run)();
};

constexpr Listing kListings[] = {
    {"listing1", listing1}, {"listing3", listing3}, {"listing4", listing4},
    {"listing5", listing5}, {"listing6", listing6}, {"listing7", listing7},
    {"loop", loop_overtakes_itself}, {"named", named_communicator},
    {"threaded", listing4},  // listing 4 under MPI_THREAD_MULTIPLE: the report at MPI_Finalize
    {"broken_promise", broken_promise}, {"freed_apart", freed_apart},
    {"reused_context", reused_context}, {"quiet", quiet}, {"partly_named", partly_named},
};

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "threaded") == 0) {
        int provided = 0;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    } else {
        MPI_Init(&argc, &argv);
    }
    int size = 0, status = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const Listing* chosen = nullptr;
    for (const auto& l : kListings) {
        if (argc > 1 && std::strcmp(argv[1], l.name) == 0) {
            chosen = &l;
        }
    }
    if (!chosen || size != 2) {
        if (rank() == 0) {
            std::fprintf(stderr, "usage: mpiexec -n 2 seed_listings LISTING\n");
        }
        status = 2;
    } else {
        chosen->run();
    }
    MPI_Finalize();
    return status;
}
