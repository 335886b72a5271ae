/*
 * test_crc32c.c - CRC-32C (src/base/crc32c.c): the standard check value,
 * the instruction and the table agreeing on every length and alignment,
 * and a checksum continued over pieces equal to the whole one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/crc32c.h"

static void test_check_value(void **state)
{
    (void)state;
    /* the CRC-32C catalogue's check value of "123456789" */
    assert_int_equal(crc32c(0, "123456789", 9), 0xe3069283u);
    assert_int_equal(crc32c_portable(0, "123456789", 9), 0xe3069283u);
    assert_int_equal(crc32c(0, "", 0), 0);
}

static void test_fast_equals_table(void **state)
{
    unsigned char buf[4096 + 16];
    uint32_t seed = 12345;

    (void)state;
    for (size_t i = 0; i < sizeof(buf); i++) {
        seed = seed * 1103515245u + 12345u;
        buf[i] = (unsigned char)(seed >> 16);
    }
    for (size_t off = 0; off < 9; off++) {
        for (size_t n = 0; n + off <= sizeof(buf); n += n < 64 ? 1 : 509)
            assert_int_equal(crc32c(0, buf + off, n), crc32c_portable(0, buf + off, n));
    }
    /* in pieces */
    for (size_t cut = 0; cut <= 4096; cut += 373) {
        uint32_t c = crc32c(0, buf, cut);
        assert_int_equal(crc32c(c, buf + cut, 4096 - cut), crc32c(0, buf, 4096));
    }
    /* one bit flipped: another checksum */
    uint32_t whole = crc32c(0, buf, 4096);
    buf[100] ^= 1;
    assert_int_not_equal(crc32c(0, buf, 4096), whole);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_value),
        cmocka_unit_test(test_fast_equals_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
