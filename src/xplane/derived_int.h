/*
 * derived_int.h - what the files of the derived lines share (derived.c:
 * Steps, Launch Stats and the whole; derived_line.c: XProf's
 * DerivedXLineBuilder and stored names; derived_stream.c: one GPU stream's
 * lines). Not for use outside them.
 */
#ifndef XPROFS_DERIVED_INT_H
#define XPROFS_DERIVED_INT_H

#include <stddef.h>
#include <stdint.h>

#include "derived.h"
#include "derived_hlo.h"
#include "group.h"
#include "base/wire.h"
#include "reader/xspace.h"

#define THREAD_ID_DERIVED_MIN ((int64_t)(int32_t)0xdeadbeef)
#define THREAD_ID_STEP_INFO THREAD_ID_DERIVED_MIN
#define THREAD_ID_KERNEL_LAUNCH (THREAD_ID_DERIVED_MIN + 1)
#define THREAD_ID_HOST_XLA_REGION_END (THREAD_ID_DERIVED_MIN + 49 + 240)
/* Per-stream lines (newer XLA): a range after the host XLA regions. */
#define THREAD_ID_DEVICE_DERIVED_MIN (THREAD_ID_HOST_XLA_REGION_END + 1)
#define LINES_PER_STREAM 6 /* name scope, tf op, module, op, overhead, source */
#define THREAD_ID_DEVICE_DERIVED_MAX (THREAD_ID_DEVICE_DERIVED_MIN + 100 * LINES_PER_STREAM)
#define OFF_NAME_SCOPE 0
#define OFF_TF_OP 1
#define OFF_MODULE 2
#define OFF_OP 3
#define OFF_SOURCE 5

/* An event of the plane in XProf's sorted order (start, longer first). */
struct sorted_ev {
    uint64_t ts;    /* start ps */
    uint64_t dur;   /* duration ps */
    uint32_t line;  /* line index */
    uint32_t event; /* event index */
};

#define MAX_LEVELS 256 /* name scopes nest deeply; XProf has no limit */

/* What a level's last event was made from: the raw bytes its name was
 * built of. The same key always builds the same name, so an event with the
 * same key and group expands the last one without building its name. */
struct name_key {
    const char *a;   /* first part (module, op), or NULL: no key */
    size_t a_len;    /* its length */
    const char *b;   /* second part (module of a prefix), or NULL */
    size_t b_len;    /* its length */
    uint64_t number; /* program id */
    int has_number;  /* number is set */
};

struct builder_line {
    struct derived *dv;              /* owner */
    int32_t li;                      /* index in dv->lines, -1 until it gets an event */
    uint32_t plane;                  /* plane index */
    int64_t id;                      /* XLine id */
    const char *name;                /* line name */
    int32_t last[MAX_LEVELS];        /* event index of the last event per level, -1 */
    struct name_key key[MAX_LEVELS]; /* what the last event per level was made from */
    int nlevels;                     /* levels ever used (XProf's map size) */
    struct builder_line *dep[2];     /* lines reset with this one at level 0 */
    int unique_names;                /* 1: equal names given have equal addresses */
    uint32_t hint;                   /* first allocation of events (an upper bound if known) */
};

/* One XStat as the derivation reads it; a reference is resolved only when
 * its text is needed. */
struct lite_stat {
    int64_t meta_id; /* stat metadata id */
    int kind;        /* XP_STAT_* */
    uint64_t u;      /* int / uint value, or the referenced metadata id */
    const char *str; /* string bytes (XP_STAT_STR) */
    size_t len;      /* their length */
};

/* Events of the given lines (all non-derived lines if only < 0), sorted. */
int dv_sorted_events(const struct xp_plane *pl, int64_t only, struct sorted_ev **outp,
                     uint32_t *np);

/* The line b fills, or NULL before its first event. */
struct dv_line *dvb_line(struct builder_line *b);

/* An empty line of dv (dependents, hint and unique_names unset). */
void dvb_init(struct builder_line *b, struct derived *dv, uint32_t plane, int64_t id,
              const char *name);

/* The last event of level, or NULL. */
struct dv_event *dvb_last(struct builder_line *b, int level);

/* XProf's ResetLastEvents: shrink equal stacks, forget levels >= level
 * (and, at 0, the dependent lines' levels). */
void dvb_reset(struct builder_line *b, int level);

/* Expand the last event of level if it was made from key in the same group.
 * Returns 1 if it did. */
int dvb_expand_same_key(struct builder_line *b, int level, const struct name_key *key,
                        int32_t group, uint64_t ts, uint64_t dur);

/* XProf's ExpandOrAddLevelEvent on a GPU plane (no gap rule). Names are
 * NUL-terminated; stable ones live as long as the result (interned HLO
 * strings) and are kept as they are, others are copied when an event is
 * created. key (or NULL) is what the name was built from. */
int dvb_expand_or_add(struct builder_line *b, const char *name, const char *display, int stable,
                      const struct name_key *key, uint64_t ts, uint64_t dur, int32_t group,
                      int level);

/* A copy of s[0..n) in dv's arena, or NULL. */
const char *dv_strdup(struct derived *dv, const char *s, size_t n);

/* Release a table of stored names (NULL is a no-op). */
void dv_intern_free(struct intern *in);

/* The stored copy of s[0..n) (same bytes, same pointer), or NULL when out
 * of memory. */
const char *dv_intern(struct derived *dv, const char *s, size_t n);

/* v in decimal at buf (21 bytes suffice); returns the length. */
size_t dv_u64_dec(char *buf, uint64_t v);

/* Call fn(ctx, plane, k, stat) for each stat of the event (its own, not its
 * metadata's) whose metadata id is ids[k], in order; stops at corrupt bytes. */
void dv_each_stat(const struct xp_plane *pl, const struct xp_line *ln, const struct xp_event *ev,
                  const int64_t *ids, int nids,
                  void (*fn)(void *, const struct xp_plane *, int, const struct lite_stat *),
                  void *ctx);

/* Give back the unused part of a line sized by its hint. */
void dvb_shrink(struct builder_line *b);

/* Derive the lines of one stream. */
int dv_derive_stream(struct derived *dv, const struct xspace *xs, uint32_t p, uint32_t l,
                     int64_t first_id, const struct xp_groups *g, const struct derived_hlo *hlo);

#endif
