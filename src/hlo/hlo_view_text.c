/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hlo_view_text.c - a whole HLO module as XLA's HloModule::ToString prints
 * it with the options of XProf's ConvertHloProtoToStringView (hlo_view.h):
 * short_txt is HloPrintOptions::ShortParsable() without large constants,
 * long_txt the default options with large constants; metadata per flag.
 *
 * As XLA prints it: the header (name, is_scheduled, input_output_alias,
 * buffer_donor, entry_computation_layout, frontend_attributes), the
 * computations in the DFS post order of the call graph (async computations
 * the syntax sugar hides left out), "ENTRY " before the entry, each with its
 * program shape (long) and its instructions in schedule order when the
 * module has a schedule for it, else in XLA's instruction post order
 * (operands first, control predecessors and channel dependencies
 * included), "ROOT " before the root, execution threads. Instructions are
 * hlo_instr_print's text (hlo_text.h); short_txt drops its '%'s, operand
 * shapes, its "index=N" operand comments and control-predecessors as ShortParsable
 * does, long_txt adds backend_config=; both add metadata={...} with the flag.
 *
 * Large constants: long_txt prints the literal of array constants of up to
 * HLO_TEXT_LARGE_CONSTANT elements (hlo_text.h), short_txt of up to ten.
 *
 * Not reproduced: tuple constants and arrays past that size print as
 * "{...}" in long_txt too; infeed/outfeed configs
 * (left out by the instruction printer); the entry layout is the entry
 * computation's parameter and root shapes (XLA reads the same shapes from
 * host_program_shape, which is only checked to be present); the stack
 * frame index section newer XLA appends with metadata; replica_count and
 * num_partitions (never set from a proto); a module XLA would refuse (no
 * host_program_shape, duplicate names, a schedule that is not a permutation)
 * is printed anyway, with the post order for a bad schedule.
 */
#include "hlo_view.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"

/* Channel-dependency pushes of one computation's post order, at most. */
#define CHANNEL_PUSH_MAX ((uint64_t)1 << 24)

/* Whether s[0..n) lexes as a JSON dict (LexesAsJsonDict): blanks, "{",
 * balanced braces outside strings, "}", blanks. */
static int json_dict(const uint8_t *p, const uint8_t *end)
{
    int64_t depth = 0;

    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    if (p == end || *p != '{')
        return 0;
    for (; p < end; p++) {
        if (*p == '"') {
            for (p++; p < end && *p != '"'; p++)
                p += *p == '\\' && p + 1 < end;
            if (p >= end)
                return 0;
        } else if (*p == '{') {
            depth++;
        } else if (*p == '}' && --depth == 0) {
            break;
        }
    }
    if (p >= end)
        return 0;
    for (p++; p < end; p++) {
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
            return 0;
    }
    return 1;
}

/* ---- instructions ---- */

/* Whether byte c starts a name. */
static int name_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

/* The attributes s[0..n) without '%' before names and without
 * control-predecessors (ShortParsable's print_percent and
 * print_control_dependencies off). */
static void short_attrs(struct out *o, const char *s, size_t n)
{
    static const char ctrl[] = ", control-predecessors={";
    size_t i = 0, k = sizeof(ctrl) - 1;

    while (i < n) {
        char c = s[i];
        if (c == '"') {
            size_t end = i + 1;
            for (; end < n && s[end] != '"'; end++)
                end += s[end] == '\\' && end + 1 < n;
            end = end < n ? end + 1 : n;
            out_write(o, s + i, end - i);
            i = end;
            continue;
        }
        if (c == ',' && n - i >= k && memcmp(s + i, ctrl, k) == 0) {
            size_t close = hlo_view_scan(s, n, i + k, '}');
            i = close < n ? close + 1 : n;
            continue;
        }
        if (c == '%' && i > 0 && (s[i - 1] == '=' || s[i - 1] == '{' || s[i - 1] == ' ') &&
            i + 1 < n && name_start(s[i + 1])) {
            i++;
            continue;
        }
        out_putc(o, c);
        i++;
    }
}

