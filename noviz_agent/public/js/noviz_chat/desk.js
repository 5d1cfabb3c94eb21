// Noviz agent: the desk's side of the chat — frappe calls, realtime progress, Plotly on demand.
(function (root) {
	"use strict";

	const ns = (root.noviz_chat = root.noviz_chat || {});
	const METHOD = "noviz_agent.api.";

	// The server's own message when a call is refused (validation, permission, not found).
	function server_message(r) {
		try {
			const messages = JSON.parse((r && r._server_messages) || "[]");
			if (messages.length) {
				let first = messages[0];
				try {
					first = JSON.parse(first);
				} catch (e) {
					/* a plain string message */
				}
				// Server messages may carry markup; an inert parsed document yields only their text.
				const doc = new DOMParser().parseFromString(String(first.message || first), "text/html");
				return doc.body.textContent;
			}
		} catch (e) {
			/* fall through */
		}
		return (r && (r.exception || r.exc_type)) || __("The request failed.");
	}

	function call(name, args, type) {
		return new Promise((resolve, reject) => {
			frappe.call({
				method: METHOD + name,
				args,
				type: type || "POST",
				// The chat shows the error inline; no modal over the conversation.
				silent: true,
				callback: (r) => resolve(r.message),
				error: (r) => reject(new Error(server_message(r))),
			});
		});
	}

	ns.desk_api = {
		new_turn: () => call("new_turn", {}),
		send: (args) => call("send", args),
		confirm: (args) => call("confirm", args),
		cancel: (args) => call("cancel", args),
		feedback: (args) => call("feedback", args),
		page: (args) => call("page", args, "GET"),
		conversations: (args) => call("conversations", args, "GET"),
		conversation: (args) => call("conversation", args, "GET"),
		client_settings: () => call("client_settings", {}, "GET"),
		edit_proposal: (args) => call("edit_proposal", { ...args, values: JSON.stringify(args.values) }),
		search_conversations: (args) => call("search_conversations", args, "GET"),
		rename_conversation: (args) => call("rename_conversation", args),
		pin_conversation: (args) => call("pin_conversation", args),
		delete_conversation: (args) => call("delete_conversation", args),
		// Turns running in the background: stop one, or fetch its answer after a reload.
		stop: (args) => call("stop_turn", args),
		turn_state: (args) => call("turn_status", args, "GET"),
	};

	function ask_text(label, value) {
		return new Promise((resolve) => {
			const dialog = new frappe.ui.Dialog({
				title: label,
				fields: [{ fieldname: "text", fieldtype: "Data", label, default: value, reqd: 1 }],
				primary_action_label: __("Save"),
				primary_action(values) {
					dialog.hide();
					resolve(values.text);
				},
			});
			dialog.onhide = () => resolve(null);
			dialog.show();
		});
	}

	function ask_confirm(message) {
		return new Promise((resolve) => frappe.confirm(frappe.utils.escape_html(message), () => resolve(true), () => resolve(false)));
	}

	let plotly = null;
	function load_plotly() {
		if (root.Plotly) return Promise.resolve(root.Plotly);
		plotly =
			plotly ||
			new Promise((resolve) => frappe.require("noviz_plotly.bundle.js", () => resolve(root.Plotly)));
		return plotly;
	}

	function on_progress(handler) {
		frappe.realtime.on("noviz_agent_progress", handler);
	}

	// Finished background analyses; the server publishes them to the person who asked only.
	function on_analysis(handler) {
		frappe.realtime.on("noviz_agent_analysis", handler);
	}

	function ask_comment() {
		return new Promise((resolve) => {
			const dialog = new frappe.ui.Dialog({
				title: __("What was wrong?"),
				fields: [{ fieldname: "comment", fieldtype: "Small Text", label: __("Comment (optional)") }],
				primary_action_label: __("Send"),
				primary_action(values) {
					dialog.hide();
					resolve(values.comment || null);
				},
			});
			dialog.onhide = () => resolve(null);
			dialog.show();
		});
	}

	// Whether frappe's realtime socket is connected (the chat then asks for a turn's answer rarely).
	function realtime_connected() {
		const socket = frappe.realtime && frappe.realtime.socket;
		return Boolean(socket && socket.connected);
	}

	function options(extra) {
		return Object.assign(
			{
				api: ns.desk_api,
				on_progress,
				on_analysis,
				realtime_connected,
				load_plotly,
				ask_comment,
				ask_text,
				ask_confirm,
				max_chars: (frappe.boot.noviz_agent && frappe.boot.noviz_agent.max_message_chars) || 4000,
				// The page route, as this desk writes it (/app/... on 15, /desk/... on 16).
				full_page_url: frappe.router && frappe.router.make_url ? frappe.router.make_url(["noviz-agent"]) : "/app/noviz-agent",
			},
			extra || {}
		);
	}

	ns.desk = {
		open_drawer: () => ns.drawer.open(options()),
		toggle_drawer: () => ns.drawer.toggle(options()),
		close_drawer: () => ns.drawer.close(),
		mount_page: (container) => new ns.Chat(container, options({ mode: "page", full_page_url: null })),
	};
})(window);
