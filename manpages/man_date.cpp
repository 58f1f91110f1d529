#include "man_date.h"

#include <cstdlib>
#include <ctime>
#include <regex>

namespace {

std::optional<std::string> format_date(int year, int month, int day)
{
    if (month < 1 || month > 12 || day < 1 || day > 31 || year < 1970 || year > 9999)
        return std::nullopt;
    return std::to_string(month) + "/" + std::to_string(day) + "/" + std::to_string(year);
}

}  // namespace

std::optional<std::string> doctext_date_from_text(const std::string& text)
{
    std::smatch m;
    if (std::regex_match(text, m, std::regex(R"((\d{1,2})/(\d{1,2})/(\d{4}))")))
        return format_date(std::stoi(m[3]), std::stoi(m[1]), std::stoi(m[2]));
    if (std::regex_match(text, m, std::regex(R"((\d{4})-(\d{2})-(\d{2}))")))
        return format_date(std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3]));
    return std::nullopt;
}

std::optional<std::string> doctext_date_from_source_date_epoch()
{
    const char* value = std::getenv("SOURCE_DATE_EPOCH");
    if (!value || !*value)
        return std::nullopt;
    char* end = nullptr;
    long long seconds = std::strtoll(value, &end, 10);
    if (*end != '\0' || seconds < 0)
        return std::nullopt;
    std::time_t t = static_cast<std::time_t>(seconds);
    std::tm utc{};
    if (!gmtime_r(&t, &utc))
        return std::nullopt;
    return format_date(utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday);
}
