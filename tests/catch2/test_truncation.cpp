// A message longer than its receive: MPI_ERR_TRUNCATE, the receive's count, nothing written
// past the buffer, and the next message from the same peer still arrives. Through every
// receive form and on both sides of the eager limit of libfabric's rxm (16 KiB): libfabric 1.17's
// tcp;ofi_rxm closed the connection on a truncated eager message (ofiwg/libfabric#8274), which
// the run through the netmod (MPIR_CVAR_NOLOCAL=1) and the two-host run catch.
#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"

using namespace reqtest;

namespace {

constexpr int kDataTag = 1;
constexpr int kNextTag = 2;
constexpr size_t kCanary = 64;
constexpr unsigned char kCanaryByte = 0xc3;

int pair_peer() { return world_rank() ^ 1; }
bool receives() { return world_rank() % 2 == 1; }

// bytes of buf[from, to) no longer the canary
size_t canary_changed(const std::vector<unsigned char>& buf, size_t from, size_t to) {
    size_t changed = 0;
    for (size_t i = from; i < to; i++) {
        changed += buf[i] != kCanaryByte;
    }
    return changed;
}

unsigned char pattern(size_t i, int seq) { return static_cast<unsigned char>(i * 7 + seq * 13 + 1); }

// receive `bytes` bytes as MPI_BYTE into buf; returns the call's code, fills st
using ByteReceive = std::function<int(MPI_Comm, unsigned char*, int, MPI_Status*)>;

const std::vector<std::pair<std::string, ByteReceive>>& receive_forms() {
    static const std::vector<std::pair<std::string, ByteReceive>> forms = {
        {"MPI_Recv",
         [](MPI_Comm c, unsigned char* b, int n, MPI_Status* st) {
             return MPI_Recv(b, n, MPI_BYTE, pair_peer(), kDataTag, c, st);
         }},
        {"MPI_Irecv + MPI_Wait",
         [](MPI_Comm c, unsigned char* b, int n, MPI_Status* st) {
             MPI_Request r;
             MPI_Irecv(b, n, MPI_BYTE, pair_peer(), kDataTag, c, &r);
             return MPI_Wait(&r, st);
         }},
        {"MPI_Irecv from MPI_ANY_SOURCE + MPI_Waitall",
         [](MPI_Comm c, unsigned char* b, int n, MPI_Status* st) {
             MPI_Request r;
             MPI_Irecv(b, n, MPI_BYTE, MPI_ANY_SOURCE, kDataTag, c, &r);
             int rc = MPI_Waitall(1, &r, st);
             return rc == MPI_ERR_IN_STATUS ? st->MPI_ERROR : rc;
         }},
        {"MPI_Recv_init + MPI_Start + MPI_Wait",
         [](MPI_Comm c, unsigned char* b, int n, MPI_Status* st) {
             MPI_Request r;
             MPI_Recv_init(b, n, MPI_BYTE, pair_peer(), kDataTag, c, &r);
             MPI_Start(&r);
             int rc = MPI_Wait(&r, st);
             MPI_Request_free(&r);
             return rc;
         }},
        {"MPI_Mprobe + MPI_Mrecv",
         [](MPI_Comm c, unsigned char* b, int n, MPI_Status* st) {
             MPI_Message m;
             MPI_Mprobe(pair_peer(), kDataTag, c, &m, st);
             return MPI_Mrecv(b, n, MPI_BYTE, &m, st);
         }},
        {"MPI_Improbe + MPI_Imrecv + MPI_Wait",
         [](MPI_Comm c, unsigned char* b, int n, MPI_Status* st) {
             MPI_Message m;
             int flag = 0;
             while (!flag) {
                 MPI_Improbe(pair_peer(), kDataTag, c, &flag, &m, st);
             }
             MPI_Request r;
             MPI_Imrecv(b, n, MPI_BYTE, &m, &r);
             return MPI_Wait(&r, st);
         }},
    };
    return forms;
}

struct Sizes {
    int received;
    int sent;
};

// eager into small and into just-under-the-limit receives, rendezvous into receives below
// and above the eager limit
const std::vector<Sizes> kSizes = {{4, 8},       {1, 16384},      {100, 16000},
                                   {16000, 16385}, {4, 100000}, {20000, 40000}};

// the follow-up message: it must arrive after the truncation
void exchange_next(MPI_Comm comm, int seq) {
    int next[4] = {seq, seq + 1, seq + 2, seq + 3};
    if (receives()) {
        int got[4] = {-1, -1, -1, -1};
        MPI_Status st = poisoned_status();
        REQUIRE(MPI_Recv(got, 4, MPI_INT, pair_peer(), kNextTag, comm, &st) == MPI_SUCCESS);
        CHECK(std::vector<int>(got, got + 4) == std::vector<int>(next, next + 4));
        CHECK(count_of(st, MPI_INT) == 4);
    } else {
        REQUIRE(MPI_Send(next, 4, MPI_INT, pair_peer(), kNextTag, comm) == MPI_SUCCESS);
    }
}

class ReturningComm {
public:
    ReturningComm() {
        MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
        MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    }
    ~ReturningComm() { MPI_Comm_free(&comm_); }
    ReturningComm(const ReturningComm&) = delete;
    ReturningComm& operator=(const ReturningComm&) = delete;
    MPI_Comm get() const { return comm_; }

private:
    MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace

TEST_CASE("truncation: every receive form gets MPI_ERR_TRUNCATE, its own bytes, and the next "
          "message",
          "[truncate]") {
    REQUIRE(world_size() % 2 == 0);
    ErrorsReturn errors_return;  // the array forms raise on MPI_COMM_WORLD, as stock does
    ReturningComm comm;
    int seq = 0;
    for (const auto& [name, receive] : receive_forms()) {
        for (const Sizes& size : kSizes) {
            ++seq;
            DYNAMIC_SECTION(name << ", " << size.received << " B receive, " << size.sent
                                 << " B message") {
                Watchdog dog("truncation " + name);
                if (receives()) {
                    std::vector<unsigned char> buf(size.received + kCanary, kCanaryByte);
                    MPI_Status st = poisoned_status();
                    int rc = receive(comm.get(), buf.data(), size.received, &st);
                    CHECK(error_class(rc) == MPI_ERR_TRUNCATE);
                    CHECK(st.MPI_SOURCE == pair_peer());
                    CHECK(st.MPI_TAG == kDataTag);
                    CHECK(count_of(st, MPI_BYTE) == size.received);
                    // MPI leaves what a truncated receive holds open (MPICH's shared memory
                    // drops a segmented message's data); past the buffer nothing may change
                    size_t past = 0;
                    for (size_t i = size.received; i < buf.size(); i++) {
                        past += buf[i] != kCanaryByte;
                    }
                    CHECK(past == 0);
                } else {
                    std::vector<unsigned char> msg(size.sent);
                    for (int i = 0; i < size.sent; i++) {
                        msg[i] = pattern(i, seq);
                    }
                    REQUIRE(MPI_Send(msg.data(), size.sent, MPI_BYTE, pair_peer(), kDataTag,
                                     comm.get()) == MPI_SUCCESS);
                }
                exchange_next(comm.get(), seq);
            }
        }
    }
}

TEST_CASE("truncation: a noncontiguous receive gets its elements and the next message",
          "[truncate]") {
    REQUIRE(world_size() % 2 == 0);
    ErrorsReturn errors_return;  // the array forms raise on MPI_COMM_WORLD, as stock does
    ReturningComm comm;
    MPI_Datatype every_other;  // 2 ints, one apart: 8 bytes of data in an extent of 12
    MPI_Type_vector(2, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    for (int sent_ints : {8, 5000}) {  // eager and rendezvous
        DYNAMIC_SECTION(sent_ints << " ints into 2 vectors of 2") {
            Watchdog dog("noncontiguous truncation");
            if (receives()) {
                std::vector<int> buf(16, -1);
                MPI_Status st = poisoned_status();
                int rc = MPI_Recv(buf.data(), 2, every_other, pair_peer(), kDataTag, comm.get(), &st);
                CHECK(error_class(rc) == MPI_ERR_TRUNCATE);
                CHECK(count_of(st, MPI_BYTE) == 16);
                // the gaps and what lies past the second vector (an extent is 3 ints) untouched
                CHECK(buf[1] == -1);
                CHECK(buf[4] == -1);
                CHECK(std::vector<int>(buf.begin() + 6, buf.end()) == std::vector<int>(10, -1));
            } else {
                std::vector<int> msg(sent_ints);
                for (int i = 0; i < sent_ints; i++) {
                    msg[i] = 100 + i;
                }
                REQUIRE(MPI_Send(msg.data(), sent_ints, MPI_INT, pair_peer(), kDataTag,
                                 comm.get()) == MPI_SUCCESS);
            }
            exchange_next(comm.get(), sent_ints);
        }
    }
    MPI_Type_free(&every_other);
}

TEST_CASE("truncation: two blocks of 10000 bytes take 20000 of a 30000-byte message",
          "[truncate]") {
    REQUIRE(world_size() % 2 == 0);
    ReturningComm comm;
    MPI_Datatype two_blocks;  // 10000 bytes, a gap of 2000, 10000 bytes: few blocks, above 16 KiB
    MPI_Type_vector(2, 10000, 12000, MPI_BYTE, &two_blocks);
    MPI_Type_commit(&two_blocks);
    Watchdog dog("two-block truncation");
    if (receives()) {
        std::vector<unsigned char> buf(24000, kCanaryByte);
        MPI_Status st = poisoned_status();
        int rc = MPI_Recv(buf.data(), 1, two_blocks, pair_peer(), kDataTag, comm.get(), &st);
        CHECK(error_class(rc) == MPI_ERR_TRUNCATE);
        CHECK(count_of(st, MPI_BYTE) == 20000);
        // the gap and what lies past the second block
        CHECK(canary_changed(buf, 10000, 12000) + canary_changed(buf, 22000, buf.size()) == 0);
    } else {
        std::vector<unsigned char> msg(30000, 0x11);
        REQUIRE(MPI_Send(msg.data(), 30000, MPI_BYTE, pair_peer(), kDataTag, comm.get()) ==
                MPI_SUCCESS);
    }
    exchange_next(comm.get(), 7);
    MPI_Type_free(&two_blocks);
}

namespace {

int world_handler_calls = 0;
void count_world_error(MPI_Comm*, int*, ...) { world_handler_calls++; }

}  // namespace

TEST_CASE("truncation: MPI_Request_get_status raises on the receive's communicator, not "
          "MPI_COMM_WORLD's",
          "[truncate]") {
    REQUIRE(world_size() % 2 == 0);
    MPI_Errhandler counting;
    MPI_Comm_create_errhandler(count_world_error, &counting);
    world_handler_calls = 0;
    {
        CommErrhandlers world_counts(counting);
        ReturningComm comm;
        Watchdog dog("get_status truncation");
        if (receives()) {
            std::vector<unsigned char> buf(100 + kCanary, kCanaryByte);
            MPI_Request r = MPI_REQUEST_NULL;
            REQUIRE(MPI_Irecv(buf.data(), 100, MPI_BYTE, pair_peer(), kDataTag, comm.get(), &r) ==
                    MPI_SUCCESS);
            int flag = 0;
            int rc = MPI_SUCCESS;
            MPI_Status st = poisoned_status();
            while (!flag) {
                rc = MPI_Request_get_status(r, &flag, &st);
            }
            CHECK(error_class(rc) == MPI_ERR_TRUNCATE);
            CHECK(r != MPI_REQUEST_NULL);
            MPI_Status waited = poisoned_status();
            CHECK(error_class(MPI_Wait(&r, &waited)) == MPI_ERR_TRUNCATE);
            CHECK(r == MPI_REQUEST_NULL);
            CHECK(count_of(waited, MPI_BYTE) == 100);
            CHECK(canary_changed(buf, 100, buf.size()) == 0);
        } else {
            std::vector<unsigned char> msg(200, 0x22);
            REQUIRE(MPI_Send(msg.data(), 200, MPI_BYTE, pair_peer(), kDataTag, comm.get()) ==
                    MPI_SUCCESS);
        }
        exchange_next(comm.get(), 11);
    }
    CHECK(world_handler_calls == 0);
    MPI_Errhandler_free(&counting);
}
