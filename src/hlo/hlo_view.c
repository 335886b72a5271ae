/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hlo_view.c - an HloProto read into a struct hlo_view (hlo_view.h): the
 * linked graph of hlo_module.h, then one more walk over the module's bytes
 * for what XLA's HloModule keeps and the graph does not: each instruction's
 * bytes and id, the computations' ids and execution threads, the module
 * fields the printers read, sanitized names, control predecessors and the
 * fusion instruction of each fusion computation.
 */
#include "hlo_view.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"

/* ---- small helpers ---- */

/* Whether NameUniquer keeps byte c of a name past the first. */
static int name_char_ok(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_';
}

/* Byte i of name s as NameUniquer::GetSanitizedName keeps it. */
static char name_char(const char *s, size_t i)
{
    unsigned char c = (unsigned char)s[i];

    if (i == 0)
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ? (char)c : '_';
    return name_char_ok(c) ? (char)c : '_';
}

/* The PrimitiveType names, keywords of the HLO text. */
static const char *const type_names[] = {
    "pred",       "s8",       "s16",       "s32",    "s64",           "u8",
    "u16",        "u32",      "u64",       "f16",    "f32",           "f64",
    "tuple",      "opaque",   "c64",       "bf16",   "token",         "c128",
    "f8e5m2",     "f8e4m3fn", "s4",        "u4",     "f8e4m3b11fnuz", "f8e5m2fnuz",
    "f8e4m3fnuz", "s2",       "u2",        "f8e4m3", "f8e3m4",        "s1",
    "u1",         "f4e2m1fn", "f8e8m0fnu", "buffer",
};

/* Whether s[0..n) is a primitive type name other than "tuple". */
static int is_type_name(const char *s, size_t n)
{
    size_t i;

    for (i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++) {
        if (strlen(type_names[i]) == n && memcmp(type_names[i], s, n) == 0)
            return strcmp(type_names[i], "tuple") != 0;
    }
    return 0;
}

/* Name s[0..n) as XLA keeps it (the rule hlo_text_values.c prints names
 * with): bad bytes become '_', "__" not followed by "xla_" becomes "a_",
 * a type name gets a '_' appended. An arena copy, NULL on OOM. */
static const char *keep_name(struct arena *a, const char *s, size_t n)
{
    char *d;
    size_t i;
    int clean = 1, dunder;

    for (i = 0; i < n && clean; i++)
        clean = name_char(s, i) == s[i];
    dunder = n >= 2 && name_char(s, 0) == '_' && name_char(s, 1) == '_' &&
             !(n >= 6 && name_char(s, 2) == 'x' && name_char(s, 3) == 'l' &&
               name_char(s, 4) == 'a' && name_char(s, 5) == '_');
    d = arena_alloc(a, n + 2);
    if (d == NULL)
        return NULL;
    for (i = 0; i < n; i++)
        d[i] = i == 0 && dunder ? 'a' : name_char(s, i);
    if (clean && is_type_name(s, n))
        d[n++] = '_';
    d[n] = '\0';
    return d;
}

void hlo_view_rep_init(struct hlo_view_rep *r, struct wire msg, uint32_t field)
{
    r->msg = msg;
    r->packed.p = r->packed.end = NULL;
    r->field = field;
}

int hlo_view_rep_next(struct hlo_view_rep *r, uint64_t *v)
{
    for (;;) {
        uint32_t f;
        int t;
        if (r->packed.p != NULL && !wire_eof(&r->packed))
            return wire_varint(&r->packed, v) == 0;
        if (wire_eof(&r->msg) || wire_key(&r->msg, &f, &t) != 0)
            return 0;
        if (f == r->field && t == WIRE_VARINT)
            return wire_varint(&r->msg, v) == 0;
        if (f == r->field && t == WIRE_LEN) {
            if (wire_bytes(&r->msg, &r->packed) != 0)
                return 0;
            continue;
        }
        if (wire_skip(&r->msg, t) != 0)
            return 0;
    }
}

int hlo_view_effective_scalar(const struct hlo_shape *s)
{
    uint32_t i;

    if (s->type == HLO_TUPLE || s->type == HLO_OPAQUE || s->type == HLO_TOKEN || s->type <= 0)
        return 0;
    for (i = 0; i < s->ndims; i++) {
        if (s->dims[i] != 1)
            return 0;
    }
    return 1;
}

