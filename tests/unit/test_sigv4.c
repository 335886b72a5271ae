/*
 * test_sigv4.c - SigV4 signing against AWS's published test suite
 * (aws-sig-v4-test-suite: get-vanilla, get-vanilla-query-order-key-case,
 * get-utf8, get-vanilla-with-session-token, post-vanilla), and the
 * percent-encoding the canonical request uses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "remote/sigv4.h"

static const struct sigv4_key suite_key = {"AKIDEXAMPLE",
                                           "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "us-east-1",
                                           "service", "20150830T123600Z"};

static const struct sigv4_pair vanilla_headers[] = {
    {"Host", "example.amazonaws.com"},
    {"X-Amz-Date", "20150830T123600Z"},
};

#define SCOPE "AKIDEXAMPLE/20150830/us-east-1/service/aws4_request"

static void test_get_vanilla(void **state)
{
    struct sigv4_request req = {"GET", "/", NULL, 0, vanilla_headers, 2, SIGV4_EMPTY_SHA256};
    struct sigv4_result r;

    (void)state;
    assert_int_equal(sigv4_sign(&req, &suite_key, &r), 0);
    /* get-vanilla.creq */
    assert_string_equal(r.canonical_request, "GET\n"
                                             "/\n"
                                             "\n"
                                             "host:example.amazonaws.com\n"
                                             "x-amz-date:20150830T123600Z\n"
                                             "\n"
                                             "host;x-amz-date\n"
                                             "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495"
                                             "991b7852b855");
    /* get-vanilla.sts */
    assert_string_equal(r.string_to_sign,
                        "AWS4-HMAC-SHA256\n"
                        "20150830T123600Z\n"
                        "20150830/us-east-1/service/aws4_request\n"
                        "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63");
    /* get-vanilla.authz */
    assert_string_equal(r.signature,
                        "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
    assert_string_equal(
        r.authorization,
        "AWS4-HMAC-SHA256 Credential=" SCOPE ", SignedHeaders=host;x-amz-date, "
        "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
    sigv4_result_free(&r);
}

static void test_query_order_key_case(void **state)
{
    static const struct sigv4_pair q[] = {{"Param2", "value2"}, {"Param1", "value1"}};
    struct sigv4_request req = {"GET", "/", q, 2, vanilla_headers, 2, SIGV4_EMPTY_SHA256};
    struct sigv4_result r;

    (void)state;
    assert_int_equal(sigv4_sign(&req, &suite_key, &r), 0);
    assert_non_null(strstr(r.canonical_request, "\n/\nParam1=value1&Param2=value2\n"));
    assert_string_equal(r.signature,
                        "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
    sigv4_result_free(&r);
}

static void test_get_utf8(void **state)
{
    struct sigv4_request req = {"GET", "/\xe1\x88\xb4",   NULL, 0, vanilla_headers,
                                2,     SIGV4_EMPTY_SHA256};
    struct sigv4_result r;

    (void)state;
    assert_int_equal(sigv4_sign(&req, &suite_key, &r), 0);
    assert_non_null(strstr(r.canonical_request, "GET\n/%E1%88%B4\n"));
    assert_string_equal(r.signature,
                        "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85");
    sigv4_result_free(&r);
}

static void test_session_token(void **state)
{
    static const struct sigv4_pair h[] = {
        {"Host", "example.amazonaws.com"},
        {"X-Amz-Date", "20150830T123600Z"},
        {"X-Amz-Security-Token",
         "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267"},
    };
    struct sigv4_request req = {"GET", "/", NULL, 0, h, 3, SIGV4_EMPTY_SHA256};
    struct sigv4_result r;

    (void)state;
    assert_int_equal(sigv4_sign(&req, &suite_key, &r), 0);
    assert_string_equal(r.signed_headers, "host;x-amz-date;x-amz-security-token");
    assert_string_equal(r.signature,
                        "07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8");
    sigv4_result_free(&r);
}

static void test_post_vanilla(void **state)
{
    /* Header order and case do not matter; runs of spaces in a value are one. */
    static const struct sigv4_pair h[] = {
        {"x-amz-date", "20150830T123600Z"},
        {"HOST", "  example.amazonaws.com "},
    };
    struct sigv4_request req = {"POST", "/", NULL, 0, h, 2, SIGV4_EMPTY_SHA256};
    struct sigv4_result r;

    (void)state;
    assert_int_equal(sigv4_sign(&req, &suite_key, &r), 0);
    assert_string_equal(r.signature,
                        "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b");
    sigv4_result_free(&r);
}

static void test_wrong_secret_differs(void **state)
{
    struct sigv4_key k = suite_key;
    struct sigv4_request req = {"GET", "/", NULL, 0, vanilla_headers, 2, SIGV4_EMPTY_SHA256};
    struct sigv4_result r;

    (void)state;
    k.secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEZ";
    assert_int_equal(sigv4_sign(&req, &k, &r), 0);
    assert_string_not_equal(r.signature,
                            "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
    sigv4_result_free(&r);
}

static void test_bad_input(void **state)
{
    struct sigv4_key k = suite_key;
    struct sigv4_request req = {"GET", "/", NULL, 0, vanilla_headers, 2, SIGV4_EMPTY_SHA256};
    struct sigv4_result r;

    (void)state;
    k.amz_date = "2015-08-30";
    assert_int_equal(sigv4_sign(&req, &k, &r), -EINVAL);
    k = suite_key;
    k.secret = NULL;
    assert_int_equal(sigv4_sign(&req, &k, &r), -EINVAL);
}

static void test_uri_encode(void **state)
{
    char *s;

    (void)state;
    s = sigv4_uri_encode("a b/c~d_e.f-g+h=%", 1);
    assert_string_equal(s, "a%20b/c~d_e.f-g%2Bh%3D%25");
    free(s);
    s = sigv4_uri_encode("logs/run 1/", 0);
    assert_string_equal(s, "logs%2Frun%201%2F");
    free(s);
}

static void test_sha256(void **state)
{
    char hex[65];

    (void)state;
    sigv4_sha256_hex("", 0, hex);
    assert_string_equal(hex, SIGV4_EMPTY_SHA256);
    sigv4_sha256_hex("abc", 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get_vanilla),  cmocka_unit_test(test_query_order_key_case),
        cmocka_unit_test(test_get_utf8),     cmocka_unit_test(test_session_token),
        cmocka_unit_test(test_post_vanilla), cmocka_unit_test(test_wrong_secret_differs),
        cmocka_unit_test(test_bad_input),    cmocka_unit_test(test_uri_encode),
        cmocka_unit_test(test_sha256),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
