// ROMIO's nonblocking file I/O through its request class (io_uring or POSIX AIO, as
// MPIR_CVAR_ROMIO_NBIO_ENGINE chooses; the test command runs these cases with each), progressed without threads:
// hundreds of outstanding MPI_File_iwrite_at/iread_at per rank completed by every completion
// call, data read back; an I/O error (EFBIG past RLIMIT_FSIZE) completes with MPI_ERR_IO.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "mpit_support.hpp"
#include "romio_support.hpp"

using namespace reqtest;

namespace {

constexpr int kRequests = 256;
constexpr int kBlockInts = 4096;  // 16 KiB per request
constexpr int kBlockBytes = kBlockInts * static_cast<int>(sizeof(int));

int expected_value(int block, int j) { return world_rank() * 1000003 + block * kBlockInts + j; }

// Completes every request in reqs with one of the completion calls; returns the status each
// request completed with.
using Completer = std::function<std::vector<MPI_Status>(std::vector<MPI_Request>&)>;

std::vector<MPI_Status> by_waitall(std::vector<MPI_Request>& reqs) {
    std::vector<MPI_Status> st(reqs.size());
    REQUIRE(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), st.data()) == MPI_SUCCESS);
    return st;
}

std::vector<MPI_Status> by_any(std::vector<MPI_Request>& reqs, bool wait) {
    std::vector<MPI_Status> st(reqs.size());
    for (size_t done = 0; done < reqs.size();) {
        int index = -1, flag = 0;
        MPI_Status s;
        if (wait) {
            REQUIRE(MPI_Waitany(static_cast<int>(reqs.size()), reqs.data(), &index, &s) ==
                    MPI_SUCCESS);
            flag = 1;
        } else {
            REQUIRE(MPI_Testany(static_cast<int>(reqs.size()), reqs.data(), &index, &flag, &s) ==
                    MPI_SUCCESS);
        }
        if (flag && index != MPI_UNDEFINED) {
            st[static_cast<size_t>(index)] = s;
            done++;
        }
    }
    return st;
}

std::vector<MPI_Status> by_some(std::vector<MPI_Request>& reqs, bool wait) {
    const int n = static_cast<int>(reqs.size());
    std::vector<MPI_Status> st(reqs.size()), out(reqs.size());
    std::vector<int> indices(reqs.size());
    for (int done = 0; done < n;) {
        int outcount = 0;
        if (wait) {
            REQUIRE(MPI_Waitsome(n, reqs.data(), &outcount, indices.data(), out.data()) ==
                    MPI_SUCCESS);
        } else {
            REQUIRE(MPI_Testsome(n, reqs.data(), &outcount, indices.data(), out.data()) ==
                    MPI_SUCCESS);
        }
        for (int j = 0; j < outcount; j++) {
            st[static_cast<size_t>(indices[static_cast<size_t>(j)])] = out[static_cast<size_t>(j)];
        }
        done += outcount;
    }
    return st;
}

// get_status_any reports one, MPI_Wait completes it (the tool pattern)
std::vector<MPI_Status> by_get_status_any(std::vector<MPI_Request>& reqs) {
    std::vector<MPI_Status> st(reqs.size());
    for (size_t done = 0; done < reqs.size();) {
        int index = -1, flag = 0;
        MPI_Status s;
        REQUIRE(MPI_Request_get_status_any(static_cast<int>(reqs.size()), reqs.data(), &index,
                                           &flag, &s) == MPI_SUCCESS);
        if (flag && index != MPI_UNDEFINED) {
            REQUIRE(MPI_Wait(&reqs[static_cast<size_t>(index)], &st[static_cast<size_t>(index)]) ==
                    MPI_SUCCESS);
            CHECK(count_of(s, MPI_BYTE) == count_of(st[static_cast<size_t>(index)], MPI_BYTE));
            done++;
        }
    }
    return st;
}

