"""PIIMasker through the public API: every rule of docs/pii.md, its hard negatives, options,
offsets, bytes input and errors. Runs on the live backend (``LUMINAMOON_FORCE_FALLBACK=1`` for the
fallback); tests/test_pii_parity.py compares the two backends directly."""

from __future__ import annotations

import importlib
import time
from typing import Any

import pytest

import luminamoon.data as lmd

pa: Any
try:
    pa = importlib.import_module("pyarrow")
except ImportError:
    pa = None
needs_arrow = pytest.mark.skipif(pa is None, reason="pyarrow is not installed")

GHP = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD9\n-----END RSA PRIVATE KEY-----"


def masked(text: str | bytes, **options: Any) -> str:
    return lmd.PIIMasker(**options).mask(text)


def spans(text: str | bytes, **options: Any) -> list[tuple[str, str]]:
    return [(s.category, s.text) for s in lmd.PIIMasker(**options).find(text)]


# -- EMAIL -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mail john.doe@example.com now", "mail <EMAIL> now"),
        ("John.Doe+news@mail.example.co.uk.", "<EMAIL>."),
        ("<a_b-c%d@sub-domain.example.org>", "<<EMAIL>>"),
        ("联系zhang.wei@example.cn获取", "联系<EMAIL>获取"),
        # Non-ASCII is never part of a match: only the ASCII tail of an internationalised local
        # part is masked (docs/pii.md, "Limits").
        ("Kontakt: jürgen@example.de", "Kontakt: jü<EMAIL>"),
        ("écrire à marie@exemple.fr, merci", "écrire à <EMAIL>, merci"),
        ("git@github.com:user/repo.git", "<EMAIL>:user/repo.git"),
        ("mailto:Info@Example.COM", "mailto:<EMAIL>"),
    ],
)
def test_email_positive(text: str, expected: str) -> None:
    assert masked(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "user@localhost",
        "icon@2x.png",
        "logo@3x.JPG",
        "lodash@4.17.21",
        "npm i @types/node",
        "@decorator",
        "a..b@example.com",
        ".a@example.com",
        "a.@example.com",
        "a@example.c",
        "a@-example.com",
        "a@example-.com",
        "a@example.c0m",
        "a@" + "x" * 64 + ".com",
        "a" * 65 + "@example.com",
        "a@" + "b." * 130 + "com",
        "user@@example.com",
    ],
)
def test_email_negative(text: str) -> None:
    assert masked(text) == text


def test_email_length_limits() -> None:
    assert masked("a" * 64 + "@example.com") == "<EMAIL>"
    assert masked("a@" + "x" * 63 + ".com") == "<EMAIL>"
    long_domain = ".".join(["x" * 60] * 4) + ".com"  # 248 characters
    assert masked("a@" + long_domain) == "<EMAIL>"


# -- IP_ADDRESS --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("dns 8.8.8.8.", "dns <IP_ADDRESS>."),
        ("http://93.184.216.34:8080/x", "http://<IP_ADDRESS>:8080/x"),
        ("range 1.1.1.1-1.0.0.1", "range <IP_ADDRESS>-<IP_ADDRESS>"),
        ("ip=203.0.114.5/24", "ip=<IP_ADDRESS>/24"),
        ("v6 2001:4860:4860::8888 ok", "v6 <IP_ADDRESS> ok"),
        ("[2606:4700:4700::1111]:53", "[<IP_ADDRESS>]:53"),
        ("full 2a00:1450:4001:0829:0000:0000:0000:200e", "full <IP_ADDRESS>"),
        ("mapped ::ffff:8.8.4.4", "mapped <IP_ADDRESS>"),
        ("embedded 64:ff9b::1.1.1.1", "embedded <IP_ADDRESS>"),
        ("addr:2606:4700::1111.", "addr:<IP_ADDRESS>."),
        ("服务器8.8.8.8在线", "服务器<IP_ADDRESS>在线"),
    ],
)
def test_ip_positive(text: str, expected: str) -> None:
    assert masked(text) == expected


PRIVATE = [
    "10.0.0.1",
    "172.16.5.4",
    "192.168.1.1",
    "127.0.0.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "192.0.2.10",
    "198.51.100.7",
    "203.0.113.99",
    "224.0.0.251",
    "255.255.255.255",
    "::1",
    "fe80::1",
    "fd12:3456:789a::1",
    "ff02::1",
    "2001:db8::1",
    "::ffff:192.168.0.1",
]


