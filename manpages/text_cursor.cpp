#include "text_cursor.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

std::string expand_tabs_like_doctext(const std::string& text)
{
    // InStreamFile::GetChar: a tab read at column c becomes a blank plus one blank for each
    // of c+1 .. the next multiple of 8 (so a tab in column 0 is a single blank).
    std::string out;
    out.reserve(text.size());
    int column = 0;
    for (char c : text) {
        if (c == '\n') {
            out += c;
            column = 0;
            continue;
        }
        if (c == '\t') {
            int blanks = 0;
            while (column++ % 8)
                ++blanks;
            out.append(blanks + 1, ' ');
            column += blanks;
            continue;
        }
        out += c;
        ++column;
    }
    return out;
}

std::string load_source_text(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error("cannot read " + path);
    std::ostringstream raw;
    raw << in.rdbuf();
    std::string text;
    const std::string& s = raw.str();
    text.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n')
            continue;
        text += s[i];
    }
    return expand_tabs_like_doctext(text);
}

bool TextCursor::get(char& c)
{
    if (pos_ < text_.size()) {
        c = text_[pos_++];
        return true;
    }
    ++pos_;
    c = 0;
    return false;
}

bool TextCursor::peek(char& c) const
{
    if (pos_ < text_.size()) {
        c = text_[pos_];
        return true;
    }
    c = 0;
    return false;
}

void TextCursor::push_front(const std::string& s)
{
    if (pos_ > text_.size())
        pos_ = text_.size();
    text_.insert(pos_, s);
}

void TextCursor::skip_blanks()
{
    char c;
    while (get(c) && (c == ' ' || c == '\t')) {
    }
    unget();
}

void TextCursor::skip_line()
{
    char c;
    while (get(c) && c != '\n') {
    }
}

void TextCursor::skip_over(const std::string& s)
{
    char c;
    for (char want : s) {
        if (!get(c) || c != want)
            return;
    }
}

std::string TextCursor::get_line()
{
    std::string line;
    char c;
    while (get(c)) {
        line += c;
        if (c == '\n')
            break;
    }
    return line;
}
