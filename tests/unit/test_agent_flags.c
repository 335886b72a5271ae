/*
 * test_agent_flags.c - Python Fire's binding of the agent CLI's words
 * (src/agent/agent_flags.c, agent_pylit.c), as a table of cases: each
 * expected value is what Fire and Python's literal parsing give.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/agent_flags.h"
#include "agent/agent_pyjson.h"

static const struct agent_param params[] = {{"session_id", AP_POSITIONAL | AP_REQUIRED},
                                            {"top_n", AP_POSITIONAL},
                                            {"include_summary", 0},
                                            {"limit", 0},
                                            {"logdir", 0},
                                            {NULL, 0}};
static const struct agent_spec spec = {"cmd", params, 0};

struct bind_case {
    const char *words[6];
    int rc;               /* 0 or AGENT_FIRE_ERROR */
    const char *name;     /* a parameter to check */
    enum pyval_kind kind; /* its kind */
    long long i;          /* INT/BOOL value */
    const char *text;     /* STR value */
};

static const struct bind_case cases[] = {
    {{"run1", "--limit=5"}, 0, "limit", PY_INT, 5, NULL},
    {{"run1", "--limit", "5"}, 0, "limit", PY_INT, 5, NULL},
    {{"run1", "--limit=-3"}, 0, "limit", PY_INT, -3, NULL},
    {{"run1", "--limit=0x10"}, 0, "limit", PY_INT, 16, NULL},
    {{"2025_01_01_00_00_00"}, 0, "session_id", PY_INT, 20250101000000LL, NULL},
    {{"run1", "--include_summary"}, 0, "include_summary", PY_BOOL, 1, NULL},
    {{"run1", "--noinclude_summary"}, 0, "include_summary", PY_BOOL, 0, NULL},
    {{"run1", "--include_summary", "--limit=2"}, 0, "include_summary", PY_BOOL, 1, NULL},
    {{"run1", "--include_summary=False"}, 0, "include_summary", PY_BOOL, 0, NULL},
    {{"run1", "--include-summary"}, 0, "include_summary", PY_BOOL, 1, NULL},
    {{"run1", "7"}, 0, "top_n", PY_INT, 7, NULL},
    {{"--top_n=7", "run1"}, 0, "session_id", PY_STR, 0, "run1"},
    {{"run1", "--limit=fusion"}, 0, "limit", PY_STR, 0, "fusion"},
    {{"run1", "--limit='5'"}, 0, "limit", PY_STR, 0, "5"},
    {{"run1", "--limit=.*"}, 0, "limit", PY_STR, 0, ".*"},
    {{"run1", "--limit=TPU:0$"}, 0, "limit", PY_STR, 0, "TPU:0$"},
    {{"run1", "--limit=None"}, 0, "limit", PY_NONE, 0, NULL},
    {{"run1", "--limit=1", "--limit=2"}, 0, "limit", PY_INT, 2, NULL},
    {{"--session_dir=/a/b"}, 0, "session_id", PY_STR, 0, "/a/b"},
    {{"--session_path", "/a/b", "--limit=1"}, 0, "session_id", PY_STR, 0, "/a/b"},
    {{"--source", "/a/b"}, 0, "session_id", PY_STR, 0, "/a/b"},
    {{"run1", "-t", "4"}, 0, "top_n", PY_INT, 4, NULL},
    {{"run1", "--bogus=1"}, AGENT_FIRE_ERROR, NULL, PY_NONE, 0, NULL},
    {{"run1", "--bogus"}, AGENT_FIRE_ERROR, NULL, PY_NONE, 0, NULL},
    {{"run1", "7", "extra"}, AGENT_FIRE_ERROR, NULL, PY_NONE, 0, NULL},
    {{"--limit=1"}, AGENT_FIRE_ERROR, NULL, PY_NONE, 0, NULL},
    {{"run1", "-l", "1"}, AGENT_FIRE_ERROR, NULL, PY_NONE, 0, NULL}, /* limit or logdir */
};

