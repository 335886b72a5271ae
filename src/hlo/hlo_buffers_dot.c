/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hlo_buffers_dot.c - the allocation timeline of struct hlo_mem
 * (hlo_buffers.h) as XProf's ConvertAllocationTimeline lays it out: one
 * block per non-indefinite allocation of the colour that has a trace,
 * stacked, and inside it one block per canonical buffer over its span; the
 * same as Graphviz rectangles scaled to 4096 x 4096 points (too thin ones
 * are not drawn, and only drawn ones count for the colour of the next
 * block). Also XProf's GetSourceInfo for the blocks and heap objects.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo_buffers_int.h"

#define GRAPH_POINTS 4096.0  /* width and height of the drawing */
#define POINTS_PER_INCH 72.0 /* Graphviz sizes are inches, positions points */
#define MARGIN_POINTS 1.44   /* 0.02 inch */
#define FONT_PER_HEIGHT 0.6  /* font size from the block height */
#define FONT_MIN 8.0
#define FONT_MAX 14.0

/* XProf's block colours (xprof/frontend/app/common/utils/utils.ts). */
static const char *const palette[] = {
    "#e91e63", "#2196f3", "#81c784", "#4dd0e1", "#3f51b5", "#e53935", "#ff9100", "#b39ddb",
    "#90a4ae", "#26c6da", "#ad1457", "#03a9f4", "#2196f3", "#c2185b", "#795548", "#f9a825",
    "#00bfa5", "#880e4f", "#d500f9", "#ce93d8", "#ec407a", "#4caf50", "#ff8f00", "#ffca28",
    "#ab47bc", "#00e5ff", "#ff9800", "#40c4ff", "#1e88e5", "#9fa8da", "#bf360c", "#00b8d4",
    "#f57f17", "#64b5f6", "#e040fb", "#ffab91", "#4caf50", "#01579b", "#66bb6a", "#ef9a9a",
    "#558b2f", "#fb8c00", "#ff4081", "#00e676", "#388e3c", "#424242", "#6d4c41", "#c62828",
    "#616161", "#00897b", "#448aff", "#0d47a1", "#607d8b", "#673ab7", "#00c853", "#2e7d32",
    "#ffa726", "#5e35b1", "#ba68c8", "#8d6e63", "#00bcd4", "#ff6f00", "#f4511e", "#ff1744",
    "#9e9e9e", "#d81b60", "#4a148c", "#26a69a", "#689f38", "#7b1fa2", "#b0bec5", "#304ffe",
    "#f48fb1", "#ffd600", "#ffb74d", "#8bc34a", "#303f9f", "#5d4037", "#80cbc4", "#ffcc80",
    "#00acc1", "#3e2723", "#ff5252", "#ff7043", "#e91e63", "#ea80fc", "#e65100", "#d84315",
    "#212121", "#ff5722", "#1976d2", "#2962ff", "#bdbdbd", "#3949ab", "#69f0ae", "#d50000",
    "#ffd740", "#c0ca33", "#ff6e40", "#00b0ff", "#2979ff", "#e64a19", "#7c4dff", "#607d8b",
    "#009688", "#ffb300", "#c51162", "#ffc400", "#29b6f6", "#3d5afe", "#76ff03", "#cddc39",
    "#b388ff", "#5c6bc0", "#9e9d24", "#7cb342", "#ef5350", "#fdd835", "#ef6c00", "#4fc3f7",
    "#6200ea", "#004d40", "#ff8a65", "#ffab00", "#80deea", "#0097a7", "#7e57c2", "#ff6d00",
    "#1565c0", "#455a64", "#ffc107", "#4527a0", "#ff5722", "#f44336", "#f57c00", "#827717",
    "#a5d6a7", "#82b1ff", "#9c27b0", "#ff80ab", "#e1bee7", "#78909c", "#311b92", "#00695c",
    "#4e342e", "#3f51b5", "#651fff", "#9e9e9e", "#81d4fa", "#f8bbd0", "#b71c1c", "#0091ea",
    "#673ab7", "#a1887f", "#4db6ac", "#ffa000", "#6a1b9a", "#43a047", "#bcaaa4", "#546e7a",
    "#aeea00", "#e57373", "#ffccbc", "#006064", "#fbc02d", "#ffeb3b", "#8bc34a", "#039be5",
    "#8e24aa", "#80d8ff", "#009688", "#9ccc65", "#512da8", "#ffc107", "#757575", "#0277bd",
    "#ff3d00", "#33691e", "#03a9f4", "#00838f", "#ff8a80", "#283593", "#f50057", "#1a237e",
    "#90caf9", "#9c27b0", "#aa00ff", "#aed581", "#afb42b", "#9575cd", "#d32f2f", "#64dd17",
    "#f44336", "#795548", "#cddc39", "#ff9e80", "#7986cb", "#dd2c00", "#0288d1", "#ff9800",
    "#263238", "#00796b", "#42a5f5", "#8c9eff", "#1b5e20", "#ffab40", "#536dfe", "#00bcd4",
    "#f06292"};

