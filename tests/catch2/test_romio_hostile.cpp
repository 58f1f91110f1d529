// What a hostile program does to ROMIO's nonblocking I/O, on either engine (the test command
// runs these cases with each): a file closed with writes in flight, writes across the file-size
// limit and onto a full file system, one transfer over Linux's 2 GiB limit, a write the kernel
// stalls with any wait cap. Every byte is read back; every wait runs under a watchdog.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "mpi_test_support.hpp"
#include "mpit_support.hpp"
#include "romio_hostile.hpp"
#include "romio_support.hpp"

using namespace reqtest;

namespace {

constexpr MPI_Offset kMiB = 1 << 20;

void fill(std::vector<char>& v, int seed) {
    for (size_t i = 0; i < v.size(); i++) {
        v[i] = static_cast<char>((seed * 131 + i * 7 + i / 4093) & 0xff);
    }
}

// The completion calls a request can finish through, in turn.
enum class Form { Wait, TestLoop, Waitall, Waitany, Waitsome, Testall, Testany, Testsome, GetStatus };
constexpr Form kForms[] = {Form::Wait,    Form::TestLoop, Form::Waitall,
                           Form::Waitany, Form::Waitsome, Form::Testall,
                           Form::Testany, Form::Testsome, Form::GetStatus};

const char* form_name(Form form) {
    static const char* const names[] = {"MPI_Wait",    "MPI_Test",    "MPI_Waitall",
                                        "MPI_Waitany", "MPI_Waitsome", "MPI_Testall",
                                        "MPI_Testany", "MPI_Testsome", "MPI_Request_get_status"};
    return names[static_cast<int>(form)];
}

// Completes req through form (errors returned); returns the request's error code: the return
// code of the single and any forms, the status's MPI_ERROR of the all and some forms.
int complete_through(Form form, MPI_Request& req, MPI_Status& st) {
    Watchdog watchdog(form_name(form), 120);
    int flag = 0, index = -1, outcount = 0, rc = MPI_SUCCESS;
    switch (form) {
    case Form::Wait:
        return MPI_Wait(&req, &st);
    case Form::TestLoop:
        while (!flag && rc == MPI_SUCCESS) {
            rc = MPI_Test(&req, &flag, &st);
        }
        return rc;
    case Form::Waitall:
        rc = MPI_Waitall(1, &req, &st);
        return rc == MPI_ERR_IN_STATUS ? st.MPI_ERROR : rc;
    case Form::Waitany:
        return MPI_Waitany(1, &req, &index, &st);
    case Form::Waitsome:
        rc = MPI_Waitsome(1, &req, &outcount, &index, &st);
        return rc == MPI_ERR_IN_STATUS ? st.MPI_ERROR : rc;
    case Form::Testall:
        while (!flag && rc == MPI_SUCCESS) {
            rc = MPI_Testall(1, &req, &flag, &st);
        }
        return rc == MPI_ERR_IN_STATUS ? st.MPI_ERROR : rc;
    case Form::Testany:
        while (!flag && rc == MPI_SUCCESS) {
            rc = MPI_Testany(1, &req, &index, &flag, &st);
        }
        return rc;
    case Form::Testsome:
        while (outcount == 0 && rc == MPI_SUCCESS) {
            rc = MPI_Testsome(1, &req, &outcount, &index, &st);
        }
        return rc == MPI_ERR_IN_STATUS ? st.MPI_ERROR : rc;
    case Form::GetStatus:
        while (!flag) {
            MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE);
        }
        return MPI_Wait(&req, &st);
    }
    return MPI_ERR_OTHER;
}

// The file's bytes [offset, offset + n), read back with a blocking read.
std::vector<char> read_back(MPI_File fh, MPI_Offset offset, size_t n) {
    std::vector<char> in(n, 0);
    MPI_Status st;
    REQUIRE(MPI_File_read_at(fh, offset, in.data(), static_cast<int>(n), MPI_CHAR, &st) ==
            MPI_SUCCESS);
    REQUIRE(count_of(st, MPI_CHAR) == static_cast<int>(n));
    return in;
}

