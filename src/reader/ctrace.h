/*
 * ctrace.h - a Chrome-trace JSON file (PyTorch *.pt.trace.json[.gz], JAX
 * perfetto_trace.json.gz, <host>.trace.json.gz) as a compact, read-only
 * event model.
 *
 * Loading reads the file once (inflating .gz), splits the "traceEvents"
 * array with a small bounds-checked scanner and parses each event object with
 * cJSON, keeping only what tools need on every event (below). The JSON text
 * stays in memory so an event's "args" object and any other top-level key
 * ("deviceProperties", "distributedInfo", ...) can be parsed again with cJSON
 * on demand. Names and categories are interned: compare string ids, not text.
 *
 * Accepted shapes: {"traceEvents": [...], ...} or a bare [...] array of
 * events. Any JSON syntax error, a truncated file or nesting deeper than
 * cJSON's limit gives -EIO and a message naming the file and byte offset;
 * never a crash. Array items that are not objects are skipped and counted.
 *
 * Memory (peak): the JSON text (a copy of a plain file, never a mapping: a
 * file truncated while mapped kills the reader with SIGBUS; inflated for
 * .gz), plus sizeof(struct ctrace_event) = 80 bytes per event, plus the
 * interned strings; cJSON holds one event object at a time. A 1 GB plain JSON
 * thus costs about 1 GB of heap + 80 MB per million events.
 *
 * A loaded struct ctrace is immutable and may be read by any number of
 * threads. Tools get it with snapshot_ctrace() (session/session.h), built
 * once per snapshot and host.
 */
#ifndef XPROFS_CTRACE_H
#define XPROFS_CTRACE_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define CT_NONE INT64_MIN /* an integer field the event did not have */

/* struct ctrace_event.flags */
enum ctrace_flags {
    CT_HAS_TS = 1,          /* "ts" was a number (else ts = 0) */
    CT_HAS_DUR = 2,         /* "dur" was a number (else dur = 0) */
    CT_PID_STR = 4,         /* "pid" was a string: pid holds its string id */
    CT_TID_STR = 8,         /* "tid" was a string: tid holds its string id */
    CT_BIND_ENCLOSING = 16, /* flow event with "bp":"e" */
    CT_TS_INT = 32,         /* "ts" was a JSON integer (Python reads an int) */
    CT_DUR_INT = 64,        /* "dur" was a JSON integer */
};

/* One trace event. Times are microseconds as the file writes them, parsed
 * to double exactly as Python's json module does (so sums match TraceLens). */
struct ctrace_event {
    double ts;           /* "ts", µs */
    double dur;          /* "dur", µs (X events); 0 if absent */
    int64_t pid;         /* "pid" (number), or string id if CT_PID_STR */
    int64_t tid;         /* "tid" (number), or string id if CT_TID_STR */
    int64_t id;          /* "id" of flow/async events (numbers, or strings
                          * in decimal or 0x-hex); CT_NONE if absent */
    int64_t correlation; /* args.correlation, else args.correlation_id
                          * (JAX); CT_NONE if absent */
    int64_t external_id; /* args["External id"] (PyTorch); CT_NONE if absent */
    uint64_t args_off;   /* byte offset of the args object in the text */
    uint32_t args_len;   /* its length; 0 if the event has no "args" */
    uint32_t name;       /* string id of "name" (0 = absent / "") */
    uint32_t cat;        /* string id of "cat" (0 = absent / "") */
    uint16_t flags;      /* enum ctrace_flags */
    char ph;             /* "ph" first character, 0 if absent */
    char pad;            /* unused */
};

/* Process metadata from "M" events named process_name / process_sort_index. */
struct ctrace_process {
    int64_t pid;        /* as in ctrace_event.pid */
    uint16_t pid_flags; /* CT_PID_STR or 0 */
    uint32_t name;      /* string id of args.name, 0 if none */
    int64_t sort_index; /* args.sort_index, CT_NONE if none */
};

/* Thread metadata from "M" events named thread_name / thread_sort_index. */
struct ctrace_thread {
    int64_t pid;        /* as in ctrace_event.pid */
    int64_t tid;        /* as in ctrace_event.tid */
    uint16_t flags;     /* CT_PID_STR | CT_TID_STR as on the event */
    uint32_t name;      /* string id of args.name, 0 if none */
    int64_t sort_index; /* args.sort_index, CT_NONE if none */
};

struct intern; /* interned strings (base/intern.h) */

struct ctrace {
    char *path;                       /* file it was read from */
    const char *text;                 /* the whole JSON text (inflated) */
    size_t text_len;                  /* its length */
    struct ctrace_event *events;      /* in file order, "M" events included */
    uint32_t nevents;                 /* entries in events */
    uint32_t nskipped;                /* traceEvents items that were not objects */
    struct ctrace_process *processes; /* sorted by (pid_flags, pid) */
    uint32_t nprocesses;              /* entries in processes */
    struct ctrace_thread *threads;    /* sorted by (flags, pid, tid) */
    uint32_t nthreads;                /* entries in threads */
    struct intern *strings;           /* interned names */
    uint64_t top_off;                 /* offset of the top-level object, or
                                       * of the array for a bare array */
    int bare_array;                   /* 1: the file is a bare event array */
};

/* Read path (plain JSON or gzip, by content). Returns 0 and *ctp, or a
 * negative errno (-EIO bad file, -ENOMEM) with err naming file and offset. */
int ctrace_load(const char *path, struct ctrace **ctp, struct xp_err *err);

/* Same from bytes in memory (copied; for tests and fuzzing). name is used in
 * messages. Gzip data is recognised and inflated. */
int ctrace_load_mem(const char *name, const void *data, size_t len, struct ctrace **ctp,
                    struct xp_err *err);

/* Release everything. NULL is a no-op. */
void ctrace_free(struct ctrace *ct);

/* The text of string id (NUL-terminated; "" for 0 or an unknown id). */
const char *ctrace_str(const struct ctrace *ct, uint32_t id);

/* The id of an interned string, or 0 if no event uses it. */
uint32_t ctrace_str_find(const struct ctrace *ct, const char *s);

/* Number of distinct strings (ids run from 1 to this, inclusive). */
uint32_t ctrace_str_count(const struct ctrace *ct);

/* The event's args parsed with cJSON (caller frees with cJSON_Delete), or
 * NULL if it has none or memory ran out. */
cJSON *ctrace_event_args(const struct ctrace *ct, const struct ctrace_event *ev);

/* The raw JSON text of the event's args ({...}) and its length; NULL, 0 if
 * none. Not NUL-terminated. */
const char *ctrace_event_args_text(const struct ctrace *ct, const struct ctrace_event *ev,
                                   size_t *len);

/* A top-level key other than traceEvents ("deviceProperties", ...), parsed
 * with cJSON (caller frees), or NULL if absent. */
cJSON *ctrace_top_value(const struct ctrace *ct, const char *key);

/* Metadata lookups; NULL if the trace names no such process / thread. */
const struct ctrace_process *ctrace_process_find(const struct ctrace *ct, int64_t pid,
                                                 uint16_t pid_flags);
const struct ctrace_thread *ctrace_thread_find(const struct ctrace *ct, int64_t pid, int64_t tid,
                                               uint16_t flags);

/* Process / thread name of an event ("" when not named). */
const char *ctrace_event_process_name(const struct ctrace *ct, const struct ctrace_event *ev);
const char *ctrace_event_thread_name(const struct ctrace *ct, const struct ctrace_event *ev);

#endif