@pytest.mark.parametrize("ip", PRIVATE)
def test_private_ips_are_kept_by_default_and_masked_on_request(ip: str) -> None:
    text = f"host {ip} up"
    assert masked(text) == text
    assert masked(text, mask_private_ips=True) == "host <IP_ADDRESS> up"


@pytest.mark.parametrize(
    "text",
    [
        "version 1.2.3.4.5",
        "v1.2.3.4",
        "release-1.2.3.4a",
        "256.1.1.1",
        "1.2.3.256",
        "01.2.3.4",
        "1.2.3",
        "dated 2024.01.15",
        "pi 3.14159",
        "1..2.3.4",
        "time 10:30:45",
        "mac 00:1a:2b:3c:4d:5e",
        "std::vector<int>",
        "A::B",
        "x[1::2]",
        "a :: b",
        "1:2:3:4:5:6:7:8:9",
        "2001:db8::1::2",
        "IPv6:2001:4860:4860::8888",  # glued to a word: see docs/pii.md
    ],
)
def test_ip_negative(text: str) -> None:
    assert masked(text, mask_private_ips=True) == text


# The IPv4 context rules (docs/pii.md): versions and section numbers of real changelogs and manuals.
@pytest.mark.parametrize(
    "text",
    [
        "Standards-Version: 3.9.8.0",
        "  * Upgraded to standards version 2.4.1.0 (no changes).",
        "binutils (2.10.0.27-0.cvs20001011) unstable; urgency=low",
        "dpkg (1.16.0.3) unstable; urgency=medium",
        "revision 1.100.2.12",
        'Revert "Released 3.6.11.1 including missing files"',
        "Update draft release notes to 1.7.8.4",
        "Prepare for 1.8.1.5",
        "(since 1.14.16.6) for similar reasons",
        "Build-Dep on x11proto-core-dev to >= 6.8.99.8-1.",
        "upstream 1.2.3.4~rc1 and 3.0.0.1+dfsg",
        "shadow-4.1.4.2 was",
        "see section 12.3.2.2 and \u00a7 4.2.1.3",
        "12.3.2.2. Title",
        "Intro\n\n7.5.1.3 HMAC-SHA1\n.................\n\nText",
        "Junio C Hamano (2):\n      Git 1.7.4.4\n      XFree86 4.3.99.16  \n",
        "<h3>2014-03-26 (3.8.4.2)</h3>",
        "need zlib >= 1.2.2.3 and libfoo (<< 2.0.0.1)",
        "Update from 1.2.99.2 to 1.3",
        "Work around gcc 2.7.2.3 i386 register handling bug.",
        "Incorporate changes in NMU 1.4.0.32 made by me",
        "It hasn't been used since libxcb 1.1.90.1, released in 2008.\nlibX11 1.4.99.1\n",
        # A quad the document uses as a version elsewhere (rule 11): the header, a "v" tag.
        "pkg (2.7.0.9-2) unstable; urgency=low\n\n  * Moved 2.7.0.9 out of experimental\n",
        "GIT v1.5.1.5\n  Add link to 1.5.1.5 release notes.\n",
        "Start 1.6.0.5 cycle\n...\n      Git 1.6.0.5\n",
    ],
)
def test_ip_version_and_section_contexts(text: str) -> None:
    assert masked(text, mask_private_ips=True) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Received: from example.org (example.org [64.5.53.58])",
            "Received: from example.org (example.org [<IP_ADDRESS>])",
        ),
        (
            "Received: from fepD.post.tele.dk (195.41.46.149) by mail.groupcare.dk",
            "Received: from fepD.post.tele.dk (<IP_ADDRESS>) by mail.groupcare.dk",
        ),
        ("range 1.1.1.1-1.0.0.1 ok", "range <IP_ADDRESS>-<IP_ADDRESS> ok"),
        ("connect to 8.8.8.8.", "connect to <IP_ADDRESS>."),
        ("8.8.8.8 - - [01/Jan/2024] GET /", "<IP_ADDRESS> - - [01/Jan/2024] GET /"),
        ("host.example.com (8.8.8.8)", "host.example.com (<IP_ADDRESS>)"),
        ("converted to 8.8.8.8", "converted to <IP_ADDRESS>"),
        ("nameserver 8.8.8.8\n", "nameserver <IP_ADDRESS>\n"),
        ("  dns 8.8.8.8\n", "  dns <IP_ADDRESS>\n"),
        ("2014-03-26 8.8.8.8", "2014-03-26 <IP_ADDRESS>"),
        ("x = 8.8.8.8", "x = <IP_ADDRESS>"),
        ("traffic from 8.8.8.8 to 1.1.1.1", "traffic from <IP_ADDRESS> to <IP_ADDRESS>"),
        ("glibc 8.8.8.8", "glibc <IP_ADDRESS>"),  # "lib" must start the word
        ("mylib 8.8.8.8", "mylib <IP_ADDRESS>"),
        ("lib 8.8.8.8", "lib <IP_ADDRESS>"),
        # Rule 11 drops only the quads used as versions, and only in their own document.
        (
            "Standards-Version: 3.9.8.0\nresolver at 8.8.8.8, not 3.9.8.0",
            "Standards-Version: 3.9.8.0\nresolver at <IP_ADDRESS>, not 3.9.8.0",
        ),
        ("xv8.8.8.8 and 8.8.8.8", "xv8.8.8.8 and <IP_ADDRESS>"),
    ],
)
def test_ip_context_rules_keep_real_addresses(text: str, expected: str) -> None:
    assert masked(text) == expected


