/* A judgement written as a number: tools/check-settings-use.py --literals must reject it,
 * and accept the array size, the shift and the percent beside it. */
int verdict(double share, unsigned bits);
int verdict(double share, unsigned bits) {
  char buf[64];
  (void)buf;
  return share * 100.0 > 0.35 && (bits << 7) != 0;
}
