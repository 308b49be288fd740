"""The report pages of human agreement (rule agreement_pages): Krippendorff's alpha with the human ceiling per
criterion (agreement.csv), and the Alternative Annotator Test of Calderon, Reichart & Dror (ACL 2025) per metric
with its chance control and, where it could not run, why (alt_test.csv); and the landing page's paragraph on them.
Like storyeval.plots.pages, it imports no plotting library."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from storyeval.plots.pages import COEFFICIENTS, LONG_TABLE, note_html, write_table_page
from storyeval.stats.alttest import ALT_VERDICTS, PASSES, PASSES_CHANCE, UNTESTED, across_epsilons
from storyeval.stats.alttest import verdicts as alt_verdicts

MISSING = "–"  # a number that is undefined (alpha of a criterion without a story rated twice)
VERDICT_ORDER = {verdict: place for place, verdict in enumerate(ALT_VERDICTS)}  # a criterion's rows, best first
NAMED = 5  # clean passes named per criterion on the landing page
RST_SPECIAL = re.compile(r"([\\`*_|])")


def _number(value, digits: int = 3) -> str:
    return MISSING if pd.isna(value) else f"{value:.{digits}f}"


def _count(value) -> str:
    return MISSING if pd.isna(value) else f"{int(value):,}"


def _coefficient(name: str) -> str:
    return COEFFICIENTS.get(name, name)


def agreement_view(table: pd.DataFrame) -> pd.DataFrame:
    """agreement.csv for people: one row per criterion with its alpha at each level of measurement, the raters and
    stories alpha counted, the human ceiling at each level and coefficient beside it, and the note."""
    alphas = [column for column in table if column.startswith("alpha_")]
    rows = []
    for criterion, group in table.groupby("criterion", sort=False):
        first = group.iloc[0]
        row = {"Criterion": criterion}
        row.update({f"α ({column.removeprefix('alpha_')})": _number(first[column]) for column in alphas})
        row.update({header: _count(first[column]) for column, header in (("n_raters", "Raters"),
                                                                          ("n_stories", "Stories")) if column in table})
        for ceiling in group.itertuples():
            row[f"Ceiling, {ceiling.level} level, {_coefficient(ceiling.coefficient)}"] = _number(ceiling.ceiling)
        row["Note"] = first.get("note", "")
        rows.append(row)
    view = pd.DataFrame(rows)
    if "Note" in view and not view["Note"].map(lambda note: isinstance(note, str) and bool(note)).any():
        view = view.drop(columns="Note")
    return view.fillna("")


def verdicts(table: pd.DataFrame) -> pd.Series:
    """Each row's verdict (storyeval.stats.alttest.verdicts): passes, passes not beyond chance, fails, untested."""
    return alt_verdicts(table)


def _reasons(table: pd.DataFrame) -> pd.Series:
    if "untested_reason" not in table:
        return pd.Series("", index=table.index)
    return table["untested_reason"].fillna("").astype(str)


def _p(value) -> str:
    return MISSING if pd.isna(value) else ("< 0.001" if value < 0.001 else f"{value:.3f}")


def alt_test_view(table: pd.DataFrame) -> pd.DataFrame:
    """alt_test.csv for people: per criterion the passes beyond chance first, then those chance would match, the
    failures and the untested, each by rho; the verdict at the dataset's epsilon, omega, rho, where the verdict
    changes across the rule-of-thumb epsilons, the raters tested, the permutation p (Benjamini-Hochberg), and why
    a row is untested."""
    verdict = verdicts(table)
    order = table.assign(verdict=verdict, place=verdict.map(VERDICT_ORDER),
                         group=table.groupby("criterion", sort=False).ngroup())
    order = order.sort_values(["group", "place", "rho"], ascending=[True, True, False], kind="stable",
                              na_position="last")
    tested = order["annotators"].map(_count)
    if "raters" in order:
        tested = tested + " of " + order["raters"].map(_count)
    epsilon = order["epsilon"] if "epsilon" in order else pd.Series(np.nan, index=order.index)
    across = [across_epsilons(at, eps) for at, eps in zip(order.get("passes_at", pd.Series("", index=order.index)),
                                                          epsilon)]
    view = pd.DataFrame({
        "Criterion": order["criterion"],
        "Metric": order["label"] if "label" in order else order["metric"],
        **({"Family": order["family"].fillna("")} if "family" in order and order["family"].nunique() > 1 else {}),
        "Verdict": order["verdict"] + epsilon.map(lambda value: "" if pd.isna(value) else f" (ε {value:g})"),
        "ω (winning rate)": order["omega"].map(_number),
        "ρ (advantage probability)": order["rho"].map(_number),
        "Across ε 0.1 / 0.15 / 0.2": across,
        "Raters tested": tested,
        "Chance p (BH)": [MISSING if verdict == UNTESTED else f"{_p(p)} ({_p(q)})" for verdict, p, q in
                          zip(order["verdict"], order.get("chance_p", np.nan), order.get("chance_q", np.nan))],
        "Why untested": _reasons(order),
    })
    view["Verdict"] = view["Verdict"].where(order["verdict"].to_numpy() != UNTESTED, UNTESTED)
    for column in ("Across ε 0.1 / 0.15 / 0.2", "Why untested"):
        if not view[column].astype(bool).any():
            view = view.drop(columns=column)
    return view.reset_index(drop=True)


