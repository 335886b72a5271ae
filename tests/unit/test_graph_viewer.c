/*
 * test_graph_viewer.c - XProf's graph viewer on HloProtos built byte by
 * byte (hlo_view.h): adjacency through get-tuple-elements, lookups by name,
 * the radius cut of a long chain (dashed nodes whose operands or users are
 * cut, the centre a diamond), the DOT of a tiny module (fusion cluster,
 * trivial subcomputation, inlined constant, merged get-tuple-element,
 * edges, ROOT tag, merge_fusion, a whole computation), the module text in
 * both forms, and hostile modules: call-graph and operand cycles, a
 * get-tuple-element that is its own operand, a fusion computation whose
 * root calls it again, ids that do not resolve, a wide fan-out and a long
 * chain drawn whole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hlo/hlo_view.h"
#include "pbw.h"

enum { F32 = 11, TUPLE = 13 };

/* ---- builders ---- */

static void packed(struct pbw *w, uint32_t field, const int64_t *v, int n)
{
    struct pbw in = {0};
    int i;

    for (i = 0; i < n; i++)
        pbw_varint(&in, (uint64_t)v[i]);
    pbw_bytes(w, field, in.p, in.n);
    free(in.p);
}

#define LIST(...) (const int64_t[]){__VA_ARGS__}, (int)(sizeof((int64_t[]){__VA_ARGS__}) / 8)
#define NOOPS NULL, 0

/* An f32 vector of n elements with its layout, or a scalar when n is 0. */
static struct pbw f32(int64_t n)
{
    struct pbw s = {0}, l = {0};

    pbw_uint(&s, 2, F32);
    if (n > 0) {
        packed(&s, 3, &n, 1);
        packed(&l, 1, (const int64_t[]){0}, 1);
    }
    pbw_msg(&s, 5, &l);
    return s;
}

static struct pbw tuple2(struct pbw a, struct pbw b)
{
    struct pbw s = {0};

    pbw_uint(&s, 2, TUPLE);
    pbw_msg(&s, 4, &a);
    pbw_msg(&s, 4, &b);
    return s;
}

/* One instruction into comp; extra holds further encoded fields (or NULL). */
static void instr(struct pbw *comp, const char *name, const char *opcode, struct pbw shp,
                  int64_t id, const int64_t *ops, int nops, struct pbw *extra)
{
    struct pbw in = {0};

    pbw_str(&in, 1, name);
    pbw_str(&in, 2, opcode);
    pbw_msg(&in, 3, &shp);
    pbw_uint(&in, 35, (uint64_t)id);
    if (nops > 0)
        packed(&in, 36, ops, nops);
    if (extra != NULL) {
        pbw_raw(&in, extra->p, extra->n);
        free(extra->p);
        memset(extra, 0, sizeof(*extra));
    }
    pbw_msg(comp, 2, &in);
}

static void param(struct pbw *comp, const char *name, struct pbw shp, int64_t id, int number)
{
    struct pbw x = {0};

    pbw_uint(&x, 9, (uint64_t)number);
    instr(comp, name, "parameter", shp, id, NOOPS, &x);
}

/* A scalar f32 constant of value v. */
static void constant(struct pbw *comp, const char *name, int64_t id, float v)
{
    struct pbw x = {0}, lit = {0}, sh = f32(0);

    pbw_msg(&lit, 1, &sh);
    pbw_bytes(&lit, 8, &v, 4);
    pbw_msg(&x, 8, &lit);
    instr(comp, name, "constant", f32(0), id, NOOPS, &x);
}

/* Finish a computation into the module. */
static void comp_end(struct pbw *module, struct pbw *comp, const char *name, int64_t id,
                     int64_t root)
{
    pbw_str(comp, 1, name);
    pbw_uint(comp, 5, (uint64_t)id);
    pbw_uint(comp, 6, (uint64_t)root);
    pbw_msg(module, 3, comp);
}

/* Finish module m (name, entry id) into HloProto bytes; m is consumed. */
static struct pbw proto(struct pbw *m, int64_t entry)
{
    struct pbw hp = {0}, ps = {0};