/* The operands s[0..n) without shapes and index comments. */
static void short_operands(struct out *o, const char *s, size_t n)
{
    size_t i = 0;
    int first = 1;

    while (i < n) {
        size_t end = hlo_view_scan(s, n, i, ','), j, name = i;
        if (!first)
            out_puts(o, ", ");
        first = 0;
        while (i < end && s[i] == ' ')
            i++;
        if (end - i >= 2 && s[i] == '/' && s[i + 1] == '*') {
            for (j = i + 2; j + 1 < end && !(s[j] == '*' && s[j + 1] == '/'); j++)
                ;
            i = j + 2 < end ? j + 2 : end;
        }
        name = i;
        for (j = i; j + 1 < end; j++) {
            if (s[j] == ' ' && s[j + 1] == '%')
                name = j + 2;
        }
        if (name == i && i < end && s[i] == '%')
            name = i + 1;
        out_write(o, s + name, end - name);
        i = end < n ? end + 1 : n;
    }
}

/* The instruction text s[0..n) as ShortParsable prints it. */
static void short_instr(struct out *o, const struct hlo_view *v, uint32_t node, const char *s,
                        size_t n)
{
    struct hlo_view_parts p;
    const char *op = v->g.nodes[node].opcode;

    if (hlo_view_split(s, n, &p) != 0) {
        out_write(o, s + (n > 0 && s[0] == '%'), n - (n > 0 && s[0] == '%'));
        return;
    }
    out_write(o, s + (s[0] == '%'), p.operands - (s[0] == '%'));
    if (strcmp(op, "constant") == 0 || strcmp(op, "parameter") == 0)
        out_write(o, s + p.operands, p.operands_end - p.operands);
    else
        short_operands(o, s + p.operands, p.operands_end - p.operands);
    out_putc(o, ')');
    short_attrs(o, s + p.attrs, n - p.attrs);
}

/* The string field f of message m into *s: 1 when non-empty. */
static int str_field(struct wire m, uint32_t f, struct wire *s)
{
    int found = 0;

    s->p = s->end = NULL;
    while (!wire_eof(&m)) {
        uint32_t ff;
        int t;
        struct wire x;
        if (wire_key(&m, &ff, &t) != 0)
            break;
        if (t == WIRE_LEN) {
            if (wire_bytes(&m, &x) != 0)
                break;
            if (ff == f) {
                *s = x;
                found = x.p != x.end;
            }
        } else if (wire_skip(&m, t) != 0) {
            break;
        }
    }
    return found;
}

/* The last varint field f of message m, 0 when absent. */
static int64_t int_field(struct wire m, uint32_t f)
{
    int64_t v = 0;

    while (!wire_eof(&m)) {
        uint32_t ff;
        int t;
        uint64_t x;
        if (wire_key(&m, &ff, &t) != 0)
            break;
        if (ff == f && t == WIRE_VARINT) {
            if (wire_varint(&m, &x) != 0)
                break;
            v = (int64_t)x;
        } else if (wire_skip(&m, t) != 0) {
            break;
        }
    }
    return v;
}

/* One quoted, escaped metadata string: ` key="value"`. */
static void meta_str(struct out *o, int *n, const char *key, struct wire s, int escape)
{
    if (*n > 0)
        out_putc(o, ' ');
    (*n)++;
    out_puts(o, key);
    out_puts(o, "=\"");
    if (escape)
        hlo_view_cescape(o, s.p, (size_t)(s.end - s.p));
    else
        out_write(o, s.p, (size_t)(s.end - s.p));
    out_putc(o, '"');
}

