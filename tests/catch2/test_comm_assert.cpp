// Communicator assertions (comm-dup-keeps-assertions, mpit-pvar-handle-object-copy, comm-assert-consistency to ch4-exact-match-queues): what is in force (get_info, dup),
// verification of mpi_assert_no_any_source / _no_any_tag / _exact_length by every receive and
// probe family, the control variable that turns it off, the consistency check across
// processes, and detection through the comm_assert_* performance variables bound to a
// communicator. Ranks work in pairs (0-1, 2-3): run under an even number of processes.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "comm_assert_support.hpp"
#include "mpit_support.hpp"

using namespace reqtest;

namespace {

int peer() { return world_rank() ^ 1; }
bool is_receiver() { return world_rank() % 2 == 1; }

// One receive or probe family, called with (source, tag) on comm. A probe family receives the
// probed message too. Returns the first error; *value and *status are what was received.
struct Family {
    const char* name;
    std::function<int(MPI_Comm, int, int, int*, MPI_Status*)> receive;
    bool sends_too;  // the Sendrecv forms: both ranks of a pair call them
};

int complete(int rc, MPI_Request* req, MPI_Status* status) {
    return rc != MPI_SUCCESS ? rc : MPI_Wait(req, status);
}

std::vector<Family> families() {
    return {
        {"MPI_Recv",
         [](MPI_Comm c, int s, int t, int* v, MPI_Status* st) {
             return MPI_Recv(v, 1, MPI_INT, s, t, c, st);
         },
         false},
        {"MPI_Irecv",
         [](MPI_Comm c, int s, int t, int* v, MPI_Status* st) {
             MPI_Request r = MPI_REQUEST_NULL;
             return complete(MPI_Irecv(v, 1, MPI_INT, s, t, c, &r), &r, st);
         },
         false},
        {"MPI_Recv_init",
         [](MPI_Comm c, int s, int t, int* v, MPI_Status* st) {
             MPI_Request r = MPI_REQUEST_NULL;
             int rc = MPI_Recv_init(v, 1, MPI_INT, s, t, c, &r);
             if (rc != MPI_SUCCESS) {
                 return rc;
             }
             rc = MPI_Start(&r);
             rc = complete(rc, &r, st);
             MPI_Request_free(&r);
             return rc;
         },
         false},
        {"MPI_Probe",
         [](MPI_Comm c, int s, int t, int* v, MPI_Status* st) {
             int rc = MPI_Probe(s, t, c, st);
             return rc != MPI_SUCCESS
                        ? rc
                        : MPI_Recv(v, 1, MPI_INT, st->MPI_SOURCE, st->MPI_TAG, c, st);
         },
         false},
        {"MPI_Iprobe",
         [](MPI_Comm c, int s, int t, int* v, MPI_Status* st) {
             int flag = 0, rc = MPI_SUCCESS;
             const double start = MPI_Wtime();
             while (rc == MPI_SUCCESS && !flag && MPI_Wtime() - start < kDeadlineSeconds) {
                 rc = MPI_Iprobe(s, t, c, &flag, st);
             }
             return rc != MPI_SUCCESS
                        ? rc
                        : MPI_Recv(v, 1, MPI_INT, st->MPI_SOURCE, st->MPI_TAG, c, st);
         },
         false},
        {"MPI_Mprobe",
         [](MPI_Comm c, int s, int t, int* v, MPI_Status* st) {
             MPI_Message m = MPI_MESSAGE_NULL;
             int rc = MPI_Mprobe(s, t, c, &m, st);
             return rc != MPI_SUCCESS ? rc : MPI_Mrecv(v, 1, MPI_INT, &m, st);
         },
         false},
        {"MPI_Improbe",
         [](MPI_Comm c, int s, int t, int* v, MPI_Status* st) {
             MPI_Message m = MPI_MESSAGE_NULL;
             int flag = 0, rc = MPI_SUCCESS;
             const double start = MPI_Wtime();
             while (rc == MPI_SUCCESS && !flag && MPI_Wtime() - start < kDeadlineSeconds) {
                 rc = MPI_Improbe(s, t, c, &flag, &m, st);
             }
             if (rc != MPI_SUCCESS) {
                 return rc;
             }
             MPI_Request r = MPI_REQUEST_NULL;
             return complete(MPI_Imrecv(v, 1, MPI_INT, &m, &r), &r, st);
         },
         false},
        {"MPI_Sendrecv",
         [](MPI_Comm c, int s, int t, int* v, MPI_Status* st) {
             int mine = 100 + world_rank();
             return MPI_Sendrecv(&mine, 1, MPI_INT, peer(), 7, v, 1, MPI_INT, s, t, c, st);
         },
         true},
        {"MPI_Sendrecv_replace",
         [](MPI_Comm c, int s, int t, int* v, MPI_Status* st) {
             *v = 100 + world_rank();
             return MPI_Sendrecv_replace(v, 1, MPI_INT, peer(), 7, s, t, c, st);
         },
         true},
        {"MPI_Isendrecv",
         [](MPI_Comm c, int s, int t, int* v, MPI_Status* st) {
             int mine = 100 + world_rank();
             MPI_Request r = MPI_REQUEST_NULL;
             return complete(
                 MPI_Isendrecv(&mine, 1, MPI_INT, peer(), 7, v, 1, MPI_INT, s, t, c, &r), &r, st);
         },
         true},
        {"MPI_Isendrecv_replace",
         [](MPI_Comm c, int s, int t, int* v, MPI_Status* st) {
             *v = 100 + world_rank();
             MPI_Request r = MPI_REQUEST_NULL;
             return complete(MPI_Isendrecv_replace(v, 1, MPI_INT, peer(), 7, s, t, c, &r), &r,
                             st);
         },
         true},
    };
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// The family with the wildcards on comm, which asserted `key`: it must fail with `expected`
// naming the assertion and the call, post and send nothing, and leave a receive posted before
// it to complete with its data.
void check_wildcard_refused(const Family& f, const char* key, int source, int tag, int expected) {
    AssertedComm comm({key});
    Watchdog dog(std::string(f.name) + " with a wildcard under " + key);
    int pending_value = -1, sent = 41 + world_rank();
    MPI_Request pending[2];
    MPI_Irecv(&pending_value, 1, MPI_INT, peer(), 1, comm.get(), &pending[0]);
    MPI_Isend(&sent, 1, MPI_INT, peer(), 1, comm.get(), &pending[1]);

    int value = -1;
    MPI_Status status = poisoned_status();
    int rc = f.receive(comm.get(), source, tag, &value, &status);
    CHECK(error_class(rc) == expected);
    CHECK(contains(error_text(rc), key));
    CHECK(contains(error_text(rc), f.name));
    CHECK(value != 100 + peer());  // nothing received (the _replace forms start with their own)

    CHECK(MPI_Waitall(2, pending, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    CHECK(pending_value == 41 + peer());
    MPI_Barrier(comm.get());
    int flag = 1;
    MPI_Iprobe(peer(), 7, comm.get(), &flag, MPI_STATUS_IGNORE);
    CHECK(flag == 0);  // the failed Sendrecv forms sent nothing
}

// The same family with both wildcards on a communicator without assertions: it works.
void check_wildcard_clean(const Family& f) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    Watchdog dog(std::string(f.name) + " with wildcards, no assertion");
    int value = -1;
    MPI_Status status = poisoned_status();
    if (f.sends_too || is_receiver()) {
        CHECK(f.receive(comm, MPI_ANY_SOURCE, MPI_ANY_TAG, &value, &status) == MPI_SUCCESS);
        CHECK(value == 100 + peer());
        // stock 4.0.2's MPI_Isendrecv(_replace) runs a schedule whose request carries no
        // receive status (MPI_SOURCE and MPI_TAG 0): a stock defect this issue leaves alone
        if (std::string(f.name).rfind("MPI_Isendrecv", 0) != 0) {
            CHECK(status.MPI_SOURCE == peer());
            CHECK(status.MPI_TAG == 7);
        }
    } else {
        int mine = 100 + world_rank();
        CHECK(MPI_Send(&mine, 1, MPI_INT, peer(), 7, comm) == MPI_SUCCESS);
    }
    MPI_Comm_free(&comm);
}

}  // namespace

TEST_CASE("comm assertions: get_info shows them, MPI_Comm_dup keeps them, dup_with_info replaces them", "[assert]") {
    AssertedComm asserted({"mpi_assert_no_any_source", "mpi_assert_exact_length"});
    CHECK(info_value(asserted.get(), "mpi_assert_no_any_source") == "true");
    CHECK(info_value(asserted.get(), "mpi_assert_exact_length") == "true");
    CHECK(info_value(asserted.get(), "mpi_assert_no_any_tag") == "false");
    CHECK(info_value(asserted.get(), "mpi_assert_allow_overtaking") == "false");

    MPI_Comm dup, idup, with_info;
    MPI_Comm_dup(asserted.get(), &dup);
    CHECK(info_value(dup, "mpi_assert_no_any_source") == "true");
    CHECK(info_value(dup, "mpi_assert_exact_length") == "true");
    CHECK(info_value(dup, "mpi_assert_no_any_tag") == "false");

    MPI_Request req;
    MPI_Comm_idup(asserted.get(), &idup, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(info_value(idup, "mpi_assert_no_any_source") == "true");

    MPI_Comm_dup_with_info(asserted.get(), MPI_INFO_NULL, &with_info);
    CHECK(info_value(with_info, "mpi_assert_no_any_source") == "false");
    CHECK(info_value(with_info, "mpi_assert_exact_length") == "false");

    // and a duplicate enforces what it inherited
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    int value = 0;
    CHECK(error_class(MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 0, dup, MPI_STATUS_IGNORE)) ==
          MPI_ERR_RANK);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&idup);
    MPI_Comm_free(&with_info);
}

TEST_CASE("comm assertions: MPI_ANY_SOURCE under no_any_source fails in every receive and probe family", "[assert]") {
    for (const auto& f : families()) {
        SECTION(f.name) {
            check_wildcard_refused(f, "mpi_assert_no_any_source", MPI_ANY_SOURCE, 7,
                                   MPI_ERR_RANK);
            check_wildcard_clean(f);
        }
    }
}

TEST_CASE("comm assertions: MPI_ANY_TAG under no_any_tag fails in every receive and probe family", "[assert]") {
    for (const auto& f : families()) {
        SECTION(f.name) {
            check_wildcard_refused(f, "mpi_assert_no_any_tag", peer(), MPI_ANY_TAG, MPI_ERR_TAG);
            check_wildcard_clean(f);
        }
    }
}

TEST_CASE("comm assertions: a wildcard the communicator did not rule out is accepted", "[assert]") {
    AssertedComm comm({"mpi_assert_no_any_tag"});
    Watchdog dog("MPI_ANY_SOURCE under no_any_tag");
    int value = -1, mine = 100 + world_rank();
    MPI_Status status;
    if (is_receiver()) {
        CHECK(MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 7, comm.get(), &status) ==
              MPI_SUCCESS);
        CHECK(value == 100 + peer());
        CHECK(status.MPI_SOURCE == peer());
    } else {
        CHECK(MPI_Send(&mine, 1, MPI_INT, peer(), 7, comm.get()) == MPI_SUCCESS);
    }
}