    pbw_str(m, 1, "m");
    pbw_uint(m, 6, (uint64_t)entry);
    pbw_msg(m, 4, &ps);
    pbw_msg(&hp, 1, m);
    return hp;
}

/* The tiny module: add_comp(x, y) = x + y; fused(fp0) = fp0 * broadcast(2);
 * main(p0, p1): t = (p0, p1), a = get-tuple-element.1(t) +
 * get-tuple-element.2(t), f = fusion(a),
 * r = reduce(f, c0) with add_comp. */
static struct pbw tiny(void)
{
    struct pbw m = {0}, c = {0}, x = {0};

    param(&c, "x", f32(0), 1, 0);
    param(&c, "y", f32(0), 2, 1);
    instr(&c, "s", "add", f32(0), 3, LIST(1, 2), NULL);
    comp_end(&m, &c, "add_comp", 1, 3);

    param(&c, "fp0", f32(8), 1, 0);
    constant(&c, "fc", 2, 2.0f);
    packed(&x, 14, NULL, 0);
    instr(&c, "fb", "broadcast", f32(8), 3, LIST(2), &x);
    instr(&c, "fm", "multiply", f32(8), 4, LIST(1, 3), NULL);
    comp_end(&m, &c, "fused", 2, 4);

    param(&c, "p0", f32(8), 1, 0);
    param(&c, "p1", f32(8), 2, 1);
    instr(&c, "t", "tuple", tuple2(f32(8), f32(8)), 3, LIST(1, 2), NULL);
    pbw_uint(&x, 13, 0);
    instr(&c, "get-tuple-element.1", "get-tuple-element", f32(8), 4, LIST(3), &x);
    pbw_uint(&x, 13, 1);
    instr(&c, "get-tuple-element.2", "get-tuple-element", f32(8), 5, LIST(3), &x);
    instr(&c, "a", "add", f32(8), 6, LIST(4, 5), NULL);
    pbw_str(&x, 11, "kLoop");
    packed(&x, 38, LIST(2));
    instr(&c, "f", "fusion", f32(8), 7, LIST(6), &x);
    constant(&c, "c0", 8, 0.0f);
    packed(&x, 14, LIST(0));
    packed(&x, 38, LIST(1));
    instr(&c, "r", "reduce", f32(0), 9, LIST(7, 8), &x);
    comp_end(&m, &c, "main", 3, 9);
    return proto(&m, 3);
}

/* A chain: p, a0 = p + p, a_i = a_{i-1} + p, r = negate(a_{n-1}). */
static struct pbw chain(int n)
{
    struct pbw m = {0}, c = {0};
    char name[32];
    int i;

    param(&c, "p", f32(16), 1, 0);
    for (i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "a%d", i);
        instr(&c, name, "add", f32(16), 2 + i, LIST(i == 0 ? 1 : 1 + i, 1), NULL);
    }
    instr(&c, "r", "negate", f32(16), 2 + n, LIST(1 + n), NULL);
    comp_end(&m, &c, "main", 1, 2 + n);
    return proto(&m, 1);
}

/* Open hp (kept alive by the caller) into v. */
static void open_view(struct hlo_view *v, const struct pbw *hp)
{
    struct xp_err err = {0};

    assert_int_equal(hlo_view_open(v, hp->p, hp->n, &err), 0);
}

/* What a writer holds as a NUL-terminated malloc'ed string. */
static char *text(struct out *o)
{
    size_t n = out_len(o), off = 0, c;
    char *s = malloc(n + 1);

    assert_non_null(s);
    assert_false(out_failed(o));
    for (c = 0; off < n; c++) {
        size_t k = n - off < OUT_CHUNK ? n - off : OUT_CHUNK;
        memcpy(s + off, o->chunks[c], k);
        off += k;
    }
    s[n] = '\0';
    out_discard(o);
    return s;
}

static char *adjacent(const struct hlo_view *v, const char *name)
{
    struct out o;
    uint32_t n = hlo_view_find_node(v, name);

    assert_int_not_equal(n, HLO_VIEW_NONE);
    out_init(&o);
    assert_int_equal(hlo_view_adjacent(v, n, &o), 0);
    return text(&o);
}

