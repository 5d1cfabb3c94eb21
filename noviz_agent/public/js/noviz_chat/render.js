// Noviz agent: render one structured response into DOM nodes.
//
// Plain script (no imports, no desk): the desk bundle includes it and the static browser
// test loads the very same file. Everything is built with DOM APIs and textContent; no
// string from a response is ever parsed as HTML, and only same-site desk links are made.
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

	// The desk's own prefix for records: /app on Frappe 15, /desk on 16 (where /app answers with a
	// redirect that reloads the whole page). Asked of the desk's router, so links stay in the desk.
	function desk_prefix() {
		const router = root.frappe && root.frappe.router;
		if (router && typeof router.make_url === "function") {
			const made = String(router.make_url(["x"]) || "");
			const match = made.match(/^\/([a-z]+)\/x$/);
			if (match) return "/" + match[1];
		}
		return "/app";
	}

	// A path is used as a link only when it stays inside the desk: no javascript:, no other hosts.
	// Record paths come from the server as /app/... or /desk/...; they are drawn with this desk's prefix.
	function safe_path(path) {
		if (typeof path !== "string") return null;
		const match = path.match(/^\/(?:app|desk)(\/[A-Za-z0-9\-_%./ ]*)$/);
		if (!match || path.includes("//") || path.includes("..")) return null;
		return desk_prefix() + match[1];
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

	// --- values: as the desk shows them ----------------------------------------------------
	//
	// In the desk, frappe's own formatters (System Settings number format, the currency's
	// symbol and precision, the person's date format); elsewhere (the static test page) the
	// browser's Intl with the page's language. Formatters return text, never markup.

	const NUMERIC = ["Currency", "Float", "Int", "Percent"];
	const settings = () => ns.settings || {};

	function default_currency() {
		if (settings().currency) return settings().currency;
		const boot = root.frappe && frappe.boot && frappe.boot.sysdefaults;
		return (boot && boot.currency) || null;
	}

	function intl_number(n, digits, min_digits) {
		return n.toLocaleString(settings().locale || undefined, {
			minimumFractionDigits: min_digits === undefined ? 0 : min_digits,
			maximumFractionDigits: digits,
		});
	}

	function number_text(n, digits, fixed) {
		if (typeof root.format_number === "function") return root.format_number(n, null, digits);
		return intl_number(n, digits, fixed ? digits : 0);
	}

	function currency_text(n, currency) {
		currency = currency || default_currency();
		if (typeof root.format_currency === "function") return root.format_currency(n, currency);
		if (currency) {
			try {
				return n.toLocaleString(settings().locale || undefined, { style: "currency", currency });
			} catch (e) {
				/* an unknown code: number with the code */
				return `${currency} ${intl_number(n, 2, 2)}`;
			}
		}
		return intl_number(n, 2, 2);
	}

	function date_text(value) {
		if (root.frappe && frappe.datetime && frappe.datetime.str_to_user) {
			try {
				return frappe.datetime.str_to_user(String(value));
			} catch (e) {
				return String(value);
			}
		}
		const d = new Date(String(value) + (String(value).length === 10 ? "T00:00:00" : ""));
		return isNaN(d) ? String(value) : d.toLocaleDateString(settings().locale || undefined, { year: "numeric", month: "short", day: "numeric" });
	}

	// The time zone the desk shows times in: the person's own, else the site's (frappe.boot.time_zone);
	// the browser's only when neither is known.
	function time_zone() {
		const zone = root.frappe && frappe.boot && frappe.boot.time_zone;
		return settings().time_zone || (zone && (zone.user || zone.system)) || undefined;
	}

	// A moment (Unix seconds) as a time of day in that zone, with the zone named when it is not the browser's.
	function clock_text(seconds) {
		const when = new Date(seconds * 1000);
		const zone = time_zone();
		const options = { hour: "2-digit", minute: "2-digit" };
		try {
			const text = when.toLocaleTimeString(settings().locale || undefined, zone ? { ...options, timeZone: zone } : options);
			const own = Intl.DateTimeFormat().resolvedOptions().timeZone;
			return zone && zone !== own ? `${text} (${zone})` : text;
		} catch (e) {
			return when.toLocaleTimeString(settings().locale || undefined, options);
		}
	}

	// One value as text, by its ERPNext fieldtype (Currency, Percent, Int, Float, Date, Check, Link, Data).
	function format_value(value, spec) {
		if (value === null || value === undefined || value === "") return "";
		spec = spec || {};
		const type = spec.fieldtype || legacy_type(spec.type);
		const n = typeof value === "number" ? value : Number(value);
		if (NUMERIC.includes(type) && Number.isFinite(n) && String(value).trim() !== "") {
			if (type === "Currency") return currency_text(n, spec.currency);
			if (type === "Percent") return number_text(n, Math.abs(n) < 10 && !Number.isInteger(n) ? 1 : Number.isInteger(n) ? 0 : 1) + "%";
			if (type === "Int") return number_text(Math.round(n), 0);
			return number_text(n, Number.isInteger(n) ? 0 : 2, false);
		}
		if (type === "Date" || type === "Datetime") return date_text(value);
		if (type === "Check") return value ? t("Yes") : t("No");
		if (typeof value === "object") return JSON.stringify(value);
		return String(value);
	}

	// Older stored answers used lower-case kinds.
	function legacy_type(kind) {
		return { currency: "Currency", number: "Float", date: "Date", link: "Link" }[kind] || "Data";
	}

	function duration_text(value, unit, spec) {
		const shown = format_value(value, spec);
		if (unit === "days") return t("{0} days", [shown]);
		if (unit === "hours") return t("{0} h", [shown]);
		return shown;
	}

	// "+395% vs Sep 2026": sign, size and the period compared with; never a bare number.
	function change_text(card) {
		if (card.change === null || card.change === undefined || card.change === "") return null;
		const c = Number(card.change);
		if (!Number.isFinite(c)) return null;
		const sign = c > 0 ? "+" : c < 0 ? "−" : "±";
		const size = Math.abs(c);
		const digits = size >= 10 || Number.isInteger(size) ? 0 : 1;
		const amount = number_text(size, digits, digits > 0);
		const change = card.change_kind === "points" ? t("{0} pts", [sign + amount]) : sign + amount + "%";
		return card.compared_with ? t("{0} vs {1}", [change, card.compared_with]) : t("{0} vs the period before", [change]);
	}

	// --- blocks ---------------------------------------------------------------------------

	function is_numeric(column) {
		return NUMERIC.includes(column.fieldtype || legacy_type(column.type));
	}

	function export_links(result_id) {
		if (!result_id) return null;
		const base = "/api/method/noviz_agent.api.export_result?result_id=" + encodeURIComponent(String(result_id));
		return el("span", { class: "nz-export" }, [
			el("a", { class: "btn btn-xs btn-default nz-export-csv", href: base + "&file_format=csv", download: true, text: t("CSV") , "aria-label": t("Download as CSV") }),
			el("a", { class: "btn btn-xs btn-default nz-export-xlsx", href: base + "&file_format=xlsx", download: true, text: t("Excel"), "aria-label": t("Download as Excel") }),
		]);
	}

	function table_rows(table, columns) {
		return (table.rows || []).map((row) => {
			const cells = columns.map((column, index) => {
				const value = row[column.key];
				const shown = format_value(value, column);
				const cell = el("td", { class: is_numeric(column) ? "nz-num" : null });
				let href = null;
				const type = column.fieldtype || legacy_type(column.type);
				if (type === "Link") href = record_path(column.options || column.doctype, value);
				if (!href && index === 0) href = safe_path(row._link);
				if (href) cell.appendChild(el("a", { href, text: shown, class: "nz-link" }));
				else cell.textContent = shown;
				return cell;
			});
			return el("tr", {}, cells);
		});
	}

	function table_block(table, ctx) {
		ctx = ctx || {};
		const columns = table.columns || [];
		const box = el("div", { class: "nz-table-block", "data-block": "table" });
		if (table.title) box.appendChild(el("div", { class: "nz-block-title", text: table.title }));
		const head = el(
			"tr",
			{},
			// Labels come from the DocType meta in English; the desk translates them like its own forms.
			columns.map((c) => el("th", { text: t(c.label || c.key), class: is_numeric(c) ? "nz-num" : null, scope: "col" }))
		);
		const body = el("tbody", {}, table_rows(table, columns));
		const caption = table.title ? el("caption", { class: "nz-sr-only", text: table.title }) : null;
		box.appendChild(
			el("div", { class: "nz-table-scroll", tabindex: "0", role: "region", "aria-label": table.title || t("Table") }, [
				el("table", { class: "nz-table" }, [caption, el("thead", {}, [head]), body]),
			])
		);
		const page = table.page;
		if (page && page.total !== undefined && page.total !== null) box.appendChild(pager(table, body, ctx));
		return box;
	}

	// "Show more" appends the next page of the result kept on the server (fetched again as the person).
	function pager(table, body, ctx) {
		const page = table.page;
		const size = Number(page.size) || (table.rows || []).length || 1;
		let number = Number(page.number) || 1;
		let shown = (table.rows || []).length;
		const first = shown ? (number - 1) * size + 1 : 0;
		const count = el("span", { class: "nz-muted nz-count", role: "status" });
		const total = Number(page.total);
		const say = () => (count.textContent = t("{0}–{1} of {2}", [first, first + shown - 1, number_text(total, 0)]));
		say();
		const bar = el("div", { class: "nz-pager" }, [count]);
		if (first + shown - 1 < total && page.result_id && ctx.on_page) {
			const more = el("button", { class: "btn btn-xs btn-default nz-more", text: t("Show more") });
			more.addEventListener("click", async () => {
				more.disabled = true;
				try {
					const next = await ctx.on_page(page.result_id, number + 1);
					if (next && (next.rows || []).length) {
						number = Number(next.page && next.page.number) || number + 1;
						table_rows(next, table.columns || []).forEach((tr) => body.appendChild(tr));
						shown += next.rows.length;
						say();
					}
					more.disabled = false;
					if (first + shown - 1 >= total) more.remove();
				} catch (e) {
					more.disabled = false;
					count.textContent = (e && e.message) || t("That did not work.");
				}
			});
			bar.appendChild(more);
		}
		const links = export_links(page.result_id);
		if (links) bar.appendChild(links);
		return bar;
	}

	function cards_block(cards) {
		const box = el("div", { class: "nz-cards", "data-block": "cards" });
		for (const card of cards) {
			// Older stored answers: value already text, change a bare string.
			const value = card.fieldtype ? duration_text(card.value, card.unit, card) : format_value(card.value);
			const change = card.fieldtype ? change_text(card) : card.change ? String(card.change) : null;
			const direction = card.direction || (change ? (/^\s*[-−]/.test(change) ? "down" : "up") : null);
			const arrow = { up: "▲", down: "▼", flat: "■" }[direction] || "";
			const body = [
				el("div", { class: "nz-card-title", text: card.title || "" }),
				el("div", { class: "nz-card-value", text: value, title: value }),
				change
					? el("div", { class: `nz-card-change nz-${direction}`, "data-direction": direction }, [
							el("span", { class: "nz-arrow", "aria-hidden": "true", text: arrow + " " }),
							el("span", { text: change }),
					  ])
					: null,
			];
			const href = safe_path(card.link);
			box.appendChild(href ? el("a", { class: "nz-card", href }, body) : el("div", { class: "nz-card" }, body));
		}
		return box;
	}

	// --- charts -----------------------------------------------------------------------------

	const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#000000", "#F0E442"];
	const TICK_CHARS = 14;

	function shorten(text, limit) {
		const s = String(text);
		return s.length > limit ? s.slice(0, limit - 1) + "…" : s;
	}

	// Long names cut at the end; names that would then look alike ("Seed Customer…") keep their ends.
	function short_names(names, limit) {
		const cut = names.map((n) => shorten(n, limit));
		const seen = {};
		cut.forEach((c) => (seen[c] = (seen[c] || 0) + 1));
		const tail = Math.floor((limit - 1) / 2);
		return cut.map((c, i) => {
			const s = String(names[i]);
			return seen[c] > 1 && s.length > limit ? s.slice(0, limit - 1 - tail) + "…" + s.slice(-tail) : c;
		});
	}

	// A copy of the figure laid out so no text overlaps: legend above the plot (clear of rotated
	// tick labels), long category names shortened on the axis with the full name on hover.
	function chart_layout(chart, large) {
		const data = (chart.data || []).map((trace) => Object.assign({}, trace));
		const base = chart.layout || {};
		const layout = Object.assign({}, base, {
			autosize: true,
			colorway: PALETTE,
			paper_bgcolor: "rgba(0,0,0,0)",
			plot_bgcolor: "rgba(0,0,0,0)",
			font: { size: large ? 13 : 11 },
			margin: { l: 56, r: base.yaxis2 ? 56 : 16, t: 84, b: 24, pad: 2 },
			legend: { orientation: "h", x: 0, xanchor: "left", y: 1.02, yanchor: "bottom", bgcolor: "rgba(0,0,0,0)" },
		});
		const title = base.title && (base.title.text || base.title);
		if (title) layout.title = { text: String(title), x: 0, xanchor: "left", y: 0.98, yanchor: "top", yref: "container", font: { size: large ? 16 : 13 } };
		let categories = null;
		for (const trace of data) {
			if (trace.type === "pie") continue;
			const axis = trace.orientation === "h" ? "y" : "x";
			const values = trace[axis];
			if (Array.isArray(values) && values.some((v) => typeof v === "string" && v.length > TICK_CHARS)) {
				categories = categories || values;
				trace.hovertemplate = trace.hovertemplate || `%{${axis}}<br>%{${axis === "x" ? "y" : "x"}:,}<extra>%{fullData.name}</extra>`;
			}
			if (trace.type === "bar" && !trace.marker) trace.marker = {};
		}
		for (const axis of ["xaxis", "yaxis", "yaxis2"]) {
			if (base[axis] || axis !== "yaxis2") layout[axis] = Object.assign({ automargin: true }, base[axis] || {});
		}
		if (categories) {
			const horizontal = data.some((trace) => trace.orientation === "h");
			const axis = horizontal ? "yaxis" : "xaxis";
			layout[axis] = Object.assign(layout[axis], {
				tickmode: "array",
				tickvals: categories,
				ticktext: short_names(categories, large ? 24 : TICK_CHARS),
				tickangle: horizontal ? 0 : -45,
				automargin: true,
			});
		}
		return { data, layout };
	}

	function draw_chart(plot, chart, ctx, large) {
		const load = ctx.load_plotly ? ctx.load_plotly() : Promise.resolve(root.Plotly);
		return Promise.resolve(load).then((Plotly) => {
			if (!Plotly) throw new Error(t("Plotly is not available"));
			const figure = chart_layout(chart, large);
			// Plotly renders titles and labels as text; the server escaped any markup in data (safe_chart).
			return Plotly.newPlot(plot, figure.data, figure.layout, {
				displaylogo: false,
				responsive: true,
				modeBarButtonsToRemove: ["sendDataToCloud", "lasso2d", "select2d"],
			});
		});
	}

	function open_large(chart, ctx, opener) {
		const close = () => {
			overlay.remove();
			document.removeEventListener("keydown", on_key, true);
			if (opener && opener.focus) opener.focus();
		};
		const on_key = (event) => {
			if (event.key === "Escape") {
				event.stopPropagation();
				close();
			}
		};
		const plot = el("div", { class: "nz-chart-plot nz-chart-large-plot" });
		const shut = el("button", { class: "btn btn-sm btn-default nz-chart-close", text: t("Close"), "aria-label": t("Close the large chart") });
		shut.addEventListener("click", close);
		const overlay = el("div", { class: "nz-chart-overlay", role: "dialog", "aria-modal": "true", "aria-label": t("Chart") }, [
			el("div", { class: "nz-chart-large" }, [shut, plot]),
		]);
		overlay.addEventListener("click", (event) => event.target === overlay && close());
		document.addEventListener("keydown", on_key, true);
		document.body.appendChild(overlay);
		shut.focus();
		draw_chart(plot, chart, ctx, true).then(() => overlay.setAttribute("data-rendered", "1"));
		return overlay;
	}

	function chart_block(chart, ctx) {
		const box = el("div", { class: "nz-chart", "data-block": "chart" });
		const plot = el("div", { class: "nz-chart-plot" });
		const enlarge = el("button", { class: "btn btn-xs btn-default nz-chart-open", text: t("Open large"), "aria-label": t("Open the chart large") });
		enlarge.addEventListener("click", () => open_large(chart, ctx, enlarge));
		box.appendChild(plot);
		box.appendChild(el("div", { class: "nz-chart-bar" }, [enlarge]));
		draw_chart(plot, chart, ctx, false)
			.then(() => box.setAttribute("data-rendered", "1"))
			.catch((error) => {
				plot.replaceWith(el("div", { class: "nz-muted", text: t("The chart could not be drawn: {0}", [error.message]) }));
				box.setAttribute("data-rendered", "0");
			});
		return box;
	}

	// --- proposals --------------------------------------------------------------------------

	function field_value_node(field, value) {
		const shown = format_value(value, field);
		const href = field.fieldtype === "Link" ? record_path(field.options, value) : null;
		return href ? el("a", { class: "nz-link", href, text: shown }) : document.createTextNode(shown);
	}

	function input_for(field) {
		const id = "nz-f-" + Math.random().toString(36).slice(2, 9);
		const attrs = { class: "form-control input-xs nz-edit-input", id, "data-key": field.key, "aria-label": field.label };
		if (NUMERIC.includes(field.fieldtype)) Object.assign(attrs, { type: "number", step: field.fieldtype === "Int" ? "1" : "any" });
		else if (field.fieldtype === "Date") attrs.type = "date";
		else attrs.type = "text";
		const input = el("input", attrs);
		input.value = field.value === null || field.value === undefined ? "" : String(field.value);
		return input;
	}

	function read_input(field, input) {
		const raw = input.value.trim();
		if (NUMERIC.includes(field.fieldtype)) return raw === "" ? null : Number(raw);
		return raw;
	}

	function child_table(table) {
		const columns = table.columns || [];
		return el("div", { class: "nz-table-scroll nz-child" }, [
			table.label ? el("div", { class: "nz-muted", text: table.label }) : null,
			el("table", { class: "nz-table nz-subtable" }, [
				el("thead", {}, [el("tr", {}, columns.map((c) => el("th", { text: t(c.label || c.key), scope: "col" })))]),
				el(
					"tbody",
					{},
					(table.rows || []).map((row) =>
						el("tr", {}, columns.map((c) => el("td", { class: is_numeric({ fieldtype: c.type }) ? "nz-num" : null, text: format_value((row || {})[c.key], { fieldtype: c.type }) })))
					)
				),
			]),
		]);
	}

	function fields_table(proposal, editing) {
		const update = proposal.action === "update";
		const inputs = [];
		const body = el("tbody");
		for (const field of proposal.fields || []) {
			const cell = el("td", { class: "nz-field-value" });
			if (editing && field.editable) {
				const input = input_for(field);
				inputs.push([field, input]);
				cell.appendChild(input);
			} else if (update && field.changed) {
				cell.appendChild(el("span", { class: "nz-before" }, [el("span", { class: "nz-sr-only", text: t("Before:") + " " }), field_value_node(field, field.before)]));
				cell.appendChild(el("span", { class: "nz-arrow-to", "aria-hidden": "true", text: " → " }));
				cell.appendChild(el("span", { class: "nz-after" }, [el("span", { class: "nz-sr-only", text: t("After:") + " " }), field_value_node(field, field.value)]));
			} else {
				cell.appendChild(field_value_node(field, field.value));
			}
			const label = el("th", { scope: "row" }, [t(field.label || field.key)]);
			if (field.required) label.appendChild(el("span", { class: "nz-required", title: t("Mandatory"), "aria-label": t("Mandatory"), text: " *" }));
			if (editing && field.editable) label.firstChild.replaceWith(el("label", { for: cell.firstChild.id, text: t(field.label || field.key) }));
			body.appendChild(el("tr", { "data-key": field.key, class: update && field.changed ? "nz-changed" : null }, [label, cell]));
		}
		return { node: el("table", { class: "nz-table nz-values" }, [body]), inputs };
	}

	// Stored answers from before labelled fields existed carry only raw values.
	function legacy_fields(proposal) {
		if (proposal.fields) return proposal;
		const values = proposal.values || {};
		return Object.assign({}, proposal, {
			fields: Object.entries(values)
				.filter(([, v]) => !Array.isArray(v))
				.map(([key, value]) => ({ key, label: key, value, fieldtype: "Data" })),
			tables: Object.fromEntries(Object.entries(values).filter(([, v]) => Array.isArray(v)).map(([k, rows]) => [k, { label: k, columns: Object.keys(rows[0] || {}).map((c) => ({ key: c, label: c })), rows }])),
		});
	}

	function proposal_block(proposal, ctx) {
		ctx = ctx || {};
		proposal = legacy_fields(proposal);
		const box = el("div", { class: "nz-proposal", "data-block": "proposal", role: "group", "aria-label": proposal.title || t("Proposed change") });
		const badge = { create: t("New"), update: t("Change"), submit: t("Submit"), cancel: t("Cancel"), apply: t("Workflow") }[proposal.action] || t("Change");
		const href = proposal.link ? safe_path(proposal.link) : proposal.name ? record_path(proposal.doctype, proposal.name) : null;
		const target = [proposal.doctype, proposal.name].filter(Boolean).join(" ");
		box.appendChild(
			el("div", { class: "nz-proposal-head" }, [
				el("span", { class: "nz-badge", text: badge }),
				href ? el("a", { href, class: "nz-link nz-block-title", text: target }) : el("span", { class: "nz-block-title", text: target || proposal.title || t("Proposed change") }),
			])
		);
		if (proposal.effect) box.appendChild(el("p", { class: "nz-proposal-effect", text: proposal.effect }));
		if (proposal.warning && proposal.warning.message) {
			// The turn read data that talks like an instruction: say so before the person confirms.
			// Each source in words ({source, excerpt} from the server); the ones the message names already are not repeated.
			const said = proposal.warning.message || "";
			const sources = (proposal.warning.sources || [])
				.map((s) => (typeof s === "string" ? s : (s && (s.source || [s.doctype, s.name].filter(Boolean).join(" "))) || ""))
				.filter((s) => s && !said.includes(s));
			box.appendChild(
				el("div", { class: "nz-proposal-warning", role: "alert" }, [
					el("div", { text: proposal.warning.message }),
					sources.length ? el("div", { class: "nz-muted", text: t("Read from: {0}", [sources.join(", ")]) }) : null,
				])
			);
		}
		const holder = el("div", { class: "nz-fields" });
		box.appendChild(holder);
		let inputs = [];
		const draw = (editing) => {
			const drawn = fields_table(proposal, editing);
			holder.textContent = "";
			if ((proposal.fields || []).length) holder.appendChild(drawn.node);
			inputs = drawn.inputs;
			if (inputs.length) inputs[0][1].focus();
		};
		draw(false);
		for (const table of Object.values(proposal.tables || {})) if ((table.rows || []).length) box.appendChild(child_table(table));
		if ((proposal.missing || []).length) {
			box.appendChild(
				el("div", { class: "nz-missing", role: "note" }, [
					el("strong", { text: t("Still empty, ERPNext will ask for:") + " " }),
					proposal.missing.join(", "),
				])
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
		if (proposal.expires) {
			box.appendChild(el("div", { class: "nz-muted nz-expires", text: t("Nothing is written until you confirm. Valid until {0}.", [clock_text(Number(proposal.expires))]) }));
		}
		const confirm = el("button", { class: "btn btn-sm btn-primary nz-confirm", text: t("Confirm") });
		const cancel = el("button", { class: "btn btn-sm btn-default nz-cancel", text: t("Cancel") });
		const edit = proposal.editable && ctx.on_edit ? el("button", { class: "btn btn-sm btn-default nz-edit", text: t("Edit values") }) : null;
		const save = el("button", { class: "btn btn-sm btn-primary nz-save", text: t("Check changes"), hidden: true });
		const discard = el("button", { class: "btn btn-sm btn-default nz-discard", text: t("Keep as proposed"), hidden: true });
		const all = [confirm, cancel, edit, save, discard].filter(Boolean);
		const mode = (editing) => {
			confirm.hidden = cancel.hidden = editing;
			if (edit) edit.hidden = editing;
			save.hidden = discard.hidden = !editing;
			draw(editing);
			box.classList.toggle("nz-editing", editing);
		};
		const settle = (action) => async () => {
			all.forEach((b) => (b.disabled = true));
			status.textContent = action === "confirm" ? t("Saving…") : t("Cancelling…");
			try {
				const handler = action === "confirm" ? ctx.on_confirm : ctx.on_cancel;
				await handler(proposal.token, proposal);
				status.textContent = action === "confirm" ? t("Confirmed.") : t("Cancelled.");
				box.classList.add(action === "confirm" ? "nz-confirmed" : "nz-cancelled");
				if (edit) edit.remove();
			} catch (error) {
				status.textContent = (error && error.message) || t("That did not work.");
				all.forEach((b) => (b.disabled = false));
			}
		};
		confirm.addEventListener("click", settle("confirm"));
		cancel.addEventListener("click", settle("cancel"));
		if (edit) {
			edit.addEventListener("click", () => mode(true));
			discard.addEventListener("click", () => mode(false));
			save.addEventListener("click", async () => {
				const changes = {};
				for (const [field, input] of inputs) {
					const value = read_input(field, input);
					if (value !== field.value && !(value === "" && (field.value === null || field.value === undefined))) changes[field.key] = value;
				}
				if (!Object.keys(changes).length) return mode(false);
				all.forEach((b) => (b.disabled = true));
				status.textContent = t("Checking…");
				try {
					// The server checks the new values as a new proposal; the old token is withdrawn.
					const fresh = await ctx.on_edit(proposal.token, changes);
					const replacement = proposal_block(Object.assign({}, fresh, { warning: fresh.warning || proposal.warning }), ctx);
					replacement.querySelector(".nz-proposal-status").textContent = t("Updated. Check the values, then confirm.");
					box.replaceWith(replacement);
					const next = replacement.querySelector(".nz-confirm");
					if (next) next.focus();
				} catch (error) {
					all.forEach((b) => (b.disabled = false));
					status.textContent = (error && error.message) || t("That did not work.");
				}
			});
		}
		box.appendChild(el("div", { class: "nz-actions" }, [confirm, cancel, edit, save, discard, status]));
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

	// Whose figures these are, above the cards, table and chart: "Noviz Trading · USD · 1 Jan 2025 –
	// 1 Dec 2026 (last period partial)", or the companies a list of records covers.
	function scope_text(scope) {
		if (!scope || typeof scope !== "object") return "";
		const parts = [];
		if (scope.company) parts.push(scope.company);
		else if (Array.isArray(scope.companies) && scope.companies.length)
			parts.push(t("All companies you can read: {0}", [scope.companies.join(", ")]));
		if (scope.currency) parts.push(scope.currency);
		const period = scope.period || {};
		if (period.as_of) parts.push(t("as of {0}", [date_text(period.as_of)]));
		else if (period.start && period.end) parts.push(t("{0} to {1}", [date_text(period.start), date_text(period.end)]));
		else if (period.end) parts.push(t("up to {0}", [date_text(period.end)]));
		let text = parts.join(" · ");
		if (period.partial && (period.start || period.end)) text += " " + t("(last period still running)");
		if (scope.company && Array.isArray(scope.other_companies) && scope.other_companies.length)
			text += ". " + t("Not included: {0}", [scope.other_companies.join(", ")]);
		return text;
	}

	function scope_block(scope) {
		const text = scope_text(scope);
		return text ? el("div", { class: "nz-scope text-muted small", "data-block": "scope", text }) : null;
	}

	// The whole answer, in reading order: what went wrong first, then text, data, and the decision.
	function response(resp, ctx) {
		ctx = ctx || {};
		resp = resp || {};
		const box = el("div", { class: `nz-response nz-type-${resp.type || "text"}`, "data-type": resp.type || "text" });
		if (resp.refusal) box.appendChild(refusal_block(resp.refusal));
		if (resp.error) box.appendChild(error_block(resp.error));
		if (resp.text) box.appendChild(text_block(resp.text));
		const figures =
			(resp.cards && resp.cards.length) || (resp.table && (resp.table.rows || []).length) || (resp.chart && (resp.chart.data || []).length);
		const scoped = figures ? scope_block(resp.scope) : null;
		if (scoped) box.appendChild(scoped);
		if (resp.cards && resp.cards.length) box.appendChild(cards_block(resp.cards));
		if (resp.table && (resp.table.rows || []).length) box.appendChild(table_block(resp.table, ctx));
		if (resp.chart && (resp.chart.data || []).length) box.appendChild(chart_block(resp.chart, ctx));
		const analysed = (resp.cards && resp.cards.length) || (resp.chart && (resp.chart.data || []).length);
		if (resp.result_id && analysed) box.appendChild(pdf_block(resp.result_id));
		if (resp.result_id && analysed && !resp.table) box.lastChild.appendChild(export_links(resp.result_id));
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
		chart_layout,
		change_text,
		refusal_block,
		error_block,
		format_value,
		scope_text,
		clock_text,
		t,
		safe_path,
		record_path,
	};
})(typeof window !== "undefined" ? window : globalThis);