void hlo_view_cescape(struct out *o, const uint8_t *s, size_t n)
{
    size_t i;

    for (i = 0; i < n && !out_failed(o); i++) {
        unsigned char c = s[i];
        switch (c) {
        case '\n':
            out_puts(o, "\\n");
            break;
        case '\r':
            out_puts(o, "\\r");
            break;
        case '\t':
            out_puts(o, "\\t");
            break;
        case '"':
            out_puts(o, "\\\"");
            break;
        case '\'':
            out_puts(o, "\\'");
            break;
        case '\\':
            out_puts(o, "\\\\");
            break;
        default:
            if (c < 0x20 || c >= 0x7f)
                out_printf(o, "\\%03o", c);
            else
                out_putc(o, (char)c);
        }
    }
}

/* ---- printed instructions ---- */

size_t hlo_view_scan(const char *s, size_t n, size_t i, char c)
{
    int64_t depth = 0;

    for (; i < n; i++) {
        char x = s[i];
        if (depth == 0 && x == c)
            return i;
        if (x == '"') {
            for (i++; i < n && s[i] != '"'; i++)
                i += s[i] == '\\' && i + 1 < n;
            if (i >= n)
                return n;
        } else if (x == '(' || x == '[' || x == '{') {
            depth++;
        } else if ((x == ')' || x == ']' || x == '}') && depth > 0) {
            depth--;
        } else if (x == ')' || x == ']' || x == '}') {
            return x == c ? i : n;
        }
    }
    return n;
}

int hlo_view_split(const char *s, size_t n, struct hlo_view_parts *p)
{
    size_t i;

    memset(p, 0, sizeof(*p));
    for (i = 0; i + 2 < n && !(s[i] == ' ' && s[i + 1] == '=' && s[i + 2] == ' '); i++)
        ;
    if (i + 2 >= n)
        return -1;
    p->shape = i + 3;
    p->shape_end = hlo_view_scan(s, n, p->shape, ' ');
    if (p->shape_end >= n)
        return -1;
    p->opcode = p->shape_end + 1;
    for (i = p->opcode; i < n && s[i] != '('; i++)
        ;
    if (i >= n)
        return -1;
    p->operands = i + 1;
    p->operands_end = hlo_view_scan(s, n, p->operands, ')');
    if (p->operands_end >= n)
        return -1;
    p->attrs = p->operands_end + 1;
    return 0;
}

int hlo_view_instr_text(const struct hlo_view *v, uint32_t node, int large_constants,
                        struct out *scratch, const char **s, size_t *n, char **copy)
{
    struct hlo_text_src src = v->src;
    size_t len, c, off;

    *copy = NULL;
    *s = "";
    *n = 0;
    out_rewind(scratch);
    src.large_constants = large_constants;
    hlo_instr_print(scratch, &v->g, &src, node, HLO_VIEW_TEXT_MAX);
    if (out_failed(scratch))
        return -ENOMEM;
    len = out_len(scratch);
    if (len > HLO_VIEW_TEXT_MAX)
        len = HLO_VIEW_TEXT_MAX;
    if (len == 0)
        return 0;
    if (len <= OUT_CHUNK) {
        *s = scratch->chunks[0];
        *n = len;
        return 0;
    }
    *copy = malloc(len);
    if (*copy == NULL)
        return -ENOMEM;
    for (c = 0, off = 0; off < len; c++) {
        size_t k = len - off < OUT_CHUNK ? len - off : OUT_CHUNK;
        memcpy(*copy + off, scratch->chunks[c], k);
        off += k;
    }
    *s = *copy;
    *n = len;
    return 0;
}

/* ---- lookups ---- */

/* Whether s equals t[0..n) ignoring ASCII case. */
static int same_nocase(const char *s, const char *t, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        unsigned char a = (unsigned char)s[i], b = (unsigned char)t[i];
        if (a == '\0')
            return 0;
        if (a >= 'A' && a <= 'Z')
            a = (unsigned char)(a - 'A' + 'a');
        if (b >= 'A' && b <= 'Z')
            b = (unsigned char)(b - 'A' + 'a');
        if (a != b)
            return 0;
    }
    return s[n] == '\0';
}

