/* placeholder, filled below */
#include "buffer_test_util.h"
Test(buffer_threads, placeholder) {}
