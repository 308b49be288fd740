"""Prompt templates of the LLM judges: one prompt per story and criterion, as Chhun, Suchanek & Clavel (TACL 2024)
prompted theirs, rendered with the tokenizer's chat template where the model has one.

A template is a YAML file (`templates/` of this package, or any path): `user`, the message with the fields
{criterion}, {description}, {prompt}, {story}, {reference} and {guidelines} (it must place {story}, and
{criterion} or {description}; a literal brace is doubled, {{ }}); `answer`, the opening of the judge's reply
(fields {criterion}, {description}), after which the rating token comes; `task`, the Eval-Prompt number of the
TACL paper it follows (null for others); `label`. HANNA's criteria definitions are `templates/hanna-criteria.yaml`.
A pairwise template (mode pairwise) places {story_a} and {story_b}, the two stories compared, instead of {story}.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from storyeval.configfiles import DataLoader
from storyeval.errors import InputError

TEMPLATES = Path(__file__).with_name("templates")
PAIR_FIELDS = {"story_a", "story_b"}  # a pairwise template's two stories (storyeval.judges.pairwise)
FIELDS = {"criterion", "description", "prompt", "story", "reference", "guidelines", *PAIR_FIELDS}
TEXT_FIELDS = {"prompt", "story", "reference"}  # read from the text table
ANSWER_FIELDS = {"criterion", "description"}


@dataclass(frozen=True)
class Template:
    name: str
    user: str
    answer: str
    task: int | None
    label: str

    @property
    def needs(self) -> set[str]:
        """The text columns its prompt reads (a pairwise template: the story, twice)."""
        return fields(self.user) & TEXT_FIELDS | ({"story"} if self.pairwise else set())

    @property
    def reads(self) -> set[str]:
        """The columns of a row its prompt reads (a pairwise job's row: story_a and story_b)."""
        return fields(self.user) & (TEXT_FIELDS | PAIR_FIELDS)

    @property
    def pairwise(self) -> bool:
        """It compares two stories ({story_a}, {story_b}: mode pairwise)."""
        return PAIR_FIELDS <= fields(self.user)

    def message(self, row, criterion: str, criteria: dict[str, str]) -> str:
        guidelines = "\n".join(f"- {name}: {text}" for name, text in criteria.items())
        values = {"criterion": criterion, "description": criteria[criterion], "guidelines": guidelines}
        values |= {column: row[column] for column in self.reads}
        return self.user.format(**values)


PLACEHOLDER = re.compile(r"\{\{|\}\}|\{(\w*)\}|[{}]")  # an escaped brace, a {field}, or a stray brace


def fields(text: str) -> set[str]:
    return {match[1] for match in PLACEHOLDER.finditer(text) if match[1]}


def stray(text: str, allowed: set[str]) -> tuple[int, str] | None:
    """(position, excerpt) of the first brace that is neither doubled ({{ }}) nor a field of `allowed`: str.format
    would fail on it ({"score": 3} raised KeyError '"score"')."""
    for match in PLACEHOLDER.finditer(text):
        if match[0] not in ("{{", "}}") and match[1] not in allowed:
            return match.start(), text[match.start():match.start() + 30].split("\n")[0]
    return None


def available() -> list[str]:
    return sorted(path.stem for path in TEMPLATES.glob("*.yaml") if path.stem != "hanna-criteria")


def line_of(lines: list[str], key_line: int, value: str, position: int) -> int:
    """The file line (1-based) of `value[position]`, the value of a key on line `key_line` (0-based): the first
    line from there holding that text line (a block scalar's lines are the file's), else the key's line."""
    wanted = value[:position].count("\n")
    text = value.splitlines()[wanted].strip() if value.strip() else ""
    return next((k + 1 for k in range(key_line, len(lines)) if text and text in lines[k]), key_line + 1)


def read_template(path: Path) -> Template:
    """A template file, checked: YAML (a line that is not names the file), `user` places {story} and the rated
    criterion ({criterion} or {description}, in `user` or `answer`), and every brace is a field or doubled."""
    fix = "fix: correct that line (a template is YAML: user: |- then the message, indented; answer: \"Rating:\")"
    try:
        text = path.read_text(encoding="utf-8")
        entry = yaml.load(text, Loader=DataLoader)
        node = yaml.compose(text, Loader=DataLoader)
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"{path}: not readable as UTF-8 text ({error}); fix: save the template as UTF-8") from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = " ".join(f"{error.context or ''} {error.problem or ''}".split())
        raise InputError(f"{path}: line {mark.line + 1 if mark else 1}, not YAML ({problem}); {fix}") from None
    if not isinstance(entry, dict):
        raise InputError(f"{path}: holds a {type(entry).__name__}, not a template; fix: give `user` (the message) "
                         "and `answer` (the reply's opening)")
    lines = text.splitlines()
    key_lines = {key.value: key.start_mark.line for key, _ in node.value if isinstance(key, yaml.ScalarNode)}
    for key in ("user", "answer"):
        if not isinstance(entry.get(key), str) or not entry[key].strip():
            raise InputError(f"{path}: {key} is missing or not text; fix: give `user` (the message, with {{story}} "
                             "and {criterion}) and `answer` (the reply's opening, e.g. \"Rating:\")")
    user, answer = entry["user"], entry["answer"]
    for key, value, allowed in (("user", user, FIELDS), ("answer", answer, ANSWER_FIELDS)):
        found = stray(value, allowed)
        if found:
            line = line_of(lines, key_lines[key], value, found[0])
            raise InputError(f"{path}: line {line}, {key} has {found[1]!r}, not a field ({', '.join(sorted(allowed))})"
                             "; fix: double a literal brace ({{ and }}, e.g. {{\"score\": 3}}) or name a field")
    placed = fields(user) & (PAIR_FIELDS | {"story"})
    if not placed:
        raise InputError(f"{path}: line {key_lines['user'] + 1}, user has no {{story}}: every story would get the "
                         "same prompt and the same rating; fix: place {story} where the story goes")
    if placed not in ({"story"}, PAIR_FIELDS):
        raise InputError(f"{path}: line {key_lines['user'] + 1}, user places {', '.join(sorted(placed))}; fix: place "
                         "{story} to rate one story, or {story_a} and {story_b} (without {story}) to compare two")
    if not {"criterion", "description"} & (fields(user) | fields(answer)):
        raise InputError(f"{path}: line {key_lines['user'] + 1}, user has no {{criterion}} (nor {{description}}): "
                         "every criterion would get the same prompt; fix: place {criterion} where the rated "
                         "criterion is named")
    return Template(path.stem, user, answer, entry.get("task"), entry.get("label") or path.stem)


