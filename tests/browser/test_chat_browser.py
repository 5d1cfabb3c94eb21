"""The chat's JavaScript in a real headless Chromium, fed with answers built by the server's own builders.

Every response type at desktop and phone width; formatted values, labels, editable proposals,
chart text that never overlaps, progress events, conversations and the German translation.
"""

from __future__ import annotations

import json

import pytest

TYPES = ("text", "table", "cards", "chart", "proposal", "refusal", "error")
WIDTHS = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}


def shot(page, node, artifacts, name):
	node.scroll_into_view_if_needed()
	node.screenshot(path=str(artifacts / f"{name}.png"))


def boxes_overlap(a, b) -> bool:
	return not (
		a["x"] + a["width"] <= b["x"]
		or b["x"] + b["width"] <= a["x"]
		or a["y"] + a["height"] <= b["y"]
		or b["y"] + b["height"] <= a["y"]
	)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("kind", TYPES)
def test_each_response_type_renders_at_desktop_and_phone_width(page, artifacts, kind, width):
	page.set_viewport_size(WIDTHS[width])
	node = page.evaluate_handle(f"window.show({kind!r})").as_element()
	response = node.query_selector(".nz-response")
	assert response.get_attribute("data-type") == kind
	if kind == "chart":
		page.wait_for_selector(".nz-chart[data-rendered='1']")
	# Nothing sticks out of the window: wide tables scroll inside their own box.
	assert page.evaluate("document.documentElement.scrollWidth") <= WIDTHS[width]["width"]
	shot(page, node, artifacts, f"type-{kind}-{width}")
	assert page.errors == []


def test_text_is_escaped_and_bold_is_the_only_markup(page):
	node = page.evaluate_handle("window.show('text')").as_element()
	assert node.query_selector("strong").inner_text() == "overdue"
	assert len(node.query_selector_all(".nz-text li")) == 2
	assert "<script>window.pwned=1</script>" in node.inner_text()
	assert node.query_selector("script") is None
	assert "Receivables › Overdue invoices" in node.query_selector(".nz-sources").inner_text()


def test_table_has_labels_from_meta_formatted_currency_and_record_links(page):
	node = page.evaluate_handle("window.show('table')").as_element()
	headers = [th.inner_text() for th in node.query_selector_all(".nz-table th")]
	assert headers == ["ID", "Customer", "Date", "Grand Total", "Outstanding Amount"]
	links = [a.get_attribute("href") for a in node.query_selector_all(".nz-table a")]
	assert links[0] == "/app/sales-invoice/ACC-SINV-2026-00001"
	assert links[1] == "/app/customer/West%20View%20Software%20Ltd."
	cells = node.query_selector_all(".nz-table tbody tr:nth-child(1) td")
	assert cells[2].inner_text() == "Jan 1, 2026"
	assert cells[3].inner_text() == "$1,000.50" and cells[4].inner_text() == "$250.00"
	assert cells[3].evaluate("n => getComputedStyle(n).textAlign") == "right"
	xss = node.query_selector_all(".nz-table tbody tr:nth-child(2) td")[1]
	assert xss.inner_text() == "<img src=x onerror=window.pwned=1>"
	assert node.query_selector(".nz-table img") is None and page.evaluate("window.pwned") is None


def test_show_more_appends_pages_from_the_kept_result_and_offers_export(page, artifacts):
	node = page.evaluate_handle("window.show('table')").as_element()
	assert "1–3 of 7" in node.query_selector(".nz-pager").inner_text()
	csv = node.query_selector(".nz-export-csv").get_attribute("href")
	xlsx = node.query_selector(".nz-export-xlsx").get_attribute("href")
	result_id = page.evaluate("window.canned.table.table.page.result_id")
	assert csv.endswith(f"export_result?result_id={result_id}&file_format=csv")
	assert xlsx.endswith("&file_format=xlsx")
	node.query_selector(".nz-more").click()
	page.wait_for_function("document.querySelector('.nz-pager').innerText.includes('1–6 of 7')")
	node.query_selector(".nz-more").click()
	page.wait_for_function("document.querySelectorAll('.nz-table tbody tr').length === 7")
	assert node.query_selector(".nz-more") is None
	assert page.evaluate("window.api_calls.filter(c => c[0] === 'page').map(c => c[1].number)") == [2, 3]
	shot(page, node, artifacts, "table-show-more")


