/*
 * ctrace_int.h - what the pieces of the Chrome-trace reader share (internal
 * to ctrace*.c; the public API is ctrace.h).
 *
 * ctrace.c         reading the file (plain, copied, or inflated from gzip),
 *                  the snapshot intermediate, the args and top-level values
 * ctrace_scan.c    the validating JSON scanner and the token readers
 * ctrace_strtab.c  interned strings and their accessors
 * ctrace_events.c  the document walk and the event table
 * ctrace_meta.c    process and thread metadata (names, sort indices)
 */
#ifndef XPROFS_CTRACE_INT_H
#define XPROFS_CTRACE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/arena.h"
#include "ctrace.h"
#include "base/err.h"
#include "base/intern.h"

#define CT_MAX_DEPTH 1000 /* deepest nesting accepted */

/* The scanner's state. */
struct scan {
    const char *s;    /* text */
    size_t n;         /* its length */
    size_t i;         /* position */
    const char *path; /* for messages */
    struct xp_err *err;
};

/* --- the scanner (ctrace_scan.c) ------------------------------------------- */

/* Set err to a syntax error at sc->i; returns -EIO. */
int ctr_bad(struct scan *sc, const char *what);

/* Move sc->i past whitespace. */
static inline void ctr_skip_ws(struct scan *sc)
{
    while (sc->i < sc->n) {
        char c = sc->s[sc->i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        sc->i++;
    }
}

/* Skip a string token at sc->i (on the quote). *escaped = 1 if it holds
 * backslash escapes. On return sc->i is past the closing quote. */
int ctr_skip_string(struct scan *sc, int *escaped);

/* Skip and validate any JSON value at sc->i (after whitespace). */
int ctr_json_skip(struct scan *sc);

/* Walking an object already validated by ctr_json_skip: the next member's
 * key token is s[*ka..*kb) (*escaped as in ctr_skip_string), and sc->i is
 * left on its value. Returns 1, 0 at the closing brace, or -EIO. */
int ctr_next_key(struct scan *sc, size_t *ka, size_t *kb, int *escaped);

/* 1 if the key token s[a..b) (quotes included) is k. */
static inline int ctr_key_is(const struct scan *sc, size_t a, size_t b, const char *k)
{
    size_t n = strlen(k);
    return b - a == n + 2 && memcmp(sc->s + a + 1, k, n) == 0;
}

/* The token s[a..b) as a double (Python's float of a JSON number). */
int ctr_token_double(const struct scan *sc, size_t a, size_t b, double *v);

/* 1 if the number token s[a..b) is a JSON integer (no '.', 'e' or 'E'):
 * Python's json module reads it as an int, not a float. */
static inline int ctr_token_is_integer(const struct scan *sc, size_t a, size_t b)
{
    for (; a < b; a++) {
        if (sc->s[a] == '.' || sc->s[a] == 'e' || sc->s[a] == 'E')
            return 0;
    }
    return 1;
}

/* The token s[a..b) as an integer: JSON integers, integral doubles, and
 * strings holding a decimal or 0x-hex integer. 1 if it is one. */
int ctr_token_int(const struct scan *sc, size_t a, size_t b, int64_t *v);

/* --- interned strings (ctrace_strtab.c) ------------------------------------- */

/* Intern s[0..n) into the trace's table (base/intern.h); *id = its id, 0
 * for "" (an empty name is no name here). Returns 0, -EIO or -ENOMEM. */
int ctr_strtab_add(struct intern *t, const char *s, size_t n, uint32_t *id);

/* --- the document (ctrace_events.c) ------------------------------------------ */

/* Walk ct->text: the event table and the top-level object's offset. Returns
 * 0 or a negative errno with err naming the file and offset. */
int ctr_read_document(struct ctrace *ct, struct xp_err *err);

/* --- metadata (ctrace_meta.c) ------------------------------------------------- */

/* The process and thread tables from the "M" events. Returns 0 or -ENOMEM. */
int ctr_build_metadata(struct ctrace *ct);

#endif
