"""Rules, as text checked and compiled into matchers: what hides, keeps only, tags or stars
an article (docs: README "Rules"). Pure CPU and no I/O: the refresh applies them to what
arrives (refresh.py), the core to what is stored (core/rules.py).

A rule matches one field of an article: its title, summary, author, categories or URL, by
words (all of them present as whole words) or by a regular expression, case-insensitive
and Unicode either way; or its age (older than N days). Matching is bounded per article:
a regular expression runs on at most REGEX_CHARS of a field and must pass `regex_problem`,
which refuses the shapes that backtrack catastrophically; words are plain substring tests
on at most WORDS_CHARS, confirmed as whole words.
"""

from __future__ import annotations

import re
import re._constants as sre  # type: ignore[import-not-found]
import re._parser as sre_parse  # type: ignore[import-not-found]
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any, TypedDict

from ..errors import Invalid

FIELDS = ("title", "summary", "author", "category", "url", "age")
KINDS = ("words", "regex")
ACTIONS = ("hide", "keep_only", "star", "tag:NAME")
SCOPES = ("all", "folder:NAME", "feed:ID")

# The characters of a field words are looked for in: the first 10,000 of a 100 KB summary.
WORDS_CHARS = 10_000
# The characters of a field a regular expression runs on. Even a pattern `regex_problem`
# lets through can take time in the square of the text (".*x" searched from every start:
# 1.9 s on 10,000 characters here, 19 ms on 1,000), so the cap is lower than for words.
REGEX_CHARS = 1_000
MAX_PATTERN = 500
MAX_WORDS = 20
MAX_DAYS = 36_500
MAX_NAME = 200
# A pattern with more open-ended repeats than this is refused: each one multiplies the
# work of a failing match.
MAX_OPEN_REPEATS = 3

# The row (or entry) key each field reads.
_KEYS = {"title": "title", "summary": "summary_text", "author": "author", "category": "categories", "url": "url"}


@dataclass(frozen=True)
class Rule:
    """A rule as stored (see the rules table in store/schema.sql)."""

    id: int
    field: str
    kind: str
    pattern: str
    scope: str = "all"
    action: str = "hide"
    enabled: bool = True
    created: float = 0.0
    hidden: int = 0  # articles it hides now, when counted

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Rule:
        return cls(id=int(row["id"]), field=row["field"], kind=row["kind"], pattern=row["pattern"],
                   scope=row["scope"], action=row["action"], enabled=bool(row["enabled"]),
                   created=float(row["created"]), hidden=int(row.get("hidden") or 0))

    def describe(self) -> str:
        """The rule in a few words, for lists and notices."""
        what = {"hide": "hide", "keep_only": "keep only", "star": "star"}.get(self.action, self.action.replace(
            "tag:", "tag “", 1) + "”")
        if self.field == "age":
            test = f"older than {self.pattern} days"
        elif self.kind == "regex":
            test = f"{self.field} matches /{self.pattern}/"
        else:
            test = f"{self.field} has “{self.pattern}”"
        where = {"all": "everywhere"}.get(self.scope, self.scope.replace("folder:", "in folder ", 1).replace(
            "feed:", "in feed ", 1))
        return f"{what}: {test}, {where}"

    @property
    def tag(self) -> str | None:
        return self.action[4:] if self.action.startswith("tag:") else None


def _walk(items: Any, depth: int, counts: list[int]) -> str | None:
    """Why the parsed pattern `items` may backtrack catastrophically, or None. `depth`:
    how many repeats (of more than once) it sits inside."""
    for op, av in items:
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            _, high, sub = av
            repeats = high == sre.MAXREPEAT or high > 1
            if high == sre.MAXREPEAT:
                counts[0] += 1
            if repeats and depth and op != sre.POSSESSIVE_REPEAT:
                return ("it repeats a group that has a repeat inside, like (a+)+ or (.*)*, which can take"
                        " exponential time on a long title: drop the outer or the inner repeat")
            problem = _walk(sub, depth + (1 if repeats and op != sre.POSSESSIVE_REPEAT else 0), counts)
            if problem:
                return problem
        elif op == sre.SUBPATTERN:
            problem = _walk(av[-1], depth, counts)
            if problem:
                return problem
        elif op == sre.ATOMIC_GROUP:
            problem = _walk(av, 0, counts)
            if problem:
                return problem
        elif op == sre.BRANCH:
            branches = av[1]
            if depth and not _distinct_starts(branches):
                return ("it repeats alternatives that can match the same text, like (a|a)* or (a|ab)*,"
                        " which can take exponential time: make the alternatives start differently")
            for branch in branches:
                problem = _walk(branch, depth, counts)
                if problem:
                    return problem
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            problem = _walk(av[1], depth, counts)
            if problem:
                return problem
        elif op in (sre.GROUPREF, sre.GROUPREF_EXISTS):
            return "it refers back to a group (\\1, (?P=name)), which can take exponential time"
    return None


