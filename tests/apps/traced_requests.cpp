// A program for a PMPI tracing tool (maint/test-debian-apps runs it plain, under Debian's
// EZTrace and with this project's tool library): each rank exchanges messages with its
// neighbours in a ring and completes them with MPI_Test, MPI_Wait, MPI_Waitany, MPI_Testsome and
// MPI_Waitall, and, where the MPI library has them (MPI 4.1; built with -DHAVE_GET_STATUS), with
// MPI_Request_get_status_all, _any and _some followed by the completion call. It prints one
// transcript line per check (indices, counts, flags, status fields, data) that does not depend
// on timing: the tool must change none of them.
// usage: traced_requests [ROUNDS]       exit 0: every check held
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

int rank_ = 0, size_ = 1, failures = 0;

void check(bool ok, const std::string& what) {
    if (!ok) failures++;
    std::printf("rank %d: %s %s\n", rank_, ok ? "ok" : "FAILED", what.c_str());
}

int left() { return (rank_ + size_ - 1) % size_; }
int right() { return (rank_ + 1) % size_; }

// Two receives from the left (tags 10 + round, 20 + round) and two sends to the right; after
// the barrier every message has arrived, so which requests are complete does not depend on
// timing. The sends are completed with MPI_Waitall.
struct Exchange {
    std::vector<MPI_Request> recvs = std::vector<MPI_Request>(2), sends = std::vector<MPI_Request>(2);
    int in[2] = {-1, -1}, out[2];
    Exchange(int round) {
        for (int k = 0; k < 2; k++) {
            MPI_Irecv(&in[k], 1, MPI_INT, left(), 10 * (k + 1) + round, MPI_COMM_WORLD, &recvs[k]);
        }
        for (int k = 0; k < 2; k++) {
            out[k] = rank_ * 100 + round * 10 + k;
            MPI_Isend(&out[k], 1, MPI_INT, right(), 10 * (k + 1) + round, MPI_COMM_WORLD, &sends[k]);
        }
        MPI_Waitall(2, sends.data(), MPI_STATUSES_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    bool data_ok(int round, int k) const { return in[k] == left() * 100 + round * 10 + k; }
    bool status_ok(const MPI_Status& st, int round, int k) const {
        int count = -1;
        MPI_Get_count(&st, MPI_INT, &count);
        return st.MPI_SOURCE == left() && st.MPI_TAG == 10 * (k + 1) + round && count == 1;
    }
};

std::string at(const char* form, int round) { return std::string(form) + " round " + std::to_string(round); }

void destructive(int round) {
    Exchange x(round);
    MPI_Status st;
    int flag = 0;
    // Test on the first until it reports (it arrived before the barrier)
    while (!flag) MPI_Test(&x.recvs[0], &flag, &st);
    check(x.recvs[0] == MPI_REQUEST_NULL && x.status_ok(st, round, 0) && x.data_ok(round, 0),
          at("MPI_Test", round));
    int index = -1;
    MPI_Waitany(2, x.recvs.data(), &index, &st);
    check(index == 1 && x.status_ok(st, round, 1) && x.data_ok(round, 1), at("MPI_Waitany", round));
    MPI_Waitany(2, x.recvs.data(), &index, &st);
    check(index == MPI_UNDEFINED, at("MPI_Waitany all null", round));

    Exchange y(round);
    int outcount = -1, indices[2] = {-1, -1};
    MPI_Status sts[2];
    MPI_Testsome(2, y.recvs.data(), &outcount, indices, sts);
    check(outcount == 2 && indices[0] == 0 && indices[1] == 1 && y.status_ok(sts[0], round, 0) &&
              y.status_ok(sts[1], round, 1) && y.data_ok(round, 0) && y.data_ok(round, 1),
          at("MPI_Testsome", round));

    Exchange z(round);
    MPI_Wait(&z.recvs[1], &st);
    check(z.status_ok(st, round, 1) && z.data_ok(round, 1), at("MPI_Wait", round));
    MPI_Waitall(2, z.recvs.data(), sts);
    check(z.status_ok(sts[0], round, 0) && z.data_ok(round, 0) && sts[1].MPI_SOURCE == MPI_ANY_SOURCE &&
              sts[1].MPI_TAG == MPI_ANY_TAG,
          at("MPI_Waitall (one null: empty status)", round));
}

#ifdef HAVE_GET_STATUS
void get_status(int round) {
    Exchange x(round);
    MPI_Status sts[2];
    int flag = 0;
    while (!flag) MPI_Request_get_status_all(2, x.recvs.data(), &flag, sts);
    check(x.recvs[0] != MPI_REQUEST_NULL && x.recvs[1] != MPI_REQUEST_NULL &&
              x.status_ok(sts[0], round, 0) && x.status_ok(sts[1], round, 1),
          at("MPI_Request_get_status_all (requests kept)", round));
    MPI_Waitall(2, x.recvs.data(), MPI_STATUSES_IGNORE);
    check(x.data_ok(round, 0) && x.data_ok(round, 1), at("MPI_Waitall after get_status_all", round));

    Exchange y(round);
    int index = -1;
    MPI_Status st;
    flag = 0;
    while (!flag) MPI_Request_get_status_any(2, y.recvs.data(), &index, &flag, &st);
    check(index == 0 && y.recvs[0] != MPI_REQUEST_NULL && y.status_ok(st, round, 0),
          at("MPI_Request_get_status_any", round));
    MPI_Wait(&y.recvs[index], MPI_STATUS_IGNORE);
    // the cursor moved past 0 once the application completed it: 1 next
    MPI_Request_get_status_any(2, y.recvs.data(), &index, &flag, &st);
    check(flag && index == 1 && y.status_ok(st, round, 1), at("MPI_Request_get_status_any next", round));
    MPI_Wait(&y.recvs[1], MPI_STATUS_IGNORE);

    Exchange z(round);
    int outcount = -1, indices[2] = {-1, -1};
    do {
        MPI_Request_get_status_some(2, z.recvs.data(), &outcount, indices, sts);
    } while (outcount < 2);
    check(outcount == 2 && indices[0] == 0 && indices[1] == 1 && z.status_ok(sts[0], round, 0) &&
              z.status_ok(sts[1], round, 1) && z.recvs[0] != MPI_REQUEST_NULL,
          at("MPI_Request_get_status_some", round));
    MPI_Waitall(2, z.recvs.data(), MPI_STATUSES_IGNORE);
    check(z.data_ok(round, 0) && z.data_ok(round, 1), at("MPI_Waitall after get_status_some", round));
}
#endif

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
    for (int round = 0; round < rounds; round++) {
        destructive(round);
#ifdef HAVE_GET_STATUS
        get_status(round);
#endif
    }
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank_ == 0) std::printf("traced_requests: %s (%d failed)\n", total ? "FAILED" : "ok", total);
    MPI_Finalize();
    return total ? 1 : 0;
}
