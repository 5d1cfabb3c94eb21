// Noviz agent: the chat itself (messages, composer, progress, conversations) and the drawer.
//
// Plain script like render.js: it talks to the server only through the `api` object it is
// given (the desk passes frappe calls, the browser test passes canned answers), so the
// same code runs in the desk drawer, the full page and the static test page.
(function (root) {
	"use strict";

	const ns = (root.noviz_chat = root.noviz_chat || {});
	const t = (text, args) => (root.__ ? root.__(text, args) : String(text).replace(/\{(\d+)\}/g, (_, i) => (args || [])[i]));

	function new_turn_id() {
		return Math.random().toString(36).slice(2, 10) + Date.now().toString(36);
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
			this.build();
			if (this.options.on_progress) this.options.on_progress((event) => this.progress(event));
			if (this.options.on_analysis) this.options.on_analysis((answer) => this.add_analysis(answer));
			if (this.options.mode === "page") this.refresh_conversations();
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
			this.messages = el("div", { class: "nz-messages", role: "log", "aria-live": "polite" });
			this.status = el("div", { class: "nz-progress nz-muted", role: "status", hidden: true });
			this.input = el("textarea", {
				class: "form-control nz-input",
				rows: 2,
				placeholder: t("Ask about your records, or ask for a change… (Enter sends, Shift+Enter for a new line)"),
				"aria-label": t("Message"),
				maxlength: this.options.max_chars,
			});
			this.counter = el("span", { class: "nz-counter nz-muted" });
			this.send_button = el("button", { class: "btn btn-sm btn-primary nz-send", text: t("Send"), onclick: () => this.send() });
			this.input.addEventListener("keydown", (event) => {
				if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
					event.preventDefault();
					this.send();
				}
			});
			this.input.addEventListener("input", () => this.update_counter());
			const composer = el("div", { class: "nz-composer" }, [
				this.input,
				el("div", { class: "nz-composer-bar" }, [this.counter, this.send_button]),
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
			return this.add_response(ns.render.analysis_response(answer));
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

		progress(event) {
			if (!event || !this.pending_turn || event.turn !== this.pending_turn) return;
			let text = t("Thinking…");
			if (event.event === "tool" && event.tool) text = t("Using {0}…", [event.tool]);
			if (event.step && event.max_steps) text += " " + t("(step {0} of {1})", [event.step, event.max_steps]);
			this.status.textContent = text;
			this.status.hidden = false;
		}

		set_busy(busy) {
			this.busy = busy;
			this.send_button.disabled = busy;
			this.input.readOnly = busy;
			this.container.classList.toggle("nz-busy", busy);
			if (busy) {
				this.status.textContent = t("Thinking…");
				this.status.hidden = false;
			} else {
				this.status.hidden = true;
				this.status.textContent = "";
			}
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
			this.pending_turn = new_turn_id();
			this.set_busy(true);
			try {
				const reply = await this.api.send({ message, conversation: this.conversation, turn: this.pending_turn });
				if (reply.conversation) this.conversation = reply.conversation;
				this.add_response(reply.response, reply.log);
				if (this.options.mode === "page") this.refresh_conversations();
			} catch (error) {
				this.add_response({ type: "error", error: { message: message_of(error), hint: t("Try again in a moment.") } });
			} finally {
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
			if (!this.api.conversations) return;
			let items = [];
			try {
				items = await this.api.conversations({});
			} catch (e) {
				return;
			}
			this.list.textContent = "";
			this.list.appendChild(this.el("div", { class: "nz-list-title nz-muted", text: t("Conversations") }));
			for (const item of items || []) {
				this.list.appendChild(
					this.el("button", {
						class: "nz-conv",
						"data-name": item.name,
						text: item.title || item.name,
						title: item.last_activity || "",
						onclick: () => this.open_conversation(item.name),
					})
				);
			}
			this.mark_current();
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
