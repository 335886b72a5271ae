/*
 * agent_cmd_hlo.c - the HLO commands of XProf's agent CLI (its
 * hlo_tools.py and get_graph_viewer_tool.py): list_hlo_modules,
 * get_hlo_module_content, get_hlo_neighborhood, get_hlo_text,
 * get_graph_viewer and get_hlo_stats, from module_list.json,
 * graph_viewer.json and hlo_stats.json.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent.h"
#include "agent_cmds.h"
#include "agent_pyjson.h"
#include "agent_session.h"

/* The run's HLO modules as XProf's get_hlo_proto_files lists them: the
 * <module>.hlo_proto.pb names in file-name order, without NO_MODULE. */
struct modules {
    char **names;
    int n;
};

static void modules_free(struct modules *m)
{
    int i;

    for (i = 0; i < m->n; i++)
        free(m->names[i]);
    free(m->names);
    m->names = NULL;
    m->n = 0;
}

static int by_file_name(const void *a, const void *b)
{
    char x[2048], y[2048];

    snprintf(x, sizeof(x), "%s.hlo_proto.pb", *(char *const *)a);
    snprintf(y, sizeof(y), "%s.hlo_proto.pb", *(char *const *)b);
    return strcmp(x, y);
}

static int modules_of(struct agent_ctx *ctx, struct modules *m)
{
    cJSON *doc, *e;
    int rc = agent_tool_json(ctx, "module_list.json", NULL, &doc);

    m->names = NULL;
    m->n = 0;
    if (rc == -ENOENT)
        return 0;
    if (rc != 0)
        return rc;
    m->names = calloc((size_t)cJSON_GetArraySize(doc) + 1, sizeof(*m->names));
    if (m->names == NULL) {
        cJSON_Delete(doc);
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    }
    cJSON_ArrayForEach(e, doc)
    {
        if (!cJSON_IsString(e) || strcmp(e->valuestring, "NO_MODULE") == 0 ||
            e->valuestring[0] == '\0')
            continue;
        if ((m->names[m->n] = strdup(e->valuestring)) == NULL) {
            cJSON_Delete(doc);
            modules_free(m);
            return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
        }
        m->n++;
    }
    cJSON_Delete(doc);
    if (m->n == 0) {
        modules_free(m);
        return 0;
    }
    qsort(m->names, (size_t)m->n, sizeof(*m->names), by_file_name);
    return 0;
}

int agent_hlo_module_names(struct agent_ctx *ctx, char ***names, int *n)
{
    struct modules m;
    int rc = modules_of(ctx, &m);

    *names = m.names;
    *n = m.n;
    return rc;
}

int agent_list_hlo_modules(struct agent_ctx *ctx)
{
    struct modules m;
    char *text = NULL;
    size_t len = 0;
    FILE *f;
    int i, rc = modules_of(ctx, &m);

    if (rc != 0)
        return rc;
    if (m.n == 0)
        return agent_answer_text(ctx, "No HLO modules found. Ensure you have run a compilation or "
                                      "imported traces with HLO.");
    f = open_memstream(&text, &len);
    if (f == NULL) {
        modules_free(&m);
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    }
    fprintf(f, "Found %d HLO modules:", m.n);
    for (i = 0; i < m.n; i++)
        fprintf(f, "\n%d. %s", i, m.names[i]);
    modules_free(&m);
    if (fclose(f) != 0 || text == NULL)
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    rc = agent_answer_text(ctx, text);
    free(text);
    return rc;
}

void agent_query_encode(const char *s, char *buf, size_t n)
{
    size_t j = 0;

    for (; *s && j + 4 < n; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            strchr("-_.()", c) != NULL)
            buf[j++] = (char)c;
        else
            j += (size_t)snprintf(buf + j, n - j, "%%%02X", c);
    }
    buf[j] = '\0';
}

/* The module XProf picks: module_name when the run has it, else the
 * first. 0 and *target, or 1 with XProf's text answer set. */
static int pick_module(struct agent_ctx *ctx, const struct modules *m, const char *module_name,
                       const char **target)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f;
    int i, rc;

    if (m->n == 0)
        return agent_answer_text(ctx, "No HLO proto found.") == 0 ? 1 : AGENT_E_INTERNAL;
    if (module_name == NULL || module_name[0] == '\0') {
        *target = m->names[0];
        return 0;
    }
    for (i = 0; i < m->n; i++) {
        if (strcmp(m->names[i], module_name) == 0) {
            *target = m->names[i];
            return 0;
        }
    }
    f = open_memstream(&text, &len);
    if (f == NULL)
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    fprintf(f, "Module '%s' not found. Available: ", module_name);
    for (i = 0; i < m->n; i++)
        fprintf(f, "%s%s", i ? ", " : "", m->names[i]);
    if (fclose(f) != 0 || text == NULL)
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    rc = agent_answer_text(ctx, text);
    free(text);
    return rc == 0 ? 1 : rc;
}

