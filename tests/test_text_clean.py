from storyeval.text.clean import clean_text
from storyeval.text.tokenize import spacy_tokens, words


def test_line_break_markers_become_single_spaces():
    raw = 'He ran. <newline> <newline> "Stop!" <\\newline>She said.<br>Then<BR />nothing</newline>  end\r\nfin'
    assert clean_text(raw) == 'He ran. "Stop!" She said. Then nothing end fin'


def test_whitespace_runs_and_ends():
    assert clean_text("  a\t\tb \u00a0 c\n\n\nd  ") == "a b c d"
    assert clean_text(" \n\t ") == ""


def test_clean_text_leaves_words_and_punctuation_alone():
    text = "“Dad, you 're on TV again !” I heard Eric 's voice — <, > 3,000 years."
    assert clean_text(text) == text


def test_prompt_tags_are_kept():
    assert clean_text("[ RF ]  A law is enacted <newline> today.") == "[ RF ] A law is enacted today."


def test_spacy_tokens_keep_whitespace_tokens_words_drop_them():
    assert spacy_tokens(["Don't go.\n"]) == [["Do", "n't", "go", ".", "\n"]]
    assert words(["Don't  go."]) == [["do", "n't", "go", "."]]
    assert words(["Don't go."], lowercase=False) == [["Do", "n't", "go", "."]]
