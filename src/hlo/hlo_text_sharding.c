/*
 * hlo_text_sharding.c - OpSharding as HloSharding::ToString writes it
 * ({replicated}, {maximal device=0}, {devices=[2,1]0,1}, iota tile
 * assignments, last_tile_dim_replicate, last_tile_dims, shard groups, tuple
 * shardings) and the collective device lists of collectives (explicit
 * replica groups, iota lists, mesh axes), for the HLO text printer
 * (hlo_text_int.h).
 *
 * HloSharding::FromProto canonicalizes what it reads; the common cases are
 * done here too: partially replicated tiles sort the devices of each group,
 * degenerate ones become {replicated} or lose their last dimension, one
 * subgroup of replicated or manual devices becomes partial or manual, a
 * non-tuple sharding of a tuple repeats per leaf. Subgroups that XLA would
 * transpose into another order, and iota assignments that XLA would
 * re-factor, are printed as the proto has them.
 */
#include <stdlib.h>
#include <string.h>

#include "hlo_text_int.h"

/* OpSharding.Type values. */
enum {
    SH_REPLICATED = 0,
    SH_MAXIMAL = 1,
    SH_TUPLE = 2,
    SH_OTHER = 3,
    SH_MANUAL = 4,
    SH_UNKNOWN = 5,
    SH_UNREDUCED = 6,
};

/* Nesting of tuple shardings followed. */
#define SH_DEPTH 8

/* Subgroup types looked at (last_tile_dims). */
#define SH_MAX_SUBGROUPS 8

/* One OpSharding's fields (repeated ones are walked in msg). */
struct sh {
    struct wire msg;      /* the message */
    int64_t type;         /* 1 */
    uint64_t ndims;       /* tile_assignment_dimensions (3) */
    uint64_t ndevices;    /* tile_assignment_devices (4) */
    uint64_t nreshape;    /* iota_reshape_dims (9) */
    uint64_t nperm;       /* iota_transpose_perm (10) */
    uint64_t nlast;       /* last_tile_dims (8) */
    int64_t replicate;    /* replicate_on_last_tile_dim (6) */
    int64_t shard_group;  /* is_shard_group (11) */
    int64_t group_id;     /* shard_group_id (12) */
    int64_t group_type;   /* shard_group_type (13): 0 AS, 1 LIKE */
    uint64_t numel;       /* product of the tile dimensions */
    int64_t last;         /* the last tile dimension */
    int64_t first_device; /* tile_assignment_devices[0] */
    int reshape_all_ones; /* every iota_reshape_dims entry is 1 */
};

/* The product of the values of a repeated field, 0 when one is below 1 or
 * it passes 2^62; the last value into *last. */
static uint64_t product(struct wire msg, uint32_t field, int64_t *last, int *all_ones)
{
    struct txt_rep r;
    uint64_t v, p = 1;

    *all_ones = 1;
    txt_rep_init(&r, msg, field);
    while (txt_rep_next(&r, &v)) {
        if ((int64_t)v < 1 || (int64_t)v > ((int64_t)1 << 62) || p > (((uint64_t)1 << 62) / v))
            return 0;
        p *= v;
        *last = (int64_t)v;
        *all_ones &= v == 1;
    }
    return p;
}

/* Whether the values of field 10 are a permutation of [0, n). */
static int is_permutation(struct wire msg, uint64_t n)
{
    struct txt_rep r;
    uint64_t v, k = 0;
    uint8_t *seen;
    int ok = 1;

    if (n > 64)
        return 0;
    seen = calloc(n ? n : 1, 1);
    if (seen == NULL)
        return 0;
    txt_rep_init(&r, msg, 10);
    while (ok && txt_rep_next(&r, &v)) {
        ok = v < n && !seen[v];
        if (ok)
            seen[v] = 1;
        k++;
    }
    free(seen);
    return ok && k == n;
}