def _distinct_starts(branches: Sequence[Any]) -> bool:
    """Whether every alternative starts with a literal character of its own (any case):
    then at most one of them can match at a place, and a repeat of them cannot backtrack
    into another way of matching the same text."""
    starts: set[str] = set()
    for branch in branches:
        if not branch or branch[0][0] != sre.LITERAL:
            return False
        first = chr(branch[0][1]).casefold()
        if first in starts:
            return False
        starts.add(first)
    return True


def regex_problem(pattern: str) -> str | None:
    """Why this regular expression is refused (it does not compile, or its shape can run
    away: nested repeats, repeated alternatives that overlap, back-references, too many
    open-ended repeats), or None. Conservative: some harmless patterns are refused too,
    each with a reason that says how to write it instead."""
    if len(pattern) > MAX_PATTERN:
        return f"it is longer than {MAX_PATTERN} characters"
    try:
        re.compile(pattern, re.IGNORECASE)
        parsed = sre_parse.parse(pattern, re.IGNORECASE)
    except (re.error, RecursionError, OverflowError) as exc:
        return f"it is not a regular expression Python reads ({exc})"
    counts = [0]
    problem = _walk(parsed.data, 0, counts)
    if problem:
        return problem
    if counts[0] > MAX_OPEN_REPEATS:
        return (f"it has {counts[0]} open-ended repeats (* + {{n,}}); at most {MAX_OPEN_REPEATS}, as each one"
                " multiplies the time a failing match takes")
    return None


def _words(pattern: str) -> list[str]:
    return [w.casefold() for w in pattern.split()]


class RuleParts(TypedDict):
    field: str
    kind: str
    pattern: str
    scope: str
    action: str


def check_rule(field: object, kind: object, pattern: object, scope: object, action: object) -> RuleParts:
    """A rule's parts as given (a form, JSON, the command line) checked and tidied: Invalid
    with the reason for the first part that is wrong."""
    if field not in FIELDS:
        raise Invalid(f"field must be one of {', '.join(FIELDS)}")
    if kind is None or kind == "":
        kind = "words"
    if kind not in KINDS:
        raise Invalid(f"match must be one of {', '.join(KINDS)}")
    if not isinstance(pattern, str) or not pattern.strip():
        raise Invalid("pattern: give the words, the regular expression or (for age) the days")
    if field == "age":
        kind = "words"
        try:
            days = int(pattern.strip())
        except ValueError:
            raise Invalid("pattern: for age, give a number of days, like 30") from None
        if not 1 <= days <= MAX_DAYS:
            raise Invalid(f"pattern: for age, give between 1 and {MAX_DAYS:,} days")
        pattern = str(days)
    elif kind == "words":
        pattern = " ".join(pattern.split())
        if len(pattern) > MAX_PATTERN:
            raise Invalid(f"pattern: at most {MAX_PATTERN} characters")
        if len(_words(pattern)) > MAX_WORDS:
            raise Invalid(f"pattern: at most {MAX_WORDS} words")
    else:
        problem = regex_problem(pattern)
        if problem:
            raise Invalid(f"pattern: the regular expression is refused: {problem}")
    return RuleParts(field=str(field), kind=str(kind), pattern=pattern, scope=check_scope(scope),
                     action=check_action(action))


def check_scope(scope: object) -> str:
    if scope is None or scope == "" or scope == "all":
        return "all"
    if isinstance(scope, str) and scope.startswith("folder:"):
        name = " ".join(scope[7:].split())
        if name and len(name) <= MAX_NAME:
            return f"folder:{name}"
        raise Invalid(f"scope: a folder's name of 1 to {MAX_NAME} characters after folder:")
    if isinstance(scope, str) and scope.startswith("feed:"):
        if scope[5:].isdigit() and len(scope) < 24:
            return f"feed:{int(scope[5:])}"
        raise Invalid("scope: a feed's id after feed:, like feed:3")
    raise Invalid(f"scope must be one of {', '.join(SCOPES)}")


