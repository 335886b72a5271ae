/*
 * test_op_profile.c - the op_profile tree (op_stats/op_profile_tree.c) on
 * hand-made op metrics: the prune caps and num_children after XProf's
 * double pass, dedup groups, tie order, IDLE, provenance paths, program
 * names and the Metrics formulas.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_stats/op_profile_tree.h"

#define MAX_ROWS 400

/* A hand-made db: rows in storage order, names kept in names[]. */
struct fixture {
    struct op_metrics rows[MAX_ROWS];
    char names[MAX_ROWS][32];
    struct op_metrics_db db;
};

static struct fixture *fixture_new(void)
{
    struct fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->db.rows = f->rows;
    return f;
}

/* Append an op of program id, category, dedup name and time (self = time). */
static struct op_metrics *add(struct fixture *f, uint64_t id, const char *name, const char *cat,
                              const char *dedup, uint64_t time_ps)
{
    struct op_metrics *m = &f->rows[f->db.nrows];

    assert_true(f->db.nrows < MAX_ROWS);
    snprintf(f->names[f->db.nrows], sizeof(f->names[0]), "%s", name);
    m->hlo_module_id = id;
    m->name = f->names[f->db.nrows];
    m->category = cat;
    m->provenance = "";
    m->deduplicated_name = dedup;
    m->long_name = "";
    m->source_file = "";
    m->stack_frame = "";
    m->occurrences = 1;
    m->time_ps = m->self_time_ps = time_ps;
    f->db.nrows++;
    f->db.total_op_time_ps += time_ps;
    f->db.total_time_ps = f->db.total_op_time_ps;
    return m;
}

/* The IDLE row of total - op time. */
static void add_idle(struct fixture *f, uint64_t idle_ps)
{
    uint64_t op = f->db.total_op_time_ps;
    struct op_metrics *m = add(f, 0, "IDLE", "IDLE", "", idle_ps);

    m->occurrences = 0;
    f->db.total_op_time_ps = op;
    f->db.total_time_ps = op + idle_ps;
}

static const char *names_fn(void *arg, uint64_t id)
{
    (void)arg;
    return id == 7 ? "jit_step" : NULL;
}

static void build(struct op_profile_tree *t, struct fixture *f, enum op_profile_group g,
                  int exclude_idle)
{
    struct op_profile_options opt = {g, exclude_idle, 100};
    double bws[3] = {1000, 2000, 3000};

    assert_int_equal(op_profile_tree_build(t, &f->db, &opt, 100, bws, 3, names_fn, NULL), 0);
    assert_non_null(t->root);
}

static const struct op_profile_node *child(const struct op_profile_node *n, const char *name)
{
    uint32_t i;

    for (i = 0; i < n->nchildren; i++) {
        if (strcmp(n->children[i]->name, name) == 0)
            return n->children[i];
    }
    fail_msg("no child \"%s\" under \"%s\"", name, n->name);
    return NULL;
}

/* 150 ops of distinct names in one category: the category keeps the 100
 * longest, and says 100 after the second pass; each one-op dedup group is
 * replaced by its op. */
static void test_op_profile_cap(void **state)
{
    struct fixture *f = fixture_new();
    const struct op_profile_node *prog, *cat;
    struct op_profile_tree t;
    char name[32];
    int i;

    (void)state;
    for (i = 0; i < 150; i++) {
        snprintf(name, sizeof(name), "op.%d", i);
        add(f, 7, name, "convolution", "", 1000 + (uint64_t)i);
    }
    build(&t, f, OPP_BY_PROGRAM, 0);
    assert_string_equal(t.root->name, "by_program");
    assert_int_equal(t.root->nchildren, 1);
    prog = t.root->children[0];
    assert_string_equal(prog->name, "jit_step(7)");
    cat = child(prog, "convolution");
    assert_int_equal(cat->nchildren, 100);
    assert_int_equal(cat->num_children, 100);
    for (i = 0; i < 100; i++) {
        snprintf(name, sizeof(name), "op.%d", 149 - i);
        assert_string_equal(cat->children[i]->name, name);
        assert_true(cat->children[i]->has_xla);
        assert_int_equal(cat->children[i]->num_children, 0);
        assert_int_equal(cat->children[i]->nchildren, 0);
    }
    /* the category's metrics are those of all 150 ops */
    assert_int_equal(cat->metrics.occurrences, 150);
    op_profile_tree_free(&t);

    /* by_category: the same cap one level up */
    build(&t, f, OPP_BY_CATEGORY, 0);
    assert_string_equal(t.root->name, "by_category");
    cat = child(t.root, "convolution");
    assert_int_equal(cat->nchildren, 100);
    assert_int_equal(cat->num_children, 100);
    op_profile_tree_free(&t);
    free(f);
}

