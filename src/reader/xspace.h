/*
 * xspace.h - the in-memory model of one host's profile (<host>.xplane.pb).
 *
 * Loading has two stages, so cheap questions stay cheap:
 *
 *   xspace_open()    maps or reads the file (or inflates a .gz once), walks only
 *                    tags and lengths to index planes and lines (event counts included),
 *                    and decodes the small metadata tables with protobuf-c.
 *   xspace_decode()  decodes every event into a compact array per line
 *                    (struct xp_event, 24 bytes), in parallel, exactly once;
 *                    later calls return at once. Stats stay in the file and are
 *                    decoded on demand with xp_stat_iter.
 *
 * Times: an event starts at line->timestamp_ns * 1000 + ev->offset_ps
 * picoseconds (xp_event_start_ps). Line starts written as epoch times are
 * shifted to the earliest of them first (xspace.time_shift_ns, as XProf's
 * NormalizeTimestamps). A file whose line start or event start or end then
 * lies beyond XP_TIME_LIMIT_PS either way is corrupt (the reader says so),
 * so that every time, and the difference of any two, fits in an int64.
 * Missing metadata ids resolve to an empty entry (index 0, name ""), never
 * an error, as XProf's visitor does.
 *
 * Every length, varint and index is checked; a bad file gives -EIO and a
 * message naming the file and offset. A loaded struct xspace is read-only and
 * may be shared by any number of threads.
 */
#ifndef XPROFS_XSPACE_H
#define XPROFS_XSPACE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/idmap.h"
#include "stats.h"
#include "base/wire.h"

enum xp_stat_kind {
    XP_STAT_NONE,   /* no value set */
    XP_STAT_DOUBLE, /* v.d */
    XP_STAT_UINT,   /* v.u */
    XP_STAT_INT,    /* v.i */
    XP_STAT_STR,    /* str/len, not NUL-terminated */
    XP_STAT_BYTES,  /* str/len, opaque */
    XP_STAT_REF,    /* str/len = name of stat_metadata[v.u]; v.u = ref id */
};

/* One decoded stat. Strings point into the file's bytes or the arena. */
struct xp_stat {
    int64_t meta_id;        /* key into the plane's stat metadata */
    enum xp_stat_kind kind; /* which value is set */
    union {
        double d;
        uint64_t u;
        int64_t i;
    } v;
    const char *str; /* STR, BYTES, REF: the bytes */
    size_t len;      /* their length */
};

struct xp_event_meta {
    int64_t id;               /* metadata id */
    const char *name;         /* NUL-terminated, "" if unset */
    const char *display_name; /* NUL-terminated, "" if unset */
    struct xp_stat *stats;    /* stats shared by every event of this metadata */
    uint32_t nstats;          /* entries in stats */
    const int64_t *child_ids; /* child metadata ids */
    uint32_t nchildren;       /* entries in child_ids */
};

struct xp_stat_meta {
    int64_t id;       /* metadata id */
    const char *name; /* NUL-terminated */
    size_t name_len;  /* strlen(name) */
    int type;         /* enum xp_stat_type, or -1 if not well known */
};

/* One event: 24 bytes. The event's record can be found again at
 * line->body + rec_off to decode its stats. */
struct xp_event {
    int64_t offset_ps;   /* start relative to the line's timestamp */
    int64_t duration_ps; /* >= 0; negative values in the file read as 0 */
    uint32_t meta;       /* index into plane->emeta (0 = missing metadata) */
    uint32_t rec_off;    /* offset of the XEvent record (its key) in line->body */
};

struct xp_line {
    int64_t id;               /* XLine.id (thread id on host planes) */
    int64_t display_id;       /* XLine.display_id, 0 if unset */
    const char *name;         /* NUL-terminated */
    const char *display_name; /* NUL-terminated, "" if unset */
    int64_t timestamp_ns;     /* line start */
    int64_t duration_ps;      /* XLine.duration_ps */
    uint32_t nevents;         /* number of events (known after open) */
    struct xp_event *events;  /* nevents entries, NULL until decoded */
    const uint8_t *body;      /* the XLine message bytes */
    size_t body_len;          /* their length */
    uint32_t *splits;         /* rec offset of every XP_SPLIT-th event */
    uint32_t nsplits;         /* entries in splits */
    int32_t *gids;            /* with events, on planes with a group_id stat:
                                 each event's own group_id (XP_GID_*) */
};

/* What xspace_decode learns of an event's own group_id stats while it
 * passes them, for the readers of files saved grouped (one stat read per
 * event): XP_GID_NONE when the event has none, the value when it has
 * exactly one, an int64 or uint64 in [0, 2^31), and XP_GID_WALK when
 * anything else may be there (two of them, another kind or value, a stat
 * of unusual shape): then the stats must be read. */
#define XP_GID_NONE (-1)
#define XP_GID_WALK (-2)

#define XP_SPLIT 65536 /* events per decode task on long lines */