MPI_Offset file_size(MPI_File fh) {
    MPI_Offset size = -1;
    REQUIRE(MPI_File_get_size(fh, &size) == MPI_SUCCESS);
    return size;
}

double thread_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double wall_seconds() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// `bytes` bytes of anonymous memory registered with userfaultfd: the first access to them waits
// `stall` seconds, then a handler thread fills the whole range with `content` at once. A kernel
// copy from it (a helper's pwrite, an io-wq worker) blocks for that long, using no CPU.
class StalledBuffer {
public:
    StalledBuffer(const std::vector<char>& content, double stall) : bytes_(content.size()) {
        uffd_ = static_cast<int>(syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK));
        INFO("userfaultfd: " << std::strerror(errno) << " (needs root or vm.unprivileged_userfaultfd=1)");
        REQUIRE(uffd_ >= 0);
        uffdio_api api{};
        api.api = UFFD_API;
        REQUIRE(ioctl(uffd_, UFFDIO_API, &api) == 0);
        void* mem = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        REQUIRE(mem != MAP_FAILED);
        base_ = static_cast<char*>(mem);
        uffdio_register reg{};
        reg.range.start = reinterpret_cast<std::uintptr_t>(base_);
        reg.range.len = bytes_;
        reg.mode = UFFDIO_REGISTER_MODE_MISSING;
        REQUIRE(ioctl(uffd_, UFFDIO_REGISTER, &reg) == 0);
        handler_ = std::thread([this, content, stall] { serve(content, stall); });
    }
    ~StalledBuffer() {
        handler_.join();
        munmap(base_, bytes_);
        close(uffd_);
    }
    StalledBuffer(const StalledBuffer&) = delete;
    StalledBuffer& operator=(const StalledBuffer&) = delete;
    char* data() const { return base_; }

private:
    // waits for the first fault (at most 60 s), sleeps, then fills the range
    void serve(const std::vector<char>& content, double stall) {
        pollfd pfd{uffd_, POLLIN, 0};
        if (poll(&pfd, 1, 60000) != 1) {
            return;
        }
        uffd_msg msg{};
        if (read(uffd_, &msg, sizeof msg) != static_cast<ssize_t>(sizeof msg)) {
            return;
        }
        std::this_thread::sleep_for(std::chrono::duration<double>(stall));
        uffdio_copy copy{};
        copy.dst = reinterpret_cast<std::uintptr_t>(base_);
        copy.src = reinterpret_cast<std::uintptr_t>(content.data());
        copy.len = bytes_;
        ioctl(uffd_, UFFDIO_COPY, &copy);
    }

    size_t bytes_;
    int uffd_ = -1;
    char* base_ = nullptr;
    std::thread handler_;
};

}  // namespace