def test_ip_version_rule_is_per_document() -> None:
    m = lmd.PIIMasker()
    docs = ["Standards-Version: 3.9.8.0", "resolver at 3.9.8.0"]
    assert m.mask_batch(docs).texts == ["Standards-Version: 3.9.8.0", "resolver at <IP_ADDRESS>"]
    # A private quad used as a version counts too, whatever mask_private_ips says.
    text = "dpkg (10.1.1.1-1) unstable; urgency=low\n  * fixed 10.1.1.1\n"
    assert lmd.PIIMasker(mask_private_ips=True).mask(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("from <20010430.G5/1BoVz$x@host.example.com>", "from <<EMAIL>>"),
        (
            "Message-ID: <15265.9468.713530.98441@python.org>",
            "Message-ID: <15265.9468.713530.98441@python.org>",
        ),
        (
            "x\ncontent-id: <20592.1022586929.6@example.com>",
            "x\ncontent-id: <20592.1022586929.6@example.com>",
        ),
        (
            "with SMTP id <0.0014F8A2@mail.groupcare.dk>; Mon",
            "with SMTP id <0.0014F8A2@mail.groupcare.dk>; Mon",
        ),
        ("with ESMTP id JAA03225 for <jo@example.org>;", "with ESMTP id JAA03225 for <<EMAIL>>;"),
        ("e$@vmeng.com", "<EMAIL>"),
        ("o'neil@example.ie", "<EMAIL>"),
        ("list-bounces+jo=example.com@lists.example.org", "<EMAIL>"),
        ("a!b#c%d&e*f/g=h?i^j`k{l|m}n~o@example.org", "a!b#c%d&e*f/g=h?<EMAIL>"),
        ("email='jo@example.org'", "email='<EMAIL>'"),
        ("?to=x&cc=jo@example.org", "?to=x&cc=<EMAIL>"),
        ("*jo@example.org*", "*<EMAIL>*"),
        ("{{jo@example.org}}", "{{<EMAIL>}}"),
    ],
)
def test_email_rfc5322_local_parts(text: str, expected: str) -> None:
    assert masked(text) == expected


