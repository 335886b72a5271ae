/* SPDX-License-Identifier: Apache-2.0 */
/*
 * memory_viewer.c - memory_viewer.json?module_name=M: XProf's memory viewer
 * of one HLO module (xprof/convert/hlo_to_tools_data.cc): the PreprocessResult
 * protobuf as MessageToJsonString prints it with default options (fields in
 * number order, lowerCamelCase, zero values left out, 64-bit ints quoted), or
 * with view_memory_allocation_timeline the Graphviz page of the allocation
 * timeline. The module is found by hlo_proto_find.h, its buffer assignment
 * replayed by hlo_buffers.h on every request (the mount caches the file).
 *
 * XProf offers it per run (its host list for HLO tools is the run's
 * modules), so the file is in the run and, for XProf's UI that sends a host,
 * in hosts/<host>/ too, where only that host's HLO protos are searched.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/hlo_buffers.h"
#include "hlo/hlo_proto_find.h"
#include "out/pbjson.h"
#include "tool.h"

static const struct query_key memory_viewer_keys[] = {
    {"memory_space", Q_INT, -2147483648.0, 2147483647.0},
    {"module_name", Q_STRING, 0, 0},
    {"program_id", Q_STRING, 0, 0},
    {"timeline_noise", Q_BOOL, 0, 1},
    {"view_memory_allocation_timeline", Q_BOOL, 0, 1},
    {NULL, Q_STRING, 0, 0},
};

/* Fields written so far in one JSON object or list. */
struct pj {
    struct out *o;
    int n;
};

/* The key of the next field of j. */
static void pj_key(struct pj *j, const char *key)
{
    out_puts(j->o, j->n++ ? ",\"" : "\"");
    out_puts(j->o, key);
    out_puts(j->o, "\":");
}

/* A separator before the next element of list j. */
static void pj_next(struct pj *j)
{
    if (j->n++)
        out_putc(j->o, ',');
}

static void pj_str(struct pj *j, const char *key, const char *s, size_t n)
{
    if (n == 0)
        return;
    pj_key(j, key);
    pbjson_str(j->o, s, n);
}

static void pj_cstr(struct pj *j, const char *key, const char *s)
{
    pj_str(j, key, s, strlen(s));
}

static void pj_double(struct pj *j, const char *key, double v)
{
    if (v == 0 && !signbit(v))
        return;
    pj_key(j, key);
    pbjson_double(j->o, v);
}

static void pj_int32(struct pj *j, const char *key, int64_t v)
{
    if ((int32_t)v == 0)
        return;
    pj_key(j, key);
    out_i64(j->o, (int32_t)v);
}

/* An int64 field: a quoted decimal. */
static void pj_int64(struct pj *j, const char *key, int64_t v)
{
    if (v == 0)
        return;
    pj_key(j, key);
    out_printf(j->o, "\"%lld\"", (long long)v);
}

static double mib(int64_t bytes)
{
    return (double)bytes / (double)(1ull << 20);
}

/* A growable string for the texts composed before they are escaped. */
struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
};

static void sb_add(struct sbuf *sb, const char *s, size_t n)
{
    if (sb->oom)
        return;
    if (sb->n + n + 1 > sb->cap) {
        size_t cap = (sb->n + n + 1) * 2;
        char *p = realloc(sb->p, cap);
        if (p == NULL) {
            sb->oom = 1;
            return;
        }
        sb->p = p;
        sb->cap = cap;
    }
    memcpy(sb->p + sb->n, s, n);
    sb->n += n;
    sb->p[sb->n] = '\0';
}

static void sb_cstr(struct sbuf *sb, const char *s)
{
    sb_add(sb, s, strlen(s));
}

/* The composed text as a string field of j (nothing when empty). */
static void pj_sbuf(struct pj *j, const char *key, struct sbuf *sb)
{
    if (sb->oom)
        j->o->oom = 1;
    else
        pj_str(j, key, sb->p, sb->n);
    sb->n = 0;
}

