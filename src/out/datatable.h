/*
 * datatable.h - XProf's DataTable (Google Charts style) and its CSV export.
 *
 * A table is built in memory (columns, `p` properties, rows of cells) and
 * written as XProf writes it: the JSON of data_table_utils.cc as nlohmann's
 * dump() prints it (compact, keys sorted, doubles in shortest round-trip
 * form with ".0" on integral values, NaN/inf as null), or the CSV of
 * plugin/xprof/convert/csv_writer.py (labels as header, every field quoted,
 * numbers as Python's repr, booleans True/False, "\n" line ends).
 *
 * Errors are sticky: after an allocation failure every call is a no-op and
 * dt_failed() says so; the writers then write nothing.
 */
#ifndef XPROFS_DATATABLE_H
#define XPROFS_DATATABLE_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "out.h"

enum dt_kind {
    DT_NULL, /* no value: JSON "" (XProf's null cell), CSV "" */
    DT_NUM,  /* double */
    DT_STR,  /* text */
    DT_BOOL, /* boolean */
};

struct dt_cell {
    enum dt_kind kind; /* which value */
    double num;        /* DT_NUM */
    const char *str;   /* DT_STR (arena copy) */
    size_t len;        /* its length */
    int b;             /* DT_BOOL */
    const char *f;     /* formatted value ("f", arena copy), or NULL */
};

struct dt_col {
    const char *id;    /* column id */
    const char *type;  /* "string", "number", "boolean" */
    const char *label; /* label */
    const char *role;  /* p.role ("tooltip", "interval") or NULL */
};

struct dt_prop {
    const char *key;   /* property name */
    const char *value; /* its text */
};

struct dt_table {
    struct arena arena;    /* strings */
    struct dt_col *cols;   /* columns */
    uint32_t ncols;        /* entries in cols */
    struct dt_prop *props; /* custom properties (any order; sorted when written) */
    uint32_t nprops;       /* entries in props */
    struct dt_cell *cells; /* all cells, row after row */
    size_t ncells;         /* entries in cells */
    size_t *row_start;     /* first cell of each row */
    size_t nrows;          /* rows */
    size_t cells_cap;      /* allocated cells */
    size_t rows_cap;       /* allocated rows */
    uint32_t cols_cap;     /* allocated columns */
    uint32_t props_cap;    /* allocated properties */
    int oom;               /* sticky: an allocation failed */
};

void dt_init(struct dt_table *t);
void dt_free(struct dt_table *t);
int dt_failed(const struct dt_table *t);

/* Add a column (strings must outlive the table: use literals). */
void dt_col(struct dt_table *t, const char *id, const char *type, const char *label);
void dt_col_role(struct dt_table *t, const char *id, const char *type, const char *label,
                 const char *role);
/* A column whose id and label are copied (dynamic names). */
void dt_col_copy(struct dt_table *t, const char *id, const char *type, const char *label);

/* Set property key (copied) to value (copied); a later set replaces. */
void dt_prop(struct dt_table *t, const char *key, const char *value);
void dt_propf(struct dt_table *t, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Start a row, then append its cells in column order. */
void dt_row(struct dt_table *t);
void dt_num(struct dt_table *t, double v);
/* A number with its formatted text (XProf's AddFormattedNumberCell: "f"). */
void dt_num_fmt(struct dt_table *t, double v, const char *formatted);
void dt_str(struct dt_table *t, const char *s);
void dt_strn(struct dt_table *t, const char *s, size_t n);
void dt_bool(struct dt_table *t, int b);

/* Writers. */
void dt_write_json(const struct dt_table *t, struct out *o);
/* The JSON list of tables t[0..n) ("[t0,t1,...]"), as XProf's multi-table tools answer. */
void dt_write_json_list(const struct dt_table *t, int n, struct out *o);
void dt_write_csv(const struct dt_table *t, struct out *o);

/* Number and string forms, exposed for other writers and tests. buf holds
 * at least 32 bytes. */
char *dt_fmt_json_double(double v, char *buf);               /* nlohmann: 40.0, 1e-05, 1e+16 */
char *dt_fmt_py_float(double v, char *buf);                  /* Python repr: 40.0, 1e-05, 1e+16 */
void dt_json_string(struct out *o, const char *s, size_t n); /* nlohmann escaping */

#endif