/* ", metadata={...}" of node (OpMetadataToString), when it has some. */
static void put_metadata(struct out *o, const struct hlo_view *v, uint32_t node)
{
    struct wire m, s, sched;
    struct hlo_view_rep r;
    uint64_t x;
    int64_t line;
    int n = 0, k = 0;

    if (!hlo_view_field(v, node, 7, &m, NULL))
        return;
    if (!str_field(m, 1, &s) && !str_field(m, 2, &s) && !str_field(m, 3, &s) &&
        !str_field(m, 16, &sched))
        return;
    out_puts(o, ", metadata={");
    if (str_field(m, 1, &s))
        meta_str(o, &n, "op_type", s, 1);
    if (str_field(m, 2, &s))
        meta_str(o, &n, "op_name", s, 1);
    if (str_field(m, 3, &s))
        meta_str(o, &n, "source_file", s, 1);
    line = (int32_t)int_field(m, 4);
    if (line != 0) {
        out_printf(o, "%ssource_line=%lld", n++ > 0 ? " " : "", (long long)line);
    }
    hlo_view_rep_init(&r, m, 5);
    while (hlo_view_rep_next(&r, &x)) {
        out_printf(o, "%s%d", k == 0 ? (n++ > 0 ? " profile_type={" : "profile_type={") : ",",
                   (int)x);
        k++;
    }
    if (k > 0)
        out_putc(o, '}');
    if (str_field(m, 12, &s))
        meta_str(o, &n, "deduplicated_name", s, 1);
    if (str_field(m, 16, &s))
        meta_str(o, &n, "scheduling_name", s, 0);
    out_putc(o, '}');
}

/* ", backend_config=..." of node: as it is when it lexes as a JSON dict,
 * else quoted and escaped. */
static void put_backend_config(struct out *o, const struct hlo_view *v, uint32_t node)
{
    struct wire b;

    if (!hlo_view_field(v, node, 43, &b, NULL) || b.p == b.end)
        return;
    out_puts(o, ", backend_config=");
    if (json_dict(b.p, b.end)) {
        out_write(o, b.p, (size_t)(b.end - b.p));
    } else {
        out_putc(o, '"');
        hlo_view_cescape(o, b.p, (size_t)(b.end - b.p));
        out_putc(o, '"');
    }
}

/* One instruction line. 0 or -ENOMEM. */
static int put_instr(struct out *o, const struct hlo_view *v, uint32_t node, int verbose,
                     int metadata, struct out *scratch)
{
    const struct hlo_comp *cp = &v->g.comps[v->g.nodes[node].comp];
    const char *s;
    size_t n;
    char *copy;

    if (hlo_view_instr_text(v, node, verbose, scratch, &s, &n, &copy) != 0)
        return -ENOMEM;
    out_puts(o, cp->root == node ? "  ROOT " : "  ");
    if (verbose)
        out_write(o, s, n);
    else
        short_instr(o, v, node, s, n);
    free(copy);
    if (metadata)
        put_metadata(o, v, node);
    if (verbose)
        put_backend_config(o, v, node);
    out_putc(o, '\n');
    return 0;
}

/* ---- instruction orders ---- */

/* Whether opcode is a collective XLA orders by channel. */
static int channel_op(const char *op)
{
    static const char *const ops[] = {
        "all-reduce",         "all-gather",        "all-to-all",    "collective-broadcast",
        "collective-permute", "ragged-all-to-all", "reduce-scatter"};
    size_t i;

    for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        if (strcmp(op, ops[i]) == 0)
            return 1;
    }
    return 0;
}

/* The schedule's sequence of computation c into order[0..cp->n): 1 when
 * the module schedules c with a permutation of its instructions. */
static int scheduled_order(const struct hlo_view *v, uint32_t c, uint32_t *order, uint8_t *seen)
{
    const struct hlo_comp *cp = &v->g.comps[c];
    struct wire cur = v->schedule, seq = {NULL, NULL}, e;
    struct hlo_view_rep r;
    uint64_t x;
    uint32_t k = 0, i;
    int found = 0;

    if (!v->has_schedule)
        return 0;
    while (!wire_eof(&cur)) {
        uint32_t f;
        int t;
        if (wire_key(&cur, &f, &t) != 0)
            break;
        if (f != 1 || t != WIRE_LEN) {
            if (wire_skip(&cur, t) != 0)
                break;
            continue;
        }
        if (wire_bytes(&cur, &e) != 0)
            break;
        if (int_field(e, 1) == v->comp_ids[c]) {
            found = 1;
            if (!str_field(e, 2, &seq))
                seq.p = seq.end = NULL;
        }
    }
    if (!found)
        return 0;
    memset(seen, 0, cp->n);
    hlo_view_rep_init(&r, seq, 1);
    while (hlo_view_rep_next(&r, &x)) {
        uint32_t node = hlo_view_node_of_id(v, c, (int64_t)x);
        if (node == HLO_VIEW_NONE)
            node = hlo_view_node_of_id(v, c, (int64_t)(x & 0xffffffffu));
        if (node == HLO_VIEW_NONE || k >= cp->n || seen[node - cp->first])
            return 0;
        seen[node - cp->first] = 1;
        order[k++] = node;
    }
    for (i = 0; i < cp->n; i++) {
        if (!seen[i])
            return 0;
    }
    return 1;
}

