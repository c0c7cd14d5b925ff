"""A demo corpus that looks like a web crawl: the input of the README's first command.

``write_demo_corpus(directory)`` writes JSONL shards of ``{"id", "url", "text"}`` records with
everything a curation run has to deal with, planted in fixed proportions (``KIND_SHARES``):
varied English prose (news, encyclopedia, how-to, reviews, forum posts), code with indentation,
prose in eleven other languages and scripts, exact duplicates, near-duplicates (a few words
changed, breadcrumb headers, share/copyright footers), PII (e-mail addresses, public IPv4
addresses, API-key-shaped strings, Luhn-valid card numbers), junk (keyword spam, navigation
menus, number tables, base64 blobs, repeated lines) and a few malformed records (truncated
JSON, an HTML line, a missing or null ``text``, invalid UTF-8).

Everything is generated here from word lists and sentence templates written for this module
(no downloads, no third-party text); the foreign-language sentences were written for it too.
The output is a pure function of ``(documents, shards, seed, compression)``: the same bytes on
every machine and Python version (``random.Random`` with an integer seed is stable, gzip is
written with ``mtime=0``). ``demo_documents`` returns the same records with their labels, for
tests and benchmarks; the shards themselves carry no labels, like a real crawl.
"""

# The sentences in Cyrillic and Greek script are real text in those languages, not look-alikes:
# ruff: noqa: RUF001

from __future__ import annotations

import base64
import gzip
import itertools
import json
import os
import random
import re
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "JUNK_KINDS",
    "KIND_SHARES",
    "MALFORMED_KINDS",
    "DemoDocument",
    "demo_documents",
    "jaccard",
    "kind_counts",
    "write_demo_corpus",
]

KIND_SHARES: dict[str, float] = {
    "prose": 0.40,
    "code": 0.06,
    "multilingual": 0.06,
    "pii": 0.08,
    "junk": 0.14,
    "exact_duplicate": 0.12,
    "near_duplicate": 0.12,
    "malformed": 0.02,
}
"""Share of the records of each kind. Every kind but ``prose`` gets ``floor(share * n)``
records; ``prose`` gets the rest (``kind_counts``)."""

JUNK_KINDS: tuple[str, ...] = (
    "keyword_spam",
    "menu",
    "number_table",
    "base64",
    "repeated_lines",
)
MALFORMED_KINDS: tuple[str, ...] = (
    "truncated_json",
    "html_line",
    "missing_text",
    "null_text",
    "invalid_utf8",
)
_COMPRESSIONS = (None, "gz", "zst")


@dataclass(frozen=True)
class DemoDocument:
    """One record of the corpus and what was planted in it.

    ``kind`` is a key of ``KIND_SHARES``; ``detail`` the junk kind, malformed kind, code
    language, language name, prose genre or near-duplicate edits; ``source`` the index of the
    record a duplicate copies; ``pii`` the PII categories planted (PIIMasker names). ``line`` is
    the record's exact JSONL line (bytes, without the newline); ``text`` is ``None`` for
    malformed records.
    """

    index: int
    kind: str
    detail: str
    id: str
    url: str
    text: str | None
    line: bytes
    source: int | None = None
    pii: tuple[str, ...] = field(default=())


def kind_counts(documents: int) -> dict[str, int]:
    """How many records of each kind a corpus of ``documents`` records has."""
    counts = {kind: int(share * documents) for kind, share in KIND_SHARES.items()}
    counts["prose"] = documents - sum(v for k, v in counts.items() if k != "prose")
    return counts


# -- vocabulary ---------------------------------------------------------------------------------

