/*
 * datatable.c - DataTable JSON and CSV writers (see datatable.h).
 */
#include "base/sort.h"
#include "datatable.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/shortest.h"

void dt_init(struct dt_table *t)
{
    memset(t, 0, sizeof(*t));
    arena_init(&t->arena);
}

void dt_free(struct dt_table *t)
{
    free(t->cols);
    free(t->props);
    free(t->cells);
    free(t->row_start);
    arena_free(&t->arena);
    memset(t, 0, sizeof(*t));
}

int dt_failed(const struct dt_table *t)
{
    return t->oom;
}

/* Grow *v (elements of size sz) to hold one more than n; 0 or -1. */
static int grow(void **v, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 16;
    void *p = realloc(*v, nc * sz);
    if (p == NULL)
        return -1;
    *v = p;
    *cap = nc;
    return 0;
}

static void add_col(struct dt_table *t, const char *id, const char *type, const char *label,
                    const char *role)
{
    size_t cap = t->cols_cap;

    if (t->oom || grow((void **)&t->cols, &cap, t->ncols, sizeof(*t->cols)) != 0) {
        t->oom = 1;
        return;
    }
    t->cols_cap = (uint32_t)cap;
    t->cols[t->ncols++] = (struct dt_col){id, type, label, role};
}

void dt_col(struct dt_table *t, const char *id, const char *type, const char *label)
{
    add_col(t, id, type, label, NULL);
}

void dt_col_role(struct dt_table *t, const char *id, const char *type, const char *label,
                 const char *role)
{
    add_col(t, id, type, label, role);
}

void dt_col_copy(struct dt_table *t, const char *id, const char *type, const char *label)
{
    const char *i = arena_strndup(&t->arena, id, strlen(id));
    const char *l = arena_strndup(&t->arena, label, strlen(label));

    if (i == NULL || l == NULL) {
        t->oom = 1;
        return;
    }
    add_col(t, i, type, l, NULL);
}

void dt_prop(struct dt_table *t, const char *key, const char *value)
{
    const char *v;
    uint32_t i;
    size_t cap = t->props_cap;

    if (t->oom)
        return;
    v = arena_strndup(&t->arena, value, strlen(value));
    if (v == NULL) {
        t->oom = 1;
        return;
    }
    for (i = 0; i < t->nprops; i++) {
        if (strcmp(t->props[i].key, key) == 0) {
            t->props[i].value = v;
            return;
        }
    }
    if (grow((void **)&t->props, &cap, t->nprops, sizeof(*t->props)) != 0) {
        t->oom = 1;
        return;
    }
    t->props_cap = (uint32_t)cap;
    t->props[t->nprops].key = arena_strndup(&t->arena, key, strlen(key));
    if (t->props[t->nprops].key == NULL) {
        t->oom = 1;
        return;
    }
    t->props[t->nprops++].value = v;
}

void dt_propf(struct dt_table *t, const char *key, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    dt_prop(t, key, buf);
}

void dt_row(struct dt_table *t)
{
    if (t->oom || grow((void **)&t->row_start, &t->rows_cap, t->nrows, sizeof(size_t)) != 0) {
        t->oom = 1;
        return;
    }
    t->row_start[t->nrows++] = t->ncells;
}

static struct dt_cell *add_cell(struct dt_table *t)
{
    if (t->oom || t->nrows == 0 ||
        grow((void **)&t->cells, &t->cells_cap, t->ncells, sizeof(*t->cells)) != 0) {
        t->oom = 1;
        return NULL;
    }
    return &t->cells[t->ncells++];
}

void dt_num(struct dt_table *t, double v)
{
    struct dt_cell *c = add_cell(t);

    if (c != NULL)
        *c = (struct dt_cell){.kind = DT_NUM, .num = v};
}

void dt_num_fmt(struct dt_table *t, double v, const char *formatted)
{
    struct dt_cell *c = add_cell(t);
    char *copy;

    if (c == NULL)
        return;
    copy = arena_strndup(&t->arena, formatted, strlen(formatted));
    if (copy == NULL) {
        t->oom = 1;
        t->ncells--;
        return;
    }
    *c = (struct dt_cell){.kind = DT_NUM, .num = v, .f = copy};
}

void dt_strn(struct dt_table *t, const char *s, size_t n)
{
    struct dt_cell *c = add_cell(t);
    char *copy;

    if (c == NULL)
        return;
    copy = arena_strndup(&t->arena, s, n);
    if (copy == NULL) {
        t->oom = 1;
        t->ncells--;
        return;
    }
    *c = (struct dt_cell){.kind = DT_STR, .str = copy, .len = n};
}

void dt_str(struct dt_table *t, const char *s)
{
    dt_strn(t, s, strlen(s));
}

