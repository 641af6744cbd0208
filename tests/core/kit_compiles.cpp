// The kit as C++ (see kit_compiles.c).
#include "kit_compiles.c"
