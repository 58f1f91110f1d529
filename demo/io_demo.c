/*
 * The other half of the request engine in one program: ROMIO's nonblocking file I/O
 * overlapped with computation on the generalized request class engine, what a tool sees of it
 * through MPI_T (the class's performance variables and the request_engine events), and one
 * communicator assertion report at MPI_Finalize.
 *
 * Each process writes CHUNKS blocks of CHUNK_INTS ints with MPI_File_iwrite_at, computes while
 * they are in flight, waits for the rest with MPI_Waitall, and reads them back with
 * MPI_File_iread_at. ROMIO hands the blocks to its engine (io_uring, else POSIX AIO) as requests
 * of the engine's class: the progress engine polls the class, and MPI_Waitall blocks in one
 * wait over every outstanding block (the class's wait_fn) instead of spinning. Built against
 * stock MPICH (demo/run-demo does, with Debian's mpich installed) it prints the timings only.
 *
 * Run with MPIR_CVAR_COMM_ASSERT_DETECT=1 MPIR_CVAR_COMM_ASSERT_REPORT=1 (demo/run-demo does)
 * for the assertion report: "ring" keeps every assertion, "results" receives from any source.
 */
#include <mpi.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHUNK_INTS (1 << 20) /* 4 MiB per block */
#define CHUNKS 16            /* 64 MiB per process */

static atomic_int file_completions;     /* request_complete_file instances */
static atomic_int class_waits;          /* grequest_class_wait instances */
static atomic_int class_waited_requests;        /* their "handed" fields summed */

static double thread_cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static int value_of(int chunk, int i, int rank)
{
    return (rank * CHUNKS + chunk) * 7 + i % 1000;
}

/* Work that needs no memory traffic: 'steps' rounds of a few floating-point operations. */
static double compute(long steps)
{
    double x = 0.5;
    for (long s = 0; s < steps; s++) {
        x = sqrt(x * x + 1.0) - 0.999 * x;
    }
    return x;
}

/* Callbacks registered at MPI_T_CB_REQUIRE_THREAD_SAFE: they run where the event is raised
 * and call no MPI function but MPI_T_event_read. */
static void on_file_completion(MPI_T_event_instance ev, MPI_T_event_registration h,
                               MPI_T_cb_safety safety, void *user)
{
    (void) ev, (void) h, (void) safety, (void) user;
    atomic_fetch_add(&file_completions, 1);
}

static void on_class_wait(MPI_T_event_instance ev, MPI_T_event_registration h,
                          MPI_T_cb_safety safety, void *user)
{
    int handed = 0;
    (void) h, (void) safety, (void) user;
    MPI_T_event_read(ev, 1, &handed);
    atomic_fetch_add(&class_waits, 1);
    atomic_fetch_add(&class_waited_requests, handed);
}

