/* Why tests/sanitizer/tsan_one_aio_helper.c exists: POSIX AIO under ThreadSanitizer, no MPI.
 *
 *   gcc -O1 -g -fsanitize=thread tests/sanitizer/aio_helper_repro.c -o /tmp/aio_repro
 *   /tmp/aio_repro                      SIGSEGV (exit 139), no report: a helper thread glibc
 *                                       started itself allocates on a thread TSan never saw
 *   /tmp/aio_repro one-helper           aio_init with one helper thread first: runs clean
 *
 * 2026-11-23, Debian bookworm (glibc 2.36, GCC 12): 3 of 3 runs crash without, 5 of 5 clean with
 * one helper; built without -fsanitize=thread it runs clean both ways. */
#define _GNU_SOURCE
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { FILES = 8, PER_FILE = 4, ROUNDS = 2000, BYTES = 65536 };

int main(int argc, char **argv)
{
    static char buf[BYTES];
    static struct aiocb cbs[FILES * PER_FILE];
    const struct aiocb *one[1];
    char dir[] = "/tmp/aio_repro.XXXXXX", name[64];
    int fds[FILES];

    if (argc > 1 && strcmp(argv[1], "one-helper") == 0) {
        struct aioinit init;
        memset(&init, 0, sizeof(init));
        init.aio_threads = 1;
        init.aio_num = 64;
        init.aio_idle_time = 3600;
        aio_init(&init);
    }
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    for (int f = 0; f < FILES; f++) {
        snprintf(name, sizeof(name), "%s/f%d", dir, f);
        fds[f] = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
        unlink(name);
    }
    rmdir(dir);
    /* every round: PER_FILE writes queued on each of FILES files at once, so that a helper
     * thread finishing one finds more work and starts another helper */
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < FILES * PER_FILE; i++) {
            memset(&cbs[i], 0, sizeof(cbs[i]));
            cbs[i].aio_fildes = fds[i % FILES];
            cbs[i].aio_buf = buf;
            cbs[i].aio_nbytes = BYTES;
            cbs[i].aio_offset = (off_t) (i / FILES) * BYTES;
            cbs[i].aio_sigevent.sigev_notify = SIGEV_NONE;
            if (aio_write(&cbs[i]) != 0) {
                perror("aio_write");
                return 1;
            }
        }
        for (int i = 0; i < FILES * PER_FILE; i++) {
            one[0] = &cbs[i];
            while (aio_error(&cbs[i]) == EINPROGRESS)
                aio_suspend(one, 1, NULL);
            if (aio_return(&cbs[i]) != BYTES) {
                fprintf(stderr, "write %d of round %d failed\n", i, r);
                return 1;
            }
        }
    }
    printf("%d rounds of %d writes\n", ROUNDS, FILES * PER_FILE);
    return 0;
}