uint32_t hlo_view_find_node(const struct hlo_view *v, const char *name)
{
    size_t n;
    uint32_t k, i;

    if (name[0] == '%')
        name++;
    n = strlen(name);
    for (k = 0; k < v->g.ncomps; k++) {
        const struct hlo_comp *cp = &v->g.comps[v->comp_order[k]];
        for (i = 0; i < cp->n; i++) {
            uint32_t node = v->by_id[cp->first + i].ix;
            if (same_nocase(v->names[node], name, n))
                return node;
        }
    }
    return HLO_VIEW_NONE;
}

uint32_t hlo_view_find_comp(const struct hlo_view *v, const char *name)
{
    size_t n = strlen(name);
    uint32_t k;

    for (k = 0; k < v->g.ncomps; k++) {
        if (same_nocase(v->comp_names[v->comp_order[k]], name, n))
            return v->comp_order[k];
    }
    return HLO_VIEW_NONE;
}

int hlo_view_field(const struct hlo_view *v, uint32_t node, uint32_t field, struct wire *bytes,
                   int64_t *varint)
{
    struct wire w;
    int found = 0;

    if (node >= v->g.nnodes)
        return 0;
    wire_init(&w, v->spans[node].p, v->spans[node].n);
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        uint64_t x;
        struct wire s;
        if (wire_key(&w, &f, &t) != 0)
            break;
        if (f == field && t == WIRE_LEN && bytes != NULL) {
            if (wire_bytes(&w, &s) != 0)
                break;
            *bytes = s;
            found = 1;
        } else if (f == field && t == WIRE_VARINT && varint != NULL) {
            if (wire_varint(&w, &x) != 0)
                break;
            *varint = (int64_t)x;
            found = 1;
        } else if (wire_skip(&w, t) != 0) {
            break;
        }
    }
    return found;
}

uint32_t hlo_view_callers(const struct hlo_view *v, uint32_t c, uint32_t *out, uint32_t max)
{
    uint32_t i, j, n = 0;

    for (i = 0; i < v->g.nnodes; i++) {
        const struct hlo_node *nd = &v->g.nodes[i];
        for (j = 0; j < nd->ncalled; j++) {
            if (nd->called[j] == c) {
                if (n < max)
                    out[n] = i;
                n++;
                break;
            }
        }
    }
    return n;
}

/* ---- adjacency ---- */

/* A JSON string as nlohmann::json::dump writes it. */
static void json_str(struct out *o, const char *s)
{
    out_putc(o, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            out_putc(o, '\\');
            out_putc(o, (char)c);
        } else if (c == '\b') {
            out_puts(o, "\\b");
        } else if (c == '\f') {
            out_puts(o, "\\f");
        } else if (c == '\n') {
            out_puts(o, "\\n");
        } else if (c == '\r') {
            out_puts(o, "\\r");
        } else if (c == '\t') {
            out_puts(o, "\\t");
        } else if (c < 0x20) {
            out_printf(o, "\\u%04x", c);
        } else {
            out_putc(o, (char)c);
        }
    }
    out_putc(o, '"');
}

/* One step of the walk through get-tuple-elements: a node and the next of
 * its operands (or users) to visit. */
struct step {
    uint32_t node, next;
};

/* The names XProf's find_operands (users 0) or find_users (users 1) lists
 * for node n, as a JSON list. 0, -ENOMEM, or -E2BIG past HLO_VIEW_HLO_VIEW_ADJ_MAX. */
static int adjacent(struct out *o, const struct hlo_view *v, uint32_t n, int users)
{
    struct step *st = malloc(64 * sizeof(*st));
    size_t top = 0, cap = 64, names = 0, steps = 0;
    int rc = 0;

    if (st == NULL)
        return -ENOMEM;
    st[top++] = (struct step){n, 0};
    out_putc(o, '[');
    while (top > 0 && rc == 0) {
        struct step *s = &st[top - 1];
        const struct hlo_node *nd = &v->g.nodes[s->node];
        uint32_t cnt = users ? nd->nusers : nd->noperands, x;
        if (s->next >= cnt) {
            top--;
            continue;
        }
        x = users ? nd->users[s->next++] : nd->operands[s->next++];
        if (++steps > HLO_VIEW_ADJ_MAX) {
            rc = -E2BIG;
            break;
        }
        if (strncmp(v->names[x], "get-tuple-element", 17) != 0) {
            out_puts(o, names++ ? "," : "");
            json_str(o, v->names[x]);
            continue;
        }
        if (top == cap) {
            struct step *p = realloc(st, cap * 2 * sizeof(*st));
            if (p == NULL) {
                rc = -ENOMEM;
                break;
            }
            st = p;
            cap *= 2;
        }
        st[top++] = (struct step){x, 0};
    }
    out_putc(o, ']');
    free(st);
    return rc;
}