_FIRST = (
    "Maria James Aisha Tom Sofia Daniel Hannah Ravi Elena Lucas Grace Noah Yuki Omar Clara "
    "Peter Amara Leo Ingrid Mateo Priya Samuel Chloe Tariq Nina Felix Rosa Victor Alice Kofi"
).split()
_LAST = (
    "Lopez Chen Bello Brien Rossi Kim Weber Patel Petrova Martin Mensah Smith Tanaka Haddad "
    "Jensen Novak Okafor Dubois Larsen Silva Iyer Adeyemi Fischer Moreau Khan Costa Walsh Berg"
).split()
_PLACES = (
    "Lisbon",
    "the old harbour",
    "northern Italy",
    "the river valley",
    "Nairobi",
    "Toronto",
    "the coastal towns",
    "Melbourne",
    "rural Ohio",
    "the mountain villages",
    "Rotterdam",
    "the eastern suburbs",
    "Valparaiso",
    "the lake district",
    "Accra",
    "Osaka",
    "the island",
    "Krakow",
    "the market square",
    "Wellington",
)
_ORGS = (
    "the city council",
    "a local charity",
    "the research team",
    "the regional water board",
    "the museum",
    "the school board",
    "a cooperative bank",
    "the county hospital",
    "the football club",
    "the public library",
    "the transport authority",
    "a group of volunteers",
    "the university",
    "the port authority",
)
_NOUNS = (
    "bridge report garden market festival station policy budget library survey harvest "
    "election building network exhibition factory storm treaty concert experiment road forest "
    "ceremony engine novel painting school village season contract schedule collection debate "
    "tunnel orchard clinic archive ferry stadium theatre reservoir playground bakery"
).split()
_ADJS = (
    "new old small large local quiet busy popular difficult modern historic annual public "
    "private careful early late ambitious unusual remarkable practical brief detailed generous "
    "narrow bright fragile costly familiar crowded"
).split()
_VPAST = (
    "opened reviewed finished announced described visited rebuilt planned delayed approved "
    "studied celebrated repaired funded launched changed explained organised measured "
    "questioned protected expanded restored cancelled inspected"
).split()
_VERBS = (
    "open review finish describe visit rebuild plan approve study repair fund launch change "
    "explain improve protect expand restore inspect replace"
).split()
_ADVS = (
    "quickly slowly carefully recently finally quietly openly largely mostly rarely often "
    "eventually suddenly gradually briefly"
).split()
_MONTHS = (
    "January February March April May June July August September October November December"
).split()
_SPECIES = (
    "heron beetle fern orchid salamander lichen kestrel moth otter sedge newt warbler".split()
)
_REGIONS = (
    "temperate forests",
    "coastal wetlands",
    "alpine meadows",
    "river deltas",
    "dry grasslands",
    "tropical islands",
    "northern bogs",
)
_FIELDS = ("botany", "geology", "economics", "architecture", "linguistics", "astronomy")
_PRODUCTS = (
    "kettle",
    "backpack",
    "bicycle lamp",
    "coffee grinder",
    "desk chair",
    "rain jacket",
    "e-reader",
    "blender",
    "hiking boots",
    "headphones",
    "tent",
    "toaster",
)
_TASKS = (
    "repot a houseplant",
    "patch a bicycle tyre",
    "bake sourdough bread",
    "paint a wooden fence",
    "set up a home network",
    "clean a cast iron pan",
    "plan a walking holiday",
    "fix a dripping tap",
    "start a vegetable garden",
    "back up a laptop",
)
_TOOLS = (
    "a soft brush",
    "a bucket of warm water",
    "a pair of gloves",
    "a sharp knife",
    "an old towel",
    "a screwdriver",
    "a notebook",
    "some fine sandpaper",
    "a measuring jug",
)

_PARTS = (
    "cable hinge battery lid switch strap screen zipper handle charger button filter wheel "
    "clasp fan"
).split()
_DURATIONS = (
    "a few minutes",
    "ten minutes",
    "half an hour",
    "two days",
    "a week",
    "three weeks",
    "a month",
    "two years",
)
_PEOPLE = ("a friend", "a neighbour", "my brother", "a colleague", "your partner", "the kids")
_ROOMS = ("garage", "kitchen", "garden", "hallway", "workshop", "spare room", "balcony")
_TIMES = (
    "yesterday",
    "this morning",
    "last night",
    "on Sunday",
    "after the update",
    "during the trip",
)

_SLOTS: dict[str, Callable[[random.Random], str]] = {
    "name": lambda r: f"{r.choice(_FIRST)} {r.choice(_LAST)}",
    "first": lambda r: r.choice(_FIRST),
    "place": lambda r: r.choice(_PLACES),
    "org": lambda r: r.choice(_ORGS),
    "noun": lambda r: r.choice(_NOUNS),
    "noun2": lambda r: r.choice(_NOUNS),
    "adj": lambda r: r.choice(_ADJS),
    "adj2": lambda r: r.choice(_ADJS),
    "vpast": lambda r: r.choice(_VPAST),
    "verb": lambda r: r.choice(_VERBS),
    "adv": lambda r: r.choice(_ADVS),
    "month": lambda r: r.choice(_MONTHS),
    "year": lambda r: str(r.randint(1890, 2025)),
    "num": lambda r: str(r.randint(2, 950)),
    "pct": lambda r: f"{r.randint(1, 99)}.{r.randint(0, 9)}%",
    "money": lambda r: r.choice(("$", "€", "£")) + f"{r.randint(1, 99)}.{r.randint(1, 9)}",
    "big": lambda r: f"{r.randint(1, 999):,}{r.choice(('', ',000'))}",
    "species": lambda r: r.choice(_SPECIES),
    "region": lambda r: r.choice(_REGIONS),
    "field": lambda r: r.choice(_FIELDS),
    "product": lambda r: r.choice(_PRODUCTS),
    "task": lambda r: r.choice(_TASKS),
    "tool": lambda r: r.choice(_TOOLS),
    "stars": lambda r: str(r.randint(1, 5)),
    "part": lambda r: r.choice(_PARTS),
    "part2": lambda r: r.choice(_PARTS),
    "duration": lambda r: r.choice(_DURATIONS),
    "person": lambda r: r.choice(_PEOPLE),
    "room": lambda r: r.choice(_ROOMS),
    "time": lambda r: r.choice(_TIMES),
}
_SLOT_RE = re.compile(r"\{([a-z0-9]+)\}")


def _fill(rng: random.Random, template: str) -> str:
    out = _SLOT_RE.sub(lambda m: _SLOTS[m.group(1)](rng), template)
    return out[0].upper() + out[1:]


# -- prose --------------------------------------------------------------------------------------

