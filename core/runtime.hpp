// Process-wide state between weft_init and weft_finalize.
#pragma once
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap.hpp"
#include "loader.hpp"
#include "vci.hpp"

namespace weft {

enum class runtime_state : int { uninitialized = 0, initialized = 1, finalized = 2 };

struct runtime {
    std::atomic<runtime_state> state{runtime_state::uninitialized};
    int thread_level = WEFT_THREAD_SINGLE;
    std::unique_ptr<bootstrap> boot;
    fabric_open fabric;
    std::map<std::string, std::string> hints;  // info given to weft_init_info
    std::vector<std::unique_ptr<vci>> vcis;
    int world_rank = 0, world_size = 1;
};

runtime &rt();

// WEFT_SUCCESS when initialized, else WEFT_ERR_NOT_INITIALIZED/FINALIZED with a detail
// naming the entry point.
int runtime_check(const char *fn);

// Maps a plugin return code to a WEFT_ERR_* code.
int plugin_error(int plugin_code);

}  // namespace weft