/* Levels above the cap are not pruned: 150 programs under by_program's
 * root, 150 categories under a program or under by_category's root. */
static void test_op_profile_levels(void **state)
{
    struct fixture *f = fixture_new(), *g = fixture_new();
    struct op_profile_tree t;
    char name[32];
    static char cats[150][16];
    int i;

    (void)state;
    for (i = 0; i < 150; i++) {
        snprintf(name, sizeof(name), "op.%d", i);
        add(f, 100 + (uint64_t)i, name, "convolution", "", 1000);
        snprintf(cats[i], sizeof(cats[i]), "cat%d", i);
        add(g, 7, name, cats[i], "", 1000);
    }
    build(&t, f, OPP_BY_PROGRAM, 0);
    assert_int_equal(t.root->nchildren, 150);
    assert_int_equal(t.root->num_children, 150);
    assert_string_equal(t.root->children[0]->name, "main");
    op_profile_tree_free(&t);
    build(&t, g, OPP_BY_PROGRAM, 0);
    assert_int_equal(t.root->children[0]->nchildren, 150);
    assert_int_equal(t.root->children[0]->num_children, 150);
    op_profile_tree_free(&t);
    build(&t, g, OPP_BY_CATEGORY, 0);
    assert_int_equal(t.root->nchildren, 150);
    assert_int_equal(t.root->num_children, 150);
    op_profile_tree_free(&t);
    free(f);
    free(g);
}

/* Dedup groups: fusion.1 and fusion.2 name fusion.3 as their dedup name,
 * fusion.4 has none: "fusion.2 and its duplicate(s)" (the longest first)
 * holds three, fusion.4 stands alone. A group of 150 is cut to 100. */
static void test_op_profile_dedup(void **state)
{
    struct fixture *f = fixture_new();
    const struct op_profile_node *cat, *grp, *one;
    struct op_profile_tree t;
    struct op_metrics *m;
    char name[32];
    int i;

    (void)state;
    m = add(f, 7, "fusion.1", "convolution", "fusion.3", 10);
    m->provenance = "jit(f)/conv:";
    m->long_name = "%fusion.1 = f32[2] fusion()";
    m->source_file = "a.py";
    m->source_line = 3;
    m = add(f, 7, "fusion.2", "convolution", "fusion.3", 30);
    m->provenance = "jit(f)/conv2:";
    m->long_name = "%fusion.2 = f32[2] fusion()";
    m->source_file = "b.py";
    m->source_line = 9;
    add(f, 7, "fusion.3", "convolution", "", 20);
    add(f, 7, "fusion.4", "convolution", "", 5);
    add(f, 7, "lf.1", "loop fusion", "lf", 4)->provenance = "jit(f)/x:";
    add(f, 7, "lf.2", "loop fusion", "lf", 3)->provenance = "jit(f)/y:";
    build(&t, f, OPP_BY_PROGRAM, 0);
    cat = child(t.root->children[0], "convolution");
    assert_int_equal(cat->nchildren, 2);
    grp = cat->children[0];
    assert_string_equal(grp->name, "fusion.2 and its duplicate(s)");
    assert_int_equal(grp->nchildren, 3);
    assert_int_equal(grp->num_children, 3);
    assert_string_equal(grp->children[0]->name, "fusion.2");
    assert_string_equal(grp->children[1]->name, "fusion.3");
    assert_string_equal(grp->children[2]->name, "fusion.1");
    assert_true(grp->has_xla);
    assert_string_equal(grp->xla.expression, "%fusion.2 = f32[2] fusion()");
    assert_string_equal(grp->xla.provenance, "jit(f)/conv2:");
    assert_string_equal(grp->xla.source_file, "b.py");
    assert_int_equal(grp->xla.source_line, 9);
    assert_int_equal(grp->xla.program_id, 7);
    assert_true(grp->xla.has_layout);
    assert_int_equal(grp->metrics.raw_time, 60);
    assert_int_equal(grp->metrics.occurrences, 3);
    one = cat->children[1];
    assert_string_equal(one->name, "fusion.4");
    assert_true(one->has_xla);
    assert_false(one->xla.has_layout);
    /* a fusion group copies neither provenance nor layout */
    grp = child(t.root->children[0], "loop fusion")->children[0];
    assert_string_equal(grp->name, "lf.1 and its duplicate(s)");
    assert_string_equal(grp->xla.provenance, "");
    assert_false(grp->xla.has_layout);
    op_profile_tree_free(&t);
    free(f);

    f = fixture_new();
    for (i = 0; i < 150; i++) {
        snprintf(name, sizeof(name), "copy.%d", i);
        add(f, 7, name, "data formatting", "copy.0", 100 + (uint64_t)i);
    }
    build(&t, f, OPP_BY_CATEGORY, 0);
    cat = child(t.root, "data formatting");
    assert_int_equal(cat->nchildren, 1);
    grp = cat->children[0];
    assert_string_equal(grp->name, "copy.149 and its duplicate(s)");
    assert_int_equal(grp->nchildren, 100);
    assert_int_equal(grp->num_children, 100);
    assert_int_equal(grp->metrics.occurrences, 150);
    op_profile_tree_free(&t);
    free(f);
}

