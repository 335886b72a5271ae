/*
 * malloc_tune.h - run the process with glibc's huge-page malloc.
 *
 * Page faults dominate cold conversions on virtual machines (about 20 us
 * each here): decoding and grouping an 80 MB profile touches ~100 MB of
 * fresh heap, 25,000 pages. glibc can back its heap with transparent huge
 * pages (the glibc.malloc.hugetlb=1 tunable, read only at start-up) and grow
 * it 64 MiB at a time (M_TOP_PAD), which cuts the faults ~6x and an
 * overview_page of that profile from ~0.6 s to ~0.35 s.
 */
#ifndef XPROFS_MALLOC_TUNE_H
#define XPROFS_MALLOC_TUNE_H

/* Call first thing in main(). When the tunable is not set yet, re-executes
 * the program (/proc/self/exe, same argv) with it added to GLIBC_TUNABLES;
 * returns only when it is set, or when re-executing failed (then the
 * program goes on with the default malloc). XPROFS_PLAIN_MALLOC=1 turns
 * this off. */
void malloc_tune(char **argv);

/*
 * For a long-lived server with many threads (the mount): one malloc arena.
 * glibc gives threads arenas of their own (up to 8 per core), and
 * malloc_trim returns only the main arena's top to the system: the top of
 * every other arena keeps up to M_TOP_PAD (64 MiB) and its holes, so an
 * idle mount that had read three 20 MB runs held 180-196 MB where one arena
 * holds 123 MB, the same as after the first run. Cold files were no slower
 * (the tools allocate big arrays with bigalloc, and small pieces from
 * arenas of their own). Call before any thread starts; a no-op with
 * XPROFS_PLAIN_MALLOC=1. Best effort: where glibc's malloc is not the one
 * in use (a sanitizer build), mallopt refuses and nothing changes; such a
 * malloc keeps no per-thread arenas to limit.
 */
void malloc_tune_one_arena(void);

#endif