/* The instruction name with the shape index: "name{1,0}". */
static void name_with_index(struct sbuf *sb, const struct hlo_mem *m, const struct hlo_mem_lbuf *b)
{
    const struct hlo_node *nd = &m->g.nodes[b->node];
    char num[24];
    uint32_t i;

    sb_add(sb, nd->name, nd->name_len);
    if (b->nshape_index == 0)
        return;
    for (i = 0; i < b->nshape_index; i++) {
        snprintf(num, sizeof(num), "%s%lld", i ? "," : "{", (long long)b->shape_index[i]);
        sb_cstr(sb, num);
    }
    sb_cstr(sb, "}");
}

/* sourceInfo (field key) of node nd, when XProf's GetSourceInfo finds a
 * file. */
static void source_info(struct pj *j, struct hlo_mem *m, const struct hlo_node *nd, const char *key)
{
    struct pj s = {j->o, 0};
    int32_t line;
    const char *file = hlo_mem_source(&m->arena, nd, &line);

    if (file == NULL) {
        j->o->oom = 1;
        return;
    }
    if (file[0] == '\0')
        return;
    pj_key(j, key);
    out_putc(j->o, '{');
    pj_cstr(&s, "fileName", file);
    pj_int32(&s, "lineNumber", line);
    pj_cstr(&s, "stackFrame", nd->stack_frame);
    out_putc(j->o, '}');
}

/* One HeapObject. */
static void heap_object(struct out *o, struct hlo_mem *m, const struct hlo_mem_object *ob,
                        struct sbuf *sb)
{
    struct pj j = {o, 0};
    const struct hlo_mem_lbuf *b;
    const struct hlo_node *nd;
    char small[64];

    out_putc(o, '{');
    pj_key(&j, "numbered");
    out_i64(o, ob->color);
    if (ob->lbuf == HLO_MEM_NO_ID) {
        snprintf(small, sizeof(small), "small (<%d bytes)", HLO_MEM_SMALL_BUFFER);
        pj_cstr(&j, "label", small);
        pj_int32(&j, "logicalBufferId", -1);
        pj_double(&j, "logicalBufferSizeMib", mib(ob->size));
        out_putc(o, '}');
        return;
    }
    b = &m->lbufs[ob->lbuf];
    nd = &m->g.nodes[b->node];
    sb_add(sb, nd->name, nd->name_len);
    sb_cstr(sb, ": ");
    sb_cstr(sb, b->shape_str);
    sb_cstr(sb, " # ");
    sb_add(sb, nd->op_name, nd->op_name_len);
    pj_sbuf(&j, "label", sb);
    pj_int32(&j, "logicalBufferId", b->id);
    pj_double(&j, "logicalBufferSizeMib", mib(ob->size));
    pj_double(&j, "unpaddedShapeMib", mib(ob->unpadded));
    name_with_index(sb, m, b);
    pj_sbuf(&j, "instructionName", sb);
    pj_cstr(&j, "shapeString", b->shape_str);
    pj_str(&j, "tfOpName", nd->op_name, nd->op_name_len);
    pj_cstr(&j, "groupName", hlo_mem_category(&m->allocs[b->alloc]));
    pj_cstr(&j, "opCode", nd->opcode);
    source_info(&j, m, nd, "sourceInfo");
    out_putc(o, '}');
}

/* maxHeap or maxHeapBySize: the objects in peak order, or by size. */
static void heap_objects(struct pj *j, struct hlo_mem *m, const char *key, int by_size,
                         struct sbuf *sb)
{
    struct pj l = {j->o, 0};
    uint32_t i;

    if (m->nobjects == 0)
        return;
    pj_key(j, key);
    out_putc(j->o, '[');
    for (i = 0; i < m->nobjects; i++) {
        pj_next(&l);
        heap_object(j->o, m, &m->objects[by_size ? m->by_size[i] : i], sb);
    }
    out_putc(j->o, ']');
}