struct xp_plane {
    int64_t id;                  /* XPlane.id */
    const char *name;            /* NUL-terminated */
    struct xp_line *lines;       /* in file order */
    uint32_t nlines;             /* entries in lines */
    struct xp_event_meta *emeta; /* [0] is the empty entry for missing ids */
    uint32_t nemeta;             /* entries in emeta, including [0] */
    struct idmap emeta_index;    /* metadata id -> index in emeta */
    struct xp_stat_meta *smeta;  /* stat metadata */
    uint32_t nsmeta;             /* entries in smeta */
    struct idmap smeta_index;    /* metadata id -> index in smeta */
    struct xp_stat *stats;       /* plane-level stats */
    uint32_t nstats;             /* entries in stats */
    int64_t stat_id[XS__COUNT];  /* well-known stat -> metadata id, or XP_NO_STAT */
    uint64_t nevents;            /* events on all lines */
};

#define XP_NO_STAT INT64_MIN

/* Profiles of this size or more are mapped (file_map.h), smaller ones read
 * into memory (file_bytes.h). A copy is fresh memory, which costs most in a
 * process started after the machine sat idle, as a user's first request
 * usually is (the 80 MB GPU bench profile's trace then: 1.155 s copied,
 * 1.006 s mapped; 0.514 against 0.529 s back to back, where the copy reuses
 * pages the process before freed), and a mount would hold a copy of every
 * open run where a mapping is page cache; a copy of a few MiB costs no
 * more than the first touches of its mapped pages (README, the reader). */
#define XS_MAP_FROM ((size_t)4 << 20)

/* A mapped profile of this size or more lets go of its pages as passes
 * finish with them (xspace_release), which keeps its share of the peak RSS
 * small (most of it at 1.7 GB); a smaller one keeps them, since a later
 * pass (the trace's index fill) would touch them again and each first touch
 * of a mapped 4 KiB page is slow on the VMs measured (80 MB: 40-50 ms). */
#define XS_RELEASE_FROM ((size_t)256 << 20)

struct xspace {
    char *path;                  /* file it was read from */
    const uint8_t *data;         /* the serialized XSpace: mapped, or a big_malloc'd copy */
    size_t size;                 /* its length */
    int mapped;                  /* 1: data is the file's mapping (file_map.h) */
    struct xp_plane *planes;     /* in file order */
    uint32_t nplanes;            /* entries in planes */
    const char **hostnames;      /* XSpace.hostnames */
    uint32_t nhostnames;         /* entries in hostnames */
    const char **errors;         /* XSpace.errors */
    uint32_t nerrors;            /* entries in errors */
    uint64_t nevents;            /* events in all planes */
    int64_t time_shift_ns;       /* subtracted from epoch-time line starts, else 0 */
    struct arena arena;          /* names, metadata tables */
    pthread_mutex_t decode_lock; /* serialises xspace_decode */
    int decoded;                 /* 1 once every line's events are decoded; under decode_lock */
    int decode_rc;               /* result of the one decode */
    struct xp_err decode_err;    /* its message */
};

/* Open and index path (.xplane.pb, or .xplane.pb.gz inflated once). Returns 0
 * and *xsp, or a negative errno with err naming the file and reason. */
int xspace_open(const char *path, struct xspace **xsp, struct xp_err *err);

/* The same from bytes in memory (copied); name is used in messages. */
int xspace_open_buffer(const char *name, const void *data, size_t n, struct xspace **xsp,
                       struct xp_err *err);

/* Decode all events of all planes with up to nthreads workers (0 = one per
 * core). Idempotent and thread-safe: the first call decodes, later ones return
 * its result. */
int xspace_decode(struct xspace *xs, int nthreads, struct xp_err *err);

/* Release an event array made by xspace_decode (n = its event count). */
void xp_events_free(struct xp_event *events, uint32_t n);

/* -EIO with err if xs's file was cut short while mapped (its lost pages
 * read as zeros, file_map.h); else 0. */
int xspace_cut_short(const struct xspace *xs, struct xp_err *err);

/* A pass done with bytes [off, off + len) of a mapped profile of
 * XS_RELEASE_FROM bytes or more lets go of their pages (file_map_release:
 * out of resident memory, still in the page cache, back on the next read);
 * a no-op for a smaller one or a profile read into memory. */
void xspace_release(const struct xspace *xs, size_t off, size_t len);

/* Release everything. NULL is a no-op. */
void xspace_close(struct xspace *xs);

/* The plane named name, or NULL. */
const struct xp_plane *xspace_find_plane(const struct xspace *xs, const char *name);

/* 1 if some plane has a "group_id" stat metadata (XProf's IsXSpaceGrouped):
 * the profile was saved grouped, so XProf neither groups it again nor
 * derives its GPU lines. */
int xspace_is_grouped(const struct xspace *xs);

/* The largest magnitude of a time in ps (2^62 ps, about 53 days): the
 * reader refuses line starts and event starts and ends beyond it. */
#define XP_TIME_LIMIT_PS (INT64_C(1) << 62)