def _names(labels: list[str], most: int = NAMED) -> str:
    shown = ", ".join(labels[:most])
    return shown + (f" and {len(labels) - most} more" if len(labels) > most else "")


def alt_test_sentences(table: pd.DataFrame, min_instances: int | None = None) -> list[str]:
    """One sentence per criterion: how many of the tested pass, how many of those not beyond chance, the clean
    passes by name (best rho first), how many raters could be tested (`min_instances`: the setting, for the
    words), and why any candidate is untested."""
    verdict, reasons = verdicts(table), _reasons(table)
    sentences = []
    for criterion, rows in table.groupby("criterion", sort=False):
        said, tested = verdict[rows.index], rows[verdict[rows.index] != UNTESTED]
        parts = []
        if len(tested):
            passing = int(said.isin([PASSES, PASSES_CHANCE]).sum())
            chance = int((said == PASSES_CHANCE).sum())
            epsilon = rows["epsilon"].iloc[0] if "epsilon" in rows else None
            text = f"{passing} of {len(tested)} tested pass" + (f" at epsilon {epsilon:g}" if epsilon else "")
            if "epsilon_source" in rows and isinstance(rows["epsilon_source"].iloc[0], str):
                text += f" ({rows['epsilon_source'].iloc[0]})"
            if chance:
                text += f", {chance} of them not beyond chance (permutation p after Benjamini-Hochberg above q)"
            clean = rows[said == PASSES].sort_values("rho", ascending=False, kind="stable")
            label = "label" if "label" in clean else "metric"
            if len(clean):
                text += f"; passes beyond chance: {_names(clean[label].astype(str).tolist())}"
            parts.append(text)
            tested_raters = int(tested["annotators"].max())
            raters = int(rows["raters"].max()) if "raters" in rows else tested_raters
            if tested_raters < raters:
                fewer = f"fewer than {min_instances} stories" if min_instances else "too few stories"
                parts.append(f"{tested_raters} of {raters} raters tested, the other {raters - tested_raters} rated "
                             f"{fewer} that another rater rated too (min_instances)")
        untested = reasons[rows.index][said == UNTESTED]
        for reason, count in untested.value_counts(sort=False).items():
            reason = reason or "untested"
            parts.append(reason if count == len(rows) else f"{count} of {len(rows)} {reason}")
        sentences.append(f"{criterion}: {'; '.join(parts)}")
    return sentences


def layout_note(agreement: pd.DataFrame) -> str:
    """What a rater is in this set (agreement.csv's layout), as a sentence; "" where it does not say."""
    layouts = agreement["layout"].dropna().unique() if "layout" in agreement else []
    return f"Raters here: {layouts[0]}." if len(layouts) == 1 else ""


def ceiling_note(agreement: pd.DataFrame) -> str:
    """How the ceiling was computed (agreement.csv's ceiling_method and panel), as a sentence; "" without them."""
    if "ceiling_method" not in agreement or agreement["ceiling_method"].dropna().empty:
        return ""
    panel = agreement["panel"].dropna() if "panel" in agreement else pd.Series(dtype=float)
    size = f" of {panel.mean():.3g} ratings a story" if len(panel) else ""
    return f"Human ceiling: {agreement['ceiling_method'].dropna().iloc[0]}{size}."