def test_cards_show_formatted_values_and_the_change_against_the_prior_period(page, artifacts):
	node = page.evaluate_handle("window.show('cards')").as_element()
	cards = node.query_selector_all(".nz-card")
	values = [c.query_selector(".nz-card-value").inner_text() for c in cards]
	assert values == ["$1,767,095.40", "58", "24.5%", "12.4 days"]
	changes = [c.query_selector(".nz-card-change") for c in cards[:3]]
	assert changes[0].inner_text().endswith("+395% vs Sep 2026")
	assert changes[0].get_attribute("data-direction") == "up"
	assert changes[1].inner_text().endswith("−4.9% vs Sep 2026")
	assert changes[1].get_attribute("data-direction") == "down"
	assert changes[2].inner_text().endswith("+3.5 pts vs Sep 2026")
	text = node.inner_text().lower()
	# Units are formatting, never words of their own.
	assert "currency" not in text and "count" not in text
	shot(page, node, artifacts, "cards")


def test_chart_text_never_overlaps_and_long_names_are_shortened(page, artifacts):
	node = page.evaluate_handle("window.show('chart')").as_element()
	page.wait_for_selector(".nz-chart[data-rendered='1']")
	legend = node.query_selector(".legend").bounding_box()
	title = node.query_selector(".gtitle").bounding_box()
	ticks = [t.bounding_box() for t in node.query_selector_all(".xtick text")]
	assert len(ticks) == 8
	for box in ticks:
		assert not boxes_overlap(legend, box) and not boxes_overlap(title, box)
	assert not boxes_overlap(legend, title)
	for a, b in zip(ticks, ticks[1:], strict=False):
		assert not boxes_overlap(a, b)
	labels = [t.text_content() for t in node.query_selector_all(".xtick text")]
	assert labels[0] == "Palmer Produc…" and "Globex" in labels
	colours = page.evaluate(
		"Array.from(document.querySelectorAll('.nz-chart .point path')).slice(0, 1)"
		".map(p => getComputedStyle(p).fill)"
	)
	assert colours == ["rgb(0, 114, 178)"]  # Okabe-Ito blue
	assert "42" in node.query_selector(".nz-flags").inner_text()
	shot(page, node, artifacts, "chart")


def test_chart_opens_large_and_escape_closes_it(page, artifacts):
	node = page.evaluate_handle("window.show('chart')").as_element()
	page.wait_for_selector(".nz-chart[data-rendered='1']")
	node.query_selector(".nz-chart-open").click()
	overlay = page.wait_for_selector(".nz-chart-overlay[data-rendered='1']")
	assert overlay.query_selector(".nz-chart-large-plot").bounding_box()["width"] > 900
	labels = [t.text_content() for t in overlay.query_selector_all(".xtick text")]
	assert "Palmer Productions Inte…" in labels
	page.screenshot(path=str(artifacts / "chart-large.png"))
	page.keyboard.press("Escape")
	page.wait_for_selector(".nz-chart-overlay", state="detached")
	assert page.evaluate("document.activeElement.classList.contains('nz-chart-open')")


def test_proposal_shows_labels_links_and_effect(page, artifacts):
	node = page.evaluate_handle("window.show('proposal')").as_element()
	rows = {r.get_attribute("data-key"): r for r in node.query_selector_all(".nz-values tr")}
	assert rows["customer_name"].query_selector("th").inner_text().startswith("Customer Name")
	assert rows["customer_name"].query_selector(".nz-required") is not None
	assert "customer_name" not in node.inner_text()
	link = rows["territory"].query_selector("a")
	assert (link.inner_text(), link.get_attribute("href")) == ("North", "/app/territory/North")
	effect = node.query_selector(".nz-proposal-effect").inner_text()
	assert effect == "Creates customer 'Acme Ltd' with territory North and customer group Commercial."
	assert node.inner_text().count("Create a new Customer") <= 1
	shot(page, node, artifacts, "proposal")


