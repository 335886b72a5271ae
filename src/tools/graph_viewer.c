/* SPDX-License-Identifier: Apache-2.0 */
/*
 * graph_viewer.c - graph_viewer.json?module_name=M&type=T: XProf's graph
 * viewer of one HLO module (xprof/convert/graph_viewer_processor.cc and
 * hlo_proto_to_graph_view.cc). One file answers every type, as XProf's
 * data?tag=graph_viewer route does (the UI proxy maps that route here and
 * sends XProf's content types):
 *
 *   type=graph&node_name=N   the Graphviz DOT of the neighbourhood of
 *                            instruction N (graph_width= radius, default 3),
 *                            or of all of computation N, as XLA's HLO graph
 *                            dumper writes it (hlo_view_dot.c lists what
 *                            differs); show_metadata= adds backend configs,
 *                            merge_fusion= draws fusions as single nodes.
 *                            format=dot the DOT, format=html XProf's page
 *                            that lays it out in the browser; format=url
 *                            (XProf's default) needs a URL renderer XProf's
 *                            open-source build does not register: EINVAL
 *   type=adj_nodes&node_name=N  {"consumer_names":[...],"operand_names":[...]}
 *                            of instruction N, through get-tuple-elements
 *                            (type=adjacent_nodes is the same)
 *   type=short_txt / long_txt   the module's text (hlo_view_text.c);
 *                            show_metadata= adds metadata={...}
 *   type=pb                  the HloProto bytes as stored
 *
 * type=json (XProf: "Not implemented"), pbtxt and custom_call are EINVAL
 * with the reason, as are a missing or unknown type, module or node. The
 * module is found by hlo_proto_find.h (module_name= or program_id=); XProf's
 * fallback of searching every module for node_name is not done.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/hlo_proto_find.h"
#include "hlo/hlo_view.h"
#include "tool.h"

static const struct query_key graph_viewer_keys[] = {
    {"format", Q_STRING, 0, 0},      {"graph_width", Q_INT, 0, 2147483647.0},
    {"merge_fusion", Q_BOOL, 0, 1},  {"module_name", Q_STRING, 0, 0},
    {"node_name", Q_STRING, 0, 0},   {"program_id", Q_STRING, 0, 0},
    {"show_metadata", Q_BOOL, 0, 1}, {"type", Q_STRING, 0, 0},
    {NULL, Q_STRING, 0, 0},
};

/* type=adj_nodes (GetAdjacentNodes). */
static int adj_nodes(struct tool_ctx *ctx, struct out *o, const struct hlo_view *v,
                     const char *node)
{
    uint32_t n;
    int rc;

    if (node == NULL || !*node)
        return xp_err_set(ctx->err, -EINVAL, "node_name should not be empty");
    n = hlo_view_find_node(v, node);
    if (n == HLO_VIEW_NONE && hlo_view_find_comp(v, node) != HLO_VIEW_NONE)
        return xp_err_set(ctx->err, -EINVAL,
                          "'%s' is a computation: type=adj_nodes takes an instruction "
                          "(XProf answers computations only with type=graph)",
                          node);
    if (n == HLO_VIEW_NONE)
        return xp_err_set(ctx->err, -EINVAL,
                          "Couldn't find HloInstruction or HloComputation named %s.", node);
    rc = hlo_view_adjacent(v, n, o);
    if (rc == -E2BIG)
        return xp_err_set(ctx->err, -EIO,
                          "node '%s': more than %zu steps through get-tuple-elements", node,
                          (size_t)HLO_VIEW_ADJ_MAX);
    return rc != 0 ? xp_err_set(ctx->err, rc, "out of memory") : 0;
}

/* The DOT inside a JavaScript template literal: backslashes, backquotes,
 * "${" and "</" escaped (the literal's value is the DOT unchanged). */
static void js_template(struct out *o, const struct out *dot)
{
    size_t c, i;
    char prev = 0;

    for (c = 0; c * OUT_CHUNK < dot->len; c++) {
        const char *p = dot->chunks[c];
        size_t n = dot->len - c * OUT_CHUNK < OUT_CHUNK ? dot->len - c * OUT_CHUNK : OUT_CHUNK;
        for (i = 0; i < n; i++) {
            char next = i + 1 < n ? p[i + 1] : 0;
            if (p[i] == '\\' || p[i] == '`' || (p[i] == '$' && next == '{') ||
                (p[i] == '/' && prev == '<'))
                out_putc(o, '\\');
            out_putc(o, p[i]);
            prev = p[i];
        }
    }
}

/* XProf's WrapDotInHtml (graphviz_helper.h) with the dot layout engine:
 * the page lays the DOT out with Graphviz compiled to WebAssembly and moves
 * the stylesheet into the SVG. */
