/*
 * hexval.h - the value of a hexadecimal digit, for the parsers of
 * percent-escapes (query strings) and \u escapes (JSON text).
 */
#ifndef XPROFS_HEXVAL_H
#define XPROFS_HEXVAL_H

/* 0-15 for 0-9, a-f, A-F; -1 for any other character. */
static inline int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

#endif