namespace {

// The receiver of each pair gets `sent` ints into a buffer of 4 with `how`, on a communicator
// that asserted exact_length; returns the call's return code and fills status and buffer.
struct LengthCase {
    int rc = MPI_SUCCESS;
    MPI_Status status{};
    int buffer[4] = {-1, -1, -1, -1};
};

using Receive4 = std::function<int(MPI_Comm, int*, MPI_Status*)>;

LengthCase exchange(int sent, const Receive4& how) {
    AssertedComm comm({"mpi_assert_exact_length"});
    Watchdog dog("exact_length exchange");
    LengthCase out;
    out.status = poisoned_status();
    if (is_receiver()) {
        out.rc = how(comm.get(), out.buffer, &out.status);
    } else {
        int data[8] = {10, 11, 12, 13, 14, 15, 16, 17};
        MPI_Send(data, sent, MPI_INT, peer(), 5, comm.get());
    }
    MPI_Barrier(comm.get());
    return out;
}

}  // namespace

TEST_CASE("comm assertions: exact_length: a shorter message is MPI_ERR_COUNT, its data delivered",
          "[assert][truncate]") {
    ErrorsReturn errors_return;  // the array forms raise on MPI_COMM_WORLD, as stock does
    const std::vector<std::pair<const char*, Receive4>> forms = {
        {"MPI_Recv",
         [](MPI_Comm c, int* b, MPI_Status* st) {
             return MPI_Recv(b, 4, MPI_INT, peer(), 5, c, st);
         }},
        {"MPI_Irecv + MPI_Wait",
         [](MPI_Comm c, int* b, MPI_Status* st) {
             MPI_Request r;
             MPI_Irecv(b, 4, MPI_INT, peer(), 5, c, &r);
             return MPI_Wait(&r, st);
         }},
        {"MPI_Irecv + get_status_all, then MPI_Test",
         [](MPI_Comm c, int* b, MPI_Status* st) {
             MPI_Request r;
             MPI_Irecv(b, 4, MPI_INT, peer(), 5, c, &r);
             int flag = 0, rc = MPI_SUCCESS;
             MPI_Status peeked;
             while (!flag) {
                 rc = MPI_Request_get_status_all(1, &r, &flag, &peeked);
             }
             flag = 0;
             int test_rc = MPI_Test(&r, &flag, st);
             CHECK(flag == 1);
             CHECK(r == MPI_REQUEST_NULL);
             // the non-destructive look reported what the completion then reports
             if (rc == MPI_ERR_IN_STATUS) {
                 CHECK(error_class(peeked.MPI_ERROR) == error_class(test_rc));
             } else {
                 INFO("get_status_all " << rc << ", then MPI_Test class "
                                        << error_class(test_rc) << ": " << error_text(test_rc));
                 CHECK(rc == MPI_SUCCESS);
                 CHECK(test_rc == MPI_SUCCESS);
             }
             CHECK(count_of(peeked, MPI_INT) == count_of(*st, MPI_INT));
             return test_rc;
         }},
        {"MPI_Recv_init + MPI_Start + MPI_Wait",
         [](MPI_Comm c, int* b, MPI_Status* st) {
             MPI_Request r;
             MPI_Recv_init(b, 4, MPI_INT, peer(), 5, c, &r);
             MPI_Start(&r);
             int rc = MPI_Wait(&r, st);
             MPI_Request_free(&r);
             return rc;
         }},
        {"MPI_Mprobe + MPI_Mrecv",
         [](MPI_Comm c, int* b, MPI_Status* st) {
             MPI_Message m;
             MPI_Mprobe(peer(), 5, c, &m, st);
             return MPI_Mrecv(b, 4, MPI_INT, &m, st);
         }},
        {"MPI_Improbe + MPI_Imrecv + MPI_Wait",
         [](MPI_Comm c, int* b, MPI_Status* st) {
             MPI_Message m;
             int flag = 0;
             while (!flag) {
                 MPI_Improbe(peer(), 5, c, &flag, &m, st);
             }
             MPI_Request r;
             MPI_Imrecv(b, 4, MPI_INT, &m, &r);
             return MPI_Wait(&r, st);
         }},
    };
    for (const auto& [name, how] : forms) {
        SECTION(name) {
            LengthCase shorter = exchange(2, how);
            if (is_receiver()) {
                CHECK(error_class(shorter.rc) == MPI_ERR_COUNT);
                CHECK(contains(error_text(shorter.rc), "mpi_assert_exact_length"));
                CHECK(count_of(shorter.status, MPI_INT) == 2);
                CHECK(shorter.status.MPI_SOURCE == peer());
                CHECK(shorter.status.MPI_TAG == 5);
                CHECK(shorter.buffer[0] == 10);
                CHECK(shorter.buffer[1] == 11);
                CHECK(shorter.buffer[2] == -1);
                CHECK(shorter.buffer[3] == -1);
            }
            LengthCase exact = exchange(4, how);
            if (is_receiver()) {
                CHECK(exact.rc == MPI_SUCCESS);
                CHECK(count_of(exact.status, MPI_INT) == 4);
                CHECK(exact.buffer[3] == 13);
            }
            LengthCase longer = exchange(6, how);
            if (is_receiver()) {
                CHECK(error_class(longer.rc) == MPI_ERR_TRUNCATE);
            }
        }
    }
}

