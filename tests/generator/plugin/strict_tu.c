/* Includes every generated header of the tests and examples; compiled with
 * the strictest flags as C11 and as C++17 by test_generated.c. */
#include "all_types.tracec.h"
#include "my_events.tracec.h"
#include "perfetto/trace/trace.tracec.h"
#include "test_extensions.tracec.h"

int tracec_strict_tu_marker(void);
int tracec_strict_tu_marker(void) { return 0; }