std::vector<MPI_Status> by_get_status_some(std::vector<MPI_Request>& reqs) {
    const int n = static_cast<int>(reqs.size());
    std::vector<MPI_Status> st(reqs.size()), out(reqs.size());
    std::vector<int> indices(reqs.size());
    for (int done = 0; done < n;) {
        int outcount = 0;
        REQUIRE(MPI_Request_get_status_some(n, reqs.data(), &outcount, indices.data(),
                                            out.data()) == MPI_SUCCESS);
        for (int j = 0; j < outcount; j++) {
            const size_t i = static_cast<size_t>(indices[static_cast<size_t>(j)]);
            st[i] = out[static_cast<size_t>(j)];
            REQUIRE(MPI_Wait(&reqs[i], MPI_STATUS_IGNORE) == MPI_SUCCESS);
        }
        done += (outcount == MPI_UNDEFINED) ? 0 : outcount;
    }
    return st;
}

std::vector<MPI_Status> by_get_status_all(std::vector<MPI_Request>& reqs) {
    const int n = static_cast<int>(reqs.size());
    std::vector<MPI_Status> st(reqs.size());
    int flag = 0;
    while (!flag) {
        REQUIRE(MPI_Request_get_status_all(n, reqs.data(), &flag, st.data()) == MPI_SUCCESS);
    }
    REQUIRE(MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    return st;
}

}  // namespace

TEST_CASE("hundreds of ROMIO iwrite/iread requests complete through every completion call", "[romio]") {
    const std::vector<std::pair<const char*, Completer>> completers = {
        {"MPI_Waitall", by_waitall},
        {"MPI_Testany", [](auto& r) { return by_any(r, false); }},
        {"MPI_Waitany", [](auto& r) { return by_any(r, true); }},
        {"MPI_Testsome", [](auto& r) { return by_some(r, false); }},
        {"MPI_Waitsome", [](auto& r) { return by_some(r, true); }},
        {"get_status_any + MPI_Wait", by_get_status_any},
        {"get_status_some + MPI_Wait", by_get_status_some},
        {"get_status_all + MPI_Waitall", by_get_status_all},
    };
    PrivateFile file;
    // ROMIO creates its AIO request class at the first asynchronous operation
    {
        int one = 1;
        MPI_Request warm;
        REQUIRE(MPI_File_iwrite_at(file.fh, 0, &one, 1, MPI_INT, &warm) == MPI_SUCCESS);
        REQUIRE(MPI_Wait(&warm, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    }

    for (const auto& [name, complete] : completers) {
        INFO("completed by " << name);
        GreqClassPvars pvars;
        const auto completed_before = pvars.read<unsigned long long>("greq_class_completed");
        std::vector<std::vector<int>> out(kRequests, std::vector<int>(kBlockInts));
        std::vector<MPI_Request> reqs(kRequests, MPI_REQUEST_NULL);
        for (int b = 0; b < kRequests; b++) {
            for (int j = 0; j < kBlockInts; j++) {
                out[static_cast<size_t>(b)][static_cast<size_t>(j)] = expected_value(b, j);
            }
            REQUIRE(MPI_File_iwrite_at(file.fh, static_cast<MPI_Offset>(b) * kBlockBytes,
                                       out[static_cast<size_t>(b)].data(), kBlockInts, MPI_INT,
                                       &reqs[static_cast<size_t>(b)]) == MPI_SUCCESS);
        }
        std::vector<MPI_Status> written = complete(reqs);
        for (int b = 0; b < kRequests; b++) {
            CHECK(reqs[static_cast<size_t>(b)] == MPI_REQUEST_NULL);
            CHECK(count_of(written[static_cast<size_t>(b)], MPI_BYTE) == kBlockBytes);
        }
        // they went through a request class (ROMIO's AIO one): one class completed them all
        const auto completed = pvars.read<unsigned long long>("greq_class_completed");
        int classes_that_did_them = 0;
        for (size_t c = 0; c < completed.size(); c++) {
            classes_that_did_them += (completed[c] - completed_before[c] == kRequests) ? 1 : 0;
        }
        CHECK(classes_that_did_them == 1);

        std::vector<std::vector<int>> in(kRequests, std::vector<int>(kBlockInts, -1));
        for (int b = 0; b < kRequests; b++) {
            REQUIRE(MPI_File_iread_at(file.fh, static_cast<MPI_Offset>(b) * kBlockBytes,
                                      in[static_cast<size_t>(b)].data(), kBlockInts, MPI_INT,
                                      &reqs[static_cast<size_t>(b)]) == MPI_SUCCESS);
        }
        std::vector<MPI_Status> read = complete(reqs);
        int wrong = 0;
        for (int b = 0; b < kRequests; b++) {
            CHECK(count_of(read[static_cast<size_t>(b)], MPI_BYTE) == kBlockBytes);
            wrong += (in[static_cast<size_t>(b)] != out[static_cast<size_t>(b)]) ? 1 : 0;
        }
        CHECK(wrong == 0);
    }
}

namespace {

bool says_file_too_large(int code) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, text, &len);
    return std::strstr(text, std::strerror(EFBIG)) != nullptr;
}

}  // namespace

