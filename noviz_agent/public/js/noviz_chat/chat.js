// Noviz agent: the chat itself (messages, composer, progress, conversations) and the drawer.
//
// Plain script like render.js: it talks to the server only through the `api` object it is
// given (the desk passes frappe calls, the browser test passes canned answers), so the
// same code runs in the desk drawer, the full page and the static test page.
(function (root) {
	"use strict";

	const ns = (root.noviz_chat = root.noviz_chat || {});
	const t = (text, args) => (root.__ ? root.__(text, args) : String(text).replace(/\{(\d+)\}/g, (_, i) => (args || [])[i]));

	const PENDING_KEY = "noviz_agent_pending_turn";
	// While a turn runs the answer comes as a realtime event; the chat also asks for it now and
	// then, in case the event is lost: every 2.5 s while realtime is down, every 15 s while it is
	// connected (asking every 2.5 s meant a request per waiting person every 2.5 s for nothing).
	const POLL_MS = 2500;
	const SAFETY_POLL_MS = 15000;

	function remember_pending(value) {
		try {
			if (value) root.sessionStorage.setItem(PENDING_KEY, JSON.stringify(value));
			else root.sessionStorage.removeItem(PENDING_KEY);
		} catch (e) {
			/* private mode: no resume after reload */
		}
	}

	function pending() {
		try {
			return JSON.parse(root.sessionStorage.getItem(PENDING_KEY) || "null");
		} catch (e) {
			return null;
		}
	}

	// A tool step in words: the server's label when it sends one, otherwise from the tool's name.
	function step_label(event) {
		if (event.label) return t(event.label, (event.label_args || []).map((a) => t(a)));
		const tool = String(event.tool || "");
		const [entity, action] = [tool.slice(0, tool.lastIndexOf(".")), tool.slice(tool.lastIndexOf(".") + 1)];
		const verbs = { list: "Reading {0}…", get: "Opening {0}…", count: "Counting {0}…", create: "Preparing a new {0}…", update: "Preparing a change to {0}…" };
		if (entity && verbs[action]) return t(verbs[action], [t(entity.replace(/_/g, " "))]);
		return t("Working…");
	}

	function message_of(error) {
		if (!error) return t("The request failed.");
		if (typeof error === "string") return error;
		return error.message || t("The request failed.");
	}

	class Chat {
		constructor(container, options) {
			this.container = container;
			this.options = Object.assign({ mode: "drawer", max_chars: 4000 }, options || {});
			this.api = this.options.api;
			this.conversation = null;
			this.busy = false;
			this.pending_turn = null;
			this.waiting = null;
			this.build();
			if (this.options.on_progress) this.options.on_progress((event) => this.progress(event));
			if (this.options.on_analysis) this.options.on_analysis((answer) => this.add_analysis(answer));
			if (this.options.mode === "page") this.refresh_conversations();
			this.resume();
		}

		get el() {
			return ns.render.el;
		}

		build() {
			const el = this.el;
			this.container.classList.add("nz-chat", `nz-mode-${this.options.mode}`);
			this.container.textContent = "";

			const header = el("div", { class: "nz-header" }, [
				el("div", { class: "nz-title", text: t("Ask Noviz"), id: "nz-title" }),
				el("div", { class: "nz-header-actions" }, [
					el("button", {
						class: "btn btn-xs btn-default nz-new",
						text: t("New"),
						title: t("Start a new conversation"),
						onclick: () => this.new_conversation(),
					}),
					this.options.full_page_url
						? el("a", { class: "btn btn-xs btn-default nz-expand", href: this.options.full_page_url, text: t("Full page") })
						: null,
					this.options.on_close
						? el("button", {
								class: "btn btn-xs btn-default nz-close",
								"aria-label": t("Close (Esc)"),
								title: t("Close (Esc)"),
								text: "✕",
								onclick: () => this.options.on_close(),
						  })
						: null,
				]),
			]);

			this.list = el("nav", { class: "nz-conversations", "aria-label": t("Conversations") });
			this.search_box = el("input", {
				class: "form-control input-xs nz-search",
				type: "search",
				placeholder: t("Search conversations"),
				"aria-label": t("Search conversations"),
			});
			let timer = null;
			this.search_box.addEventListener("input", () => {
				clearTimeout(timer);
				timer = setTimeout(() => this.refresh_conversations(), 250);
			});
			this.list_items = el("ul", { class: "nz-conv-list", role: "list" });
			this.list.appendChild(el("div", { class: "nz-list-title nz-muted", text: t("Conversations") }));
			this.list.appendChild(this.search_box);
			this.list.appendChild(this.list_items);
			this.messages = el("div", { class: "nz-messages", role: "log", "aria-live": "polite" });
			this.status = el("div", { class: "nz-progress nz-muted", role: "status", "aria-live": "polite", hidden: true });
			this.input = el("textarea", {
				class: "form-control nz-input",
				rows: 2,
				placeholder: t("Ask about your records, or ask for a change… (Enter sends, Shift+Enter for a new line)"),
				"aria-label": t("Message"),
				maxlength: this.options.max_chars,
			});
			this.counter = el("span", { class: "nz-counter nz-muted" });
			this.send_button = el("button", { class: "btn btn-sm btn-primary nz-send", text: t("Send"), onclick: () => this.send() });
			this.stop_button = el("button", {
				class: "btn btn-sm btn-default nz-stop",
				text: t("Stop"),
				title: t("Stop this answer"),
				hidden: true,
				onclick: () => this.stop(),
			});
			this.input.addEventListener("keydown", (event) => {
				if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
					event.preventDefault();
					this.send();
				}
			});
			this.input.addEventListener("input", () => this.update_counter());
			const composer = el("div", { class: "nz-composer" }, [
				this.input,
				el("div", { class: "nz-composer-bar" }, [this.counter, this.stop_button, this.send_button]),
			]);
			if (ns.upload) ns.upload.attach(this, composer); // documents: picker, camera, drag and drop
			const main = el("div", { class: "nz-main" }, [this.messages, this.status, composer]);
			const body = el("div", { class: "nz-body" }, this.options.mode === "page" ? [this.list, main] : [main]);
			this.container.appendChild(header);
			this.container.appendChild(body);
			this.empty_state();
		}

		empty_state() {
			this.messages.textContent = "";
			this.messages.appendChild(
				this.el("div", { class: "nz-empty nz-muted" }, [
					this.el("p", { text: t("Ask about your records in plain words, for example:") }),
					this.el("ul", {}, [
						this.el("li", { text: t("Which sales invoices are overdue?") }),
						this.el("li", { text: t("Show sales by month this year as a chart") }),
						this.el("li", { text: t("Create a customer named Acme Ltd") }),
					]),
					this.el("p", { text: t("The agent works with your permissions and asks before it changes anything.") }),
				])
			);
		}

		update_counter() {
			const length = this.input.value.length;
			const limit = this.options.max_chars;
			this.counter.textContent = length > limit * 0.8 ? `${length.toLocaleString()} / ${limit.toLocaleString()}` : "";
			this.counter.classList.toggle("nz-over", length > limit);
		}

		focus() {
			this.input.focus();
		}

		clear_empty() {
			const empty = this.messages.querySelector(".nz-empty");
			if (empty) empty.remove();
		}

		scroll() {
			this.messages.scrollTop = this.messages.scrollHeight;
		}

		add_question(text) {
			this.clear_empty();
			const node = this.el("div", { class: "nz-msg nz-user" }, [this.el("div", { class: "nz-bubble", text })]);
			this.messages.appendChild(node);
			this.scroll();
			return node;
		}

		add_response(response, log) {
			this.clear_empty();
			const ctx = {
				log,
				on_page: (result_id, number) => this.api.page({ result_id, number }).then((r) => r.table),
				on_confirm: (token) => this.settle("confirm", token),
				on_cancel: (token) => this.settle("cancel", token),
				on_edit: this.api.edit_proposal
					? (token, values) => this.api.edit_proposal({ token, values, conversation: this.conversation }).then((r) => r.proposal)
					: null,
				on_feedback: (log_name, rating, comment) => this.api.feedback({ log: log_name, rating, comment }),
				ask_comment: this.options.ask_comment,
				load_plotly: this.options.load_plotly,
			};
			const node = this.el("div", { class: "nz-msg nz-agent" }, [ns.render.response(response, ctx)]);
			this.messages.appendChild(node);
			this.scroll();
			return node;
		}

		// A background analysis finished (delivered over realtime to this person only).
		add_analysis(answer) {
			answer = answer || {};
			const response = answer.response || { type: "error", error: { message: answer.error || t("The analysis could not be finished.") } };
			return this.add_response(response);
		}

		async settle(action, token) {
			const reply = await this.api[action]({ token, conversation: this.conversation });
			if (reply.conversation) this.conversation = reply.conversation;
			this.add_response(reply.response, reply.log);
			this.focus();
			const failed = reply.response && (reply.response.type === "refusal" || reply.response.type === "error");
			if (failed) throw new Error(t("Not done; see the message below."));
			return reply;
		}

		// Events of the running turn (realtime): steps as they happen, streamed text, the answer.
		progress(event) {
			if (!event || !this.pending_turn || event.turn !== this.pending_turn) return;
			const kind = event.event || "thinking";
			if (kind === "answer" || kind === "error") {
				const reply = kind === "answer" ? event : { response: { type: "error", error: { message: event.message || t("The request failed.") } } };
				if (this.waiting) this.waiting(reply);
				return;
			}
			this.status.hidden = false;
			if (kind === "text") {
				if (!this.stream) {
					this.stream = this.el("div", { class: "nz-msg nz-agent nz-streaming" }, [this.el("div", { class: "nz-response" }, [this.el("div", { class: "nz-text nz-stream-text" })])]);
					this.messages.appendChild(this.stream);
				}
				this.stream.querySelector(".nz-stream-text").textContent += String(event.delta || "");
				this.scroll();
				return;
			}
			let text = kind === "tool" ? step_label(event) : t("Thinking…");
			if (event.step && event.max_steps) text += " " + t("(step {0} of {1})", [event.step, event.max_steps]);
			if (kind === "tool") {
				const last = this.steps.lastElementChild;
				if (last) last.classList.add("nz-done");
				this.steps.appendChild(this.el("li", { class: "nz-step", text }));
			}
			this.status_text.textContent = text;
		}

		set_busy(busy) {
			this.busy = busy;
			this.send_button.disabled = busy;
			this.stop_button.hidden = !busy;
			this.stop_button.disabled = false;
			this.input.readOnly = busy;
			this.container.classList.toggle("nz-busy", busy);
			this.status.textContent = "";
			if (busy) {
				this.status_text = this.el("div", { class: "nz-status-text", text: t("Thinking…") });
				this.steps = this.el("ol", { class: "nz-steps", "aria-label": t("Steps") });
				this.status.appendChild(this.status_text);
				this.status.appendChild(this.steps);
				this.status.hidden = false;
			} else {
				this.status.hidden = true;
				if (this.stream) this.stream.remove();
				this.stream = null;
			}
		}

		async stop() {
			if (!this.pending_turn || !this.api.stop) return;
			this.stop_button.disabled = true;
			this.status_text.textContent = t("Stopping…");
			try {
				await this.api.stop({ turn: this.pending_turn });
			} catch (error) {
				this.status_text.textContent = message_of(error);
				this.stop_button.disabled = false;
			}
		}

		// The answer of a turn: in the send reply (synchronous), or later by event or by asking.
		wait_for_answer(turn, reply) {
			if (reply && reply.response) return Promise.resolve(reply);
			return new Promise((resolve) => {
				let timer = null;
				let finished = false;
				const done = (answer) => {
					finished = true;
					clearTimeout(timer);
					this.waiting = null;
					resolve(answer);
				};
				const every = () => (this.realtime_connected() ? SAFETY_POLL_MS : POLL_MS);
				const ask = async () => {
					try {
						const state = await this.api.turn_state({ turn });
						if (state && state.response) return done(state);
					} catch (e) {
						/* keep waiting for the event */
					}
					if (!finished) timer = setTimeout(ask, every());
				};
				this.waiting = done;
				if (this.api.turn_state) timer = setTimeout(ask, every());
			});
		}

		realtime_connected() {
			try {
				return Boolean(this.options.realtime_connected && this.options.realtime_connected());
			} catch (e) {
				return false;
			}
		}

		// After a reload: the turn that was running is picked up again (its answer, or its progress).
		async resume() {
			const turn = pending();
			if (!turn || !turn.turn || !this.api.turn_state) return;
			let state = null;
			try {
				state = await this.api.turn_state({ turn: turn.turn });
			} catch (e) {
				// The site cannot say (no such turn, or no background turns here): nothing to pick up.
				remember_pending(null);
				return;
			}
			this.conversation = turn.conversation || this.conversation;
			this.add_question(turn.question || "");
			this.pending_turn = turn.turn;
			this.set_busy(true);
			try {
				this.finish(await this.wait_for_answer(turn.turn, state));
			} catch (error) {
				this.add_response({ type: "error", error: { message: message_of(error), hint: t("Try again in a moment.") } });
			} finally {
				remember_pending(null);
				this.pending_turn = null;
				this.set_busy(false);
			}
		}

		finish(reply) {
			if (reply.conversation) this.conversation = reply.conversation;
			this.add_response(reply.response, reply.log);
			if (this.options.mode === "page") this.refresh_conversations();
		}

		async send(text) {
			const message = (text === undefined ? this.input.value : text).trim();
			if (this.busy) return;
			if (!message) {
				this.focus();
				return;
			}
			if (message.length > this.options.max_chars) {
				this.add_response({
					type: "error",
					error: {
						message: t("Your message is {0} characters; the limit is {1}.", [message.length, this.options.max_chars]),
						hint: t("Shorten it or split it into several questions."),
					},
				});
				return;
			}
			this.input.value = "";
			this.update_counter();
			this.add_question(message);
			this.set_busy(true);
			try {
				// The server makes the turn id (only its owner may send with it, read it or stop it);
				// it comes first so that the turn's progress events can be told apart from the start.
				const turn = this.api.new_turn ? (await this.api.new_turn()).turn : null;
				this.pending_turn = turn;
				if (turn) remember_pending({ turn, conversation: this.conversation, question: message });
				const args = { message, conversation: this.conversation };
				if (turn) args.turn = turn;
				const reply = await this.api.send(args);
				if (reply && reply.conversation) this.conversation = reply.conversation;
				this.pending_turn = turn || (reply && reply.turn) || null;
				this.finish(await this.wait_for_answer(this.pending_turn, reply));
			} catch (error) {
				this.add_response({ type: "error", error: { message: message_of(error), hint: t("Try again in a moment.") } });
			} finally {
				remember_pending(null);
				this.pending_turn = null;
				this.set_busy(false);
				this.focus();
			}
		}

		new_conversation() {
			this.conversation = null;
			this.empty_state();
			this.mark_current();
			this.focus();
		}

		async open_conversation(name) {
			const data = await this.api.conversation({ name });
			this.conversation = data.name;
			this.messages.textContent = "";
			for (const turn of data.turns || []) {
				this.add_question(turn.question);
				this.add_response(turn.response, turn.log);
			}
			if (!(data.turns || []).length) this.empty_state();
			this.mark_current();
		}

		mark_current() {
			this.list.querySelectorAll(".nz-conv").forEach((b) => {
				b.classList.toggle("nz-current", b.getAttribute("data-name") === this.conversation);
			});
		}

		async refresh_conversations() {
			const search = this.api.search_conversations || this.api.conversations;
			if (!search) return;
			let items = [];
			try {
				items = await search({ query: this.search_box.value.trim() });
			} catch (e) {
				return;
			}
			this.list_items.textContent = "";
			if (!(items || []).length) this.list_items.appendChild(this.el("li", { class: "nz-muted nz-none", text: t("No conversations found.") }));
			for (const item of items || []) this.list_items.appendChild(this.conversation_item(item));
			this.mark_current();
		}

		conversation_item(item) {
			const el = this.el;
			const title = item.title || item.name;
			const act = (label, cls, text, handler) =>
				el("button", { class: `btn-reset nz-conv-action ${cls}`, "aria-label": t(label, [title]), title: t(label, [title]), text, onclick: handler });
			const actions = [];
			if (this.api.pin_conversation) {
				actions.push(
					act(item.pinned ? "Unpin {0}" : "Pin {0}", "nz-pin" + (item.pinned ? " nz-pinned" : ""), item.pinned ? "★" : "☆", async () => {
						await this.api.pin_conversation({ name: item.name, pinned: item.pinned ? 0 : 1 });
						this.refresh_conversations();
					})
				);
			}
			if (this.api.rename_conversation) {
				actions.push(
					act("Rename {0}", "nz-rename", "✎", async () => {
						const ask = this.options.ask_text || ((label, value) => Promise.resolve(root.prompt(label, value)));
						const next = await ask(t("New title"), title);
						if (!next || !next.trim() || next.trim() === title) return;
						await this.api.rename_conversation({ name: item.name, title: next.trim() });
						this.refresh_conversations();
					})
				);
			}
			if (this.api.delete_conversation) {
				actions.push(
					act("Delete {0}", "nz-delete", "🗑", async () => {
						const ask = this.options.ask_confirm || ((message) => Promise.resolve(root.confirm(message)));
						if (!(await ask(t("Delete the conversation “{0}”? Its audit log is kept.", [title])))) return;
						await this.api.delete_conversation({ name: item.name });
						if (this.conversation === item.name) this.new_conversation();
						this.refresh_conversations();
					})
				);
			}
			return el("li", { class: "nz-conv-item" + (item.pinned ? " nz-conv-pinned" : "") }, [
				el("button", {
					class: "nz-conv",
					"data-name": item.name,
					text: title,
					title: item.last_activity || "",
					onclick: () => this.open_conversation(item.name),
				}),
				el("span", { class: "nz-conv-actions" }, actions),
			]);
		}
	}

	// The drawer: one per page, created on first open; Esc closes it and gives focus back.
	const drawer = {
		node: null,
		chat: null,
		returning_focus: null,
		ensure(options) {
			if (this.node) return this;
			this.node = document.createElement("aside");
			this.node.className = "nz-drawer";
			this.node.setAttribute("role", "dialog");
			this.node.setAttribute("aria-label", t("Noviz agent"));
			this.node.hidden = true;
			document.body.appendChild(this.node);
			this.chat = new Chat(this.node, Object.assign({}, options, { mode: "drawer", on_close: () => this.close() }));
			// Esc closes the drawer wherever focus is (a disabled button drops it to the body),
			// except while a desk dialog is open on top: that Esc is the dialog's.
			document.addEventListener("keydown", (event) => {
				if (event.key !== "Escape" || !this.is_open()) return;
				if (document.querySelector(".modal.show")) return;
				event.stopPropagation();
				this.close();
			});
			return this;
		},
		open(options) {
			this.ensure(options);
			this.returning_focus = document.activeElement;
			this.node.hidden = false;
			document.body.classList.add("nz-drawer-open");
			this.chat.focus();
		},
		close() {
			if (!this.node) return;
			this.node.hidden = true;
			document.body.classList.remove("nz-drawer-open");
			if (this.returning_focus && this.returning_focus.focus) this.returning_focus.focus();
		},
		toggle(options) {
			if (this.node && !this.node.hidden) this.close();
			else this.open(options);
		},
		is_open() {
			return !!(this.node && !this.node.hidden);
		},
	};

	ns.Chat = Chat;
	ns.drawer = drawer;
})(typeof window !== "undefined" ? window : globalThis);