namespace reqtest {

void check_close_with_writes_in_flight(bool free_before_close) {
    constexpr int kOps = 64;
    std::vector<std::vector<char>> blocks(kOps, std::vector<char>(kMiB));
    std::vector<MPI_Request> reqs(kOps, MPI_REQUEST_NULL);
    PrivateFile file;
    for (int i = 0; i < kOps; i++) {
        fill(blocks[static_cast<size_t>(i)], 900 + i);
        REQUIRE(MPI_File_iwrite_at(file.fh, i * kMiB, blocks[static_cast<size_t>(i)].data(),
                                   static_cast<int>(kMiB), MPI_CHAR,
                                   &reqs[static_cast<size_t>(i)]) == MPI_SUCCESS);
        if (free_before_close) {
            REQUIRE(MPI_Request_free(&reqs[static_cast<size_t>(i)]) == MPI_SUCCESS);
        }
    }
    {
        Watchdog watchdog("MPI_File_close with writes in flight", 120);
        REQUIRE(file.close() == MPI_SUCCESS);
    }
    // likely on the descriptor number the closed file had
    PrivateFile unrelated;
    if (!free_before_close) {
        std::vector<MPI_Status> st(kOps);
        Watchdog watchdog("MPI_Waitall after the close", 120);
        REQUIRE(MPI_Waitall(kOps, reqs.data(), st.data()) == MPI_SUCCESS);
        for (int i = 0; i < kOps; i++) {
            CHECK(count_of(st[static_cast<size_t>(i)], MPI_CHAR) == kMiB);
        }
    }
    CHECK(file_size(unrelated.fh) == 0);
    REQUIRE(file.reopen(MPI_MODE_RDONLY) == MPI_SUCCESS);
    REQUIRE(file_size(file.fh) == kOps * kMiB);
    int intact = 0;
    for (int i = 0; i < kOps; i++) {
        intact += read_back(file.fh, i * kMiB, kMiB) == blocks[static_cast<size_t>(i)];
    }
    CHECK(intact == kOps);
}

void check_writes_across_file_size_limit() {
    ErrorsReturn errors_return;
    // {offset, length}: each crosses the 1 MiB limit (glibc's aio_write reported 65536 of
    // 262144, 1048576 of 3145728, 524288 of 2097152 as success)
    const MPI_Offset cases[][2] = {
        {kMiB - 64 * 1024, 256 * 1024}, {0, 3 * kMiB}, {kMiB / 2, 2 * kMiB}};
    int n = 0;
    for (const Form form : kForms) {
        for (const auto& c : cases) {
            const MPI_Offset offset = c[0], length = c[1];
            PrivateFile file;
            std::vector<char> out(static_cast<size_t>(length));
            fill(out, n++);
            INFO(form_name(form) << ", " << length << " bytes at " << offset);
            MPI_Request req = MPI_REQUEST_NULL;
            MPI_Status st;
            int rc = MPI_SUCCESS;
            {
                FileSizeLimit limit(kMiB);
                REQUIRE(MPI_File_iwrite_at(file.fh, offset, out.data(), static_cast<int>(length),
                                           MPI_CHAR, &req) == MPI_SUCCESS);
                rc = complete_through(form, req, st);
            }
            INFO("error text: " << error_text(rc));
            CHECK(error_class(rc) == MPI_ERR_IO);
            CHECK(error_text(rc).find(std::strerror(EFBIG)) != std::string::npos);
            CHECK(req == MPI_REQUEST_NULL);
            REQUIRE(file_size(file.fh) == kMiB);
            const std::vector<char> in = read_back(file.fh, offset, static_cast<size_t>(kMiB - offset));
            CHECK(std::equal(in.begin(), in.end(), out.begin()));
        }
    }
}

}  // namespace reqtest

TEST_CASE("MPI_File_close with writes in flight, waited after: every byte in its file, none in the next",
          "[romio]") {
    check_close_with_writes_in_flight(false);
}

TEST_CASE("MPI_File_close with writes in flight, freed before: every byte in its file, none in the next",
          "[romio]") {
    check_close_with_writes_in_flight(true);
}

TEST_CASE("writes across the file-size limit fail with EFBIG through every completion call",
          "[romio]") {
    check_writes_across_file_size_limit();
}

TEST_CASE("a failed request completed before its file closes reports its error after", "[romio]") {
    ErrorsReturn errors_return;
    PrivateFile file;
    std::vector<char> block(4096, 'z');
    MPI_Request req = MPI_REQUEST_NULL;
    {
        FileSizeLimit limit(kMiB);
        REQUIRE(MPI_File_iwrite_at(file.fh, 4 * kMiB, block.data(), 4096, MPI_CHAR, &req) ==
                MPI_SUCCESS);
        // complete inside MPI (get_status), not freed: the request outlives its file
        Watchdog watchdog("MPI_Request_get_status loop", 60);
        int flag = 0;
        while (!flag) {
            MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE);
        }
    }
    REQUIRE(file.close() == MPI_SUCCESS);
    MPI_Status st;
    const int rc = MPI_Wait(&req, &st);
    // the file is gone: the error goes where a request without a file sends it (the
    // communicator's handler: MPI_ERRORS_RETURN here), with its class and text intact
    CHECK(error_class(rc) == MPI_ERR_IO);
    CHECK(error_text(rc).find(std::strerror(EFBIG)) != std::string::npos);
    CHECK(req == MPI_REQUEST_NULL);
}

