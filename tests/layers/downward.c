/* The control of upward.c: the same header from the analysis module's include root. */
#include "analysis/model.h"