#define NPALETTE (sizeof(palette) / sizeof(palette[0]))

/* What one layout pass collects. */
struct layout {
    struct hlo_mem *m;
    double sx, sy;    /* points per event, per byte */
    uint32_t node_id; /* rectangles drawn so far */
};

/* XProf's add_rect: a rectangle of w x h at (x, y) in events and bytes,
 * unless thinner than a point either way. */
static void add_rect(struct layout *l, double x, double y, double w, double h, const char *color,
                     int32_t lbuf, uint32_t alloc)
{
    struct hlo_mem_rect *r;
    double rw = w * l->sx, rh = h * l->sy, font = rh * FONT_PER_HEIGHT;

    if (rw < 1.0 || rh < 1.0)
        return;
    r = &l->m->rects[l->m->nrects++];
    r->lbuf = lbuf;
    r->alloc = alloc;
    r->x = (x + w / 2.0) * l->sx;
    r->y = (y + h / 2.0) * l->sy;
    r->w = rw;
    r->h = rh;
    r->font = font < FONT_MIN ? FONT_MIN : font > FONT_MAX ? FONT_MAX : font;
    r->color = color;
    l->node_id++;
}

/* The blocks of allocation a (position ai) at offset off. */
static void layout_alloc(struct layout *l, uint32_t ai, uint64_t off)
{
    struct hlo_mem *m = l->m;
    const struct hlo_mem_alloc *a = &m->allocs[ai];
    uint32_t j;

    m->blocks[m->nblocks++] = (struct hlo_mem_block){
        HLO_MEM_NO_ID, ai, (double)off, (double)a->size, 0, (int64_t)m->timeline_x, "#ffffff"};
    add_rect(l, 0, (double)off, (double)m->timeline_x, (double)a->size, "#ffffffff", HLO_MEM_NO_ID,
             ai);
    for (j = 0; j < a->nassigned; j++) {
        int32_t lb = m->assigned[a->first + j].lbuf;
        const struct hlo_mem_lbuf *b;
        uint64_t y, width;
        const char *color;
        if (lb == HLO_MEM_NO_ID)
            continue;
        b = &m->lbufs[lb];
        if (!b->has_span || b->canonical != HLO_MEM_NO_ID)
            continue;
        width = (uint64_t)b->span_end - (uint64_t)b->span_start;
        y = off + (uint64_t)b->offset;
        color = palette[(b->heap_color != HLO_MEM_NO_ID ? (uint32_t)b->heap_color : l->node_id) %
                        NPALETTE];
        m->blocks[m->nblocks++] = (struct hlo_mem_block){
            lb, b->alloc, (double)y, (double)b->size, b->span_start, b->span_end, color};
        add_rect(l, (double)(uint64_t)b->span_start, (double)y, (double)width, (double)b->size,
                 color, lb, ai);
    }
}

