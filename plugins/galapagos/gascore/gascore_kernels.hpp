/* Hardware kernel functions, by the name the cluster file gives ("function"). */
#ifndef WEFT_GASCORE_KERNELS_HPP
#define WEFT_GASCORE_KERNELS_HPP

#include <cstddef>
#include <map>
#include <string>

namespace gascore {

class kernel_context;

struct kernel_function {
    const char *name;
    bool reads_stream;             /* Mediums reach the kernel; otherwise they are discarded */
    void (*run)(kernel_context &); /* nullptr: no code, the GAScore alone serves the kernel */
    /* Checks the --param values before the model starts (nullptr: nothing to check). */
    bool (*check)(const std::map<std::string, std::string> &params, int kernel_id, size_t memory_size,
                  std::string &why);
};

const kernel_function *find_kernel_function(const std::string &name);
std::string kernel_function_names(); /* "idle, echo, jacobi" */

}  // namespace gascore

#endif