static void wrap_html(struct out *o, const struct out *dot)
{
    out_puts(o, "\n<!DOCTYPE html>\n<html>\n<head>\n  <meta charset=\"utf-8\">\n"
                "  <style type=\"text/css\">\n    body {\n      height: 100vh;\n"
                "      margin: 0;\n    }\n"
                "    #graph-container {height:95vh;width:100%;padding:10px;display:block;}\n"
                "    #graph-container svg { height: 100% !important; width: 100% !important;}\n"
                "    .node, .cluster {cursor:pointer;}\n"
                "    .cluster:hover, .node:hover {outline: solid 3px black;}\n"
                "  </style>\n</head>\n<body>\n"
                "  <script src=\"https://www.gstatic.com/external_hosted/hpcc_js_wasm/"
                "index.min.js\"\n"
                "      integrity=\"sha384-LigJPbR3TOfU/Xbb+PjiN1dGJYPweLk7kiGnaMgmxnUmKWaCFKbb5tH6"
                "iLlyVhPZ\"\n      crossorigin=\"anonymous\"></script>\n"
                "  <script src=\"https://www.gstatic.com/external_hosted/svg_pan_zoom/"
                "svg-pan-zoom.js\"></script>\n"
                "  <div id=\"graph-container\"></div>\n  <script>\n"
                "    const cssregex = new RegExp('stylesheet=<([^]*)\\n>\\n', 'gm');\n"
                "    const hpccWasm = window[\"@hpcc-js/wasm\"];\n    const data = `");
    js_template(o, dot);
    out_puts(o, "`;\n    const results = cssregex.exec(data);\n"
                "    let dot_data = data;\n    let css_data = '';\n"
                "    if (results !== null) {\n"
                "        css_data = results[1].replace(/\\s*data:.*\\s*,/,'');\n"
                "        css_data = unescape(css_data);\n"
                "        dot_data = data.replace(cssregex, '');\n    }\n"
                "    var render_start = performance.now()\n"
                "    function add_controls(svg) {\n"
                "        var htmlblob = new Blob([document.documentElement.innerHTML],\n"
                "                                {type: 'text/html'});\n"
                "        var savehtml = document.createElement('a');\n"
                "        savehtml.setAttribute('href', URL.createObjectURL(htmlblob));\n"
                "        savehtml.setAttribute('download', 'graph.html');\n"
                "        savehtml.innerHTML = \" [Save HTML+SVG] \";\n"
                "        document.body.append(savehtml);\n"
                "        var svgblob = new Blob([svg], {type: 'image/svg'});\n"
                "        var savesvg = document.createElement('a');\n"
                "        savesvg.setAttribute('href', URL.createObjectURL(svgblob));\n"
                "        savesvg.setAttribute('download', 'graph.svg');\n"
                "        savesvg.innerHTML = \" [Save SVG] \";\n"
                "        document.body.append(savesvg);\n"
                "        var dotblob =  new Blob([data], {type: 'text/dot'});\n"
                "        var savedot = document.createElement('a');\n"
                "        savedot.setAttribute('href', URL.createObjectURL(dotblob));\n"
                "        savedot.setAttribute('download', 'graph.dot');\n"
                "        savedot.innerHTML = \" [Save DOT] \";\n"
                "        document.body.append(savedot);\n"
                "        var render_end = performance.now();\n"
                "        var render_note = document.createElement('div')\n"
                "        render_note.innerHTML = 'Rendering took '\n"
                "                                + (render_end - render_start).toFixed(2) + "
                "\"ms.\"\n"
                "        document.body.append(render_note);\n    }\n"
                "    const render_callback = svg => {\n"
                "      const container = document.getElementById('graph-container')\n"
                "      container.innerHTML = `${svg}<style>${css_data}</style>`;\n"
                "      const panZoom = svgPanZoom(container.children[0], {\n"
                "        zoomEnabled: true,\n        dblClickZoomEnabled: false,\n"
                "        controlIconsEnabled: true,\n        maxZoom: 200,\n        minZoom: 0,\n"
                "      });\n      add_controls(svg);\n    };\n"
                "    hpccWasm.graphviz.layout(dot_data, \"svg\", \"dot\").then(render_callback);\n"
                "  </script>\n</body>\n</html>\n");
}

/* type=graph (Plot, then WrapDotInFormat). */
static int graph(struct tool_ctx *ctx, struct out *o, const struct hlo_view *v, const char *node)
{
    const char *format = query_get(ctx->q, "format");
    double width = 3, meta = 0, merge = 0;
    struct hlo_dot_opts opts;
    uint32_t n, c;
    struct out dot;
    int html, rc;

    if (format == NULL)
        format = "url";
    if (strcmp(format, "dot") != 0 && strcmp(format, "html") != 0 && strcmp(format, "url") != 0)
        return xp_err_set(ctx->err, -EINVAL,
                          "Invalid graph format argument: %s (format=dot, html or url)", format);
    if (node == NULL || !*node)
        return xp_err_set(ctx->err, -EINVAL, "node_name should not be empty");
    n = hlo_view_find_node(v, node);
    c = hlo_view_find_comp(v, node);
    if (n == HLO_VIEW_NONE && c == HLO_VIEW_NONE)
        return xp_err_set(ctx->err, -EINVAL,
                          "Couldn't find HloInstruction or HloComputation named %s.", node);
    if (strcmp(format, "url") == 0)
        return xp_err_set(ctx->err, -EINVAL,
                          "Can't render as URL; no URL renderer was registered (ask for "
                          "format=dot or format=html)");
    (void)query_num(ctx->q, "graph_width", &width);
    (void)query_num(ctx->q, "show_metadata", &meta);
    (void)query_num(ctx->q, "merge_fusion", &merge);
    opts.show_backend_config = meta != 0;
    opts.show_fusion = merge == 0;
    html = strcmp(format, "html") == 0;
    memset(&dot, 0, sizeof(dot));
    out_init(&dot);
    if (c != HLO_VIEW_NONE)
        rc = hlo_view_dot_comp(v, c, &opts, html ? &dot : o);
    else
        rc = hlo_view_dot_around(v, n, (int64_t)width, &opts, html ? &dot : o);
    if (rc == 0 && html)
        wrap_html(o, &dot);
    if (out_failed(&dot))
        rc = -ENOMEM;
    out_discard(&dot);
    return rc != 0 ? xp_err_set(ctx->err, rc, "out of memory drawing the graph") : 0;
}

