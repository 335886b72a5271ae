/*
 * test_s3_conf.c - the S3 client's configuration (src/remote/s3_conf.c)
 * and the request URLs it gives (s3_url): s3_style path or virtual, the
 * default as AWS's (virtual-host-style for amazonaws.com, path-style for
 * any other endpoint), refused styles, endpoints and bucket names, and the
 * region from the environment or the profile's ~/.aws/config.
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
#include <sys/stat.h>
#include <unistd.h>

#include "remote/s3.h"

static char home[64];

/* A fresh HOME without ~/.aws, and no AWS_* variable set. */
static int setup(void **state)
{
    static const char *const vars[] = {"AWS_ACCESS_KEY_ID",  "AWS_SECRET_ACCESS_KEY",
                                       "AWS_SESSION_TOKEN",  "AWS_REGION",
                                       "AWS_DEFAULT_REGION", "AWS_PROFILE",
                                       "AWS_CONFIG_FILE",    "AWS_SHARED_CREDENTIALS_FILE"};
    size_t i;

    (void)state;
    snprintf(home, sizeof(home), "/tmp/xprofs-s3conf-XXXXXX");
    if (mkdtemp(home) == NULL)
        return -1;
    setenv("HOME", home, 1);
    for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        unsetenv(vars[i]);
    return 0;
}

static int teardown(void **state)
{
    char cmd[128];

    (void)state;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", home);
    return system(cmd) == 0 ? 0 : -1;
}

/* The URL and Host of key under c. */
static void url_of(const struct s3_conf *c, const char *key, char *url, char *host)
{
    char path[256];

    assert_int_equal(s3_url(c, key, url, 512, host, 256, path, sizeof(path)), 0);
}

static void test_custom_endpoint_is_path_style(void **state)
{
    struct s3_conf c;
    struct xp_err err = {0};
    char url[512], host[256];

    (void)state;
    assert_int_equal(s3_conf_init(&c, "logs", "http://127.0.0.1:9000/", NULL, &err), 0);
    assert_true(c.path_style);
    assert_string_equal(c.endpoint, "http://127.0.0.1:9000");
    assert_int_equal(c.timeout_s, 60);
    url_of(&c, "run 1/a+b.xplane.pb", url, host);
    assert_string_equal(url, "http://127.0.0.1:9000/logs/run%201/a%2Bb.xplane.pb");
    assert_string_equal(host, "127.0.0.1:9000");
    url_of(&c, NULL, url, host);
    assert_string_equal(url, "http://127.0.0.1:9000/logs/");
    s3_conf_free(&c);
}

static void test_virtual_style(void **state)
{
    struct s3_conf c;
    struct xp_err err = {0};
    char url[512], host[256];

    (void)state;
    assert_int_equal(s3_conf_init(&c, "logs", "http://localhost:9000", "virtual", &err), 0);
    assert_false(c.path_style);
    url_of(&c, "p/x.pt.trace.json", url, host);
    assert_string_equal(url, "http://logs.localhost:9000/p/x.pt.trace.json");
    assert_string_equal(host, "logs.localhost:9000");
    url_of(&c, NULL, url, host);
    assert_string_equal(url, "http://logs.localhost:9000/");
    s3_conf_free(&c);
}

static void test_aws_defaults_to_virtual(void **state)
{
    struct s3_conf c;
    struct xp_err err = {0};
    char url[512], host[256];

    (void)state;
    /* No endpoint: AWS's regional one, virtual-host-style. */
    setenv("AWS_REGION", "eu-west-3", 1);
    assert_int_equal(s3_conf_init(&c, "team-logs", NULL, NULL, &err), 0);
    assert_false(c.path_style);
    assert_string_equal(c.region, "eu-west-3");
    url_of(&c, "k", url, host);
    assert_string_equal(url, "https://team-logs.s3.eu-west-3.amazonaws.com/k");
    s3_conf_free(&c);
    /* An amazonaws.com endpoint given: still virtual; path when told. */
    assert_int_equal(
        s3_conf_init(&c, "team-logs", "https://s3.us-west-2.amazonaws.com", NULL, &err), 0);
    assert_false(c.path_style);
    s3_conf_free(&c);
    assert_int_equal(
        s3_conf_init(&c, "team-logs", "https://s3.us-west-2.amazonaws.com", "path", &err), 0);
    assert_true(c.path_style);
    url_of(&c, "k", url, host);
    assert_string_equal(url, "https://s3.us-west-2.amazonaws.com/team-logs/k");
    s3_conf_free(&c);
    assert_int_equal(s3_conf_init(&c, "team-logs", NULL, "path", &err), 0);
    assert_true(c.path_style);
    s3_conf_free(&c);
    /* A host that only ends in the letters is not AWS's. */
    assert_int_equal(s3_conf_init(&c, "team-logs", "http://notamazonaws.com", NULL, &err), 0);
    assert_true(c.path_style);
    s3_conf_free(&c);
}

static void test_refused(void **state)
{
    struct s3_conf c;
    struct xp_err err = {0};

    (void)state;
    assert_int_equal(s3_conf_init(&c, "logs", NULL, "vhost", &err), -EINVAL);
    assert_non_null(strstr(err.msg, "s3_style=vhost"));
    assert_int_equal(s3_conf_init(&c, "logs", "ftp://x", NULL, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "endpoint=ftp://x"));
    assert_int_equal(s3_conf_init(&c, "Logs_UPPER", NULL, NULL, &err), -EINVAL);
    assert_int_equal(s3_conf_init(&c, "a", NULL, NULL, &err), -EINVAL);
}

static void test_region_from_the_profile(void **state)
{
    struct s3_conf c;
    struct xp_err err = {0};
    char path[128];
    FILE *f;

    (void)state;
    snprintf(path, sizeof(path), "%s/.aws", home);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/.aws/config", home);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("[default]\nregion = ap-south-1\n\n[profile team]\nregion = sa-east-1\n"
          "aws_access_key_id = NOT-FROM-CONFIG\n",
          f);
    fclose(f);
    assert_int_equal(s3_conf_init(&c, "logs", NULL, NULL, &err), 0);
    assert_string_equal(c.region, "ap-south-1");
    s3_conf_free(&c);
    setenv("AWS_PROFILE", "team", 1);
    assert_int_equal(s3_conf_init(&c, "logs", NULL, NULL, &err), 0);
    assert_string_equal(c.region, "sa-east-1");
    assert_null(c.access_key); /* keys come from the credentials file only */
    s3_conf_free(&c);
    /* The environment wins. */
    setenv("AWS_REGION", "us-west-1", 1);
    assert_int_equal(s3_conf_init(&c, "logs", NULL, NULL, &err), 0);
    assert_string_equal(c.region, "us-west-1");
    s3_conf_free(&c);
    /* Nothing anywhere: us-east-1. */
    unsetenv("AWS_REGION");
    unsetenv("AWS_PROFILE");
    unlink(path);
    assert_int_equal(s3_conf_init(&c, "logs", NULL, NULL, &err), 0);
    assert_string_equal(c.region, "us-east-1");
    s3_conf_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_custom_endpoint_is_path_style, setup, teardown),
        cmocka_unit_test_setup_teardown(test_virtual_style, setup, teardown),
        cmocka_unit_test_setup_teardown(test_aws_defaults_to_virtual, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_region_from_the_profile, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
