// Follows doctext's reading of a structured comment step by step (doctext.cc OutputManPage
// and OutputText, docutil.cc, dotfmat.cc), so that the troff it writes is the same byte for
// byte (but for apostrophes within words, see troff_output.h); quirks included, since the
// tarball's pages have them. Comments name the doctext routine each step stands for.
#include "doc_comment_pages.h"

#include "text_cursor.h"
#include "troff_output.h"

#include <cctype>

namespace {

bool is_space(char c)
{
    return std::isspace(static_cast<unsigned char>(c)) != 0;
}

const std::string structured_comment_kinds = "@MDINSEPJ";  // doc.h MATCH_STRING

class RoutinePageReader {
  public:
    RoutinePageReader(TextCursor& in, NamedBlocks& blocks, const std::string& label,
                      std::vector<std::string>& warnings)
        : in_(in), blocks_(blocks), label_(label), warnings_(warnings)
    {
    }

    // OutputManPage, for a routine ("/*@ ... @*/"): the input is just after the name.
    std::string read_page(const std::string& name, const DoctextOptions& options)
    {
        name_ = name;
        out_.keep_apostrophes(options.keep_apostrophes);
        out_.title(name, options.man_section, options.date, options.heading);
        out_.command("em_dash");
        bool at_end = read_description();

        std::size_t after_description = in_.position();
        if (!at_end)
            skip_to_function_synopsis();
        out_.command("s_synopsis");
        read_function_synopsis();
        out_.command("e_synopsis");
        in_.seek(after_description);

        if (!at_end)
            read_text();
        if (!out_.end_page())
            warn("a quote (' or `) is left open at the end of the page");
        for (const auto& word : out_.apostrophes())
            warn("apostrophe in \"" + word + "...\": " +
                 (options.keep_apostrophes ? "kept, where doctext opens a quote"
                                           : "doctext opens a quote there") +
                 " (write '' for an apostrophe)");
        if (in_arg_list_)
            warn("incomplete argument list (probably + with no -)");
        return out_.page();
    }

  private:
    void warn(const std::string& what) { warnings_.push_back(label_ + ": " + name_ + ": " + what); }

    // DocReadDescription: [space]* [-]* [space]* text up to a blank line or the end of the
    // comment, newlines read as blanks.
    bool read_description()
    {
        char c;
        bool crossed_newline = false;
        while (in_.get(c) && is_space(c))
            crossed_newline |= (c == '\n');
        in_.unget();
        while (in_.get(c) && c == '-') {
        }
        // (the character that ended the dashes is dropped, as in doctext)
        crossed_newline |= (c == '\n');
        while (in_.get(c) && is_space(c))
            crossed_newline |= (c == '\n');
        in_.unget();
        if (crossed_newline)
            warn("the name line has no description: the NAME section takes the next "
                 "paragraph instead, as doctext does");

        const std::string end_mark = "/*@";
        const int first_state = 2;
        int state = first_state;
        int newlines = 0;
        while (state >= 0 && in_.get(c)) {
            if (c == end_mark[state]) {
                --state;
                continue;
            }
            if (state != first_state) {
                for (int i = first_state; i > state; --i)
                    out_.text_char(end_mark[i]);
                state = first_state;
            }
            if (c == '\n') {
                ++newlines;
                c = ' ';
            } else if (newlines && is_space(c)) {
                continue;
            } else {
                newlines = 0;
            }
            if (newlines == 2)
                break;
            out_.text_char(c);
        }
        return state < 0;
    }

    // DocSkipToFuncSynopsis: past the end of the comment and the blanks after it.
    void skip_to_function_synopsis()
    {
        const std::string end_mark = "/*@";
        int state = 2;
        char c;
        while (state >= 0 && in_.get(c))
            state = (c == end_mark[state]) ? state - 1 : 2;
        while (in_.get(c) && is_space(c)) {
        }
        in_.unget();
    }

    // InStream::GetToken with the break table DocReadFuncSynopsis sets: a run of letters
    // and '_', a run of digits, or one other character (a newline included); `blanks`
    // counts the blanks before it.
    bool next_token(std::string& token, int& blanks)
    {
        char c;
        blanks = 0;
        while (true) {
            if (!in_.get(c))
                return false;
            if (c == '\n' || !is_space(c))
                break;
            ++blanks;
        }
        auto kind = [](char ch) {
            unsigned char u = static_cast<unsigned char>(ch);
            if (std::isalpha(u) || ch == '_')
                return 1;
            if (std::isdigit(u))
                return 2;
            return 0;
        };
        token.assign(1, c);
        int k = kind(c);
        if (k == 0)
            return true;
        while (in_.get(c) && kind(c) == k)
            token += c;
        in_.unget();
        return true;
    }

