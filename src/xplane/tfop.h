/*
 * tfop.h - framework op names as XProf parses them.
 *
 * A port of tsl::profiler::ParseTfOpFullname (xla/tsl/profiler/utils/
 * tf_op_utils.cc): "name:Type" is a TensorFlow op, "scope/op:" or
 * "scope/op:op_type[params]" a JAX op, "Iterator::..." a tf.data op and
 * "MEMCPYHToD..." a memcpy. Views point into the parsed string; nothing is
 * allocated.
 */
#ifndef XPROFS_OP_STATS_TFOP_H
#define XPROFS_OP_STATS_TFOP_H

#include <stddef.h>

enum tfop_category {
    TFOP_UNKNOWN,
    TFOP_TENSORFLOW,
    TFOP_JAX,
    TFOP_TFDATA,
    TFOP_MEMCPY_HTOD,
    TFOP_MEMCPY_DTOH,
    TFOP_MEMCPY_DTOD,
    TFOP_MEMCPY_HTOH,
};

struct tfop {
    enum tfop_category category; /* what the name parsed as */
    const char *name;            /* op name (view) */
    size_t name_len;             /* its length */
    const char *type;            /* op type (view); "" when unknown */
    size_t type_len;             /* its length */
};

/* Parse s[0..n) like ParseTfOpFullname. Cannot fail. */
void tfop_parse(const char *s, size_t n, struct tfop *op);

/* IsTfOpName / IsTfOpType / IsJaxOpType / IsJaxOpNameAndType. */
int tfop_is_tf_name(const char *s, size_t n);
int tfop_is_tf_type(const char *s, size_t n);
int tfop_is_jax_type(const char *s, size_t n);
int tfop_is_jax_name_and_type(const char *name, size_t nn, const char *type, size_t tn);

/* 1 if a name scope of op_name marks gradients (XProf's ModelTracker):
 * TensorFlow "gradient_tape"/"gradients*" scopes, or a JAX "transpose(" scope. */
int tfop_is_training_op(const char *op_name, size_t nn, const char *op_type, size_t tn);

/* IsOpTensorCoreEligible and IsEinsumTensorCoreEligible (kernel_stats_utils.cc). */
int tfop_tc_eligible(const char *op_name, size_t n);
int tfop_einsum_tc_eligible(const char *equation, size_t n);

#endif
