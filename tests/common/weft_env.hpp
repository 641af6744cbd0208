// The job as a test sees it: this process's rank and the job's size on WEFT_COMM_WORLD, and the
// fabric and bootstrap weft_get_runtime_info reports.  Needs weft_init first.
#pragma once
#include <string>

#include "weft/weft.h"

namespace harness {

inline int world_rank() {
    int r = -1;
    weft_comm_rank(WEFT_COMM_WORLD, &r);
    return r;
}
inline int world_size() {
    int s = -1;
    weft_comm_size(WEFT_COMM_WORLD, &s);
    return s;
}

// The fabric and bootstrap in use ("?" for what the runtime info does not say).
struct runtime {
    std::string fabric = "?", bootstrap = "?";
};
// False when weft_get_runtime_info itself fails (out is then all "?").
inline bool runtime_info(runtime &out) {
    out = runtime{};
    weft_info info = WEFT_INFO_NULL;
    if (weft_get_runtime_info(&info) != WEFT_SUCCESS) return false;
    char v[256] = "";
    int flag = 0;
    if (weft_info_get(info, "fabric", sizeof v - 1, v, &flag) == WEFT_SUCCESS && flag) out.fabric = v;
    flag = 0;
    if (weft_info_get(info, "bootstrap", sizeof v - 1, v, &flag) == WEFT_SUCCESS && flag) out.bootstrap = v;
    weft_info_free(&info);
    return true;
}

}  // namespace harness
