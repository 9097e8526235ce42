/*
 * analysis/opaque_ops.h - the kernels launched under an op a compiler cannot fuse through.
 *
 * An eager chain is fused by a compiler that sees its ops (torch.compile, a hand-fused
 * kernel). A copy or an elementwise kernel that a custom op launches (a TorchRec comm op's
 * Wait concatenating what the all-to-all delivered, an FBGEMM op, a C++ autograd function)
 * is out of its reach, whatever the kernel's name: the same CatArrayBatchedCopy is a link of
 * the chain under the model's aten::cat and none under All2All_Pooled_Wait. So the split is
 * per launch, by the ops enclosing its launch call (matcher chain_exclude_op), and each kernel
 * row of a chain category (summary.chain_categories) keeps the in-step time of such launches
 * apart (an_kernel_row.opaque_steps_us), which the eager-chain item leaves out.
 *
 * Ownership: reads the views, steps and map it is given, and writes the rows of `tables`.
 */
#ifndef TRIAGE_ANALYSIS_OPAQUE_OPS_H
#define TRIAGE_ANALYSIS_OPAQUE_OPS_H

#include <stddef.h>

#include "analysis/kernel_map.h"
#include "analysis/model.h"
#include "analysis/steps.h"
#include "analysis/tables.h"
#include "analysis/trace_view.h"
#include "triage/rules.h"

/* Sets opaque_steps_us of every row of a chain category in `tables` from the formal views
 * (kmap: their kernel map, which named the rows; steps: parallel to the views, NULL when
 * every launch counts, as steps_us then does; probes: an_opaque_probes_create's of them). A trace
 * without launch calls or the packs without the matcher leave them 0. AN_ERR_NOMEM when out of
 * memory. */
typedef struct an_opaque_probes an_opaque_probes;
an_status an_opaque_steps(const an_trace_view *views, size_t n_views, const an_steps *steps,
                          const an_kernel_map *kmap, const te_rules *rules,
                          an_opaque_probes *probes, an_tables *tables);

/* The same test launch by launch (the chains as runs, analysis/chain_runs.h): a probe of
 * view v owns a memo of its op names and of its kernels' answers, so the split and the
 * chain runs, which ask many of the same kernels, search the op nest once for each. NULL
 * (no error) when the packs have no matcher or the trace no launch calls: then no launch
 * is opaque. The probes borrow the views and the rules. */
typedef struct an_opaque_probe an_opaque_probe;
/* One probe per view (*out owns them); AN_ERR_NOMEM when out of memory. */
an_status an_opaque_probes_create(const an_trace_view *views, size_t n_views, const te_rules *rules,
                                  an_opaque_probes **out);
/* The probe of view vi, or NULL (none: no launch is opaque). */
an_opaque_probe *an_opaque_probes_view(an_opaque_probes *ps, size_t vi);
void an_opaque_probes_destroy(an_opaque_probes *ps);
/* Whether kernel event `kernel` of the probe's view was launched under such an op (false
 * for a NULL probe or a kernel with no launch call). */
bool an_opaque_probe_launch(an_opaque_probe *p, const tr_event *kernel);

#endif
