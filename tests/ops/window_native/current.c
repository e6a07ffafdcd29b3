/* current.c: the window kernel's current order: the checks first. */
const int window_checks_first = 1;