/* maxHeapToBySize and bySizeToMaxHeap. 0 or -ENOMEM. */
static int object_indexes(struct pj *j, const struct hlo_mem *m)
{
    struct pj a = {j->o, 0}, b = {j->o, 0};
    uint32_t *pos, i;

    if (m->nobjects == 0)
        return 0;
    pos = malloc(m->nobjects * sizeof(*pos));
    if (pos == NULL)
        return -ENOMEM;
    for (i = 0; i < m->nobjects; i++)
        pos[m->by_size[i]] = i;
    pj_key(j, "maxHeapToBySize");
    out_putc(j->o, '[');
    for (i = 0; i < m->nobjects; i++) {
        pj_next(&a);
        out_u64(j->o, pos[i]);
    }
    out_putc(j->o, ']');
    pj_key(j, "bySizeToMaxHeap");
    out_putc(j->o, '[');
    for (i = 0; i < m->nobjects; i++) {
        pj_next(&b);
        out_u64(j->o, m->by_size[i]);
    }
    out_putc(j->o, ']');
    free(pos);
    return 0;
}

/* heapSizes or unpaddedHeapSizes: each timeline point in MiB plus the
 * indefinite allocations' MiB. */
static void heap_sizes(struct pj *j, const struct hlo_mem *m, const char *key, const int64_t *bytes)
{
    struct pj l = {j->o, 0};
    double add = mib(m->indefinite_bytes);
    uint32_t i;

    if (m->ntimeline == 0)
        return;
    pj_key(j, key);
    out_putc(j->o, '[');
    for (i = 0; i < m->ntimeline; i++) {
        pj_next(&l);
        pbjson_double(j->o, mib(bytes[i]) + add);
    }
    out_putc(j->o, ']');
}

/* logicalBufferSpans: {"<id>": {"start": s, "limit": l}} by id. */
static void spans(struct pj *j, const struct hlo_mem *m)
{
    struct pj l = {j->o, 0};
    uint32_t i;

    if (m->nspans == 0)
        return;
    pj_key(j, "logicalBufferSpans");
    out_putc(j->o, '{');
    for (i = 0; i < m->nspans; i++) {
        struct pj s = {j->o, 0};
        pj_next(&l);
        out_printf(j->o, "\"%d\":{", m->spans[i].id);
        pj_int32(&s, "start", m->spans[i].start);
        pj_int32(&s, "limit", m->spans[i].limit);
        out_putc(j->o, '}');
    }
    out_putc(j->o, '}');
}

/* One LogicalBuffer of an indefinite allocation. */
static void lifetime_buffer(struct out *o, const struct hlo_mem *m,
                            const struct hlo_mem_assigned *as)
{
    struct pj j = {o, 0}, idx = {o, 0};
    const struct hlo_mem_lbuf *b = as->lbuf != HLO_MEM_NO_ID ? &m->lbufs[as->lbuf] : NULL;
    const struct hlo_node *nd = b ? &m->g.nodes[b->node] : NULL;
    uint32_t i;

    out_putc(o, '{');
    pj_int64(&j, "id", as->lb_id);
    if (b != NULL)
        pj_cstr(&j, "shape", b->shape_str);
    pj_double(&j, "sizeMib", mib(as->size));
    if (b != NULL) {
        pj_str(&j, "hloName", nd->name, nd->name_len);
        if (b->nshape_index > 0) {
            pj_key(&j, "shapeIndex");
            out_putc(o, '[');
            for (i = 0; i < b->nshape_index; i++) {
                pj_next(&idx);
                out_printf(o, "\"%lld\"", (long long)b->shape_index[i]);
            }
            out_putc(o, ']');
        }
    }
    out_putc(o, '}');
}

/* The shape all buffers of a share, or "" (XProf's common_shape). */
static const char *common_shape(const struct hlo_mem *m, const struct hlo_mem_alloc *a)
{
    const char *first = NULL;
    uint32_t i;

    for (i = 0; i < a->nassigned; i++) {
        int32_t lb = m->assigned[a->first + i].lbuf;
        const char *s = lb != HLO_MEM_NO_ID ? m->lbufs[lb].shape_str : "";
        if (first == NULL)
            first = s;
        else if (strcmp(first, s) != 0)
            return "";
    }
    return first ? first : "";
}

