// QualityFilter: presets and settings, each rule set on hand-made documents, bad input, and
// thread-count independence. Exact agreement with the Python fallback (and with datatrove) is
// tested from Python: tests/test_quality_parity.py, tests/test_quality_datatrove.py.
#include "luminamoon/data/quality/quality_filter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "luminamoon/data/common/error.h"

namespace luminamoon::data {
namespace {

using Settings = std::vector<std::pair<std::string_view, QualitySetting>>;

QualityFilter make(std::vector<std::string_view> presets, const Settings& settings = {},
                   unsigned threads = 0) {
  return QualityFilter(presets, settings, QualityFilterOptions{threads});
}

std::map<std::string, double> metrics_of(const QualityFilter& f, std::string_view text) {
  std::map<std::string, double> out;
  for (const auto& [name, value] : f.metrics(text)) out.emplace(name, value);
  return out;
}

std::string prose(int sentences) {
  static const char* kSentences[] = {
      "The old bridge over the river was rebuilt in the spring of that year.",
      "Residents of the valley gathered to watch the first train cross it.",
      "According to the council, the work cost far more than anyone had planned.",
      "Still, most people agreed that the town looked better with it restored.",
      "Children ran along the bank while their parents talked about the harvest.",
      "By evening the lamps were lit and the market square had filled with music.",
  };
  std::string out;
  for (int i = 0; i < sentences; ++i) {
    if (i != 0) out += (i % 3 == 0) ? "\n" : " ";
    out += kSentences[i % 6];
  }
  return out;
}

TEST(QualityFilter, UnknownNamesSuggest) {
  try {
    make({"gopher_qualty"});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'gopher_quality'?"), std::string::npos);
  }
  try {
    make({"default"}, {{"max_symbol_ratoi", 0.2}});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'max_symbol_ratio'?"), std::string::npos);
  }
  EXPECT_THROW(make({"default"}, {{"gopher_min_words", std::int64_t{3}}}), ConfigError);
  EXPECT_THROW(make({}), InvalidArgument);
  EXPECT_THROW(make({"default"}, {{"max_symbol_ratio", std::string("'x'")}}), InvalidArgument);
  EXPECT_THROW(make({"default"}, {{"min_words", 2.5}}), InvalidArgument);
  EXPECT_THROW(make({"default"}, {{"ngram_n", std::int64_t{0}}}), InvalidArgument);
  EXPECT_THROW(make({"default"}, {{"ngram_n", std::monostate{}}}), InvalidArgument);
  EXPECT_THROW(make({"c4"}, {{"c4_javascript", std::int64_t{1}}}), InvalidArgument);
  EXPECT_THROW(make({"default"}, {{"max_char_entropy", std::nan("")}}), InvalidArgument);
}

TEST(QualityFilter, SettingsAndRules) {
  const QualityFilter f =
      make({"default", "default", "fineweb"},
           {{"max_char_entropy", std::monostate{}}, {"min_words", std::int64_t{3}}});
  EXPECT_EQ(f.presets(), (std::vector<std::string_view>{"default", "fineweb"}));
  const std::vector<std::string_view> rules = f.rules();
  EXPECT_EQ(rules.front(), "min_words");
  EXPECT_EQ(std::count(rules.begin(), rules.end(), "max_char_entropy"), 0);
  EXPECT_EQ(rules.back(), "fineweb_max_newline_word_ratio");
  EXPECT_EQ(QualityFilter::metric_names().size(), f.metrics("x").size());
  EXPECT_EQ(QualityFilter::preset_defaults().size(), 7u);
}

TEST(QualityFilter, DefaultPresetOnProseAndJunk) {
  const QualityFilter f = make({"default"});
  EXPECT_TRUE(f.is_high_quality(prose(6))) << f.check(prose(6))->rule;
  EXPECT_EQ(f.check(prose(24))->rule, "max_ngram_repetition");  // the same 6 sentences 4 times
  std::string repeated;
  for (int i = 0; i < 40; ++i) repeated += "Click here to subscribe to our newsletter!\n";
  EXPECT_EQ(f.check(repeated)->rule, "max_ngram_repetition");
  std::string table;
  for (int i = 0; i < 40; ++i) table += std::to_string(i * 37 % 1000) + "\t12.5\t-3.25\t88%\n";
  EXPECT_EQ(f.check(table)->rule, "min_words");
  const std::string menu =
      "Home | About Us | Services | Blog | Contact | Login | Register\n"
      "News | Sports | Weather | Video | Gallery | Shop | Careers\n";
  EXPECT_EQ(f.check(menu)->rule, "max_capitalized_word_ratio");
  std::string blob;  // base64 of pseudo-random bytes
  const std::string_view alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::uint64_t state = 0x9E3779B97F4A7C15ULL;
  for (int i = 0; i < 3000; ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    blob += alphabet[state % 64];
  }
  std::string wrapped;
  for (std::size_t i = 0; i < blob.size(); i += 76) wrapped += blob.substr(i, 76) + "\n";
  EXPECT_EQ(f.check(wrapped)->rule, "max_char_entropy");
  EXPECT_GT(metrics_of(f, blob).at("char_entropy"), 5.9);
}

// docs/quality.md "Script-aware rules": real CJK and Cyrillic prose passes, base64 still fails.
TEST(QualityFilter, DefaultPresetIsScriptAware) {
  const QualityFilter f = make({"default"});
  // Japanese and Korean prose with Latin option names: 7+ bits per character.
  std::string ja, ko, ru;
  const char* ja_sentences[] = {
      "このコマンドは、指定されたファイルのパスワード有効期限情報を変更する。",
      "オプション --help を指定すると、使用方法を表示して終了する。",
      "設定ファイルは /etc/login.defs にあり、管理者だけが編集できる。",
      "ユーザーのアカウントが失効した場合、ログインは拒否される。",
      "詳細については、関連するマニュアルページを参照すること。",
      "日付はシステムのタイムゾーンに従って表示され、秒は省略される。"};
  for (const char* sentence : ja_sentences) ja += std::string(sentence) + "\n";
  const char* ko_sentences[] = {"이 명령은 사용자 계정의 비밀번호 만료 정보를 변경합니다.",
                                "NAME 섹션과 SYNOPSIS 섹션은 명령의 형식을 설명합니다.",
                                "관리자는 OPTIONS 목록에서 필요한 옵션을 선택할 수 있습니다.",
                                "자세한 내용은 SEE ALSO 항목의 관련 문서를 참고하십시오.",
                                "설정 파일이 없으면 기본값이 사용되고 경고가 출력됩니다.",
                                "계정이 잠기면 다음 로그인 시도는 거부됩니다."};
  for (const char* sentence : ko_sentences) ko += std::string(sentence) + "\n";
  const char* ru_sentences[] = {
      "Команда chage изменяет количество дней между сменами пароля.",
      "Параметр --lastday задаёт дату последней смены пароля (YYYY-MM-DD).",
      "Файл /etc/shadow содержит информацию о пользователях системы.",
      "Если параметры не указаны, команда работает в интерактивном режиме.",
      "Только суперпользователь может изменять сведения о других учётных записях.",
      "Смотрите также описание формата файла в разделе FILES."};
  for (const char* sentence : ru_sentences) ru += std::string(sentence) + "\n";
  for (const std::string* text : {&ja, &ko, &ru}) {
    const auto m = metrics_of(f, *text);
    EXPECT_TRUE(f.is_high_quality(*text)) << f.check(*text)->rule << " " << *text;
    EXPECT_LE(m.at("adjusted_char_entropy"), m.at("char_entropy"));
  }
  EXPECT_GT(metrics_of(f, ja).at("char_entropy"), 5.5);  // what used to drop it
  // Pure ASCII: no allowance; the caseless share dilutes capitalized words.
  EXPECT_DOUBLE_EQ(metrics_of(f, "abc def")["adjusted_char_entropy"],
                   metrics_of(f, "abc def")["char_entropy"]);
  EXPECT_DOUBLE_EQ(metrics_of(f, "Hello World 世界 中文")["capitalized_word_share"], 2.0 / 4.0);
}

TEST(QualityFilter, EntropyAndRatiosAreExact) {
  const QualityFilter f = make({"default"});
  EXPECT_DOUBLE_EQ(metrics_of(f, "aabb")["char_entropy"], 1.0);
  EXPECT_DOUBLE_EQ(metrics_of(f, "abcd")["char_entropy"], 2.0);
  EXPECT_EQ(metrics_of(f, "aaaa")["char_entropy"], 0.0);
  const auto m = metrics_of(f, "a b a b a b");  // bigrams: ab ba ab ba ab -> 3 of 5 repeat
  EXPECT_DOUBLE_EQ(m.at("ngram_repetition"), 3.0 / 5.0);
  EXPECT_DOUBLE_EQ(metrics_of(f, "ab 12 !?")["symbol_ratio"], 4.0 / 6.0);
  EXPECT_DOUBLE_EQ(metrics_of(f, "Hello World again")["capitalized_word_ratio"], 2.0 / 3.0);
}

TEST(QualityFilter, GopherQuality) {
  const QualityFilter f = make({"gopher_quality"});
  EXPECT_TRUE(f.is_high_quality(prose(8))) << f.check(prose(8))->rule;
  const auto short_doc = f.check("The cat sat on the mat.");
  ASSERT_TRUE(short_doc.has_value());
  EXPECT_EQ(short_doc->rule, "gopher_min_words");
  EXPECT_EQ(short_doc->metric, "gopher_words");
  EXPECT_EQ(short_doc->value, 6.0);
  EXPECT_EQ(short_doc->threshold, 50.0);
  EXPECT_EQ(short_doc->comparison, '<');
  std::string hashes = prose(8);
  for (int i = 0; i < 30; ++i) hashes += " #tag";
  EXPECT_EQ(f.check(hashes)->rule, "gopher_max_hash_ratio");
  std::string bullets;
  for (int i = 0; i < 12; ++i) bullets += "- " + prose(1) + "\n";
  EXPECT_EQ(f.check(bullets)->rule, "gopher_max_bullet_lines_ratio");
  std::string no_stop;
  for (int i = 0; i < 60; ++i) no_stop += "Lorem ipsum dolor sit amet ";
  EXPECT_EQ(f.check(no_stop)->rule, "gopher_min_stop_words");
}

TEST(QualityFilter, GopherRepetition) {
  const QualityFilter f = make({"gopher_repetition"});
  EXPECT_TRUE(f.is_high_quality(prose(6))) << f.check(prose(6))->rule;
  EXPECT_EQ(f.check("")->rule, "gopher_min_chars");
  EXPECT_TRUE(f.is_high_quality("   "));  // as datatrove: not empty, nothing repeats
  std::string lines;
  for (int i = 0; i < 10; ++i) lines += "same line here\n";
  lines += prose(6);
  EXPECT_EQ(f.check(lines)->rule, "gopher_max_dup_line_ratio");
  const auto m = metrics_of(f, "a b a b a b");
  // "a b" occurs 3 times: (1 + 1 + 1) chars * 3 / 11 chars.
  EXPECT_DOUBLE_EQ(m.at("gopher_top_2gram_char_ratio"), 9.0 / 11.0);
}

TEST(QualityFilter, C4DecisionsAndLineRemoval) {
  const QualityFilter doc_level = make({"c4"});
  const QualityFilter lines = make({"c4_lines"});
  const std::string text = "Menu\n" + prose(6) + "\nPlease enable JavaScript in your browser.\n" +
                           "Short one.\nRead our privacy policy for the details of it.";
  EXPECT_TRUE(doc_level.is_high_quality(text));
  const QualityBatchResult r = lines.filter_batch(std::vector<std::string_view>{text});
  ASSERT_TRUE(r.has_texts);
  ASSERT_TRUE(r.texts[0].has_value());
  EXPECT_EQ(r.texts[0]->find("Menu"), std::string::npos);
  EXPECT_EQ(r.texts[0]->find("JavaScript"), std::string::npos);
  EXPECT_EQ(r.texts[0]->find("privacy"), std::string::npos);
  EXPECT_EQ(*r.texts[0], lines.clean_lines(text));
  EXPECT_EQ(doc_level.check(prose(6) + "\nSome code { here } now.")->rule, "c4_curly_bracket");
  EXPECT_EQ(doc_level.check("Lorem ipsum dolor sit amet.\n" + prose(6))->rule, "c4_lorem_ipsum");
  EXPECT_EQ(doc_level.check(prose(2))->rule, "c4_min_sentences");
  const auto cited = metrics_of(doc_level, "This line has a citation at its end. [12]");
  EXPECT_EQ(cited.at("c4_lines_no_terminal_punct"), 1.0);  // the space left behind, as datatrove
}

TEST(QualityFilter, FineWeb) {
  const QualityFilter f = make({"fineweb"});
  EXPECT_TRUE(f.is_high_quality(prose(6))) << f.check(prose(6))->rule;
  EXPECT_EQ(f.check("")->rule, "fineweb_min_lines");
  EXPECT_EQ(f.check(" \n\t\n")->rule, "fineweb_min_lines");
  EXPECT_EQ(f.check("no punctuation here\nnor here at all\n")->rule,
            "fineweb_min_line_punct_ratio");
  const QualityFilter zero_ok = make({"fineweb"}, {{"fineweb_line_punct_exclude_zero", true}});
  EXPECT_NE(zero_ok.check("no punctuation here\nnor here at all\n")->rule,
            "fineweb_min_line_punct_ratio");
}

TEST(QualityFilter, BadInputHasDefinedResults) {
  const QualityFilter all =
      make({"default", "gopher_quality", "gopher_repetition", "c4", "fineweb"});
  const std::string big(50u << 20, 'a');  // a single 50 MB word
  const std::vector<std::string> inputs = {
      "", " \n\t ", std::string("a\0b", 3), "\xFF\xFE\x80", "!!! ??? ...", big};
  for (const std::string& text : inputs) {
    EXPECT_FALSE(all.is_high_quality(text));
    for (const auto& [name, value] : all.metrics(text)) {
      EXPECT_TRUE(std::isfinite(value)) << name;
      EXPECT_GE(value, 0.0) << name;
    }
  }
  const auto empty = metrics_of(all, "");
  EXPECT_EQ(empty.at("char_entropy"), 0.0);
  EXPECT_EQ(empty.at("gopher_mean_word_length"), 0.0);
  EXPECT_EQ(all.check("")->rule, "min_words");
  // Invalid bytes are measured as U+FFFD: three code points here.
  EXPECT_EQ(metrics_of(all, "\xFF\xFE\x80").at("chars"), 3.0);
  EXPECT_EQ(metrics_of(all, "\xFF\xFE\x80").at("symbol_ratio"), 1.0);
}

TEST(QualityFilter, BatchIsIndependentOfThreads) {
  std::vector<std::string> docs;
  for (int i = 0; i < 300; ++i) {
    docs.push_back(i % 3 == 0 ? prose(i % 17 + 1) : std::string(static_cast<std::size_t>(i), 'x'));
  }
  const std::vector<std::string_view> views(docs.begin(), docs.end());
  const QualityFilter one = make({"default", "c4_lines", "fineweb"}, {}, 1);
  const QualityFilter four = make({"default", "c4_lines", "fineweb"}, {}, 4);
  const QualityBatchResult a = one.filter_batch(views);
  const QualityBatchResult b = four.filter_batch(views);
  EXPECT_EQ(a.keep, b.keep);
  EXPECT_EQ(a.reasons, b.reasons);
  EXPECT_EQ(a.texts, b.texts);
  EXPECT_EQ(a.counters, b.counters);
  EXPECT_EQ(a.counters[0].second, 300u);
  for (std::size_t i = 0; i < docs.size(); ++i) EXPECT_EQ(a.reasons[i], one.check(docs[i]));
}

}  // namespace
}  // namespace luminamoon::data
