/*
 * hlo_buffers.h - the static memory picture of one HLO module, as XProf's
 * memory viewer draws it (xprof/convert/hlo_proto_to_memory_visualization_
 * utils.cc): the module's BufferAssignmentProto read at the wire level, its
 * heap-simulator trace of one memory colour replayed, the peak found and the
 * buffers live there listed, with the allocation timeline's blocks.
 *
 * Field numbers (xla/service/hlo.proto):
 *   HloProto: hlo_module = 1, buffer_assignment = 3
 *   BufferAssignmentProto: logical_buffers = 1, buffer_allocations = 3,
 *       heap_simulator_traces = 4
 *   LogicalBufferProto: id = 1, size = 2, defined_at = 3, color = 4;
 *       Location: instruction_id = 4, shape_index = 3
 *   BufferAllocationProto: index = 1, size = 2, is_thread_local = 3,
 *       is_entry_computation_parameter = 5, maybe_live_out = 7, color = 8,
 *       assigned = 9 (logical_buffer_id = 1, offset = 2, size = 3),
 *       is_tuple = 11, is_constant = 12
 *   HeapSimulatorTrace: events = 1 (kind = 1, buffer_id = 2,
 *       instruction_name = 4, share_with_canonical_id = 5)
 *
 * Everything is read per request from the HloProto bytes (nothing is kept
 * by the snapshot): the bytes must outlive the result, whose event
 * instruction names point into them. A replay costs O(events + buffers)
 * time and about 100 bytes an event; more than HLO_MEM_MAX_ENTRIES of
 * anything is refused.
 *
 * Invariants of a built result: every index in it is in range; logical
 * buffers are the ones XProf indexes (assigned to an allocation, defined by
 * a known instruction; the last assignment of an id wins), sorted by id;
 * allocations are sorted by index (XProf walks a hash map: the order there
 * is unspecified) and unique.
 */
#ifndef XPROFS_HLO_BUFFERS_H
#define XPROFS_HLO_BUFFERS_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/err.h"
#include "hlo_module.h"
#include "out/out.h"

#define HLO_MEM_SMALL_BUFFER 16384    /* XProf's kSmallBufferSize */
#define HLO_MEM_NO_ID (-1)            /* "none" for the int32 indices below */
#define HLO_MEM_MAX_ENTRIES (1 << 24) /* buffers, allocations, events we read */

/* A logical buffer assigned to an allocation (XProf's LogicalBufferStruct). */
struct hlo_mem_lbuf {
    int64_t id;                    /* LogicalBufferProto.id */
    int64_t size;                  /* its size in bytes (>= 0) */
    int64_t color;                 /* its memory colour */
    int64_t offset;                /* offset in its allocation (>= 0) */
    int64_t unpadded;              /* bytes of its shape without padding */
    uint32_t alloc;                /* its allocation (index into allocs) */
    uint32_t node;                 /* defining instruction (index into g.nodes) */
    const int64_t *shape_index;    /* defined_at.shape_index */
    uint32_t nshape_index;         /* entries in shape_index */
    const struct hlo_shape *shape; /* shape at the last index (XProf's rule) */
    const char *shape_str;         /* that shape with its layout, as XLA prints it */
    int has_span;                  /* span_start/span_end are set */
    int64_t span_start;            /* first trace event it is live at */
    int64_t span_end;              /* last one */
    int32_t canonical;             /* buffer it shares memory with, or HLO_MEM_NO_ID */
    int32_t display;               /* the buffer now using its memory, or HLO_MEM_NO_ID */
    int32_t heap_color;            /* its heap object's colour, or HLO_MEM_NO_ID */
    int64_t refs;                  /* simulation: reference count */
    int seen;                      /* some event of the trace names it */
};

/* One HeapSimulatorTrace.Event. */
struct hlo_mem_event {
    int64_t kind;      /* 0 ALLOC, 1 FREE, 2 SHARE_WITH */
    int64_t buffer_id; /* buffer_id */
    int64_t share_id;  /* share_with_canonical_id */
    const char *name;  /* instruction_name (in the proto bytes, not NUL-terminated) */
    uint32_t name_len; /* its length */
};

/* One HeapSimulatorTrace: events[first .. first + n). */
struct hlo_mem_trace {
    uint32_t first;
    uint32_t n;
};

/* One BufferAllocationProto.assigned entry. */
struct hlo_mem_assigned {
    int64_t lb_id;  /* logical_buffer_id */
    int64_t offset; /* offset in the allocation (>= 0) */
    int64_t size;   /* size in bytes */
    int32_t lbuf;   /* the indexed logical buffer of that id, or HLO_MEM_NO_ID */
};

/* A BufferAllocationProto. */
struct hlo_mem_alloc {
    int64_t index;      /* its index */
    int64_t size;       /* bytes (>= 0) */
    int64_t color;      /* memory colour */
    int thread_local;   /* is_thread_local */
    int tuple;          /* is_tuple */
    int entry_param;    /* is_entry_computation_parameter */
    int constant;       /* is_constant */
    int live_out;       /* maybe_live_out */
    uint32_t first;     /* its first entry in assigned */
    uint32_t nassigned; /* entries */
    int32_t trace;      /* heap-simulator trace whose first event is one of
                         * its buffers, or HLO_MEM_NO_ID */
    int seen;           /* simulation: the trace touched it */
};

/* A heap object at the peak (XProf's HeapObject). */
struct hlo_mem_object {
    int32_t color;    /* numbered colour */
    int32_t lbuf;     /* its logical buffer, or HLO_MEM_NO_ID for the small ones */
    int64_t size;     /* bytes */
    int64_t unpadded; /* unpadded bytes */
};

