/* The kit's report: one line per test (PASS / SKIP / FAIL with the reason) instead of
 * GoogleTest's printer, and a summary line naming the plugin. */
#include "kit.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace kit {
namespace {

Counts g_counts;

/* Continuation lines printed under a FAIL/SKIP line (the rest of a multi-line message). */
constexpr int max_detail_lines = 6;

void print_result(const char *verdict, const std::string &test, const std::string &detail) {
    std::string first = detail, rest;
    if (auto nl = detail.find('\n'); nl != std::string::npos) {
        first = detail.substr(0, nl);
        rest = detail.substr(nl + 1);
    }
    std::string out = std::string(verdict) + "  " + test;
    if (!first.empty()) out += ": " + first;
    out += "\n";
    int lines = 0;
    size_t start = 0;
    while (start < rest.size()) {
        size_t end = rest.find('\n', start);
        if (end == std::string::npos) end = rest.size();
        std::string line = rest.substr(start, end - start);
        start = end + 1;
        if (line.find_first_not_of(" \t") == std::string::npos) continue;
        if (++lines > max_detail_lines) {
            out += "      ...\n";
            break;
        }
        out += "      " + line + "\n";
    }
    fputs(out.c_str(), stdout);
    fflush(stdout);
}

/* "file:line: message" of a test part result. */
std::string describe(const ::testing::TestPartResult &part) {
    std::string where;
    if (part.file_name()) {
        where = part.file_name();
        if (part.line_number() >= 0) where += ":" + std::to_string(part.line_number());
        where += ": ";
    }
    std::string msg = part.message() ? part.message() : "";
    /* GoogleTest puts the stack trace after this marker; it is noise in a one-line report. */
    if (auto st = msg.find("\nStack trace:"); st != std::string::npos) msg.erase(st);
    size_t lead = msg.find_first_not_of("\n");
    msg = lead == std::string::npos ? std::string() : msg.substr(lead);
    return where + msg;
}

/* The first failure of a result, or its skip message.  Empty when there is none. */
std::string first_part(const ::testing::TestResult &r, bool failure) {
    for (int i = 0; i < r.total_part_count(); ++i) {
        const ::testing::TestPartResult &p = r.GetTestPartResult(i);
        if (failure ? p.failed() : p.skipped()) {
            if (!failure) {
                std::string msg = p.message() ? p.message() : "";
                size_t lead = msg.find_first_not_of("\n");
                return lead == std::string::npos ? std::string("skipped") : msg.substr(lead);
            }
            return describe(p);
        }
    }
    return failure ? "failed" : "";
}

class KitPrinter : public ::testing::EmptyTestEventListener {
  public:
    void OnTestIterationStart(const ::testing::UnitTest &, int iteration) override {
        if (GTEST_FLAG_GET(repeat) != 1) {
            printf("-- iteration %d\n", iteration + 1);
            fflush(stdout);
        }
    }

    void OnTestEnd(const ::testing::TestInfo &info) override {
        const ::testing::TestResult &r = *info.result();
        std::string name = std::string(info.test_suite_name()) + "." + info.name();
        if (r.Failed())
            report_result("FAIL", name, first_part(r, true));
        else if (r.Skipped())
            report_result("SKIP", name, first_part(r, false));
        else
            report_result("PASS", name);
    }

    /* Failures outside any test: SetUpTestSuite/TearDownTestSuite, environments. */
    void OnTestSuiteEnd(const ::testing::TestSuite &suite) override {
        const ::testing::TestResult &r = suite.ad_hoc_test_result();
        if (r.Failed())
            report_result("FAIL", std::string(suite.name()) + " (suite set-up/tear-down)", first_part(r, true));
    }

    void OnTestProgramEnd(const ::testing::UnitTest &unit) override {
        const ::testing::TestResult &r = unit.ad_hoc_test_result();
        if (r.Failed()) report_result("FAIL", "(outside any test)", first_part(r, true));
    }
};

}  // namespace

void report_install(bool verbose) {
    ::testing::TestEventListeners &listeners = ::testing::UnitTest::GetInstance()->listeners();
    if (!verbose) delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new KitPrinter);
}

void report_result(const char *verdict, const std::string &test, const std::string &detail) {
    std::string v = verdict;
    if (v == "PASS")
        ++g_counts.passed;
    else if (v == "SKIP")
        ++g_counts.skipped;
    else
        ++g_counts.failed;
    print_result(verdict, test, detail);
}

Counts report_counts() { return g_counts; }

void report_summary(const Target &t) {
    std::string what = t.kind;
    if (!t.name.empty()) what += " \"" + t.name + "\"";
    what += " (" + t.path;
    if (!t.name.empty()) what += ", ABI " + std::to_string(t.abi_major) + "." + std::to_string(t.abi_minor);
    what += ")";
    printf("weft-conformance: %s: %d passed, %d failed, %d skipped\n", what.c_str(), g_counts.passed, g_counts.failed,
           g_counts.skipped);
    if (g_counts.passed + g_counts.failed + g_counts.skipped == 0)
        printf("weft-conformance: no test ran (check --gtest_filter)\n");
    fflush(stdout);
}

// ------------------------------------------------------------ GoogleTest filters --------

namespace {

bool glob(const char *p, const char *s) {
    /* Iterative '*' backtracking, as GoogleTest's own matcher. */
    const char *star = nullptr, *resume = nullptr;
    while (*s) {
        if (*p == '?' || (*p && *p != '*' && *p == *s)) {
            ++p;
            ++s;
        } else if (*p == '*') {
            star = p++;
            resume = s;
        } else if (star) {
            p = star + 1;
            s = ++resume;
        } else {
            return false;
        }
    }
    while (*p == '*') ++p;
    return *p == '\0';
}

bool any_pattern(const std::string &patterns, const std::string &name) {
    size_t start = 0;
    while (start <= patterns.size()) {
        size_t end = patterns.find(':', start);
        if (end == std::string::npos) end = patterns.size();
        std::string p = patterns.substr(start, end - start);
        if (!p.empty() && glob(p.c_str(), name.c_str())) return true;
        start = end + 1;
    }
    return false;
}

}  // namespace

bool filter_matches(const std::string &filter, const std::string &full_name) {
    std::string positive = filter, negative;
    if (auto dash = filter.find('-'); dash != std::string::npos) {
        positive = filter.substr(0, dash);
        negative = filter.substr(dash + 1);
    }
    if (positive.empty()) positive = "*";
    return any_pattern(positive, full_name) && !any_pattern(negative, full_name);
}

}  // namespace kit