TEST_CASE("an I/O error completes the ROMIO request with MPI_ERR_IO, no hang", "[romio]") {
    ErrorsReturn errors_return;
    PrivateFile file;
    std::vector<char> block(65536, 'x');
    FileSizeLimit limit(1 << 20);
    MPI_Request req = MPI_REQUEST_NULL;
    // past the limit: the operation is accepted, then fails with EFBIG
    REQUIRE(MPI_File_iwrite_at(file.fh, 4 << 20, block.data(), static_cast<int>(block.size()),
                               MPI_CHAR, &req) == MPI_SUCCESS);
    alarm(60);  // a hang ends the test run instead
    SECTION("MPI_Wait returns it") {
        MPI_Status st;
        const int rc = MPI_Wait(&req, &st);
        CHECK(error_class(rc) == MPI_ERR_IO);
        CHECK(says_file_too_large(rc));
    }
    SECTION("MPI_Waitall puts it in the status") {
        MPI_Status st = poisoned_status();
        const int rc = MPI_Waitall(1, &req, &st);
        CHECK(error_class(rc) == MPI_ERR_IN_STATUS);
        CHECK(error_class(st.MPI_ERROR) == MPI_ERR_IO);
        CHECK(says_file_too_large(st.MPI_ERROR));
    }
    SECTION("a MPI_Testany loop sees it") {
        int rc = MPI_SUCCESS, index = -1, flag = 0;
        REQUIRE(poll_until([&] {
            rc = MPI_Testany(1, &req, &index, &flag, MPI_STATUS_IGNORE);
            return flag != 0;
        }));
        CHECK(index == 0);
        CHECK(error_class(rc) == MPI_ERR_IO);
    }
    alarm(0);
    CHECK(req == MPI_REQUEST_NULL);
}

namespace {

// Error handlers that only count their calls, so that a misrouted error shows as a count
// instead of aborting the run.
struct HandlerCalls {
    int comm = 0;
    std::vector<MPI_File> files;  // the file of each file-handler call, in order
    std::vector<int> codes;       // the code each file-handler call got
};
HandlerCalls handler_calls;

void count_file_error(MPI_File* fh, int* code, ...) {
    handler_calls.files.push_back(*fh);
    handler_calls.codes.push_back(*code);
}

void count_comm_error(MPI_Comm*, int*, ...) { handler_calls.comm++; }

// A handler that counts its calls on MPI_COMM_SELF and MPI_COMM_WORLD for the scope.
class CountingCommHandlers {
public:
    CountingCommHandlers() : handlers_(created()) {}
    ~CountingCommHandlers() { MPI_Errhandler_free(&counting_); }
    CountingCommHandlers(const CountingCommHandlers&) = delete;
    CountingCommHandlers& operator=(const CountingCommHandlers&) = delete;

private:
    MPI_Errhandler created() {
        MPI_Comm_create_errhandler(count_comm_error, &counting_);
        return counting_;
    }
    MPI_Errhandler counting_ = MPI_ERRHANDLER_NULL;
    CommErrhandlers handlers_;
};

// The counting handler on a file for the scope, then MPI_ERRORS_RETURN again.
class CountingFileHandler {
public:
    explicit CountingFileHandler(MPI_File fh) : fh_(fh) {
        MPI_File_create_errhandler(count_file_error, &counting_);
        MPI_File_set_errhandler(fh_, counting_);
    }
    ~CountingFileHandler() {
        MPI_File_set_errhandler(fh_, MPI_ERRORS_RETURN);
        MPI_Errhandler_free(&counting_);
    }
    CountingFileHandler(const CountingFileHandler&) = delete;
    CountingFileHandler& operator=(const CountingFileHandler&) = delete;

private:
    MPI_File fh_;
    MPI_Errhandler counting_ = MPI_ERRHANDLER_NULL;
};

// 64 KiB at offset 0: within the FileSizeLimit of the tests, it succeeds.
MPI_Request good_write(MPI_File fh, std::vector<char>& block) {
    MPI_Request req = MPI_REQUEST_NULL;
    REQUIRE(MPI_File_iwrite_at(fh, 0, block.data(), static_cast<int>(block.size()), MPI_CHAR,
                               &req) == MPI_SUCCESS);
    return req;
}

// 64 KiB at 4 MiB, past the tests' 1 MiB FileSizeLimit: accepted, then fails with EFBIG.
MPI_Request failing_write(MPI_File fh, std::vector<char>& block) {
    MPI_Request req = MPI_REQUEST_NULL;
    REQUIRE(MPI_File_iwrite_at(fh, 4 << 20, block.data(), static_cast<int>(block.size()),
                               MPI_CHAR, &req) == MPI_SUCCESS);
    return req;
}

}  // namespace

