/*
 * hlo_module_text.c - the last step of reading an HloModuleProto
 * (hlo_module_int.h): every node's stack_frame, resolved through the
 * module's stack_frame_index as XProf's GetOpLocationStack does (op_stats)
 * or as its BuildStackFrames does (the memory viewer), and the text of every
 * node outside fusion computations (hlo_text.h), while the module's bytes
 * are at hand.
 *
 * Both are bounded for hostile modules: a frame walk stops after as many
 * steps as there are frames (cycles), out-of-range ids end it, a string is
 * cut at HLO_TEXT_MAX bytes as XProf cuts texts, and all the strings of the
 * modules of a host together stay within a budget of a few times their size
 * (struct hlo_text_budget; past it, the rest are ""). Frame strings are
 * shared between the nodes of one frame.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hlo_module_int.h"

/* A module's stack frame index (StackFrameIndexProto), as views into it. */
struct frames {
    struct wire *files;     /* file_names */
    struct wire *functions; /* function_names */
    int32_t *locs;          /* file_locations: file, function, line, column */
    int32_t *frames;        /* stack_frames: location, parent */
    uint32_t nfiles, nfunctions, nlocs, nframes;
    const char **memo; /* per frame id: its string, once made */
};

/* Count the entries of each repeated field of the index. */
static void count_frames(struct wire w, struct frames *f)
{
    while (!wire_eof(&w)) {
        uint32_t fld;
        int t;
        if (wire_key(&w, &fld, &t) != 0 || wire_skip(&w, t) != 0)
            break;
        if (t != WIRE_LEN)
            continue;
        f->nfiles += fld == 1;
        f->nfunctions += fld == 2;
        f->nlocs += fld == 3;
        f->nframes += fld == 4;
    }
}

/* The int32 fields 1..n of message m into v (0 when absent). */
static void int_fields(struct wire m, int32_t *v, uint32_t n)
{
    memset(v, 0, n * sizeof(*v));
    while (!wire_eof(&m)) {
        uint32_t f;
        int t;
        uint64_t x;
        if (wire_key(&m, &f, &t) != 0)
            break;
        if (f >= 1 && f <= n && t == WIRE_VARINT) {
            if (wire_varint(&m, &x) != 0)
                break;
            v[f - 1] = (int32_t)(uint32_t)x;
        } else if (wire_skip(&m, t) != 0) {
            break;
        }
    }
}

/* Read the index w into f (arrays malloc'ed). 0 or -ENOMEM. */
static int read_frames(struct wire w, struct frames *f)
{
    uint32_t k[4] = {0, 0, 0, 0};
    int32_t loc[4];

    count_frames(w, f);
    f->files = calloc(f->nfiles ? f->nfiles : 1, sizeof(*f->files));
    f->functions = calloc(f->nfunctions ? f->nfunctions : 1, sizeof(*f->functions));
    f->locs = calloc(f->nlocs ? f->nlocs * 4 : 1, sizeof(*f->locs));
    f->frames = calloc(f->nframes ? f->nframes * 2 : 1, sizeof(*f->frames));
    f->memo = calloc(f->nframes + 1, sizeof(*f->memo));
    if (!f->files || !f->functions || !f->locs || !f->frames || !f->memo)
        return -ENOMEM;
    while (!wire_eof(&w)) {
        uint32_t fld;
        int t;
        struct wire s;
        if (wire_key(&w, &fld, &t) != 0)
            break;
        if (t != WIRE_LEN || fld < 1 || fld > 4) {
            if (wire_skip(&w, t) != 0)
                break;
            continue;
        }
        if (wire_bytes(&w, &s) != 0)
            break;
        if (fld == 1 && k[0] < f->nfiles) {
            f->files[k[0]++] = s;
        } else if (fld == 2 && k[1] < f->nfunctions) {
            f->functions[k[1]++] = s;
        } else if (fld == 3 && k[2] < f->nlocs) {
            int_fields(s, loc, 4); /* file_name_id, function_name_id, line, column */
            memcpy(&f->locs[4 * k[2]++], loc, sizeof(loc));
        } else if (fld == 4 && k[3] < f->nframes) {
            int_fields(s, loc, 2); /* file_location_id, parent_frame_id */
            memcpy(&f->frames[2 * k[3]++], loc, 2 * sizeof(*loc));
        }
    }
    return 0;
}

