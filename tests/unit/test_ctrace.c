/*
 * test_ctrace.c - the Chrome-trace reader: fields, interning, metadata,
 * args on demand, gzip, and hostile input (errors, never crashes).
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
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include "reader/ctrace.h"

static const char doc[] =
    "{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"name\":\"H100\"}],\n"
    " \"traceEvents\":[\n"
    "  {\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"/device:GPU:0\"}},\n"
    "  {\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":7,\"args\":{\"name\":\"Stream "
    "#7\"}},\n"
    "  {\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":1,\"args\":{\"sort_index\":5}},\n"
    "  {\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\\u0041\",\"pid\":1,\"tid\":7,"
    "\"ts\":6727331766395.345,\"dur\":2.5,\"args\":{\"correlation\":42,\"External id\":9,"
    "\"nested\":{\"a\":[1,2,{\"b\":null}]}}},\n"
    "  {\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":\"0x1f\",\"pid\":2,\"tid\":\"t1\","
    "\"ts\":1,\"bp\":\"e\"},\n"
    "  {\"ph\":\"X\",\"name\":\"host\",\"pid\":701,\"tid\":-2231402715538937371,\"ts\":5,"
    "\"dur\":1,\"args\":{\"correlation_id\":42}},\n"
    "  17, \"junk\",\n"
    "  {\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemmA\",\"pid\":1,\"tid\":7,\"ts\":3}\n"
    " ],\"displayTimeUnit\":\"ns\"}\n";

static struct ctrace *load(const char *text, size_t len, int expect_rc)
{
    struct ctrace *ct = NULL;
    struct xp_err err = {0};
    int rc = ctrace_load_mem("test.json", text, len, &ct, &err);

    assert_int_equal(rc, expect_rc);
    if (rc != 0) {
        assert_null(ct);
        assert_true(strlen(err.msg) > 0);
    }
    return ct;
}

static void check_doc(struct ctrace *ct)
{
    const struct ctrace_event *k, *f, *h;
    cJSON *args, *top;
    size_t len;

    assert_int_equal(ct->nevents, 7);
    assert_int_equal(ct->nskipped, 2);
    k = &ct->events[3];
    assert_int_equal(k->ph, 'X');
    assert_string_equal(ctrace_str(ct, k->name), "gemmA"); /* \u0041 decoded */
    assert_int_equal(k->name, ct->events[6].name);         /* interned once */
    assert_string_equal(ctrace_str(ct, k->cat), "kernel");
    assert_true(k->ts == 6727331766395.345); /* as Python's float() */
    assert_true(k->dur == 2.5);
    assert_int_equal(k->pid, 1);
    assert_int_equal(k->tid, 7);
    assert_int_equal(k->correlation, 42);
    assert_int_equal(k->external_id, 9);
    assert_true(k->flags & CT_HAS_TS);
    assert_true(k->flags & CT_HAS_DUR);
    assert_string_equal(ctrace_event_process_name(ct, k), "/device:GPU:0");
    assert_string_equal(ctrace_event_thread_name(ct, k), "Stream #7");
    assert_int_equal(ctrace_process_find(ct, 1, 0)->sort_index, 5);
    args = ctrace_event_args(ct, k);
    assert_non_null(args);
    assert_true(cJSON_IsObject(cJSON_GetObjectItem(args, "nested")));
    cJSON_Delete(args);
    assert_non_null(ctrace_event_args_text(ct, k, &len));
    assert_int_equal(ct->text[k->args_off], '{');

    f = &ct->events[4];
    assert_int_equal(f->id, 0x1f);
    assert_true(f->flags & CT_TID_STR);
    assert_true(f->flags & CT_BIND_ENCLOSING);
    assert_string_equal(ctrace_str(ct, (uint32_t)f->tid), "t1");
    assert_false(f->flags & CT_HAS_DUR);

    h = &ct->events[5];
    assert_int_equal(h->tid, -2231402715538937371LL); /* exact 64-bit ids */
    assert_int_equal(h->correlation, 42);             /* correlation_id (JAX) */
    assert_false(ct->events[6].flags & CT_HAS_DUR);
    assert_int_equal(ct->events[6].args_len, 0);
    assert_null(ctrace_event_args(ct, &ct->events[6]));

    top = ctrace_top_value(ct, "deviceProperties");
    assert_true(cJSON_IsArray(top));
    cJSON_Delete(top);
    top = ctrace_top_value(ct, "displayTimeUnit");
    assert_string_equal(top->valuestring, "ns");
    cJSON_Delete(top);
    assert_null(ctrace_top_value(ct, "absent"));
    assert_int_equal(ctrace_str_find(ct, "no such"), 0);
}

static void test_fields(void **state)
{
    struct ctrace *ct = load(doc, sizeof(doc) - 1, 0);

    (void)state;
    check_doc(ct);
    ctrace_free(ct);
}