static char *dot_around(const struct hlo_view *v, const char *name, int64_t radius, int merge)
{
    struct hlo_dot_opts opts = {0, !merge};
    struct out o;
    uint32_t n = hlo_view_find_node(v, name);

    assert_int_not_equal(n, HLO_VIEW_NONE);
    out_init(&o);
    assert_int_equal(hlo_view_dot_around(v, n, radius, &opts, &o), 0);
    return text(&o);
}

static char *module_text(const struct hlo_view *v, int verbose, int metadata)
{
    struct out o;

    out_init(&o);
    assert_int_equal(hlo_view_print_module(v, &o, verbose, metadata), 0);
    return text(&o);
}

/* The DOT statement of the node labelled <b>name</b>, as a copy. */
static char *node_line(const char *dot, const char *label)
{
    const char *p = strstr(dot, label), *b, *e;
    char *s;

    if (p == NULL)
        return NULL;
    for (b = p; b > dot && b[-1] != '\n'; b--)
        ;
    e = strstr(p, "];\n");
    assert_non_null(e);
    s = malloc((size_t)(e - b) + 1);
    assert_non_null(s);
    memcpy(s, b, (size_t)(e - b));
    s[e - b] = '\0';
    return s;
}

static void expect_in(const char *hay, const char *needle)
{
    if (strstr(hay, needle) == NULL)
        fail_msg("missing %s in:\n%s", needle, hay);
}

/* ---- tests ---- */

static void test_graph_viewer_adjacent(void **state)
{
    struct pbw hp = tiny();
    struct hlo_view v;
    char *s;

    (void)state;
    open_view(&v, &hp);
    s = adjacent(&v, "a");
    assert_string_equal(s, "{\"consumer_names\":[\"f\"],\"operand_names\":[\"t\",\"t\"]}");
    free(s);
    s = adjacent(&v, "t");
    assert_string_equal(s, "{\"consumer_names\":[\"a\",\"a\"],\"operand_names\":[\"p0\",\"p1\"]}");
    free(s);
    s = adjacent(&v, "%Get-Tuple-Element.1"); /* XProf's lookup: '%' dropped, any case */
    assert_string_equal(s, "{\"consumer_names\":[\"a\"],\"operand_names\":[\"t\"]}");
    free(s);
    s = adjacent(&v, "p1");
    assert_string_equal(s, "{\"consumer_names\":[\"t\"],\"operand_names\":[]}");
    free(s);
    assert_int_equal(hlo_view_find_node(&v, "nope"), HLO_VIEW_NONE);
    assert_int_not_equal(hlo_view_find_comp(&v, "FUSED"), HLO_VIEW_NONE);
    assert_int_equal(hlo_view_find_comp(&v, "a"), HLO_VIEW_NONE);
    hlo_view_release(&v);
    free(hp.p);
}