/* Free the index's arrays. */
static void free_frames(struct frames *f)
{
    free(f->files);
    free(f->functions);
    free(f->locs);
    free(f->frames);
    free(f->memo);
}

/* Name id of a name table (1-based), an empty view when out of range. */
static struct wire name_at(const struct wire *v, uint32_t n, int32_t id)
{
    struct wire none = {NULL, NULL};

    return id >= 1 && (uint32_t)id <= n ? v[id - 1] : none;
}

/* Count a string left "" for want of budget b (saturating). */
static void note_cut(struct hlo_text_budget *b)
{
    if (b->truncated < UINT32_MAX)
        b->truncated++;
}

/* Copy what o holds (at most HLO_TEXT_MAX bytes of it) into the arena,
 * spending budget b; "" and the budget spent when it does not fit. NULL on
 * OOM. */
static const char *keep_out(struct arena *a, const struct out *o, struct hlo_text_budget *b)
{
    size_t n = out_len(o);

    if (n == 0)
        return "";
    if (n > HLO_TEXT_MAX)
        n = HLO_TEXT_MAX;
    if (n > b->left) {
        b->left = 0;
        note_cut(b);
        return "";
    }
    b->left -= n;
    /* a writer that never spills: the first chunk holds its first bytes,
     * and HLO_TEXT_MAX < OUT_CHUNK */
    return arena_strndup(a, o->chunks[0], n);
}

/* The stack string of frame id as XProf's GetOpLocationStack makes it (the
 * op_stats form): one "file:line:col\n" per frame up through the parents,
 * stopping at an empty or unknown frame, at most nframes frames. */
static void put_stack(struct out *o, const struct frames *f, int32_t id)
{
    uint32_t steps;

    for (steps = 0; steps < f->nframes && id >= 1 && (uint32_t)id <= f->nframes; steps++) {
        const int32_t *fr = &f->frames[2 * (id - 1)], *loc;
        struct wire file, func;
        if (fr[0] < 1 || (uint32_t)fr[0] > f->nlocs || out_len(o) > HLO_TEXT_MAX)
            break;
        loc = &f->locs[4 * (fr[0] - 1)];
        file = name_at(f->files, f->nfiles, loc[0]);
        func = name_at(f->functions, f->nfunctions, loc[1]);
        if (file.p == file.end && func.p == func.end && loc[2] == 0 && loc[3] == 0)
            break;
        if (file.p != file.end)
            out_write(o, file.p, (size_t)(file.end - file.p));
        out_printf(o, ":%d:%d\n", loc[2], loc[3]);
        id = fr[1];
    }
}

/* The stack string of frame id as XProf's BuildStackFrames makes it (the
 * memory viewer's): "file:line:col" per frame up through the parents,
 * joined by '\n'; a frame whose location id is out of range is ":-1:-1", a
 * location whose file id is out of range has no file. It ends at an unknown
 * frame id, or after nframes frames (XProf would loop on a cycle). */
static void put_stack_joined(struct out *o, const struct frames *f, int32_t id)
{
    uint32_t steps;

    for (steps = 0; steps < f->nframes && id >= 1 && (uint32_t)id <= f->nframes; steps++) {
        const int32_t *fr = &f->frames[2 * (id - 1)], *loc;
        struct wire file;
        if (out_len(o) > HLO_TEXT_MAX)
            break;
        if (steps > 0)
            out_putc(o, '\n');
        if (fr[0] < 1 || (uint32_t)fr[0] > f->nlocs) {
            out_puts(o, ":-1:-1");
        } else {
            loc = &f->locs[4 * (fr[0] - 1)];
            file = name_at(f->files, f->nfiles, loc[0]);
            if (file.p != file.end)
                out_write(o, file.p, (size_t)(file.end - file.p));
            out_printf(o, ":%d:%d", loc[2], loc[3]);
        }
        id = fr[1];
    }
}

/* Each node's stack_frame in format fmt. 0 or -ENOMEM. */
static int stack_frames(struct hlo_graph *g, const struct hlo_raw_ids *raw, struct wire w,
                        enum hlo_frames_format fmt, struct out *o, struct hlo_text_budget *b)
{
    struct frames f;
    uint32_t i;
    int rc = 0;

