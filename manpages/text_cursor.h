// A source file read the way sowing's doctext reads it: one character at a time, with
// text pushed back in front of the read position (how '.N name' includes a named block).
#pragma once

#include <cstddef>
#include <string>

// The file's text as doctext's input stream delivers it: CR LF read as LF, tabs expanded
// with doctext's column rule.
std::string load_source_text(const std::string& path);
std::string expand_tabs_like_doctext(const std::string& text);

class TextCursor {
  public:
    explicit TextCursor(std::string text) : text_(std::move(text)) {}

    // The next character; false (and c = 0) at the end. Reading past the end still counts,
    // so every get() can be undone by one unget().
    bool get(char& c);
    void unget() { --pos_; }
    bool peek(char& c) const;
    void push_front(const std::string& s);

    std::size_t position() const { return pos_; }
    void seek(std::size_t pos) { pos_ = pos; }
    bool at_end() const { return pos_ >= text_.size(); }
    const std::string& text() const { return text_; }

    // Helpers of doctext's inutil.cc.
    void skip_blanks();  // SkipWhite: spaces and tabs
    void skip_line();    // SkipLine: through the next newline
    void skip_over(const std::string& s);  // SkipOver: consumes the first mismatch too
    std::string get_line();  // GetLine: through the newline, included

  private:
    std::string text_;
    std::size_t pos_ = 0;
};
