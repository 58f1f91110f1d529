// The memory floor of a scan over n requests, step by step, on a model of MPICH's request
// objects (no MPI): what each step a Test or get_status call makes per request costs by itself.
//
// MPICH 4.0.2 keeps requests in blocks of 1024 objects reached through a table of block
// pointers (MPIR_Request_mem[pool].indirect); a handle encodes pool, block and index. A scan
// over n handles then, per request: reads the handle, decodes it to a pointer (the block table
// is in cache), reads the object's first cache line (kind, the completion-counter pointer
// cc_ptr) and the counter through cc_ptr (a second, dependent load, normally in the same line).
// Each step below adds one of those to the loop before it:
//   handles     read the handle array (the floor of any pass over the application's array)
//   decode      + decode each handle to an object pointer (no object load)
//   kind        + load the object's kind (one dependent load per request: the object's line)
//   cc          + load cc_ptr and then *cc_ptr (the completion check)
//   full        + the kind and poll_fn branches of MPIR_Testsome_state's loop
//   prefetch    full, with the object 16 requests ahead prefetched
//   pointers    the same checks over a pointer array already decoded (a second pass)
//   rotate      the fairness cursor's rotation of the pointer array (three reversals)
//   malloc      malloc + free of the n-pointer array (MPICH's bindings above 64 requests)
// Prints: floor <step> <n> <ns per request>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {

constexpr int kBlockObjects = 1024;  // REQUEST_NUM_INDICES
constexpr unsigned kBlockMask = 0x000ff000, kBlockShift = 12, kObjectMask = 0x00000fff;
constexpr int kIndirectKind = 0x2 << 30;

// The first line of an MPIR_Request as the scan sees it; the rest is padding to the object size.
struct alignas(64) ModelRequest {
    int handle;
    int ref_count;
    int kind;
    int padding;
    std::atomic<int>* cc_ptr;
    std::atomic<int> cc;
    void* greq_fns;
};