    // DocReadFuncSynopsis: the declaration up to its '{' (or the ';' of a prototype).
    void read_function_synopsis()
    {
        std::string token;
        int blanks;
        int parens = 0;
        bool finding_form = true, exit_on_semicolon = false;
        while (next_token(token, blanks) && token[0] != '{') {
            if (exit_on_semicolon) {
                if (token[0] == ';')
                    break;
                exit_on_semicolon = false;
            }
            if (token == "register") {
                char c;
                while (in_.get(c) && is_space(c)) {
                }
                in_.unget();
                continue;
            }
            if (token[0] == '(') {
                ++parens;
            } else if (token[0] == ')') {
                if (parens == 1) {
                    if (finding_form)
                        exit_on_semicolon = true;
                    finding_form = false;
                }
                --parens;
            }
            out_.text(token, blanks);
        }
    }

    // OutputText: the rest of the comment, line by line.
    void read_text()
    {
        bool doing_synopsis = false;
        char c;
        while (in_.get(c)) {
            if (doing_synopsis && (c == '$' || c == '.' || c == '+' || c == '-' || c == '\n')) {
                out_.command("e_synopsis");
                doing_synopsis = false;
            }
            if (c == '$') {
                verbatim_line();
                continue;
            }
            if (c == '.' || c == '+' || c == '-') {
                dot_command(c);
                continue;
            }
            if (c != '\n' && is_space(c)) {
                while (in_.get(c) && is_space(c) && c != '\n') {
                }
            }
            if (c == '\n') {
                out_.command("end_par");
                continue;
            }
            // doctext reads the line into a buffer of MAX_LINE (512) characters, and ends
            // the page at a line it cannot hold.
            std::string line(1, c);
            while (in_.get(c) && c != '\n' && line.size() + 1 < longest_text_line)
                line += c;
            if (c != '\n') {
                warn(in_.at_end() ? "comment not closed before the end of the file"
                                  : "a line of " + std::to_string(line_length_from(line)) +
                                        " characters: doctext stops the page before it (at most " +
                                        std::to_string(longest_text_line - 1) + ")");
                return;
            }
            while (!line.empty() && is_space(line.back()))
                line.pop_back();
            if (line == "@*/")
                return;
            if (line.size() >= 2 && line.compare(line.size() - 2, 2, "\\:") == 0) {
                line.erase(line.size() - 2, 1);
                out_.text(line);
                out_.newline();
            } else if (line.back() == ':') {
                line.pop_back();
                if (upper(line) == "SYNOPSIS") {
                    doing_synopsis = true;
                    out_.command("s_synopsis");
                } else {
                    out_.section(line);
                }
            } else {
                out_.text(line);
                out_.newline();
            }
        }
        if (doing_synopsis)
            out_.command("e_synopsis");
        warn("comment not closed before the end of the file");
    }

    static constexpr std::size_t longest_text_line = 511;

    // The length of the line `start` begins (for the warning of a line too long).
    std::size_t line_length_from(const std::string& start) const
    {
        std::size_t end = in_.text().find('\n', std::min(in_.position(), in_.text().size()));
        std::size_t rest = (end == std::string::npos ? in_.text().size() : end) -
                           std::min(in_.position(), in_.text().size());
        return start.size() + 1 + rest;
    }

    static std::string upper(std::string s)
    {
        for (char& ch : s)
            ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        return s;
    }

    // ProcessDotFmt: a line starting with '.', '+' or '-'.
    void dot_command(char kind)
    {
        char c;
        if (!in_.get(c))
            return;
        switch (c) {
        case 'I':
        case ' ':
        case '\t':
            if (c != 'I') {
                in_.unget();
            }
            argument(kind);
            return;
        case 'N':
            include_named_block();
            return;
        case 'n':
            out_.command("linebreak");
            return;
        case 'v':
            verbatim_block();
            return;
        case 's':
            see_also();
            return;
        case 'k':
            keywords();
            return;
        case 'E':  // .Eb .Ee: a numbered list (ProcessEnumerate)
            if (in_.get(c) && (c == 'b' || c == 'e'))
                out_.command(c == 'b' ? "s_enumerate" : "e_enumerate");
            else
                warn(std::string("invalid enumerate command '.E") + c + "'");
            return;
        case 'i':  // an item of it (ProcessItemize)
            out_.command("itemize_enum");
            return;
        case 'B':  // .Bqs .Bqe: a block quote (ProcessBlockOp)
            if (in_.get(c) && c == 'q' && in_.get(c) && (c == 's' || c == 'e'))
                out_.command(c == 's' ? "s_blockquote" : "e_blockquote");
            else
                warn("invalid block command '.B...'");
            return;
        case 'c':  // .cb .ce: a caption (ProcessCaption)
            if (in_.get(c) && (c == 'b' || c == 'e'))
                out_.command(c == 'b' ? "s_caption" : "e_caption");
            else
                warn(std::string("invalid caption command '.c") + c + "'");
            return;
        case 'p':  // .p file: a picture, nothing in a man page (ProcessPicture)
            in_.skip_blanks();
            in_.get_line();
            return;
        default:
            warn(std::string("dot command '") + kind + c + "' not handled (" +
                 (c == 'f' ? "user command" : "doctext: unknown dot command") + ")");
            return;
        }
    }

