/*
 * barewalk.c - the baseline of `make bench`: the least work that still reads a
 * whole .xplane.pb.
 *
 *   xprofs-barewalk FILE
 *
 * mmaps the file and decodes every varint of every event down the
 * XSpace/XPlane/XLine/XEvent nesting, on one thread, allocating nothing.
 * Prints the event count and the seconds taken; every benchmark row is also
 * reported as a ratio to this time, since absolute times on shared machines
 * drift.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "base/wire.h"

/* Walk one message: visit every field; recurse into the fields named in
 * `nested` for this depth. Returns the number of events seen, or -1. */
static long walk(struct wire w, int depth, uint64_t *sink)
{
    long events = 0;

    while (!wire_eof(&w)) {
        uint32_t field;
        int type;
        uint64_t v;
        struct wire sub;

        if (wire_key(&w, &field, &type) != 0)
            return -1;
        if (type == WIRE_VARINT) {
            if (wire_varint(&w, &v) != 0)
                return -1;
            *sink += v;
        } else if (type == WIRE_LEN) {
            if (wire_bytes(&w, &sub) != 0)
                return -1;
            /* XSpace.planes=1 -> XPlane.lines=3 -> XLine.events=4 -> XEvent */
            if ((depth == 0 && field == 1) || (depth == 1 && field == 3) ||
                (depth == 2 && field == 4)) {
                long n = walk(sub, depth + 1, sink);
                if (n < 0)
                    return -1;
                events += n + (depth == 2);
            }
        } else if (wire_skip(&w, type) != 0) {
            return -1;
        }
    }
    return events;
}

int main(int argc, char **argv)
{
    struct stat st;
    double t0, t1;
    struct wire w;
    uint64_t sink = 0;
    void *p;
    long events;
    int fd;

    if (argc != 2) {
        fprintf(stderr, "usage: xprofs-barewalk FILE.xplane.pb\n");
        return 2;
    }
    fd = open(argv[1], O_RDONLY);
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
        perror(argv[1]);
        return 1;
    }
    t0 = bench_now();
    p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    wire_init(&w, p, (size_t)st.st_size);
    events = walk(w, 0, &sink);
    t1 = bench_now();
    if (events < 0) {
        fprintf(stderr, "%s: not a valid XSpace\n", argv[1]);
        return 1;
    }
    printf("%ld events %.6f s (checksum %llu)\n", events, t1 - t0,
           (unsigned long long)(sink & 0xffff));
    munmap(p, (size_t)st.st_size);
    close(fd);
    return 0;
}
