"""Findings, not noise: reported once until they change; a cleared condition resolved once it stays clear."""

from __future__ import annotations

from noviz_agent.goals.findings import CLEAR_AFTER_DAYS, LASTING, Finding, compare, remember


def finding(key="stock_cover:SIM-03", state="under 14 days of cover", on_hand=40.0, kind="condition"):
	return Finding(
		key=key,
		watch=key.split(":")[0],
		title=f"{key} {on_hand}",
		state=state,
		why="it matters",
		figures=[{"label": "On hand", "value": on_hand, "unit": "quantity"}],
		kind=kind,
	)


def run(memory, found, day, computed=("stock_cover",)):
	changes = compare(found, memory, set(computed), day)
	return changes, remember(memory, changes, day)


def test_a_finding_is_not_reported_again_while_only_its_figures_drift():
	changes, memory = run({}, [finding(on_hand=40)], "2026-03-02")
	assert [f.key for f in changes.new] == ["stock_cover:SIM-03"]
	changes, memory = run(memory, [finding(on_hand=31)], "2026-03-09")
	assert changes.reported == [] and not changes.anything
	assert len(changes.unchanged) == 1


def test_a_finding_whose_state_changes_is_reported_as_changed():
	_, memory = run({}, [finding()], "2026-03-02")
	changes, _ = run(memory, [finding(state="out of stock", on_hand=0)], "2026-03-09")
	assert [f.state for f in changes.changed] == ["out of stock"]


def test_a_condition_that_flickers_back_within_the_grace_period_is_not_reported_twice():
	_, memory = run({}, [finding()], "2026-03-02")
	changes, memory = run(memory, [], "2026-03-09")
	assert changes.resolved == [] and changes.clearing == ["stock_cover:SIM-03"]
	changes, memory = run(memory, [finding()], "2026-03-13")
	assert changes.reported == [] and changes.resolved == []
	assert "cleared" not in memory["findings"]["stock_cover:SIM-03"]


def test_a_condition_clear_for_the_grace_period_is_resolved_once_and_forgotten():
	_, memory = run({}, [finding()], "2026-03-01")
	_, memory = run(memory, [], "2026-03-02")
	later = f"2026-03-{2 + CLEAR_AFTER_DAYS:02d}"
	changes, memory = run(memory, [], later)
	assert [e["key"] for e in changes.resolved] == ["stock_cover:SIM-03"]
	assert memory["findings"] == {}
	changes, _ = run(memory, [], "2026-03-30")
	assert changes.resolved == []


def test_a_condition_of_a_watch_that_failed_this_run_is_not_resolved():
	_, memory = run({}, [finding()], "2026-03-01")
	_, memory = run(memory, [], "2026-03-02", computed=())
	changes, _ = run(memory, [], "2026-03-30", computed=())
	assert changes.resolved == [] and changes.clearing == []


def test_a_finding_about_a_closed_month_is_never_resolved_nor_reported_again():
	month = finding(key="sales_forecast:2026-03", state="below the 80% range", kind=LASTING)
	changes, memory = run({}, [month], "2026-04-06", computed=("sales_forecast",))
	assert len(changes.new) == 1
	changes, memory = run(memory, [], "2026-05-04", computed=("sales_forecast",))
	assert not changes.anything
	changes, _ = run(memory, [month], "2026-05-11", computed=("sales_forecast",))
	assert changes.reported == []


def test_the_fingerprint_depends_on_what_and_which_state_only():
	assert finding(on_hand=1).fingerprint == finding(on_hand=99).fingerprint
	assert finding().fingerprint != finding(state="out of stock").fingerprint
	assert finding().fingerprint != finding(key="stock_cover:SIM-04").fingerprint