def test_an_edited_proposal_is_confirmed_with_its_new_values(page, artifacts):
	node = page.evaluate_handle("window.show('proposal')").as_element()
	old = page.evaluate("window.canned.proposal.proposal.token")
	new = page.evaluate("window.FIXTURES.edited_proposal.token")
	node.query_selector(".nz-edit").click()
	box = page.wait_for_selector(".nz-edit-input[data-key='customer_name']")
	assert page.evaluate("document.activeElement.dataset.key") == "customer_name"
	box.fill("Acme Trading Ltd")
	shot(page, node, artifacts, "proposal-editing")
	node.query_selector(".nz-save").click()
	page.wait_for_function("window.api_calls.some(c => c[0] === 'edit_proposal')")
	edit = page.evaluate("window.api_calls.find(c => c[0] === 'edit_proposal')[1]")
	assert edit["token"] == old and edit["values"] == {"customer_name": "Acme Trading Ltd"}
	fresh = page.wait_for_selector(".nz-proposal:has(.nz-proposal-effect:text('Acme Trading Ltd'))")
	assert "Acme Trading Ltd" in fresh.query_selector(".nz-values").inner_text()
	fresh.query_selector(".nz-confirm").click()
	page.wait_for_function("window.api_calls.some(c => c[0] === 'confirm')")
	assert page.evaluate("window.api_calls.filter(c => c[0] === 'confirm').map(c => c[1].token)") == [new]
	last = page.query_selector_all(".nz-agent")[-1]
	assert last.query_selector("a.nz-card").get_attribute("href") == "/app/customer/Acme%20Trading%20Ltd"
	shot(page, page.query_selector(".nz-messages"), artifacts, "proposal-edited-confirmed")


def test_an_edit_the_server_refuses_keeps_the_proposal_and_says_why(page):
	node = page.evaluate_handle("window.show('proposal')").as_element()
	node.query_selector(".nz-edit").click()
	page.fill(".nz-edit-input[data-key='customer_name']", "")
	node.query_selector(".nz-save").click()
	page.wait_for_function("document.querySelector('.nz-proposal-status').innerText.includes('too short')")
	assert node.query_selector(".nz-save").is_enabled()


def test_update_shows_before_and_after_and_the_warning_before_confirm(page, artifacts):
	node = page.evaluate_handle("window.show('update')").as_element()
	row = node.query_selector(".nz-values tr[data-key='territory']")
	assert row.query_selector(".nz-before").inner_text().endswith("North")
	assert row.query_selector(".nz-after").inner_text().endswith("South")
	warning = node.query_selector(".nz-proposal-warning")
	text = warning.inner_text()
	assert "the result of todo.get (TD-0007)" in text and "Ignore all previous instructions" in text
	# The source is said once, in words: never an object printed as JSON.
	assert text.count("TD-0007") == 1 and "{" not in text
	order = page.evaluate(
		"(() => { const w = document.querySelector('.nz-proposal-warning'); const c = document.querySelector('.nz-confirm');"
		" return !!(w.compareDocumentPosition(c) & Node.DOCUMENT_POSITION_FOLLOWING); })()"
	)
	assert order
	shot(page, node, artifacts, "proposal-update")


def test_proposal_cancel(page):
	node = page.evaluate_handle("window.show('proposal')").as_element()
	node.query_selector(".nz-cancel").click()
	page.wait_for_function("document.querySelector('.nz-proposal-status').innerText === 'Cancelled.'")
	assert "Nothing was changed" in page.query_selector_all(".nz-agent")[-1].inner_text()


