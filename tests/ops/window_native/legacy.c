/* legacy.c: the window kernel's legacy order: the output size before the checks. */
const int window_checks_first = 0;
