"""Hostile and careless input: bounded reads, names that become paths, shared-reference pickles, names that must
exist in the data, resampling counts that must fit, the Python API's arguments, config files as data, absurd values.

Each case's message is the one docs/bad-input.md shows.
"""

import pickle
import re
import time

import pytest

from storyeval.errors import InputError
from storyeval.pickles import load_restricted
from storyeval.text.datasets import load_storyer


def one_line(error: pytest.ExceptionInfo, *pieces: str) -> str:
    message = str(error.value)
    assert "\n" not in message and re.fullmatch(r"\S.*: .+; fix: .+", message), message
    for piece in pieces:
        assert piece in message, message
    return message


# Pickles: each shared container is checked once, so references shared at every level cost the pickle's size.

def shared_references(levels: int = 40, width: int = 10) -> list:
    nested: list = []
    for _ in range(levels):
        nested = [nested] * width
    return nested


def test_shared_reference_pickle_loads_in_linear_time(tmp_path):
    path = tmp_path / "shared.pkl"
    path.write_bytes(pickle.dumps(shared_references(), protocol=4))
    assert path.stat().st_size < 1000
    start = time.process_time()
    loaded = load_restricted(path)
    with pytest.raises(InputError) as error:
        load_storyer(path, "wp200")
    assert time.process_time() - start < 1.0
    assert len(loaded) == 10 and loaded[0] is loaded[1]
    one_line(error, f"dataset wp200: {path} item 0 is not a (story, score) pair: [[[...], [...]")


def test_deep_shared_reference_pickle_is_refused_at_once(tmp_path):
    path = tmp_path / "deep.pkl"
    path.write_bytes(pickle.dumps([shared_references(150, 3)], protocol=4))
    start = time.process_time()
    with pytest.raises(InputError) as error:
        load_restricted(path)
    assert time.process_time() - start < 1.0
    one_line(error, f"{path}: containers nested deeper than 100 levels, in top-level item 0")


def test_pickle_of_a_container_holding_itself(tmp_path):
    loop: list = []
    loop.append(loop)
    path = tmp_path / "loop.pkl"
    path.write_bytes(pickle.dumps([1, loop], protocol=4))
    with pytest.raises(InputError) as error:
        load_restricted(path)
    one_line(error, f"{path}: a container holds itself, in top-level item 1; fix: fetch the released file again")
