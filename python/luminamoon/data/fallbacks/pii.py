"""PIIMasker: e-mails, IP addresses, API keys and credit-card numbers (SPEC 4, docs/pii.md).

Pure-Python backend and the reference the native scanner is tested against. Every rule works on
the UTF-8 bytes of the text with ASCII-only patterns, so a byte >= 0x80 is simply "other text":
that is what makes offsets, invalid UTF-8 and non-ASCII context behave the same in both backends.
Candidates are found with ``re`` (every pattern is linear: each is anchored at the start of a
maximal run by a look-behind, or bounded by a fixed window) and then validated in Python, rule
for rule as ``src/pii/scanner.cc`` does; overlaps are resolved leftmost-longest, ties by category
order.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from ..errors import ConfigError
from ._arrow import is_arrow_object, iter_arrow_values
from ._nocopy import NoCopy
from .suggest import did_you_mean, reject_unknown_options

__all__ = ["CATEGORIES", "MaskResult", "PIIMasker", "PIISpan"]

TextLike: TypeAlias = str | bytes | bytearray | memoryview
CATEGORIES = ("EMAIL", "IP_ADDRESS", "API_KEY", "CREDIT_CARD")
_EMAIL, _IP, _KEY, _CARD = range(4)
_OPTIONS = ("email", "ip_address", "api_key", "credit_card", "mask_private_ips", "tags", "threads")
_U32_MAX = 2**32 - 1

# -- character classes (ASCII only) ------------------------------------------------------------

_ALPHA = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_DIGIT = frozenset(b"0123456789")
_WORD = _ALPHA | _DIGIT | {ord("_")}
_KEYCH = _WORD | {ord("-")}
_HEX = frozenset(b"0123456789ABCDEFabcdef")


def _at(data: bytes, i: int) -> int:
    """data[i], or 0 outside the text (the scanner's "no character")."""
    return data[i] if 0 <= i < len(data) else 0


# -- EMAIL -----------------------------------------------------------------------------------

_MAX_LOCAL = 64
_MAX_LOCAL_RUN = 256  # a longer atext run before '@' is no address
_MAX_DOMAIN = 253
_DOMAIN_WINDOW = 256
# RFC 5322 atext (letters, digits, ! # $ % & ' * + - / = ? ^ _ ` { | } ~) and the dot.
_ATEXT = rb"A-Za-z0-9.!#$%&'*+\-/=?^_`{|}~"
_LOCAL_AT = re.compile(rb"(?<![" + _ATEXT + rb"])[" + _ATEXT + rb"]+@")
# The atext characters outside the classic [A-Za-z0-9._%+-]: none may start a local part.
_RFC5322_SPECIAL = frozenset(b"!#$&'*/=?^`{|}~")
_ALNUM_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

_DOMAIN = re.compile(rb"[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*")
# File extensions that are not top-level domains ("icon@2x.png" is an asset, not an address).
_NOT_TLDS = frozenset(
    b"png jpg jpeg gif svg webp bmp ico tif tiff heic avif css scss js mjs cjs jsx ts tsx "
    b"json xml yml yaml html htm txt pdf".split()
)


def _domain_ok(domain: bytes) -> bool:
    labels = domain.split(b".")
    for label in labels:
        if len(label) > 63 or label.startswith(b"-") or label.endswith(b"-"):
            return False
    tld = labels[-1]
    return (
        len(labels) >= 2 and 2 <= len(tld) <= 63 and tld.isalpha() and tld.lower() not in _NOT_TLDS
    )


def _local_part_start(data: bytes, run_start: int, a: int) -> int:
    """Where the local part ending at ``a`` starts inside the atext run: '?' and '&' (URL query)
    and a quote not between two letters/digits end what comes before them, so does '=' after a
    one-case key (``email=jo@x.org``, ``VALUE=``); then the special characters are trimmed
    from the front."""
    c = run_start
    for i in range(run_start, a):
        x = data[i]
        if x in b"?&":
            c = i + 1
        elif x in b"'`":
            if not (_at(data, i - 1) in _ALNUM_BYTES and _at(data, i + 1) in _ALNUM_BYTES):
                c = i + 1
        elif x == 61 and i > c and data[c] in _ALPHA:  # '=' after a one-case key
            key = data[c:i]
            if all(y in _KEYCH for y in key) and not (key != key.lower() and key != key.upper()):
                c = i + 1
    while c < a and data[c] in _RFC5322_SPECIAL:
        c += 1
    return c


# Header fields whose values are message identifiers, not mailboxes.
_ID_HEADERS = (
    b"message-id:",
    b"content-id:",
    b"in-reply-to:",
    b"references:",
    b"resent-message-id:",
)


def _message_id_context(data: bytes, start: int) -> bool:
    """The local part starting at ``start`` is a message or queue identifier: on a line that starts
    with one of _ID_HEADERS, or right after the word "id" and a space."""
    q = start - 1 if start > 0 and data[start - 1] == 60 else start  # '<'
    if (
        q >= 3
        and data[q - 1] == 32
        and data[q - 3 : q - 1].lower() == b"id"
        and (q == 3 or data[q - 4] not in _WORD)
    ):
        return True
    # The line start: a LF at most 201 bytes back, or the start of the text within 200.
    newline = data.rfind(b"\n", max(0, start - 201), start)
    if newline >= 0:
        line = newline + 1
    elif start > 200:
        return False
    else:
        line = 0
    return any(
        line + len(h) <= start and data[line : line + len(h)].lower() == h for h in _ID_HEADERS
    )


def _emails(data: bytes, out: list[tuple[int, int, int]]) -> None:
    n = len(data)
    # Each match is the maximal atext run before one '@' (only the run and the '@' are
    # consumed, so no later '@' is ever skipped); the local part is the end of that run.
    for m in _LOCAL_AT.finditer(data):
        run_start, a = m.start(), m.end() - 1
        if a - run_start > _MAX_LOCAL_RUN:
            continue
        start = _local_part_start(data, run_start, a)
        local = data[start:a]
        if not local:
            continue
        if (
            len(local) > _MAX_LOCAL
            or local.startswith(b".")
            or local.endswith(b".")
            or b".." in local
        ):
            continue
        domain = _DOMAIN.match(data, a + 1, min(n, a + 1 + _DOMAIN_WINDOW))
        if (
            domain is not None
            and domain.end() - (a + 1) <= _MAX_DOMAIN
            and _domain_ok(domain.group())
            and not _message_id_context(data, start)
        ):
            out.append((start, domain.end(), _EMAIL))


# -- IP_ADDRESS ------------------------------------------------------------------------------

_MAX_IPV6_TEXT = 45
_IPV4_RUN = re.compile(rb"(?<![0-9.])[0-9.]*[0-9]\.[0-9][0-9.]*")
_IPV6_RUN = re.compile(rb"(?<![0-9A-Fa-f:.])[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*")

# (network, prefix length) of every IPv4 range that is not public (see docs/pii.md).
_IPV4_NON_PUBLIC = (
    (0x00000000, 8),  # 0.0.0.0/8 "this network"
    (0x0A000000, 8),  # 10.0.0.0/8 private
    (0x64400000, 10),  # 100.64.0.0/10 carrier-grade NAT
    (0x7F000000, 8),  # 127.0.0.0/8 loopback
    (0xA9FE0000, 16),  # 169.254.0.0/16 link-local
    (0xAC100000, 12),  # 172.16.0.0/12 private
    (0xC0000000, 24),  # 192.0.0.0/24 IETF protocol assignments
    (0xC0000200, 24),  # 192.0.2.0/24 TEST-NET-1
    (0xC0A80000, 16),  # 192.168.0.0/16 private
    (0xC6120000, 15),  # 198.18.0.0/15 benchmarking
    (0xC6336400, 24),  # 198.51.100.0/24 TEST-NET-2
    (0xCB007100, 24),  # 203.0.113.0/24 TEST-NET-3
    (0xE0000000, 4),  # 224.0.0.0/4 multicast
    (0xF0000000, 4),  # 240.0.0.0/4 reserved, 255.255.255.255 broadcast
)


def parse_ipv4(s: bytes) -> int | None:
    """A dotted quad of four decimal octets <= 255 without leading zeros, as an int."""
    parts = s.split(b".")
    if len(parts) != 4:
        return None
    value = 0
    for part in parts:
        if not 1 <= len(part) <= 3 or not part.isdigit() or (len(part) > 1 and part[0] == 48):
            return None
        octet = int(part)
        if octet > 255:
            return None
        value = (value << 8) | octet
    return value


def _hex_group(piece: bytes) -> int | None:
    if not 1 <= len(piece) <= 4 or any(b not in _HEX for b in piece):
        return None
    return int(piece, 16)


def _ipv6_side(part: bytes, last: bool) -> list[int] | None:
    if not part:
        return []
    pieces = part.split(b":")
    groups: list[int] = []
    for k, piece in enumerate(pieces):
        if k == len(pieces) - 1 and last and b"." in piece:
            v4 = parse_ipv4(piece)
            if v4 is None:
                return None
            groups += [v4 >> 16, v4 & 0xFFFF]
            return groups
        g = _hex_group(piece)
        if g is None:
            return None
        groups.append(g)
    return groups


def parse_ipv6(s: bytes) -> int | None:
    """RFC 4291 text form (at most one "::", optional dotted-quad tail) as a 128-bit int."""
    if not 2 <= len(s) <= _MAX_IPV6_TEXT:
        return None
    gap = s.find(b"::")
    if gap != -1 and s.find(b"::", gap + 1) != -1:
        return None
    if gap == -1:
        head = _ipv6_side(s, True)
        if head is None or len(head) != 8:
            return None
        tail: list[int] = []
    else:
        if len(s) == 2:
            return None  # "::" alone: no hex digit at all
        head = _ipv6_side(s[:gap], False)
        tail_side = _ipv6_side(s[gap + 2 :], True)
        if head is None or tail_side is None or len(head) + len(tail_side) > 7:
            return None
        tail = tail_side
    words = head + [0] * (8 - len(head) - len(tail)) + tail
    value = 0
    for w in words:
        value = (value << 16) | w
    return value


def ipv4_is_public(address: int) -> bool:
    for base, bits in _IPV4_NON_PUBLIC:
        mask = (0xFFFFFFFF << (32 - bits)) & 0xFFFFFFFF
        if address & mask == base:
            return False
    return True


def ipv6_is_public(address: int) -> bool:
    low = address & 0xFFFFFFFF
    high96 = address >> 32
    mapped = high96 == 0xFFFF  # ::ffff:0:0/96
    compatible = high96 == 0 and low > 1  # ::a.b.c.d
    nat64 = high96 == 0x0064FF9B << 64  # 64:ff9b::/96
    if mapped or compatible or nat64:
        return ipv4_is_public(low)
    if address >> 125 != 0b001:  # not 2000::/3
        return False
    return address >> 96 != 0x20010DB8  # 2001:db8::/32


# Words that make the dotted quad after them a version or a section number (docs/pii.md, "IPv4
# context rules"), matched as whole words, case-insensitively.
_NOT_ADDRESS_WORDS = frozenset(
    b"version versions revision revisions release releases released rev ver v since policy "
    b"standard standards section sections sect sec chapter figure fig table step appendix "
    b"clause paragraph bump gcc nmu".split()
)
# "to", "for", "in" and "from" count only after one of these ("release notes to 1.7.8.4").
_BEFORE_PREPOSITION = frozenset(
    b"notes prepare preparing update updated upgrade upgraded bump bumped changes fixed new "
    b"released version broken added introduced removed fixes corrections references".split()
)
_PACKAGE_NAME = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789+.-")


def _word_before(data: bytes, q: int) -> bytes:
    """The letters (at most 10) ending at q as a whole word, or b""."""
    w = q
    while w > 0 and q - w < 10 and data[w - 1] in _ALPHA:
        w -= 1
    if w == q or (w > 0 and data[w - 1] in _ALPHA):
        return b""
    return data[w:q]


def _after_constraint(data: bytes, a: int) -> bool:
    """A version constraint: ``>= ``, ``<= ``, ``>> `` or ``<< `` (the space optional)."""
    q = a - 1 if a > 0 and data[a - 1] == 32 else a
    if q < 2:
        return False
    x, y = data[q - 2], data[q - 1]
    return (y == 61 and x in b"><") or (x == y and x in b"><")


def _after_context_word(data: bytes, a: int) -> bool:
    q, skipped = a, 0
    while q > 0 and skipped < 3 and data[q - 1] in b" \t:=.":
        q -= 1
        skipped += 1
    if skipped == 0:
        return False
    if q >= 2 and data[q - 2 : q] == b"\xc2\xa7":  # U+00A7 SECTION SIGN
        return True
    word = _word_before(data, q).lower()
    if not word:
        return False
    if word in _NOT_ADDRESS_WORDS:
        return True
    if word not in (b"to", b"for", b"in", b"from"):
        return False
    p = q - len(word)
    if p == 0 or data[p - 1] != 32:
        return False
    return _word_before(data, p - 1).lower() in _BEFORE_PREPOSITION


def _underlined(data: bytes, b: int) -> bool:
    """The line after the one holding b is an underline: 3+ of ". - = * ~" and nothing else."""
    limit = min(len(data), b + 200)
    q = data.find(b"\n", b, limit)
    if q < 0:
        return False
    r = q + 1
    while r < len(data) and data[r] in b".-=*~":
        r += 1
    return r - (q + 1) >= 3 and (r == len(data) or data[r] == 10)


def _starts_line(data: bytes, a: int) -> bool:
    q = a
    while q > 0 and data[q - 1] in b" \t":
        q -= 1
    return q == 0 or data[q - 1] == 10


def _after_package_name(data: bytes, a: int) -> bool:
    if a < 3 or data[a - 1] != 40 or data[a - 2] != 32:  # " ("
        return False
    q = a - 2
    while q > 0 and data[q - 1] in _PACKAGE_NAME:
        q -= 1
    if q == a - 2 or not (data[q] in _ALPHA or data[q] in _DIGIT):
        return False
    if q != 0 and data[q - 1] != 10:
        return False
    # ... and the line is a Debian changelog entry header: "pkg (1.2.3.4) dist; urgency=low".
    limit = min(len(data), a + 200)
    e = data.find(b"\n", a, limit)
    if e < 0:
        e = limit
    return data.find(b"urgency=", a, e) >= 0


_TITLE_WORD = _WORD | frozenset(b"+-")
_UPPER = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _release_title(data: bytes, a: int, b: int) -> bool:
    """Indentation, one word starting upper-case, one space, the quad, trailing spaces, line end
    (``      Git 1.7.4.4``)."""
    if a < 3 or data[a - 1] != 32:
        return False
    w = a - 1
    while w > 0 and a - 1 - w < 32 and data[w - 1] in _TITLE_WORD:
        w -= 1
    if w == a - 1 or data[w] not in _UPPER or not _starts_line(data, w):
        return False
    e = b
    while e < len(data) and data[e] in b" \t":
        e += 1
    return e == len(data) or data[e] in b"\n\r"


def _after_date(data: bytes, a: int) -> bool:
    """``2014-03-26 (3.8.4.2)``: a release date, a space, an opening parenthesis."""
    if a < 12 or data[a - 1] != 40 or data[a - 2] != 32:
        return False
    d = a - 12
    for k in range(10):
        c = data[d + k]
        if (c != 45) if k in (4, 7) else (c not in _DIGIT):
            return False
    return d == 0 or data[d - 1] not in _WORD


_LIBRARY_NAME = _WORD | frozenset(b"+-")


def _after_library_name(data: bytes, a: int) -> bool:
    """``libxcb 1.1.90.1``: a whole word ``lib`` + 1-29 of ``[A-Za-z0-9_+-]``, one space."""
    if a < 5 or data[a - 1] != 32:
        return False
    w = a - 1
    while w > 0 and a - 1 - w < 32 and data[w - 1] in _LIBRARY_NAME:
        w -= 1
    length = a - 1 - w
    if length < 4 or length > 32 or (w > 0 and data[w - 1] in _LIBRARY_NAME):
        return False
    return data[w : w + 3] == b"lib"


def _ipv4_not_an_address(data: bytes, a: int, b: int) -> bool:
    """The IPv4 context rules: the valid dotted quad data[a:b] is a version or a section number."""
    nxt = _at(data, b)
    if nxt in b"-~+" and nxt != 0 and _at(data, b + 1) in _ALNUM_BYTES:
        if nxt != 45:  # '~' or '+': a version suffix
            return True
        c = b + 1
        while c < len(data) and data[c] in b"0123456789.":
            c += 1
        d = c
        while d > b + 1 and data[d - 1] == 46:
            d -= 1
        if _at(data, c) in _WORD or parse_ipv4(data[b + 1 : d]) is None:
            return True  # "2.10.0.27-0.cvs"; "1.1.1.1-1.0.0.1" is a range of addresses
    if (
        _after_context_word(data, a)
        or _after_package_name(data, a)
        or _after_date(data, a)
        or _after_constraint(data, a)
        or _release_title(data, a, b)
        or _after_library_name(data, a)
    ):
        return True
    if a >= 2 and data[a - 1] == 45 and data[a - 2] in _ALPHA:  # "shadow-4.1.4.2"
        return True
    # A section number heading its line: "12.3.2.2. Title", or "7.5.1.3 Title" underlined.
    if _starts_line(data, a):
        after = _at(data, b + 1)
        if nxt == 46 and (after == 0 or after in b" \t\n"):
            return True
        if nxt == 32 and _underlined(data, b):
            return True
    return False


def _ipv4s(data: bytes, mask_private: bool, out: list[tuple[int, int, int]]) -> None:
    found: list[tuple[int, int, int]] = []
    versions: set[int] = set()  # quads the document uses as versions: dropped everywhere
    for m in _IPV4_RUN.finditer(data):
        s, e = m.span()
        if _at(data, e) in _WORD:
            continue
        a, b = s, e
        while a < b and data[a] == 46:
            a += 1
        while b > a and data[b - 1] == 46:
            b -= 1
        if _at(data, s - 1) in _WORD:
            # Glued to a word: never an address; "v1.2.3.4" (a whole-word v) names a version.
            if data[s - 1] in b"vV" and _at(data, s - 2) not in _WORD:
                glued = parse_ipv4(data[a:b])
                if glued is not None:
                    versions.add(glued)
            continue
        v = parse_ipv4(data[a:b])
        if v is None:
            continue
        if _ipv4_not_an_address(data, a, b):
            versions.add(v)
            continue
        if not mask_private and not ipv4_is_public(v):
            continue
        found.append((a, b, _IP))
    out.extend(f for f in found if parse_ipv4(data[f[0] : f[1]]) not in versions)


def _ipv6s(data: bytes, mask_private: bool, out: list[tuple[int, int, int]]) -> None:
    for m in _IPV6_RUN.finditer(data):
        a, b = m.span()
        while b > a and data[b - 1] == 46:
            b -= 1
        if b - a >= 2 and data[b - 1] == 58 and data[b - 2] != 58:
            b -= 1
        if b - a >= 2 and data[a] == 58 and data[a + 1] != 58:
            a += 1
        if b - a > _MAX_IPV6_TEXT:
            continue
        if _at(data, a - 1) in _WORD or _at(data, b) in _WORD:
            continue
        text = data[a:b]
        v = parse_ipv6(text)
        if v is None or (not mask_private and not ipv6_is_public(v)):
            continue
        # A compressed form needs a group of 3+ hex digits or a dotted tail ("::1" aside), which
        # keeps C++ scopes ("A::B") and Python slices ("a[1::2]") out.
        if (
            b"::" in text
            and text != b"::1"
            and b"." not in text
            and max(map(len, text.split(b":"))) < 3
        ):
            continue
        out.append((a, b, _IP))


# -- CREDIT_CARD -----------------------------------------------------------------------------

_CARD_RUN = re.compile(rb"[0-9]+(?:[ -][0-9]+)*")
_DIGITS = re.compile(rb"[0-9]+")
# (low, high, prefix digits, min length, max length); Visa (4..., 13/16/19 digits) apart.
_ISSUERS = (
    (51, 55, 2, 16, 16),  # Mastercard
    (2221, 2720, 4, 16, 16),  # Mastercard
    (34, 34, 2, 15, 15),  # American Express
    (37, 37, 2, 15, 15),  # American Express
    (6011, 6011, 4, 16, 19),  # Discover
    (644, 649, 3, 16, 19),  # Discover
    (65, 65, 2, 16, 19),  # Discover
    (300, 305, 3, 14, 19),  # Diners Club
    (3095, 3095, 4, 14, 19),  # Diners Club
    (36, 36, 2, 14, 19),  # Diners Club
    (38, 39, 2, 14, 19),  # Diners Club
    (3528, 3589, 4, 16, 19),  # JCB
    (62, 62, 2, 16, 19),  # UnionPay
    (5018, 5018, 4, 13, 19),  # Maestro
    (5020, 5020, 4, 13, 19),  # Maestro
    (5038, 5038, 4, 13, 19),  # Maestro
    (5893, 5893, 4, 13, 19),  # Maestro
    (6304, 6304, 4, 13, 19),  # Maestro
    (6759, 6759, 4, 13, 19),  # Maestro
    (6761, 6763, 4, 13, 19),  # Maestro
    (2200, 2204, 4, 16, 19),  # Mir
)


def luhn_valid(digits: bytes) -> bool:
    total = 0
    for k, b in enumerate(reversed(digits)):
        d = b - 48
        if k % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def card_issuer_known(digits: bytes) -> bool:
    n = len(digits)
    if not 13 <= n <= 19:
        return False
    if digits[0] == 52:  # '4': Visa
        return n in (13, 16, 19)
    for lo, hi, plen, min_len, max_len in _ISSUERS:
        if lo <= int(digits[:plen]) <= hi and min_len <= n <= max_len:
            return True
    return False


def _card_edge_ok(b: int, beyond: int) -> bool:
    """Not a letter or '_' next to the digits, not a decimal point between digits, not a '-'
    that glues the digits to an identifier (``mpath-35333333000002328``)."""
    return not (
        b in _ALPHA
        or b == 95
        or (b == 46 and beyond in _DIGIT)
        or (b == 45 and (beyond in _ALPHA or beyond == 95))
    )


def _card_number(data: bytes, a: int, b: int, out: list[tuple[int, int, int]]) -> None:
    if not _card_edge_ok(_at(data, a - 1), _at(data, a - 2)) or not _card_edge_ok(
        _at(data, b), _at(data, b + 1)
    ):
        return
    number = data[a:b].replace(b" ", b"").replace(b"-", b"")
    if card_issuer_known(number) and luhn_valid(number):
        out.append((a, b, _CARD))


def _cards(data: bytes, out: list[tuple[int, int, int]]) -> None:
    for m in _CARD_RUN.finditer(data):
        s, e = m.span()
        if e - s < 4:
            continue
        groups = [g.span() for g in _DIGITS.finditer(data, s, e)]
        count = len(groups)
        for g, (g_start, g_end) in enumerate(groups):
            length = g_end - g_start
            if 13 <= length <= 19:
                _card_number(data, g_start, g_end, out)
            if length != 4 or g + 1 == count:
                continue
            separator = data[groups[g + 1][0] - 1]
            total = 4
            for h in range(g + 1, min(count, g + 5)):
                h_start, h_end = groups[h]
                if data[h_start - 1] != separator or not 3 <= h_end - h_start <= 6:
                    break
                total += h_end - h_start
                if total > 19:
                    break
                if total >= 13:
                    _card_number(data, g_start, h_end, out)


# -- API_KEY ---------------------------------------------------------------------------------

_MAX_JWT = 16384
_MAX_PEM_LABEL = 64
_MAX_PEM_BODY = 65536
_KEY_PREFIX = re.compile(
    rb"(?<![A-Za-z0-9_-])(?:AKIA|ASIA|ABIA|ACCA|AIza|gh[pousr]_|github_pat_|xox[abprs]-|sk-"
    rb"|[sr]k_live_|eyJ)"
)
_UPPER_DIGITS = re.compile(rb"[A-Z0-9]*")
_ALNUM = re.compile(rb"[A-Za-z0-9]*")
_WORDS = re.compile(rb"[A-Za-z0-9_]*")
_KEYS = re.compile(rb"[A-Za-z0-9_-]*")
_SLACK = re.compile(rb"[A-Za-z0-9-]*")
_JWT_RUN = re.compile(rb"[A-Za-z0-9_.-]*")
_PEM_LABEL = re.compile(rb"[A-Z0-9 ]*")
_AWS_VALUE = re.compile(rb"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_AWS_CONTEXT = re.compile(
    rb"(?i:secret[_-]?(?:access[_-]?)?key)[\"']?[ \t]{0,16}(?:=>|:=|[=:])[ \t]{0,16}[\"']?\Z"
)
_MIXED = (re.compile(rb"[A-Z]"), re.compile(rb"[a-z]"), re.compile(rb"[0-9]"))

# prefix -> (body pattern, min body length, max body length)
_KEY_BODIES: dict[bytes, tuple[re.Pattern[bytes], int, int]] = {
    b"AKIA": (_UPPER_DIGITS, 16, 16),
    b"ASIA": (_UPPER_DIGITS, 16, 16),
    b"ABIA": (_UPPER_DIGITS, 16, 16),
    b"ACCA": (_UPPER_DIGITS, 16, 16),
    b"AIza": (_KEYS, 35, 35),
    b"github_pat_": (_WORDS, 22, 244),
    b"sk-": (_KEYS, 20, 252),
    b"sk_live_": (_ALNUM, 20, 247),
    b"rk_live_": (_ALNUM, 20, 247),
}
for _p in b"pousr":
    _KEY_BODIES[b"gh" + bytes([_p]) + b"_"] = (_ALNUM, 36, 251)
for _p in b"abprs":
    _KEY_BODIES[b"xox" + bytes([_p]) + b"-"] = (_SLACK, 10, 250)


def _jwt(data: bytes, p: int, out: list[tuple[int, int, int]]) -> None:
    if _at(data, p - 1) == 46:
        return
    run = _JWT_RUN.match(data, p, min(len(data), p + _MAX_JWT + 1))
    assert run is not None  # the pattern matches the empty string
    q = run.end()
    if q - p > _MAX_JWT:
        return
    while q > p and data[q - 1] == 46:
        q -= 1
    parts = data[p:q].split(b".")
    if (
        len(parts) == 3
        and len(parts[0]) >= 10
        and len(parts[1]) >= 10
        and len(parts[2]) >= 16
        and parts[1].startswith(b"eyJ")
    ):
        out.append((p, q, _KEY))


def _keys(data: bytes, out: list[tuple[int, int, int]]) -> None:
    n = len(data)
    for m in _KEY_PREFIX.finditer(data):
        p, body = m.span()
        prefix = m.group()
        if prefix == b"eyJ":
            _jwt(data, p, out)
            continue
        pattern, min_len, max_len = _KEY_BODIES[prefix]
        run = pattern.match(data, body, min(n, body + max_len + 1))
        assert run is not None
        q = run.end()
        if not min_len <= q - body <= max_len or _at(data, q) in _KEYCH:
            continue
        if prefix == b"sk-" and not all(r.search(data, body, q) for r in _MIXED):
            continue
        out.append((p, q, _KEY))
    i = data.find(b"-----BEGIN ")
    while i != -1:
        label_start = i + 11
        close = data.find(b"-----", label_start, label_start + _MAX_PEM_LABEL + 5)
        if close != -1:
            label = data[label_start:close]
            if _PEM_LABEL.fullmatch(label) and (
                label.endswith((b"PRIVATE KEY", b"PRIVATE KEY BLOCK"))
            ):
                body = close + 5
                end = data.find(b"-----", body, body + _MAX_PEM_BODY + 5)
                if (
                    end != -1
                    and data.startswith(b"-----END " + label + b"-----", end)
                    and data[body:end].isascii()  # keeps every match ASCII, as in the native
                ):
                    out.append((i, end + 9 + len(label) + 5, _KEY))
        i = data.find(b"-----BEGIN ", i + 1)
    for m in _AWS_VALUE.finditer(data):
        v = m.start()
        if _AWS_CONTEXT.search(data, max(0, v - 64), v):
            out.append((v, v + 40, _KEY))


# -- resolution and the public API -------------------------------------------------------------


def _resolve(candidates: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Leftmost-longest: by start, longer first, then category order; drop overlaps."""
    candidates.sort(key=lambda c: (c[0], -c[1], c[2]))
    kept: list[tuple[int, int, int]] = []
    last_end = 0
    for c in candidates:
        if kept and c[0] < last_end:
            continue
        kept.append(c)
        last_end = c[1]
    return kept


def _encode(text: object, where: str) -> bytes:
    if isinstance(text, str):
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(
                f"{where}: str cannot be encoded as UTF-8 ({exc.reason} at position "
                f"{exc.start}); pass bytes, or fix the text with .encode('utf-8', 'replace')"
            ) from None
    if isinstance(text, bytes):
        return text
    try:
        view = memoryview(text)  # type: ignore[arg-type]  # any buffer, like the native module
    except TypeError:
        raise TypeError(f"{where}: expected str or bytes-like, got {type(text).__name__}") from None
    with view:
        if not view.c_contiguous:
            raise TypeError(f"{where}: expected a contiguous bytes-like object")
        return view.tobytes()


def _counts_dict(counts: Sequence[int]) -> dict[str, int]:
    return dict(zip(CATEGORIES, counts, strict=True))


@dataclass(frozen=True)
class PIISpan:
    """One masked match: category, code-point offsets, UTF-8 byte offsets and the text."""

    category: str
    start: int
    end: int
    byte_start: int
    byte_end: int
    text: str


class MaskResult:
    """``mask_batch``'s result: the masked texts and the batch's per-category counts."""

    def __init__(self, texts: list[str], counts: dict[str, int]) -> None:
        self._texts = texts
        self._counts = counts

    @property
    def texts(self) -> list[str]:
        return self._texts

    @property
    def counts(self) -> dict[str, int]:
        return dict(self._counts)

    def __len__(self) -> int:
        return len(self._texts)

    def __getitem__(self, index: int) -> str:
        return self._texts[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self._texts)

    def __repr__(self) -> str:
        return f"MaskResult(texts=<{len(self._texts)} texts>, counts={self._counts!r})"


def _check_bool(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"PIIMasker: {name} must be a bool, got {value!r}")
    return value


def _tag_category(key: object) -> int:
    if not isinstance(key, str):
        raise TypeError(f"PIIMasker: tags keys must be category names (str), got {key!r}")
    if key in CATEGORIES:
        return CATEGORIES.index(key)
    best = key.upper() if key.upper() in CATEGORIES else did_you_mean(key, CATEGORIES)
    if best is not None:
        raise ConfigError(f"PIIMasker: unknown category '{key}' in tags; did you mean '{best}'?")
    raise ConfigError(
        f"PIIMasker: unknown category '{key}' in tags; valid categories: " + ", ".join(CATEGORIES)
    )


class PIIMasker(NoCopy):
    """Masks e-mails, IP addresses, API keys and credit-card numbers (rules: docs/pii.md)."""

    def __init__(
        self,
        *,
        email: bool = True,
        ip_address: bool = True,
        api_key: bool = True,
        credit_card: bool = True,
        mask_private_ips: bool = False,
        tags: dict[str, str] | None = None,
        threads: int = 0,
        **options: Any,
    ) -> None:
        reject_unknown_options("PIIMasker", options, _OPTIONS)
        self._enabled = (
            _check_bool(email, "email"),
            _check_bool(ip_address, "ip_address"),
            _check_bool(api_key, "api_key"),
            _check_bool(credit_card, "credit_card"),
        )
        self._mask_private_ips = _check_bool(mask_private_ips, "mask_private_ips")
        if not (
            isinstance(threads, int) and not isinstance(threads, bool) and 0 <= threads <= _U32_MAX
        ):
            raise ValueError(f"threads must be an int in [0, {_U32_MAX}], got {threads!r}")
        # The fallback masks on the calling thread; ``threads`` only exists for API parity.
        self._threads = threads
        self._tags = [f"<{c}>" for c in CATEGORIES]
        if tags is not None:
            if not isinstance(tags, dict):
                raise TypeError(
                    "PIIMasker: tags must be a dict of category name -> replacement str, got "
                    + type(tags).__name__
                )
            for key, value in tags.items():
                k = _tag_category(key)
                if not isinstance(value, str):
                    raise TypeError(
                        f"PIIMasker: tags[{key!r}] must be a str, got {type(value).__name__}"
                    )
                self._tags[k] = _encode(value, f"tags[{key}]").decode("utf-8")
        self._counts = [0, 0, 0, 0]
        self._stats = {"documents": 0, "bytes": 0}
        self._totals = [0, 0, 0, 0]

    # -- scanning ---------------------------------------------------------------------------

    def _scan(self, data: bytes) -> list[tuple[int, int, int]]:
        found: list[tuple[int, int, int]] = []
        email, ip, key, card = self._enabled
        if email and b"@" in data:
            _emails(data, found)
        if ip:
            _ipv4s(data, self._mask_private_ips, found)
            if b":" in data:
                _ipv6s(data, self._mask_private_ips, found)
        if key:
            _keys(data, found)
        if card:
            _cards(data, found)
        return _resolve(found) if len(found) > 1 else found

    def _mask_one(self, text: object, where: str) -> tuple[str, list[int], int]:
        data = _encode(text, where)
        spans = self._scan(data)
        counts = [0, 0, 0, 0]
        if not spans and isinstance(text, str):
            return text, counts, len(data)
        parts: list[str] = []
        pos = 0
        for s, e, c in spans:
            parts.append(data[pos:s].decode("utf-8", "replace"))
            parts.append(self._tags[c])
            counts[c] += 1
            pos = e
        parts.append(data[pos:].decode("utf-8", "replace"))
        return "".join(parts), counts, len(data)

    def _record(self, documents: int, nbytes: int, counts: list[int]) -> None:
        self._counts = counts
        self._stats["documents"] += documents
        self._stats["bytes"] += nbytes
        self._totals = [a + b for a, b in zip(self._totals, counts, strict=True)]

    # -- public API -------------------------------------------------------------------------

    def mask(self, text: TextLike) -> str:
        """The text with every match replaced by its category's tag.

        Bytes are decoded as UTF-8 with U+FFFD for invalid sequences (CPython's rule).
        """
        out, counts, nbytes = self._mask_one(text, "text")
        self._record(1, nbytes, counts)
        return out

    def mask_batch(self, texts: Sequence[TextLike] | Any) -> MaskResult:
        """Masks every document: a list/tuple of str or bytes, or an Arrow string array."""
        items: Sequence[object]
        if isinstance(texts, (list, tuple)):
            items = tuple(texts)
        elif is_arrow_object(texts):
            items = iter_arrow_values(texts)
        else:
            raise TypeError(
                "texts: expected a list or tuple of str/bytes, or an Arrow string array "
                f"(__arrow_c_array__ / __arrow_c_stream__), got {type(texts).__name__}"
            )
        results = [self._mask_one(t, f"texts[{i}]") for i, t in enumerate(items)]
        totals = [0, 0, 0, 0]
        nbytes = 0
        for _, counts, size in results:
            totals = [a + b for a, b in zip(totals, counts, strict=True)]
            nbytes += size
        self._record(len(results), nbytes, totals)
        return MaskResult([r[0] for r in results], _counts_dict(totals))

    def find(self, text: TextLike) -> list[PIISpan]:
        """Every match, in text order: what ``mask`` would replace."""
        data = _encode(text, "text")
        spans: list[PIISpan] = []
        pos = cp = 0
        for s, e, c in self._scan(data):
            cp += len(data[pos:s].decode("utf-8", "replace"))
            spans.append(PIISpan(CATEGORIES[c], cp, cp + e - s, s, e, data[s:e].decode("ascii")))
            cp += e - s
            pos = e
        return spans

    @property
    def counts(self) -> dict[str, int]:
        """Per-category counts of the last ``mask`` or ``mask_batch`` call."""
        return _counts_dict(self._counts)

    def stats(self) -> dict[str, int]:
        """Cumulative documents, bytes and per-category counts since construction/reset."""
        return {**self._stats, **_counts_dict(self._totals)}

    def reset_stats(self) -> None:
        self._counts = [0, 0, 0, 0]
        self._totals = [0, 0, 0, 0]
        self._stats = {"documents": 0, "bytes": 0}

    @property
    def tags(self) -> dict[str, str]:
        return dict(zip(CATEGORIES, self._tags, strict=True))

    @property
    def categories(self) -> tuple[str, ...]:
        """The enabled categories."""
        return tuple(c for c, on in zip(CATEGORIES, self._enabled, strict=True) if on)

    @property
    def mask_private_ips(self) -> bool:
        return self._mask_private_ips

    @property
    def threads(self) -> int:
        return self._threads

    def __repr__(self) -> str:
        return (
            f"PIIMasker(categories={self.categories!r}, "
            f"mask_private_ips={self._mask_private_ips!r})"
        )