_GENRES: dict[str, tuple[str, ...]] = {
    "news": (
        "{name} {vpast} the {adj} {noun} in {place} last {month}.",
        "The {noun} was {adv} {vpast} by {org} after months of debate.",
        "According to {org}, about {pct} of residents {vpast} the {noun} in {year}.",
        "It's not the first time {place} has {vpast} a {noun} of this size.",
        '"We didn\'t expect the {noun} to be so {adj}," said {name}.',
        "{first} said the {noun2} would cost {money} million, far more than planned.",
        "Critics say the {noun} is too {adj}, but supporters argue it will {verb} the {noun2}.",
        "Residents of {place} {adv} {vpast} the plan, and many of them stayed to help.",
        "By the end of {month}, {org} had {vpast} {num} new projects across {place}.",
        "Officials estimate that {big} people used the {noun} during its first week.",
        "The board will {verb} the {noun} next week; a decision is expected soon.",
        "{name}, who {vpast} the {noun} for {org}, called it a {adj} success.",
        "Prices rose by {pct} last year, while wages grew more {adv}.",
        "Funding of {money} billion was {vpast} for the {noun} and the {noun2}.",
        "Neither the {noun} nor the {noun2} was ready when the season began.",
    ),
    "encyclopedia": (
        "The {adj} {species} is a species found mainly in {region}.",
        "It was first described in {year} by the naturalist {name}.",
        "Adults are usually smaller than the related {species} and rarely seen in winter.",
        "The {noun} of {place} was built in {year} and {vpast} in {year}.",
        "In {field}, the term refers to a {adj} pattern that appears in many {region}.",
        "Its population declined by {pct} between {year} and {year}, largely because of drainage.",
        "Several {adj} varieties are known, and at least {num} have been recorded in {place}.",
        "The name comes from an old word for a {noun}, which the first settlers used.",
        "Most of what is known about it comes from a survey {vpast} by {org}.",
        "Today the site is managed by {org} and is open to visitors in {month}.",
        "Early accounts describe the {noun} as {adj} and {adj2}, with a long wooden roof.",
        "The {species} feeds on insects and seeds, and it nests close to the water.",
    ),
    "howto": (
        "If you want to {task}, you will need {tool} and about an hour of time.",
        "Start by clearing a space in the {room} where you can work without being disturbed.",
        "Next, take {tool} and check that everything is dry before you begin.",
        "Don't rush this step: most of the {adj} mistakes happen when people skip it.",
        "Once that is done, wait {duration} and look at the result {adv}.",
        "If something goes wrong, it is usually because the first step was done too {adv}.",
        "Many people find it easier to {task} on a weekend morning, when the light is good.",
        "You can also ask {person} to help, which makes the whole job faster.",
        "Keep {tool} nearby, because you will probably need it again.",
        "When you are finished, clean the {room} and put {tool} back where it belongs.",
        "After {duration}, check again and repeat the last step if needed.",
        "That's all there is to it, and the second time will take about {duration}.",
    ),
    "review": (
        "I bought the {product} last {month} and have used it almost every day since.",
        "The first thing I noticed was how {adj} it felt compared to my old one.",
        "Setup took about {num} seconds, which was a pleasant surprise.",
        "It isn't perfect: the {part} is {adj} and the {part2} feels a little stiff.",
        "My partner thinks it was too expensive at {money}, and she may be right.",
        "After {num} days the {product} still works as well as it did on the first day.",
        "Customer support answered my question within {duration}, which is rare these days.",
        "If you need something {adj} and simple, this is a good choice.",
        "I would give it {stars} out of 5 stars, mainly because of the price.",
        "Would I buy it again? Probably yes, but I would wait for a sale in {month}.",
        "The instructions were {adj}, although the pictures of the {part} were rather small.",
        "Overall the {product} does what it promises, and that is more than I can say for most.",
    ),
    "forum": (
        "Has anyone else had problems with the {product} after the last update?",
        "Mine stopped working {time} and I can't figure out why.",
        "I tried replacing the {part}, but that didn't help at all.",
        "Thanks for the replies, {first}, I really appreciate it.",
        "Update: it turns out the problem was a loose {part}, so it was my fault after all.",
        "For what it's worth, the same thing happened to my brother in {place}.",
        "I think the shop in {place} still sells the older model if you ask them.",
        "Honestly I would just return it to the shop in {place} and get your money back.",
        "Did you check whether the warranty is still valid? Mine was for {duration}.",
        "Sorry if this has been asked before, I searched for {duration} but found nothing useful.",
        "Edit: fixed a typo in the title, and added a photo of the {part}.",
        "Good luck with the {product}, {first}, and let us know how it goes!",
    ),
}
_TITLES: dict[str, tuple[str, ...]] = {
    "news": ("{adj} {noun} {vpast} in {place}", "How {place} {vpast} its {noun}"),
    "encyclopedia": ("{species} ({field})", "The {noun} of {place}"),
    "howto": ("How to {task}", "A beginner's guide: how to {task}"),
    "review": ("Review: the {product}", "{stars} stars for this {product}"),
    "forum": ("Problem with my {product}?", "Question about the {product}"),
}


def _prose(rng: random.Random, genre: str) -> str:
    """An optional title, then 2-6 paragraphs of 3-6 sentences of one genre.

    Templates are drawn without replacement, so no sentence pattern appears twice in a document
    (real prose does not repeat itself, and the repetition filters would rightly drop it).
    """
    pool = rng.sample(_GENRES[genre], len(_GENRES[genre]))
    paragraphs: list[str] = []
    if rng.random() < 0.5:
        paragraphs.append(_fill(rng, rng.choice(_TITLES[genre])))
    for _ in range(rng.randint(2, 6)):
        if len(pool) < 3:
            break
        take = min(len(pool), rng.randint(3, 6))
        paragraphs.append(" ".join(_fill(rng, pool.pop()) for _ in range(take)))
    return rng.choice(("\n", "\n\n")).join(paragraphs)