static void test_graph_viewer_radius(void **state)
{
    struct pbw hp = chain(30);
    struct hlo_view v;
    char *dot, *line;

    (void)state;
    open_view(&v, &hp);
    dot = dot_around(&v, "a15", 2, 0);
    expect_in(dot, "label = <<b>Neighborhood of 2 nodes around a15<br/>Computation main<br/>"
                   "ENTRY computation</b>>;");
    assert_null(strstr(dot, "<b>a12</b>"));
    assert_null(strstr(dot, "<b>a18</b>"));
    line = node_line(dot, "<b>a15</b>");
    assert_non_null(line);
    expect_in(line, "shape=diamond");
    expect_in(line, "fillcolor=\"#b71c1c\"");
    free(line);
    line = node_line(dot, "<b>a13</b>"); /* a12 cut: some operands omitted */
    assert_non_null(line);
    expect_in(line, "style=\"filled,dashed\"");
    free(line);
    line = node_line(dot, "<b>a17</b>"); /* all operands drawn */
    assert_non_null(line);
    expect_in(line, "style=\"filled\", fontcolor=\"black\", color=\"#9e9e9e\"");
    free(line);
    /* p has 31 users, but a second queue entry at the last depth marks it
     * normal again (as XLA's filter does) */
    line = node_line(dot, "<b>Parameter 0</b>");
    assert_non_null(line);
    expect_in(line, "style=\"filled\", fontcolor=\"black\", color=\"#cbae82\"");
    free(line);
    /* edges only between drawn nodes, with head labels for two operands */
    expect_in(dot, "tooltip=\"a14 -> a15\"  headlabel=\"0\", labeldistance=2];");
    expect_in(dot, "tooltip=\"p -> a15\"  headlabel=\"1\", labeldistance=2];");
    assert_null(strstr(dot, "tooltip=\"a12 -> a13\""));
    free(dot);
    dot = dot_around(&v, "a0", 2, 0); /* here p keeps its users omitted */
    line = node_line(dot, "<b>Parameter 0</b>");
    assert_non_null(line);
    expect_in(line, "style=\"filled,dashed\"");
    free(line);
    free(dot);
    dot = dot_around(&v, "a15", 0, 0);
    assert_null(strstr(dot, "<b>a14</b>"));
    expect_in(dot, "<b>a15</b>");
    free(dot);
    hlo_view_release(&v);
    free(hp.p);
}

static void test_graph_viewer_dot(void **state)
{
    struct pbw hp = tiny();
    struct hlo_view v;
    struct hlo_dot_opts opts = {0, 1};
    struct out o;
    char *dot, *line;

    (void)state;
    open_view(&v, &hp);
    dot = dot_around(&v, "a", 3, 0);
    assert_int_equal(strncmp(dot, "digraph G {\nrankdir = TB;\ncompound = true;\n", 41), 0);
    assert_int_equal(dot[strlen(dot) - 1], '}');
    /* a: get-tuple-elements merged into it, white (an elementwise op) */
    line = node_line(dot, "<b>a</b>");
    assert_non_null(line);
    expect_in(line, "<b>a</b><br/>add<br/>f32[8]<br/><b>operand 0</b> = tuple-element 0 of t "
                    "f32[8]{0}<br/><b>operand 1</b> = tuple-element 1 of t f32[8]{0}>");
    expect_in(line, "shape=diamond");
    free(line);
    assert_null(strstr(dot, "<b>get-tuple-element.1</b>"));
    expect_in(dot, "tooltip=\"t -> a\"  headlabel=\"0\", labeldistance=2];");
    /* the fusion as a cluster, its broadcast constant inlined */
    expect_in(dot, "subgraph cluster_2 {\nstyle=\"rounded,filled,bold\"; fillcolor=\"#f5f5f5\"; "
                   "color=\"#c2c2c2;\"\nlabel = <Fused expression for <b>f</b><br/>loop fusion<br/>"
                   "kind=kLoop>;\nlabelloc = t;\ntooltip = \" \";\n");
    line = node_line(dot, "<b>fm</b>");
    assert_non_null(line);
    expect_in(line, "<b>operand 1</b> = f32[8] 2>");
    free(line);
    assert_null(strstr(dot, "<b>f</b><br/>fusion"));
    /* reduce with its trivial computation named, constant operand inlined */
    line = node_line(dot, "<b>r</b>");
    assert_non_null(line);
    expect_in(line, "<b>r</b><br/>reduce<br/>Subcomputation: <b>add</b><br/>dimensions={0}<br/>"
                    "f32[]<br/><b>operand 1</b> = f32[] 0>");
    expect_in(line, "fillcolor=\"#e1bee7\"");
    free(line);
    assert_null(strstr(dot, "cluster_1 {")); /* add_comp is trivial: not drawn */
    expect_in(dot, "[label=<ROOT>, shape=circle, tooltip=\" \", style=\"filled\"");
    expect_in(dot, "  %23node");
    free(dot);

    /* merge_fusion: the fusion is one node */
    dot = dot_around(&v, "a", 3, 1);
    expect_in(dot, "<b>f</b><br/>fusion:kLoop<br/>kind=kLoop<br/>f32[8]>");
    assert_null(strstr(dot, "subgraph"));
    free(dot);

    /* a whole computation (RenderGraph with an empty label) */
    out_init(&o);
    assert_int_equal(hlo_view_dot_comp(&v, hlo_view_find_comp(&v, "fused"), &opts, &o), 0);
    dot = text(&o);
    expect_in(dot, "label = <<b><br/>Computation fused (in fusion instruction f)</b>>;");
    expect_in(dot, "<b>Parameter 0</b>");
    free(dot);
    hlo_view_release(&v);
    free(hp.p);
}