TEST_CASE("MPI_Wait and MPI_Test raise a ROMIO request's error on the file's error handler", "[romio]") {
    CountingCommHandlers comm_handlers;
    PrivateFile file;
    handler_calls = HandlerCalls{};
    const bool user_handler = GENERATE(false, true);
    INFO((user_handler ? "a user file error handler" : "MPI_ERRORS_RETURN on the file"));
    std::optional<CountingFileHandler> counting_file;
    if (user_handler) {
        counting_file.emplace(file.fh);
    }
    std::vector<char> block(65536, 'x');
    FileSizeLimit limit(1 << 20);
    MPI_Request req = failing_write(file.fh, block);
    alarm(60);
    int rc = MPI_SUCCESS;
    SECTION("MPI_Wait") {
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    SECTION("a MPI_Test loop") {
        REQUIRE(poll_until([&] {
            int flag = 0;
            rc = MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
            return flag != 0 || rc != MPI_SUCCESS;
        }));
    }
    alarm(0);
    CHECK(req == MPI_REQUEST_NULL);
    CHECK(error_class(rc) == MPI_ERR_IO);
    CHECK(says_file_too_large(rc));
    CHECK(handler_calls.comm == 0);
    if (user_handler) {
        CHECK(handler_calls.files == std::vector<MPI_File>{file.fh});
        CHECK(handler_calls.codes == std::vector<int>{rc});
    } else {
        CHECK(handler_calls.files.empty());
    }
}

TEST_CASE("MPI_Request_get_status raises a ROMIO request's error on the file, not the communicator", "[romio]") {
    CountingCommHandlers comm_handlers;
    PrivateFile file;
    handler_calls = HandlerCalls{};
    CountingFileHandler counting_file(file.fh);
    std::vector<char> block(65536, 'x');
    FileSizeLimit limit(1 << 20);
    MPI_Request req = failing_write(file.fh, block);
    alarm(60);
    int flag = 0, rc = MPI_SUCCESS;
    REQUIRE(poll_until([&] {
        rc = MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE);
        return flag != 0 || rc != MPI_SUCCESS;
    }));
    // reported, not completed: the request is still the caller's
    CHECK(flag == 1);
    CHECK(req != MPI_REQUEST_NULL);
    CHECK(error_class(rc) == MPI_ERR_IO);
    CHECK(says_file_too_large(rc));
    CHECK(handler_calls.comm == 0);
    CHECK(handler_calls.files == std::vector<MPI_File>{file.fh});
    // completing it reports the same error on the same file, and frees it
    const int wait_rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    alarm(0);
    CHECK(req == MPI_REQUEST_NULL);
    CHECK(error_class(wait_rc) == MPI_ERR_IO);
    CHECK(handler_calls.comm == 0);
    CHECK(handler_calls.files == std::vector<MPI_File>{file.fh, file.fh});
}

