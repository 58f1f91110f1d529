// Communicator assertions, defects found by review (regression tests written before the fixes):
//   4. exact_length through every completion call and status argument: one table, the same
//      answer everywhere (the MPI_Waitall + MPI_STATUSES_IGNORE fast path skipped the check)
//   5. a wildcard persistent receive made before MPI_Comm_set_info asserted both wildcards away,
//      started after it: refused by MPI_Start/MPI_Startall, or matched; never a silent hang
//   6. a blocking MPI_Probe/MPI_Mprobe with a wildcard in one thread while another thread's
//      MPI_Comm_set_info switches the communicator to the exact-match queues
//   7. after a switch declined on one process, MPI_Comm_set_info turning the assertions off
//   8. no_any_source, no_any_tag and exact_length are promises about one's own receives: they
//      may differ across processes (a master receiving with MPI_ANY_SOURCE from workers that
//      asserted no_any_source); allow_overtaking may not
// Ranks work in pairs (0-1, 2-3) where a case needs a peer: run under an even number of
// processes (the suite runs -n 2 and -n 4).
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "comm_assert_support.hpp"
#include "mpit_support.hpp"

using namespace reqtest;

namespace {

int peer() { return world_rank() ^ 1; }
bool is_receiver() { return world_rank() % 2 == 1; }

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

const char* class_name(int cls) {
    switch (cls) {
        case MPI_SUCCESS: return "MPI_SUCCESS";
        case MPI_ERR_COUNT: return "MPI_ERR_COUNT";
        case MPI_ERR_TRUNCATE: return "MPI_ERR_TRUNCATE";
        case MPI_ERR_IN_STATUS: return "MPI_ERR_IN_STATUS";
        case MPI_ERR_PENDING: return "MPI_ERR_PENDING";
        case MPI_ERR_RANK: return "MPI_ERR_RANK";
        case MPI_ERR_TAG: return "MPI_ERR_TAG";
        case MPI_ERR_INFO_VALUE: return "MPI_ERR_INFO_VALUE";
        default: return "another class";
    }
}

std::string describe(int code) {
    std::ostringstream out;
    const int cls = error_class(code);
    out << class_name(cls) << " (class " << cls << ")";
    if (code != MPI_SUCCESS) {
        out << ": " << error_text(code);
    }
    return out.str();
}

MPI_Info assertions_info(std::initializer_list<std::pair<const char*, const char*>> kv) {
    MPI_Info info;
    MPI_Info_create(&info);
    for (const auto& [key, value] : kv) {
        MPI_Info_set(info, key, value);
    }
    return info;
}

MPI_Info both_wildcards(const char* value) {
    return assertions_info(
        {{"mpi_assert_no_any_source", value}, {"mpi_assert_no_any_tag", value}});
}

// =============================================================================================
// 4. exact_length in every completion call, every status argument
// =============================================================================================

// How a call reports the receive whose length differs (request 1 of the pair below), given the
// length error class K (MPI_ERR_COUNT for a shorter message, MPI_ERR_TRUNCATE for a longer one):
enum class Expect {
    Single,         // a single-request form: the call returns class K
    InStatus,       // an array form given statuses: MPI_ERR_IN_STATUS, K in the status
    ArrayIgnoring,  // an array form given MPI_STATUSES_IGNORE: the error the truncated receive
                    // gives in this build, with MPI_ERR_TRUNCATE read as MPI_ERR_COUNT:
                    // MPI_ERR_IN_STATUS (kIgnoredArrayClass below), never MPI_SUCCESS
};

// What MPI_Waitall(..., MPI_STATUSES_IGNORE) returns for a truncated receive in this build
// (stock's shape, the NOTE-O1 fast path: "**instatus"); the shorter message must get the same.
constexpr int kIgnoredArrayClass = MPI_ERR_IN_STATUS;

// One report of request 1 by one call.
struct Report {
    std::string call;
    Expect expect;
    int rc;              // the call's return code
    bool status_given;   // a status for request 1 was written by the call
    MPI_Status status;   // that status
};

// The pair of receives of one row: request 0 gets an exact message, request 1 a message of
// `sent1` ints into a buffer of 4. A row completes both with its calls, appending what each
// call said about request 1 to `reports`.
struct Pair {
    int buf0[4] = {-1, -1, -1, -1};
    int buf1[4] = {-1, -1, -1, -1};
    MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    std::vector<Report> reports;
    bool done() const { return reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL; }
};

using RowFn = std::function<void(Pair&, bool ignore)>;

struct Row {
    const char* call;
    bool ignore;     // MPI_STATUS_IGNORE / MPI_STATUSES_IGNORE
    Expect expect;   // how request 1 is reported (a row's second call, if any, has its own)
    RowFn run;
};

// Loops until the pair is done or the deadline passed.
template <class Step>
void until_done(Pair& p, Step&& step) {
    const double start = MPI_Wtime();
    while (!p.done() && MPI_Wtime() - start < 10.0) {
        step();
    }
}

MPI_Status* status_arg(bool ignore, MPI_Status* st) { return ignore ? MPI_STATUS_IGNORE : st; }
MPI_Status* statuses_arg(bool ignore, MPI_Status* sts) {
    return ignore ? MPI_STATUSES_IGNORE : sts;
}

// An array call over the pair returned rc with statuses sts (when given) having completed
// request 1 (`completed1`) or not: an error return is about request 1 (request 0 cannot fail).
void note_array(Pair& p, const char* call, bool ignore, int rc, bool completed1,
                const MPI_Status* sts, int index_in_sts) {
    if (rc != MPI_SUCCESS || completed1) {
        Report r{call, ignore ? Expect::ArrayIgnoring : Expect::InStatus, rc, false, {}};
        if (!ignore && completed1) {
            r.status_given = true;
            r.status = sts[index_in_sts];
        }
        p.reports.push_back(r);
    }
}

void note_single(Pair& p, const char* call, bool ignore, int rc, const MPI_Status& st) {
    p.reports.push_back({call, Expect::Single, rc, !ignore, st});
}

std::vector<Row> completion_rows() {
    std::vector<Row> rows;
    for (bool ignore : {false, true}) {
        rows.push_back({"MPI_Wait", ignore, Expect::Single, [](Pair& p, bool ign) {
                            MPI_Wait(&p.reqs[0], MPI_STATUS_IGNORE);
                            MPI_Status st = poisoned_status();
                            int rc = MPI_Wait(&p.reqs[1], status_arg(ign, &st));
                            note_single(p, "MPI_Wait", ign, rc, st);
                        }});
        rows.push_back({"MPI_Test", ignore, Expect::Single, [](Pair& p, bool ign) {
                            until_done(p, [&] {
                                for (int i = 0; i < 2; i++) {
                                    if (p.reqs[i] == MPI_REQUEST_NULL) {
                                        continue;
                                    }
                                    int flag = 0;
                                    MPI_Status st = poisoned_status();
                                    int rc = MPI_Test(&p.reqs[i], &flag, status_arg(ign, &st));
                                    if (i == 1 && (flag || rc != MPI_SUCCESS)) {
                                        note_single(p, "MPI_Test", ign, rc, st);
                                    }
                                }
                            });
                        }});
        rows.push_back({"MPI_Waitall", ignore, Expect::InStatus, [](Pair& p, bool ign) {
                            MPI_Status sts[2] = {poisoned_status(), poisoned_status()};
                            int rc = MPI_Waitall(2, p.reqs, statuses_arg(ign, sts));
                            note_array(p, "MPI_Waitall", ign, rc, true, sts, 1);
                        }});
        rows.push_back({"MPI_Testall", ignore, Expect::InStatus, [](Pair& p, bool ign) {
                            until_done(p, [&] {
                                MPI_Status sts[2] = {poisoned_status(), poisoned_status()};
                                int flag = 0;
                                int rc = MPI_Testall(2, p.reqs, &flag, statuses_arg(ign, sts));
                                note_array(p, "MPI_Testall", ign, rc, flag != 0, sts, 1);
                            });
                        }});
        rows.push_back({"MPI_Waitany", ignore, Expect::Single, [](Pair& p, bool ign) {
                            until_done(p, [&] {
                                int index = -1;
                                MPI_Status st = poisoned_status();
                                int rc = MPI_Waitany(2, p.reqs, &index, status_arg(ign, &st));
                                if (index == 1 || rc != MPI_SUCCESS) {
                                    note_single(p, "MPI_Waitany", ign, rc, st);
                                }
                            });
                        }});
        rows.push_back({"MPI_Testany", ignore, Expect::Single, [](Pair& p, bool ign) {
                            until_done(p, [&] {
                                int index = -1, flag = 0;
                                MPI_Status st = poisoned_status();
                                int rc =
                                    MPI_Testany(2, p.reqs, &index, &flag, status_arg(ign, &st));
                                if ((flag && index == 1) || rc != MPI_SUCCESS) {
                                    note_single(p, "MPI_Testany", ign, rc, st);
                                }
                            });
                        }});
        rows.push_back({"MPI_Waitsome", ignore, Expect::InStatus, [](Pair& p, bool ign) {
                            until_done(p, [&] {
                                int out = 0, idx[2] = {-1, -1};
                                MPI_Status sts[2] = {poisoned_status(), poisoned_status()};
                                int rc = MPI_Waitsome(2, p.reqs, &out, idx, statuses_arg(ign, sts));
                                int k1 = -1;
                                for (int k = 0; k < out && out != MPI_UNDEFINED; k++) {
                                    k1 = idx[k] == 1 ? k : k1;
                                }
                                note_array(p, "MPI_Waitsome", ign, rc, k1 >= 0, sts, k1);
                            });
                        }});
        rows.push_back({"MPI_Testsome", ignore, Expect::InStatus, [](Pair& p, bool ign) {
                            until_done(p, [&] {
                                int out = 0, idx[2] = {-1, -1};
                                MPI_Status sts[2] = {poisoned_status(), poisoned_status()};
                                int rc = MPI_Testsome(2, p.reqs, &out, idx, statuses_arg(ign, sts));
                                int k1 = -1;
                                for (int k = 0; k < out && out != MPI_UNDEFINED; k++) {
                                    k1 = idx[k] == 1 ? k : k1;
                                }
                                note_array(p, "MPI_Testsome", ign, rc, k1 >= 0, sts, k1);
                            });
                        }});
        rows.push_back(
            {"MPI_Request_get_status, then MPI_Wait", ignore, Expect::Single,
             [](Pair& p, bool ign) {
                 for (int i = 0; i < 2; i++) {
                     int flag = 0, rc = MPI_SUCCESS;
                     MPI_Status st = poisoned_status();
                     const double start = MPI_Wtime();
                     while (!flag && rc == MPI_SUCCESS && MPI_Wtime() - start < 10.0) {
                         rc = MPI_Request_get_status(p.reqs[i], &flag, status_arg(ign, &st));
                     }
                     if (i == 1) {
                         note_single(p, "MPI_Request_get_status", ign, rc, st);
                     }
                     st = poisoned_status();
                     rc = MPI_Wait(&p.reqs[i], status_arg(ign, &st));
                     if (i == 1) {
                         note_single(p, "MPI_Wait after get_status", ign, rc, st);
                     }
                 }
             }});
        rows.push_back(
            {"MPI_Request_get_status_all, then MPI_Waitall", ignore, Expect::InStatus,
             [](Pair& p, bool ign) {
                 int flag = 0, rc = MPI_SUCCESS;
                 MPI_Status sts[2] = {poisoned_status(), poisoned_status()};
                 const double start = MPI_Wtime();
                 while (!flag && MPI_Wtime() - start < 10.0) {
                     rc = MPI_Request_get_status_all(2, p.reqs, &flag, statuses_arg(ign, sts));
                 }
                 note_array(p, "MPI_Request_get_status_all", ign, rc, flag != 0, sts, 1);
                 MPI_Status after[2] = {poisoned_status(), poisoned_status()};
                 rc = MPI_Waitall(2, p.reqs, statuses_arg(ign, after));
                 note_array(p, "MPI_Waitall after get_status_all", ign, rc, true, after, 1);
             }});
        rows.push_back(
            {"MPI_Request_get_status_any, then MPI_Test", ignore, Expect::Single,
             [](Pair& p, bool ign) {
                 until_done(p, [&] {
                     int index = -1, flag = 0;
                     MPI_Status st = poisoned_status();
                     int rc = MPI_Request_get_status_any(2, p.reqs, &index, &flag,
                                                         status_arg(ign, &st));
                     if (!flag || index < 0 || index == MPI_UNDEFINED) {
                         return;
                     }
                     if (index == 1) {
                         note_single(p, "MPI_Request_get_status_any", ign, rc, st);
                     }
                     int tflag = 0;
                     st = poisoned_status();
                     rc = MPI_Test(&p.reqs[index], &tflag, status_arg(ign, &st));
                     if (index == 1) {
                         note_single(p, "MPI_Test after get_status_any", ign, rc, st);
                     }
                 });
             }});
        rows.push_back(
            {"MPI_Request_get_status_some, then MPI_Testsome", ignore, Expect::InStatus,
             [](Pair& p, bool ign) {
                 until_done(p, [&] {
                     int out = 0, idx[2] = {-1, -1};
                     MPI_Status sts[2] = {poisoned_status(), poisoned_status()};
                     int rc = MPI_Request_get_status_some(2, p.reqs, &out, idx,
                                                          statuses_arg(ign, sts));
                     int k1 = -1;
                     for (int k = 0; k < out && out != MPI_UNDEFINED; k++) {
                         k1 = idx[k] == 1 ? k : k1;
                     }
                     note_array(p, "MPI_Request_get_status_some", ign, rc, k1 >= 0, sts, k1);
                     if (out == 0 || out == MPI_UNDEFINED) {
                         return;
                     }
                     int out2 = 0, idx2[2] = {-1, -1};
                     MPI_Status sts2[2] = {poisoned_status(), poisoned_status()};
                     rc = MPI_Testsome(2, p.reqs, &out2, idx2, statuses_arg(ign, sts2));
                     k1 = -1;
                     for (int k = 0; k < out2 && out2 != MPI_UNDEFINED; k++) {
                         k1 = idx2[k] == 1 ? k : k1;
                     }
                     note_array(p, "MPI_Testsome after get_status_some", ign, rc, k1 >= 0,
                                sts2, k1);
                 });
             }});
    }
    return rows;
}

// Runs one row with request 1 getting `sent1` ints (2: shorter, 6: longer); returns the class
// the row's MPI_STATUSES_IGNORE reports gave (for comparison with the longer message's), or -1.
int run_row(const Row& row, MPI_Comm comm, CommAssertPvars& pvars, int sent1) {
    const int k_class = sent1 < 4 ? MPI_ERR_COUNT : MPI_ERR_TRUNCATE;
    const int data0[4] = {10, 11, 12, 13};
    const int data1[6] = {20, 21, 22, 23, 24, 25};
    int ignored_class = -1;
    if (!is_receiver()) {
        MPI_Send(data0, 4, MPI_INT, peer(), 1, comm);
        MPI_Send(data1, sent1, MPI_INT, peer(), 2, comm);
        MPI_Barrier(comm);
        return ignored_class;
    }
    Pair p;
    const long long receives_before = pvars.read("comm_assert_receives");
    const long long mismatches_before = pvars.read("comm_assert_length_mismatches");
    MPI_Irecv(p.buf0, 4, MPI_INT, peer(), 1, comm, &p.reqs[0]);
    MPI_Irecv(p.buf1, 4, MPI_INT, peer(), 2, comm, &p.reqs[1]);
    row.run(p, row.ignore);

    INFO(row.call << (row.ignore ? " with MPI_STATUS(ES)_IGNORE" : " with statuses")
                  << ", request 1 gets " << sent1 << " ints into 4 (expected class "
                  << class_name(k_class) << ")");
    CHECK(p.done());
    CHECK(p.buf0[3] == 13);
    if (sent1 <= 4) {
        CHECK(p.buf1[0] == 20);
        CHECK(p.buf1[1] == 21);
    }
    // a truncated message's data is not defined by MPI (ch4:ofi delivers what fits, UCX nothing)
    if (sent1 < 4) {
        CHECK(p.buf1[2] == -1);  // a shorter message's data, nothing past it
    }
    bool error_reported = false;
    for (const auto& r : p.reports) {
        INFO("report by " << r.call << ": returned " << describe(r.rc)
                          << (r.status_given ? ", status MPI_ERROR " + describe(r.status.MPI_ERROR)
                                             : std::string(", no status")));
        error_reported = error_reported || r.rc != MPI_SUCCESS;
        switch (r.expect) {
            case Expect::Single:
                CHECK(error_class(r.rc) == k_class);
                break;
            case Expect::InStatus:
                CHECK(r.rc == MPI_ERR_IN_STATUS);
                if (r.status_given) {
                    CHECK(error_class(r.status.MPI_ERROR) == k_class);
                }
                break;
            case Expect::ArrayIgnoring:
                CHECK(r.rc != MPI_SUCCESS);
                CHECK(error_class(r.rc) == kIgnoredArrayClass);
                ignored_class = error_class(r.rc);
                break;
        }
        if (r.status_given && r.rc != MPI_SUCCESS) {
            CHECK(r.status.MPI_SOURCE == peer());
            CHECK(r.status.MPI_TAG == 2);
            if (sent1 < 4) {
                CHECK(count_of(r.status, MPI_INT) == 2);
            }
        }
    }
    CHECK(!p.reports.empty());
    CHECK(error_reported);  // some call told the program
    // detection: two receives, one of another length, whatever the call
    CHECK(pvars.read("comm_assert_receives") - receives_before == 2);
    CHECK(pvars.read("comm_assert_length_mismatches") - mismatches_before == 1);
    MPI_Barrier(comm);
    return ignored_class;
}

}  // namespace

