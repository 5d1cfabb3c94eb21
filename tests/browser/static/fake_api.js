// A fake api with the desk api's shape, answering with FIXTURES: responses built on the server side
// by the real builders (tests/browser/fixtures.py). Progress events are dispatched like realtime ones.
(function () {
	"use strict";

	const F = window.FIXTURES;
	const canned = F.answers;
	const calls = [];
	const progress_handlers = [];
	const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
	let log_number = 0;
	let conversations = [
		{ name: "conv1", title: "Unpaid invoices", last_activity: "2026-01-15 10:00", pinned: false },
		{ name: "conv2", title: "Sales by month <b>bold?</b>", last_activity: "2026-01-14 09:00", pinned: false },
	];
	noviz_chat.settings = { currency: F.currency, locale: window.PAGE_LANG === "de" ? "de-DE" : "en-US" };

	function emit(event) {
		progress_handlers.forEach((handler) => handler(event));
	}

	let turn_number = 0;
	const api = {
		async new_turn() {
			calls.push(["new_turn", {}]);
			turn_number += 1;
			return { turn: `turn-${turn_number}` };
		},
		async send(args) {
			calls.push(["send", args]);
			const kind = Object.keys(canned).find((k) => args.message.toLowerCase().includes(k)) || "text";
			for (const step of F.progress) {
				emit(Object.assign({ turn: args.turn }, step));
				await delay(window.step_delay_ms || 0);
			}
			emit({ turn: "someone-else", event: "tool", tool: "should.not.show", step: 9, max_steps: 9 });
			log_number += 1;
			const answer = { response: canned[kind], conversation: "conv1", log: `AIL-2026-000000${log_number}`, turn: args.turn };
			if (window.background_turns) {
				// Like a turn moved to a background job: send returns at once, the answer comes as an event.
				setTimeout(async () => {
					for (const word of String(canned[kind].text || "").split(/(?<= )/)) {
						emit({ turn: args.turn, event: "text", delta: word });
						await delay(20);
					}
					await delay(window.send_delay_ms || 30);
					if (!window.stopped) emit(Object.assign({ turn: args.turn, event: "answer" }, answer));
				}, 10);
				return { turn: args.turn, conversation: "conv1", queued: true };
			}
			await delay(window.send_delay_ms || 30);
			return answer;
		},
		async stop(args) {
			calls.push(["stop", args]);
			window.stopped = true;
			emit({ turn: args.turn, event: "error", message: "Stopped. Nothing was changed." });
			return { stopped: true };
		},
		async turn_state(args) {
			calls.push(["turn_state", args]);
			return await (window.turn_state_answer || { status: "running" });
		},
		async page(args) {
			calls.push(["page", args]);
			return { table: F.pages[args.number] };
		},
		async confirm(args) {
			calls.push(["confirm", args]);
			return { response: F.confirmed, conversation: "conv1", log: "AIL-2026-0000099" };
		},
		async cancel(args) {
			calls.push(["cancel", args]);
			return { response: Object.assign({}, canned.text, { type: "text", text: "Cancelled. Nothing was changed.", sources: [] }), conversation: "conv1", log: "AIL-2026-0000098" };
		},
		async edit_proposal(args) {
			calls.push(["edit_proposal", args]);
			if (args.values.customer_name === "") throw new Error("values.customer_name: '' is too short");
			return { proposal: F.edited_proposal };
		},
		async feedback(args) {
			calls.push(["feedback", args]);
			return { log: args.log, rating: args.rating };
		},
		async search_conversations(args) {
			calls.push(["search_conversations", args]);
			const q = (args.query || "").toLowerCase();
			const found = conversations.filter((c) => c.title.toLowerCase().includes(q));
			return found.filter((c) => c.pinned).concat(found.filter((c) => !c.pinned));
		},
		async rename_conversation(args) {
			calls.push(["rename_conversation", args]);
			conversations.find((c) => c.name === args.name).title = args.title;
			return args;
		},
		async pin_conversation(args) {
			calls.push(["pin_conversation", args]);
			conversations.find((c) => c.name === args.name).pinned = !!args.pinned;
			return args;
		},
		async delete_conversation(args) {
			calls.push(["delete_conversation", args]);
			conversations = conversations.filter((c) => c.name !== args.name);
			return { name: args.name, deleted: true };
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
		on_progress: (handler) => progress_handlers.push(handler),
		// The page's chat registers here; tests deliver a realtime analysis with window.deliver_analysis.
		on_analysis: (handler) => (window.deliver_analysis = window.deliver_analysis || handler),
		// Tests say whether realtime is connected (the desk asks frappe.realtime's socket).
		realtime_connected: () => Boolean(window.realtime_up),
		ask_comment: async () => "the total looks wrong",
		ask_text: async () => window.next_title || null,
		ask_confirm: async () => window.confirm_answer !== false,
	};
	window.canned = canned;
	window.api_calls = calls;
	window.emit = emit;
	window.chat = new noviz_chat.Chat(document.getElementById("chat"), Object.assign({ mode: "page" }, options));
	document.getElementById("open-drawer").addEventListener("click", () => noviz_chat.drawer.open(options));
	window.show = (kind) => {
		window.chat.add_question(`show ${kind}`);
		return window.chat.add_response(canned[kind], `AIL-${kind}`);
	};
})();