namespace {

// Two private files, each with the counting handler, the counting handler on MPI_COMM_SELF and
// MPI_COMM_WORLD, and writes past a 1 MiB file-size limit failing with EFBIG.
struct TwoFilesCountingErrors {
    TwoFilesCountingErrors() { handler_calls = HandlerCalls{}; }
    CountingCommHandlers comm_handlers;
    PrivateFile a, b;
    CountingFileHandler on_a{a.fh}, on_b{b.fh};
    std::vector<char> block = std::vector<char>(65536, 'x');
    FileSizeLimit limit{1 << 20};
};

// A call that returned rc raised it on the handler of `expected` once (or nothing for
// MPI_SUCCESS); `calls_before` is the number of file-handler calls before it.
void check_raised_on(MPI_File expected, int rc, size_t calls_before) {
    if (rc == MPI_SUCCESS) {
        CHECK(handler_calls.files.size() == calls_before);
        return;
    }
    REQUIRE(handler_calls.files.size() == calls_before + 1);
    CHECK(handler_calls.files.back() == expected);
    CHECK(handler_calls.codes.back() == rc);
}

// The first of statuses[0..n) (in the order the call reported them) whose MPI_ERROR is set.
int first_failed(const std::vector<MPI_Status>& statuses, int n) {
    for (int k = 0; k < n; k++) {
        if (statuses[static_cast<size_t>(k)].MPI_ERROR != MPI_SUCCESS) {
            return k;
        }
    }
    return -1;
}

}  // namespace

TEST_CASE("MPI_Waitall raises a ROMIO request's error on the file of the first that failed", "[romio]") {
    TwoFilesCountingErrors fx;
    const bool b_first = GENERATE(false, true);
    const MPI_File first = b_first ? fx.b.fh : fx.a.fh, second = b_first ? fx.a.fh : fx.b.fh;
    INFO("the first failing request is on file " << (b_first ? "b" : "a"));
    std::vector<MPI_Request> reqs = {good_write(fx.a.fh, fx.block), failing_write(first, fx.block),
                                     good_write(fx.b.fh, fx.block),
                                     failing_write(second, fx.block)};
    std::vector<MPI_Status> st = poisoned_statuses(4);
    alarm(60);
    const int rc = MPI_Waitall(4, reqs.data(), st.data());
    // MPICH's MPI_Waitall stops at the first failed request: the rest stay pending
    CHECK(error_class(rc) == MPI_ERR_IN_STATUS);
    CHECK(st[0].MPI_ERROR == MPI_SUCCESS);
    CHECK(error_class(st[1].MPI_ERROR) == MPI_ERR_IO);
    CHECK(st[2].MPI_ERROR == MPI_ERR_PENDING);
    CHECK(st[3].MPI_ERROR == MPI_ERR_PENDING);
    CHECK(reqs[1] == MPI_REQUEST_NULL);
    CHECK(handler_calls.files == std::vector<MPI_File>{first});
    CHECK(handler_calls.codes == std::vector<int>{rc});

    st = poisoned_statuses(4);
    const int rc_rest = MPI_Waitall(4, reqs.data(), st.data());
    alarm(0);
    CHECK(error_class(rc_rest) == MPI_ERR_IN_STATUS);
    CHECK(st[2].MPI_ERROR == MPI_SUCCESS);
    CHECK(error_class(st[3].MPI_ERROR) == MPI_ERR_IO);
    CHECK(handler_calls.files == std::vector<MPI_File>{first, second});
    CHECK(handler_calls.codes == std::vector<int>{rc, rc_rest});
    CHECK(handler_calls.comm == 0);
    for (MPI_Request r : reqs) {
        CHECK(r == MPI_REQUEST_NULL);
    }
}