/* One BufferAllocation of indefiniteLifetimes. */
static void lifetime(struct out *o, const struct hlo_mem *m, const struct hlo_mem_alloc *a)
{
    struct pj j = {o, 0}, attrs = {o, 0}, bufs = {o, 0};
    uint32_t i;

    out_putc(o, '{');
    pj_int64(&j, "id", a->index);
    pj_double(&j, "sizeMib", mib(a->size));
    if (a->entry_param || a->live_out || (!a->thread_local && !a->tuple)) {
        pj_key(&j, "attributes");
        out_putc(o, '[');
        if (a->entry_param) {
            pj_next(&attrs);
            out_puts(o, "\"entry computation parameter\"");
        }
        if (a->live_out) {
            pj_next(&attrs);
            out_puts(o, "\"may-be live out\"");
        }
        if (!a->thread_local && !a->tuple) {
            pj_next(&attrs);
            out_puts(o, "\"reusable\"");
        }
        out_putc(o, ']');
    }
    if (a->nassigned > 0) {
        pj_key(&j, "logicalBuffers");
        out_putc(o, '[');
        for (i = 0; i < a->nassigned; i++) {
            pj_next(&bufs);
            lifetime_buffer(o, m, &m->assigned[a->first + i]);
        }
        out_putc(o, ']');
    }
    pj_cstr(&j, "commonShape", common_shape(m, a));
    out_putc(o, '}');
}

/* indefiniteLifetimes: the indefinite allocations of the colour. */
static void lifetimes(struct pj *j, const struct hlo_mem *m)
{
    struct pj l = {j->o, 0};
    uint32_t i;

    for (i = 0; i < m->nallocs; i++) {
        const struct hlo_mem_alloc *a = &m->allocs[i];
        if (a->color != m->color || !hlo_mem_indefinite(a))
            continue;
        if (l.n == 0) {
            pj_key(j, "indefiniteLifetimes");
            out_putc(j->o, '[');
        }
        pj_next(&l);
        lifetime(j->o, m, a);
    }
    if (l.n > 0)
        out_putc(j->o, ']');
}

/* hloInstructionNames: the instruction of each timeline point. */
static void instruction_names(struct pj *j, const struct hlo_mem *m)
{
    struct pj l = {j->o, 0};
    uint32_t i;

    if (m->ntimeline == 0)
        return;
    pj_key(j, "hloInstructionNames");
    out_putc(j->o, '[');
    for (i = 0; i < m->ntimeline; i++) {
        pj_next(&l);
        pbjson_str(j->o, m->names[i], m->name_lens[i]);
    }
    out_putc(j->o, ']');
}

/* One BufferBlockProto. */
static void block(struct out *o, struct hlo_mem *m, const struct hlo_mem_block *bl, struct sbuf *sb)
{
    struct pj j = {o, 0};
    const char *cat = hlo_mem_category(&m->allocs[bl->alloc]);
    const struct hlo_mem_lbuf *b = bl->lbuf != HLO_MEM_NO_ID ? &m->lbufs[bl->lbuf] : NULL;
    const struct hlo_node *nd = b ? &m->g.nodes[b->node] : NULL;

    out_putc(o, '{');
    pj_int32(&j, "logicalBufferId", b ? b->id : -1);
    if (b != NULL) {
        name_with_index(sb, m, b);
        pj_sbuf(&j, "name", sb);
    } else {
        pj_cstr(&j, "name", cat);
    }
    pj_double(&j, "offset", bl->offset);
    pj_double(&j, "size", bl->size);
    pj_int32(&j, "startStep", bl->start_step);
    pj_int32(&j, "endStep", bl->end_step);
    if (b != NULL)
        pj_str(&j, "tfOpName", nd->op_name, nd->op_name_len);
    pj_cstr(&j, "category", cat);
    if (b != NULL) {
        source_info(&j, m, nd, "sourceInfo");
        pj_cstr(&j, "shapeString", b->shape_str);
        pj_double(&j, "unpaddedSize", (double)b->unpadded);
    }
    pj_cstr(&j, "color", bl->color);
    out_putc(o, '}');
}