// Hidden: a tmpfs of 1 MiB that the test command mounts (REQSTATUS_SMALL_TMPFS), run alone.
TEST_CASE("writes onto a full file system fail with ENOSPC, with what fits written",
          "[.][romio-full-disk]") {
    const char* dir = std::getenv("REQSTATUS_SMALL_TMPFS");
    REQUIRE(dir != nullptr);
    ErrorsReturn errors_return;
    PrivateFile file(dir);
    std::vector<char> out(2 * kMiB);
    fill(out, 77);
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Status st;
    // the straddling write: part of it fits
    REQUIRE(MPI_File_iwrite_at(file.fh, 0, out.data(), static_cast<int>(out.size()), MPI_CHAR,
                               &req) == MPI_SUCCESS);
    int rc = complete_through(Form::Wait, req, st);
    INFO("error text: " << error_text(rc));
    CHECK(error_class(rc) == MPI_ERR_IO);
    CHECK(error_text(rc).find(std::strerror(ENOSPC)) != std::string::npos);
    const MPI_Offset fitted = file_size(file.fh);
    REQUIRE(fitted > 0);
    REQUIRE(fitted < 2 * kMiB);
    const std::vector<char> in = read_back(file.fh, 0, static_cast<size_t>(fitted));
    CHECK(std::equal(in.begin(), in.end(), out.begin()));
    // writes on the full disk, through every completion call
    for (const Form form : kForms) {
        INFO(form_name(form));
        REQUIRE(MPI_File_iwrite_at(file.fh, fitted, out.data(), 65536, MPI_CHAR, &req) ==
                MPI_SUCCESS);
        rc = complete_through(form, req, st);
        CHECK(error_class(rc) == MPI_ERR_IO);
        CHECK(error_text(rc).find(std::strerror(ENOSPC)) != std::string::npos);
    }
    CHECK(file_size(file.fh) == fitted);
}

// Hidden: 5 GiB of memory, run alone with -n 1.
TEST_CASE("one nonblocking write and read of 2.5 GiB move every byte", "[.][romio-huge]") {
    constexpr int kInts = 671088640;    // 2.5 GiB
    const size_t bytes = static_cast<size_t>(kInts) * sizeof(int);
    struct statvfs shm {};
    const bool in_memory = statvfs("/dev/shm", &shm) == 0 &&
                           static_cast<double>(shm.f_bavail) * shm.f_frsize > 3.0 * bytes;
    PrivateFile file(in_memory ? "/dev/shm" : "/tmp");
    std::vector<int> out(kInts);
    for (int i = 0; i < kInts; i++) {
        out[static_cast<size_t>(i)] = i ^ 0x5a5a5a5a;
    }
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Status st;
    REQUIRE(MPI_File_iwrite_at(file.fh, 0, out.data(), kInts, MPI_INT, &req) == MPI_SUCCESS);
    {
        Watchdog watchdog("MPI_Wait on a write of 2.5 GiB", 300);
        REQUIRE(MPI_Wait(&req, &st) == MPI_SUCCESS);
    }
    CHECK(count_of(st, MPI_INT) == kInts);
    CHECK(static_cast<size_t>(file_size(file.fh)) == bytes);
    std::vector<int> in(kInts, -1);
    REQUIRE(MPI_File_iread_at(file.fh, 0, in.data(), kInts, MPI_INT, &req) == MPI_SUCCESS);
    {
        Watchdog watchdog("MPI_Wait on a read of 2.5 GiB", 300);
        REQUIRE(MPI_Wait(&req, &st) == MPI_SUCCESS);
    }
    CHECK(count_of(st, MPI_INT) == kInts);
    CHECK(std::memcmp(in.data(), out.data(), bytes) == 0);
}

