// Error text for test messages: what weft_error_string says of a code, and the detail
// weft_error_detail keeps for the calling thread's last failure.
#pragma once
#include <string>

#include "weft/weft.h"

namespace harness {

// The detailed message of the calling thread's last error ("" when there is none).
inline std::string detail() {
    char buf[WEFT_MAX_ERROR_STRING + 1] = "";
    size_t len = 0;
    weft_error_detail(buf, &len);
    return buf;
}

// weft_error_string's text for a code.
inline std::string error_string(int code) {
    char text[WEFT_MAX_ERROR_STRING + 1] = "";
    size_t len = 0;
    weft_error_string(code, text, &len);
    return text;
}

// "code N (text), detail: \"...\"" for assertion messages.
inline std::string err(int code) {
    return "code " + std::to_string(code) + " (" + error_string(code) + "), detail: \"" + detail() + "\"";
}

}  // namespace harness