int hlo_view_adjacent(const struct hlo_view *v, uint32_t node, struct out *o)
{
    int rc;

    out_puts(o, "{\"consumer_names\":");
    rc = adjacent(o, v, node, 1);
    if (rc == 0) {
        out_puts(o, ",\"operand_names\":");
        rc = adjacent(o, v, node, 0);
    }
    out_putc(o, '}');
    return rc;
}

/* ---- reading ---- */

/* Order of (id, index) pairs. */
static int id_cmp(const void *a, const void *b)
{
    const struct hlo_id_ix *x = a, *y = b;

    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->ix < y->ix ? -1 : x->ix > y->ix;
}

uint32_t hlo_view_node_of_id(const struct hlo_view *v, uint32_t c, int64_t id)
{
    const struct hlo_comp *cp = &v->g.comps[c];
    const struct hlo_id_ix *a = v->by_id + cp->first;
    uint32_t lo = 0, hi = cp->n;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (a[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < cp->n && a[lo].id == id ? a[lo].ix : HLO_VIEW_NONE;
}

/* The first hlo_module (field 1) of HloProto bytes into *m: 0, or -1. */
static int proto_module(const uint8_t *p, size_t n, struct wire *m)
{
    struct wire w;

    wire_init(&w, p, n);
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (f == 1 && t == WIRE_LEN)
            return wire_bytes(&w, m);
        if (wire_skip(&w, t) != 0)
            return -1;
    }
    return -1;
}

/* One computation's id (5), execution thread (8) and its instructions'
 * spans from k on, in the order hlo_module.c reads them. Returns the next
 * node, or UINT32_MAX when the count disagrees with the graph. */
static uint32_t read_comp(struct hlo_view *v, uint32_t c, struct wire cw, uint32_t k)
{
    uint32_t first = k;

    v->comp_ids[c] = 0;
    while (!wire_eof(&cw)) {
        uint32_t f;
        int t;
        uint64_t x;
        struct wire iw;
        int64_t id;
        if (wire_key(&cw, &f, &t) != 0)
            return UINT32_MAX;
        if (f == 5 && t == WIRE_VARINT) {
            if (wire_varint(&cw, &x) != 0)
                return UINT32_MAX;
            v->comp_ids[c] = (int64_t)x;
            continue;
        }
        if ((f != 2 && f != 8) || t != WIRE_LEN) {
            if (wire_skip(&cw, t) != 0)
                return UINT32_MAX;
            continue;
        }
        if (wire_bytes(&cw, &iw) != 0)
            return UINT32_MAX;
        if (f == 8) {
            v->exec_thread[c] = iw;
            continue;
        }
        if (k >= v->g.nnodes)
            return UINT32_MAX;
        v->spans[k].p = iw.p;
        v->spans[k].n = (size_t)(iw.end - iw.p);
        v->spans[k].id = (int64_t)(k - first);
        if (hlo_view_field(v, k, 35, NULL, &id))
            v->spans[k].id = id;
        k++;
    }
    return k;
}

/* The device assignment's computation_count, -1 when absent. */
static int64_t device_computations(struct wire w)
{
    int64_t n = 0;

    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        uint64_t x;
        if (wire_key(&w, &f, &t) != 0)
            break;
        if (f == 2 && t == WIRE_VARINT) {
            if (wire_varint(&w, &x) != 0)
                break;
            n = (int64_t)x;
        } else if (wire_skip(&w, t) != 0) {
            break;
        }
    }
    return n;
}

