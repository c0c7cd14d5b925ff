"""Labelled PII corpus for tests/test_pii_quality.py, generated deterministically (seeded).

Written for this project from the formats' public definitions, independently of the masker's
code: card numbers get their Luhn digit from the issuer's length and prefix, IPs are "public"
by Python's ``ipaddress`` module, keys follow each vendor's documented shape. Every example is
a text with its gold spans ``(category, start, end)`` in code points. Positives sit in varied
contexts (prose in 14 languages, JSON, YAML, .env, logs, CSV, Markdown, HTML, code); hard
negatives are look-alikes that must *not* be masked: version strings, dates, ISBNs, UUIDs, git
SHAs, order and phone numbers, decimals, private addresses, public keys, placeholders.

Run ``python tests/data/pii/pii_corpus.py`` to print the corpus size and the per-category
precision/recall of the live backend.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import random
import string
from dataclasses import dataclass

CATEGORIES = ("EMAIL", "IP_ADDRESS", "API_KEY", "CREDIT_CARD")


@dataclass(frozen=True)
class Example:
    text: str
    gold: tuple[tuple[str, int, int], ...]  # (category, start, end) in code points
    kind: str  # "positive:<category>" or "negative:<category>"


# -- contexts: one "{}" slot each --------------------------------------------------------------

PROSE = {
    "en": [
        "Please contact {} for more details.",
        "The report was sent from {} yesterday.",
        "You can reach me at {} any time.",
        "Forwarded: {} wrote the following",
        "value is {} (see above)",
    ],
    "de": ["Bitte wenden Sie sich an {} für weitere Informationen.", "Gespeichert unter {} ."],
    "fr": ["Veuillez écrire à {} pour toute question.", "Référence : {} — merci."],
    "es": ["Por favor, escriba a {} para más información.", "Dato registrado: {} ¡gracias!"],
    "pt": ["Entre em contato pelo {} hoje.", "Registro: {}, atualizado."],
    "it": ["Scrivete a {} per ulteriori dettagli.", "Valore: «{}»."],
    "nl": ["Neem contact op via {} voor vragen.", "Gegevens: {} (bijgewerkt)."],
    "ru": ["Пожалуйста, напишите на {} для деталей.", "Значение: «{}», проверено."],
    "zh": ["请联系{}获取更多信息。", "记录：{}，已更新。"],  # noqa: RUF001 (real CJK punctuation)
    "ja": ["詳細は{}までご連絡ください。", "値は「{}」です。"],
    "ko": ["자세한 내용은 {} 로 문의하세요.", "기록: {} 입니다."],
    "ar": ["يرجى التواصل عبر {} لمزيد من المعلومات.", "القيمة: {} تم التحديث."],
    "hi": ["कृपया {} पर संपर्क करें।", "रिकॉर्ड: {} अपडेट किया गया।"],
    "tr": ["Lütfen {} adresine yazın.", "Kayıt: {} güncellendi."],  # noqa: RUF001 (Turkish dotless i)
}
FORMATS = [
    '{{"user": "jdoe", "value": "{}"}}',
    "value: {}\nenabled: true\n",
    "VALUE={}\nDEBUG=0\n",
    "2024-03-01T12:00:00Z INFO request value={} status=200",
    "42,Jane Doe,{},2024-01-01",
    "- **Value**: {}",
    "<td class='v'>{}</td>",
    'const value = "{}";',
    "# {}\n",
    "|{}|",
]
CONTEXTS = [t for ts in PROSE.values() for t in ts] + FORMATS

# -- positives ---------------------------------------------------------------------------------

FIRST = ["john", "maria", "wei", "yuki", "olga", "ahmed", "priya", "lucas", "emma", "jose", "li"]
LAST = ["smith", "garcia", "zhang", "tanaka", "ivanova", "hassan", "sharma", "silva", "müller"]
DOMAINS = [
    "gmail.com",
    "example.org",
    "mail.example.co.uk",
    "uni-heidelberg.de",
    "sub.company.io",
    "yahoo.fr",
    "outlook.com",
    "web.de",
    "empresa.com.br",
    "yandex.ru",
    "qq.com",
    "naver.com",
    "startup.ai",
    "corp-mail.net",
    "EXAMPLE.COM",
    "post.gov.in",
    "mx.nl",
]


def ascii_name(rng: random.Random, names: list[str]) -> str:
    name = rng.choice(names)
    return name.replace("ü", "ue")


def gen_email(rng: random.Random) -> str:
    first, last = ascii_name(rng, FIRST), ascii_name(rng, LAST)
    local = rng.choice(
        [
            f"{first}.{last}",
            f"{first}_{last}",
            f"{first[0]}{last}{rng.randint(1, 99)}",
            f"{first}+news",
            f"{first}.{last}{rng.randint(1970, 2005)}",
            f"{first.capitalize()}.{last.capitalize()}",
            f"{first}-{last}",
            f"info{rng.randint(1, 9)}",
        ]
    )
    return f"{local}@{rng.choice(DOMAINS)}"


def gen_public_ipv4(rng: random.Random) -> str:
    while True:
        address = ipaddress.IPv4Address(rng.getrandbits(32))
        if address.is_global and not address.is_multicast and int(str(address).split(".")[0]) < 224:
            return str(address)


def gen_public_ipv6(rng: random.Random) -> str:
    while True:
        groups = [rng.randint(0x2001, 0x3FFF)] + [rng.getrandbits(16) for _ in range(7)]
        if groups[0] == 0x2001 and groups[1] == 0x0DB8:
            continue
        style = rng.randrange(4)
        if style == 0:  # full, no leading zeros
            return ":".join(f"{g:x}" for g in groups)
        if style == 1:  # full, zero-padded, upper case
            return ":".join(f"{g:04X}" for g in groups)
        if style == 2:  # compressed zero run
            k = rng.randint(1, 5)
            start = rng.randint(1, 7 - k)
            kept = groups[:start] + groups[start + k :]
            head = ":".join(f"{g:x}" for g in kept[:start])
            tail = ":".join(f"{g:x}" for g in kept[start:])
            return f"{head}::{tail}"
        return f"::ffff:{gen_public_ipv4(rng)}"  # IPv4-mapped


def luhn_digit(body: str) -> str:
    total = 0
    for k, ch in enumerate(reversed(body)):
        d = int(ch)
        if k % 2 == 0:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return str((10 - total % 10) % 10)


ISSUERS = [  # (prefix choices, lengths)
    (["4"], [13, 16, 19]),  # Visa
    (["51", "52", "53", "54", "55", "2221", "2500", "2720"], [16]),  # Mastercard
    (["34", "37"], [15]),  # Amex
    (["6011", "644", "649", "65"], [16, 19]),  # Discover
    (["300", "305", "36", "38"], [14]),  # Diners
    (["3528", "3589"], [16]),  # JCB
    (["62"], [16, 19]),  # UnionPay
    (["5018", "6304", "6761"], [16]),  # Maestro
    (["2200", "2204"], [16]),  # Mir
]


def gen_card_digits(rng: random.Random, valid: bool = True) -> str:
    prefixes, lengths = rng.choice(ISSUERS)
    prefix, length = rng.choice(prefixes), rng.choice(lengths)
    body = prefix + "".join(rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    check = luhn_digit(body)
    if not valid:
        check = str((int(check) + rng.randint(1, 9)) % 10)
    return body + check


def format_card(rng: random.Random, digits: str) -> str:
    n = len(digits)
    layouts = {16: [[4, 4, 4, 4]], 15: [[4, 6, 5]], 14: [[4, 6, 4]], 19: [[4, 4, 4, 4, 3]]}
    if n not in layouts or rng.random() < 0.35:
        return digits
    sep = rng.choice([" ", "-"])
    out, pos = [], 0
    for size in layouts[n][0]:
        out.append(digits[pos : pos + size])
        pos += size
    return sep.join(out)


ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"


def rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def mixed(rng: random.Random, alphabet: str, n: int) -> str:
    """n random characters with at least one upper, one lower case letter and one digit."""
    while True:
        s = rand(rng, alphabet, n)
        if all(any(test(c) for c in s) for test in (str.isupper, str.islower, str.isdigit)):
            return s


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def gen_jwt(rng: random.Random) -> str:
    header = {"alg": rng.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"}
    payload = {"sub": str(rng.randint(1, 10**9)), "iat": rng.randint(1_600_000_000, 1_800_000_000)}
    if rng.random() < 0.5:
        payload["name"] = rng.choice(FIRST)
    sig = bytes(rng.getrandbits(8) for _ in range(rng.choice([32, 64, 256])))
    parts = (json.dumps(header).encode(), json.dumps(payload).encode(), sig)
    return ".".join(b64url(part) for part in parts)


def gen_pem(rng: random.Random) -> str:
    label = rng.choice(
        [
            "RSA PRIVATE KEY",
            "PRIVATE KEY",
            "EC PRIVATE KEY",
            "OPENSSH PRIVATE KEY",
            "ENCRYPTED PRIVATE KEY",
            "DSA PRIVATE KEY",
        ]
    )
    body = base64.b64encode(bytes(rng.getrandbits(8) for _ in range(rng.randint(60, 600))))
    lines = [body[i : i + 64].decode() for i in range(0, len(body), 64)]
    newline = "\\n" if rng.random() < 0.2 else "\n"  # JSON-escaped keys occur too
    return f"-----BEGIN {label}-----{newline}{newline.join(lines)}{newline}-----END {label}-----"


def gen_api_key(rng: random.Random) -> str:
    kind = rng.randrange(11)
    if kind == 0:
        return rng.choice(["AKIA", "ASIA"]) + rand(rng, string.ascii_uppercase + "234567", 16)
    if kind == 1:
        return "gh" + rng.choice("pousr") + "_" + rand(rng, ALNUM, 36)
    if kind == 2:
        return f"github_pat_{rand(rng, ALNUM, 22)}_{rand(rng, ALNUM, 59)}"
    if kind == 3:
        return (
            f"xox{rng.choice('bpa')}-{rng.randint(10**9, 10**12)}-{rng.randint(10**9, 10**12)}"
            f"-{rand(rng, ALNUM, 24)}"
        )
    if kind == 4:
        return "sk-" + mixed(rng, ALNUM, 48)
    if kind == 5:
        return "sk-proj-" + mixed(rng, B64URL, rng.randint(40, 120))
    if kind == 6:
        return "AIza" + rand(rng, B64URL, 35)
    if kind == 7:
        return rng.choice(["sk_live_", "rk_live_"]) + rand(rng, ALNUM, rng.choice([24, 99]))
    if kind == 8:
        return gen_jwt(rng)
    if kind == 9:
        return gen_pem(rng)
    return "sk-ant-api03-" + mixed(rng, B64URL, 80)


AWS_SECRET_CONTEXTS = [
    "aws_secret_access_key = {}",
    'AWS_SECRET_ACCESS_KEY="{}"',
    '"SecretAccessKey": "{}"',
    "secret_key: {}",
    "export AWS_SECRET_KEY={}",
    "aws_secret_access_key={}",
]

# -- hard negatives ------------------------------------------------------------------------------

EMAIL_NEGATIVES = [
    "@username",
    "@Override",
    "@media screen",
    "user@localhost",
    "admin@server",
    "root@db01",
    "icon@2x.png",
    "logo@3x.webp",
    "banner@2x.JPG",
    "lodash@4.17.21",
    "react@18.2.0",
    "name [at] example [dot] com",
    "john.doe(at)example.com",
    "a..b@example.com",
    ".john@example.com",
    "john.@example.com",
    "john@example",
    "john@example.c",
    "john@-example.com",
    "john@example-.com",
    "john@@example.com",
    "@example.com",
    "john@123.456.789.0",
    "john@[192.168.1.1]",
    "email@domain.c0m",
    "first last@",
    "npm install @types/node",
    "git commit -m 'fix @mention'",
    "price @ 5 USD",
    "ssh -i key.pem user@10.0.0.5",
    "foo@bar",
    "x@y.z",
]
IP_NEGATIVES = [
    "1.2.3.4.5",
    "v1.2.3.4",
    "version 10.0.19041.1",
    "2023.10.12",
    "12.10.2023",
    "3.14159",
    "256.100.50.25",
    "1.2.3.256",
    "010.001.002.003",
    "01.02.03.04",
    "1.2.3",
    "1..2.3.4",
    "192.168.1.1",
    "10.0.0.5",
    "172.16.254.1",
    "127.0.0.1",
    "0.0.0.0",
    "255.255.255.0",
    "169.254.169.254",
    "100.64.1.2",
    "192.0.2.44",
    "198.51.100.23",
    "203.0.113.7",
    "224.0.0.251",
    "12:30:45",
    "00:1A:2B:3C:4D:5E",
    "std::string",
    "a[1::2]",
    "Foo::Bar",
    "A::B",
    "fe80::1",
    "::1",
    "2001:db8::8a2e:370:7334",
    "fd00::1",
    "ff02::1",
    "::",
    "dead:beef",
    "1.2.3.4a",
    "build-1.2.3.4x",
    "x1.2.3.4",
    "2001:db8:85a3::8a2e:370:7334",
    "::ffff:10.1.2.3",
    "a:b:c",
    "1:2:3:4:5:6:7:8:9",
    "1::2::3",
    "sha256:9f86d081884c7d65",
    "10:30",
    "16:9",
]
KEY_NEGATIVES = [
    "YOUR_API_KEY",
    "sk-xxxxxxxx",
    "<your-token>",
    "ghp_XXXX",
    "AKIA1234567890",
    "AKIAIOSFODNN7EXAMPL",
    "akiaiosfodnn7example",
    "sk-learn-tutorial-for-beginners-2023",
    "task-force-meeting-notes-2024",
    "risk-assessment-2023-final-v2",
    "pk_live_51H9xYzAbCdEfGhIj",
    "pk_test_TYooMQauvdEDq54NiTphI7jx",
    "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG\n-----END CERTIFICATE-----",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA",  # truncated, never closed
    "xoxo, see you soon",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0",  # two segments
    "github.com/user/repo",
    "ghost_protocol",
    "sketch-2024-final",
    "AIza short",
    "aws_access_key_id = AKIA...",
    "xoxb-",
    "sk-",
    "gh_pat_123",
]
CARD_NEGATIVES_FIXED = [
    "978-3-16-148410-0",
    "9783161484100",
    "ISBN 0-306-40615-2",
    "+1 (415) 555-2671",
    "+44 20 7946 0958",
    "+49 30 901820",
    "+86 138 0013 8000",
    "+7 495 123-45-67",
    "0800 123 4567",
    "(555) 123-4567",
    "123e4567-e89b-12d3-a456-426614174000",
    "3f786850e387550fdab836ed7e6dc881de23001b",
    "1700000000000",
    "1699999999999",
    "DE89 3704 0044 0532 0130 00",
    "GB29 NWBK 6016 1331 9268 19",
    "1Z999AA10123456784",
    "1,234,567.89",
    "2024-01-15 12:30:45",
    "4111 1111 1111",
    "4111-1111 1111-1111",
    "4111111111111111111111",
    "12345678901234567890123456789012",
    "3.1415926535897932384",
    "4111111111111111.25",
    "x4111111111111111",
    "4111111111111111_v2",
]


def gen_order_number(rng: random.Random) -> str:
    """13-19 digit numbers without a card issuer prefix (first digit 1, 7, 8, 9 or 0)."""
    digits = rng.choice("17890") + rand(rng, string.digits, rng.randint(12, 18))
    return f"Order #{format_card(rng, digits)}" if rng.random() < 0.5 else digits


def gen_aws_lookalike(rng: random.Random) -> str:
    """A 40-character base64 string outside a secret-key assignment."""
    value = rand(rng, ALNUM + "/+", 40)
    return rng.choice(["password = {}", "token: {}", "{}", "hash={}", "id {}"]).format(value)


# -- assembly ------------------------------------------------------------------------------------


def place(context: str, value: str, category: str | None) -> Example:
    before, after = context.split("{}", 1)
    before = before.replace("{{", "{").replace("}}", "}")
    after = after.replace("{{", "{").replace("}}", "}")
    text = before + value + after
    gold = ((category, len(before), len(before) + len(value)),) if category else ()
    return Example(text, gold, f"positive:{category}" if category else "negative")


def place_aws_secret(rng: random.Random, context: str) -> Example:
    secret = rand(rng, ALNUM + "/+", 40)
    assignment = rng.choice(AWS_SECRET_CONTEXTS)
    before, _ = assignment.split("{}", 1)
    outer = place(context, assignment.format(secret), None)
    start = outer.text.index(before + secret) + len(before)
    return Example(outer.text, (("API_KEY", start, start + 40),), "positive:API_KEY")


def build_corpus(seed: int = 6, per_category: int = 320) -> list[Example]:
    rng = random.Random(seed)
    out: list[Example] = []
    generators = {
        "EMAIL": gen_email,
        "IP_ADDRESS": lambda r: gen_public_ipv4(r) if r.random() < 0.55 else gen_public_ipv6(r),
        "API_KEY": gen_api_key,
        "CREDIT_CARD": lambda r: format_card(r, gen_card_digits(r)),
    }
    for category, generate in generators.items():
        for i in range(per_category):
            context = rng.choice(CONTEXTS)
            if category == "IP_ADDRESS" and ":" in context.split("{}")[1][:1]:
                context = "ip {} ok"
            if category == "API_KEY" and i % 8 == 7:
                out.append(place_aws_secret(rng, context))
                continue
            out.append(place(context, generate(rng), category))
    negatives = {
        "EMAIL": EMAIL_NEGATIVES,
        "IP_ADDRESS": IP_NEGATIVES,
        "API_KEY": KEY_NEGATIVES,
        "CREDIT_CARD": CARD_NEGATIVES_FIXED,
    }
    for category, fixed in negatives.items():
        for i in range(per_category):
            context = rng.choice(CONTEXTS)
            if i < len(fixed) * 3:
                value = fixed[i % len(fixed)]
            elif category == "CREDIT_CARD":
                value = (
                    format_card(rng, gen_card_digits(rng, valid=False))
                    if rng.random() < 0.6
                    else gen_order_number(rng)
                )
            elif category == "API_KEY":
                value = gen_aws_lookalike(rng)
            else:
                value = rng.choice(fixed)
            example = place(context, value, None)
            out.append(Example(example.text, (), f"negative:{category}"))
    # Realistic mixed documents: several categories in one text.
    for _ in range(per_category // 2):
        parts: list[tuple[str, str | None]] = [
            ("Ticket #", None),
            (str(rng.randint(1000, 99999)), None),
            (" from ", None),
            (gen_email(rng), "EMAIL"),
            (" (client ", None),
            (gen_public_ipv4(rng), "IP_ADDRESS"),
            (") paid with ", None),
            (format_card(rng, gen_card_digits(rng)), "CREDIT_CARD"),
            (" on 2024-02-29; config had token ", None),
            (gen_api_key(rng), "API_KEY"),
            (" and build 1.2.3.4.5.", None),
        ]
        text, gold, pos = "", [], 0
        for value, category in parts:
            if category:
                gold.append((category, pos, pos + len(value)))
            text += value
            pos += len(value)
        out.append(Example(text, tuple(gold), "mixed"))
    return out


def evaluate(masker: object, corpus: list[Example]) -> dict[str, dict[str, float]]:
    """Span-exact precision and recall per category: a prediction counts only if category,
    start and end all equal a gold span."""
    tp = dict.fromkeys(CATEGORIES, 0)
    fp = dict.fromkeys(CATEGORIES, 0)
    fn = dict.fromkeys(CATEGORIES, 0)
    for example in corpus:
        predicted = {(s.category, s.start, s.end) for s in masker.find(example.text)}  # type: ignore[attr-defined]
        gold = set(example.gold)
        for category, _, _ in predicted & gold:
            tp[category] += 1
        for category, _, _ in predicted - gold:
            fp[category] += 1
        for category, _, _ in gold - predicted:
            fn[category] += 1
    report = {}
    for c in CATEGORIES:
        precision = tp[c] / (tp[c] + fp[c]) if tp[c] + fp[c] else 1.0
        recall = tp[c] / (tp[c] + fn[c]) if tp[c] + fn[c] else 1.0
        report[c] = {
            "precision": precision,
            "recall": recall,
            "tp": tp[c],
            "fp": fp[c],
            "fn": fn[c],
        }
    return report


def mistakes(masker: object, corpus: list[Example], limit: int = 20) -> list[str]:
    """The first examples where prediction and gold differ, for debugging."""
    lines = []
    for example in corpus:
        predicted = {(s.category, s.start, s.end) for s in masker.find(example.text)}  # type: ignore[attr-defined]
        if predicted != set(example.gold):
            lines.append(
                f"{example.kind}: {example.text!r} gold={example.gold} got={sorted(predicted)}"
            )
            if len(lines) >= limit:
                break
    return lines


if __name__ == "__main__":
    import luminamoon.data as lmd

    corpus = build_corpus()
    kinds: dict[str, int] = {}
    for e in corpus:
        kinds[e.kind] = kinds.get(e.kind, 0) + 1
    print(f"{len(corpus)} examples:", kinds)
    for category, r in evaluate(lmd.PIIMasker(), corpus).items():
        print(f"{category:12s} precision {r['precision']:.4f} recall {r['recall']:.4f}  {r}")
    print("\n".join(mistakes(lmd.PIIMasker(), corpus)))
