"""Word tokenizer and sentence counter of the QualityFilter (docs/quality.md, "Words").

Pure-Python backend; ``src/quality/words.cc`` is the same algorithm in C++. It is spaCy 3.8's
English tokenizer (the word tokenizer datatrove 0.10.1 uses for English) re-implemented without
regular expressions: whitespace splitting, the prefix / suffix / infix rules, the URL matcher and
the tokenizer exceptions, with spaCy's character classes and exceptions taken from the generated
``_quality_tables`` module. One spaCy step is not reproduced: merging an exception that occurs
glued inside a longer word (``"great:)"``); docs/quality.md lists the consequences.

Every function works on code point indices, never on repeatedly sliced copies, so a 50 MB word
costs linear time.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right

from . import _quality_tables as tables

__all__ = ["count_sentences", "flags_of", "tokenize"]

_BMP = array("I", [0]) * 0x10000
for _i, _start in enumerate(tables.RANGE_STARTS):
    if _start >= 0x10000:
        break
    _end = tables.RANGE_STARTS[_i + 1] if _i + 1 < len(tables.RANGE_STARTS) else 0x110000
    _BMP[_start : min(_end, 0x10000)] = array("I", [tables.RANGE_FLAGS[_i]]) * (
        min(_end, 0x10000) - _start
    )


def flags_of(ch: str) -> int:
    """The flag bits of one character (see ``_quality_tables``)."""
    cp = ord(ch)
    if cp < 0x10000:
        return _BMP[cp]
    return tables.RANGE_FLAGS[bisect_right(tables.RANGE_STARTS, cp) - 1]


_SPECIALS = tables.SPECIAL_CASES
_MAX_SPECIAL = tables.MAX_SPECIAL_KEY_CHARS
_SUFFIX_STRINGS: dict[str, tuple[str, ...]] = {}
for _s in tables.CURRENCY_SUFFIXES + tables.UNIT_SUFFIXES:
    _SUFFIX_STRINGS.setdefault(_s[-1], ())
    _SUFFIX_STRINGS[_s[-1]] += (_s,)
_POSSESSIVE = ("'s", "'S", "\u2019s", "\u2019S")
_HYPHENS = ("-", "\u2013", "\u2014", "--", "---", "\u2014\u2014", "~")
_ASCII_DIGITS = "0123456789"


def _is_special(s: str) -> bool:
    return len(s) <= _MAX_SPECIAL and s in _SPECIALS


def _find_prefix(s: str, b: int, e: int) -> int:
    """Length of the spaCy prefix at s[b:e] (0: none)."""
    c = s[b]
    if c == "+":
        return 0 if b + 1 < e and s[b + 1] in _ASCII_DIGITS else 1
    if flags_of(c) & tables.SP_PREFIX:
        return 1
    if c == ".":
        j = b + 1
        while j < e and s[j] == ".":
            j += 1
        return j - b if j - b >= 2 else 0
    if s.startswith("US$", b, e):
        return 3
    if s.startswith(("C$", "A$"), b, e):
        return 2
    return 0


def _find_suffix(s: str, b: int, e: int) -> int:
    """Length of the longest spaCy suffix of s[b:e] (regex search = earliest start)."""
    n = e - b
    if n <= 0:
        return 0
    last = s[e - 1]
    best = 1 if flags_of(last) & tables.SP_SUFFIX else 0
    if n >= 2:
        two = s[e - 2 : e]
        if two == "\u2026\u2026" or two in _POSSESSIVE:
            best = max(best, 2)
    if last == ".":
        j = e - 1
        while j > b and s[j - 1] == ".":
            j -= 1
        if e - j >= 2:
            best = max(best, e - j)
        if n >= 2 and flags_of(s[e - 2]) & tables.SP_DOT_AFTER:
            best = max(best, 1)
        if n >= 3 and flags_of(s[e - 2]) & flags_of(s[e - 3]) & tables.SP_UPPER:
            best = max(best, 1)
        if n >= 3 and s[e - 3] == "\u00b0" and s[e - 2] in "FfCcKk":
            best = max(best, 1)
    elif last == "+" and n >= 2 and s[e - 2] in _ASCII_DIGITS:
        best = max(best, 1)
    for suffix in _SUFFIX_STRINGS.get(last, ()):
        k = len(suffix)
        if k > best and n > k and s.startswith(suffix, e - k, e) and s[e - k - 1] in _ASCII_DIGITS:
            best = k
    return best


def _infix_end(m: str, i: int, n: int) -> int:
    """End of the spaCy infix starting at m[i] (0: none), alternatives in spaCy's order."""
    c = m[i]
    if c == "." and i + 1 < n and m[i + 1] == ".":
        j = i + 2
        while j < n and m[j] == ".":
            j += 1
        return j
    if c == "\u2026":
        return i + 1
    if flags_of(c) & tables.SP_ICON:
        return i + 1
    if i == 0:
        return 0
    prev = m[i - 1]
    prev_flags = flags_of(prev)
    nxt = m[i + 1] if i + 1 < n else ""
    if c in "+-*^" and prev in _ASCII_DIGITS and nxt and (nxt in _ASCII_DIGITS or nxt == "-"):
        return i + 1
    if (
        c == "."
        and prev_flags & (tables.SP_LOWER | tables.SP_QUOTE)
        and nxt
        and flags_of(nxt) & (tables.SP_UPPER | tables.SP_QUOTE)
    ):
        return i + 1
    if c == "," and prev_flags & tables.SP_ALPHA and nxt and flags_of(nxt) & tables.SP_ALPHA:
        return i + 1
    if prev_flags & tables.SP_ALPHA or prev in _ASCII_DIGITS:
        for hyphen in _HYPHENS:
            j = i + len(hyphen)
            if m.startswith(hyphen, i) and j < n and flags_of(m[j]) & tables.SP_ALPHA:
                return j
        if c in ":<>=/" and nxt and flags_of(nxt) & tables.SP_ALPHA:
            return i + 1
    return 0


