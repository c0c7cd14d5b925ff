// PiiMasker: one golden case per rule of docs/pii.md (positives and the hard negatives), offsets,
// invalid UTF-8, batches and statistics. The same rules are checked against the Python fallback
// by tests/test_pii*.py.
#include "luminamoon/data/pii/pii_masker.h"

#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "luminamoon/data/common/error.h"
#include "pii/internal/scanner.h"

namespace luminamoon::data {
namespace {

std::string masked(std::string_view text, PiiMaskerOptions options = {}) {
  return PiiMasker(std::move(options)).mask(text);
}

TEST(PiiValidators, Ipv4) {
  using pii_internal::parse_ipv4;
  EXPECT_EQ(parse_ipv4("8.8.4.4"), 0x08080404u);
  EXPECT_EQ(parse_ipv4("255.255.255.255"), 0xFFFFFFFFu);
  EXPECT_EQ(parse_ipv4("0.0.0.0"), 0u);
  for (std::string_view bad : {"256.1.1.1", "1.2.3", "1.2.3.4.5", "01.2.3.4", "1..2.3", "1.2.3.",
                               "1234.1.1.1", "", "a.b.c.d"}) {
    EXPECT_FALSE(parse_ipv4(bad)) << bad;
  }
}

TEST(PiiValidators, Ipv6) {
  using pii_internal::parse_ipv6;
  for (std::string_view good : {"2001:db8::1", "::1", "fe80::", "1:2:3:4:5:6:7:8", "::ffff:1.2.3.4",
                                "1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:7::", "::2:3:4:5:6:7:8"}) {
    EXPECT_TRUE(parse_ipv6(good)) << good;
  }
  for (std::string_view bad : {"::", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "1::2::3", "12345::",
                               ":1::", "1::2:", "1:2:3:4:5:6:7:8::", "::1.2.3", "1.2.3.4::", "g::1",
                               "10:30:00", "00:1a:2b:3c:4d:5e", "::ffff:01.2.3.4"}) {
    EXPECT_FALSE(parse_ipv6(bad)) << bad;
  }
  EXPECT_EQ((*parse_ipv6("2001:db8::ff00:42:8329"))[15], 0x29);
}

TEST(PiiValidators, PublicRanges) {
  using namespace pii_internal;
  EXPECT_TRUE(ipv4_is_public(*parse_ipv4("8.8.8.8")));
  for (std::string_view a : {"10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "127.0.0.1",
                             "169.254.1.1", "100.64.0.1", "0.1.2.3", "192.0.2.1", "198.51.100.7",
                             "203.0.113.9", "224.0.0.1", "255.255.255.255", "198.18.0.1"}) {
    EXPECT_FALSE(ipv4_is_public(*parse_ipv4(a))) << a;
  }
  EXPECT_TRUE(ipv4_is_public(*parse_ipv4("172.32.0.1")));
  EXPECT_TRUE(ipv6_is_public(*parse_ipv6("2606:4700::1111")));
  EXPECT_TRUE(ipv6_is_public(*parse_ipv6("::ffff:8.8.8.8")));
  for (std::string_view a : {"::1", "fe80::1", "fc00::1", "ff02::1", "2001:db8::1",
                             "::ffff:10.0.0.1", "1::2", "::2", "64:ff9b::a00:1"}) {
    EXPECT_FALSE(ipv6_is_public(*parse_ipv6(a))) << a;
  }
}

TEST(PiiValidators, LuhnAndIssuers) {
  using namespace pii_internal;
  for (std::string_view card : {"4111111111111111", "5555555555554444", "378282246310005",
                                "6011111111111117", "3530111333300000", "30569309025904",
                                "2223003122003222", "6200000000000005", "4222222222222"}) {
    EXPECT_TRUE(luhn_valid(card) && card_issuer_known(card)) << card;
  }
  EXPECT_FALSE(luhn_valid("4111111111111112"));
  EXPECT_FALSE(card_issuer_known("1234567812345670"));  // Luhn-valid, no issuer
  EXPECT_FALSE(card_issuer_known("411111111111111"));   // Visa never has 15 digits
}

TEST(PiiMasker, Emails) {
  EXPECT_EQ(masked("write to John.Doe+news@mail.example.co.uk."), "write to <EMAIL>.");
  EXPECT_EQ(masked("联系zhang.wei@example.cn获取"), "联系<EMAIL>获取");
  for (std::string_view no : {"user@localhost", "icon@2x.png", "pkg@1.2.3", "@handle", "a..b@x.com",
                              ".a@x.com", "a@x.c", "a@-x.com", "a@x-.com", "a@x.c0m"}) {
    EXPECT_EQ(masked(no), no) << no;
  }
  EXPECT_EQ(masked(std::string(65, 'a') + "@x.com"), std::string(65, 'a') + "@x.com");
  EXPECT_EQ(masked(std::string(64, 'a') + "@x.com"), "<EMAIL>");
}

TEST(PiiMasker, IpAddresses) {
  EXPECT_EQ(masked("from 8.8.8.8:53 and 10.0.0.1"), "from <IP_ADDRESS>:53 and 10.0.0.1");
  PiiMaskerOptions all;
  all.mask_private_ips = true;
  EXPECT_EQ(masked("from 8.8.8.8:53 and 10.0.0.1", all), "from <IP_ADDRESS>:53 and <IP_ADDRESS>");
  for (std::string_view no : {"v1.2.3.4", "1.2.3.4.5", "256.1.1.1", "1.2.3.4a", "01.02.03.04",
                              "std::vector", "10:30:45", "a[1::2]", "A::B", "x[::2]"}) {
    EXPECT_EQ(masked(no, all), no) << no;
  }
  EXPECT_EQ(masked("[2001:4860:4860::8888]:443"), "[<IP_ADDRESS>]:443");
  EXPECT_EQ(masked("addr:2606:4700::1111."), "addr:<IP_ADDRESS>.");
  EXPECT_EQ(masked("::ffff:8.8.8.8"), "<IP_ADDRESS>");
}

// docs/pii.md "IPv4 context rules": versions and section numbers on real text are not addresses.
TEST(PiiMasker, Ipv4ContextRules) {
  for (std::string_view no : {
           "Standards-Version: 3.9.8.0",
           "binutils (2.10.0.27-0.cvs20001011) unstable; urgency=low",
           "dpkg (1.16.0.3) unstable; urgency=medium",
           "revision 1.100.2.12",
           "Bump to 1.2.99.3 now",
           "Update draft release notes to 1.7.8.4",
           "(since 1.14.16.6) for similar reasons",
           "upstream 1.2.3.4~rc1 and 3.0.0.1+dfsg",
           "shadow-4.1.4.2 was",
           "see section 12.3.2.2 and \xC2\xA7 4.2.1.3",
           "12.3.2.2. Title",
           "  7.5.1.3 HMAC-SHA1\n.................\n",
           "Junio C Hamano (2):\n      Git 1.7.4.4\n      XFree86 4.3.99.16  \n",
           "<h3>2014-03-26 (3.8.4.2)</h3>",
           "need zlib >= 1.2.2.3 and libfoo (<< 2.0.0.1)",
           "Update from 1.2.99.2 to 1.3",
           "Work around gcc 2.7.2.3 i386 register handling bug.",
           "Incorporate changes in NMU 1.4.0.32 made by me",
           "since libxcb 1.1.90.1, released in 2008.\nlibX11 1.4.99.1\n",
           "pkg (2.7.0.9-2) unstable; urgency=low\n\n  * Moved 2.7.0.9 out of experimental\n",
           "GIT v1.5.1.5\n  Add link to 1.5.1.5 release notes.\n",
       }) {
    EXPECT_EQ(masked(no), no) << no;
  }
  EXPECT_EQ(masked("Received: from mx.example.org (mx.example.org [64.5.53.58])"),
            "Received: from mx.example.org (mx.example.org [<IP_ADDRESS>])");
  EXPECT_EQ(masked("range 1.1.1.1-1.0.0.1 ok"), "range <IP_ADDRESS>-<IP_ADDRESS> ok");
  EXPECT_EQ(masked("connect to 8.8.8.8."), "connect to <IP_ADDRESS>.");
  EXPECT_EQ(masked("8.8.8.8 - - [01/Jan/2024] GET /"), "<IP_ADDRESS> - - [01/Jan/2024] GET /");
  EXPECT_EQ(masked("host.example.com (8.8.8.8)"), "host.example.com (<IP_ADDRESS>)");
  EXPECT_EQ(masked("converted to 8.8.8.8"), "converted to <IP_ADDRESS>");
  EXPECT_EQ(masked("glibc 8.8.8.8"), "glibc <IP_ADDRESS>");
  EXPECT_EQ(masked("Standards-Version: 3.9.8.0\nresolver at 8.8.8.8, not 3.9.8.0"),
            "Standards-Version: 3.9.8.0\nresolver at <IP_ADDRESS>, not 3.9.8.0");
  EXPECT_EQ(masked("xv8.8.8.8 and 8.8.8.8"), "xv8.8.8.8 and <IP_ADDRESS>");
}

TEST(PiiMasker, EmailRfc5322LocalParts) {
  EXPECT_EQ(masked("from <20010430.G5/1BoVz$x@host.example.com>"), "from <<EMAIL>>");
  // Message and queue identifiers have the syntax of an address but name no mailbox.
  for (std::string_view no : {"Message-ID: <15265.9468.713530.98441@python.org>",
                              "x\ncontent-id: <20592.1022586929.6@example.com>",
                              "with SMTP id <0.0014F8A2@mail.groupcare.dk>; Mon"}) {
    EXPECT_EQ(masked(no), no) << no;
  }
  EXPECT_EQ(masked("From: barry@python.org (Barry)"), "From: <EMAIL> (Barry)");
  EXPECT_EQ(masked("with ESMTP id JAA03225 for <jo@example.org>;"),
            "with ESMTP id JAA03225 for <<EMAIL>>;");
  EXPECT_EQ(masked("e$@vmeng.com"), "<EMAIL>");
  EXPECT_EQ(masked("o'neil@example.ie"), "<EMAIL>");
  EXPECT_EQ(masked("list-bounces+jo=example.com@lists.example.org"), "<EMAIL>");
  EXPECT_EQ(masked("VALUE=jo@example.org"), "VALUE=<EMAIL>");
  EXPECT_EQ(masked("email='jo@example.org'"), "email='<EMAIL>'");
  EXPECT_EQ(masked("?to=x&cc=jo@example.org"), "?to=x&cc=<EMAIL>");
  EXPECT_EQ(masked("*jo@example.org*"), "*<EMAIL>*");
  EXPECT_EQ(masked("{{jo@example.org}}"), "{{<EMAIL>}}");
}

TEST(PiiMasker, CreditCards) {
  EXPECT_EQ(masked("card 4111 1111 1111 1111 exp 12/25"), "card <CREDIT_CARD> exp 12/25");
  EXPECT_EQ(masked("amex 3782-822463-10005"), "amex <CREDIT_CARD>");
  EXPECT_EQ(masked("call 555 4111 1111 1111 1111"), "call 555 <CREDIT_CARD>");
  EXPECT_EQ(masked("mc2 2223 0031 2200 3222"), "mc2 <CREDIT_CARD>");
  for (std::string_view no :
       {"4111 1111 1111 1112", "4111-1111 1111-1111", "1234567812345670", "41111111111111111111111",
        "x4111111111111111", "4111111111111111.5", "978-3-16-148410-0", "+1 555 123 4567",
        "DM_UUID=mpath-35333333000002328"}) {
    EXPECT_EQ(masked(no), no) << no;
  }
}

TEST(PiiMasker, ApiKeys) {
  const std::string ghp = "ghp_" + std::string(36, 'a');
  EXPECT_EQ(masked("token=" + ghp + ";"), "token=<API_KEY>;");
  EXPECT_EQ(masked("x" + ghp), "x" + ghp);
  EXPECT_EQ(masked("AKIAIOSFODNN7EXAMPLE"), "<API_KEY>");
  EXPECT_EQ(masked("AKIAIOSFODNN7EXAMPLEX"), "AKIAIOSFODNN7EXAMPLEX");
  EXPECT_EQ(masked("sk-" + std::string(30, 'a')), "sk-" + std::string(30, 'a'));  // not mixed
  EXPECT_EQ(masked("key: sk-Ab1" + std::string(30, 'c')), "key: <API_KEY>");
  EXPECT_EQ(masked("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"),
            "aws_secret_access_key = <API_KEY>\n");
  EXPECT_EQ(masked("password = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
            "password = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY");
  EXPECT_EQ(masked("a -----BEGIN EC PRIVATE KEY-----\nMHcC\n-----END EC PRIVATE KEY----- b"),
            "a <API_KEY> b");
  EXPECT_EQ(masked("-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----"),
            "-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----");
}

TEST(PiiMasker, LeftmostLongestAcrossCategories) {
  const std::string key = "AKIAIOSFODNN7EXAMPLE";
  EXPECT_EQ(masked(key + "@example.com"), "<EMAIL>");
  PiiMaskerOptions no_email;
  no_email.enabled[0] = false;
  EXPECT_EQ(masked(key + "@example.com", no_email), "<API_KEY>@example.com");
}

TEST(PiiMasker, OffsetsInCodePointsAndBytes) {
  PiiMasker m;
  const std::vector<PiiSpan> spans = m.find("é€😀 a@b.co");
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].start, 4u);
  EXPECT_EQ(spans[0].byte_start, 10u);
  EXPECT_EQ(spans[0].end - spans[0].start, 6u);
}

TEST(PiiMasker, InvalidUtf8FollowsCPythonReplace) {
  EXPECT_EQ(utf8_code_points("\xE2\x82"), 1u);
  EXPECT_EQ(utf8_code_points("\xF0\x80\x80"), 3u);
  EXPECT_EQ(utf8_code_points("\xED\xA0\x80"), 3u);
  EXPECT_EQ(utf8_code_points("\xC3\xA9\xFF"), 2u);
  std::string out;
  append_utf8_repaired("a\xE2\x82z\xF4\x90", out);
  EXPECT_EQ(out, "a\xEF\xBF\xBDz\xEF\xBF\xBD\xEF\xBF\xBD");
  PiiMaskerOptions empty_tag;
  empty_tag.tags[0] = "";
  // Masking must not glue the pieces around a match into a new character.
  EXPECT_EQ(masked("\xE2\x82"
                   "a@b.co\xAC",
                   empty_tag),
            "\xEF\xBF\xBD\xEF\xBF\xBD");
  PiiMasker m;
  const std::vector<PiiSpan> spans = m.find("\xFF\xFE a@b.co");
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].start, 3u);
  EXPECT_EQ(spans[0].byte_start, 3u);
}

