"""Prompt templates of the LLM judges: one prompt per story and criterion, as Chhun, Suchanek & Clavel (TACL 2024)
prompted theirs, rendered with the tokenizer's chat template where the model has one.

A template is a YAML file (`templates/` of this package, or any path): `user`, the message with the fields
{criterion}, {description}, {prompt}, {story}, {reference} and {guidelines}; `answer`, the opening of the
judge's reply, after which the rating token comes; `task`, the Eval-Prompt number of the TACL paper it follows
(null for others); `label`. HANNA's criteria definitions are `templates/hanna-criteria.yaml`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from storyeval.errors import InputError

TEMPLATES = Path(__file__).with_name("templates")
FIELDS = {"criterion", "description", "prompt", "story", "reference", "guidelines"}
TEXT_FIELDS = {"prompt", "story", "reference"}  # read from the text table


@dataclass(frozen=True)
class Template:
    name: str
    user: str
    answer: str
    task: int | None
    label: str

    @property
    def needs(self) -> set[str]:
        """The text columns its prompt reads."""
        return fields(self.user) & TEXT_FIELDS

    def message(self, row, criterion: str, criteria: dict[str, str]) -> str:
        guidelines = "\n".join(f"- {name}: {text}" for name, text in criteria.items())
        values = {"criterion": criterion, "description": criteria[criterion], "guidelines": guidelines}
        values |= {column: row[column] for column in self.needs}
        return self.user.format(**values)


def fields(text: str) -> set[str]:
    return set(re.findall(r"(?<!\{)\{(\w+)\}", text))


def available() -> list[str]:
    return sorted(path.stem for path in TEMPLATES.glob("*.yaml") if path.stem != "hanna-criteria")


@cache
def load_template(name: str) -> Template:
    """The template `name` (a file of `templates/`, without .yaml) or at path `name` (a .yaml file)."""
    path = Path(name) if name.endswith((".yaml", ".yml")) else TEMPLATES / f"{name}.yaml"
    if not path.is_file() or path.stem == "hanna-criteria":
        raise InputError(f"judges.templates: no template {name!r}; fix: use one of {', '.join(available())} "
                         "or the path of a .yaml file with `user` and `answer`")
    entry = yaml.safe_load(path.read_text()) or {}
    missing = [key for key in ("user", "answer") if not entry.get(key)]
    unknown = sorted((fields(entry.get("user", "")) | fields(entry.get("answer", ""))) - FIELDS)
    if missing or unknown:
        raise InputError(f"{path}: {'missing ' + ', '.join(missing) if missing else 'unknown field(s) ' + str(unknown)}"
                         f"; fix: give `user` and `answer`, with fields among {', '.join(sorted(FIELDS))}")
    return Template(path.stem, entry["user"], entry["answer"], entry.get("task"), entry.get("label") or path.stem)


@cache
def hanna_criteria() -> dict[str, str]:
    """HANNA's six criteria and their definitions (Chhun et al. 2022, Table 1)."""
    return dict(yaml.safe_load((TEMPLATES / "hanna-criteria.yaml").read_text()))


def prompt_text(tokenizer, template: Template, row, criterion: str, criteria: dict[str, str]) -> tuple[str, bool]:
    """(text, add_special_tokens): the chat-formatted prompt ending in the reply's opening `answer`, or the plain
    message and answer for a model without a chat template."""
    message = template.message(row, criterion, criteria)
    answer = template.answer.format(criterion=criterion)
    if getattr(tokenizer, "chat_template", None):
        text = tokenizer.apply_chat_template([{"role": "user", "content": message}], tokenize=False,
                                             add_generation_prompt=True)
        return text + answer, False  # the chat template writes the special tokens itself
    return f"{message}\n\n{answer}", True