double now_ns() {
    return std::chrono::duration<double, std::nano>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

volatile long g_sink;

class Model {
public:
    Model(int n, size_t object_size) : object_size_(object_size) {
        const int blocks = (n + kBlockObjects - 1) / kBlockObjects;
        for (int b = 0; b < blocks; b++) {
            char* block = static_cast<char*>(std::aligned_alloc(64, object_size * kBlockObjects));
            std::memset(block, 0, object_size * kBlockObjects);
            blocks_.push_back(block);
        }
        for (int i = 0; i < n; i++) {
            const int b = i / kBlockObjects, idx = i % kBlockObjects;
            handles.push_back(kIndirectKind | (b << kBlockShift) | idx);
            ModelRequest* r = object(b, idx);
            r->handle = handles.back();
            r->kind = 2;  // a receive
            r->cc_ptr = &r->cc;
            r->cc.store(1);  // pending
        }
        ptrs.resize(n);
    }
    ~Model() {
        for (char* b : blocks_) {
            std::free(b);
        }
    }
    ModelRequest* object(int block, int idx) const {
        return reinterpret_cast<ModelRequest*>(blocks_[block] + object_size_ * idx);
    }
    ModelRequest* decode(int h) const {
        return object((h & kBlockMask) >> kBlockShift, h & kObjectMask);
    }

    std::vector<int> handles;
    std::vector<ModelRequest*> ptrs;

private:
    size_t object_size_;
    std::vector<char*> blocks_;
};

template <class Loop>
double ns_per_request(int n, int reps, Loop&& loop) {
    double best = 1e30;
    for (int round = 0; round < 5; round++) {
        const double t0 = now_ns();
        for (int k = 0; k < reps; k++) {
            loop();
        }
        best = std::min(best, (now_ns() - t0) / reps / n);
    }
    return best;
}

void reverse(std::vector<ModelRequest*>& p, int lo, int hi) {
    std::reverse(p.begin() + lo, p.begin() + hi);
}

void run(int n, size_t object_size) {
    Model m(n, object_size);
    const int reps = std::max(3, 20000000 / n);
    auto report = [&](const char* step, double ns) {
        std::printf("floor %s %d %.2f\n", step, n, ns);
        std::fflush(stdout);
    };

    report("handles", ns_per_request(n, reps, [&] {
               long s = 0;
               for (int h : m.handles) {
                   s += h;
               }
               g_sink = s;
           }));
    report("decode", ns_per_request(n, reps, [&] {
               for (int i = 0; i < n; i++) {
                   m.ptrs[i] = m.decode(m.handles[i]);
               }
               g_sink = reinterpret_cast<long>(m.ptrs[n - 1]);
           }));
    report("kind", ns_per_request(n, reps, [&] {
               long s = 0;
               for (int i = 0; i < n; i++) {
                   ModelRequest* r = m.decode(m.handles[i]);
                   m.ptrs[i] = r;
                   s += r->kind;
               }
               g_sink = s;
           }));
    report("cc", ns_per_request(n, reps, [&] {
               long s = 0;
               for (int i = 0; i < n; i++) {
                   ModelRequest* r = m.decode(m.handles[i]);
                   m.ptrs[i] = r;
                   s += r->kind + r->cc_ptr->load(std::memory_order_acquire);
               }
               g_sink = s;
           }));
    report("full", ns_per_request(n, reps, [&] {
               int found = 0;
               for (int i = 0; i < n; i++) {
                   ModelRequest* r = m.decode(m.handles[i]);
                   m.ptrs[i] = r;
                   if (r->kind == 5 && r->greq_fns != nullptr) {  // a generalized request
                       found += 100;
                   }
                   if (r->kind >= 3 && r->kind <= 6) {  // persistent/partitioned: active?
                       found += 10;
                   } else if (r->cc_ptr->load(std::memory_order_acquire) == 0) {
                       found++;
                   }
               }
               g_sink = found;
           }));
    report("prefetch", ns_per_request(n, reps, [&] {
               constexpr int ahead = 16;
               int found = 0;
               for (int i = 0; i < n; i++) {
                   if (i + ahead < n) {
                       __builtin_prefetch(m.decode(m.handles[i + ahead]));
                   }
                   ModelRequest* r = m.decode(m.handles[i]);
                   m.ptrs[i] = r;
                   if (r->kind == 5 && r->greq_fns != nullptr) {
                       found += 100;
                   }
                   if (r->kind >= 3 && r->kind <= 6) {
                       found += 10;
                   } else if (r->cc_ptr->load(std::memory_order_acquire) == 0) {
                       found++;
                   }
               }
               g_sink = found;
           }));
    for (int i = 0; i < n; i++) {
        m.ptrs[i] = m.decode(m.handles[i]);
    }
    report("pointers", ns_per_request(n, reps, [&] {
               int found = 0;
               for (ModelRequest* r : m.ptrs) {
                   found += r->cc_ptr->load(std::memory_order_acquire) == 0;
               }
               g_sink = found;
           }));
    report("rotate", ns_per_request(n, reps, [&] {
               const int start = n / 3;
               reverse(m.ptrs, 0, start);
               reverse(m.ptrs, start, n);
               reverse(m.ptrs, 0, n);
               g_sink = reinterpret_cast<long>(m.ptrs[0]);
           }));
    report("malloc", ns_per_request(n, reps, [&] {
               void* p = std::malloc(n * sizeof(void*));
               g_sink = reinterpret_cast<long>(p);
               std::free(p);
           }));
}

}  // namespace

int main(int argc, char* argv[]) {
    // the object size of an MPIR_Request in the ch4:ofi build (gdb: p sizeof(MPIR_Request))
    const size_t object_size = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 512;
    for (int n : {512, 4096, 65536}) {
        run(n, std::max<size_t>(object_size, sizeof(ModelRequest)));
    }
    return 0;
}
