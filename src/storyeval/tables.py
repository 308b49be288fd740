"""The paper's tables (HANNA Tab. 4, 5, 6, 8, 9) laid out for reading, from the tidy results."""

from __future__ import annotations

import numpy as np
import pandas as pd

from storyeval.criteria import AVERAGE, AVERAGES, SCALED_AVERAGE, ordered_criteria

COEFFICIENT_NAMES = {"kendall": "Kendall", "spearman": "Spearman", "pearson": "Pearson"}


def best_first(means: pd.DataFrame) -> list[str]:
    """The systems of a system_means table best first: by their mean over the criteria (its AVERAGES row), else
    by their mean rank over the criteria; equal ones (and NaN, last) in the table's order."""
    systems = list(dict.fromkeys(means["system"]))
    averages = [name for name in AVERAGES if name in set(means["criterion"])]
    if averages:
        key = -means[means["criterion"] == averages[0]].set_index("system")["mean"]
    else:
        grid = means.pivot(index="system", columns="criterion", values="mean")
        key = grid.rank(ascending=False).mean(axis=1)
    key = key.reindex(systems)
    return [systems[i] for i in np.argsort(key.fillna(np.inf).to_numpy(), kind="stable")]


def tab4_system_means(means: pd.DataFrame, reference_system: str | None = None) -> pd.DataFrame:
    """Systems (best first, `best_first`) x (criteria + their mean): `mean [ci_low, ci_high]`, marked as HANNA prints
    them among the generated systems (the human reference left out): ** bold and * the best generated system of a
    column, italic a system whose interval overlaps the best one's."""
    means = means.reset_index(drop=True)
    generated = means["system"] != reference_system
    best_index = means[generated].groupby("criterion", sort=False)["mean"].idxmax()
    is_best = means.index.isin(best_index)
    best_low = means.loc[best_index].set_index("criterion")["ci_low"]
    overlaps = generated & (means["ci_high"] >= means["criterion"].map(best_low))

    def cell(row: pd.Series, best: bool, overlap: bool) -> str:
        mean = f"{row['mean']:.2f}"
        mean = f"**{mean}**\\*" if best else f"*{mean}*" if overlap else mean
        return f"{mean} [{row['ci_low']:.2f}, {row['ci_high']:.2f}]"

    frame = means.assign(cell=[cell(row, b, o) for (_, row), b, o in zip(means.iterrows(), is_best, overlaps)])
    table = frame.pivot(index="system", columns="criterion", values="cell")
    averages = [name for name in AVERAGES if name in set(means["criterion"])]
    criteria = ordered_criteria(means.loc[~means["criterion"].isin(AVERAGES), "criterion"])
    table = table.loc[best_first(means), criteria + averages]
    return table.rename_axis(columns=None).reset_index().rename(columns={"system": "System"})


def tab4_note(means: pd.DataFrame) -> str:
    """What Tab. 4's title adds of its system_means table: the unit of its intervals, the order of its systems and,
    where the criteria have different scales, how their mean was taken or why it is left out."""
    unit = means["unit"].iloc[0] if "unit" in means and len(means) else "rating"
    words = {"story": "intervals over story means", "rating": "intervals over the individual ratings"}
    criteria = set(means["criterion"])
    average = ("; criteria on different scales: Average over each criterion scaled to [0, 1]"
               if SCALED_AVERAGE in criteria else "" if AVERAGE in criteria
               else "; criteria on different scales, one without spread: no Average")
    return f"; {words.get(unit, unit)}; systems best first{average}"


def _cells(top: pd.DataFrame, group: str) -> pd.Series:
    """`label (ranked r in %)`, `[tied at N]` where metrics share the place N (stats.ranking.top_metrics), and
    `[confound: ...]` where storyeval.stats.confounds flagged the correlation."""
    cells = top["label"] + " (" + (100 * top["ranked_r"]).round().astype(int).astype(str) + ")"
    if "tied_rank" in top:
        shared = top.groupby([group, "criterion", "tied_rank"])["rank"].transform("size") > 1
        cells += np.where(shared, " [tied at " + top["tied_rank"].astype(str) + "]", "")
    if "confound" not in top:
        return cells
    words = top["confound"].fillna("").astype(str)
    return cells + np.where(words != "", " [confound: " + words + "]", "")


def tab5_top_pearson(top: pd.DataFrame, k: int = 3) -> pd.DataFrame:
    """Criteria x (design 1..k, story 1..k, system 1..k): the top metrics by Pearson, with the r they rank by in
    percent (`ranking.ranked_r`: r after orientation, or |r| as HANNA); design: under the statistic the study's
    design calls for (storyeval.stats.answer), where top_metrics has it."""
    chosen = top[top["coefficient"] == "pearson"]
    return _grid(chosen, "level", {"design": "Design", "story": "Story", "system": "System"}, k)


def tab89_top_by_coefficient(top: pd.DataFrame, level: str, k: int = 5) -> pd.DataFrame:
    """Criteria x (Kendall, Spearman, Pearson) x 1..k at one level (Tab. 8 story, Tab. 9 system)."""
    chosen = top[top["level"] == level]
    return _grid(chosen, "coefficient", COEFFICIENT_NAMES, k)