/* Equal times keep the order the rows made the nodes. */
static void test_op_profile_ties(void **state)
{
    struct fixture *f = fixture_new();
    const struct op_profile_node *cat;
    struct op_profile_tree t;

    (void)state;
    add(f, 7, "b", "x", "", 5);
    add(f, 7, "a", "x", "", 5);
    add(f, 7, "big", "x", "", 9);
    add(f, 7, "c", "x", "", 5);
    add(f, 7, "c2", "y", "", 14);
    build(&t, f, OPP_BY_CATEGORY, 0);
    /* categories x (24) then y (14) */
    assert_string_equal(t.root->children[0]->name, "x");
    assert_string_equal(t.root->children[1]->name, "y");
    cat = t.root->children[0];
    assert_string_equal(cat->children[0]->name, "big");
    assert_string_equal(cat->children[1]->name, "b");
    assert_string_equal(cat->children[2]->name, "a");
    assert_string_equal(cat->children[3]->name, "c");
    op_profile_tree_free(&t);
    free(f);
}

/* IDLE: a leaf under the root, the root's time is the total; without
 * IDLE the root's time is the op time. Flops utilization and bandwidth
 * follow PopulateOpMetricsNode. */
static void test_op_profile_idle_and_metrics(void **state)
{
    struct fixture *f = fixture_new();
    const struct op_profile_node *prog, *op, *idle;
    struct op_profile_tree t;
    struct op_metrics *m;
    double t_ns = 1000.0, gib = 1073741824.0 / 1e9;

    (void)state;
    m = add(f, 7, "dot.1", "convolution", "", 1000000); /* 1 us */
    m->flops_v2 = 50e3;                                 /* 50 GFLOP/s */
    m->model_flops_v2 = 40e3;
    m->occurrences = 4;
    m->mem[0] = (struct op_mem_access){1, OP_MEM_READ, 600000};  /* 600 GB/s */
    m->mem[1] = (struct op_mem_access){1, OP_MEM_WRITE, 200000}; /* 200 GB/s */
    m->mem[2] = (struct op_mem_access){3, OP_MEM_READ, 100000};
    m->mem[3] = (struct op_mem_access){2, OP_MEM_WRITE, 900000000};
    m->mem[4] = (struct op_mem_access){1, OP_MEM_UNKNOWN, 1};
    m->nmem = 5;
    add_idle(f, 3000000);
    build(&t, f, OPP_BY_PROGRAM, 0);
    assert_int_equal(t.root->nchildren, 2);
    idle = t.root->children[0]; /* the longer first */
    prog = t.root->children[1];
    assert_string_equal(prog->name, "jit_step(7)");
    assert_string_equal(idle->name, "IDLE");
    assert_true(idle->has_xla);
    assert_string_equal(idle->xla.category, "IDLE");
    assert_int_equal(idle->metrics.raw_time, 3000000);
    assert_int_equal(t.root->metrics.raw_time, 4000000);
    assert_int_equal(t.root->metrics.occurrences, 0);
    assert_int_equal(prog->metrics.occurrences, 0);
    op = prog->children[0]->children[0];
    assert_string_equal(op->name, "dot.1");
    assert_int_equal(op->metrics.occurrences, 4);
    assert_true(op->metrics.avg_time_ps == 250000.0);
    /* 50 GFLOP/s of a 100 TFLOP/s peak, a quarter of the total time */
    assert_true(op->metrics.flops == (50.0 / 100e3) * 0.25);
    assert_true(op->metrics.uncapped_flops == op->metrics.flops);
    assert_true(op->metrics.raw_flops == 40e3 && op->metrics.bf16_flops == 50e3);
    assert_true(op->metrics.bandwidth_utils[0] == (600 / gib + 200 / gib) / (1000 / gib));
    assert_true(op->metrics.bandwidth_utils[1] == (100 / gib) / (2000 / gib));
    assert_true(op->metrics.bandwidth_utils[2] == 1.0); /* capped */
    assert_true(op->metrics.raw_bytes_accessed_array[0] == (600 / gib + 200 / gib) * gib * t_ns);
    assert_true(op->metrics.raw_bytes_accessed_array[2] == (900000 / gib) * gib * t_ns);
    op_profile_tree_free(&t);

    build(&t, f, OPP_BY_PROGRAM, 1);
    assert_int_equal(t.root->nchildren, 1);
    assert_int_equal(t.root->metrics.raw_time, 1000000);
    op = t.root->children[0]->children[0]->children[0];
    assert_true(op->metrics.flops == 50.0 / 100e3);
    op_profile_tree_free(&t);
    free(f);
}

