// weft-info: which plugins are installed, whether each opens (and why not), and which fabric
// weft_init would select with the current environment; with --coll, the collective algorithms
// and when each is chosen.  It asks the libweft it runs with (weft_query_*), so it sees that
// library's plugins wherever the installation was moved.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "weft/plugin.h"
#include "weft/weft.h"

namespace {

void print_plugin(const weft_plugin_report_t *p, void *count) {
    ++*static_cast<int *>(count);
    std::printf("%s\n  path:     %s\n", p->name, p->path);
    if (p->status < 0) {
        std::printf("  status:   cannot load: %s\n\n", p->why);
        return;
    }
    std::printf("  kind:     %s\n  version:  %s\n  ABI:      %u.%u\n  priority: %d\n", p->kind, p->version,
                p->abi_major, p->abi_minor, p->priority);
    if (std::strcmp(p->kind, "queue") == 0) std::printf("  types:    %s\n", p->queue_types);
    if (p->status == 0)
        std::printf("  status:   does not open: %s\n", p->why);
    else if (std::strcmp(p->kind, "fabric") == 0)
        std::printf("  status:   opens (eager %zu B, inject %zu B, max message %zu B)\n", p->eager_size, p->inject_size,
                    p->max_message_size);
    else
        std::printf("  status:   opens\n");
    std::printf("\n");
}

void print_collective(const weft_coll_report_t *a, void *set) {
    std::printf("%-21s %-25s %-31s %s\n", a->collective, a->algorithm, a->variable, a->when);
    auto &vars = *static_cast<std::vector<std::string> *>(set);
    const char *v = std::getenv(a->variable);
    if (v != nullptr && *v != '\0' && (vars.empty() || vars.back() != a->variable)) vars.push_back(a->variable);
}

// The collective registry: one line per algorithm, then the variables this environment sets.
int print_collectives() {
    std::printf("%-21s %-25s %-31s %s\n", "collective", "algorithm", "variable", "when it applies");
    std::vector<std::string> set;
    if (weft_query_collectives(print_collective, &set) != WEFT_SUCCESS) return 1;
    std::printf("\nSet a variable to an algorithm's name to force it (auto or unset: the automatic choice).\n");
    for (const std::string &var : set)
        std::printf("  %s=%s in this environment\n", var.c_str(), std::getenv(var.c_str()));
    return 0;
}

std::string error_detail() {
    char detail[WEFT_MAX_ERROR_STRING];
    size_t len = sizeof detail;
    return weft_error_detail(detail, &len) == WEFT_SUCCESS ? detail : "";
}

// The MPI front end's functions: the one list libweft-mpi is built from (mpi/include/
// weft_mpi_functions.def), by family.
int print_mpi_functions() {
    struct row {
        const char *family, *name;
    };
    static const row rows[] = {
#define WEFT_MPI_FN(family, ret, name, params) {#family, "MPI_" #name},
#define WEFT_MPIX_FN(family, ret, name, params) {#family, "MPIX_" #name},
#include <weft_mpi_functions.def>
#undef WEFT_MPI_FN
#undef WEFT_MPIX_FN
    };
    std::printf("MPI front end (libweft-mpi, mpi.h in include/weft-mpi, MPICH ABI; docs/mpi.md)\n");
    const char *family = "";
    for (const row &r : rows) {
        if (std::strcmp(family, r.family) != 0) std::printf("\n[%s]\n", family = r.family);
        std::printf("%s\n", r.name);
    }
    std::printf(
        "\n%zu functions, each also under its profiling name (PMPI_..., PMPIX_...); any other MPI\n"
        "function is not defined: a program calling it fails to link (LD_BIND_NOW=1: to load)\n",
        sizeof rows / sizeof rows[0]);
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc > 1 && (!std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help"))) {
        std::printf(
            "usage: weft-info [--coll | --mpi]\n  Lists Weft plugins on the search path (WEFT_PLUGIN_PATH, then <libdir>/weft),\n"
            "  whether each opens on this machine, and the fabric weft_init would select\n"
            "  (WEFT_FABRIC=a,b,^c sets the preference).\n"
            "  --coll: the collective algorithms, when each applies, and the WEFT_COLL_<NAME>\n"
            "  variable that forces one.\n"
            "  --mpi: the functions of the MPI front end (libweft-mpi).\n");
        return 0;
    }
    if (argc > 1 && !std::strcmp(argv[1], "--coll")) return print_collectives();
    if (argc > 1 && !std::strcmp(argv[1], "--mpi")) return print_mpi_functions();
    char path[8192];
    weft_query_plugin_path(path, sizeof path);
    std::printf("Weft %d.%d.%d, plugin ABI %d.%d\nsearch path: %s\n\n", WEFT_VERSION_MAJOR, WEFT_VERSION_MINOR,
                WEFT_VERSION_PATCH, WEFT_PLUGIN_ABI_MAJOR, WEFT_PLUGIN_ABI_MINOR, path);
    int count = 0;
    weft_query_plugins(print_plugin, &count);
    if (count == 0) std::printf("no plugins found\n");
    char name[256];
    if (weft_query_fabric(name, sizeof name) != WEFT_SUCCESS) {
        std::string why = error_detail();
        if (why.rfind("WEFT_FABRIC=", 0) == 0) {
            std::printf("%s\n", why.c_str());
        } else {
            std::printf("selected fabric: none\n  %s\n", why.c_str());
        }
        return 1;
    }
    const char *env = std::getenv("WEFT_FABRIC");
    std::printf("selected fabric: %s (%s)\n", name, env && *env ? "WEFT_FABRIC" : "highest priority that opens");
    return 0;
}