TEST_CASE("comm assertions: exact_length answers the same in every completion call and status "
          "argument (table)", "[assert][truncate]") {
    ErrorsReturn errors_return;  // the array forms raise on MPI_COMM_WORLD, as stock does
    CvarSetting<int> detect("MPIR_CVAR_COMM_ASSERT_DETECT", 1);
    REQUIRE(detect.ok());
    AssertedComm comm({"mpi_assert_exact_length"}, "exact_length table");
    CommAssertPvars pvars(comm.get());
    REQUIRE(pvars.found("comm_assert_length_mismatches"));
    for (const auto& row : completion_rows()) {
        const std::string name =
            std::string(row.call) + (row.ignore ? ", status ignored" : ", statuses given");
        SECTION(name) {
            Watchdog dog("exact_length row " + name, 20.0);
            // the longer message first: MPI_ERR_TRUNCATE, stock's shape, the reference
            const int truncated_class = run_row(row, comm.get(), pvars, 6);
            const int count_class = run_row(row, comm.get(), pvars, 2);
            if (is_receiver() && row.ignore && truncated_class != -1) {
                INFO(name << ": the longer message gave " << class_name(truncated_class)
                          << ", the shorter " << class_name(count_class));
                CHECK((count_class == truncated_class ||
                       (truncated_class == MPI_ERR_TRUNCATE && count_class == MPI_ERR_COUNT)));
            }
        }
    }
}