# -- code ---------------------------------------------------------------------------------------

_IDENTS = (
    "user item order record batch config cache token buffer path entry result value count "
    "index total name size offset"
).split()


def _code(rng: random.Random) -> tuple[str, str]:
    language = rng.choice(("python", "javascript", "c", "shell", "yaml"))
    a, b, c = rng.sample(_IDENTS, 3)
    n = rng.randint(2, 64)
    if language == "python":
        body = (
            f"def load_{a}s(path, limit={n}):\n"
            f'    """Read up to {n} {a}s from a file, skipping blank lines."""\n'
            f"    {b}s = []\n"
            f"    with open(path, encoding='utf-8') as handle:\n"
            f"        for line in handle:\n"
            f"            line = line.strip()\n"
            f"            if not line:\n"
            f"                continue\n"
            f"            {b}s.append(line.split(',')[0])\n"
            f"            if len({b}s) >= limit:\n"
            f"                break\n"
            f"    return {b}s\n\n\n"
            f"class {a.capitalize()}{c.capitalize()}:\n"
            f"    def __init__(self, {c}=0):\n"
            f"        self.{c} = {c}\n\n"
            f"    def add(self, amount):\n"
            f"        self.{c} += amount\n"
            f"        return self.{c}\n"
        )
    elif language == "javascript":
        body = (
            f"// Group {a}s by {b} and sum their {c}.\n"
            f"function group{a.capitalize()}s({a}s) {{\n"
            f"  const out = new Map();\n"
            f"  for (const {a} of {a}s) {{\n"
            f"    const key = {a}.{b} ?? 'unknown';\n"
            f"    out.set(key, (out.get(key) || 0) + {a}.{c});\n"
            f"  }}\n"
            f"  return out;\n"
            f"}}\n\n"
            f"fetch('http://127.0.0.1:{8000 + n}/api/{a}s')\n"
            f"  .then((res) => res.json())\n"
            f"  .then((data) => console.log(group{a.capitalize()}s(data)));\n"
        )
    elif language == "c":
        body = (
            f"#include <stdio.h>\n#include <stdlib.h>\n\n"
            f"/* Sum the first {n} {a}s of the {b} table. */\n"
            f"static long sum_{a}s(const int *{b}, size_t {c}) {{\n"
            f"    long total = 0;\n"
            f"    for (size_t i = 0; i < {c} && i < {n}; i++) {{\n"
            f"        if ({b}[i] < 0) {{\n"
            f"            continue;\n"
            f"        }}\n"
            f"        total += {b}[i];\n"
            f"    }}\n"
            f"    return total;\n"
            f"}}\n\n"
            f"int main(void) {{\n"
            f"    int {b}[] = {{{', '.join(str(rng.randint(-9, 99)) for _ in range(6))}}};\n"
            f'    printf("%ld\\n", sum_{a}s({b}, 6));\n'
            f"    return 0;\n"
            f"}}\n"
        )
    elif language == "shell":
        body = (
            f"#!/bin/sh\n# Rotate the {a} logs and keep the last {n}.\n"
            f"set -eu\n"
            f'LOG_DIR="/var/log/{a}"\n'
            f'for f in "$LOG_DIR"/*.log; do\n'
            f'    if [ -s "$f" ]; then\n'
            f'        gzip -9 "$f"\n'
            f"    fi\n"
            f"done\n"
            f'ls -1t "$LOG_DIR"/*.gz | tail -n +{n + 1} | xargs -r rm --\n'
            f"curl -fsS http://192.168.1.{rng.randint(2, 250)}:9100/metrics > /dev/null\n"
        )
    else:
        body = (
            f"# {a} service settings\n"
            f"server:\n"
            f"  host: 127.0.0.1\n"
            f"  port: {8000 + n}\n"
            f"  workers: {rng.randint(1, 16)}\n"
            f"{b}:\n"
            f"  enabled: true\n"
            f"  max_{c}: {n * 100}\n"
            f"  paths:\n"
            f"    - /srv/{a}/data\n"
            f"    - /srv/{a}/archive\n"
            f"logging:\n"
            f"  level: info\n"
        )
    if rng.random() < 0.5:
        intro = (
            f"Here is the {language} snippet I use to handle {a}s. "
            f"It is not pretty, but it has worked for years without problems."
        )
        text = f"{intro}\n\n```{language}\n{body}```\n\nHope this helps someone."
    else:
        text = body
    return language, text


# -- other languages ----------------------------------------------------------------------------

