#include "trace/source.h" /* private to trace */