TEST_CASE("Testany, Waitsome and get_status_some loops raise each error on its request's file", "[romio]") {
    TwoFilesCountingErrors fx;
    const MPI_File a = fx.a.fh, b = fx.b.fh;
    const std::vector<MPI_File> file_of = {a, b, b, a, a};
    std::vector<MPI_Request> reqs = {failing_write(a, fx.block), good_write(b, fx.block),
                                     failing_write(b, fx.block), good_write(a, fx.block),
                                     failing_write(a, fx.block)};
    const int n = static_cast<int>(reqs.size());
    int completed = 0, failed = 0;
    alarm(60);
    SECTION("MPI_Testany") {
        REQUIRE(poll_until([&] {
            int index = -1, flag = 0;
            const size_t before = handler_calls.files.size();
            const int rc = MPI_Testany(n, reqs.data(), &index, &flag, MPI_STATUS_IGNORE);
            if (flag && index != MPI_UNDEFINED) {
                completed++;
                failed += (rc != MPI_SUCCESS) ? 1 : 0;
                CHECK((rc == MPI_SUCCESS || error_class(rc) == MPI_ERR_IO));
                check_raised_on(file_of[static_cast<size_t>(index)], rc, before);
            } else {
                CHECK(rc == MPI_SUCCESS);
            }
            return completed == n;
        }));
    }
    SECTION("MPI_Waitsome") {
        while (completed < n) {
            int outcount = 0;
            std::vector<int> indices(static_cast<size_t>(n), -1);
            std::vector<MPI_Status> st = poisoned_statuses(n);
            const size_t before = handler_calls.files.size();
            const int rc = MPI_Waitsome(n, reqs.data(), &outcount, indices.data(), st.data());
            REQUIRE(outcount > 0);
            completed += outcount;
            if (rc == MPI_SUCCESS) {
                check_raised_on(MPI_FILE_NULL, rc, before);
                continue;
            }
            CHECK(error_class(rc) == MPI_ERR_IN_STATUS);
            const int k = first_failed(st, outcount);
            REQUIRE(k >= 0);
            check_raised_on(file_of[static_cast<size_t>(indices[static_cast<size_t>(k)])], rc,
                            before);
            for (int j = 0; j < outcount; j++) {
                failed += (st[static_cast<size_t>(j)].MPI_ERROR != MPI_SUCCESS) ? 1 : 0;
            }
        }
    }
    SECTION("MPI_Request_get_status_some, then MPI_Test on each reported index") {
        while (completed < n) {
            int outcount = 0;
            std::vector<int> indices(static_cast<size_t>(n), -1);
            std::vector<MPI_Status> st = poisoned_statuses(n);
            size_t before = handler_calls.files.size();
            const int rc =
                MPI_Request_get_status_some(n, reqs.data(), &outcount, indices.data(), st.data());
            REQUIRE(outcount != MPI_UNDEFINED);
            if (rc == MPI_SUCCESS) {
                check_raised_on(MPI_FILE_NULL, rc, before);
            } else {
                CHECK(error_class(rc) == MPI_ERR_IN_STATUS);
                const int k = first_failed(st, outcount);
                REQUIRE(k >= 0);
                check_raised_on(file_of[static_cast<size_t>(indices[static_cast<size_t>(k)])],
                                rc, before);
            }
            for (int j = 0; j < outcount; j++) {
                const int index = indices[static_cast<size_t>(j)];
                int flag = 0;
                before = handler_calls.files.size();
                const int test_rc = MPI_Test(&reqs[static_cast<size_t>(index)], &flag,
                                             MPI_STATUS_IGNORE);
                CHECK(flag == 1);
                if (rc != MPI_SUCCESS) {
                    CHECK(error_class(test_rc) ==
                          error_class(st[static_cast<size_t>(j)].MPI_ERROR));
                }
                failed += (test_rc != MPI_SUCCESS) ? 1 : 0;
                check_raised_on(file_of[static_cast<size_t>(index)], test_rc, before);
            }
            completed += outcount;
        }
    }
    alarm(0);
    CHECK(completed == n);
    CHECK(failed == 3);
    CHECK(handler_calls.comm == 0);
    for (MPI_Request r : reqs) {
        CHECK(r == MPI_REQUEST_NULL);
    }
}