int hlo_mem_timeline(struct hlo_mem *m, struct xp_err *err)
{
    struct layout l = {m, 0, 0, 0};
    uint64_t *offsets, total_y = 0, total_x = 0;
    size_t cap = 1;
    uint32_t i, n = 0, k = 0;

    offsets = malloc((m->nallocs ? m->nallocs : 1) * sizeof(*offsets));
    if (offsets == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    for (i = 0; i < m->nallocs; i++) {
        const struct hlo_mem_alloc *a = &m->allocs[i];
        if (a->color != m->color || hlo_mem_indefinite(a))
            continue;
        cap += 1 + (size_t)a->nassigned;
        if (a->trace == HLO_MEM_NO_ID)
            continue;
        offsets[n++] = total_y;
        total_y += (uint64_t)a->size;
        if (m->traces[a->trace].n > total_x)
            total_x = m->traces[a->trace].n;
    }
    if (total_y == 0 || total_x == 0) {
        free(offsets);
        return 0;
    }
    m->blocks = malloc(cap * sizeof(*m->blocks));
    m->rects = malloc(cap * sizeof(*m->rects));
    if (m->blocks == NULL || m->rects == NULL) {
        free(offsets);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    m->timeline = 1;
    m->timeline_x = total_x;
    l.sx = GRAPH_POINTS / (double)total_x;
    l.sy = GRAPH_POINTS / (double)total_y;
    /* XProf counts an offset for every non-indefinite allocation here, but
     * made one only for those with a trace: past the last, it stops */
    for (i = 0; i < m->nallocs && k < n; i++) {
        const struct hlo_mem_alloc *a = &m->allocs[i];
        if (a->color == m->color && !hlo_mem_indefinite(a))
            layout_alloc(&l, i, offsets[k++]);
    }
    free(offsets);
    return 0;
}

/* Append s to o with Graphviz's quote and backslash escaped. */
static void dot_str(struct out *o, const char *s, size_t n)
{
    size_t i, start = 0;

    for (i = 0; i < n; i++) {
        if (s[i] != '"' && s[i] != '\\')
            continue;
        out_write(o, s + start, i - start);
        out_putc(o, '\\');
        start = i;
    }
    out_write(o, s + start, n - start);
}

/* XProf's GetFittingLabel: label cut to what fits a w x h block in font
 * points, with "..." when cut, or nothing. Writes into o. */
static void fitting_label(struct out *o, const char *label, size_t len, double w, double h,
                          double font)
{
    double char_w = 0.55 * font, uh = h - 2.0 * MARGIN_POINTS, uw = w - 2.0 * MARGIN_POINTS;
    int max_chars;

    if (len == 0 || uh < 1.2 * font || uw < char_w)
        return;
    max_chars = (int)(uw / char_w);
    if (len <= (size_t)max_chars) {
        dot_str(o, label, len);
    } else if (max_chars >= 4) {
        dot_str(o, label, (size_t)max_chars - 3);
        out_puts(o, "...");
    }
}

/* The tooltip of rectangle r: XProf's description of its allocation or
 * logical buffer. */
static void dot_tooltip(struct out *o, const struct hlo_mem *m, const struct hlo_mem_rect *r)
{
    const struct hlo_mem_lbuf *b;
    const struct hlo_node *nd;

    if (r->lbuf == HLO_MEM_NO_ID) {
        const struct hlo_mem_alloc *a = &m->allocs[r->alloc];
        out_printf(o, "buffer_allocation_id:%lld\nsize:%lld\nbuffer_counts:%u\n",
                   (long long)a->index, (long long)a->size, a->nassigned);
        return;
    }
    b = &m->lbufs[r->lbuf];
    nd = &m->g.nodes[b->node];
    out_printf(o, "buffer_id:%lld\nhlo_op:", (long long)b->id);
    dot_str(o, nd->name, nd->name_len);
    out_puts(o, "\nshape:");
    dot_str(o, b->shape_str, strlen(b->shape_str));
    out_printf(o, "\nsize:%lld\nunpadded_size:%lld\noffset:%lld\nspan:(%lld,%lld)",
               (long long)b->size, (long long)b->unpadded, (long long)b->offset,
               b->has_span ? (long long)b->span_start : -1LL,
               b->has_span ? (long long)b->span_end : -1LL);
}

void hlo_mem_dot(const struct hlo_mem *m, int noise, struct out *o)
{
    uint32_t i;

    if (!m->timeline)
        return;
    out_puts(o, "graph G {\n epsilon=0.5 \n inputscale=72 \n node "
                "[shape=box,style=filled,fontname=\"Arial\",margin=\"0.02,0.02\"];\n  ");
    for (i = 0; i < m->nrects; i++) {
        const struct hlo_mem_rect *r = &m->rects[i];
        if (i > 0)
            out_putc(o, '\n');
        out_printf(o, "\"%u\" [tooltip=\"", i);
        dot_tooltip(o, m, r);
        out_printf(o,
                   "\", pos=\"%.2f,%.2f!\", width=\"%.4f\", height=\"%.4f\", fixedsize=true, "
                   "color=\"%s\", fontsize=%.1f, label=\"",
                   r->x, r->y, r->w / POINTS_PER_INCH, r->h / POINTS_PER_INCH, r->color, r->font);
        if (r->lbuf != HLO_MEM_NO_ID) {
            const struct hlo_node *nd = &m->g.nodes[m->lbufs[r->lbuf].node];
            fitting_label(o, nd->name, nd->name_len, r->w, r->h, r->font);
        }
        out_puts(o, "\"];");
    }
    if (noise) {
        if (m->nrects > 0)
            out_putc(o, '\n');
        out_puts(o, "\"10000000\" [tooltip=\"invisible_dummy_buffer_assignment\", pos=\"0,0!\", "
                    "width=\"0!\", height=\"0!\", color=black];");
    }
    out_puts(o, "\n}");
}

const char *hlo_mem_source(struct arena *a, const struct hlo_node *nd, int32_t *line)
{
    const char *st = nd->stack_frame, *nl, *c1, *c2;
    char buf[24], *end;
    size_t n;
    long v;

    *line = -1;
    if (nd->source_file[0] != '\0') {
        *line = nd->source_line;
        return nd->source_file;
    }
    nl = strchr(st, '\n');
    if (nl == NULL)
        nl = st + strlen(st);
    c1 = memchr(st, ':', (size_t)(nl - st));
    if (c1 == NULL)
        return "";
    c2 = memchr(c1 + 1, ':', (size_t)(nl - c1 - 1));
    if (c2 == NULL)
        c2 = nl;
    n = (size_t)(c2 - c1 - 1);
    if (n > 0 && n < sizeof(buf)) {
        memcpy(buf, c1 + 1, n);
        buf[n] = '\0';
        errno = 0;
        v = strtol(buf, &end, 10);
        if (errno == 0 && end != buf && *end == '\0' && v >= INT32_MIN && v <= INT32_MAX)
            *line = (int32_t)v;
    }
    return arena_strndup(a, st, (size_t)(c1 - st));
}
