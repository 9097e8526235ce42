/* Built into a stand-in "trace" library by tests/layers: it calls a function of the
 * stand-in "report" library through a bare extern declaration, which no include root
 * stops. ctest layers/symbols-reject-upward must name the call. */
void layers_trace_entry(void);
void rp_layers_upper_helper(void);

void layers_trace_entry(void) { rp_layers_upper_helper(); }
