/*
 * util/units.h - unit conversions the analysis shares, one definition each (a rate in TB/s
 * or TFLOP/s times UT_US_PER_S is bytes or FLOPs per microsecond: 1e12 per second over 1e6
 * microseconds a second).
 */
#ifndef TRIAGE_UTIL_UNITS_H
#define TRIAGE_UTIL_UNITS_H

/* Microseconds in a second: bytes / (TB/s x UT_US_PER_S) is microseconds, and a time in us
 * over UT_US_PER_S is seconds. */
#define UT_US_PER_S 1e6

#endif
