"""Labelled documents for the QualityFilter: clean prose, typical junk, and a varied mix.

Deterministic (seeded ``random.Random``), no downloads. Used three ways:

* calibration of the ``default`` preset (``calibration_corpus``: prose that must pass, junk of
  five kinds that must fail; figures in docs/quality.md, checked by tests/test_quality.py);
* agreement with datatrove (``varied_corpus``: prose, junk, code, lists, and prose perturbed
  towards every Gopher / C4 / FineWeb rule, so each rule is exercised on both sides of its
  threshold; tests/test_quality_datatrove.py and bench/quality_agreement.py);
* the benchmark (bench/bench_quality.py).

Two prose sources: paragraphs of the CPython documentation that ships with the interpreter
(``pydoc_data.topics``: real English technical prose, code blocks removed), and a template
generator of narrative / news / encyclopedic prose (contractions, quotes, numbers, money,
dates, parentheses). Run ``python bench/quality_corpus.py`` for a sample of each kind.
"""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Callable
from functools import cache

__all__ = [
    "JUNK_KINDS",
    "PROSE_KINDS",
    "calibration_corpus",
    "docs_prose",
    "junk",
    "template_prose",
    "varied_corpus",
]

# -- prose ------------------------------------------------------------------------------------


@cache
def docs_paragraphs() -> tuple[str, ...]:
    """Prose paragraphs of the CPython docs (pydoc_data.topics), unwrapped, code removed."""
    from pydoc_data import topics

    out: list[str] = []
    for key in sorted(topics.topics):
        for block in topics.topics[key].split("\n\n"):
            lines = block.split("\n")
            if any(line.startswith("   ") or ">>>" in line for line in lines):
                continue  # code samples and grammar productions
            if all(set(line) <= set("*=-~^ ") for line in lines if line):
                continue  # heading underlines
            text = " ".join(line.strip() for line in lines).strip()
            if len(text.split()) >= 12 and text[-1] in ".:;)":
                out.append(text)
    return tuple(out)


def docs_prose(rng: random.Random) -> str:
    """2-8 consecutive documentation paragraphs, one per line or blank-line separated."""
    paragraphs = docs_paragraphs()
    k = rng.randint(2, 8)
    start = rng.randrange(len(paragraphs) - k)
    sep = rng.choice(("\n", "\n\n"))
    return sep.join(paragraphs[start : start + k])


