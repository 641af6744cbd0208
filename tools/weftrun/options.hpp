// weftrun's command line: weftrun -n N [-x VAR[=VALUE]]... [--fabric NAME] [--timeout S]
// [--kvs-host IP] [--keep-going] prog args...
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace weftrun {

struct options {
    int nranks = 0;
    std::vector<std::pair<std::string, std::string>> exports;  // -x, resolved to name=value
    std::string fabric;                                        // --fabric, empty when not given
    int timeout_s = 0;                                         // --timeout, 0 = none
    std::string kvs_host = "127.0.0.1";                        // --kvs-host: where the KVS listens
    bool keep_going = false;                                   // --keep-going: survivors run on
    bool help = false;
    std::vector<std::string> command;  // prog and its arguments
};

// Parses argv; option parsing stops at the first non-option (the program).  Returns false
// with a message in `why` on a usage error.  Warnings (e.g. -x of an unset variable) go to
// `warnings`.
bool parse_options(int argc, char **argv, options &opt, std::string &why, std::vector<std::string> &warnings);

const char *usage_text();

}  // namespace weftrun
