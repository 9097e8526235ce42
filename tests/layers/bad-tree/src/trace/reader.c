#include "analysis/bundle.h" /* upward: trace is below analysis */
