/*
 * freshmem.c - how fast this machine hands a process new memory, for the
 * header of `make bench`.
 *
 *   xprofs-freshmem [MIB]
 *
 * Maps MIB (default 512) MiB of anonymous memory with huge pages advised,
 * as the converter maps its big arrays (src/base/bigalloc.c), writes one byte of
 * every 4 KiB page, then writes all of it again, and prints
 * "FIRST_TOUCH_GB_S REWRITE_GB_S". The first pass is the kernel clearing
 * pages (and, in a virtual machine, the host backing them); the second is
 * plain memory bandwidth. A tool's cold time holds the first-touch cost of
 * every byte it holds, which the bare walk (it allocates nothing) does not
 * pay: on a VM whose first touch is slow, every ratio to the bare walk grows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "clock.h"

int main(int argc, char **argv)
{
    size_t mib = 512, bytes, i;
    double t0, t1, t2;
    char *end, *p;

    if (argc > 2) {
        fprintf(stderr, "usage: xprofs-freshmem [MIB]\n");
        return 2;
    }
    if (argc == 2) {
        errno = 0;
        mib = strtoul(argv[1], &end, 10);
        if (errno != 0 || *end != '\0' || mib == 0 || mib > ((size_t)1 << 20)) {
            fprintf(stderr, "xprofs-freshmem: bad size in MiB: %s\n", argv[1]);
            return 2;
        }
    }
    bytes = mib << 20;
    p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "xprofs-freshmem: mmap %zu MiB: %s\n", mib, strerror(errno));
        return 1;
    }
    (void)madvise(p, bytes, MADV_HUGEPAGE); /* advice: a kernel may decline */
    t0 = bench_now();
    for (i = 0; i < bytes; i += 4096)
        p[i] = 1;
    t1 = bench_now();
    memset(p, 2, bytes);
    t2 = bench_now();
    /* Read the memory back, so that no write above can be left out. */
    if (p[bytes - 1] != 2) {
        fprintf(stderr, "xprofs-freshmem: memory did not keep what was written\n");
        return 1;
    }
    printf("%.2f %.2f\n", (double)bytes / 1e9 / (t1 - t0), (double)bytes / 1e9 / (t2 - t1));
    munmap(p, bytes);
    return 0;
}
