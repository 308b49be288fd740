"""The judge answer cache (storyeval.judges.cache): a rerun asks only prompts it has not answered (a changed
template's, an added story's), gives the numbers a fresh run gives, and heals a damaged file or entry."""

import sqlite3

import numpy as np
import pytest

from tiny_models import CORPUS, one_thread, tiny_judge

thread = pytest.fixture(autouse=True)(one_thread)
CRITERIA = {"Plot": "how good the plot is", "Flow": "how smoothly it reads"}


@pytest.fixture(scope="module")
def judge_folder(tmp_path_factory):
    return tiny_judge(tmp_path_factory.mktemp("cache") / "tiny", chat=True)


def template(folder, name, words):
    path = folder / f"{name}.yaml"
    path.write_text(f"user: |-\n  {words} Rate the {{criterion}} of this story.\n\n  {{story}}\nanswer: \"Rating:\"\n")
    from storyeval.judges.prompts import load_template

    load_template.cache_clear()
    return load_template(str(path))


def rated(judge_folder, chosen, stories, cache, mode="expected"):
    from storyeval.api import texts_table
    from storyeval.judges.rate import Settings, rate

    scores, _, run = rate(texts_table(stories), CRITERIA, chosen, judge_folder,
                          Settings(mode=mode, max_new_tokens=3), device="cpu", cache=cache)
    return scores, run


@pytest.mark.parametrize("mode", ["expected", "generate"])
def test_a_rerun_asks_only_the_changed_templates_and_the_new_storys_prompts(judge_folder, tmp_path, mode, caplog):
    cache = tmp_path / "answers.sqlite"
    first, second = template(tmp_path, "one", "Read."), template(tmp_path, "two", "Please read.")
    stories = CORPUS[:3]
    fresh = {name: rated(judge_folder, chosen, stories, None, mode)[0] for name, chosen in
             (("one", first), ("two", second))}
    for chosen in (first, second):
        assert rated(judge_folder, chosen, stories, cache, mode)[1]["forward_passes"] == len(stories) * len(CRITERIA)
    changed = template(tmp_path, "two", "Kindly read.")  # the second template's text changes
    with caplog.at_level("INFO"):
        again, run_one = rated(judge_folder, first, stories, cache, mode)
        _, run_two = rated(judge_folder, changed, stories, cache, mode)
    assert (run_one["forward_passes"], run_one["cached"]) == (0, len(stories) * len(CRITERIA))
    assert (run_two["forward_passes"], run_two["cached"]) == (len(stories) * len(CRITERIA), 0)
    np.testing.assert_allclose(again.to_numpy(), fresh["one"].to_numpy(), rtol=1e-5)
    assert f"judge: {len(stories) * len(CRITERIA)} of {len(stories) * len(CRITERIA)} answers from the cache" in \
        caplog.text
    grown, run = rated(judge_folder, first, CORPUS[:4], cache, mode)  # one story added
    assert (run["forward_passes"], run["cached"]) == (len(CRITERIA), len(stories) * len(CRITERIA))


def test_a_damaged_cache_heals(judge_folder, tmp_path, caplog):
    cache = tmp_path / "answers.sqlite"
    chosen = template(tmp_path, "one", "Read.")
    fresh, _ = rated(judge_folder, chosen, CORPUS[:3], cache)
    with sqlite3.connect(cache) as connection:  # one entry that no longer reads
        connection.execute("UPDATE answers SET answer = '{\"value\": ' WHERE rowid = 1")
    again, run = rated(judge_folder, chosen, CORPUS[:3], cache)
    assert (run["forward_passes"], run["cached"]) == (1, 5)
    np.testing.assert_allclose(again.to_numpy(), fresh.to_numpy(), rtol=1e-5)
    assert rated(judge_folder, chosen, CORPUS[:3], cache)[1]["cached"] == 6  # the entry was rewritten
    cache.write_bytes(b"not a database" * 100)  # the whole file cut or overwritten
    with caplog.at_level("WARNING"):
        again, run = rated(judge_folder, chosen, CORPUS[:3], cache)
    assert run["forward_passes"] == 6 and "does not open" in caplog.text and "started anew" in caplog.text
    np.testing.assert_allclose(again.to_numpy(), fresh.to_numpy(), rtol=1e-5)