/* bufferBlocks. */
static void blocks(struct pj *j, struct hlo_mem *m, struct sbuf *sb)
{
    struct pj l = {j->o, 0};
    uint32_t i;

    if (m->nblocks == 0)
        return;
    pj_key(j, "bufferBlocks");
    out_putc(j->o, '[');
    for (i = 0; i < m->nblocks; i++) {
        pj_next(&l);
        block(j->o, m, &m->blocks[i], sb);
    }
    out_putc(j->o, ']');
}

/* The PreprocessResult JSON. 0 or -ENOMEM. */
static int write_json(struct out *o, struct hlo_mem *m)
{
    struct pj j = {o, 0};
    struct sbuf sb = {NULL, 0, 0, 0};
    double add = mib(m->indefinite_bytes);
    int rc;

    out_putc(o, '{');
    heap_sizes(&j, m, "heapSizes", m->heap);
    heap_sizes(&j, m, "unpaddedHeapSizes", m->unpadded_heap);
    heap_objects(&j, m, "maxHeap", 0, &sb);
    heap_objects(&j, m, "maxHeapBySize", 1, &sb);
    spans(&j, m);
    rc = object_indexes(&j, m);
    pj_cstr(&j, "moduleName", m->module_name);
    pj_cstr(&j, "entryComputationName", m->entry_name);
    pj_double(&j, "peakHeapMib", mib(m->peak) + add);
    pj_double(&j, "peakUnpaddedHeapMib", mib(m->peak_unpadded) + add);
    pj_int32(&j, "peakHeapSizePosition", m->peak_position);
    pj_double(&j, "entryComputationParametersMib", mib(m->entry_param_bytes));
    pj_double(&j, "nonReusableMib", mib(m->non_reusable_bytes));
    pj_double(&j, "maybeLiveOutMib", mib(m->live_out_bytes));
    lifetimes(&j, m);
    pj_double(&j, "totalBufferAllocationMib", mib(m->total_bytes));
    pj_double(&j, "indefiniteBufferAllocationMib", mib(m->indefinite_alloc_bytes));
    instruction_names(&j, m);
    if (m->scoped_bytes > 0) {
        pj_double(&j, "maxScopedVmemAllocationMib", mib(m->scoped_bytes));
        pj_cstr(&j, "maxScopedVmemInstructionName", m->scoped_instr);
    }
    blocks(&j, m, &sb);
    out_putc(o, '}');
    free(sb.p);
    return rc != 0 || sb.oom ? -ENOMEM : 0;
}

/* The DOT text of the timeline inside a JavaScript template literal:
 * backslashes, backquotes, "${" and "</" are escaped. */
static void js_template(struct out *o, const struct out *dot)
{
    size_t c, i;

    for (c = 0; c * OUT_CHUNK < dot->len; c++) {
        const char *p = dot->chunks[c];
        size_t n = dot->len - c * OUT_CHUNK < OUT_CHUNK ? dot->len - c * OUT_CHUNK : OUT_CHUNK;
        for (i = 0; i < n; i++) {
            if (p[i] == '\\' || p[i] == '`' || (p[i] == '$' && i + 1 < n && p[i + 1] == '{') ||
                (p[i] == '/' && i > 0 && p[i - 1] == '<'))
                out_putc(o, '\\');
            out_putc(o, p[i]);
        }
    }
}

/* view_memory_allocation_timeline: the timeline as a page that lays the
 * DOT out with Graphviz (neato) compiled to WebAssembly, as XProf's does,
 * or a short page saying there is none. */