_NAMES = (
    "Maria Lopez",
    "James Chen",
    "Aisha Bello",
    "Tom O'Brien",
    "Sofia Rossi",
    "Daniel Kim",
    "Hannah Weber",
    "Ravi Patel",
    "Elena Petrova",
    "Lucas Martin",
    "Grace Mensah",
    "Noah Smith",
    "Yuki Tanaka",
    "Omar Haddad",
    "Clara Jensen",
    "Peter Novak",
    "Amara Okafor",
    "Leo Dubois",
)
_FIRST = tuple(n.split()[0] for n in _NAMES)
_PLACES = (
    "Lisbon",
    "the city council",
    "northern Italy",
    "the river valley",
    "Nairobi",
    "the harbour",
    "Toronto",
    "the old town",
    "the coastal region",
    "Melbourne",
    "the university campus",
    "rural Ohio",
    "the mountain villages",
    "Rotterdam",
    "the capital",
    "the eastern suburbs",
)
_ORGS = (
    "the ministry",
    "a local charity",
    "the research team",
    "the company",
    "the museum",
    "the school board",
    "a regional bank",
    "the hospital",
    "the football club",
    "the library",
)
_NOUNS = (
    "project",
    "bridge",
    "report",
    "garden",
    "market",
    "festival",
    "station",
    "policy",
    "budget",
    "river",
    "library",
    "survey",
    "vaccine",
    "harvest",
    "election",
    "building",
    "network",
    "museum",
    "recipe",
    "journey",
    "exhibition",
    "factory",
    "storm",
    "treaty",
    "concert",
    "experiment",
    "road",
    "forest",
    "ceremony",
    "engine",
    "novel",
    "painting",
    "school",
    "harbour",
    "village",
    "season",
    "contract",
    "schedule",
    "collection",
    "debate",
)
_ADJS = (
    "new",
    "old",
    "small",
    "large",
    "local",
    "quiet",
    "busy",
    "popular",
    "difficult",
    "modern",
    "historic",
    "annual",
    "public",
    "private",
    "careful",
    "early",
    "late",
    "ambitious",
    "unusual",
    "remarkable",
    "practical",
    "brief",
    "detailed",
    "generous",
    "narrow",
    "bright",
)
_VERBS_PAST = (
    "opened",
    "reviewed",
    "finished",
    "announced",
    "described",
    "visited",
    "rebuilt",
    "planned",
    "delayed",
    "approved",
    "studied",
    "celebrated",
    "repaired",
    "funded",
    "launched",
    "changed",
    "explained",
    "organised",
    "measured",
    "questioned",
    "protected",
    "expanded",
    "restored",
)
_VERBS = (
    "open",
    "review",
    "finish",
    "announce",
    "describe",
    "visit",
    "rebuild",
    "plan",
    "approve",
    "study",
    "celebrate",
    "repair",
    "fund",
    "launch",
    "change",
    "explain",
    "organise",
    "improve",
)
_ADVS = (
    "quickly",
    "slowly",
    "carefully",
    "recently",
    "finally",
    "already",
    "quietly",
    "openly",
    "largely",
    "mostly",
    "rarely",
    "often",
    "eventually",
    "suddenly",
    "gradually",
)
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def _fill(rng: random.Random, template: str) -> str:
    def pick(seq: tuple[str, ...]) -> str:
        return rng.choice(seq)

    slots: dict[str, Callable[[], str]] = {
        "name": lambda: pick(_NAMES),
        "first": lambda: pick(_FIRST),
        "place": lambda: pick(_PLACES),
        "org": lambda: pick(_ORGS),
        "noun": lambda: pick(_NOUNS),
        "noun2": lambda: pick(_NOUNS),
        "adj": lambda: pick(_ADJS),
        "adj2": lambda: pick(_ADJS),
        "vpast": lambda: pick(_VERBS_PAST),
        "verb": lambda: pick(_VERBS),
        "adv": lambda: pick(_ADVS),
        "month": lambda: pick(_MONTHS),
        "year": lambda: str(rng.randint(1890, 2025)),
        "num": lambda: str(rng.randint(2, 950)),
        "pct": lambda: f"{rng.randint(1, 99)}.{rng.randint(0, 9)}%",
        "money": lambda: rng.choice(("$", "€", "£")) + f"{rng.randint(1, 99)}.{rng.randint(1, 9)}",
        "big": lambda: f"{rng.randint(1, 999):,}{rng.choice(('', ',000'))}",
    }
    out = template
    for key, make in slots.items():
        while "{" + key + "}" in out:
            out = out.replace("{" + key + "}", make(), 1)
    return out[0].upper() + out[1:]