def check_action(action: object) -> str:
    if action is None or action == "":
        return "hide"
    if action in ("hide", "keep_only", "star"):
        return str(action)
    if isinstance(action, str) and action.startswith("tag:"):
        name = " ".join(action[4:].split())
        if name and len(name) <= 100:
            return f"tag:{name}"
        raise Invalid("action: a tag's name of 1 to 100 characters after tag:")
    raise Invalid(f"action must be one of {', '.join(ACTIONS)}")


@dataclass
class Decision:
    """What the rules do to one article: the rule that hides it (None: shown), whether to
    star it, the tags to give it."""

    hidden_by: int | None = None
    star: bool = False
    tags: list[str] = dataclass_field(default_factory=list)

    def __bool__(self) -> bool:
        return self.hidden_by is not None or self.star or bool(self.tags)


_TOKENS = re.compile(r"\w+")
_WORD = re.compile(r"\w+")


class _Seen:
    """One article's fields as the rules read them, each cut, folded or split into words
    once however many rules read it; and, per field, whether any of the rules' regular
    expressions can match it at all (one search of them all, `Rules.combined`)."""

    __slots__ = ("_folded", "_possible", "_tokens", "combined", "item")

    def __init__(self, item: Mapping[str, Any], combined: Mapping[str, re.Pattern[str] | None] | None = None) -> None:
        self.item = item
        self.combined = combined or {}
        self._folded: dict[str, str] = {}
        self._tokens: dict[str, frozenset[str]] = {}
        self._possible: dict[str, bool] = {}

    def folded(self, key: str) -> str:
        text = self._folded.get(key)
        if text is None:
            text = self._folded[key] = (self.item.get(key) or "")[:WORDS_CHARS].casefold()
        return text

    def tokens(self, key: str) -> frozenset[str]:
        found = self._tokens.get(key)
        if found is None:
            found = self._tokens[key] = frozenset(_TOKENS.findall(self.folded(key)))
        return found

    def possible(self, key: str) -> bool:
        """False when no regular expression of the rules on this field matches it."""
        known = self._possible.get(key)
        if known is None:
            combined = self.combined.get(key)
            known = self._possible[key] = (combined is None
                                           or combined.search((self.item.get(key) or "")[:REGEX_CHARS]) is not None)
        return known


class Compiled:
    """One rule, ready to match article rows or feed entries (dicts with title,
    summary_text, author, categories, url and sort_at or published)."""

    def __init__(self, rule: Rule) -> None:
        self.rule = rule
        self.key = _KEYS.get(rule.field, "")
        self.days = int(rule.pattern) if rule.field == "age" else 0
        self.words = _words(rule.pattern) if rule.kind == "words" and rule.field != "age" else []
        # words made of letters and digits only are a subset test on the text's words; any
        # other (c++, 2.0) is looked for as a whole word by a pattern of its own
        self.tokens = frozenset(self.words) if all(_WORD.fullmatch(w) for w in self.words) else None
        self._whole = [re.compile(rf"(?<!\w){re.escape(w)}(?!\w)") for w in self.words]
        self.regex = re.compile(rule.pattern, re.IGNORECASE) if rule.kind == "regex" else None
        kind, _, value = rule.scope.partition(":")
        self.feed = int(value) if kind == "feed" else None
        self.folder = value if kind == "folder" else None

    def covers(self, feed_id: int | None, folder: str | None) -> bool:
        """Whether an article of this feed (in this folder) is in the rule's scope; a folder
        covers the folders inside it. Saved links (no feed) are in no rule's scope."""
        if feed_id is None:
            return False
        if self.feed is not None:
            return feed_id == self.feed
        if self.folder is not None:
            return folder is not None and (folder == self.folder or folder.startswith(self.folder + " / "))
        return True

    def matches(self, item: Mapping[str, Any], now: float, seen: _Seen | None = None) -> bool:
        """`seen`: the article's fields already cut and folded, shared by the rules that
        look at the same article."""
        if self.days:
            at = item.get("sort_at")
            if at is None:
                at = item.get("published")
            return at is not None and float(at) < now - self.days * 86400
        if seen is None:
            seen = _Seen(item)
        if self.regex is not None:
            return seen.possible(self.key) and self.regex.search((item.get(self.key) or "")[:REGEX_CHARS]) is not None
        if self.tokens is not None:
            return self.tokens <= seen.tokens(self.key)
        text = seen.folded(self.key)
        return all(w in text for w in self.words) and all(p.search(text) for p in self._whole)


