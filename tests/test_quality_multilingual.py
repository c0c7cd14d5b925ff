# ruff: noqa: RUF001  (Chinese prose is written with full-width punctuation)
"""The default QualityFilter preset beyond English (docs/quality.md, "Script-aware rules"):
real translated manual pages of every language installed under /usr/share/man are kept (>= 97%
per language; bench/quality_multilingual.py prints the table), CJK and Cyrillic prose pass, and
the script-aware metrics are what docs/quality.md defines. Live backend (the suite runs again
with LUMINAMOON_FORCE_FALLBACK=1)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

import luminamoon.data as lmd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import quality_corpus as qc
import quality_multilingual as qm

JA = (
    "このコマンドは、指定されたファイルのパスワード有効期限情報を変更する。\n"
    "オプション --help を指定すると、使用方法を表示して終了する。\n"
    "設定ファイルは /etc/login.defs にあり、管理者だけが編集できる。\n"
    "ユーザーのアカウントが失効した場合、ログインは拒否される。\n"
    "詳細については、関連するマニュアルページを参照すること。\n"
    "日付はシステムのタイムゾーンに従って表示され、秒は省略される。\n"
)
ZH = (
    "这个命令用于修改用户密码的过期信息，只有超级用户可以更改其他用户的设置。\n"
    "如果没有给出任何选项，程序将以交互方式运行，并提示输入每一个字段的新值。\n"
    "配置文件位于 /etc/login.defs，其中的 PASS_MAX_DAYS 决定默认的最长期限。\n"
    "日期以当前时区显示，账户过期后用户将无法再次登录系统，除非管理员重新启用。\n"
    "使用 --list 选项可以查看当前设置，例如：最后一次修改日期、最短期限和警告天数。\n"
    "返回值为零表示成功；非零值表示参数错误、权限不足或者无法读取密码文件。\n"
)


def test_cjk_prose_passes_default() -> None:
    f = lmd.QualityFilter()
    for text in (JA, ZH):
        m = f.metrics(text)
        assert m["char_entropy"] > 5.5  # the old rule dropped it
        assert f.check(text) is None, f.check(text)


def test_adjusted_metrics_follow_their_definition() -> None:
    f = lmd.QualityFilter()
    text = "Привет мир, hello 世界 Abc"
    m = f.metrics(text)
    n = len(text)
    non_ascii = sum(ord(c) >= 128 for c in text)
    large = 2  # 世界
    allowance = 4.5 * (large / n) + min(1.0, 4.0 * (non_ascii / n))
    assert m["adjusted_char_entropy"] == max(0.0, m["char_entropy"] - allowance)
    assert m["capitalized_word_share"] == 2 / 5  # Привет, Abc among 5 words
    assert math.isclose(m["capitalized_word_ratio"], 2 / 4)  # 世界 has no case
    assert (
        f.metrics("plain ascii text")["adjusted_char_entropy"]
        == (f.metrics("plain ascii text")["char_entropy"])
    )


def test_junk_is_still_rejected() -> None:
    f = lmd.QualityFilter()
    for kind in ("base64_blob", "boilerplate_menu", "number_table", "repeated_lines"):
        docs = [text for k, text in qc.calibration_corpus(20, 30) if k == kind]
        assert not any(f.is_high_quality(t) for t in docs), kind


@pytest.mark.skipif(not qm.MAN.is_dir(), reason="no /usr/share/man on this machine")
def test_translated_manuals_are_kept() -> None:
    docs = qm.pages()
    if not docs:
        pytest.skip("no translated manual pages installed")
    table = qm.evaluate(docs)
    for lang, row in table.items():
        if row["pages"] >= 10:
            assert row["kept_share"] >= 0.97, (lang, row)