def test_progress_steps_are_shown_before_the_answer(page, artifacts):
	page.evaluate("window.step_delay_ms = 150; window.send_delay_ms = 400")
	box = page.query_selector(".nz-input")
	box.fill("show me the table of unpaid invoices")
	box.press("Enter")
	page.wait_for_function("document.querySelectorAll('.nz-step').length === 2")
	steps = [s.inner_text() for s in page.query_selector_all(".nz-step")]
	assert steps[0].startswith("Reading sales invoices…") and "step 1 of" not in steps[0]
	assert steps[1].startswith("Computing monthly revenue trend…")
	assert page.query_selector(".nz-agent") is None
	assert "should.not.show" not in page.query_selector(".nz-progress").inner_text()
	page.screenshot(path=str(artifacts / "progress.png"))
	page.wait_for_selector(".nz-agent .nz-table")
	assert page.query_selector(".nz-progress").is_hidden()
	assert box.input_value() == ""
	box.fill("and as cards")
	box.press("Enter")
	page.wait_for_function("window.api_calls.filter(c => c[0] === 'send').length === 2")
	assert page.evaluate("window.api_calls.filter(c => c[0] === 'send')[1][1].conversation") == "conv1"


def test_a_background_turn_streams_its_text_and_answers_by_event(page):
	page.evaluate("window.background_turns = true; window.send_delay_ms = 300")
	page.fill(".nz-input", "show cards")
	page.press(".nz-input", "Enter")
	page.wait_for_function(
		"(document.querySelector('.nz-stream-text') || {}).textContent?.startsWith('Selling')"
	)
	page.wait_for_selector(".nz-agent:not(.nz-streaming) .nz-cards")
	assert page.query_selector(".nz-streaming") is None
	assert len(page.query_selector_all(".nz-agent .nz-response")) == 1


def test_stop_ends_a_running_turn(page):
	page.evaluate("window.background_turns = true; window.send_delay_ms = 5000")
	page.fill(".nz-input", "show cards")
	page.press(".nz-input", "Enter")
	stop = page.wait_for_selector(".nz-stop:not([hidden])")
	stop.click()
	page.wait_for_selector(".nz-agent .nz-error")
	turn = page.evaluate("window.api_calls.find(c => c[0] === 'send')[1].turn")
	assert page.evaluate("window.api_calls.find(c => c[0] === 'stop')[1]") == {"turn": turn}
	assert "Stopped" in page.query_selector(".nz-agent .nz-error").inner_text()
	assert page.query_selector(".nz-stop").is_hidden() and page.query_selector(".nz-send").is_enabled()


@pytest.mark.parametrize(("connected", "asks"), [(True, 2), (False, 12)])
def test_a_waiting_chat_asks_for_the_answer_rarely_while_realtime_is_connected(page, connected, asks):
	# The answer never comes as an event here: the chat's own asking is what is counted.
	page.clock.install()
	page.reload()
	page.wait_for_function("window.chat !== undefined")
	page.evaluate(
		f"window.background_turns = true; window.stopped = true; window.realtime_up = {str(connected).lower()}"
	)
	page.fill(".nz-input", "show cards")
	page.press(".nz-input", "Enter")
	page.wait_for_selector(".nz-stop:not([hidden])")
	page.wait_for_function("window.api_calls.some(c => c[0] === 'send')")
	page.clock.run_for(1000)
	assert page.evaluate("window.api_calls.filter(c => c[0] === 'turn_state').length") == 0
	page.clock.run_for(30500)  # 15 s and 30 s when connected; every 2.5 s when not
	assert page.evaluate("window.api_calls.filter(c => c[0] === 'turn_state').length") == asks


def test_a_turn_running_at_reload_is_picked_up_again(page):
	page.evaluate(
		"sessionStorage.setItem('noviz_agent_pending_turn', JSON.stringify({turn: 'T9', conversation: 'conv1',"
		" question: 'show cards'}))"
	)
	page.add_init_script(
		"window.addEventListener('DOMContentLoaded', () => { window.turn_state_answer = {status: 'done',"
		" response: window.FIXTURES.answers.cards, conversation: 'conv1', log: 'AIL-9'}; });"
	)
	page.reload()
	page.wait_for_selector(".nz-agent .nz-cards")
	assert page.query_selector(".nz-user .nz-bubble").inner_text() == "show cards"
	assert page.evaluate("window.api_calls.find(c => c[0] === 'turn_state')[1]") == {"turn": "T9"}
	assert page.evaluate("sessionStorage.getItem('noviz_agent_pending_turn')") is None