TEST_CASE("comm assertions: exact_length in the array forms and in every persistent round", "[assert]") {
    ErrorsReturn errors_return;  // the array forms raise on MPI_COMM_WORLD, as stock does
    AssertedComm comm({"mpi_assert_exact_length"});
    Watchdog dog("exact_length: Waitall and persistent rounds");
    int data[4] = {20, 21, 22, 23};
    if (is_receiver()) {
        int a[4] = {-1, -1, -1, -1}, b[4] = {-1, -1, -1, -1};
        MPI_Request reqs[2];
        MPI_Irecv(a, 4, MPI_INT, peer(), 1, comm.get(), &reqs[0]);
        MPI_Irecv(b, 4, MPI_INT, peer(), 2, comm.get(), &reqs[1]);
        MPI_Status st[2] = {poisoned_status(), poisoned_status()};
        CHECK(MPI_Waitall(2, reqs, st) == MPI_ERR_IN_STATUS);
        CHECK(st[0].MPI_ERROR == MPI_SUCCESS);
        CHECK(error_class(st[1].MPI_ERROR) == MPI_ERR_COUNT);
        CHECK(count_of(st[1], MPI_INT) == 3);
        CHECK(a[3] == 23);
        CHECK(b[2] == 22);

        // a persistent receive checks each round with its own size
        MPI_Request p;
        MPI_Recv_init(a, 4, MPI_INT, peer(), 3, comm.get(), &p);
        for (int round = 0; round < 3; round++) {
            MPI_Start(&p);
            MPI_Status s = poisoned_status();
            int rc = MPI_Wait(&p, &s);
            if (round == 1) {
                CHECK(error_class(rc) == MPI_ERR_COUNT);
                CHECK(count_of(s, MPI_INT) == 1);
            } else {
                CHECK(rc == MPI_SUCCESS);
                CHECK(count_of(s, MPI_INT) == 4);
            }
        }
        MPI_Request_free(&p);
    } else {
        MPI_Send(data, 4, MPI_INT, peer(), 1, comm.get());
        MPI_Send(data, 3, MPI_INT, peer(), 2, comm.get());
        for (int round = 0; round < 3; round++) {
            MPI_Send(data, round == 1 ? 1 : 4, MPI_INT, peer(), 3, comm.get());
        }
    }
    MPI_Barrier(comm.get());
}