static void test_graph_viewer_text(void **state)
{
    struct pbw hp = tiny();
    struct hlo_view v;
    char *s;

    (void)state;
    open_view(&v, &hp);
    s = module_text(&v, 0, 0);
    /* callees first, in the order main's instructions call them */
    expect_in(s, "HloModule m, entry_computation_layout={(f32[8]{0}, f32[8]{0})->f32[]}\n\n"
                 "fused {\n  fp0 = f32[8]{0} parameter(0)\n  fc = f32[] constant(2)\n"
                 "  fb = f32[8]{0} broadcast(fc), dimensions={}\n"
                 "  ROOT fm = f32[8]{0} multiply(fp0, fb)\n}\n\nadd_comp {\n");
    expect_in(s, "\nENTRY main {\n  p0 = f32[8]{0} parameter(0)\n");
    expect_in(s, "  a = f32[8]{0} add(get-tuple-element.1, get-tuple-element.2)\n");
    expect_in(s, "  f = f32[8]{0} fusion(a), kind=kLoop, calls=fused\n");
    expect_in(s, "  ROOT r = f32[] reduce(f, c0), dimensions={0}, to_apply=add_comp\n}\n\n");
    assert_null(strstr(s, "%"));
    free(s);
    s = module_text(&v, 1, 0);
    expect_in(s, "\nENTRY %main (p0: f32[8], p1: f32[8]) -> f32[] {\n");
    expect_in(s, "  %a = f32[8]{0} add(f32[8]{0} %get-tuple-element.1, f32[8]{0} "
                 "%get-tuple-element.2)\n");
    expect_in(s, "%add_comp (x: f32[], y: f32[]) -> f32[] {\n");
    free(s);
    hlo_view_release(&v);
    free(hp.p);
}

/* Everything the tool can be asked about every node and computation of
 * hp: it must end and not crash. */
static void ask_everything(const struct pbw *hp)
{
    struct hlo_view v;
    struct hlo_dot_opts opts = {1, 1};
    struct out o;
    uint32_t i;

    open_view(&v, hp);
    for (i = 0; i < v.g.nnodes; i++) {
        out_init(&o);
        (void)hlo_view_adjacent(&v, i, &o);
        out_discard(&o);
        out_init(&o);
        assert_int_equal(hlo_view_dot_around(&v, i, 1000, &opts, &o), 0);
        out_discard(&o);
    }
    for (i = 0; i < v.g.ncomps; i++) {
        out_init(&o);
        assert_int_equal(hlo_view_dot_comp(&v, i, &opts, &o), 0);
        out_discard(&o);
    }
    out_init(&o);
    assert_int_equal(hlo_view_print_module(&v, &o, 0, 1), 0);
    out_discard(&o);
    out_init(&o);
    assert_int_equal(hlo_view_print_module(&v, &o, 1, 1), 0);
    out_discard(&o);
    hlo_view_release(&v);
}