_TEMPLATES = (
    "{name} {vpast} the {adj} {noun} in {place} last {month}.",
    "The {noun} was {adv} {vpast} by {org} after months of debate.",
    "According to {org}, about {pct} of residents {vpast} the {noun} in {year}.",
    "It's not the first time {place} has {vpast} a {noun} of this size.",
    '"We didn\'t expect the {noun} to be so {adj}," said {name}.',
    "{first} said the {noun2} would cost {money} million, far more than planned.",
    "In {year}, the {adj} {noun} {vpast} for the first time since the war.",
    "Critics say the {noun} is too {adj}, but supporters argue it will {verb} the {noun2}.",
    "The {adj} {noun} (built in {year}) attracts around {big} visitors a year.",
    "Why did {org} {verb} the {noun}? Nobody was quite sure.",
    "Residents of {place} {adv} {vpast} the plan, and many of them stayed to help.",
    "{name}, who {vpast} the {noun} for {org}, called it a {adj} success.",
    "There are {num} reasons to {verb} a {noun}, and most of them are {adj}.",
    "By the end of {month}, {org} had {vpast} {num} new {noun}s across {place}.",
    "The {noun} isn't {adj}; it is simply {adj2} and {adj}.",
    "Most people in {place} remember the {noun} of {year} as a {adj} time.",
    "Prices rose by {pct} last year, while wages grew more {adv}.",
    "She has {vpast} the {noun2} three times, and she'll do it again in {month}.",
    "{first} and {first} {vpast} the {noun} together, working {adv} through the night.",
    "A {adj} {noun} can {verb} a whole {noun2}, as {org} learned in {year}.",
    "The report, published on {num} {month}, {vpast} the {adj} {noun} in detail.",
    "If the {noun} is {vpast} in time, the {noun2} could open before {month}.",
    "They weren't sure whether the {noun} would survive another {adj} winter.",
    "Officials estimate that {big} people used the {noun} during its first week.",
    "Over the years the {noun} has become a {adj} part of life in {place}.",
    "The {adj} design of the {noun} was {adv} {vpast} by engineers from {place}.",
    '{name} told reporters that the {noun2} was "{adj}, but worth it."',
    "Some experts believe the {noun} will {verb} the economy of {place}.",
    "After the {noun} {vpast}, {org} promised to {verb} the {noun2} by {year}.",
    "You can still see the {adj} {noun} from the {noun2} near {place}.",
    "What makes the {noun} so {adj} is how {adv} it was {vpast}.",
    "The team {vpast} {num} samples, of which {pct} were {adj}.",
    "Few {noun}s in {place} have been {vpast} as {adv} as this one.",
    "Funding of {money} billion was {vpast} for the {noun} and the {noun2}.",
    "Although the {noun} is {adj}, the {noun2} beside it is even more {adj2}.",
    "Local historians say the {noun} dates back to {year} or even earlier.",
    "The {noun} has {vpast} twice, once in {year} and again in {year}.",
    "I've never seen a {noun} quite like it, {first} wrote in a letter.",
    "Visitors often ask why the {noun} was {vpast} at all.",
    "Since {year}, the {adj} {noun} has been {adv} {vpast} every {month}.",
    "Its {adj} walls, {adj2} gardens and {adj} windows make the {noun} easy to recognise.",
    "The board will {verb} the {noun} next week; a decision is expected soon.",
    "Neither the {noun} nor the {noun2} was ready when the {noun} {vpast}.",
    "More than {num} volunteers {vpast} the {noun} in just {num} days!",
)

_TITLES = (
    "{adj} {noun} {vpast} in {place}",
    "How {place} {vpast} its {noun}",
    "The {noun} of {year}",
    "{name} on the {adj} {noun}",
)


def template_prose(rng: random.Random) -> str:
    """Narrative / news prose: an optional title line, then 2-7 paragraphs of 3-7 sentences."""
    paragraphs = []
    if rng.random() < 0.4:
        paragraphs.append(_fill(rng, rng.choice(_TITLES)))
    # Templates are drawn without replacement: ordinary prose does not repeat its sentences.
    order = rng.sample(_TEMPLATES, len(_TEMPLATES))
    for _ in range(rng.randint(2, 7)):
        sentences = [_fill(rng, order.pop()) for _ in range(rng.randint(3, 6))]
        paragraphs.append(" ".join(sentences))
    return rng.choice(("\n", "\n\n")).join(paragraphs)


# -- junk -------------------------------------------------------------------------------------

