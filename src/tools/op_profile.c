/*
 * op_profile.c - op_profile.json: XProf's op profile (op_profile.Profile,
 * xprof/convert/op_profile_processor.cc) printed as protobuf's JSON printer
 * prints it with always_print_fields_with_no_presence: lowerCamelCase names
 * in field-number order, 64-bit integers quoted, doubles as SimpleDtoa
 * (%.15g, %.17g when that does not read back), unset messages and unset
 * optional fields left out, '<' and '>' escaped.
 *
 * ?group_by=program (default), category or provenance picks the pair of
 * trees (with and without IDLE) XProf fills. The trees are built by
 * op_stats/op_profile_tree.c from the device op metrics of the run or host;
 * program nodes are named after the host HLO modules ("main" when unknown;
 * their names from hlo_names.h, kept in the persistent cache).
 * A device db without rows gives XProf's empty Nodes; one holding IDLE alone
 * gives XProf's quirk of a root replaced by the IDLE op.
 *
 * Where we differ on purpose: another group_by value is refused (XProf
 * falls back to program); equal sort keys keep creation order (XProf's
 * partial_sort leaves it undefined); TPU ops have no fused-instruction
 * children (our op_stats carry none). xprofKernelMetadata is taken from the
 * expression's kernel_metadata frontend attribute (hlo_kernel_metadata.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "hlo/hlo_names.h"
#include "op_stats/op_profile_tree.h"
#include "op_stats/op_stats.h"
#include "out/pbjson.h"
#include "tool.h"

static const struct query_key op_profile_keys[] = {
    {"group_by", Q_STRING, 0, 0},
    {NULL, Q_STRING, 0, 0},
};

/* program_id_to_name_map: the first module of each program id, hosts in
 * order (CombineOpStats keeps the first host's name). */
struct prog_names {
    uint64_t *ids;      /* program ids */
    const char **names; /* module names (owned by the snapshot's hlo_names) */
    uint32_t n;         /* entries */
    uint32_t cap;       /* slots in ids */
    uint32_t ncap;      /* slots in names */
};

static const char *prog_name(void *arg, uint64_t id)
{
    const struct prog_names *p = arg;
    uint32_t i;

    for (i = 0; i < p->n; i++) {
        if (p->ids[i] == id)
            return p->names[i];
    }
    return NULL;
}

/* Collect the program names of the hosts of ctx. Returns 0 or -errno. */
static int collect_names(struct tool_ctx *ctx, struct prog_names *p)
{
    int h, rc;
    uint32_t i;

    for (h = 0; h < tool_host_count(ctx); h++) {
        const char *host = tool_host(ctx, h);
        const struct hlo_names *mods;
        if (snapshot_host_file(ctx->snap, host, SRC_XPLANE) == NULL)
            continue;
        if ((rc = snapshot_hlo_names(ctx->snap, host, &mods, ctx->err)) != 0)
            return rc;
        for (i = 0; i < mods->nmods; i++) {
            uint64_t id = mods->program_ids[i];
            if (prog_name(p, id) != NULL)
                continue;
            if (xp_grow((void **)&p->ids, &p->cap, p->n, sizeof(*p->ids)) != 0 ||
                xp_grow((void **)&p->names, &p->ncap, p->n, sizeof(*p->names)) != 0)
                return xp_err_set(ctx->err, -ENOMEM, "op_profile: out of memory");
            p->ids[p->n] = id;
            p->names[p->n++] = mods->names[i];
        }
    }
    return 0;
}

/* A C string the protobuf way (NULL as ""). */
static void pb_str(struct out *o, const char *s)
{
    if (s == NULL)
        s = "";
    pbjson_str(o, s, strlen(s));
}

static void pb_doubles(struct out *o, const double *v, int n)
{
    int i;

    out_putc(o, '[');
    for (i = 0; i < n; i++) {
        if (i > 0)
            out_putc(o, ',');
        pbjson_double(o, v[i]);
    }
    out_putc(o, ']');
}

/* ---- the Profile ---------------------------------------------------------- */