TEST_CASE("comm assertions: MPIR_CVAR_COMM_ASSERT_VERIFY=0 trusts them", "[assert]") {
    CvarSetting<int> off("MPIR_CVAR_COMM_ASSERT_VERIFY", 0);
    REQUIRE(off.ok());
    AssertedComm comm({"mpi_assert_no_any_source", "mpi_assert_exact_length"});
    Watchdog dog("verification off");
    int data[2] = {30, 31}, buffer[4] = {-1, -1, -1, -1};
    if (is_receiver()) {
        MPI_Status st;
        CHECK(MPI_Recv(buffer, 4, MPI_INT, MPI_ANY_SOURCE, 9, comm.get(), &st) == MPI_SUCCESS);
        CHECK(st.MPI_SOURCE == peer());
        CHECK(count_of(st, MPI_INT) == 2);
        CHECK(buffer[1] == 31);
    } else {
        MPI_Send(data, 2, MPI_INT, peer(), 9, comm.get());
    }
}

TEST_CASE("comm assertions: values that differ across processes are an error on every process", "[assert]") {
    ErrorsReturn errors_return;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Info mixed, agreed;
    MPI_Info_create(&mixed);
    MPI_Info_set(mixed, "mpi_assert_allow_overtaking", world_rank() == 0 ? "true" : "false");
    MPI_Info_create(&agreed);
    MPI_Info_set(agreed, "mpi_assert_no_any_tag", "true");

    SECTION("MPI_Comm_set_info keeps what was in force") {
        Watchdog dog("MPI_Comm_set_info with mixed values");
        REQUIRE(MPI_Comm_set_info(comm, agreed) == MPI_SUCCESS);
        int rc = MPI_Comm_set_info(comm, mixed);
        CHECK(error_class(rc) == MPI_ERR_INFO_VALUE);
        CHECK(contains(error_text(rc), "mpi_assert_allow_overtaking"));
        CHECK(info_value(comm, "mpi_assert_allow_overtaking") == "false");
        CHECK(info_value(comm, "mpi_assert_no_any_tag") == "true");
    }
    SECTION("MPI_Comm_set_info that fails gives none of its assertions") {
        Watchdog dog("MPI_Comm_set_info with mixed values and another key");
        MPI_Info_set(mixed, "mpi_assert_no_any_source", "true");
        int rc = MPI_Comm_set_info(comm, mixed);
        CHECK(error_class(rc) == MPI_ERR_INFO_VALUE);
        CHECK(info_value(comm, "mpi_assert_no_any_source") == "false");
        CHECK(info_value(comm, "mpi_assert_allow_overtaking") == "false");
    }
    SECTION("MPI_Comm_dup_with_info returns no communicator") {
        Watchdog dog("MPI_Comm_dup_with_info with mixed values");
        MPI_Comm out = comm;
        int rc = MPI_Comm_dup_with_info(comm, mixed, &out);
        CHECK(error_class(rc) == MPI_ERR_INFO_VALUE);
        CHECK(out == MPI_COMM_NULL);
        // and the communicator is still usable collectively
        int one = 1, sum = 0;
        CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS);
        CHECK(sum == world_size());
    }
    SECTION("MPI_Comm_split_type returns no communicator where its processes disagree") {
        // the values must agree within each new communicator, one per node: they differ
        // between the first process of a node and the others (none where a node has one)
        Watchdog dog("MPI_Comm_split_type with mixed values");
        MPI_Comm node;
        REQUIRE(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS);
        int node_rank = 0, node_size = 0;
        MPI_Comm_rank(node, &node_rank);
        MPI_Comm_size(node, &node_size);
        MPI_Comm_free(&node);
        MPI_Info_set(mixed, "mpi_assert_allow_overtaking", node_rank == 0 ? "true" : "false");
        MPI_Comm out = comm;
        int rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, mixed, &out);
        if (node_size > 1) {
            CHECK(error_class(rc) == MPI_ERR_INFO_VALUE);
            CHECK(out == MPI_COMM_NULL);
        } else {
            CHECK(rc == MPI_SUCCESS);
            REQUIRE(out != MPI_COMM_NULL);
            CHECK(info_value(out, "mpi_assert_allow_overtaking") == "true");
            MPI_Comm_free(&out);
        }
    }
    SECTION("agreed values are accepted everywhere") {
        Watchdog dog("agreed values");
        MPI_Comm out = MPI_COMM_NULL;
        CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, agreed, &out) == MPI_SUCCESS);
        REQUIRE(out != MPI_COMM_NULL);
        CHECK(info_value(out, "mpi_assert_no_any_tag") == "true");
        MPI_Comm_free(&out);
    }
    MPI_Info_free(&mixed);
    MPI_Info_free(&agreed);
    MPI_Comm_free(&comm);
}