/* The collectives of computation c that precede each one on its channel
 * (ComputeChannelDependencies), as chan[i]: the previous member of node
 * first+i's channel group, or HLO_VIEW_NONE. */
static void channel_chain(const struct hlo_view *v, uint32_t c, uint32_t *chan)
{
    const struct hlo_comp *cp = &v->g.comps[c];
    uint32_t i, j;

    for (i = 0; i < cp->n; i++)
        chan[i] = HLO_VIEW_NONE;
    if (v->device_computations == 1)
        return;
    for (i = 0; i < cp->n; i++) {
        uint32_t a = v->by_id[cp->first + i].ix;
        const struct hlo_node *nd = &v->g.nodes[a];
        if (nd->channel_id <= 0 || !channel_op(nd->opcode))
            continue;
        for (j = i; j-- > 0;) {
            uint32_t b = v->by_id[cp->first + j].ix;
            if (v->g.nodes[b].channel_id == nd->channel_id && channel_op(v->g.nodes[b].opcode)) {
                chan[a - cp->first] = b;
                break;
            }
        }
    }
}

/* XLA's MakeInstructionPostOrder of computation c into order[0..cp->n):
 * from each instruction without users (by id), a DFS that takes channel
 * dependencies, then operands (first first), then control predecessors.
 * state and stack hold cp->n entries and the pushes (sum of degrees).
 * Returns how many were ordered. */
static uint32_t post_order(const struct hlo_view *v, uint32_t c, uint32_t *order, uint8_t *state,
                           uint32_t *stack, size_t stack_cap, uint32_t *chan)
{
    const struct hlo_comp *cp = &v->g.comps[c];
    uint32_t k = 0, i;
    uint64_t chan_pushes = 0;
    size_t top, base;

    memset(state, 0, cp->n);
    channel_chain(v, c, chan);
    for (i = 0; i < cp->n; i++) {
        uint32_t root = v->by_id[cp->first + i].ix;
        if (v->g.nodes[root].nusers != 0 || state[root - cp->first] == 2)
            continue;
        top = 0;
        stack[top++] = root;
        while (top > 0) {
            uint32_t cur = stack[top - 1], j, dep;
            const struct hlo_node *nd = &v->g.nodes[cur];
            if (state[cur - cp->first] != 0) {
                top--;
                if (state[cur - cp->first] != 2) {
                    state[cur - cp->first] = 2;
                    order[k++] = cur;
                }
                continue;
            }
            state[cur - cp->first] = 1;
            /* every earlier member of the channel group, oldest pushed
             * first: the chain is walked newest first, then reversed */
            base = top;
            for (dep = cur != root ? chan[cur - cp->first] : HLO_VIEW_NONE;
                 dep != HLO_VIEW_NONE && chan_pushes < CHANNEL_PUSH_MAX;
                 dep = chan[dep - cp->first], chan_pushes++) {
                if (state[dep - cp->first] != 2 && top < stack_cap)
                    stack[top++] = dep;
            }
            for (j = 0; top > base && base + j < top - 1 - j; j++) {
                uint32_t t = stack[base + j];
                stack[base + j] = stack[top - 1 - j];
                stack[top - 1 - j] = t;
            }
            for (j = nd->noperands; j-- > 0;) {
                if (state[nd->operands[j] - cp->first] != 2 && top < stack_cap)
                    stack[top++] = nd->operands[j];
            }
            for (j = 0; j < v->nctrl[cur]; j++) {
                if (state[v->ctrl[cur][j] - cp->first] != 2 && top < stack_cap)
                    stack[top++] = v->ctrl[cur][j];
            }
        }
    }
    return k;
}

