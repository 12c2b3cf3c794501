/* doc-sample: compile - statements on tests/generator/plugin/protos/all_types.proto's writers: `m` is a tracec_test_AllTypes. */
#include <stdbool.h>
#include <stdint.h>

#include "all_types.tracec.h"

void doc_sample(tracec_test_AllTypes *outer);
void doc_sample(tracec_test_AllTypes *outer) {
    tracec_test_AllTypes *m = outer;
    tracec_test_Child child;
    tracec_test_Recursive rec;
    (void)m, (void)child, (void)rec;
    {
@SAMPLE@
    }
}