TEST(PiiMasker, BatchIsIndependentOfThreadsAndCounts) {
  std::vector<std::string> docs;
  for (int i = 0; i < 3000; ++i) {
    docs.push_back(std::string(300, 'x') + " user" + std::to_string(i) + "@example.com " +
                   (i % 3 == 0 ? "8.8.8.8" : "no ip"));
  }
  std::vector<std::string_view> views(docs.begin(), docs.end());
  std::vector<std::string> one, four;
  std::vector<std::uint8_t> changed_one, changed_four;
  PiiMaskerOptions o1, o4;
  o1.threads = 1;
  o4.threads = 4;
  PiiMasker m1(o1), m4(o4);
  const PiiCounts c1 = m1.mask_batch(views, one, changed_one);
  const PiiCounts c4 = m4.mask_batch(views, four, changed_four);
  EXPECT_EQ(one, four);
  EXPECT_EQ(c1, c4);
  EXPECT_EQ(c1[0], 3000u);
  EXPECT_EQ(c1[1], 1000u);
  EXPECT_EQ(m1.stats().documents, 3000u);
  EXPECT_EQ(m1.counts(), c1);
  m1.mask("nothing here");
  EXPECT_EQ(m1.counts(), PiiCounts{});
  EXPECT_EQ(m1.stats().counts[0], 3000u);
  m1.reset_stats();
  EXPECT_EQ(m1.stats().documents, 0u);
}