def settings_note(settings: Mapping, alt: pd.DataFrame | None = None) -> str:
    """The alt-test's settings as a sentence: the dataset's epsilon and where it comes from (alt_test.csv), q,
    the minimum raters and stories, and the shuffles a candidate got."""
    epsilon, draws = settings["epsilon"], settings["chance_draws"]
    if alt is not None and len(alt) and "epsilon" in alt:
        source = alt["epsilon_source"].iloc[0] if "epsilon_source" in alt else ""
        epsilon = f"{alt['epsilon'].iloc[0]:g}" + (f" ({source})" if isinstance(source, str) and source else "")
        drawn = alt.loc[alt["chance_draws"] > 0, "chance_draws"] if "chance_draws" in alt else []
        draws = f"{int(drawn.max())}" if len(drawn) else draws
    return (f"Settings: epsilon {epsilon}; q {settings['q']} (Benjamini-Yekutieli over the annotators; "
            f"Benjamini-Hochberg over the candidates for the chance control); at least {settings['min_annotators']} "
            f"raters a criterion and {settings['min_instances']} stories a rater; {draws} shuffles a candidate.")


def write_agreement_page(path: str | Path, agreement: pd.DataFrame, title: str, files: list[str | Path],
                         caption: str = "") -> None:
    """The page of agreement.csv: alpha, raters, stories and the human ceiling per criterion."""
    note = " ".join(filter(None, [layout_note(agreement), ceiling_note(agreement)]))
    write_table_page(path, agreement_view(agreement), title, files, caption + note_html(note))


def write_alt_test_page(path: str | Path, alt: pd.DataFrame, title: str, files: list[str | Path], caption: str = "",
                        note: str = "", min_instances: int | None = None) -> None:
    """The page of alt_test.csv: one sentence per criterion (alt_test_sentences), then the table (alt_test_view);
    a long table shows each criterion's first rows and every pass beyond chance."""
    items = "".join(f"<li>{html.escape(sentence)}</li>" for sentence in alt_test_sentences(alt, min_instances))
    summary = f"{note_html(note)}\n<ul>{items}</ul>" if items else note_html(note or "No criterion was tested.")
    view = alt_test_view(alt)
    groups, keep = None, None
    if len(view) > 2 * LONG_TABLE:
        groups, keep = ["Criterion"], view["Verdict"].str.match(rf"{PASSES}( \(|$)").to_numpy()
    write_table_page(path, view, title, files, caption + summary, groups, keep, "every pass beyond chance")


def rst_text(text: str) -> str:
    """Plain text safe inside reStructuredText (a label's * or _ is no markup)."""
    return RST_SPECIAL.sub(r"\\\1", str(text))


def agreement_answer(agreement: pd.DataFrame, alt: pd.DataFrame, name: str, min_instances: int | None = None) -> str:
    """The landing page's paragraph (reStructuredText, one line): alpha per criterion with its raters and stories,
    the first ceiling listed (the first level and coefficient), and the alt-test's sentence per criterion."""
    alphas = [column for column in agreement if column.startswith("alpha_")]
    sentences = []
    if len(agreement) and alphas:
        firsts = agreement.drop_duplicates("criterion")
        counted = {"n_raters", "n_stories"} <= set(agreement)
        counts = [f"{_count(raters)} raters, {_count(stories)} stories"
                  for raters, stories in zip(firsts["n_raters"], firsts["n_stories"])] if counted else []
        shared = len(set(counts)) == 1
        cells = [f"{criterion} {_number(alpha)}" + (f" ({counts[k]})" if counts and not shared else "")
                 for k, (criterion, alpha) in enumerate(zip(firsts["criterion"], firsts[alphas[0]]))]
        level = alphas[0].removeprefix("alpha_") + (f"; {counts[0]} a criterion" if shared else "")
        sentences.append(f"Krippendorff's alpha ({level}): {', '.join(cells)}")
        first = agreement.iloc[0]
        ceiling = agreement[(agreement["level"] == first["level"]) & (agreement["coefficient"] == first["coefficient"])]
        sentences.append(f"Human ceiling ({first['level']} level, {_coefficient(first['coefficient'])}): "
                         + ", ".join(f"{row.criterion} {_number(row.ceiling)}" for row in ceiling.itertuples()))
    tested = alt_test_sentences(alt, min_instances) if len(alt) else ["no criterion"]
    sentences.append("May a metric replace a rater? The Alternative Annotator Test (Calderon, Reichart & Dror 2025) "
                     "per criterion, " + ". ".join(tested))
    text = " ".join(rst_text(sentence) + "." for sentence in sentences)
    return f"**{rst_text(name)}: how far the raters agree.** {text}\n"