/* Read msg into h. */
static void sh_read(struct sh *h, struct wire msg)
{
    int ones;
    int64_t last = 0;

    memset(h, 0, sizeof(*h));
    h->msg = msg;
    txt_varint(msg, 1, &h->type);
    h->ndims = txt_rep_count(msg, 3);
    h->ndevices = txt_rep_count(msg, 4);
    h->nreshape = txt_rep_count(msg, 9);
    h->nperm = txt_rep_count(msg, 10);
    h->nlast = txt_rep_count(msg, 8);
    txt_varint(msg, 6, &h->replicate);
    txt_varint(msg, 11, &h->shard_group);
    txt_varint(msg, 12, &h->group_id);
    txt_varint(msg, 13, &h->group_type);
    h->numel = product(msg, 3, &h->last, &ones);
    product(msg, 9, &last, &h->reshape_all_ones);
    h->reshape_all_ones &= h->nreshape > 0;
    if (h->ndevices > 0) {
        struct txt_rep r;
        uint64_t v;
        txt_rep_init(&r, msg, 4);
        if (txt_rep_next(&r, &v))
            h->first_device = (int64_t)v;
    }
}

/* Whether a non-tuple h is a sharding XLA accepts (HloSharding::FromProto). */
static int sh_valid(const struct sh *h)
{
    int ones;
    int64_t last = 0;
    uint64_t want;

    if (h->type == SH_REPLICATED || h->type == SH_MANUAL || h->type == SH_UNKNOWN ||
        h->type == SH_UNREDUCED || h->ndevices == 1 || h->reshape_all_ones)
        return 1;
    if (h->type != SH_OTHER || h->ndims == 0 || h->numel == 0)
        return 0;
    if (h->nreshape > 0) {
        if (h->ndevices != 0 || h->nreshape != h->nperm || !is_permutation(h->msg, h->nperm))
            return 0;
        want = product(h->msg, 9, &last, &ones);
    } else {
        want = h->ndevices;
    }
    if (want != h->numel)
        return 0;
    return h->nlast == 0 || (!h->replicate && h->nlast <= h->ndims);
}

/* " shard_as 1" / " shard_like 1" (ShardGroup::ToString). */
static void put_group(struct out *o, const struct sh *h)
{
    if (!h->shard_group)
        return;
    out_puts(o, h->group_type == 0 ? " shard_as " : " shard_like ");
    out_i64(o, h->group_id);
}

/* A keyword sharding: "{replicated}", "{manual}" ... */
static void put_keyword(struct out *o, const struct sh *h, const char *word)
{
    out_putc(o, '{');
    out_puts(o, word);
    put_group(o, h);
    out_putc(o, '}');
}

/* Order of two devices. */
static int dev_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return x < y ? -1 : x > y;
}

/* How a tiled sharding prints after canonicalization. */
struct tiled {
    uint64_t ndims;                  /* tile dimensions printed (the last may be dropped) */
    int sort;                        /* sort the devices of each group of `last` */
    int replicate;                   /* " last_tile_dim_replicate" */
    uint64_t nlast;                  /* subgroup types printed */
    int64_t types[SH_MAX_SUBGROUPS]; /* their types */
};

/* The tile assignment: "devices=[2,2]0,1,2,3" or "devices=[2,2]<=[4]". */
static void put_devices(struct out *o, const struct sh *h, const struct tiled *t, size_t limit)
{
    struct txt_rep r;
    uint64_t v, k = 0, n;
    int64_t *dev;

    out_puts(o, "devices=[");
    txt_rep_init(&r, h->msg, 3);
    while (k < t->ndims && !txt_full(o, limit) && txt_rep_next(&r, &v)) {
        if (k++ > 0)
            out_putc(o, ',');
        out_i64(o, (int64_t)v);
    }
    out_putc(o, ']');
    if (h->nreshape > 0) {
        out_puts(o, "<=[");
        txt_i64s(o, h->msg, 9, ",", limit);
        out_putc(o, ']');
        if (h->nreshape > 1) {
            out_puts(o, "T(");
            txt_i64s(o, h->msg, 10, ",", limit);
            out_putc(o, ')');
        }
        return;
    }
    dev = t->sort ? malloc(h->ndevices * sizeof(*dev)) : NULL;
    if (dev == NULL) {
        if (t->sort)
            txt_oom(o);
        txt_i64s(o, h->msg, 4, ",", limit);
        return;
    }
    n = 0;
    txt_rep_init(&r, h->msg, 4);
    while (n < h->ndevices && txt_rep_next(&r, &v))
        dev[n++] = (int64_t)v;
    for (k = 0; k + (uint64_t)h->last <= n; k += (uint64_t)h->last)
        qsort(dev + k, (size_t)h->last, sizeof(*dev), dev_cmp);
    for (k = 0; k < n && !txt_full(o, limit); k++) {
        if (k > 0)
            out_putc(o, ',');
        out_i64(o, dev[k]);
    }
    free(dev);
}

