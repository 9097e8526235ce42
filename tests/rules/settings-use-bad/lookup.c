/* A lookup by name with a default in C: tools/check-settings-use.py must reject it. */
double share(const void *r);
double share(const void *r) { return te_rules_setting(r, "overlap.min_share_pct", 1.0); }
