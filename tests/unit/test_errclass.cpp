// Error classes: the table of codes and MPI classes (code and docs/errors.md agree), the text of
// every code, and the classes, codes and strings a program adds.  None needs weft_init.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "base/error_class.hpp"
#include "weft/weft.h"

namespace {

std::string text_of(int code) {
    char buf[WEFT_MAX_ERROR_STRING] = "";
    size_t len = 0;
    weft_error_string(code, buf, &len);
    return std::string(buf, len);
}

struct doc_row {
    std::string name;
    int value;
    std::string mpi_class;
};

// The rows of docs/errors.md's code table: | `WEFT_X` | N | `MPI_Y` | meaning |
std::vector<doc_row> doc_rows() {
    std::ifstream in(WEFT_ERRORS_DOC);
    EXPECT_TRUE(in.good()) << "cannot read " << WEFT_ERRORS_DOC;
    const std::regex row(R"(^\| `(WEFT_[A-Z_]+)` \| (\d+) \| `(MPIX?_[A-Z_]+)` \|)");
    std::vector<doc_row> rows;
    for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (std::regex_search(line, m, row)) rows.push_back({m[1], std::stoi(m[2]), m[3]});
    }
    return rows;
}

TEST(errclass, DocsTableMatchesCode) {
    size_t n = 0;
    const weft::error_class_row *rows = weft::error_class_rows(&n);
    std::vector<doc_row> doc = doc_rows();
    ASSERT_EQ(doc.size(), n) << "docs/errors.md and core/base/error_class.cpp list different numbers of codes";
    for (size_t i = 0; i < n; ++i) {
        EXPECT_EQ(doc[i].name, rows[i].name) << "row " << i;
        EXPECT_EQ(doc[i].value, rows[i].code) << rows[i].name;
        EXPECT_EQ(doc[i].mpi_class, rows[i].mpi_class) << rows[i].name;
    }
}

// Spot checks of the mapping the issue names, so that the table cannot drift as a whole.
TEST(errclass, KnownMpiClasses) {
    size_t n = 0;
    const weft::error_class_row *rows = weft::error_class_rows(&n);
    auto mpi = [&](int code) {
        return std::string(code >= 0 && static_cast<size_t>(code) < n ? rows[code].mpi_class : "?");
    };
    EXPECT_EQ(mpi(WEFT_ERR_RANK), "MPI_ERR_RANK");
    EXPECT_EQ(mpi(WEFT_ERR_TAG), "MPI_ERR_TAG");
    EXPECT_EQ(mpi(WEFT_ERR_TRUNCATE), "MPI_ERR_TRUNCATE");
    EXPECT_EQ(mpi(WEFT_ERR_PROC_FAILED), "MPIX_ERR_PROC_FAILED");
    EXPECT_EQ(mpi(WEFT_ERR_IN_STATUS), "MPI_ERR_IN_STATUS");
    EXPECT_EQ(mpi(WEFT_ERR_GROUP), "MPI_ERR_GROUP");
    EXPECT_EQ(mpi(WEFT_ERR_ERRHANDLER), "MPI_ERR_ERRHANDLER");
    EXPECT_EQ(rows[n - 1].code, WEFT_ERR_ERRHANDLER) << "the last predefined code";
}

TEST(errclass, EveryCodeHasTextAndIsItsOwnClass) {
    size_t n = 0;
    const weft::error_class_row *rows = weft::error_class_rows(&n);
    for (size_t i = 0; i < n; ++i) {
        char buf[WEFT_MAX_ERROR_STRING];
        size_t len = 0;
        EXPECT_EQ(weft_error_string(rows[i].code, buf, &len), WEFT_SUCCESS) << rows[i].name;
        EXPECT_GT(len, 0u) << rows[i].name;
        int cls = -1;
        EXPECT_EQ(weft_error_class(rows[i].code, &cls), WEFT_SUCCESS);
        EXPECT_EQ(cls, rows[i].code);
    }
    EXPECT_EQ(text_of(WEFT_ERR_ERRHANDLER), "invalid error handler");
    int cls = 0;
    EXPECT_EQ(weft_error_class(static_cast<int>(n), &cls), WEFT_ERR_ARG);
    EXPECT_EQ(weft_error_class(-1, &cls), WEFT_ERR_ARG);
    EXPECT_EQ(weft_error_class(WEFT_ERR_RANK, nullptr), WEFT_ERR_ARG);
}