TEST_CASE("an array call whose first failing request is not a file's raises on the communicator", "[romio]") {
    TwoFilesCountingErrors fx;
    const bool receive_first = GENERATE(true, false);
    INFO((receive_first ? "truncated receive, then failing write" :
                          "failing write, then truncated receive"));
    int in = 0;
    const int out[2] = {1, 2};
    MPI_Request recv = MPI_REQUEST_NULL, send = MPI_REQUEST_NULL;
    REQUIRE(MPI_Irecv(&in, 1, MPI_INT, world_rank(), 7, MPI_COMM_WORLD, &recv) == MPI_SUCCESS);
    REQUIRE(MPI_Isend(out, 2, MPI_INT, world_rank(), 7, MPI_COMM_WORLD, &send) == MPI_SUCCESS);
    MPI_Request write = failing_write(fx.a.fh, fx.block);
    std::vector<MPI_Request> reqs = receive_first ? std::vector<MPI_Request>{recv, write, send} :
                                                    std::vector<MPI_Request>{write, recv, send};
    const size_t r = receive_first ? 0 : 1, w = receive_first ? 1 : 0;
    std::vector<MPI_Status> st = poisoned_statuses(3);
    alarm(60);
    // MPICH's MPI_Waitall stops at the first failed request: the second call gets the other one
    const int rc_first = MPI_Waitall(3, reqs.data(), st.data());
    CHECK(error_class(rc_first) == MPI_ERR_IN_STATUS);
    CHECK(error_class(st[0].MPI_ERROR) == (receive_first ? MPI_ERR_TRUNCATE : MPI_ERR_IO));
    CHECK(st[1].MPI_ERROR == MPI_ERR_PENDING);
    if (receive_first) {
        CHECK(handler_calls.comm == 1);
        CHECK(handler_calls.files.empty());
    } else {
        CHECK(handler_calls.comm == 0);
        CHECK(handler_calls.files == std::vector<MPI_File>{fx.a.fh});
    }
    st = poisoned_statuses(3);
    const int rc_second = MPI_Waitall(3, reqs.data(), st.data());
    alarm(0);
    CHECK(error_class(rc_second) == MPI_ERR_IN_STATUS);
    CHECK(error_class(st[1].MPI_ERROR) == (receive_first ? MPI_ERR_IO : MPI_ERR_TRUNCATE));
    CHECK(st[2].MPI_ERROR == MPI_ERR_PENDING);
    CHECK(handler_calls.comm == 1);
    CHECK(handler_calls.files == std::vector<MPI_File>{fx.a.fh});
    CHECK(MPI_Waitall(3, reqs.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);  // the send
    CHECK(handler_calls.comm == 1);
    CHECK(handler_calls.files.size() == 1);
    CHECK(reqs[r] == MPI_REQUEST_NULL);
    CHECK(reqs[w] == MPI_REQUEST_NULL);
    CHECK(reqs[2] == MPI_REQUEST_NULL);
}

TEST_CASE("a process forked with ROMIO writes in flight closes the file and exits; the parent's land",
          "[romio]") {
    constexpr int kOps = 16;
    constexpr int kInts = 1 << 18;  // 1 MiB each
    PrivateFile file;
    std::vector<std::vector<int>> out(kOps, std::vector<int>(kInts));
    std::vector<MPI_Request> reqs(kOps, MPI_REQUEST_NULL);
    for (int b = 0; b < kOps; b++) {
        for (int j = 0; j < kInts; j++) {
            out[static_cast<size_t>(b)][static_cast<size_t>(j)] = world_rank() * 7919 + b * kInts + j;
        }
        REQUIRE(MPI_File_iwrite_at(file.fh, static_cast<MPI_Offset>(b) * kInts * 4,
                                   out[static_cast<size_t>(b)].data(), kInts, MPI_INT,
                                   &reqs[static_cast<size_t>(b)]) == MPI_SUCCESS);
    }
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        // the child has the parent's operations but no helper performing them: closing the
        // file must not wait for them forever (the watchdog kills a hung child)
        alarm(30);
        _exit(MPI_File_close(&file.fh) == MPI_SUCCESS ? 0 : 3);
    }
    int wstatus = 0;
    REQUIRE(waitpid(child, &wstatus, 0) == child);
    CHECK(WIFEXITED(wstatus));
    CHECK(WEXITSTATUS(wstatus) == 0);

    std::vector<MPI_Status> st(kOps);
    REQUIRE(MPI_Waitall(kOps, reqs.data(), st.data()) == MPI_SUCCESS);
    std::vector<int> in(kInts);
    int wrong = 0;
    for (int b = 0; b < kOps; b++) {
        CHECK(count_of(st[static_cast<size_t>(b)], MPI_BYTE) == kInts * 4);
        REQUIRE(MPI_File_read_at(file.fh, static_cast<MPI_Offset>(b) * kInts * 4, in.data(), kInts,
                                 MPI_INT, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        wrong += (in != out[static_cast<size_t>(b)]) ? 1 : 0;
    }
    CHECK(wrong == 0);
}
