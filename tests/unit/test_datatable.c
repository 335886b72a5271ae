/*
 * test_datatable.c - DataTable JSON and CSV as XProf writes them: number
 * forms (nlohmann for JSON, Python repr for CSV), string escaping, NaN and
 * infinities, empty tables, sorted properties, column roles, CSV quoting.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out/datatable.h"
#include "base/shortest.h"

/* The bytes written by a writer, NUL-terminated (malloc'd). */
static char *collect(struct out *o)
{
    struct blob *b;
    char *s;

    assert_int_equal(out_finish(o, &b), 0);
    s = malloc(b->size + 1);
    assert_non_null(s);
    blob_read(b, 0, s, b->size);
    s[b->size] = '\0';
    blob_unref(b);
    return s;
}

static void check_json_num(double v, const char *want)
{
    char buf[40];

    assert_string_equal(dt_fmt_json_double(v, buf), want);
}

static void check_py_num(double v, const char *want)
{
    char buf[40];

    assert_string_equal(dt_fmt_py_float(v, buf), want);
}

static void test_json_numbers(void **state)
{
    (void)state;
    check_json_num(40.0, "40.0");
    check_json_num(1.0, "1.0");
    check_json_num(0.0, "0.0");
    check_json_num(-0.0, "-0.0");
    check_json_num(0.1565642841733356, "0.1565642841733356");
    check_json_num(271.40292854999996, "271.40292854999996");
    check_json_num(7373065.893621853, "7373065.893621853");
    check_json_num(1.8075825029947709e-06, "1.8075825029947709e-06");
    check_json_num(0.0001, "0.0001");
    check_json_num(0.00001, "1e-05");
    check_json_num(1e15, "1e+15");
    check_json_num(123456789012345.0, "123456789012345.0");
    check_json_num(1e16, "1e+16");
    check_json_num(-2.5, "-2.5");
    check_json_num(1950.96, "1950.96");
    check_json_num(NAN, "null");
    check_json_num(INFINITY, "null");
    check_json_num(-INFINITY, "null");
}

static void test_py_numbers(void **state)
{
    (void)state;
    check_py_num(40.0, "40.0");
    check_py_num(1e15, "1000000000000000.0");
    check_py_num(1e16, "1e+16");
    check_py_num(0.00001, "1e-05");
    check_py_num(0.0001, "0.0001");
    check_py_num(123456789012345678.0, "1.2345678901234568e+17");
    check_py_num(-0.0, "-0.0");
    check_py_num(1.8075825029947709e-06, "1.8075825029947709e-06");
}

/* Significant digits of a number as text: the digits before any exponent,
 * without sign, dot, leading and trailing zeros. */
static void significant_digits(const char *s, char *out)
{
    size_t k = 0, start = 0;

    for (; *s != '\0' && *s != 'e'; s++)
        if (*s >= '0' && *s <= '9')
            out[k++] = *s;
    while (k > 0 && out[k - 1] == '0')
        k--;
    while (start < k && out[start] == '0')
        start++;
    memmove(out, out + start, k - start);
    out[k - start] = '\0';
}

/* The shortest digits that read back as v, by the definition: the first p
 * of 1, 2, ... 17 whose correctly rounded p-digit decimal reads back. */