/* The module's own fields and every instruction's bytes. 0 or -1. */
static int read_module_fields(struct hlo_view *v, struct wire w)
{
    uint32_t c = 0, k = 0;

    v->device_computations = -1;
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire s;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (t != WIRE_LEN) {
            if (wire_skip(&w, t) != 0)
                return -1;
            continue;
        }
        if (wire_bytes(&w, &s) != 0)
            return -1;
        if (f == 3) {
            if (c >= v->g.ncomps)
                return -1;
            k = read_comp(v, c++, s, k);
            if (k == UINT32_MAX)
                return -1;
        } else if (f == 4) {
            v->host_shape = s;
        } else if (f == 7) {
            v->schedule = s;
            v->has_schedule = 1;
        } else if (f == 8) {
            v->alias = s;
        } else if (f == 15) {
            v->device_computations = device_computations(s);
        } else if (f == 17) {
            v->frames = s;
        } else if (f == 18) {
            v->donor = s;
        } else if (f == 19) {
            v->frontend = s;
        }
    }
    return c == v->g.ncomps && k == v->g.nnodes ? 0 : -1;
}

/* Each node's control predecessors (field 37, resolved in its computation,
 * each once). 0 or -ENOMEM. */
static int read_control(struct hlo_view *v)
{
    uint32_t i, j;

    for (i = 0; i < v->g.nnodes; i++) {
        struct hlo_view_rep r;
        struct wire w;
        uint64_t x, n = 0;
        wire_init(&w, v->spans[i].p, v->spans[i].n);
        hlo_view_rep_init(&r, w, 37);
        while (hlo_view_rep_next(&r, &x))
            n++;
        if (n == 0)
            continue;
        if (n > v->g.nnodes)
            n = v->g.nnodes;
        v->ctrl[i] = arena_alloc(&v->arena, n * sizeof(uint32_t));
        if (v->ctrl[i] == NULL)
            return -ENOMEM;
        hlo_view_rep_init(&r, w, 37);
        while (v->nctrl[i] < n && hlo_view_rep_next(&r, &x)) {
            uint32_t p = hlo_view_node_of_id(v, v->g.nodes[i].comp, (int64_t)x);
            if (p == HLO_VIEW_NONE)
                continue;
            for (j = 0; j < v->nctrl[i] && v->ctrl[i][j] != p; j++)
                ;
            if (j == v->nctrl[i])
                v->ctrl[i][v->nctrl[i]++] = p;
        }
    }
    return 0;
}

/* The arrays of v and the names. 0 or -ENOMEM. */
static int alloc_view(struct hlo_view *v)
{
    uint32_t nn = v->g.nnodes ? v->g.nnodes : 1, nc = v->g.ncomps ? v->g.ncomps : 1, i;
    struct arena *a = &v->arena;

    v->spans = arena_alloc(a, nn * sizeof(*v->spans));
    v->by_id = arena_alloc(a, nn * sizeof(*v->by_id));
    v->names = arena_alloc(a, nn * sizeof(*v->names));
    v->ctrl = arena_alloc(a, nn * sizeof(*v->ctrl));
    v->nctrl = arena_alloc(a, nn * sizeof(*v->nctrl));
    v->comp_names = arena_alloc(a, nc * sizeof(*v->comp_names));
    v->comp_ids = arena_alloc(a, nc * sizeof(*v->comp_ids));
    v->comp_order = arena_alloc(a, nc * sizeof(*v->comp_order));
    v->fusion_of = arena_alloc(a, nc * sizeof(*v->fusion_of));
    v->only_caller = arena_alloc(a, nc * sizeof(*v->only_caller));
    v->exec_thread = arena_alloc(a, nc * sizeof(*v->exec_thread));
    if (!v->spans || !v->by_id || !v->names || !v->ctrl || !v->nctrl || !v->comp_names ||
        !v->comp_ids || !v->comp_order || !v->fusion_of || !v->only_caller || !v->exec_thread)
        return -ENOMEM;
    memset(v->spans, 0, nn * sizeof(*v->spans));
    memset(v->ctrl, 0, nn * sizeof(*v->ctrl));
    memset(v->nctrl, 0, nn * sizeof(*v->nctrl));
    memset(v->exec_thread, 0, nc * sizeof(*v->exec_thread));
    for (i = 0; i < v->g.nnodes; i++) {
        v->names[i] = keep_name(a, v->g.nodes[i].name, v->g.nodes[i].name_len);
        if (v->names[i] == NULL)
            return -ENOMEM;
    }
    for (i = 0; i < v->g.ncomps; i++) {
        v->comp_names[i] = keep_name(a, v->g.comps[i].name, strlen(v->g.comps[i].name));
        v->fusion_of[i] = HLO_VIEW_NONE;
        v->only_caller[i] = HLO_VIEW_NONE;
        if (v->comp_names[i] == NULL)
            return -ENOMEM;
    }
    v->module_name = keep_name(a, v->g.name, strlen(v->g.name));
    return v->module_name == NULL ? -ENOMEM : 0;
}

