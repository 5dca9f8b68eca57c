#include "vdev_tt.h"
static void test_x(void) {}
TT_MAIN({ "x", test_x })