_KEYWORDS = (
    "cheap",
    "best",
    "buy",
    "online",
    "discount",
    "shoes",
    "sale",
    "free",
    "shipping",
    "price",
    "deal",
    "top",
    "cheap flights",
    "hotel",
    "casino",
    "loans",
    "viagra",
    "watches",
    "replica",
    "download",
    "mp3",
    "crack",
    "seo",
    "backlinks",
    "weight loss",
    "bitcoin",
    "jobs",
    "2024",
)
_MENU_ITEMS = (
    "Home",
    "About Us",
    "Services",
    "Products",
    "Blog",
    "News",
    "Contact",
    "Careers",
    "FAQ",
    "Login",
    "Register",
    "Cart (0)",
    "My Account",
    "Shop",
    "Support",
    "Sitemap",
    "Search",
    "Privacy Policy",
    "Terms of Use",
    "Categories",
    "Sports",
    "Weather",
    "Video",
    "Gallery",
)


def _keyword_spam(rng: random.Random) -> str:
    words = rng.sample(_KEYWORDS, rng.randint(3, 8))
    sep = rng.choice((" ", ", ", " | ", " - ", "\n"))
    return sep.join(rng.choice(words) for _ in range(rng.randint(40, 300)))


def _boilerplate_menu(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randint(2, 8)):
        items = rng.sample(_MENU_ITEMS, rng.randint(3, 9))
        sep = rng.choice((" | ", " » ", " · ", " • ", " / ", "\n", "  "))
        lines.append(sep.join(items))
    if rng.random() < 0.7:
        year = rng.randint(2005, 2025)
        lines.append(f"© {year} {rng.choice(_ORGS).title()}. All rights reserved.")
    return "\n".join(lines)


def _number_table(rng: random.Random) -> str:
    cols = rng.randint(3, 9)
    sep = rng.choice(("\t", " ", " | ", ", ", ";"))
    rows = []
    if rng.random() < 0.5:
        rows.append(
            sep.join(
                rng.choice(("Year", "Q1", "Total", "ID", "Min", "Max", "Avg")) for _ in range(cols)
            )
        )
    for _ in range(rng.randint(8, 60)):
        row = []
        for _ in range(cols):
            kind = rng.random()
            if kind < 0.4:
                row.append(str(rng.randint(0, 99999)))
            elif kind < 0.8:
                row.append(f"{rng.uniform(-1000, 1000):.2f}")
            else:
                row.append(f"{rng.randint(0, 100)}%")
        rows.append(sep.join(row))
    return "\n".join(rows)


def _base64_blob(rng: random.Random) -> str:
    raw = rng.randbytes(rng.randint(300, 6000))
    blob = base64.b64encode(raw).decode()
    if rng.random() < 0.5:
        blob = "\n".join(blob[i : i + 76] for i in range(0, len(blob), 76))
    if rng.random() < 0.3:
        blob = "data:image/png;base64," + blob
    return blob


def _repeated_lines(rng: random.Random) -> str:
    pool = [_fill(rng, rng.choice(_TEMPLATES)) for _ in range(rng.randint(1, 3))]
    pool += rng.sample(
        (
            "Click here to subscribe to our newsletter!",
            "Add to cart",
            "Read more",
            "Share this article on Facebook",
            "Loading...",
            "Posted by admin",
        ),
        2,
    )
    n = rng.randint(20, 120)
    return "\n".join(rng.choice(pool[: rng.randint(1, len(pool))]) for _ in range(n))


JUNK_KINDS: dict[str, Callable[[random.Random], str]] = {
    "keyword_spam": _keyword_spam,
    "boilerplate_menu": _boilerplate_menu,
    "number_table": _number_table,
    "base64_blob": _base64_blob,
    "repeated_lines": _repeated_lines,
}


def junk(kind: str, rng: random.Random) -> str:
    return JUNK_KINDS[kind](rng)


def wrapped_prose(rng: random.Random) -> str:
    """Prose hard-wrapped at 50-90 columns (e-mail, plain-text books): few lines end a sentence."""
    text = template_prose(rng) if rng.random() < 0.5 else docs_prose(rng)
    width = rng.randint(50, 90)
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split(" "):
            if line and len(line) + 1 + len(word) > width:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        lines.append(line)
    return "\n".join(lines)