class Rules:
    """The enabled rules, compiled once per refresh (or apply), in the order they were made.
    Hundreds of them stay cheap per article: the rules that cover a feed are found once
    per feed; each field is folded and split into words once per article; a words rule is
    tried only if the article has its first word (one set intersection finds those); and
    the regular expressions on one field are first searched for as one (most articles
    match none of them)."""

    def __init__(self, rules: Iterable[Rule]) -> None:
        self.compiled = [Compiled(r) for r in rules if r.enabled]
        self._covering: dict[tuple[int | None, str | None], _Covering] = {}
        self.combined: dict[str, re.Pattern[str] | None] = {}
        for key in {c.key for c in self.compiled if c.regex is not None}:
            patterns = [c.rule.pattern for c in self.compiled if c.regex is not None and c.key == key]
            try:  # one pattern's named group or flags may not combine with another's: then none
                self.combined[key] = re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)
            except re.error:
                self.combined[key] = None
        # words rules by field and by their first word
        self._by_word: dict[str, dict[str, list[Compiled]]] = {}
        for c in self.compiled:
            if c.tokens is not None and c.words:
                self._by_word.setdefault(c.key, {}).setdefault(c.words[0], []).append(c)

    def __bool__(self) -> bool:
        return bool(self.compiled)

    def covering(self, feed_id: int | None, folder: str | None) -> _Covering:
        """The rules whose scope covers this feed, sorted for `decide`."""
        found = self._covering.get((feed_id, folder))
        if found is None:
            found = self._covering[feed_id, folder] = _Covering(
                [c for c in self.compiled if c.covers(feed_id, folder)])
        return found

    def decide(self, item: Mapping[str, Any], feed_id: int | None, folder: str | None, now: float) -> Decision:
        """What the rules do to one article: the first rule that hides it (a hide rule that
        matches, or a keep_only rule that does not) hides it; every star and tag rule that
        matches adds its star or tag."""
        decision = Decision()
        scope = self.covering(feed_id, folder)
        if not scope.rules:
            return decision
        seen = _Seen(item, self.combined)
        matched: list[Compiled] = []
        for key, by_word in self._by_word.items():
            tokens = seen.tokens(key)
            for word in tokens & by_word.keys():
                matched.extend(c for c in by_word[word] if id(c) in scope.ids and c.tokens is not None
                               and c.tokens <= tokens)
        for c in scope.others:
            if c.matches(item, now, seen):
                matched.append(c)
        for key, regexes in scope.regexes.items():
            if seen.possible(key):
                matched.extend(c for c in regexes if c.matches(item, now, seen))
        hits = {id(c) for c in matched}
        for c in sorted([*matched, *scope.keep_only], key=lambda c: scope.order[id(c)]):
            action = c.rule.action
            hit = id(c) in hits
            if action == "keep_only":
                if decision.hidden_by is None and not hit:
                    decision.hidden_by = c.rule.id
            elif action == "hide":
                if decision.hidden_by is None and hit:
                    decision.hidden_by = c.rule.id
            elif hit:
                if action == "star":
                    decision.star = True
                elif c.rule.tag and c.rule.tag not in decision.tags:
                    decision.tags.append(c.rule.tag)
        return decision


class _Covering:
    """The rules that cover one feed, in order, sorted by how `Rules.decide` tries them."""

    def __init__(self, rules: list[Compiled]) -> None:
        self.rules = rules
        self.ids = {id(c) for c in rules}
        self.order = {id(c): n for n, c in enumerate(rules)}
        self.keep_only = [c for c in rules if c.rule.action == "keep_only"]
        self.regexes: dict[str, list[Compiled]] = {}
        self.others: list[Compiled] = []  # age, and words that are not all letters and digits
        for c in rules:
            if c.regex is not None:
                self.regexes.setdefault(c.key, []).append(c)
            elif not (c.tokens is not None and c.words):
                self.others.append(c)
