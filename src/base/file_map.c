/*
 * file_map.c - read-only file mappings and the SIGBUS guard that keeps a
 * file cut short under one from killing the process (see file_map.h).
 *
 * Each mapping holds a slot of a fixed table; the signal handler reads the
 * table without a lock (a slot's bounds are atomics, set before the mapping
 * is handed out and cleared before it is unmapped).
 */
#include "file_map.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Mappings guarded at once; a file beyond them is read instead. */
#define GUARD_SLOTS 1024

struct guard {
    _Atomic uintptr_t lo; /* first byte of the mapping; 0: slot free */
    _Atomic uintptr_t hi; /* end of its last page */
    atomic_int cut;       /* 1: a lost page was replaced by zeros */
};

static struct guard guards[GUARD_SLOTS];
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER; /* taking and freeing slots */
static struct sigaction previous;                              /* the handler before on_sigbus */
static uintptr_t page_size = 4096;                             /* set when installing */

/* SIGBUS that is not ours: do what the handler before ours would have. */
static void pass_on(int sig, siginfo_t *si, void *ctx)
{
    struct sigaction dfl;

    if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction != NULL) {
        previous.sa_sigaction(sig, si, ctx);
        return;
    }
    if (!(previous.sa_flags & SA_SIGINFO) && previous.sa_handler != SIG_DFL &&
        previous.sa_handler != SIG_IGN) {
        previous.sa_handler(sig);
        return;
    }
    /* Default action: a fault happens again on return and ends the
     * process; a SIGBUS that was sent is sent again. */
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGBUS, &dfl, NULL);
    if (si->si_code <= 0)
        raise(SIGBUS);
}

static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
    uintptr_t addr = (uintptr_t)si->si_addr;
    uint32_t i;

    if (si->si_code > 0) {
        for (i = 0; i < GUARD_SLOTS; i++) {
            uintptr_t lo = atomic_load(&guards[i].lo), hi, page;
            if (lo == 0 || addr < lo)
                continue;
            hi = atomic_load(&guards[i].hi);
            if (addr >= hi)
                continue;
            /* The file ends before addr: zeros from there to the end. */
            page = addr & ~(page_size - 1);
            if (mmap((void *)page, hi - page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                     -1, 0) == MAP_FAILED)
                break;
            atomic_store(&guards[i].cut, 1);
            return;
        }
    }
    pass_on(sig, si, ctx);
}

/* Make on_sigbus the SIGBUS handler if it is not (slots_lock held); checked
 * at every mapping, since a test harness or a library may have put its own
 * back since. Returns 1 if it is. */
static int install_locked(void)
{
    struct sigaction sa, cur;
    long ps = sysconf(_SC_PAGESIZE);

    if (sigaction(SIGBUS, NULL, &cur) != 0)
        return 0;
    if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_sigbus)
        return 1;
    if (ps > 0)
        page_size = (uintptr_t)ps;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    previous = cur;
    return sigaction(SIGBUS, &sa, NULL) == 0;
}

/* The slot of the mapping at buf, or -1. */
static int slot_of(const uint8_t *buf)
{
    uint32_t i;

    for (i = 0; i < GUARD_SLOTS; i++) {
        if (atomic_load(&guards[i].lo) == (uintptr_t)buf)
            return (int)i;
    }
    return -1;
}

int file_map(int fd, size_t size, const uint8_t **bufp)
{
    uintptr_t end;
    uint32_t i = GUARD_SLOTS;
    void *m;

    if (size == 0)
        return -EAGAIN;
    m = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (m == MAP_FAILED)
        return -EAGAIN;
    pthread_mutex_lock(&slots_lock);
    if (install_locked()) {
        end = ((uintptr_t)m + size + page_size - 1) & ~(page_size - 1);
        for (i = 0; i < GUARD_SLOTS && atomic_load(&guards[i].lo) != 0; i++)
            ;
        if (i < GUARD_SLOTS) {
            atomic_store(&guards[i].cut, 0);
            atomic_store(&guards[i].hi, end);
            atomic_store(&guards[i].lo, (uintptr_t)m);
        }
    }
    pthread_mutex_unlock(&slots_lock);
    if (i == GUARD_SLOTS) {
        munmap(m, size);
        return -EAGAIN;
    }
    *bufp = m;
    return 0;
}

int file_map_cut(const uint8_t *buf)
{
    int i = slot_of(buf);

    return i >= 0 && atomic_load(&guards[i].cut);
}

void file_map_release(const uint8_t *buf, size_t off, size_t len)
{
    uintptr_t lo = ((uintptr_t)buf + off + page_size - 1) & ~(page_size - 1);
    uintptr_t hi = ((uintptr_t)buf + off + len) & ~(page_size - 1);

    /* Read-only and private: no page was ever written, so none is lost. */
    if (lo < hi)
        madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

void file_unmap(const uint8_t *buf, size_t size)
{
    int i;

    if (buf == NULL)
        return;
    pthread_mutex_lock(&slots_lock);
    i = slot_of(buf);
    if (i >= 0) {
        atomic_store(&guards[i].lo, 0);
        atomic_store(&guards[i].hi, 0);
    }
    pthread_mutex_unlock(&slots_lock);
    munmap((void *)buf, size);
}