# -- CREDIT_CARD ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("visa 4111111111111111.", "visa <CREDIT_CARD>."),
        ("4111 1111 1111 1111 exp 12/25", "<CREDIT_CARD> exp 12/25"),
        ("mc 5555-5555-5555-4444", "mc <CREDIT_CARD>"),
        ("amex 3782 822463 10005", "amex <CREDIT_CARD>"),
        ("diners 3056 930902 5904", "diners <CREDIT_CARD>"),
        ("jcb 3530111333300000", "jcb <CREDIT_CARD>"),
        ("discover 6011 1111 1111 1117 cvv 123", "discover <CREDIT_CARD> cvv 123"),
        ("unionpay 6200 0000 0000 0005", "unionpay <CREDIT_CARD>"),
        ("mc2 2223 0031 2200 3222", "mc2 <CREDIT_CARD>"),
        ("visa13 4222222222222", "visa13 <CREDIT_CARD>"),
        ("call 555 4111 1111 1111 1111", "call 555 <CREDIT_CARD>"),
        ("卡号4111111111111111已", "卡号<CREDIT_CARD>已"),
    ],
)
def test_card_positive(text: str, expected: str) -> None:
    assert masked(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "4111 1111 1111 1112",  # Luhn fails
        "1234 5678 1234 5670",  # Luhn ok, no issuer
        "4111-1111 1111-1111",  # mixed separators
        "4111  1111 1111 1111",  # double space
        "411 1111 1111 11111",  # first group not 4 digits
        "4111111111111111111111",  # 22 digits
        "1" * 5000,  # very long digit run
        "x4111111111111111",
        "4111111111111111_",
        "1.4111111111111111",
        "4111111111111111.25",
        "ISBN 978-3-16-148410-0",
        "DM_UUID=mpath-35333333000002328",
        "ISBN 9783161484100",
        "tel +1 (555) 123-4567",
        "+44 20 7946 0958",
        "order #2023-1015-0042-7781",
        "2024-01-15 12:30:45",
        "UUID 123e4567-e89b-12d3-a456-426614174000",
        "sha 3f786850e387550fdab836ed7e6dc881de23001b",
        "IBAN DE89 3704 0044 0532 0130 00",
    ],
)
def test_card_negative(text: str) -> None:
    assert masked(text) == text


# -- API_KEY -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [
        AWS_ID,
        "ASIAY34FZKBOKMUTVV7A",
        GHP,
        "gho_" + "x" * 36,
        "ghu_" + "1" * 36,
        "ghs_" + "Ab" * 18,
        "ghr_" + "Zz" * 20,
        "github_pat_11ABCDEFG0" + "aB3_" * 20,
        "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "xoxp-0000000000-abcdefghij",
        "sk-proj-Ab3dEfGhIjKlMnOpQrStUvWx_yz-0123456789",
        "sk-" + "aB1" * 16,
        "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
        "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
        "rk_live_" + "51H9xYzAbCdEfGhIjKlMnOpQ",
        JWT,
        PEM,
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n-----END OPENSSH PRIVATE KEY-----",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF0=\n-----END PGP PRIVATE KEY BLOCK-----",
        "-----BEGIN PRIVATE KEY-----\\nMIIEvQ\\n-----END PRIVATE KEY-----",
    ],
)
def test_api_keys(key: str) -> None:
    assert masked(f'token: "{key}"') == 'token: "<API_KEY>"'
    assert masked(f"{key}") == "<API_KEY>"


@pytest.mark.parametrize(
    "context",
    [
        "aws_secret_access_key = {}",
        'AWS_SECRET_ACCESS_KEY="{}"',
        '"SecretAccessKey": "{}"',
        "secret_key: {}",
        "aws_secret_key => '{}'",
        "secretKey:={}",
    ],
)
def test_aws_secret_in_assignment_context(context: str) -> None:
    assert masked(context.format(AWS_SECRET)) == context.format("<API_KEY>")


@pytest.mark.parametrize(
    "text",
    [
        f"password = {AWS_SECRET}",  # no secret-key keyword
        f"secret_key = {AWS_SECRET}X",  # 41 characters
        AWS_SECRET,  # no context
        "AKIAIOSFODNN7EXAMPLEX",
        "xAKIAIOSFODNN7EXAMPLE",
        "akiaiosfodnn7example",
        "ghp_short",
        "gh_" + "a" * 36,
        "sk-learn-tutorial-for-beginners-2023",  # no upper case
        "risk-" + "aB1" * 10,
        "desk-AbC123defGhi456jklMno789",
        "xoxo-" + "a" * 20,
        "sk_test_" + "4eC39HqLyjWDarjtT1zdp7dc",
        "pk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.",  # no signature
        "eyJhbGciOiJIUzI1NiJ9.notjson1234.SflKxwRJSMeKKF2QT4fw",
        "-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIE",  # never closed
        "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END EC PRIVATE KEY-----",
        "-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----",
    ],
)
def test_api_key_negative(text: str) -> None:
    assert masked(text) == text


# -- resolution, options, counts -------------------------------------------------------------


def test_overlap_resolution_is_leftmost_longest() -> None:
    assert masked(f"{AWS_ID}@example.com") == "<EMAIL>"
    assert masked(f"{AWS_ID}@example.com", email=False) == "<API_KEY>@example.com"
    # adjacent matches of different categories
    assert masked("8.8.8.8,a@b.co," + GHP) == "<IP_ADDRESS>,<EMAIL>,<API_KEY>"