// find_batch + splice is mask_batch: same changed flags, same text, same counts and statistics,
// for every thread count, with invalid UTF-8 and with and without the caller's validity flags.
TEST(PiiMasker, FindBatchSplicedEqualsMaskBatch) {
  std::vector<std::string> docs = {
      "",
      "no pii here",
      "mail a@b.co and 8.8.8.8, card 4111 1111 1111 1111",
      "\xFF\xFE bad bytes, no match",
      "\xC3 a@b.co \xE2\x82",
      "caf\xC3\xA9 jo@example.org",
      "aws_secret_access_key := \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\""};
  for (int i = 0; i < 1500; ++i) {
    docs.push_back(std::string(600 + static_cast<std::size_t>(i % 97), 'x') + " u" +
                   std::to_string(i) + "@example.com " + (i % 5 == 0 ? "8.8.4.4" : "1.2.3"));
  }
  // ~1 MB: above the 256 KiB a worker needs, so threads = 4 runs the join of the workers' lists
  // wherever the pool has a thread.
  std::vector<std::string_view> views(docs.begin(), docs.end());
  std::vector<std::uint8_t> valid(views.size());
  for (std::size_t i = 0; i < views.size(); ++i) valid[i] = utf8_is_valid(views[i]) ? 1 : 0;
  for (const unsigned threads : {1u, 4u}) {
    for (const bool flags : {false, true}) {
      PiiMaskerOptions o;
      o.threads = threads;
      o.tags[0] = "[\xC3\x89]";
      PiiMasker reference(o), masker(o);
      std::vector<std::string> out;
      std::vector<std::uint8_t> changed;
      const std::span<const std::uint8_t> known =
          flags ? std::span<const std::uint8_t>(valid) : std::span<const std::uint8_t>();
      const PiiCounts want = reference.mask_batch(views, out, changed, known);
      PiiBatchMatches found;
      const PiiCounts got = masker.find_batch(views, found, known);
      EXPECT_EQ(got, want);
      ASSERT_EQ(found.size(), views.size());
      ASSERT_EQ(found.first.size(), views.size() + 1);
      EXPECT_EQ(found.first.back(), found.matches.size());
      std::string spliced;
      for (std::size_t i = 0; i < views.size(); ++i) {
        EXPECT_EQ(found.valid_utf8[i], valid[i]) << i;
        ASSERT_EQ(found.changed(i), changed[i] != 0) << i;
        const std::vector<PiiSpan> spans = masker.find(views[i]);
        ASSERT_EQ(found.of(i).size(), spans.size()) << i;
        for (std::size_t k = 0; k < spans.size(); ++k) {
          EXPECT_EQ(found.of(i)[k],
                    (PiiMatch{spans[k].byte_start, spans[k].byte_end, spans[k].category}));
        }
        if (!changed[i]) continue;
        masker.splice(views[i], found.of(i), found.valid_utf8[i] != 0, spliced);
        EXPECT_EQ(spliced, out[i]) << i;
      }
      EXPECT_EQ(masker.stats().documents, reference.stats().documents);
      EXPECT_EQ(masker.stats().bytes, reference.stats().bytes);
      EXPECT_EQ(masker.stats().counts, reference.stats().counts);
      EXPECT_EQ(masker.counts(), want);
      // find_batch_into leaves the statistics alone.
      masker.find_batch_into(views, found, known);
      EXPECT_EQ(masker.stats().documents, reference.stats().documents);
    }
  }
  PiiMasker m;
  PiiBatchMatches found;
  const std::vector<std::uint8_t> short_flags(2, 1);
  EXPECT_THROW(m.find_batch(views, found, short_flags), InvalidArgument);
}