// Hidden, alone in its process: the class's first request waits with the cap itself, a later
// one once it is older than the class's mean latency (the first stall). userfaultfd on kernel
// accesses needs root (or vm.unprivileged_userfaultfd=1).
TEST_CASE("a write the kernel stalls: MPI_Wait sleeps whatever the wait cap", "[.][romio-stall]") {
    const double caps[] = {std::numeric_limits<double>::infinity(), 1e20, 0.04};
    const double stalls[] = {1.0, 2.5, 2.5};
    int n = 0;
    for (const double cap : caps) {
        const double stall = stalls[n];
        INFO("MPIR_CVAR_GREQUEST_WAIT_TIMEOUT_MAX = " << cap << ", stall " << stall << " s");
        CvarSetting<double> setting("MPIR_CVAR_GREQUEST_WAIT_TIMEOUT_MAX", cap);
        REQUIRE(setting.ok());
        std::vector<char> content(kMiB);
        fill(content, 300 + n++);
        PrivateFile file;
        StalledBuffer buffer(content, stall);
        MPI_Request req = MPI_REQUEST_NULL;
        MPI_Status st;
        const double wall0 = wall_seconds(), cpu0 = thread_cpu_seconds();
        REQUIRE(MPI_File_iwrite_at(file.fh, 0, buffer.data(), static_cast<int>(kMiB), MPI_CHAR,
                                   &req) == MPI_SUCCESS);
        {
            Watchdog watchdog("MPI_Wait on a stalled write", 120);
            REQUIRE(MPI_Wait(&req, &st) == MPI_SUCCESS);
        }
        const double wall = wall_seconds() - wall0, cpu = thread_cpu_seconds() - cpu0;
        INFO("wall " << wall << " s, CPU of the waiting thread " << cpu << " s");
        CHECK(count_of(st, MPI_CHAR) == kMiB);
        CHECK(wall >= 0.9 * stall);   // the stall happened inside the measurement
        CHECK(cpu < 0.25 * wall);
        CHECK(read_back(file.fh, 0, kMiB) == content);
    }
}

// Hidden, with [romio-stall]'s needs: MPI_File_close waits for a stalled write without ROMIO's
// lock, so another thread's I/O on another file goes on meanwhile.
TEST_CASE("closing a file whose write the kernel stalls leaves other threads' I/O going",
          "[.][romio-stall]") {
    constexpr double kStall = 1.5;
    std::vector<char> content(kMiB);
    fill(content, 400);
    PrivateFile stalled_file, other_file;
    StalledBuffer buffer(content, kStall);
    MPI_Request req = MPI_REQUEST_NULL;
    REQUIRE(MPI_File_iwrite_at(stalled_file.fh, 0, buffer.data(), static_cast<int>(kMiB), MPI_CHAR,
                               &req) == MPI_SUCCESS);
    REQUIRE(MPI_Request_free(&req) == MPI_SUCCESS);
    std::atomic<bool> closing_done{false};
    double slowest = 0;
    int writes = 0;
    std::thread other([&] {
        std::vector<char> block(4096, 'o');
        while (!closing_done.load()) {
            MPI_Request r = MPI_REQUEST_NULL;
            const double t0 = wall_seconds();
            if (MPI_File_iwrite_at(other_file.fh, 0, block.data(), 4096, MPI_CHAR, &r) != MPI_SUCCESS ||
                MPI_Wait(&r, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
                slowest = 1e9;
                return;
            }
            slowest = std::max(slowest, wall_seconds() - t0);
            writes++;
        }
    });
    const double t0 = wall_seconds();
    {
        Watchdog watchdog("MPI_File_close of a stalled file", 120);
        CHECK(stalled_file.close() == MPI_SUCCESS);
    }
    const double close_seconds = wall_seconds() - t0;
    closing_done = true;
    other.join();
    INFO("close " << close_seconds << " s; the other thread's slowest write " << slowest << " s, "
                  << writes << " writes");
    CHECK(close_seconds >= 0.5 * kStall);   // the close waited for the stalled write
    CHECK(slowest < 0.25 * kStall);
    CHECK(writes > 10);
    REQUIRE(stalled_file.reopen(MPI_MODE_RDONLY) == MPI_SUCCESS);
    CHECK(read_back(stalled_file.fh, 0, kMiB) == content);
}