static int write_timeline(struct out *o, const struct hlo_mem *m, int noise)
{
    struct out dot;

    if (!m->timeline) {
        out_puts(o, "<html><body style=\"font-family: sans-serif; padding: 20px;\">"
                    "<h2>No memory allocation timeline available</h2>"
                    "<p>There is no memory activity data to display for this timeline."
                    "</body></html>");
        return 0;
    }
    memset(&dot, 0, sizeof(dot));
    out_init(&dot);
    hlo_mem_dot(m, noise, &dot);
    out_puts(
        o, "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n"
           "<title>Memory allocation timeline</title>\n<style>\n"
           "body { height: 100vh; margin: 0; }\n"
           "#graph { height: 95vh; width: 100%; display: block; }\n"
           "#graph svg { height: 100% !important; width: 100% !important; }\n"
           "</style>\n</head>\n<body>\n<div id=\"graph\"></div>\n"
           "<script src=\"https://www.gstatic.com/external_hosted/hpcc_js_wasm/index.min.js\" "
           "integrity=\"sha384-LigJPbR3TOfU/Xbb+PjiN1dGJYPweLk7kiGnaMgmxnUmKWaCFKbb5tH6iLlyVhPZ\" "
           "crossorigin=\"anonymous\"></script>\n"
           "<script src=\"https://www.gstatic.com/external_hosted/svg_pan_zoom/svg-pan-zoom.js\">"
           "</script>\n<script>\nconst dot = `");
    js_template(o, &dot);
    out_puts(o, "`;\nwindow[\"@hpcc-js/wasm\"].graphviz.layout(dot, \"svg\", \"neato\")"
                ".then(function (svg) {\n"
                "  const box = document.getElementById(\"graph\");\n"
                "  box.innerHTML = svg;\n"
                "  svgPanZoom(box.children[0], {zoomEnabled: true, dblClickZoomEnabled: false,\n"
                "    controlIconsEnabled: true, maxZoom: 200, minZoom: 0});\n"
                "});\n</script>\n</body>\n</html>\n");
    if (out_failed(&dot))
        o->oom = 1;
    out_discard(&dot);
    return 0;
}

static int memory_viewer_produce(struct tool_ctx *ctx, struct out *o)
{
    const char *module = query_get(ctx->q, "module_name");
    const char *program = query_get(ctx->q, "program_id");
    struct hlo_proto_bytes bytes;
    struct hlo_mem m;
    struct host_list hosts = tool_hosts(ctx);
    double color = 0, timeline = 0, noise = 0;
    int rc;

    if ((module == NULL || !*module) && (program == NULL || !*program))
        return xp_err_set(ctx->err, -EINVAL,
                          "memory_viewer.json needs module_name=<module>(<program id>) or "
                          "program_id=<id>: module_list.json lists the modules");
    (void)query_num(ctx->q, "memory_space", &color);
    (void)query_num(ctx->q, "view_memory_allocation_timeline", &timeline);
    (void)query_num(ctx->q, "timeline_noise", &noise);
    rc = hlo_proto_find(ctx->snap, hosts.names, hosts.n, module, program, &bytes, ctx->err);
    if (rc != 0)
        return rc;
    rc = hlo_mem_build(bytes.p, bytes.n, (int64_t)color, &m, ctx->err);
    if (rc != 0) {
        xp_err_prefix(ctx->err, "HLO module '%s': ", bytes.name);
        hlo_proto_bytes_release(&bytes);
        return rc;
    }
    rc = timeline != 0 ? write_timeline(o, &m, noise != 0) : write_json(o, &m);
    hlo_mem_free(&m);
    hlo_proto_bytes_release(&bytes);
    return rc != 0 ? xp_err_set(ctx->err, rc, "out of memory") : 0;
}

/* Listed where XProf could have HLO protos: runs of xplanes or with
 * .hlo_proto.pb files (whether a profile holds any is known only once
 * opened; a request then says). */
static int memory_viewer_listed(const struct snapshot *snap)
{
    return snapshot_count(snap, SRC_XPLANE) > 0 || snapshot_count(snap, SRC_HLO_PROTO) > 0;
}

const struct tool tool_memory_viewer_json = {
    .file = "memory_viewer.json",
    .tag = "memory_viewer",
    .scope = TOOL_RUN | TOOL_HOST,
    .keys = memory_viewer_keys,
    .listed = memory_viewer_listed,
    .produce = memory_viewer_produce,
};