/* graph_viewer.json?type=short_txt|long_txt&module_name=M into *text. 0,
 * or 1 with the answer `<what>: ValueError('<reason>')` set. */
static int module_text(struct agent_ctx *ctx, const char *module, int metadata, const char *what,
                       char **text)
{
    char enc[2048], query[2200], repr[1200];
    size_t len;
    int rc;

    agent_query_encode(module, enc, sizeof(enc));
    snprintf(query, sizeof(query), "type=%s&module_name=%s", metadata ? "long_txt" : "short_txt",
             enc);
    rc = agent_tool_bytes(ctx, "graph_viewer.json", query, text, &len);
    if (rc == AGENT_E_VALUE || rc == -ENOENT) {
        char msg[2600];
        py_str_repr(ctx->msg, repr, sizeof(repr));
        snprintf(msg, sizeof(msg), "%s: ValueError(%s)", what, repr);
        ctx->msg[0] = '\0';
        return agent_answer_text(ctx, msg) == 0 ? 1 : AGENT_E_INTERNAL;
    }
    return rc;
}

/* get_hlo_module_content's answer into ctx->out (0, or an AGENT_E_*). */
static int module_content(struct agent_ctx *ctx, const char *fmt, const char *module_name,
                          long long max_lines, int metadata)
{
    struct modules m;
    const char *target;
    char *text, *p;
    long lines = 0, cut = 0;
    int rc = modules_of(ctx, &m);

    if (rc != 0)
        return rc;
    rc = pick_module(ctx, &m, module_name, &target);
    if (rc != 0) {
        modules_free(&m);
        return rc == 1 ? 0 : rc;
    }
    if (fmt == NULL || strcmp(fmt, "text") != 0) {
        char msg[1200];
        modules_free(&m);
        snprintf(msg, sizeof(msg), "Unsupported format: %s", fmt ? fmt : "None");
        return agent_answer_text(ctx, msg);
    }
    rc = module_text(ctx, target, metadata, "Error fetching HLO module content", &text);
    modules_free(&m);
    if (rc != 0)
        return rc == 1 ? 0 : rc;
    if (max_lines > 0) {
        /* str.splitlines(): a final newline ends the last line */
        for (p = text; *p; p++) {
            if (*p == '\n' || p[1] == '\0') {
                lines++;
                if (lines == max_lines)
                    cut = p - text + (*p == '\n' ? 0 : 1);
            }
        }
        if (lines > max_lines) {
            char note[160];
            snprintf(
                note, sizeof(note),
                "\n... (truncated after %lld lines, total %ld). Use 'max_lines=-1' to see all)",
                max_lines, lines);
            text[cut] = '\0';
            rc = agent_answer_text(ctx, text);
            if (rc == 0) {
                char *joined = malloc(strlen(ctx->out) + strlen(note) + 1);
                if (joined == NULL) {
                    free(text);
                    return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
                }
                strcpy(joined, ctx->out);
                strcat(joined, note);
                rc = agent_answer_text(ctx, joined);
                free(joined);
            }
            free(text);
            return rc;
        }
    }
    rc = agent_answer_text(ctx, text);
    free(text);
    return rc;
}

int agent_get_hlo_module_content(struct agent_ctx *ctx)
{
    long long max_lines;
    int rc = agent_int(ctx, "max_lines", 2000, &max_lines);

    if (rc != 0)
        return rc;
    return module_content(ctx, agent_str(ctx, "fmt", "text"), agent_str(ctx, "module_name", NULL),
                          max_lines, agent_bool(ctx, "print_metadata", 0));
}

/* One instruction line of the module text. */
struct instr {
    char *name;
    char *line; /* the line, stripped */
    const char *comp;
    char **operands;
    int noperands;
    int *users; /* instruction indexes, with repeats, in order */
    int nusers, capusers;
    int dist;
};

struct graph {
    struct instr *v;
    int n, cap;
    int *index; /* live instructions by name */
    int nindex;
    char **comps;
    int ncomps;
};