static void test_bind_table(void **state)
{
    size_t c;

    (void)state;
    for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        const struct bind_case *k = &cases[c];
        struct agent_args a;
        char msg[1024];
        int argc = 0, rc;
        const struct pyval *v;

        while (argc < 6 && k->words[argc] != NULL)
            argc++;
        rc = agent_bind(&spec, argc, (char *const *)k->words, &a, msg, sizeof(msg));
        if (rc != k->rc)
            fail_msg("case %zu (%s ...): rc %d, want %d (%s)", c, k->words[0], rc, k->rc, msg);
        if (rc != 0)
            continue;
        v = agent_arg(&a, k->name);
        if (v == NULL || v->kind != k->kind)
            fail_msg("case %zu: %s kind %d, want %d", c, k->name, v ? (int)v->kind : -1, k->kind);
        if (k->kind == PY_INT || k->kind == PY_BOOL)
            assert_int_equal(v->i, k->i);
        if (k->kind == PY_STR)
            assert_string_equal(v->text, k->text);
        agent_args_free(&a);
    }
}

static void test_fire_messages(void **state)
{
    const char *missing[] = {"--limit=1"};
    const char *extra[] = {"run1", "7", "more"};
    struct agent_args a;
    char msg[1024];

    (void)state;
    assert_int_equal(agent_bind(&spec, 1, (char *const *)missing, &a, msg, sizeof(msg)),
                     AGENT_FIRE_ERROR);
    assert_non_null(strstr(msg, "The function received no value for the required argument: "
                                "session_id\nUsage: xprof cmd SESSION_ID <flags>"));
    assert_int_equal(agent_bind(&spec, 3, (char *const *)extra, &a, msg, sizeof(msg)),
                     AGENT_FIRE_ERROR);
    assert_non_null(strstr(msg, "Could not consume arg: more"));
}

static void test_float_repr(void **state)
{
    /* Python 3: repr() of each value */
    static const struct {
        double v;
        const char *repr;
    } reprs[] = {{1.0, "1.0"},          {0.1, "0.1"},
                 {1e-05, "1e-05"},      {0.0001, "0.0001"},
                 {1e16, "1e+16"},       {1234567890123456.0, "1234567890123456.0"},
                 {-2.5, "-2.5"},        {40.042536, "40.042536"},
                 {1.5e300, "1.5e+300"}, {123.456, "123.456"}};
    char buf[40];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(reprs) / sizeof(reprs[0]); i++) {
        py_float_repr(reprs[i].v, buf, sizeof(buf));
        assert_string_equal(buf, reprs[i].repr);
    }
    assert_true(py_round(28.24834, 4) == 28.2483);
    assert_true(py_round(2.675, 2) == 2.67); /* the binary value is below 2.675 */
}

static void test_dumps_layout(void **state)
{
    cJSON *o = cJSON_CreateObject(), *arr = cJSON_CreateArray();
    char *s;

    (void)state;
    pyj_add_str(o, "a", "x\u00e9\"");
    pyj_add_float(o, "b", 2.0);
    pyj_add_int(o, "c", 3);
    cJSON_AddItemToArray(arr, cJSON_CreateTrue());
    cJSON_AddItemToArray(arr, cJSON_CreateNull());
    pyj_set(o, "d", arr);
    pyj_set(o, "e", cJSON_CreateObject());
    pyj_add_int(o, "a", 1); /* replaced in place, as a dict keeps the key's position */
    s = pyj_dumps(o, 2);
    assert_string_equal(s, "{\n  \"a\": 1,\n  \"b\": 2.0,\n  \"c\": 3,\n  \"d\": [\n    true,\n"
                           "    null\n  ],\n  \"e\": {}\n}");
    free(s);
    cJSON_Delete(o);
    o = cJSON_CreateObject();
    pyj_add_str(o, "k", "\u00e9\n");
    s = pyj_dumps(o, -1);
    assert_string_equal(s, "{\"k\": \"\\u00e9\\n\"}");
    free(s);
    cJSON_Delete(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bind_table),
        cmocka_unit_test(test_fire_messages),
        cmocka_unit_test(test_float_repr),
        cmocka_unit_test(test_dumps_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
