/*
 * agent_pylit.h - a command-line value read as Python Fire reads it: a
 * Python literal when it parses as one (5 -> int, 1.5 -> float, True,
 * None, 'quoted' -> str, 2025_01_01 -> int 20250101), else the text
 * itself as a string (fusion, .*, TPU:0$).
 */
#ifndef XPROFS_AGENT_PYLIT_H
#define XPROFS_AGENT_PYLIT_H

enum pyval_kind {
    PY_NONE,  /* None */
    PY_BOOL,  /* True / False: i */
    PY_INT,   /* i (clamped to 64 bits; text holds the digits) */
    PY_FLOAT, /* f */
    PY_STR,   /* text */
    PY_OTHER, /* a list, tuple or dict literal: text is its source */
};

struct pyval {
    enum pyval_kind kind;
    long long i;
    double f;
    char *text; /* malloc'd: STR's value; INT's decimal digits; OTHER's source */
};

/* Parse text as Fire does. 0, or -ENOMEM. */
int pylit_parse(const char *text, struct pyval *v);

/* A copy of v (deep). 0, or -ENOMEM. */
int pyval_copy(const struct pyval *v, struct pyval *out);

void pyval_free(struct pyval *v);

/* Python's type name of the value: "int", "str", "NoneType", ... */
const char *pyval_type(const struct pyval *v);

/* str(v) as Python prints it, malloc'd ("True", "5", "1.5", "None", the
 * string itself). NULL when out of memory. */
char *pyval_str(const struct pyval *v);

#endif