    // ProcessArgFmt: ". name - description", in a list started by '+' and ended by '-'.
    void argument(char kind)
    {
        in_.skip_blanks();
        if (kind == '.' && !in_arg_list_)
            kind = '-';  // a lone '.' item is a list of one
        if (!in_arg_list_) {
            out_.command("s_arg_list");
            in_arg_list_ = true;
        } else if (kind == '+') {
            warn("'+' seen within a list of arguments");
        }
        out_.command("s_arg_inlist");

        char c;
        bool at_first = true, last_was_backslash = false, saw_hyphen = false;
        while (in_.get(c)) {
            if (c == '\n' || (c == '-' && !at_first && !last_was_backslash)) {
                saw_hyphen = (c == '-');
                break;
            }
            if (last_was_backslash && c != '-')
                out_.text_char('\\');
            last_was_backslash = (c == '\\');
            if (!last_was_backslash)
                out_.text_char(c);
            at_first = false;
        }
        if (!saw_hyphen) {
            char next = 0;
            in_.peek(next);
            if (next == '.' || next == '-' || next == '+' || next == '\n') {
                out_.command("e_arg_inlist");
                if (next == '\n')
                    kind = '-';
                if (kind == '-')
                    end_argument_list();
                return;
            }
        }
        out_.command("e_arg_inlist");
        out_.command("s_defn_inlist");
        in_.skip_blanks();
        while (in_.get(c)) {
            if (c != '\n') {
                out_.text_char(c);
                continue;
            }
            out_.newline();
            // A description goes on over the following lines unless one is empty, starts
            // with a command character, or is the end of the comment.
            if (!in_.get(c))
                break;
            in_.unget();
            if (c == '.' || c == '-' || c == '$' || c == '\n' || c == '@' || c == 'M' || c == 'D')
                break;
            if (c == ' ' || c == '\t') {
                while (c == ' ' || c == '\t') {
                    if (!in_.get(c))
                        break;
                }
                if (c == '\n')
                    break;
                if (c == '@' || c == 'M' || c == 'D') {
                    char star, slash;
                    if (!in_.get(star))
                        break;
                    if (star == '*') {
                        if (!in_.get(slash))
                            break;
                        in_.unget();
                        in_.unget();
                        if (slash == '/')
                            break;  // (doctext leaves the comment's kind character read)
                    } else {
                        in_.unget();
                    }
                }
                in_.unget();
            }
        }
        out_.command("e_defn_inlist");
        if (kind == '-')
            end_argument_list();
    }

    void end_argument_list()
    {
        out_.command("e_arg_list");
        in_arg_list_ = false;
    }

    // ProcessNameFmt: '.N name' reads the named block in place of the line.
    void include_named_block()
    {
        in_.skip_blanks();
        std::string name;
        char c;
        while (in_.get(c) && !is_space(c))
            name += c;
        auto block = blocks_.find(name);
        if (!block) {
            warn("could not find include name (" + name + ")");
            return;
        }
        in_.push_front(*block);
    }

    // ProcessVerbatimBlockFmt: .vb ... .ve
    void verbatim_block()
    {
        char c;
        if (in_.get(c) && c != 'b') {
            warn(std::string("invalid verbatim command '.v") + c + "'");
            return;
        }
        in_.skip_line();
        out_.command("s_verbatim");
        while (!in_.at_end()) {
            std::string line = in_.get_line();
            if (line.compare(0, 3, ".ve") == 0)
                break;
            out_.text(line);
        }
        out_.command("e_verbatim");
        out_.newline();
    }

