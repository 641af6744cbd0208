#include "transport/runtime.hpp"

namespace weft {

runtime g_runtime;

}  // namespace weft
