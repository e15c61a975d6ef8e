/* The boundaries test (tests/boundaries/check.cmake) compiles this file with the include path of
 * one build target and WK_PROBE set to one header, e.g. -DWK_PROBE=<wirekit/iltp.h> or
 * -DWK_PROBE="iltp/iltp_internal.h", and expects it to compile or to fail on that include. It lives
 * outside src/, so a quoted include finds nothing beside it: only the target's include path
 * decides. */
#include WK_PROBE

int wk_boundary_probe(void);
int wk_boundary_probe(void) { return 0; }
