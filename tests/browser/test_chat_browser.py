"""The chat's JavaScript in a real headless Chromium: every response type rendered from canned answers."""

from __future__ import annotations

import pytest

TYPES = ("text", "table", "cards", "chart", "proposal", "refusal", "error")


def shot(page, node, artifacts, name):
	node.scroll_into_view_if_needed()
	node.screenshot(path=str(artifacts / f"{name}.png"))


@pytest.mark.parametrize("kind", TYPES)
def test_each_response_type_renders(page, artifacts, kind):
	node = page.evaluate_handle(f"window.show({kind!r})").as_element()
	response = node.query_selector(".nz-response")
	assert response.get_attribute("data-type") == kind
	if kind == "chart":
		page.wait_for_selector(".nz-chart[data-rendered]")
	shot(page, node, artifacts, f"type-{kind}")
	assert page.errors == []


def test_text_is_escaped_and_bold_is_the_only_markup(page):
	node = page.evaluate_handle("window.show('text')").as_element()
	assert node.query_selector("strong").inner_text() == "overdue"
	assert len(node.query_selector_all(".nz-text li")) == 2
	assert "<script>window.pwned=1</script>" in node.inner_text()
	assert node.query_selector("script") is None
	assert "Receivables › Overdue invoices" in node.query_selector(".nz-sources").inner_text()


def test_table_links_to_records_and_record_text_is_never_html(page):
	node = page.evaluate_handle("window.show('table')").as_element()
	links = [a.get_attribute("href") for a in node.query_selector_all(".nz-table a")]
	assert links[0] == "/app/sales-invoice/ACC-SINV-2026-00001"
	assert len(links) == 3
	cells = node.query_selector_all(".nz-table tbody tr:nth-child(3) td")
	assert cells[1].inner_text() == "<img src=x onerror=window.pwned=1>"
	assert node.query_selector(".nz-table img") is None
	assert cells[3].inner_text() == "3,000.50"
	assert page.evaluate("window.pwned") is None


def test_table_pages_through_the_server(page, artifacts):
	node = page.evaluate_handle("window.show('table')").as_element()
	assert node.query_selector(".nz-prev").is_disabled()
	assert "1–3 of 7" in node.query_selector(".nz-pager").inner_text()
	node.query_selector(".nz-next").click()
	page.wait_for_function("document.querySelector('.nz-pager').innerText.includes('4–6 of 7')")
	first = node.query_selector(".nz-table tbody tr td a")
	assert first.inner_text() == "ACC-SINV-2026-00004"
	assert page.evaluate("window.api_calls.filter(c => c[0] === 'page').map(c => c[1])") == [
		{"result_id": "r_invoices1", "number": 2}
	]
	shot(page, node, artifacts, "table-page-2")


def test_cards_link_only_inside_the_desk(page):
	node = page.evaluate_handle("window.show('cards')").as_element()
	cards = node.query_selector_all(".nz-card")
	assert len(cards) == 3
	assert cards[0].get_attribute("href") == "/app/sales-invoice"
	# A javascript: link from a response is dropped: the card renders, unlinked.
	assert cards[2].evaluate("n => n.tagName") == "DIV"
	assert "down" in cards[1].query_selector(".nz-card-change").get_attribute("class")


def test_chart_is_drawn_by_plotly(page):
	node = page.evaluate_handle("window.show('chart')").as_element()
	page.wait_for_selector(".nz-chart[data-rendered='1']")
	assert node.query_selector(".nz-chart .main-svg") is not None
	assert "Sales by month" in node.query_selector(".nz-chart").inner_text()
	assert "42" in node.query_selector(".nz-flags").inner_text()


def test_proposal_shows_values_and_confirm_runs_once(page, artifacts):
	node = page.evaluate_handle("window.show('proposal')").as_element()
	values = node.query_selector(".nz-values").inner_text()
	assert "Call Grant Plastics about ACC-SINV-2026-00003" in values and "High" in values
	confirm = node.query_selector(".nz-confirm")
	confirm.click()
	page.wait_for_function("document.querySelector('.nz-proposal-status').innerText === 'Confirmed.'")
	assert confirm.is_disabled() and node.query_selector(".nz-cancel").is_disabled()
	calls = page.evaluate("window.api_calls.filter(c => c[0] === 'confirm').map(c => c[1].token)")
	assert calls == ["AbCdEfGhIjKlMnOpQrStUv.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ"]
	last = page.query_selector_all(".nz-agent")[-1]
	assert last.query_selector("a.nz-card").get_attribute("href") == "/app/todo/TD-0001"
	shot(page, page.query_selector(".nz-messages"), artifacts, "proposal-confirmed")


def test_proposal_cancel(page):
	node = page.evaluate_handle("window.show('proposal')").as_element()
	node.query_selector(".nz-cancel").click()
	page.wait_for_function("document.querySelector('.nz-proposal-status').innerText === 'Cancelled.'")
	assert "Nothing was changed" in page.query_selector_all(".nz-agent")[-1].inner_text()


def test_refusal_is_quoted_verbatim_and_error_says_what_to_do(page):
	refusal = page.evaluate_handle("window.show('refusal')").as_element()
	assert refusal.query_selector("blockquote").inner_text() == (
		"No permission for Sales Invoice: You do not have enough permissions to access this resource."
	)
	error = page.evaluate_handle("window.show('error')").as_element()
	assert "ask your administrator" in error.query_selector(".nz-error-hint").inner_text()


