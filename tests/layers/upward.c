/* Compiled against the trace module's include root by ctest layers/build-rejects-upward:
 * must fail, and only because analysis/ does not exist there (the test matches that
 * error; layers/build-accepts-upward-source compiles this very file against the analysis
 * module's root). */
#include "analysis/model.h"