static MPI_T_event_registration listen_to(const char *name, void *object,
                                          MPI_T_event_cb_function *cb)
{
    int index;
    MPI_T_event_registration handle;
    if (MPI_T_event_get_index(name, &index) != MPI_SUCCESS ||
        MPI_T_event_handle_alloc(index, object, MPI_INFO_NULL, &handle) != MPI_SUCCESS ||
        MPI_T_event_register_callback(handle, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL,
                                      NULL, cb) != MPI_SUCCESS) {
        fprintf(stderr, "io_demo: cannot listen to the event %s\n", name);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return handle;
}

/* The greq_class_* performance variables: one element per generalized request class. */
#define NVARS 5
#define MAX_CLASSES 16
static const char *const var_names[NVARS] = {
    "greq_class_polls", "greq_class_waits", "greq_class_waited_requests",
    "greq_class_completed", "greq_class_wait_time"
};

struct class_vars {
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle[NVARS];
    int count;                  /* classes (elements) when the handles were allocated */
};

static void class_vars_open(struct class_vars *v)
{
    MPI_T_pvar_session_create(&v->session);
    for (int i = 0; i < NVARS; i++) {
        int index, count;
        if (MPI_T_pvar_get_index(var_names[i], i == 4 ? MPI_T_PVAR_CLASS_TIMER :
                                 MPI_T_PVAR_CLASS_COUNTER, &index) != MPI_SUCCESS ||
            MPI_T_pvar_handle_alloc(v->session, index, NULL, &v->handle[i], &count)
            != MPI_SUCCESS) {
            fprintf(stderr, "io_demo: no performance variable %s\n", var_names[i]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        v->count = count;
    }
    if (v->count > MAX_CLASSES) {
        fprintf(stderr, "io_demo: %d request classes, more than the %d this demo reads\n",
                v->count, MAX_CLASSES);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* values[i][c]: variable i of class c (the timer converted to seconds, as a double) */
static void class_vars_read(struct class_vars *v, double values[NVARS][MAX_CLASSES])
{
    for (int i = 0; i < NVARS; i++) {
        if (i == 4) {
            double t[MAX_CLASSES];
            MPI_T_pvar_read(v->session, v->handle[i], t);
            memcpy(values[i], t, sizeof(double) * (size_t) v->count);
        } else {
            unsigned long long c[MAX_CLASSES];
            MPI_T_pvar_read(v->session, v->handle[i], c);
            for (int k = 0; k < v->count; k++) {
                values[i][k] = (double) c[k];
            }
        }
    }
}

static void class_vars_close(struct class_vars *v)
{
    for (int i = 0; i < NVARS; i++) {
        MPI_T_pvar_handle_free(v->session, &v->handle[i]);
    }
    MPI_T_pvar_session_free(&v->session);
}

static void write_blocks(MPI_File fh, MPI_Offset base, int *block, MPI_Request req[CHUNKS])
{
    for (int c = 0; c < CHUNKS; c++) {
        MPI_File_iwrite_at(fh, base + (MPI_Offset) c * CHUNK_INTS * (MPI_Offset) sizeof(int),
                           block + (size_t) c * CHUNK_INTS, CHUNK_INTS, MPI_INT, &req[c]);
    }
}

int main(int argc, char **argv)
{
    int rank, size, provided;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);

    const char *dir = getenv("IO_DEMO_DIR") ? getenv("IO_DEMO_DIR") : "/tmp";
    char path[4096];
    snprintf(path, sizeof(path), "%s/io_demo.%d.dat", dir, (int) getpid());
    MPI_Bcast(path, (int) sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD);  /* rank 0's name */
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR |
                      MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
        fprintf(stderr, "io_demo: cannot open %s\n", path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* ROMIO creates its AIO class at the first asynchronous operation */
    {
        int one = 1;
        MPI_Request warm;
        MPI_File_iwrite_at(fh, 0, &one, 1, MPI_INT, &warm);
        MPI_Wait(&warm, MPI_STATUS_IGNORE);
    }
    /* the engine this file's nonblocking I/O runs on (MPIR_CVAR_ROMIO_NBIO_ENGINE) */
    char engine[64] = "unknown";
    {
        MPI_Info info;
        int len = (int) sizeof(engine), flag = 0;
        MPI_File_get_info(fh, &info);
        MPI_Info_get_string(info, "romio_nbio_engine", &len, engine, &flag);
        if (!flag) {
            snprintf(engine, sizeof(engine), "unknown (no romio_nbio_engine hint)");
        }
        MPI_Info_free(&info);
    }
    /* stock MPICH (Debian's package) has no request engine: then only the timings */
    int event_index, engine_built = MPI_T_event_get_index("request_complete_file",
                                                          &event_index) == MPI_SUCCESS;
    MPI_T_event_registration on_file = NULL, on_wait = NULL;
    struct class_vars vars = { 0 };
    double before[NVARS][MAX_CLASSES], after[NVARS][MAX_CLASSES];
    if (engine_built) {
        on_file = listen_to("request_complete_file", &fh, on_file_completion);
        on_wait = listen_to("grequest_class_wait", NULL, on_class_wait);
        class_vars_open(&vars);
        class_vars_read(&vars, before);
    } else {
        snprintf(engine, sizeof(engine), "POSIX AIO (stock MPICH: no request engine)");
    }

    int *block = malloc(sizeof(int) * (size_t) CHUNK_INTS * CHUNKS);
    int *back = malloc(sizeof(int) * (size_t) CHUNK_INTS * CHUNKS);
    for (int c = 0; c < CHUNKS; c++) {
        for (int i = 0; i < CHUNK_INTS; i++) {
            block[(size_t) c * CHUNK_INTS + (size_t) i] = value_of(c, i, rank);
        }
    }
    MPI_Offset base = (MPI_Offset) rank * CHUNKS * CHUNK_INTS * (MPI_Offset) sizeof(int);

    MPI_Request req[CHUNKS];

    /* 1. the writes alone: issued, then waited for */
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    write_blocks(fh, base, block, req);
    double cpu0 = thread_cpu_seconds(), w0 = MPI_Wtime();
    MPI_Waitall(CHUNKS, req, MPI_STATUSES_IGNORE);
    double alone_wait_wall = MPI_Wtime() - w0, alone_wait_cpu = thread_cpu_seconds() - cpu0;
    double t_io = MPI_Wtime() - t0;

    /* 2. a computation sized to half of that, alone */
    double r0 = MPI_Wtime();
    double sink = compute(1000 * 1000);
    long steps = (long) (1e6 * (t_io / 2) / (MPI_Wtime() - r0));
    t0 = MPI_Wtime();
    sink += compute(steps);
    double t_compute = MPI_Wtime() - t0;

    /* 3. both: the writes issued, the computation while they are in flight, then the wait */
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    write_blocks(fh, base, block, req);
    sink += compute(steps);
    double t_computed = MPI_Wtime() - t0;
    cpu0 = thread_cpu_seconds(), w0 = MPI_Wtime();
    MPI_Waitall(CHUNKS, req, MPI_STATUSES_IGNORE);
    double wait_wall = MPI_Wtime() - w0, wait_cpu = thread_cpu_seconds() - cpu0;
    double t_total = MPI_Wtime() - t0;

    /* 3. read everything back, nothing to overlap: the wait is all of it */
    memset(back, 0xff, sizeof(int) * (size_t) CHUNK_INTS * CHUNKS);
    cpu0 = thread_cpu_seconds(), w0 = MPI_Wtime();
    for (int c = 0; c < CHUNKS; c++) {
        MPI_File_iread_at(fh, base + (MPI_Offset) c * CHUNK_INTS * (MPI_Offset) sizeof(int),
                          back + (size_t) c * CHUNK_INTS, CHUNK_INTS, MPI_INT, &req[c]);
    }
    MPI_Status st[CHUNKS];
    MPI_Waitall(CHUNKS, req, st);
    double read_wall = MPI_Wtime() - w0, read_cpu = thread_cpu_seconds() - cpu0;
    int wrong = memcmp(back, block, sizeof(int) * (size_t) CHUNK_INTS * CHUNKS) != 0;
    for (int c = 0; c < CHUNKS; c++) {
        int n;
        MPI_Get_count(&st[c], MPI_INT, &n);
        wrong += n != CHUNK_INTS;
    }

    if (engine_built) {
        class_vars_read(&vars, after);
    }
    /* ROMIO's AIO class: the element whose completed counter moved by our 3 x CHUNKS */
    int aio = -1;
    for (int k = 0; k < vars.count; k++) {
        if (after[3][k] - before[3][k] == 3 * CHUNKS) {
            aio = k;
        }
    }

    /* 4. the assertion report's material: "ring" keeps every assertion (exact source and
     * tag, exact lengths, one message per pair), "results" gathers from any source */
    MPI_Comm ring, results;
    MPI_Comm_dup(MPI_COMM_WORLD, &ring);
    MPI_Comm_set_name(ring, "ring");
    MPI_Comm_dup(MPI_COMM_WORLD, &results);
    MPI_Comm_set_name(results, "results");
    int right = (rank + 1) % size, left = (rank + size - 1) % size, from_left = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, right, 1, &from_left, 1, MPI_INT, left, 1, ring,
                 MPI_STATUS_IGNORE);
    int all_wrong = wrong + (from_left != left);
    if (rank == 0) {
        for (int p = 1; p < size; p++) {
            int w;
            MPI_Recv(&w, 1, MPI_INT, MPI_ANY_SOURCE, 2, results, MPI_STATUS_IGNORE);
            all_wrong += w;
        }
    } else {
        MPI_Send(&all_wrong, 1, MPI_INT, 0, 2, results);
    }
    MPI_Comm_free(&ring);
    MPI_Comm_free(&results);

    if (rank == 0) {
        printf("io_demo: %d processes, each writing and reading back %d MiB in %d blocks of %d "
               "MiB (MPI_File_iwrite_at / MPI_File_iread_at)\n", size,
               CHUNKS * CHUNK_INTS / (256 * 1024), CHUNKS, CHUNK_INTS / (256 * 1024));
        printf("  writes alone                          %8.3f s (MPI_Waitall: %.3f s wall, %.3f s "
               "CPU of the waiting thread)\n", t_io, alone_wait_wall, alone_wait_cpu);
        printf("  computation alone                     %8.3f s\n", t_compute);
        printf("  both, overlapped                      %8.3f s (computation done at %.3f s; "
               "MPI_Waitall: %.3f s wall, %.3f s CPU)\n", t_total, t_computed, wait_wall,
               wait_cpu);
        printf("  read back, MPI_Waitall                %8.3f s wall, %.3f s CPU; data %s\n",
               read_wall, read_cpu, all_wrong ? "WRONG" : "as written on every process");
        printf("  ROMIO's engine: %s\n", engine);
        if (!engine_built) {
            /* nothing more to show */
        } else if (aio >= 0) {
            printf("  rank 0, ROMIO's AIO class (MPI_T greq_class_*, element %d): %.0f requests "
                   "completed, %.0f polls, %.0f batched waits over %.0f requests, %.3f s "
                   "blocked\n", aio, after[3][aio] - before[3][aio],
                   after[0][aio] - before[0][aio], after[1][aio] - before[1][aio],
                   after[2][aio] - before[2][aio], after[4][aio] - before[4][aio]);
        } else {
            printf("  ROMIO's AIO class: not found (this file system takes ROMIO's blocking "
                   "path)\n");
        }
        if (engine_built) {
            printf("  rank 0, a tool's view (MPI_T events): %d request_complete_file on this "
                   "file, %d grequest_class_wait over %d requests\n",
                   atomic_load(&file_completions), atomic_load(&class_waits),
                   atomic_load(&class_waited_requests));
        }
        fflush(stdout);
    }
    if (sink == 42.0) {
        printf("\n");   /* keeps the computation from being optimized away */
    }

    if (engine_built) {
        class_vars_close(&vars);
        MPI_T_event_handle_free(on_file, NULL, NULL);
        MPI_T_event_handle_free(on_wait, NULL, NULL);
    }
    MPI_T_finalize();
    MPI_File_close(&fh);
    free(block);
    free(back);
    MPI_Finalize();
    return all_wrong ? 1 : 0;
}