/* ---- computations ---- */

/* Mark in async[] the computations an async op calls first
 * (IsAsyncComputation). */
static void mark_async(const struct hlo_view *v, uint8_t *async)
{
    uint32_t i;

    memset(async, 0, v->g.ncomps);
    for (i = 0; i < v->g.nnodes; i++) {
        const struct hlo_node *nd = &v->g.nodes[i];
        if (nd->ncalled > 0 && strncmp(nd->opcode, "async-", 6) == 0)
            async[nd->called[0]] = 1;
    }
}

/* Whether async computation c can expand into its single instruction
 * (CanExpandIntoSingleInstruction): the syntax sugar prints it inside its
 * async ops. */
static int sugared_async(const struct hlo_view *v, uint32_t c)
{
    const struct hlo_comp *cp = &v->g.comps[c];
    uint32_t i;

    for (i = cp->first; i < cp->first + cp->n; i++) {
        if (i != cp->root && strcmp(v->g.nodes[i].opcode, "parameter") != 0)
            return 0;
    }
    return 1;
}

/* "(p: f32[2], q: s32[]) -> f32[2]" of computation c (ComputeProgramShape
 * printed by ShapeUtil::HumanString). */
static void program_shape(struct out *o, const struct hlo_view *v, uint32_t c)
{
    const struct hlo_comp *cp = &v->g.comps[c];
    uint32_t i;

    out_putc(o, '(');
    for (i = 0; i < cp->nparams; i++) {
        if (i > 0)
            out_puts(o, ", ");
        out_puts(o, v->names[cp->params[i]]);
        out_puts(o, ": ");
        hlo_shape_print(o, &v->g.nodes[cp->params[i]].shape, 0);
    }
    out_puts(o, ") -> ");
    hlo_shape_print(o, &v->g.nodes[cp->root].shape, 0);
}

/* Scratch arrays of the computation printer. */
struct comp_scratch {
    uint32_t *order, *stack, *chan;
    uint8_t *state;
    size_t stack_cap;
};

/* One computation. 0 or -ENOMEM. */
static int put_comp(struct out *o, const struct hlo_view *v, uint32_t c, int verbose, int metadata,
                    struct comp_scratch *cs, struct out *scratch)
{
    const struct hlo_comp *cp = &v->g.comps[c];
    struct wire th = v->exec_thread[c];
    uint32_t n, i;

    if (c == v->g.entry)
        out_puts(o, "ENTRY ");
    if (verbose)
        out_putc(o, '%');
    out_puts(o, v->comp_names[c]);
    out_putc(o, ' ');
    if (verbose) {
        program_shape(o, v, c);
        out_putc(o, ' ');
    }
    out_puts(o, "{\n");
    if (scheduled_order(v, c, cs->order, cs->state))
        n = cp->n;
    else
        n = post_order(v, c, cs->order, cs->state, cs->stack, cs->stack_cap, cs->chan);
    for (i = 0; i < n && !out_failed(o); i++) {
        if (put_instr(o, v, cs->order[i], verbose, metadata, scratch) != 0)
            return -ENOMEM;
    }
    out_putc(o, '}');
    if (th.p != NULL && th.p != th.end &&
        !((size_t)(th.end - th.p) == 4 && memcmp(th.p, "main", 4) == 0)) {
        out_puts(o, ", execution_thread=\"");
        out_write(o, th.p, (size_t)(th.end - th.p));
        out_putc(o, '"');
    }
    out_puts(o, "\n\n");
    return 0;
}

/* The computations called from c, in XLA's MakeEmbeddedComputationsList
 * order, appended to post[*np) unless added already. stack holds ncomps
 * (computation, next instruction) pairs. */
