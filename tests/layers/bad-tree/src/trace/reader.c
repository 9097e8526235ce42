#include "analysis/trace_view.h" /* upward: trace is below analysis */
