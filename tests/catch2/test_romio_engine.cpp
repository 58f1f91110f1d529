// The engine of ROMIO's nonblocking contiguous I/O (MPIR_CVAR_ROMIO_NBIO_ENGINE: io_uring or
// POSIX AIO): the one chosen is what MPI_T and the file's hints report, and the kernel's answer
// decides it under auto; no thread but the application's moves the data on io_uring; reads at
// the end of the file, empty transfers, more operations than the ring holds, operations whose
// submitting thread exits. The test command runs these cases with each engine; the hidden
// [romio-seccomp-*] cases, each in a process of its own, make io_uring_setup fail with a seccomp
// filter (and run the hostile programs of test_romio_hostile.cpp on the POSIX AIO it gives).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "mpi_test_support.hpp"
#include "mpit_support.hpp"
#include "process_tasks.hpp"
#include "romio_hostile.hpp"
#include "romio_support.hpp"

using namespace reqtest;

namespace {

const char* const kEngineCvar = "MPIR_CVAR_ROMIO_NBIO_ENGINE";

// Whether the kernel sets an io_uring up with what ROMIO requires (EXT_ARG, NODROP), asked
// directly: what "auto" must find.
bool kernel_accepts_io_uring() {
    io_uring_params params{};
    const long fd = syscall(__NR_io_uring_setup, 4, &params);
    if (fd < 0) {
        return false;
    }
    close(static_cast<int>(fd));
    return (params.features & IORING_FEAT_EXT_ARG) && (params.features & IORING_FEAT_NODROP);
}

// The engine this run asks for in the environment: auto, io_uring or posix.
std::string engine_asked() {
    const char* env = std::getenv(kEngineCvar);
    return env != nullptr && *env != '\0' ? env : "auto";
}

// What a file's hint romio_nbio_engine must say in this run.
std::string engine_expected() {
    const std::string asked = engine_asked();
    if (asked == "posix") {
        return "posix";
    }
    if (asked == "io_uring") {
        return kernel_accepts_io_uring() ? "io_uring" : "unavailable";
    }
    return kernel_accepts_io_uring() ? "io_uring" : "posix";
}

// The enumeration value of an engine's name: the order of the items in the control variable's
// description (auto 0, io_uring 1, posix 2), the values MPICH gives an enum variable.
int engine_value(const std::string& name) {
    return name == "auto" ? 0 : name == "io_uring" ? 1 : 2;
}

// The control variable's value through MPI_T, as the name of its item: through the variable's
// enumeration when it has one (MPICH 4.0.2 registers enum variables as plain MPI_INT, with
// MPI_T_ENUM_NULL), else by engine_value's order.
std::string engine_cvar_value() {
    int provided = 0, index = -1, count = 0, value = -1;
    REQUIRE(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS);
    REQUIRE(MPI_T_cvar_get_index(kEngineCvar, &index) == MPI_SUCCESS);
    MPI_T_cvar_handle handle = MPI_T_CVAR_HANDLE_NULL;
    REQUIRE(MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) == MPI_SUCCESS);
    REQUIRE(count == 1);
    REQUIRE(MPI_T_cvar_read(handle, &value) == MPI_SUCCESS);
    MPI_T_cvar_handle_free(&handle);
    char name[128];
    int name_len = sizeof(name), verbosity = 0, binding = 0, scope = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_T_enum enumtype = MPI_T_ENUM_NULL;
    REQUIRE(MPI_T_cvar_get_info(index, name, &name_len, &verbosity, &type, &enumtype, nullptr,
                                nullptr, &binding, &scope) == MPI_SUCCESS);
    REQUIRE(type == MPI_INT);
    std::string found;
    if (enumtype == MPI_T_ENUM_NULL) {
        for (const char* item : {"auto", "io_uring", "posix"}) {
            if (engine_value(item) == value) {
                found = item;
            }
        }
    } else {
        int items = 0;
        char enum_name[64];
        int enum_name_len = sizeof(enum_name);
        REQUIRE(MPI_T_enum_get_info(enumtype, &items, enum_name, &enum_name_len) == MPI_SUCCESS);
        for (int i = 0; i < items; i++) {
            int item_value = -1;
            char item[64];
            int item_len = sizeof(item);
            REQUIRE(MPI_T_enum_get_item(enumtype, i, &item_value, item, &item_len) == MPI_SUCCESS);
            if (item_value == value) {
                found = item;
            }
        }
    }
    MPI_T_finalize();
    return found;
}