def test_shift_enter_is_a_new_line_and_oversize_is_refused_locally(page):
	box = page.query_selector(".nz-input")
	box.type("line one")
	box.press("Shift+Enter")
	box.type("line two")
	assert box.input_value() == "line one\nline two"
	page.evaluate("window.chat.send('x'.repeat(201))")
	assert "the limit is 200" in page.query_selector(".nz-agent .nz-error").inner_text()
	assert page.evaluate("window.api_calls.filter(c => c[0] === 'send').length") == 0


def test_conversations_search_rename_pin_and_delete(page, artifacts):
	page.wait_for_selector(".nz-conv")
	titles = [b.inner_text() for b in page.query_selector_all(".nz-conv")]
	assert titles == ["Unpaid invoices", "Sales by month <b>bold?</b>"]
	page.fill(".nz-search", "sales")
	page.wait_for_function("document.querySelectorAll('.nz-conv').length === 1")
	page.fill(".nz-search", "")
	page.wait_for_function("document.querySelectorAll('.nz-conv').length === 2")
	page.click("button[aria-label='Pin Sales by month <b>bold?</b>']")
	page.wait_for_function("document.querySelector('.nz-conv').innerText.startsWith('Sales by month')")
	page.evaluate("window.next_title = 'Q4 sales'")
	page.click("button[aria-label='Rename Sales by month <b>bold?</b>']")
	page.wait_for_function("document.querySelector('.nz-conv').innerText === 'Q4 sales'")
	shot(page, page.query_selector(".nz-conversations"), artifacts, "conversations")
	page.click("button[aria-label='Delete Unpaid invoices']")
	page.wait_for_function("document.querySelectorAll('.nz-conv').length === 1")
	calls = page.evaluate("window.api_calls.filter(c => c[0].endsWith('_conversation')).map(c => c[0])")
	assert calls == ["pin_conversation", "rename_conversation", "delete_conversation"]
	page.query_selector(".nz-conv").click()
	page.wait_for_selector(".nz-agent .nz-table")


def test_every_control_has_an_accessible_name_and_the_chat_works_by_keyboard(page):
	page.evaluate("window.show('proposal'); window.show('chart'); window.show('table')")
	unnamed = page.evaluate(
		"Array.from(document.querySelectorAll('.nz-chat button, .nz-chat a, .nz-chat input, .nz-chat textarea'))"
		".filter(n => !(n.getAttribute('aria-label') || n.textContent.trim() || n.title ||"
		" (n.id && document.querySelector(`label[for='${n.id}']`)))).map(n => n.outerHTML)"
	)
	assert unnamed == []
	page.focus(".nz-input")
	page.keyboard.type("show cards")
	page.keyboard.press("Enter")
	page.wait_for_selector(".nz-agent .nz-cards >> nth=-1")
	assert page.evaluate("document.activeElement.classList.contains('nz-input')")


def test_drawer_at_phone_width_and_escape_closes(page, artifacts):
	page.set_viewport_size({"width": 390, "height": 844})
	page.click("#open-drawer")
	drawer = page.wait_for_selector(".nz-drawer:not([hidden])")
	box = drawer.bounding_box()
	assert box["x"] >= 0 and box["x"] + box["width"] <= 390
	assert page.evaluate("document.activeElement.classList.contains('nz-input')")
	page.keyboard.type("show proposal")
	page.keyboard.press("Enter")
	page.wait_for_selector(".nz-drawer .nz-proposal")
	assert page.evaluate("document.querySelector('.nz-drawer').scrollWidth") <= 390
	page.screenshot(path=str(artifacts / "drawer-phone.png"))
	page.keyboard.press("Escape")
	page.wait_for_selector(".nz-drawer", state="hidden")
	assert page.evaluate("document.activeElement.id") == "open-drawer"
	assert page.errors == []