namespace {

// The sender of each pair sends `tags` (one int each) then a marker (tag 99); the receiver
// waits for the marker, so every message before it is queued, then receives them with `recv`.
void queued_then_received(MPI_Comm comm, const std::vector<int>& tags,
                          const std::function<void(MPI_Comm)>& recv) {
    if (is_receiver()) {
        MPI_Status st;
        MPI_Probe(peer(), 99, comm, &st);
        recv(comm);
        int marker;
        MPI_Recv(&marker, 1, MPI_INT, peer(), 99, comm, MPI_STATUS_IGNORE);
    } else {
        for (int tag : tags) {
            MPI_Send(&tag, 1, MPI_INT, peer(), tag, comm);
        }
        int marker = 0;
        MPI_Send(&marker, 1, MPI_INT, peer(), 99, comm);
    }
    MPI_Barrier(comm);
}

}  // namespace

TEST_CASE("comm assertions: detection counts what would break each one, per communicator", "[assert]") {
    CvarSetting<int> detect("MPIR_CVAR_COMM_ASSERT_DETECT", 1);
    REQUIRE(detect.ok());
    AssertedComm watched({}, "watched");
    AssertedComm other({});
    Watchdog dog("detection");
    CommAssertPvars pvars(watched.get());
    CommAssertPvars other_pvars(other.get());
    REQUIRE(pvars.found("comm_assert_order_dependent"));
    REQUIRE(pvars.found("comm_assert_order_unseen"));
    const bool order_seen = device_sees_message_order(watched.get());

    int v = 0;
    // two queued messages with one tag: the first receive's match depended on their order
    queued_then_received(watched.get(), {5, 5}, [&](MPI_Comm c) {
        MPI_Recv(&v, 1, MPI_INT, peer(), 5, c, MPI_STATUS_IGNORE);
        MPI_Recv(&v, 1, MPI_INT, peer(), 5, c, MPI_STATUS_IGNORE);
    });
    // different tags: no dependence (the seed's listing 3)
    queued_then_received(watched.get(), {5, 6}, [&](MPI_Comm c) {
        MPI_Recv(&v, 1, MPI_INT, peer(), 5, c, MPI_STATUS_IGNORE);
        MPI_Recv(&v, 1, MPI_INT, peer(), 6, c, MPI_STATUS_IGNORE);
    });
    // MPI_ANY_TAG with two queued messages: a wildcard, and order decided
    queued_then_received(watched.get(), {8, 9}, [&](MPI_Comm c) {
        MPI_Status st;
        MPI_Recv(&v, 1, MPI_INT, peer(), MPI_ANY_TAG, c, &st);
        CHECK(st.MPI_TAG == 8);
        MPI_Recv(&v, 1, MPI_INT, peer(), 9, c, MPI_STATUS_IGNORE);
    });
    // a shorter message, and a probe with MPI_ANY_SOURCE that finds nothing
    if (is_receiver()) {
        int four[4];
        MPI_Recv(four, 4, MPI_INT, peer(), 3, watched.get(), MPI_STATUS_IGNORE);
        int flag = 1;
        MPI_Iprobe(MPI_ANY_SOURCE, 12345, watched.get(), &flag, MPI_STATUS_IGNORE);
        CHECK(flag == 0);
    } else {
        int two[2] = {1, 2};
        MPI_Send(two, 2, MPI_INT, peer(), 3, watched.get());
    }
    MPI_Barrier(watched.get());

    if (is_receiver()) {
        // 2 + 2 + 2 receives, their 3 markers, the short one
        CHECK(pvars.read("comm_assert_receives") == 10);
        if (order_seen) {
            CHECK(pvars.read("comm_assert_order_dependent") == 2);
            CHECK(pvars.read("comm_assert_order_unseen") == 0);
        } else {
            // the network library matched all ten: order is not seen, nothing is guessed
            CHECK(pvars.read("comm_assert_order_dependent") == 0);
            CHECK(pvars.read("comm_assert_order_unseen") == 10);
        }
        CHECK(pvars.read("comm_assert_any_tag") == 1);
        CHECK(pvars.read("comm_assert_any_source") == 1);
        CHECK(pvars.read("comm_assert_length_mismatches") == 1);
    } else {
        CHECK(pvars.read("comm_assert_receives") == 0);
        CHECK(pvars.read("comm_assert_order_dependent") == 0);
        CHECK(pvars.read("comm_assert_order_unseen") == 0);
        CHECK(pvars.read("comm_assert_any_source") == 0);
    }
    CHECK(other_pvars.read("comm_assert_receives") == 0);
    CHECK(other_pvars.read("comm_assert_any_tag") == 0);
}