void dt_bool(struct dt_table *t, int b)
{
    struct dt_cell *c = add_cell(t);

    if (c != NULL)
        *c = (struct dt_cell){.kind = DT_BOOL, .b = b != 0};
}

/* ---- numbers ---- */

/* Format with fixed notation for lo < n <= hi, exponent otherwise. */
static char *fmt_float(double v, char *buf, int hi)
{
    char d[24];
    int n, k, i;
    char *o = buf;

    if (v == 0) {
        strcpy(buf, signbit(v) ? "-0.0" : "0.0");
        return buf;
    }
    k = shortest_digits(v, d, &n);
    n++; /* v = 0.d1d2... x 10^n */
    if (v < 0)
        *o++ = '-';
    if (k <= n && n <= hi) {
        memcpy(o, d, (size_t)k);
        o += k;
        for (i = k; i < n; i++)
            *o++ = '0';
        memcpy(o, ".0", 3);
    } else if (0 < n && n <= hi) {
        memcpy(o, d, (size_t)n);
        o += n;
        *o++ = '.';
        memcpy(o, d + n, (size_t)(k - n) + 1);
    } else if (-4 < n && n <= 0) {
        *o++ = '0';
        *o++ = '.';
        for (i = 0; i < -n; i++)
            *o++ = '0';
        memcpy(o, d, (size_t)k + 1);
    } else {
        *o++ = d[0];
        if (k > 1) {
            *o++ = '.';
            memcpy(o, d + 1, (size_t)k - 1);
            o += k - 1;
        }
        snprintf(o, 8, "e%c%02d", n - 1 < 0 ? '-' : '+', abs(n - 1));
    }
    return buf;
}

char *dt_fmt_json_double(double v, char *buf)
{
    if (!isfinite(v)) {
        strcpy(buf, "null");
        return buf;
    }
    return fmt_float(v, buf, 15);
}

char *dt_fmt_py_float(double v, char *buf)
{
    if (isnan(v)) {
        strcpy(buf, "nan");
        return buf;
    }
    if (isinf(v)) {
        strcpy(buf, v < 0 ? "-inf" : "inf");
        return buf;
    }
    return fmt_float(v, buf, 16);
}

/* ---- strings ---- */

/* Length of a valid UTF-8 sequence at s (n bytes left), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t len, i;
    unsigned c = s[0];
    uint32_t cp;

    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        len = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        len = 4, cp = c & 0x07;
    else
        return 0;
    if (len > n)
        return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return len;
}

void dt_json_string(struct out *o, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, run = 0;

    out_putc(o, '"');
    while (i < n) {
        unsigned c = p[i];
        size_t ul;
        const char *esc = NULL;
        char ubuf[8];

        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
            i++;
            run++;
            continue;
        }
        if (c >= 0x80 && (ul = utf8_len(p + i, n - i)) > 0) {
            i += ul;
            run += ul;
            continue;
        }
        out_write(o, p + i - run, run);
        run = 0;
        switch (c) {
        case '"':
            esc = "\\\"";
            break;
        case '\\':
            esc = "\\\\";
            break;
        case '\b':
            esc = "\\b";
            break;
        case '\f':
            esc = "\\f";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\r':
            esc = "\\r";
            break;
        case '\t':
            esc = "\\t";
            break;
        default:
            if (c < 0x20) {
                snprintf(ubuf, sizeof(ubuf), "\\u%04x", c);
                esc = ubuf;
            } else {
                esc = "\xef\xbf\xbd"; /* invalid UTF-8: U+FFFD */
            }
        }
        out_puts(o, esc);
        i++;
    }
    out_write(o, p + i - run, run);
    out_putc(o, '"');
}

/* ---- writers ---- */

static int prop_cmp(const void *a, const void *b)
{
    return strcmp(((const struct dt_prop *)a)->key, ((const struct dt_prop *)b)->key);
}

/* Properties in key order (a sorted copy; the table stays const). */
static void write_props(const struct dt_table *t, struct out *o)
{
    struct dt_prop *sorted = malloc((t->nprops ? t->nprops : 1) * sizeof(*sorted));
    uint32_t i;

    if (sorted == NULL) {
        o->oom = 1;
        return;
    }
    memcpy(sorted, t->props, t->nprops * sizeof(*sorted));
    xp_qsort(sorted, t->nprops, sizeof(*sorted), prop_cmp);
    out_puts(o, ",\"p\":{");
    for (i = 0; i < t->nprops; i++) {
        if (i > 0)
            out_putc(o, ',');
        dt_json_string(o, sorted[i].key, strlen(sorted[i].key));
        out_putc(o, ':');
        dt_json_string(o, sorted[i].value, strlen(sorted[i].value));
    }
    out_putc(o, '}');
    free(sorted);
}

