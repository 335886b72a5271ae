/*
 * perf_report_xlsx.c - perf_report.xlsx of PyTorch runs: the sheets of
 * perf_report/ (perf_report.c) in one workbook, in TraceLens's order, one
 * worksheet per CSV named as TraceLens names it, written with libxlsxwriter.
 *
 * Each sheet is made as its CSV and read back: the header row and every
 * field are cells, a field that reads whole as a finite number a number cell
 * (pandas' to_excel writes the DataFrame's numbers as numbers), the rest
 * strings, empty fields (NaN, None) no cell. libxlsxwriter spells numbers
 * with 16 significant digits (%.16g), so a cell can be 1 ulp off the CSV's. A string longer than
 * Excel's 32767 characters is cut there. libxlsxwriter writes to a file: the workbook is made in a
 * temporary file of $TMPDIR (else /tmp), read into the output and removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xlsxwriter.h>

#include "tool.h"

/* perf_report.c: the sheets, in TraceLens's order, and their names. */
extern const struct tool *const perf_report_sheets[];
extern const char *const perf_report_sheet_names[];

#define XLSX_MAX_STRING 32767

/* The CSV text of one sheet into *textp (caller frees), *lenp. */
static int sheet_csv(struct tool_ctx *ctx, const struct tool *t, char **textp, size_t *lenp)
{
    struct out tmp;
    struct blob *b = NULL;
    size_t len;
    char *text;
    int rc;

    out_init(&tmp);
    rc = t->produce(ctx, &tmp);
    if (rc != 0) {
        out_discard(&tmp);
        return rc;
    }
    len = out_len(&tmp);
    rc = out_finish(&tmp, &b);
    if (rc != 0)
        return xp_err_set(ctx->err, rc, "perf_report.xlsx: out of memory");
    text = malloc(len + 1);
    if (text == NULL || blob_read(b, 0, text, len) != (ssize_t)len) {
        free(text);
        blob_unref(b);
        return xp_err_set(ctx->err, -ENOMEM, "perf_report.xlsx: out of memory");
    }
    blob_unref(b);
    text[len] = '\0';
    *textp = text;
    *lenp = len;
    return 0;
}

/* Write field s[0..n) (unquoted) as a cell. */
static lxw_error put_cell(lxw_worksheet *ws, lxw_row_t row, lxw_col_t col, char *s, size_t n)
{
    char *end;
    lxw_error e;
    double v;
    char save;

    if (n == 0)
        return LXW_NO_ERROR;
    if (n > XLSX_MAX_STRING) {
        n = XLSX_MAX_STRING;
        while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
            n--; /* not inside a UTF-8 character */
    }
    save = s[n];
    s[n] = '\0';
    v = strtod(s, &end);
    if (row > 0 && end == s + n && isfinite(v) && s[0] != ' ' && s[0] != '\t')
        e = worksheet_write_number(ws, row, col, v, NULL);
    else
        e = worksheet_write_string(ws, row, col, s, NULL);
    s[n] = save;
    return e;
}

/* Parse the CSV text (pandas' quoting: fields with , " or a line break are
 * quoted, "" is a quote) into the worksheet. */
static int fill_sheet(lxw_worksheet *ws, char *text, size_t len)
{
    lxw_row_t row = 0;
    lxw_col_t col = 0;
    size_t i = 0;
    char *field = malloc(len + 1);
    int rc = 0;

    if (field == NULL)
        return -ENOMEM;
    while (i < len && rc == 0) {
        size_t n = 0;
        if (text[i] == '"') {
            i++;
            while (i < len) {
                if (text[i] == '"' && i + 1 < len && text[i + 1] == '"') {
                    field[n++] = '"';
                    i += 2;
                } else if (text[i] == '"') {
                    i++;
                    break;
                } else {
                    field[n++] = text[i++];
                }
            }
        }
        while (i < len && text[i] != ',' && text[i] != '\n')
            field[n++] = text[i++];
        field[n] = '\0';
        if (put_cell(ws, row, col, field, n) != LXW_NO_ERROR)
            rc = -EIO;
        if (i < len && text[i] == ',') {
            col++;
        } else {
            row++;
            col = 0;
        }
        i++;
    }
    free(field);
    return rc;
}