def test_a_settled_proposal_in_a_reopened_conversation_has_no_buttons(page):
	node = page.evaluate_handle(
		"""(() => {
			const response = JSON.parse(JSON.stringify(window.canned.proposal));
			delete response.proposal.token;
			response.proposal.settled = "confirmed";
			const node = noviz_chat.render.response(response, {});
			document.body.appendChild(node);
			return node;
		})()"""
	).as_element()
	assert node.query_selector(".nz-confirm") is None and node.query_selector(".nz-edit") is None
	assert node.query_selector(".nz-proposal-status").inner_text() == "Confirmed."
	assert "Acme Ltd" in node.query_selector(".nz-values").inner_text()


def test_an_answer_stored_before_typed_fields_still_renders(page):
	legacy = {
		"type": "proposal",
		"text": "",
		"proposal": {
			"token": "a.b",
			"action": "create",
			"doctype": "ToDo",
			"values": {"description": "Call"},
		},
		"cards": [{"title": "Revenue", "value": "12,500.00", "change": "-4.0%"}],
	}
	node = page.evaluate_handle(
		f"(() => {{ const n = noviz_chat.render.response({json.dumps(legacy)}, {{}}); document.body.appendChild(n); return n; }})()"
	).as_element()
	assert "Call" in node.query_selector(".nz-values").inner_text()
	assert node.query_selector(".nz-card-change").get_attribute("data-direction") == "down"


def test_a_realtime_analysis_renders_the_built_response_with_pdf_and_export(page, artifacts):
	page.evaluate("window.deliver_analysis(window.FIXTURES.analysis_event)")
	node = page.wait_for_selector(".nz-agent .nz-cards")
	message = page.query_selector_all(".nz-agent")[-1]
	values = [c.inner_text() for c in message.query_selector_all(".nz-card-value")]
	assert values == ["$1,767,095.40", "58"]
	text = message.query_selector(".nz-text").inner_text()
	assert "Monthly sales <i>trend</i> is ready." in text
	assert message.query_selector("script, i, b") is None
	page.wait_for_selector(".nz-agent .nz-chart[data-rendered='1']")
	link = message.query_selector(".nz-pdf-link")
	assert link.get_attribute("href") == "/api/method/noviz_agent.api.dashboard_pdf?result_id=a_x%26y%3D1"
	assert (
		message.query_selector(".nz-export-xlsx")
		.get_attribute("href")
		.endswith("result_id=a_x%26y%3D1&file_format=xlsx")
	)
	assert page.evaluate("window.pwned") is None
	shot(page, node, artifacts, "realtime-analysis")
	page.evaluate("window.deliver_analysis(window.FIXTURES.analysis_error)")
	last = page.query_selector_all(".nz-agent")[-1]
	assert last.query_selector(".nz-error").inner_text() == "No permission for Sales Invoice"
	assert page.errors == []


def test_a_german_speaking_person_reads_german(page, static_url, artifacts):
	page.goto(static_url + "?lang=de")
	page.wait_for_function("window.chat !== undefined")
	assert page.query_selector(".nz-send").inner_text() == "Senden"
	assert page.get_attribute(".nz-input", "aria-label") == "Nachricht"
	node = page.evaluate_handle("window.show('cards')").as_element()
	values = [c.inner_text().replace("\xa0", " ") for c in node.query_selector_all(".nz-card-value")]
	assert values[0] == "1.767.095,40 $" and values[3] == "12,4 Tage"
	assert node.query_selector(".nz-card-change").inner_text().endswith("+395% ggü. Sep 2026")
	proposal = page.evaluate_handle("window.show('proposal')").as_element()
	assert proposal.query_selector(".nz-confirm").inner_text() == "Bestätigen"
	assert proposal.query_selector(".nz-edit").inner_text() == "Werte bearbeiten"
	page.fill(".nz-input", "show table")
	page.press(".nz-input", "Enter")
	page.wait_for_selector(".nz-agent .nz-table >> nth=-1")
	page.wait_for_selector(".nz-more")  # drawn after the table; wait rather than race it
	assert page.query_selector_all(".nz-more")[-1].inner_text() == "Mehr anzeigen"
	shot(page, proposal, artifacts, "proposal-de")
	assert page.errors == []


