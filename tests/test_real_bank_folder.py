"""The real-log bank's folder as the tests find it: a log missing from it skips only its own tests.

A CI's ``../shared/real_logs`` may hold an older, smaller bank than bank.yaml lists; its tests
must then skip the newer logs one by one, saying which and where, and still hold the rest.
"""

from __future__ import annotations

import pytest

from support.realbank import bank_log


def test_a_present_log_is_its_file(tmp_path):
    (tmp_path / "tinker-cogrl-exp3-50").mkdir()
    path = bank_log(tmp_path, "tinker-cogrl-exp3-50", "tinker-cogrl-exp3-50/training_metrics.jsonl")
    assert path == tmp_path / "tinker-cogrl-exp3-50" / "training_metrics.jsonl"


@pytest.mark.parametrize(
    "name, path",
    [
        ("verl-tb-asyncreward-q3b-mcore-base", "verl-tb-asyncreward-q3b-mcore-base/runs"),
        ("verl-csv-ppo-dp2-116-044742", "verl-csv-ppo-dp2-116-044742/dp_2_gpu_parsed.csv"),
        ("a-log-in-a-nested-folder", "a-log-in-a-nested-folder/run/sub/metrics.jsonl"),
    ],
)
def test_a_missing_log_skips_with_its_name_and_where_it_is_expected(tmp_path, name, path):
    (tmp_path / "some-other-log").mkdir()  # the folder exists, only this log is missing
    with pytest.raises(pytest.skip.Exception) as skipped:
        bank_log(tmp_path, name, path)
    reason = str(skipped.value)
    assert name in reason and str(tmp_path / path.split("/")[0]) in reason
    assert reason.count(". ") == 0 and "\n" not in reason  # one sentence
