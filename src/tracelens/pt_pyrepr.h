/*
 * pt_pyrepr.h - Python's text for values from a PyTorch trace, as pandas'
 * to_csv writes the cells of TraceLens's DataFrames: repr() of floats,
 * strings, and of JSON args turned into Python objects (json.loads, with
 * TraceLens's list_to_tuple applied outside dicts), and round(x, 2).
 */
#ifndef XPROFS_PT_PYREPR_H
#define XPROFS_PT_PYREPR_H

#include <stddef.h>

/* A growing text buffer (the cells are made whole, then CSV-quoted). */
struct pt_buf {
    char *p;    /* text, not NUL-terminated */
    size_t n;   /* its length */
    size_t cap; /* allocated */
    int oom;    /* 1 once an append failed (the text is then incomplete) */
};

void pt_buf_write(struct pt_buf *b, const char *s, size_t n);
void pt_buf_puts(struct pt_buf *b, const char *s);
void pt_buf_putc(struct pt_buf *b, char c);
void pt_buf_free(struct pt_buf *b);

/* repr(v): the shortest digits that read back as v (up to 17), laid out as
 * Python does ("0.5", "100.0", "1e-05", "1.5e+16"). */
void pt_float_repr(double v, char *buf, size_t n);

/* Python's round(v, 2). */
double pt_round2(double v);

/* round(v, 2) of a numpy float64 (numpy's own: rint(v * 100) / 100, which
 * can differ from Python's in the last place: 6.605 -> 6.6, not 6.61). */
double pt_np_round2(double v);

/* repr() of the UTF-8 string s[0..n) (quotes, escapes). */
void pt_str_repr(struct pt_buf *b, const char *s, size_t n);

/* Python's repr of the JSON value text[0..len) as json.loads reads it; with
 * tuples, lists become tuples except inside dicts ("(1, 2)", "(5,)", "()").
 * Returns 0, or -EINVAL when the text is not one JSON value (nothing, or
 * part of it, is written then). */
int pt_json_repr(struct pt_buf *b, const char *text, size_t len, int tuples);

/* The value of the member key of the JSON object text[0..len): 1 and its
 * text span in *val, *vlen; 0 if absent or the text is not an object. */
int pt_json_member(const char *text, size_t len, const char *key, const char **val, size_t *vlen);

/* The contents of a JSON string value (text starts at its quote), decoded
 * to UTF-8 into buf (n bytes, NUL-terminated, cut if longer); 1 if it was a
 * string, else 0. */
int pt_json_string(const char *text, size_t len, char *buf, size_t n);

#endif
