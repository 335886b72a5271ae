/*
 * tplane.h - XPlane messages for hand-built test profiles, on pbw.h: a
 * plane's stat metadata from a table, event metadata named on first use,
 * lines of events carrying (stat, value) pairs. Test-only code.
 *
 *   struct tplane host;
 *   tplane_begin(&host, 0, "/host:CPU", stats, S_COUNT, S_NAME, 0);
 *   tplane_event(&host, "step", 0, 100, S_ROOT, (int64_t)1, 0);
 *   tplane_line_end(&host, 1, "python");
 *   tplane_end(&host, &space);
 */
#ifndef XPROFS_TEST_TPLANE_H
#define XPROFS_TEST_TPLANE_H

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pbw.h"

/* A plane under construction. */
struct tplane {
    struct pbw plane;      /* the XPlane body */
    struct pbw line;       /* events of the open line */
    const char *names[32]; /* event metadata names, id = index + 1 */
    int nnames;            /* entries in names */
    int str_stat;          /* the stat id whose values are strings (0: none) */
};

/* Start plane id called name with stat metadata id i named stat_names[i]
 * for 1 <= i < nstats, except skip_stat (0: none); str_stat takes strings
 * in tplane_event. */
static inline void tplane_begin(struct tplane *tp, int64_t id, const char *name,
                                const char *const *stat_names, int nstats, int str_stat,
                                int skip_stat)
{
    int i;

    memset(tp, 0, sizeof(*tp));
    tp->str_stat = str_stat;
    pbw_uint(&tp->plane, 1, (uint64_t)id);
    pbw_str(&tp->plane, 2, name);
    for (i = 1; i < nstats; i++) {
        struct pbw entry = {0}, meta = {0};
        if (i == skip_stat)
            continue;
        pbw_uint(&meta, 1, (uint64_t)i);
        pbw_str(&meta, 2, stat_names[i]);
        pbw_uint(&entry, 1, (uint64_t)i);
        pbw_msg(&entry, 2, &meta);
        pbw_msg(&tp->plane, 5, &entry);
    }
}

/* The event metadata id of name (added on first use). */
static inline int64_t tplane_meta(struct tplane *tp, const char *name)
{
    int i;

    for (i = 0; i < tp->nnames; i++) {
        if (strcmp(tp->names[i], name) == 0)
            return i + 1;
    }
    if (tp->nnames == (int)(sizeof(tp->names) / sizeof(tp->names[0])))
        abort();
    tp->names[tp->nnames++] = name;
    return tp->nnames;
}

/* Append an event to the open line: name, [off, off + dur) ps, then
 * (stat, value) pairs ending with 0; str_stat's value is a string, the
 * others an int64. */
static inline void tplane_eventv(struct tplane *tp, const char *name, int64_t off, int64_t dur,
                                 va_list ap)
{
    struct pbw ev = {0};
    int st;

    pbw_uint(&ev, 1, (uint64_t)tplane_meta(tp, name));
    pbw_uint(&ev, 2, (uint64_t)off);
    pbw_uint(&ev, 3, (uint64_t)dur);
    while ((st = va_arg(ap, int)) != 0) {
        struct pbw s = {0};
        pbw_uint(&s, 1, (uint64_t)st);
        if (st == tp->str_stat)
            pbw_str(&s, 5, va_arg(ap, const char *));
        else
            pbw_uint(&s, 4, (uint64_t)va_arg(ap, int64_t));
        pbw_msg(&ev, 4, &s);
    }
    pbw_msg(&tp->line, 4, &ev);
}

static inline void tplane_event(struct tplane *tp, const char *name, int64_t off, int64_t dur, ...)
{
    va_list ap;

    va_start(ap, dur);
    tplane_eventv(tp, name, off, dur, ap);
    va_end(ap);
}

/* Close the open line as XLine id called name. */
static inline void tplane_line_end(struct tplane *tp, int64_t id, const char *name)
{
    struct pbw line = {0};

    pbw_uint(&line, 1, (uint64_t)id);
    pbw_str(&line, 2, name);
    pbw_raw(&line, tp->line.p, tp->line.n);
    free(tp->line.p);
    memset(&tp->line, 0, sizeof(tp->line));
    pbw_msg(&tp->plane, 3, &line);
}

/* Add the event metadata and the plane to the XSpace space. */
static inline void tplane_end(struct tplane *tp, struct pbw *space)
{
    int i;

    for (i = 0; i < tp->nnames; i++) {
        struct pbw entry = {0}, meta = {0};
        pbw_uint(&meta, 1, (uint64_t)(i + 1));
        pbw_str(&meta, 2, tp->names[i]);
        pbw_uint(&entry, 1, (uint64_t)(i + 1));
        pbw_msg(&entry, 2, &meta);
        pbw_msg(&tp->plane, 4, &entry);
    }
    pbw_msg(space, 1, &tp->plane);
}

#endif