static int is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

static const struct graph *sort_graph; /* for qsort's comparator */

static int by_name_pos(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    int c = strcmp(sort_graph->v[x].name, sort_graph->v[y].name);
    return c ? c : (x < y ? -1 : x > y);
}

static int find_instr(const struct graph *g, const char *name)
{
    int lo = 0, hi = g->nindex;

    while (lo < hi) {
        int mid = (lo + hi) / 2, c = strcmp(g->v[g->index[mid]].name, name);
        if (c == 0)
            return g->index[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* The index by name; of a name on several lines the first position keeps
 * the last line, computation and operands (a dict's assignment). */
static int index_graph(struct graph *g)
{
    int i, j, k;

    g->index = malloc(((size_t)g->n + 1) * sizeof(*g->index));
    if (g->index == NULL)
        return -ENOMEM;
    for (i = 0; i < g->n; i++)
        g->index[i] = i;
    sort_graph = g;
    qsort(g->index, (size_t)g->n, sizeof(*g->index), by_name_pos);
    for (i = 0, k = 0; i < g->n; i = j) {
        struct instr *first = &g->v[g->index[i]];
        for (j = i + 1; j < g->n && strcmp(g->v[g->index[j]].name, first->name) == 0; j++) {
            struct instr *later = &g->v[g->index[j]];
            struct instr tmp = *first;
            first->line = later->line;
            first->comp = later->comp;
            first->operands = later->operands;
            first->noperands = later->noperands;
            later->line = tmp.line;
            later->operands = tmp.operands;
            later->noperands = tmp.noperands;
            later->dist = -2; /* dead */
        }
        g->index[k++] = g->index[i];
    }
    g->nindex = k;
    return 0;
}

static void graph_free(struct graph *g)
{
    int i, j;

    for (i = 0; i < g->n; i++) {
        free(g->v[i].name);
        free(g->v[i].line);
        for (j = 0; j < g->v[i].noperands; j++)
            free(g->v[i].operands[j]);
        free(g->v[i].operands);
        free(g->v[i].users);
    }
    free(g->v);
    for (i = 0; i < g->ncomps; i++)
        free(g->comps[i]);
    free(g->comps);
    free(g->index);
}

/* %name operands of rhs, less its metadata={...} (non-greedy). */
static int parse_operands(struct instr *in, const char *rhs)
{
    const char *p = rhs;

    while (*p) {
        if (strncmp(p, "metadata={", 10) == 0 && strchr(p + 10, '}') != NULL) {
            p = strchr(p + 10, '}') + 1;
            continue;
        }
        if (*p == '%' && is_name_char(p[1])) {
            const char *s = ++p;
            char **ops;
            while (is_name_char(*p))
                p++;
            ops = realloc(in->operands, (size_t)(in->noperands + 1) * sizeof(*ops));
            if (ops == NULL)
                return -ENOMEM;
            in->operands = ops;
            if ((ops[in->noperands] = strndup(s, (size_t)(p - s))) == NULL)
                return -ENOMEM;
            in->noperands++;
            continue;
        }
        p++;
    }
    return 0;
}

/* A line "%?NAME\s*=REST" (fullmatch), its name into *name. */
static const char *instr_rhs(const char *line, size_t *name_len, const char **name)
{
    const char *p = line;

    if (*p == '%')
        p++;
    *name = p;
    while (is_name_char(*p))
        p++;
    if (p == *name)
        return NULL;
    *name_len = (size_t)(p - *name);
    while (*p == ' ' || *p == '\t' || *p == '\f' || *p == '\v' || *p == '\r')
        p++;
    return *p == '=' ? p + 1 : NULL;
}

static int build_graph(struct graph *g, char *text)
{
    const char *comp = "unknown";
    char *line = text, *next;

    memset(g, 0, sizeof(*g));
    for (; line != NULL; line = next) {
        char *s, *e, *clean;
        const char *rhs, *name;
        size_t nlen;
        struct instr *in;
        next = strchr(line, '\n');
        if (next != NULL)
            *next++ = '\0';
        if (line[0] == '%') {
            const char *p = line + 1, *n0 = p;
            while (is_name_char(*p))
                p++;
            if (p > n0) {
                const char *q = p;
                while (*q == ' ' || *q == '\t')
                    q++;
                if (*q == '(') {
                    char **cs = realloc(g->comps, (size_t)(g->ncomps + 1) * sizeof(*cs));
                    if (cs == NULL || (cs[g->ncomps] = strndup(n0, (size_t)(p - n0))) == NULL) {
                        if (cs != NULL)
                            g->comps = cs;
                        return -ENOMEM;
                    }
                    g->comps = cs;
                    comp = cs[g->ncomps++];
                }
            }
            continue;
        }
        for (s = line; *s == ' ' || *s == '\t' || *s == '\r'; s++)
            ;
        for (e = s + strlen(s); e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'); e--)
            ;
        *e = '\0';
        clean = strncmp(s, "ROOT ", 5) == 0 ? s + 5 : s;
        rhs = instr_rhs(clean, &nlen, &name);
        if (rhs == NULL)
            continue;
        if (g->n == g->cap) {
            int cap = g->cap ? g->cap * 2 : 256;
            struct instr *v = realloc(g->v, (size_t)cap * sizeof(*v));
            if (v == NULL)
                return -ENOMEM;
            g->v = v;
            g->cap = cap;
        }
        in = &g->v[g->n];
        memset(in, 0, sizeof(*in));
        in->name = strndup(name, nlen);
        in->line = strdup(s);
        in->comp = comp;
        in->dist = -1;
        g->n++;
        if (in->name == NULL || in->line == NULL || parse_operands(in, rhs) != 0)
            return -ENOMEM;
    }
    return 0;
}

/* users_by_name: each operand name's users, in line order with repeats.
 * (An operand that is no instruction of the text is never visited.) */
static int link_users(struct graph *g)
{
    int i, j;

    for (i = 0; i < g->n; i++) {
        /* a replaced line's operands still name it as their user */
        int user = g->v[i].dist == -2 ? find_instr(g, g->v[i].name) : i;
        for (j = 0; j < g->v[i].noperands; j++) {
            int op = find_instr(g, g->v[i].operands[j]);
            struct instr *o;
            if (op < 0)
                continue;
            o = &g->v[op];
            if (o->nusers == o->capusers) {
                int cap = o->capusers ? o->capusers * 2 : 4;
                int *u = realloc(o->users, (size_t)cap * sizeof(*u));
                if (u == NULL)
                    return -ENOMEM;
                o->users = u;
                o->capusers = cap;
            }
            o->users[o->nusers++] = user;
        }
    }
    return 0;
}

struct visit {
    int dist;
    const char *name;
    int index;
};

static int by_dist_name(const void *a, const void *b)
{
    const struct visit *x = a, *y = b;
    if (x->dist != y->dist)
        return x->dist < y->dist ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int neighborhood(struct agent_ctx *ctx, const char *instruction, long long radius,
                        const char *module_name, int metadata)
{
    struct modules m;
    struct graph g;
    struct visit *queue;
    const char *target;
    char *text = NULL, *out = NULL;
    size_t len = 0;
    int rc, start, head = 0, tail = 0, i;
    FILE *f;

    if (instruction[0] == '%')
        instruction++;
    rc = modules_of(ctx, &m);
    if (rc != 0)
        return rc;
    rc = pick_module(ctx, &m, module_name, &target);
    if (rc != 0) {
        modules_free(&m);
        return rc == 1 ? 0 : rc;
    }
    rc = module_text(ctx, target, metadata, "Error analyzing neighborhood", &text);
    modules_free(&m);
    if (rc != 0)
        return rc == 1 ? 0 : rc;
    if (build_graph(&g, text) != 0 || index_graph(&g) != 0 || link_users(&g) != 0) {
        graph_free(&g);
        free(text);
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    }
    free(text);
    f = open_memstream(&out, &len);
    queue = calloc((size_t)g.n + 1, sizeof(*queue));
    if (f == NULL || queue == NULL) {
        if (f != NULL)
            fclose(f);
        free(out);
        free(queue);
        graph_free(&g);
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    }
    start = find_instr(&g, instruction);
    if (start < 0) {
        fprintf(f, "Instruction '%s' not found in HLO module.", instruction);
        int shown = 0;
        for (i = 0; i < g.n && shown < 10; i++) {
            if (g.v[i].dist == -2)
                continue;
            fprintf(f, "%s%s", shown++ ? ", " : " Suggestions: ", g.v[i].name);
        }
    } else {
        g.v[start].dist = 0;
        queue[tail++] = (struct visit){0, g.v[start].name, start};
        while (head < tail) {
            struct visit cur = queue[head++];
            const struct instr *in = &g.v[cur.index];
            int j;
            if (cur.dist >= radius)
                continue;
            for (j = 0; j < in->noperands; j++) {
                int op = find_instr(&g, in->operands[j]);
                if (op >= 0 && g.v[op].dist < 0) {
                    g.v[op].dist = cur.dist + 1;
                    queue[tail++] = (struct visit){cur.dist + 1, g.v[op].name, op};
                }
            }
            for (j = 0; j < in->nusers; j++) {
                int u = in->users[j];
                if (g.v[u].dist < 0) {
                    g.v[u].dist = cur.dist + 1;
                    queue[tail++] = (struct visit){cur.dist + 1, g.v[u].name, u};
                }
            }
        }
        qsort(queue, (size_t)tail, sizeof(*queue), by_dist_name);
        fprintf(f, "Neighborhood of '%s' (radius=%lld):", instruction, radius);
        for (i = 0; i < tail; i++) {
            int d;
            fputc('\n', f);
            for (d = 0; d <= queue[i].dist; d++)
                fputs("  ", f);
            fprintf(f, "[dist=%d] [%s] %s", queue[i].dist, g.v[queue[i].index].comp,
                    g.v[queue[i].index].line);
        }
    }
    free(queue);
    graph_free(&g);
    if (fclose(f) != 0 || out == NULL)
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    rc = agent_answer_text(ctx, out);
    free(out);
    return rc;
}

int agent_get_hlo_neighborhood(struct agent_ctx *ctx)
{
    const char *instruction = agent_str(ctx, "instruction_name", NULL);
    long long radius;
    int rc = agent_int(ctx, "radius", 2, &radius);

    if (rc != 0)
        return rc;
    if (instruction == NULL)
        return agent_answer_text(ctx, "Error analyzing neighborhood: AttributeError(\"'NoneType' "
                                      "object has no attribute 'startswith'\")");
    return neighborhood(ctx, instruction, radius, agent_str(ctx, "module_name", NULL),
                        agent_bool(ctx, "print_metadata", 0));
}

/* path.parent.mkdir(parents=True, exist_ok=True) */
static int make_parents(const char *path)
{
    char buf[4096], *p;

    snprintf(buf, sizeof(buf), "%s", path);
    for (p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return 0;
}

int agent_get_hlo_text(struct agent_ctx *ctx)
{
    const char *op_name = agent_str(ctx, "op_name", NULL);
    const char *module_name = agent_str(ctx, "module_name", NULL);
    const char *path = agent_str(ctx, "path", NULL);
    char *full;
    int rc;

    if (op_name != NULL && op_name[0] != '\0')
        rc = neighborhood(ctx, op_name, 2, module_name, 0);
    else
        rc = module_content(ctx, "text", module_name, 2000, 0);
    if (rc != 0)
        return rc;
    if (path != NULL && path[0] != '\0') {
        FILE *f;
        full = agent_expand_user(path);
        f = full != NULL && make_parents(full) == 0 ? fopen(full, "w") : NULL;
        free(full);
        if (f == NULL || fwrite(ctx->out, 1, ctx->out_len, f) != ctx->out_len) {
            if (f != NULL)
                fclose(f);
            return agent_fail(ctx, AGENT_E_INTERNAL, "Error retrieving HLO text");
        }
        if (fclose(f) != 0)
            return agent_fail(ctx, AGENT_E_INTERNAL, "Error retrieving HLO text");
    }
    return 0;
}

/* bytes.decode("utf-8", errors="replace"), each bad byte as U+FFFD. */
static char *utf8_replace(const char *s, size_t n)
{
    char *out = malloc(n * 3 + 1);
    size_t i = 0, j = 0;

    if (out == NULL)
        return NULL;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        size_t len = c < 0x80                          ? 1
                     : (c & 0xE0) == 0xC0 && c >= 0xC2 ? 2
                     : (c & 0xF0) == 0xE0              ? 3
                     : (c & 0xF8) == 0xF0 && c <= 0xF4 ? 4
                                                       : 0;
        size_t k;
        int ok = len > 0 && i + len <= n;
        for (k = 1; ok && k < len; k++)
            ok = ((unsigned char)s[i + k] & 0xC0) == 0x80;
        if (ok && c != 0) {
            memcpy(out + j, s + i, len);
            j += len;
            i += len;
        } else {
            memcpy(out + j, "\xEF\xBF\xBD", 3);
            j += 3;
            i++;
        }
    }
    out[j] = '\0';
    return out;
}

int agent_get_graph_viewer(struct agent_ctx *ctx)
{
    const char *session = agent_str(ctx, "session_id", "");
    const char *symbol = agent_str(ctx, "symbol_id", "");
    const char *module = agent_str(ctx, "module_name", "");
    const char *type = agent_str(ctx, "output_type", "short_txt");
    const char *node = agent_str(ctx, "node_name", "");
    char query[4096], enc[2048], *data, *text;
    long long width;
    size_t len, q;
    struct modules m = {NULL, 0};
    int rc;

    if (ctx->session_id != NULL && ctx->session_id[0] != '\0')
        session = ctx->session_id;
    if (session != NULL && session[0] && symbol != NULL && symbol[0])
        return agent_answer_error(ctx, "Cannot set both session_id and symbol_id");
    if ((session == NULL || !session[0]) && (symbol == NULL || !symbol[0]))
        return agent_answer_error(ctx, "Either session_id or symbol_id must be provided");
    if ((rc = agent_int(ctx, "graph_width", 1, &width)) != 0)
        return rc;
    if (symbol != NULL && symbol[0])
        return agent_answer_error(ctx, "Error fetching data for graph_viewer.json: "
                                       "FileNotFoundError('Path not found: xsymbol')");
    if (ctx->snap == NULL && (rc = agent_open_run(ctx)) != 0)
        return rc;
    if (module == NULL || !module[0]) {
        if ((rc = modules_of(ctx, &m)) != 0)
            return rc;
        module = m.n > 0 ? m.names[0] : "";
    }
    if (!module[0]) {
        modules_free(&m);
        cJSON *o = cJSON_CreateObject();
        pyj_add_str(o, "error", "NO_HLO_PROTO_IN_PROFILE");
        pyj_add_str(o, "message",
                    "No compiled HLO module proto found in profile session. To capture HLO "
                    "graphs, export XLA_FLAGS='--xla_dump_to=<logdir> --xla_dump_hlo_as_proto' "
                    "before profiling.");
        return agent_answer_json(ctx, o, 2);
    }
    agent_query_encode(type ? type : "None", enc, sizeof(enc));
    q = (size_t)snprintf(query, sizeof(query), "type=%s&show_metadata=%s", enc,
                         agent_bool(ctx, "show_metadata", 1) ? "true" : "false");
    agent_query_encode(module, enc, sizeof(enc));
    q += (size_t)snprintf(query + q, sizeof(query) - q, "&module_name=%s", enc);
    modules_free(&m);
    if (node != NULL && node[0]) {
        agent_query_encode(node, enc, sizeof(enc));
        q += (size_t)snprintf(query + q, sizeof(query) - q, "&node_name=%s", enc);
    }
    if (width != 1)
        q += (size_t)snprintf(query + q, sizeof(query) - q, "&graph_width=%lld", width);
    if (agent_bool(ctx, "merge_fusion", 0))
        snprintf(query + q, sizeof(query) - q, "&merge_fusion=true");
    rc = agent_tool_bytes(ctx, "graph_viewer.json", query, &data, &len);
    if (rc == AGENT_E_VALUE || rc == -ENOENT) {
        char repr[1200];
        py_str_repr(ctx->msg, repr, sizeof(repr));
        ctx->msg[0] = '\0';
        return agent_answer_error(ctx, "Error fetching data for graph_viewer.json: ValueError(%s)",
                                  repr);
    }
    if (rc != 0)
        return rc;
    if (len == 0) {
        cJSON *o = cJSON_CreateObject();
        free(data);
        pyj_add_str(o, "error", "NO_HLO_DATA_IN_PROFILE");
        pyj_add_str(o, "message",
                    "No graph_viewer data found in profile session. Ensure workload was profiled "
                    "with XLA_FLAGS='--xla_dump_to=<logdir> --xla_dump_hlo_as_proto'.");
        return agent_answer_json(ctx, o, 2);
    }
    text = utf8_replace(data, len);
    free(data);
    if (text == NULL)
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    rc = agent_answer_text(ctx, text);
    free(text);
    return rc;
}

int agent_get_hlo_stats(struct agent_ctx *ctx)
{
    char *data;
    size_t len;
    int rc = agent_tool_bytes(ctx, "hlo_stats.json", NULL, &data, &len);

    if (rc == -ENOENT)
        return agent_answer_text(ctx, "None");
    if (rc != 0)
        return rc;
    rc = agent_answer_text(ctx, data);
    free(data);
    return rc;
}
