/* The stand-in "report" library of tests/layers (see upward_call.c). */
void rp_layers_upper_helper(void);

void rp_layers_upper_helper(void) {}