/* Copy the file at path into o. */
static int copy_file(const char *path, struct out *o)
{
    char buf[65536];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t r;

    if (fd < 0)
        return -errno;
    while ((r = read(fd, buf, sizeof(buf))) > 0)
        out_write(o, buf, (size_t)r);
    close(fd);
    return r < 0 ? -EIO : 0;
}

static int perf_report_xlsx(struct tool_ctx *ctx, struct out *o)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    lxw_workbook_options opts;
    lxw_doc_properties props;
    lxw_workbook *wb;
    int fd, i, rc = 0, sheets = 0;

    if (dir == NULL || dir[0] == '\0')
        dir = "/tmp";
    if (snprintf(path, sizeof(path), "%s/xprofs-xlsx-XXXXXX", dir) >= (int)sizeof(path))
        return xp_err_set(ctx->err, -ENAMETOOLONG, "perf_report.xlsx: TMPDIR too long");
    fd = mkstemp(path);
    if (fd < 0)
        return xp_err_set(ctx->err, -errno, "perf_report.xlsx: cannot make a file in %s", dir);
    close(fd);
    memset(&opts, 0, sizeof(opts));
    opts.tmpdir = (char *)dir;
    wb = workbook_new_opt(path, &opts);
    if (wb == NULL) {
        unlink(path);
        return xp_err_set(ctx->err, -ENOMEM, "perf_report.xlsx: cannot start the workbook");
    }
    /* Made at its newest source's time, not now: the same profile gives the
     * same bytes (libxlsxwriter takes 0 for now). */
    memset(&props, 0, sizeof(props));
    props.created = (time_t)(ctx->snap->newest_mtime_ns / 1000000000);
    if (props.created <= 0)
        props.created = 1;
    if (workbook_set_properties(wb, &props) != LXW_NO_ERROR) {
        workbook_close(wb);
        unlink(path);
        return xp_err_set(ctx->err, -ENOMEM, "perf_report.xlsx: cannot set its properties");
    }
    for (i = 0; perf_report_sheets[i] != NULL && rc == 0; i++) {
        char *text = NULL;
        size_t len = 0;
        lxw_worksheet *ws;
        rc = sheet_csv(ctx, perf_report_sheets[i], &text, &len);
        if (rc == -ENOENT) { /* TraceLens leaves out a sheet without data */
            rc = 0;
            continue;
        }
        if (rc != 0)
            break;
        ws = workbook_add_worksheet(wb, perf_report_sheet_names[i]);
        if (ws == NULL || fill_sheet(ws, text, len) != 0)
            rc = xp_err_set(ctx->err, -EIO, "perf_report.xlsx: cannot write sheet %s",
                            perf_report_sheet_names[i]);
        sheets++;
        free(text);
    }
    if (rc == 0 && sheets == 0)
        rc = xp_err_set(ctx->err, -ENOENT, "perf_report.xlsx: no sheet has data");
    if (workbook_close(wb) != LXW_NO_ERROR && rc == 0)
        rc = xp_err_set(ctx->err, -EIO, "perf_report.xlsx: cannot write the workbook");
    if (rc == 0 && copy_file(path, o) != 0)
        rc = xp_err_set(ctx->err, -EIO, "perf_report.xlsx: cannot read the workbook back");
    unlink(path);
    return rc;
}

static int listed_pt(const struct snapshot *snap)
{
    return snapshot_count(snap, SRC_PT_TRACE) > 0;
}

const struct tool tool_perf_report_xlsx = {
    .file = "perf_report.xlsx",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_pt,
    .produce = perf_report_xlsx,
};
