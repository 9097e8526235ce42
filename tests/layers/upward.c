/* Compiled against the trace module's include root by ctest layers/build-rejects-upward:
 * must fail, because analysis/ does not exist there. */
#include "analysis/bundle.h"
