// SPDX-License-Identifier: MIT
/*
 * The op table (include/spyre/op_table.h) as data: the rows every consumer
 * reads, in the library (names, dtype and interface checks) and through
 * spyre_op_table() in the PyTorch plugin.
 */
#include <stdio.h>

#include "../internal.h"
#include "graph_build.h"

#define ROW_(k, prefix, e, v, nm, ifc, dts, res, fl)                                               \
	{ .kind = (k), .op = prefix##e, .name = (nm), .iface = (ifc), .dtypes = (dts),              \
	  .result = (res), .flags = (fl) },
#define UN_ROW_(e, ...) ROW_(SPYRE_OPK_UNARY, SPYRE_UN_, e, __VA_ARGS__)
#define BIN_ROW_(e, ...) ROW_(SPYRE_OPK_BINARY, SPYRE_BIN_, e, __VA_ARGS__)
#define RED_ROW_(e, ...) ROW_(SPYRE_OPK_REDUCE, SPYRE_RED_, e, __VA_ARGS__)

static const struct spyre_op_info table[] = {
	SPYRE_UNARY_OPS(UN_ROW_)
	SPYRE_BINARY_OPS(BIN_ROW_)
	SPYRE_REDUCE_OPS(RED_ROW_)
};

const struct spyre_op_info *spyre_op_table(unsigned int *count)
{
	if (count)
		*count = sizeof(table) / sizeof(table[0]);
	return table;
}

const struct spyre_op_info *spyre_op_find(enum spyre_op_kind kind, int op)
{
	unsigned int i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].kind == kind && table[i].op == op)
			return &table[i];
	return NULL;
}

uint32_t spyre_op_iface(const struct spyre_op_info *op, enum spyre_dtype dt)
{
	uint32_t need = op ? op->iface : 0;

	/* exact integers are the vector unit's integer mode (1.9) */
	if (op && (dt == SPYRE_INT64 || (dt == SPYRE_INT32 && !(op->flags & SPYRE_OPF_TRUTH))) &&
	    need < SPYRE_IFACE_INT)
		need = SPYRE_IFACE_INT;
	return need;
}

int spyre_ops_supports(spyre_ops *ops, const struct spyre_op_info *op, enum spyre_dtype dt)
{
	if (!ops || !op || (unsigned int)dt >= 32)
		return 0;
	return ops->hw_version >= spyre_op_iface(op, dt) &&
	       (op->dtypes & SPYRE_DTYPE_BIT(dt)) != 0;
}

int g_check_row(spyre_graph *g, const char *call, const struct spyre_op_info *op,
		const struct gval *x)
{
	char why[128];

	if ((unsigned int)x->dt >= 32 || !(op->dtypes & SPYRE_DTYPE_BIT(x->dt)))
		return g_unsupported(call, op->name, x,
				     op->dtypes == SPYRE_DTYPES_FLOAT ? "float dtypes only" :
									   "no card function for this dtype");
	if (g->ops->hw_version >= spyre_op_iface(op, x->dt))
		return 0;
	snprintf(why, sizeof(why), "needs card interface %u.%u (its vector functions%s), this card "
		 "is %u.%u", SPYRE_HW_VERSION_MAJOR_OF(spyre_op_iface(op, x->dt)),
		 SPYRE_HW_VERSION_MINOR_OF(spyre_op_iface(op, x->dt)),
		 spyre_op_iface(op, x->dt) > op->iface ? ": exact integers" : "",
		 SPYRE_HW_VERSION_MAJOR_OF(g->ops->hw_version),
		 SPYRE_HW_VERSION_MINOR_OF(g->ops->hw_version));
	return g_unsupported(call, op->name, x, why);
}