static void embedded(const struct hlo_view *v, uint32_t c, uint32_t *post, uint32_t *np,
                     uint8_t *added, uint8_t *visited, uint32_t *stack)
{
    const struct hlo_comp *root = &v->g.comps[c];
    uint32_t top = 0, i, j;

    memset(visited, 0, v->g.ncomps);
    for (i = 0; i < root->n; i++) {
        const struct hlo_node *nd = &v->g.nodes[v->by_id[root->first + i].ix];
        for (j = nd->ncalled; j-- > 0;) {
            if (!visited[nd->called[j]]) {
                visited[nd->called[j]] = 1;
                stack[2 * top] = nd->called[j];
                stack[2 * top++ + 1] = 0;
            }
        }
        while (top > 0) {
            uint32_t cur = stack[2 * (top - 1)], *next = &stack[2 * (top - 1) + 1];
            const struct hlo_comp *cc = &v->g.comps[cur];
            const struct hlo_node *in;
            if (*next >= cc->n) {
                top--;
                if (!added[cur]) {
                    added[cur] = 1;
                    post[(*np)++] = cur;
                }
                continue;
            }
            in = &v->g.nodes[v->by_id[cc->first + (*next)++].ix];
            for (j = in->ncalled; j-- > 0;) {
                if (!visited[in->called[j]]) {
                    visited[in->called[j]] = 1;
                    stack[2 * top] = in->called[j];
                    stack[2 * top++ + 1] = 0;
                }
            }
        }
    }
}

/* XLA's MakeComputationPostOrder(dfs_postorder=true) into post[0..ncomps):
 * for each computation no instruction calls, by id, its embedded
 * computations, then itself; computations left out (in a call cycle no
 * root reaches) follow by id. 0 or -ENOMEM. */
static int comp_post_order(const struct hlo_view *v, uint32_t *post)
{
    uint32_t nc = v->g.ncomps, np = 0, i, j, k;
    uint8_t *called = calloc(nc, 1), *added = calloc(nc, 1), *visited = calloc(nc, 1);
    uint32_t *stack = malloc(2 * (size_t)nc * sizeof(*stack));
    int rc = 0;

    if (!called || !added || !visited || !stack) {
        rc = -ENOMEM;
        goto out;
    }
    for (i = 0; i < v->g.nnodes; i++) {
        for (j = 0; j < v->g.nodes[i].ncalled; j++)
            called[v->g.nodes[i].called[j]] = 1;
    }
    for (k = 0; k < nc; k++) {
        uint32_t c = v->comp_order[k];
        if (called[c])
            continue;
        embedded(v, c, post, &np, added, visited, stack);
        if (!added[c]) {
            added[c] = 1;
            post[np++] = c;
        }
    }
    for (k = 0; k < nc; k++) {
        if (!added[v->comp_order[k]])
            post[np++] = v->comp_order[k];
    }
out:
    free(called);
    free(added);
    free(visited);
    free(stack);
    return rc;
}

/* ---- the module header ---- */

/* "{1,2}" of a repeated int64 field. */
static void shape_index(struct out *o, struct wire m, uint32_t f)
{
    struct hlo_view_rep r;
    uint64_t x;
    int n = 0;

    out_putc(o, '{');
    hlo_view_rep_init(&r, m, f);
    while (hlo_view_rep_next(&r, &x))
        out_printf(o, "%s%lld", n++ ? "," : "", (long long)(int64_t)x);
    out_putc(o, '}');
}

/* The next length-delimited field f of *cur into *sub: 1, or 0 at the end
 * (or on bad bytes). */
static int next_msg(struct wire *cur, uint32_t f, struct wire *sub)
{
    while (!wire_eof(cur)) {
        uint32_t ff;
        int t;
        if (wire_key(cur, &ff, &t) != 0)
            return 0;
        if (ff == f && t == WIRE_LEN)
            return wire_bytes(cur, sub) == 0;
        if (wire_skip(cur, t) != 0)
            return 0;
    }
    return 0;
}

/* The entries (field 1) of message w in a malloc'ed array *e: their
 * count, or -ENOMEM. */
