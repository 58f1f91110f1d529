#include "troff_output.h"

#include <cctype>
#include <map>
#include <stdexcept>

namespace {

// The commands doctext -man uses, as sowing defines them (share/nroff.def, overridden by
// share/doctext/nroff.def). %n: a newline unless at one; %1..%4: an argument, through the
// nroff filter; %u1: the first argument in upper case, raw.
const std::map<std::string, std::string>& nroff_commands()
{
    static const std::map<std::string, std::string> commands = {
        {"mantitle", "%n.TH %1 %2 \"%3\" \" \" \"%4\"%n.SH NAME%n%1 "},
        {"em_dash", "\\-  "},
        {"s_synopsis", "%n.SH SYNOPSIS%n.nf%n"},
        {"e_synopsis", "%n.fi%n"},
        {"section", "%n.SH %u1%n"},
        {"end_par", "%n%n"},
        {"linebreak", "%n.br%n"},
        {"blank", " "},
        {"tt", "%n.I "},
        {"em", "%n.B "},
        {"rm", "%n"},
        {"s_verbatim", "%n.nf%n"},
        {"e_verbatim", "%n.fi%n"},
        {"s_arg_list", ""},
        {"e_arg_list", ""},
        {"s_arg_inlist", "%n.PD 0%n.TP%n.B "},
        {"e_arg_inlist", "%n"},
        {"s_defn_inlist", "%n- "},
        {"e_defn_inlist", "%n.PD 1%n"},
        {"s_doctext_verbatim", "%n.br%n"},
        {"e_doctext_verbatim", "%n"},
        {"s_enumerate", "%n.nr e 1 1%n"},
        {"e_enumerate", "%n.rr e"},
        {"itemize_enum", "%n\\\\ne"},
        {"s_blockquote", "%n.in 1cm%n"},
        {"e_blockquote", "%n.in%n"},
        {"s_caption", "%n.RS"},
        {"e_caption", "%n.RE"},
        {"eop", ""},
    };
    return commands;
}

const std::string& definition_of(const std::string& name)
{
    auto it = nroff_commands().find(name);
    if (it == nroff_commands().end())
        throw std::logic_error("no troff command " + name);
    return it->second;
}

}  // namespace

void TroffOutput::nroff_char(char c)
{
    if (last_was_newline_ && std::isspace(static_cast<unsigned char>(c)))
        return;
    bool newline = false;
    if (c == '\\') {
        out_ += "\\\\";
    } else if (c == '\n') {
        out_ += c;
        newline = true;
    } else if (c == '.' && last_was_newline_) {
        out_ += "\\&.\n";
        newline = true;
    } else {
        out_ += c;
    }
    last_was_newline_ = newline;
}

// TextOutQFmt::PutChar: 'text' is set in italics (tt), `text` in bold (em); a doubled
// quote character is the character itself. c == 0 only settles a pending quote.
void TroffOutput::quote_filter_char(char c)
{
    auto letter = [](char ch) { return std::isalpha(static_cast<unsigned char>(ch)) != 0; };
    if (pending_tt_) {
        pending_tt_ = false;
        if (c == '\'') {
            nroff_char(c);
            return;
        }
        bool apostrophe = tt_open_ == 0 && letter(c) && letter(before_quote_);
        if (apostrophe)
            apostrophes_.push_back(recent_text_ + '\'' + c);
        if (apostrophe && keep_apostrophes_) {
            nroff_char('\'');
            recent_text_ += '\'';
            quote_filter_char(c);
            return;
        }
        if (tt_open_++ == 0) {
            run(definition_of("tt"), nullptr, 0);
        } else {
            run(definition_of("rm"), nullptr, 0);
            tt_open_ = 0;
        }
    } else if (c == '\'') {
        pending_tt_ = true;
        before_quote_ = previous_;
        return;
    }
    if (pending_em_) {
        pending_em_ = false;
        if (c == '`') {
            nroff_char(c);
            return;
        }
        if (em_open_++ == 0) {
            run(definition_of("em"), nullptr, 0);
        } else {
            run(definition_of("rm"), nullptr, 0);
            em_open_ = 0;
        }
    } else if (c == '`') {
        pending_em_ = true;
        return;
    }
    if (c) {
        nroff_char(c);
        note_text(c);
    }
}

void TroffOutput::note_text(char c)
{
    previous_ = c;
    if (c == '\n' || std::isspace(static_cast<unsigned char>(c)))
        recent_text_.clear();
    else
        recent_text_ += c;
}

void TroffOutput::text_char(char c)
{
    quote_filter_char(c);
}

void TroffOutput::text(const std::string& s, int leading_blanks)
{
    for (int i = 0; i < leading_blanks; ++i)
        quote_filter_char(' ');
    for (char c : s)
        quote_filter_char(c);
}

void TroffOutput::newline()
{
    note_text('\n');
    before_quote_ = '\n';  // a quote at the end of a line is no apostrophe in a word
    out_ += '\n';
    last_was_newline_ = true;
}

void TroffOutput::settle_pending_quote()
{
    quote_filter_char(0);
}

void TroffOutput::command(const std::string& name)
{
    settle_pending_quote();
    note_text('\n');
    run(definition_of(name), nullptr, 0);
}

void TroffOutput::section(const std::string& title)
{
    note_text('\n');
    run(definition_of("section"), &title, 1);
}

void TroffOutput::title(const std::string& name, const std::string& man_section,
                        const std::string& date, const std::string& heading)
{
    const std::string args[4] = {name, man_section, date, heading};
    run(definition_of("mantitle"), args, 4);
}

bool TroffOutput::end_page()
{
    settle_pending_quote();
    bool closed = (tt_open_ == 0 && em_open_ == 0);
    tt_open_ = em_open_ = 0;
    return closed;
}

// TextOut::PutCommand: every %-code first clears the at-newline state; literal characters
// go out raw.
void TroffOutput::run(const std::string& definition, const std::string* args, int nargs)
{
    auto arg = [&](char digit) -> std::string {
        int i = digit - '1';
        return (i >= 0 && i < nargs) ? args[i] : std::string();
    };
    for (std::size_t i = 0; i < definition.size(); ++i) {
        char c = definition[i];
        if (c != '%' || i + 1 == definition.size()) {
            out_ += c;
            last_was_newline_ = (c == '\n');
            continue;
        }
        char code = definition[++i];
        bool was_newline = last_was_newline_;
        last_was_newline_ = false;
        switch (code) {
        case 'n':
            if (!was_newline) {
                out_ += '\n';
                last_was_newline_ = true;
            }
            break;
        case 'u':
            if (i + 1 < definition.size()) {
                for (char a : arg(definition[++i]))
                    out_ += static_cast<char>(std::toupper(static_cast<unsigned char>(a)));
            }
            break;
        case '%':
            out_ += '%';
            break;
        default:
            if (code >= '1' && code <= '4') {
                for (char a : arg(code))
                    nroff_char(a);
            }
            break;
        }
    }
}