TEST(errclass, AddedClassesCodesAndStrings) {
    int cls = 0, code = 0, code2 = 0, got = 0;
    ASSERT_EQ(weft_add_error_class(&cls), WEFT_SUCCESS);
    EXPECT_GE(cls, WEFT_ERR_FIRST_USER);
    ASSERT_EQ(weft_add_error_code(cls, &code), WEFT_SUCCESS);
    EXPECT_NE(code, cls);
    EXPECT_EQ(weft_error_class(code, &got), WEFT_SUCCESS);
    EXPECT_EQ(got, cls);
    EXPECT_EQ(weft_error_class(cls, &got), WEFT_SUCCESS);
    EXPECT_EQ(got, cls);
    // A code of a predefined class.
    ASSERT_EQ(weft_add_error_code(WEFT_ERR_RANK, &code2), WEFT_SUCCESS);
    EXPECT_EQ(weft_error_class(code2, &got), WEFT_SUCCESS);
    EXPECT_EQ(got, WEFT_ERR_RANK);
    // Strings: empty until set, replaced by a later call.
    EXPECT_EQ(text_of(code), "");
    ASSERT_EQ(weft_add_error_string(code, "my code"), WEFT_SUCCESS);
    EXPECT_EQ(text_of(code), "my code");
    ASSERT_EQ(weft_add_error_string(code, "my code, again"), WEFT_SUCCESS);
    EXPECT_EQ(text_of(code), "my code, again");
    ASSERT_EQ(weft_add_error_string(cls, "my class"), WEFT_SUCCESS);
    EXPECT_EQ(text_of(cls), "my class");
    EXPECT_EQ(text_of(WEFT_ERR_RANK), "invalid rank");
}

TEST(errclass, AddedMisuseIsRefused) {
    int cls = 0, code = 0;
    EXPECT_EQ(weft_add_error_class(nullptr), WEFT_ERR_ARG);
    ASSERT_EQ(weft_add_error_class(&cls), WEFT_SUCCESS);
    ASSERT_EQ(weft_add_error_code(cls, &code), WEFT_SUCCESS);
    int other = 0;
    EXPECT_EQ(weft_add_error_code(code, &other), WEFT_ERR_ARG) << "a code is not a class";
    EXPECT_EQ(weft_add_error_code(WEFT_ERR_FIRST_USER - 1, &other), WEFT_ERR_ARG);
    EXPECT_EQ(weft_add_error_code(cls, nullptr), WEFT_ERR_ARG);
    EXPECT_EQ(weft_add_error_string(WEFT_ERR_RANK, "no"), WEFT_ERR_ARG) << "predefined text is fixed";
    EXPECT_EQ(text_of(WEFT_ERR_RANK), "invalid rank");
    EXPECT_EQ(weft_add_error_string(code + 1000, "no"), WEFT_ERR_ARG) << "never added";
    EXPECT_EQ(weft_add_error_string(code, nullptr), WEFT_ERR_ARG);
    std::string long_text(WEFT_MAX_ERROR_STRING, 'x');
    EXPECT_EQ(weft_add_error_string(code, long_text.c_str()), WEFT_ERR_ARG);
    long_text.resize(WEFT_MAX_ERROR_STRING - 1);
    EXPECT_EQ(weft_add_error_string(code, long_text.c_str()), WEFT_SUCCESS);
    EXPECT_EQ(text_of(code), long_text);
}

}  // namespace