# -- spaCy's URL_MATCH, without the regex ---------------------------------------------------


def _is_host_char(ch: str) -> bool:
    cp = ord(ch)
    if cp < 0x80:
        return ch.isalnum() or ch in "_-."
    return cp <= 0xFFFF or bool(flags_of(ch) & (tables.SP_LOWER | tables.RE_DIGIT))


def _is_label_char(ch: str) -> bool:  # [A-Za-z0-9\u00a1-\uffff]
    cp = ord(ch)
    return (cp < 0x80 and ch.isalnum()) or 0xA1 <= cp <= 0xFFFF


def _is_digit(ch: str) -> bool:  # re \d
    return bool(flags_of(ch) & tables.RE_DIGIT)


def _is_domain(s: str) -> bool:
    parts = s.split(".")
    if len(parts) < 2:
        return False
    tld = parts[-1]
    if not 2 <= len(tld) <= 63 or not all(flags_of(ch) & tables.SP_LOWER for ch in tld):
        return False
    for label in parts[:-1]:
        if not 1 <= len(label) <= 64:
            return False
        if not (_is_label_char(label[0]) and _is_label_char(label[-1])):
            return False
        if not all(_is_label_char(ch) or ch in "_-" for ch in label):
            return False
    return True


def _dotted_digit_groups(s: str, i: int, groups: int) -> bool:
    """Whether s[i:] starts with ``(?:\\.\\d{1,3}){groups}``."""
    for _ in range(groups):
        if not (i + 1 < len(s) and s[i] == "." and _is_digit(s[i + 1])):
            return False
        i += 2
        for _ in range(2):
            if i < len(s) and _is_digit(s[i]):
                i += 1
    return True


def _octet(o: str, position: str) -> bool:
    """Whether ``o`` is a whole match of spaCy's octet alternation at ``position``."""
    if not o or not all(_is_digit(ch) for ch in o):
        return False
    n = len(o)
    if position == "first":  # [1-9]\d?|1\d\d|2[01]\d|22[0-3]
        return (
            (n <= 2 and o[0] in "123456789")
            or (n == 3 and o[0] == "1")
            or (n == 3 and o[0] == "2" and o[1] in "01")
            or (n == 3 and o[:2] == "22" and o[2] in "0123")
        )
    if position == "middle":  # 1?\d{1,2}|2[0-4]\d|25[0-5]
        return (
            n <= 2
            or (n == 3 and o[0] == "1")
            or (n == 3 and o[0] == "2" and o[1] in "01234")
            or (n == 3 and o[:2] == "25" and o[2] in "012345")
        )
    # last: [1-9]\d?|1\d\d|2[0-4]\d|25[0-4]
    return (
        (n <= 2 and o[0] in "123456789")
        or (n == 3 and o[0] == "1")
        or (n == 3 and o[0] == "2" and o[1] in "01234")
        or (n == 3 and o[:2] == "25" and o[2] in "01234")
    )