@cache
def load_template(name: str) -> Template:
    """The template `name` (a file of `templates/`, without .yaml) or at path `name` (a .yaml file)."""
    path = Path(name) if name.endswith((".yaml", ".yml")) else TEMPLATES / f"{name}.yaml"
    if not path.is_file() or path.stem == "hanna-criteria":
        raise InputError(f"judges.templates: no template {name!r}; fix: use one of {', '.join(available())} "
                         "or the path of a .yaml file with `user` and `answer`")
    return read_template(path)


def default_template(prompted: bool, mode: str = "expected") -> str:
    """The template a judge uses unless told: the stories' prompt read where they have one."""
    if mode == "pairwise":
        return "pairwise" if prompted else "pairwise-stories"
    return "tacl-1" if prompted else "geval"


@cache
def hanna_criteria() -> dict[str, str]:
    """HANNA's six criteria and their definitions (Chhun et al. 2022, Table 1)."""
    return dict(yaml.safe_load((TEMPLATES / "hanna-criteria.yaml").read_text()))


def prompt_text(tokenizer, template: Template, row, criterion: str, criteria: dict[str, str]) -> tuple[str, bool]:
    """(text, add_special_tokens): the chat-formatted prompt ending in the reply's opening `answer`, or the plain
    message and answer for a model without a chat template."""
    message = template.message(row, criterion, criteria)
    answer = template.answer.format(criterion=criterion, description=criteria[criterion])
    if getattr(tokenizer, "chat_template", None):
        text = tokenizer.apply_chat_template([{"role": "user", "content": message}], tokenize=False,
                                             add_generation_prompt=True)
        return text + answer, False  # the chat template writes the special tokens itself
    return f"{message}\n\n{answer}", True