def test_feedback_thumbs_send_the_rating(page):
	node = page.evaluate_handle("window.show('text')").as_element()
	node.query_selector(".nz-down").click()
	page.wait_for_function("window.api_calls.some(c => c[0] === 'feedback')")
	assert page.evaluate("window.api_calls.find(c => c[0] === 'feedback')[1]") == {
		"log": "AIL-text",
		"rating": "down",
		"comment": "the total looks wrong",
	}
	page.wait_for_selector(".nz-down.nz-active")


def test_enter_sends_and_progress_shows_only_this_turn(page, artifacts):
	page.evaluate("window.send_delay_ms = 400")
	box = page.query_selector(".nz-input")
	box.fill("show me the table of unpaid invoices")
	box.press("Enter")
	page.wait_for_selector(".nz-progress:not([hidden])")
	status = page.query_selector(".nz-progress").inner_text()
	assert "sales_invoice.list" in status and "step 1 of 8" in status and "should.not.show" not in status
	page.wait_for_selector(".nz-agent .nz-table")
	assert page.query_selector(".nz-user .nz-bubble").inner_text() == "show me the table of unpaid invoices"
	assert box.input_value() == ""
	assert page.evaluate("window.api_calls[0][1].conversation") is None
	# The next message continues the same conversation.
	box.fill("and as cards")
	box.press("Enter")
	page.wait_for_function("window.api_calls.filter(c => c[0] === 'send').length === 2")
	assert page.evaluate("window.api_calls.filter(c => c[0] === 'send')[1][1].conversation") == "conv1"
	page.wait_for_selector(".nz-agent .nz-cards")
	page.screenshot(path=str(artifacts / "full-page-conversation.png"))


def test_shift_enter_is_a_new_line_and_oversize_is_refused_locally(page):
	box = page.query_selector(".nz-input")
	box.type("line one")
	box.press("Shift+Enter")
	box.type("line two")
	assert box.input_value() == "line one\nline two"
	assert page.evaluate("window.api_calls.length") == 0
	page.evaluate("window.chat.send('x'.repeat(201))")
	assert "the limit is 200" in page.query_selector(".nz-agent .nz-error").inner_text()
	assert page.evaluate("window.api_calls.length") == 0


def test_conversation_list_is_text_and_reopens(page):
	page.wait_for_selector(".nz-conv")
	titles = [b.inner_text() for b in page.query_selector_all(".nz-conv")]
	assert titles == ["Unpaid invoices", "Sales by month <b>bold?</b>"]
	page.query_selector(".nz-conv").click()
	page.wait_for_selector(".nz-agent .nz-table")
	assert "nz-current" in page.query_selector(".nz-conv").get_attribute("class")


def test_drawer_opens_at_laptop_width_and_escape_closes(page, artifacts):
	page.set_viewport_size({"width": 1280, "height": 720})
	page.click("#open-drawer")
	drawer = page.wait_for_selector(".nz-drawer:not([hidden])")
	box = drawer.bounding_box()
	assert box["width"] <= 480 and box["x"] + box["width"] <= 1280
	assert page.evaluate("document.activeElement.classList.contains('nz-input')")
	page.keyboard.type("show cards")
	page.keyboard.press("Enter")
	page.wait_for_selector(".nz-drawer .nz-cards")
	page.screenshot(path=str(artifacts / "drawer.png"))
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
	assert node.query_selector(".nz-confirm") is None and node.query_selector(".nz-cancel") is None
	assert node.query_selector(".nz-proposal-status").inner_text() == "Confirmed."
	assert "Call Grant Plastics" in node.query_selector(".nz-values").inner_text()


def test_a_realtime_analysis_renders_as_an_agent_message_with_a_pdf_link(page, artifacts):
	page.evaluate(
		"""window.deliver_analysis({
			status: "ok", turn: "t1", key: "sales.monthly_trend", title: "Monthly sales <i>trend</i>",
			result_id: "a_x&y=1",
			kpis: [{label: "Revenue", value: "12,500.00", change: "-4.0%"}, {label: "<b>Orders</b>", value: 7}],
			observations: ["Sales fell in <script>window.pwned=1</script> November.", "Three customers give 80%."],
			chart: {data: [{type: "bar", x: ["Oct", "Nov"], y: [6500, 6000]}], layout: {title: {text: "Sales"}}},
		})"""
	)
	node = page.wait_for_selector(".nz-agent .nz-cards")
	message = page.query_selector_all(".nz-agent")[-1]
	cards = message.query_selector_all(".nz-card")
	assert [c.query_selector(".nz-card-title").inner_text() for c in cards] == ["Revenue", "<b>Orders</b>"]
	assert "down" in cards[0].query_selector(".nz-card-change").get_attribute("class")
	text = message.query_selector(".nz-text").inner_text()
	assert "Monthly sales <i>trend</i> is ready." in text
	assert len(message.query_selector_all(".nz-text li")) == 2
	assert message.query_selector("script, i, b") is None
	page.wait_for_selector(".nz-agent .nz-chart[data-rendered='1']")
	link = message.query_selector(".nz-pdf-link")
	assert link.get_attribute("href") == "/api/method/noviz_agent.api.dashboard_pdf?result_id=a_x%26y%3D1"
	assert page.evaluate("window.pwned") is None
	shot(page, node, artifacts, "realtime-analysis")
	# A failed job is shown as an error; a plain response without result_id offers no PDF.
	page.evaluate("window.deliver_analysis({status: 'error', error: 'No permission for Sales Invoice'})")
	last = page.query_selector_all(".nz-agent")[-1]
	assert last.query_selector(".nz-error").inner_text() == "No permission for Sales Invoice"
	cards_only = page.evaluate_handle("window.show('cards')").as_element()
	assert cards_only.query_selector(".nz-pdf-link") is None
	assert page.errors == []
