// main() of weft-test-pgas: one PGAS kernel per process on WEFT_COMM_WORLD.
#include "pgas_env.hpp"

int main(int argc, char **argv) { return pgas_test::run_main("weft-test-pgas", argc, argv, WEFT_THREAD_SINGLE); }