static void test_graph_viewer_hostile(void **state)
{
    struct pbw m = {0}, c = {0}, x = {0}, hp;
    struct hlo_view v;
    struct xp_err err = {0};
    struct out o;
    uint32_t n;

    (void)state;
    /* a call cycle: A calls B, B calls A; an operand cycle in B */
    param(&c, "ap", f32(4), 1, 0);
    packed(&x, 38, LIST(2));
    instr(&c, "acall", "call", f32(4), 2, LIST(1), &x);
    comp_end(&m, &c, "A", 1, 2);
    param(&c, "bp", f32(4), 1, 0);
    instr(&c, "bx", "add", f32(4), 2, LIST(3, 1), NULL);
    instr(&c, "by", "negate", f32(4), 3, LIST(2), NULL);
    packed(&x, 38, LIST(1));
    instr(&c, "bcall", "call", f32(4), 4, LIST(3), &x);
    /* a get-tuple-element that is its own operand */
    instr(&c, "get-tuple-element.9", "get-tuple-element", f32(4), 5, LIST(5), NULL);
    /* a fusion whose computation's root is a fusion of itself */
    packed(&x, 38, LIST(3));
    pbw_str(&x, 11, "kLoop");
    instr(&c, "bf", "fusion", f32(4), 6, LIST(4), &x);
    comp_end(&m, &c, "B", 2, 6);
    param(&c, "fp", f32(4), 1, 0);
    packed(&x, 38, LIST(3));
    pbw_str(&x, 11, "kLoop");
    instr(&c, "ff", "fusion", f32(4), 2, LIST(1), &x);
    comp_end(&m, &c, "F", 3, 2);
    hp = proto(&m, 1);
    ask_everything(&hp);
    open_view(&v, &hp);
    n = hlo_view_find_node(&v, "get-tuple-element.9");
    out_init(&o);
    assert_int_equal(hlo_view_adjacent(&v, n, &o), -E2BIG);
    out_discard(&o);
    hlo_view_release(&v);
    free(hp.p);

    /* an operand id that names nothing */
    param(&c, "p", f32(4), 1, 0);
    instr(&c, "bad", "negate", f32(4), 2, LIST(99), NULL);
    comp_end(&m, &c, "main", 1, 2);
    hp = proto(&m, 1);
    assert_int_equal(hlo_view_open(&v, hp.p, hp.n, &err), -EIO);
    assert_non_null(strstr(err.msg, "malformed"));
    free(hp.p);

    /* no module at all, and cut bytes */
    assert_int_equal(hlo_view_open(&v, (const uint8_t *)"\x0a\x05\x01", 3, &err), -EIO);
    assert_int_equal(hlo_view_open(&v, NULL, 0, &err), -EIO);
}

static void test_graph_viewer_big(void **state)
{
    struct pbw hp = chain(20000), m = {0}, c = {0};
    struct hlo_dot_opts opts = {0, 1};
    struct hlo_view v;
    struct out o;
    clock_t t0 = clock();
    char name[32];
    int i;

    (void)state;
    open_view(&v, &hp);
    out_init(&o);
    /* the whole chain within the radius */
    assert_int_equal(hlo_view_dot_around(&v, hlo_view_find_node(&v, "a10000"), 1 << 30, &opts, &o),
                     0);
    assert_true(out_len(&o) > 20000 * 100);
    out_discard(&o);
    hlo_view_release(&v);
    free(hp.p);

    /* a fan-out of 50000 users of one parameter */
    param(&c, "p", f32(16), 1, 0);
    for (i = 0; i < 50000; i++) {
        snprintf(name, sizeof(name), "n%d", i);
        instr(&c, name, "negate", f32(16), 2 + i, LIST(1), NULL);
    }
    comp_end(&m, &c, "main", 1, 50001);
    hp = proto(&m, 1);
    open_view(&v, &hp);
    out_init(&o);
    assert_int_equal(hlo_view_dot_around(&v, hlo_view_find_node(&v, "p"), 5, &opts, &o), 0);
    out_discard(&o);
    out_init(&o);
    assert_int_equal(hlo_view_adjacent(&v, hlo_view_find_node(&v, "p"), &o), 0);
    out_discard(&o);
    out_init(&o);
    assert_int_equal(hlo_view_print_module(&v, &o, 1, 0), 0);
    out_discard(&o);
    hlo_view_release(&v);
    free(hp.p);
    assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 60);
}

/* An f32 constant of shape shp (consumed) holding v[0..n). */
static void array_constant(struct pbw *comp, const char *name, int64_t id, struct pbw shp,
                           const float *v, int n)
{
    struct pbw x = {0}, lit = {0}, copy = {0};

    pbw_raw(&copy, shp.p, shp.n);
    pbw_msg(&lit, 1, &copy);
    pbw_bytes(&lit, 8, v, (size_t)n * sizeof(*v));
    pbw_msg(&x, 8, &lit);
    instr(comp, name, "constant", shp, id, NOOPS, &x);
}