def long_prose(rng: random.Random) -> str:
    """30-300 consecutive documentation paragraphs (1,000-13,000 words)."""
    paragraphs = docs_paragraphs()
    k = rng.randint(30, 300)
    start = rng.randrange(len(paragraphs) - k)
    return "\n".join(paragraphs[start : start + k])


PROSE_KINDS: dict[str, tuple[Callable[[random.Random], str], float]] = {
    "prose_docs": (docs_prose, 0.40),
    "prose_template": (template_prose, 0.40),
    "prose_wrapped": (wrapped_prose, 0.15),
    "prose_long": (long_prose, 0.05),
}


def calibration_corpus(
    n_prose: int = 2000, n_junk_each: int = 200, seed: int = 7
) -> list[tuple[str, str]]:
    """[(label, text)]: ``n_prose`` prose documents of the PROSE_KINDS in their shares, then
    ``n_junk_each`` of every junk kind."""
    rng = random.Random(seed)
    out = []
    for kind, (make, share) in PROSE_KINDS.items():
        out.extend((kind, make(rng)) for _ in range(round(n_prose * share)))
    for kind, make in JUNK_KINDS.items():
        out.extend((kind, make(rng)) for _ in range(n_junk_each))
    return out


# -- the varied mix for the datatrove comparison ----------------------------------------------


def _code(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randint(5, 40)):
        indent = "    " * rng.randint(0, 3)
        name = "".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9)))
        lines.append(
            rng.choice(
                (
                    f"{indent}def {name}(x, y):",
                    f"{indent}if ({name} > {rng.randint(0, 99)}) {{",
                    f"{indent}return {name} + 1;",
                    f"{indent}}}",
                    f"{indent}for (int i = 0; i < {name}.size(); ++i) {{",
                    f"{indent}# {name} is computed below",
                    f"{indent}const {name} = require('{name}');",
                    f'{indent}print(f"{{{name}}}")',
                )
            )
        )
    return "\n".join(lines)


def _bullets(rng: random.Random) -> str:
    bullet = rng.choice(("- ", "• ", "* ", "1. ", "-", "  - "))
    items = [_fill(rng, rng.choice(_TEMPLATES)) for _ in range(rng.randint(3, 25))]
    if rng.random() < 0.5:
        items = [" ".join(i.split()[: rng.randint(2, 6)]) for i in items]
    return "\n".join(bullet + item for item in items)


def _cookie_notice(rng: random.Random) -> str:
    notice = rng.choice(
        (
            "This website uses cookies to improve your experience.",
            "By continuing you agree to our use of cookies and our Privacy Policy.",
            "Please enable JavaScript in your browser to view this page.",
            "Read our Terms of Use and Cookie Policy before you continue.",
            "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.",
        )
    )
    body = template_prose(rng).split("\n")
    body.insert(rng.randint(0, len(body)), notice)
    return "\n".join(body)


def _short_lines(rng: random.Random) -> str:
    return "\n".join(
        " ".join(rng.choice(_NOUNS + _ADJS) for _ in range(rng.randint(1, 4)))
        + rng.choice(("", "", ".", ":", "..."))
        for _ in range(rng.randint(5, 60))
    )


def _unicode_mix(rng: random.Random) -> str:
    pieces = (
        "Привет, как дела? Всё хорошо.",
        "これは日本語の文です。",
        "中文文本测试\uff0c没有空格。",
        "Ünïcödé çhäràctérs everywhere — naïve café.",
        "😀🎉👍 emoji party 🚀✨",
        "العربية نص قصير.",
        "Ελληνικά κείμενα εδώ.",
        "\u00a0non\u2011breaking\u2009spaces\u3000",
        "mixed\ttabs\rand\r\ncarriage\x0breturns\x0c",
        "zero\u200bwidth\ufeffchars",
        "\ufffd\ufffd broken \ufffd",
        "…ellipsis… and more…",
        "#hashtag #another #third",
    )
    return rng.choice(("\n", " ", "\n\n")).join(
        rng.choice(pieces) for _ in range(rng.randint(2, 30))
    )


