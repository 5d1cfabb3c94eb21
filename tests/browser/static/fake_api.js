// Canned answers of every response type, and a fake api with the desk api's shape.
(function () {
	"use strict";

	const invoices = Array.from({ length: 7 }, (_, i) => ({
		name: `ACC-SINV-2026-0000${i + 1}`,
		customer: i === 2 ? "<img src=x onerror=window.pwned=1>" : ["Grant Plastics", "West View Software", "Palmer Productions"][i % 3],
		posting_date: `2026-01-0${i + 1}`,
		grand_total: 1000 * (i + 1) + 0.5,
		outstanding_amount: i % 2 ? 0 : 250 * (i + 1),
		_link: `/app/sales-invoice/ACC-SINV-2026-0000${i + 1}`,
	}));
	const columns = [
		{ key: "name", label: "Invoice", type: "link", doctype: "Sales Invoice" },
		{ key: "customer", label: "Customer", type: "text" },
		{ key: "posting_date", label: "Date", type: "date" },
		{ key: "grand_total", label: "Total", type: "currency" },
		{ key: "outstanding_amount", label: "Outstanding", type: "currency" },
	];
	const table_page = (number) => ({
		title: "Unpaid sales invoices",
		columns,
		rows: invoices.slice((number - 1) * 3, number * 3),
		page: { number, size: 3, total: invoices.length, result_id: "r_invoices1" },
	});
	const base = { text: "", table: null, cards: null, chart: null, proposal: null, refusal: null, error: null, flags: [], sources: [] };

	const canned = {
		text: Object.assign({}, base, {
			type: "text",
			text: "A sales invoice becomes **overdue** when its due date has passed and it is not fully paid.\n\n- Submitted invoices cannot be edited; cancel and amend instead.\n- Credit notes reduce the outstanding amount.\n\n<script>window.pwned=1</script> is shown as text.",
			sources: [{ title: "Receivables", section: "Overdue invoices", slug: "receivables" }],
		}),
		table: Object.assign({}, base, {
			type: "table",
			text: "You have **7** unpaid sales invoices; here are the first 3.",
			table: table_page(1),
		}),
		cards: Object.assign({}, base, {
			type: "cards",
			text: "Selling this month so far:",
			cards: [
				{ title: "Revenue", value: "₹ 1,24,500.00", change: "+12.5%", subtitle: "vs. last month", link: "/app/sales-invoice" },
				{ title: "Orders", value: "18", change: "-3", subtitle: "submitted" },
				{ title: "Overdue", value: "₹ 8,250.00", subtitle: "4 invoices", link: "javascript:alert(1)" },
			],
		}),
		chart: Object.assign({}, base, {
			type: "chart",
			text: "Monthly sales, computed from 42 submitted invoices.",
			chart: {
				data: [
					{ type: "bar", name: "Sales", x: ["2025-10", "2025-11", "2025-12", "2026-01"], y: [12000, 15500, 9800, 17250] },
					{ type: "scatter", mode: "lines+markers", name: "Trend", x: ["2025-10", "2025-11", "2025-12", "2026-01"], y: [12100, 13300, 14500, 15700] },
				],
				layout: { title: { text: "Sales by month" }, yaxis: { title: { text: "Amount" } } },
			},
			flags: [{ value: "42", message: "this number does not appear in any tool result" }],
		}),
		proposal: Object.assign({}, base, {
			type: "proposal",
			text: "I prepared this to-do. Nothing is saved until you confirm.",
			proposal: {
				token: "AbCdEfGhIjKlMnOpQrStUv.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ",
				tool: "todo.create",
				title: "New To Do",
				action: "create",
				doctype: "ToDo",
				values: { description: "Call Grant Plastics about ACC-SINV-2026-00003", date: "2026-02-01", priority: "High" },
				summary: "Create a to-do for you, due 1 February 2026.",
				expires: Math.floor(Date.now() / 1000) + 900,
			},
		}),
		refusal: Object.assign({}, base, {
			type: "refusal",
			refusal: { message: "No permission for Sales Invoice: You do not have enough permissions to access this resource." },
		}),
		error: Object.assign({}, base, {
			type: "error",
			error: { message: "The model provider did not answer within 60 seconds.", hint: "Try again; if it keeps happening, ask your administrator to check Agent Settings." },
		}),
	};

	const calls = [];
	let progress_handler = null;
	const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
	let log_number = 0;

	const api = {
		async send(args) {
			calls.push(["send", args]);
			const kind = Object.keys(canned).find((k) => args.message.toLowerCase().includes(k)) || "text";
			if (progress_handler) {
				progress_handler({ turn: args.turn, event: "tool", tool: "sales_invoice.list", step: 1, max_steps: 8 });
				progress_handler({ turn: "someone-else", event: "tool", tool: "should.not.show", step: 9, max_steps: 9 });
			}
			await delay(window.send_delay_ms || 30);
			log_number += 1;
			return { response: canned[kind], conversation: "conv1", log: `AIL-2026-000000${log_number}`, turn: args.turn };
		},
		async page(args) {
			calls.push(["page", args]);
			return { table: table_page(args.number) };
		},
		async confirm(args) {
			calls.push(["confirm", args]);
			return {
				response: Object.assign({}, base, { type: "cards", text: "Done: ToDo TD-0001.", cards: [{ title: "ToDo", value: "TD-0001", link: "/app/todo/TD-0001" }] }),
				conversation: "conv1",
				log: "AIL-2026-0000099",
			};
		},
		async cancel(args) {
			calls.push(["cancel", args]);
			return { response: Object.assign({}, base, { type: "text", text: "Cancelled. Nothing was changed." }), conversation: "conv1", log: "AIL-2026-0000098" };
		},
		async feedback(args) {
			calls.push(["feedback", args]);
			return { log: args.log, rating: args.rating };
		},
		async conversations() {
			return [
				{ name: "conv1", title: "Unpaid invoices", last_activity: "2026-01-15 10:00" },
				{ name: "conv2", title: "Sales by month <b>bold?</b>", last_activity: "2026-01-14 09:00" },
			];
		},
		async conversation(args) {
			return { name: args.name, title: "Unpaid invoices", turns: [{ question: "show unpaid invoices as a table", response: canned.table, log: "AIL-1" }] };
		},
	};

	// Plotly comes from the same place the desk loads it from on demand (served by the test).
	let plotly = null;
	function load_plotly() {
		if (window.Plotly) return Promise.resolve(window.Plotly);
		plotly =
			plotly ||
			new Promise((resolve, reject) => {
				const script = document.createElement("script");
				script.src = "/plotly.min.js";
				script.onload = () => resolve(window.Plotly);
				script.onerror = () => reject(new Error("plotly.min.js did not load"));
				document.head.appendChild(script);
			});
		return plotly;
	}

	const options = {
		api,
		load_plotly,
		max_chars: 200,
		on_progress: (handler) => (progress_handler = handler),
		// The page's chat registers here; tests deliver a realtime analysis with window.deliver_analysis.
		on_analysis: (handler) => (window.deliver_analysis = window.deliver_analysis || handler),
		ask_comment: async () => "the total looks wrong",
	};
	window.canned = canned;
	window.api_calls = calls;
	window.chat = new noviz_chat.Chat(document.getElementById("chat"), Object.assign({ mode: "page" }, options));
	document.getElementById("open-drawer").addEventListener("click", () => noviz_chat.drawer.open(options));
	window.show = (kind) => {
		window.chat.add_question(`show ${kind}`);
		return window.chat.add_response(canned[kind], `AIL-${kind}`);
	};
})();
