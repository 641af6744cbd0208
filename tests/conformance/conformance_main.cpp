/* weft-fabric-conformance [gtest options] <path/to/libweft-NAME.so>
 * The plugin path may also come from WEFT_CONFORMANCE_PLUGIN. */
#include "fabric_harness.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

int main(int argc, char **argv)
{
    ::testing::InitGoogleTest(&argc, argv); /* removes the options it knows */
    std::string path;
    if (argc > 1)
        path = argv[1];
    else if (const char *env = getenv("WEFT_CONFORMANCE_PLUGIN"))
        path = env;
    conformance::plugin_select(path);
    return RUN_ALL_TESTS();
}