/* The print name of a subgroup type (HloSharding::Print's spelling). */
static const char *subgroup_name(int64_t type)
{
    switch (type) {
    case SH_MANUAL:
        return "manual";
    case SH_MAXIMAL:
        return "maximul";
    case SH_REPLICATED:
        return "replicated";
    case SH_UNREDUCED:
        return "unreduced";
    default:
        return "error_type.";
    }
}

/* A canonical tiled sharding. */
static void put_tiled(struct out *o, const struct sh *h, const struct tiled *t, size_t limit)
{
    uint64_t i;

    out_putc(o, '{');
    put_devices(o, h, t, limit);
    if (t->replicate)
        out_puts(o, " last_tile_dim_replicate");
    if (t->nlast > 0) {
        struct txt_rep r;
        uint64_t v;
        out_puts(o, " last_tile_dims={");
        txt_rep_init(&r, h->msg, 8);
        for (i = 0; i < t->nlast && !txt_full(o, limit) && txt_rep_next(&r, &v); i++) {
            if (i > 0)
                out_puts(o, ", ");
            out_puts(o, subgroup_name((int64_t)v));
        }
        out_putc(o, '}');
    }
    put_group(o, h);
    out_putc(o, '}');
}

/* Rank of a subgroup type in HloSharding::Subgroup's merge order. */
static int subgroup_rank(int64_t type)
{
    static const int8_t rank[] = {4, 0, 1, 2, 3, 5, 6};

    return type >= 0 && type <= 6 ? rank[type] : 7;
}

/* HloSharding::PartialTile of h (the last dimension replicated): 1 when it
 * became {replicated} (printed), else t describes the tiles. */
static int partial_tile(struct out *o, const struct sh *h, struct tiled *t)
{
    if (h->ndims == 1 || (uint64_t)h->last == h->numel) {
        put_keyword(o, h, "replicated");
        return 1;
    }
    if (h->last == 1) {
        t->ndims = h->ndims - 1;
        return 0;
    }
    t->sort = 1;
    t->replicate = 1;
    return 0;
}

/* HloSharding::Subgroup of h (last_tile_dims given): 1 when printed as a
 * keyword, else t describes the tiles. */
static int subgroups(struct out *o, const struct sh *h, struct tiled *t)
{
    struct txt_rep r;
    uint64_t v, i, data = h->ndims - h->nlast, data_numel = 1, k = 0;
    int64_t dims[SH_MAX_SUBGROUPS];
    int same = 1, ordered = 1;

    txt_rep_init(&r, h->msg, 3);
    while (txt_rep_next(&r, &v)) {
        if (k < data) {
            if (__builtin_mul_overflow(data_numel, v, &data_numel))
                data_numel = UINT64_MAX; /* not 1 (sh_valid bounds it anyway) */
        } else if (k - data < SH_MAX_SUBGROUPS)
            dims[k - data] = (int64_t)v;
        k++;
    }
    txt_rep_init(&r, h->msg, 8);
    for (i = 0; i < h->nlast && i < SH_MAX_SUBGROUPS && txt_rep_next(&r, &v); i++)
        t->types[i] = (int64_t)v;
    t->nlast = h->nlast;
    if (h->nlast > SH_MAX_SUBGROUPS)
        return 0; /* printed as given */
    for (i = 1; i < h->nlast; i++) {
        same &= t->types[i] == t->types[0];
        ordered &= subgroup_rank(t->types[i - 1]) < subgroup_rank(t->types[i]);
    }
    if (same && data_numel == 1 && (t->types[0] == SH_MANUAL || t->types[0] == SH_REPLICATED)) {
        put_keyword(o, h, t->types[0] == SH_MANUAL ? "manual" : "replicated");
        return 1;
    }
    for (i = 0; i < h->nlast; i++)
        ordered &= dims[i] != 1;
    if (!ordered)
        return 0; /* XLA would merge and transpose: printed as given */
    if (h->nlast == 1 && t->types[0] == SH_REPLICATED) {
        t->nlast = 0;
        return partial_tile(o, h, t);
    }
    if (h->nlast == 1 && t->types[0] == SH_MANUAL && (uint64_t)h->last == h->numel) {
        put_keyword(o, h, "manual");
        return 1;
    }
    if (t->types[h->nlast - 1] == SH_REPLICATED) {
        if (partial_tile(o, h, t))
            return 1;
        t->replicate = 0;
    }
    return 0;
}