static int64_t entries(struct wire w, struct wire **e)
{
    struct wire cur = w, x;
    uint32_t n = 0, k = 0;

    *e = NULL;
    while (next_msg(&cur, 1, &x))
        n++;
    if (n == 0)
        return 0;
    *e = malloc(n * sizeof(**e));
    if (*e == NULL)
        return -ENOMEM;
    cur = w;
    while (k < n && next_msg(&cur, 1, &x))
        (*e)[k++] = x;
    return k;
}

/* Order of two repeated int64 fields, element by element, a prefix first. */
static int index_cmp(struct wire a, uint32_t fa, struct wire b, uint32_t fb)
{
    struct hlo_view_rep ra, rb;
    uint64_t x, y;

    hlo_view_rep_init(&ra, a, fa);
    hlo_view_rep_init(&rb, b, fb);
    for (;;) {
        int ha = hlo_view_rep_next(&ra, &x), hb = hlo_view_rep_next(&rb, &y);
        if (!ha || !hb)
            return ha - hb;
        if ((int64_t)x != (int64_t)y)
            return (int64_t)x < (int64_t)y ? -1 : 1;
    }
}

/* Order of alias entries by output shape index (ShapeTree order). */
static int alias_cmp(const void *a, const void *b)
{
    return index_cmp(*(const struct wire *)a, 1, *(const struct wire *)b, 1);
}

/* Order of buffer donors by parameter, then shape index. */
static int donor_cmp(const void *a, const void *b)
{
    struct wire x = *(const struct wire *)a, y = *(const struct wire *)b;
    int64_t px = int_field(x, 1), py = int_field(y, 1);

    if (px != py)
        return px < py ? -1 : 1;
    return index_cmp(x, 2, y, 2);
}

/* ", input_output_alias={ {0}: (0, {}, must-alias), ... }" and
 * ", buffer_donor={ (0, {}), ... }". 0 or -ENOMEM. */
static int put_aliasing(struct out *o, const struct hlo_view *v)
{
    struct wire *e;
    int64_t n, i;

    n = entries(v->alias, &e);
    if (n < 0)
        return -ENOMEM;
    xp_qsort(e, (size_t)n, sizeof(*e), alias_cmp);
    for (i = 0; i < n; i++) {
        out_puts(o, i == 0 ? ", input_output_alias={ " : ", ");
        shape_index(o, e[i], 1);
        out_printf(o, ": (%lld, ", (long long)int_field(e[i], 2));
        shape_index(o, e[i], 3);
        out_puts(o, int_field(e[i], 4) == 2 ? ", must-alias)" : ")");
    }
    if (n > 0)
        out_puts(o, " }");
    free(e);
    n = entries(v->donor, &e);
    if (n < 0)
        return -ENOMEM;
    xp_qsort(e, (size_t)n, sizeof(*e), donor_cmp);
    for (i = 0; i < n; i++) {
        out_printf(o, "%s(%lld, ", i == 0 ? ", buffer_donor={ " : ", ",
                   (long long)int_field(e[i], 1));
        shape_index(o, e[i], 2);
        out_putc(o, ')');
    }
    if (n > 0)
        out_puts(o, " }");
    free(e);
    return 0;
}

/* Order of map entries by key (field 1), then place. */
static int key_cmp(const void *a, const void *b)
{
    struct wire x = *(const struct wire *)a, y = *(const struct wire *)b, kx, ky;
    size_t nx, ny;
    int c;

    str_field(x, 1, &kx);
    str_field(y, 1, &ky);
    nx = (size_t)(kx.end - kx.p);
    ny = (size_t)(ky.end - ky.p);
    c = nx && ny ? memcmp(kx.p, ky.p, nx < ny ? nx : ny) : 0;
    if (c != 0)
        return c;
    if (nx != ny)
        return nx < ny ? -1 : 1;
    return x.p < y.p ? -1 : x.p > y.p;
}

/* ", frontend_attributes={a=\"1\",b={...}}" of the module (keys sorted, the
 * last value of a key). 0 or -ENOMEM. */