def test_categories_can_be_switched_off() -> None:
    text = f"a@b.co 8.8.8.8 {GHP} 4111111111111111"
    assert masked(text, email=False) == "a@b.co <IP_ADDRESS> <API_KEY> <CREDIT_CARD>"
    assert masked(text, ip_address=False) == "<EMAIL> 8.8.8.8 <API_KEY> <CREDIT_CARD>"
    assert masked(text, api_key=False) == f"<EMAIL> <IP_ADDRESS> {GHP} <CREDIT_CARD>"
    assert masked(text, credit_card=False) == "<EMAIL> <IP_ADDRESS> <API_KEY> 4111111111111111"
    m = lmd.PIIMasker(email=False, credit_card=False)
    assert m.categories == ("IP_ADDRESS", "API_KEY")


def test_custom_tags() -> None:
    m = lmd.PIIMasker(tags={"EMAIL": "[email]", "CREDIT_CARD": ""})
    assert m.mask("a@b.co 4111111111111111!") == "[email] !"
    assert m.tags == {
        "EMAIL": "[email]",
        "IP_ADDRESS": "<IP_ADDRESS>",
        "API_KEY": "<API_KEY>",
        "CREDIT_CARD": "",
    }
    assert lmd.PIIMasker(tags={"IP_ADDRESS": "🔒"}).mask("8.8.8.8") == "🔒"


def test_output_str_of_every_kind_equals_the_splice() -> None:
    # The native module writes an ASCII str with ASCII tags straight into a new ASCII str and
    # decodes everything else: every combination must equal the splice of find()'s spans.
    texts = [
        "mail a@b.co or 8.8.8.8 now",
        "caf\u00e9 a@b.co",
        "\u4e2d\u6587 8.8.8.8 \U0001f600",
        # one kind each (1-byte Latin-1, 2-byte, 4-byte) with ASCII tags: written run by run
        # with memcpy into a str of the input's kind, matches first, last and in between
        "a@b.co caf\u00e9 8.8.8.8 na\u00efve b@c.io",
        "\u4e2d\u6587 a@b.co \u65e5\u672c 8.8.8.8",
        "\u0416 x@y.org",
        "\U0001f600 a@b.co \U0001f512 8.8.4.4 \U0001f600",
        "a@b.co",
        "no pii here",
    ]
    for tags in ({}, {"EMAIL": "[e]"}, {"EMAIL": "<\u00c9>"}, {"IP_ADDRESS": "\U0001f512"}):
        m = lmd.PIIMasker(tags=tags)
        expected = []
        for text in texts:
            out, at = [], 0
            for span in m.find(text):
                out += [text[at : span.start], m.tags[span.category]]
                at = span.end
            expected.append("".join(out) + text[at:])
        batch = m.mask_batch(texts).texts
        for text, want, got in zip(texts, expected, batch, strict=True):
            assert got == want
            assert m.mask(text) == want
            assert got.isascii() == want.isascii()
            assert hash(got) == hash(want)
            assert (got is text) == (want == text)
            assert got.encode() == want.encode()


def test_large_batch_of_every_kind_equals_mask() -> None:
    # A batch whose new strs add up to more than 256 KiB has their pages mapped in before they
    # are written (prefault_strs in the binding): the outputs must be the same as mask()'s,
    # for every str kind, with documents that change, documents that do not, and bytes.
    pieces = [
        "mail a@b.co or 8.8.8.8 now ",
        "caf\u00e9 x@y.org ",
        "\u4e2d\u6587 1.2.3.4 ",
        "\U0001f600 q@r.io ",
        "plain words only ",
    ]
    texts: list[str | bytes] = []
    for i in range(600):
        text = "".join(pieces[(i + k) % len(pieces)] for k in range(40 + i % 7))
        if i % 9 == 0:
            text = "no pii here " * (60 + i % 5)
        texts.append(text.encode() if i % 11 == 0 else text)
    for tags in ({}, {"EMAIL": "<\u00c9>"}):
        m = lmd.PIIMasker(tags=tags, threads=1)
        batch = m.mask_batch(texts).texts
        assert sum(len(t) for t in batch) > 256 * 1024
        for text, got in zip(texts, batch, strict=True):
            want = m.mask(text)
            assert got == want
            assert hash(got) == hash(want)
            assert got.encode() == want.encode()
            assert (got is text) == (want is text)