// =============================================================================================
// 5. a wildcard persistent receive made before the switch, started after it
// =============================================================================================

namespace {

std::atomic<int> g_handler_calls{0};
std::atomic<int> g_handler_class{-1};

void recording_handler(MPI_Comm*, int* code, ...) {
    g_handler_calls++;
    g_handler_class = error_class(*code);
}

// Receives, with a deadline, the int the peer sent with `tag` (exact source and tag): drains
// what a failed case left. Returns false when nothing came.
bool drain_exact(MPI_Comm comm, int tag, int* value) {
    MPI_Request r;
    MPI_Irecv(value, 1, MPI_INT, peer(), tag, comm, &r);
    int flag = 0;
    const double start = MPI_Wtime();
    while (!flag && MPI_Wtime() - start < 5.0) {
        MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    }
    if (!flag) {
        MPI_Cancel(&r);
        MPI_Request_free(&r);
    }
    return flag != 0;
}

}  // namespace

TEST_CASE("exact-match queues: a wildcard persistent receive made before MPI_Comm_set_info "
          "asserted both is refused by MPI_Start/MPI_Startall or matches, never hangs", "[assert]") {
    ErrorsReturn errors_return;
    struct Variant {
        const char* name;
        bool any_source;  // else MPI_ANY_TAG
        bool startall;
    };
    const Variant variants[] = {
        {"MPI_ANY_SOURCE, MPI_Start", true, false},
        {"MPI_ANY_SOURCE, MPI_Startall", true, true},
        {"MPI_ANY_TAG, MPI_Start", false, false},
        {"MPI_ANY_TAG, MPI_Startall", false, true},
    };
    for (const auto& v : variants) {
        SECTION(v.name) {
            Watchdog dog(std::string("wildcard persistent receive started after the switch: ") +
                             v.name,
                         25.0);
            MPI_Comm comm;
            MPI_Comm_dup(MPI_COMM_WORLD, &comm);
            MPI_Errhandler handler;
            MPI_Comm_create_errhandler(recording_handler, &handler);
            MPI_Comm_set_errhandler(comm, handler);
            const int tag = 5;
            int value = -1;
            MPI_Request p = MPI_REQUEST_NULL;
            if (is_receiver()) {
                REQUIRE(MPI_Recv_init(&value, 1, MPI_INT, v.any_source ? MPI_ANY_SOURCE : peer(),
                                      v.any_source ? tag : MPI_ANY_TAG, comm, &p) == MPI_SUCCESS);
            }
            MPI_Info info = both_wildcards("true");
            REQUIRE(MPI_Comm_set_info(comm, info) == MPI_SUCCESS);
            MPI_Info_free(&info);
            CHECK(info_value(comm, "mpi_assert_no_any_source") == "true");
            CHECK(info_value(comm, "mpi_assert_no_any_tag") == "true");

            int rc = MPI_SUCCESS, stranded = 0;
            g_handler_calls = 0;
            if (is_receiver()) {
                rc = v.startall ? MPI_Startall(1, &p) : MPI_Start(&p);
            }
            MPI_Barrier(MPI_COMM_WORLD);  // the message is sent after the start
            if (!is_receiver()) {
                int mine = 500 + world_rank();
                MPI_Send(&mine, 1, MPI_INT, peer(), tag, comm);
            } else if (rc != MPI_SUCCESS) {
                INFO(v.name << " refused it: " << describe(rc));
                CHECK(error_class(rc) == (v.any_source ? MPI_ERR_RANK : MPI_ERR_TAG));
                CHECK(g_handler_calls == 1);  // through the communicator's handler
                CHECK(g_handler_class == error_class(rc));
                int got = -1;
                CHECK(drain_exact(comm, tag, &got));
                CHECK(got == 500 + peer());
            } else {
                int flag = 0;
                MPI_Status st = poisoned_status();
                const double start = MPI_Wtime();
                while (!flag && MPI_Wtime() - start < 5.0) {
                    MPI_Test(&p, &flag, &st);
                }
                INFO(v.name << " accepted the wildcard persistent receive: it must match");
                CHECK(flag == 1);
                if (flag) {
                    CHECK(value == 500 + peer());
                    CHECK(st.MPI_SOURCE == peer());
                    CHECK(st.MPI_TAG == tag);
                } else {
                    // the hang: take it back and receive the message by (source, tag)
                    MPI_Cancel(&p);
                    const double t = MPI_Wtime();
                    while (!flag && MPI_Wtime() - t < 2.0) {
                        MPI_Test(&p, &flag, MPI_STATUS_IGNORE);
                    }
                    stranded = !flag;
                    int got = -1;
                    CHECK(drain_exact(comm, tag, &got));
                    CHECK(got == 500 + peer());
                }
            }
            if (p != MPI_REQUEST_NULL && !stranded) {
                MPI_Request_free(&p);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            // a receive the cancel could not take back stays posted with this communicator's
            // context id: keep the communicator (and the request), so no later communicator
            // reuses the id and loses its messages to it
            int any_stranded = 0;
            MPI_Allreduce(&stranded, &any_stranded, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            if (!any_stranded) {
                MPI_Comm_free(&comm);
            }
            MPI_Errhandler_free(&handler);
        }
    }
}

// =============================================================================================
// 6. a blocking wildcard probe in one thread across the switch made by another
// =============================================================================================

TEST_CASE("exact-match queues: a blocking MPI_Probe/MPI_Mprobe with a wildcard in one thread "
          "sees the message sent after another thread's MPI_Comm_set_info switched the queues", "[assert]") {
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    if (provided != MPI_THREAD_MULTIPLE) {
        WARN("MPI_THREAD_MULTIPLE not provided: skipped");
        return;
    }
    ErrorsReturn errors_return;
    struct Variant {
        const char* name;
        bool matched;     // MPI_Mprobe + MPI_Mrecv, else MPI_Probe + MPI_Recv
        bool any_source;  // else MPI_ANY_TAG
    };
    const Variant variants[] = {
        {"MPI_Probe(MPI_ANY_SOURCE)", false, true},
        {"MPI_Mprobe(MPI_ANY_SOURCE)", true, true},
        {"MPI_Probe(MPI_ANY_TAG)", false, false},
        {"MPI_Mprobe(MPI_ANY_TAG)", true, false},
    };
    for (const auto& v : variants) {
        SECTION(v.name) {
            // a hang here cannot be undone (the probing thread is blocked in MPI): abort
            Watchdog dog(std::string("thread in a blocking ") + v.name +
                             " across another thread's MPI_Comm_set_info",
                         15.0);
            MPI_Comm comm;
            MPI_Comm_dup(MPI_COMM_WORLD, &comm);
            MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
            const int tag = 6;
            std::atomic<bool> done{false};
            int probe_rc = MPI_SUCCESS, recv_rc = MPI_SUCCESS, value = -1;
            MPI_Status st = poisoned_status();
            std::thread prober;
            if (is_receiver()) {
                prober = std::thread([&] {
                    const int src = v.any_source ? MPI_ANY_SOURCE : peer();
                    const int t = v.any_source ? tag : MPI_ANY_TAG;
                    if (v.matched) {
                        MPI_Message m = MPI_MESSAGE_NULL;
                        probe_rc = MPI_Mprobe(src, t, comm, &m, &st);
                        if (probe_rc == MPI_SUCCESS) {
                            recv_rc = MPI_Mrecv(&value, 1, MPI_INT, &m, MPI_STATUS_IGNORE);
                        }
                    } else {
                        probe_rc = MPI_Probe(src, t, comm, &st);
                        if (probe_rc == MPI_SUCCESS) {
                            recv_rc = MPI_Recv(&value, 1, MPI_INT, st.MPI_SOURCE, st.MPI_TAG,
                                               comm, MPI_STATUS_IGNORE);
                        }
                    }
                    done = true;
                });
                // let the thread get into its blocking probe before the switch
                std::this_thread::sleep_for(std::chrono::milliseconds(200));
            }
            MPI_Info info = both_wildcards("true");
            const int set_rc = MPI_Comm_set_info(comm, info);
            MPI_Info_free(&info);
            CHECK(set_rc == MPI_SUCCESS);
            MPI_Barrier(MPI_COMM_WORLD);  // the message is sent after the switch
            if (!is_receiver()) {
                int mine = 600 + world_rank();
                MPI_Send(&mine, 1, MPI_INT, peer(), tag, comm);
            } else {
                prober.join();  // the watchdog aborts if it never returns
                INFO(v.name << " returned " << describe(probe_rc));
                if (probe_rc == MPI_SUCCESS) {
                    CHECK(st.MPI_SOURCE == peer());
                    CHECK(st.MPI_TAG == tag);
                    CHECK(recv_rc == MPI_SUCCESS);
                    CHECK(value == 600 + peer());
                } else {
                    // refused: the message is still there for a receive by (source, tag)
                    int got = -1;
                    CHECK(drain_exact(comm, tag, &got));
                    CHECK(got == 600 + peer());
                }
            }
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Comm_free(&comm);
        }
    }
}

// =============================================================================================
// 7. turning the assertions off after a switch declined on one process
// =============================================================================================

TEST_CASE("comm assertions: after a switch declined on one process (a wildcard receive pending "
          "there), MPI_Comm_set_info turning both off succeeds everywhere", "[assert]") {
    ErrorsReturn errors_return;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    Watchdog dog("set_info off after a declined switch", 20.0);
    MPI_Info on = both_wildcards("true"), off = both_wildcards("false");

    // the receiver of each pair has a wildcard receive pending when the assertions are given:
    // its process keeps the process-wide queues (declines the switch), its peer switches
    int v = -1;
    MPI_Request pending = MPI_REQUEST_NULL;
    if (is_receiver()) {
        REQUIRE(MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &pending) ==
                MPI_SUCCESS);
    }
    REQUIRE(MPI_Comm_set_info(comm, on) == MPI_SUCCESS);
    // the message is sent only after every set_info returned: sent earlier, it could match the
    // wildcard during the receiver's set_info (its collective makes progress; seen between two
    // hosts) and the receiver would rightly switch
    MPI_Barrier(MPI_COMM_WORLD);
    if (is_receiver()) {
        MPI_Status st;
        REQUIRE(MPI_Wait(&pending, &st) == MPI_SUCCESS);
        CHECK(v == 700 + peer());
        CHECK(st.MPI_SOURCE == peer());
    } else {
        int mine = 700 + world_rank();
        MPI_Send(&mine, 1, MPI_INT, peer(), 3, comm);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    const int rc = MPI_Comm_set_info(comm, off);
    INFO("MPI_Comm_set_info(false, false) on rank " << world_rank() << ": " << describe(rc));
    CHECK(rc == MPI_SUCCESS);
    int mine[2] = {info_value(comm, "mpi_assert_no_any_source") == "true",
                   info_value(comm, "mpi_assert_no_any_tag") == "true"};
    if (is_receiver() || !device_has_exact_match_queues()) {
        // it declined the switch (on ch4:ucx every process does): what the program gave is in
        // force
        CHECK(mine[0] == 0);
        CHECK(mine[1] == 0);
    } else {
        // it switched to exact-match queues and keeps both (MPI 4.0, 7.4.4: set_info may ignore
        // a hint that cannot be changed once in use); MPI_Comm_get_info says so, and a wildcard
        // is refused there with the usual error instead of hanging
        CHECK(mine[0] == 1);
        CHECK(mine[1] == 1);
        int got = -1;
        MPI_Request r = MPI_REQUEST_NULL;
        CHECK(error_class(MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 5, comm, &r)) ==
              MPI_ERR_RANK);
        CHECK(r == MPI_REQUEST_NULL);
    }

    // and wildcards work again on the receiver, where they are no longer asserted (a send is
    // the same whatever the sender's assertions)
    if (rc == MPI_SUCCESS) {
        if (is_receiver()) {
            MPI_Status st;
            int got = -1;
            MPI_Request r;
            CHECK(MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &r) ==
                  MPI_SUCCESS);
            int flag = 0;
            const double start = MPI_Wtime();
            while (!flag && MPI_Wtime() - start < 5.0) {
                MPI_Test(&r, &flag, &st);
            }
            CHECK(flag == 1);
            if (flag) {
                CHECK(got == 710 + peer());
                CHECK(st.MPI_TAG == 4);
            } else {
                MPI_Cancel(&r);
                MPI_Request_free(&r);
                drain_exact(comm, 4, &got);
            }
        } else {
            int mine_v = 710 + world_rank();
            MPI_Send(&mine_v, 1, MPI_INT, peer(), 4, comm);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Info_free(&on);
    MPI_Info_free(&off);
    MPI_Comm_free(&comm);
}

// =============================================================================================
// 8. assertions about one's own receives may differ across processes
// =============================================================================================

namespace {

bool is_master() { return world_rank() == 0; }

// Workers send to the master, which receives with MPI_ANY_SOURCE (and MPI_ANY_TAG); the master
// sends to each worker, which receives by (source, tag) with 4 ints (exact length).
void master_worker_traffic(MPI_Comm comm) {
    const int size = world_size();
    if (is_master()) {
        std::vector<int> seen(size_t(size), 0);
        for (int k = 1; k < size; k++) {
            int v[4] = {-1, -1, -1, -1};
            MPI_Status st;
            const int rc = MPI_Recv(v, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st);
            INFO("master's MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG): " << describe(rc));
            CHECK(rc == MPI_SUCCESS);
            if (rc == MPI_SUCCESS && st.MPI_SOURCE > 0 && st.MPI_SOURCE < size) {
                seen[size_t(st.MPI_SOURCE)]++;
                CHECK(v[0] == 800 + st.MPI_SOURCE);
                CHECK(st.MPI_TAG == 100 + st.MPI_SOURCE);
            }
        }
        for (int w = 1; w < size; w++) {
            CHECK(seen[size_t(w)] == 1);
            int v[4] = {900 + w, 1, 2, 3};
            MPI_Send(v, 4, MPI_INT, w, 7, comm);
        }
    } else {
        int v[4] = {800 + world_rank(), 1, 2, 3};
        MPI_Send(v, 4, MPI_INT, 0, 100 + world_rank(), comm);
        int got[4] = {-1, -1, -1, -1};
        MPI_Status st;
        CHECK(MPI_Recv(got, 4, MPI_INT, 0, 7, comm, &st) == MPI_SUCCESS);
        CHECK(got[0] == 900 + world_rank());
        CHECK(st.MPI_SOURCE == 0);
    }
}

}  // namespace

TEST_CASE("comm assertions: workers may assert no_any_source (and no_any_tag, exact_length) "
          "while the master does not; then the master's wildcards and the workers' exact "
          "receives work", "[assert]") {
    ErrorsReturn errors_return;
    Watchdog dog("per-process assertions: master and workers", 20.0);
    // the workers' promises; the master gives none (an info without them, or "false")
    SECTION("MPI_Comm_set_info: workers no_any_source") {
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        MPI_Info info = is_master()
                            ? assertions_info({{"mpi_assert_no_any_source", "false"}})
                            : assertions_info({{"mpi_assert_no_any_source", "true"}});
        const int rc = MPI_Comm_set_info(comm, info);
        MPI_Info_free(&info);
        INFO("rank " << world_rank() << ": MPI_Comm_set_info " << describe(rc));
        CHECK(rc == MPI_SUCCESS);
        CHECK(info_value(comm, "mpi_assert_no_any_source") == (is_master() ? "false" : "true"));
        if (rc == MPI_SUCCESS) {
            master_worker_traffic(comm);
            if (!is_master()) {  // the workers' own promise is still verified
                int flag = 0;
                CHECK(error_class(MPI_Iprobe(MPI_ANY_SOURCE, 7, comm, &flag,
                                             MPI_STATUS_IGNORE)) == MPI_ERR_RANK);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Comm_free(&comm);
    }
    SECTION("MPI_Comm_dup_with_info: workers no_any_source, no_any_tag, exact_length "
            "(exact-match queues on the workers)") {
        MPI_Info info = is_master() ? assertions_info({})
                                    : assertions_info({{"mpi_assert_no_any_source", "true"},
                                                       {"mpi_assert_no_any_tag", "true"},
                                                       {"mpi_assert_exact_length", "true"}});
        MPI_Comm comm = MPI_COMM_NULL;
        const int rc = MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comm);
        MPI_Info_free(&info);
        INFO("rank " << world_rank() << ": MPI_Comm_dup_with_info " << describe(rc));
        CHECK(rc == MPI_SUCCESS);
        if (comm != MPI_COMM_NULL) {
            MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
            const char* expected = is_master() ? "false" : "true";
            CHECK(info_value(comm, "mpi_assert_no_any_source") == expected);
            CHECK(info_value(comm, "mpi_assert_no_any_tag") == expected);
            CHECK(info_value(comm, "mpi_assert_exact_length") == expected);
        }
        // every process got a communicator or none did
        int have = comm != MPI_COMM_NULL, all_have = 0;
        MPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (all_have) {
            master_worker_traffic(comm);
            if (!is_master()) {
                int flag = 0;
                CHECK(error_class(MPI_Iprobe(0, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE)) ==
                      MPI_ERR_TAG);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (comm != MPI_COMM_NULL) {
            MPI_Comm_free(&comm);
        }
    }
    SECTION("MPI_Comm_split_type: workers no_any_source") {
        MPI_Info info = is_master() ? assertions_info({})
                                    : assertions_info({{"mpi_assert_no_any_source", "true"}});
        MPI_Comm comm = MPI_COMM_NULL;
        const int rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, info, &comm);
        MPI_Info_free(&info);
        INFO("rank " << world_rank() << ": MPI_Comm_split_type " << describe(rc));
        CHECK(rc == MPI_SUCCESS);
        if (comm != MPI_COMM_NULL) {
            CHECK(info_value(comm, "mpi_assert_no_any_source") ==
                  (is_master() ? "false" : "true"));
            MPI_Comm_free(&comm);
        }
    }
    SECTION("allow_overtaking differing is still an error on every process, naming it") {
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        // the workers also assert no_any_source, which may differ: the error is overtaking's
        MPI_Info info =
            is_master() ? assertions_info({{"mpi_assert_allow_overtaking", "true"}})
                        : assertions_info({{"mpi_assert_allow_overtaking", "false"},
                                           {"mpi_assert_no_any_source", "true"}});
        int rc = MPI_Comm_set_info(comm, info);
        INFO("rank " << world_rank() << ": MPI_Comm_set_info " << describe(rc));
        CHECK(error_class(rc) == MPI_ERR_INFO_VALUE);
        CHECK(contains(error_text(rc), "mpi_assert_allow_overtaking"));
        CHECK(info_value(comm, "mpi_assert_allow_overtaking") == "false");
        MPI_Comm out = comm;
        rc = MPI_Comm_dup_with_info(comm, info, &out);
        CHECK(error_class(rc) == MPI_ERR_INFO_VALUE);
        CHECK(contains(error_text(rc), "mpi_assert_allow_overtaking"));
        CHECK(out == MPI_COMM_NULL);
        MPI_Info_free(&info);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Comm_free(&comm);
    }
}

// Stock 4.0.2 wrote the info's hints through the NULL communicator of MPI_UNDEFINED and crashed
// (comm-split-type-undefined-info).
TEST_CASE("comm assertions: MPI_Comm_split_type with MPI_UNDEFINED and an info of assertions",
          "[assert]") {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    MPI_Comm c = MPI_COMM_WORLD;
    const int type = rank == 0 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED;
    CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, type, 0, info, &c) == MPI_SUCCESS);
    if (rank == 0) {
        CHECK(c == MPI_COMM_NULL);
    } else {
        REQUIRE(c != MPI_COMM_NULL);
        MPI_Info got;
        MPI_Comm_get_info(c, &got);
        char value[16] = "";
        int flag = 0;
        MPI_Info_get(got, "mpi_assert_no_any_tag", sizeof(value) - 1, value, &flag);
        CHECK(flag == 1);
        CHECK(std::string(value) == "true");
        MPI_Info_free(&got);
        MPI_Comm_free(&c);
    }
    MPI_Info_free(&info);
}