def kept_ties(chosen: pd.DataFrame, group: str, names: dict[str, str], k: int) -> tuple[pd.DataFrame, list[str]]:
    """The rows of a top-k table (each `group` x criterion's metrics tied within the top k: stats.ranking.top_metrics)
    and what its title says of them: how far ties at the cut ran past k, and which groups are left out because in
    every criterion their tie at the cut holds more than k metrics beyond it, so that they name no top k."""
    place = chosen["tied_rank"] if "tied_rank" in chosen else chosen["rank"]
    chosen = chosen[place <= k]
    said, kept = [], []
    for value, rows in chosen.groupby(group, sort=False):
        runs = rows.groupby("criterion")["rank"].max()
        at_cut = rows[rows["rank"] > k].groupby("criterion").size().reindex(runs.index, fill_value=0)
        if len(rows) and (at_cut > k).all():
            count = f"{at_cut.min()}" if at_cut.min() == at_cut.max() else f"{at_cut.min()}-{at_cut.max()}"
            said.append(f"{names[value]} left out: in every criterion {count} metrics beyond the top {k} tie with the "
                        f"{k}th (equal values), so it names no top {k}")
            continue
        kept.append(rows)
        if runs.max() > k:
            grown = ", ".join(f"{criterion} {n}" for criterion, n in runs[runs > k].items())
            said.append(f"{names[value]}: ties at the cut kept, k grows from {k} to {runs.max()} ({grown} metrics)")
    return (pd.concat(kept) if kept else chosen.iloc[:0]), said


def _grid(chosen: pd.DataFrame, group: str, names: dict[str, str], k: int) -> pd.DataFrame:
    """Criteria x (group, place) of the top `k` and the ties at the cut; attrs["note"]: kept_ties' words."""
    chosen, said = kept_ties(chosen, group, names, k)
    if chosen.empty:  # every group left out: the note is the table
        table = pd.DataFrame({"Criterion": []})
        table.attrs["note"] = "; ".join(said)
        return table
    frame = chosen.assign(cell=_cells(chosen, group),
                          column=chosen[group].map(names) + " " + chosen["rank"].astype(str))
    table = frame.pivot(index="criterion", columns="column", values="cell")
    order = [
        f"{names[g]} {rank}" for g in names for rank in sorted(chosen["rank"].unique()) if f"{names[g]} {rank}" in table
    ]
    table = table.reindex(index=ordered_criteria(table.index), columns=order)
    table = table.rename_axis(columns=None).reset_index().rename(columns={"criterion": "Criterion"})
    table.attrs["note"] = "; ".join(said)
    return table


def tab6_borda(borda: pd.DataFrame, k: int = 5) -> pd.DataFrame:
    """Rank 1..k x levels: `label (Borda count)`; equal counts share a rank."""
    columns = {}
    for level, group in borda.groupby("level", sort=False):
        head = group.sort_values(["rank", "label"]).head(k)
        columns[level.capitalize()] = (head["label"] + " (" + head["borda"].map("{:g}".format) + ")").tolist()
    table = pd.DataFrame(columns)
    table.insert(0, "Rank", range(1, len(table) + 1))
    return table


def tab3_icc(icc: pd.DataFrame) -> pd.DataFrame:
    """Criteria x (layout, form): `ICC [ci_low, ci_high]`."""
    frame = icc.assign(
        cell=icc.apply(lambda row: f"{row['icc']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]", axis=1),
        column=icc["form"] + " (" + icc["layout"] + ")",
    )
    table = frame.pivot(index="criterion", columns="column", values="cell")
    table = table.reindex(index=ordered_criteria(table.index), columns=list(dict.fromkeys(frame["column"])))
    return table.rename_axis(columns=None).reset_index().rename(columns={"criterion": "Criterion"})


def kemeny_consensus(consensus: pd.DataFrame, summary: pd.DataFrame, k: int = 5) -> pd.DataFrame:
    """Per level: the Kemeny top-k beside Borda's, and both Kemeny scores (lower is better)."""
    rows = []
    for level, group in consensus.groupby("level", sort=False):
        stats = summary.set_index("level").loc[level]
        kemeny = group.sort_values("kemeny_rank").head(k)["label"].tolist()
        borda = group.sort_values("borda_rank").head(k)["label"].tolist()
        rows.append(
            {
                "Level": level,
                "Method": stats["method"],
                f"Kemeny top {k}": ", ".join(kemeny),
                f"Borda top {k}": ", ".join(borda),
                "Kemeny score (Kemeny)": stats["kemeny_score"],
                "Kemeny score (Borda)": stats["borda_score"],
                "Kendall distance": stats["kendall_distance"],
            }
        )
    return pd.DataFrame(rows)


def rounded(frame: pd.DataFrame, digits: int = 4) -> pd.DataFrame:
    """A tidy result table as is, floats to `digits` significant digits (small p-values stay visible)."""
    floats = frame.select_dtypes("float").columns
    return frame.assign(**{column: frame[column].map(lambda v: float(f"{v:.{digits}g}")) for column in floats})