/* op_profile.Metrics, fields in number order. */
static void write_metrics(struct out *o, const struct op_profile_metrics *m)
{
    out_puts(o, "{\"flops\":");
    pbjson_double(o, m->flops);
    out_puts(o, ",\"bandwidthUtils\":");
    pb_doubles(o, m->bandwidth_utils, 3);
    out_puts(o, ",\"rawTime\":");
    pbjson_double(o, m->raw_time);
    out_puts(o, ",\"rawFlops\":");
    pbjson_double(o, m->raw_flops);
    out_puts(o, ",\"rawBytesAccessedArray\":");
    pb_doubles(o, m->raw_bytes_accessed_array, 3);
    out_puts(o, ",\"occurrences\":");
    out_u64(o, m->occurrences);
    out_puts(o, ",\"avgTimePs\":");
    pbjson_double(o, m->avg_time_ps);
    out_puts(o, ",\"bf16Flops\":");
    pbjson_double(o, m->bf16_flops);
    out_puts(o, ",\"uncappedFlops\":");
    pbjson_double(o, m->uncapped_flops);
    out_puts(o, ",\"normalizedTimePs\":");
    pbjson_double(o, m->normalized_time_ps);
    out_putc(o, '}');
}

/* Node.XLAInstruction. */
static void write_xla(struct out *o, const struct op_profile_xla *x)
{
    out_puts(o, "{\"op\":\"\",\"expression\":");
    pb_str(o, x->expression);
    out_puts(o, ",\"provenance\":");
    pb_str(o, x->provenance);
    out_puts(o, ",\"category\":");
    pb_str(o, x->category);
    if (x->has_layout)
        out_puts(o, ",\"layout\":{\"dimensions\":[]}");
    out_puts(o, ",\"computationPrimitiveSize\":0,\"fingerprint\":");
    pbjson_u64(o, x->fingerprint);
    out_puts(o, ",\"programId\":");
    pbjson_u64(o, x->program_id);
    if (x->has_source_info) {
        out_puts(o, ",\"sourceInfo\":{\"fileName\":");
        pb_str(o, x->source_file);
        out_puts(o, ",\"lineNumber\":");
        out_i64(o, x->source_line);
        out_puts(o, ",\"stackFrame\":");
        pb_str(o, x->stack_frame);
        out_putc(o, '}');
    }
    if (x->has_kernel_metadata) {
        out_puts(o, ",\"xprofKernelMetadata\":");
        pb_str(o, x->kernel_metadata);
    }
    out_putc(o, '}');
}

/* A node up to its children's '[' . */
static void node_open(struct out *o, const struct op_profile_node *n)
{
    out_puts(o, "{\"name\":");
    pb_str(o, n->name);
    out_puts(o, ",\"metrics\":");
    write_metrics(o, &n->metrics);
    out_puts(o, ",\"children\":[");
}

/* A node from its children's ']' on. */
static void node_close(struct out *o, const struct op_profile_node *n)
{
    out_putc(o, ']');
    if (n->has_xla) {
        out_puts(o, ",\"xla\":");
        write_xla(o, &n->xla);
    }
    out_puts(o, ",\"numChildren\":");
    out_i64(o, n->num_children);
    out_putc(o, '}');
}

struct write_frame {
    const struct op_profile_node *n; /* the node */
    uint32_t next;                   /* its next child to write */
};

/* A tree as op_profile.Node, depth first without recursion. Returns 0 or
 * -ENOMEM. */
static int write_tree(struct out *o, const struct op_profile_tree *t)
{
    struct write_frame *stack;
    uint32_t sp = 0;

    if (t->root == NULL) {
        /* BuildOpProfileNodeTree returned before naming the root */
        out_puts(o, "{\"name\":\"\",\"children\":[],\"numChildren\":0}");
        return 0;
    }
    if ((stack = malloc((t->nall + 1) * sizeof(*stack))) == NULL)
        return -ENOMEM;
    node_open(o, t->root);
    stack[sp++] = (struct write_frame){t->root, 0};
    while (sp > 0) {
        struct write_frame *f = &stack[sp - 1];
        if (f->next < f->n->nchildren) {
            const struct op_profile_node *c = f->n->children[f->next];
            if (f->next++ > 0)
                out_putc(o, ',');
            node_open(o, c);
            stack[sp++] = (struct write_frame){c, 0};
            continue;
        }
        node_close(o, f->n);
        sp--;
    }
    free(stack);
    return 0;
}