/* A block of the allocation timeline (BufferBlockProto); the container of
 * an allocation has lbuf HLO_MEM_NO_ID. */
struct hlo_mem_block {
    int32_t lbuf;       /* logical buffer, or HLO_MEM_NO_ID */
    uint32_t alloc;     /* its allocation */
    double offset;      /* bytes from the first block's start */
    double size;        /* bytes */
    int64_t start_step; /* first event */
    int64_t end_step;   /* last event */
    const char *color;  /* "#rrggbb" */
};

/* A rectangle of the Graphviz timeline (only drawn ones are kept). */
struct hlo_mem_rect {
    int32_t lbuf;      /* logical buffer, or HLO_MEM_NO_ID for an allocation */
    uint32_t alloc;    /* the allocation of a container rectangle */
    double x, y;       /* centre, points */
    double w, h;       /* size, points */
    double font;       /* font size */
    const char *color; /* fill colour */
};

struct hlo_mem_span {
    int32_t id;    /* logical buffer id (XProf's int32 map key) */
    int32_t start; /* first event */
    int32_t limit; /* last event */
};

/* The result of hlo_mem_build. */
struct hlo_mem {
    struct arena arena;      /* strings and arrays below */
    struct hlo_graph g;      /* the module's instructions: no texts, stack
                              * frames as XProf's BuildStackFrames joins
                              * them (HLO_READ_JOINED, hlo_module_int.h) */
    const char *module_name; /* HloModuleProto.name */
    const char *entry_name;  /* HloModuleProto.entry_computation_name */
    int64_t color;           /* the memory colour shown */

    struct hlo_mem_lbuf *lbufs; /* sorted by id */
    uint32_t nlbufs;
    struct hlo_mem_alloc *allocs; /* sorted by index */
    uint32_t nallocs;
    struct hlo_mem_assigned *assigned;
    uint32_t nassigned;
    struct hlo_mem_event *events; /* every trace's events */
    uint32_t nevents;
    struct hlo_mem_trace *traces; /* heap-simulator traces */
    uint32_t ntraces;

    int32_t trace;            /* the trace replayed, or HLO_MEM_NO_ID */
    uint32_t ntimeline;       /* points: events + 1, or 0 without a trace */
    int64_t *heap;            /* heap bytes before each event, then after all */
    int64_t *unpadded_heap;   /* the same, unpadded */
    const char **names;       /* instruction name of each event ("" last) */
    uint32_t *name_lens;      /* their lengths */
    int64_t peak;             /* peak heap bytes of the trace */
    int64_t peak_unpadded;    /* unpadded bytes at that point */
    int64_t peak_position;    /* its timeline index */
    int64_t indefinite_bytes; /* added to every heap size */

    struct hlo_mem_object *objects; /* heap objects at the peak, in order */
    uint32_t nobjects;
    uint32_t *by_size; /* object indices by size, largest first */

    struct hlo_mem_span *spans; /* lifetimes of the buffers seen, by id */
    uint32_t nspans;

    int64_t entry_param_bytes;      /* allocations of the colour: parameters */
    int64_t non_reusable_bytes;     /* thread-local or tuple */
    int64_t live_out_bytes;         /* maybe live out */
    int64_t total_bytes;            /* all of the colour */
    int64_t indefinite_alloc_bytes; /* the indefinite ones */
    int64_t scoped_bytes;           /* colour 1: largest scoped allocation */
    const char *scoped_instr;       /* the instruction asking for it */

    struct hlo_mem_block *blocks; /* allocation timeline blocks */
    uint32_t nblocks;
    struct hlo_mem_rect *rects; /* its Graphviz rectangles */
    uint32_t nrects;
    int timeline;        /* the allocation timeline was drawn */
    uint64_t timeline_x; /* events of the longest trace drawn */
};

/* Build the memory picture of colour from HloProto bytes p[0..n).
 * Returns 0, -ENOENT (no hlo_module or no buffer_assignment in the proto),
 * -EIO (malformed bytes, or a trace XProf refuses: touching several
 * allocations, freeing a buffer twice, ...) or -ENOMEM, with err. On success
 * the caller frees m with hlo_mem_free; p must stay valid until then. */
int hlo_mem_build(const uint8_t *p, size_t n, int64_t color, struct hlo_mem *m, struct xp_err *err);

/* Free what m holds and leave it empty; a zeroed m is fine. */
void hlo_mem_free(struct hlo_mem *m);

/* Whether allocation a is XProf's "indefinite" (thread-local, entry
 * parameter, constant or maybe live out). */
int hlo_mem_indefinite(const struct hlo_mem_alloc *a);

/* Its category: "Parameter", "Output", "Thread-local", "Constant" or
 * "Temporary" (first match). */
const char *hlo_mem_category(const struct hlo_mem_alloc *a);

/* Source info as XProf's GetSourceInfo gives it for node nd: the metadata's
 * file and line when a file is given, else those of the first line of its
 * stack_frame (line -1 when not a number); the stack frame that goes with
 * them is nd->stack_frame. *file is "" when there is none; it points into nd
 * or into the arena (NULL return on no memory). */
const char *hlo_mem_source(struct arena *a, const struct hlo_node *nd, int32_t *line);

/* The Graphviz "graph G {...}" of the allocation timeline into o (errors
 * sticky in o), with XProf's invisible dummy node when noise is set;
 * nothing when m->timeline is 0. */
void hlo_mem_dot(const struct hlo_mem *m, int noise, struct out *o);

#endif
