/*
 * xspace_load.c - opening a .xplane.pb: read (file_bytes.h) or inflate,
 * index planes and lines, decode metadata tables.
 *
 * The index pass walks only keys and lengths. For each line it counts the
 * events (and remembers every XP_SPLIT-th event's offset so long lines can be
 * decoded by several threads) without decoding them. Event and stat metadata
 * entries are small and decoded with protobuf-c into the arena.
 */
#include "base/sort.h"
#include "xspace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/bigalloc.h"
#include "base/file_bytes.h"
#include "base/file_map.h"
#include "base/parallel.h"
#include "xplane.pb-c.h"

/* Inflated .gz profiles larger than this are refused (a decompression bomb
 * must not take the machine's memory). */
#define XP_MAX_INFLATED ((size_t)32 << 30)

/* Field numbers (proto/xplane.proto). */
enum {
    F_SPACE_PLANES = 1,
    F_SPACE_ERRORS = 2,
    F_SPACE_HOSTNAMES = 4,
    F_PLANE_ID = 1,
    F_PLANE_NAME = 2,
    F_PLANE_LINES = 3,
    F_PLANE_EMETA = 4,
    F_PLANE_SMETA = 5,
    F_PLANE_STATS = 6,
    F_LINE_ID = 1,
    F_LINE_NAME = 2,
    F_LINE_TIMESTAMP = 3,
    F_LINE_EVENTS = 4,
    F_LINE_DURATION = 9,
    F_LINE_DISPLAY_ID = 10,
    F_LINE_DISPLAY_NAME = 11,
};

/* A growable array of byte ranges found by the index pass. */
struct ranges {
    struct wire *v; /* ranges */
    uint32_t n;     /* used */
    uint32_t cap;   /* allocated */
};

static int ranges_push(struct ranges *r, const struct wire *w)
{
    if (r->n == r->cap) {
        uint32_t cap = r->cap ? r->cap * 2 : 16;
        struct wire *v;
        if (cap < r->cap)
            return -ENOMEM;
        v = realloc(r->v, cap * sizeof(*v));
        if (v == NULL)
            return -ENOMEM;
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n++] = *w;
    return 0;
}

/* Offset of p in the file, for messages. */
static size_t file_off(const struct xspace *xs, const uint8_t *p)
{
    return (size_t)(p - xs->data);
}

int xspace_cut_short(const struct xspace *xs, struct xp_err *err)
{
    if (!xs->mapped || !file_map_cut(xs->data))
        return 0;
    return xp_err_set(err, -EIO, "%s: the file was cut short while being read", xs->path);
}

void xspace_release(const struct xspace *xs, size_t off, size_t len)
{
    if (xs->mapped && xs->size >= XS_RELEASE_FROM && off < xs->size)
        file_map_release(xs->data, off, len < xs->size - off ? len : xs->size - off);
}

static int corrupt(const struct xspace *xs, const uint8_t *p, struct xp_err *err, const char *what)
{
    int rc = xspace_cut_short(xs, err);

    if (rc != 0)
        return rc;
    return xp_err_set(err, -EIO, "%s: corrupt profile at byte %zu: %s", xs->path, file_off(xs, p),
                      what);
}

