/*
 * hlo_module.h - an xla.HloModuleProto read at the wire level into flat
 * arrays: computations, instructions with their shapes, operands, users,
 * called computations and the attributes XLA's cost model reads.
 *
 * Field numbers (xla/service/hlo.proto, xla/xla_data.proto):
 *   HloProto.hlo_module = 1
 *   HloModuleProto: name = 1, entry_computation_name = 2, computations = 3,
 *                   entry_computation_id = 6, stack_frame_index = 17
 *   StackFrameIndexProto: file_names = 1, function_names = 2,
 *       file_locations = 3 (file_name_id = 1, function_name_id = 2, line = 3,
 *       column = 4), stack_frames = 4 (file_location_id = 1,
 *       parent_frame_id = 2); ids are 1-based
 *   HloComputationProto: name = 1, instructions = 2, id = 5, root_id = 6
 *   HloInstructionProto: name = 1, opcode = 2, shape = 3, metadata = 7,
 *       parameter_number = 9, fusion_kind = 11, tuple_index = 13,
 *       dimensions = 14, window = 15, convolution_dimension_numbers = 16,
 *       custom_call_target = 28, dot_dimension_numbers = 30, fft_length = 32,
 *       id = 35, operand_ids = 36, called_computation_ids = 38,
 *       backend_config = 43, replica_groups = 49, feature_group_count = 50,
 *       batch_group_count = 58, channel_id = 26, use_global_device_ids = 71,
 *       collective_device_list = 87, ragged_dot_dimension_numbers = 90
 *   OpMetadata: op_type = 1, op_name = 2, source_file = 3, source_line = 4,
 *       deduplicated_name = 12, stack_frame_id = 15
 *   ShapeProto: element_type = 2, dimensions = 3, tuple_shapes = 4, layout = 5,
 *       is_dynamic_dimension = 6
 *   LayoutProto: minor_to_major = 1, tiles = 6 (TileProto.dimensions = 1),
 *                element_size_in_bits = 7, memory_space = 8,
 *                index_primitive_type = 11, pointer_primitive_type = 12,
 *                dynamic_shape_metadata_prefix_bytes = 15,
 *                tail_padding_alignment_in_elements = 16, split_configs = 17
 *                (SplitConfigProto: dimension = 1, split_indices = 2)
 *   Window.dimensions = 1; WindowDimension: size = 1, stride = 2,
 *       padding_low = 3, padding_high = 4, window_dilation = 5,
 *       base_dilation = 6
 *   ConvolutionDimensionNumbers: kernel_spatial_dimensions = 6,
 *       input_batch_dimension = 7, input_feature_dimension = 8,
 *       output_feature_dimension = 10, input_spatial_dimensions = 11,
 *       output_spatial_dimensions = 12
 *   DotDimensionNumbers.lhs_contracting_dimensions = 1
 *   RaggedDotDimensionNumbers: dot_dimension_numbers = 1,
 *       rhs_group_dimensions = 3
 *   ReplicaGroup.replica_ids = 1; CollectiveDeviceListProto:
 *       replica_groups = 1, iota_replica_group_list = 2
 *       (IotaReplicaGroupListProto: num_replica_groups = 1,
 *        num_devices_per_group = 2)
 *
 * The HLO modules of a host are the `Hlo Proto` stats (legacy spelling
 * `HLO Proto`) of the /host:metadata events; the program id is the event's
 * program_id stat, else the metadata id (XProf's HloProtoMap). They are read
 * once per snapshot (snapshot_hlo_modules) for op_stats and the derived
 * trace lines.
 */
#ifndef XPROFS_HLO_MODULE_H
#define XPROFS_HLO_MODULE_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/err.h"

struct snapshot;
struct xspace;

/* PrimitiveType values the cost model treats specially. */
enum {
    HLO_PRED = 1,
    HLO_TUPLE = 13,
    HLO_OPAQUE = 14,
    HLO_TOKEN = 17,
    HLO_BUFFER = 34,
};

