// The troff text of one man page, written the way doctext -man -quotefmt writes it: its
// nroff text filter (TextOutNroff: blanks dropped after a newline, '\' doubled, '.' at the
// start of a line escaped as "\&."), under its quote filter (TextOutQFmt: 'x' -> .I x,
// `x` -> .B x), and its output commands (the %-strings of sowing's nroff.def files).
//
// One deviation from doctext: an apostrophe between two letters outside a quote ("MPICH's")
// is written as an apostrophe; doctext opens a quote there and sets the rest of the page
// askew. No page of the MPICH 4.0.2 tarball has one. Each is reported (apostrophes()), so the
// source can say '' (doctext's literal quote) instead.
#pragma once

#include <string>
#include <vector>

class TroffOutput {
  public:
    // false: read every apostrophe as doctext does (see above).
    void keep_apostrophes(bool keep) { keep_apostrophes_ = keep; }

    // Text, through the quote filter.
    void text_char(char c);
    void text(const std::string& s, int leading_blanks = 0);  // TextOut::PutToken
    void newline();  // TextOut::PutNewline: does not settle a pending quote

    // A named command (nroff.def), after settling a pending quote character.
    void command(const std::string& name);
    // Commands with arguments: these skip the quote filter, as doctext's do.
    void section(const std::string& title);
    void title(const std::string& name, const std::string& man_section,
               const std::string& date, const std::string& heading);

    // Settle a pending quote character and reset the quote state (doctext's "eop"); false if
    // a quote was left open.
    bool end_page();
    // The words with an apostrophe between letters outside a quote (see above).
    const std::vector<std::string>& apostrophes() const { return apostrophes_; }
    const std::string& page() const { return out_; }

  private:
    void settle_pending_quote();
    void note_text(char c);  // the text read so far, for the apostrophe rule
    void quote_filter_char(char c);
    void nroff_char(char c);
    void run(const std::string& definition, const std::string* args, int nargs);

    std::string out_;
    bool last_was_newline_ = true;
    bool pending_tt_ = false, pending_em_ = false;
    int tt_open_ = 0, em_open_ = 0;
    bool keep_apostrophes_ = true;
    char previous_ = '\n', before_quote_ = '\n';
    std::string recent_text_;  // the current word, to name it in a warning
    std::vector<std::string> apostrophes_;
};