static void test_gzip_and_file(void **state)
{
    char path[] = "/tmp/test_ctrace_XXXXXX";
    uLongf zlen = compressBound(sizeof(doc)) + 64;
    unsigned char *z = malloc(zlen);
    struct ctrace *ct;
    struct xp_err err = {0};
    z_stream zs;
    int fd;

    (void)state;
    memset(&zs, 0, sizeof(zs));
    assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    zs.next_in = (unsigned char *)doc;
    zs.avail_in = sizeof(doc) - 1;
    zs.next_out = z;
    zs.avail_out = (uInt)zlen;
    assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
    zlen = zs.total_out;
    deflateEnd(&zs);
    ct = load((const char *)z, zlen, 0);
    check_doc(ct);
    ctrace_free(ct);
    /* A truncated gzip stream is an error. */
    load((const char *)z, zlen / 2, -EIO);

    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, z, zlen), (ssize_t)zlen);
    close(fd);
    assert_int_equal(ctrace_load(path, &ct, &err), 0);
    check_doc(ct);
    ctrace_free(ct);
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_int_equal(write(fd, doc, sizeof(doc) - 1), (ssize_t)(sizeof(doc) - 1));
    close(fd);
    assert_int_equal(ctrace_load(path, &ct, &err), 0);
    /* The text is a copy: the file cut to nothing under a loaded trace (a
     * mapping of it would die of SIGBUS here) changes nothing. */
    assert_int_equal(truncate(path, 0), 0);
    check_doc(ct);
    ctrace_free(ct);
    unlink(path);
    assert_int_equal(ctrace_load(path, &ct, &err), -ENOENT);
    free(z);
}

static void test_bare_array(void **state)
{
    const char *s = "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2}]";
    struct ctrace *ct = load(s, strlen(s), 0);

    (void)state;
    assert_int_equal(ct->bare_array, 1);
    assert_int_equal(ct->nevents, 1);
    assert_null(ctrace_top_value(ct, "traceEvents"));
    ctrace_free(ct);
}

static void test_hostile(void **state)
{
    static const char *const bad[] = {
        "",
        "   ",
        "nul",
        "{\"traceEvents\":[{\"ph\":\"X\"",
        "{\"traceEvents\":[{\"ph\":\"X\"}",
        "{\"traceEvents\":[{\"ph\":\"X\",}]}",
        "{\"traceEvents\":[{\"ph\" \"X\"}]}",
        "{\"traceEvents\":[{\"name\":\"a\\q\"}]}",
        "{\"traceEvents\":[{\"name\":\"a\\u12\"}]}",
        "{\"traceEvents\":[{\"ts\":1.}]}",
        "{\"traceEvents\":[{\"ts\":-}]}",
        "{\"traceEvents\":[{\"ts\":01x}]}",
        "{\"traceEvents\":{}}",
        "{\"traceEvents\":[]} trailing",
        "{\"a\":[1,2}",
        "{\"traceEvents\":[{\"name\":\"a\nb\"}]}",
        "\x1f\x8bnot gzip at all",
    };
    char *deep;
    size_t i, n = 5000;
    struct ctrace *ct;

    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        load(bad[i], strlen(bad[i]), -EIO);
    /* Nesting far deeper than the limit: an error, not a stack overflow. */
    deep = malloc(2 * n + 64);
    strcpy(deep, "{\"traceEvents\":[{\"args\":");
    for (i = 0; i < n; i++)
        strcat(deep, "[");
    for (i = 0; i < n; i++)
        strcat(deep, "]");
    strcat(deep, "}]}");
    load(deep, strlen(deep), -EIO);
    free(deep);
    /* Sort indices past int64 read as its nearest end, fractions cut. */
    {
        static const char huge[] =
            "{\"traceEvents\":["
            "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":1,"
            "\"args\":{\"sort_index\":1e300}},"
            "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":2,"
            "\"args\":{\"sort_index\":-1e19}},"
            "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":3,"
            "\"args\":{\"sort_index\":-7.9}},"
            "{\"ph\":\"X\",\"name\":\"k\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}]}";
        ct = load(huge, strlen(huge), 0);
        assert_true(ctrace_process_find(ct, 1, 0)->sort_index == INT64_MAX);
        assert_true(ctrace_process_find(ct, 2, 0)->sort_index == INT64_MIN);
        assert_int_equal(ctrace_process_find(ct, 3, 0)->sort_index, -7);
        ctrace_free(ct);
    }
    /* Empty containers, literals and odd but valid shapes load. */
    ct = load("{\"traceEvents\":[{},{\"args\":{}},{\"pid\":true,\"ts\":\"x\",\"name\":5}],"
              "\"x\":[null,false,NaN,-Infinity,1e5]}",
              98, 0);
    assert_int_equal(ct->nevents, 3);
    assert_int_equal(ct->events[2].pid, CT_NONE);
    assert_false(ct->events[2].flags & CT_HAS_TS);
    assert_int_equal(ct->events[2].name, 0);
    ctrace_free(ct);
}

/* Random byte flips of a valid document: any result, but no crash and a
 * consistent answer. */
static void test_mutations(void **state)
{
    char buf[sizeof(doc)];
    unsigned seed = 7;
    int round;

    (void)state;
    for (round = 0; round < 3000; round++) {
        struct ctrace *ct = NULL;
        struct xp_err err = {0};
        int flips = 1 + rand_r(&seed) % 4, k, rc;
        size_t len = sizeof(doc) - 1;
        memcpy(buf, doc, sizeof(doc));
        for (k = 0; k < flips; k++)
            buf[rand_r(&seed) % len] = (char)(rand_r(&seed) % 256);
        if (rand_r(&seed) % 4 == 0)
            len = (size_t)rand_r(&seed) % len;
        rc = ctrace_load_mem("m.json", buf, len, &ct, &err);
        assert_true(rc == 0 || rc == -EIO);
        assert_true((rc == 0) == (ct != NULL));
        ctrace_free(ct);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fields),     cmocka_unit_test(test_gzip_and_file),
        cmocka_unit_test(test_bare_array), cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