    // ProcessVerbatimFmt for nroff: a line starting with '$'.
    void verbatim_line()
    {
        char c;
        if (!in_.get(c))
            return;
        if (c == ' ' || c == '\t' || c == '\n') {
            out_.command("s_doctext_verbatim");
        } else {
            out_.text_char('.');
            out_.text_char(c);
        }
        if (c != '\n') {
            while (in_.get(c) && is_space(c))
                out_.command("blank");
            in_.unget();
            while (in_.get(c) && c != '\n')
                out_.text_char(c);
        }
        out_.command("e_doctext_verbatim");
    }

    // ProcessSeeAlso: .seealso: names
    void see_also()
    {
        in_.skip_over("eealso:");
        std::string line = in_.get_line();
        out_.section("See Also");
        out_.text(line);
        out_.command("linebreak");
    }

    // ProcessKeywords: .keywords: words
    void keywords()
    {
        in_.skip_over("eywords:");
        std::string line = in_.get_line();
        out_.section("Keywords");
        out_.text(line);
        out_.command("linebreak");
    }

    TextCursor& in_;
    NamedBlocks& blocks_;
    const std::string& label_;
    std::vector<std::string>& warnings_;
    TroffOutput out_;
    std::string name_;
    bool in_arg_list_ = false;
};

// FindPattern(MATCH_STRING): the next "/*" followed by a structured-comment kind; returns
// the kind, the input just after it.
char find_structured_comment(TextCursor& in)
{
    const std::string& text = in.text();
    std::size_t from = std::min(in.position(), text.size());
    while (true) {
        std::size_t at = text.find("/*", from);
        if (at == std::string::npos || at + 2 >= text.size()) {
            in.seek(text.size());
            return 0;
        }
        char kind = text[at + 2];
        if (structured_comment_kinds.find(kind) != std::string::npos) {
            in.seek(at + 3);
            return kind;
        }
        from = at + 2;
    }
}

// DocGetSubOptions: up to two of 'C' and 'X' right after the kind.
void skip_sub_options(TextCursor& in)
{
    for (int i = 0; i < 2; ++i) {
        char c;
        if (!in.get(c))
            return;
        if (c != 'C' && c != 'X') {
            in.unget();
            return;
        }
    }
}

// DocReadName: blanks, then the name up to a blank or a comma (which is read too).
std::string read_block_name(TextCursor& in)
{
    char c;
    while (in.get(c) && is_space(c)) {
    }
    in.unget();
    std::string name;
    while (in.get(c) && !is_space(c) && c != ',')
        name += c;
    return name;
}

// SaveName: the text of a named block, up to "N*/".
std::string read_named_block_text(TextCursor& in)
{
    std::string text;
    char c;
    while (in.get(c)) {
        if (c == 'N') {
            char star, slash;
            if (in.get(star)) {
                if (star == '*') {
                    if (in.get(slash) && slash == '/')
                        break;
                    in.unget();
                }
                in.unget();
            } else {
                in.unget();
            }
        }
        text += c;
    }
    return text;
}

void skip_past(TextCursor& in, const std::string& mark)
{
    std::size_t at = in.text().find(mark, std::min(in.position(), in.text().size()));
    in.seek(at == std::string::npos ? in.text().size() : at + mark.size());
}

}  // namespace

std::vector<ManPage> pages_of_source_text(const std::string& text, const std::string& label,
                                          NamedBlocks& blocks, const DoctextOptions& options,
                                          std::vector<std::string>& warnings)
{
    std::vector<ManPage> pages;
    TextCursor in(text);
    while (char kind = find_structured_comment(in)) {
        skip_sub_options(in);
        if (kind == 'I') {
            warnings.push_back(label + ": include comment (/*I) not handled");
            skip_past(in, "I*/");
            continue;
        }
        std::string name = read_block_name(in);
        if (kind == 'N') {
            blocks.define(name, read_named_block_text(in));
            continue;
        }
        if (kind != '@') {
            warnings.push_back(label + ": " + name + ": structured comment of kind '" + kind +
                               "' not handled (only routines, /*@, make pages)");
            skip_past(in, std::string(1, kind) + "*/");
            continue;
        }
        ManPage page;
        RoutinePageReader reader(in, blocks, label, page.warnings);
        page.name = name;
        page.man_section = options.man_section;
        page.source_file = label;
        page.troff = reader.read_page(name, options);
        pages.push_back(std::move(page));
    }
    return pages;
}

std::vector<ManPage> pages_of_source_file(const std::string& path, NamedBlocks& blocks,
                                          const DoctextOptions& options,
                                          std::vector<std::string>& warnings)
{
    return pages_of_source_text(load_source_text(path), path, blocks, options, warnings);
}