/* A tile of a tiled layout (TileProto). */
struct hlo_tile {
    uint32_t ndims;      /* entries in dims */
    const int64_t *dims; /* tile sizes, major to minor */
};

/* A split of a layout (SplitConfigProto). */
struct hlo_split {
    int64_t dimension;      /* the split dimension */
    uint32_t nindices;      /* entries in indices */
    const int64_t *indices; /* split_indices */
};

/* The layout fields only the HLO text printer reads (hlo_text.h). They are
 * read leniently: bad bytes inside them are dropped, never an error. */
struct hlo_layout_more {
    uint32_t ntiles;                /* entries in tiles */
    const struct hlo_tile *tiles;   /* layout.tiles */
    int64_t tail_padding;           /* tail_padding_alignment_in_elements (0 = 1) */
    int64_t index_type;             /* index_primitive_type, 0 = none */
    int64_t pointer_type;           /* pointer_primitive_type, 0 = none */
    int64_t dyn_prefix_bytes;       /* dynamic_shape_metadata_prefix_bytes */
    uint32_t nsplits;               /* entries in splits */
    const struct hlo_split *splits; /* layout.split_configs */
};

struct hlo_shape {
    int32_t type;                       /* PrimitiveType */
    uint32_t ndims;                     /* entries in dims */
    const int64_t *dims;                /* dimension sizes */
    uint32_t ntuple;                    /* entries in tuple (type HLO_TUPLE) */
    const struct hlo_shape *tuple;      /* element shapes */
    int has_layout;                     /* the layout field is present */
    int64_t memory_space;               /* layout.memory_space */
    int64_t element_bits;               /* layout.element_size_in_bits, 0 = default */
    uint32_t nminor;                    /* entries in minor_to_major */
    const int64_t *minor_to_major;      /* layout.minor_to_major */
    const uint8_t *dynamic;             /* is_dynamic_dimension (ndims entries), NULL:
                                         * every dimension is static */
    const struct hlo_layout_more *more; /* tiles and rarer layout fields, NULL when
                                         * the layout has none */
};

struct hlo_window_dim {
    int64_t size, stride, pad_low, pad_high, window_dilation, base_dilation;
};

struct hlo_node {
    const char *name;         /* instruction name */
    size_t name_len;          /* its length on the wire (may hold NULs) */
    const char *opcode;       /* "fusion", "add" ... */
    const char *op_type;      /* metadata.op_type, "" when none */
    size_t op_type_len;       /* its length on the wire */
    const char *op_name;      /* metadata.op_name, "" when none */
    size_t op_name_len;       /* its length on the wire */
    const char *dedup_name;   /* metadata.deduplicated_name, "" when none */
    const char *source_file;  /* metadata.source_file, "" when none */
    size_t source_file_len;   /* its length on the wire */
    int32_t source_line;      /* metadata.source_line */
    const char *stack_frame;  /* metadata.stack_frame_id resolved through the
                               * module's stack_frame_index, innermost first:
                               * "file:line:col\n" per frame (op_stats'
                               * form), or those lines joined by '\n' (the
                               * memory viewer's, hlo_module_int.h); "" when
                               * none */
    const char *text;         /* the instruction as XLA's ToString prints it with
                               * XProf's options (hlo_text.h); "" inside fusion
                               * computations, when the read printed no texts,
                               * or past the texts' budget */
    int window_dilated;       /* a window dimension has window_dilation != 1 */
    int base_dilated;         /* ... base_dilation != 1 */
    struct hlo_shape shape;   /* result shape */
    uint32_t comp;            /* owning computation */
    uint32_t noperands;       /* entries in operands */
    const uint32_t *operands; /* node indices */
    uint32_t ncalled;         /* entries in called */
    const uint32_t *called;   /* computation indices */
    uint32_t nusers;          /* entries in users */
    uint32_t *users;          /* node indices, in instruction order */
    uint32_t ndims;           /* entries in dims */
    const int64_t *dims;      /* the dimensions field */
    uint32_t nwindow;         /* entries in window */
    struct hlo_window_dim *window;
    int64_t in_batch_dim; /* convolution dimension numbers */
    int64_t in_feature_dim;
    int64_t out_feature_dim;
    uint32_t nspatial; /* entries in each spatial list */
    const int64_t *in_spatial, *kernel_spatial, *out_spatial;
    uint32_t ncontracting; /* dot lhs_contracting_dimensions */
    const int64_t *contracting;
    uint32_t ragged_ncontracting; /* ragged-dot: its dot's lhs_contracting_dimensions */
    const int64_t *ragged_contracting;
    uint32_t ragged_ngroups; /* ragged-dot: entries in rhs_group_dimensions */
    uint32_t nfft;           /* fft_length */
    const int64_t *fft_length;
    int64_t feature_group_count; /* max(1, field) */
    int64_t batch_group_count;   /* max(1, field) */
    int64_t tuple_index;
    int64_t parameter_number;
    int64_t channel_id;
    int use_global_device_ids;
    int64_t largest_group;   /* largest replica group, 0 = none given */
    int group_list_given;    /* replica groups were given in some form */
    const char *fusion_kind; /* "" when none */
    const char *custom_call_target;
    const char *backend_config; /* NUL-terminated copy */
    size_t backend_config_len;
};