def test_counts_and_stats() -> None:
    m = lmd.PIIMasker()
    zero = {"EMAIL": 0, "IP_ADDRESS": 0, "API_KEY": 0, "CREDIT_CARD": 0}
    assert m.counts == zero
    m.mask("a@b.co c@d.org 8.8.8.8")
    assert m.counts == {"EMAIL": 2, "IP_ADDRESS": 1, "API_KEY": 0, "CREDIT_CARD": 0}
    result = m.mask_batch(["x", "4111111111111111", b"e@f.io"])
    assert result.counts == {"EMAIL": 1, "IP_ADDRESS": 0, "API_KEY": 0, "CREDIT_CARD": 1}
    assert m.counts == result.counts
    m.find("a@b.co")  # find is a query: no counts
    assert m.counts == result.counts
    assert m.stats() == {
        "documents": 4,
        "bytes": 22 + 1 + 16 + 6,
        "EMAIL": 3,
        "IP_ADDRESS": 1,
        "API_KEY": 0,
        "CREDIT_CARD": 1,
    }
    m.reset_stats()
    assert m.stats() == {"documents": 0, "bytes": 0, **zero}
    assert m.counts == zero


def test_mask_batch() -> None:
    m = lmd.PIIMasker(threads=2)
    texts = ["no pii here", "mail a@b.co", b"ip 8.8.8.8", bytearray(b"x"), memoryview(b"y")]
    result = m.mask_batch(texts)
    assert result.texts == ["no pii here", "mail <EMAIL>", "ip <IP_ADDRESS>", "x", "y"]
    assert list(result) == result.texts
    assert len(result) == 5
    assert result[1] == "mail <EMAIL>"
    assert result.texts[0] is texts[0]  # unchanged str comes back as is
    assert "MaskResult" in repr(result)
    assert m.mask_batch(()).texts == []
    assert m.mask_batch([]).counts == {"EMAIL": 0, "IP_ADDRESS": 0, "API_KEY": 0, "CREDIT_CARD": 0}
    with pytest.raises(TypeError):
        m.mask_batch("a@b.co")
    with pytest.raises(TypeError):
        m.mask_batch([1])
    with pytest.raises(TypeError):
        m.mask_batch(iter(["a"]))


@needs_arrow
def test_mask_batch_arrow() -> None:
    texts = ["a@b.co", "none", "8.8.8.8", ""]
    m = lmd.PIIMasker()
    expected = ["<EMAIL>", "none", "<IP_ADDRESS>", ""]
    for arrow_type in (pa.string(), pa.large_string(), pa.binary()):
        assert m.mask_batch(pa.array(texts, type=arrow_type)).texts == expected
    assert m.mask_batch(pa.chunked_array([texts[:2], texts[2:]])).texts == expected
    with pytest.raises(ValueError, match="null"):
        m.mask_batch(pa.array(["a", None]))
    with pytest.raises(TypeError):
        m.mask_batch(pa.array([1, 2]))


# -- offsets, bytes, empty ---------------------------------------------------------------------


def test_find_offsets_in_code_points_and_bytes() -> None:
    text = "é€😀 mail a@b.co, ip 8.8.8.8"
    found = lmd.PIIMasker().find(text)
    assert [s.category for s in found] == ["EMAIL", "IP_ADDRESS"]
    data = text.encode()
    for s in found:
        assert text[s.start : s.end] == s.text
        assert data[s.byte_start : s.byte_end].decode() == s.text
    assert found[0].start == 9
    assert found[0].byte_start == 15
    assert found[0] == lmd.PIISpan("EMAIL", 9, 15, 15, 21, "a@b.co")
    assert "PIISpan(category='EMAIL'" in repr(found[0])
    assert len({found[0], found[0]}) == 1


def test_bytes_input_is_decoded_with_replacement() -> None:
    data = b"\xff\xfe caf\xc3\xa9 a@b.co \xe2\x82"
    m = lmd.PIIMasker()
    assert m.mask(data) == "\ufffd\ufffd café <EMAIL> \ufffd"
    (span,) = m.find(data)
    assert (span.start, span.end, span.byte_start, span.byte_end) == (8, 14, 9, 15)
    assert data.decode("utf-8", "replace")[span.start : span.end] == "a@b.co"
    assert data[span.byte_start : span.byte_end] == b"a@b.co"
    # no new character is formed across a removed match
    assert masked(b"\xe2\x82a@b.co\xac", tags={"EMAIL": ""}) == "\ufffd\ufffd"
    assert m.mask(b"plain") == "plain"
    assert m.mask(bytearray(b"\xc3\xa9 8.8.8.8")) == "é <IP_ADDRESS>"