/* Provenance paths: split on '/', empty parts skipped, the last part cut
 * at its first ':'; ops without provenance sit under the program. */
static void test_op_profile_provenance(void **state)
{
    struct fixture *f = fixture_new();
    const struct op_profile_node *prog, *n;
    struct op_profile_tree t;

    (void)state;
    add(f, 7, "dot.1", "convolution", "", 30)->provenance = "jit(f)/a/b:type";
    add(f, 7, "dot.2", "convolution", "", 20)->provenance = "jit(f)//a/c:d/";
    add(f, 7, "add.1", "elementwise", "", 10)->provenance = "x:y/z";
    add(f, 7, "copy.1", "data formatting", "", 5);
    add(f, 7, "e.1", "elementwise", "", 1)->provenance = ":";
    build(&t, f, OPP_BY_PROVENANCE, 0);
    assert_string_equal(t.root->name, "by_provenance");
    prog = child(t.root, "jit_step(7)");
    assert_int_equal(prog->nchildren, 4);
    n = child(prog, "jit(f)");
    assert_int_equal(n->metrics.raw_time, 50);
    n = child(n, "a");
    assert_int_equal(n->nchildren, 2);
    n = child(child(n, "b"), "convolution");
    assert_string_equal(n->children[0]->name, "dot.1");
    n = child(child(child(child(prog, "jit(f)"), "a"), "c"), "convolution");
    assert_string_equal(n->children[0]->name, "dot.2");
    n = child(child(child(prog, "x:y"), "z"), "elementwise");
    assert_string_equal(n->children[0]->name, "add.1");
    n = child(child(prog, ""), "elementwise");
    assert_string_equal(n->children[0]->name, "e.1");
    n = child(prog, "data formatting");
    assert_string_equal(n->children[0]->name, "copy.1");
    op_profile_tree_free(&t);
    free(f);
}

/* XProf's edges: "region" ops are left out, an op with children time
 * counts in the root and program only, an empty db has no root, and a root
 * whose only child is IDLE is replaced by it. */
static void test_op_profile_edges(void **state)
{
    struct fixture *f = fixture_new();
    struct op_profile_options opt = {OPP_BY_PROGRAM, 0, 100};
    struct op_profile_tree t;
    struct op_metrics *m;

    (void)state;
    assert_int_equal(op_profile_tree_build(&t, &f->db, &opt, 1, NULL, 0, NULL, NULL), 0);
    assert_null(t.root);
    op_profile_tree_free(&t);

    add(f, 7, "region_0.1", "x", "", 50);
    m = add(f, 7, "while.1", "control flow", "", 40);
    m->self_time_ps = 10;
    add(f, 7, "add.1", "elementwise", "", 30);
    build(&t, f, OPP_BY_PROGRAM, 1);
    assert_int_equal(t.root->children[0]->metrics.raw_time, 40); /* self times */
    assert_int_equal(t.root->children[0]->nchildren, 1);
    assert_string_equal(t.root->children[0]->children[0]->name, "elementwise");
    op_profile_tree_free(&t);
    free(f);

    f = fixture_new();
    add_idle(f, 1000);
    build(&t, f, OPP_BY_PROGRAM, 0);
    assert_string_equal(t.root->name, "IDLE");
    assert_true(t.root->has_xla);
    op_profile_tree_free(&t);
    build(&t, f, OPP_BY_PROGRAM, 1);
    assert_string_equal(t.root->name, "by_program");
    assert_int_equal(t.root->nchildren, 0);
    op_profile_tree_free(&t);
    free(f);
}

/* agg_dvfs_time_scale_multiplier: normalized op time over op time. */
static void test_op_profile_dvfs(void **state)
{
    struct fixture *f = fixture_new();
    struct op_metrics *m;

    (void)state;
    assert_true(op_profile_dvfs_multiplier(&f->db) == 0.0);
    m = add(f, 7, "a", "x", "", 1000);
    assert_true(op_profile_dvfs_multiplier(&f->db) == 0.0);
    m->normalized_time_ps = 1000;
    m = add(f, 7, "b", "x", "", 1000);
    m->normalized_time_ps = 3000;
    assert_true(op_profile_dvfs_multiplier(&f->db) == 2.0);
    free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_op_profile_cap),
        cmocka_unit_test(test_op_profile_levels),
        cmocka_unit_test(test_op_profile_dedup),
        cmocka_unit_test(test_op_profile_ties),
        cmocka_unit_test(test_op_profile_idle_and_metrics),
        cmocka_unit_test(test_op_profile_provenance),
        cmocka_unit_test(test_op_profile_edges),
        cmocka_unit_test(test_op_profile_dvfs),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
