// ROMIO's nonblocking file I/O through its POSIX AIO request class, progressed without threads:
// hundreds of outstanding MPI_File_iwrite_at/iread_at per rank completed by every completion
// call, data read back; an I/O error (EFBIG past RLIMIT_FSIZE) completes with MPI_ERR_IO.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "mpit_support.hpp"

using namespace reqtest;

namespace {

constexpr int kRequests = 256;
constexpr int kBlockInts = 4096;  // 16 KiB per request
constexpr int kBlockBytes = kBlockInts * static_cast<int>(sizeof(int));

// A private file of this rank in a fresh directory, removed at the end.
class PrivateFile {
public:
    PrivateFile() {
        char dir[] = "/tmp/reqstatus-romio-XXXXXX";
        REQUIRE(mkdtemp(dir) != nullptr);
        dir_ = dir;
        path_ = dir_ + "/rank" + std::to_string(world_rank()) + ".dat";
        REQUIRE(MPI_File_open(MPI_COMM_SELF, path_.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR,
                              MPI_INFO_NULL, &fh) == MPI_SUCCESS);
        MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    }
    ~PrivateFile() {
        MPI_File_close(&fh);
        std::remove(path_.c_str());
        rmdir(dir_.c_str());
    }
    PrivateFile(const PrivateFile&) = delete;
    PrivateFile& operator=(const PrivateFile&) = delete;
    MPI_File fh = MPI_FILE_NULL;

private:
    std::string dir_, path_;
};

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

TEST_CASE("hundreds of ROMIO iwrite/iread requests complete through every completion call") {
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

// RLIMIT_FSIZE lowered and SIGXFSZ ignored for the scope: a write past the limit fails with
// EFBIG instead of killing the process.
class FileSizeLimit {
public:
    explicit FileSizeLimit(rlim_t bytes) {
        getrlimit(RLIMIT_FSIZE, &saved_);
        rlimit lowered = saved_;
        lowered.rlim_cur = bytes;
        setrlimit(RLIMIT_FSIZE, &lowered);
        saved_handler_ = signal(SIGXFSZ, SIG_IGN);
    }
    ~FileSizeLimit() {
        setrlimit(RLIMIT_FSIZE, &saved_);
        signal(SIGXFSZ, saved_handler_);
    }
    FileSizeLimit(const FileSizeLimit&) = delete;
    FileSizeLimit& operator=(const FileSizeLimit&) = delete;

private:
    rlimit saved_{};
    sighandler_t saved_handler_ = SIG_DFL;
};

bool says_file_too_large(int code) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, text, &len);
    return std::strstr(text, std::strerror(EFBIG)) != nullptr;
}

}  // namespace

TEST_CASE("an I/O error completes the ROMIO request with MPI_ERR_IO, no hang") {
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
    int file = 0;
    int comm = 0;
    MPI_File file_handle = MPI_FILE_NULL;
    int file_code = MPI_SUCCESS;
};
HandlerCalls handler_calls;

void count_file_error(MPI_File* fh, int* code, ...) {
    handler_calls.file++;
    handler_calls.file_handle = *fh;
    handler_calls.file_code = *code;
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

}  // namespace

TEST_CASE("MPI_Wait and MPI_Test raise a ROMIO request's error on the file's error handler") {
    CountingCommHandlers comm_handlers;
    PrivateFile file;
    handler_calls = HandlerCalls{};
    const bool user_handler = GENERATE(false, true);
    INFO((user_handler ? "a user file error handler" : "MPI_ERRORS_RETURN on the file"));
    MPI_Errhandler counting_file = MPI_ERRHANDLER_NULL;
    if (user_handler) {
        MPI_File_create_errhandler(count_file_error, &counting_file);
        MPI_File_set_errhandler(file.fh, counting_file);
    }
    std::vector<char> block(65536, 'x');
    FileSizeLimit limit(1 << 20);
    MPI_Request req = MPI_REQUEST_NULL;
    REQUIRE(MPI_File_iwrite_at(file.fh, 4 << 20, block.data(), static_cast<int>(block.size()),
                               MPI_CHAR, &req) == MPI_SUCCESS);
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
        CHECK(handler_calls.file == 1);
        CHECK(handler_calls.file_handle == file.fh);
        CHECK(handler_calls.file_code == rc);
        MPI_File_set_errhandler(file.fh, MPI_ERRORS_RETURN);
        MPI_Errhandler_free(&counting_file);
    } else {
        CHECK(handler_calls.file == 0);
    }
}

TEST_CASE("MPI_File_iwrite/iread and the _all forms progress with MPI_Test loops alone") {
    constexpr int kBlocks = 64;
    PrivateFile file;
    std::vector<std::vector<int>> out(kBlocks, std::vector<int>(kBlockInts));
    std::vector<std::vector<int>> in(kBlocks, std::vector<int>(kBlockInts, -1));
    for (int b = 0; b < kBlocks; b++) {
        for (int j = 0; j < kBlockInts; j++) {
            out[static_cast<size_t>(b)][static_cast<size_t>(j)] = expected_value(b, j);
        }
    }
    // completes req by MPI_Test alone, and checks the bytes it moved
    auto test_until_done = [](MPI_Request& req) {
        int flag = 0;
        MPI_Status st;
        REQUIRE(poll_until([&] {
            REQUIRE(MPI_Test(&req, &flag, &st) == MPI_SUCCESS);
            return flag != 0;
        }));
        CHECK(count_of(st, MPI_BYTE) == kBlockBytes);
    };

    SECTION("individual file pointer: MPI_File_iwrite, MPI_File_iread") {
        for (int b = 0; b < kBlocks; b++) {
            MPI_Request req;
            REQUIRE(MPI_File_iwrite(file.fh, out[static_cast<size_t>(b)].data(), kBlockInts,
                                    MPI_INT, &req) == MPI_SUCCESS);
            test_until_done(req);
        }
        MPI_File_seek(file.fh, 0, MPI_SEEK_SET);
        for (int b = 0; b < kBlocks; b++) {
            MPI_Request req;
            REQUIRE(MPI_File_iread(file.fh, in[static_cast<size_t>(b)].data(), kBlockInts,
                                   MPI_INT, &req) == MPI_SUCCESS);
            test_until_done(req);
        }
    }
    SECTION("collective: MPI_File_iwrite_at_all, MPI_File_iread_at_all") {
        for (int b = 0; b < kBlocks; b++) {
            MPI_Request req;
            REQUIRE(MPI_File_iwrite_at_all(file.fh, static_cast<MPI_Offset>(b) * kBlockBytes,
                                           out[static_cast<size_t>(b)].data(), kBlockInts,
                                           MPI_INT, &req) == MPI_SUCCESS);
            test_until_done(req);
        }
        for (int b = 0; b < kBlocks; b++) {
            MPI_Request req;
            REQUIRE(MPI_File_iread_at_all(file.fh, static_cast<MPI_Offset>(b) * kBlockBytes,
                                          in[static_cast<size_t>(b)].data(), kBlockInts, MPI_INT,
                                          &req) == MPI_SUCCESS);
            test_until_done(req);
        }
    }
    int wrong = 0;
    for (int b = 0; b < kBlocks; b++) {
        wrong += (in[static_cast<size_t>(b)] != out[static_cast<size_t>(b)]) ? 1 : 0;
    }
    CHECK(wrong == 0);
}
