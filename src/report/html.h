#pragma once
// report.html: a Document written as one self-contained HTML page. Styles are
// inline, charts are inline SVG, there is no script, and a
// Content-Security-Policy of default-src 'none' forbids the browser any
// request beyond the page itself, so the file works offline and leaks
// nothing when opened.

#include <map>
#include <string>
#include <string_view>

#include "report/document.h"

namespace ppsearch::report {

// &, <, >, " and ' as character references.
std::string EscapeHtml(std::string_view text);

// Escaped text with report.md's inline marks turned into <strong> and <code>.
std::string InlineHtml(std::string_view text);

// The page. `figures` maps a figure block's name to its SVG; a figure with no
// entry is left out.
std::string RenderHtml(const Document& doc, const std::map<std::string, std::string>& figures);

}  // namespace ppsearch::report