/* A tuple constant (f32[2], f32[]) holding ({0.5, 1.5}, 2.5). */
static void tuple_constant(struct pbw *comp, const char *name, int64_t id)
{
    const float a[2] = {0.5f, 1.5f}, b = 2.5f;
    struct pbw x = {0}, lit = {0}, e1 = {0}, e2 = {0}, copy = {0};
    struct pbw s1 = f32(2), s2 = f32(0), ts = tuple2(f32(2), f32(0));

    pbw_msg(&e1, 1, &s1);
    pbw_bytes(&e1, 8, a, sizeof(a));
    pbw_msg(&e2, 1, &s2);
    pbw_bytes(&e2, 8, &b, sizeof(b));
    pbw_raw(&copy, ts.p, ts.n);
    pbw_msg(&lit, 1, &copy);
    pbw_msg(&lit, 10, &e1);
    pbw_msg(&lit, 10, &e2);
    pbw_msg(&x, 8, &lit);
    instr(comp, name, "constant", ts, id, NOOPS, &x);
}

/* long_txt prints large constants (print_large_constants), short_txt and
 * the DOT keep XLA's "{...}" past ten elements. */
static void test_graph_viewer_large_constants(void **state)
{
    struct pbw m = {0}, c = {0}, hp, mat = {0}, l = {0};
    struct hlo_dot_opts opts = {0, 1};
    struct hlo_view v;
    struct out o;
    float twelve[12];
    char *t;
    int i;

    (void)state;
    for (i = 0; i < 12; i++)
        twelve[i] = (float)i + 0.5f;
    pbw_uint(&mat, 2, F32);
    packed(&mat, 3, LIST(3, 4));
    packed(&l, 1, LIST(1, 0));
    pbw_msg(&mat, 5, &l);
    array_constant(&c, "k", 1, f32(12), twelve, 12);
    array_constant(&c, "k2", 2, mat, twelve, 12);
    instr(&c, "t", "tuple", tuple2(f32(12), f32(12)), 3, LIST(1, 1), NULL);
    tuple_constant(&c, "kt", 4);
    comp_end(&m, &c, "main", 1, 3);
    hp = proto(&m, 1);
    open_view(&v, &hp);
    t = module_text(&v, 1, 0);
    expect_in(t, "  %k = f32[12]{0} constant({0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, "
                 "9.5, 10.5, 11.5})\n");
    expect_in(t, "  %k2 = f32[3,4]{1,0} constant({ { 0.5, 1.5, 2.5, 3.5 }, { 4.5, 5.5, 6.5, "
                 "7.5 }, { 8.5, 9.5, 10.5, 11.5 } })\n");
    expect_in(t, "  %kt = (f32[2]{0}, f32[]) constant(( {0.5, 1.5}, 2.5 ))\n");
    free(t);
    t = module_text(&v, 0, 0);
    expect_in(t, "  k = f32[12]{0} constant({...})\n");
    expect_in(t, "  k2 = f32[3,4]{1,0} constant({...})\n");
    expect_in(t, "  kt = (f32[2]{0}, f32[]) constant({...})\n");
    free(t);
    out_init(&o);
    assert_int_equal(hlo_view_dot_around(&v, hlo_view_find_node(&v, "t"), 2, &opts, &o), 0);
    t = text(&o);
    assert_null(strstr(t, "11.5"));
    free(t);
    hlo_view_release(&v);
    free(hp.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_viewer_adjacent),
        cmocka_unit_test(test_graph_viewer_radius),
        cmocka_unit_test(test_graph_viewer_dot),
        cmocka_unit_test(test_graph_viewer_text),
        cmocka_unit_test(test_graph_viewer_hostile),
        cmocka_unit_test(test_graph_viewer_big),
        cmocka_unit_test(test_graph_viewer_large_constants),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