def _is_ip(s: str) -> bool:
    for lead in ("10", "127"):
        if s.startswith(lead) and _dotted_digit_groups(s, len(lead), 3):
            return False
    for lead in ("169.254", "192.168"):
        if s.startswith(lead) and _dotted_digit_groups(s, len(lead), 2):
            return False
    if s.startswith("172.") and len(s) >= 6:
        a, b = s[4], s[5]
        if (
            (a == "1" and b in "6789") or (a == "2" and _is_digit(b)) or (a == "3" and b in "01")
        ) and _dotted_digit_groups(s, 6, 2):
            return False
    parts = s.split(".")
    return (
        len(parts) == 4
        and _octet(parts[0], "first")
        and _octet(parts[1], "middle")
        and _octet(parts[2], "middle")
        and _octet(parts[3], "last")
    )


def _host_and_rest(m: str, p: int) -> bool:
    n = len(m)
    q = p
    while q < n and _is_host_char(m[q]):
        q += 1
    if q == p:
        return False
    host = m[p:q]
    if not (_is_ip(host) or _is_domain(host)):
        return False
    if q == n or m[q] in "/?#":
        return True
    if m[q] == ":":
        r = q + 1
        while r < n and _is_digit(m[r]):
            r += 1
        return 2 <= r - q - 1 <= 5 and (r == n or m[r] in "/?#")
    return False


def _url_match(m: str) -> bool:
    starts = [0]
    k = m.find("://")
    if k >= 2 and all(flags_of(ch) & tables.RE_WORD or ch in "+-." for ch in m[:k]):
        starts.append(k + 3)
    for a in starts:
        if _host_and_rest(m, a):
            return True
        at = m.find("@", a + 1)
        while at != -1:
            if _host_and_rest(m, at + 1):
                return True
            at = m.find("@", at + 1)
    return False


# -- the tokenizer ----------------------------------------------------------------------------


def _split_middle(m: str, out: list[str]) -> None:
    if _is_special(m):
        out.extend(_SPECIALS[m])
        return
    if _url_match(m):
        out.append(m)
        return
    n = len(m)
    start = 0
    i = 0
    while i < n:
        j = _infix_end(m, i, n)
        if not j:
            i += 1
            continue
        if i != 0:  # spaCy ignores an infix at the very start of the middle
            if i != start:
                out.append(m[start:i])
            out.append(m[i:j])
            start = j
        i = j
    if start < n:
        out.append(m[start:])


def _split_word(s: str, out: list[str]) -> None:
    """Tokens of one whitespace-free chunk, appended to ``out`` (spaCy's _split_affixes)."""
    if _is_special(s):
        out.extend(_SPECIALS[s])
        return
    b, e = 0, len(s)
    prefixes: list[str] = []
    suffixes: list[str] = []
    last_size = -1
    while b < e and e - b != last_size:
        if e - b <= _MAX_SPECIAL and _is_special(s[b:e]):
            break
        last_size = e - b
        pre = _find_prefix(s, b, e)
        if pre and e - b - pre <= _MAX_SPECIAL and b + pre < e and _is_special(s[b + pre : e]):
            prefixes.append(s[b : b + pre])
            b += pre
            break
        suf = _find_suffix(s, b + pre, e)
        if suf and e - suf - b <= _MAX_SPECIAL and b < e - suf and _is_special(s[b : e - suf]):
            suffixes.append(s[e - suf : e])
            e -= suf
            break
        if pre:
            prefixes.append(s[b : b + pre])
            b += pre
        if suf:
            suffixes.append(s[e - suf : e])
            e -= suf
    out.extend(prefixes)
    if b < e:
        _split_middle(s[b:e], out)
    out.extend(reversed(suffixes))


_CACHE: dict[str, tuple[str, ...]] = {}
_CACHE_LIMIT = 1 << 16


def _word_tokens(chunk: str) -> tuple[str, ...]:
    cached = _CACHE.get(chunk)
    if cached is None:
        out: list[str] = []
        _split_word(chunk, out)
        cached = tuple(out)
        if len(chunk) <= 64:
            if len(_CACHE) >= _CACHE_LIMIT:
                _CACHE.clear()
            _CACHE[chunk] = cached
    return cached


# The matcher as a trie: token -> (key when a pattern ends here or None, children).
_Trie = dict[str, tuple["str | None", "_Trie"]]
_TRIE: _Trie = {}
for _key, _pattern in tables.MATCHER_PATTERNS.items():
    _node = _TRIE
    for _k, _piece in enumerate(_pattern):
        _children = _node.setdefault(_piece, (None, {}))[1]
        if _k == len(_pattern) - 1:
            _node[_piece] = (_key, _children)
        _node = _node[_piece][1]

