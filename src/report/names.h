/*
 * report/names.h - display names of kernels: demangling, shortening, uniqueness.
 *
 * Kernel names are keys everywhere else (the canonical names of analysis/trace_view.h); this
 * module only makes the strings a renderer prints. It demangles Itanium C++ names
 * (libiberty, bounded by RP_MAX_DEMANGLE_BYTES / RP_MAX_DEMANGLED_BYTES), gives known
 * families a compact form from the packs' `display_names:` rules, collapses the rest
 * generically (no "void ", no parameter list, nested template arguments as <…>) and
 * caps every display at names.display_max_chars characters. Within one table,
 * rp_names_display_table never gives two different full names the same display.
 * docs/names.md describes the rules and the settings.
 *
 * Ownership: an rp_names borrows its te_rules (which must outlive it) and copies the
 * settings it reads at creation. Every string or array a function returns is malloc'd
 * and owned by the caller: free() a string, rp_names_table_free() a table. Functions
 * return NULL only when out of memory. Inputs are untrusted trace text: any bytes are
 * accepted. An rp_names is thread-compatible (the rules' regex caches are not shared
 * safely between threads).
 */
#ifndef TRIAGE_REPORT_NAMES_H
#define TRIAGE_REPORT_NAMES_H

#include <stddef.h>

#include "triage/rules.h"

typedef struct rp_names rp_names;

/* Reads names.display_max_chars and names.display_collapse_chars from the rules' typed
 * settings (te_rules_settings); rules may be NULL (no family rules, and no cap or
 * collapse short of the settings table's upper bound). */
rp_names *rp_names_create(const te_rules *rules);
void rp_names_destroy(rp_names *nm);

/* The cap on display length, in characters (UTF-8 code points). */
size_t rp_names_max_chars(const rp_names *nm);

/* The demangled form of an Itanium C++ name ("_Z..."), with its parameter list. A name
 * that is not mangled, does not demangle, is longer than RP_MAX_DEMANGLE_BYTES or whose
 * demangled text passes RP_MAX_DEMANGLED_BYTES comes back unchanged (as a copy). */
char *rp_names_demangle(const char *name);

/* The display form of one full name: demangled, then the first matching display rule's
 * form or the generic collapse, at most rp_names_max_chars characters (cut with "…"). */
char *rp_names_display(const rp_names *nm, const char *full);

/* The display forms of the n names of one table (full[i] -> result[i]). Equal full names
 * get equal displays; different full names get different displays: a collision is
 * resolved by showing the colliding names less collapsed, else by appending the first
 * word of the full name that the others lack (" [LDSB1]"), else a short stable hash of
 * the full name (" ~1a2b3c"). The result depends only on the set of names, not their
 * order. Returns an array of n strings (free with rp_names_table_free). */
char **rp_names_display_table(const rp_names *nm, const char *const *full, size_t n);
void rp_names_table_free(char **names, size_t n);

#endif