_LANGUAGES: dict[str, tuple[str, ...]] = {
    "german": (
        "Der Markt in der Altstadt ist jeden Samstag geöffnet.",
        "Im Sommer fahren viele Familien an die Küste.",
        "Die neue Brücke wurde nach drei Jahren Bauzeit eröffnet.",
        "Wir haben den ganzen Nachmittag im Garten gearbeitet.",
        "Das Museum zeigt eine Sammlung alter Landkarten.",
        "Die Züge fahren heute wegen des Sturms mit Verspätung.",
        "Meine Großmutter backt jeden Sonntag einen Apfelkuchen.",
    ),
    "french": (
        "La bibliothèque municipale ouvre ses portes à neuf heures.",
        "Nous avons visité le vieux port au coucher du soleil.",
        "Le festival attire chaque année des milliers de visiteurs.",
        "Il pleut depuis ce matin, alors nous restons à la maison.",
        "Les élèves préparent une exposition sur l'histoire de la ville.",
        "Le boulanger du quartier fait le meilleur pain de la région.",
        "Cette route traverse des forêts et des villages très anciens.",
    ),
    "spanish": (
        "El mercado central abre todos los días excepto el domingo.",
        "Mañana vamos a caminar por la orilla del río.",
        "La escuela organizó una feria de ciencias muy concurrida.",
        "Mi hermano trabaja en un taller de bicicletas en el centro.",
        "El pueblo celebra su fiesta mayor a finales de agosto.",
        "Las lluvias de este año han llenado los embalses.",
        "¿Sabes a qué hora sale el último autobús?",
    ),
    "portuguese": (
        "A praia fica a poucos minutos do centro da cidade.",
        "O novo hospital vai abrir no próximo mês.",
        "Comemos peixe grelhado num restaurante perto do porto.",
        "Os alunos aprenderam a plantar árvores no jardim da escola.",
        "A ponte antiga foi restaurada no ano passado.",
        "Ainda não sei se vou viajar nas férias.",
    ),
    "italian": (
        "Il treno per Milano parte tra dieci minuti.",
        "La piazza si riempie di gente la sera d'estate.",
        "Mia zia coltiva pomodori e basilico sul balcone.",
        "Il museo è chiuso il lunedì per manutenzione.",
        "Abbiamo camminato per ore tra le colline.",
        "La biblioteca organizza letture per bambini ogni giovedì.",
    ),
    "dutch": (
        "De fietsenmaker op de hoek is morgen gesloten.",
        "In het voorjaar bloeien de tulpen langs de dijk.",
        "We hebben de hele middag in het park gewandeld.",
        "De gemeente wil een nieuwe brug over de rivier bouwen.",
        "Het regent al de hele week in Rotterdam.",
    ),
    "russian": (
        "Библиотека открыта каждый день с девяти утра.",
        "Летом мы часто ездим на дачу к бабушке.",
        "Новый мост через реку построили за два года.",
        "В субботу на площади проходит ярмарка.",
        "Поезд прибыл в город поздно вечером.",
        "Дети собирали грибы в лесу у озера.",
    ),
    "greek": (
        "Η βιβλιοθήκη ανοίγει κάθε πρωί στις εννέα.",
        "Το καλοκαίρι πηγαίνουμε συχνά στο νησί.",
        "Η παλιά γέφυρα αναστηλώθηκε πέρσι.",
        "Στην πλατεία γίνεται λαϊκή αγορά κάθε Σάββατο.",
        "Τα παιδιά έπαιζαν στην παραλία ως το βράδυ.",
    ),
    "chinese": (
        "图书馆每天早上九点开门。",
        "周末我们常常去河边散步。",
        "这座新桥用了三年时间才建成。",
        "市场上的水果又新鲜又便宜。",
        "今年夏天的雨水比往年多。",
        "学生们正在准备一个关于城市历史的展览。",
    ),
    "japanese": (
        "図書館は毎朝九時に開きます。",
        "週末は家族と公園を散歩しました。",
        "新しい橋は三年かけて完成しました。",
        "駅の近くに小さなパン屋があります。",
        "今年の夏は雨がとても多かったです。",
        "子どもたちは川で魚を釣っていました。",
    ),
    "arabic": (
        "تفتح المكتبة أبوابها كل صباح في الساعة التاسعة.",
        "ذهبنا إلى السوق القديم يوم الجمعة.",
        "تم افتتاح الجسر الجديد بعد ثلاث سنوات من العمل.",
        "يحب الأطفال اللعب في الحديقة بعد المدرسة.",
        "كان الطقس جميلا على شاطئ البحر.",
    ),
    "hindi": (
        "पुस्तकालय हर सुबह नौ बजे खुलता है।",
        "गर्मियों में हम अक्सर पहाड़ों पर जाते हैं।",
        "नया पुल तीन साल में बनकर तैयार हुआ।",
        "शनिवार को बाज़ार में बहुत भीड़ होती है।",
        "बच्चे नदी के किनारे खेल रहे थे।",
    ),
}
_NO_SPACE_LANGUAGES = frozenset(("chinese", "japanese"))


def _multilingual(rng: random.Random) -> tuple[str, str]:
    language = rng.choice(sorted(_LANGUAGES))
    pool = _LANGUAGES[language]
    joiner = "" if language in _NO_SPACE_LANGUAGES else " "
    sentences = rng.sample(pool, rng.randint(3, len(pool)))
    cuts = sorted(rng.sample(range(1, len(sentences)), rng.randint(0, 2)))
    bounds = [0, *cuts, len(sentences)]
    text = "\n\n".join(joiner.join(sentences[a:b]) for a, b in itertools.pairwise(bounds))
    if rng.random() < 0.25:  # a bilingual page: an English sentence in the middle
        text += "\n\n" + _fill(rng, rng.choice(_GENRES["news"]))
    return language, text


# -- PII ----------------------------------------------------------------------------------------

_MAIL_DOMAINS = (
    "mailbox.org",
    "posteo.de",
    "fastmail.com",
    "example-mail.net",
    "gmx.net",
    "outlook.com",
    "uni-example.edu",
    "company.co.uk",
)