TEST_CASE("comm assertions: nothing is recorded while detection is off", "[assert]") {
    CvarSetting<int> off("MPIR_CVAR_COMM_ASSERT_DETECT", 0);  // whatever the environment says
    REQUIRE(off.ok());
    AssertedComm comm({});
    Watchdog dog("detection off");
    CommAssertPvars pvars(comm.get());
    int v = 0;
    queued_then_received(comm.get(), {5, 5}, [&](MPI_Comm c) {
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c, MPI_STATUS_IGNORE);
        MPI_Recv(&v, 1, MPI_INT, peer(), 5, c, MPI_STATUS_IGNORE);
    });
    CHECK(pvars.read("comm_assert_receives") == 0);
    CHECK(pvars.read("comm_assert_any_source") == 0);
    CHECK(pvars.read("comm_assert_order_dependent") == 0);
}

namespace {

int encode(int src, int tag, int k) { return src * 1000000 + tag * 1000 + k; }

}  // namespace

TEST_CASE("exact-match queues: every source and tag reaches its receives, in order per pair", "[assert]") {
    ErrorsReturn errors_return;
    AssertedComm exact({"mpi_assert_no_any_source", "mpi_assert_no_any_tag"}, "exact");
    MPI_Comm plain;
    MPI_Comm_dup(MPI_COMM_WORLD, &plain);
    Watchdog dog("exact-match traffic from every rank");
    const int size = world_size(), me = world_rank();
    constexpr int kTags = 5, kPerTag = 4;

    // half the receives are posted before anything is sent (in reverse tag order), the other
    // half after every message arrived; a plain communicator carries wildcard traffic meanwhile
    std::vector<int> got(size_t(size * kTags * kPerTag), -1);
    std::vector<MPI_Request> reqs;
    auto slot = [&](int src, int tag, int k) { return size_t((src * kTags + tag) * kPerTag + k); };
    for (int tag = kTags - 1; tag >= 0; tag--) {
        for (int src = 0; src < size; src++) {
            for (int k = 0; k < kPerTag / 2; k++) {
                reqs.emplace_back();
                MPI_Irecv(&got[slot(src, tag, k)], 1, MPI_INT, src, tag, exact.get(), &reqs.back());
            }
        }
    }
    int wild = -1;
    MPI_Request wild_req;
    MPI_Irecv(&wild, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, plain, &wild_req);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int dst = 0; dst < size; dst++) {
        for (int tag = 0; tag < kTags; tag++) {
            for (int k = 0; k < kPerTag; k++) {
                int v = encode(me, tag, k);
                MPI_Send(&v, 1, MPI_INT, dst, tag, exact.get());
            }
        }
    }
    int mine = me;
    MPI_Send(&mine, 1, MPI_INT, (me + 1) % size, 3, plain);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int tag = 0; tag < kTags; tag++) {
        for (int src = size - 1; src >= 0; src--) {
            for (int k = kPerTag / 2; k < kPerTag; k++) {
                reqs.emplace_back();
                MPI_Irecv(&got[slot(src, tag, k)], 1, MPI_INT, src, tag, exact.get(), &reqs.back());
            }
        }
    }
    CHECK(MPI_Waitall(int(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    for (int src = 0; src < size; src++) {
        for (int tag = 0; tag < kTags; tag++) {
            for (int k = 0; k < kPerTag; k++) {
                CHECK(got[slot(src, tag, k)] == encode(src, tag, k));
            }
        }
    }
    MPI_Status st;
    CHECK(MPI_Wait(&wild_req, &st) == MPI_SUCCESS);
    CHECK(wild == (me + size - 1) % size);
    CHECK(st.MPI_TAG == 3);

    // probes, matched probes and a cancelled receive find their pair's queue
    int probe_value = encode(me, 7, 0), r = -1, flag = 0;
    MPI_Request cancelled;
    MPI_Irecv(&r, 1, MPI_INT, peer(), 8, exact.get(), &cancelled);
    MPI_Cancel(&cancelled);
    CHECK(MPI_Wait(&cancelled, &st) == MPI_SUCCESS);
    CHECK(is_cancelled(st));
    // no tag-8 message before every cancel is over: the receive may take one that arrives
    // first (a network's cancel completes later, as MPI allows)
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Send(&probe_value, 1, MPI_INT, peer(), 7, exact.get());
    MPI_Send(&probe_value, 1, MPI_INT, peer(), 8, exact.get());
    CHECK(MPI_Probe(peer(), 7, exact.get(), &st) == MPI_SUCCESS);
    CHECK(st.MPI_TAG == 7);
    CHECK(poll_until([&] {
        MPI_Iprobe(peer(), 8, exact.get(), &flag, &st);
        return flag != 0;
    }));
    MPI_Message msg;
    CHECK(MPI_Mprobe(peer(), 8, exact.get(), &msg, &st) == MPI_SUCCESS);
    CHECK(MPI_Mrecv(&r, 1, MPI_INT, &msg, &st) == MPI_SUCCESS);
    CHECK(r == encode(peer(), 7, 0));
    CHECK(MPI_Recv(&r, 1, MPI_INT, peer(), 7, exact.get(), &st) == MPI_SUCCESS);
    CHECK(st.MPI_SOURCE == peer());
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_free(&plain);
}

TEST_CASE("exact-match queues: kept for the communicator's life, inherited by MPI_Comm_dup", "[assert]") {
    ErrorsReturn errors_return;
    AssertedComm exact({"mpi_assert_no_any_source", "mpi_assert_no_any_tag"});
    MPI_Info take_back;
    MPI_Info_create(&take_back);
    MPI_Info_set(take_back, "mpi_assert_no_any_source", "false");
    MPI_Info_set(take_back, "mpi_assert_no_any_tag", "false");
    CHECK(MPI_Comm_set_info(exact.get(), take_back) == MPI_SUCCESS);
    MPI_Info_free(&take_back);
    if (!device_has_exact_match_queues()) {
        // ch4:ucx declines the queues (UCX matches every message): nothing is kept, the
        // program's false is in force
        CHECK(info_value(exact.get(), "mpi_assert_no_any_source") == "false");
        CHECK(info_value(exact.get(), "mpi_assert_no_any_tag") == "false");
        return;
    }
    CHECK(info_value(exact.get(), "mpi_assert_no_any_source") == "true");
    CHECK(info_value(exact.get(), "mpi_assert_no_any_tag") == "true");

    CvarSetting<int> off("MPIR_CVAR_COMM_ASSERT_VERIFY", 0);
    REQUIRE(off.ok());
    int v = 0;
    CHECK(error_class(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 1, exact.get(),
                               MPI_STATUS_IGNORE)) == MPI_ERR_RANK);
    MPI_Comm dup;
    MPI_Comm_dup(exact.get(), &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    int flag = 0;
    CHECK(error_class(MPI_Iprobe(peer(), MPI_ANY_TAG, dup, &flag, MPI_STATUS_IGNORE)) ==
          MPI_ERR_TAG);
    MPI_Comm_free(&dup);
}

TEST_CASE("exact-match queues: messages already queued move when MPI_Comm_set_info asserts both", "[assert]") {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    Watchdog dog("set_info moving queued messages");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_source", "true");
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    const int tags[3] = {4, 5, 4}, marker_tag = 99;
    if (is_receiver()) {
        // every message queued on the process-wide queue while the communicator had none
        MPI_Status st;
        MPI_Probe(peer(), marker_tag, comm, &st);
        REQUIRE(MPI_Comm_set_info(comm, info) == MPI_SUCCESS);
        int v = -1;
        MPI_Recv(&v, 1, MPI_INT, peer(), 5, comm, &st);
        CHECK(v == encode(peer(), 5, 1));
        MPI_Recv(&v, 1, MPI_INT, peer(), 4, comm, &st);
        CHECK(v == encode(peer(), 4, 0));
        MPI_Recv(&v, 1, MPI_INT, peer(), 4, comm, &st);
        CHECK(v == encode(peer(), 4, 2));
        MPI_Recv(&v, 1, MPI_INT, peer(), marker_tag, comm, &st);
    } else {
        for (int k = 0; k < 3; k++) {
            int v = encode(world_rank(), tags[k], k);
            MPI_Send(&v, 1, MPI_INT, peer(), tags[k], comm);
        }
        int v = 0;
        MPI_Send(&v, 1, MPI_INT, peer(), marker_tag, comm);
        REQUIRE(MPI_Comm_set_info(comm, info) == MPI_SUCCESS);
    }
    MPI_Info_free(&info);
    CHECK(info_value(comm, "mpi_assert_no_any_source") == "true");
    MPI_Barrier(comm);
    MPI_Comm_free(&comm);
}

TEST_CASE("exact-match queues: a wildcard receive pending when MPI_Comm_set_info asserts both "
          "still matches; the queues follow once it is done", "[assert]") {
    ErrorsReturn errors_return;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    Watchdog dog("wildcard receive pending across set_info");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_source", "true");
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    CvarSetting<int> trusted("MPIR_CVAR_COMM_ASSERT_VERIFY", 0);
    REQUIRE(trusted.ok());
    if (is_receiver()) {
        int v = -1;
        MPI_Request req;
        MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &req);
        REQUIRE(MPI_Comm_set_info(comm, info) == MPI_SUCCESS);
        CHECK(info_value(comm, "mpi_assert_no_any_source") == "true");
        MPI_Status st;
        REQUIRE(MPI_Wait(&req, &st) == MPI_SUCCESS);
        CHECK(v == encode(peer(), 3, 0));
        CHECK(st.MPI_SOURCE == peer());
        CHECK(st.MPI_TAG == 3);
    } else {
        REQUIRE(MPI_Comm_set_info(comm, info) == MPI_SUCCESS);
        int v = encode(world_rank(), 3, 0);
        MPI_Send(&v, 1, MPI_INT, peer(), 3, comm);
    }
    // nothing pending now: set again, the device matches by (source, tag) on every process and
    // refuses wildcards even with verification off
    REQUIRE(MPI_Comm_set_info(comm, info) == MPI_SUCCESS);
    MPI_Info_free(&info);
    int flag = 0;
    if (device_has_exact_match_queues()) {
        CHECK(error_class(MPI_Iprobe(MPI_ANY_SOURCE, 3, comm, &flag, MPI_STATUS_IGNORE)) ==
              MPI_ERR_RANK);
    } else {
        // ch4:ucx declines the queues: with verification off the wildcard is the program's
        // promise broken, not refused; nothing is there to find
        CHECK(MPI_Iprobe(MPI_ANY_SOURCE, 3, comm, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        CHECK(flag == 0);
    }
    int v = encode(world_rank(), 6, 1), got = -1;
    MPI_Sendrecv(&v, 1, MPI_INT, peer(), 6, &got, 1, MPI_INT, peer(), 6, comm, MPI_STATUS_IGNORE);
    CHECK(got == encode(peer(), 6, 1));
    MPI_Comm_free(&comm);
}