/* A valid non-tuple sharding. */
static void put_leaf(struct out *o, const struct sh *h, size_t limit)
{
    struct tiled t;

    switch (h->type) {
    case SH_REPLICATED:
        put_keyword(o, h, "replicated");
        return;
    case SH_MANUAL:
        put_keyword(o, h, "manual");
        return;
    case SH_UNKNOWN:
        put_keyword(o, h, "unknown");
        return;
    case SH_UNREDUCED:
        put_keyword(o, h, "unreduced");
        return;
    default:
        break;
    }
    if (h->ndevices == 1 || h->reshape_all_ones) {
        out_puts(o, "{maximal device=");
        out_i64(o, h->ndevices == 1 ? h->first_device : 0);
        put_group(o, h);
        out_putc(o, '}');
        return;
    }
    memset(&t, 0, sizeof(t));
    t.ndims = h->ndims;
    if (h->nlast > 0 && subgroups(o, h, &t))
        return;
    if (h->nlast == 0 && h->replicate && partial_tile(o, h, &t))
        return;
    put_tiled(o, h, &t, limit);
}

/* Whether sharding msg (tuple or not) is valid, depth tuples deep. */
static int valid(struct wire msg, int depth)
{
    struct sh h;
    struct wire cur = msg, sub;

    sh_read(&h, msg);
    if (h.type != SH_TUPLE)
        return sh_valid(&h);
    if (depth >= SH_DEPTH)
        return 0;
    while (txt_msg_next(&cur, 5, &sub)) {
        if (!valid(sub, depth + 1))
            return 0;
    }
    return 1;
}

/* The separator before tuple element i, annotated every fifth. */
static void put_tuple_sep(struct out *o, uint64_t i)
{
    if (i > 0 && i % 5 == 0)
        out_printf(o, ", /*index=%llu*/", (unsigned long long)i);
    else if (i > 0)
        out_puts(o, ", ");
}

/* A valid sharding msg. */
static void put_sharding(struct out *o, struct wire msg, const struct hlo_shape *shape,
                         size_t limit)
{
    struct sh h;
    struct wire cur = msg, sub;
    uint64_t i, n;

    sh_read(&h, msg);
    if (h.type == SH_TUPLE) {
        out_putc(o, '{');
        for (i = 0; !txt_full(o, limit) && txt_msg_next(&cur, 5, &sub); i++) {
            put_tuple_sep(o, i);
            put_sharding(o, sub, NULL, limit);
        }
        out_putc(o, '}');
        return;
    }
    if (shape == NULL || shape->type != HLO_TUPLE) {
        put_leaf(o, &h, limit);
        return;
    }
    n = txt_leaf_count(shape);
    out_putc(o, '{');
    for (i = 0; i < n && !txt_full(o, limit); i++) {
        put_tuple_sep(o, i);
        put_leaf(o, &h, limit);
    }
    out_putc(o, '}');
}

int txt_sharding(struct out *o, const char *prefix, struct wire sharding,
                 const struct hlo_shape *shape, size_t limit)
{
    if (!valid(sharding, 0))
        return -1;
    out_puts(o, prefix);
    put_sharding(o, sharding, shape, limit);
    return 0;
}

/* ---- collective device lists ---- */

/* IotaReplicaGroupListProto: "[2,2]<=[4]", "[2,2]<=[2,2]T(1,0)". */
static void put_iota_list(struct out *o, struct wire w, size_t limit)
{
    int64_t groups = 0, per_group = 0;
    uint64_t nreshape = txt_rep_count(w, 3);

    txt_varint(w, 1, &groups);
    txt_varint(w, 2, &per_group);
    out_putc(o, '[');
    out_i64(o, groups);
    out_putc(o, ',');
    out_i64(o, per_group);
    out_puts(o, "]<=[");
    if (nreshape == 0)
        out_u64(o, (uint64_t)groups * (uint64_t)per_group);
    else
        txt_i64s(o, w, 3, ",", limit);
    out_putc(o, ']');
    if (nreshape > 1) {
        out_puts(o, "T(");
        txt_i64s(o, w, 4, ",", limit);
        out_putc(o, ')');
    }
}

