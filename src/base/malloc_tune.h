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

#endif