// The threads of this process that run user code (the kernel's io_uring workers left out)
std::set<int> user_threads() {
    const std::vector<process_tasks::Task> tasks = process_tasks::list();
    REQUIRE(!tasks.empty());
    std::set<int> tids;
    for (const process_tasks::Task& task : tasks) {
        if (!task.io_worker) {
            tids.insert(task.tid);
        }
    }
    return tids;
}

void fill(std::vector<int>& v, int seed) {
    for (size_t i = 0; i < v.size(); i++) {
        v[i] = seed * 7919 + static_cast<int>(i);
    }
}

// A seccomp filter on this thread (and the threads it creates) that fails io_uring_setup with
// err; nothing else changes. It cannot be taken off: the process runs only this case.
void refuse_io_uring_setup(int err) {
#if defined(__x86_64__)
    const unsigned arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
    const unsigned arch = AUDIT_ARCH_AARCH64;
#else
    FAIL("no seccomp architecture constant for this machine in the test");
    const unsigned arch = 0;
#endif
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (static_cast<unsigned>(err) & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog prog{};
    prog.len = static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0]));
    prog.filter = filter;
    REQUIRE(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
    REQUIRE(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0);
    REQUIRE_FALSE(kernel_accepts_io_uring());
}

// Under auto, the refused kernel gives POSIX AIO, and the I/O works; io_uring asked for then
// fails each operation with MPI_ERR_IO and the kernel's reason.
void check_fallback(int err) {
    REQUIRE(engine_asked() == "auto");
    refuse_io_uring_setup(err);
    {
        PrivateFile file;
        CHECK(file_hint(file.fh, "romio_nbio_engine") == "posix");
        CHECK(engine_cvar_value() == "posix");
        std::vector<int> out(16384), in(16384, -1);
        fill(out, 3);
        MPI_Request req = MPI_REQUEST_NULL;
        MPI_Status st;
        REQUIRE(MPI_File_iwrite_at(file.fh, 0, out.data(), 16384, MPI_INT, &req) == MPI_SUCCESS);
        REQUIRE(MPI_Wait(&req, &st) == MPI_SUCCESS);
        CHECK(count_of(st, MPI_INT) == 16384);
        REQUIRE(MPI_File_iread_at(file.fh, 0, in.data(), 16384, MPI_INT, &req) == MPI_SUCCESS);
        REQUIRE(MPI_Wait(&req, &st) == MPI_SUCCESS);
        CHECK(in == out);
    }
    CvarSetting<int> forced(kEngineCvar, engine_value("io_uring"));
    REQUIRE(forced.ok());
    PrivateFile file;
    CHECK(file_hint(file.fh, "romio_nbio_engine") == "unavailable");
    int value = 1;
    MPI_Request req = MPI_REQUEST_NULL;
    const int rc = MPI_File_iwrite_at(file.fh, 0, &value, 1, MPI_INT, &req);
    CHECK(error_class(rc) == MPI_ERR_IO);
    INFO("error text: " << error_text(rc));
    CHECK(error_text(rc).find(std::strerror(err)) != std::string::npos);
    CHECK(req == MPI_REQUEST_NULL);
}

}  // namespace

TEST_CASE("the engine of nonblocking I/O is the one MPI_T and the file's hints report", "[romio]") {
    PrivateFile file;
    const std::string expected = engine_expected();
    CHECK(file_hint(file.fh, "romio_nbio_engine") == expected);
    // auto reads back as the engine chosen; io_uring refused stays io_uring
    CHECK(engine_cvar_value() == (expected == "unavailable" ? "io_uring" : expected));
}