void dt_write_json(const struct dt_table *t, struct out *o)
{
    size_t r, c;
    uint32_t i;
    char num[40];

    if (t->oom) {
        o->oom = 1;
        return;
    }
    out_puts(o, "{\"cols\":[");
    for (i = 0; i < t->ncols; i++) {
        const struct dt_col *col = &t->cols[i];
        if (i > 0)
            out_putc(o, ',');
        out_puts(o, "{\"id\":");
        dt_json_string(o, col->id, strlen(col->id));
        out_puts(o, ",\"label\":");
        dt_json_string(o, col->label, strlen(col->label));
        if (col->role != NULL) {
            out_puts(o, ",\"p\":{\"role\":");
            dt_json_string(o, col->role, strlen(col->role));
            out_putc(o, '}');
        }
        out_puts(o, ",\"type\":");
        dt_json_string(o, col->type, strlen(col->type));
        out_putc(o, '}');
    }
    out_putc(o, ']');
    if (t->nprops > 0)
        write_props(t, o);
    out_puts(o, ",\"rows\":[");
    for (r = 0; r < t->nrows; r++) {
        size_t end = r + 1 < t->nrows ? t->row_start[r + 1] : t->ncells;
        if (r > 0)
            out_putc(o, ',');
        out_puts(o, "{\"c\":[");
        for (c = t->row_start[r]; c < end; c++) {
            const struct dt_cell *cell = &t->cells[c];
            if (c > t->row_start[r])
                out_putc(o, ',');
            out_putc(o, '{');
            if (cell->f != NULL) { /* keys sorted: "f" before "v" */
                out_puts(o, "\"f\":");
                dt_json_string(o, cell->f, strlen(cell->f));
                out_putc(o, ',');
            }
            out_puts(o, "\"v\":");
            switch (cell->kind) {
            case DT_NUM:
                out_puts(o, dt_fmt_json_double(cell->num, num));
                break;
            case DT_STR:
                dt_json_string(o, cell->str, cell->len);
                break;
            case DT_BOOL:
                out_puts(o, cell->b ? "true" : "false");
                break;
            default:
                out_puts(o, "\"\"");
            }
            out_putc(o, '}');
        }
        out_puts(o, "]}");
    }
    out_puts(o, "]}");
}

/* One CSV field, always quoted (csv.QUOTE_ALL). */
static void csv_field(struct out *o, const char *s, size_t n)
{
    size_t i, start = 0;

    out_putc(o, '"');
    for (i = 0; i < n; i++) {
        if (s[i] == '"') {
            out_write(o, s + start, i - start + 1);
            out_putc(o, '"');
            start = i + 1;
        }
    }
    out_write(o, s + start, n - start);
    out_putc(o, '"');
}

void dt_write_json_list(const struct dt_table *t, int n, struct out *o)
{
    int i;

    out_putc(o, '[');
    for (i = 0; i < n; i++) {
        if (i > 0)
            out_putc(o, ',');
        dt_write_json(&t[i], o);
    }
    out_putc(o, ']');
}

void dt_write_csv(const struct dt_table *t, struct out *o)
{
    size_t r, c;
    uint32_t i;
    char num[40];

    if (t->oom) {
        o->oom = 1;
        return;
    }
    for (i = 0; i < t->ncols; i++) {
        const char *label = t->cols[i].label ? t->cols[i].label : t->cols[i].id;
        if (i > 0)
            out_putc(o, ',');
        csv_field(o, label, strlen(label));
    }
    out_putc(o, '\n');
    for (r = 0; r < t->nrows; r++) {
        size_t end = r + 1 < t->nrows ? t->row_start[r + 1] : t->ncells;
        if (end == t->row_start[r])
            continue; /* csv_writer.py skips rows without cells */
        for (c = t->row_start[r]; c < end; c++) {
            const struct dt_cell *cell = &t->cells[c];
            if (c > t->row_start[r])
                out_putc(o, ',');
            switch (cell->kind) {
            case DT_NUM:
                /* JSON null (NaN, inf) reads back as None: an empty field */
                if (isfinite(cell->num)) {
                    dt_fmt_py_float(cell->num, num);
                    csv_field(o, num, strlen(num));
                } else
                    csv_field(o, "", 0);
                break;
            case DT_STR:
                csv_field(o, cell->str, cell->len);
                break;
            case DT_BOOL:
                csv_field(o, cell->b ? "True" : "False", cell->b ? 4 : 5);
                break;
            default:
                csv_field(o, "", 0);
            }
        }
        out_putc(o, '\n');
    }
}