struct hlo_comp {
    const char *name;       /* computation name */
    uint32_t first;         /* first node */
    uint32_t n;             /* nodes */
    uint32_t root;          /* root node */
    uint32_t nparams;       /* entries in params */
    const uint32_t *params; /* parameter nodes by parameter number */
};

struct hlo_graph {
    struct arena arena;     /* everything below */
    const char *name;       /* module name */
    int linked;             /* the graph is whole: every field the cost model
                             * reads was readable and every id resolved */
    struct hlo_node *nodes; /* all instructions, computation by computation */
    uint32_t nnodes;
    struct hlo_comp *comps; /* computations in module order */
    uint32_t ncomps;
    uint32_t entry; /* entry computation */
};

/* Read an HloModuleProto (not the HloProto around it) into g, with the
 * instructions' texts. Returns 0, -1 when the module is malformed (unknown
 * operand or computation ids, bad wire data) or -ENOMEM. g is empty
 * afterwards on failure. */
int hlo_graph_read(const uint8_t *p, size_t n, struct hlo_graph *g);
void hlo_graph_free(struct hlo_graph *g);

/* One HLO module of a host, in discovery order. */
struct hlo_proto_module {
    uint64_t program_id; /* program_id stat, else the metadata id */
    int window_corrupt;  /* some instruction's window was unreadable */
    struct hlo_graph g;  /* its instructions (g.linked: usable for costs) */
};

/* The HLO modules of one host. Modules whose bytes are corrupt (outside the
 * fields only the cost model reads) are left out, as XProf drops them; a
 * module is also left out when an earlier one of its program id has no
 * window_corrupt, since every reader takes that one. Readers pick the first
 * module of a program id they accept (op_stats skips window_corrupt ones). */
struct hlo_modules {
    struct hlo_proto_module *mods; /* discovery order */
    uint32_t nmods;                /* entries */
    uint32_t texts_truncated;      /* instruction texts and stack strings left
                                    * "": all the strings of a host's modules
                                    * share a budget of 1 MiB plus 4 times
                                    * their bytes */
};

/* Read the HLO modules of xs. Returns 0 and *mp, or -ENOMEM with err. */
int hlo_modules_read(const struct xspace *xs, struct hlo_modules **mp, struct xp_err *err);
void hlo_modules_free(struct hlo_modules *m);

/* The HLO modules of host, read once per snapshot. */
int snapshot_hlo_modules(struct snapshot *snap, const char *host, const struct hlo_modules **mp,
                         struct xp_err *err);

/* Elements of an array shape (1 for scalars, 0 for tuples). */
int64_t hlo_shape_elements(const struct hlo_shape *s);
/* Elements of every array inside a (tuple) shape. */
int64_t hlo_shape_elements_recursive(const struct hlo_shape *s);
/* PrimitiveType bit width (primitive_util::BitWidth), 0 when none. */
int hlo_type_bits(int32_t type);

#endif