def _perturbed_prose(rng: random.Random) -> str:
    """Prose pushed towards one rule's threshold (or several), at a random strength."""
    base = template_prose(rng) if rng.random() < 0.6 else docs_prose(rng)
    lines = base.split("\n")
    strength = rng.random()
    kind = rng.randrange(10)
    if kind == 0:  # duplicated lines / paragraphs
        for _ in range(int(strength * len(lines)) + 1):
            lines.insert(rng.randint(0, len(lines)), rng.choice(lines))
    elif kind == 1:  # bullets
        lines = [("- " if rng.random() < strength * 1.2 else "") + line for line in lines]
    elif kind == 2:  # trailing ellipses
        lines = [line + ("..." if rng.random() < strength else "") for line in lines]
    elif kind == 3:  # hashtags
        words = " ".join(lines).split(" ")
        words = [("#" + w if rng.random() < strength * 0.3 else w) for w in words]
        lines = [" ".join(words)]
    elif kind == 4:  # short lines without punctuation
        lines += [rng.choice(_MENU_ITEMS) for _ in range(int(strength * 40))]
    elif kind == 5:  # drop terminal punctuation
        lines = [line.rstrip(".!?") if rng.random() < strength else line for line in lines]
    elif kind == 6:  # truncate (short documents)
        text = " ".join(lines).split(" ")
        lines = [" ".join(text[: max(1, int(strength * 80))])]
    elif kind == 7:  # repeated phrases inside lines
        phrase = " ".join(rng.choice(lines).split(" ")[:5])
        lines = [line + (" " + phrase) * int(strength * 6) for line in lines]
    elif kind == 8:  # hard wraps
        width = rng.randint(25, 90)
        text = " ".join(lines)
        lines = [text[i : i + width] for i in range(0, len(text), width)]
    else:  # citations, braces, javascript
        lines = [
            line + rng.choice(("", " [1]", " [edit]", " [citation needed]", " {x}", " JavaScript."))
            if rng.random() < strength
            else line
            for line in lines
        ]
    return "\n".join(lines)


_VARIED: tuple[tuple[str, Callable[[random.Random], str], float], ...] = (
    ("prose_docs", docs_prose, 0.14),
    ("prose_template", template_prose, 0.14),
    ("perturbed_prose", _perturbed_prose, 0.36),
    ("keyword_spam", _keyword_spam, 0.04),
    ("boilerplate_menu", _boilerplate_menu, 0.04),
    ("number_table", _number_table, 0.04),
    ("base64_blob", _base64_blob, 0.03),
    ("repeated_lines", _repeated_lines, 0.04),
    ("code", _code, 0.04),
    ("bullets", _bullets, 0.04),
    ("cookie_notice", _cookie_notice, 0.04),
    ("short_lines", _short_lines, 0.03),
    ("unicode_mix", _unicode_mix, 0.02),
)


def varied_corpus(n: int = 3000, seed: int = 11) -> list[tuple[str, str]]:
    """[(kind, text)]: ``n`` documents drawn from every generator above, plus edge cases."""
    rng = random.Random(seed)
    kinds = [k for k, _, _ in _VARIED]
    makers = {k: f for k, f, _ in _VARIED}
    weights = [w for _, _, w in _VARIED]
    out = [
        ("edge", text)
        for text in ("", " ", "\n\n\n", "a", "#", "...", "…", "- - -", "\t\n \n", "x" * 5000)
    ]
    while len(out) < n:
        kind = rng.choices(kinds, weights)[0]
        out.append((kind, makers[kind](rng)))
    return out


if __name__ == "__main__":
    sample_rng = random.Random(0)
    for label, make in (("docs prose", docs_prose), ("template prose", template_prose)):
        print(f"== {label}\n{make(sample_rng)}\n")
    for kind, make in JUNK_KINDS.items():
        print(f"== {kind}\n{make(sample_rng)[:400]}\n")