// The valid-UTF-8 code point count equals the general one, across the SIMD block edges (16
// bytes, and 255 blocks between two lane flushes).
TEST(PiiMasker, CodePointsOfValidUtf8) {
  const std::string_view pieces[] = {"a", "\xC3\xA9", "\xE4\xB8\xAD", "\xF0\x9F\x98\x80", " "};
  std::string text;
  std::uint32_t state = 12345;
  for (std::size_t i = 0; text.size() < 9000; ++i) {
    state = state * 1103515245u + 12345u;
    text += pieces[(state >> 16) % 5];
  }
  for (std::size_t n = 0; n < text.size(); n += (n < 64 ? 1 : 97)) {
    std::size_t end = n;
    while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
    const std::string_view prefix(text.data(), end);
    EXPECT_EQ(utf8_code_points_of_valid(prefix), utf8_code_points(prefix)) << end;
  }
  EXPECT_EQ(utf8_code_points_of_valid(text.substr(0, 4096)),
            utf8_code_points(text.substr(0, 4096)));
}

TEST(PiiMasker, FindBatchOfNothing) {
  PiiMasker m;
  PiiBatchMatches found;
  m.find_batch({}, found);
  EXPECT_EQ(found.size(), 0u);
  EXPECT_EQ(found.first, std::vector<std::size_t>{0});
  EXPECT_TRUE(found.matches.empty());
}