/* Read the whole gzip stream of fd into a big_malloc'd buffer. */
static int inflate_file(struct xspace *xs, int fd, struct xp_err *err)
{
    gzFile gz;
    size_t cap = 1 << 20, len = 0;
    unsigned char *buf = NULL;
    int dupfd = dup(fd);

    if (dupfd < 0)
        return xp_err_set(err, -errno, "%s: %s", xs->path, strerror(errno));
    gz = gzdopen(dupfd, "rb");
    if (gz == NULL) {
        close(dupfd);
        return xp_err_set(err, -ENOMEM, "%s: cannot start gzip reader", xs->path);
    }
    gzbuffer(gz, 256 * 1024);
    for (;;) {
        int n;
        if (buf == NULL || len == cap) {
            unsigned char *nb;
            if (buf != NULL)
                cap *= 2;
            if (cap > XP_MAX_INFLATED) {
                big_free(buf);
                gzclose(gz);
                return xp_err_set(err, -EIO, "%s: inflates to more than %zu GiB", xs->path,
                                  XP_MAX_INFLATED >> 30);
            }
            nb = big_realloc(buf, cap);
            if (nb == NULL) {
                big_free(buf);
                gzclose(gz);
                return xp_err_set(err, -ENOMEM, "%s: out of memory inflating", xs->path);
            }
            buf = nb;
        }
        n = gzread(gz, buf + len, (unsigned)(cap - len > (1u << 30) ? (1u << 30) : cap - len));
        if (n < 0) {
            int errnum;
            const char *msg = gzerror(gz, &errnum);
            xp_err_set(err, -EIO, "%s: bad gzip data: %s", xs->path, msg);
            big_free(buf);
            gzclose(gz);
            return -EIO;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    if (gzclose(gz) != Z_OK) {
        big_free(buf);
        return xp_err_set(err, -EIO, "%s: truncated gzip data", xs->path);
    }
    xs->data = buf;
    xs->size = len;
    return 0;
}

/* The bytes of xs->path: read (or inflated from .gz) into xs->data. */
static int load_file(struct xspace *xs, struct xp_err *err)
{
    struct stat st;
    size_t plen = strlen(xs->path);
    int fd, rc = 0;

    fd = open(xs->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return xp_err_set(err, -errno, "%s: %s", xs->path, strerror(errno));
    if (fstat(fd, &st) != 0) {
        rc = xp_err_set(err, -errno, "%s: %s", xs->path, strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        rc = xp_err_set(err, -EIO, "%s: not a regular file", xs->path);
    } else if (plen > 3 && strcmp(xs->path + plen - 3, ".gz") == 0) {
        rc = inflate_file(xs, fd, err);
    } else if (st.st_size == 0) {
        xs->data = NULL;
        xs->size = 0;
    } else if ((size_t)st.st_size >= XS_MAP_FROM &&
               file_map(fd, (size_t)st.st_size, &xs->data) == 0) {
        xs->size = (size_t)st.st_size;
        xs->mapped = 1;
    } else {
        uint8_t *data = NULL;
        rc = file_read_all(xs->path, fd, (size_t)st.st_size, &data, &xs->size, err);
        xs->data = data;
    }
    close(fd);
    if (rc == 0 && xs->size == 0)
        rc = xp_err_set(err, -EIO, "%s: empty file (0 bytes): not a profile", xs->path);
    return rc;
}

/* Convert a protobuf-c XStat into an xp_stat. Refs are resolved later. */
static void stat_from_pbc(const Xprofs__XStat *s, struct xp_stat *st)
{
    memset(st, 0, sizeof(*st));
    st->meta_id = s->metadata_id;
    switch (s->value_case) {
    case XPROFS__XSTAT__VALUE_DOUBLE_VALUE:
        st->kind = XP_STAT_DOUBLE;
        st->v.d = s->double_value;
        break;
    case XPROFS__XSTAT__VALUE_UINT64_VALUE:
        st->kind = XP_STAT_UINT;
        st->v.u = s->uint64_value;
        break;
    case XPROFS__XSTAT__VALUE_INT64_VALUE:
        st->kind = XP_STAT_INT;
        st->v.i = s->int64_value;
        break;
    case XPROFS__XSTAT__VALUE_STR_VALUE:
        st->kind = XP_STAT_STR;
        st->str = s->str_value ? s->str_value : "";
        st->len = strlen(st->str);
        break;
    case XPROFS__XSTAT__VALUE_BYTES_VALUE:
    case XPROFS__XSTAT__VALUE_COMPRESSED_STR_VALUE:
        st->kind = XP_STAT_BYTES;
        st->str = (const char *)s->bytes_value.data;
        st->len = s->bytes_value.len;
        if (s->value_case == XPROFS__XSTAT__VALUE_COMPRESSED_STR_VALUE) {
            st->str = (const char *)s->compressed_str_value.data;
            st->len = s->compressed_str_value.len;
        }
        break;
    case XPROFS__XSTAT__VALUE_REF_VALUE:
        st->kind = XP_STAT_REF;
        st->v.u = s->ref_value;
        break;
    default:
        st->kind = XP_STAT_NONE;
        break;
    }
}

/* Point a REF stat at its referenced name. */
static void stat_resolve_ref(const struct xp_plane *p, struct xp_stat *st)
{
    if (st->kind == XP_STAT_REF) {
        const struct xp_stat_meta *m = xp_plane_stat_meta(p, (int64_t)st->v.u);
        st->str = m ? m->name : "";
        st->len = m ? m->name_len : 0;
    }
}

static int load_stat_metadata(struct xspace *xs, struct xp_plane *pl, const struct ranges *r,
                              struct xp_err *err)
{
    uint32_t i;

    pl->smeta = arena_alloc(&xs->arena, (r->n ? r->n : 1) * sizeof(*pl->smeta));
    if (pl->smeta == NULL || idmap_init(&pl->smeta_index, r->n) != 0)
        return xp_err_set(err, -ENOMEM, "%s: out of memory", xs->path);
    for (i = 0; i < r->n; i++) {
        const struct wire *w = &r->v[i];
        Xprofs__StatMetadataEntry *e =
            xprofs__stat_metadata_entry__unpack(&xs->arena.pbc, (size_t)(w->end - w->p), w->p);
        struct xp_stat_meta *m = &pl->smeta[pl->nsmeta];

        if (e == NULL)
            return corrupt(xs, w->p, err, "bad stat metadata entry");
        m->id = e->key;
        m->name = (e->value && e->value->name) ? e->value->name : "";
        m->name_len = strlen(m->name);
        m->type = xp_stat_type_find(m->name, m->name_len);
        if (idmap_get(&pl->smeta_index, m->id) == IDMAP_NONE) {
            idmap_put(&pl->smeta_index, m->id, pl->nsmeta);
            pl->nsmeta++;
        }
    }
    for (i = 0; i < XS__COUNT; i++)
        pl->stat_id[i] = XP_NO_STAT;
    for (i = 0; i < pl->nsmeta; i++) {
        if (pl->smeta[i].type >= 0 && pl->stat_id[pl->smeta[i].type] == XP_NO_STAT)
            pl->stat_id[pl->smeta[i].type] = pl->smeta[i].id;
    }
    return 0;
}

static int load_event_metadata(struct xspace *xs, struct xp_plane *pl, const struct ranges *r,
                               struct xp_err *err)
{
    uint32_t i, j;

    pl->emeta = arena_alloc(&xs->arena, (r->n + 1) * sizeof(*pl->emeta));
    if (pl->emeta == NULL || idmap_init(&pl->emeta_index, r->n) != 0)
        return xp_err_set(err, -ENOMEM, "%s: out of memory", xs->path);
    memset(&pl->emeta[0], 0, sizeof(pl->emeta[0]));
    pl->emeta[0].name = "";
    pl->emeta[0].display_name = "";
    pl->nemeta = 1;
    for (i = 0; i < r->n; i++) {
        const struct wire *w = &r->v[i];
        Xprofs__EventMetadataEntry *e =
            xprofs__event_metadata_entry__unpack(&xs->arena.pbc, (size_t)(w->end - w->p), w->p);
        struct xp_event_meta *m = &pl->emeta[pl->nemeta];
        const Xprofs__XEventMetadata *v;

        if (e == NULL)
            return corrupt(xs, w->p, err, "bad event metadata entry");
        v = e->value;
        memset(m, 0, sizeof(*m));
        m->id = e->key;
        m->name = (v && v->name) ? v->name : "";
        m->display_name = (v && v->display_name) ? v->display_name : "";
        if (v && v->n_stats > 0) {
            if (v->n_stats > UINT32_MAX / sizeof(*m->stats))
                return corrupt(xs, w->p, err, "too many metadata stats");
            m->stats = arena_alloc(&xs->arena, v->n_stats * sizeof(*m->stats));
            if (m->stats == NULL)
                return xp_err_set(err, -ENOMEM, "%s: out of memory", xs->path);
            for (j = 0; j < v->n_stats; j++) {
                stat_from_pbc(v->stats[j], &m->stats[j]);
                stat_resolve_ref(pl, &m->stats[j]);
            }
            m->nstats = (uint32_t)v->n_stats;
        }
        if (v && v->n_child_id > 0 && v->n_child_id < UINT32_MAX) {
            m->child_ids = v->child_id;
            m->nchildren = (uint32_t)v->n_child_id;
        }
        if (idmap_get(&pl->emeta_index, m->id) == IDMAP_NONE) {
            idmap_put(&pl->emeta_index, m->id, pl->nemeta);
            pl->nemeta++;
        }
    }
    return 0;
}

static int load_plane_stats(struct xspace *xs, struct xp_plane *pl, const struct ranges *r,
                            struct xp_err *err)
{
    uint32_t i;

    if (r->n == 0)
        return 0;
    pl->stats = arena_alloc(&xs->arena, r->n * sizeof(*pl->stats));
    if (pl->stats == NULL)
        return xp_err_set(err, -ENOMEM, "%s: out of memory", xs->path);
    for (i = 0; i < r->n; i++) {
        struct wire w = r->v[i];
        if (xp_stat_parse(pl, &w, &pl->stats[i]) != 0)
            return corrupt(xs, r->v[i].p, err, "bad plane stat");
    }
    pl->nstats = r->n;
    return 0;
}

/* One line to index; lines are indexed in parallel. */
struct line_task {
    struct xspace *xs;    /* the profile */
    struct xp_line *line; /* the line to fill */
    struct wire body;     /* its XLine bytes */
    struct wire name;     /* XLine.name bytes, copied into the arena later */
    struct wire display;  /* XLine.display_name bytes */
    struct xp_err err;    /* failure of this line */
};

/* Index one XLine: header fields, event count, split points. Touches no
 * shared state but its own line, so lines run in parallel. */
static int index_line(struct line_task *t)
{
    struct xspace *xs = t->xs;
    struct xp_line *ln = t->line;
    struct wire w = t->body, body = t->body;
    struct xp_err *err = &t->err;
    uint64_t nev = 0;
    uint32_t splits_cap = 0;

    ln->body = body.p;
    ln->body_len = (size_t)(body.end - body.p);
    if (ln->body_len > UINT32_MAX)
        return corrupt(xs, body.p, err, "line larger than 4 GiB");
    while (!wire_eof(&w)) {
        const uint8_t *at = w.p;
        uint32_t field;
        int type;
        uint64_t v;
        struct wire sub;

        if (wire_key(&w, &field, &type) != 0)
            return corrupt(xs, at, err, "bad field key in line");
        if (field == F_LINE_EVENTS && type == WIRE_LEN) {
            if (nev % XP_SPLIT == 0) {
                if (ln->nsplits == splits_cap) {
                    uint32_t cap = splits_cap ? splits_cap * 2 : 4;
                    uint32_t *sp = realloc(ln->splits, cap * sizeof(*sp));
                    if (sp == NULL)
                        return xp_err_set(err, -ENOMEM, "%s: out of memory", xs->path);
                    ln->splits = sp;
                    splits_cap = cap;
                }
                ln->splits[ln->nsplits++] = (uint32_t)(at - body.p);
            }
            if (wire_bytes(&w, &sub) != 0)
                return corrupt(xs, at, err, "event runs past the end of its line");
            nev++;
            continue;
        }
        if (type == WIRE_VARINT && (field == F_LINE_ID || field == F_LINE_TIMESTAMP ||
                                    field == F_LINE_DURATION || field == F_LINE_DISPLAY_ID)) {
            if (wire_varint(&w, &v) != 0)
                return corrupt(xs, at, err, "bad varint in line");
            if (field == F_LINE_ID)
                ln->id = (int64_t)v;
            else if (field == F_LINE_TIMESTAMP)
                ln->timestamp_ns = (int64_t)v;
            else if (field == F_LINE_DURATION)
                ln->duration_ps = (int64_t)v;
            else
                ln->display_id = (int64_t)v;
            continue; /* a far line start: normalize_line_starts */
        }
        if (type == WIRE_LEN && (field == F_LINE_NAME || field == F_LINE_DISPLAY_NAME)) {
            if (wire_bytes(&w, &sub) != 0)
                return corrupt(xs, at, err, "line name runs past the end");
            if (field == F_LINE_NAME)
                t->name = sub;
            else
                t->display = sub;
            continue;
        }
        if (wire_skip(&w, type) != 0)
            return corrupt(xs, at, err, "bad unknown field in line");
    }
    if (nev > UINT32_MAX)
        return corrupt(xs, body.p, err, "more than 2^32 events in one line");
    ln->nevents = (uint32_t)nev;
    return 0;
}

/*
 * Line starts that are absolute epoch times (some producers write them;
 * XProf's capture shifts them to the session start, and its converter
 * overflows on them) are shifted as XProf's NormalizeTimestamps does: by a
 * start time, here the earliest line start past XP_TIME_LIMIT_PS, every
 * line that starts at or after it. xs->time_shift_ns records the shift.
 * Then every line start must lie within XP_TIME_LIMIT_PS of 0.
 */
static int normalize_line_starts(struct xspace *xs, struct xp_err *err)
{
    const int64_t limit = XP_TIME_LIMIT_PS / 1000;
    int64_t start = INT64_MAX;
    uint32_t p, l;

    for (p = 0; p < xs->nplanes; p++) {
        for (l = 0; l < xs->planes[p].nlines; l++) {
            int64_t ts = xs->planes[p].lines[l].timestamp_ns;
            if ((ts > limit || ts < -limit) && ts < start)
                start = ts;
        }
    }
    if (start == INT64_MAX)
        return 0;
    if (start < 0)
        return corrupt(xs, xs->data, err, "line timestamp out of range");
    for (p = 0; p < xs->nplanes; p++) {
        for (l = 0; l < xs->planes[p].nlines; l++) {
            struct xp_line *ln = &xs->planes[p].lines[l];
            if (ln->timestamp_ns >= start)
                ln->timestamp_ns -= start;
            if (ln->timestamp_ns > limit || ln->timestamp_ns < -limit)
                return corrupt(xs, ln->body, err, "line timestamp out of range");
        }
    }
    xs->time_shift_ns = start;
    return 0;
}

static int index_line_task(void *arg, size_t i)
{
    struct line_task *tasks = arg;
    return index_line(&tasks[i]);
}

static int line_task_cmp(const void *a, const void *b)
{
    const struct line_task *x = a, *y = b;
    size_t nx = (size_t)(x->body.end - x->body.p), ny = (size_t)(y->body.end - y->body.p);
    return (nx < ny) - (nx > ny);
}

/* Index every line of every plane, in parallel, biggest first. */
static int index_lines(struct xspace *xs, struct xp_err *err)
{
    struct line_task *tasks;
    size_t n = 0, k = 0, i;
    uint32_t p, l;
    int rc;

    for (p = 0; p < xs->nplanes; p++)
        n += xs->planes[p].nlines;
    if (n == 0)
        return 0;
    tasks = calloc(n, sizeof(*tasks));
    if (tasks == NULL)
        return xp_err_set(err, -ENOMEM, "%s: out of memory", xs->path);
    for (p = 0; p < xs->nplanes; p++) {
        for (l = 0; l < xs->planes[p].nlines; l++) {
            struct xp_line *ln = &xs->planes[p].lines[l];
            tasks[k].xs = xs;
            tasks[k].line = ln;
            tasks[k].body.p = ln->body;
            tasks[k].body.end = ln->body + ln->body_len;
            k++;
        }
    }
    xp_qsort(tasks, n, sizeof(*tasks), line_task_cmp);
    rc = parallel_for(n, 0, index_line_task, tasks);
    if (rc != 0) {
        for (i = 0; i < n; i++) {
            if (tasks[i].err.code != 0) {
                *err = tasks[i].err;
                break;
            }
        }
    }
    for (i = 0; rc == 0 && i < n; i++) {
        struct line_task *t = &tasks[i];
        t->line->name =
            arena_strndup(&xs->arena, (const char *)t->name.p, (size_t)(t->name.end - t->name.p));
        t->line->display_name = arena_strndup(&xs->arena, (const char *)t->display.p,
                                              (size_t)(t->display.end - t->display.p));
        if (t->line->name == NULL || t->line->display_name == NULL)
            rc = xp_err_set(err, -ENOMEM, "%s: out of memory", xs->path);
    }
    free(tasks);
    if (rc == 0)
        rc = normalize_line_starts(xs, err);
    if (rc != 0)
        return rc;
    for (p = 0; p < xs->nplanes; p++) {
        struct xp_plane *pl = &xs->planes[p];
        for (l = 0; l < pl->nlines; l++)
            pl->nevents += pl->lines[l].nevents;
        xs->nevents += pl->nevents;
    }
    return 0;
}

/* Index one XPlane. */
static int index_plane(struct xspace *xs, struct xp_plane *pl, struct wire body, struct xp_err *err)
{
    struct ranges lines = {0}, emeta = {0}, smeta = {0}, stats = {0};
    struct wire w = body;
    uint32_t i;
    int rc = 0;

    pl->name = "";
    while (rc == 0 && !wire_eof(&w)) {
        const uint8_t *at = w.p;
        uint32_t field;
        int type;
        uint64_t v;
        struct wire sub;

        if (wire_key(&w, &field, &type) != 0) {
            rc = corrupt(xs, at, err, "bad field key in plane");
            break;
        }
        if (field == F_PLANE_ID && type == WIRE_VARINT) {
            if (wire_varint(&w, &v) != 0)
                rc = corrupt(xs, at, err, "bad plane id");
            else
                pl->id = (int64_t)v;
        } else if (type == WIRE_LEN && field >= F_PLANE_NAME && field <= F_PLANE_STATS) {
            if (wire_bytes(&w, &sub) != 0) {
                rc = corrupt(xs, at, err, "plane field runs past the end");
                break;
            }
            if (field == F_PLANE_NAME) {
                pl->name =
                    arena_strndup(&xs->arena, (const char *)sub.p, (size_t)(sub.end - sub.p));
                if (pl->name == NULL)
                    rc = xp_err_set(err, -ENOMEM, "%s: out of memory", xs->path);
            } else if (field == F_PLANE_LINES) {
                rc = ranges_push(&lines, &sub);
            } else if (field == F_PLANE_EMETA) {
                rc = ranges_push(&emeta, &sub);
            } else if (field == F_PLANE_SMETA) {
                rc = ranges_push(&smeta, &sub);
            } else {
                rc = ranges_push(&stats, &sub);
            }
            if (rc == -ENOMEM)
                xp_err_set(err, rc, "%s: out of memory", xs->path);
        } else if (wire_skip(&w, type) != 0) {
            rc = corrupt(xs, at, err, "bad unknown field in plane");
        }
    }
    if (rc == 0)
        rc = load_stat_metadata(xs, pl, &smeta, err);
    if (rc == 0)
        rc = load_event_metadata(xs, pl, &emeta, err);
    if (rc == 0)
        rc = load_plane_stats(xs, pl, &stats, err);
    if (rc == 0 && lines.n > 0) {
        pl->lines = arena_alloc(&xs->arena, lines.n * sizeof(*pl->lines));
        if (pl->lines == NULL)
            rc = xp_err_set(err, -ENOMEM, "%s: out of memory", xs->path);
        else
            memset(pl->lines, 0, lines.n * sizeof(*pl->lines));
        for (i = 0; rc == 0 && i < lines.n; i++) {
            pl->lines[i].body = lines.v[i].p;
            pl->lines[i].body_len = (size_t)(lines.v[i].end - lines.v[i].p);
            pl->lines[i].name = "";
            pl->lines[i].display_name = "";
        }
        if (rc == 0)
            pl->nlines = lines.n;
    }
    free(lines.v);
    free(emeta.v);
    free(smeta.v);
    free(stats.v);
    return rc;
}

static int push_string(struct xspace *xs, const char ***arr, uint32_t *n, struct wire sub)
{
    const char **v = arena_alloc(&xs->arena, (*n + 1) * sizeof(*v));
    char *s = arena_strndup(&xs->arena, (const char *)sub.p, (size_t)(sub.end - sub.p));

    if (v == NULL || s == NULL)
        return -ENOMEM;
    if (*n > 0)
        memcpy(v, *arr, *n * sizeof(*v));
    v[(*n)++] = s;
    *arr = v;
    return 0;
}

/* Walk the top-level XSpace. */
static int index_space(struct xspace *xs, struct xp_err *err)
{
    struct ranges planes = {0};
    struct wire w;
    uint32_t i;
    int rc = 0;

    wire_init(&w, xs->data, xs->size);
    while (rc == 0 && !wire_eof(&w)) {
        const uint8_t *at = w.p;
        uint32_t field;
        int type;
        struct wire sub;

        if (wire_key(&w, &field, &type) != 0) {
            rc = corrupt(xs, at, err, "bad field key (not an XSpace?)");
            break;
        }
        if (type == WIRE_LEN &&
            (field == F_SPACE_PLANES || field == F_SPACE_HOSTNAMES || field == F_SPACE_ERRORS)) {
            if (wire_bytes(&w, &sub) != 0) {
                rc = corrupt(xs, at, err, "field length runs past the end of the file");
                break;
            }
            if (field == F_SPACE_PLANES)
                rc = ranges_push(&planes, &sub);
            else if (field == F_SPACE_HOSTNAMES)
                rc = push_string(xs, &xs->hostnames, &xs->nhostnames, sub);
            else
                rc = push_string(xs, &xs->errors, &xs->nerrors, sub);
            if (rc != 0)
                xp_err_set(err, rc, "%s: out of memory", xs->path);
        } else if (wire_skip(&w, type) != 0) {
            rc = corrupt(xs, at, err, "bad field (not an XSpace?)");
        }
    }
    if (rc == 0 && planes.n > 0) {
        xs->planes = arena_alloc(&xs->arena, planes.n * sizeof(*xs->planes));
        if (xs->planes == NULL)
            rc = xp_err_set(err, -ENOMEM, "%s: out of memory", xs->path);
        else
            memset(xs->planes, 0, planes.n * sizeof(*xs->planes));
        for (i = 0; rc == 0 && i < planes.n; i++) {
            rc = index_plane(xs, &xs->planes[i], planes.v[i], err);
            xs->nplanes = i + 1;
        }
    }
    free(planes.v);
    if (rc == 0)
        rc = index_lines(xs, err);
    return rc;
}

int xspace_open(const char *path, struct xspace **xsp, struct xp_err *err)
{
    struct xspace *xs;
    int rc;

    *xsp = NULL;
    xs = calloc(1, sizeof(*xs));
    if (xs == NULL)
        return xp_err_set(err, -ENOMEM, "%s: out of memory", path);
    arena_init(&xs->arena);
    pthread_mutex_init(&xs->decode_lock, NULL);
    xs->path = strdup(path);
    if (xs->path == NULL) {
        xspace_close(xs);
        return xp_err_set(err, -ENOMEM, "%s: out of memory", path);
    }
    rc = load_file(xs, err);
    if (rc == 0)
        rc = index_space(xs, err);
    if (rc == 0)
        rc = xspace_cut_short(xs, err);
    if (rc != 0) {
        xspace_close(xs);
        return rc;
    }
    *xsp = xs;
    return 0;
}

int xspace_open_buffer(const char *name, const void *data, size_t n, struct xspace **xsp,
                       struct xp_err *err)
{
    struct xspace *xs;
    void *copy;
    int rc;

    *xsp = NULL;
    xs = calloc(1, sizeof(*xs));
    copy = big_malloc(n ? n : 1);
    if (xs == NULL || copy == NULL || (xs->path = strdup(name)) == NULL) {
        big_free(copy);
        free(xs);
        return xp_err_set(err, -ENOMEM, "%s: out of memory", name);
    }
    arena_init(&xs->arena);
    pthread_mutex_init(&xs->decode_lock, NULL);
    if (n > 0)
        memcpy(copy, data, n);
    xs->data = copy;
    xs->size = n;
    rc = n == 0 ? xp_err_set(err, -EIO, "%s: empty (0 bytes): not a profile", name)
                : index_space(xs, err);
    if (rc != 0) {
        xspace_close(xs);
        return rc;
    }
    *xsp = xs;
    return 0;
}

void xspace_close(struct xspace *xs)
{
    uint32_t i, j;

    if (xs == NULL)
        return;
    for (i = 0; i < xs->nplanes; i++) {
        struct xp_plane *pl = &xs->planes[i];
        for (j = 0; j < pl->nlines; j++) {
            xp_events_free(pl->lines[j].events, pl->lines[j].nevents);
            big_free(pl->lines[j].gids);
            free(pl->lines[j].splits);
        }
        idmap_free(&pl->emeta_index);
        idmap_free(&pl->smeta_index);
    }
    if (xs->mapped)
        file_unmap(xs->data, xs->size);
    else
        big_free((void *)xs->data);
    arena_free(&xs->arena);
    pthread_mutex_destroy(&xs->decode_lock);
    free(xs->path);
    free(xs);
}

const struct xp_plane *xspace_find_plane(const struct xspace *xs, const char *name)
{
    uint32_t i;

    for (i = 0; i < xs->nplanes; i++) {
        if (strcmp(xs->planes[i].name, name) == 0)
            return &xs->planes[i];
    }
    return NULL;
}

int xspace_is_grouped(const struct xspace *xs)
{
    uint32_t i;

    for (i = 0; i < xs->nplanes; i++) {
        if (xs->planes[i].stat_id[XS_GROUP_ID] != XP_NO_STAT)
            return 1;
    }
    return 0;
}