def test_empty_and_pii_at_edges() -> None:
    m = lmd.PIIMasker()
    assert m.mask("") == ""
    assert m.find("") == []
    assert m.mask(b"") == ""
    assert m.mask("a@b.co") == "<EMAIL>"
    assert m.mask("8.8.8.8 a@b.co") == "<IP_ADDRESS> <EMAIL>"
    assert m.mask(GHP + "\n" + "4111111111111111") == "<API_KEY>\n<CREDIT_CARD>"


def test_bad_text_types() -> None:
    m = lmd.PIIMasker()
    with pytest.raises(TypeError):
        m.mask(12)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        m.find(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="surrogate"):
        m.mask("lone \ud800 surrogate")


# -- options and errors --------------------------------------------------------------------------


def test_defaults_and_repr() -> None:
    m = lmd.PIIMasker()
    assert m.categories == ("EMAIL", "IP_ADDRESS", "API_KEY", "CREDIT_CARD")
    assert m.mask_private_ips is False
    assert m.threads == 0
    assert repr(m).startswith("PIIMasker(categories=(")


def test_option_typos_suggest() -> None:
    with pytest.raises(lmd.ConfigError, match="did you mean 'mask_private_ips'"):
        lmd.PIIMasker(mask_privat_ips=True)
    with pytest.raises(lmd.ConfigError, match="did you mean 'credit_card'"):
        lmd.PIIMasker(creditcard=False)
    with pytest.raises(lmd.ConfigError, match="valid options"):
        lmd.PIIMasker(zzzzzzzzzzzz=1)


def test_tag_errors() -> None:
    with pytest.raises(lmd.ConfigError, match="did you mean 'EMAIL'"):
        lmd.PIIMasker(tags={"email": "x"})
    with pytest.raises(lmd.ConfigError, match="did you mean 'API_KEY'"):
        lmd.PIIMasker(tags={"API_KEYS": "x"})
    with pytest.raises(lmd.ConfigError, match="valid categories"):
        lmd.PIIMasker(tags={"PHONE": "x"})
    with pytest.raises(TypeError):
        lmd.PIIMasker(tags={"EMAIL": 1})  # type: ignore[dict-item]
    with pytest.raises(TypeError):
        lmd.PIIMasker(tags=[("EMAIL", "x")])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="surrogate"):
        lmd.PIIMasker(tags={"EMAIL": "\ud800"})


def test_option_types() -> None:
    with pytest.raises(TypeError):
        lmd.PIIMasker(email=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        lmd.PIIMasker(mask_private_ips="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="threads"):
        lmd.PIIMasker(threads=-1)
    with pytest.raises(ValueError, match="threads"):
        lmd.PIIMasker(threads=True)
    with pytest.raises(TypeError):
        lmd.PIIMasker(True)  # type: ignore[misc]


# -- pathological inputs stay linear -----------------------------------------------------------

PATHOLOGICAL = {
    "digits": "1" * 200_000,
    "digit groups": "1111 " * 40_000,
    "dotted": "1." * 100_000,
    "at signs": "a@" * 100_000,
    "local run": "a" * 200_000 + "@example.com",
    "domain run": "x@" + "a." * 100_000,
    "colons": ":" * 200_000,
    "hex colons": "a:" * 100_000,
    "jwt prefixes": "eyJ" * 60_000,
    "jwt run": "eyJ" + "a" * 200_000,
    "pem headers": "-----BEGIN RSA PRIVATE KEY-----" * 6_000,
    "assignments": ("secret_key = " + "A" * 40 + " ") * 3_000,
    "cards": "4111 1111 1111 1111 " * 10_000,
    "base64": "A" * 200_000,
}


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_pathological_inputs_are_fast(name: str) -> None:
    text = PATHOLOGICAL[name]
    m = lmd.PIIMasker(mask_private_ips=True)
    start = time.perf_counter()
    m.mask(text)
    m.find(text)
    # ~200 KB each; a backtracking regex would take minutes. Generous for a loaded machine.
    assert time.perf_counter() - start < 5.0
