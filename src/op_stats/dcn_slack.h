/*
 * dcn_slack.h - XProf's DCN slack analysis (megascale_stats): per
 * rendezvous of the multi-slice send / recv / send-done / recv-done ops of
 * TensorCore 0, the slack, stalls, observed duration and bytes sent over
 * the data-center network (xprof/convert/xspace_to_dcn_slack_analysis.cc,
 * dcn_slack_analysis_combiner.cc, plugin/xprof/protobuf/dcn_slack_analysis.proto).
 *
 * dcn_slack.c         the tracker (DcnTracker::VisitOp, the summary and the
 *                     combiner over hosts), fed op by op: unit-testable
 * dcn_slack_xspace.c  one host's profile: the XLA Ops line of /device:TPU:0,
 *                     the module around each op and the instruction's
 *                     opcode, channel, rendezvous, transfer type and size from
 *                     the module's HloProto
 *
 * Arithmetic follows XProf's to the bit: nanoseconds from picoseconds by
 * integer division, microseconds as doubles truncated to uint64 when stored,
 * uint64 wrap-around where XProf's unsigned sums wrap. Summary rows come in
 * the order their rendezvous first completes (XProf's order is that of an
 * absl hash map, i.e. unspecified). The host-event part of XProf's analysis
 * (host stall) is fed no host plane by the megascale_stats tool, so it is
 * always "-" and is not computed here.
 */
#ifndef XPROFS_DCN_SLACK_H
#define XPROFS_DCN_SLACK_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/idmap.h"
#include "base/intern.h"

struct snapshot;

enum dcn_opcode {
    DCN_OTHER = 0, /* any other opcode: counted in stalls, no role */
    DCN_SEND,
    DCN_RECV,
    DCN_SEND_DONE,
    DCN_RECV_DONE,
};

/* InstrMetadata: what the HLO instruction of an op says. */
struct dcn_instr {
    enum dcn_opcode opcode;
    uint64_t channel_id;       /* 0 when the instruction has none */
    const char *rendezvous;    /* _xla_host_transfer_rendezvous, NULL when absent */
    size_t rendezvous_len;     /* its length */
    const char *transfer_type; /* _xla_megascale_transfer_type, NULL when absent */
    size_t transfer_type_len;  /* its length */
    int64_t size;              /* bytes of the result shape's arrays */
};

/* DcnSlackSummary. Strings live in the analysis' arena. */
struct dcn_summary {
    const char *rendezvous;
    const char *recv_op_name;
    const char *send_op_name;
    const char *transfer_type;
    uint64_t slack_us;
    uint64_t occurrences;
    uint64_t bytes_transmitted;
    uint64_t stall_duration_us;
    uint64_t observed_duration_us;
    uint64_t send_duration_us;
    uint64_t recv_duration_us;
    uint64_t send_done_duration_us;
    uint64_t recv_done_duration_us;
    int64_t host_stall_us;
    uint64_t host_events_count;
};

/* DcnSlackAnalysis, summaries only. */
struct dcn_analysis {
    struct arena arena;         /* the strings */
    struct dcn_summary *rows;   /* in first-completion order */
    uint32_t nrows;             /* entries in rows */
    uint32_t rows_cap;          /* allocated rows */
    uint64_t nslacks;           /* DcnSlack entries summed (recv-dones after a send) */
    uint64_t nops;              /* ops visited */
    uint64_t nunknown_instr;    /* host send/recv ops whose instruction was not found */
    uint64_t nno_rendezvous;    /* ops dropped: no rendezvous and an unseen channel */
    uint64_t nunsupported_type; /* recv-dones of a transfer type XProf does not size */
    uint64_t nzero_group;       /* recv-dones of a collective with no replica group */
};

/* Per rendezvous: DcnOpState and the summary being summed. */
struct dcn_state;

/* DcnTracker. */
struct dcn_tracker {
    struct dcn_analysis *an;  /* where the summaries go */
    struct intern names;      /* rendezvous names -> ids (1..) */
    struct dcn_state *states; /* by rendezvous id - 1 */
    uint32_t nstates;         /* entries in states */
    uint32_t states_cap;      /* allocated states */
    uint32_t *row_rids;       /* rendezvous id of each summary row */
    uint32_t row_rids_cap;    /* allocated entries */
    struct idmap channel;     /* channel id -> rendezvous id */
    uint64_t total_dur_ns;    /* sum of every visited op's duration (wraps) */
    int oom;                  /* sticky allocation failure */
};

void dcn_analysis_init(struct dcn_analysis *an);
void dcn_analysis_free(struct dcn_analysis *an);

/* A tracker filling an (empty) analysis. 0 or -ENOMEM. */
int dcn_tracker_init(struct dcn_tracker *t, struct dcn_analysis *an);
void dcn_tracker_free(struct dcn_tracker *t);

/* The replica group size of a send's collective; the tracker asks once per
 * rendezvous, at its first send (ctx as given to dcn_tracker_visit). */
typedef int (*dcn_group_size_fn)(const void *ctx);

/* DcnTracker::VisitOp: op of instruction in, named name (its display name),
 * starting at ts_ps (XEventVisitor::TimestampPs) or ts_ns (TimestampNs, the
 * line's ns plus the offset's whole ns) and lasting dur_ps. Returns 0 or
 * -ENOMEM. */
int dcn_tracker_visit(struct dcn_tracker *t, const struct dcn_instr *in, const char *name,
                      uint64_t ts_ps, uint64_t ts_ns, uint64_t dur_ps, dcn_group_size_fn group_size,
                      const void *group_ctx);

/* SummarizeDcnSlackAnalysis: the averages into the analysis' rows.
 * Returns 0 or -ENOMEM. */
int dcn_tracker_finish(struct dcn_tracker *t);

/* DcnSlackAnalysisCombiner over hosts[0..n) into out (empty). 0 or -ENOMEM. */
int dcn_analysis_combine(const struct dcn_analysis *const *hosts, uint32_t n,
                         struct dcn_analysis *out);

/* ComputeTransmittedDataSize. */
uint64_t dcn_transmitted_bytes(int64_t recv_size, int group_size, const char *transfer_type,
                               int *unsupported);

/* The number of replica groups DcnCollectiveInfoProto bytes give
 * (GetReplicaGroupSize): 1 with one-to-one groups, else the endpoints of the
 * first endpoint group, else 0 (also for unreadable bytes). */
int dcn_group_size_of_info(const uint8_t *p, size_t n);

/* Whether a host's /host:CPU plane names an event "MegaScale:..."
 * (HasDcnCollectiveStatsInXSpace). */
struct xspace;
int dcn_xspace_has_megascale(const struct xspace *xs);

/* ConvertXSpaceToDcnSlackAnalysis for host of snap into an (empty) an.
 * *why is set to a static reason when the answer is empty for want of
 * TensorCores (else NULL). Returns 0 or a negative errno with err. */
int dcn_host_analysis(struct snapshot *snap, const char *host, struct dcn_analysis *an,
                      const char **why, struct xp_err *err);

#endif