def test_a_site_without_turn_state_drops_the_pending_turn_quietly(page):
	page.evaluate(
		"sessionStorage.setItem('noviz_agent_pending_turn', JSON.stringify({turn: 'T8', question: 'old'}))"
	)
	page.add_init_script(
		"window.turn_state_answer = Promise.reject(new Error('no such method')); window.turn_state_answer.catch(() => {});"
	)
	page.reload()
	page.wait_for_function("sessionStorage.getItem('noviz_agent_pending_turn') === null")
	assert page.query_selector(".nz-user") is None and page.query_selector(".nz-agent") is None
	assert page.query_selector(".nz-send").is_enabled()


def test_full_page_at_phone_width_keeps_room_for_the_answers(page, artifacts):
	page.set_viewport_size({"width": 390, "height": 844})
	page.evaluate("document.querySelector('.nz-input').style.height = '400px'")  # a desk style making it tall
	node = page.evaluate_handle("window.show('table')").as_element()
	assert page.query_selector(".nz-messages").bounding_box()["height"] >= 0.4 * 844 - 1
	assert node.query_selector(".nz-table a").is_visible()
	assert page.query_selector(".nz-input").bounding_box()["height"] <= 0.3 * 844 + 1
	page.screenshot(path=str(artifacts / "page-phone.png"))


def test_shortened_names_that_would_look_alike_keep_their_ends(page):
	ticks = page.evaluate(
		"noviz_chat.render.chart_layout({data: [{type: 'bar', x: ['Seed Customer 01', 'Seed Customer 02', 'Globex'],"
		" y: [3, 2, 1]}], layout: {}}, false).layout.xaxis.ticktext"
	)
	assert ticks == ["Seed Cu…mer 01", "Seed Cu…mer 02", "Globex"]
	assert all(len(t) <= 14 for t in ticks)


def test_figures_name_their_company_currency_and_period(page):
	"""Cards that say "$363,000 total revenue" but not whose books: a person cannot tell one company's
	figures from another's. Cards, charts and tables carry company, currency and period."""
	from noviz_agent.connectors.dataset_reader import months_back
	from tests.browser.fixtures import TODAY

	start = months_back(TODAY, 24)
	for kind in ("cards", "chart"):
		node = page.evaluate_handle(f"window.show({kind!r})").as_element()
		scope = node.query_selector(".nz-scope").inner_text()
		assert scope.startswith("Noviz Trading · USD · "), scope
		assert f"{start:%b} {start.day}, {start.year}" in scope and "Dec 1, 2026" in scope, scope
		assert "(last period still running)" in scope and "Not included: Dev Company" in scope, scope
	table = page.evaluate_handle("window.show('table')").as_element()
	assert (
		table.query_selector(".nz-scope").inner_text()
		== "All companies you can read: Dev Company, Noviz Trading"
	)
	text = page.evaluate_handle("window.show('text')").as_element()
	assert text.query_selector(".nz-scope") is None
	assert page.errors == []


def test_a_proposal_is_valid_until_a_time_in_the_sites_time_zone_not_the_browsers(page):
	import datetime as dt
	from zoneinfo import ZoneInfo

	page.evaluate("noviz_chat.settings.time_zone = 'America/New_York'")
	expires = page.evaluate("window.FIXTURES.answers.proposal.proposal.expires")
	node = page.evaluate_handle("window.show('proposal')").as_element()
	shown = node.query_selector(".nz-expires").inner_text()
	local = dt.datetime.fromtimestamp(expires, ZoneInfo("America/New_York"))
	assert local.strftime("%I:%M %p") in shown, shown
	assert page.errors == []
