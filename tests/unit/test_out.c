/*
 * test_out.c - the output writer: chunk boundaries, JSON and CSV escaping,
 * number formats, blobs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"

/* The whole blob as one NUL-terminated string. */
static char *blob_str(struct blob *b)
{
    char *s = malloc(b->size + 1);
    assert_int_equal(blob_read(b, 0, s, b->size), b->size);
    s[b->size] = '\0';
    return s;
}

static char *finish(struct out *o)
{
    struct blob *b;
    char *s;

    assert_int_equal(out_finish(o, &b), 0);
    s = blob_str(b);
    blob_unref(b);
    return s;
}

static void test_json_escape(void **state)
{
    struct out o;
    char *s;

    (void)state;
    out_init(&o);
    out_json_str(&o, "a\"b\\c\n\t\x01\x7f\xc3\xa9", 11);
    s = finish(&o);
    assert_string_equal(s, "\"a\\\"b\\\\c\\n\\t\\u0001\x7f\xc3\xa9\"");
    free(s);
}

static void test_csv_escape(void **state)
{
    struct out o;
    char *s;

    (void)state;
    out_init(&o);
    out_csv_str(&o, "plain", 5);
    out_putc(&o, ',');
    out_csv_str(&o, "a,b", 3);
    out_putc(&o, ',');
    out_csv_str(&o, "say \"hi\"", 8);
    out_putc(&o, ',');
    out_csv_str(&o, "", 0);
    s = finish(&o);
    assert_string_equal(s, "plain,\"a,b\",\"say \"\"hi\"\"\",");
    free(s);
}

static void test_numbers(void **state)
{
    struct out o;
    char *s;

    (void)state;
    out_init(&o);
    out_double17(&o, 0.1);
    out_putc(&o, ' ');
    out_double17(&o, 1234.5);
    out_putc(&o, ' ');
    out_double17(&o, NAN);
    out_putc(&o, ' ');
    out_double17(&o, -INFINITY);
    out_putc(&o, ' ');
    out_i64(&o, INT64_MIN);
    out_putc(&o, ' ');
    out_u64(&o, UINT64_MAX);
    out_putc(&o, ' ');
    out_i64(&o, 0);
    out_putc(&o, ' ');
    out_u64(&o, 0);
    out_putc(&o, ' ');
    out_i64(&o, -7);
    s = finish(&o);
    assert_string_equal(s, "0.10000000000000001 1234.5 null null -9223372036854775808 "
                           "18446744073709551615 0 0 -7");
    free(s);
}

static void test_format_i64(void **state)
{
    char buf[OUT_I64_MAX];

    (void)state;
    assert_int_equal(out_format_i64(buf, INT64_MIN), 20);
    assert_memory_equal(buf, "-9223372036854775808", 20);
    assert_int_equal(out_format_i64(buf, INT64_MAX), 19);
    assert_memory_equal(buf, "9223372036854775807", 19);
    assert_int_equal(out_format_i64(buf, 0), 1);
    assert_memory_equal(buf, "0", 1);
}

static void test_chunk_boundaries(void **state)
{
    struct out o;
    struct blob *b;
    size_t i, n = 3 * OUT_CHUNK + 17;
    char piece[7] = "abcdefg";
    char *s;

    (void)state;
    out_init(&o);
    for (i = 0; i < n / 7; i++)
        out_write(&o, piece, 7);
    out_printf(&o, "%s", "tail");
    assert_int_equal(out_finish(&o, &b), 0);
    assert_int_equal(b->size, (n / 7) * 7 + 4);
    s = blob_str(b);
    for (i = 0; i < (n / 7) * 7; i++)
        assert_int_equal(s[i], piece[i % 7]);
    assert_memory_equal(s + (n / 7) * 7, "tail", 4);
    /* Reads across chunk edges and past the end. */
    char buf[10];
    assert_int_equal(blob_read(b, OUT_CHUNK - 3, buf, 10), 10);
    assert_memory_equal(buf, s + OUT_CHUNK - 3, 10);
    assert_int_equal(blob_read(b, b->size - 2, buf, 10), 2);
    assert_int_equal(blob_read(b, b->size + 5, buf, 10), 0);
    free(s);
    blob_unref(blob_ref(b));
    blob_unref(b);
}

static void test_empty(void **state)
{
    struct out o;
    char *s;

    (void)state;
    out_init(&o);
    s = finish(&o);
    assert_string_equal(s, "");
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_escape),      cmocka_unit_test(test_csv_escape),
        cmocka_unit_test(test_numbers),          cmocka_unit_test(test_format_i64),
        cmocka_unit_test(test_chunk_boundaries), cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