static int put_frontend(struct out *o, const struct hlo_view *v)
{
    struct wire *e, k, val, k2;
    int64_t n, i;
    int first = 1;

    n = entries(v->frontend, &e);
    if (n <= 0)
        return (int)n;
    xp_qsort(e, (size_t)n, sizeof(*e), key_cmp);
    out_puts(o, ", frontend_attributes={");
    for (i = 0; i < n; i++) {
        str_field(e[i], 1, &k);
        if (i + 1 < n) {
            str_field(e[i + 1], 1, &k2);
            if (k.end - k.p == k2.end - k2.p &&
                (k.p == k.end || !memcmp(k.p, k2.p, (size_t)(k.end - k.p))))
                continue;
        }
        str_field(e[i], 2, &val);
        if (!first)
            out_putc(o, ',');
        first = 0;
        if (k.p != k.end)
            out_write(o, k.p, (size_t)(k.end - k.p));
        out_putc(o, '=');
        if (val.p != NULL && json_dict(val.p, val.end)) {
            out_write(o, val.p, (size_t)(val.end - val.p));
        } else {
            out_putc(o, '"');
            hlo_view_cescape(o, val.p, (size_t)(val.end - val.p));
            out_putc(o, '"');
        }
    }
    out_putc(o, '}');
    free(e);
    return 0;
}

/* The header line and the blank line after it. 0 or -ENOMEM. */
static int put_header(struct out *o, const struct hlo_view *v)
{
    const struct hlo_comp *entry = &v->g.comps[v->g.entry];
    uint32_t i;

    out_puts(o, "HloModule ");
    out_puts(o, v->module_name);
    if (v->has_schedule)
        out_puts(o, ", is_scheduled=true");
    if (put_aliasing(o, v) != 0)
        return -ENOMEM;
    if (v->host_shape.p != NULL) {
        out_puts(o, ", entry_computation_layout={(");
        for (i = 0; i < entry->nparams; i++) {
            if (i > 0)
                out_puts(o, ", ");
            hlo_shape_print(o, &v->g.nodes[entry->params[i]].shape, 1);
        }
        out_puts(o, ")->");
        hlo_shape_print(o, &v->g.nodes[entry->root].shape, 1);
        out_putc(o, '}');
    }
    if (put_frontend(o, v) != 0)
        return -ENOMEM;
    out_puts(o, "\n\n");
    return 0;
}

int hlo_view_print_module(const struct hlo_view *v, struct out *o, int verbose, int metadata)
{
    struct comp_scratch cs;
    struct out scratch;
    uint32_t *post, nn = v->g.nnodes ? v->g.nnodes : 1, i;
    uint8_t *async = malloc(v->g.ncomps ? v->g.ncomps : 1);
    size_t pushes = 1;
    int rc;

    for (i = 0; i < v->g.nnodes; i++)
        pushes += (size_t)v->g.nodes[i].noperands + v->nctrl[i] + 1;
    memset(&cs, 0, sizeof(cs));
    cs.order = malloc(nn * sizeof(*cs.order));
    cs.chan = malloc(nn * sizeof(*cs.chan));
    cs.state = malloc(nn);
    /* every push is an operand, control or channel edge of a node popped
     * new, or a root; channel pushes past the budget are dropped */
    cs.stack_cap = pushes + (size_t)CHANNEL_PUSH_MAX / 64;
    cs.stack = malloc(cs.stack_cap * sizeof(*cs.stack));
    post = malloc((v->g.ncomps ? v->g.ncomps : 1) * sizeof(*post));
    memset(&scratch, 0, sizeof(scratch));
    out_init(&scratch);
    rc = !cs.order || !cs.chan || !cs.state || !cs.stack || !post || !async ? -ENOMEM : 0;
    if (rc == 0) {
        mark_async(v, async);
        rc = put_header(o, v);
    }
    if (rc == 0)
        rc = comp_post_order(v, post);
    for (i = 0; rc == 0 && i < v->g.ncomps && !out_failed(o); i++) {
        if (!async[post[i]] || !sugared_async(v, post[i]))
            rc = put_comp(o, v, post[i], verbose, metadata, &cs, &scratch);
    }
    out_discard(&scratch);
    free(cs.order);
    free(cs.chan);
    free(cs.state);
    free(cs.stack);
    free(post);
    free(async);
    return rc != 0 || out_failed(o) ? -ENOMEM : 0;
}
