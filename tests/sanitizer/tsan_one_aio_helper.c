/* Linked into every program maint/run-sanitized runs under ThreadSanitizer.
 *
 * glibc's POSIX AIO (behind ROMIO's nonblocking file I/O) runs the operations on helper threads,
 * and a helper that finds more queued work starts a further helper itself (rt/aio_misc.c,
 * handle_fildes_io) through libc's internal pthread_create, which ThreadSanitizer does not
 * intercept. Starting that thread allocates its TLS vector with calloc, which ThreadSanitizer
 * does intercept, on a thread it has never seen: its allocator cache is NULL and the process dies
 * with SIGSEGV in SizeClassAllocator64LocalCache::Allocate, without a report. A plain C program
 * of aio_write calls on 8 files, built with -fsanitize=thread, dies the same way (glibc 2.36,
 * GCC 12's libtsan); built without it, it runs clean (tests/sanitizer/aio_helper_repro.c). Known
 * upstream, still open: llvm/llvm-project issue 109742.
 *
 * aio_init (a GNU extension) with one helper thread: the only helper is then started from the
 * program's own threads, which ThreadSanitizer knows. It stays for the whole run (an hour of idle
 * time), so it is started once. Operations still complete asynchronously, one at a time.
 */
#define _GNU_SOURCE
#include <aio.h>
#include <string.h>

__attribute__ ((constructor))
static void one_aio_helper_thread(void)
{
    struct aioinit init;

    memset(&init, 0, sizeof(init));
    init.aio_threads = 1;
    init.aio_num = 64;
    init.aio_idle_time = 3600;
    aio_init(&init);
}