TEST_CASE("io_uring moves the data with no thread but the application's; POSIX AIO with helpers",
          "[romio]") {
    PrivateFile file;
    const std::string engine = file_hint(file.fh, "romio_nbio_engine");
    REQUIRE((engine == "io_uring" || engine == "posix"));
    const std::set<int> before = user_threads();
    constexpr int kOps = 32, kInts = 1 << 18;   // 1 MiB each
    std::vector<std::vector<int>> blocks(kOps, std::vector<int>(kInts));
    std::vector<MPI_Request> reqs(kOps, MPI_REQUEST_NULL);
    for (int i = 0; i < kOps; i++) {
        fill(blocks[static_cast<size_t>(i)], i);
        REQUIRE(MPI_File_iwrite_at(file.fh, static_cast<MPI_Offset>(i) * kInts * 4,
                                   blocks[static_cast<size_t>(i)].data(), kInts, MPI_INT,
                                   &reqs[static_cast<size_t>(i)]) == MPI_SUCCESS);
    }
    const std::set<int> during = user_threads();
    REQUIRE(MPI_Waitall(kOps, reqs.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    const std::set<int> after = user_threads();
    std::vector<int> new_during, new_after;
    std::set_difference(during.begin(), during.end(), before.begin(), before.end(),
                        std::back_inserter(new_during));
    std::set_difference(after.begin(), after.end(), before.begin(), before.end(),
                        std::back_inserter(new_after));
    if (engine == "io_uring") {
        CHECK(new_during.empty());
        CHECK(new_after.empty());
    } else {
        // glibc's helpers: created by aio_write, or left by an earlier case and reused
        CHECK(during.size() > 1);
    }
    std::vector<int> in(kInts);
    for (int i = 0; i < kOps; i += 7) {
        REQUIRE(MPI_File_read_at(file.fh, static_cast<MPI_Offset>(i) * kInts * 4, in.data(), kInts,
                                 MPI_INT, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        CHECK(in == blocks[static_cast<size_t>(i)]);
    }
}

TEST_CASE("nonblocking reads stop at the end of the file; empty transfers complete", "[romio]") {
    PrivateFile file;
    std::vector<char> out(1000), in(4096, 0);
    for (size_t i = 0; i < out.size(); i++) {
        out[i] = static_cast<char>('a' + i % 26);
    }
    REQUIRE(MPI_File_write_at(file.fh, 0, out.data(), 1000, MPI_CHAR, MPI_STATUS_IGNORE) ==
            MPI_SUCCESS);
    MPI_Request reqs[4];
    REQUIRE(MPI_File_iread_at(file.fh, 0, in.data(), 4096, MPI_CHAR, &reqs[0]) == MPI_SUCCESS);
    char past[16];
    REQUIRE(MPI_File_iread_at(file.fh, 5000, past, 16, MPI_CHAR, &reqs[1]) == MPI_SUCCESS);
    REQUIRE(MPI_File_iwrite_at(file.fh, 100, out.data(), 0, MPI_CHAR, &reqs[2]) == MPI_SUCCESS);
    REQUIRE(MPI_File_iread_at(file.fh, 0, past, 0, MPI_CHAR, &reqs[3]) == MPI_SUCCESS);
    MPI_Status st[4];
    REQUIRE(MPI_Waitall(4, reqs, st) == MPI_SUCCESS);
    CHECK(count_of(st[0], MPI_CHAR) == 1000);
    CHECK(std::equal(out.begin(), out.end(), in.begin()));
    CHECK(count_of(st[1], MPI_CHAR) == 0);
    CHECK(count_of(st[2], MPI_CHAR) == 0);
    CHECK(count_of(st[3], MPI_CHAR) == 0);
    MPI_Offset size = -1;
    MPI_File_get_size(file.fh, &size);
    CHECK(size == 1000);
}

TEST_CASE("more operations in flight than the io_uring completion queue holds all complete",
          "[romio]") {
    PrivateFile file;
    constexpr int kOps = 9000, kInts = 64;  // 256 bytes each; the ring holds 8192
    std::vector<int> out(static_cast<size_t>(kOps) * kInts), in(out.size(), -1);
    fill(out, 11);
    std::vector<MPI_Request> reqs(kOps, MPI_REQUEST_NULL);
    for (int i = 0; i < kOps; i++) {
        REQUIRE(MPI_File_iwrite_at(file.fh, static_cast<MPI_Offset>(i) * kInts * 4,
                                   &out[static_cast<size_t>(i) * kInts], kInts, MPI_INT,
                                   &reqs[static_cast<size_t>(i)]) == MPI_SUCCESS);
    }
    std::vector<MPI_Status> st(kOps);
    REQUIRE(MPI_Waitall(kOps, reqs.data(), st.data()) == MPI_SUCCESS);
    CHECK(std::all_of(st.begin(), st.end(), [](const MPI_Status& s) {
        return count_of(s, MPI_INT) == kInts;
    }));
    for (int i = 0; i < kOps; i++) {
        REQUIRE(MPI_File_iread_at(file.fh, static_cast<MPI_Offset>(i) * kInts * 4,
                                  &in[static_cast<size_t>(i) * kInts], kInts, MPI_INT,
                                  &reqs[static_cast<size_t>(i)]) == MPI_SUCCESS);
    }
    std::vector<int> indices(kOps);
    for (int done = 0; done < kOps;) {
        int outcount = 0;
        REQUIRE(MPI_Waitsome(kOps, reqs.data(), &outcount, indices.data(), st.data()) ==
                MPI_SUCCESS);
        REQUIRE(outcount != MPI_UNDEFINED);
        done += outcount;
    }
    CHECK(in == out);
}

TEST_CASE("operations whose submitting thread exits before they complete still complete",
          "[romio]") {
    PrivateFile file;
    constexpr int kOps = 64, kInts = 16384;  // 64 KiB each: buffered writes the kernel defers
    std::vector<std::vector<int>> blocks(kOps, std::vector<int>(kInts));
    std::vector<MPI_Request> reqs(kOps, MPI_REQUEST_NULL);
    std::vector<int> issued(kOps, MPI_ERR_OTHER);
    std::thread submitter([&] {
        for (int i = 0; i < kOps; i++) {
            fill(blocks[static_cast<size_t>(i)], 100 + i);
            issued[static_cast<size_t>(i)] = MPI_File_iwrite_at(
                file.fh, static_cast<MPI_Offset>(i) * kInts * 4,
                blocks[static_cast<size_t>(i)].data(), kInts, MPI_INT, &reqs[static_cast<size_t>(i)]);
        }
    });
    submitter.join();
    REQUIRE(std::all_of(issued.begin(), issued.end(), [](int rc) { return rc == MPI_SUCCESS; }));
    std::vector<MPI_Status> st(kOps);
    REQUIRE(MPI_Waitall(kOps, reqs.data(), st.data()) == MPI_SUCCESS);
    std::vector<int> in(kInts);
    for (int i = 0; i < kOps; i++) {
        CHECK(count_of(st[static_cast<size_t>(i)], MPI_INT) == kInts);
        REQUIRE(MPI_File_read_at(file.fh, static_cast<MPI_Offset>(i) * kInts * 4, in.data(), kInts,
                                 MPI_INT, MPI_STATUS_IGNORE) == MPI_SUCCESS);
        CHECK(in == blocks[static_cast<size_t>(i)]);
    }
}

// Hidden: MPI_Request_free on requests in flight (legal), then MPI_Finalize (after the case).
// MPICH calls free_fn at once and polls the requests until they complete: neither engine may
// drop their state before (POSIX AIO crashed in MPI_Finalize); the close waits for the writes,
// and MPI_Finalize meets requests whose results are recorded but not yet completed.
TEST_CASE("ROMIO requests freed before they complete, then MPI_Finalize",
          "[.][romio-finalize-pending]") {
    PrivateFile file;
    static std::vector<int> block(1 << 18, 7);   // must outlive the operations: MPI_Finalize
    for (int i = 0; i < 16; i++) {
        MPI_Request req = MPI_REQUEST_NULL;
        REQUIRE(MPI_File_iwrite_at(file.fh, static_cast<MPI_Offset>(i) << 20, block.data(),
                                   1 << 18, MPI_INT, &req) == MPI_SUCCESS);
        REQUIRE(MPI_Request_free(&req) == MPI_SUCCESS);
    }
    REQUIRE(file.close() == MPI_SUCCESS);   // waits for the writes
    MPI_Offset size = 0;
    REQUIRE(file.reopen(MPI_MODE_RDONLY) == MPI_SUCCESS);
    MPI_File_get_size(file.fh, &size);
    CHECK(size == (MPI_Offset{16} << 20));
}

// Hidden: each changes the process for good (tests/catch2/*.catch2 run each alone)
TEST_CASE("auto falls back to POSIX AIO when io_uring_setup fails with ENOSYS",
          "[.][romio-seccomp-enosys]") {
    check_fallback(ENOSYS);
}

TEST_CASE("auto falls back to POSIX AIO when io_uring_setup fails with EPERM",
          "[.][romio-seccomp-eperm]") {
    check_fallback(EPERM);
}

TEST_CASE("on the POSIX AIO auto falls back to, hostile programs lose no byte",
          "[.][romio-seccomp-hostile]") {
    REQUIRE(engine_asked() == "auto");
    refuse_io_uring_setup(ENOSYS);
    {
        PrivateFile file;
        REQUIRE(file_hint(file.fh, "romio_nbio_engine") == "posix");
    }
    check_close_with_writes_in_flight(false);
    check_close_with_writes_in_flight(true);
    check_writes_across_file_size_limit();
}