/* The types XProf's ParseGraphViewerParams accepts (and adjacent_nodes). */
static const char *const types[] = {"graph",     "json",        "pb",
                                    "pbtxt",     "short_txt",   "long_txt",
                                    "adj_nodes", "custom_call", "adjacent_nodes"};

/* The type's answer from the open module. */
static int answer(struct tool_ctx *ctx, struct out *o, const struct hlo_view *v, const char *type)
{
    const char *node = query_get(ctx->q, "node_name");
    double meta = 0;

    if (strcmp(type, "graph") == 0)
        return graph(ctx, o, v, node);
    if (strcmp(type, "adj_nodes") == 0 || strcmp(type, "adjacent_nodes") == 0)
        return adj_nodes(ctx, o, v, node);
    (void)query_num(ctx->q, "show_metadata", &meta);
    if (hlo_view_print_module(v, o, strcmp(type, "long_txt") == 0, meta != 0) != 0)
        return xp_err_set(ctx->err, -ENOMEM, "out of memory printing the module");
    return 0;
}

static int graph_viewer_produce(struct tool_ctx *ctx, struct out *o)
{
    const char *module = query_get(ctx->q, "module_name");
    const char *program = query_get(ctx->q, "program_id");
    const char *type = query_get(ctx->q, "type");
    struct host_list hosts = tool_hosts(ctx);
    struct hlo_proto_bytes bytes;
    struct hlo_view v;
    size_t i;
    int rc;

    if (type == NULL || !*type)
        return xp_err_set(ctx->err, -EINVAL,
                          "Graph viewer must provide a type option (type=graph, adj_nodes, "
                          "short_txt, long_txt or pb)");
    for (i = 0; i < sizeof(types) / sizeof(types[0]) && strcmp(types[i], type) != 0; i++)
        ;
    if (i == sizeof(types) / sizeof(types[0]))
        return xp_err_set(ctx->err, -EINVAL, "Unknown graph viewer type option: %s", type);
    if (strcmp(type, "json") == 0)
        return xp_err_set(ctx->err, -EINVAL, "type=json: Not implemented (XProf's answer)");
    if (strcmp(type, "pbtxt") == 0 || strcmp(type, "custom_call") == 0)
        return xp_err_set(ctx->err, -EINVAL,
                          "type=%s is not supported here (type=short_txt, long_txt or pb give "
                          "the module)",
                          type);
    if ((module == NULL || !*module) && (program == NULL || !*program))
        return xp_err_set(ctx->err, -EINVAL,
                          "graph_viewer.json needs module_name=<module>(<program id>) or "
                          "program_id=<id>: module_list.json lists the modules");
    rc = hlo_proto_find(ctx->snap, hosts.names, hosts.n, module, program, &bytes, ctx->err);
    if (rc == -ENOENT)
        ctx->err->code = rc = -EINVAL; /* a module the run does not have: a bad request */
    if (rc != 0)
        return rc;
    if (strcmp(type, "pb") == 0) {
        if (bytes.n > 0)
            out_write(o, bytes.p, bytes.n);
        hlo_proto_bytes_release(&bytes);
        return 0;
    }
    rc = hlo_view_open(&v, bytes.p, bytes.n, ctx->err);
    if (rc == 0) {
        rc = answer(ctx, o, &v, type);
        hlo_view_release(&v);
    }
    if (rc != 0 && rc != -EINVAL)
        xp_err_prefix(ctx->err, "HLO module '%s': ", bytes.name);
    hlo_proto_bytes_release(&bytes);
    return rc;
}

/* Listed where XProf could have HLO protos, as memory_viewer.json. */
static int graph_viewer_listed(const struct snapshot *snap)
{
    return snapshot_count(snap, SRC_XPLANE) > 0 || snapshot_count(snap, SRC_HLO_PROTO) > 0;
}

const struct tool tool_graph_viewer_json = {
    .file = "graph_viewer.json",
    .tag = "graph_viewer",
    .scope = TOOL_RUN | TOOL_HOST,
    .keys = graph_viewer_keys,
    .listed = graph_viewer_listed,
    .produce = graph_viewer_produce,
};
