// Noviz agent: render one structured response into DOM nodes.
//
// Plain script (no imports, no desk): the desk bundle includes it and the static browser
// test loads the very same file. Everything is built with DOM APIs and textContent; no
// string from a response is ever parsed as HTML, and only same-site /app/ links are made.
(function (root) {
	"use strict";

	const ns = (root.noviz_chat = root.noviz_chat || {});

	function el(tag, attrs, children) {
		const node = document.createElement(tag);
		for (const [key, value] of Object.entries(attrs || {})) {
			if (value === null || value === undefined || value === false) continue;
			if (key === "class") node.className = value;
			else if (key === "text") node.textContent = String(value);
			else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
			else node.setAttribute(key, value === true ? "" : String(value));
		}
		for (const child of [].concat(children || [])) {
			if (child === null || child === undefined || child === false) continue;
			node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
		}
		return node;
	}

	const t = (text, args) => {
		if (root.__) return root.__(text, args);
		return String(text).replace(/\{(\d+)\}/g, (_, i) => (args || [])[i]);
	};

	// A path is used as a link only when it stays inside the desk: no javascript:, no other hosts.
	function safe_path(path) {
		if (typeof path !== "string") return null;
		return /^\/app\/[A-Za-z0-9\-_%./ ]*$/.test(path) && !path.includes("//") && !path.includes("..")
			? path
			: null;
	}

	function slug(doctype) {
		return String(doctype || "")
			.toLowerCase()
			.replace(/[^a-z0-9]+/g, "-")
			.replace(/^-|-$/g, "");
	}

	function record_path(doctype, name) {
		if (!doctype || name === null || name === undefined || name === "") return null;
		return safe_path(`/app/${slug(doctype)}/${encodeURIComponent(String(name))}`);
	}

	// --- inline text: **bold** only, everything else literal ------------------------------

	function inline(text) {
		const frag = document.createDocumentFragment();
		const parts = String(text).split(/(\*\*[^*]+\*\*)/g);
		for (const part of parts) {
			if (!part) continue;
			if (part.startsWith("**") && part.endsWith("**") && part.length > 4) {
				frag.appendChild(el("strong", { text: part.slice(2, -2) }));
			} else {
				frag.appendChild(document.createTextNode(part));
			}
		}
		return frag;
	}

	// Paragraphs, bullet lists ("- ", "* ") and numbered lists ("1. "); nothing else is markup.
	function text_block(text) {
		const box = el("div", { class: "nz-text" });
		const blocks = String(text || "")
			.replace(/\r\n/g, "\n")
			.split(/\n\s*\n/);
		for (const block of blocks) {
			const lines = block.split("\n").filter((line) => line.trim() !== "");
			if (!lines.length) continue;
			let list = null;
			let para = null;
			for (const line of lines) {
				const bullet = line.match(/^\s*[-*•]\s+(.*)$/);
				const numbered = line.match(/^\s*\d+[.)]\s+(.*)$/);
				if (bullet || numbered) {
					const kind = bullet ? "ul" : "ol";
					if (!list || list.tagName.toLowerCase() !== kind) {
						list = el(kind);
						box.appendChild(list);
					}
					list.appendChild(el("li", {}, [inline((bullet || numbered)[1])]));
					para = null;
				} else {
					list = null;
					if (!para) {
						para = el("p");
						box.appendChild(para);
					} else {
						para.appendChild(el("br"));
					}
					para.appendChild(inline(line.replace(/^#+\s+/, "")));
				}
			}
		}
		return box;
	}

	// --- values ---------------------------------------------------------------------------

	function number_format(value, digits) {
		const n = Number(value);
		if (!Number.isFinite(n)) return value === null || value === undefined ? "" : String(value);
		return n.toLocaleString(undefined, {
			minimumFractionDigits: digits === undefined ? 0 : digits,
			maximumFractionDigits: digits === undefined ? 2 : digits,
		});
	}

	function format_value(value, column) {
		if (value === null || value === undefined) return "";
		const type = (column && column.type) || "text";
		if (type === "currency") {
			const formatted = number_format(value, 2);
			return column.currency ? `${column.currency} ${formatted}` : formatted;
		}
		if (type === "number") return number_format(value);
		if (type === "date" && root.frappe && frappe.datetime && frappe.datetime.str_to_user) {
			try {
				return frappe.datetime.str_to_user(String(value));
			} catch (e) {
				return String(value);
			}
		}
		if (typeof value === "object") return JSON.stringify(value);
		return String(value);
	}

	// --- blocks ---------------------------------------------------------------------------

	function table_block(table, ctx) {
		const columns = table.columns || [];
		const box = el("div", { class: "nz-table-block", "data-block": "table" });
		if (table.title) box.appendChild(el("div", { class: "nz-block-title", text: table.title }));
		const head = el(
			"tr",
			{},
			columns.map((c) =>
				el("th", {
					text: c.label || c.key,
					class: ["currency", "number"].includes(c.type) ? "nz-num" : null,
					scope: "col",
				})
			)
		);
		const body = el("tbody");
		for (const row of table.rows || []) {
			const cells = columns.map((column, index) => {
				const value = row[column.key];
				const shown = format_value(value, column);
				const cell = el("td", { class: ["currency", "number"].includes(column.type) ? "nz-num" : null });
				let href = null;
				if (column.type === "link") href = record_path(column.doctype, value);
				if (!href && index === 0) href = safe_path(row._link);
				if (href) cell.appendChild(el("a", { href, text: shown, class: "nz-link" }));
				else cell.textContent = shown;
				return cell;
			});
			body.appendChild(el("tr", {}, cells));
		}
		box.appendChild(
			el("div", { class: "nz-table-scroll" }, [el("table", { class: "nz-table" }, [el("thead", {}, [head]), body])])
		);
		const page = table.page;
		if (page && page.total !== undefined && page.total !== null) {
			box.appendChild(pager(table, ctx));
		}
		return box;
	}

	function pager(table, ctx) {
		const page = table.page;
		const size = Number(page.size) || (table.rows || []).length || 1;
		const number = Number(page.number) || 1;
		const pages = Math.max(1, Math.ceil(Number(page.total) / size));
		const first = (table.rows || []).length ? (number - 1) * size + 1 : 0;
		const last = first ? first + table.rows.length - 1 : 0;
		const bar = el("div", { class: "nz-pager" }, [
			el("span", { class: "nz-muted", text: t("{0}–{1} of {2}", [first, last, page.total]) }),
		]);
		if (pages > 1 && page.result_id && ctx.on_page) {
			const go = (target) => async (event) => {
				const buttons = bar.querySelectorAll("button");
				buttons.forEach((b) => (b.disabled = true));
				try {
					const next = await ctx.on_page(page.result_id, target);
					if (next) bar.parentNode.replaceWith(table_block(next, ctx));
				} catch (e) {
					buttons.forEach((b) => (b.disabled = false));
				}
			};
			bar.appendChild(
				el("button", {
					class: "btn btn-xs btn-default nz-prev",
					text: t("Previous"),
					disabled: number <= 1,
					onclick: go(number - 1),
				})
			);
			bar.appendChild(
				el("button", {
					class: "btn btn-xs btn-default nz-next",
					text: t("Next"),
					disabled: number >= pages,
					onclick: go(number + 1),
				})
			);
		}
		return bar;
	}

	function cards_block(cards) {
		const box = el("div", { class: "nz-cards", "data-block": "cards" });
		for (const card of cards) {
			const change = card.change === null || card.change === undefined ? null : String(card.change);
			const trend = change && /^\s*[-−]/.test(change) ? "down" : change ? "up" : null;
			const body = [
				el("div", { class: "nz-card-title", text: card.title || "" }),
				el("div", { class: "nz-card-value", text: format_value(card.value, { type: "text" }) }),
				change ? el("div", { class: `nz-card-change nz-${trend}`, text: change }) : null,
				card.subtitle ? el("div", { class: "nz-card-subtitle nz-muted", text: card.subtitle }) : null,
			];
			const href = safe_path(card.link);
			box.appendChild(href ? el("a", { class: "nz-card", href }, body) : el("div", { class: "nz-card" }, body));
		}
		return box;
	}

	function chart_block(chart, ctx) {
		const box = el("div", { class: "nz-chart", "data-block": "chart" });
		const plot = el("div", { class: "nz-chart-plot" });
		box.appendChild(plot);
		const layout = Object.assign({}, chart.layout || {}, {
			autosize: true,
			margin: Object.assign({ l: 48, r: 16, t: 40, b: 40 }, (chart.layout || {}).margin || {}),
			paper_bgcolor: "rgba(0,0,0,0)",
			plot_bgcolor: "rgba(0,0,0,0)",
		});
		const load = ctx.load_plotly ? ctx.load_plotly() : Promise.resolve(root.Plotly);
		Promise.resolve(load)
			.then((Plotly) => {
				if (!Plotly) throw new Error("Plotly is not available");
				// Plotly renders titles and labels as text (no HTML passthrough by default).
				return Plotly.newPlot(plot, chart.data || [], layout, {
					displaylogo: false,
					responsive: true,
					modeBarButtonsToRemove: ["sendDataToCloud"],
				});
			})
			.then(() => box.setAttribute("data-rendered", "1"))
			.catch((error) => {
				plot.replaceWith(el("div", { class: "nz-muted", text: t("The chart could not be drawn: {0}", [error.message]) }));
				box.setAttribute("data-rendered", "0");
			});
		return box;
	}

	function values_table(values) {
		const body = el("tbody");
		for (const [key, value] of Object.entries(values || {})) {
			let shown;
			if (Array.isArray(value) && value.length && typeof value[0] === "object") {
				const keys = Array.from(new Set(value.flatMap((row) => Object.keys(row || {}))));
				shown = el("table", { class: "nz-table nz-subtable" }, [
					el("thead", {}, [el("tr", {}, keys.map((k) => el("th", { text: k })))]),
					el(
						"tbody",
						{},
						value.map((row) => el("tr", {}, keys.map((k) => el("td", { text: format_value((row || {})[k]) }))))
					),
				]);
			} else {
				shown = document.createTextNode(format_value(value));
			}
			body.appendChild(el("tr", {}, [el("th", { text: key, scope: "row" }), el("td", {}, [shown])]));
		}
		return el("table", { class: "nz-table nz-values" }, [body]);
	}

	function proposal_block(proposal, ctx) {
		const box = el("div", { class: "nz-proposal", "data-block": "proposal" });
		const target = [proposal.doctype, proposal.name].filter(Boolean).join(" ");
		const href = proposal.name ? record_path(proposal.doctype, proposal.name) : null;
		box.appendChild(
			el("div", { class: "nz-proposal-head" }, [
				el("span", { class: "nz-badge", text: proposal.action || "change" }),
				el("span", { class: "nz-block-title", text: proposal.title || t("Proposed change") }),
			])
		);
		if (target) {
			box.appendChild(
				el("div", { class: "nz-muted" }, [href ? el("a", { href, text: target, class: "nz-link" }) : target])
			);
		}
		if (proposal.summary) box.appendChild(el("p", { class: "nz-proposal-summary", text: proposal.summary }));
		if (proposal.warning && proposal.warning.message) {
			// The turn read data that talks like an instruction: say so before the person confirms.
			box.appendChild(el("div", { class: "nz-proposal-warning", role: "alert", text: proposal.warning.message }));
		}
		if (proposal.values && Object.keys(proposal.values).length) box.appendChild(values_table(proposal.values));
		if (proposal.expires) {
			const when = new Date(Number(proposal.expires) * 1000);
			box.appendChild(
				el("div", {
					class: "nz-muted nz-expires",
					text: t("Nothing is written until you confirm. Valid until {0}.", [when.toLocaleTimeString()]),
				})
			);
		}
		const status = el("div", { class: "nz-proposal-status", role: "status" });
		if (proposal.settled) {
			// A reopened conversation: this proposal was already confirmed, cancelled or closed.
			const said = { confirmed: t("Confirmed."), cancelled: t("Cancelled.") }[proposal.settled];
			status.textContent = said || t("No longer open.");
			box.classList.add("nz-" + (proposal.settled === "confirmed" ? "confirmed" : "cancelled"));
			box.appendChild(el("div", { class: "nz-actions" }, [status]));
			return box;
		}
		const confirm = el("button", { class: "btn btn-sm btn-primary nz-confirm", text: t("Confirm") });
		const cancel = el("button", { class: "btn btn-sm btn-default nz-cancel", text: t("Cancel") });
		const settle = (action) => async () => {
			confirm.disabled = cancel.disabled = true;
			status.textContent = action === "confirm" ? t("Saving…") : t("Cancelling…");
			try {
				const handler = action === "confirm" ? ctx.on_confirm : ctx.on_cancel;
				await handler(proposal.token, proposal);
				status.textContent = action === "confirm" ? t("Confirmed.") : t("Cancelled.");
				box.classList.add(action === "confirm" ? "nz-confirmed" : "nz-cancelled");
			} catch (error) {
				status.textContent = (error && error.message) || t("That did not work.");
				confirm.disabled = cancel.disabled = false;
			}
		};
		confirm.addEventListener("click", settle("confirm"));
		cancel.addEventListener("click", settle("cancel"));
		box.appendChild(el("div", { class: "nz-actions" }, [confirm, cancel, status]));
		return box;
	}

	function refusal_block(refusal) {
		return el("div", { class: "nz-refusal", "data-block": "refusal" }, [
			el("div", { class: "nz-block-title", text: t("The system refused this") }),
			el("blockquote", { class: "nz-quote", text: refusal.message || "" }),
		]);
	}

	function error_block(error) {
		return el("div", { class: "nz-error", "data-block": "error", role: "alert" }, [
			el("div", { class: "nz-error-message", text: error.message || t("Something went wrong.") }),
			error.hint ? el("div", { class: "nz-error-hint", text: error.hint }) : null,
		]);
	}

	function flags_block(flags) {
		return el(
			"ul",
			{ class: "nz-flags", "data-block": "flags" },
			flags.map((flag) =>
				el("li", { title: flag.message || "" }, [
					el("span", { class: "nz-flag-icon", "aria-hidden": "true", text: "⚠" }),
					" ",
					el("strong", { text: String(flag.value) }),
					`: ${flag.message || t("not found in the data the agent looked at")}`,
				])
			)
		);
	}

	function sources_block(sources) {
		return el("div", { class: "nz-sources nz-muted", "data-block": "sources" }, [
			t("Sources: "),
			sources.map((s) => [s.title, s.section].filter(Boolean).join(" › ")).join("; "),
		]);
	}

	const THUMBS = {
		up: "M14 9V5a3 3 0 0 0-3-3l-4 9v11h11.28a2 2 0 0 0 2-1.7l1.38-9a2 2 0 0 0-2-2.3zM7 22H4a2 2 0 0 1-2-2v-7a2 2 0 0 1 2-2h3",
		down: "M10 15v4a3 3 0 0 0 3 3l4-9V2H5.72a2 2 0 0 0-2 1.7l-1.38 9a2 2 0 0 0 2 2.3zm7-13h2.67A2.31 2.31 0 0 1 22 4v7a2.31 2.31 0 0 1-2.33 2H17",
	};

	// Drawn, not an emoji: the icon looks the same whatever fonts the machine has.
	function thumb(direction) {
		const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
		svg.setAttribute("viewBox", "0 0 24 24");
		svg.setAttribute("width", "14");
		svg.setAttribute("height", "14");
		svg.setAttribute("aria-hidden", "true");
		svg.setAttribute("class", "nz-thumb");
		const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
		path.setAttribute("d", THUMBS[direction]);
		svg.appendChild(path);
		return svg;
	}

	function feedback_block(log, ctx) {
		const box = el("div", { class: "nz-feedback", "data-block": "feedback" });
		const note = el("span", { class: "nz-muted nz-feedback-note", role: "status" });
		const rate = (rating) => async () => {
			box.querySelectorAll("button").forEach((b) => b.classList.remove("nz-active"));
			try {
				let comment = null;
				if (rating === "down" && ctx.ask_comment) comment = await ctx.ask_comment();
				await ctx.on_feedback(log, rating, comment);
				box.querySelector(rating === "up" ? ".nz-up" : ".nz-down").classList.add("nz-active");
				note.textContent = t("Thanks for the feedback.");
			} catch (error) {
				note.textContent = (error && error.message) || "";
			}
		};
		for (const [rating, label] of [["up", t("Helpful")], ["down", t("Not helpful")]]) {
			const button = el("button", { class: `btn btn-xs btn-default nz-${rating}`, "aria-label": label, title: label, onclick: rate(rating) });
			button.appendChild(thumb(rating));
			box.appendChild(button);
		}
		box.appendChild(note);
		return box;
	}

	// A built analysis or dashboard kept on the server for this person, offered as a PDF.
	function pdf_block(result_id) {
		const href = "/api/method/noviz_agent.api.dashboard_pdf?result_id=" + encodeURIComponent(String(result_id));
		return el("div", { class: "nz-pdf", "data-block": "pdf" }, [
			el("a", { class: "btn btn-xs btn-default nz-pdf-link", href, download: true, text: t("Download PDF") }),
		]);
	}

	// A finished background analysis as a response: its KPIs as cards, observations as text, its chart.
	function analysis_response(answer) {
		answer = answer || {};
		if (answer.status === "error") {
			return { type: "error", error: { message: answer.error || t("The analysis could not be finished.") } };
		}
		const cards = (answer.kpis || []).slice(0, 8).map((kpi) => {
			const card = { title: String(kpi.label || ""), value: kpi.value };
			if (kpi.unit) card.subtitle = String(kpi.unit);
			if (kpi.change !== null && kpi.change !== undefined) card.change = kpi.change;
			return card;
		});
		// Observations arrive as plain strings; bullets keep them readable and they stay text.
		const lines = (answer.observations || []).map((o) => "- " + String(o).replace(/\n/g, " "));
		const title = answer.title ? String(answer.title) : t("Analysis");
		return {
			type: "cards",
			text: [t("{0} is ready.", [title]), ...lines].join("\n"),
			cards,
			chart: answer.chart && Array.isArray(answer.chart.data) ? answer.chart : null,
			result_id: answer.result_id || null,
		};
	}

	// The whole answer, in reading order: what went wrong first, then text, data, and the decision.
	function response(resp, ctx) {
		ctx = ctx || {};
		resp = resp || {};
		const box = el("div", { class: `nz-response nz-type-${resp.type || "text"}`, "data-type": resp.type || "text" });
		if (resp.refusal) box.appendChild(refusal_block(resp.refusal));
		if (resp.error) box.appendChild(error_block(resp.error));
		if (resp.text) box.appendChild(text_block(resp.text));
		if (resp.cards && resp.cards.length) box.appendChild(cards_block(resp.cards));
		if (resp.table && (resp.table.rows || []).length) box.appendChild(table_block(resp.table, ctx));
		if (resp.chart && (resp.chart.data || []).length) box.appendChild(chart_block(resp.chart, ctx));
		const analysed = (resp.cards && resp.cards.length) || (resp.chart && (resp.chart.data || []).length);
		if (resp.result_id && analysed) box.appendChild(pdf_block(resp.result_id));
		if (resp.proposal) box.appendChild(proposal_block(resp.proposal, ctx));
		if (resp.flags && resp.flags.length) box.appendChild(flags_block(resp.flags));
		if (resp.sources && resp.sources.length) box.appendChild(sources_block(resp.sources));
		if (ctx.log && ctx.on_feedback) box.appendChild(feedback_block(ctx.log, ctx));
		return box;
	}

	ns.render = {
		el,
		response,
		text_block,
		table_block,
		cards_block,
		chart_block,
		proposal_block,
		pdf_block,
		analysis_response,
		refusal_block,
		error_block,
		format_value,
		safe_path,
		record_path,
	};
})(typeof window !== "undefined" ? window : globalThis);
