/*
 * tool.h - the table of virtual files a run directory holds.
 *
 * Each tool lives in one file under src/tools/ and defines one struct tool per
 * file name it serves; src/tools/registry.c lists them all. Listing a run,
 * validating a query and tools.json read this table, so a new tool is one new
 * file and one line in registry.c.
 *
 * produce() writes the whole file through the struct out. It reads the run
 * only through ctx->snap (never the file system directly), and returns 0 or a
 * negative errno with ctx->err filled: -EIO for bad input, -EINVAL for a bad
 * request, -ENOENT when the run has no data for it.
 */
#ifndef XPROFS_TOOL_H
#define XPROFS_TOOL_H

#include "base/err.h"
#include "out/out.h"
#include "base/query.h"
#include "session/catalog.h"
#include "session/session.h"

/* Where a tool's file appears. */
enum tool_scope {
    TOOL_RUN = 1,  /* <run>/<file>: all hosts of the run */
    TOOL_HOST = 2, /* <run>/hosts/<host>/<file>: one host */
};

/* Flags. */
enum tool_flags {
    TOOL_UNCACHED = 1,   /* recomputed on every open (errors.txt) */
    TOOL_ONE_HOST = 2,   /* takes one host: listed in a run of several hosts
                          * under hosts/<host>/ only (a lookup still says why) */
    TOOL_UNLISTED = 4,   /* found by lookup only: meaningless without its
                          * options (compare.*?base=RUN) */
    TOOL_NO_SOURCES = 8, /* reads no source's bytes (errors.txt): made from a
                          * listed snapshot, a store's objects not copied */
};

struct tool_ctx {
    struct snapshot *snap;   /* the run, fixed for the whole call */
    const char *host;        /* TOOL_HOST: the host; NULL for the whole run */
    const struct query *q;   /* parsed, already checked against the tool's keys */
    struct xp_err *err;      /* failure reason */
    struct catalog *cat;     /* the runs of the mount, for a tool that reads
                              * another run too (compare.*); NULL if none */
    const struct tool *tool; /* the tool called (one produce() may serve several) */
};

struct tool {
    const char *file;             /* file name, e.g. "summary.json" */
    const char *tag;              /* XProf tool tag it answers, or NULL */
    unsigned scope;               /* enum tool_scope mask */
    unsigned flags;               /* enum tool_flags mask */
    const struct query_key *keys; /* accepted options ({NULL}-terminated), or NULL */
    /* 1 if the file is listed for this snapshot; decides from file names and
     * kinds only (listing never converts). NULL: always listed. */
    int (*listed)(const struct snapshot *snap);
    int (*produce)(struct tool_ctx *ctx, struct out *o);
};

/* The NULL-terminated table (src/tools/registry.c). */
extern const struct tool *const tool_table[];

/* The tool serving file name in scope, or NULL. */
const struct tool *tool_find(const char *file, unsigned scope);

/* Helpers for listed(): a run with xplane files / with any trace. */
int tool_listed_xplane(const struct snapshot *snap);
int tool_listed_any_trace(const struct snapshot *snap);

/* The hosts a tool call covers: ctx->host alone, or every host of the run. */
int tool_host_count(const struct tool_ctx *ctx);
const char *tool_host(const struct tool_ctx *ctx, int i);

/* HLO tools (tool_hlo.c): the number of HLO modules of the call's hosts
 * into *n (0 or a negative errno), an errors.txt line naming file when
 * there are none, and one for each host of the call whose HLO op texts
 * (and stack frames) were partly left empty for want of budget. */
int tool_hlo_module_count(struct tool_ctx *ctx, uint32_t *n);
void tool_note_no_hlo(struct tool_ctx *ctx, const char *file);
void tool_note_hlo_texts(struct tool_ctx *ctx, const char *file);

/* The same hosts as a list for the engines that combine hosts. */
struct host_list tool_hosts(const struct tool_ctx *ctx);

#endif