// The verifier shortcuts of issue 15 (packed file-extension TLDs, the message-id line start, the
// AWS key context checked before the value) give the rule's answers at their edges.
TEST(PiiMasker, VerifierShortcutEdges) {
  EXPECT_EQ(masked("icon@2x.PNG a@b.Json c@d.jsx e@f.pngs g@h.io i@j.htmlx"),
            "icon@2x.PNG a@b.Json c@d.jsx <EMAIL> <EMAIL> <EMAIL>");
  for (const std::size_t pad : {0u, 150u, 185u, 186u, 187u, 188u, 250u}) {
    // "Message-ID: <" + padding: the line start is found within 200 bytes of the local part.
    const std::string line = "Message-ID: <" + std::string(pad, 'x') + " id@example.com>";
    const std::string text = "x\n" + line;
    const std::size_t local = text.find("id@");
    const bool id_header = local - 2 <= 200;
    EXPECT_EQ(masked(text) == text, id_header) << pad;
  }
  const std::string key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
  for (const std::string assign : {":", "=", ":=", "=>", " = ", "  :  ", " =>\t"}) {
    EXPECT_EQ(masked("SECRET-KEY" + assign + "'" + key + "'"),
              "SECRET-KEY" + assign + "'<API_KEY>'")
        << assign;
    EXPECT_EQ(masked("secret_keys" + assign + key), "secret_keys" + assign + key) << assign;
  }
  EXPECT_EQ(masked("secret_key" + std::string(17, ' ') + "=" + key),
            "secret_key" + std::string(17, ' ') + "=" + key);
}

TEST(PiiMasker, CustomTagsAndInvalidTag) {
  PiiMaskerOptions o;
  o.tags[1] = "[ip]";
  EXPECT_EQ(masked("8.8.8.8", o), "[ip]");
  o.tags[1] = "\xFF";
  EXPECT_THROW(PiiMasker{o}, InvalidArgument);
}

}  // namespace
}  // namespace luminamoon::data