/* The Profile's field names of each grouping: the tree, then without IDLE. */
static const char *const field_names[3][2] = {
    [OPP_BY_PROGRAM] = {"byProgram", "byProgramExcludeIdle"},
    [OPP_BY_CATEGORY] = {"byCategory", "byCategoryExcludeIdle"},
    [OPP_BY_PROVENANCE] = {"byProvenance", "byProvenanceExcludeIdle"},
};

/* Build and write one tree of the pair ("name": Node). */
static int write_variant(struct out *o, const struct op_stats *os, enum op_profile_group g,
                         int exclude_idle, struct prog_names *names)
{
    struct op_profile_options opt = {g, exclude_idle, 100};
    struct op_profile_tree t;
    int rc;

    rc = op_profile_tree_build(&t, &os->device_db, &opt, os->peak_tflops, os->peak_bws,
                               os->npeak_bws, prog_name, names);
    if (rc != 0)
        return rc;
    out_putc(o, '"');
    out_puts(o, field_names[g][exclude_idle]);
    out_puts(o, "\":");
    rc = write_tree(o, &t);
    op_profile_tree_free(&t);
    return rc;
}

/* Profile in field-number order: by_category (1), by_program (4),
 * device_type (5), by_category_exclude_idle (6), by_program_exclude_idle
 * (7), by_provenance (8), by_provenance_exclude_idle (9),
 * agg_dvfs_time_scale_multiplier (10); only the requested pair is set. */
static int write_profile(struct out *o, const struct op_stats *os, enum op_profile_group g,
                         struct prog_names *names)
{
    int rc = 0;

    out_putc(o, '{');
    if (g != OPP_BY_PROVENANCE) {
        if ((rc = write_variant(o, os, g, 0, names)) != 0)
            return rc;
        out_putc(o, ',');
    }
    out_puts(o, "\"deviceType\":");
    pb_str(o, op_hardware_type_name(op_parse_hardware_type(os->device_type)));
    out_putc(o, ',');
    if (g == OPP_BY_PROVENANCE) {
        if ((rc = write_variant(o, os, g, 0, names)) != 0)
            return rc;
        out_putc(o, ',');
    }
    if ((rc = write_variant(o, os, g, 1, names)) != 0)
        return rc;
    out_puts(o, ",\"aggDvfsTimeScaleMultiplier\":");
    pbjson_double(o, op_profile_dvfs_multiplier(&os->device_db));
    out_putc(o, '}');
    return 0;
}

/* The group_by option; -EINVAL with the reason for a bad one. */
static int parse_group_by(struct tool_ctx *ctx, enum op_profile_group *g)
{
    const char *s = query_get(ctx->q, "group_by");

    if (s == NULL || strcmp(s, "program") == 0)
        *g = OPP_BY_PROGRAM;
    else if (strcmp(s, "category") == 0)
        *g = OPP_BY_CATEGORY;
    else if (strcmp(s, "provenance") == 0)
        *g = OPP_BY_PROVENANCE;
    else
        return xp_err_set(ctx->err, -EINVAL,
                          "group_by=%s: group_by is program, category or provenance", s);
    return 0;
}

static int op_profile_produce(struct tool_ctx *ctx, struct out *o)
{
    const struct op_stats *os;
    struct prog_names names;
    enum op_profile_group g = OPP_BY_PROGRAM;
    int rc;

    if ((rc = parse_group_by(ctx, &g)) != 0)
        return rc;
    if ((rc = snapshot_op_stats(ctx->snap, ctx->host, &os, ctx->err)) != 0)
        return rc;
    if (os->device_db.nrows <= 1) /* IDLE at most */
        tool_note_no_hlo(ctx, "op_profile.json");
    else
        tool_note_hlo_texts(ctx, "op_profile.json");
    memset(&names, 0, sizeof(names));
    rc = collect_names(ctx, &names);
    if (rc == 0 && (rc = write_profile(o, os, g, &names)) != 0)
        rc = xp_err_set(ctx->err, rc, "op_profile: out of memory");
    free(names.ids);
    free(names.names);
    return rc;
}

const struct tool tool_op_profile_json = {
    .file = "op_profile.json",
    .tag = "op_profile",
    .scope = TOOL_RUN | TOOL_HOST,
    .keys = op_profile_keys,
    .listed = tool_listed_xplane,
    .produce = op_profile_produce,
};
