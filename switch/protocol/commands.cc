#include "switch/protocol/commands.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace hvswitch {
namespace {

std::vector<absl::string_view> WordsOf(absl::string_view text) {
  return absl::StrSplit(text, ' ', absl::SkipEmpty());
}

// True when `words` begin with `prefix`.
template <typename A, typename B>
bool BeginsWith(const std::vector<A>& words, const std::vector<B>& prefix) {
  if (words.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (absl::string_view(words[i]) != absl::string_view(prefix[i])) return false;
  }
  return true;
}

std::string WithSynopsis(absl::string_view words, const Command& c) {
  if (c.synopsis.empty()) return std::string(words);
  if (words.empty()) return std::string(c.synopsis);
  return absl::StrCat(words, " ", c.synopsis);
}

bool FitsArity(const Command& c, size_t args) {
  return args >= c.min_args && (c.max_args == kAnyNumber || args <= c.max_args);
}

// `command`'s arguments and options from the request's words, or nullopt when they do
// not fit it.
std::optional<Parsed> Fit(const Command& command, const std::vector<std::string>& words,
                          const absl::StatusOr<Words>& split) {
  const std::vector<absl::string_view> names = WordsOf(command.words);
  Parsed parsed;
  parsed.command = &command;
  if (command.runs_in == RunsIn::kClient) {  // its own options: the rest as it is
    if (!BeginsWith(words, names)) return std::nullopt;
    parsed.args.assign(words.begin() + names.size(), words.end());
  } else {
    if (!split.ok() || !BeginsWith(split->positional, names)) return std::nullopt;
    if ((split->port && !(command.options & kPortOption)) ||
        (split->vlan && !(command.options & kVlanOption)) ||
        (split->from && !(command.options & kFromOption)) ||
        (split->to && !(command.options & kToOption)) ||
        (split->direction && !(command.options & kDirectionOption))) {
      return std::nullopt;
    }
    parsed.args.assign(split->positional.begin() + names.size(), split->positional.end());
    parsed.port = split->port;
    parsed.vlan = split->vlan;
    parsed.from = split->from;
    parsed.to = split->to;
    parsed.direction = split->direction;
  }
  if (!FitsArity(command, parsed.args.size())) return std::nullopt;
  return parsed;
}

}  // namespace

absl::StatusOr<Words> SplitOptions(const std::vector<std::string>& words) {
  Words out;
  const std::pair<absl::string_view, std::optional<std::string>*> options[] = {
      {"--port", &out.port}, {"--vlan", &out.vlan}, {"--from", &out.from}, {"--to", &out.to},
      {"--direction", &out.direction}};
  for (size_t i = 0; i < words.size(); ++i) {
    std::optional<std::string>* option = nullptr;
    for (const auto& [name, field] : options) {
      if (i > 0 && words[i] == name) option = field;
    }
    if (option != nullptr) {
      if (i + 1 == words.size()) {
        return absl::InvalidArgumentError(absl::StrCat(words[i], " needs a value"));
      }
      if (option->has_value()) {
        return absl::InvalidArgumentError(absl::StrCat(words[i], " given twice"));
      }
      *option = words[i + 1];
      ++i;
    } else if (i > 0 && absl::StartsWith(words[i], "--")) {
      return absl::InvalidArgumentError(absl::StrCat("unknown option ", words[i]));
    } else {
      out.positional.push_back(words[i]);
    }
  }
  return out;
}

absl::StatusOr<Parsed> ParseCommand(const std::vector<std::string>& words, Parser parser) {
  if (words.empty()) return absl::InvalidArgumentError("empty request");
  const absl::StatusOr<Words> split = SplitOptions(words);
  std::optional<Parsed> best;
  size_t best_length = 0;
  bool known = false;  // some command starts with words[0]
  for (const Command& command : kCommands) {
    if (!ParsedBy(command, parser)) continue;
    const size_t length = WordsOf(command.words).size();
    known = known || WordsOf(command.words)[0] == words[0];
    if (length <= best_length) continue;  // the longest words win; among equals, the first row
    if (std::optional<Parsed> parsed = Fit(command, words, split)) {
      best = std::move(parsed);
      best_length = length;
    }
  }
  if (best) return *std::move(best);
  if (!split.ok()) return split.status();
  if (!known) {
    return absl::NotFoundError(
        absl::StrCat("unknown command '", words[0], "': ", CommandsSummary()));
  }
  return absl::InvalidArgumentError(GroupUsage(words[0]));
}

std::string GroupUsage(absl::string_view group) {
  std::vector<std::string> verbs;
  const Command* last = nullptr;
  for (const Command& command : kCommands) {
    if (!ParsedBy(command, Parser::kDaemon)) continue;
    const std::vector<absl::string_view> names = WordsOf(command.words);
    if (names[0] != group) continue;
    verbs.push_back(WithSynopsis(absl::StrJoin(names.begin() + 1, names.end(), " "), command));
    last = &command;
  }
  if (verbs.size() == 1 && last->words == group) return WithSynopsis(group, *last);
  return absl::StrCat(group, ": ", absl::StrJoin(verbs, " | "));
}

std::string CommandsSummary() {
  std::vector<std::string> all;
  for (const Command& command : kCommands) {
    if (command.runs_in != RunsIn::kWire) all.push_back(WithSynopsis(command.words, command));
  }
  return absl::StrJoin(all, " | ");
}

absl::StatusOr<std::string> HelpText(absl::string_view command) {
  const std::vector<absl::string_view> asked = WordsOf(command);
  std::string text;
  for (const Command& c : kCommands) {
    if (c.runs_in == RunsIn::kWire || !BeginsWith(WordsOf(c.words), asked)) continue;
    absl::StrAppend(&text, WithSynopsis(c.words, c), "\n    ", c.help, "\n");
  }
  if (text.empty()) {
    return absl::NotFoundError(
        absl::StrCat("no command '", command, "' (hvswitchctl help lists them)"));
  }
  return text;
}

}  // namespace hvswitch