GLUED, AFTER_SPACE, WHITESPACE = 0, 1, 2
"""Token kinds: a word glued to the token before it, a word after one ' ', a whitespace token."""


def _apply_matcher(tokens: list[str], kinds: list[int]) -> None:
    """spaCy's _apply_special_cases: re-merge exceptions split by the affix rules, in place."""
    matches: list[tuple[int, int]] = []
    n = len(tokens)
    for i in range(n):
        if kinds[i] == WHITESPACE:
            continue
        entry = _TRIE.get(tokens[i])
        j = i + 1
        while entry is not None:
            key, children = entry
            if key is not None:
                matches.append((i, j))
            if j >= n or kinds[j] == WHITESPACE:
                break
            entry = children.get(tokens[j])
            j += 1
    if not matches:
        return
    # Longest first, then leftmost; a span is dropped when its first or last token was covered
    # by an earlier one (covered tokens are marked even for dropped spans, as in spaCy).
    matches.sort(key=lambda m: (m[0] - m[1], m[0]))
    seen: set[int] = set()
    kept: list[tuple[int, int]] = []
    for a, z in matches:
        if a not in seen and z - 1 not in seen:
            kept.append((a, z))
        seen.update(range(a, z))
    # One pass over the tokens (replacing spans in place would cost O(tokens) each).
    new_tokens: list[str] = []
    new_kinds: list[int] = []
    copied = 0
    for a, z in sorted(kept):
        if any(kinds[k] != GLUED for k in range(a + 1, z)):
            continue  # the span's text has a space in it: never an exception
        pieces = _SPECIALS.get("".join(tokens[a:z]))
        if pieces is None:
            continue
        new_tokens += tokens[copied:a]
        new_kinds += kinds[copied:a]
        new_tokens += pieces
        new_kinds += [kinds[a]] + [GLUED] * (len(pieces) - 1)
        copied = z
    if copied:
        new_tokens += tokens[copied:]
        new_kinds += kinds[copied:]
        tokens[:] = new_tokens
        kinds[:] = new_kinds


def doc_tokens(text: str) -> tuple[list[str], list[int]]:
    """All spaCy tokens of ``text`` with their kinds (whitespace tokens included)."""
    tokens: list[str] = []
    kinds: list[int] = []
    n = len(text)
    i = 0
    after_word = False
    while i < n:
        j = i
        if text[i].isspace():
            while j < n and text[j].isspace():
                j += 1
            # One ' ' right after a word belongs to that word; the rest is a whitespace token.
            ws_start = i + 1 if after_word and text[i] == " " else i
            if ws_start < j:
                tokens.append(text[ws_start:j])
                kinds.append(WHITESPACE)
                after_word = False
            else:
                after_word = j == i + 1  # exactly one ' ': the next word follows a space
            i = j
            continue
        while j < n and not text[j].isspace():
            j += 1
        pieces = _word_tokens(text[i:j])
        kinds.append(AFTER_SPACE if after_word else GLUED)
        kinds.extend([GLUED] * (len(pieces) - 1))
        tokens.extend(pieces)
        after_word = True
        i = j
    _apply_matcher(tokens, kinds)
    return tokens, kinds


def tokenize(text: str) -> list[str]:
    """The words of ``text``: spaCy English tokens, whitespace tokens dropped."""
    tokens, kinds = doc_tokens(text)
    return [t for t, k in zip(tokens, kinds, strict=True) if k != WHITESPACE]


def _is_punct_token(token: str) -> bool:
    return all(flags_of(ch) & tables.UNI_PUNCT for ch in token)


def count_sentences(line: str) -> int:
    """Sentences spaCy's Sentencizer finds in ``line`` (all-whitespace ones not counted).

    A sentence ends after a token that is one of the sentencizer's punctuation characters, at
    the next token that is not punctuation (whitespace tokens included).
    """
    tokens, kinds = doc_tokens(line)
    sentences = 0
    has_word = False  # the current sentence has a non-whitespace token
    seen_period = False
    for token, kind in zip(tokens, kinds, strict=True):
        in_punct_chars = len(token) == 1 and bool(flags_of(token) & tables.SENT_PUNCT)
        if (
            seen_period
            and not in_punct_chars
            and (kind == WHITESPACE or not _is_punct_token(token))
        ):
            sentences += has_word
            has_word = False
            seen_period = False
        elif in_punct_chars:
            seen_period = True
        has_word = has_word or kind != WHITESPACE
    return sentences + has_word