/* Repeated ReplicaGroup fields `field` of msg: "{{0,1},{2,3}}". */
static void put_group_list(struct out *o, struct wire msg, uint32_t field, size_t limit)
{
    struct wire g;
    int first = 1;

    out_putc(o, '{');
    while (!txt_full(o, limit) && txt_msg_next(&msg, field, &g)) {
        if (!first)
            out_putc(o, ',');
        txt_braced_i64s(o, g, 1, limit);
        first = 0;
    }
    out_putc(o, '}');
}

/* The name of mesh axis index of mesh (its number when out of range). */
static void put_axis_name(struct out *o, struct wire mesh, int64_t index, size_t limit)
{
    struct wire cur = mesh, axis, name;
    int64_t i = 0;

    while (txt_msg_next(&cur, 1, &axis)) {
        if (i++ == index) {
            if (txt_msg(axis, 1, &name))
                txt_bytes(o, name.p, (size_t)(name.end - name.p), limit);
            return;
        }
    }
    out_i64(o, index);
}

/* MeshAxesReplicaGroupListProto: "mesh[a=4,b=2] {a}" (Mesh::ToString and
 * AxisRef::ToString). */
static void put_mesh_list(struct out *o, struct wire w, size_t limit)
{
    struct wire mesh = {NULL, NULL}, cur, axis, name, sub;
    int64_t v;
    int first = 1;

    txt_msg(w, 1, &mesh);
    cur = mesh;
    if (txt_rep_count(mesh, 2) == 1 && !txt_msg(mesh, 1, &axis)) {
        v = 0;
        txt_varint(mesh, 2, &v);
        out_puts(o, "maximal_mesh[device_id=");
        out_i64(o, v);
        out_putc(o, ']');
    } else {
        out_puts(o, "mesh[");
        while (!txt_full(o, limit) && txt_msg_next(&cur, 1, &axis)) {
            v = 0;
            if (!first)
                out_putc(o, ',');
            if (txt_msg(axis, 1, &name))
                txt_bytes(o, name.p, (size_t)(name.end - name.p), limit);
            txt_varint(axis, 2, &v);
            out_putc(o, '=');
            out_i64(o, v);
            first = 0;
        }
        out_putc(o, ']');
        if (txt_rep_count(mesh, 2) > 0) {
            out_puts(o, ", device_ids=(");
            txt_i64s(o, mesh, 2, ",", limit);
            out_putc(o, ')');
        }
    }
    out_puts(o, " {");
    first = 1;
    cur = w;
    while (!txt_full(o, limit) && txt_msg_next(&cur, 2, &axis)) {
        v = 0;
        if (!first)
            out_putc(o, ',');
        txt_varint(axis, 1, &v);
        put_axis_name(o, mesh, v, limit);
        if (txt_msg(axis, 2, &sub)) {
            int64_t pre = 0, size = 0;
            txt_varint(sub, 1, &pre);
            txt_varint(sub, 2, &size);
            out_printf(o, ":(%lld)%lld", (long long)pre, (long long)size);
        }
        first = 0;
    }
    out_putc(o, '}');
}

void txt_replica_groups(struct out *o, const struct txt_instr *in, size_t limit)
{
    struct wire g, iota;

    if (txt_has(in->iota_list)) {
        put_iota_list(o, in->iota_list, limit);
    } else if (txt_has(in->mesh_list)) {
        put_mesh_list(o, in->mesh_list, limit);
    } else if (txt_msg(in->all, 49, &g)) {
        put_group_list(o, in->all, 49, limit);
    } else if (txt_has(in->device_list) && txt_msg(in->device_list, 2, &iota)) {
        put_iota_list(o, iota, limit);
    } else if (txt_has(in->device_list)) {
        put_group_list(o, in->device_list, 1, limit);
    } else {
        out_puts(o, "{}");
    }
}