/* Absolute start and end of an event in ps. */
static inline int64_t xp_event_start_ps(const struct xp_line *l, const struct xp_event *e)
{
    return l->timestamp_ns * 1000 + e->offset_ps;
}

static inline int64_t xp_event_end_ps(const struct xp_line *l, const struct xp_event *e)
{
    return l->timestamp_ns * 1000 + e->offset_ps + e->duration_ps;
}

/* An event's metadata (never NULL). */
static inline const struct xp_event_meta *xp_event_meta(const struct xp_plane *p,
                                                        const struct xp_event *e)
{
    return &p->emeta[e->meta];
}

/* The metadata of id, or the empty entry. */
const struct xp_event_meta *xp_plane_event_meta(const struct xp_plane *p, int64_t id);

/* The stat metadata of id, or NULL. */
const struct xp_stat_meta *xp_plane_stat_meta(const struct xp_plane *p, int64_t id);

/* The name of a stat's metadata ("" if unknown). */
const char *xp_stat_name(const struct xp_plane *p, const struct xp_stat *st);

/* The metadata id of a stat name in this plane, or XP_NO_STAT. */
int64_t xp_plane_stat_id_by_name(const struct xp_plane *p, const char *name);

/* Iterate over the stats stored on one event (not its metadata's). */
struct xp_stat_iter {
    struct wire w;                /* remaining bytes of the XEvent */
    const struct xp_plane *plane; /* for ref resolution */
};

void xp_stat_iter_init(struct xp_stat_iter *it, const struct xp_plane *p, const struct xp_line *l,
                       const struct xp_event *e);

/* Next stat: 1 and *st, 0 at the end, -1 on corrupt bytes. */
int xp_stat_next(struct xp_stat_iter *it, struct xp_stat *st);

/* Next stat whose metadata id want(ctx, id) accepts (as xp_stat_next, but a
 * reference is resolved only for those): 1, 0 at the end, -1 on corrupt
 * bytes anywhere before. */
int xp_stat_next_wanted(struct xp_stat_iter *it, struct xp_stat *st,
                        int (*want)(const void *ctx, int64_t id), const void *ctx);

/* The stat with metadata id `id` among the event's own stats, not its
 * metadata's. Returns 1 and *st if found, else 0. */
int xp_event_own_stat(const struct xp_plane *p, const struct xp_line *l, const struct xp_event *e,
                      int64_t id, struct xp_stat *st);

/* Find a well-known stat on the event, then on its metadata (XProf's
 * XEventVisitor::GetStat order). Returns 1 and *st if found, else 0. */
int xp_event_stat(const struct xp_plane *p, const struct xp_line *l, const struct xp_event *e,
                  enum xp_stat_type t, struct xp_stat *st);

/* Find a well-known stat among the plane's own stats. 1 if found, else 0. */
int xp_plane_stat(const struct xp_plane *p, enum xp_stat_type t, struct xp_stat *st);

/* Integer value of a numeric stat (double truncated); 0 for strings. */
int64_t xp_stat_int(const struct xp_stat *st);

/* Double value of a numeric stat; 0 for strings. */
double xp_stat_double(const struct xp_stat *st);

/* XProf's string form of a stat (XStatVisitor::ToString) into buf; returns buf. */
char *xp_stat_to_string(const struct xp_stat *st, char *buf, size_t n);

/* Parse an XStat message body. Returns 0 or -1 on corrupt bytes. */
int xp_stat_parse(const struct xp_plane *p, struct wire *body, struct xp_stat *st);

/*
 * Picking a few stats out of many events: a table from stat metadata id to a
 * slot (1..XP_PICK_MAX), built once per plane, and a scan of one event's own
 * stats that fully decodes only the stats of wanted ids (refs resolved only
 * for those). Readers of millions of events (grouping, op_stats) use it.
 */
#define XP_PICK_MAX 16

struct xp_pick {
    const struct xp_plane *plane; /* for ref resolution */
    uint8_t *dense;               /* [id] -> slot, ids 0..ndense-1; NULL if sparse */
    size_t ndense;                /* entries in dense */
    int64_t ids[XP_PICK_MAX];     /* slot - 1 -> id (XP_NO_STAT: unused) */
    uint32_t nids;                /* slots */
    int last_wins;                /* 1: a repeated id keeps its last value */
    uint32_t all;                 /* bits of the slots that can be found */
};

/* Slots 1..n for ids[0..n-1] (n <= XP_PICK_MAX; XP_NO_STAT entries never
 * match). Returns 0 or -ENOMEM. */
int xp_pick_init(struct xp_pick *pk, const struct xp_plane *p, const int64_t *ids, uint32_t n,
                 int last_wins);
void xp_pick_free(struct xp_pick *pk);

/* Scan the event's own stats: out[slot - 1] gets the stat of each wanted id
 * found, and bit slot - 1 of the result says which were found. Corrupt
 * bytes end the scan (what was found before stays). */
uint32_t xp_pick_event(const struct xp_pick *pk, const struct xp_line *l, const struct xp_event *e,
                       struct xp_stat *out);

#endif
