"""S3: features worked by hand, the model form against scikit-learn's predictions, and the model-file checks."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression
from sklearn.svm import SVR

from storyeval.errors import InputError
from storyeval.metrics import s3
from test_metrics_rouge_we import VECTORS, write_vectors

TEXTS = pd.DataFrame({"story_id": ["s0", "s1"], "story": ["The cats sat on the mat.", "The cat sat on a mat."],
                      "reference": ["The cat sat on a mat.", "The cat sat on a mat."]})


def test_features_by_hand(tmp_path):
    vectors = write_vectors(tmp_path / "v.txt", VECTORS)
    f = s3.features(TEXTS, embeddings=str(vectors))
    assert list(f.columns) == list(s3.FEATURES)
    # stems: the cat sat on the mat / the cat sat on a mat
    assert f.loc["s0", "ROUGE_1_R"] == pytest.approx(5 / 6)  # the, cat, sat, on, mat
    assert f.loc["s0", "ROUGE_2_R"] == pytest.approx(3 / 5)  # the-cat, cat-sat, sat-on
    assert f.loc["s0", "JS_eval_1"] == pytest.approx(0.0)  # content words cat, sat, mat on both sides
    # content bigrams: the-cat, cat-sat, sat-on shared (1/4 each), the-mat and a-mat on one side each (1/4 vs 0)
    assert f.loc["s0", "JS_eval_2"] == pytest.approx(0.25 * math.log(2))
    assert f.loc["s0", "ROUGE_1_R_WE"] == pytest.approx(5 / 6)  # cats ~ cat by their vectors, "a" unmatched
    assert f.loc["s0", "ROUGE_2_R_WE"] == pytest.approx(3 / 5)
    assert f.loc["s1"].to_numpy() == pytest.approx([0, 0, 1, 1, 1, 1])


@pytest.mark.parametrize("estimator", [SVR(kernel="rbf", C=3.0), SVR(kernel="linear"), SVR(kernel="poly", degree=2, coef0=1.0),
                                       SVR(kernel="sigmoid", gamma=0.1), LinearRegression()])
def test_model_form_matches_sklearn(estimator):
    rng = np.random.default_rng(0)
    x, x_new = rng.random((40, 6)), rng.random((9, 6))
    estimator.fit(x, x @ rng.normal(size=6) + 0.1 * rng.normal(size=40))
    exported = json.loads(json.dumps(s3.export_model(estimator)))
    np.testing.assert_allclose(s3.predict(exported, x_new), estimator.predict(x_new), rtol=1e-10, atol=1e-12)


def test_compute_and_model_file(tmp_path):
    vectors = write_vectors(tmp_path / "v.txt", VECTORS)
    rng = np.random.default_rng(1)
    x = rng.random((30, 6))
    pyramid, responsiveness = SVR().fit(x, x.sum(1)), LinearRegression().fit(x, x[:, 2])
    path = tmp_path / "s3.json"
    path.write_text(json.dumps({"features": list(s3.FEATURES), "pyramid": s3.export_model(pyramid),
                                "responsiveness": s3.export_model(responsiveness)}))
    scores = s3.compute(TEXTS, embeddings=str(vectors), model_file=str(path))
    f = s3.features(TEXTS, embeddings=str(vectors)).to_numpy()
    np.testing.assert_allclose(scores["s3-pyramid"], pyramid.predict(f), rtol=1e-10)
    np.testing.assert_allclose(scores["s3-responsiveness"], responsiveness.predict(f), rtol=1e-10)
    with pytest.raises(InputError, match="does not exist"):
        s3.compute(TEXTS, embeddings=str(vectors), model_file=str(tmp_path / "absent.json"))
    path.write_text(json.dumps({"features": list(reversed(s3.FEATURES)), "pyramid": {}, "responsiveness": {}}))
    with pytest.raises(InputError, match="S3's order"):
        s3.compute(TEXTS, embeddings=str(vectors), model_file=str(path))
    path.write_text(json.dumps({"features": list(s3.FEATURES), "pyramid": {"kind": "svr", "kernel": "laplace"}}))
    with pytest.raises(InputError, match="valid 'pyramid' model"):
        s3.compute(TEXTS, embeddings=str(vectors), model_file=str(path))