/* Order of computations by id, then by place. */
static int comp_cmp(const void *a, const void *b, void *ctx)
{
    const int64_t *ids = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    if (ids[x] != ids[y])
        return ids[x] < ids[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* The orders and the fusion computations' callers, once the spans are in. */
static void index_view(struct hlo_view *v)
{
    uint32_t c, i;

    for (c = 0; c < v->g.ncomps; c++) {
        const struct hlo_comp *cp = &v->g.comps[c];
        for (i = 0; i < cp->n; i++)
            v->by_id[cp->first + i] = (struct hlo_id_ix){v->spans[cp->first + i].id, cp->first + i};
        xp_qsort(v->by_id + cp->first, cp->n, sizeof(*v->by_id), id_cmp);
        v->comp_order[c] = c;
    }
    xp_qsort_r(v->comp_order, v->g.ncomps, sizeof(*v->comp_order), comp_cmp, v->comp_ids);
    for (i = 0; i < v->g.nnodes; i++) {
        const struct hlo_node *nd = &v->g.nodes[i];
        uint32_t j, k;
        if (strcmp(nd->opcode, "fusion") == 0 && nd->ncalled > 0)
            v->fusion_of[nd->called[0]] = i;
        for (j = 0; j < nd->ncalled; j++) {
            uint32_t cc = nd->called[j];
            for (k = 0; k < j && nd->called[k] != cc; k++)
                ;
            if (k < j)
                continue; /* called twice by this node: one caller */
            /* first caller: i; a second: HLO_VIEW_NONE - 1 marks "several" */
            v->only_caller[cc] = v->only_caller[cc] == HLO_VIEW_NONE ? i : HLO_VIEW_NONE - 1;
        }
    }
    for (c = 0; c < v->g.ncomps; c++) {
        if (v->only_caller[c] == HLO_VIEW_NONE - 1)
            v->only_caller[c] = HLO_VIEW_NONE;
    }
    v->src.spans = v->spans;
    v->src.by_id = v->by_id;
}

int hlo_view_open(struct hlo_view *v, const uint8_t *p, size_t n, struct xp_err *err)
{
    struct wire m;
    int rc;

    memset(v, 0, sizeof(*v));
    arena_init(&v->arena);
    if (proto_module(p, n, &m) != 0) {
        hlo_view_release(v);
        return xp_err_set(err, -EIO, "No HLO module found in the HLO proto");
    }
    rc = hlo_graph_read(m.p, (size_t)(m.end - m.p), &v->g);
    if (rc == -ENOMEM) {
        hlo_view_release(v);
        return xp_err_set(err, -ENOMEM, "out of memory reading the HLO module");
    }
    if (rc != 0 || v->g.ncomps == 0) {
        hlo_view_release(v);
        return xp_err_set(err, -EIO,
                          "malformed HloModuleProto (bad bytes, or ids that do "
                          "not resolve)");
    }
    rc = alloc_view(v);
    if (rc == 0 && read_module_fields(v, m) != 0) {
        hlo_view_release(v);
        return xp_err_set(err, -EIO, "malformed HloModuleProto");
    }
    if (rc == 0) {
        index_view(v);
        rc = read_control(v);
    }
    if (rc != 0) {
        hlo_view_release(v);
        return xp_err_set(err, -ENOMEM, "out of memory reading the HLO module");
    }
    return 0;
}

void hlo_view_release(struct hlo_view *v)
{
    if (v == NULL)
        return;
    hlo_graph_free(&v->g);
    arena_free(&v->arena);
    memset(v, 0, sizeof(*v));
}
