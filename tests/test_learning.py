"""The per-template learning of whether rendering pays (render/learning.py), without a browser."""

from __future__ import annotations

from sitemap_spider.render.learning import RENDERS_TO_LEARN, SAMPLE_EVERY, Plan, TemplateLearner


def _learnt_no_gain(learner: TemplateLearner, signature: str) -> None:
    for _ in range(RENDERS_TO_LEARN):
        assert learner.plan(signature) is Plan.PROBE
    assert learner.plan(signature) is Plan.WAIT  # its first renders are all out
    for _ in range(RENDERS_TO_LEARN):
        learner.learn(signature, gained=False)


def test_a_template_is_probed_then_judged_statically_with_a_sample_now_and_then() -> None:
    learner = TemplateLearner()
    _learnt_no_gain(learner, "t")
    assert learner.dropped == 1
    plans = [learner.plan("t") for _ in range(SAMPLE_EVERY)]
    assert plans[:-1] == [Plan.SKIP] * (SAMPLE_EVERY - 1)
    assert plans[-1] is Plan.SAMPLE


def test_pages_met_while_a_sample_is_out_wait_for_what_it_finds() -> None:
    learner = TemplateLearner()
    _learnt_no_gain(learner, "t")
    while learner.plan("t") is not Plan.SAMPLE:
        pass
    # The sample is out: the template's next pages wait for it, whatever it finds.
    assert learner.plan("t") is Plan.WAIT
    learner.learn("t", gained=True)
    assert learner.regained == 1
    assert learner.plan("t") is Plan.RENDER
    # Another template is not held back by it.
    assert learner.plan("other") is Plan.PROBE


def test_a_sample_that_finds_nothing_lets_the_waiting_pages_go_static() -> None:
    learner = TemplateLearner()
    _learnt_no_gain(learner, "t")
    while learner.plan("t") is not Plan.SAMPLE:
        pass
    assert learner.plan("t") is Plan.WAIT
    learner.learn("t", gained=False)
    assert learner.plan("t") is Plan.SKIP
    # A failed sample taught nothing, and holds nothing back either.
    while learner.plan("t") is not Plan.SAMPLE:
        pass
    learner.failed("t")
    assert learner.plan("t") is Plan.SKIP
