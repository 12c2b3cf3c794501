#include "buffer_test_util.h"
Test(buffer_fork, placeholder) {}