    for (i = 0; i < g->nnodes && raw[i].stack_frame_id == 0; i++)
        ;
    if (i == g->nnodes || w.p == NULL)
        return 0;
    memset(&f, 0, sizeof(f));
    rc = read_frames(w, &f);
    for (; rc == 0 && i < g->nnodes; i++) {
        int32_t id = raw[i].stack_frame_id;
        if (id < 1 || (uint32_t)id > f.nframes)
            continue;
        if (f.memo[id] == NULL && b->left == 0) {
            note_cut(b);
            continue;
        }
        if (f.memo[id] == NULL) {
            out_rewind(o);
            if (fmt == HLO_FRAMES_JOINED)
                put_stack_joined(o, &f, id);
            else
                put_stack(o, &f, id);
            f.memo[id] = keep_out(&g->arena, o, b);
            if (f.memo[id] == NULL || out_failed(o))
                rc = -ENOMEM;
        }
        g->nodes[i].stack_frame = f.memo[id] != NULL ? f.memo[id] : "";
    }
    free_frames(&f);
    return rc;
}

/* Mark the computations called by fusions, and what they call, in
 * fused[]. 0 or -ENOMEM. */
static int mark_fused(const struct hlo_graph *g, uint8_t *fused)
{
    uint32_t *queue = malloc((g->ncomps ? g->ncomps : 1) * sizeof(*queue));
    uint32_t head = 0, tail = 0, i, j;

    if (queue == NULL)
        return -ENOMEM;
    for (i = 0; i < g->nnodes; i++) {
        const struct hlo_node *nd = &g->nodes[i];
        if (strcmp(nd->opcode, "fusion") != 0)
            continue;
        for (j = 0; j < nd->ncalled; j++) {
            if (!fused[nd->called[j]]) {
                fused[nd->called[j]] = 1;
                queue[tail++] = nd->called[j];
            }
        }
    }
    while (head < tail) {
        const struct hlo_comp *cp = &g->comps[queue[head++]];
        for (i = cp->first; i < cp->first + cp->n; i++) {
            const struct hlo_node *nd = &g->nodes[i];
            for (j = 0; j < nd->ncalled; j++) {
                if (!fused[nd->called[j]]) {
                    fused[nd->called[j]] = 1;
                    queue[tail++] = nd->called[j];
                }
            }
        }
    }
    free(queue);
    return 0;
}

/* The text of every node outside fusion computations, each printed with a
 * limit of what is left of the budget b. 0 or -ENOMEM. */
static int texts(struct hlo_graph *g, const struct hlo_text_src *src, struct out *o,
                 struct hlo_text_budget *b)
{
    uint8_t *fused = calloc(g->ncomps ? g->ncomps : 1, 1);
    uint32_t i;
    int rc;

    if (fused == NULL)
        return -ENOMEM;
    rc = mark_fused(g, fused);
    for (i = 0; rc == 0 && i < g->nnodes; i++) {
        struct hlo_node *nd = &g->nodes[i];
        if (fused[nd->comp])
            continue;
        if (b->left == 0) {
            note_cut(b);
            continue;
        }
        out_rewind(o);
        /* past b->left bytes the text is dropped: no need to print more */
        hlo_instr_print(o, g, src, i, b->left < HLO_TEXT_MAX ? b->left + 1 : HLO_TEXT_MAX);
        nd->text = keep_out(&g->arena, o, b);
        if (nd->text == NULL || out_failed(o)) {
            nd->text = "";
            rc = -ENOMEM;
        }
    }
    free(fused);
    return rc;
}

void hlo_text_budget_init(struct hlo_text_budget *b)
{
    b->left = HLO_TEXT_BUDGET_BASE;
    b->truncated = 0;
}

int hlo_module_texts(struct hlo_graph *g, const struct hlo_instr_span *spans,
                     const struct hlo_id_ix *by_id, const struct hlo_raw_ids *raw,
                     struct wire frames, enum hlo_frames_format fmt, struct hlo_text_budget *budget,
                     struct out *scratch)
{
    struct hlo_text_src src = {spans, by_id, 0};
    struct out own, *o = scratch != NULL ? scratch : &own;
    int rc;

    if (scratch == NULL)
        out_init(&own);
    out_rewind(o);
    rc = stack_frames(g, raw, frames, fmt, o, budget);
    if (rc == 0 && by_id != NULL)
        rc = texts(g, &src, o, budget);
    if (scratch == NULL)
        out_discard(&own);
    return rc;
}