static void shortest_by_definition(double v, char *digits)
{
    char buf[40];
    int p;

    for (p = 1; p < 17; p++) {
        snprintf(buf, sizeof(buf), "%.*e", p - 1, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    snprintf(buf, sizeof(buf), "%.*e", p - 1, v);
    significant_digits(buf, digits);
}

/* Random doubles of three kinds (any finite bit pattern, short decimals,
 * products of the kind a tool computes): each formatted number reads back
 * as itself with the digits of the definition. */
static void test_numbers_shortest(void **state)
{
    char text[40], got[40], want[40];
    uint64_t x = 88172645463325252ull;
    int i;

    (void)state;
    for (i = 0; i < 100000; i++) {
        double v;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if (i % 3 == 0) {
            memcpy(&v, &x, sizeof(v));
            if (!isfinite(v) || v == 0)
                continue;
        } else if (i % 3 == 1) {
            v = (double)(int64_t)(x % 2000001) / 1000.0 - 1000.0;
        } else {
            v = (double)(x >> 11) / 9007199254740992.0 * ((double)(x % 977) + 0.5) / 3.0;
        }
        if (v == 0)
            continue;
        dt_fmt_json_double(v, text);
        assert_true(strtod(text, NULL) == v);
        significant_digits(text, got);
        shortest_by_definition(v, want);
        if (strcmp(got, want) != 0)
            fail_msg("%.17g: %s has digits %s, the definition %s", v, text, got, want);
        dt_fmt_py_float(v, text);
        assert_true(strtod(text, NULL) == v);
        significant_digits(text, got);
        assert_string_equal(got, want);
    }
}

/* shortest_digits against the search by printf at each number of digits
 * and against the definition: digits and power of ten, on any bit pattern,
 * short decimals, values whose 17 digits end in a 5 (where rounding those
 * digits could go either way), powers of ten and the ends of the range. */
static void check_shortest(double v)
{
    char got[20], want[20], def[40], text[40];
    int ge, we;

    shortest_digits(v, got, &ge);
    shortest_digits_by_search(v, want, &we);
    if (strcmp(got, want) != 0 || ge != we)
        fail_msg("%.17g: %se%d, the search %se%d", v, got, ge, want, we);
    shortest_by_definition(v, def);
    assert_string_equal(got, def);
    snprintf(text, sizeof(text), "%s%c.%se%d", v < 0 ? "-" : "", got[0], got + 1, ge);
    assert_true(strtod(text, NULL) == v);
}

static void test_shortest_digits(void **state)
{
    static const double fixed[] = {0.5,
                                   2.5,
                                   0.15,
                                   2.675,
                                   1.005,
                                   1e23,
                                   9.999999999999999e22,
                                   5e-324,
                                   2.2250738585072014e-308,
                                   1.7976931348623157e308,
                                   0.1,
                                   0.3,
                                   1.0 / 3,
                                   100,
                                   1e21,
                                   1e22,
                                   123456789012345680,
                                   9.5,
                                   99.5,
                                   0.95,
                                   0.0625,
                                   1.25,
                                   -7.75,
                                   4.35,
                                   8.41e21,
                                   5e-310,
                                   1e-7,
                                   12.5e-9,
                                   -0.0125};
    uint64_t x = 0x9e3779b97f4a7c15ull;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        check_shortest(fixed[i]);
    for (i = 0; i < 300; i++) {
        check_shortest(pow(10, (double)i - 150));
        check_shortest(nextafter(pow(10, (double)i - 150), 0));
    }
    for (i = 0; i < 200000; i++) {
        double v;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        switch (i % 4) {
        case 0: /* any finite bit pattern */
            memcpy(&v, &x, sizeof(v));
            if (!isfinite(v) || v == 0)
                continue;
            break;
        case 1: /* a short decimal ending in 5: its 17 digits end in 5 0... */
            v = ((double)(x % 100000) * 10 + 5) / pow(10, (double)(x >> 40 & 7));
            break;
        case 2: /* ps to us, as the tools divide */
            v = (double)(x % 10000000000000ull) / 1e6;
            break;
        default: /* a neighbour of a short decimal */
            v = nextafter((double)(x % 1000000) / 1000, (x >> 50 & 1) ? 0 : 1e9);
            break;
        }
        if (v != 0)
            check_shortest(v);
    }
}

static void test_strings(void **state)
{
    struct out o;
    char *s;
    const char in[] = "a\"b\\c\n\t\x01\x1f/\xce\xbc\xff!";

    (void)state;
    out_init(&o);
    dt_json_string(&o, in, sizeof(in) - 1);
    s = collect(&o);
    /* quotes and backslashes escaped, short escapes, \u00XX lowercase,
     * '/' and UTF-8 kept raw, a stray byte replaced by U+FFFD */
    assert_string_equal(s, "\"a\\\"b\\\\c\\n\\t\\u0001\\u001f/\xce\xbc\xef\xbf\xbd!\"");
    free(s);
}

static void test_empty_table(void **state)
{
    struct dt_table t;
    struct out o;
    char *s;

    (void)state;
    dt_init(&t);
    out_init(&o);
    dt_write_json(&t, &o);
    s = collect(&o);
    assert_string_equal(s, "{\"cols\":[],\"rows\":[]}");
    free(s);
    out_init(&o);
    dt_write_csv(&t, &o);
    s = collect(&o);
    assert_string_equal(s, "\n");
    free(s);
    dt_free(&t);
}

static void test_table(void **state)
{
    struct dt_table t;
    struct out o;
    char *s;

    (void)state;
    dt_init(&t);
    dt_col(&t, "n", "number", "Num");
    dt_col_role(&t, "tip", "string", "tooltip", "tooltip");
    dt_col(&t, "b", "boolean", "Flag");
    dt_prop(&t, "zeta", "last");
    dt_prop(&t, "alpha", "first");
    dt_prop(&t, "zeta", "replaced");
    dt_propf(&t, "pct", "%.1f%%", 12.345);
    dt_row(&t);
    dt_num(&t, 3.0);
    dt_str(&t, "say \"hi\", ok\nnext");
    dt_bool(&t, 1);
    dt_row(&t);
    dt_num(&t, NAN);
    dt_str(&t, "");
    dt_bool(&t, 0);
    assert_false(dt_failed(&t));
    out_init(&o);
    dt_write_json(&t, &o);
    s = collect(&o);
    assert_string_equal(
        s,
        "{\"cols\":[{\"id\":\"n\",\"label\":\"Num\",\"type\":\"number\"},"
        "{\"id\":\"tip\",\"label\":\"tooltip\",\"p\":{\"role\":\"tooltip\"},\"type\":\"string\"},"
        "{\"id\":\"b\",\"label\":\"Flag\",\"type\":\"boolean\"}],"
        "\"p\":{\"alpha\":\"first\",\"pct\":\"12.3%\",\"zeta\":\"replaced\"},"
        "\"rows\":[{\"c\":[{\"v\":3.0},{\"v\":\"say \\\"hi\\\", ok\\nnext\"},{\"v\":true}]},"
        "{\"c\":[{\"v\":null},{\"v\":\"\"},{\"v\":false}]}]}");
    free(s);
    out_init(&o);
    dt_write_csv(&t, &o);
    s = collect(&o);
    assert_string_equal(s, "\"Num\",\"tooltip\",\"Flag\"\n"
                           "\"3.0\",\"say \"\"hi\"\", ok\nnext\",\"True\"\n"
                           "\"\",\"\",\"False\"\n");
    free(s);
    dt_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_numbers),
        cmocka_unit_test(test_py_numbers),
        cmocka_unit_test(test_numbers_shortest),
        cmocka_unit_test(test_shortest_digits),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_empty_table),
        cmocka_unit_test(test_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