def _email(rng: random.Random) -> str:
    first, last = rng.choice(_FIRST).lower(), rng.choice(_LAST).lower()
    local = rng.choice(
        (f"{first}.{last}", f"{first[0]}{last}", f"{first}_{last}{rng.randint(1, 99)}")
    )
    return f"{local}@{rng.choice(_MAIL_DOMAINS)}"


def _public_ipv4(rng: random.Random) -> str:
    # First octets outside every private, reserved, shared, loopback and multicast range, so
    # PIIMasker's default (mask_private_ips=False) masks all of them.
    first = rng.choice((23, 31, 45, 51, 62, 77, 81, 89, 93, 104, 142, 151, 185, 212, 217))
    return f"{first}.{rng.randint(1, 254)}.{rng.randint(0, 254)}.{rng.randint(1, 254)}"


def _token(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


_ALNUM = string.ascii_letters + string.digits


def _api_key(rng: random.Random) -> str:
    shape = rng.randrange(4)
    if shape == 0:
        return "AKIA" + _token(rng, string.ascii_uppercase + string.digits, 16)
    if shape == 1:
        return "ghp_" + _token(rng, _ALNUM, 36)
    if shape == 2:
        # At least one upper-case letter, lower-case letter and digit, as every real key has.
        return "sk-" + "A" + "q" + "7" + _token(rng, _ALNUM, 45)
    return "AIza" + _token(rng, _ALNUM + "_-", 35)


def _luhn_complete(digits: str) -> str:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 0:  # doubled: the check digit will sit to the right of this one
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return digits + str((10 - total % 10) % 10)


def _card(rng: random.Random) -> str:
    issuer = rng.randrange(3)
    if issuer == 0:  # Visa, 16 digits, 4-4-4-4
        number = _luhn_complete("4" + _token(rng, string.digits, 14))
        groups = [number[i : i + 4] for i in range(0, 16, 4)]
    elif issuer == 1:  # Mastercard 51-55, 16 digits
        number = _luhn_complete(f"5{rng.randint(1, 5)}" + _token(rng, string.digits, 13))
        groups = [number[i : i + 4] for i in range(0, 16, 4)]
    else:  # American Express 34/37, 15 digits, 4-6-5
        number = _luhn_complete(rng.choice(("34", "37")) + _token(rng, string.digits, 12))
        groups = [number[:4], number[4:10], number[10:]]
    return rng.choice((" ", "-", "")).join(groups)


_PII_SENTENCES: dict[str, tuple[str, ...]] = {
    "EMAIL": (
        "For questions about the {noun}, write to {EMAIL} and we will reply within two days.",
        "You can reach me at {EMAIL} if you want the full list.",
        "Send your photos to {EMAIL} before the end of {month}.",
    ),
    "IP_ADDRESS": (
        "The requests all came from {IP_ADDRESS}, according to the server logs.",
        "My router shows {IP_ADDRESS} as the public address, is that normal?",
        "We blocked {IP_ADDRESS} after it sent thousands of login attempts.",
    ),
    "API_KEY": (
        "Oops, I pasted my key by mistake: {API_KEY} (already revoked, I hope).",
        "Set the variable like this: export SERVICE_KEY={API_KEY} and restart the app.",
        "The config file had token = {API_KEY} committed in plain text.",
    ),
    "CREDIT_CARD": (
        "Please charge the deposit to my card {CREDIT_CARD}, expiry 09/28.",
        "The customer read out the card number {CREDIT_CARD} over the phone.",
        "Card used for the order: {CREDIT_CARD}.",
    ),
}
_PII_MAKERS: dict[str, Callable[[random.Random], str]] = {
    "EMAIL": _email,
    "IP_ADDRESS": _public_ipv4,
    "API_KEY": _api_key,
    "CREDIT_CARD": _card,
}


def _pii(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    genre = rng.choice(("news", "review", "forum"))
    paragraphs = _prose(rng, genre).split("\n")
    paragraphs = [p for p in paragraphs if p]
    categories = sorted(rng.sample(sorted(_PII_SENTENCES), rng.randint(1, 3)))
    for category in categories:
        template = rng.choice(_PII_SENTENCES[category])
        sentence = _fill(rng, template.replace("{" + category + "}", "\0"))
        sentence = sentence.replace("\0", _PII_MAKERS[category](rng))
        at = rng.randint(1, len(paragraphs))
        paragraphs.insert(at, sentence)
    return "\n".join(paragraphs), tuple(categories)


# -- junk ---------------------------------------------------------------------------------------

_SPAM_WORDS = (
    "cheap best buy online discount shoes sale free shipping price deal top hotel casino loans "
    "watches replica download mp3 seo backlinks bitcoin jobs 2024 outlet coupon"
).split()
_MENU = (
    "Home|About Us|Services|Products|Blog|News|Contact|Careers|FAQ|Login|Register|Cart (0)|"
    "My Account|Shop|Support|Sitemap|Search|Privacy Policy|Terms of Use|Categories|Sports|"
    "Weather|Video|Gallery|Events|Newsletter|Subscribe"
).split("|")


def _junk(rng: random.Random) -> tuple[str, str]:
    kind = rng.choice(JUNK_KINDS)
    if kind == "keyword_spam":
        lines = [
            " ".join(rng.choices(_SPAM_WORDS, k=rng.randint(6, 14)))
            for _ in range(rng.randint(4, 12))
        ]
        text = "\n".join(lines)
    elif kind == "menu":
        items = rng.sample(_MENU, rng.randint(10, len(_MENU)))
        text = rng.choice(("\n", " | ", "\n\n")).join(items)
    elif kind == "number_table":
        cols = rng.randint(3, 7)
        rows = [
            "\t".join(f"{rng.uniform(0, 1000):.2f}" for _ in range(cols))
            for _ in range(rng.randint(8, 30))
        ]
        text = "\n".join(rows)
    elif kind == "base64":
        blob = base64.b64encode(rng.randbytes(rng.randint(300, 1500))).decode("ascii")
        text = "data:image/png;base64," + blob if rng.random() < 0.5 else blob
    else:
        line = _fill(
            rng,
            rng.choice(
                ("Click here to {verb} the {noun}!", "Loading {noun}...", "Page {num} of {num}")
            ),
        )
        text = "\n".join([line] * rng.randint(8, 40))
    return kind, text


# -- duplicates ---------------------------------------------------------------------------------

_HEADERS = (
    "Home › News › {place}\nPosted by admin on {num} {month} {year}",
    "Skip to main content\nMenu",
    "You are here: Home / Articles / {noun}",
)
_FOOTERS = (
    "Share this: Facebook · Twitter · Email\n© {year} The Daily Example. All rights reserved.",
    "Related posts: The {adj} {noun} | The {noun} of {place}",
    "Comments are closed.\nPrivacy Policy | Terms of Use | Contact",
)
_WORD_RE = re.compile(r"\w+")


def _shingles(text: str, k: int = 5) -> set[tuple[str, ...]]:
    words = _WORD_RE.findall(text.lower())
    return {tuple(words[i : i + k]) for i in range(max(1, len(words) - k + 1))}


def jaccard(a: str, b: str) -> float:
    """Jaccard similarity of the lower-cased word 5-shingle sets (the near-duplicate measure)."""
    sa, sb = _shingles(a), _shingles(b)
    return len(sa & sb) / len(sa | sb)


def _near_duplicate(rng: random.Random, source: str) -> tuple[str, str]:
    """A light edit of ``source`` whose word 5-shingle Jaccard to it is at least 0.85."""
    for attempt in range(8):
        edits: list[str] = []
        text = source
        n_edits = rng.randint(1, 3) if attempt < 4 else 1
        for edit in rng.sample(("words", "header", "footer", "number"), n_edits):
            if edit == "words":
                words = text.split(" ")
                for _ in range(rng.randint(1, 3) if attempt < 4 else 1):
                    i = rng.randrange(len(words))
                    if words[i].isalpha():
                        words[i] = rng.choice(_ADJS + _NOUNS)
                text = " ".join(words)
            elif edit == "header":
                text = _fill(rng, rng.choice(_HEADERS)) + "\n" + text
            elif edit == "footer":
                text = text + "\n" + _fill(rng, rng.choice(_FOOTERS))
            else:
                text = re.sub(r"\d+", lambda m: str(int(m.group()) + 1), text, count=1)
            edits.append(edit)
        if text != source and jaccard(text, source) >= 0.85:
            return "+".join(edits), text
    # Long prose always gets here early; a short source takes one changed word at its end.
    words = source.split(" ")
    words[-1] = words[-1] + "s"
    return "words", " ".join(words)


# -- records ------------------------------------------------------------------------------------

_SITES = (
    "www.example-news.com",
    "blog.example.org",
    "forum.example.net",
    "wiki.example.org",
    "shop.example.com",
    "www.example.co.uk",
    "docs.example.dev",
    "example.io",
)


def _id(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"<urn:uuid:{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}>"


def _url(rng: random.Random, text: str | None) -> str:
    words = re.findall(r"[a-z0-9]+", (text or "")[:80].lower())[:6] or ["article"]
    slug = "-".join(words)
    return f"https://{rng.choice(_SITES)}/{rng.randint(2008, 2025)}/{slug}-{rng.randint(1, 99999)}"


def _line(record: dict[str, object]) -> bytes:
    return json.dumps(record, ensure_ascii=False).encode("utf-8")


def _malformed(rng: random.Random, doc_id: str, url: str) -> tuple[str, bytes]:
    kind = rng.choice(MALFORMED_KINDS)
    text = _fill(rng, rng.choice(_GENRES["news"]))
    if kind == "truncated_json":
        full = _line({"id": doc_id, "url": url, "text": text})
        return kind, full[: len(full) // 2]
    if kind == "html_line":
        return kind, f"<html><head><title>{text}</title></head><body>".encode()
    if kind == "missing_text":
        return kind, _line({"id": doc_id, "url": url, "txt": text})
    if kind == "null_text":
        return kind, _line({"id": doc_id, "url": url, "text": None})
    head = _line({"id": doc_id, "url": url, "text": text})
    cut = head.index(b'"text": "') + len(b'"text": "') + 4
    return kind, head[:cut] + b"\xff\xfe" + head[cut:]


def _kind_sequence(rng: random.Random, documents: int) -> list[str]:
    kinds = [kind for kind, n in kind_counts(documents).items() for _ in range(n)]
    rng.shuffle(kinds)
    # A duplicate needs an earlier document to copy: the first record is always prose.
    if kinds:
        first_prose = kinds.index("prose")
        kinds[0], kinds[first_prose] = kinds[first_prose], kinds[0]
    return kinds


def demo_documents(documents: int = 2000, *, seed: int = 0) -> list[DemoDocument]:
    """The records of the demo corpus, in order, with their labels (``write_demo_corpus``
    writes exactly these lines)."""
    if isinstance(documents, bool) or not isinstance(documents, int):
        raise TypeError(f"documents must be an int, got {type(documents).__name__}")
    if documents < 1:
        raise ValueError(f"documents must be >= 1, got {documents}")
    rng = random.Random(seed)
    out: list[DemoDocument] = []
    copyable: list[int] = []  # originals an exact duplicate may copy
    long_prose: list[int] = []  # originals a near-duplicate may edit (record 0 is prose)
    originals: set[str] = set()
    for index, kind in enumerate(_kind_sequence(rng, documents)):
        doc_id = _id(rng)
        text: str | None = None
        for _ in range(100):  # a generated text that happens to repeat one is drawn again
            detail, text, source, pii = _generate(rng, kind, out, copyable, long_prose)
            if kind == "exact_duplicate" or text is None or text not in originals:
                break
        else:
            raise RuntimeError(f"demo corpus: no new {kind} text after 100 draws")
        if kind != "exact_duplicate" and text is not None:
            originals.add(text)
        url = _url(rng, text)
        if kind == "malformed":
            detail, line = _malformed(rng, doc_id, url)
        else:
            line = _line({"id": doc_id, "url": url, "text": text})
        out.append(DemoDocument(index, kind, detail, doc_id, url, text, line, source, pii))
        if kind in ("prose", "code", "multilingual", "pii", "junk"):
            copyable.append(index)
        if kind == "prose":  # (not PII documents: an edit could break a planted number)
            long_prose.append(index)
    return out


def _generate(
    rng: random.Random,
    kind: str,
    out: list[DemoDocument],
    copyable: list[int],
    long_prose: list[int],
) -> tuple[str, str | None, int | None, tuple[str, ...]]:
    """(detail, text, source, pii) of a new record of ``kind``."""
    source: int | None = None
    pii: tuple[str, ...] = ()
    text: str | None
    if kind == "prose":
        detail = rng.choice(sorted(_GENRES))
        text = _prose(rng, detail)
    elif kind == "code":
        detail, text = _code(rng)
    elif kind == "multilingual":
        detail, text = _multilingual(rng)
    elif kind == "pii":
        text, pii = _pii(rng)
        detail = "+".join(pii)
    elif kind == "junk":
        detail, text = _junk(rng)
    elif kind == "exact_duplicate":
        source = rng.choice(copyable)
        text = out[source].text
        detail = out[source].kind
        pii = out[source].pii
    elif kind == "near_duplicate":
        source = rng.choice(long_prose)
        original = out[source].text
        assert original is not None
        detail, text = _near_duplicate(rng, original)
    else:
        text = None
        detail = ""
    return detail, text, source, pii


def write_demo_corpus(
    directory: str | os.PathLike[str],
    *,
    documents: int = 2000,
    shards: int = 4,
    seed: int = 0,
    compression: str | None = None,
) -> list[str]:
    """Writes the demo corpus as ``shards`` JSONL files in ``directory``; returns their paths.

    Shard ``k`` is ``demo-{k:05d}.jsonl`` (``.jsonl.gz`` / ``.jsonl.zst`` with ``compression``
    ``"gz"`` / ``"zst"``; ``"zst"`` needs the ``zstandard`` package) and holds a contiguous
    run of the records, as crawl dumps do. ``documents`` counts records, malformed ones
    included. The same arguments give the same bytes.
    """
    if isinstance(shards, bool) or not isinstance(shards, int):
        raise TypeError(f"shards must be an int, got {type(shards).__name__}")
    if compression not in _COMPRESSIONS:
        raise ValueError(f"compression must be None, 'gz' or 'zst', got {compression!r}")
    docs = demo_documents(documents, seed=seed)
    if not 1 <= shards <= len(docs):
        raise ValueError(f"shards must be in [1, documents={len(docs)}], got {shards}")
    compress: Callable[[bytes], bytes]
    if compression == "zst":
        try:
            import zstandard  # noqa: PLC0415 - optional, only for .zst shards
        except ModuleNotFoundError:
            raise ModuleNotFoundError(
                "write_demo_corpus(compression='zst') needs the 'zstandard' package "
                "(pip install zstandard), or use compression='gz'"
            ) from None
        compress = zstandard.ZstdCompressor(level=3).compress
    elif compression == "gz":

        def compress(data: bytes) -> bytes:
            return gzip.compress(data, compresslevel=6, mtime=0)

    else:

        def compress(data: bytes) -> bytes:
            return data

    out_dir = Path(directory)
    out_dir.mkdir(parents=True, exist_ok=True)
    suffix = ".jsonl" + ("" if compression is None else f".{compression}")
    paths: list[str] = []
    for k in range(shards):
        part: Sequence[DemoDocument] = docs[k * len(docs) // shards : (k + 1) * len(docs) // shards]
        data = b"".join(d.line + b"\n" for d in part)
        path = out_dir / f"demo-{k:05d}{suffix}"
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(compress(data))
        tmp.replace(path)
        paths.append(str(path))
    return paths
